/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/internal.h - the registry's private types and the helpers its
 * files share. The theory of operation, with every barrier pair, opens
 * registry.c; each file says which part it implements.
 *
 * Files, by job, and whom each calls besides seams.c, context.c and
 * lock.c (one way only: no file calls back into a file that calls it;
 * tests/hygiene checks it with nm):
 *   registry.c    registries (create, destroy, the default one), the group
 *                 wrappers of <ksync/shrinker.h>  -> ids, records, group_info
 *   seams.c       the yield hook (<ksync/shrinker_testing.h>)  -> (none)
 *   context.c     the shrinkers this thread is calling into  -> (none)
 *   lock.c        the writers' lock's slow paths (reg->mutex) -> (none)
 *   ids.c         shrinker ids, the id table                 -> (none)
 *   records.c     records: allocation, the recycling cache, batched frees,
 *                 names (captured at prepare, formatted on first read)
 *                 -> ids
 *   register.c    register (an id: ids, then group maps, then the id table,
 *                 as the kernel's shrinker_memcg_alloc()), unregister and its
 *                 cycle check, free  -> registry, ids, records, group_info
 *   group_info.c  the per-group maps: the registry as a client of memory
 *                 groups; ksync_set_shrinker_bit()           -> (none)
 *   walk.c        the scan budget, ksync_shrink_slab() (global and group walks)
 *                 -> registry, records, group_info
 *   debug.c       the debug interface and the nr_deferred ledger
 *                 -> registry, records
 *
 * Helpers one file exports to another carry the private prefix ksync__shr_
 * (as CK's _ck_ and liburcu's _urcu_): every global symbol of the library
 * is ksync_<public API> or ksync__<private>.
 */
#ifndef KSYNC_LIB_SHRINKER_INTERNAL_H
#define KSYNC_LIB_SHRINKER_INTERNAL_H

#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>

#include <ksync/atomic.h>
#include <ksync/list.h>
#include <ksync/memgroup.h>
#include <ksync/rcupdate.h>
#include <ksync/rculist.h>
#include <ksync/sized_map.h>
#include <ksync/srcu.h>

#include "../common/report.h"
#include "../common/wait.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#define RECORD_MAGIC 0x5348524b4e4f4445UL /* "SHRKNODE" */
#define NAME_ARGS 4 /* integer arguments of a name formatted lazily */

/* A shrinker's name as prepare captures it (records.c), outside the mutex. */
struct record_name {
	char text[48]; /* the name, or its format when @lazy */
	long args[NAME_ARGS];
	bool lazy;
};

/* enum record_state - the life of a shrinker's record. */
enum record_state {
	RECORD_PREPARED = 1, /* allocated (6.7 shape) or prealloc'ed (classic) */
	RECORD_REGISTERED,   /* on the list, callable */
	RECORD_UNREGISTERING, /* one thread won the unregister; calls drain */
	RECORD_UNREGISTERED, /* unlinked; waiting to be released */
};

/*
 * struct ksync_shrinker_record - the registry's private record of one shrinker.
 * The caller's struct ksync_shrinker is reached only through ->shrinker and
 * only while a reference is held.
 */
struct ksync_shrinker_record {
	/*
	 * Read-mostly: walkers read it, only writers (under the mutex) write it.
	 * Unlinking a neighbour writes its list pointers here, which walkers
	 * hold shared at most, never modified.
	 */
	struct ksync_list_head list; /* reg->shrinkers, RCU */
	struct ksync_shrinker *shrinker;
	struct ksync_shrinker_registry *reg;
	unsigned long magic;
	unsigned flags;
	int id;
	bool owned; /* allocated by ksync_shrinker_alloc(): owned_s is the shrinker */
	/* Under reg->mutex: the global counters went to reg->retired; none is added again. */
	bool deferred_retired;
	/*
	 * Read-mostly too: the shrinker of ksync_shrinker_alloc(). No alignment
	 * attributes (list walks form container_of() of the list head, which
	 * must not be an over-aligned type); the order alone keeps the written
	 * fields below at least a line away from the list pointers.
	 */
	struct ksync_shrinker owned_s;
	/*
	 * The name. A simple format (literal text and up to NAME_ARGS integer
	 * conversions) is kept as it is, with its arguments, and formatted on
	 * the first read (records.c: only the debug interface reads it);
	 * @name_lazy says which @name holds (N1/N2).
	 */
	char name[48];
	long name_args[NAME_ARGS];
	ksync_atomic_t name_lazy;
	/* Written by every walker that calls the shrinker, and by unregister. */
	ksync_atomic_t refcount;
	ksync_atomic_t done;  /* completion (lib/common/wait.h): the last reference is gone */
	ksync_atomic_t state; /* enum record_state */
	struct ksync_shrinker_record *free_next; /* reg->free_batch, or the cache */
	struct ksync_rcu_head rcu;
	ksync_atomic_long_t nr_deferred[]; /* per node, global walk */
};

/* The id table: id -> record, published through an RCU pointer, grown by copy. */
struct shrinker_id_table {
	unsigned int nr;
	struct ksync_rcu_head rcu;
	struct ksync_shrinker_record *KSYNC_RCU slot[];
};

/*
 * struct shrinker_node_maps - a group's maps on one node. Both grow together
 * under reg->mutex (summary first, G1) and are replaced by copy + publish.
 * @bits: per shrinker id, a bit ("may have objects here") and the group's
 *	nr_deferred counter of that id
 * @summary: per 64-id unit of @bits, a bit ("may have set bits"), so that a
 *	walk visits only the units that matter (see shrink_slab_group())
 */
struct shrinker_node_maps {
	struct ksync_sized_map *KSYNC_RCU bits;
	struct ksync_sized_map *KSYNC_RCU summary;
};

/*
 * struct shrinker_group_info - the registry's state in one memory group (its
 * memgroup client slot): per node a sized map with one bit per shrinker id
 * and a companion nr_deferred counter, and a summary map.
 */
struct shrinker_group_info {
	struct ksync_list_head list;  /* reg->infos, RCU */
	struct ksync_list_head dying; /* reg->dying_infos while offline waits; writers only */
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *group;
	int dead; /* set by the offline hook before its grace period (D1) */
	/*
	 * Group walks that left their read section for a waiting writer and have
	 * not yet checked ->dead in the next one (P1/P2 in walk.c).
	 */
	ksync_atomic_t parked;
	struct ksync_rcu_head rcu;
	/*
	 * Per node: @bits, one bit and a companion nr_deferred counter per
	 * shrinker id; @summary, one bit per 64-id unit of @bits that may have bits
	 * set (see shrink_slab_group()).
	 */
	struct shrinker_node_maps node[];
};

#define UNIT_BITS ((unsigned int)KSYNC_BITS_PER_LONG)

struct ksync_shrinker_registry {
	struct ksync_srcu_struct srcu; /* its reader line first, cache-line aligned */
	/*
	 * Read by every walk, written only when the maps grow: no field that
	 * register/unregister writes may share this line.
	 */
	struct shrinker_id_table *KSYNC_RCU ids KSYNC_CACHELINE_ALIGNED;
	int nr_nodes;
	unsigned int nr_max; /* bits of every group map; written under mutex, read with READ_ONCE */
	size_t record_size;
	struct ksync_memgroup_set *groups; /* the registry's memory groups */
	int group_slot;                    /* its client slot in them */
	/* RCU list heads: writers link at the tail; global and debug walks read. */
	struct ksync_list_head shrinkers KSYNC_CACHELINE_ALIGNED;
	struct ksync_list_head infos; /* group infos of online groups */
	/* Writers only: infos whose offline has not reparented their counters yet. */
	struct ksync_list_head dying_infos;
	/* Writers only (under the mutex: reg_lock(), below). */
	ksync_atomic_t mutex KSYNC_CACHELINE_ALIGNED;
	unsigned long *ids_used;
	unsigned int ids_cap;
	unsigned int ids_free_hint; /* no word of ids_used below it has a free bit */
	int nr_records_alive; /* prepared or registered shrinkers */
	ksync_atomic_long_t orphaned;
	ksync_atomic_long_t retired;
	struct ksync_shrinker_record *free_batch; /* released records not yet queued */
	int free_batch_len;
	/*
	 * Freed (after a grace period) records for reuse: a lock-free stack the
	 * SRCU callback pushes onto (it must never wait for the mutex, see
	 * records.c), taken whole under the mutex onto record_mine.
	 */
	void *record_cache;
	ksync_atomic_t record_cache_len; /* about how many both hold */
	struct ksync_shrinker_record *record_mine; /* under the mutex */
	/*
	 * Under the mutex: records released while no reader could hold them
	 * (ksync_try_synchronize_srcu() succeeded), reused first and last in,
	 * first out: still in cache. At most RECORD_WARM_MAX.
	 */
	struct ksync_shrinker_record *record_warm;
	int record_warm_len;
	/*
	 * Under the mutex: records released while a reader might hold them,
	 * oldest first, for reuse after a grace period (records.c, "Polled
	 * reuse"). The first ones form the groups of @polled_grp, each
	 * stamped with one cookie; the last @polled_unstamped have none yet.
	 * At most RECORD_POLLED_MAX in all.
	 */
	struct ksync_shrinker_record *record_polled, *record_polled_tail;
	int record_polled_len;
	int polled_unstamped;
	int polled_grp_head, polled_grp_len; /* a ring of POLLED_GROUPS */
	struct {
		unsigned long cookie; /* ksync_get_state_synchronize_srcu(), after their unlinks */
		int n;                /* records of the group not reused yet */
	} polled_grp[KSYNC_SHRINKER_REUSE_GROUPS];
	bool poll_done_valid;
	unsigned long poll_done; /* the newest cookie a poll saw done (poll_done_valid: one did) */
};

/* ------------------------------------------------------------------------ */
/* Yield hook (registry.c)                                                  */

extern void (*ksync__shrinker_yield_hook)(int, void *);
extern void *ksync__shrinker_yield_arg;

/* A yield point of <ksync/shrinker_testing.h> (nothing in a build without seams). */
static KSYNC_ALWAYS_INLINE void yield_point(int point)
{
#if KSYNC_SEAMS
	void (*hook)(int, void *) = KSYNC_READ_ONCE(ksync__shrinker_yield_hook);

	if (ksync_unlikely(hook != NULL)) {
		/* Y2: pairs with Y1 in ksync_shrinker_set_yield_hook(). */
		hook = ksync_smp_load_acquire(&ksync__shrinker_yield_hook);
		if (hook)
			hook(point, KSYNC_READ_ONCE(ksync__shrinker_yield_arg));
	}
#else
	(void)point;
#endif
}

/* ------------------------------------------------------------------------ */
/* The writers' lock (lock.c)                                               */

/*
 * reg->mutex is a futex word, not a pthread mutex: 0 free, 1 held, 2 held
 * and a thread may sleep on it. At idle a register + unregister takes it
 * twice, and glibc's lock and unlock cost about 55 instructions a pair
 * (type and elision checks, calls); here the pair is one cmpxchg and one
 * exchange, inline. Contended, the locker spins briefly, then marks the
 * word 2 and sleeps on the futex; the unlock that finds 2 wakes one
 * sleeper, which takes the lock as 2 again (it cannot know whether others
 * sleep), so no wake-up is lost. Not recursive, not robust, as the pthread
 * mutex it replaces (PTHREAD_MUTEX_DEFAULT). Under a scheduler of
 * <ksync/fuzzing.h> the lock is a preemption point and a busy lock yields,
 * as ksync__mutex_lock() does.
 *
 * M1/M2: the lock's fully ordered cmpxchg or exchange (acquire) reads the
 * value the previous holder's fully ordered exchange (release) wrote: the
 * critical sections are ordered one after the other.
 */
void ksync__shr_lock_slow(struct ksync_shrinker_registry *reg);
void ksync__shr_unlock_wake(struct ksync_shrinker_registry *reg);

static KSYNC_ALWAYS_INLINE void reg_lock(struct ksync_shrinker_registry *reg)
{
	int free_word = 0;

	/* M1 (fully ordered); a scheduler takes the slow path, which yields. */
	if (ksync_likely(!__atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED)) &&
	    ksync_likely(ksync_atomic_try_cmpxchg(&reg->mutex, &free_word, 1)))
		return;
	ksync__shr_lock_slow(reg);
}

