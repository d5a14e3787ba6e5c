/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bare_read.c - bench_bare_read: the read-side lock+unlock pair in a tight C
 * loop, no benchmark framework: ksync SRCU (classic and fast forms) against
 * liburcu urcu-memb (inline fast paths, _LGPL_SOURCE), 1 and 2 threads by
 * default; and both forms on a domain past the direct words (the 40th set
 * up, through the per-thread slot cache): ksync_srcu_far, ksync_srcu_far_fast.
 *
 * Each thread registers (urcu) or takes its slot (ksync) outside the timed
 * part, waits at a barrier, then times --pairs million lock+unlock pairs with
 * CLOCK_MONOTONIC; ns/pair is a thread's time over its pairs, averaged over
 * the threads. The modules alternate within each of --reps repetitions (so
 * both see the same machine noise) and the median repetition is reported,
 * with ksync / urcu-memb per thread count.
 *
 *   bench_bare_read [--pairs=M] [--reps=R] [--threads=1,2] [--clock=thread]
 *                   [--stat=median|best] [--json]
 *
 * --stat=best times each thread's pairs in chunks of CHUNK_PAIRS and keeps
 * the fastest chunk (per thread, then the fastest repetition): the pair's
 * cost when nothing interrupted it, the figure to compare code paths by on
 * a machine shared with other work (a preemption, a migration or a busy
 * sibling hyperthread only makes some chunks slower). The default is the
 * median repetition of whole-run times.
 *
 * The loops are aligned to 64 bytes (bench_bare_read.cmake): a tight loop's
 * cost depends on where it lies against the fetch blocks, and unaligned, the
 * same urcu-memb loop measured 1.0 or 1.5 ns in two builds.
 *
 * --clock=thread times each thread with CLOCK_THREAD_CPUTIME_ID instead of
 * CLOCK_MONOTONIC: on a machine shared with other work, time the thread
 * spent preempted then does not count.
 *
 * Google Benchmark's per-iteration bookkeeping costs about as much as the
 * pair itself, so bench_srcu's read figures (batched, but still framework
 * driven) can hide part of a difference this loop shows.
 */
#define _GNU_SOURCE 1
#define _LGPL_SOURCE 1
#include <urcu/urcu-memb.h>

#include <ksync/srcu.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define MAX_REPS 101
#define NR_MODULES 5
#define URCU_MODULE 2 /* the peer every ratio is taken against */
#define FAR_DOMAIN 40 /* the far domain is the 40th set up: past the 31 direct ones */

static KSYNC_DEFINE_SRCU(bare_srcu);
static struct ksync_srcu_struct bare_filler[FAR_DOMAIN - 2], bare_far;

static const char *const module_name[NR_MODULES] = { "ksync_srcu", "ksync_srcu_fast", "urcu_memb",
						     "ksync_srcu_far", "ksync_srcu_far_fast" };

/* CLOCK_MONOTONIC, or with --clock=thread each thread's CPU time (a loaded machine). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

/* --stat=best: pairs per timed chunk, and whether to keep the fastest chunk. */
#define CHUNK_PAIRS 20000UL
static int stat_best;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static __attribute__((noinline)) void loop_ksync(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		int idx = ksync_srcu_read_lock(&bare_srcu);
		__asm__ __volatile__("" ::: "memory");
		ksync_srcu_read_unlock(&bare_srcu, idx);
	}
}

static __attribute__((noinline)) void loop_ksync_fast(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&bare_srcu);
		__asm__ __volatile__("" ::: "memory");
		ksync_srcu_read_unlock_fast(&bare_srcu, tok);
	}
}

static __attribute__((noinline)) void loop_ksync_far(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		int idx = ksync_srcu_read_lock(&bare_far);
		__asm__ __volatile__("" ::: "memory");
		ksync_srcu_read_unlock(&bare_far, idx);
	}
}

static __attribute__((noinline)) void loop_ksync_far_fast(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&bare_far);
		__asm__ __volatile__("" ::: "memory");
		ksync_srcu_read_unlock_fast(&bare_far, tok);
	}
}

static void loop_urcu_memb(unsigned long n);

