/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/list_lru/group.c - ksync::list_lru as a client of memory groups: a group's table at online,
 * the retirement of its lists (dead, then emptied into the parent, then
 * unpublished) at offline, the frees at release.
 * The theory of operation opens list_lru.c.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

int ksync__lru_lru_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync__list_lru *p = priv;
	struct lru_table *t = KSYNC__ALLOC(calloc(1, sizeof(*t) + (size_t)p->nr_nodes * sizeof(t->node[0])));

	if (!t)
		return -ENOMEM;
	ksync_memgroup_set_slot(g, slot, t);
	return 0;
}

/*
 * Where @g's items of @nid go: the nearest ancestor's list (created if
 * needed; ancestors are online while @g is offlining, so their lists are
 * live), else the global list. Unlocked.
 */
static struct ksync_list_lru_one *reparent_target(struct ksync__list_lru *p, struct ksync_memgroup *parent,
						  int nid)
{
	for (struct ksync_memgroup *a = parent; a; a = ksync_memgroup_parent(a)) {
		struct lru_table *t = table_of(p, a);
		struct ksync_list_lru_one *l = t ? ksync__lru_list_get_or_create(p, t, a, nid) : NULL;

		if (l && l != RETIRED)
			return l;
	}
	return &p->global[nid].l;
}

/* Under @src's and @dst's locks: every item of @src moves to @dst. Return: how many. */
static long move_items_locked(struct ksync_list_lru_one *src, struct ksync_list_lru_one *dst)
{
	struct ksync_list_lru_item *item;
	long n = src->nr_items;

	ksync_list_for_each_entry(item, &src->items, link)
		ksync_smp_store_release(&item->list, dst); /* L5 */
	ksync_list_splice_tail_init(&src->items, &dst->items);
	KSYNC_WRITE_ONCE(dst->nr_items, dst->nr_items + n);
	KSYNC_WRITE_ONCE(src->nr_items, 0);
	if (n && list_counted(src) && !list_counted(dst))
		list_account(src, -n);
	return n;
}

/* Retire @l, the list of @t's group for @nid, moving its items to @dst. */
static void retire_list(struct ksync__list_lru *p, struct lru_table *t, int nid,
			struct ksync_list_lru_one *l, struct ksync_list_lru_one *dst)
{
	struct ksync_site at = { __FILE__, __LINE__ };
	long moved;

#if !KSYNC_PLANT(LIST_LRU_UNPUBLISH_FIRST) /* the torture test's mutant */
	ksync__mutex_lock(&l->lock);
	/* 1. Dead first: an add that looked @l up and locks it from now on goes up. */
	l->dead = true;
	lru_yield_point(p, KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN);
	/* 2. Empty it into @dst (child lock, then parent lock), then unpublish. */
	ksync__mutex_lock(&dst->lock);
	moved = move_items_locked(l, dst);
	if (moved)
		ksync__lru_set_shrinker_bit_at(p, at, dst->group, nid);
	pthread_mutex_unlock(&dst->lock);
	ksync_smp_store_release(&t->node[nid], RETIRED); /* L1: unpublished */
	pthread_mutex_unlock(&l->lock);
#else
	/*
	 * TEST-ONLY MUTATION (tests/torture/CMakeLists.txt): unpublish and
	 * empty first, mark dead later. An add that looked @l up before the
	 * unpublish and locks it in between finds it alive and empty, and
	 * its item is stranded on a list about to be freed.
	 */
	ksync__mutex_lock(&l->lock);
	ksync_smp_store_release(&t->node[nid], RETIRED); /* L1: unpublished */
	ksync__mutex_lock(&dst->lock);
	moved = move_items_locked(l, dst);
	if (moved)
		ksync__lru_set_shrinker_bit_at(p, at, dst->group, nid);
	pthread_mutex_unlock(&dst->lock);
	pthread_mutex_unlock(&l->lock);
	lru_yield_point(p, KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN);
	ksync__mutex_lock(&l->lock);
	l->dead = true;
	pthread_mutex_unlock(&l->lock);
#endif
	ksync_atomic_long_add(moved, &p->nr_reparented);
	ksync_atomic_long_inc(&p->nr_retired);

	ksync__mutex_lock(&p->mutex);
	ksync_list_del_rcu(&l->link);
	ksync_atomic_long_dec(&p->nr_group_lists);
	pthread_mutex_unlock(&p->mutex);
	/* Lookups that found @l before the unpublish still hold it: free after a grace period. */
	ksync_call_srcu(p->srcu, &l->rcu, ksync__lru_free_list_rcu);
}

void ksync__lru_lru_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync__list_lru *p = priv;
	struct lru_table *t = ksync_memgroup_slot(g, slot);
	struct ksync_memgroup *parent = ksync_memgroup_parent(g);

	if (!t)
		return;
	for (int nid = 0; nid < p->nr_nodes; nid++) {
		struct ksync_list_lru_one *l;

		ksync__mutex_lock(&p->mutex);
		l = t->node[nid];
		if (!l) /* no list yet: none may be created any more */
			ksync_smp_store_release(&t->node[nid], RETIRED); /* L1: unpublished */
		pthread_mutex_unlock(&p->mutex);
		if (l && l != RETIRED)
			retire_list(p, t, nid, l, reparent_target(p, parent, nid));
	}
}

void ksync__lru_lru_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync__list_lru *p = priv;
	struct lru_table *t = ksync_memgroup_slot(g, slot);

	if (!t)
		return;
	/* Lists of a group that never went online fully (no add could reach them). */
	for (int nid = 0; nid < p->nr_nodes; nid++) {
		struct ksync_list_lru_one *l = t->node[nid];

		if (!l || l == RETIRED)
			continue;
		ksync__mutex_lock(&p->mutex);
		ksync_list_del_rcu(&l->link);
		ksync_atomic_long_dec(&p->nr_group_lists);
		pthread_mutex_unlock(&p->mutex);
		ksync_call_srcu(p->srcu, &l->rcu, ksync__lru_free_list_rcu);
	}
	ksync_memgroup_set_slot(g, slot, NULL);
	ksync_call_srcu(p->srcu, &t->rcu, ksync__lru_free_table_rcu);
}
