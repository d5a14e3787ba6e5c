/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/objcache.h - fixed-size object caches (the kernel's kmem_cache), accounted two ways
 *
 * A &struct ksync_objcache hands out objects of one size, the way the
 * kernel's slab allocator does (spellings in <ksync/linux/slab.h>):
 *
 *  - Slabs: a power of two of bytes at that alignment, carved out of 2 MiB
 *    arenas (one mmap and one munmap per arena), per object size the
 *    smallest from 4 KiB to %KSYNC_OBJCACHE_SLAB_SIZE holding 64 objects
 *    (the kernel's slab order per cache); a header at the start (the cache,
 *    a bitmap of live objects, the free objects), then the objects; design
 *    B's charge-handle pointer per object is a vector allocated with the
 *    slab, outside it (the kernel's obj_exts). An object's slab is its address rounded down, its index the
 *    offset divided by the stride. Each cache keeps partial, full and empty
 *    lists under its mutex; empty slabs beyond
 *    &ksync_objcache_config.max_empty_slabs go back to their arena at once.
 *  - Magazines: each thread has, per cache it used, a magazine of free
 *    objects (&ksync_objcache_config.magazine_size). Alloc pops from it and
 *    free pushes to it: no lock, and only the thread's own cache lines and
 *    the object's slab bitmap (a double free is caught there) are written.
 *    An empty or full magazine is refilled or flushed in a batch of half its
 *    size from the cache's depot (its slab lists) under the cache's mutex.
 *  - The thread's magazines are flushed when it exits (a pthread key
 *    destructor), by ksync_objcache_drain_thread(), and by other threads:
 *    the cache's shrinker, ksync_objcache_shrink(), deactivation and
 *    destroy take an idle thread's magazine away from it (an atomic
 *    exchange of the thread's magazine pointer, which the owner also
 *    exchanges around each operation).
 *  - A shrinker per cache, registered with the registry of
 *    &ksync_objcache_config.shrinkers (the default one if NULL), counts
 *    free objects in empty slabs and magazines; its scan drains magazines
 *    and frees empty slabs. So ksync_shrink_slab() (and the pressure
 *    monitor's reclaim) reaches the cache.
 *
 * Accounting to memory groups (<ksync/memgroup.h>): with
 * %KSYNC_OBJCACHE_ACCOUNT, ksync_objcache_alloc_group() charges the object to
 * a group, by one of two designs chosen at creation
 * (&ksync_objcache_config.design; docs/objcache.md compares them):
 *
 *  - %KSYNC_OBJCACHE_PER_GROUP (A; Linux 3.x to 5.8): a group G's objects
 *    come from G's *child* of the cache, created on the first allocation for
 *    G (off the fast path, under the cache's mutex; if that fails, or G is
 *    not online, the root cache serves). A child holds a reference on its
 *    group; each slab holds a reference on its child. When G goes offline
 *    (the memory-group client hook, one client per set shared by every A
 *    cache), G's children are *deactivated*: marked dead, taken out of the
 *    root's table, their magazines flushed, their empty slabs freed (and
 *    every slab freed as soon as it empties, from then on). With
 *    &ksync_objcache_config.reparent (Linux 5.3), a dead child's group
 *    reference moves to G's parent (to none for a top-level group), so it no
 *    longer pins G; without it, G stays DEAD (unfreed) while a dead child
 *    holds objects: the kernel's pile of dying groups. A dead child destroys
 *    itself when its last object is freed (its memory after a grace period
 *    of the set's SRCU domain, since allocations inside a read section may
 *    still hold its pointer).
 *  - %KSYNC_OBJCACHE_CHARGE_HANDLES (B; Linux 5.9+): one cache for every
 *    group; each slab has one charge-handle pointer per object, in a
 *    vector beside it (<ksync/objcg.h>), and each live object holds a reference on its
 *    handle. Charges are batched in a per-thread *stock* of up to
 *    ksync_objcache_stock_slots() handles (1..%KSYNC_OBJCACHE_STOCK_MAX),
 *    flushed with ksync_objcg_charge() when a slot's pending bytes pass
 *    %KSYNC_OBJCACHE_STOCK_BATCH and on drain or thread exit; an evicted
 *    slot is parked with its handle (its pending charges and references
 *    wait in a small per-thread table, flushed when the table is full, the
 *    handle moves, or on drain) until the handle is looked up again; a slot also keeps a reserve of handle references for its
 *    objects (taken 64 at a time), so a hit does no atomic operation. A
 *    group that is not online is never given a slot (the charge goes to its
 *    nearest online ancestor's handle through ksync_objcg_charge() at once);
 *    a slot whose group left ONLINE is dropped at its group's next lookup,
 *    and at any miss once the group's handle has moved. Offline needs
 *    nothing of the cache. A stock holds handle references until its thread
 *    drains (ksync_objcache_drain_thread()) or exits: do that before
 *    ksync_memgroup_set_destroy().
 *
 * Concurrency: every call may run concurrently with every other on the same
 * cache, except destroy (no call on the cache may run or follow it). An
 * object may be freed by any thread. Allocation for a group must be called
 * with the group in memory (a reference, or inside a read section of the
 * set's domain); it may race the group's offline (the object then lands in
 * the child being deactivated, or in the root or parent accounting).
 *
 * Errors: allocations return NULL (out of memory, or misuse); misuse is
 * reported with the caller's file and line (docs/errors.md): a double free,
 * a free to the wrong cache or of a pointer no cache gave out, a destroy with
 * live objects (-EBUSY: the cache is leaked, as the kernel does, and kept
 * usable), an allocation from a destroyed cache, size 0 or above
 * %KSYNC_OBJCACHE_MAX_SIZE, an alignment that is not a power of two or is
 * above %KSYNC_OBJCACHE_MAX_ALIGN.
 *
 * Out of memory (ksync_fail_nth_alloc()): create returns NULL with nothing
 * left behind; alloc returns NULL; a child cache that cannot be created
 * leaves the root serving; a magazine that cannot be allocated makes the
 * operation go to the slab lists under the mutex; free never fails.
 */
#ifndef KSYNC_OBJCACHE_H
#define KSYNC_OBJCACHE_H

#include <ksync/compiler.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_objcache;

/** KSYNC_OBJCACHE_SLAB_SIZE - bytes of the largest slab (a cache's own: ksync_objcache_stats()). */
#define KSYNC_OBJCACHE_SLAB_SIZE (64UL * 1024)
/** KSYNC_OBJCACHE_MAX_SIZE - the largest object: a quarter of a slab. */
#define KSYNC_OBJCACHE_MAX_SIZE (KSYNC_OBJCACHE_SLAB_SIZE / 4)
/** KSYNC_OBJCACHE_MAX_ALIGN - the largest alignment. */
#define KSYNC_OBJCACHE_MAX_ALIGN 4096UL
/** KSYNC_OBJCACHE_STOCK_MAX - the most handles a thread's charge stock holds (the kernel's 2026 five). */
#define KSYNC_OBJCACHE_STOCK_MAX 5
/** KSYNC_OBJCACHE_STOCK_BATCH - pending bytes of a stock slot that make it flush its charge. */
#define KSYNC_OBJCACHE_STOCK_BATCH 4096L
/** KSYNC_OBJCACHE_MAGAZINE_MAX - the largest magazine. */
#define KSYNC_OBJCACHE_MAGAZINE_MAX 256

/* Flags of ksync_objcache_create() (the kernel's SLAB_*). */
/** KSYNC_OBJCACHE_HWCACHE_ALIGN - align objects to a cache line (SLAB_HWCACHE_ALIGN). */
#define KSYNC_OBJCACHE_HWCACHE_ALIGN (1U << 0)
/** KSYNC_OBJCACHE_ACCOUNT - account ksync_objcache_alloc_group() to groups (SLAB_ACCOUNT). */
#define KSYNC_OBJCACHE_ACCOUNT (1U << 1)
/** KSYNC_OBJCACHE_FLAGS - every flag. */
#define KSYNC_OBJCACHE_FLAGS (KSYNC_OBJCACHE_HWCACHE_ALIGN | KSYNC_OBJCACHE_ACCOUNT)

/**
 * enum ksync_objcache_design - how an accounted cache charges groups.
 * @KSYNC_OBJCACHE_CHARGE_HANDLES: B, one cache, a handle per object (5.9+); the default
 * @KSYNC_OBJCACHE_PER_GROUP: A, a child cache per group (3.x-5.8)
 */
enum ksync_objcache_design {
	KSYNC_OBJCACHE_CHARGE_HANDLES = 0,
	KSYNC_OBJCACHE_PER_GROUP = 1,
};

/**
 * struct ksync_objcache_config - what ksync_objcache_create_config() adds
 * to the kernel's arguments. Zero-initialise and set what you need: fields
 * may be added at the end.
 * @design: the accounting design (with %KSYNC_OBJCACHE_ACCOUNT)
 * @reparent: design A: a dead child's group reference moves to the parent
 * @groups: the memory groups charged (NULL: those of @shrinkers' registry,
 *	ksync_shrinker_registry_groups()); only with %KSYNC_OBJCACHE_ACCOUNT
 * @shrinkers: the registry the cache's shrinker joins (NULL: the default)
 * @max_empty_slabs: empty slabs kept per cache (0: 2; dead children keep none)
 * @magazine_size: objects per thread magazine (0: 32; at most
 *	%KSYNC_OBJCACHE_MAGAZINE_MAX; 1 turns magazines off)
 */
struct ksync_objcache_config {
	enum ksync_objcache_design design;
	bool reparent;
	struct ksync_memgroup_set *groups;
	struct ksync_shrinker_registry *shrinkers;
	unsigned max_empty_slabs;
	unsigned magazine_size;
};

/**
 * ksync_objcache_create() - a new cache of @size-byte objects (kmem_cache_create()).
 * @name: for the debug dump and the shrinker (copied)
 * @size: 1..%KSYNC_OBJCACHE_MAX_SIZE
 * @align: 0 (pointer alignment) or a power of two up to %KSYNC_OBJCACHE_MAX_ALIGN
 * @flags: KSYNC_OBJCACHE_* flags
 * @ctor: called once per object when its slab is made (may be NULL); objects
 *	must be freed in their constructed state, as in the kernel
 *
 * Return: the cache, or NULL (out of memory; a bad size, alignment or flag,
 * reported; design A with no slot free in the set's clients, reported).
 */
struct ksync_objcache *ksync__objcache_create(const char *file, int line, const char *name, size_t size,
					      size_t align, unsigned flags, void (*ctor)(void *obj));
#define ksync_objcache_create(...) ksync__objcache_create(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_objcache_create_config() - ksync_objcache_create() with @cfg (NULL: defaults). */
struct ksync_objcache *ksync__objcache_create_config(const char *file, int line, const char *name, size_t size,
						     size_t align, unsigned flags, void (*ctor)(void *obj),
						     const struct ksync_objcache_config *cfg);
#define ksync_objcache_create_config(...) ksync__objcache_create_config(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_alloc() - an object, unaccounted (charged to no group) (kmem_cache_alloc()).
 * Return: the object (constructed) or NULL (out of memory; a destroyed cache, reported).
 */
void *ksync__objcache_alloc(const char *file, int line, struct ksync_objcache *cache);
#define ksync_objcache_alloc(...) ksync__objcache_alloc(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_alloc_group() - an object charged to @group.
 * @cache: the cache (without %KSYNC_OBJCACHE_ACCOUNT: as ksync_objcache_alloc())
 * @group: a group of the cache's set kept in memory by the caller; NULL: unaccounted
 *
 * Design A: from @group's child cache (created now if it has none and
 * @group is online; the root cache if it is not, or creation fails).
 * Design B: charges the object's bytes to @group's charge handle through the
 * calling thread's stock; the object keeps a handle reference until freed.
 * Return: the object or NULL, as ksync_objcache_alloc().
 */
void *ksync__objcache_alloc_group(const char *file, int line, struct ksync_objcache *cache,
				  struct ksync_memgroup *group);
#define ksync_objcache_alloc_group(...) ksync__objcache_alloc_group(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_free() - give back @obj (kmem_cache_free()).
 * @cache: the cache @obj was allocated from (for design A, the root cache)
 * @obj: the object, or NULL (nothing happens)
 *
 * Uncharges what its allocation charged. Freeing the last object of a dead
 * child cache destroys the child (and drops its group reference). A double
 * free, an object of another cache or a pointer no cache gave out is
 * reported and ignored.
 */
void ksync__objcache_free(const char *file, int line, struct ksync_objcache *cache, void *obj);
#define ksync_objcache_free(...) ksync__objcache_free(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_destroy() - free @cache (kmem_cache_destroy()).
 * @cache: the cache, or NULL (0)
 *
 * Flushes every thread's magazines and stocks of it. Live objects in it or
 * in any child: reported, -EBUSY, and the cache stays (usable, leaked unless
 * destroyed again later), as the kernel leaks it. Otherwise the live
 * children are deactivated, destroy waits for them (grace periods of the
 * set's SRCU domain), unregisters the shrinker and, for the last A cache of
 * its set, the memory-group client: that needs the set to have no groups
 * left (as ksync_list_lru_destroy() does; -EBUSY, reported, nothing freed).
 * Must not be called inside a read section of the set's or the registry's
 * domain, nor from a shrinker callback. Return: 0, -EBUSY, or -EINVAL for a
 * cache already destroyed (reported).
 */
int ksync__objcache_destroy(const char *file, int line, struct ksync_objcache *cache);
#define ksync_objcache_destroy(...) ksync__objcache_destroy(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_shrink() - flush every thread's magazines of @cache (and of
 * its live children) and free every empty slab (kmem_cache_shrink()).
 * Return: the slabs freed.
 */
unsigned long ksync__objcache_shrink(const char *file, int line, struct ksync_objcache *cache);
#define ksync_objcache_shrink(...) ksync__objcache_shrink(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_drain_thread() - flush the calling thread's magazines (of
 * every cache) and its charge stock, as its exit does. Afterwards the
 * statistics of the groups it charged are exact.
 */
