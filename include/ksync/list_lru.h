/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/list_lru.h - LRU lists per memory group and node (the kernel's 6.13 list_lru)
 *
 * A &struct ksync_list_lru keeps a cache's unused objects on lists, one per
 * (memory group, node) pair, so that a memcg-aware shrinker can count and
 * scan the objects of exactly the group it is asked about. Objects embed a
 * &struct ksync_list_lru_item; the list an item is on is remembered in it.
 *
 * Lists:
 *  - the global lists (group NULL), one per node, exist from
 *    ksync_list_lru_init() to ksync_list_lru_destroy();
 *  - a group's list for a node is allocated by the first add for that
 *    (group, node): memory grows with the (group, node) pairs used, not
 *    with the groups (a group costs one table of @nr_nodes pointers,
 *    allocated when the group comes online; ksync_list_lru_stats() counts
 *    the lists). If that allocation fails, the item goes to the nearest
 *    ancestor that has a list (at worst the global list): an add never
 *    fails for lack of memory.
 *
 * Each list has a lock of its own (a mutex), a plain list, a count readable
 * without the lock (ksync_list_lru_count_one()) and a dead flag.
 *
 * Memory groups: a list_lru is a client (%KSYNC_MEMGROUP_ORDER_LRU) of the
 * set of groups it was initialised with. When a group goes offline, every
 * list of the group is retired: under the list's lock it is marked dead,
 * then its items move to the parent's list (created if needed; a top-level
 * group's items go to the global list) and it is unpublished. An add that
 * races finds the list dead under its lock and retries at the parent, so an
 * item is never lost nor added to a dead list. Lists are freed after a grace
 * period of the set's SRCU domain (ksync_memgroup_set_srcu()), inside whose
 * read sections every lookup runs.
 *
 * Where an item is: &ksync_list_lru_item.list names its list (NULL when it
 * is on none), kept up to date by reparenting. So ksync_list_lru_del() finds
 * the item wherever it is now, after any number of reparentings, whatever
 * group the caller passes (the nid and group arguments are only checked);
 * ksync_list_lru_del_obj() needs neither. The price: retiring a list writes
 * each of its items once (O(items), under the child's and the parent's
 * locks) where the kernel splices in O(1).
 *
 * Rules (the kernel's): adds and dels of one item must not race each other
 * (the caller holds the object's lock, or owns the object); they may race
 * walks, reparenting and everything else. An item a walk took off with
 * ksync_list_lru_isolate() may be added again by its owner once its
 * ->list reads NULL (ksync_list_lru_item_on_list(), or a del that returns
 * false): the release/acquire pair on ->list orders the walk's writes
 * before; one taken with ksync_list_lru_isolate_move() is on the walker's
 * list and belongs to the walker. An isolate callback runs with the
 * list's lock held; it may drop the lock (ksync_list_lru_unlock(), then
 * ksync_list_lru_lock() before returning) only when it returns
 * %KSYNC_LRU_REMOVED_RETRY or %KSYNC_LRU_RETRY, and must not call the other
 * functions of the same list_lru except ksync_list_lru_isolate() and
 * ksync_list_lru_isolate_move() of the item and list it was given, nor take
 * a group offline. %KSYNC_LRU_REMOVED and %KSYNC_LRU_REMOVED_RETRY mean the callback
 * isolated the item itself (ksync_list_lru_isolate() or _move()).
 *
 * A memcg-aware shrinker on top (count = the group's list, scan = a walk of
 * it); the shrinker's group bit is set when a group's list goes from empty
 * to non-empty, after the item is visible (the full barrier in
 * ksync_set_shrinker_bit()):
 *
 *   static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
 *   {
 *           struct cache *c = s->private_data;
 *           unsigned long n = ksync_list_lru_shrinker_count(&c->lru, sc);
 *
 *           return n ? n : KSYNC_SHRINK_EMPTY; // lets the group walk clear the bit
 *   }
 *
 *   static enum ksync_lru_status cache_isolate(struct ksync_list_lru_item *item,
 *                                              struct ksync_list_lru_one *list, void *arg)
 *   {
 *           struct obj *o = ksync_container_of(item, struct obj, lru);
 *
 *           if (o->referenced) {
 *                   o->referenced = false;
 *                   return KSYNC_LRU_ROTATE;
 *           }
 *           ksync_list_lru_isolate_move(list, item, arg); // onto the dispose list
 *           return KSYNC_LRU_REMOVED;
 *   }
 *
 *   static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
 *   {
 *           struct cache *c = s->private_data;
 *           KSYNC_LIST_HEAD(dispose);
 *           unsigned long freed = ksync_list_lru_shrinker_walk(&c->lru, sc, cache_isolate, &dispose);
 *
 *           free_objects(&dispose); // outside the list's lock
 *           return freed;
 *   }
 *
 *   s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, "cache");
 *   s->count_objects = cache_count;
 *   s->scan_objects = cache_scan;
 *   s->private_data = c;
 *   ksync_list_lru_init(&c->lru, ksync_shrinker_registry_groups(reg),
 *                       ksync_shrinker_registry_nr_nodes(reg), s);
 *   ksync_shrinker_register(s);
 *
 * (tests/unit/list_lru_test.c runs this pattern.)
 *
 * Errors follow docs/errors.md: misuse (a bad nid, a group of another set,
 * destroying a list_lru that still holds items) is reported once per call
 * site with the caller's file and line, and returns a negative errno, false
 * or 0; running out of memory is silent. A set has at most
 * %KSYNC_MEMGROUP_MAX_CLIENTS clients: ksync_list_lru_init() returns -ENOSPC
 * when none is left. ksync_list_lru_destroy() unregisters the client, which
 * the set refuses while it has groups: destroy a list_lru after its set's
 * groups are freed.
 */
#ifndef KSYNC_LIST_LRU_H
#define KSYNC_LIST_LRU_H

#include <ksync/compiler.h>
#include <ksync/list.h>
#include <ksync/memgroup.h>
#include <ksync/shrinker.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_list_lru_one;
struct ksync__list_lru;

/** KSYNC_LIST_LRU_MAX_NODES - most nodes a list_lru may have. */
#define KSYNC_LIST_LRU_MAX_NODES 64

/**
 * struct ksync_list_lru_item - what an object embeds to be put on a list_lru.
 * @link: the link in the list
 * @list: the list the item is on, NULL when on none; written under that
 *	list's lock, read by anyone (ksync_list_lru_item_on_list()). Do not write.
 */
struct ksync_list_lru_item {
	struct ksync_list_head link;
	struct ksync_list_lru_one *list;
};

/** KSYNC_LIST_LRU_ITEM_INIT() - initialiser of an item named @name, on no list. */
#define KSYNC_LIST_LRU_ITEM_INIT(name) { KSYNC_LIST_HEAD_INIT((name).link), NULL }

/** ksync_list_lru_item_init() - make @item an item on no list. */
static inline void ksync_list_lru_item_init(struct ksync_list_lru_item *item)
{
	ksync_init_list_head(&item->link);
	item->list = NULL;
}

/**
 * ksync_list_lru_item_on_list() - whether @item is on a list now (a snapshot).
 *
 * Acquire: false means whoever took the item off (a del, or a walk's
 * ksync_list_lru_isolate()) is done with its link, so the caller may add it
 * again without a lock shared with that thread.
 */
static inline bool ksync_list_lru_item_on_list(const struct ksync_list_lru_item *item)
{
	return __atomic_load_n(&item->list, __ATOMIC_ACQUIRE) != NULL;
}

/**
 * enum ksync_lru_status - what an isolate callback did with an item.
 * @KSYNC_LRU_REMOVED: the callback isolated the item (ksync_list_lru_isolate()
 *	or ksync_list_lru_isolate_move()); counted as isolated
 * @KSYNC_LRU_REMOVED_RETRY: as %KSYNC_LRU_REMOVED, and the callback dropped
 *	the list's lock and took it again: the walk restarts from the head
 * @KSYNC_LRU_ROTATE: the item goes to the tail (referenced: another pass)
 * @KSYNC_LRU_SKIP: the item stays where it is
 * @KSYNC_LRU_RETRY: not freeable now; the callback may have dropped the lock
 *	and taken it again: the walk restarts from the head
 * @KSYNC_LRU_STOP: end the walk (the lock was not dropped)
 *
 * Every item visited counts against the walk's budget (*@nr_to_walk), so
 * restarts cannot loop forever. A walk that restarts on a list that was
 * retired meanwhile (its group went offline while the lock was dropped)
 * ends there: its items are on the parent's list now.
 */
enum ksync_lru_status {
	KSYNC_LRU_REMOVED,
	KSYNC_LRU_REMOVED_RETRY,
	KSYNC_LRU_ROTATE,
	KSYNC_LRU_SKIP,
	KSYNC_LRU_RETRY,
	KSYNC_LRU_STOP,
};

/** ksync_list_lru_walk_cb - an isolate callback: called with @list's lock held. */
typedef enum ksync_lru_status (*ksync_list_lru_walk_cb)(struct ksync_list_lru_item *item,
							 struct ksync_list_lru_one *list,
							 void *cb_arg);

/**
 * struct ksync_list_lru - LRU lists per (group, node); owned by the caller.
 * @priv: the lists and their bookkeeping; NULL before ksync_list_lru_init()
 *	and after ksync_list_lru_destroy(). Do not touch.
 */
struct ksync_list_lru {
	struct ksync__list_lru *priv;
};

/**
 * ksync_list_lru_init() - set up @lru.
 * @lru: the list_lru
 * @set: the memory groups whose lists it keeps, or NULL for global lists
 *	only (every group argument must then be NULL)
 * @nr_nodes: 1..%KSYNC_LIST_LRU_MAX_NODES
 * @shrinker: a %KSYNC_SHRINKER_MEMCG_AWARE shrinker whose group bits to set
 *	when a group's list gains its first item, or NULL. It must belong to
 *	the registry that owns @set (ksync_shrinker_registry_groups()) and be
 *	allocated or prealloc'ed already (it has its id); it may be registered
 *	later. Kept by pointer: unregister it after ksync_list_lru_destroy().
 *
 * Registers @lru as a client of @set (every online group gets its table).
 * Return: 0; -EINVAL for a bad @nr_nodes or a shrinker of another registry
 * (reported); -ENOSPC when @set has no client slot left; -ENOMEM.
 */
int ksync__list_lru_init(const char *file, int line, struct ksync_list_lru *lru,
			 struct ksync_memgroup_set *set, int nr_nodes, struct ksync_shrinker *shrinker);
#define ksync_list_lru_init(...) ksync__list_lru_init(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_destroy() - tear @lru down.
 * @lru: an initialised list_lru without items
 *
 * Items left on any list are misuse: reported, -EBUSY, and the lists are
 * leaked rather than freed under their items. The client is unregistered
 * from the set, which refuses (-EBUSY, reported) while the set has groups.
 * Return: 0, -EBUSY, or -EINVAL for a list_lru never initialised (reported).
 */
int ksync__list_lru_destroy(const char *file, int line, struct ksync_list_lru *lru);
#define ksync_list_lru_destroy(...) ksync__list_lru_destroy(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_add() - put @item at the tail of the list of (@group, @nid).
 * @lru: the list_lru
 * @item: an item on no list
 * @nid: the node, 0..nr_nodes-1
 * @group: a group of the list_lru's set (the caller keeps it alive: holds a
 *	reference, or is inside a read section of the set's SRCU domain), or
 *	NULL for the global list
 *
 * A group that is going or gone offline has its item added to its nearest
 * live ancestor (the global list above the top). When the list goes from
 * empty to non-empty, the shrinker's bit is set for the group the item
 * landed in, after the item is visible. Return: true if added; false if
 * @item was on a list already, or on misuse (a bad nid, a group of another
 * set: reported).
 */
bool ksync__list_lru_add(const char *file, int line, struct ksync_list_lru *lru,
			 struct ksync_list_lru_item *item, int nid, struct ksync_memgroup *group);
#define ksync_list_lru_add(...) ksync__list_lru_add(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_del() - take @item off the list it is on.
 * @lru: the list_lru
 * @item: the item
 * @nid: the node it was added on (checked for range only)
 * @group: the group it was added to (checked to be of the set only)
 *
 * The item's list is found through @item, so this works after the group
 * was reparented, and whatever group is passed. Return: true if @item was
 * on a list and was taken off; false if it was on none (never added,
 * deleted, or isolated by a walk), or on misuse (reported).
 */
bool ksync__list_lru_del(const char *file, int line, struct ksync_list_lru *lru,
			 struct ksync_list_lru_item *item, int nid, struct ksync_memgroup *group);
#define ksync_list_lru_del(...) ksync__list_lru_del(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_list_lru_del_obj() - ksync_list_lru_del() without the nid and group. */
bool ksync__list_lru_del_obj(const char *file, int line, struct ksync_list_lru *lru,
			     struct ksync_list_lru_item *item);
#define ksync_list_lru_del_obj(...) ksync__list_lru_del_obj(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_count_one() - items on the list of (@group, @nid), without a lock.
 *
 * 0 for a group without a list there, or whose lists were retired (its items
 * are counted at the ancestor that took them). Return: the count; 0 on
 * misuse (a bad nid, a group of another set: reported).
 */
unsigned long ksync__list_lru_count_one(const char *file, int line, struct ksync_list_lru *lru,
					int nid, struct ksync_memgroup *group);
#define ksync_list_lru_count_one(...) ksync__list_lru_count_one(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_count_node() - items on every list of node @nid, without a lock.
 *
 * The sum of the lists' counts: O(lists), no counter shared by every add
 * (the kernel's per-node atomic). Return: the sum; 0 and a report for a bad nid.
 */
unsigned long ksync__list_lru_count_node(const char *file, int line, struct ksync_list_lru *lru, int nid);
#define ksync_list_lru_count_node(...) ksync__list_lru_count_node(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_list_lru_count() - items on every list of @lru (O(lists), without a lock). */
unsigned long ksync_list_lru_count(struct ksync_list_lru *lru);

/**
 * ksync_list_lru_walk_one() - offer the items of the list of (@group, @nid) to @isolate.
 * @lru: the list_lru
 * @nid: the node
 * @group: the group (NULL: the global list); a group without a live list
 *	there is not walked (no retry at the parent, as in the kernel)
 * @isolate: the callback (see &enum ksync_lru_status)
 * @cb_arg: passed to @isolate
 * @nr_to_walk: the budget: decremented for every item offered
 *
 * From the head (the oldest item). Return: the items isolated (%KSYNC_LRU_REMOVED
 * and %KSYNC_LRU_REMOVED_RETRY); 0 on misuse (reported).
 */
unsigned long ksync__list_lru_walk_one(const char *file, int line, struct ksync_list_lru *lru,
				       int nid, struct ksync_memgroup *group,
				       ksync_list_lru_walk_cb isolate, void *cb_arg,
				       unsigned long *nr_to_walk);
#define ksync_list_lru_walk_one(...) ksync__list_lru_walk_one(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_walk_node() - as ksync_list_lru_walk_one() over every list of
 * node @nid: the global one first, then the groups' lists in the order they
 * were created, until the budget is spent or a callback says %KSYNC_LRU_STOP.
 */
unsigned long ksync__list_lru_walk_node(const char *file, int line, struct ksync_list_lru *lru,
					int nid, ksync_list_lru_walk_cb isolate, void *cb_arg,
					unsigned long *nr_to_walk);
#define ksync_list_lru_walk_node(...) ksync__list_lru_walk_node(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_list_lru_walk() - ksync_list_lru_walk_node() over every node, @nr_to_walk items at most. */
unsigned long ksync__list_lru_walk(const char *file, int line, struct ksync_list_lru *lru,
				   ksync_list_lru_walk_cb isolate, void *cb_arg, unsigned long nr_to_walk);
#define ksync_list_lru_walk(...) ksync__list_lru_walk(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_isolate() - from an isolate callback: take @item off @list.
 * @list: the list the callback was given (its lock is held)
 * @item: an item of @list (another item is misuse: reported, nothing done)
 */
void ksync__list_lru_isolate(const char *file, int line, struct ksync_list_lru_one *list,
			     struct ksync_list_lru_item *item);
#define ksync_list_lru_isolate(...) ksync__list_lru_isolate(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_list_lru_isolate_move() - as ksync_list_lru_isolate(), and add @item's link to @head. */
void ksync__list_lru_isolate_move(const char *file, int line, struct ksync_list_lru_one *list,
				  struct ksync_list_lru_item *item, struct ksync_list_head *head);
#define ksync_list_lru_isolate_move(...) ksync__list_lru_isolate_move(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_unlock() - from an isolate callback about to return a
 * *_RETRY status: drop @list's lock (take it again with ksync_list_lru_lock()
 * before returning). The list may be retired meanwhile; its memory stays.
 */
void ksync_list_lru_unlock(struct ksync_list_lru_one *list);
/** ksync_list_lru_lock() - take back the lock ksync_list_lru_unlock() dropped. */
void ksync_list_lru_lock(struct ksync_list_lru_one *list);

/** ksync_list_lru_shrinker_count() - ksync_list_lru_count_one() of (sc->nid, sc->group). */
unsigned long ksync__list_lru_shrinker_count(const char *file, int line, struct ksync_list_lru *lru,
					     struct ksync_shrink_control *sc);
#define ksync_list_lru_shrinker_count(...) ksync__list_lru_shrinker_count(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_list_lru_shrinker_walk() - ksync_list_lru_walk_one() of (sc->nid,
 * sc->group) with a budget of sc->nr_to_scan. Return: the items isolated.
 */
unsigned long ksync__list_lru_shrinker_walk(const char *file, int line, struct ksync_list_lru *lru,
					    struct ksync_shrink_control *sc,
					    ksync_list_lru_walk_cb isolate, void *cb_arg);
#define ksync_list_lru_shrinker_walk(...) ksync__list_lru_shrinker_walk(__FILE__, __LINE__, __VA_ARGS__)

/**
 * struct ksync_list_lru_stats - what a list_lru allocated and did.
 * @group_lists: groups' lists allocated now (the global lists not counted)
 * @group_lists_created: groups' lists ever allocated
 * @lists_retired: groups' lists retired by their group going offline
 * @items_reparented: items moved to an ancestor's list by those retirements
 * @add_retries: adds that found a list dead (or a dying group) and went up
 */
struct ksync_list_lru_stats {
	long group_lists;
	long group_lists_created;
	long lists_retired;
	long items_reparented;
	long add_retries;
};

/** ksync_list_lru_stats() - a snapshot of @lru's counters into @out. */
void ksync_list_lru_stats(struct ksync_list_lru *lru, struct ksync_list_lru_stats *out);

KSYNC_EXTERN_C_END

#endif /* KSYNC_LIST_LRU_H */
