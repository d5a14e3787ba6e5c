/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/sched.c - the baton scheduler (theory of operation: sched.h).
 *
 * One mutex and one condition variable guard the baton: S.cur names the
 * thread that may run; every other managed thread waits on S.cv until it is
 * named. The mutex hand-off also orders each thread's accesses before the
 * next thread's (so the threads need no other synchronisation to see each
 * other's writes, as on one CPU).
 */
#include "sched.h"

#include <ksync/fuzzing.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LIVE, BLOCKED, DONE };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n, cur, ndone;
	int state[KSCHED_MAX_THREADS];
	const uint8_t *bytes;
	size_t nbytes, used;
	enum ksched_policy policy;
	int prio[KSCHED_MAX_THREADS];
	unsigned long change_at[4]; /* PCT: the step at which change point i falls */
	int nchange;
	unsigned long steps, blocked_run;
	double blocked_since;
	void (*body)(int, void *);
	void *arg;
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static __thread int me = -1; /* this thread's tid; -1: not managed */
bool ksched_trace;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int next_byte(void)
{
	return S.used < S.nbytes ? S.bytes[S.used++] : -1;
}

/* Under S.mu: the thread that takes the baton; @self may keep it unless @must_leave. */
static int pick(int self, bool must_leave)
{
	int cand[KSCHED_MAX_THREADS], nc = 0;

	bool live = false;

	/* Threads that blocked since the last preemption point run only when no other can. */
	for (int t = 0; t < S.n; t++)
		live |= S.state[t] == LIVE && !(must_leave && t == self);
	for (int t = 0; t < S.n; t++)
		if (S.state[t] != DONE && !(must_leave && t == self) && (!live || S.state[t] == LIVE))
			cand[nc++] = t;
	if (nc == 0)
		return must_leave && self >= 0 && S.state[self] != DONE ? self : -1;
	if (nc == 1)
		return cand[0];
	if (S.policy == KSCHED_PCT && live) {
		/*
		 * Priorities choose among threads that can run. Among blocked
		 * ones only (below, in order), so that each checks its wait
		 * again: by priority, two high ones could pass the baton to
		 * each other forever while the low one that could go never
		 * gets it.
		 */
		int best = cand[0];

		for (int i = 1; i < nc; i++)
			if (S.prio[cand[i]] > S.prio[best])
				best = cand[i];
		return best;
	}
	int b = S.policy == KSCHED_PCT ? -1 : next_byte();
	if (b >= 0)
		return cand[b % nc];
	if (!must_leave && self >= 0)
		return self; /* out of bytes: no more preemptions */
	for (int i = 0; i < nc; i++) /* the next thread after @self, in order */
		if (cand[i] > self)
			return cand[i];
	return cand[0];
}

/* Under S.mu: give the baton to @next and wait until it comes back. */
static void hand_to(int next)
{
	if (ksched_trace && next != S.cur)
		fprintf(stderr, "  sched: %d -> %d (step %lu)\n", S.cur, next, S.steps);
	S.cur = next;
	pthread_cond_broadcast(&S.cv);
	while (S.cur != me)
		pthread_cond_wait(&S.cv, &S.mu);
}

static void yield(int why)
{
	pthread_mutex_lock(&S.mu);
	S.steps++;
	if (S.policy == KSCHED_PCT)
		for (int i = 0; i < S.nchange; i++)
			if (S.steps == S.change_at[i])
				S.prio[me] = i - S.nchange; /* below every initial priority */
	if (why == KSYNC_SCHED_BLOCKED) {
		S.state[me] = BLOCKED;
		if (++S.blocked_run == 1)
			S.blocked_since = now();
		if (S.blocked_run > 64) {
			/*
			 * Everyone is blocked: if what they wait for is held
			 * outside the baton (a thread this scheduler does not
			 * run), give that thread the CPU.
			 */
			pthread_mutex_unlock(&S.mu);
			struct timespec ts = { 0, 20 * 1000 };
			nanosleep(&ts, NULL);
			pthread_mutex_lock(&S.mu);
		}
		if (S.blocked_run > KSCHED_DEADLOCK_ROUNDS && now() - S.blocked_since > 2.0) {
			fprintf(stderr, "ksched: deadlock: every thread blocked for %lu hand-offs\n",
				S.blocked_run);
			abort();
		}
	} else {
		/* Progress: what the blocked threads wait for may be there now. */
		S.blocked_run = 0;
		for (int t = 0; t < S.n; t++)
			if (S.state[t] == BLOCKED)
				S.state[t] = LIVE;
	}
	hand_to(pick(me, why == KSYNC_SCHED_BLOCKED));
	S.state[me] = LIVE;
	pthread_mutex_unlock(&S.mu);
}

