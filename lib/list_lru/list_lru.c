/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/list_lru/list_lru.c - LRU lists per (memory group, node): the kernel's
 * 6.13 list_lru on ksync's memory groups.
 *
 * Theory of operation
 * -------------------
 * Objects:
 *
 *   list      struct ksync_list_lru_one: a mutex, a plain list of items,
 *             nr_items (written under the mutex, read without it), a dead
 *             flag (under the mutex; once set, never cleared), its node and
 *             its group. The global lists (group NULL) live in the lru from
 *             init to destroy and never die. A group's list is allocated on
 *             the first add for its (group, node), published in the group's
 *             table, linked on lru->lists (for walk_node and the counts of a
 *             node: there is no per-node counter for every add to write),
 *             and freed by call_srcu on the set's domain once retired. Each
 *             list has a cache line of its own.
 *   table     struct lru_table: per group (the client's slot, allocated by
 *             the online hook), one pointer per node: NULL (no list yet), a
 *             list, or RETIRED (the group went offline: never a list again).
 *   item      struct ksync_list_lru_item: the caller's link, and ->list, the
 *             list it is on (NULL: none), written only under that list's
 *             mutex (and, while retiring, under both the old and new lists').
 *
 * Who may change a table entry: NULL -> list (an add, under lru->mutex);
 * NULL -> RETIRED (offline, under lru->mutex); list -> RETIRED (offline,
 * under the list's mutex). So an entry changes at most twice and creation
 * and retirement never cross.
 *
 * Readers: add, count_one and walk look a group's list up inside a read
 * section of the set's SRCU domain (the group is the caller's to keep alive,
 * its ancestors are kept alive by it); del reads item->list inside one too.
 * A list they found stays in memory until their section ends, even if it is
 * retired meanwhile: it is freed by call_srcu after its retirement.
 *
 * add      looks up (group, nid), creating the list if the entry is NULL;
 *          takes the list's mutex; if the list is dead (or the entry is
 *          RETIRED, or the group has no table) it retries at the parent,
 *          up to the global list, which never dies. So an item is added
 *          only to a live list, under its mutex.
 * del      reads item->list, takes that list's mutex and checks that the
 *          item is still on it (reparenting may have moved it: then it
 *          retries with the new ->list).
 * walk     takes the list's mutex and offers items to the callback; after a
 *          *_RETRY (the callback dropped the mutex) it restarts from the
 *          head, or stops if the list died meanwhile.
 * offline  (the group is DYING; its parent is online, so the parent's lists
 *          cannot be retired now) for each node: an entry still NULL
 *          becomes RETIRED under lru->mutex (no add can create it later).
 *          A list is retired in this order, all under its own mutex:
 *            1. mark it dead;
 *            2. move its items to the target (the parent's list, created if
 *               needed; the nearest ancestor's or the global list if that
 *               allocation fails) under the target's mutex, pointing every
 *               item's ->list at the target, then unpublish it (RETIRED).
 *          The mutex is dropped only after both steps, so an add that had
 *          looked the list up before step 2 and takes the mutex after it
 *          finds it dead and goes to the parent. Reversing the steps
 *          (unpublish and empty, drop the mutex, then mark dead) opens a
 *          window in which such an add puts its item on a list that was
 *          already emptied and is about to be freed: the bug the kernel
 *          fixed in 2026 by marking dead first. The test-only switch
 *          KSYNC_PLANT_LIST_LRU_UNPUBLISH_FIRST (impl/seams.h) builds that reversed order
 *          so that tests/torture/list_lru_torture.c can show it is caught.
 *          Lock order: child list before parent list; lru->mutex is never
 *          taken under a list's mutex.
 * release  frees the group's table by call_srcu (and the lists of a group
 *          that never went online fully, which no add could reach).
 *
 * Barrier pairs:
 *   L1  a new list is initialised, then published in the table with release;
 *       lookups load the entry with acquire (RETIRED is stored with release
 *       too, after the list's items moved).
 *   L2  add stores the item and nr_items (under the list's mutex) before
 *       ksync_set_shrinker_bit(), whose full barrier S1 orders them before
 *       the bit; pairs with W1 in lib/shrinker/walk.c (the group walk clears
 *       the bit after a KSYNC_SHRINK_EMPTY count, then a full barrier, then
 *       counts again: that count, a lockless read of nr_items, sees the item,
 *       or the add saw the bit clear and set it again).
 *   L3  the hook and its argument: the argument is stored before the hook
 *       with release; yield_point() loads the hook with acquire.
 *   L4  taking an item off its list (del, isolate, isolate_move) stores
 *       item->list = NULL last, with release; whoever then sees NULL with
 *       acquire (add's test, del, ksync_list_lru_item_on_list()) sees the
 *       link's writes done, and may add the item again from any thread
 *       without a lock shared with the thread that took it off.
 *   L5  reparenting stores item->list = dst with release, for every item it
 *       moves; del's acquire loads of item->list (the ones of L4) then see
 *       dst initialised (its mutex), even a dst that the reparent itself
 *       created and that del reaches through this pointer alone.
 * nr_items is read without the mutex (READ_ONCE/WRITE_ONCE): a count is a
 * snapshot, exact only when nothing runs.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int ksync__list_lru_init(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, struct ksync_memgroup_set *set,
			 int nr_nodes, struct ksync_shrinker *shrinker)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p;
	size_t size;
	int slot;

	if (MISUSE(at, !lru, "ksync_list_lru_init: NULL list_lru"))
		return -EINVAL;
	if (MISUSE(at, nr_nodes < 1 || nr_nodes > KSYNC_LIST_LRU_MAX_NODES,
		   "ksync_list_lru_init: nr_nodes outside 1..64"))
		return -EINVAL;
	if (shrinker) {
		struct ksync_shrinker_registry *reg = __atomic_load_n(&shrinker->reg, __ATOMIC_ACQUIRE);

		if (MISUSE(at, !(shrinker->flags & KSYNC_SHRINKER_MEMCG_AWARE) || shrinker->id < 0 || !reg,
			   "ksync_list_lru_init: the shrinker is not an allocated memcg-aware shrinker"))
			return -EINVAL;
		if (MISUSE(at, !set || ksync_shrinker_registry_groups(reg) != set ||
				       ksync_shrinker_registry_nr_nodes(reg) < nr_nodes,
			   "ksync_list_lru_init: the shrinker's registry does not own the set (or has fewer nodes)"))
			return -EINVAL;
	}
	size = sizeof(*p) + (size_t)nr_nodes * sizeof(p->global[0]);
	size = (size + KSYNC_CACHELINE_SIZE - 1) & ~(size_t)(KSYNC_CACHELINE_SIZE - 1);
	p = KSYNC__ALLOC(aligned_alloc(KSYNC_CACHELINE_SIZE, size)); /* the lists' lines are their own */
	if (!p)
		return -ENOMEM;
	memset(p, 0, size);
	p->client = (struct ksync_memgroup_client){
		.name = "list_lru",
		.online = ksync__lru_lru_online,
		.offline = ksync__lru_lru_offline,
		.release = ksync__lru_lru_release,
		.order = KSYNC_MEMGROUP_ORDER_LRU,
	};
	p->owner = lru;
	p->set = set;
	p->srcu = set ? ksync_memgroup_set_srcu(set) : NULL;
	p->shrinker = shrinker;
	p->nr_nodes = nr_nodes;
	p->slot = -1;
	pthread_mutex_init(&p->mutex, NULL);
	ksync_init_list_head(&p->lists);
	for (int nid = 0; nid < nr_nodes; nid++)
		ksync__lru_list_init(&p->global[nid].l, p, nid, NULL);
	if (set) {
		slot = ksync__memgroup_client_register(at.file, at.line, set, &p->client, p);
		if (slot < 0) {
			for (int nid = 0; nid < nr_nodes; nid++)
				pthread_mutex_destroy(&p->global[nid].l.lock);
			pthread_mutex_destroy(&p->mutex);
			free(p);
			return slot;
		}
		p->slot = slot;
	}
	lru->priv = p;
	return 0;
}

int ksync__list_lru_destroy(KSYNC_SITE_ARGS, struct ksync_list_lru *lru)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;
	long items;
	int ret;

	if (MISUSE(at, !p, "ksync_list_lru_destroy: list_lru not initialised"))
		return -EINVAL;
	items = (long)ksync__lru_count_lists(p, -1);
	if (MISUSE(at, items != 0, "ksync_list_lru_destroy: items remain on the lists; leaking them"))
		return -EBUSY;
	if (p->set) {
		ret = ksync__memgroup_client_unregister(at.file, at.line, p->set, p->slot);
		if (ret)
			return ret;
	}
	/* Every group was released: its lists were retired or freed with it. */
	for (int nid = 0; nid < p->nr_nodes; nid++)
		pthread_mutex_destroy(&p->global[nid].l.lock);
	pthread_mutex_destroy(&p->mutex);
	lru->priv = NULL;
	free(p);
	return 0;
}

bool ksync__list_lru_add(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, struct ksync_list_lru_item *item,
			 int nid, struct ksync_memgroup *group)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;
	struct ksync_list_lru_one *l;
	bool added = false, first = false;
	int idx = 0;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_add", p, nid, group))
		return false;
	if (MISUSE(at, !item, "ksync_list_lru_add: NULL item"))
		return false;
	/* On a list already (the kernel's list_empty() test); acquire: L4. */
	if (ksync_smp_load_acquire(&item->list))
		return false;
	if (!group) {
		l = &p->global[nid].l;
		ksync__mutex_lock(&l->lock);
	} else {
		idx = ksync_srcu_read_lock(p->srcu);
		l = ksync__lru_lock_list_for_add(p, group, nid);
	}
	if (!KSYNC_READ_ONCE(item->list)) {
		first = ksync__lru_list_add_locked(l, item);
		added = true;
		/* The kernel's order: the bit is set under the list's lock (L2). */
		if (first)
			ksync__lru_set_shrinker_bit_at(p, at, l->group, nid);
	}
	pthread_mutex_unlock(&l->lock);
	if (group)
		ksync_srcu_read_unlock(p->srcu, idx);
	return added;
}