void ksync_objcache_drain_thread(void);

/**
 * ksync_objcache_set_stock_slots() - handles per thread stock, 1..%KSYNC_OBJCACHE_STOCK_MAX.
 *
 * Process-wide (the default is %KSYNC_OBJCACHE_STOCK_MAX); each thread's
 * stock follows it at its next charge. Return: the previous setting, or
 * -EINVAL (reported) for a count out of range.
 */
int ksync__objcache_set_stock_slots(const char *file, int line, int slots);
#define ksync_objcache_set_stock_slots(...) ksync__objcache_set_stock_slots(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_objcache_stock_slots() - the current setting of ksync_objcache_set_stock_slots(). */
int ksync_objcache_stock_slots(void);

/**
 * ksync_objcache_thread_stock() - the handles the calling thread's stock holds now.
 * @out: filled with up to @max handles (no reference taken; compare only)
 * Return: how many there are.
 */
int ksync_objcache_thread_stock(struct ksync_objcg **out, int max);

/**
 * struct ksync_objcache_stats - a cache's numbers, its children's included.
 * @object_size: the size asked at creation
 * @stride: bytes from one object to the next
 * @objects_per_slab: objects of a slab
 * @active_objects: objects allocated and not freed
 * @total_objects: objects the slabs hold (free or not)
 * @magazine_objects: free objects in threads' magazines
 * @slabs: slabs of the cache and its children
 * @empty_slabs: of them, without a live object
 * @slab_size: bytes of one slab of the cache (by object size, see ksync_objcache_create())
 * @slab_bytes: @slabs * @slab_size
 * @live_bytes: @active_objects * @object_size
 * @utilisation: @live_bytes / @slab_bytes (0 without slabs)
 * @children_alive: design A: child caches of live groups
 * @children_dead: design A: deactivated children not yet destroyed
 * @children_destroyed: design A: children that destroyed themselves so far
 */
