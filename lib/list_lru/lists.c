/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/list_lru/lists.c - the lists themselves: creation, lookup and locking (with the retry at the
 * parent of an add), add and del under a list's lock, counts, the argument
 * checks. Calls no other file of the module.
 * The theory of operation opens list_lru.c.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

char ksync__lru_retired_marker;

void ksync__lru_list_init(struct ksync_list_lru_one *l, struct ksync__list_lru *p, int nid,
		      struct ksync_memgroup *g)
{
	pthread_mutex_init(&l->lock, NULL);
	ksync_init_list_head(&l->items);
	l->nr_items = 0;
	l->dead = false;
	l->nid = nid;
	l->lru = p;
	l->group = g;
	ksync_init_list_head(&l->link);
}

void ksync__lru_free_list_rcu(struct ksync_rcu_head *head)
{
	struct ksync_list_lru_one *l = ksync_container_of(head, struct ksync_list_lru_one, rcu);

	pthread_mutex_destroy(&l->lock);
	free(l);
}

void ksync__lru_free_table_rcu(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct lru_table, rcu));
}

/* Under l->lock: the item joins the tail. Return: whether the list was empty. */
bool ksync__lru_list_add_locked(struct ksync_list_lru_one *l, struct ksync_list_lru_item *item)
{
	long n = l->nr_items;

	ksync_list_add_tail(&item->link, &l->items);
	KSYNC_WRITE_ONCE(item->list, l);
	KSYNC_WRITE_ONCE(l->nr_items, n + 1);
	list_account(l, 1);
	return n == 0;
}

/*
 * Under l->lock: @item (on @l) leaves it; its link is reinitialised, or
 * added to @head (isolate_move). ->list = NULL last, with release (L4).
 */
void ksync__lru_list_del_locked(struct ksync_list_lru_one *l, struct ksync_list_lru_item *item,
			    struct ksync_list_head *head)
{
	if (head)
		ksync_list_move_tail(&item->link, head);
	else
		ksync_list_del_init(&item->link);
	KSYNC_WRITE_ONCE(l->nr_items, l->nr_items - 1);
	list_account(l, -1);
	ksync_smp_store_release(&item->list, NULL); /* L4 */
}

/*
 * @g's list for @nid, created if the entry is NULL: the list, RETIRED, or
 * NULL (out of memory). Inside a read section of p->srcu.
 */
struct ksync_list_lru_one *ksync__lru_list_get_or_create(struct ksync__list_lru *p, struct lru_table *t,
						     struct ksync_memgroup *g, int nid)
{
	struct ksync_list_lru_one *l = entry_load(t, nid), *n;

	if (ksync_likely(l))
		return l;
	n = KSYNC__ALLOC(aligned_alloc(KSYNC_CACHELINE_SIZE, LIST_ALLOC_SIZE));
	if (!n)
		return NULL;
	ksync__lru_list_init(n, p, nid, g);
	ksync__mutex_lock(&p->mutex);
	/*
	 * Stable under the mutex but for list -> RETIRED, which an offline
	 * stores under the list's lock only: an atomic load (L1's acquire), or
	 * the two race (TSan saw it in concurrent_add_del_offline).
	 */
	l = entry_load(t, nid);
	if (!l) {
		ksync_list_add_tail_rcu(&n->link, &p->lists);
		ksync_smp_store_release(&t->node[nid], n); /* L1 */
		ksync_atomic_long_inc(&p->nr_group_lists);
		ksync_atomic_long_inc(&p->nr_created);
		l = n;
		n = NULL;
	}
	pthread_mutex_unlock(&p->mutex);
	if (n) { /* lost the race, or the group was retired: never published */
		pthread_mutex_destroy(&n->lock);
		free(n);
	}
	return l;
}

/*
 * The live list to add to for (@g, @nid), locked: @g's, or, if @g is dying or
 * dead, or its list cannot be allocated, its nearest live ancestor's, or the
 * global list. Inside a read section of p->srcu (when @g is not NULL).
 */