static bool del_item(struct ksync__list_lru *p, struct ksync_list_lru_item *item)
{
	struct ksync_list_lru_one *l = ksync_smp_load_acquire(&item->list); /* NULL: L4; a moved list: L5 */
	bool ret = false;
	int idx;

	if (!l)
		return false;
	if (ksync__lru_is_global(p, l)) { /* the common case of a cache without groups: no read section */
		ksync__mutex_lock(&l->lock);
		if (ksync_likely(KSYNC_READ_ONCE(item->list) == l)) {
			ksync__lru_list_del_locked(l, item, NULL);
			pthread_mutex_unlock(&l->lock);
			return true;
		}
		pthread_mutex_unlock(&l->lock);
	}
	idx = p->srcu ? ksync_srcu_read_lock(p->srcu) : 0;

	/* A group's list that @item named stays in memory until the section ends. */
	while ((l = ksync_smp_load_acquire(&item->list)) != NULL) { /* NULL: L4; a moved list: L5 */
		lru_yield_point(p, KSYNC_LIST_LRU_YP_DEL_LOOKED_UP);
		ksync__mutex_lock(&l->lock);
		/* Written under the lock of the list it names: here, ours if still on it. */
		if (ksync_likely(KSYNC_READ_ONCE(item->list) == l)) {
			ksync__lru_list_del_locked(l, item, NULL);
			pthread_mutex_unlock(&l->lock);
			ret = true;
			break;
		}
		/* Moved meanwhile (reparented, or isolated and added again): follow it. */
		pthread_mutex_unlock(&l->lock);
	}
	if (p->srcu)
		ksync_srcu_read_unlock(p->srcu, idx);
	return ret;
}

