/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/objcg.h - charge handles and per-group statistics of memory groups
 *
 * Charge handles (the kernel's obj_cgroup, Linux 5.9). Long-lived objects
 * are charged to a small handle that points at a group, never to the group
 * itself: when the group goes offline, the handles that point at it are
 * moved to its parent (the pointer is rewritten under the set's lock and
 * read under the set's SRCU domain), so the objects keep being accounted to
 * a live ancestor and the dying group is freed as soon as nothing references
 * it directly: objects do not pin dead groups. A top-level group's handles
 * end up pointing at no group (the set's root counters).
 *
 * Statistics. Per group and node, KSYNC_MEMGROUP_NR_STATS counters
 * (&enum ksync_memgroup_stat), updated on hot paths:
 *  - fast path: the group is online, and the update is one relaxed atomic
 *    add to its counter: no read section, no other atomic;
 *  - dying redirection: an update aimed at a group that is not online goes,
 *    inside a read section of the set's domain, to its nearest online
 *    ancestor (the set's root counters if none), so nothing is lost to a
 *    group being torn down;
 *  - going offline flushes the group's counters into its parent (or the
 *    root) last of all its clients' steps (KSYNC_MEMGROUP_ORDER_STATS), and
 *    the group's release flushes what late updates added after a grace
 *    period. So at every moment the sum of the counters of all groups not yet
 *    freed, plus the root's, equals everything added minus everything
 *    subtracted: statistics are conserved exactly.
 * An updater must hold a reference on the group, or be inside a read section
 * of the set's domain (as ksync_objcg_charge() is).
 *
 * Both are built-in clients of every set (ksync_memgroup_set_create()).
 */
#ifndef KSYNC_OBJCG_H
#define KSYNC_OBJCG_H

#include <ksync/compiler.h>
#include <ksync/memgroup.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_objcg;

/**
 * enum ksync_memgroup_stat - the counters every group keeps, per node.
 * @KSYNC_MEMGROUP_STAT_BYTES: bytes charged through charge handles
 * @KSYNC_MEMGROUP_STAT_OBJECTS: objects charged through charge handles
 * @KSYNC_MEMGROUP_STAT_LRU: objects on the group's LRU lists
 * @KSYNC_MEMGROUP_STAT_USER0: free for the program (and the next three)
 */
enum ksync_memgroup_stat {
	KSYNC_MEMGROUP_STAT_BYTES,
	KSYNC_MEMGROUP_STAT_OBJECTS,
	KSYNC_MEMGROUP_STAT_LRU,
	KSYNC_MEMGROUP_STAT_USER0,
	KSYNC_MEMGROUP_NR_STATS = KSYNC_MEMGROUP_STAT_USER0 + 4,
};

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */

/**
 * ksync_memgroup_stat_add() - add @delta to @item of @g on @nid.
 * @g: the group (the caller holds a reference, or is inside a read section
 *     of the set's domain); NULL: the set's root counters are not reachable
 *     this way, pass a group
 * @nid: node, below the set's node count
 * @item: &enum ksync_memgroup_stat
 * @delta: may be negative
 *
 * One relaxed atomic add while @g is online; otherwise the add goes to the
 * nearest online ancestor (or the root), inside a read section. Unordered.
 *
 * Return: 0, or -EINVAL (reported) for a NULL @g, @nid outside the set's
 * nodes or @item outside the statistics: nothing is added.
 */
int ksync__memgroup_stat_add(const char *file, int line, struct ksync_memgroup *g, int nid, int item,
			     long delta);
#define ksync_memgroup_stat_add(...) ksync__memgroup_stat_add(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_stat_add_always_locked() - ksync_memgroup_stat_add() that
 * always enters a read section first (the seed's patch 2 before patch 3): for
 * benchmarks that measure what the fast path saves. Same result.
 */
int ksync__memgroup_stat_add_always_locked(const char *file, int line, struct ksync_memgroup *g, int nid,
					   int item, long delta);
#define ksync_memgroup_stat_add_always_locked(...) \
	ksync__memgroup_stat_add_always_locked(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_stat_read() - @g's own counter (not its children's), unordered.
 * Return: the counter; 0 (reported) for a NULL @g or a bad @nid or @item.
 */
long ksync__memgroup_stat_read(const char *file, int line, const struct ksync_memgroup *g, int nid, int item);
#define ksync_memgroup_stat_read(...) ksync__memgroup_stat_read(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_stat_root() - the set's root counter: work of top-level groups that went away.
 * Return: the counter; 0 (reported) for a NULL @set or a bad @nid or @item.
 */
long ksync__memgroup_stat_root(const char *file, int line, struct ksync_memgroup_set *set, int nid, int item);
#define ksync_memgroup_stat_root(...) ksync__memgroup_stat_root(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_stat_total() - the sum of @item on @nid over every group of
 * @set not yet freed, plus the root: the conserved quantity. Takes the set's
 * mutex; exact when no update runs concurrently. 0 (reported) for a NULL
 * @set or a bad @nid or @item.
 */
long ksync__memgroup_stat_total(const char *file, int line, struct ksync_memgroup_set *set, int nid, int item);
#define ksync_memgroup_stat_total(...) ksync__memgroup_stat_total(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_memgroup_set_nr_nodes() - the node count of @set's statistics. */
int ksync_memgroup_set_nr_nodes(const struct ksync_memgroup_set *set);

/* ------------------------------------------------------------------------ */
/* Charge handles                                                           */

/**
 * ksync_memgroup_get_objcg() - @g's charge handle, with a reference for the caller.
 * @g: the group; if it is not online, the handle of its nearest online
 *     ancestor (NULL if none: charges then go to the root)
 *
 * Return: the handle (drop it with ksync_objcg_put()) or NULL.
 */
struct ksync_objcg *ksync_memgroup_get_objcg(struct ksync_memgroup *g);

/** ksync_objcg_get() - another reference on @objcg (the caller holds one). */
void ksync_objcg_get(struct ksync_objcg *objcg);

/** ksync_objcg_put() - drop a reference; the last frees the handle (after a grace period). */
void ksync_objcg_put(struct ksync_objcg *objcg);

/**
 * ksync_objcg_group() - the group @objcg points at now (NULL: the root).
 * Call inside a read section of the set's domain; the group may go offline
 * at any time, and the pointer move to its parent, but the group returned
 * stays in memory until the section ends.
 */
struct ksync_memgroup *ksync_objcg_group(struct ksync_objcg *objcg);

/**
 * ksync_objcg_get_group() - the group @objcg points at, with a reference
 * (the kernel's get_mem_cgroup_from_objcg()); NULL for the root.
 */
struct ksync_memgroup *ksync_objcg_get_group(struct ksync_objcg *objcg);

/**
 * ksync_objcg_charge() - account @nr_objects objects of @bytes bytes in all
 * on @nid to the group @objcg points at (KSYNC_MEMGROUP_STAT_OBJECTS and
 * _BYTES), with dying redirection. Negative values uncharge.
 * Return: 0, or -EINVAL (reported) for a NULL @objcg or @nid outside the
 * set's nodes: nothing is charged.
 */
int ksync__objcg_charge(const char *file, int line, struct ksync_objcg *objcg, int nid, long nr_objects,
			long bytes);
#define ksync_objcg_charge(...) ksync__objcg_charge(__FILE__, __LINE__, __VA_ARGS__)

KSYNC_EXTERN_C_END

#endif /* KSYNC_OBJCG_H */
