/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/stall.h - stopping a freely running thread at an arbitrary instruction.
 *
 * The baton scheduler switches threads only at preemption points, so it
 * cannot show a race between two loads that have none between them: a
 * reader that checks a group's state, then reads its client state, while
 * another thread releases the group and frees that state in between (issue
 * 18, case 1: a window of a few instructions inside
 * ksync_memgroup_get_objcg()). Threads running freely (KSCHED_FREE) hit such
 * a window only when the kernel happens to preempt the reader inside it.
 *
 * So, when the threads run freely, a writer about to do something that
 * readers race with stops them first: it sends each registered reader a
 * signal (STALL_SIGNAL), whose handler acknowledges and spins, wherever the
 * reader was, until the writer says it is done (stall_resume()); the writer
 * waits for the acknowledgements, does its work, resumes them. Each stop
 * lands at an arbitrary instruction of the reader, so a window that takes a
 * fraction f of the reader's time is hit in about a fraction f of the
 * stops. Every wait is bounded (a reader stopped while holding a lock the
 * writer needs only delays it), and readers register only for the span of
 * one operation (stall_reader_begin/end), under a lock the writer takes to
 * signal, so no signal goes to a thread that has ended.
 *
 * Under ThreadSanitizer signals are delivered at the next interceptor rather
 * than at once: the stops then land at coarser points; nothing else changes.
 */
#ifndef KSYNC_FUZZ_STALL_H
#define KSYNC_FUZZ_STALL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "sched.h"

#define STALL_SIGNAL (SIGRTMIN + 5)
#define STALL_SPINS 200000	/* a stopped reader's wait, in loads (about a millisecond at most) */
#define STALL_ACK_SPINS 20000	/* the writer's wait for the readers to stop */

static struct {
	pthread_mutex_t mu;
	pthread_t th[KSCHED_MAX_THREADS];
	bool on[KSCHED_MAX_THREADS];
	unsigned long acks, gen; /* atomics */
	int active;		 /* atomic: writers between stall_readers() and stall_resume() */
} stall = { .mu = PTHREAD_MUTEX_INITIALIZER };

/*
 * A signal that comes late (the reader was not running: the writer stopped
 * waiting for it and is done) finds no writer active and returns at once.
 */
static void stall_handler(int sig)
{
	unsigned long gen = __atomic_load_n(&stall.gen, __ATOMIC_ACQUIRE);

	(void)sig;
	__atomic_add_fetch(&stall.acks, 1, __ATOMIC_ACQ_REL);
	for (int i = 0; i < STALL_SPINS && __atomic_load_n(&stall.active, __ATOMIC_ACQUIRE) &&
			__atomic_load_n(&stall.gen, __ATOMIC_ACQUIRE) == gen;
	     i++)
		;
}

static void stall_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stall_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(STALL_SIGNAL, &sa, NULL);
}

/* Once per process: the handler (the signal is ours alone). */
static void stall_install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, stall_init);
}

/* Thread @tid may be stopped from now until stall_reader_end(). */
static void stall_reader_begin(int tid)
{
	pthread_mutex_lock(&stall.mu);
	stall.th[tid] = pthread_self();
	stall.on[tid] = true;
	pthread_mutex_unlock(&stall.mu);
}

static void stall_reader_end(int tid)
{
	pthread_mutex_lock(&stall.mu);
	stall.on[tid] = false;
	pthread_mutex_unlock(&stall.mu);
}

/* Stop every registered reader but @tid, and wait (bounded) until they are stopped. */
static void stall_readers(int tid)
{
	unsigned long acks = __atomic_load_n(&stall.acks, __ATOMIC_ACQUIRE);
	int sent = 0;

	__atomic_add_fetch(&stall.active, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&stall.mu);
	for (int t = 0; t < KSCHED_MAX_THREADS; t++)
		if (t != tid && stall.on[t] && pthread_kill(stall.th[t], STALL_SIGNAL) == 0)
			sent++;
	pthread_mutex_unlock(&stall.mu);
	for (int i = 0;
	     i < STALL_ACK_SPINS && __atomic_load_n(&stall.acks, __ATOMIC_ACQUIRE) < acks + (unsigned long)sent; i++)
		;
}

/* Let the stopped readers go on. */
static void stall_resume(void)
{
	__atomic_add_fetch(&stall.gen, 1, __ATOMIC_ACQ_REL);
	__atomic_sub_fetch(&stall.active, 1, __ATOMIC_ACQ_REL);
}

#endif /* KSYNC_FUZZ_STALL_H */
