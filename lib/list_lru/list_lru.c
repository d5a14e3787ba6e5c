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
 *          KSYNC_LIST_LRU_MUTATE_UNPUBLISH_FIRST builds that reversed order
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
#include <ksync/impl/sched.h> /* the blocking wrappers; <ksync/fuzzing.h> */
#include <ksync/list_lru.h>

#include <ksync/atomic.h>
#include <ksync/list.h>
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>
#include <ksync/rculist.h>
#include <ksync/rcupdate.h>
#include <ksync/shrinker.h>
#include <ksync/srcu.h>

#include "../common/report.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ksync_list_lru_one {
	pthread_mutex_t lock;
	struct ksync_list_head items;   /* under lock */
	long nr_items;                  /* written under lock; read lockless */
	bool dead;                      /* under lock; set once by retirement */
	int nid;
	struct ksync__list_lru *lru;
	struct ksync_memgroup *group;   /* NULL: a global list */
	struct ksync_list_head link;    /* lru->lists (groups' lists only); RCU, under lru->mutex */
	struct ksync_rcu_head rcu;
};

/*
 * Lists never share a cache line: groups' lists are allocated a line (or
 * two) of their own, and each global list sits in a slot aligned to one.
 * (The list type itself is not over-aligned: the head of lru->lists is
 * not one, and list iteration forms its container.)
 */
#define LIST_ALLOC_SIZE                                                        \
	((sizeof(struct ksync_list_lru_one) + KSYNC_CACHELINE_SIZE - 1) & ~(size_t)(KSYNC_CACHELINE_SIZE - 1))

struct lru_global {
	struct ksync_list_lru_one l;
} KSYNC_CACHELINE_ALIGNED;

/* A group's lists, one entry per node: NULL, a list, or RETIRED. */
struct lru_table {
	struct ksync_rcu_head rcu;
	struct ksync_list_lru_one *node[];
};

struct ksync__list_lru {
	struct ksync_memgroup_client client; /* its address names this lru in every group */
	struct ksync_list_lru *owner;
	struct ksync_memgroup_set *set;      /* NULL: global lists only */
	struct ksync_srcu_struct *srcu;      /* the set's domain */
	struct ksync_shrinker *shrinker;     /* memcg aware, or NULL */
	int nr_nodes;
	int slot;
	pthread_mutex_t mutex;               /* creation and retirement of entries; lists */
	struct ksync_list_head lists;        /* every group list not yet retired */
	void (*hook)(struct ksync_list_lru *lru, int point, void *arg); /* L3 */
	void *hook_arg;
	ksync_atomic_long_t nr_group_lists, nr_created, nr_retired, nr_reparented, nr_retries;
	struct lru_global global[];          /* nr_nodes */
};

static char retired_marker;
#define RETIRED ((struct ksync_list_lru_one *)(void *)&retired_marker)

static KSYNC_ALWAYS_INLINE void yield_point(struct ksync__list_lru *p, int point)
{
	void (*hook)(struct ksync_list_lru *, int, void *) = ksync_smp_load_acquire(&p->hook); /* L3 */

	if (ksync_unlikely(hook))
		hook(p->owner, point, p->hook_arg);
}

static void list_init(struct ksync_list_lru_one *l, struct ksync__list_lru *p, int nid,
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

static void free_list_rcu(struct ksync_rcu_head *head)
{
	struct ksync_list_lru_one *l = ksync_container_of(head, struct ksync_list_lru_one, rcu);

	pthread_mutex_destroy(&l->lock);
	free(l);
}

static void free_table_rcu(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct lru_table, rcu));
}

static struct lru_table *table_of(struct ksync__list_lru *p, const struct ksync_memgroup *g)
{
	return (struct lru_table *)ksync_memgroup_client_state(g, &p->client);
}

static struct ksync_list_lru_one *entry_load(struct lru_table *t, int nid)
{
	return ksync_smp_load_acquire(&t->node[nid]); /* L1 */
}

/* ------------------------------------------------------------------------ */
/* The lists                                                                */

/*
 * The group's KSYNC_MEMGROUP_STAT_LRU counter (<ksync/objcg.h>) follows the
 * items on its lists, so that a shrinker can derive a budget from it (the
 * workingset shadow shrinker's lruvec_page_state_local()). Every caller runs
 * inside a read section of the set's domain (or holds the group), as the
 * statistics require. Reparenting moves no count: the dying group's counter
 * goes to its parent when the statistics client runs, last of the offline
 * steps, so sums stay exact in between. Nodes beyond the set's statistics
 * (a list_lru with more nodes than its set) and the global lists are not
 * counted; items reparented from a counted list to an uncounted one (a
 * top-level group's items going to the global list) leave the counted
 * world there, so their count is taken off the dying group's counter at the
 * move, before the statistics client hands that counter to the root.
 */
