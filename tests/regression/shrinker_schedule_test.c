/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Regression tests of the shrinker registry with forced schedules.
 *
 * Each test drives the threads into the one interleaving that broke a
 * promise, through the registry's yield hook (<ksync/shrinker_testing.h>)
 * and conditions the registry itself makes true (a grace period waiting for
 * a reader, a thread inside a read section), never through sleeps or luck:
 *
 *  - debug_count_races_unregister_and_recycle: a debug call on a
 *    caller-owned shrinker that is unregistered, its record freed and
 *    recycled for another shrinker meanwhile, must answer -ENOENT, never
 *    the other shrinker's count (it used to read the record outside any
 *    read section);
 *  - concurrent_unregister_of_one_shrinker: the same race between two
 *    unregisters of one shrinker: the loser answers -ENOENT and leaves the
 *    shrinker that took over the record alone;
 *  - group_destroy_waits_for_walker_between_sections: a group walk that
 *    left its read section for a waiting writer must not find its group
 *    freed when it comes back (destroy used to free it under the walker);
 *  - mutual_unregister_from_callbacks: callbacks that unregister each other
 *    (two or three in a ring) must not hang: the thread that closes the
 *    cycle gets -EDEADLK and a report, the others complete;
 *  - debug_calls_during_register_churn: the same debug race, free-running,
 *    with a count of false reports (must be 0);
 *  - lazy_name_seen_whole_by_a_later_reader: a name kept as its format
 *    (records.c) is formatted by its first reader; a second reader that
 *    learns of it only through the name's own flag (the handshake is
 *    relaxed: no happens-before of its own) must read the finished name
 *    (N1/N2; ThreadSanitizer reports the race if either side is relaxed).
 *  - writer_asleep_on_the_lock_is_woken: the registry's writers' lock
 *    (reg->mutex, a futex word since issue 23's third round): a writer
 *    that found it held and went to sleep on the futex (its thread's state
 *    in /proc is 'S') must be woken by the holder's unlock. The holder is
 *    parked at the yield point BEFORE_FREE, inside its critical section,
 *    until then. With the unlock's wake-up removed the waiter sleeps
 *    forever and the watchdog fails the test.
 *
 * A watchdog turns a hang into a failure with a message (the waits for
 * another thread, KT_YIELD_UNTIL(), have no time bound of their own).
 */
#define _GNU_SOURCE
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktest.h"
#include "shrinker_stubs.h"
#include "wait.h"

/* ------------------------------------------------------------------------ */
/* Small tools                                                              */

static void set_flag(int *f)
{
	__atomic_store_n(f, 1, __ATOMIC_SEQ_CST);
}

static int get_flag(const int *f)
{
	return __atomic_load_n(f, __ATOMIC_SEQ_CST);
}

/* The role of the calling thread in the current test, for the yield hook. */
enum role { ROLE_NONE, ROLE_DEBUG, ROLE_WALKER, ROLE_DESTROYER };
static _Thread_local enum role my_role;

static unsigned long count_const(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	return (unsigned long)(uintptr_t)s->private_data;
}

/* ------------------------------------------------------------------------ */
/* Debug call vs unregister + record recycling                              */

struct debug_race {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker s1, s2;
	int found, mutator_done;
	long result;
};

static struct debug_race *dr;

static void debug_race_hook(int point, void *arg)
{
	struct ksync_srcu_struct *srcu = arg;

	if (point != KSYNC_SHRINKER_YP_RECORD_FOUND || my_role != ROLE_DEBUG || get_flag(&dr->found))
		return;
	set_flag(&dr->found);
	/*
	 * Let the mutator unregister s1, free its record and register s2 as far
	 * as the registry allows: when this thread is inside the registry's read
	 * section, the mutator's grace period must wait for it (wait until it
	 * does); when not, nothing stops the mutator (wait until it is done).
	 */
	if (ksync_srcu_read_lock_held(srcu))
		KT_YIELD_UNTIL(ksync_srcu_gp_pending(srcu));
	else
		KT_YIELD_UNTIL(get_flag(&dr->mutator_done));
}

static void *debug_caller(void *arg)
{
	(void)arg;
	my_role = ROLE_DEBUG;
	dr->result = ksync_shrinker_debug_count(&dr->s1, NULL, 0);
	return NULL;
}

/* Unregister s1, wait until its record is freed, and register s2 (which reuses it). */
static void recycle_s1_into_s2(void)
{
	KASSERT(ksync_unregister_shrinker(&dr->s1) == 0);
	KASSERT(ksync_synchronize_shrinkers(dr->reg) == 0);
	ksync_srcu_barrier(ksync_shrinker_registry_srcu(dr->reg));
	KASSERT(ksync_register_shrinker(dr->reg, &dr->s2, "s2") == 0);
}

/* Two caller-owned shrinkers whose counts name them (111, 222); s1 registered. */
static void debug_race_init(struct debug_race *r)
{
	*r = (struct debug_race){ .reg = ksync_shrinker_registry_create(1) };
	r->s1 = (struct ksync_shrinker){ .count_objects = count_const, .scan_objects = kt_scan_none,
					 .private_data = (void *)111 };
	r->s2 = (struct ksync_shrinker){ .count_objects = count_const, .scan_objects = kt_scan_none,
					 .private_data = (void *)222 };
	KCHECK_EQ(ksync_register_shrinker(r->reg, &r->s1, "s1"), 0);
	dr = r;
}

static void *debug_mutator(void *arg)
{
	(void)arg;
	recycle_s1_into_s2();
	set_flag(&dr->mutator_done);
	return NULL;
}

/*
 * Deferred work added through the debug interface while the shrinker is
 * unregistered. The add found the record (inside its read section), then
 * the unregister ran to its end and retired the record's global counters
 * (-> reg->retired): the add used to land on the unlinked record's counter
 * and return 0, so the work was in no counter of the ledger (found by
 * fuzz_registry_mt, seed bug-add-deferred-racing-unregister-lost). Now it
 * takes a reference first, as count and scan do: either the unregister
 * waits for it and retires the work with the rest, or it answers -ENOENT.
 */
static int add_found, unregistered;

static void add_race_hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_RECORD_FOUND || my_role != ROLE_DEBUG || get_flag(&add_found))
		return;
	set_flag(&add_found);
	KT_YIELD_UNTIL(get_flag(&unregistered)); /* the unregister ran to its end */
}

