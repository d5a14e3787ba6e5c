/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/sched.h - the baton scheduler: real threads, one running at a time,
 * switching only at yield points, every switch decided by the input.
 *
 * Theory of operation. ksched_run() starts the scripts' threads and hands a
 * baton to one of them; a thread runs only while it holds the baton. It
 * passes the baton on at three kinds of points:
 *  - preemption points: ksched_point() between a script's operations, and
 *    the points ksync offers through <ksync/fuzzing.h> (before each mutex
 *    it takes) and the registry's yield seams (<ksync/shrinker_testing.h>);
 *    the input decides whether another thread runs here;
 *  - blocked waits: with ksync_sched_hook installed, every blocking wait of
 *    ksync yields instead of sleeping, and the baton must go to another
 *    thread (the waiter checks its condition again when it gets it back);
 *  - the end of a thread.
 * A thread that blocked is passed over while another thread can run, until
 * the next preemption point (where what it waits for may have come).
 * A decision reads one input byte, and only when more than one thread could
 * take the baton; once the bytes run out a preemption point keeps the
 * current thread (no more preemptions) and a blocked thread hands the baton
 * to the next thread in order. So libFuzzer explores schedules with few
 * preemptions first, and an input (scripts + schedule bytes) replays the
 * same trace every time: a crash file is its own replay.
 *
 * KSCHED_PCT reads the same bytes as PCT (probabilistic concurrency testing):
 * random distinct priorities and depth-1 priority change points, always
 * running the highest-priority thread that can run; a bug of depth d among
 * n threads and k steps is found with probability at least 1/(n k^(d-1)).
 *
 * Every thread blocked at once, for KSCHED_DEADLOCK_ROUNDS hand-offs in a
 * row with no preemption point reached and for 2 seconds, is reported as a
 * deadlock (abort). Threads whose scripts ended wait for the others before
 * they exit: their exit runs ksync code outside the baton (a TLS destructor
 * folds their SRCU slots under SRCU's locks), which beside the scheduled
 * threads made schedules depend on timing. Under PCT, when every thread
 * that could take the baton is blocked, they take it in order rather than
 * by priority, so each checks its wait again (by priority two could pass it
 * to each other forever).
 */
#ifndef KSYNC_FUZZ_SCHED_H
#define KSYNC_FUZZ_SCHED_H

#include <ksync/bug.h> /* ksync_warn_hook */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#define KSCHED_MAX_THREADS 4
#define KSCHED_DEADLOCK_ROUNDS 20000
#define KSCHED_PCT_STEPS 256 /* PCT's k: change points fall in the first k steps */

enum ksched_policy {
	KSCHED_BYTES, /* one byte per decision */
	KSCHED_PCT,   /* priorities and change points from the bytes */
	KSCHED_FREE,  /* no baton: real threads run freely (breadth; under TSan) */
};

/*
 * ksched_run() - run @body(tid, @arg) on @n threads (tid 0..n-1) under
 * @policy, decisions read from @bytes. Returns when every thread ended.
 * @depth: PCT's bug depth d (1..4); ignored by the other policies.
 */
void ksched_run(int n, void (*body)(int tid, void *arg), void *arg, const uint8_t *bytes,
		size_t nbytes, enum ksched_policy policy, int depth);

/*
 * ksched_policy_of() - the policy an input's mode byte picks: free running
 * for 1 value in 8 of (@mode >> 2) % 8, PCT for 2, bytes for 5; the
 * environment's KSYNC_FUZZ_POLICY=free|pct|bytes overrides it.
 * ksched_depth_of() - PCT's depth d (1-3) from the same byte.
 */
enum ksched_policy ksched_policy_of(unsigned int mode);

/* Print every hand-off to stderr (KSYNC_FUZZ_TRACE=1 sets it in the targets). */
extern bool ksched_trace;

static inline int ksched_depth_of(unsigned int mode)
{
	return 1 + (int)(mode >> 5) % 3;
}

/* ksched_point() - declared below; ksched_run_ops() - a script's operations, a preemption point after each. */
void ksched_point(void);

static inline void ksched_run_ops(int tid, int n, const uint8_t *op, const uint8_t *arg,
				  void (*fn)(int tid, unsigned int op, unsigned int arg))
{
	for (int i = 0; i < n; i++) {
		fn(tid, op[i], arg[i]);
		ksched_point();
	}
}

/*
 * struct ksched_setup - what a concurrent target's input says before its
 * scripts: byte 0 the threads (2-4), the policy and PCT's depth, byte 1 the
 * allocation to fail (0: none). ksched_setup_input() reads them and puts ksync
 * in the fuzzing mode (no helper thread: the scripts run its work), with
 * misuse reports quiet (results are checked instead); ksched_read_script()
 * reads one thread's script (a length, then (op, arg) pairs).
 */
struct ksched_setup {
	int nthreads, depth;
	enum ksched_policy policy;
	unsigned long fail;
	bool trace;
};

static inline struct ksched_setup ksched_setup_input(struct input *in)
{
	unsigned int mode = take(in), fail = take(in);
	struct ksched_setup s = { 2 + (int)(mode % 3), ksched_depth_of(mode), ksched_policy_of(mode),
				  fail % 64, getenv("KSYNC_FUZZ_TRACE") != NULL };

	ksync_fuzzing_enable(true);
	ksync_warn_hook = fuzz_quiet_reports;
	ksched_trace = s.trace;
	if (s.trace)
		fprintf(stderr, "threads %d policy %d fail %lu\n", s.nthreads, (int)s.policy, s.fail);
	return s;
}

static inline int ksched_read_script(struct input *in, uint8_t *op, uint8_t *arg, int max)
{
	int n = (int)(take(in) % (unsigned int)(max + 1));

	for (int i = 0; i < n; i++) {
		op[i] = (uint8_t)take(in);
		arg[i] = (uint8_t)take(in);
	}
	return n;
}

/* ksched_seam() - a test seam of ksync reached: traced (ksched_trace), then a preemption point. */
void ksched_seam(const char *what, int point);

/* ksched_point() - a preemption point (a no-op outside ksched_run()'s threads). */
void ksched_point(void);

/* ksched_decisions() - bytes read by decisions in the last ksched_run(). */
size_t ksched_decisions(void);


#endif /* KSYNC_FUZZ_SCHED_H */
