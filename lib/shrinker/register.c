/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/register.c - both registration shapes, unregister, free.
 *
 * See registry.c for the lifetime of a record (prepare, register,
 * unregister) and its barrier pairs (PUB, R1/R2, C1/C2). This file also
 * holds the cycle check of unregisters called from callbacks.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */

/*
 * A memcg-aware shrinker's id, the kernel's shrinker_memcg_alloc(): the
 * lowest free id (ids.c); if it is new, every group's maps grow to hold it
 * (group_info.c), then the id table (ids.c), inside a read section (Q, ids.c).
 * Growth that fails gives the id back; grown maps stay grown (harmless).
 */
static int memcg_id_alloc_locked(struct ksync_shrinker_registry *reg)
{
	int id = ksync__shr_id_alloc_locked(reg), idx, ret;
	unsigned int new_nr;

	if (id < 0 || (unsigned int)id < reg->nr_max)
		return id;
	/* The fuzzers' plant IDS_GROW_ONE_SHORT grows for the ids below @id only. */
	new_nr = ksync_round_up((unsigned int)id + (KSYNC_PLANT(IDS_GROW_ONE_SHORT) ? 0 : 1),
				(unsigned int)KSYNC_BITS_PER_LONG);
	idx = ksync_srcu_read_lock(&reg->srcu);
	ret = ksync__shr_group_infos_grow_locked(reg, new_nr);
	if (!ret)
		ret = ksync__shr_id_table_grow_locked(reg, new_nr);
	ksync_srcu_read_unlock(&reg->srcu, idx);
	if (ret) {
		ksync__shr_id_unreserve_locked(reg, id);
		return ret;
	}
	return id;
}

/* Prepare and register                                                     */

static struct ksync_shrinker_record *record_prepare(struct ksync_shrinker_registry *reg,
						    struct ksync_shrinker *s, bool owned,
						    unsigned flags, const char *fmt, va_list ap)
{
	struct ksync_shrinker_record *rec;
	struct record_name name;

	/* Outside the mutex; only the record and the id need it. */
	if (fmt)
		ksync__shr_name_capture(&name, fmt, ap);
	reg_lock(reg);
	rec = ksync__shr_record_alloc_locked(reg);
	if (!rec) {
		reg_unlock(reg);
		return NULL;
	}
	rec->magic = RECORD_MAGIC;
	rec->reg = reg;
	rec->owned = owned;
	rec->flags = flags;
	rec->id = -1;
	if (owned)
		s = &rec->owned_s;
	rec->shrinker = s;
	if (fmt)
		ksync__shr_name_set(rec, &name);
	ksync_atomic_set(&rec->state, RECORD_PREPARED);
	if (flags & KSYNC_SHRINKER_MEMCG_AWARE) {
		int id = memcg_id_alloc_locked(reg);
		if (id < 0) {
			reg_unlock(reg);
			free(rec);
			return NULL;
		}
		rec->id = id;
		id_publish_locked(reg, id, rec);
	}
	/*
	 * Linked now, with refcount 0, in the same critical section as the id:
	 * walkers that meet it fail try_get and move on, as they do for an id
	 * slot (above), so register needs no critical section of its own (R1).
	 */
	ksync_list_add_tail_rcu(&rec->list, &reg->shrinkers);
	reg->nr_records_alive++;
	reg_unlock(reg);

	s->flags = flags;
	s->id = rec->id;
	/* PUB: release; the record's fields, then the registry, then the record. */
	ksync_smp_store_release(&s->reg, reg);
	ksync_smp_store_release(&s->record, rec);
	return rec;
}

struct ksync_shrinker *ksync__shrinker_alloc(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg, unsigned flags,
					    const char *fmt, ...)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_shrinker_record *rec;
	va_list ap;

	reg = ksync__shr_reg_or_default(reg);
	if (!reg)
		return NULL;
	if (MISUSE(at, flags & ~KSYNC_SHRINKER_USER_FLAGS, "ksync_shrinker_alloc: unknown flags"))
		return NULL;
	va_start(ap, fmt);
	rec = record_prepare(reg, NULL, true, flags, fmt, ap);
	va_end(ap);
	if (!rec)
		return NULL;
	rec->owned_s.seeks = KSYNC_DEFAULT_SEEKS;
	return &rec->owned_s;
}

