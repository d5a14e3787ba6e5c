/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reclaim_storm - the lockless shrinker series' scenario in one process.
 *
 * Thousands of memory groups (default 4000, as in the series), a memcg-aware
 * shrinker per "mount" (default 4000), reclaim threads that charge objects to
 * a group (the series' dd) and walk its shrinkers (per-group walks, plus a
 * global walk every --global-every group walks, as kswapd's root walks are
 * rare next to memcg-targeted reclaim in the series' scenario), and a mount/umount thread that
 * unregisters and registers shrinkers all the while. Two registries run the
 * same workload one after the other:
 *
 *   legacy    a global rwlock; walkers trylock and bail out when a writer
 *             holds or waits for it (mm/vmscan.c before the series);
 *   lockless  ksync::shrinker (SRCU walks, per-shrinker refcounts, the
 *             kernel's 6.7 design).
 *
 * Each registry runs an idle phase first (the mount thread alone) and then
 * the storm (mount thread + --threads reclaim threads; by default one fewer
 * than the CPUs this process may run on, at least one, so that every busy
 * thread has a CPU). The side-by-side table compares walks/s, the share of
 * the charged objects that reclaim scanned (the rest the mount thread threw
 * away with an umount, or was still charged at the end), register and
 * unregister latency, mount/umount ops/s (one op = one mount or one umount)
 * per second and per CPU-second of the mount thread, and walks lost to a
 * failed trylock; --json FILE writes the same figures.
 *
 * The targets compare what the registry controls on any machine: rates per
 * CPU-second of the threads that do the work (CLOCK_THREAD_CPUTIME_ID: the
 * reclaim threads' walks, the mount thread's ops), not per second of wall
 * time, which with more busy threads than CPUs (or other programs running)
 * measures the share of a CPU the scheduler gave them; and storm-vs-idle
 * latencies only
 * when every busy thread has a CPU (otherwise the line says "not judged").
 */
#define _GNU_SOURCE
#include "storm.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOUCH_OBJECTS 64   /* objects a reclaim thread charges per mount it touches */
#define TOUCH_ROOT 2       /* objects charged to the global (root) view per touch */

_Thread_local struct storm_thread_stats *storm_tls;

struct options {
	double seconds;      /* storm phase per registry */
	double idle_seconds; /* idle phase per registry */
	int groups;
	int shrinkers;
	int threads;
	int cpus;            /* CPUs this process may run on */
	int nodes;
	int global_every;    /* one global walk per this many group walks */
	const char *json;
	const char *only;    /* run one registry only */
	unsigned seed;
};

struct result {
	const char *name;
	double walks_per_s;
	double walks_per_cpu_s;   /* per CPU-second of the reclaim threads */
	double charged_per_s;     /* objects the reclaim threads charged (the "dd") */
	double reclaimed_share;   /* of those, the share reclaim's scans took */
	double mount_ops_per_cpu_s, mount_idle_ops_per_cpu_s; /* per CPU-second of the mount thread */
	double reg_p50, reg_p99, reg_max, unreg_p50, unreg_p99, unreg_max;
	double mount_ops_per_s;
	unsigned long failed_trylocks;
	double failed_per_s;
	double reg_idle_p50, reg_idle_p99, unreg_idle_p50, unreg_idle_p99;
	double mount_idle_ops_per_s;
	bool ran;
};

/* ------------------------------------------------------------------------ */
/* Histogram                                                                */

static unsigned hist_index(uint64_t ns)
{
	if (ns < HIST_SUB)
		return (unsigned)ns;
	unsigned p = 63u - (unsigned)__builtin_clzll(ns);      /* ns in [2^p, 2^(p+1)) */
	unsigned shift = p - 5;                                 /* HIST_SUB == 32 == 2^5 */
	unsigned idx = (p - 4) * HIST_SUB + (unsigned)((ns >> shift) - HIST_SUB);
	return idx < HIST_POW * HIST_SUB ? idx : HIST_POW * HIST_SUB - 1;
}

static double hist_value_ns(unsigned idx)
{
	if (idx < HIST_SUB)
		return idx;
	unsigned p = idx / HIST_SUB + 4, sub = idx % HIST_SUB;
	/* middle of the bucket */
	return ldexp(HIST_SUB + sub + 0.5, (int)p - 5);
}

void hist_add(struct storm_hist *h, uint64_t ns)
{
	h->b[hist_index(ns)]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

double hist_pct_us(const struct storm_hist *h, double pct)
{
	if (!h->count)
		return 0;
	uint64_t want = (uint64_t)ceil(pct / 100.0 * (double)h->count), seen = 0;
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < HIST_POW * HIST_SUB; i++) {
		seen += h->b[i];
		if (seen >= want)
			return fmin(hist_value_ns(i), (double)h->max_ns) / 1000.0;
	}
	return (double)h->max_ns / 1000.0;
}

double hist_max_us(const struct storm_hist *h)
{
	return (double)h->max_ns / 1000.0;
}

/* ------------------------------------------------------------------------ */
/* The workload's callbacks (shared by both registries)                     */

unsigned long storm_count_objects(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct storm_mount *m = s->private_data;
	long n;

	if (!sc->group)
		n = ksync_atomic_long_read(&m->root_objects);
	else if ((void *)sc->group == m->home)
		n = ksync_atomic_long_read(&m->objects);
	else
		return KSYNC_SHRINK_EMPTY;
	return n > 0 ? (unsigned long)n : KSYNC_SHRINK_EMPTY;
}

unsigned long storm_scan_objects(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct storm_mount *m = s->private_data;
	ksync_atomic_long_t *c = sc->group ? &m->objects : &m->root_objects;
	long have = ksync_atomic_long_read(c), take;

	do {
		if (have <= 0)
			return 0;
		take = have < (long)sc->nr_to_scan ? have : (long)sc->nr_to_scan;
	} while (!ksync_atomic_long_try_cmpxchg(c, &have, have - take));
	if (storm_tls)
		storm_tls->scanned += (unsigned long)take;
	return (unsigned long)take;
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */

struct run {
	const struct storm_registry_ops *ops;
	const struct options *opt;
	void *reg;
	void **groups;
	struct storm_mount *mounts;
	ksync_atomic_t stop;
	/* mount thread */
	struct storm_hist reg_hist, unreg_hist;
	unsigned long mount_ops;
	double mount_cpu_s; /* the mount thread's CPU time in the phase */
	unsigned mount_seed;
	int mount_failures;
};

struct reclaimer {
	pthread_t tid;
	struct run *run;
	unsigned seed;
	struct storm_thread_stats stats;
	double cpu_s; /* the thread's CPU time in the phase */
};

static unsigned xorshift(unsigned *s)
{
	unsigned x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *mount_thread(void *arg)
{
	struct run *run = arg;
	struct storm_thread_stats st = { 0 };
	int n = run->opt->shrinkers;
	double cpu0;

	pthread_setname_np(pthread_self(), "storm-mount");
	storm_tls = &st;
	cpu0 = thread_cpu_s();
	while (!ksync_atomic_read_acquire(&run->stop)) {
		struct storm_mount *m = &run->mounts[xorshift(&run->mount_seed) % (unsigned)n];
		uint64_t t0 = storm_now_ns();
		run->ops->umount(run->reg, m);
		uint64_t t1 = storm_now_ns();
		ksync_atomic_long_set(&m->objects, 0);
		ksync_atomic_long_set(&m->root_objects, 0);
		uint64_t t2 = storm_now_ns();
		int err = run->ops->mount(run->reg, m);
		uint64_t t3 = storm_now_ns();
		if (err) {
			run->mount_failures++;
			break;
		}
		hist_add(&run->unreg_hist, t1 - t0);
		hist_add(&run->reg_hist, t3 - t2);
		run->mount_ops += 2;
	}
	run->mount_cpu_s = thread_cpu_s() - cpu0;
	storm_tls = NULL;
	return NULL;
}

static void *reclaim_thread(void *arg)
{
	struct reclaimer *rc = arg;
	struct run *run = rc->run;
	const struct options *opt = run->opt;
	unsigned long iter = 0;
	int priority = KSYNC_DEF_PRIORITY;

	double cpu0;

	pthread_setname_np(pthread_self(), "storm-reclaim");
	storm_tls = &rc->stats;
	cpu0 = thread_cpu_s();
	while (!ksync_atomic_read_acquire(&run->stop)) {
		int gi = (int)(xorshift(&rc->seed) % (unsigned)opt->groups);
		int nid = opt->nodes > 1 ? (int)(iter % (unsigned long)opt->nodes) : 0;
		void *g = run->groups[gi];

		/* "dd": charge objects to the mounts of group gi, note them in its map. */
		for (int i = gi; i < opt->shrinkers; i += opt->groups) {
			struct storm_mount *m = &run->mounts[i];
			int id = ksync_atomic_read(&m->id);

			if (id < 0)
				continue;
			ksync_atomic_long_add(TOUCH_OBJECTS, &m->objects);
			ksync_atomic_long_add(TOUCH_ROOT, &m->root_objects);
			rc->stats.charged += TOUCH_OBJECTS + TOUCH_ROOT;
			run->ops->set_bit(run->reg, g, nid, id);
		}
		run->ops->shrink(run->reg, nid, g, priority);
		if (++iter % (unsigned long)opt->global_every == 0)
			run->ops->shrink(run->reg, nid, NULL, priority);
		/* Rising pressure, as reclaim's priority loop: 12 down to 0, again. */
		priority = priority ? priority - 1 : KSYNC_DEF_PRIORITY;
	}
	rc->cpu_s = thread_cpu_s() - cpu0;
	storm_tls = NULL;
	return NULL;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static double now_s(void)
{
	return (double)storm_now_ns() * 1e-9;
}

/* One phase: the mount thread, and @threads reclaim threads, for @secs. */
static void phase(struct run *run, int threads, double secs, struct result *res, bool idle)
{
	struct reclaimer *rc = calloc((size_t)(threads ? threads : 1), sizeof(*rc));
	pthread_t mt;

	memset(&run->reg_hist, 0, sizeof(run->reg_hist));
	memset(&run->unreg_hist, 0, sizeof(run->unreg_hist));
	run->mount_ops = 0;
	ksync_atomic_set(&run->stop, 0);
	for (int t = 0; t < threads; t++) {
		rc[t].run = run;
		rc[t].seed = run->opt->seed * 7919u + (unsigned)t * 104729u + 1u;
		pthread_create(&rc[t].tid, NULL, reclaim_thread, &rc[t]);
	}
	double t0 = now_s();
	pthread_create(&mt, NULL, mount_thread, run);
	sleep_s(secs);
	ksync_atomic_set_release(&run->stop, 1);
	pthread_join(mt, NULL);
	double el = now_s() - t0;
	unsigned long walks = 0, scanned = 0, charged = 0, failed = 0;
	double reclaim_cpu_s = 0;
	double per_cpu_s = run->mount_cpu_s > 0 ? (double)run->mount_ops / run->mount_cpu_s : 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(rc[t].tid, NULL);
		walks += rc[t].stats.walks;
		scanned += rc[t].stats.scanned;
		charged += rc[t].stats.charged;
		reclaim_cpu_s += rc[t].cpu_s;
		failed += rc[t].stats.failed_trylocks;
	}
	if (idle) {
		res->reg_idle_p50 = hist_pct_us(&run->reg_hist, 50);
		res->reg_idle_p99 = hist_pct_us(&run->reg_hist, 99);
		res->unreg_idle_p50 = hist_pct_us(&run->unreg_hist, 50);
		res->unreg_idle_p99 = hist_pct_us(&run->unreg_hist, 99);
		res->mount_idle_ops_per_s = (double)run->mount_ops / el;
		res->mount_idle_ops_per_cpu_s = per_cpu_s;
	} else {
		res->walks_per_s = (double)walks / el;
		res->walks_per_cpu_s = reclaim_cpu_s > 0 ? (double)walks / reclaim_cpu_s : 0;
		res->charged_per_s = (double)charged / el;
		res->reclaimed_share = charged ? (double)scanned / (double)charged : 0;
		res->mount_ops_per_cpu_s = per_cpu_s;
		res->failed_trylocks = failed;
		res->failed_per_s = (double)failed / el;
		res->reg_p50 = hist_pct_us(&run->reg_hist, 50);
		res->reg_p99 = hist_pct_us(&run->reg_hist, 99);
		res->reg_max = hist_max_us(&run->reg_hist);
		res->unreg_p50 = hist_pct_us(&run->unreg_hist, 50);
		res->unreg_p99 = hist_pct_us(&run->unreg_hist, 99);
		res->unreg_max = hist_max_us(&run->unreg_hist);
		res->mount_ops_per_s = (double)run->mount_ops / el;
	}
	free(rc);
}

static int run_registry(const struct storm_registry_ops *ops, const struct options *opt,
			struct result *res)
{
	struct run *run = calloc(1, sizeof(*run));
	int ret = 0;

	res->name = ops->name;
	run->ops = ops;
	run->opt = opt;
	run->mount_seed = opt->seed * 31u + 17u;
	run->reg = ops->create(opt->nodes, opt->shrinkers + 64);
	run->groups = calloc((size_t)opt->groups, sizeof(void *));
	/* Cache-line aligned fields: aligned memory (written by different threads). */
	run->mounts = aligned_alloc(KSYNC_CACHELINE_SIZE, (size_t)opt->shrinkers * sizeof(*run->mounts));
	if (run->mounts)
		memset(run->mounts, 0, (size_t)opt->shrinkers * sizeof(*run->mounts));
	if (!run->reg || !run->groups || !run->mounts) {
		fprintf(stderr, "reclaim_storm: %s: setup failed\n", ops->name);
		return -1;
	}
	double t0 = now_s();
	for (int g = 0; g < opt->groups; g++) {
		run->groups[g] = ops->group_create(run->reg);
		if (!run->groups[g]) {
			fprintf(stderr, "reclaim_storm: %s: group_create failed\n", ops->name);
			return -1;
		}
	}
	for (int i = 0; i < opt->shrinkers; i++) {
		struct storm_mount *m = &run->mounts[i];
		m->idx = i;
		m->home_group = i % opt->groups;
		m->home = run->groups[m->home_group];
		ksync_atomic_set(&m->id, -1);
		if (ops->mount(run->reg, m)) {
			fprintf(stderr, "reclaim_storm: %s: mount failed\n", ops->name);
			return -1;
		}
	}
	fprintf(stderr, "reclaim_storm: %s: %d groups, %d shrinkers set up in %.2f s\n", ops->name,
		opt->groups, opt->shrinkers, now_s() - t0);

	/* Warm-up (not recorded): caches, the allocator and the SRCU helper settle first. */
	phase(run, 0, 0.25, res, true);
	phase(run, 0, opt->idle_seconds, res, true);
	phase(run, opt->threads, opt->seconds, res, false);
	if (run->mount_failures) {
		fprintf(stderr, "reclaim_storm: %s: a mount failed during the run\n", ops->name);
		ret = -1;
	}

	for (int i = 0; i < opt->shrinkers; i++)
		if (run->mounts[i].handle)
			ops->umount(run->reg, &run->mounts[i]);
	for (int g = opt->groups - 1; g >= 0; g--)
		ops->group_destroy(run->reg, run->groups[g]);
	ops->destroy(run->reg);
	free(run->groups);
	free(run->mounts);
	free(run);
	res->ran = true;
	return ret;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */

static void row(const char *label, const char *fmt, double a, double b, bool ratio)
{
	char sa[32], sb[32];

	snprintf(sa, sizeof(sa), fmt, a);
	snprintf(sb, sizeof(sb), fmt, b);
	if (ratio && a > 0)
		printf("  %-30s %14s %14s %9.2fx\n", label, sa, sb, b / a);
	else
		printf("  %-30s %14s %14s\n", label, sa, sb);
}

static void print_table(const struct result *l, const struct result *n)
{
	printf("\n  %-30s %14s %14s %10s\n", "", "legacy", "lockless", "lockless/");
	printf("  %-30s %14s %14s %10s\n", "", "(rwlock)", "(ksync)", "legacy");
	row("walks/s", "%.0f", l->walks_per_s, n->walks_per_s, true);
	row("  ... per reclaim CPU-s", "%.0f", l->walks_per_cpu_s, n->walks_per_cpu_s, true);
	row("objects charged/s", "%.0f", l->charged_per_s, n->charged_per_s, true);
	row("  ... % reclaim scanned", "%.1f %%", 100 * l->reclaimed_share, 100 * n->reclaimed_share, true);
	row("walks lost to failed trylock", "%.0f", (double)l->failed_trylocks,
	    (double)n->failed_trylocks, false);
	row("  ... per second", "%.0f", l->failed_per_s, n->failed_per_s, false);
	row("mount/umount ops/s (storm)", "%.0f", l->mount_ops_per_s, n->mount_ops_per_s, true);
	row("mount/umount ops/s (idle)", "%.0f", l->mount_idle_ops_per_s, n->mount_idle_ops_per_s, true);
	row("  ... per mount CPU-s (storm)", "%.0f", l->mount_ops_per_cpu_s, n->mount_ops_per_cpu_s, true);
	row("  ... per mount CPU-s (idle)", "%.0f", l->mount_idle_ops_per_cpu_s, n->mount_idle_ops_per_cpu_s, true);
	row("register p50 us (storm)", "%.2f", l->reg_p50, n->reg_p50, false);
	row("register p99 us (storm)", "%.2f", l->reg_p99, n->reg_p99, false);
	row("register max us (storm)", "%.1f", l->reg_max, n->reg_max, false);
	row("register p50 us (idle)", "%.2f", l->reg_idle_p50, n->reg_idle_p50, false);
	row("register p99 us (idle)", "%.2f", l->reg_idle_p99, n->reg_idle_p99, false);
	row("unregister p50 us (storm)", "%.2f", l->unreg_p50, n->unreg_p50, false);
	row("unregister p99 us (storm)", "%.2f", l->unreg_p99, n->unreg_p99, false);
	row("unregister max us (storm)", "%.1f", l->unreg_max, n->unreg_max, false);
	row("unregister p50 us (idle)", "%.2f", l->unreg_idle_p50, n->unreg_idle_p50, false);
	row("unregister p99 us (idle)", "%.2f", l->unreg_idle_p99, n->unreg_idle_p99, false);
}

/* One target line: what it compares, the figure, the goal, the verdict. */
static void target(const char *what, const char *fig, const char *goal, const char *verdict,
		   const char *extra)
{
	printf("    %-52s %8s  %-8s %s%s\n", what, fig, goal, verdict, extra);
}

static void print_targets(const struct result *l, const struct result *n, const struct options *opt)
{
	const char *ok = "met", *no = "MISSED";
	/* The storm's busy threads: the reclaim threads and the mount thread. */
	bool fits = opt->threads + 1 <= opt->cpus;
	char fig[32], extra[96], not_judged[96];
	double walk_ratio = l->walks_per_cpu_s > 0 ? n->walks_per_cpu_s / l->walks_per_cpu_s : INFINITY;
	double mount_ratio = n->mount_idle_ops_per_cpu_s > 0 ?
		n->mount_ops_per_cpu_s / n->mount_idle_ops_per_cpu_s : 0;
	double unreg_ratio = n->unreg_idle_p50 > 0 ? n->unreg_p50 / n->unreg_idle_p50 : 0;
	double reg_ratio = n->reg_idle_p50 > 0 ? n->reg_p50 / n->reg_idle_p50 : 0;

	snprintf(not_judged, sizeof(not_judged), "not judged (%d busy threads on %d CPUs)",
		 opt->threads + 1, opt->cpus);
	printf("\n  targets (ksync's lockless registry; %d reclaim thread%s + the mount thread on %d CPU%s):\n",
	       opt->threads, opt->threads == 1 ? "" : "s", opt->cpus, opt->cpus == 1 ? "" : "s");
	snprintf(fig, sizeof(fig), "%.2fx", walk_ratio);
	target("walks per reclaim-thread CPU-second, ksync vs legacy", fig, "(>= 1.5x)", walk_ratio >= 1.5 ? ok : no, "");
	snprintf(fig, sizeof(fig), "%lu", n->failed_trylocks);
	target("walks lost to a failed trylock, ksync", fig, "(== 0)", n->failed_trylocks == 0 ? ok : no, "");
	snprintf(fig, sizeof(fig), "%.2fx", mount_ratio);
	target("mount ops per mount-thread CPU-second, storm vs idle", fig, "(>= 0.5x)",
	       mount_ratio >= 0.5 ? ok : no, "");
	snprintf(fig, sizeof(fig), "%.2fx", unreg_ratio);
	snprintf(extra, sizeof(extra), "   p99 %.2f us", n->unreg_p99);
	target("unregister p50 latency, storm vs idle", fig, "(<= 2x)",
	       fits ? (unreg_ratio <= 2.0 ? ok : no) : not_judged, extra);
	snprintf(fig, sizeof(fig), "%.2fx", reg_ratio);
	snprintf(extra, sizeof(extra), "   p99 %.2f us", n->reg_p99);
	target("register p50 latency, storm vs idle", fig, "(<= 2x)",
	       fits ? (reg_ratio <= 2.0 ? ok : no) : not_judged, extra);
	printf("  legacy for comparison: mount ops per mount-thread CPU-second storm vs idle %.2fx, "
	       "%.0f failed trylocks/s;\n  charged objects reclaim scanned: legacy %.1f %%, ksync %.1f %%\n",
	       l->mount_idle_ops_per_cpu_s > 0 ? l->mount_ops_per_cpu_s / l->mount_idle_ops_per_cpu_s : 0,
	       l->failed_per_s, 100 * l->reclaimed_share, 100 * n->reclaimed_share);
}

static void json_obj(FILE *f, const struct result *r)
{
	fprintf(f, "{\"walks_per_s\": %.1f, \"walks_per_cpu_s\": %.1f, \"charged_per_s\": %.1f, \"reclaimed_share\": %.4f, "
		   "\"register_p50_us\": %.3f, \"register_p99_us\": %.3f, "
		   "\"unregister_p50_us\": %.3f, \"unregister_p99_us\": %.3f, "
		   "\"mount_ops_per_s\": %.1f, \"failed_trylocks\": %lu, "
		   "\"register_idle_p50_us\": %.3f, \"register_idle_p99_us\": %.3f, "
		   "\"unregister_idle_p50_us\": %.3f, \"unregister_idle_p99_us\": %.3f, "
		   "\"mount_idle_ops_per_s\": %.1f, \"mount_ops_per_cpu_s\": %.1f, "
		   "\"mount_idle_ops_per_cpu_s\": %.1f}",
		r->walks_per_s, r->walks_per_cpu_s, r->charged_per_s, r->reclaimed_share, r->reg_p50, r->reg_p99, r->unreg_p50, r->unreg_p99,
		r->mount_ops_per_s, r->failed_trylocks, r->reg_idle_p50, r->reg_idle_p99,
		r->unreg_idle_p50, r->unreg_idle_p99, r->mount_idle_ops_per_s, r->mount_ops_per_cpu_s,
		r->mount_idle_ops_per_cpu_s);
}

static int write_json(const char *path, const struct result *l, const struct result *n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "reclaim_storm: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\"legacy\": ");
	json_obj(f, l);
	fprintf(f, ",\n \"lockless\": ");
	json_obj(f, n);
	fprintf(f, "}\n");
	return fclose(f) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: reclaim_storm [options]\n"
		"  --seconds S       storm phase per registry (default 8)\n"
		"  --idle-seconds S  idle phase per registry, mount thread alone (default 2)\n"
		"  --groups N        memory groups (default 4000)\n"
		"  --shrinkers N     mounts, one memcg-aware shrinker each (default 4000)\n"
		"  --threads N       reclaim threads (default: the CPUs this process may\n"
		"                    run on, less one for the mount thread; at least 1)\n"
		"  --nodes N         nodes (default 1)\n"
		"  --global-every N  one global walk per N group walks (default 1024)\n"
		"  --only NAME       run only 'legacy' or 'lockless'\n"
		"  --seed N          workload seed (default 1)\n"
		"  --json FILE       write {\"legacy\": {...}, \"lockless\": {...}}\n");
}

int main(int argc, char **argv)
{
	struct options opt = { .seconds = 8, .idle_seconds = 2, .groups = 4000, .shrinkers = 4000,
			       .threads = -1, .nodes = 1, .global_every = 1024, .seed = 1 };
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "idle-seconds", required_argument, NULL, 'i' },
		{ "groups", required_argument, NULL, 'g' },
		{ "shrinkers", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "global-every", required_argument, NULL, 'G' },
		{ "only", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt.seconds = atof(optarg); break;
		case 'i': opt.idle_seconds = atof(optarg); break;
		case 'g': opt.groups = atoi(optarg); break;
		case 'n': opt.shrinkers = atoi(optarg); break;
		case 't': opt.threads = atoi(optarg); break;
		case 'N': opt.nodes = atoi(optarg); break;
		case 'G': opt.global_every = atoi(optarg); break;
		case 'o': opt.only = optarg; break;
		case 'r': opt.seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'j': opt.json = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	cpu_set_t cpus;

	opt.cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
	if (opt.cpus < 1)
		opt.cpus = 1;
	if (opt.threads == -1)
		opt.threads = opt.cpus > 1 ? opt.cpus - 1 : 1;
	if (opt.seconds <= 0 || opt.idle_seconds <= 0 || opt.groups < 1 || opt.shrinkers < 1 ||
	    opt.threads < 0 || opt.threads > 256 || opt.nodes < 1 || opt.global_every < 1 ||
	    opt.nodes > KSYNC_SHRINKER_MAX_NODES || opt.seed == 0 ||
	    (opt.only && strcmp(opt.only, "legacy") && strcmp(opt.only, "lockless"))) {
		usage(stderr);
		return 2;
	}

	printf("reclaim_storm: %d groups, %d shrinkers, %d reclaim thread%s, %d node%s, "
	       "%.1f s idle + %.1f s storm per registry\n",
	       opt.groups, opt.shrinkers, opt.threads, opt.threads == 1 ? "" : "s", opt.nodes,
	       opt.nodes == 1 ? "" : "s", opt.idle_seconds, opt.seconds);
	fflush(stdout);

	struct result legacy = { .name = "legacy" }, lockless = { .name = "lockless" };
	int err = 0;
	if (!opt.only || !strcmp(opt.only, "legacy"))
		err |= run_registry(&storm_legacy_ops, &opt, &legacy);
	if (!opt.only || !strcmp(opt.only, "lockless"))
		err |= run_registry(&storm_lockless_ops, &opt, &lockless);
	if (err)
		return 1;

	print_table(&legacy, &lockless);
	if (legacy.ran && lockless.ran)
		print_targets(&legacy, &lockless, &opt);
	if (opt.json && write_json(opt.json, &legacy, &lockless))
		return 1;
	return 0;
}
