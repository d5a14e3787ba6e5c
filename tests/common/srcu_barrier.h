/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_barrier.h - a ksync_srcu_barrier() in a thread of its own, for the
 * tests that check a barrier is not held up by the callback helper's
 * batching (srcu_cb_delay, srcu_cb_in_caller):
 *
 *   static struct kt_barrier bar;
 *   bar.done = 0;                   before anything can start it
 *   kt_barrier_start(&bar, ssp)     a thread calls ksync_srcu_barrier(ssp),
 *                                   then sets bar.done (bar.t: join or detach)
 *   kt_barrier_wait(&bar, ms)       whether it returned within about @ms
 *                                   (polls bar.done; no assertion)
 */
#ifndef KTEST_SRCU_BARRIER_H
#define KTEST_SRCU_BARRIER_H

#include <ksync/srcu.h>

#include <pthread.h>
#include <stdbool.h>

#include "wait.h"

struct kt_barrier {
	struct ksync_srcu_struct *ssp;
	int done;
	pthread_t t;
};

static inline void *kt_barrier_main(void *p)
{
	struct kt_barrier *b = (struct kt_barrier *)p;

	ksync_srcu_barrier(b->ssp);
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static inline void kt_barrier_start(struct kt_barrier *b, struct ksync_srcu_struct *ssp)
{
	b->ssp = ssp;
	pthread_create(&b->t, NULL, kt_barrier_main, b);
}

static inline bool kt_barrier_wait(struct kt_barrier *b, int ms)
{
	KT_POLL_UNTIL_MS(__atomic_load_n(&b->done, __ATOMIC_SEQ_CST), ms);
	return __atomic_load_n(&b->done, __ATOMIC_SEQ_CST);
}

#endif /* KTEST_SRCU_BARRIER_H */