bool ksync__list_lru_del(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, struct ksync_list_lru_item *item,
			 int nid, struct ksync_memgroup *group)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_del", p, nid, group))
		return false;
	if (MISUSE(at, !item, "ksync_list_lru_del: NULL item"))
		return false;
	return del_item(p, item);
}

bool ksync__list_lru_del_obj(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, struct ksync_list_lru_item *item)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;

	if (MISUSE(at, !p || !item, "ksync_list_lru_del_obj: list_lru not initialised, or NULL item"))
		return false;
	return del_item(p, item);
}

unsigned long ksync__list_lru_count_one(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, int nid,
					struct ksync_memgroup *group)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;
	struct ksync_list_lru_one *l;
	struct lru_table *t;
	long n = 0;
	int idx;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_count_one", p, nid, group))
		return 0;
	if (!group)
		return (unsigned long)KSYNC_READ_ONCE(p->global[nid].l.nr_items);
	idx = ksync_srcu_read_lock(p->srcu);
	t = table_of(p, group);
	l = t ? entry_load(t, nid) : NULL;
	if (l && l != RETIRED)
		n = KSYNC_READ_ONCE(l->nr_items);
	ksync_srcu_read_unlock(p->srcu, idx);
	return n > 0 ? (unsigned long)n : 0;
}

unsigned long ksync__list_lru_count_node(KSYNC_SITE_ARGS, struct ksync_list_lru *lru, int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__list_lru *p = lru ? lru->priv : NULL;

	if (!ksync__lru_args_ok(at, "ksync_list_lru_count_node", p, nid, NULL))
		return 0;
	return ksync__lru_count_lists(p, nid);
}

unsigned long ksync_list_lru_count(struct ksync_list_lru *lru)
{
	return ksync__lru_count_lists(lru->priv, -1);
}

void ksync_list_lru_stats(struct ksync_list_lru *lru, struct ksync_list_lru_stats *out)
{
	struct ksync__list_lru *p = lru->priv;

	out->group_lists = ksync_atomic_long_read(&p->nr_group_lists);
	out->group_lists_created = ksync_atomic_long_read(&p->nr_created);
	out->lists_retired = ksync_atomic_long_read(&p->nr_retired);
	out->items_reparented = ksync_atomic_long_read(&p->nr_reparented);
	out->add_retries = ksync_atomic_long_read(&p->nr_retries);
}

#if KSYNC_SEAMS /* the test seam of <ksync/list_lru_testing.h>; none in a production build */
void ksync_list_lru_set_yield_hook(struct ksync_list_lru *lru,
				   void (*hook)(struct ksync_list_lru *lru, int point, void *arg), void *arg)
{
	struct ksync__list_lru *p = lru->priv;

	KSYNC_WRITE_ONCE(p->hook_arg, arg);
	ksync_smp_store_release(&p->hook, hook); /* L3 */
}
#endif