static KSYNC_ALWAYS_INLINE void reg_unlock(struct ksync_shrinker_registry *reg)
{
	/* M2: fully ordered; the critical section before the word is free. */
	if (ksync_unlikely(ksync_atomic_xchg(&reg->mutex, 0) == 2))
		ksync__shr_unlock_wake(reg);
}

/* ------------------------------------------------------------------------ */
/* The shrinkers this thread is calling into (walk.c), for misuse checks     */

#define CALL_DEPTH_MAX 8
/*
 * Private to the library (hidden) and in the static TLS block (initial-exec):
 * every walk and every callback call touches them, and the default model of
 * position-independent code would make each access a call to __tls_get_addr.
 */
#define SHRINKER_TLS __attribute__((__visibility__("hidden"), __tls_model__("initial-exec")))
extern _Thread_local struct ksync_shrinker_record *ksync__shrinker_calling[CALL_DEPTH_MAX] SHRINKER_TLS;
extern _Thread_local int ksync__shrinker_depth SHRINKER_TLS;

static inline bool thread_is_calling(const struct ksync_shrinker_record *rec)
{
	for (int i = 0; i < ksync__shrinker_depth && i < CALL_DEPTH_MAX; i++)
		if (ksync__shrinker_calling[i] == rec)
			return true;
	return false;
}

