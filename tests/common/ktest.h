/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ktest.h - the smallest test harness that does the job.
 *
 *   KTEST(name) { KCHECK(cond); KCHECK_EQ(a, b); ... }
 *   int main(int argc, char **argv) { return ktest_run(argc, argv); }
 *
 * Tests register themselves through a constructor (as many as the binary
 * defines: the table grows; a case that cannot be registered is reported by
 * name and fails the run). ktest_run() runs them all, or those whose name
 * contains the filter argument, prints each failure with file and line, and
 * closes with "N passed, N failed" (N counts test cases). A failed check
 * does not abort its test case, so one run shows every failure.
 *
 *   prog [FILTER] [--tap]
 *
 * With --tap, or KTEST_TAP set in the environment (to anything but "" or
 * "0"), the report is TAP version 13: "1..N", then "ok I - name" or
 * "not ok I - name" per case, a failed case followed by its failures as "# "
 * diagnostics; the closing "N passed, N failed" line stays.
 *
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

static struct ktest_case *ktest_cases; /* grows by doubling */
static int ktest_ncases, ktest_cap;
/* Cases that could not be registered (out of memory); the run fails. */
#define KTEST_DROPPED_NAMES 16
static const char *ktest_dropped[KTEST_DROPPED_NAMES];
static int ktest_ndropped;
static int ktest_case_failed;
static long ktest_checks;
static int ktest_tap;
/* TAP mode: the current case's failure lines, printed after its "not ok". */
static char *ktest_diag;
static size_t ktest_diag_len, ktest_diag_cap;
static int ktest_diag_lock;

static inline void ktest_register(const char *name, void (*fn)(void))
{
	if (ktest_ncases == ktest_cap) {
		int cap = ktest_cap ? 2 * ktest_cap : 64;
		struct ktest_case *c =
			(struct ktest_case *)realloc(ktest_cases, (size_t)cap * sizeof(*c));
		if (!c) {
			fprintf(stderr, "ktest: cannot register test case %s (out of memory)\n", name);
			if (ktest_ndropped < KTEST_DROPPED_NAMES)
				ktest_dropped[ktest_ndropped] = name;
			ktest_ndropped++;
			return;
		}
		ktest_cases = c;
		ktest_cap = cap;
	}
	ktest_cases[ktest_ncases++] = (struct ktest_case){ name, fn };
}

#define KTEST(name)                                                            \
	static void ktest_fn_##name(void);                                     \
	__attribute__((constructor)) static void ktest_reg_##name(void)        \
	{                                                                      \
		ktest_register(#name, ktest_fn_##name);                        \
	}                                                                      \
	static void ktest_fn_##name(void)

/* TAP mode: keep @line for the diagnostics of the current case (any thread). */
static inline void ktest_diag_add(const char *line)
{
	size_t n = strlen(line);

	while (__atomic_exchange_n(&ktest_diag_lock, 1, __ATOMIC_ACQUIRE))
		;
	if (ktest_diag_len + n + 1 > ktest_diag_cap) {
		size_t cap = 2 * (ktest_diag_len + n + 1);
		char *d = (char *)realloc(ktest_diag, cap);
		if (d) {
			ktest_diag = d;
			ktest_diag_cap = cap;
		}
	}
	if (ktest_diag_len + n + 1 <= ktest_diag_cap) {
		memcpy(ktest_diag + ktest_diag_len, line, n + 1);
		ktest_diag_len += n;
	} else { /* out of memory: at least say it now */
		fputs(line, stdout);
	}
	__atomic_store_n(&ktest_diag_lock, 0, __ATOMIC_RELEASE);
}

static inline void ktest_fail(const char *file, int line, const char *what)
{
	if (ktest_tap) {
		char msg[512];
		snprintf(msg, sizeof(msg), "# %s:%d: CHECK failed: %s\n", file, line, what);
		ktest_diag_add(msg);
	} else {
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
	}
	__atomic_store_n(&ktest_case_failed, 1, __ATOMIC_RELAXED);
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
	int passed = 0, failed = 0, planned = 0, num = 0;
	const char *filter = NULL;
	const char *env = getenv("KTEST_TAP");

	ktest_tap = env && env[0] && strcmp(env, "0") != 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tap") == 0)
			ktest_tap = 1;
		else if (!filter)
			filter = argv[i];
	}
	for (int i = 0; i < ktest_ncases; i++)
		planned += !filter || strstr(ktest_cases[i].name, filter);
	for (int i = 0; i < ktest_ndropped && i < KTEST_DROPPED_NAMES; i++)
		planned += !filter || strstr(ktest_dropped[i], filter);
	planned += ktest_ndropped > KTEST_DROPPED_NAMES ? ktest_ndropped - KTEST_DROPPED_NAMES : 0;
	if (ktest_tap) {
		printf("TAP version 13\n1..%d\n", planned);
		fflush(stdout);
	}

	for (int i = 0; i < ktest_ncases; i++) {
		if (filter && !strstr(ktest_cases[i].name, filter))
			continue;
		ktest_case_failed = 0;
		ktest_diag_len = 0;
		double t0 = ktest_now();
		ktest_cases[i].fn();
		int bad = __atomic_load_n(&ktest_case_failed, __ATOMIC_RELAXED);
		if (ktest_tap) {
			printf("%s %d - %s\n", bad ? "not ok" : "ok", ++num, ktest_cases[i].name);
			if (ktest_diag_len)
				fputs(ktest_diag, stdout);
		} else {
			printf("[%s] %s (%.3f s)\n", bad ? "FAIL" : " ok ",
			       ktest_cases[i].name, ktest_now() - t0);
		}
		fflush(stdout);
		if (bad)
			failed++;
		else
			passed++;
	}

	/* Cases lost at registration fail the run, by name where it was kept. */
	for (int i = 0; i < ktest_ndropped; i++) {
		const char *name = i < KTEST_DROPPED_NAMES ? ktest_dropped[i] : "(name not kept)";
		if (i < KTEST_DROPPED_NAMES && filter && !strstr(name, filter))
			continue;
		if (ktest_tap)
			printf("not ok %d - %s\n# not registered (out of memory)\n", ++num, name);
		else
			printf("[FAIL] %s (not registered: out of memory)\n", name);
		failed++;
	}

	printf("%d passed, %d failed\n", passed, failed);
	fflush(stdout);
	free(ktest_cases);
	ktest_cases = NULL;
	ktest_ncases = ktest_cap = 0;
	free(ktest_diag);
	ktest_diag = NULL;
	ktest_diag_len = ktest_diag_cap = 0;
	return failed ? 1 : (passed ? 0 : 1);
}

#endif /* KTEST_H */
