/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_cb_in_caller_test.c - callbacks run by the callers of call_srcu
 * (ksync_srcu_set_cb_in_caller(), ksync__srcu_park() in impl/srcu_helper.h).
 * Each test forces the helper to park a batch: the batching delay is one
 * hour, a producer past half the callback limit (4 here) prompts the helper
 * out of it, a reader of this thread holds the batch's grace period until
 * another head is queued behind it (a batch is parked only while producers
 * keep queuing), and the seam SRCU_CB_PARK says when the batch is parked.
 * Then: the next call_srcu() of this thread runs it, before its own head,
 * in order, once; a barrier that arrives while it is parked runs it on the
 * barrier's own thread, and then the batch holding its marker too (parked
 * for it although nothing is queued behind); a barrier called from a
 * callback of another domain runs none (the helper does); a domain that
 * did not ask never parks; a callback run in a caller may queue more and a
 * barrier waits for them.
 * Every callback records its position, its thread and how often it ran, so
 * a lost, early, duplicated or reordered callback fails a check.
 */
#include "wait.h"

#define KSYNC_SRCU_CB_DELAY_MIN_US 3600000000UL /* one hour */
#define KSYNC_SRCU_CB_DELAY_MAX_US 3600000000UL

static int parked, delay_entered;
#define KSYNC_TP_SRCU_CB_PARK() __atomic_store_n(&parked, 1, __ATOMIC_SEQ_CST)
#define KSYNC_TP_SRCU_CB_DELAY() __atomic_store_n(&delay_entered, 1, __ATOMIC_SEQ_CST)

#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"
#include "srcu_barrier.h"
#include "srcu_peek.h"

#define NOBJ 16

struct obj {
	struct ksync_rcu_head rh;
	int id;
};

static struct ksync_srcu_struct dd;
static struct obj objs[NOBJ];
static int ran[NOBJ];		/* times each ran */
static int order[NOBJ], nran;	/* ids in the order they ran */
static pthread_t ran_on[NOBJ];
static int a_started;
static void (*d_func)(struct ksync_rcu_head *); /* D's callback (park_bcd()) */

static void record(struct ksync_rcu_head *h)
{
	struct obj *o = ksync_container_of(h, struct obj, rh);
	int k = __atomic_fetch_add(&nran, 1, __ATOMIC_SEQ_CST);

	order[k] = o->id;
	ran_on[o->id] = pthread_self();
	__atomic_fetch_add(&ran[o->id], 1, __ATOMIC_SEQ_CST);
}

/* A: runs on the helper and holds its batch until B is queued behind it. */
static void hold_until_b(struct ksync_rcu_head *h)
{
	__atomic_store_n(&a_started, 1, __ATOMIC_SEQ_CST);
	KT_POLL_UNTIL_MS(kt_srcu_cb_count(&dd) >= 2, 5000); /* A itself, and B */
	record(h);
}

static void queue(int id, void (*f)(struct ksync_rcu_head *))
{
	objs[id].id = id;
	ksync_call_srcu(&dd, &objs[id].rh, f);
}

static bool ran_in_order(int from, int to)
{
	for (int i = from; i <= to; i++)
		if (__atomic_load_n(&ran[i], __ATOMIC_SEQ_CST) != 1)
			return false;
	return true;
}

/*
 * Park B, C, D (ids 1-3) with E (4) queued behind them; A (0) has run on the
 * helper. @in_caller: the domain's setting. Returns whether it parked.
 */
