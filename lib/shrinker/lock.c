/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/lock.c - the slow paths of the writers' lock (reg->mutex, a
 * futex word; internal.h has its theory and the barrier pair M1/M2): the
 * contended lock and the wake-up. A file of its own, which calls nothing
 * of the registry's (see internal.h for the direction of calls).
 */
#define _GNU_SOURCE
#include "internal.h"

void ksync__shr_lock_slow(struct ksync_shrinker_registry *reg)
{
	int v;

	if (__atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED)) {
		ksync__sched_preempt(&reg->mutex); /* another thread may run first */
		for (;;) {
			v = 0;
			if (ksync_atomic_try_cmpxchg(&reg->mutex, &v, 1)) /* M1 */
				return;
			(void)ksync__sched_yield(&reg->mutex);
		}
	}
	/* A holder's critical section is short: spin a little before sleeping. */
	for (int spin = 0; spin < 100; spin++) {
		v = ksync_atomic_read(&reg->mutex);
		if (v == 0 && ksync_atomic_try_cmpxchg(&reg->mutex, &v, 1)) /* M1 */
			return;
		if (v == 2)
			break; /* others sleep already: join them */
		ksync_cpu_relax();
	}
	/* M1: the exchange that finds 0 takes the lock (as 2: others may sleep). */
	while (ksync_atomic_xchg(&reg->mutex, 2) != 0)
		ksync_futex_wait(&reg->mutex, 2);
}

void ksync__shr_unlock_wake(struct ksync_shrinker_registry *reg)
{
	(void)ksync__futex_wake(&reg->mutex.counter, 1);
}