static int do_register(struct ksync_site at, struct ksync_shrinker *s)
{
	struct ksync_shrinker_record *rec;
	int st = RECORD_PREPARED;

	if (MISUSE(at, !s || !s->record, "register: shrinker not allocated/prepared"))
		return -EINVAL;
	rec = record_of(s);
	if (MISUSE(at, !rec, "register: foreign shrinker (not prepared by this registry)"))
		return -EINVAL;
	if (MISUSE(at, !s->count_objects || !s->scan_objects,
		       "register: count_objects and scan_objects are required"))
		return -EINVAL;
	if (!ksync_atomic_try_cmpxchg(&rec->state, &st, RECORD_REGISTERED)) {
		MISUSE(at, 1, "register: shrinker already registered (double register)");
		return -EBUSY;
	}
	/*
	 * R1: release; the caller's fields and the record's before it; pairs
	 * with R2. The record is on the list and in the id table since
	 * prepare, so this store alone makes it callable: no mutex.
	 */
	ksync_atomic_set_release(&rec->refcount, 1);
	return 0;
}

int ksync__shrinker_register(KSYNC_SITE_ARGS, struct ksync_shrinker *s)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	return do_register(at, s);
}

/* The reports of the two calls that prepare a caller-owned shrinker. */
struct prepare_msgs {
	const char *null, *busy, *flags;
};

static const struct prepare_msgs prealloc_msgs = {
	"ksync_prealloc_shrinker: NULL shrinker",
	"ksync_prealloc_shrinker: shrinker already prepared or registered",
	"ksync_prealloc_shrinker: unknown flags",
};

static const struct prepare_msgs register_msgs = {
	"ksync_register_shrinker: NULL shrinker",
	"ksync_register_shrinker: shrinker already registered",
	"ksync_register_shrinker: unknown flags",
};

/* Check and prepare the caller-owned @s (prealloc, and the first half of register). */
static int prepare_owned(struct ksync_site at, const struct prepare_msgs *m,
			 struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			 const char *fmt, va_list ap)
{
	if (MISUSE(at, !s, "%s", m->null))
		return -EINVAL;
	if (MISUSE(at, s->record != NULL, "%s", m->busy))
		return -EBUSY;
	if (MISUSE(at, s->flags & ~KSYNC_SHRINKER_USER_FLAGS, "%s", m->flags))
		return -EINVAL;
	reg = ksync__shr_reg_or_default(reg);
	if (!reg)
		return -ENOMEM;
	return record_prepare(reg, s, false, s->flags, fmt, ap) ? 0 : -ENOMEM;
}

int ksync__prealloc_shrinker(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			    const char *fmt, ...)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = prepare_owned(at, &prealloc_msgs, reg, s, fmt, ap);
	va_end(ap);
	return ret;
}

int ksync__register_shrinker_prepared(KSYNC_SITE_ARGS, struct ksync_shrinker *s)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	return do_register(at, s);
}

int ksync__register_shrinker(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
			    const char *fmt, ...)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	va_list ap;
	int ret;

	if (s && !s->record &&
	    MISUSE(at, !s->count_objects || !s->scan_objects,
		   "ksync_register_shrinker: count_objects and scan_objects are required"))
		return -EINVAL;
	va_start(ap, fmt);
	ret = prepare_owned(at, &register_msgs, reg, s, fmt, ap);
	va_end(ap);
	if (ret)
		return ret;
	ret = do_register(at, s);
	if (ret)
		ksync__free_prealloced_shrinker(at.file, at.line, s);
	return ret;
}

/* ------------------------------------------------------------------------ */
/* Unregister from callbacks: the cycle check                               */

