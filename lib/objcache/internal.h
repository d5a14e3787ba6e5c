/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/objcache/internal.h - the types and helpers the files of ksync::objcache
 * share. The theory of operation, with every barrier pair, opens objcache.c.
 *
 * Files, by job, and whom each calls (one way only):
 *   objcache.c  create, destroy, alloc, free, shrink, the shrinker, stats,
 *               slabinfo                      -> group, magazine, stock, slab
 *   group.c     design A: the children table, child creation, the memory-
 *               group client (online, offline: deactivation and reparenting,
 *               release)                             -> magazine, slab
 *   magazine.c  threads: their magazines (the fast path), remote drains,
 *               thread exit                            -> stock, slab
 *   stock.c     design B: the per-thread charge stock     -> (objcg only)
 *   slab.c      slabs and the depot: make, free, take and put objects under
 *               the cache's mutex; cache indices; a dead child's end
 *                                                      -> (none)
 * Functions one file exports to another carry the private prefix ksync__oc_.
 *
 * Lock order: the threads' mutex (magazine.c), then the global mutex
 * (ksync__oc_mutex: the caches, the clients, the groups' child lists), then
 * a root cache's mutex, then a child's; the index mutex is a leaf.
 */
#ifndef KSYNC_LIB_OBJCACHE_INTERNAL_H
#define KSYNC_LIB_OBJCACHE_INTERNAL_H

#include <ksync/impl/sched.h> /* the blocking wrappers; <ksync/fuzzing.h> */
#include <ksync/objcache.h>
#include <ksync/objcache_testing.h>

#include <ksync/list.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/rcupdate.h>
#include <ksync/shrinker.h>
#include <ksync/srcu.h>

#include "../common/report.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSYNC__OC_MAGIC 0x6f626a63u /* "objc" */
/* Cache indices (per-thread magazine slots) and group ids: two-level tables. */
#define KSYNC__OC_CHUNK 256
#define KSYNC__OC_CHUNKS 4096
#define KSYNC__OC_MAX_IDX (KSYNC__OC_CHUNK * KSYNC__OC_CHUNKS)

struct ksync__oc_slab {
	uint32_t magic;                 /* KSYNC__OC_MAGIC while the slab is mapped */
	uint32_t nfree;                 /* entries of free[] (under the cache's mutex) */
	struct ksync_objcache *cache;   /* the owner: a root or a child; set once */
	struct ksync_list_head link;    /* on the owner's partial, full or empty list */
	uint32_t inuse;                 /* objects out of the slab: live or in magazines */
	uint32_t owner;                 /* the id of the thread refilling its magazines from
					 * it (magazine.c; 0: none), under the mutex */
	struct ksync__oc_arena *arena;  /* the arena the slab was carved from (slab.c) */
	unsigned long *live;            /* bitmap: 1 = given to a user (atomic RMW) */
	uint16_t *free;                 /* stack of free object indices */
	struct ksync_objcg **objcg;     /* design B: the handle of each live object, a vector
					 * allocated with the slab, outside it (the kernel's
					 * obj_exts): the slab holds objects only */
	/* then the two arrays, then the objects at cache->obj_off */
};

/* A thread's magazine for one cache: only its owner touches it, except a
 * drainer that has taken it away with an exchange (magazine.c). */
struct ksync__oc_mag {
	unsigned n;
	unsigned cap;
	void *obj[];
};

/* design B: the per-thread charge stock (stock.c): one table of entries,
 * each a slot (at most ksync_objcache_stock_slots() of them, the bits of
 * ->slots) or parked (at most KSYNC__OC_PARK). The keys sit apart from the
 * counters, in arrays the lookups compare whole: ->gtag and ->htag hold
 * the low 32 bits of each entry's group and handle pointers (one cache
 * line each), ->group and ->objcg the pointers themselves. */
#define KSYNC__OC_ENTRIES 16            /* >= KSYNC_OBJCACHE_STOCK_MAX + KSYNC__OC_PARK + 1; a mask fits */
#define KSYNC__OC_PARK 8
#define KSYNC__OC_HINTS 64              /* buckets of the charges' hints */
struct ksync__oc_stock_entry {
	long refs;                      /* handle references held: the entry's own one, and a
					 * reserve for objects, taken in batches, handed to
					 * allocated objects, given back by frees; every
					 * reference is real at all times */
	long bytes;                     /* charges not yet given to ksync_objcg_charge() */
	unsigned long used;             /* for eviction: the slot with the lowest goes */
	long objects;                   /* pending, as bytes; apart from it: one wide load of
					 * both would wait for the two narrow stores of the
					 * last free (a failed store forward) */
};

struct ksync__oc_stock {
	uint32_t gtag[KSYNC__OC_ENTRIES];            /* low bits of group[i]; 0 for a free entry */
	uint32_t htag[KSYNC__OC_ENTRIES];            /* low bits of objcg[i]; 0 for a free entry */
	struct ksync_memgroup *group[KSYNC__OC_ENTRIES]; /* the key (compared only; NULL: free) */
	struct ksync_objcg *objcg[KSYNC__OC_ENTRIES];    /* holds ent[i].refs references */
	struct ksync__oc_stock_entry ent[KSYNC__OC_ENTRIES];
	uint32_t slots;                 /* entries that are slots */
	uint32_t used;                  /* entries in use (group not NULL) */
	int nslots, nused;              /* how many slots, how many entries in use */
	int last;                       /* the entry last charged (a hint for frees) */
	uint8_t hint[KSYNC__OC_HINTS];  /* by a hash of the group: its entry last found (a hint) */
	int nr;                         /* the slots setting last seen */
	int nv;                         /* the least recently used slot, -1: not known */
	unsigned rnd;                   /* the evictions' random state */
	unsigned long tick, fills;      /* the eviction's clock, fills so far */
	unsigned long gen;              /* ksync_objcg_generation() at the last sweep */
};

/* design A: a memory-group client shared by every A cache of a set. */
struct ksync__oc_client {
	struct ksync_list_head link;    /* on ksync__oc_clients */
	struct ksync_memgroup_client client;
	struct ksync_memgroup_set *set;
	int slot;
	int users;                      /* A caches of the set */
};

/* design A: a group's state in the client's slot. */
struct ksync__oc_gstate {
	struct ksync_list_head children; /* caches owned by the group (under ksync__oc_mutex) */
	bool offline;                    /* its offline hook ran (under ksync__oc_mutex) */
	struct ksync_rcu_head rcu;
};

struct ksync_objcache {
	char name[64];
	size_t size, stride, align;
	unsigned flags;
	void (*ctor)(void *obj);
	unsigned objs_per_slab;
	size_t slab_size;               /* a power of two, 4 KiB to KSYNC_OBJCACHE_SLAB_SIZE, by object size */
	uint32_t recip;                 /* floor(2^32 / stride) + 1: offset -> index without a division */
	size_t obj_off;                 /* first object's offset in a slab */
	size_t live_off, free_off;
	bool accounted;
	enum ksync_objcache_design design;
	bool reparent;
	unsigned max_empty;
	unsigned mag_size;              /* 0: no magazines */
	int idx;                        /* index of the threads' magazine slots, -1: none */
	struct ksync_memgroup_set *set;
	struct ksync_srcu_struct *srcu; /* the set's domain, NULL without one */

	pthread_mutex_t lock;           /* the depot: the lists and counts below */
	struct ksync_list_head partial, full, empty;
	unsigned long nr_slabs, nr_empty, nr_partial, nr_full;
	bool finishing;                 /* a dead child's end has begun (under lock) */

	/* Written once, read by allocators: dead pairs with the magazine
	 * owners' seq_cst store of their slot (magazine.c, Dekker). */
	int dead;                       /* a deactivated child, or a destroyed root */
	int destroyed;                  /* ksync_objcache_destroy() succeeded */

	/* design A */
	struct ksync_objcache *root;    /* the root; itself for a root */
	struct ksync_memgroup *group;   /* a child: the group it holds a reference on (NULL: none) */
	struct ksync_memgroup *created_for; /* a child: compared only */
	int group_id;                   /* a child: ksync_memgroup_id(created_for) */
	struct ksync_list_head sibling; /* a child: on root->children (under the root's lock) */
	struct ksync_list_head glink;   /* a child: on its group's gstate (under ksync__oc_mutex) */
	struct ksync_list_head children; /* a root: every child not yet ended */
	struct ksync_objcache ***table; /* a root of design A: [id / CHUNK][id % CHUNK] -> live child (atomic loads) */
	struct ksync__oc_client *client; /* a root of design A */
	unsigned long children_alive, children_dead, children_destroyed; /* under the root's lock */
	struct ksync_list_head endlink; /* a child: on a thread exit's list of ends (local) */
	struct ksync_rcu_head rcu;

	struct ksync_shrinker *shrinker; /* a root */
	struct ksync_list_head all;      /* on ksync__oc_caches (roots) */
};

/* slab.c */
extern pthread_mutex_t ksync__oc_mutex;
extern struct ksync_list_head ksync__oc_caches;
extern struct ksync_list_head ksync__oc_clients;
int ksync__oc_idx_get(struct ksync_objcache *c);
void ksync__oc_idx_put(int idx);
struct ksync_objcache *ksync__oc_idx_cache(int idx);
void ksync__oc_layout(struct ksync_objcache *c);
/* Take up to @n objects out of the slabs (making a slab if needed) under the
 * cache's mutex, for thread @owner (0: any): from a slab no other thread
 * refills from when there is one (slab.c); returns how many (0: out of
 * memory). */
unsigned ksync__oc_take(struct ksync_objcache *c, void **out, unsigned n, uint32_t owner);
/* Thread @owner refills from none of @c's slabs any more (its exit). */
void ksync__oc_unclaim(struct ksync_objcache *c, uint32_t owner);
/* Put @n objects back under the mutex. Returns true when @c is a dead
 * child left without slabs: the caller calls ksync__oc_child_end() then,
 * holding no lock of the module. */
bool ksync__oc_put(struct ksync_objcache *c, void *const *objs, unsigned n);
/* Free the empty slabs (all, or those beyond max_empty); returns how many. */
unsigned long ksync__oc_free_empty(struct ksync_objcache *c, bool all, bool *end);
void ksync__oc_child_end(struct ksync_objcache *c);

/* The hot helpers, inline: an object's slab (slabs are aligned to their
 * cache's slab size, children share their root's), its index, back. A
 * pointer of another cache masked with @c's size stays inside its own 2 MiB
 * arena (slab.c), mapped: the magic found there tells. */
static inline struct ksync__oc_slab *ksync__oc_slab_of(const struct ksync_objcache *c, const void *obj)
{
	return (struct ksync__oc_slab *)((uintptr_t)obj & ~(uintptr_t)(c->slab_size - 1));
}

/* Exact for offsets and strides below 2^16 (their product fits 32 bits). */
static inline unsigned ksync__oc_index(const struct ksync_objcache *c, const struct ksync__oc_slab *s,
				       const void *obj)
{
	uintptr_t off = (uintptr_t)obj - (uintptr_t)s;

	if (off < c->obj_off)
		return ~0U;
	return (unsigned)(((uint64_t)(off - c->obj_off) * c->recip) >> 32);
}

static inline void *ksync__oc_obj(const struct ksync_objcache *c, struct ksync__oc_slab *s, unsigned i)
{
	return (char *)s + c->obj_off + (size_t)i * c->stride;
}

/* Set or clear an object's live bit; true when it changed. Relaxed: the bit
 * guards itself (one RMW decides who owns the transition); the object's
 * bytes are ordered by the user's hand-off. */
static inline bool ksync__oc_mark_live(struct ksync__oc_slab *s, unsigned i, bool live)
{
	unsigned long bit = 1UL << (i % 64), old;

	if (live) {
		old = __atomic_fetch_or(&s->live[i / 64], bit, __ATOMIC_RELAXED);
		return !(old & bit);
	}
	old = __atomic_fetch_and(&s->live[i / 64], ~bit, __ATOMIC_RELAXED);
	return (old & bit) != 0;
}
/* Live objects of @c (its slabs' bitmaps); adds its slabs, empty slabs,
 * object slots and objects on the slabs' free stacks to the counters given. */
unsigned long ksync__oc_count_live(struct ksync_objcache *c, unsigned long *slabs, unsigned long *empty,
				   unsigned long *total, unsigned long *stacked);

/* The yield points of <ksync/objcache_testing.h> (slab.c; nothing without seams). */
#if KSYNC_SEAMS
extern void (*ksync__oc_yield_hook)(struct ksync_objcache *, int, void *);
extern void *ksync__oc_yield_arg;
#endif
static KSYNC_ALWAYS_INLINE void ksync__oc_yield(struct ksync_objcache *c, int point)
{
#if KSYNC_SEAMS
	/* Y1: pairs with the release store of ksync_objcache_set_yield_hook() */
	void (*hook)(struct ksync_objcache *, int, void *) = __atomic_load_n(&ksync__oc_yield_hook, __ATOMIC_ACQUIRE);

	if (ksync_unlikely(hook))
		hook(c, point, __atomic_load_n(&ksync__oc_yield_arg, __ATOMIC_RELAXED));
#else
	(void)c;
	(void)point;
#endif
}

/* stock.c */
struct ksync_objcg *ksync__oc_stock_charge(struct ksync__oc_stock *st, struct ksync_memgroup *g, long bytes);
void ksync__oc_stock_uncharge(struct ksync__oc_stock *st, struct ksync_objcg *objcg, long bytes);
void ksync__oc_stock_drain(struct ksync__oc_stock *st);
/* The handles of @st's slots (@parked false) or parked entries (true): up to
 * @max written to @out (may be NULL); returns how many there are. */
int ksync__oc_stock_list(struct ksync__oc_stock *st, bool parked, struct ksync_objcg **out, int max);
/* The bucket of ->hint of group @g (stock.c). */
unsigned ksync__oc_stock_hint_of(const struct ksync_memgroup *g);
extern int ksync__oc_stock_slots;

/* magazine.c */
struct ksync__oc_stock *ksync__oc_thread_stock(void);
void *ksync__oc_mag_alloc(struct ksync_objcache *c);
void ksync__oc_mag_free(struct ksync_objcache *c, void *obj);
unsigned long ksync__oc_drain_cache(struct ksync_objcache *c, bool *end);
void ksync__oc_drain_thread(void);

/* group.c */
struct ksync_objcache *ksync__oc_child_get(struct ksync_objcache *root, struct ksync_memgroup *g);
int ksync__oc_client_attach(struct ksync_site at, struct ksync_objcache *root);
int ksync__oc_client_detach(struct ksync_site at, struct ksync_objcache *root);
void ksync__oc_deactivate(struct ksync_objcache *child);
void ksync__oc_deactivate_all(struct ksync_objcache *root);
bool ksync__oc_group_pinned(struct ksync_objcache *root, struct ksync_memgroup *g);
unsigned long ksync__oc_group_objects_a(struct ksync_objcache *root, struct ksync_memgroup *g);

#endif /* KSYNC_LIB_OBJCACHE_INTERNAL_H */
