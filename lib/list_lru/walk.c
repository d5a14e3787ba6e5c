/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/list_lru/walk.c - walks: of one list (the isolate callback under the list's lock, with
 * the retry protocol), of a node, of every list; isolation; the shrinker
 * helpers.
 * The theory of operation opens list_lru.c.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>

/*
 * Walk @l (locked; left locked) with @isolate. Return: items isolated; sets
 * *@stop when a callback said STOP.
 */
static unsigned long walk_locked(struct ksync_list_lru_one *l, ksync_list_lru_walk_cb isolate, void *cb_arg,
				 unsigned long *nr_to_walk, bool *stop)
{
	struct ksync_list_head *pos, *n;
	unsigned long isolated = 0;

restart:
	ksync_list_for_each_safe(pos, n, &l->items) {
		struct ksync_list_lru_item *item = ksync_container_of(pos, struct ksync_list_lru_item, link);
		enum ksync_lru_status ret;

		/* The budget first, so that RETRY on many items cannot livelock. */
		if (!*nr_to_walk)
			break;
		--*nr_to_walk;
		ret = isolate(item, l, cb_arg);
		switch (ret) {
		case KSYNC_LRU_REMOVED:
			isolated++;
			break;
		case KSYNC_LRU_REMOVED_RETRY:
		case KSYNC_LRU_RETRY:
			/* The lock was dropped: the traversal is invalid. */
			isolated += ret == KSYNC_LRU_REMOVED_RETRY;
			/* Retired meanwhile: its items are at the parent now. */
			if (l->dead)
				return isolated;
			goto restart;
		case KSYNC_LRU_ROTATE:
			ksync_list_move_tail(pos, &l->items);
			break;
		case KSYNC_LRU_SKIP:
			break;
		case KSYNC_LRU_STOP:
			*stop = true;
			return isolated;
		default:
			/* A callback's nonsense: reported once here, read as SKIP. */
			(void)KSYNC_WARN_ONCE(1, "list_lru isolate callback returned %d, not an lru_status", (int)ret);
			break;
		}
	}
	return isolated;
}

static bool walk_args_ok(struct ksync_site at, const char *what, ksync_list_lru_walk_cb isolate,
			 unsigned long *nr_to_walk)
{
	return !KSYNC_WARN_AT(at.file, at.line, !isolate || !nr_to_walk, "%s: NULL callback or budget", what);
}

unsigned long ksync__list_lru_walk_one(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, int nid,
				       struct ksync_memgroup *group, ksync_list_lru_walk_cb isolate,
				       void *cb_arg, unsigned long *nr_to_walk)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;
	struct ksync_list_lru_one *l;
	unsigned long isolated = 0;
	bool stop = false;
	int idx = 0;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_walk_one", p, nid, group) ||
	    !walk_args_ok(at, "ksync_list_lru_walk_one", isolate, nr_to_walk))
		return 0;
	if (group)
		idx = ksync_srcu_read_lock(p->srcu);
	l = ksync__lru_lock_list_for_walk(p, group, nid);
	if (l) {
		isolated = walk_locked(l, isolate, cb_arg, nr_to_walk, &stop);
		pthread_mutex_unlock(&l->lock);
	}
	if (group)
		ksync_srcu_read_unlock(p->srcu, idx);
	return isolated;
}

static unsigned long walk_node(struct ksync__list_lru *p, int nid, ksync_list_lru_walk_cb isolate,
			       void *cb_arg, unsigned long *nr_to_walk)
{
	struct ksync_list_lru_one *l = &p->global[nid].l;
	unsigned long isolated;
	bool stop = false;
	int idx;

	ksync__mutex_lock(&l->lock);
	isolated = walk_locked(l, isolate, cb_arg, nr_to_walk, &stop);
	pthread_mutex_unlock(&l->lock);
	if (stop || !p->srcu)
		return isolated;
	idx = ksync_srcu_read_lock(p->srcu);
	ksync_list_for_each_entry_srcu(l, &p->lists, link, 1) {
		if (!*nr_to_walk || stop)
			break;
		if (l->nid != nid || !KSYNC_READ_ONCE(l->nr_items))
			continue;
		ksync__mutex_lock(&l->lock);
		if (!l->dead)
			isolated += walk_locked(l, isolate, cb_arg, nr_to_walk, &stop);
		pthread_mutex_unlock(&l->lock);
	}
	ksync_srcu_read_unlock(p->srcu, idx);
	return isolated;
}

unsigned long ksync__list_lru_walk_node(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, int nid,
					ksync_list_lru_walk_cb isolate, void *cb_arg, unsigned long *nr_to_walk)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_walk_node", p, nid, NULL) ||
	    !walk_args_ok(at, "ksync_list_lru_walk_node", isolate, nr_to_walk))
		return 0;
	return walk_node(p, nid, isolate, cb_arg, nr_to_walk);
}

unsigned long ksync__list_lru_walk(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, ksync_list_lru_walk_cb isolate,
				   void *cb_arg, unsigned long nr_to_walk)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;
	unsigned long isolated = 0;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_walk", p, 0, NULL) ||
	    !walk_args_ok(at, "ksync_list_lru_walk", isolate, &nr_to_walk))
		return 0;
	for (int nid = 0; nid < p->nr_nodes && nr_to_walk; nid++)
		isolated += walk_node(p, nid, isolate, cb_arg, &nr_to_walk);
	return isolated;
}

void ksync__list_lru_isolate(KSYNC_SITE_ARGS, struct ksync_list_lru_one *list, struct ksync_list_lru_item *item)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, !list || !item || KSYNC_READ_ONCE(item->list) != list,
		   "ksync_list_lru_isolate: the item is not on this list"))
		return;
	ksync__lru_list_del_locked(list, item, NULL);
}

void ksync__list_lru_isolate_move(KSYNC_SITE_ARGS, struct ksync_list_lru_one *list,
				  struct ksync_list_lru_item *item, struct ksync_list_head *head)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, !list || !item || !head || KSYNC_READ_ONCE(item->list) != list,
		   "ksync_list_lru_isolate_move: the item is not on this list"))
		return;
	ksync__lru_list_del_locked(list, item, head);
}

void ksync_list_lru_unlock(struct ksync_list_lru_one *list)
{
	pthread_mutex_unlock(&list->lock);
}

void ksync_list_lru_lock(struct ksync_list_lru_one *list)
{
	ksync__mutex_lock(&list->lock);
}

unsigned long ksync__list_lru_shrinker_count(KSYNC_SITE_ARGS, struct ksync_list_lru *lru,
					     struct ksync_shrink_control *sc)
{
	return ksync__list_lru_count_one(site_file, site_line, lru, sc->nid, sc->group);
}

unsigned long ksync__list_lru_shrinker_walk(KSYNC_SITE_ARGS, struct ksync_list_lru *lru,
					    struct ksync_shrink_control *sc, ksync_list_lru_walk_cb isolate,
					    void *cb_arg)
{
	unsigned long nr = sc->nr_to_scan;

	return ksync__list_lru_walk_one(site_file, site_line, lru, sc->nid, sc->group, isolate, cb_arg, &nr);
}