/*
 * A callback may unregister other shrinkers, and unregister waits until the
 * calls into its target have returned. If the callbacks of A and B run on two
 * threads and each unregisters the other, each waits for a call that waits
 * for it: the kernel hangs there. ksync refuses the wait that would close
 * such a cycle (of any length, across registries): every thread that waits
 * from inside a callback publishes, on one process-wide list under
 * waits_lock, the record it waits for and the records it is calling into
 * (its calls cannot change while it waits). Publishing and searching the
 * graph happen under that one lock, so of the threads whose waits form a
 * cycle the last to publish finds it, and backs out (-EDEADLK, reported);
 * the others then complete. A thread outside any callback holds no
 * reference a cycle could need, and skips all of this.
 *
 * The records live on the waiting threads' stacks; a thread does not exit
 * while it waits, and the fork handler empties the list in the child, where
 * those threads do not exist.
 */
struct unreg_wait {
	struct ksync_list_head link; /* on unreg_waits */
	const struct ksync_shrinker_record *waits_for;
	const struct ksync_shrinker_record *calling[CALL_DEPTH_MAX];
	int nr_calling;
	unsigned long visited; /* search generation that reached it */
};

static pthread_mutex_t waits_lock = PTHREAD_MUTEX_INITIALIZER;
static KSYNC_LIST_HEAD(unreg_waits);
static unsigned long waits_generation;
static pthread_once_t waits_atfork_once = PTHREAD_ONCE_INIT;

static void waits_atfork_prepare(void)
{
	ksync__mutex_lock(&waits_lock);
}

static void waits_atfork_parent(void)
{
	pthread_mutex_unlock(&waits_lock);
}

static void waits_atfork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	/* Only the forking thread exists here, and it was not waiting. */
	ksync_init_list_head(&unreg_waits);
	memcpy(&waits_lock, &fresh, sizeof(fresh));
}

static void waits_atfork_register(void)
{
	pthread_atfork(waits_atfork_prepare, waits_atfork_parent, waits_atfork_child);
}

static bool wait_is_calling(const struct unreg_wait *w, const struct ksync_shrinker_record *rec)
{
	for (int i = 0; i < w->nr_calling; i++)
		if (w->calling[i] == rec)
			return true;
	return false;
}

/* Under waits_lock: does waiting for @rec lead, through waiting threads, back to @self? */
static bool wait_reaches(const struct unreg_wait *self, const struct ksync_shrinker_record *rec,
			 unsigned long gen)
{
	struct unreg_wait *w;

	if (wait_is_calling(self, rec))
		return true;
	ksync_list_for_each_entry(w, &unreg_waits, link) {
		if (w == self || w->visited == gen || !wait_is_calling(w, rec))
			continue;
		w->visited = gen; /* each waiting thread is followed once: depth <= their number */
		if (wait_reaches(self, w->waits_for, gen))
			return true;
	}
	return false;
}

/* Publish that this thread, inside a callback, waits for @rec; false (nothing published) on a cycle. */
static bool unreg_wait_publish(struct unreg_wait *me, const struct ksync_shrinker_record *rec)
{
	bool cycle;

	pthread_once(&waits_atfork_once, waits_atfork_register);
	me->waits_for = rec;
	me->nr_calling = ksync_min(ksync__shrinker_depth, CALL_DEPTH_MAX);
	for (int i = 0; i < me->nr_calling; i++)
		me->calling[i] = ksync__shrinker_calling[i];
	me->visited = 0;
	ksync__mutex_lock(&waits_lock);
	cycle = wait_reaches(me, rec, ++waits_generation);
	if (!cycle)
		ksync_list_add(&me->link, &unreg_waits);
	pthread_mutex_unlock(&waits_lock);
	return !cycle;
}

static void unreg_wait_done(struct unreg_wait *me)
{
	ksync__mutex_lock(&waits_lock);
	ksync_list_del(&me->link);
	pthread_mutex_unlock(&waits_lock);
}

/* ------------------------------------------------------------------------ */
/* Unregister                                                               */