static void loop_module(int module, unsigned long n)
{
	switch (module) {
	case 0: loop_ksync(n); break;
	case 1: loop_ksync_fast(n); break;
	case 2: loop_urcu_memb(n); break;
	case 3: loop_ksync_far(n); break;
	default: loop_ksync_far_fast(n); break;
	}
}

static __attribute__((noinline)) void loop_urcu_memb(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		urcu_memb_read_lock();
		__asm__ __volatile__("" ::: "memory");
		urcu_memb_read_unlock();
	}
}

struct run {
	int module;
	unsigned long pairs;
	pthread_barrier_t start;
	double ns[MAX_THREADS];
};

struct worker {
	struct run *run;
	int idx;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	double t0, t1;

	if (r->module != URCU_MODULE)
		loop_module(r->module, 1); /* the thread's slot, outside the timed part */
	else
		urcu_memb_register_thread();
	pthread_barrier_wait(&r->start);
	if (stat_best) {
		double best = 0;

		for (unsigned long done = 0; done < r->pairs; done += CHUNK_PAIRS) {
			unsigned long n = r->pairs - done < CHUNK_PAIRS ? r->pairs - done : CHUNK_PAIRS;

			t0 = now_s();
			loop_module(r->module, n);
			t1 = now_s();
			double ns = (t1 - t0) * 1e9 / (double)n;
			if (n == CHUNK_PAIRS && (best == 0 || ns < best))
				best = ns;
		}
		r->ns[w->idx] = best;
	} else {
		t0 = now_s();
		loop_module(r->module, r->pairs);
		t1 = now_s();
		r->ns[w->idx] = (t1 - t0) * 1e9 / (double)r->pairs;
	}
	if (r->module == URCU_MODULE)
		urcu_memb_unregister_thread();
	return NULL;
}