struct ksync_objcache_stats {
	size_t object_size;
	size_t stride;
	unsigned long objects_per_slab;
	unsigned long active_objects;
	unsigned long total_objects;
	unsigned long magazine_objects;
	unsigned long slabs;
	unsigned long empty_slabs;
	unsigned long slab_size;
	unsigned long slab_bytes;
	unsigned long live_bytes;
	double utilisation;
	unsigned long children_alive;
	unsigned long children_dead;
	unsigned long children_destroyed;
};

/**
 * ksync_objcache_stats() - fill @out with @cache's numbers (a snapshot taken
 * under each cache's mutex in turn, consistent per cache).
 * Return: 0, or -EINVAL for a NULL argument (reported).
 */
int ksync__objcache_stats(const char *file, int line, struct ksync_objcache *cache, struct ksync_objcache_stats *out);
#define ksync_objcache_stats(...) ksync__objcache_stats(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_objcache_group_objects() - live objects of @cache accounted to @group now.
 * @group: kept in memory by the caller; NULL: the root (unaccounted objects,
 *	and for B the objects whose handle points at no group)
 *
 * Design A: the objects of the children owned by @group now (its live child,
 * its dead ones unless reparented away, those reparented to it). Design B:
 * the objects whose handle points at @group (a walk of the slabs).
 */