/* REGISTERED -> UNREGISTERING: one winner, which then owns the record until it releases it. */
static int unregister_claim(struct ksync_site at, struct ksync_shrinker_record *rec)
{
	int st = RECORD_REGISTERED;

	if (MISUSE(at, thread_is_calling(rec),
		       "unregister: called from the shrinker's own callback (would deadlock)"))
		return -EDEADLK;
	if (ksync_atomic_try_cmpxchg(&rec->state, &st, RECORD_UNREGISTERING))
		return 0;
	if (st == RECORD_PREPARED)
		return -ENOENT;
	if (MISUSE(at, st == RECORD_UNREGISTERED, "unregister: shrinker already unregistered"))
		return -ENOENT;
	MISUSE(at, 1, "unregister: shrinker is being unregistered by another thread");
	return -EBUSY;
}

/*
 * Wait until the calls into @rec have returned (a walker holds a reference:
 * rare). Out of line: its frame (the published wait) would otherwise cost
 * every unregister its set-up. Return: 0, or -EDEADLK (a cycle, backed out).
 */
static KSYNC_NOINLINE int unregister_wait(struct ksync_site at, struct ksync_shrinker_record *rec)
{
	if (in_callback()) {
		struct unreg_wait me;

		if (!unreg_wait_publish(&me, rec)) {
			/*
			 * Back out. A thread of the cycle is inside a callback
			 * of @rec, holding a reference, and cannot return
			 * before we do: the count is at least 1, so it has not
			 * reached zero (the completion has not fired) and
			 * taking the initial reference back is safe.
			 */
			ksync_atomic_inc(&rec->refcount);
			ksync_atomic_set(&rec->state, RECORD_REGISTERED);
			MISUSE(at, 1, "unregister: shrinker callbacks unregister each other in a cycle "
				      "(would deadlock); this one is refused");
			return -EDEADLK;
		}
		yield_point(KSYNC_SHRINKER_YP_UNREG_WAIT_CHECKED);
		ksync_completion_wait(&rec->done);
		unreg_wait_done(&me);
	} else {
		if (!KSYNC_PLANT(UNREG_NO_WAIT)) /* the fuzzers' plant (docs/fuzzing.md) */
			ksync_completion_wait(&rec->done);
	}
	return 0;
}

/*
 * UNREGISTERING -> UNREGISTERED, or back to REGISTERED with -EDEADLK (a
 * cycle). With @release (ksync_shrinker_free()), also what ksync__shr_record_release()
 * does, in the same critical section as the unlink.
 */
static int unregister_finish(struct ksync_site at, struct ksync_shrinker_record *rec, bool release)
{
	struct record_release r = { NULL, false };
	struct ksync_shrinker_registry *reg = rec->reg;
	/*
	 * Drop the initial reference. When it was the last one (no walker is
	 * calling into @rec: the common case), there is nothing to wait for
	 * and nobody else will touch the completion; the fully ordered
	 * decrement read the count every walker's put left (C1/C2 by the RMW
	 * chain: their calls returned before we go on). Else whoever drops
	 * the count to zero fires the completion (record_put()).
	 */
	bool last = ksync_atomic_dec_and_test(&rec->refcount);

	yield_point(KSYNC_SHRINKER_YP_UNREG_BEFORE_WAIT);
	/* Nothing to wait for when last; a wait that does not happen closes no cycle. */
	if (!last && unregister_wait(at, rec))
		return -EDEADLK;
	yield_point(KSYNC_SHRINKER_YP_UNREG_AFTER_WAIT);
	reg_lock(reg);
	ksync_list_del_rcu(&rec->list);
	/*
	 * Retire the global counters in the same critical section as the
	 * unlink: ksync_shrinker_deferred_total() (under the mutex) must find
	 * them either on the list or in reg->retired, never in neither.
	 */
	retire_deferred_locked(rec);
	ksync_atomic_set(&rec->state, RECORD_UNREGISTERED);
	if (release)
		r = ksync__shr_record_release_locked(rec); /* after this, reused or freed a grace period later */
	reg_unlock(reg);
	ksync__shr_records_queue(reg, r);
	return 0;
}

