/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/objcg.h - charge handles of memory groups
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
 * Charges land in the per-group statistics of <ksync/memgroup_stat.h>
 * (KSYNC_MEMGROUP_STAT_OBJECTS and _BYTES), with their dying redirection.
 *
 * A built-in client of every set (ksync_memgroup_set_create()); includes
 * <ksync/memgroup_stat.h>, which was part of this header.
 */
#ifndef KSYNC_OBJCG_H
#define KSYNC_OBJCG_H

#include <ksync/compiler.h>
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_objcg;

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

/**
 * ksync_memgroup_objcg_peek() - @g's own charge handle, without a reference.
 * @g: the group; the caller keeps it in memory during the call (a reference
 *     on it, or a read section of the set's domain in which it was found)
 *
 * No atomic read-modify-write and no shared write: for a cache of handles
 * (an object cache's stock) that holds references already and only needs to
 * know which of its handles is @g's. The handle returned carries no
 * reference and may lose its last one at any time (a concurrent offline):
 * it stays in memory only while the caller is inside a read section of the
 * set's domain, or as long as the caller holds references on it taken
 * before. Compare it against handles you hold; to keep it, take a
 * reference with ksync_memgroup_get_objcg(), never ksync_objcg_get() on the
 * peeked pointer alone. Unlike ksync_memgroup_get_objcg(), no ancestor is
 * looked up.
 *
 * Return: @g's handle if @g is online, else NULL.
 */
struct ksync_objcg *ksync_memgroup_objcg_peek(struct ksync_memgroup *g);

/**
 * ksync_objcg_generation() - a counter of handle moves, process-wide.
 *
 * Changes (grows) each time some group's offline has moved its handles to
 * its parent, after the move. A caller that cached (handle, group) pairs and
 * checked them all after reading the value V may skip the next check while
 * the counter still reads V: no handle has moved off its group since,
 * except by an offline still in progress, whose increment comes next. Read
 * with acquire ordering (O2: pairs with the release increment in the
 * offline hook), so that a caller that reads a new value sees every move
 * it counts.
 *
 * Return: the counter's value.
 */
unsigned long ksync_objcg_generation(void);

/** ksync_objcg_get() - another reference on @objcg (the caller holds one). */
void ksync_objcg_get(struct ksync_objcg *objcg);

/** ksync_objcg_put() - drop a reference; the last frees the handle (after a grace period). */
void ksync_objcg_put(struct ksync_objcg *objcg);

/**
 * ksync_objcg_get_many() - @n more references at once (the caller holds one;
 * @n <= 0: nothing). For batching owners such as an object cache's stock.
 */
void ksync_objcg_get_many(struct ksync_objcg *objcg, long n);

/** ksync_objcg_put_many() - drop @n references at once (@n <= 0: nothing); the last frees the handle. */
void ksync_objcg_put_many(struct ksync_objcg *objcg, long n);

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
