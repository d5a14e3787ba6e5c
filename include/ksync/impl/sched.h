/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/sched.h - how ksync blocks: every mutex it takes, every
 * condition variable it waits on and every wait of its own goes through
 * these wrappers, which hand the thread to the scheduler hook of
 * <ksync/fuzzing.h> when one is installed (the baton scheduler of fuzz/)
 * and call pthreads otherwise. Private.
 */
#ifndef KSYNC_IMPL_SCHED_H
#define KSYNC_IMPL_SCHED_H

#include <ksync/compiler.h>
#include <ksync/fuzzing.h>

#include <pthread.h>
#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

/*
 * ksync__sched_yield() - a blocking wait's condition does not hold: let the
 * scheduler run another thread. Returns false when no scheduler is installed
 * (the caller then blocks as usual).
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED bool ksync__sched_yield(const void *obj)
{
	void (*hook)(int, const void *) = __atomic_load_n(&ksync_sched_hook, __ATOMIC_ACQUIRE);

	if (ksync_likely(!hook))
		return false;
	hook(KSYNC_SCHED_BLOCKED, obj);
	return true;
}

/* ksync__sched_preempt() - a preemption point for an installed scheduler. */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__sched_preempt(const void *site)
{
	void (*hook)(int, const void *) = __atomic_load_n(&ksync_sched_hook, __ATOMIC_ACQUIRE);

	if (ksync_unlikely(hook != NULL))
		hook(KSYNC_SCHED_PREEMPT, site);
}

/*
 * ksync__mutex_lock() - pthread_mutex_lock(), or, under a scheduler, try the
 * lock and yield until it is free. Every mutex ksync takes goes through it.
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__mutex_lock(pthread_mutex_t *m)
{
	if (ksync_likely(!__atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED))) {
		pthread_mutex_lock(m);
		return;
	}
	ksync__sched_preempt(m); /* another thread may run first */
	while (pthread_mutex_trylock(m) != 0)
		(void)ksync__sched_yield(m);
}

/*
 * ksync__cond_wait() - pthread_cond_wait(), or, under a scheduler, drop the
 * mutex, yield once and take it again (a spurious wake-up, which every caller
 * already handles by checking its condition in a loop).
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (ksync_likely(!__atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED))) {
		pthread_cond_wait(c, m);
		return;
	}
	pthread_mutex_unlock(m);
	(void)ksync__sched_yield(c);
	ksync__mutex_lock(m);
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SCHED_H */