static bool park_bcd(bool in_caller)
{
	ksync_init_srcu_struct(&dd);
	ksync_srcu_set_cb_limit(&dd, 4);
	ksync_srcu_set_cb_in_caller(&dd, in_caller);
	for (int i = 0; i < NOBJ; i++)
		ran[i] = 0;
	nran = 0;
	__atomic_store_n(&parked, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&delay_entered, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&a_started, 0, __ATOMIC_SEQ_CST);

	queue(0, hold_until_b);
	KT_POLL_UNTIL_MS(__atomic_load_n(&a_started, __ATOMIC_SEQ_CST), 5000);
	queue(1, record); /* B: behind A's batch, so the helper enters its delay */
	KT_POLL_UNTIL_MS(__atomic_load_n(&delay_entered, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&delay_entered, __ATOMIC_SEQ_CST), 1);
	KCHECK(ran_in_order(0, 0));

	int idx = ksync_srcu_read_lock(&dd); /* holds the next batch's grace period */
	queue(2, record);
	queue(3, d_func ? d_func : record); /* the third queued of limit 4: prompts the helper */
	KT_POLL_UNTIL_MS(kt_srcu_cb_stack_empty(&dd), 5000); /* it took B, C, D */
	KCHECK(kt_srcu_cb_stack_empty(&dd));
	__atomic_store_n(&delay_entered, 0, __ATOMIC_SEQ_CST);
	queue(4, record); /* E: a producer still queuing */
	ksync_srcu_read_unlock(&dd, idx);
	/* Parked (callers' mode) or held by the helper (default mode), then the delay. */
	KT_POLL_UNTIL_MS(__atomic_load_n(&delay_entered, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&delay_entered, __ATOMIC_SEQ_CST), 1);
	return __atomic_load_n(&parked, __ATOMIC_SEQ_CST) != 0;
}

/* The next call_srcu() of a producer runs the parked batch, in order, before its own head. */
KTEST(a_parked_batch_runs_in_the_next_call_srcu)
{
	KCHECK(park_bcd(true));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 1); /* A only: B-D wait for a caller */
	KCHECK_EQ(kt_srcu_cb_count(&dd), 4UL);
	queue(5, record); /* F: runs B, C, D here first */
	KCHECK(ran_in_order(1, 3));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 4);
	for (int i = 1; i <= 3; i++) {
		KCHECK_EQ(order[i], i);
		KCHECK(pthread_equal(ran_on[i], pthread_self()));
	}
	KCHECK_EQ(__atomic_load_n(&ran[4], __ATOMIC_SEQ_CST), 0); /* E and F: no grace period yet */
	KCHECK_EQ(__atomic_load_n(&ran[5], __ATOMIC_SEQ_CST), 0);
	ksync_srcu_barrier(&dd);
	KCHECK(ran_in_order(0, 5));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 6);
	for (int i = 0; i < 6; i++)
		KCHECK_EQ(order[i], i);
	KCHECK_EQ(kt_srcu_cb_count(&dd), 0UL);
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * A barrier while a batch is parked and no producer comes: the barrier's
 * caller runs it (B, C, D) on its own thread, then E and its marker, which
 * the helper parks for it although nothing is queued behind them. Before,
 * the barrier hurried the helper, which ran all four itself.
 */
static struct kt_barrier bar;

KTEST(a_barrier_runs_the_parked_batch_and_its_own_on_its_thread)
{
	KCHECK(park_bcd(true));
	bar.done = 0;
	kt_barrier_start(&bar, &dd);
	KCHECK(kt_barrier_wait(&bar, 5000));
	if (!__atomic_load_n(&bar.done, __ATOMIC_SEQ_CST))
		return; /* the barrier hangs: leave it and the domain alone */
	KCHECK(ran_in_order(0, 4));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 5);
	for (int i = 0; i < 5; i++)
		KCHECK_EQ(order[i], i);
	KCHECK(!pthread_equal(ran_on[0], bar.t)); /* A: on the helper, before the barrier */
	for (int i = 1; i <= 4; i++)
		KCHECK(pthread_equal(ran_on[i], bar.t)); /* (bar.t not joined yet: still its id) */
	pthread_join(bar.t, NULL);
	KCHECK_EQ(kt_srcu_cb_count(&dd), 0UL);
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * The same barrier called from a callback of another domain: it must not
 * run @dd's callbacks there (a callback never runs another's: the rule of
 * ksync_call_srcu() too), so it hurries the helper, which runs B-E.
 */
static struct ksync_srcu_struct other;
static struct ksync_rcu_head other_head;
static pthread_t other_thread;
static int other_done;

static void barrier_from_a_callback(struct ksync_rcu_head *h)
{
	(void)h;
	other_thread = pthread_self();
	ksync_srcu_barrier(&dd);
	__atomic_store_n(&other_done, 1, __ATOMIC_SEQ_CST);
}

