/* SPDX-License-Identifier: BSD-2-Clause */
/* fx_common.c - what the fixtures of bench_srcu share: callback accounting. */
#include "fixtures.h"

#include <ksync/atomic.h>

#include <sched.h>
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

void bench_wait_flag(int *flag)
{
	for (unsigned i = 0; !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++) {
		if (i < 1000)
			ksync_cpu_relax();
		else
			sched_yield();
	}
}
