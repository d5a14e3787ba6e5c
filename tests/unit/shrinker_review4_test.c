/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Review 4 of the shrinker registry's round 3 (polled record reuse, the
 * futex writers' lock), written against docs/shrinker.md and the kernel-doc
 * of <ksync/shrinker.h> and <ksync/shrinker_testing.h>. The promises tried:
 *
 *  - a released record is reused only after a grace period that began
 *    after its release: a group stamped while a grace period is already
 *    running (begun before a walker entered its section) is not satisfied
 *    by that grace period, so the walker, stopped on the record inside its
 *    section, never sees it reused;
 *  - the writers' lock wakes every sleeper: three writers asleep on it at
 *    once (forced: the holder waits in a hook under the lock until all
 *    three sleep) all get it; and four writers with a walker churning;
 *  - destroy with records waiting in the FIFO (a stamped group, and
 *    unstamped ones) frees them (ASan's leak check sees it) and succeeds.
 *
 * Schedules are forced by the yield hook, gp_pending and /proc states.
 */
#define _GNU_SOURCE
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ktest.h"
#include "shrinker_stubs.h"
#include "srcu_peek.h"
#include "wait.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)

/* ------------------------------------------------------------------------ */
/* Polled reuse: a group stamped while a grace period runs                   */

static _Thread_local int i_am_walker;
static int w_found, w_release, new_called;

static unsigned long count_mark(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	if (s->private_data == (void *)2)
		ADD(&new_called, 1);
	return 1;
}

static void stop_walker_hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_BEFORE_GET || !i_am_walker || LD(&w_found))
		return;
	ST(&w_found, 1);
	/* In the walk's read section, on the first record, no reference held. */
	KT_YIELD_UNTIL(LD(&w_release));
}

static void *walker_fn(void *arg)
{
	i_am_walker = 1;
	ksync_shrink_slab((struct ksync_shrinker_registry *)arg, 0, NULL, 0);
	return NULL;
}

struct old_reader {
	struct ksync_srcu_struct *dom;
	int idx, in, go;
};

static void *old_reader_fn(void *arg)
{
	struct old_reader *r = (struct old_reader *)arg;

	r->idx = ksync_srcu_read_lock(r->dom);
	ST(&r->in, 1);
	KT_YIELD_UNTIL(LD(&r->go));
	ksync_srcu_read_unlock(r->dom, r->idx);
	return NULL;
}

struct sync_job {
	struct ksync_srcu_struct *dom;
	int done;
};

static void *sync_fn(void *arg)
{
	struct sync_job *j = (struct sync_job *)arg;

	ksync_synchronize_srcu(j->dom);
	ST(&j->done, 1);
	return NULL;
}

