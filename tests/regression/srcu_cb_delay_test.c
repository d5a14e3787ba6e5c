/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_cb_delay_test.c - the helper thread's batching delay
 * (impl/srcu_helper.h): whoever waits for the helper must cut the delay
 * short, and a chain of callbacks that requeue themselves must not start
 * one. The delay is made one hour long here (both its first step and its
 * cap), so a waiter that fails to end it hangs, and the bounded polls below
 * turn that into a failure: srcu_barrier() arriving while the helper waits,
 * or while it still runs the batch before the wait (the hurry must not be
 * lost in between), a producer crossing half the callback limit, a polled
 * grace period, cleanup.
 */
#include "wait.h"

#define KSYNC_SRCU_CB_DELAY_MIN_US 3600000000UL /* one hour */
#define KSYNC_SRCU_CB_DELAY_MAX_US 3600000000UL

/* Set when the helper enters its batching delay. */
static int delay_entered;
#define KSYNC_TP_SRCU_CB_DELAY() __atomic_store_n(&delay_entered, 1, __ATOMIC_SEQ_CST)

#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"
#include "srcu_barrier.h"
#include "srcu_peek.h"

struct obj {
	struct ksync_rcu_head rh;
	int id;
};

static struct ksync_srcu_struct dd;
static int freed_b, ran_c;

static void free_b(struct ksync_rcu_head *h)
{
	__atomic_fetch_add(&freed_b, 1, __ATOMIC_SEQ_CST);
	free(ksync_container_of(h, struct obj, rh));
}

/*
 * A: holds its batch until a producer (the test's thread) has queued B
 * behind it, so a delay follows the batch (heads queued by the batch's own
 * callbacks would not start one).
 */
static int a_started;
static void hold_until_b(struct ksync_rcu_head *h)
{
	__atomic_store_n(&a_started, 1, __ATOMIC_SEQ_CST);
	KT_POLL_UNTIL_MS(kt_srcu_cb_count(&dd) >= 2, 5000); /* A itself, and B */
	free(ksync_container_of(h, struct obj, rh));
}

/* Queue A, then B from this thread while A's batch runs. */
static void queue_a_then_b(void (*a_func)(struct ksync_rcu_head *))
{
	__atomic_store_n(&a_started, 0, __ATOMIC_SEQ_CST);
	struct obj *a = (struct obj *)malloc(sizeof(*a));
	ksync_call_srcu(&dd, &a->rh, a_func);
	KT_POLL_UNTIL_MS(__atomic_load_n(&a_started, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&a_started, __ATOMIC_SEQ_CST), 1);
	struct obj *b = (struct obj *)malloc(sizeof(*b));
	ksync_call_srcu(&dd, &b->rh, free_b);
}

/* Return once the helper waits in the delay with B queued. */
static void helper_into_delay(void)
{
	__atomic_store_n(&delay_entered, 0, __ATOMIC_SEQ_CST);
	queue_a_then_b(hold_until_b);
	KT_POLL_UNTIL_MS(__atomic_load_n(&delay_entered, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&delay_entered, __ATOMIC_SEQ_CST), 1);
	KCHECK_EQ(kt_srcu_cb_count(&dd), 1UL); /* B, not run */
}

static struct kt_barrier bar;

/* srcu_barrier() while the helper waits: its marker must not wait an hour. */
KTEST(barrier_ends_a_batching_delay)
{
	ksync_init_srcu_struct(&dd);
	freed_b = 0;
	helper_into_delay();
	bar.done = 0;
	kt_barrier_start(&bar, &dd);
	KCHECK(kt_barrier_wait(&bar, 5000));
	if (!__atomic_load_n(&bar.done, __ATOMIC_SEQ_CST))
		return; /* the barrier hangs: leave it and the domain alone */
	KCHECK_EQ(__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST), 1); /* B ran before it returned */
	pthread_join(bar.t, NULL);
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * A barrier whose hurry comes while the helper still runs the batch before
 * its delay: the helper has not decided to wait yet, so there is nobody to
 * wake, and the hurry must stay marked until it decides. The callback A2
 * holds its batch until B is queued behind it and the barrier's hurry is
 * marked.
 */
static void hold_until_hurried(struct ksync_rcu_head *h)
{
	__atomic_store_n(&a_started, 1, __ATOMIC_SEQ_CST);
	KT_POLL_UNTIL_MS(kt_srcu_cb_count(&dd) >= 2, 5000);
	kt_barrier_start(&bar, &dd);
	pthread_detach(bar.t);
	KT_POLL_UNTIL_MS(kt_srcu_helper_sleep(&dd) == KSYNC__SRCU_HELPER_HURRIED, 5000);
	ran_c = kt_srcu_helper_sleep(&dd) == KSYNC__SRCU_HELPER_HURRIED;
	free(ksync_container_of(h, struct obj, rh));
}