int ksync__shrinker_free(KSYNC_SITE_ARGS, struct ksync_shrinker *s)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_shrinker_record *rec;
	int ret;

	if (!s)
		return 0;
	rec = record_of(s);
	if (MISUSE(at, !rec || !rec->owned,
		       "ksync_shrinker_free: not a shrinker from ksync_shrinker_alloc()"))
		return -EINVAL;
	if (MISUSE(at, thread_is_calling(rec),
		       "ksync_shrinker_free: called from the shrinker's own callback (would deadlock)"))
		return -EDEADLK;
	if (ksync_atomic_read(&rec->state) != RECORD_PREPARED) {
		ret = unregister_claim(at, rec);
		if (!ret)
			ret = unregister_finish(at, rec, true);
		return ret;
	}
	ksync__shr_record_release(rec);
	return 0;
}

int ksync__unregister_shrinker(KSYNC_SITE_ARGS, struct ksync_shrinker *s)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_shrinker_registry *reg = s ? ksync_smp_load_acquire(&s->reg) : NULL; /* PUB */
	struct ksync_shrinker_record *rec;
	int ret, idx;

	if (!reg) {
		/* Not prepared here; a struct with a record but no registry claims another's. */
		if (MISUSE(at, s && KSYNC_READ_ONCE(s->record),
			       "ksync_unregister_shrinker: foreign shrinker (not prepared by this API)"))
			return -EINVAL;
		MISUSE(at, 1, "ksync_unregister_shrinker: shrinker not registered");
		return -ENOENT;
	}
	/*
	 * Find and claim the record inside a read section: a thread that
	 * unregisters @s at the same time frees the record (call_srcu) once it
	 * is done, so this one sees @s->record cleared, or the record's final
	 * state, never freed memory.
	 */
	idx = ksync_srcu_read_lock(&reg->srcu);
	rec = ksync_smp_load_acquire(&s->record); /* PUB */
	if (MISUSE(at, !rec, "ksync_unregister_shrinker: shrinker not registered"))
		ret = -ENOENT;
	else if (MISUSE(at, rec->magic != RECORD_MAGIC || rec->shrinker != s || rec->owned,
			    "ksync_unregister_shrinker: foreign shrinker (use ksync_shrinker_free() for allocated ones)"))
		ret = -EINVAL;
	else if (MISUSE(at, ksync_atomic_read(&rec->state) == RECORD_PREPARED,
			    "ksync_unregister_shrinker: shrinker prepared but not registered"))
		ret = -ENOENT;
	else {
		yield_point(KSYNC_SHRINKER_YP_RECORD_FOUND);
		ret = unregister_claim(at, rec);
	}
	ksync_srcu_read_unlock(&reg->srcu, idx);
	if (!ret)
		ret = unregister_finish(at, rec, false);
	if (ret)
		return ret;
	/*
	 * No walker will dereference @s again: give the caller its struct back.
	 * Debug calls look @s->record up inside a read section; the record is
	 * queued for freeing (call_srcu), or offered for warm reuse (records.c:
	 * the try's fully ordered cmpxchg follows this store), only after this
	 * store, so a debug call either sees NULL or a record that outlives its
	 * section under this identity.
	 */
	KSYNC_WRITE_ONCE(s->record, NULL);
	KSYNC_WRITE_ONCE(s->reg, NULL);
	s->id = -1;
	ksync__shr_record_release(rec);
	return 0;
}

void ksync__free_prealloced_shrinker(KSYNC_SITE_ARGS, struct ksync_shrinker *s)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_shrinker_record *rec;

	if (!s || !s->record)
		return;
	rec = record_of(s);
	if (MISUSE(at, !rec || rec->owned, "ksync_free_prealloced_shrinker: foreign shrinker"))
		return;
	if (MISUSE(at, ksync_atomic_read(&rec->state) != RECORD_PREPARED,
		       "ksync_free_prealloced_shrinker: shrinker is registered; unregister it"))
		return;
	KSYNC_WRITE_ONCE(s->record, NULL);
	KSYNC_WRITE_ONCE(s->reg, NULL);
	s->id = -1;
	ksync__shr_record_release(rec);
}