KTEST(group_stamped_during_a_running_grace_period_waits_for_a_later_walker)
{
	enum { N = KSYNC_SHRINKER_REUSE_BATCH };
	static struct ksync_shrinker *others[N - 1];
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_srcu_struct *dom;
	struct old_reader r;
	struct sync_job sj;
	pthread_t rt, st, wt;

	KASSERT(reg);
	dom = ksync_shrinker_registry_srcu(reg);
	kt_watchdog("shrinker_review4 (group stamped during a grace period)", 120);
	/* First on the list: the walker stops on it. */
	struct ksync_shrinker *s1 = kt_stub_shrinker(reg, 0, "old", 0, count_mark, (void *)1);
	for (int i = 0; i < N - 1; i++)
		others[i] = kt_stub_shrinker(reg, 0, "o-%d", i, count_mark, (void *)3);

	/* G1: a grace period that waits for an old reader, past its flip. */
	memset(&r, 0, sizeof(r));
	r.dom = dom;
	KCHECK_EQ(pthread_create(&rt, NULL, old_reader_fn, &r), 0);
	KT_YIELD_UNTIL(LD(&r.in));
	sj.dom = dom;
	sj.done = 0;
	KCHECK_EQ(pthread_create(&st, NULL, sync_fn, &sj), 0);
	KT_POLL_UNTIL(ksync_srcu_gp_pending(dom) || LD(&sj.done));
	KCHECK(!LD(&sj.done));
	/* The index moved on: a section begun now is not one G1 waits for. */
	KT_POLL_UNTIL(KSYNC__SRCU_IDX_OF(kt_srcu_read_word(dom)) != r.idx);

	/* The walker enters after G1 began, and stops on s1's record. */
	ST(&w_found, 0);
	ST(&w_release, 0);
	ST(&new_called, 0);
	ksync_shrinker_set_yield_hook(stop_walker_hook, NULL);
	KCHECK_EQ(pthread_create(&wt, NULL, walker_fn, reg), 0);
	KT_YIELD_UNTIL(LD(&w_found));

	/* A whole group released while G1 runs: stamped with a cookie now. */
	KCHECK_EQ(ksync_shrinker_free(s1), 0);
	for (int i = 0; i < N - 1; i++)
		KCHECK_EQ(ksync_shrinker_free(others[i]), 0);

	/* G1 ends. It began before the releases: it must not free the group. */
	ST(&r.go, 1);
	pthread_join(rt, NULL);
	pthread_join(st, NULL);
	KCHECK(LD(&sj.done));
	kt_sleep_ms(2); /* room for a helper that would wrongly count G1 */

	struct ksync_shrinker *s2[8];
	for (int i = 0; i < 8; i++) {
		s2[i] = ksync_shrinker_alloc(reg, 0, "new-%d", i);
		KASSERT(s2[i]);
		KCHECK(s2[i] != s1); /* the walker still holds s1's record */
		s2[i]->count_objects = count_mark;
		s2[i]->scan_objects = kt_scan_none;
		s2[i]->private_data = (void *)2;
		KCHECK_EQ(ksync_shrinker_register(s2[i]), 0);
	}
	ST(&w_release, 1);
	pthread_join(wt, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK_EQ(LD(&new_called), 0);
	for (int i = 0; i < 8; i++)
		KCHECK_EQ(ksync_shrinker_free(s2[i]), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	kt_watchdog_cancel();
}

/* ------------------------------------------------------------------------ */
/* The writers' lock: every sleeper is woken                                */

#define NSLEEP 3
static struct ksync_shrinker_registry *lk_reg;
static int lk_held, lk_tid[NSLEEP], lk_done, lk_slept;
static _Thread_local int lk_holder;

static int all_asleep(void)
{
	for (int i = 0; i < NSLEEP; i++)
		if (!LD(&lk_tid[i]) || !kt_thread_sleeps(LD(&lk_tid[i])))
			return 0;
	return 1;
}

static void holder_hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_BEFORE_FREE || !lk_holder)
		return;
	lk_holder = 0;
	ST(&lk_held, 1);
	/* Under the writers' lock: keep it until every waiter sleeps on it. */
	KT_YIELD_UNTIL(all_asleep());
	ADD(&lk_slept, 1);
}

static void *lk_waiter(void *arg)
{
	int me = (int)(intptr_t)arg;

	KT_YIELD_UNTIL(LD(&lk_held));
	ST(&lk_tid[me], (int)gettid());
	struct ksync_shrinker *s = ksync_shrinker_alloc(lk_reg, 0, "w-%d", me); /* sleeps on the lock */
	KCHECK(s != NULL);
	if (s) {
		s->count_objects = kt_count_one;
		s->scan_objects = kt_scan_none;
		KCHECK_EQ(ksync_shrinker_register(s), 0);
		KCHECK_EQ(ksync_shrinker_free(s), 0);
	}
	ADD(&lk_done, 1);
	return NULL;
}