KTEST(a_hurry_during_the_batch_skips_the_delay_after_it)
{
	ksync_init_srcu_struct(&dd);
	freed_b = 0;
	bar.done = 0;
	ran_c = 0;
	queue_a_then_b(hold_until_hurried);
	KCHECK(kt_barrier_wait(&bar, 5000));
	KCHECK_EQ(ran_c, 1); /* the schedule was the one meant */
	if (!__atomic_load_n(&bar.done, __ATOMIC_SEQ_CST))
		return;
	KCHECK_EQ(__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST), 1);
	ksync_cleanup_srcu_struct(&dd);
}

/*
 * A callback that queues the next one (a chain) is not a producer
 * outrunning the helper: no delay between its links.
 */
static int chain_left;
static void chain_link(struct ksync_rcu_head *h)
{
	if (__atomic_sub_fetch(&chain_left, 1, __ATOMIC_SEQ_CST) > 0)
		ksync_call_srcu(&dd, h, chain_link);
	else
		free(ksync_container_of(h, struct obj, rh));
}

KTEST(a_callback_chain_is_not_delayed)
{
	ksync_init_srcu_struct(&dd);
	__atomic_store_n(&chain_left, 5, __ATOMIC_SEQ_CST);
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	ksync_call_srcu(&dd, &o->rh, chain_link);
	KT_POLL_UNTIL_MS(__atomic_load_n(&chain_left, __ATOMIC_SEQ_CST) == 0, 5000);
	KCHECK_EQ(__atomic_load_n(&chain_left, __ATOMIC_SEQ_CST), 0);
	if (__atomic_load_n(&chain_left, __ATOMIC_SEQ_CST) != 0)
		return;
	ksync_srcu_barrier(&dd);
	ksync_cleanup_srcu_struct(&dd);
}

/* A producer crossing half the limit ends the delay; nothing else asks. */
KTEST(half_the_callback_limit_ends_a_batching_delay)
{
	ksync_init_srcu_struct(&dd);
	ksync_srcu_set_cb_limit(&dd, 16);
	freed_b = 0;
	helper_into_delay();
	for (int i = 0; i < 8; i++) { /* B + 8 = 9 = 16 / 2 + 1: not throttled */
		struct obj *o = (struct obj *)malloc(sizeof(*o));
		ksync_call_srcu(&dd, &o->rh, free_b);
	}
	KT_POLL_UNTIL_MS(__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST) == 9, 5000);
	KCHECK_EQ(__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST), 9);
	if (__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST) != 9)
		return;
	ksync_srcu_barrier(&dd);
	ksync_cleanup_srcu_struct(&dd);
}

/* A polled grace period is not held back by the delay. */
KTEST(start_poll_ends_a_batching_delay)
{
	ksync_init_srcu_struct(&dd);
	freed_b = 0;
	helper_into_delay();
	unsigned long cookie = ksync_start_poll_synchronize_srcu(&dd);
	KT_POLL_UNTIL_MS(ksync_poll_state_synchronize_srcu(&dd, cookie), 5000);
	KCHECK(ksync_poll_state_synchronize_srcu(&dd, cookie));
	if (!ksync_poll_state_synchronize_srcu(&dd, cookie))
		return;
	ksync_srcu_barrier(&dd);
	KCHECK_EQ(__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST), 1);
	ksync_cleanup_srcu_struct(&dd);
}

/* cleanup_srcu_struct() stops a helper that waits in its delay (after a barrier). */
KTEST(cleanup_stops_a_helper_in_its_delay)
{
	ksync_init_srcu_struct(&dd);
	freed_b = 0;
	helper_into_delay();
	ksync_srcu_barrier(&dd); /* ends the delay, runs B */
	/*
	 * The barrier returns once its marker ran, maybe before the helper
	 * ends that batch: A queued then would start a delay right away.
	 */
	KT_POLL_UNTIL_MS(kt_srcu_helper_sleep(&dd) == KSYNC__SRCU_HELPER_IDLE, 5000);
	helper_into_delay();     /* a second delay, from 0 again */
	ksync_srcu_barrier(&dd);
	KCHECK_EQ(__atomic_load_n(&freed_b, __ATOMIC_SEQ_CST), 2);
	ksync_cleanup_srcu_struct(&dd); /* joins the helper */
	KCHECK_EQ(kt_srcu_id(&dd), 0UL);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