static void *add_deferred_caller(void *arg)
{
	my_role = ROLE_DEBUG;
	*(long *)arg = ksync_shrinker_add_deferred(&dr->s1, NULL, 0, 1000);
	return NULL;
}

KTEST(add_deferred_racing_unregister_is_not_lost)
{
	struct ksync_shrinker_deferred_total t;
	struct debug_race r;
	long ret = 1;
	pthread_t a;

	kt_watchdog("shrinker_schedule_test", 60);
	add_found = unregistered = 0;
	debug_race_init(&r);
	KCHECK_EQ(ksync_shrinker_add_deferred(&r.s1, NULL, 0, 7), 0);
	ksync_shrinker_set_yield_hook(add_race_hook, NULL);
	pthread_create(&a, NULL, add_deferred_caller, &ret);
	KT_YIELD_UNTIL(get_flag(&add_found));
	KCHECK_EQ(ksync_unregister_shrinker(&r.s1), 0);
	set_flag(&unregistered);
	pthread_join(a, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	/* The ledger holds every add that said 0: here the add must say -ENOENT. */
	ksync_shrinker_deferred_total(r.reg, &t);
	KCHECK_EQ(ret, -ENOENT);
	KCHECK_EQ(t.in_groups + t.in_shrinkers + t.orphaned + t.retired, 7 + (ret == 0 ? 1000 : 0));
	KCHECK_EQ(ksync_shrinker_registry_destroy(r.reg), 0);
	kt_watchdog_cancel();
}

KTEST(debug_count_races_unregister_and_recycle)
{
	struct debug_race r;
	pthread_t d, m;

	kt_watchdog("shrinker_schedule_test", 60);
	debug_race_init(&r);
	struct ksync_srcu_struct *srcu = ksync_shrinker_registry_srcu(r.reg);
	KCHECK_EQ(ksync_shrinker_debug_count(&r.s1, NULL, 0), 111);
	unsigned long w = ksync_warn_count;
	ksync_shrinker_set_yield_hook(debug_race_hook, srcu);
	pthread_create(&d, NULL, debug_caller, NULL);
	KT_YIELD_UNTIL(get_flag(&r.found));
	pthread_create(&m, NULL, debug_mutator, srcu);
	pthread_join(d, NULL);
	pthread_join(m, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	/* s1 was unregistered while the call ran: -ENOENT, never s2's 222. */
	KCHECK_EQ(r.result, -ENOENT);
	KCHECK_EQ(ksync_warn_count, w);
	KCHECK_EQ(ksync_shrinker_debug_count(&r.s1, NULL, 0), -ENOENT);
	KCHECK_EQ(ksync_shrinker_debug_count(&r.s2, NULL, 0), 222);
	KCHECK_EQ(ksync_unregister_shrinker(&r.s2), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(r.reg), 0);
	kt_watchdog_cancel();
}

/* ------------------------------------------------------------------------ */
/* Two threads unregister the same caller-owned shrinker                    */

static int unreg_found, unreg_first_done;
static long unreg_second_ret;

static void unreg_race_hook(int point, void *arg)
{
	struct ksync_srcu_struct *srcu = arg;

	if (point != KSYNC_SHRINKER_YP_RECORD_FOUND || my_role != ROLE_DEBUG ||
	    get_flag(&unreg_found))
		return;
	set_flag(&unreg_found);
	/* As in debug_race_hook(): let the first unregister, the free and a new registration run. */
	if (ksync_srcu_read_lock_held(srcu))
		KT_YIELD_UNTIL(ksync_srcu_gp_pending(srcu));
	else
		KT_YIELD_UNTIL(get_flag(&unreg_first_done));
}

static void *second_unregister(void *arg)
{
	my_role = ROLE_DEBUG;
	unreg_second_ret = ksync_unregister_shrinker(arg);
	return NULL;
}

static void *first_unregister_then_recycle(void *arg)
{
	(void)arg;
	recycle_s1_into_s2();
	set_flag(&unreg_first_done);
	return NULL;
}

/*
 * The second of two concurrent unregisters of one caller-owned shrinker
 * reads its record, the first completes, the record is freed and recycled
 * for another shrinker: the second must answer -ENOENT and leave the other
 * shrinker registered (it used to look the record up outside any section,
 * and then unregistered whatever shrinker the recycled record belonged to).
 */
KTEST(concurrent_unregister_of_one_shrinker)
{
	struct debug_race r;
	pthread_t t1, t2;

	kt_watchdog("shrinker_schedule_test", 60);
	debug_race_init(&r);
	struct ksync_srcu_struct *srcu = ksync_shrinker_registry_srcu(r.reg);
	ksync_shrinker_set_yield_hook(unreg_race_hook, srcu);
	pthread_create(&t2, NULL, second_unregister, &r.s1);
	KT_YIELD_UNTIL(get_flag(&unreg_found));
	pthread_create(&t1, NULL, first_unregister_then_recycle, NULL);
	pthread_join(t2, NULL);
	pthread_join(t1, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK_EQ(unreg_second_ret, -ENOENT);
	KCHECK_EQ(ksync_shrinker_debug_count(&r.s2, NULL, 0), 222); /* still registered */
	KCHECK_EQ(ksync_unregister_shrinker(&r.s2), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(r.reg), 0);
	kt_watchdog_cancel();
}

/* ------------------------------------------------------------------------ */
/* Group walk between two read sections vs group destroy                    */

struct group_race {
	struct ksync_shrinker_registry *reg;
	struct ksync_srcu_struct *srcu;
	struct ksync_memgroup *g;
	int in_count, parked, destroyer_waits_walkers, destroy_returned;
	int resumed_after_free; /* the walker came back to a group destroy had freed */
	int destroy_ret;
};

static struct group_race *gr;

static unsigned long count_then_hold(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	if (my_role == ROLE_WALKER && !get_flag(&gr->in_count)) {
		set_flag(&gr->in_count);
		/* Inside the walk's section: destroy's grace period waits for us. */
		KT_YIELD_UNTIL(ksync_srcu_gp_pending(gr->srcu));
	}
	return KSYNC_SHRINK_EMPTY;
}

static void group_race_hook(int point, void *arg)
{
	(void)arg;
	if (point == KSYNC_SHRINKER_YP_GROUP_WAIT_WALKERS && my_role == ROLE_DESTROYER) {
		set_flag(&gr->destroyer_waits_walkers);
		return;
	}
	if (point != KSYNC_SHRINKER_YP_SECTION_DROPPED || my_role != ROLE_WALKER ||
	    get_flag(&gr->parked))
		return;
	set_flag(&gr->parked);
	/*
	 * Between two sections. Let destroy go as far as it can: until it waits
	 * for this walker, or until it returns; then let its queued frees run.
	 */
	KT_YIELD_UNTIL(get_flag(&gr->destroyer_waits_walkers) || get_flag(&gr->destroy_returned));
	if (get_flag(&gr->destroy_returned)) {
		ksync_srcu_barrier(gr->srcu); /* the group's memory is freed now */
		set_flag(&gr->resumed_after_free);
	}
}

static void *group_walker(void *arg)
{
	(void)arg;
	my_role = ROLE_WALKER;
	ksync_shrink_slab(gr->reg, 0, gr->g, 0);
	return NULL;
}

static void *group_destroyer(void *arg)
{
	(void)arg;
	my_role = ROLE_DESTROYER;
	gr->destroy_ret = ksync_shrinker_group_destroy(gr->g);
	set_flag(&gr->destroy_returned);
	return NULL;
}

KTEST(group_destroy_waits_for_walker_between_sections)
{
	struct group_race r = { .reg = ksync_shrinker_registry_create(1) };
	pthread_t w, d;

	kt_watchdog("shrinker_schedule_test", 60);
	gr = &r;
	r.srcu = ksync_shrinker_registry_srcu(r.reg);
	r.g = ksync_shrinker_group_create(r.reg, NULL);
	struct ksync_shrinker *a = ksync_shrinker_alloc(r.reg, KSYNC_SHRINKER_MEMCG_AWARE, "a");
	struct ksync_shrinker *b = ksync_shrinker_alloc(r.reg, KSYNC_SHRINKER_MEMCG_AWARE, "b");
	a->count_objects = count_then_hold;
	a->scan_objects = kt_scan_none;
	b->count_objects = count_const;
	b->scan_objects = kt_scan_none;
	KCHECK_EQ(ksync_shrinker_register(a), 0);
	KCHECK_EQ(ksync_shrinker_register(b), 0);
	KCHECK_EQ(ksync_set_shrinker_bit(r.g, 0, a->id), 0);
	KCHECK_EQ(ksync_set_shrinker_bit(r.g, 0, b->id), 0);

	ksync_shrinker_set_yield_hook(group_race_hook, NULL);
	pthread_create(&w, NULL, group_walker, NULL);
	KT_YIELD_UNTIL(get_flag(&r.in_count));
	pthread_create(&d, NULL, group_destroyer, NULL);
	pthread_join(w, NULL);
	pthread_join(d, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);

	KCHECK(get_flag(&r.parked)); /* the schedule happened */
	KCHECK_EQ(get_flag(&r.resumed_after_free), 0);
	KCHECK_EQ(r.destroy_ret, 0);
	KCHECK_EQ(ksync_shrinker_free(a), 0);
	KCHECK_EQ(ksync_shrinker_free(b), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(r.reg), 0);
	kt_watchdog_cancel();
}

/* ------------------------------------------------------------------------ */
/* Callbacks that unregister each other                                     */

enum { RING_MAX = 3 };

struct ring {
	int n;
	struct ksync_shrinker s[RING_MAX];
	int inside[RING_MAX];
	int ret[RING_MAX];
};

static struct ring *rg;

/* Shrinker i's scan: wait until every shrinker of the ring is being called, then unregister i+1. */
static unsigned long scan_unregister_next(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	int i = (int)(s - rg->s);

	(void)sc;
	set_flag(&rg->inside[i]);
	for (int k = 0; k < rg->n; k++)
		KT_YIELD_UNTIL(get_flag(&rg->inside[k]));
	/*
	 * A report is made once per call site: each ring size unregisters from
	 * a line of its own, so that each test sees its report.
	 */
	if (rg->n == 2)
		rg->ret[i] = ksync_unregister_shrinker(&rg->s[(i + 1) % rg->n]);
	else
		rg->ret[i] = ksync_unregister_shrinker(&rg->s[(i + 1) % rg->n]);
	return 0;
}

static void *ring_caller(void *arg)
{
	struct ksync_shrinker *s = arg;

	KASSERT(ksync_shrinker_debug_scan(s, NULL, 0, 1) == 0);
	return NULL;
}

static void run_ring(int n)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ring r = { .n = n };
	pthread_t t[RING_MAX];
	int deadlk = 0, ok = 0;

	kt_watchdog("shrinker_schedule_test", 60);
	rg = &r;
	for (int i = 0; i < n; i++) {
		r.s[i] = (struct ksync_shrinker){ .count_objects = count_const,
						  .scan_objects = scan_unregister_next,
						  .private_data = (void *)1 };
		KCHECK_EQ(ksync_register_shrinker(reg, &r.s[i], "ring%d", i), 0);
	}
	unsigned long w = ksync_warn_count;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, ring_caller, &r.s[i]);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++) {
		deadlk += r.ret[i] == -EDEADLK;
		ok += r.ret[i] == 0;
	}
	/* The thread that closed the cycle backs out; the others complete. */
	KCHECK_EQ(deadlk, 1);
	KCHECK_EQ(ok, n - 1);
	KCHECK(ksync_warn_count > w);
	/* The one whose unregister was refused is still registered and works. */
	int left = 0;
	for (int i = 0; i < n; i++) {
		if (ksync_shrinker_debug_count(&r.s[i], NULL, 0) == 1) {
			left++;
			KCHECK_EQ(ksync_unregister_shrinker(&r.s[i]), 0);
		}
	}
	KCHECK_EQ(left, 1);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	kt_watchdog_cancel();
}

