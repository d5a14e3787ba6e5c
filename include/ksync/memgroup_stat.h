/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/memgroup_stat.h - per-group statistics of memory groups
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
 *
 * A built-in client of every set (ksync_memgroup_set_create()), compiled in
 * ksync::memgroup (lib/memgroup/stats.c). Charge handles (<ksync/objcg.h>)
 * account to these counters.
 */
#ifndef KSYNC_MEMGROUP_STAT_H
#define KSYNC_MEMGROUP_STAT_H

#include <ksync/compiler.h>
#include <ksync/memgroup.h>

KSYNC_EXTERN_C_BEGIN

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
 * @set not yet freed, plus the root: the conserved quantity. Waits for the
 * set's queued callbacks (the final moves), then takes the set's mutex;
 * exact when no update runs concurrently. 0 (reported) for a NULL @set, a
 * bad @nid or @item, or a call inside a read section of the set's domain
 * (where that wait could never end).
 */
long ksync__memgroup_stat_total(const char *file, int line, struct ksync_memgroup_set *set, int nid, int item);
#define ksync_memgroup_stat_total(...) ksync__memgroup_stat_total(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_memgroup_set_nr_nodes() - the node count of @set's statistics. */
int ksync_memgroup_set_nr_nodes(const struct ksync_memgroup_set *set);

KSYNC_EXTERN_C_END

#endif /* KSYNC_MEMGROUP_STAT_H */
