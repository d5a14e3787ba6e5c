/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/fuzzing.h - running ksync inside a fuzzer or under a deterministic
 * scheduler. Three process-wide switches, all off by default:
 *
 * - The fuzzing mode (ksync_fuzzing_mode): no SRCU domain starts its helper
 *   thread, so no thread of ksync outlives a call (libFuzzer's documentation
 *   warns that such threads make one input's result depend on the inputs
 *   before it). Callbacks queued with ksync_call_srcu() wait until the caller
 *   drives them: ksync_srcu_barrier(), ksync_srcu_run_callbacks(),
 *   ksync_srcu_run_all_callbacks(), or a ksync_call_srcu() over the domain's
 *   limit; they run on the calling thread, after their grace period, in
 *   queueing order. ksync_start_poll_synchronize_srcu() runs its grace period
 *   at once (deferred to the next drive when the caller is inside a section).
 *   Defining FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (as clang's
 *   -fsanitize=fuzzer users conventionally do) in any translation unit that
 *   includes a ksync header turns it on at start-up; ksync_fuzzing_enable()
 *   turns it on or off at run time, while no domain has a helper running.
 *
 * - Allocation-failure injection (ksync_fail_nth_alloc()): the n-th memory
 *   allocation ksync makes from then on, in any thread, fails once. Every
 *   public function then returns the error docs/errors.md lists for "out of
 *   memory" and leaves everything as it was (or, where it has no error to
 *   return, falls back as documented).
 *
 * - The scheduler hook (ksync_sched_hook): when set, every blocking wait in
 *   ksync (its mutexes, condition variables, completions and grace-period
 *   waits) stops blocking and calls the hook instead, then checks again:
 *   a cooperative scheduler that runs one thread at a time (the baton
 *   scheduler of fuzz/) can then never be deadlocked by a thread asleep in
 *   the kernel. The hook is also called (KSYNC_SCHED_PREEMPT) before each
 *   mutex ksync takes, a point where another thread may run first; the
 *   registry's and list_lru's yield seams are separate hooks a scheduler
 *   may point at itself too. Without a hook each costs one load of a
 *   global and a predicted branch, on slow paths only.
 *
 * None of this is meant for production: the fuzzing mode leaves callbacks
 * queued until something drives them.
 *
 * This header is the users' part only; the wrappers ksync's own code calls
 * (allocations, mutexes, condition variables) are private: impl/switches.h
 * and impl/sched.h.
 */
#ifndef KSYNC_FUZZING_H
#define KSYNC_FUZZING_H

#include <ksync/compiler.h>
#include <ksync/impl/switches.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

/**
 * enum ksync_sched_point - why ksync calls the scheduler hook.
 * @KSYNC_SCHED_BLOCKED: a wait whose condition does not hold; the hook should
 *	run another thread (the caller checks the condition again on return)
 * @KSYNC_SCHED_PREEMPT: a point where another thread may run, nothing waited for
 */
enum ksync_sched_point {
	KSYNC_SCHED_BLOCKED = 1,
	KSYNC_SCHED_PREEMPT = 2,
};

/**
 * ksync_sched_hook - the scheduler's yield function, or NULL (the default).
 * @why: enum ksync_sched_point
 * @obj: what is waited for (a mutex, a word) or the preemption point's site
 *
 * Set it before the threads it schedules call ksync, clear it after they
 * ended. It must not call back into ksync.
 */
KSYNC_PROCESS_WIDE void (*ksync_sched_hook)(int why, const void *obj);

/**
 * ksync_fuzzing_enable() - turn the fuzzing mode on or off.
 * @on: true for on
 *
 * Call it while no SRCU domain has callbacks queued or a helper running
 * (before the first ksync_call_srcu(), or after ksync_srcu_barrier() of each
 * domain and ksync_cleanup_srcu_struct() of those with a helper): a helper
 * started before the mode was turned on keeps running until its domain is
 * cleaned up.
 */
static inline KSYNC_UNUSED void ksync_fuzzing_enable(bool on)
{
	/* A switch read by slow paths; no data is published through it. */
	__atomic_store_n(&ksync_fuzzing_mode, on ? 1 : 0, __ATOMIC_RELAXED);
}

/** ksync_fuzzing_enabled() - is the fuzzing mode on? */
static inline KSYNC_UNUSED bool ksync_fuzzing_enabled(void)
{
	return __atomic_load_n(&ksync_fuzzing_mode, __ATOMIC_RELAXED) != 0;
}

/**
 * ksync_fail_nth_alloc() - make the @n-th allocation ksync makes from now fail.
 * @n: 1 fails the next one; 0 disarms
 *
 * One allocation fails, then the injection disarms itself. Counts the
 * allocations of every thread (a fuzzer that wants a reproducible failure
 * drives ksync from one thread at a time, as the baton scheduler does).
 */
static inline KSYNC_UNUSED void ksync_fail_nth_alloc(unsigned long n)
{
	__atomic_store_n(&ksync__fault_fired, 0UL, __ATOMIC_RELAXED);
	__atomic_store_n(&ksync__fault_countdown, n, __ATOMIC_RELAXED);
}

/**
 * ksync_fail_nth_alloc_fired() - did the armed failure happen?
 *
 * Return: true once the allocation chosen by the last ksync_fail_nth_alloc()
 * has failed; false while it is still armed (the code run since made fewer
 * allocations) or when nothing was armed. A caller that fails the 1st, 2nd,
 * ... allocation of an operation in turn stops when this stays false.
 */
static inline KSYNC_UNUSED bool ksync_fail_nth_alloc_fired(void)
{
	return __atomic_load_n(&ksync__fault_fired, __ATOMIC_RELAXED) != 0;
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_FUZZING_H */