/* Inside a shrinker callback? */
static inline bool in_callback(void)
{
	return ksync__shrinker_depth > 0;
}

/* ------------------------------------------------------------------------ */
/* References                                                               */

static KSYNC_ALWAYS_INLINE bool record_try_get(struct ksync_shrinker_record *rec)
{
	/* R2: fully ordered RMW; reads the count published by R1. */
	return ksync_atomic_inc_not_zero(&rec->refcount);
}

static KSYNC_ALWAYS_INLINE void record_put(struct ksync_shrinker_record *rec)
{
	if (ksync_atomic_dec_and_test(&rec->refcount))
		ksync_completion_fire(&rec->done);
}

/* ------------------------------------------------------------------------ */
/* Shared between files                                                     */

struct ksync_shrinker_registry *ksync__shr_reg_or_default(struct ksync_shrinker_registry *reg);

/* ids.c */
int ksync__shr_shrinker_ids_init(struct ksync_shrinker_registry *reg);
void ksync__shr_shrinker_ids_destroy(struct ksync_shrinker_registry *reg);
int ksync__shr_id_alloc_locked(struct ksync_shrinker_registry *reg);
void ksync__shr_id_unreserve_locked(struct ksync_shrinker_registry *reg, int id);
int ksync__shr_id_table_grow_locked(struct ksync_shrinker_registry *reg, unsigned int new_nr);
/* Store @rec at @id in the id table (under reg->mutex; hot: inline). */
static inline void id_publish_locked(struct ksync_shrinker_registry *reg, int id,
				     struct ksync_shrinker_record *rec)
{
	struct shrinker_id_table *t = (struct shrinker_id_table *)ksync_rcu_access_pointer(reg->ids);