static void hook(int why, const void *obj)
{
	(void)obj;
	if (me >= 0)
		yield(why);
}

void ksched_point(void)
{
	if (me >= 0 && S.policy != KSCHED_FREE)
		yield(KSYNC_SCHED_PREEMPT);
}

enum ksched_policy ksched_policy_of(unsigned int mode)
{
	const char *force = getenv("KSYNC_FUZZ_POLICY");

	if (force)
		return !strcmp(force, "free") ? KSCHED_FREE : !strcmp(force, "pct") ? KSCHED_PCT : KSCHED_BYTES;
	return (mode >> 2) % 8 == 7 ? KSCHED_FREE : (mode >> 2) % 8 >= 5 ? KSCHED_PCT : KSCHED_BYTES;
}

void ksched_seam(const char *what, int point)
{
	if (ksched_trace)
		fprintf(stderr, "  %s seam %d\n", what, point);
	ksched_point();
}

size_t ksched_decisions(void)
{
	return S.used;
}

static void *thread_main(void *p)
{
	int tid = (int)(intptr_t)p;

	if (S.policy == KSCHED_FREE) {
		S.body(tid, S.arg);
		return NULL;
	}
	pthread_mutex_lock(&S.mu);
	me = tid;
	while (S.cur != me)
		pthread_cond_wait(&S.cv, &S.mu);
	pthread_mutex_unlock(&S.mu);

	S.body(tid, S.arg);

	pthread_mutex_lock(&S.mu);
	S.state[me] = DONE;
	S.blocked_run = 0;
	int next = pick(me, true);
	if (ksched_trace)
		fprintf(stderr, "  sched: %d ends -> %d\n", me, next);
	S.cur = next;
	S.ndone++;
	pthread_cond_broadcast(&S.cv);
	/*
	 * Stay until every thread's script has ended: the thread's exit runs
	 * ksync code outside the baton (a TLS destructor folds its SRCU slots,
	 * under SRCU's locks), and run beside the scheduled threads it made
	 * their schedule depend on timing. Exiting together, it meets none.
	 */
	while (S.ndone < S.n)
		pthread_cond_wait(&S.cv, &S.mu);
	pthread_mutex_unlock(&S.mu);
	me = -1;
	return NULL;
}

void ksched_run(int n, void (*body)(int, void *), void *arg, const uint8_t *bytes, size_t nbytes,
		enum ksched_policy policy, int depth)
{
	pthread_t th[KSCHED_MAX_THREADS];

	if (n < 1 || n > KSCHED_MAX_THREADS)
		abort();
	pthread_mutex_lock(&S.mu);
	S.n = n;
	S.body = body;
	S.arg = arg;
	S.bytes = bytes;
	S.nbytes = nbytes;
	S.used = 0;
	S.policy = policy;
	S.steps = 0;
	S.ndone = 0;
	S.blocked_run = 0;
	S.nchange = 0;
	for (int t = 0; t < n; t++) {
		S.state[t] = LIVE;
		S.prio[t] = t;
	}
	if (policy == KSCHED_PCT) {
		/* Distinct random priorities (a Fisher-Yates shuffle), then d-1 change points. */
		for (int t = n - 1; t > 0; t--) {
			int b = next_byte(), j = (b < 0 ? 0 : b) % (t + 1), x = S.prio[t];
			S.prio[t] = S.prio[j];
			S.prio[j] = x;
		}
		S.nchange = depth < 1 ? 0 : depth > 4 ? 3 : depth - 1;
		for (int i = 0; i < S.nchange; i++) {
			int b = next_byte();
			S.change_at[i] = 1 + (unsigned long)(b < 0 ? 0 : b) % KSCHED_PCT_STEPS;
		}
	}
	S.cur = policy == KSCHED_FREE ? -1 : pick(-1, false);
	pthread_mutex_unlock(&S.mu);

	if (policy != KSCHED_FREE)
		__atomic_store_n(&ksync_sched_hook, hook, __ATOMIC_RELEASE);
	for (int t = 0; t < n; t++)
		if (pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) != 0)
			abort();
	for (int t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	__atomic_store_n(&ksync_sched_hook, NULL, __ATOMIC_RELEASE);
}