KTEST(three_writers_asleep_on_the_lock_are_all_woken)
{
	pthread_t w[NSLEEP];

	kt_watchdog("shrinker_review4 (a writer asleep on the lock never woken)", 60);
	ST(&lk_slept, 0);
	for (int round = 0; round < 3; round++) {
		lk_reg = ksync_shrinker_registry_create(1);
		KASSERT(lk_reg);
		ST(&lk_held, 0);
		ST(&lk_done, 0);
		for (int i = 0; i < NSLEEP; i++)
			ST(&lk_tid[i], 0);
		struct ksync_shrinker *s = kt_stub_shrinker(lk_reg, 0, "holder", 0, kt_count_one, NULL);
		ksync_shrinker_set_yield_hook(holder_hook, NULL);
		for (intptr_t i = 0; i < NSLEEP; i++)
			KCHECK_EQ(pthread_create(&w[i], NULL, lk_waiter, (void *)i), 0);
		lk_holder = 1;
		KCHECK_EQ(ksync_shrinker_free(s), 0); /* waits in holder_hook, under the lock */
		for (int i = 0; i < NSLEEP; i++)
			pthread_join(w[i], NULL);
		ksync_shrinker_set_yield_hook(NULL, NULL);
		KCHECK_EQ(LD(&lk_done), NSLEEP);
		KCHECK_EQ(LD(&lk_slept), round + 1); /* the schedule was forced */
		KCHECK_EQ(ksync_shrinker_registry_destroy(lk_reg), 0);
	}
	kt_watchdog_cancel();
}

#define NWRITERS 4
#define ROUNDS 3000
static int churn_stop;

static void *churn_writer(void *arg)
{
	struct ksync_shrinker_registry *reg = (struct ksync_shrinker_registry *)arg;
	struct ksync_shrinker *mine[4];

	for (int r = 0; r < ROUNDS; r++) {
		int n = 1 + r % 4;
		for (int i = 0; i < n; i++) {
			mine[i] = ksync_shrinker_alloc(reg, 0, "c-%d", r);
			KASSERT(mine[i]);
			mine[i]->count_objects = kt_count_one;
			mine[i]->scan_objects = kt_scan_none;
			KCHECK_EQ(ksync_shrinker_register(mine[i]), 0);
		}
		for (int i = n - 1; i >= 0; i--)
			KCHECK_EQ(ksync_shrinker_free(mine[i]), 0);
	}
	return NULL;
}

static void *churn_walker(void *arg)
{
	while (!LD(&churn_stop))
		ksync_shrink_slab((struct ksync_shrinker_registry *)arg, 0, NULL, 0);
	return NULL;
}

KTEST(contended_writers_with_a_walker_all_finish)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	pthread_t w[NWRITERS], wk;

	KASSERT(reg);
	kt_watchdog("shrinker_review4 (contended writers)", 150);
	ST(&churn_stop, 0);
	KCHECK_EQ(pthread_create(&wk, NULL, churn_walker, reg), 0);
	for (int i = 0; i < NWRITERS; i++)
		KCHECK_EQ(pthread_create(&w[i], NULL, churn_writer, reg), 0);
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(w[i], NULL);
	ST(&churn_stop, 1);
	pthread_join(wk, NULL);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	kt_watchdog_cancel();
}

/* ------------------------------------------------------------------------ */
/* Destroy with records in the FIFO                                          */

KTEST(destroy_with_records_waiting_in_the_fifo_frees_them)
{
	enum { N = KSYNC_SHRINKER_REUSE_BATCH + 37 };
	static struct ksync_shrinker *s[N];

	for (int stamped_done = 0; stamped_done < 2; stamped_done++) {
		struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
		struct kt_walked_once p = { reg, 0, 0 };
		pthread_t t;

		KASSERT(reg);
		KCHECK_EQ(pthread_create(&t, NULL, kt_walk_once_then_wait, &p), 0);
		KT_YIELD_UNTIL(LD(&p.walked)); /* the try now fails: records go to the FIFO */
		for (int i = 0; i < N; i++)
			s[i] = kt_stub_shrinker(reg, KSYNC_SHRINKER_NUMA_AWARE, "d-%d", i, kt_count_one, NULL);
		for (int i = 0; i < N; i++)
			KCHECK_EQ(ksync_shrinker_free(s[i]), 0);
		if (stamped_done)
			ksync_synchronize_srcu(ksync_shrinker_registry_srcu(reg));
		KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
		ST(&p.go, 1);
		pthread_join(t, NULL);
	}
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
