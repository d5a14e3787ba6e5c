/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ktest.h - the smallest test harness that does the job.
 *
 *   KTEST(name) { KCHECK(cond); KCHECK_EQ(a, b); ... }
 *   int main(int argc, char **argv) { return ktest_run(argc, argv); }
 *
 * Tests register themselves through a constructor; ktest_run() runs them all
 * (or those whose name contains argv[1]), prints each failure with file and
 * line, and closes with "N passed, N failed" (N counts test cases). A failed
 * check does not abort its test case, so one run shows every failure.
 * ktest_seconds() gives torture loops a duration: KTEST_SECONDS in the
 * environment, else the default passed in.
 */
#ifndef KTEST_H
#define KTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ktest_case {
	const char *name;
	void (*fn)(void);
};

#define KTEST_MAX 256
static struct ktest_case ktest_cases[KTEST_MAX];
static int ktest_ncases;
static int ktest_case_failed;
static long ktest_checks;

#define KTEST(name)                                                            \
	static void ktest_fn_##name(void);                                     \
	__attribute__((constructor)) static void ktest_reg_##name(void)        \
	{                                                                      \
		if (ktest_ncases < KTEST_MAX)                                  \
			ktest_cases[ktest_ncases++] =                          \
				(struct ktest_case){ #name, ktest_fn_##name }; \
	}                                                                      \
	static void ktest_fn_##name(void)

static inline void ktest_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
	ktest_case_failed = 1;
}

#define KCHECK(cond)                                                           \
	do {                                                                   \
		__atomic_fetch_add(&ktest_checks, 1, __ATOMIC_RELAXED);        \
		if (!(cond))                                                   \
			ktest_fail(__FILE__, __LINE__, #cond);                 \
	} while (0)

#define KCHECK_EQ(a, b)                                                        \
	do {                                                                   \
		long long ktest_a = (long long)(a), ktest_b = (long long)(b);  \
		__atomic_fetch_add(&ktest_checks, 1, __ATOMIC_RELAXED);        \
		if (ktest_a != ktest_b) {                                      \
			char ktest_msg[256];                                   \
			snprintf(ktest_msg, sizeof(ktest_msg),                 \
				 "%s == %s (%lld != %lld)", #a, #b, ktest_a,   \
				 ktest_b);                                     \
			ktest_fail(__FILE__, __LINE__, ktest_msg);             \
		}                                                              \
	} while (0)

/* Abort the whole binary: for broken invariants in threads. */
#define KASSERT(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: ASSERT failed: %s\n",          \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

static inline double ktest_seconds(double dflt)
{
	const char *s = getenv("KTEST_SECONDS");
	double v = s ? atof(s) : 0.0;
	return v > 0.0 ? v : dflt;
}

static inline double ktest_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int ktest_run(int argc, char **argv)
{
	int passed = 0, failed = 0;
	const char *filter = argc > 1 ? argv[1] : NULL;

	for (int i = 0; i < ktest_ncases; i++) {
		if (filter && !strstr(ktest_cases[i].name, filter))
			continue;
		ktest_case_failed = 0;
		double t0 = ktest_now();
		ktest_cases[i].fn();
		printf("[%s] %s (%.3f s)\n", ktest_case_failed ? "FAIL" : " ok ",
		       ktest_cases[i].name, ktest_now() - t0);
		fflush(stdout);
		if (ktest_case_failed)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : (passed ? 0 : 1);
}

#endif /* KTEST_H */