KTEST(mutual_unregister_from_callbacks)
{
	run_ring(2);
}

KTEST(unregister_ring_of_three_callbacks)
{
	run_ring(3);
}

/* ------------------------------------------------------------------------ */
/* Free-running: debug calls while the shrinker is unregistered and registered again */

struct churn {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker s;
	int stop;
	long calls, einval, other;
};

static void *churn_debug(void *arg)
{
	struct churn *c = arg;

	while (!get_flag(&c->stop)) {
		long r1 = ksync_shrinker_debug_count(&c->s, NULL, 0);
		long r2 = ksync_shrinker_debug_scan(&c->s, NULL, 0, 1);

		for (int k = 0; k < 2; k++) {
			long r = k ? r2 : r1;
			if (r == -EINVAL)
				c->einval++;
			else if (r != -ENOENT && r != (k ? 0 : 7))
				c->other++;
		}
		c->calls += 2;
	}
	return NULL;
}

static struct ksync_shrinker *lazy_named;
static ksync_atomic_t lazy_name_read; /* relaxed on purpose: the handshake carries no ordering */

static void *later_name_reader(void *arg)
{
	(void)arg;
	KT_YIELD_UNTIL(ksync_atomic_read(&lazy_name_read));
	KCHECK(strcmp(ksync_shrinker_name(lazy_named), "lazy-5") == 0);
	return NULL;
}

