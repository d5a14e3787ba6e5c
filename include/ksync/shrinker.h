/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/shrinker.h - a lockless shrinker registry (the kernel's 6.7 design)
 *
 * Programs that keep caches register *shrinkers*: a pair of callbacks that
 * count the freeable objects of a cache and free some of them. Under memory
 * pressure a reclaim thread calls ksync_shrink_slab(), which walks the
 * registered shrinkers and asks each one to give back a share of its objects
 * proportional to the pressure (@priority) and inversely proportional to the
 * cost of recreating an object (@seeks). Work a shrinker could not do is
 * carried over in nr_deferred counters.
 *
 * Memory groups (the kernel's memcg): a shrinker flagged
 * %KSYNC_SHRINKER_MEMCG_AWARE keeps objects per group. Each group keeps, per
 * node, a bitmap with one bit per shrinker id (set by
 * ksync_set_shrinker_bit() when the shrinker gains objects in that group)
 * and an nr_deferred counter per shrinker id. ksync_shrink_slab() on a group
 * visits only the shrinkers whose bit is set.
 *
 * Concurrency (see lib/shrinker/registry.c for the theory and its proofs):
 *  - walkers (ksync_shrink_slab(), ksync_set_shrinker_bit(), the debug
 *    interface) take no lock shared with writers: they run inside an SRCU read
 *    section of the registry and take a reference on each shrinker they call;
 *  - writers (register, unregister, group create/destroy, growth of the
 *    per-group maps) serialise among themselves on a mutex, never wait for a
 *    grace period, and free memory through call_srcu;
 *  - unregistering a shrinker waits only until the calls into *that* shrinker
 *    have returned (its reference count reaches zero); walkers of other
 *    shrinkers never delay it.
 *
 * Two shapes of the same API:
 *  - 6.7 shape: ksync_shrinker_alloc() returns a shrinker owned by the
 *    registry; fill in the callbacks, ksync_shrinker_register(), and finally
 *    ksync_shrinker_free() (which unregisters it if needed).
 *  - classic shape: the caller owns a &struct ksync_shrinker (static or
 *    embedded); ksync_prealloc_shrinker() + ksync_register_shrinker_prepared(),
 *    or ksync_register_shrinker(); ksync_unregister_shrinker() returns once no
 *    callback can run any more, after which the caller may reuse or free the
 *    structure; ksync_free_prealloced_shrinker() undoes a prealloc that was
 *    never registered.
 *
 * State: everything lives in a &struct ksync_shrinker_registry. Tests create
 * a fresh one with ksync_shrinker_registry_create() and tear it down with
 * ksync_shrinker_registry_destroy(); API calls that take a registry accept
 * NULL for the process-wide default registry (created on first use with
 * ksync_shrinker_set_default_nr_nodes() nodes, 1 unless set).
 *
 * Errors are negative errno values. Misuse is reported once per call site,
 * naming the caller's file and line (the calls that can report are macros
 * passing __FILE__ and __LINE__ to ksync__<name>()); running out of memory is
 * not reported. docs/errors.md has the table of every report.
 *
 * fork(): a registry that other threads were walking, or whose writers'
 * mutex another thread held, at fork() time is not usable in the child: the
 * references those threads held on shrinkers (and on groups they walked)
 * never drop there, so unregistering such a shrinker or destroying such a
 * group in the child would wait forever. A child creates its own registry.
 */
#ifndef KSYNC_SHRINKER_H
#define KSYNC_SHRINKER_H

#include <ksync/compiler.h>
#include <ksync/memgroup.h>

#include <stdbool.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_shrinker_registry;
struct ksync_shrinker_record;

/*
 * ksync_shrinker_group - the memory groups of <ksync/memgroup.h>; the old
 * name of &struct ksync_memgroup, kept so that code written against it builds.
 */
#define ksync_shrinker_group ksync_memgroup

/** KSYNC_SHRINK_STOP - scan_objects() return: cannot make progress now, stop. */
#define KSYNC_SHRINK_STOP (~0UL)
/** KSYNC_SHRINK_EMPTY - count_objects() return: no objects at all (lets the group walk clear the bit). */
#define KSYNC_SHRINK_EMPTY (~0UL - 1)
/** KSYNC_DEFAULT_SEEKS - cost of recreating an object, as in the kernel. */
#define KSYNC_DEFAULT_SEEKS 2
/** KSYNC_SHRINK_BATCH - default objects per scan_objects() call. */
#define KSYNC_SHRINK_BATCH 128
/** KSYNC_DEF_PRIORITY - the lowest pressure: scan freeable >> 12. */
#define KSYNC_DEF_PRIORITY 12
/**
 * KSYNC_SHRINKER_MAX_OBJECTS - the largest count_objects() value taken at face
 * value; larger ones (other than %KSYNC_SHRINK_EMPTY) are reported and read as 0.
 */
#define KSYNC_SHRINKER_MAX_OBJECTS (~0UL >> 2)
/** KSYNC_SHRINKER_MAX_NODES - most nodes a registry may have. */
#define KSYNC_SHRINKER_MAX_NODES 64

/* Flags of &struct ksync_shrinker. */
/** KSYNC_SHRINKER_NUMA_AWARE - called once per node; otherwise always with nid 0. */
#define KSYNC_SHRINKER_NUMA_AWARE (1U << 2)
/** KSYNC_SHRINKER_MEMCG_AWARE - keeps objects per memory group (gets an id and group bits). */
#define KSYNC_SHRINKER_MEMCG_AWARE (1U << 3)
/** KSYNC_SHRINKER_NONSLAB - accepted for source compatibility; no effect. */
#define KSYNC_SHRINKER_NONSLAB (1U << 4)
/** KSYNC_SHRINKER_USER_FLAGS - every flag a caller may pass; others are refused (-EINVAL). */
#define KSYNC_SHRINKER_USER_FLAGS                                              \
	(KSYNC_SHRINKER_NUMA_AWARE | KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NONSLAB)

/**
 * struct ksync_shrink_control - what a callback is asked to do.
 * @nid: node being shrunk (0 unless the shrinker is NUMA aware)
 * @nr_to_scan: objects scan_objects() should look at
 * @nr_scanned: objects it did look at; preset to @nr_to_scan, a callback
 *              may lower it (a value above @nr_to_scan is clamped)
 * @group: memory group being shrunk, NULL for the global walk
 */
struct ksync_shrink_control {
	int nid;
	unsigned long nr_to_scan;
	unsigned long nr_scanned;
	struct ksync_memgroup *group;
};

/**
 * struct ksync_shrinker - a cache's callbacks and tuning.
 * @count_objects: return the number of freeable objects, 0 for "none now" or
 *                 %KSYNC_SHRINK_EMPTY for "none at all"
 * @scan_objects: free up to sc->nr_to_scan objects; return how many were
 *                freed, or %KSYNC_SHRINK_STOP
 * @batch: objects per scan_objects() call, 0 for %KSYNC_SHRINK_BATCH
 * @seeks: cost of recreating an object; 0 means "free half of what you can"
 * @flags: %KSYNC_SHRINKER_NUMA_AWARE, %KSYNC_SHRINKER_MEMCG_AWARE; read when the
 *         shrinker is allocated or prealloc'ed, fixed from then on
 * @private_data: for the owner
 * @id: shrinker id (memcg-aware shrinkers, once registered), else -1
 * @record: registry bookkeeping; NULL while not prepared/registered. Do not touch.
 * @reg: registry bookkeeping: the registry while prepared/registered, else
 *       NULL (the debug calls enter its read section before they look at
 *       @record). Do not touch.
 *
 * Callbacks run concurrently with each other (several reclaim threads), may
 * block, may call ksync_set_shrinker_bit() and may register or unregister
 * *other* shrinkers; they must not unregister their own shrinker nor call
 * ksync_shrink_slab() or ksync_synchronize_shrinkers() (reported: -EDEADLK).
 * Callbacks that unregister each other while both run (A's unregisters B,
 * B's unregisters A; or a longer ring) would wait for each other forever,
 * as in the kernel: here the unregister that would close the cycle returns
 * -EDEADLK (reported) and leaves its shrinker registered, and the others
 * complete once that callback returns.
 */
struct ksync_shrinker {
	unsigned long (*count_objects)(struct ksync_shrinker *s, struct ksync_shrink_control *sc);
	unsigned long (*scan_objects)(struct ksync_shrinker *s, struct ksync_shrink_control *sc);
	long batch;
	int seeks;
	unsigned flags;
	void *private_data;
	int id;
	struct ksync_shrinker_record *record;
	struct ksync_shrinker_registry *reg;
};

/* ------------------------------------------------------------------------ */
/* Registries                                                               */

/**
 * ksync_shrinker_registry_create() - a fresh, empty registry.
 * @nr_nodes: nodes (1..%KSYNC_SHRINKER_MAX_NODES)
 *
 * Return: the registry, or NULL (bad @nr_nodes, reported; or out of memory).
 */
struct ksync_shrinker_registry *ksync__shrinker_registry_create(const char *file, int line, int nr_nodes);
#define ksync_shrinker_registry_create(...) ksync__shrinker_registry_create(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_registry_destroy() - tear down a registry.
 * @reg: a registry from ksync_shrinker_registry_create()
 *
 * Every shrinker must be unregistered and every group destroyed first; if
 * not, that is reported and the registry is leaked rather than freed under
 * its users. Waits for pending call_srcu frees. Return: 0 or -EBUSY.
 */
int ksync__shrinker_registry_destroy(const char *file, int line, struct ksync_shrinker_registry *reg);
#define ksync_shrinker_registry_destroy(...) ksync__shrinker_registry_destroy(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_registry_default() - the process-wide registry (created on first use).
 */
struct ksync_shrinker_registry *ksync_shrinker_registry_default(void);

/**
 * ksync_shrinker_set_default_nr_nodes() - node count of the default registry.
 * @nr_nodes: 1..%KSYNC_SHRINKER_MAX_NODES
 *
 * Return: 0, or -EBUSY once the default registry exists, -EINVAL for a bad count.
 */
int ksync__shrinker_set_default_nr_nodes(const char *file, int line, int nr_nodes);
#define ksync_shrinker_set_default_nr_nodes(...) ksync__shrinker_set_default_nr_nodes(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_shrinker_registry_nr_nodes() - number of nodes of @reg (NULL: default). */
int ksync_shrinker_registry_nr_nodes(struct ksync_shrinker_registry *reg);

/**
 * ksync_shrinker_nr_max() - current size of every group's shrinker maps
 * (map_nr_max); ids below it can be set. @reg: registry (NULL: default).
 */
int ksync_shrinker_nr_max(struct ksync_shrinker_registry *reg);

/**
 * ksync_shrinker_registry_groups() - the set of memory groups of @reg (NULL:
 * default). The registry is a client of it (<ksync/memgroup.h>): other
 * modules that keep per-group state register there too, and groups made
 * with ksync_memgroup_create() on it are groups of the registry.
 */
struct ksync_memgroup_set *ksync_shrinker_registry_groups(struct ksync_shrinker_registry *reg);

/* ------------------------------------------------------------------------ */
/* 6.7 shape                                                                */

/**
 * ksync_shrinker_alloc() - allocate a shrinker owned by @reg.
 * @reg: registry, NULL for the default one
 * @flags: KSYNC_SHRINKER_* flags
 * @fmt: printf format of the shrinker's name (for the debug interface)
 *
 * For a memcg-aware shrinker this allocates its id (lowest free) and grows
 * every group's maps if the id is new. Fill in the callbacks, then call
 * ksync_shrinker_register(). Return: the shrinker, or NULL.
 */
struct ksync_shrinker *ksync__shrinker_alloc(const char *file, int line, struct ksync_shrinker_registry *reg, unsigned flags,
					    const char *fmt, ...)
	__attribute__((__format__(__printf__, 5, 6)));
#define ksync_shrinker_alloc(...) ksync__shrinker_alloc(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_register() - make an allocated shrinker visible to walkers.
 * @s: from ksync_shrinker_alloc()
 *
 * Ordering: the callbacks and fields written before the call are visible to
 * every walker that calls them (release/acquire through the list and id map).
 * Return: 0; -EBUSY if already registered (reported), -EINVAL for a foreign
 * or unprepared shrinker or one without callbacks (reported).
 */
int ksync__shrinker_register(const char *file, int line, struct ksync_shrinker *s);
#define ksync_shrinker_register(...) ksync__shrinker_register(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_free() - unregister (if registered) and free @s.
 * @s: from ksync_shrinker_alloc(), or NULL (no-op)
 *
 * Waits only until the callbacks of @s that are running return; no callback
 * of @s starts after that. Never waits for a grace period: the memory is
 * freed by call_srcu. Must not be called from a callback of @s (reported,
 * -EDEADLK, nothing freed); from another shrinker's callback, -EDEADLK
 * (reported, nothing freed, @s stays registered) when the wait would close a
 * cycle of callbacks unregistering each other. Return: 0 or a negative errno.
 */
int ksync__shrinker_free(const char *file, int line, struct ksync_shrinker *s);
#define ksync_shrinker_free(...) ksync__shrinker_free(__FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* classic shape (caller-owned struct ksync_shrinker)                       */

/**
 * ksync_prealloc_shrinker() - prepare the caller-owned @s for registration.
 * @reg: registry, NULL for the default one
 * @s: the shrinker, callbacks filled in, @s->record NULL
 * @fmt: printf format of its name
 *
 * Return: 0; -EBUSY if @s is already prepared or registered (reported);
 * -ENOMEM.
 */
int ksync__prealloc_shrinker(const char *file, int line, struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			    const char *fmt, ...) __attribute__((__format__(__printf__, 5, 6)));
#define ksync_prealloc_shrinker(...) ksync__prealloc_shrinker(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_register_shrinker_prepared() - publish a prealloc'ed @s. Return: as ksync_shrinker_register(). */
int ksync__register_shrinker_prepared(const char *file, int line, struct ksync_shrinker *s);
#define ksync_register_shrinker_prepared(...) ksync__register_shrinker_prepared(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_free_prealloced_shrinker() - undo ksync_prealloc_shrinker() of a never-registered @s. */
void ksync__free_prealloced_shrinker(const char *file, int line, struct ksync_shrinker *s);
#define ksync_free_prealloced_shrinker(...) ksync__free_prealloced_shrinker(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_register_shrinker() - prealloc + register in one call.
 * Return: 0 or a negative errno (see the two calls).
 */
int ksync__register_shrinker(const char *file, int line, struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			    const char *fmt, ...) __attribute__((__format__(__printf__, 5, 6)));
#define ksync_register_shrinker(...) ksync__register_shrinker(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_unregister_shrinker() - unpublish the caller-owned @s.
 * @s: a registered shrinker
 *
 * On return no callback of @s runs or will run, and @s (the caller's memory)
 * is no longer referenced by the registry: it may be freed or registered
 * again. Waits only for calls into @s. Return: 0; -ENOENT if @s is not
 * registered, -EINVAL if it is foreign (not prepared by this API),
 * -EDEADLK from @s's own callback or when, called from a callback, the wait
 * would close a cycle of callbacks unregistering each other (@s then stays
 * registered), -EBUSY while another thread unregisters it (all reported).
 */
int ksync__unregister_shrinker(const char *file, int line, struct ksync_shrinker *s);
#define ksync_unregister_shrinker(...) ksync__unregister_shrinker(__FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Memory groups                                                            */

/**
 * ksync_shrinker_group_create() - a new memory group.
 * @reg: registry (NULL: default)
 * @parent: the group that inherits this one's deferred work when it goes
 *          away; NULL for a top-level group (its deferred work then moves to
 *          the registry's orphan counter, see ksync_shrinker_deferred_total())
 *
 * Return: the group or NULL.
 */
struct ksync_memgroup *ksync__shrinker_group_create(const char *file, int line, struct ksync_shrinker_registry *reg,
							 struct ksync_memgroup *parent);
#define ksync_shrinker_group_create(...) ksync__shrinker_group_create(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_group_destroy() - take a group away.
 * @g: the group; its children must be destroyed first (-EBUSY otherwise)
 *
 * Marks @g dead (new walks in @g return at once), waits until the walks
 * running in @g have finished: one SRCU grace period of the registry for
 * those inside a read section, and those that left their section for a
 * waiting writer until they come back and see @g dead (group walks take no
 * reference, to keep them free of atomics on the group's line), moves
 * every nr_deferred counter of @g into @g's parent, and frees @g's maps
 * through call_srcu. The caller must not use @g once this returns (unless it
 * holds a reference of its own, <ksync/memgroup.h>). It is
 * ksync_memgroup_offline() of a registry's group, and refuses as it does:
 * from a shrinker callback or inside a read section of the registry's
 * domain, -EDEADLK (its wait for the walks could never end there). Return:
 * 0 or a negative errno (reported).
 */
int ksync__shrinker_group_destroy(const char *file, int line, struct ksync_memgroup *g);
#define ksync_shrinker_group_destroy(...) ksync__shrinker_group_destroy(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_shrinker_group_id() - a small integer naming @g (for messages). */
int ksync_shrinker_group_id(const struct ksync_memgroup *g);

/**
 * ksync_set_shrinker_bit() - note that shrinker @id has objects in @g on @nid.
 * @g: the group (NULL: no-op, as the kernel's root)
 * @nid: the node
 * @id: the shrinker's id
 *
 * Lock-free. Call it after making the objects visible: a full barrier
 * (label S1, pairs with W1 in the group walk) orders them before the bit, so
 * a walker that clears the bit on %KSYNC_SHRINK_EMPTY and counts again sees
 * them. May be called between ksync_shrinker_alloc() (or prealloc) and the
 * register: group walks skip a shrinker that is not registered yet and keep
 * its bit, so the objects are found once it is.
 *
 * @g may be in any state the caller can see it in (holding a reference, or
 * inside a read section of the set's domain, ksync_memgroup_set_srcu() of
 * ksync_shrinker_registry_groups()): once @g's offline has begun here, the
 * bit is set in its nearest ancestor that is still alive, which inherited
 * its deferred work and (through list_lru) its objects; for a top-level
 * group nothing is set. Return: 0; -EINVAL (reported once, nothing written)
 * for @id at or beyond the map (ksync_shrinker_nr_max()) or a bad @nid, or
 * a group of no registry.
 */
int ksync__set_shrinker_bit(const char *file, int line, struct ksync_memgroup *g, int nid, int id);
#define ksync_set_shrinker_bit(...) ksync__set_shrinker_bit(__FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Reclaim                                                                  */

/**
 * struct ksync_shrink_budget - how much one shrinker is asked to scan.
 * @delta: new work from this call: (@freeable >> priority) * 4 / seeks, or
 *	   @freeable / 2 for seeks == 0
 * @total_scan: objects to scan: (nr_deferred >> priority) + @delta, at most
 *	   twice @freeable
 * @batch: objects per scan_objects() call
 */
struct ksync_shrink_budget {
	unsigned long delta;
	unsigned long total_scan;
	unsigned long batch;
};

/**
 * ksync_shrink_budget() - the kernel's do_shrink_slab() arithmetic, pure.
 * @freeable: what count_objects() returned (not 0, not %KSYNC_SHRINK_EMPTY)
 * @nr_deferred: the work carried over (taken from the counter), >= 0
 * @priority: 0..BITS_PER_LONG-1
 * @seeks: the shrinker's seeks
 * @batch: the shrinker's batch (0: %KSYNC_SHRINK_BATCH)
 * @out: the budget
 *
 * ksync_shrink_slab() and any other registry (the reclaim-storm demo's
 * rwlock one) use this one function, so that they scan alike by construction.
 */
static inline void ksync_shrink_budget(unsigned long freeable, long nr_deferred, int priority,
				       int seeks, long batch, struct ksync_shrink_budget *out)
{
	unsigned long total;

	if (seeks > 0)
		out->delta = ((freeable >> priority) * 4) / (unsigned long)seeks;
	else
		out->delta = freeable / 2;
	total = ((unsigned long)nr_deferred >> priority) + out->delta;
	out->total_scan = total < 2 * freeable ? total : 2 * freeable;
	out->batch = batch > 0 ? (unsigned long)batch : KSYNC_SHRINK_BATCH;
}

/**
 * ksync_shrink_next_deferred() - the work to carry over after a scan.
 * @nr_deferred: the work that was carried in
 * @delta: the budget's delta
 * @scanned: objects scanned
 * @freeable: what count_objects() returned
 *
 * Return: nr_deferred + delta - scanned, clamped to 0..2 * @freeable.
 */
static inline long ksync_shrink_next_deferred(long nr_deferred, unsigned long delta,
					      unsigned long scanned, unsigned long freeable)
{
	long next = nr_deferred + (long)delta - (long)scanned;

	if (next < 0)
		next = 0;
	if ((unsigned long)next > 2 * freeable)
		next = (long)(2 * freeable);
	return next;
}

/**
 * ksync_shrink_slab() - ask shrinkers to give back objects.
 * @reg: registry (NULL: default); ignored when @group is set
 * @nid: node
 * @group: NULL for the global walk (every registered shrinker), else the
 *         group walk (memcg-aware shrinkers whose bit is set in @group). The
 *         caller keeps @group in memory: it holds a reference, or is inside a
 *         read section of the set's domain (ksync_memgroup_set_srcu() of
 *         ksync_shrinker_registry_groups()); a group whose offline has begun
 *         is walked no more (0).
 * @priority: 0 (most pressure) .. %KSYNC_DEF_PRIORITY (least)
 *
 * Lock-free: no lock shared with writers; a pending writer makes a group walk
 * leave and re-enter its SRCU section at the next id. Return: objects freed
 * (0 and a report when called from a shrinker callback, or for a bad @nid).
 */
unsigned long ksync__shrink_slab(const char *file, int line, struct ksync_shrinker_registry *reg, int nid,
				struct ksync_memgroup *group, int priority);
#define ksync_shrink_slab(...) ksync__shrink_slab(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_synchronize_shrinkers() - wait until every walk that was running has finished.
 * @reg: registry (NULL: default)
 *
 * For owners that change what their callbacks see and must know that no walk
 * still uses the old state. Waits for an SRCU grace period of @reg; must not
 * be called from a callback (-EDEADLK, reported). Return: 0 or -EDEADLK.
 */
int ksync__synchronize_shrinkers(const char *file, int line, struct ksync_shrinker_registry *reg);
#define ksync_synchronize_shrinkers(...) ksync__synchronize_shrinkers(__FILE__, __LINE__, __VA_ARGS__)

KSYNC_EXTERN_C_END

#endif /* KSYNC_SHRINKER_H */
