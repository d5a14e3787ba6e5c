/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/common/wait.h - waiting without a lock shared with the waker: futex
 * words and one-shot completions. Private to lib/.
 */
#ifndef KSYNC_LIB_COMMON_WAIT_H
#define KSYNC_LIB_COMMON_WAIT_H

#include <ksync/atomic.h>
#include <ksync/impl/sched.h> /* ksync__sched_yield(); <ksync/fuzzing.h> */
#include <ksync/impl/futex.h> /* the one futex(2) wrapper, shared with SRCU */

#include <limits.h>

/*
 * Sleep while *@word holds @val (returns at once if it does not). May return
 * early (callers check their condition in a loop): under a scheduler
 * (<ksync/fuzzing.h>) it yields once instead of sleeping.
 */
static inline void ksync_futex_wait(ksync_atomic_t *word, int val)
{
	if (ksync__sched_yield(word))
		return;
	(void)ksync__futex_wait(&word->counter, val, NULL);
}

/* Wake every thread sleeping on @word. */
static inline void ksync_futex_wake_all(ksync_atomic_t *word)
{
	(void)ksync__futex_wake(&word->counter, INT_MAX);
}

/*
 * A completion: one waiter, any number of fire calls (the first counts).
 * A zeroed word is an open completion.
 */
enum ksync_completion_state {
	KSYNC_COMPLETION_OPEN = 0,
	KSYNC_COMPLETION_DONE = 1,
	KSYNC_COMPLETION_SLEEPER = 2, /* open, and the waiter sleeps on the futex */
};

static inline void ksync_completion_fire(ksync_atomic_t *done)
{
	/* C1: fully ordered; everything before the fire happens before the waiter returns. */
	if (ksync_atomic_xchg(done, KSYNC_COMPLETION_DONE) == KSYNC_COMPLETION_SLEEPER)
		ksync_futex_wake_all(done);
}

static inline void ksync_completion_wait(ksync_atomic_t *done)
{
	for (int spin = 0; spin < 200; spin++) {
		/* C2: acquire; pairs with C1. */
		if (ksync_atomic_read_acquire(done) == KSYNC_COMPLETION_DONE)
			return;
		ksync_cpu_relax();
	}
	for (;;) {
		int v = KSYNC_COMPLETION_OPEN;

		if (ksync_atomic_try_cmpxchg(done, &v, KSYNC_COMPLETION_SLEEPER) ||
		    v == KSYNC_COMPLETION_SLEEPER)
			ksync_futex_wait(done, KSYNC_COMPLETION_SLEEPER);
		/* C2: as above. */
		if (ksync_atomic_read_acquire(done) == KSYNC_COMPLETION_DONE)
			return;
	}
}

#endif /* KSYNC_LIB_COMMON_WAIT_H */