KTEST(lazy_name_seen_whole_by_a_later_reader)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	pthread_t th;

	ksync_atomic_set(&lazy_name_read, 0);
	lazy_named = ksync_shrinker_alloc(reg, 0, "lazy-%u", 5u);
	KASSERT(lazy_named != NULL);
	/* Started before the first read: only N1/N2 can order the name for it. */
	pthread_create(&th, NULL, later_name_reader, NULL);
	KCHECK(strcmp(ksync_shrinker_name(lazy_named), "lazy-5") == 0); /* formats it */
	ksync_atomic_set(&lazy_name_read, 1);
	pthread_join(th, NULL);
	KCHECK_EQ(ksync_shrinker_free(lazy_named), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(debug_calls_during_register_churn)
{
	struct churn c = { .reg = ksync_shrinker_registry_create(1) };
	struct ksync_shrinker other[4];
	pthread_t t;
	double end = ktest_now() + ktest_seconds(1.0);
	unsigned long w = ksync_warn_count;

	c.s = (struct ksync_shrinker){ .count_objects = count_const, .scan_objects = kt_scan_none,
				       .private_data = (void *)7 };
	pthread_create(&t, NULL, churn_debug, &c);
	long rounds = 0;
	while (ktest_now() < end || rounds < 1000) {
		KASSERT(ksync_register_shrinker(c.reg, &c.s, "churn") == 0);
		/* Other shrinkers take recycled records in between. */
		for (int i = 0; i < 4; i++) {
			other[i] = (struct ksync_shrinker){ .count_objects = count_const,
							    .scan_objects = kt_scan_none,
							    .private_data = (void *)99 };
			KASSERT(ksync_register_shrinker(c.reg, &other[i], "o") == 0);
		}
		KASSERT(ksync_unregister_shrinker(&c.s) == 0);
		for (int i = 0; i < 4; i++)
			KASSERT(ksync_unregister_shrinker(&other[i]) == 0);
		if (++rounds % 64 == 0)
			ksync_synchronize_shrinkers(c.reg); /* frees, so records recycle */
	}
	set_flag(&c.stop);
	pthread_join(t, NULL);
	printf("  %ld rounds, %ld debug calls\n", rounds, c.calls);
	KCHECK_EQ(c.einval, 0);
	KCHECK_EQ(c.other, 0);
	KCHECK_EQ(ksync_warn_count, w);
	KCHECK_EQ(ksync_shrinker_registry_destroy(c.reg), 0);
}

/* ------------------------------------------------------------------------ */
/* The writers' lock: a sleeping waiter is woken */

static struct ksync_shrinker_registry *lock_reg;
static int lock_held, lock_waiter_tid, lock_waiter_done;
static _Thread_local int is_lock_holder;

static void lock_hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_BEFORE_FREE || !is_lock_holder)
		return;
	is_lock_holder = 0;
	/* Under reg->mutex: let the waiter in, and hold the lock until it sleeps on it. */
	set_flag(&lock_held);
	KT_YIELD_UNTIL(get_flag(&lock_waiter_tid) && kt_thread_sleeps(get_flag(&lock_waiter_tid)));
}