	/* Publishes the record (refcount 0: walkers skip it) to id lookups. */
	ksync_rcu_assign_pointer(t->slot[id], rec);
}
/* Free @id: its table slot and its bit (under reg->mutex; hot: inline). */
static inline void id_free_locked(struct ksync_shrinker_registry *reg, int id)
{
	struct shrinker_id_table *t = (struct shrinker_id_table *)ksync_rcu_access_pointer(reg->ids);
	unsigned int w = (unsigned int)id / KSYNC_BITS_PER_LONG;

	KSYNC_RCU_INIT_POINTER(t->slot[id], NULL);
	reg->ids_used[w] &= ~(1UL << (id % KSYNC_BITS_PER_LONG));
	if (w < reg->ids_free_hint)
		reg->ids_free_hint = w; /* see ksync__shr_id_alloc_locked() */
}
static KSYNC_ALWAYS_INLINE struct ksync_shrinker_record *
id_lookup(struct ksync_shrinker_registry *reg, unsigned int id)
{
	struct shrinker_id_table *t = ksync_srcu_dereference(reg->ids, &reg->srcu);

	if (id >= t->nr)
		return NULL;
	return ksync_srcu_dereference(t->slot[id], &reg->srcu);
}

/* records.c */
struct ksync_shrinker_record *ksync__shr_record_alloc_locked(struct ksync_shrinker_registry *reg);
/* What a release leaves for after the unlock: a full batch to queue, a grace period to start. */
struct record_release {
	struct ksync_shrinker_record *batch;
	bool start_poll;
};
struct record_release ksync__shr_record_release_locked(struct ksync_shrinker_record *rec);
void ksync__shr_records_queue_slow(struct ksync_shrinker_registry *reg, struct record_release r);
/* Do what a release left for after the unlock (mutex not held; hot: the test inline). */
static inline void ksync__shr_records_queue(struct ksync_shrinker_registry *reg, struct record_release r)
{
	if (ksync_unlikely(r.batch || r.start_poll))
		ksync__shr_records_queue_slow(reg, r);
}
void ksync__shr_record_release(struct ksync_shrinker_record *rec);
void ksync__shr_records_flush_locked_batch(struct ksync_shrinker_registry *reg);
void ksync__shr_records_destroy(struct ksync_shrinker_registry *reg);
/*
 * Move @rec's global counters to reg->retired (under reg->mutex; hot:
 * inline). No walker holds @rec (its count is zero, or it was never
 * registered) and the debug interface adds only under the mutex: the
 * counters cannot change here, so a zero one needs no exchange.
 */