struct ksync_list_lru_one *ksync__lru_lock_list_for_add(struct ksync__list_lru *p, struct ksync_memgroup *g,
						    int nid)
{
	for (; g; g = ksync_memgroup_parent(g)) {
		struct lru_table *t = table_of(p, g);
		struct ksync_list_lru_one *l = t ? ksync__lru_list_get_or_create(p, t, g, nid) : RETIRED;

		if (l && l != RETIRED) {
			lru_yield_point(p, KSYNC_LIST_LRU_YP_ADD_LOOKED_UP);
			ksync__mutex_lock(&l->lock);
			if (ksync_likely(!l->dead))
				return l;
			pthread_mutex_unlock(&l->lock);
		}
		/* Dying or dead (or out of memory): the parent takes the item. */
		if (l)
			ksync_atomic_long_inc(&p->nr_retries);
	}
	ksync__mutex_lock(&p->global[nid].l.lock);
	return &p->global[nid].l;
}

/* The live list of (@g, @nid) if it exists, locked; NULL if none (no retry at the parent). */
struct ksync_list_lru_one *ksync__lru_lock_list_for_walk(struct ksync__list_lru *p, struct ksync_memgroup *g,
						     int nid)
{
	struct ksync_list_lru_one *l;
	struct lru_table *t;

	if (!g) {
		l = &p->global[nid].l;
		ksync__mutex_lock(&l->lock);
		return l;
	}
	t = table_of(p, g);
	l = t ? entry_load(t, nid) : NULL;
	if (!l || l == RETIRED)
		return NULL;
	ksync__mutex_lock(&l->lock);
	if (!l->dead)
		return l;
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

void ksync__lru_set_shrinker_bit_at(struct ksync__list_lru *p, struct ksync_site at, struct ksync_memgroup *g,
				int nid)
{
	if (!p->shrinker || !g)
		return;
	/* L2: S1 in ksync_set_shrinker_bit() orders the item and nr_items before the bit. */
	(void)ksync__set_shrinker_bit(at.file, at.line, g, nid, p->shrinker->id);
}

/*
 * Items on the live lists of node @nid (every node for -1), without a lock:
 * the global lists, then the groups' lists (lru->lists, inside a read
 * section). O(lists): no counter shared by all adders (a per-node atomic
 * costs every add and del a locked instruction on a line all of them
 * write). A list being retired may be counted with its items' new list.
 */
unsigned long ksync__lru_count_lists(struct ksync__list_lru *p, int nid)
{
	struct ksync_list_lru_one *l;
	long n = 0;
	int idx;

	for (int i = 0; i < p->nr_nodes; i++)
		if (nid < 0 || i == nid)
			n += KSYNC_READ_ONCE(p->global[i].l.nr_items);
	if (p->srcu) {
		idx = ksync_srcu_read_lock(p->srcu);
		ksync_list_for_each_entry_srcu(l, &p->lists, link, 1)
			if (nid < 0 || l->nid == nid)
				n += KSYNC_READ_ONCE(l->nr_items);
		ksync_srcu_read_unlock(p->srcu, idx);
	}
	return n > 0 ? (unsigned long)n : 0;
}

/*
 * Checks @lru, @nid and @g for the call @what; reports misuse at @at.
 * Return: true if the call may proceed.
 */
bool ksync__lru_args_ok(struct ksync_site at, const char *what, struct ksync__list_lru *p, int nid,
		    struct ksync_memgroup *g)
{
	if (KSYNC_WARN_AT(at.file, at.line, !p, "%s: list_lru not initialised", what))
		return false;
	if (KSYNC_WARN_AT(at.file, at.line, nid < 0 || nid >= p->nr_nodes, "%s: bad nid %d", what, nid))
		return false;
	if (!g || ksync_likely(table_of(p, g) != NULL))
		return true;
	/* No table: a group of another set, or one of ours that is gone or going. */
	if (KSYNC_WARN_AT(at.file, at.line, !p->set || ksync_memgroup_set_of(g) != p->set,
			  "%s: a group of another set", what))
		return false;
	return true;
}

/* Is @l one of @p's global lists (they live until destroy: no read section needed)? */
bool ksync__lru_is_global(const struct ksync__list_lru *p, const struct ksync_list_lru_one *l)
{
	uintptr_t a = (uintptr_t)l, lo = (uintptr_t)&p->global[0], hi = (uintptr_t)&p->global[p->nr_nodes];

	return a >= lo && a < hi;
}
