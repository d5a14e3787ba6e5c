/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_common.c - what the fixtures of bench_srcu share: callback accounting,
 * waiting, allocation that cannot fail, the empty operation and the
 * writer-preferring pthread_rwlock.
 */
#define _GNU_SOURCE 1
#include "fixtures.h"

#include <ksync/atomic.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

unsigned long bench_cb_invoked;
uint64_t bench_cb_latency_sum;

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_invoked(struct bench_payload *p)
{
	if (p->done) {
		__atomic_fetch_add(&bench_cb_latency_sum, bench_now_ns() - p->t_enq, __ATOMIC_RELAXED);
		__atomic_store_n(p->done, 1, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&bench_cb_invoked, 1, __ATOMIC_RELAXED);
}

void bench_backoff(unsigned i)
{
	if (i < 1000)
		ksync_cpu_relax();
	else
		sched_yield();
}

void bench_wait_flag(int *flag)
{
	for (unsigned i = 0; !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		bench_backoff(i);
}

void *bench_xmalloc(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	return p;
}

void *bench_node_new(size_t size, size_t payload_off)
{
	char *n = calloc(1, size);

	if (!n)
		abort();
	((struct bench_payload *)(n + payload_off))->v = 1;
	return n;
}

void *bench_cb_node_new(size_t size, size_t payload_off, uint64_t t_enq, int *done)
{
	char *n = bench_xmalloc(size);
	struct bench_payload *p = (struct bench_payload *)(n + payload_off);

	p->t_enq = t_enq;
	p->done = done;
	return n;
}

void bench_nothing(void)
{
}

void bench_rwlock_init_writer_pref(void *lock)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(lock, &a);
	pthread_rwlockattr_destroy(&a);
}