static inline void retire_deferred_locked(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;
	long retired = 0;

	for (int nid = 0; nid < reg->nr_nodes; nid++)
		if (ksync_atomic_long_read(&rec->nr_deferred[nid]))
			retired += ksync_atomic_long_xchg(&rec->nr_deferred[nid], 0);
	if (retired)
		ksync_atomic_long_add(retired, &reg->retired);
	rec->deferred_retired = true; /* the debug interface adds no more (debug.c) */
}
/*
 * The record of @s if @s is one of ours, else NULL (reported by the caller).
 * For calls on the caller's own @s that no other thread races with
 * (register, free of an allocated shrinker); the debug calls and
 * ksync_unregister_shrinker() look the record up inside a read section.
 */
static inline struct ksync_shrinker_record *record_of(const struct ksync_shrinker *s)
{
	struct ksync_shrinker_record *rec = s ? ksync_smp_load_acquire(&s->record) : NULL; /* PUB */

	if (!rec || rec->magic != RECORD_MAGIC || rec->shrinker != s)
		return NULL;
	return rec;
}
void ksync__shr_name_capture(struct record_name *n, const char *fmt, va_list ap);
void ksync__shr_name_set(struct ksync_shrinker_record *rec, const struct record_name *n);
const char *ksync__shr_name_get(struct ksync_shrinker_record *rec);

/* Call one of the shrinker's callbacks, recorded as a call into @rec (misuse checks). */
static KSYNC_ALWAYS_INLINE void call_enter(struct ksync_shrinker_record *rec)
{
	if (ksync__shrinker_depth < CALL_DEPTH_MAX)
		ksync__shrinker_calling[ksync__shrinker_depth] = rec;
	ksync__shrinker_depth++;
}

static KSYNC_ALWAYS_INLINE void call_exit(void)
{
	ksync__shrinker_depth--;
}

static KSYNC_ALWAYS_INLINE unsigned long shrinker_call_count(struct ksync_shrinker_record *rec,
							      struct ksync_shrink_control *sc)
{
	struct ksync_shrinker *s = rec->shrinker;
	unsigned long r;

	call_enter(rec);
	r = s->count_objects(s, sc);
	call_exit();
	return r;
}

static KSYNC_ALWAYS_INLINE unsigned long shrinker_call_scan(struct ksync_shrinker_record *rec,
							     struct ksync_shrink_control *sc)
{
	struct ksync_shrinker *s = rec->shrinker;
	unsigned long r;

	call_enter(rec);
	r = s->scan_objects(s, sc);
	call_exit();
	return r;
}

/* group_info.c */
extern const struct ksync_memgroup_client ksync__shrinker_group_client;

/* The registry's state in @g, or NULL if @g is not a group of a registry (hot: inline). */
static KSYNC_ALWAYS_INLINE struct shrinker_group_info *group_info(struct ksync_memgroup *g)
{
	return (struct shrinker_group_info *)ksync_memgroup_client_state(g, &ksync__shrinker_group_client);
}
int ksync__shr_group_infos_grow_locked(struct ksync_shrinker_registry *reg, unsigned int new_nr);
bool ksync__shr_group_resume_after_gap(struct shrinker_group_info *info, int *idx);

static KSYNC_ALWAYS_INLINE bool group_alive(const struct shrinker_group_info *info)
{
	return !KSYNC_READ_ONCE(info->dead); /* D1 */
}

#endif /* KSYNC_LIB_SHRINKER_INTERNAL_H */
