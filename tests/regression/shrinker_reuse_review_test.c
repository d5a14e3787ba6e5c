/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Review of the registry's warm record reuse (records.c, "Warm reuse";
 * docs/shrinker.md): a released record is reused at once only when
 * ksync_try_synchronize_srcu() says no reader can hold it.
 *
 *  - walker_with_a_slot_outside_its_section: a walker thread that walked
 *    once (its slot of the registry's domain) waits outside any section
 *    while a shrinker is freed and another allocated; the release must not
 *    reuse the record (that thread may enter at any time with no barrier),
 *    and when the walker walks again it calls the new shrinker only, never
 *    the freed one under its old identity.
 *  - walker_enters_in_the_release_window: the yield point BEFORE_FREE (the
 *    release, under the mutex, unlinked, just before the try) starts a new
 *    walker thread, which registers its first slot and stops inside its
 *    section on another shrinker's record. The try must see it: no reuse.
 *  - debug_call_holding_a_caller_owned_record: a debug call found a
 *    caller-owned shrinker's record through @s->record and stops inside its
 *    section; the shrinker is unregistered and another registered: the new
 *    one must not get the record (nor be counted as the old one).
 *  - churn_with_new_walkers: walkers on new threads (each a new slot, the
 *    try's registration race) against allocate/register/free; every
 *    callback checks that its shrinker is alive (its free has not
 *    returned) and that the record it runs on belongs to it.
 *
 * Forced schedules by the yield hook and flags, never by sleeps.
 */
#define _GNU_SOURCE
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
#include <ksync/shrinker_testing.h>

#include <errno.h>

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "ktest.h"
#include "shrinker_stubs.h"
#include "wait.h"

/* Calls per identity (private_data: 1 the freed one, 2 the new one, 3 a bystander). */
static ksync_atomic_t calls[4];

static unsigned long count_tally(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	ksync_atomic_inc(&calls[(uintptr_t)s->private_data & 3]);
	return 1;
}

static struct ksync_shrinker *mk(struct ksync_shrinker_registry *reg, uintptr_t ident)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, 0, "r-%d", (int)ident);

	KASSERT(s);
	s->count_objects = count_tally;
	s->scan_objects = kt_scan_none;
	s->private_data = (void *)ident;
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	return s;
}

static void reset_calls(void)
{
	for (int i = 0; i < 4; i++)
		ksync_atomic_set(&calls[i], 0);
}

struct walker_ctl {
	struct ksync_shrinker_registry *reg;
	int walked, go, done;
};

