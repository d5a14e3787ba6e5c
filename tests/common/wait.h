/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wait.h - how the tests wait: sleeps, polls of a condition another thread
 * makes true, and a watchdog that turns a hang into a failure.
 *
 *   kt_sleep_ms(ms), kt_sleep_us(us)   nanosleep
 *   kt_yield_for(seconds)              sched_yield() until the time is up
 *   KT_POLL_UNTIL(cond)                check every 1 ms, no time bound
 *   KT_POLL_UNTIL_MS(cond, max_ms)     check every 1 ms, at most max_ms
 *                                      times; the caller checks cond after
 *   KT_YIELD_UNTIL(cond)               sched_yield() between checks, no bound
 *   KT_SPIN_UNTIL(cond, failsafe_s)    ksync_cpu_relax() between checks;
 *                                      aborts (KASSERT) after failsafe_s
 *   kt_watchdog(who, seconds)          exit 2 with a message after seconds
 *                                      (KTEST_WATCHDOG_SECONDS overrides);
 *   kt_watchdog_cancel()               the test finished in time
 *
 * The unbounded waits leave a hang to the ctest TIMEOUT or to a watchdog.
 * No ksync header is needed before this one (a test may include it ahead
 * of the test hooks it defines for <ksync/srcu.h>).
 */
#ifndef KTEST_WAIT_H
#define KTEST_WAIT_H

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"

static inline void kt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static inline void kt_sleep_us(unsigned int us)
{
	struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L };
	nanosleep(&ts, NULL);
}

static inline void kt_yield_for(double seconds)
{
	double until = ktest_now() + seconds;

	while (ktest_now() < until)
		sched_yield();
}

#define KT_POLL_UNTIL(cond)                                                    \
	do {                                                                   \
		while (!(cond))                                                \
			kt_sleep_ms(1);                                        \
	} while (0)

#define KT_POLL_UNTIL_MS(cond, max_ms)                                         \
	do {                                                                   \
		for (int kt_ms_ = 0; kt_ms_ < (max_ms) && !(cond); kt_ms_++)   \
			kt_sleep_ms(1);                                        \
	} while (0)

#define KT_YIELD_UNTIL(cond)                                                   \
	do {                                                                   \
		while (!(cond))                                                \
			sched_yield();                                         \
	} while (0)

/* ksync_cpu_relax() comes from <ksync/atomic.h>, which the caller includes. */
#define KT_SPIN_UNTIL(cond, failsafe_s)                                        \
	do {                                                                   \
		double kt_failsafe_ = ktest_now() + (failsafe_s);              \
		while (!(cond)) {                                              \
			KASSERT(ktest_now() < kt_failsafe_);                   \
			ksync_cpu_relax();                                     \
		}                                                              \
	} while (0)

/* Is thread @tid of this process asleep (state S in /proc/self/task/TID/stat)? */
static inline int kt_thread_sleeps(int tid)
{
	char path[64], buf[512];
	FILE *f;
	char *p;
	int sleeps = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) != NULL)
		sleeps = p[1] == ' ' && p[2] == 'S';
	fclose(f);
	return sleeps;
}

static const char *kt_watchdog_who = "test";

static inline void kt_watchdog_fire(int sig)
{
	static const char msg[] = ": watchdog: the test hangs (deadlock)\n";

	(void)sig;
	(void)!write(2, kt_watchdog_who, strlen(kt_watchdog_who));
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(2);
}

/* KTEST_WATCHDOG_SECONDS overrides @seconds (to see a hang fail fast). */
static inline void kt_watchdog(const char *who, unsigned int seconds)
{
	const char *env = getenv("KTEST_WATCHDOG_SECONDS");

	kt_watchdog_who = who;
	signal(SIGALRM, kt_watchdog_fire);
	alarm(env && atoi(env) > 0 ? (unsigned int)atoi(env) : seconds);
}

static inline void kt_watchdog_cancel(void)
{
	alarm(0);
}

#endif /* KTEST_WAIT_H */