KTEST(a_barrier_from_another_domains_callback_runs_none)
{
	KCHECK(park_bcd(true));
	ksync_init_srcu_struct(&other);
	__atomic_store_n(&other_done, 0, __ATOMIC_SEQ_CST);
	ksync_call_srcu(&other, &other_head, barrier_from_a_callback);
	KT_POLL_UNTIL_MS(__atomic_load_n(&other_done, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&other_done, __ATOMIC_SEQ_CST), 1);
	if (!__atomic_load_n(&other_done, __ATOMIC_SEQ_CST))
		return; /* the barrier hangs: leave both domains alone */
	KCHECK(ran_in_order(0, 4));
	for (int i = 0; i < 5; i++) {
		KCHECK_EQ(order[i], i);
		KCHECK(!pthread_equal(ran_on[i], other_thread));
		KCHECK(!pthread_equal(ran_on[i], pthread_self()));
	}
	ksync_srcu_barrier(&other);
	ksync_cleanup_srcu_struct(&other);
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * Without ksync_srcu_set_cb_in_caller() the same schedule parks nothing:
 * the helper holds B, C, D (E is queued behind them: a producer still
 * queuing; ksync__srcu_hold()) through its delay, and the barrier gets
 * them run on the helper, in order, before E.
 */
KTEST(a_domain_that_did_not_ask_never_parks)
{
	KCHECK(!park_bcd(false));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 1); /* A only: B-D held */
	KCHECK_EQ(kt_srcu_cb_count(&dd), 4UL);
	ksync_srcu_barrier(&dd);
	KCHECK(ran_in_order(0, 4));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 5);
	for (int i = 0; i < 5; i++) {
		KCHECK_EQ(order[i], i);
		KCHECK(!pthread_equal(ran_on[i], pthread_self()));
	}
	KCHECK_EQ(kt_srcu_cb_count(&dd), 0UL);
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * The default mode's producer throttled at the limit while the helper
 * holds B, C, D: its hurry ends the hold, and the helper runs B-D, then
 * E and F (the throttled head), in order. The producer returns once the
 * count is back under the limit: the held batch's count is settled at its
 * end, so B-D have run by then.
 */
KTEST(a_throttled_producer_ends_the_helpers_hold)
{
	KCHECK(!park_bcd(false));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 1);
	queue(5, record); /* B-F: 5 of limit 4, throttled until the helper has run some */
	KCHECK(ran_in_order(1, 3)); /* held B-D ran before F's call returned */
	queue(6, record); /* G: under the limit */
	ksync_srcu_barrier(&dd);
	KCHECK(ran_in_order(0, 6));
	for (int i = 0; i < 7; i++) {
		KCHECK_EQ(order[i], i);
		KCHECK(!pthread_equal(ran_on[i], pthread_self()));
	}
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * A callback run in a caller queues another (G, id 6): call_srcu() from it
 * must not run or wait for anything (it is a callback now), and the barrier
 * must wait for G too.
 */
static void requeue(struct ksync_rcu_head *h)
{
	record(h);
	queue(6, record);
}

KTEST(a_callback_run_in_a_caller_may_queue_more)
{
	d_func = requeue;
	KCHECK(park_bcd(true));
	d_func = NULL;
	queue(5, record); /* runs B, C, D here (D queues G), then queues F */
	KCHECK(ran_in_order(1, 3));
	KCHECK(pthread_equal(ran_on[3], pthread_self()));
	/* (F, the third queued of limit 4 once B-D have run, prompts the helper: G may run now.) */
	ksync_srcu_barrier(&dd);
	KCHECK(ran_in_order(0, 6));
	KCHECK_EQ(__atomic_load_n(&nran, __ATOMIC_SEQ_CST), 7);
	KCHECK_EQ(order[4], 4); /* E, then G (queued inside F's call, before F), then F */
	KCHECK_EQ(order[5], 6);
	KCHECK_EQ(order[6], 5);
	ksync_cleanup_srcu_struct(&dd);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