static void *slot_walker(void *arg)
{
	struct walker_ctl *w = (struct walker_ctl *)arg;

	ksync_shrink_slab(w->reg, 0, NULL, 0); /* takes this thread's slot */
	__atomic_store_n(&w->walked, 1, __ATOMIC_SEQ_CST);
	KT_YIELD_UNTIL(__atomic_load_n(&w->go, __ATOMIC_SEQ_CST)); /* outside any section */
	ksync_shrink_slab(w->reg, 0, NULL, 0);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

KTEST(walker_with_a_slot_outside_its_section)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct walker_ctl w = { reg, 0, 0, 0 };
	pthread_t t;

	KASSERT(reg);
	reset_calls();
	struct ksync_shrinker *s1 = mk(reg, 1);
	KCHECK_EQ(pthread_create(&t, NULL, slot_walker, &w), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&w.walked, __ATOMIC_SEQ_CST));
	KCHECK_EQ(ksync_atomic_read(&calls[1]), 1);
	KCHECK_EQ(ksync_shrinker_free(s1), 0);
	struct ksync_shrinker *s2 = mk(reg, 2);
	KCHECK(s2 != s1); /* another thread may read: the record waits for its grace period */
	__atomic_store_n(&w.go, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	KCHECK_EQ(ksync_atomic_read(&calls[1]), 1); /* never again after its free */
	KCHECK_EQ(ksync_atomic_read(&calls[2]), 1);
	KCHECK_EQ(ksync_shrinker_free(s2), 0);
	/* The walker exited: idle again, reused at once. */
	struct ksync_shrinker *s3 = mk(reg, 3);
	KCHECK_EQ(ksync_shrinker_free(s3), 0);
	struct ksync_shrinker *s4 = mk(reg, 3);
	KCHECK(s4 == s3);
	KCHECK_EQ(ksync_shrinker_free(s4), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/* ------------------------------------------------------------------------ */

static int win_armed, win_parked, win_release;
static _Thread_local int is_win_walker;
static pthread_t win_thread;

static void *window_walker(void *arg)
{
	is_win_walker = 1;
	ksync_shrink_slab((struct ksync_shrinker_registry *)arg, 0, NULL, 0);
	return NULL;
}

static void window_hook(int point, void *arg)
{
	if (point == KSYNC_SHRINKER_YP_BEFORE_GET && is_win_walker &&
	    !__atomic_load_n(&win_parked, __ATOMIC_SEQ_CST)) {
		/* Inside the walk's section, on the bystander's record. */
		__atomic_store_n(&win_parked, 1, __ATOMIC_SEQ_CST);
		KT_YIELD_UNTIL(__atomic_load_n(&win_release, __ATOMIC_SEQ_CST));
		return;
	}
	if (point == KSYNC_SHRINKER_YP_BEFORE_FREE && !is_win_walker &&
	    __atomic_exchange_n(&win_armed, 0, __ATOMIC_SEQ_CST)) {
		/* Under reg->mutex, the record unlinked, before the try. */
		KCHECK_EQ(pthread_create(&win_thread, NULL, window_walker, arg), 0);
		KT_YIELD_UNTIL(__atomic_load_n(&win_parked, __ATOMIC_SEQ_CST));
	}
}

KTEST(walker_enters_in_the_release_window)
{
	for (int caller_walked = 0; caller_walked < 2; caller_walked++) {
		struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);

		KASSERT(reg);
		reset_calls();
		win_parked = win_release = 0;
		struct ksync_shrinker *by = mk(reg, 3);
		struct ksync_shrinker *s1 = mk(reg, 1);
		if (caller_walked)
			ksync_shrink_slab(reg, 0, NULL, 0); /* the caller's own slot */
		ksync_shrinker_set_yield_hook(window_hook, reg);
		__atomic_store_n(&win_armed, 1, __ATOMIC_SEQ_CST);
		KCHECK_EQ(ksync_shrinker_free(s1), 0);
		KCHECK_EQ(__atomic_load_n(&win_armed, __ATOMIC_SEQ_CST), 0); /* the window was reached */
		struct ksync_shrinker *s2 = mk(reg, 2);
		KCHECK(s2 != s1); /* a reader entered before the try's token: no reuse */
		__atomic_store_n(&win_release, 1, __ATOMIC_SEQ_CST);
		pthread_join(win_thread, NULL);
		ksync_shrinker_set_yield_hook(NULL, NULL);
		KCHECK_EQ(ksync_atomic_read(&calls[1]), caller_walked); /* only the caller's own walk */
		KCHECK_EQ(ksync_shrinker_free(s2), 0);
		KCHECK_EQ(ksync_shrinker_free(by), 0);
		KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	}
}

/* ------------------------------------------------------------------------ */

static int dbg_parked, dbg_release;
static _Thread_local int is_dbg;
static long dbg_ret;
static struct ksync_shrinker cs1, cs2;

static void dbg_hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_RECORD_FOUND || !is_dbg)
		return;
	/* Inside the debug call's section, holding the record @s->record named. */
	__atomic_store_n(&dbg_parked, 1, __ATOMIC_SEQ_CST);
	KT_YIELD_UNTIL(__atomic_load_n(&dbg_release, __ATOMIC_SEQ_CST));
}

static void *dbg_thread(void *arg)
{
	(void)arg;
	is_dbg = 1;
	dbg_ret = ksync_shrinker_debug_count(&cs1, NULL, 0);
	return NULL;
}

/*
 * A debug call on a caller-owned shrinker found its record through
 * @s->record and stops inside its section; the shrinker is unregistered
 * and another caller-owned one registered. The new one must not get that
 * record (the debug call would then count the new shrinker as the old).
 */