unsigned long ksync_objcache_group_objects(struct ksync_objcache *cache, struct ksync_memgroup *group);

/**
 * ksync_objcache_group_pinned() - does @cache hold a reference on @group?
 * Design A: true while a child of @cache (alive or dead) owns @group. Design
 * B: always false (objects reference handles, handles are reparented).
 */
bool ksync_objcache_group_pinned(struct ksync_objcache *cache, struct ksync_memgroup *group);

/**
 * ksync_objcache_obj_group() - the group @obj is accounted to now (NULL: the root).
 * Call inside a read section of the set's domain, with @obj live; the group
 * returned stays in memory until the section ends.
 */
struct ksync_memgroup *ksync_objcache_obj_group(struct ksync_objcache *cache, const void *obj);

/** ksync_objcache_name() - the name given at creation. */
const char *ksync_objcache_name(const struct ksync_objcache *cache);

/** ksync_objcache_size() - the object size given at creation. */
size_t ksync_objcache_size(const struct ksync_objcache *cache);

/**
 * ksync_objcache_slabinfo() - write every cache (children as
 * "name(id:group)", dead ones marked) to @out in /proc/slabinfo's format 2.1.
 * Return: the caches written, or -EINVAL for a NULL @out (reported).
 */
int ksync__objcache_slabinfo(const char *file, int line, FILE *out);
#define ksync_objcache_slabinfo(...) ksync__objcache_slabinfo(__FILE__, __LINE__, __VA_ARGS__)

KSYNC_EXTERN_C_END

#endif /* KSYNC_OBJCACHE_H */