static bool list_counted(const struct ksync_list_lru_one *l)
{
	return l->group && l->nid < ksync_memgroup_set_nr_nodes(ksync_memgroup_set_of(l->group));
}

static void list_account(struct ksync_list_lru_one *l, long delta)
{
	if (list_counted(l))
		ksync_memgroup_stat_add(l->group, l->nid, KSYNC_MEMGROUP_STAT_LRU, delta);
}

/* Under l->lock: the item joins the tail. Return: whether the list was empty. */
static bool list_add_locked(struct ksync_list_lru_one *l, struct ksync_list_lru_item *item)
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
static void list_del_locked(struct ksync_list_lru_one *l, struct ksync_list_lru_item *item,
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
static struct ksync_list_lru_one *list_get_or_create(struct ksync__list_lru *p, struct lru_table *t,
						     struct ksync_memgroup *g, int nid)
{
	struct ksync_list_lru_one *l = entry_load(t, nid), *n;

	if (ksync_likely(l))
		return l;
	n = KSYNC__ALLOC(aligned_alloc(KSYNC_CACHELINE_SIZE, LIST_ALLOC_SIZE));
	if (!n)
		return NULL;
	list_init(n, p, nid, g);
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
static struct ksync_list_lru_one *lock_list_for_add(struct ksync__list_lru *p, struct ksync_memgroup *g,
						    int nid)
{
	for (; g; g = ksync_memgroup_parent(g)) {
		struct lru_table *t = table_of(p, g);
		struct ksync_list_lru_one *l = t ? list_get_or_create(p, t, g, nid) : RETIRED;

		if (l && l != RETIRED) {
			yield_point(p, KSYNC_LIST_LRU_YP_ADD_LOOKED_UP);
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
static struct ksync_list_lru_one *lock_list_for_walk(struct ksync__list_lru *p, struct ksync_memgroup *g,
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

static void set_shrinker_bit_at(struct ksync__list_lru *p, struct ksync_site at, struct ksync_memgroup *g,
				int nid)
{
	if (!p->shrinker || !g)
		return;
	/* L2: S1 in ksync_set_shrinker_bit() orders the item and nr_items before the bit. */
	(void)ksync__set_shrinker_bit(at.file, at.line, g, nid, p->shrinker->id);
}

/* ------------------------------------------------------------------------ */
/* The memory-group client                                                  */

static int lru_online(struct ksync_memgroup *g, int slot, void *priv)
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
		struct ksync_list_lru_one *l = t ? list_get_or_create(p, t, a, nid) : NULL;

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

#ifndef KSYNC_LIST_LRU_MUTATE_UNPUBLISH_FIRST
	ksync__mutex_lock(&l->lock);
	/* 1. Dead first: an add that looked @l up and locks it from now on goes up. */
	l->dead = true;
	yield_point(p, KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN);
	/* 2. Empty it into @dst (child lock, then parent lock), then unpublish. */
	ksync__mutex_lock(&dst->lock);
	moved = move_items_locked(l, dst);
	if (moved)
		set_shrinker_bit_at(p, at, dst->group, nid);
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
		set_shrinker_bit_at(p, at, dst->group, nid);
	pthread_mutex_unlock(&dst->lock);
	pthread_mutex_unlock(&l->lock);
	yield_point(p, KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN);
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
	ksync_call_srcu(p->srcu, &l->rcu, free_list_rcu);
}

static void lru_offline(struct ksync_memgroup *g, int slot, void *priv)
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

static void lru_release(struct ksync_memgroup *g, int slot, void *priv)
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
		ksync_call_srcu(p->srcu, &l->rcu, free_list_rcu);
	}
	ksync_memgroup_set_slot(g, slot, NULL);
	ksync_call_srcu(p->srcu, &t->rcu, free_table_rcu);
}

/*
 * Items on the live lists of node @nid (every node for -1), without a lock:
 * the global lists, then the groups' lists (lru->lists, inside a read
 * section). O(lists): no counter shared by all adders (a per-node atomic
 * costs every add and del a locked instruction on a line all of them
 * write). A list being retired may be counted with its items' new list.
 */
static unsigned long count_lists(struct ksync__list_lru *p, int nid)
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

/* ------------------------------------------------------------------------ */
/* Argument checks                                                          */

/*
 * Checks @lru, @nid and @g for the call @what; reports misuse at @at.
 * Return: true if the call may proceed.
 */
static bool args_ok(struct ksync_site at, const char *what, struct ksync__list_lru *p, int nid,
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

/* ------------------------------------------------------------------------ */
/* API                                                                      */

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
		.online = lru_online,
		.offline = lru_offline,
		.release = lru_release,
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
		list_init(&p->global[nid].l, p, nid, NULL);
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
	items = (long)count_lists(p, -1);
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

	if (!args_ok(at, "ksync_list_lru_add", p, nid, group))
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
		l = lock_list_for_add(p, group, nid);
	}
	if (!KSYNC_READ_ONCE(item->list)) {
		first = list_add_locked(l, item);
		added = true;
		/* The kernel's order: the bit is set under the list's lock (L2). */
		if (first)
			set_shrinker_bit_at(p, at, l->group, nid);
	}
	pthread_mutex_unlock(&l->lock);
	if (group)
		ksync_srcu_read_unlock(p->srcu, idx);
	return added;
}

/* Is @l one of @p's global lists (they live until destroy: no read section needed)? */
static bool is_global(const struct ksync__list_lru *p, const struct ksync_list_lru_one *l)
{
	uintptr_t a = (uintptr_t)l, lo = (uintptr_t)&p->global[0], hi = (uintptr_t)&p->global[p->nr_nodes];

	return a >= lo && a < hi;
}

static bool del_item(struct ksync__list_lru *p, struct ksync_list_lru_item *item)
{
	struct ksync_list_lru_one *l = ksync_smp_load_acquire(&item->list); /* NULL: L4; a moved list: L5 */
	bool ret = false;
	int idx;

	if (!l)
		return false;
	if (is_global(p, l)) { /* the common case of a cache without groups: no read section */
		ksync__mutex_lock(&l->lock);
		if (ksync_likely(KSYNC_READ_ONCE(item->list) == l)) {
			list_del_locked(l, item, NULL);
			pthread_mutex_unlock(&l->lock);
			return true;
		}
		pthread_mutex_unlock(&l->lock);
	}
	idx = p->srcu ? ksync_srcu_read_lock(p->srcu) : 0;

	/* A group's list that @item named stays in memory until the section ends. */
	while ((l = ksync_smp_load_acquire(&item->list)) != NULL) { /* NULL: L4; a moved list: L5 */
		yield_point(p, KSYNC_LIST_LRU_YP_DEL_LOOKED_UP);
		ksync__mutex_lock(&l->lock);
		/* Written under the lock of the list it names: here, ours if still on it. */
		if (ksync_likely(KSYNC_READ_ONCE(item->list) == l)) {
			list_del_locked(l, item, NULL);
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

	if (!args_ok(at, "ksync_list_lru_del", p, nid, group))
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

	if (!args_ok(at, "ksync_list_lru_count_one", p, nid, group))
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

	if (!args_ok(at, "ksync_list_lru_count_node", p, nid, NULL))
		return 0;
	return count_lists(p, nid);
}

unsigned long ksync_list_lru_count(struct ksync_list_lru *lru)
{
	return count_lists(lru->priv, -1);
}

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

	if (!args_ok(at, "ksync_list_lru_walk_one", p, nid, group) ||
	    !walk_args_ok(at, "ksync_list_lru_walk_one", isolate, nr_to_walk))
		return 0;
	if (group)
		idx = ksync_srcu_read_lock(p->srcu);
	l = lock_list_for_walk(p, group, nid);
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

	if (!args_ok(at, "ksync_list_lru_walk_node", p, nid, NULL) ||
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

	if (!args_ok(at, "ksync_list_lru_walk", p, 0, NULL) ||
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
	list_del_locked(list, item, NULL);
}

void ksync__list_lru_isolate_move(KSYNC_SITE_ARGS, struct ksync_list_lru_one *list,
				  struct ksync_list_lru_item *item, struct ksync_list_head *head)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, !list || !item || !head || KSYNC_READ_ONCE(item->list) != list,
		   "ksync_list_lru_isolate_move: the item is not on this list"))
		return;
	list_del_locked(list, item, head);
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

void ksync_list_lru_stats(struct ksync_list_lru *lru, struct ksync_list_lru_stats *out)
{
	struct ksync__list_lru *p = lru->priv;

	out->group_lists = ksync_atomic_long_read(&p->nr_group_lists);
	out->group_lists_created = ksync_atomic_long_read(&p->nr_created);
	out->lists_retired = ksync_atomic_long_read(&p->nr_retired);
	out->items_reparented = ksync_atomic_long_read(&p->nr_reparented);
	out->add_retries = ksync_atomic_long_read(&p->nr_retries);
}

void ksync_list_lru_set_yield_hook(struct ksync_list_lru *lru,
				   void (*hook)(struct ksync_list_lru *lru, int point, void *arg), void *arg)
{
	struct ksync__list_lru *p = lru->priv;

	KSYNC_WRITE_ONCE(p->hook_arg, arg);
	ksync_smp_store_release(&p->hook, hook); /* L3 */
}