/* One timed run: @threads threads, @pairs each; returns the mean ns/pair. */
static double run_once(int module, int threads, unsigned long pairs)
{
	struct run r = { .module = module, .pairs = pairs };
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	double sum = 0;

	pthread_barrier_init(&r.start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ .run = &r, .idx = i };
		if (pthread_create(&t[i], NULL, worker_main, &w[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&r.start);
	for (int i = 0; i < threads; i++)
		sum += r.ns[i];
	return sum / threads;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--pairs=MILLIONS] [--reps=R] [--threads=1,2,...] [--clock=monotonic|thread] [--stat=median|best] [--json]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	double pairs_m = 100;
	int reps = 5, json = 0, nthr = 0, thr[16];
	static double ns[NR_MODULES][16][MAX_REPS];

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--pairs=", 8)) {
			pairs_m = atof(argv[i] + 8);
		} else if (!strncmp(argv[i], "--reps=", 7)) {
			reps = atoi(argv[i] + 7);
		} else if (!strncmp(argv[i], "--threads=", 10)) {
			char *s = argv[i] + 10, *end;

			while (*s && nthr < 16) {
				long v = strtol(s, &end, 10);
				if (end == s || v < 1 || v > MAX_THREADS)
					usage(argv[0]);
				thr[nthr++] = (int)v;
				s = *end == ',' ? end + 1 : end;
			}
		} else if (!strcmp(argv[i], "--clock=thread")) {
			bench_clock = CLOCK_THREAD_CPUTIME_ID;
		} else if (!strcmp(argv[i], "--clock=monotonic")) {
			bench_clock = CLOCK_MONOTONIC;
		} else if (!strcmp(argv[i], "--stat=best")) {
			stat_best = 1;
		} else if (!strcmp(argv[i], "--stat=median")) {
			stat_best = 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else {
			usage(argv[0]);
		}
	}
	if (pairs_m <= 0 || reps < 1 || reps > MAX_REPS)
		usage(argv[0]);
	if (!nthr) {
		thr[nthr++] = 1;
		thr[nthr++] = 2;
	}
	unsigned long pairs = (unsigned long)(pairs_m * 1e6);
	if (pairs < 1)
		pairs = 1;
	if (stat_best && pairs < CHUNK_PAIRS)
		pairs = CHUNK_PAIRS; /* at least one whole chunk */

	/* The direct words go to the first 31 domains set up: bare_srcu, the fillers. */
	int idx = ksync_srcu_read_lock(&bare_srcu);
	ksync_srcu_read_unlock(&bare_srcu, idx);
	for (int i = 0; i < FAR_DOMAIN - 2; i++)
		if (ksync_init_srcu_struct(&bare_filler[i]))
			return 1;
	if (ksync_init_srcu_struct(&bare_far))
		return 1;
	/* Warm-up: page in, spin the CPUs up, set up the domain and liburcu. */
	for (int m = 0; m < NR_MODULES; m++)
		run_once(m, 1, pairs / 10 + 1);
	for (int r = 0; r < reps; r++)
		for (int ti = 0; ti < nthr; ti++)
			for (int m = 0; m < NR_MODULES; m++)
				ns[m][ti][r] = run_once(m, thr[ti], pairs);

	double med[NR_MODULES][16];
	for (int m = 0; m < NR_MODULES; m++)
		for (int ti = 0; ti < nthr; ti++) {
			double s[MAX_REPS];
			memcpy(s, ns[m][ti], sizeof(double) * (size_t)reps);
			qsort(s, (size_t)reps, sizeof(double), cmp_double);
			if (stat_best)
				med[m][ti] = s[0];
			else
				med[m][ti] = reps % 2 ? s[reps / 2] : (s[reps / 2 - 1] + s[reps / 2]) / 2;
		}

	if (json) {
		printf("{\n  \"benchmark\": \"bare_read\",\n  \"pairs_per_thread\": %lu,\n  \"reps\": %d,\n"
		       "  \"stat\": \"%s\",\n",
		       pairs, reps, stat_best ? "best" : "median");
		printf("  \"results\": [\n");
		for (int ti = 0; ti < nthr; ti++)
			for (int m = 0; m < NR_MODULES; m++) {
				printf("    {\"module\": \"%s\", \"threads\": %d, \"ns_per_pair\": %.4f, \"reps_ns\": [",
				       module_name[m], thr[ti], med[m][ti]);
				for (int r = 0; r < reps; r++)
					printf("%s%.4f", r ? ", " : "", ns[m][ti][r]);
				printf("]}%s\n", ti == nthr - 1 && m == NR_MODULES - 1 ? "" : ",");
			}
		printf("  ],\n  \"ratios\": [\n");
		for (int ti = 0; ti < nthr; ti++)
			printf("    {\"threads\": %d, \"ksync_over_urcu_memb\": %.4f, "
			       "\"ksync_fast_over_urcu_memb\": %.4f, \"far_over_direct\": %.4f, "
			       "\"far_fast_over_direct_fast\": %.4f}%s\n",
			       thr[ti], med[0][ti] / med[URCU_MODULE][ti], med[1][ti] / med[URCU_MODULE][ti],
			       med[3][ti] / med[0][ti], med[4][ti] / med[1][ti], ti == nthr - 1 ? "" : ",");
		printf("  ]\n}\n");
	} else {
		if (stat_best)
			printf("read lock+unlock pair, bare C loop, %lu pairs per thread, fastest chunk of %lu over %d reps\n",
			       pairs, CHUNK_PAIRS, reps);
		else
			printf("read lock+unlock pair, bare C loop, %lu pairs per thread, median of %d\n", pairs, reps);
		printf("ns/pair: %8s %9s %9s %9s %9s %9s | %11s %11s %10s %10s\n", "threads", "classic",
		       "fast", "urcu", "far", "far_fast", "classic/urcu", "fast/urcu", "far/classic",
		       "farf/fast");
		for (int ti = 0; ti < nthr; ti++)
			printf("         %8d %9.3f %9.3f %9.3f %9.3f %9.3f | %10.2fx %10.2fx %9.2fx %9.2fx\n",
			       thr[ti], med[0][ti], med[1][ti], med[2][ti], med[3][ti], med[4][ti],
			       med[0][ti] / med[2][ti], med[1][ti] / med[2][ti], med[3][ti] / med[0][ti],
			       med[4][ti] / med[1][ti]);
	}
	return 0;
}