KTEST(debug_call_holding_a_caller_owned_record)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	pthread_t t;

	KASSERT(reg);
	reset_calls();
	cs1.count_objects = cs2.count_objects = count_tally;
	cs1.scan_objects = cs2.scan_objects = kt_scan_none;
	cs1.private_data = (void *)1;
	cs2.private_data = (void *)2;
	KCHECK_EQ(ksync_register_shrinker(reg, &cs1, "cs1"), 0);
	ksync_shrinker_set_yield_hook(dbg_hook, NULL);
	KCHECK_EQ(pthread_create(&t, NULL, dbg_thread, NULL), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&dbg_parked, __ATOMIC_SEQ_CST));
	struct ksync_shrinker_record *old = cs1.record;
	KCHECK_EQ(ksync_unregister_shrinker(&cs1), 0);
	KCHECK_EQ(ksync_register_shrinker(reg, &cs2, "cs2"), 0);
	KCHECK(cs2.record != old);
	__atomic_store_n(&dbg_release, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK_EQ(dbg_ret, -ENOENT); /* its shrinker was unregistered meanwhile */
	KCHECK_EQ(ksync_atomic_read(&calls[2]), 0);
	KCHECK_EQ(ksync_unregister_shrinker(&cs2), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/* ------------------------------------------------------------------------ */

#define CHURN_N 8
struct churn_ent {
	struct ksync_shrinker *s; /* the shrinker of this generation, while alive */
	unsigned long gen;	  /* odd: alive */
};
static struct churn_ent churn[CHURN_N];
static int churn_stop, churn_bad;
static unsigned long churn_walks;

static unsigned long churn_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	uintptr_t tag = (uintptr_t)s->private_data;
	struct churn_ent *e = &churn[tag % CHURN_N];

	/* Called only between register and the return of free, on its own record. */
	if (!(__atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) & 1) || e->gen / 2 != tag / CHURN_N ||
	    __atomic_load_n(&e->s, __ATOMIC_RELAXED) != s)
		__atomic_store_n(&churn_bad, 1, __ATOMIC_RELAXED);
	return 1;
}

static void *churn_walker(void *arg)
{
	ksync_shrink_slab((struct ksync_shrinker_registry *)arg, 0, NULL, 0);
	__atomic_add_fetch(&churn_walks, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *churn_spawner(void *arg)
{
	while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
		pthread_t t;
		if (pthread_create(&t, NULL, churn_walker, arg) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

KTEST(churn_with_new_walkers)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	unsigned long round, reused = 0;
	pthread_t sp;

	KASSERT(reg);
	KCHECK_EQ(pthread_create(&sp, NULL, churn_spawner, reg), 0);
	for (round = 0; round < 3000 || (round < 2000000 && __atomic_load_n(&churn_walks, __ATOMIC_RELAXED) < 200);
	     round++) {
		int k = (int)(round % CHURN_N);
		struct churn_ent *e = &churn[k];
		struct ksync_shrinker *old = e->s;

		if (old) {
			KCHECK_EQ(ksync_shrinker_free(old), 0);
			/* free returned: no call into it may start or be running */
			__atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE);
		}
		struct ksync_shrinker *s = ksync_shrinker_alloc(reg, 0, "c-%d", k);
		KASSERT(s);
		reused += s == old;
		unsigned long g = e->gen + 1; /* odd */
		s->count_objects = churn_count;
		s->scan_objects = kt_scan_none;
		s->private_data = (void *)(uintptr_t)((g / 2) * CHURN_N + (unsigned long)k);
		__atomic_store_n(&e->s, s, __ATOMIC_RELAXED);
		__atomic_store_n(&e->gen, g, __ATOMIC_RELEASE);
		KCHECK_EQ(ksync_shrinker_register(s), 0);
		if (round % 16 == 15)
			sched_yield(); /* lets the spawner's walkers in (no timing is asserted) */
	}
	__atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
	pthread_join(sp, NULL);
	KCHECK_EQ(churn_bad, 0);
	printf("# %lu rounds, %lu walks, %lu records reused at once\n", round, churn_walks, reused);
	for (int k = 0; k < CHURN_N; k++)
		if (churn[k].s)
			KCHECK_EQ(ksync_shrinker_free(churn[k].s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
