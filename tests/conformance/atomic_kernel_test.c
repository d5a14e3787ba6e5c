/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/atomic.h> and <linux/bug.h> under their kernel spellings, against
 * the kernel's documented semantics (Documentation/atomic_t.txt): what each
 * operation returns (old or new value, the test results), wrap-around at the
 * type's limits, cmpxchg's failure path, the conditional operations, and
 * every order suffix. Built as C and C++, on both atomics back-ends.
 * WARN()/WARN_ONCE() take printf arguments; BUG_ON() aborts.
 */
#include <ksync/linux/atomic.h>
#include <ksync/linux/bug.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

/*
 * One body for the three families: T the value type, P the prefix
 * (atomic, atomic_long, atomic64), MAXV/MINV the type's limits.
 */
#define CHECK_FAMILY(T, P, TYPE, MAXV, MINV)                                   \
	do {                                                                   \
		TYPE v;                                                        \
		T old;                                                         \
		P##_set(&v, 5);                                                \
		KCHECK_EQ(P##_read(&v), 5);                                    \
		/* fetch_* return the old value, *_return the new one, in every order */ \
		KCHECK_EQ(P##_fetch_add(3, &v), 5);                            \
		KCHECK_EQ(P##_fetch_add_acquire(1, &v), 8);                    \
		KCHECK_EQ(P##_fetch_add_release(1, &v), 9);                    \
		KCHECK_EQ(P##_fetch_add_relaxed(1, &v), 10);                   \
		KCHECK_EQ(P##_read(&v), 11);                                   \
		KCHECK_EQ(P##_add_return(4, &v), 15);                          \
		KCHECK_EQ(P##_add_return_acquire(1, &v), 16);                  \
		KCHECK_EQ(P##_sub_return_release(6, &v), 10);                  \
		KCHECK_EQ(P##_inc_return_relaxed(&v), 11);                     \
		KCHECK_EQ(P##_dec_return(&v), 10);                             \
		KCHECK_EQ(P##_fetch_sub_acquire(2, &v), 10);                   \
		KCHECK_EQ(P##_fetch_inc(&v), 8);                               \
		KCHECK_EQ(P##_fetch_dec_release(&v), 9);                       \
		KCHECK_EQ(P##_read(&v), 8);                                    \
		/* bit operations */                                           \
		P##_set(&v, 0x0c);                                             \
		KCHECK_EQ(P##_fetch_or(0x03, &v), 0x0c);                       \
		KCHECK_EQ(P##_fetch_and_relaxed(0x0a, &v), 0x0f);              \
		KCHECK_EQ(P##_fetch_xor_acquire(0x0f, &v), 0x0a);              \
		KCHECK_EQ(P##_fetch_andnot_release(0x01, &v), 0x05);           \
		KCHECK_EQ(P##_read(&v), 0x04);                                 \
		P##_or(0x30, &v);                                              \
		P##_andnot(0x04, &v);                                          \
		P##_xor(0x01, &v);                                             \
		P##_and(0x21, &v);                                             \
		KCHECK_EQ(P##_read(&v), 0x21);                                 \
		/* xchg and cmpxchg */                                         \
		KCHECK_EQ(P##_xchg(&v, 7), 0x21);                              \
		KCHECK_EQ(P##_xchg_relaxed(&v, 8), 7);                         \
		KCHECK_EQ(P##_cmpxchg(&v, 8, 9), 8);                           \
		KCHECK_EQ(P##_cmpxchg_acquire(&v, 8, 10), 9); /* fails: value seen */ \
		KCHECK_EQ(P##_read(&v), 9);                                    \
		old = 3;                                                       \
		KCHECK(!P##_try_cmpxchg_release(&v, &old, 4));                 \
		KCHECK_EQ(old, 9); /* the value seen is written back */       \
		KCHECK(P##_try_cmpxchg_relaxed(&v, &old, 4));                  \
		KCHECK_EQ(P##_read(&v), 4);                                    \
		/* tests */                                                    \
		P##_set(&v, 1);                                                \
		KCHECK(P##_dec_and_test(&v));                                  \
		KCHECK(!P##_dec_and_test(&v));                                 \
		KCHECK(P##_inc_and_test(&v));                                  \
		P##_set(&v, 3);                                                \
		KCHECK(P##_sub_and_test(3, &v));                               \
		KCHECK(P##_add_negative(-1, &v));                              \
		KCHECK(!P##_add_negative(1, &v));                              \
		/* conditional */                                              \
		P##_set(&v, 4);                                                \
		KCHECK_EQ(P##_fetch_add_unless(&v, 2, 4), 4); /* unchanged */  \
		KCHECK(P##_add_unless(&v, 2, 5));                              \
		KCHECK_EQ(P##_read(&v), 6);                                    \
		P##_set(&v, 0);                                                \
		KCHECK(!P##_inc_not_zero(&v));                                 \
		KCHECK(P##_inc_unless_negative(&v));                           \
		KCHECK(!P##_dec_unless_positive(&v));                          \
		KCHECK_EQ(P##_dec_if_positive(&v), 0); /* 1 -> 0 */            \
		KCHECK_EQ(P##_dec_if_positive(&v), -1); /* not decremented */  \
		KCHECK_EQ(P##_read(&v), 0);                                    \
		P##_set(&v, -1);                                               \
		KCHECK(!P##_inc_unless_negative(&v));                          \
		KCHECK(P##_dec_unless_positive(&v));                           \
		KCHECK_EQ(P##_read(&v), -2);                                   \
		/* wrap-around at the limits (the kernel builds -fno-strict-overflow) */ \
		P##_set(&v, MAXV);                                             \
		KCHECK_EQ(P##_inc_return(&v), MINV);                           \
		KCHECK_EQ(P##_dec_return_acquire(&v), MAXV);                   \
		P##_set(&v, MINV);                                             \
		KCHECK_EQ(P##_sub_return(1, &v), MAXV);                        \
		P##_set(&v, 0);                                                \
		P##_sub(MINV, &v);                                             \
		KCHECK_EQ(P##_read(&v), MINV);                                 \
		/* release and acquire accessors */                            \
		P##_set_release(&v, 42);                                       \
		KCHECK_EQ(P##_read_acquire(&v), 42);                           \
	} while (0)

KTEST(atomic_t_semantics)
{
	atomic_t init = ATOMIC_INIT(17);
	KCHECK_EQ(atomic_read(&init), 17);
	CHECK_FAMILY(int, atomic, atomic_t, INT_MAX, INT_MIN);
}

KTEST(atomic_long_t_semantics)
{
	atomic_long_t init = ATOMIC_LONG_INIT(-17);
	KCHECK_EQ(atomic_long_read(&init), -17);
	CHECK_FAMILY(long, atomic_long, atomic_long_t, LONG_MAX, LONG_MIN);
}

KTEST(atomic64_t_semantics)
{
	atomic64_t init = ATOMIC64_INIT(INT64_C(0x100000000));
	KCHECK_EQ(atomic64_read(&init), INT64_C(0x100000000));
	KCHECK_EQ(sizeof(atomic64_t), 8);
	KCHECK_EQ(__alignof__(atomic64_t), 8);
	CHECK_FAMILY(int64_t, atomic64, atomic64_t, INT64_MAX, INT64_MIN);
	/* 64-bit values past 32 bits */
	atomic64_t v = ATOMIC64_INIT(0);
	KCHECK_EQ(atomic64_add_return(INT64_C(0x123456789), &v), INT64_C(0x123456789));
	KCHECK_EQ(atomic64_fetch_or(INT64_C(0x8000000000000000) >> 1, &v), INT64_C(0x123456789));
}

/* Two threads hammer one counter with every order: nothing is lost. */
static atomic64_t shared64 = ATOMIC64_INIT(0);

static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		atomic64_inc(&shared64);
		atomic64_fetch_add_relaxed(1, &shared64);
		atomic64_add_return_acquire(1, &shared64);
		atomic64_fetch_sub_release(-1, &shared64);
	}
	return NULL;
}

KTEST(atomic64_no_lost_updates)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, adder, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	KCHECK_EQ(atomic64_read(&shared64), 800000);
}

/* ------------------------------------------------------------------------ */
/* bug.h                                                                    */

static char last_report[256];
static int last_line;

static void catch_report(const char *file, int line, const char *what)
{
	(void)file;
	last_line = line;
	snprintf(last_report, sizeof(last_report), "%s", what);
}

KTEST(warn_takes_printf_arguments)
{
	ksync_warn_hook = catch_report;
	unsigned long w = ksync_warn_count;
	int line = __LINE__ + 1;
	int r = WARN(2 > 1, "value %d of %s", 42, "x");
	KCHECK_EQ(r, 1);
	KCHECK_EQ(ksync_warn_count, w + 1);
	KCHECK(strcmp(last_report, "value 42 of x") == 0);
	KCHECK_EQ(last_line, line);
	KCHECK_EQ(WARN(0, "never %d", 1), 0);
	KCHECK_EQ(ksync_warn_count, w + 1);
	/* WARN_ONCE: reported by the first hit of its site only, true each time */
	for (int i = 0; i < 3; i++)
		KCHECK_EQ(WARN_ONCE(i >= 0, "once %d", i), 1);
	KCHECK_EQ(ksync_warn_count, w + 2);
	KCHECK(strcmp(last_report, "once 0") == 0);
	KCHECK_EQ(WARN_ON(0), 0);
	KCHECK_EQ(WARN_ON_ONCE(1), 1);
	KCHECK(strcmp(last_report, "WARN_ON_ONCE(1)") == 0);
	ksync_warn_hook = NULL;
}

static int bug_child(int which)
{
	pid_t pid = fork();

	if (pid == 0) {
		(void)!freopen("/dev/null", "w", stderr);
		if (which == 0)
			BUG_ON(1 + 1 == 2);
		else if (which == 1)
			BUG();
		else
			BUG_ON(0); /* does not fire */
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return status;
}

KTEST(bug_on_aborts)
{
	int st = bug_child(0);
	KCHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = bug_child(1);
	KCHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = bug_child(2);
	KCHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