static void *lock_waiter(void *arg)
{
	(void)arg;
	KT_YIELD_UNTIL(get_flag(&lock_held));
	__atomic_store_n(&lock_waiter_tid, (int)gettid(), __ATOMIC_SEQ_CST);
	struct ksync_shrinker *s = ksync_shrinker_alloc(lock_reg, 0, "waiter"); /* blocks on the lock */
	KCHECK(s != NULL);
	ksync_shrinker_free(s);
	set_flag(&lock_waiter_done);
	return NULL;
}

KTEST(writer_asleep_on_the_lock_is_woken)
{
	pthread_t w;

	kt_watchdog("shrinker_schedule_test (a writer asleep on the lock never woken)", 60);
	lock_reg = ksync_shrinker_registry_create(1);
	KASSERT(lock_reg);
	struct ksync_shrinker *s = kt_stub_shrinker(lock_reg, 0, "holder", 0, kt_count_one, NULL);
	ksync_shrinker_set_yield_hook(lock_hook, NULL);
	KCHECK_EQ(pthread_create(&w, NULL, lock_waiter, NULL), 0);
	is_lock_holder = 1;
	KCHECK_EQ(ksync_shrinker_free(s), 0); /* parks in lock_hook, under the lock */
	pthread_join(w, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK(get_flag(&lock_waiter_done));
	KCHECK_EQ(ksync_shrinker_registry_destroy(lock_reg), 0);
	kt_watchdog_cancel();
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
