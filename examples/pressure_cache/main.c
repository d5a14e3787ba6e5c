/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pressure_cache - a cache that lives inside a memory limit (issue 20's demo).
 *
 * Theory of operation. A key-value cache serves a Zipf request stream whose
 * working set (--want-mib, 256 MiB) is larger than its memory limit
 * (--limit-mib, 128 MiB), beside a batch job in the same process that
 * periodically grows a large block (--batch-mib) and frees it: the neighbour
 * whose memory the cache must yield. Four variants, one after the other,
 * each in a child process of its own, same stream, same seed:
 *
 *   fixed-high  the cache capped at the limit less the process's overhead
 *               (--overhead-mib): sized to the limit, forgetting the batch
 *               job; expect the kernel's OOM killer when the job grows;
 *   fixed-low   capped at limit - batch - overhead: what a careful user
 *               runs; safe, misses more;
 *   trim        fixed-high, plus malloc_trim(0) on PSI events (systemd's
 *               default reaction to memory pressure);
 *   ksync       no cap: the cache grows while memory is free, and a
 *               memcg-aware shrinker (ksync::shrinker over ksync::list_lru)
 *               gives memory back when the pressure reaction calls it: the
 *               monitor's rounds, and direct reclaim by the allocating
 *               threads (ksync_pressure_charge() on the cache's insert path
 *               and the batch job's growth; --no-direct: rounds only).
 *
 * As root, each child runs in a v1 memory cgroup with the limit (v2
 * memory.max where the controller is on v2) and a v2 group for its own PSI
 * (cgroup.c); the parent samples the groups every 10 ms (usage, PSI) and the
 * child's figures (a shared page block, pc.h), detects the OOM kill (the
 * child killed by SIGKILL, and the group's oom_kill count), reads the
 * group's failcnt and peak, and removes the groups. Where no group can be
 * made (not root, no controller, or a sanitizer build), it says so and runs
 * only the ksync variant, against a budget (the child's RSS against the
 * limit, on top of what it had at start).
 *
 * Values are mmap()ed one by one (child.c), so that freeing one gives its
 * pages back to the kernel at once; glibc's heap would keep them.
 *
 * --json FILE writes {"limit_bytes", "variants": {name: {...}}} with, per
 * variant, oom_killed, ops, ops_per_s (while it lived), hit_rate,
 * peak_usage_bytes, limit_hits, psi_some_us, pressure_events, scans,
 * objects_freed, event_to_scan_p99_ms and a per-second timeline (and
 * timeline_fine, every 100 ms, for the chart); the table
 * on stdout says whether the ksync variant met issue 20's targets.
 *
 * --workload scan swaps the Zipf stream for hot phases and one-pass scans
 * (workload.c; the JSON gains "workload" and, per variant, hot_hit_rate).
 * --workingset runs, instead of the variants, the workingset study
 * (workingset.c): per LRU flavour, the cache with and without shadow
 * entries on that workload; the JSON's "workingset" object has, per
 * flavour, hot_hit_rate_shadow, hot_hit_rate_no_shadow and the shadow
 * shrinker's nodes against its budget.
 *
 * --lru classic|mglru|both puts the variants' own cache (child.c) on a
 * ksync_lru of that flavour with a workingset on the monitor's registry;
 * --shadows / --no-shadows pick shadow entries on or off (neither: both).
 * Each variant then runs once per (flavour, shadows) configuration, in the
 * same cgroup limit; "variants" holds the first configuration's runs,
 * "runs" every run, and "workingset_real" per variant and flavour
 * hot_hit_rate_shadow and hot_hit_rate_no_shadow with the shadow store's
 * peak against its budget. --requests N and --no-cgroup make a run
 * deterministic (the fixed variants, no batch job: one thread, a seeded
 * stream) for the tests.
 */
#define _GNU_SOURCE
#include "cgroup.h"
#include "pc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct options {
	struct pc_params base;
	double limit_mib, want_mib, value_kib, batch_mib, overhead_mib, high_mib, low_mib;
	double timeline_s;
	const char *json;
	unsigned variants;   /* mask of 1 << enum pc_variant */
	bool force_budget;
	double hot_frac, hot_len_x, scan_len_x;   /* scan workload: 0 = the default */
	bool workingset;                          /* the workingset study instead of the variants */
	bool uniform;                             /* scan workload: uniform hot draws */
	uint64_t ws_requests;                     /* the study: requests per run */
	unsigned lru_mask;                        /* 1 << enum pc_lru: the LRUs to run */
	unsigned shadow_mask;                     /* 1: without shadows, 2: with */
	bool no_cgroup;                           /* every variant selected, no cgroup */
	bool no_direct;                           /* ksync: no direct reclaim on the insert path */
};

/* One configuration of the cache: an LRU, shadows on or off. */
struct config {
	enum pc_lru lru;
	bool shadows;
};

#define MAX_CONFIGS (PC_NR_LRUS * 2)

struct sample {
	double t;
	uint64_t cache, batch, usage, ops, hits;
	double psi_avg10;
};

struct result {
	bool ran, oom_killed, timed_out, clean;
	uint64_t ops, hits, evictions, trims, hot_ops, hot_hits;
	double lived_s, ops_per_s, hit_rate, hot_hit_rate;
	uint64_t peak, limit_hits, oom_kills, psi_some_us;
	uint64_t pressure_events, scans, objects_freed, scan_calls, scan_freed;
	uint64_t lat_samples, lib_p99_ns;
	double p50_ms, p99_ms, max_ms;
	uint64_t cap;
	struct config cfg;
	bool direct;
	uint64_t ws_refaults, ws_activations, shadow_nodes_peak, shadow_budget_at_peak, shadow_budget_max;
	uint64_t shadow_excess_max, shadow_samples, shadow_over_samples, shadow_nodes_end, shadow_nodes_freed;
	uint64_t shadow_entries_end, shadow_trims, shadow_node_bytes, direct_reclaims, direct_freed;
	char desc[1024];
	struct sample *tl, *fine;
	size_t ntl, nfine;
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pressure_cache [options]\n"
		"  --seconds S        serving time per variant (default 20)\n"
		"  --json FILE        write the figures as JSON\n"
		"  --variants LIST    comma-separated: fixed-high,fixed-low,trim,ksync (default all)\n"
		"  --limit-mib N      the memory limit (default 128)\n"
		"  --want-mib N       the working set the cache would like (default 256)\n"
		"  --value-kib N      one value, its own mmap (default 32)\n"
		"  --zipf S           Zipf exponent of the request stream (default 0.99)\n"
		"  --seed N           the stream's seed (default 20)\n"
		"  --fetch-us N       a miss's fetch costs at least N us of CPU (default 20)\n"
		"  --request-us N     every request costs at least N us of CPU (default 10)\n"
		"  --batch-mib N      the batch job's block (default 64)\n"
		"  --batch-first S    first batch after S seconds (default 3)\n"
		"  --batch-period S   one batch every S seconds (default 6)\n"
		"  --batch-grow S     the block is touched over S seconds (default 0.5)\n"
		"  --batch-hold S     then held S seconds (default 1)\n"
		"  --overhead-mib N   the process's own memory, for the caps (default 16)\n"
		"  --high-mib N       fixed-high's cap (default limit - overhead)\n"
		"  --low-mib N        fixed-low's cap (default limit - batch - overhead)\n"
		"  --budget           no cgroup: the ksync variant against a budget only\n"
		"  --monitor MODE     ksync's monitor: loop (in the serving loop, default) or thread\n"
		"  --timeline S       the timeline's step (default 1 s)\n"
		"  --workload W       zipf (default) or scan: hot phases over a hot set, then one-pass scans\n"
		"  --hot-frac F       scan: the hot set, a fraction of the limit in values (default 0.6)\n"
		"  --hot-len X        scan: requests per hot phase, X times the hot set (default 1)\n"
		"  --hot-order O      scan: cyclic (a pass over the hot set in order, default) or uniform\n"
		"  --scan-len X       scan: keys per scan, X times the limit in values (default 0.5)\n"
		"  --workingset       the workingset study instead of the variants: per LRU flavour\n"
		"                     (classic, mglru), the cache with and without shadow entries on\n"
		"                     the scan workload, a fixed capacity of the limit, the shadow\n"
		"                     shrinker under pressure rounds (no root needed)\n"
		"  --ws-requests N    the study: requests per run (default 2000000)\n"
		"  --lru L            the variants' cache: list (issue 20's list_lru, default), or a\n"
		"                     ksync_lru with workingset detection: classic, mglru or both\n"
		"  --shadows          classic/mglru: evictions leave shadow entries (with --no-shadows\n"
		"  --no-shadows       too, or neither: each configuration runs with and without)\n"
		"  --requests N       serve exactly N requests per run instead of --seconds\n"
		"  --no-direct        ksync: no direct reclaim on the insert path (the monitor's rounds only)\n"
		"  --no-cgroup        run the variants selected without a memory cgroup (ksync\n"
		"                     against the budget): with --requests and --batch-mib 0, a\n"
		"                     fixed variant's run is deterministic\n");
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' },   { "json", required_argument, NULL, 'j' },
		{ "variants", required_argument, NULL, 'v' },  { "limit-mib", required_argument, NULL, 'l' },
		{ "want-mib", required_argument, NULL, 'w' },  { "value-kib", required_argument, NULL, 'k' },
		{ "zipf", required_argument, NULL, 'z' },      { "seed", required_argument, NULL, 'S' },
		{ "batch-mib", required_argument, NULL, 'b' }, { "batch-first", required_argument, NULL, 'f' },
		{ "batch-period", required_argument, NULL, 'p' }, { "batch-grow", required_argument, NULL, 'g' },
		{ "batch-hold", required_argument, NULL, 'H' }, { "overhead-mib", required_argument, NULL, 'o' },
		{ "high-mib", required_argument, NULL, 'x' },  { "low-mib", required_argument, NULL, 'y' },
		{ "fetch-us", required_argument, NULL, 'F' },  { "request-us", required_argument, NULL, 'R' },
		{ "budget", no_argument, NULL, 'B' },          { "monitor", required_argument, NULL, 'M' },          { "timeline", required_argument, NULL, 'T' },
		{ "workload", required_argument, NULL, 'W' },  { "hot-frac", required_argument, NULL, 'a' },
		{ "hot-len", required_argument, NULL, 'c' },   { "scan-len", required_argument, NULL, 'd' },
		{ "hot-order", required_argument, NULL, 'O' },
		{ "workingset", no_argument, NULL, 'G' },      { "ws-requests", required_argument, NULL, 'r' },
		{ "lru", required_argument, NULL, 'L' },       { "shadows", no_argument, NULL, 'E' },
		{ "no-shadows", no_argument, NULL, 'N' },      { "requests", required_argument, NULL, 'Q' },
		{ "no-cgroup", no_argument, NULL, 'C' },       { "no-direct", no_argument, NULL, 'D' },       { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->base.seconds = 20;
	o->base.zipf_s = 0.99;
	o->base.seed = 20;
	o->base.fetch_us = 20;
	o->base.request_us = 10;
	o->base.reactor_in_loop = true;
	o->base.batch_first_s = 3;
	o->base.batch_period_s = 6;
	o->base.batch_grow_s = 0.5;
	o->base.batch_hold_s = 1;
	o->limit_mib = 128;
	o->want_mib = 256;
	o->value_kib = 32;
	o->batch_mib = 64;
	o->overhead_mib = 16;
	o->timeline_s = 1;
	o->variants = (1u << PC_NR_VARIANTS) - 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->base.seconds = atof(optarg); break;
		case 'j': o->json = optarg; break;
		case 'v': {
			char *list = strdup(optarg), *save, *tok;

			o->variants = 0;
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int i;

				for (i = 0; i < PC_NR_VARIANTS; i++)
					if (strcmp(tok, pc_variant_name[i]) == 0)
						o->variants |= 1u << i;
				for (i = 0; i < PC_NR_VARIANTS && strcmp(tok, pc_variant_name[i]); i++)
					;
				if (i == PC_NR_VARIANTS) {
					fprintf(stderr, "pressure_cache: unknown variant %s\n", tok);
					free(list);
					return -1;
				}
			}
			free(list);
			break;
		}
		case 'l': o->limit_mib = atof(optarg); break;
		case 'w': o->want_mib = atof(optarg); break;
		case 'k': o->value_kib = atof(optarg); break;
		case 'z': o->base.zipf_s = atof(optarg); break;
		case 'S': o->base.seed = strtoull(optarg, NULL, 0); break;
		case 'b': o->batch_mib = atof(optarg); break;
		case 'f': o->base.batch_first_s = atof(optarg); break;
		case 'p': o->base.batch_period_s = atof(optarg); break;
		case 'g': o->base.batch_grow_s = atof(optarg); break;
		case 'H': o->base.batch_hold_s = atof(optarg); break;
		case 'o': o->overhead_mib = atof(optarg); break;
		case 'x': o->high_mib = atof(optarg); break;
		case 'y': o->low_mib = atof(optarg); break;
		case 'F': o->base.fetch_us = atof(optarg); break;
		case 'R': o->base.request_us = atof(optarg); break;
		case 'B': o->force_budget = true; break;
		case 'M':
			if (strcmp(optarg, "loop") && strcmp(optarg, "thread")) {
				fprintf(stderr, "pressure_cache: --monitor loop|thread\n");
				return -1;
			}
			o->base.reactor_in_loop = strcmp(optarg, "loop") == 0;
			break;
		case 'T': o->timeline_s = atof(optarg); break;
		case 'W':
			if (strcmp(optarg, "zipf") && strcmp(optarg, "scan")) {
				fprintf(stderr, "pressure_cache: --workload zipf|scan\n");
				return -1;
			}
			o->base.workload = strcmp(optarg, "scan") == 0 ? PC_WL_SCAN : PC_WL_ZIPF;
			break;
		case 'a': o->hot_frac = atof(optarg); break;
		case 'c': o->hot_len_x = atof(optarg); break;
		case 'd': o->scan_len_x = atof(optarg); break;
		case 'O':
			if (strcmp(optarg, "cyclic") && strcmp(optarg, "uniform")) {
				fprintf(stderr, "pressure_cache: --hot-order cyclic|uniform\n");
				return -1;
			}
			o->uniform = strcmp(optarg, "uniform") == 0;
			break;
		case 'G': o->workingset = true; break;
		case 'r': o->ws_requests = strtoull(optarg, NULL, 0); break;
		case 'L':
			if (strcmp(optarg, "both") == 0) {
				o->lru_mask = 1u << PC_LRU_CLASSIC | 1u << PC_LRU_MGLRU;
				break;
			}
			for (int i = 0; i <= PC_NR_LRUS; i++) {
				if (i == PC_NR_LRUS) {
					fprintf(stderr, "pressure_cache: --lru list|classic|mglru|both\n");
					return -1;
				}
				if (strcmp(optarg, pc_lru_name[i]) == 0) {
					o->lru_mask = 1u << i;
					break;
				}
			}
			break;
		case 'E': o->shadow_mask |= 2; break;
		case 'N': o->shadow_mask |= 1; break;
		case 'Q': o->base.requests = strtoull(optarg, NULL, 0); break;
		case 'C': o->no_cgroup = true; break;
		case 'D': o->no_direct = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (o->base.seconds <= 0 || o->limit_mib < 8 || o->value_kib < 4 || o->want_mib < o->value_kib / 1024 ||
	    o->base.batch_period_s <= 0 || o->batch_mib < 0 || o->base.zipf_s <= 0 || !o->variants || o->timeline_s < 0.01) {
		fprintf(stderr, "pressure_cache: bad options\n");
		return -1;
	}
	if (!o->lru_mask)
		o->lru_mask = 1u << PC_LRU_LIST;
	if (o->lru_mask & (1u << PC_LRU_LIST)) {
		if (o->shadow_mask & 2) {
			fprintf(stderr, "pressure_cache: shadow entries need --lru classic|mglru|both\n");
			return -1;
		}
		o->shadow_mask = 1;
	} else if (!o->shadow_mask) {
		o->shadow_mask = 3;
	}
	o->base.limit_bytes = (uint64_t)(o->limit_mib * MIB);
	o->base.want_bytes = (uint64_t)(o->want_mib * MIB);
	o->base.value_bytes = ((size_t)(o->value_kib * KIB) + 4095) & ~(size_t)4095;
	o->base.nr_keys = (uint32_t)(o->base.want_bytes / o->base.value_bytes);
	o->base.batch_bytes = (uint64_t)o->batch_mib * MIB;
	if (!o->high_mib)
		o->high_mib = o->limit_mib - o->overhead_mib;
	if (!o->low_mib)
		o->low_mib = o->limit_mib - o->batch_mib - o->overhead_mib;
	if (o->low_mib < 1)
		o->low_mib = 1;
	/* the scan workload, in values: the hot set a fraction of the limit, the scan past it */
	if (o->workingset)
		o->base.workload = PC_WL_SCAN;
	if (!o->hot_frac)
		o->hot_frac = 0.6;
	if (!o->hot_len_x)
		o->hot_len_x = 1;
	if (!o->scan_len_x)
		o->scan_len_x = 0.5;
	o->base.hot_cyclic = !o->uniform;
	if (!o->ws_requests)
		o->ws_requests = 2000000;
	if (o->hot_frac <= 0 || o->hot_frac > 4 || o->hot_len_x <= 0 || o->scan_len_x < 0) {
		fprintf(stderr, "pressure_cache: bad scan workload options\n");
		return -1;
	}
	{
		double limit_values = (double)o->base.limit_bytes / (double)o->base.value_bytes;

		o->base.hot_keys = (uint32_t)(o->hot_frac * limit_values);
		if (!o->base.hot_keys)
			o->base.hot_keys = 1;
		o->base.hot_len = (uint64_t)(o->hot_len_x * o->base.hot_keys);
		o->base.scan_len = (uint64_t)(o->scan_len_x * limit_values);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* One variant                                                              */

static uint64_t proc_rss(pid_t pid)
{
	char path[64];
	unsigned long size = 0, res = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The chart's timeline (timeline_fine): every 100 ms. */
#define FINE_NS 100000000ULL

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void push_sample(struct sample **tl, size_t *n, const struct sample *s)
{
	struct sample *a = realloc(*tl, (*n + 1) * sizeof(*a));

	if (!a)
		return;
	*tl = a;
	a[(*n)++] = *s;
}

static int run_variant(const struct options *o, int cgv, enum pc_variant v, const struct config *cfg,
		       struct result *r)
{
	struct pc_params p = o->base;
	struct pc_shared *sh;
	struct pc_cgroup cg = { 0 };
	char name[96], why[512] = "";
	int go[2], status = 0;
	uint64_t psi0 = 0, psi1 = 0, t0, next_tl, next_fine, deadline, budget_peak = 0, budget_hits = 0;
	double avg10 = 0;
	bool budget = cgv == 0, over = false;
	struct rusage ru;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	p.variant = v;
	p.budget = budget;
	p.lru = cfg->lru;
	p.shadows = cfg->shadows;
	p.direct_reclaim = v == PC_KSYNC && !o->no_direct;
	r->direct = p.direct_reclaim;
	r->cfg = *cfg;
	p.cap_bytes = v == PC_FIXED_LOW ? (uint64_t)(o->low_mib * MIB)
		      : v == PC_KSYNC   ? 0
					: (uint64_t)(o->high_mib * MIB);
	r->cap = p.cap_bytes;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	memset(sh, 0, sizeof(*sh));   /* touched here: charged to the parent's group */
	if (!budget) {
		if (cfg->lru == PC_LRU_LIST)
			snprintf(name, sizeof(name), "ksync-pressure-cache-%d-%s", (int)getpid(), pc_variant_name[v]);
		else
			snprintf(name, sizeof(name), "ksync-pressure-cache-%d-%s-%s%s", (int)getpid(),
				 pc_variant_name[v], pc_lru_name[cfg->lru], cfg->shadows ? "-shadows" : "");
		if (pc_cgroup_create(&cg, cgv, name, p.limit_bytes, why, sizeof(why))) {
			fprintf(stderr, "pressure_cache: %s\n", why);
			munmap(sh, sizeof(*sh));
			return -EPERM;
		}
		if (cg.psi[0])
			snprintf(p.psi_path, sizeof(p.psi_path), "%s/memory.pressure", cg.psi);
	} else if (v == PC_TRIM) {
		snprintf(p.psi_path, sizeof(p.psi_path), "/proc/pressure/memory");
	}
	if (pipe2(go, O_CLOEXEC)) {
		pc_cgroup_remove(&cg);
		munmap(sh, sizeof(*sh));
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		pc_cgroup_remove(&cg);
		munmap(sh, sizeof(*sh));
		return -errno;
	}
	if (pid == 0) {
		char c;

		pc_cgroup_forget();
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(go[1]);
		/* allocate nothing before the parent has moved us into the groups */
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		close(go[0]);
		exit(pc_child_run(&p, sh));
	}
	close(go[0]);
	if (!budget && pc_cgroup_attach(&cg, pid)) {
		fprintf(stderr, "pressure_cache: cannot move the child into %s\n", cg.mem);
		kill(pid, SIGKILL);
		close(go[1]);
		waitpid(pid, NULL, 0);
		pc_cgroup_remove(&cg);
		munmap(sh, sizeof(*sh));
		return -EPERM;
	}
	pc_psi_read(budget ? NULL : cg.psi[0] ? cg.psi : NULL, &psi0, &avg10);
	t0 = pc_now_ns();
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	next_tl = t0 + (uint64_t)(o->timeline_s * 1e9);
	next_fine = t0 + FINE_NS;
	deadline = t0 + (uint64_t)((p.seconds + 20) * 1e9);
	for (;;) {
		pid_t w = wait4(pid, &status, WNOHANG, &ru);
		uint64_t now = pc_now_ns(), use;

		if (w == pid)
			break;
		if (got_signal || now > deadline) {
			r->timed_out = !got_signal;
			kill(pid, SIGKILL);
			wait4(pid, &status, 0, &ru);
			break;
		}
		if (budget) {
			uint64_t rss = proc_rss(pid), base = PC_LD(sh->baseline_rss);

			use = PC_LD(sh->start_ns) && rss > base ? rss - base : 0;
			if (use > budget_peak)
				budget_peak = use;
			if (use >= p.limit_bytes && !over)
				budget_hits++;
			over = use >= p.limit_bytes;
		} else {
			use = pc_cgroup_usage(&cg);
		}
		if (now >= next_fine || now >= next_tl) {
			struct sample s = {
				.t = (double)(now - t0) / 1e9,
				.cache = PC_LD(sh->cache_bytes),
				.batch = PC_LD(sh->batch_bytes),
				.usage = use,
				.ops = PC_LD(sh->ops),
				.hits = PC_LD(sh->hits),
			};
			uint64_t tot;

			pc_psi_read(budget ? NULL : cg.psi[0] ? cg.psi : NULL, &tot, &s.psi_avg10);
			if (now >= next_fine) {
				push_sample(&r->fine, &r->nfine, &s);
				next_fine += FINE_NS;
			}
			if (now >= next_tl) {
				push_sample(&r->tl, &r->ntl, &s);
				next_tl += (uint64_t)(o->timeline_s * 1e9);
			}
		}
		pc_sleep_ns(10000000);
	}
	uint64_t died = pc_now_ns();

	r->ran = true;
	r->clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE);
	pc_psi_read(budget ? NULL : cg.psi[0] ? cg.psi : NULL, &psi1, &avg10);
	r->psi_some_us = psi1 > psi0 ? psi1 - psi0 : 0;
	if (!budget) {
		r->oom_kills = pc_cgroup_oom_kills(&cg);
		r->peak = pc_cgroup_peak(&cg);
		r->limit_hits = pc_cgroup_limit_hits(&cg);
		r->oom_killed = !r->timed_out && !got_signal && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
		if (r->oom_kills)
			r->oom_killed = true;
		pc_cgroup_remove(&cg);
	} else {
		uint64_t hwm = (uint64_t)ru.ru_maxrss * KIB, base = PC_LD(sh->baseline_rss);

		r->peak = budget_peak;
		if (hwm > base && hwm - base > r->peak)
			r->peak = hwm - base;
		r->limit_hits = budget_hits;
	}
	r->ops = PC_LD(sh->ops);
	r->hits = PC_LD(sh->hits);
	r->evictions = PC_LD(sh->evictions);
	r->trims = PC_LD(sh->trims);
	{
		uint64_t s = PC_LD(sh->start_ns), e = PC_LD(sh->end_ns);

		if (!e)
			e = died;
		r->lived_s = s && e > s ? (double)(e - s) / 1e9 : 0;
	}
	r->ops_per_s = r->lived_s > 0 ? (double)r->ops / r->lived_s : 0;
	r->hit_rate = r->ops ? (double)r->hits / (double)r->ops : 0;
	r->hot_ops = PC_LD(sh->hot_ops);
	r->hot_hits = PC_LD(sh->hot_hits);
	r->hot_hit_rate = r->hot_ops ? (double)r->hot_hits / (double)r->hot_ops : 0;
	r->pressure_events = PC_LD(sh->pressure_events);
	r->scans = PC_LD(sh->scans);
	r->objects_freed = PC_LD(sh->objects_freed);
	r->scan_calls = PC_LD(sh->scan_calls);
	r->scan_freed = PC_LD(sh->scan_freed);
	r->lat_samples = PC_LD(sh->lat_samples);
	r->lib_p99_ns = PC_LD(sh->lib_p99_ns);
	if (r->lat_samples) {
		size_t n = r->lat_samples < PC_LAT_MAX ? r->lat_samples : PC_LAT_MAX;

		qsort(sh->lat_ns, n, sizeof(sh->lat_ns[0]), cmp_u64);
		r->p50_ms = (double)sh->lat_ns[(n - 1) / 2] / 1e6;
		r->p99_ms = (double)sh->lat_ns[(n * 99 + 99) / 100 - 1] / 1e6;
		r->max_ms = (double)sh->lat_ns[n - 1] / 1e6;
	}
	r->ws_refaults = PC_LD(sh->ws_refaults);
	r->ws_activations = PC_LD(sh->ws_activations);
	r->shadow_nodes_peak = PC_LD(sh->shadow_nodes_peak);
	r->shadow_budget_at_peak = PC_LD(sh->shadow_budget_at_peak);
	r->shadow_budget_max = PC_LD(sh->shadow_budget_max);
	r->shadow_excess_max = PC_LD(sh->shadow_excess_max);
	r->shadow_samples = PC_LD(sh->shadow_samples);
	r->shadow_over_samples = PC_LD(sh->shadow_over_samples);
	r->shadow_nodes_end = PC_LD(sh->shadow_nodes_end);
	r->shadow_nodes_freed = PC_LD(sh->shadow_nodes_freed);
	r->shadow_entries_end = PC_LD(sh->shadow_entries_end);
	r->shadow_trims = PC_LD(sh->shadow_trims);
	r->shadow_node_bytes = PC_LD(sh->shadow_node_bytes);
	r->direct_reclaims = PC_LD(sh->direct_reclaims);
	r->direct_freed = PC_LD(sh->direct_freed);
	snprintf(r->desc, sizeof(r->desc), "%s", sh->desc);
	munmap(sh, sizeof(*sh));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			continue;
		fputc(*s, f);
	}
	fputc('"', f);
}

static void write_timeline(FILE *f, const struct sample *tl, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n        {\"t_s\": %.2f, \"cache_bytes\": %llu, \"batch_bytes\": %llu, "
			   "\"usage_bytes\": %llu, \"psi_some_avg10\": %.2f, \"ops\": %llu, \"hits\": %llu}",
			i ? "," : "", tl[i].t, (unsigned long long)tl[i].cache, (unsigned long long)tl[i].batch,
			(unsigned long long)tl[i].usage, tl[i].psi_avg10, (unsigned long long)tl[i].ops,
			(unsigned long long)tl[i].hits);
}

/*
 * Run @r's workingset figures (its shadow store against its budget), JSON
 * members without braces: the same in the run's own object and in
 * "workingset_real".
 */
static void write_shadow_figures(FILE *f, const struct result *r)
{
	fprintf(f, "\"refaults\": %llu, \"activations\": %llu, \"shadow_nodes_peak\": %llu, "
		   "\"shadow_budget_at_peak\": %llu, \"shadow_budget_max\": %llu, \"shadow_excess_max\": %llu, "
		   "\"shadow_samples\": %llu, \"shadow_over_budget_samples\": %llu, \"shadow_nodes_end\": %llu, "
		   "\"shadow_nodes_freed\": %llu, \"shadow_bytes_peak\": %llu, \"shadow_budget_bytes_at_peak\": %llu",
		(unsigned long long)r->ws_refaults, (unsigned long long)r->ws_activations,
		(unsigned long long)r->shadow_nodes_peak, (unsigned long long)r->shadow_budget_at_peak,
		(unsigned long long)r->shadow_budget_max, (unsigned long long)r->shadow_excess_max,
		(unsigned long long)r->shadow_samples, (unsigned long long)r->shadow_over_samples,
		(unsigned long long)r->shadow_nodes_end, (unsigned long long)r->shadow_nodes_freed,
		(unsigned long long)(r->shadow_nodes_peak * r->shadow_node_bytes),
		(unsigned long long)(r->shadow_budget_at_peak * r->shadow_node_bytes));
}

/* One run's object (the keys issue 20's scripts read, then the LRU's and the shadows'). */
static void write_variant(FILE *f, const struct options *o, const struct result *r, const char *name)
{
	fprintf(f, "{");
	if (name)
		fprintf(f, "\"variant\": \"%s\", ", name);
	fprintf(f, "\"oom_killed\": %s, \"ops\": %llu, \"ops_per_s\": %.1f, "
		   "\"hit_rate\": %.4f, \"peak_usage_bytes\": %llu, \"limit_hits\": %llu, "
		   "\"psi_some_us\": %llu, \"pressure_events\": %llu, \"scans\": %llu, "
		   "\"objects_freed\": %llu, \"event_to_scan_p99_ms\": %.3f,\n      "
		   "\"event_to_scan_p50_ms\": %.3f, \"event_to_scan_max_ms\": %.3f, \"latency_samples\": %llu, "
		   "\"lived_s\": %.3f, \"clean_exit\": %s, \"cap_bytes\": %llu, \"evictions\": %llu, "
		   "\"trims\": %llu, \"scan_objects_calls\": %llu, \"scan_objects_freed\": %llu, "
		   "\"oom_kills\": %llu, \"monitor_latency_p99_ms\": %.3f,\n      \"lru\": \"%s\", \"shadows\": %s",
		r->oom_killed ? "true" : "false",
		(unsigned long long)r->ops, r->ops_per_s, r->hit_rate, (unsigned long long)r->peak,
		(unsigned long long)r->limit_hits, (unsigned long long)r->psi_some_us,
		(unsigned long long)r->pressure_events, (unsigned long long)r->scans,
		(unsigned long long)r->objects_freed, r->p99_ms, r->p50_ms, r->max_ms,
		(unsigned long long)r->lat_samples, r->lived_s, r->clean ? "true" : "false",
		(unsigned long long)r->cap, (unsigned long long)r->evictions, (unsigned long long)r->trims,
		(unsigned long long)r->scan_calls, (unsigned long long)r->scan_freed,
		(unsigned long long)r->oom_kills, (double)r->lib_p99_ns / 1e6, pc_lru_name[r->cfg.lru],
		r->cfg.shadows ? "true" : "false");
	if (r->cfg.lru != PC_LRU_LIST) {
		fprintf(f, ",\n      ");
		write_shadow_figures(f, r);
		fprintf(f, ", \"shadow_entries_end\": %llu, \"shadow_trims\": %llu, \"shadow_node_bytes\": %llu",
			(unsigned long long)r->shadow_entries_end, (unsigned long long)r->shadow_trims,
			(unsigned long long)r->shadow_node_bytes);
	}
	fprintf(f, ",\n      \"direct_reclaim\": %s, \"direct_reclaims\": %llu, \"direct_freed\": %llu, \"reaction\": ",
		r->direct ? "true" : "false", (unsigned long long)r->direct_reclaims, (unsigned long long)r->direct_freed);
	json_str(f, r->desc);
	if (o->base.workload == PC_WL_SCAN)
		fprintf(f, ",\n      \"hot_hit_rate\": %.4f, \"hot_ops\": %llu", r->hot_hit_rate,
			(unsigned long long)r->hot_ops);
	fprintf(f, ",\n      \"timeline\": [");
	write_timeline(f, r->tl, r->ntl);
	fprintf(f, "],\n      \"timeline_fine\": [");
	write_timeline(f, r->fine, r->nfine);
	fprintf(f, "]}");
}

/* The run of (@lru, @shadows) for @v, or NULL. */
static const struct result *find_run(const struct result (*res)[PC_NR_VARIANTS], int ncfg, int v, enum pc_lru lru,
				     bool shadows)
{
	for (int c = 0; c < ncfg; c++)
		if (res[c][v].ran && res[c][v].cfg.lru == lru && res[c][v].cfg.shadows == shadows)
			return &res[c][v];
	return NULL;
}

/* "workingset_real": per variant and flavour, the hot hit rates with and without shadows, in the real runs. */
static void write_ws_real(FILE *f, const struct result (*res)[PC_NR_VARIANTS], int ncfg)
{
	bool vfirst = true;

	fprintf(f, "  \"workingset_real\": {");
	for (int v = 0; v < PC_NR_VARIANTS; v++) {
		bool ffirst = true;

		for (int l = PC_LRU_CLASSIC; l < PC_NR_LRUS; l++) {
			const struct result *on = find_run(res, ncfg, v, (enum pc_lru)l, true);
			const struct result *off = find_run(res, ncfg, v, (enum pc_lru)l, false);

			if (!on || !off)
				continue;
			if (ffirst)
				fprintf(f, "%s\n    \"%s\": {", vfirst ? "" : ",", pc_variant_name[v]);
			fprintf(f, "%s\n      \"%s\": {\"hot_hit_rate_shadow\": %.4f, \"hot_hit_rate_no_shadow\": %.4f, "
				   "\"hit_rate_shadow\": %.4f, \"hit_rate_no_shadow\": %.4f, \"oom_killed_shadow\": %s, "
				   "\"oom_killed_no_shadow\": %s, \"ops_shadow\": %llu, \"ops_no_shadow\": %llu,\n        ",
				ffirst ? "" : ",", pc_lru_name[l], on->hot_hit_rate, off->hot_hit_rate, on->hit_rate,
				off->hit_rate, on->oom_killed ? "true" : "false", off->oom_killed ? "true" : "false",
				(unsigned long long)on->ops, (unsigned long long)off->ops);
			write_shadow_figures(f, on);
			fprintf(f, ", \"peak_usage_bytes_shadow\": %llu, \"peak_usage_bytes_no_shadow\": %llu}",
				(unsigned long long)on->peak, (unsigned long long)off->peak);
			ffirst = false;
		}
		if (!ffirst) {
			fprintf(f, "}");
			vfirst = false;
		}
	}
	fprintf(f, "\n  },\n");
}

static int write_json(const char *path, const struct options *o, int cgv, const char *why,
		      const struct result (*res)[PC_NR_VARIANTS], int ncfg, const struct pc_ws_study *ws)
{
	FILE *f = fopen(path, "w");
	bool first = true;

	if (!f) {
		fprintf(stderr, "pressure_cache: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"limit_bytes\": %llu,\n", (unsigned long long)o->base.limit_bytes);
	fprintf(f, "  \"mode\": \"%s\",\n  \"cgroup\": \"%s\",\n  \"why\": ", cgv ? "cgroup" : ws ? "workingset" : o->no_cgroup ? "no-cgroup" : "budget",
		cgv == 1 ? "v1" : cgv == 2 ? "v2" : "none");
	json_str(f, why);
	fprintf(f,
		",\n  \"seconds\": %g,\n  \"requests\": %llu,\n  \"params\": {\"want_bytes\": %llu, \"value_bytes\": %zu, \"keys\": %u, "
		"\"zipf_s\": %g, \"seed\": %llu, \"fetch_us\": %g, \"request_us\": %g, \"batch_bytes\": %llu, \"batch_first_s\": %g, "
		"\"batch_period_s\": %g, \"batch_grow_s\": %g, \"batch_hold_s\": %g, "
		"\"fixed_high_cap_bytes\": %llu, \"fixed_low_cap_bytes\": %llu, \"nproc\": %ld},\n",
		o->base.seconds, (unsigned long long)o->base.requests, (unsigned long long)o->base.want_bytes,
		o->base.value_bytes, o->base.nr_keys,
		o->base.zipf_s, (unsigned long long)o->base.seed, o->base.fetch_us, o->base.request_us,
		(unsigned long long)o->base.batch_bytes,
		o->base.batch_first_s, o->base.batch_period_s, o->base.batch_grow_s, o->base.batch_hold_s,
		(unsigned long long)(o->high_mib * MIB), (unsigned long long)(o->low_mib * MIB),
		sysconf(_SC_NPROCESSORS_ONLN));
	if (o->base.workload == PC_WL_SCAN)
		fprintf(f, "  \"workload\": {\"name\": \"scan\", \"hot_order\": \"%s\", \"hot_keys\": %u, \"hot_len\": %llu, \"scan_len\": %llu},\n",
			o->base.hot_cyclic ? "cyclic" : "uniform", o->base.hot_keys, (unsigned long long)o->base.hot_len, (unsigned long long)o->base.scan_len);
	if (ws)
		pc_ws_write_json(f, ws);
	if (!ws && !(o->lru_mask & (1u << PC_LRU_LIST))) {
		write_ws_real(f, res, ncfg);
		fprintf(f, "  \"runs\": [");
		for (int c = 0; c < ncfg; c++)
			for (int v = 0; v < PC_NR_VARIANTS; v++) {
				if (!res[c][v].ran)
					continue;
				fprintf(f, "%s\n    ", first ? "" : ",");
				write_variant(f, o, &res[c][v], pc_variant_name[v]);
				first = false;
			}
		fprintf(f, "\n  ],\n");
		first = true;
	}
	fprintf(f, "  \"variants\": {");
	for (int v = 0; v < PC_NR_VARIANTS; v++) {
		const struct result *r = &res[0][v];

		if (!r->ran)
			continue;
		fprintf(f, "%s\n    \"%s\": ", first ? "" : ",", pc_variant_name[v]);
		write_variant(f, o, r, NULL);
		first = false;
	}
	fprintf(f, "\n  }\n}\n");
	return fclose(f) ? -1 : 0;
}

static const char *yes(bool ok)
{
	return ok ? "met" : "NOT met";
}

static void print_table(const struct options *o, const struct result *res, bool budget)
{
	const struct result *k = &res[PC_KSYNC], *hi = &res[PC_FIXED_HIGH], *lo = &res[PC_FIXED_LOW],
			    *tr = &res[PC_TRIM];

	printf("\n%-10s %4s %9s %6s %9s %10s %9s %7s %7s %9s %8s\n", "variant", "oom", "ops/s", "hit%", "peak MiB",
	       "limit hits", "psi ms", "events", "scans", "freed", "p99 ms");
	for (int v = 0; v < PC_NR_VARIANTS; v++) {
		const struct result *r = &res[v];

		if (!r->ran)
			continue;
		printf("%-10s %4s %9.0f %6.2f %9.1f %10llu %9.1f %7llu %7llu %9llu %8.2f\n", pc_variant_name[v],
		       r->oom_killed ? "yes" : "no", r->ops_per_s, r->hit_rate * 100, (double)r->peak / MIB,
		       (unsigned long long)r->limit_hits, (double)r->psi_some_us / 1000,
		       (unsigned long long)r->pressure_events, (unsigned long long)r->scans,
		       (unsigned long long)r->objects_freed, r->p99_ms);
	}
	if (!k->ran)
		return;
	printf("\nksync against issue 20's targets%s:\n", budget ? " (budget path: only those that apply)" : "");
	printf("  never OOM-killed:                      %s\n", yes(!k->oom_killed));
	printf("  peak usage under the limit:            %s (%.1f of %.1f MiB)\n",
	       yes(k->peak < o->base.limit_bytes), (double)k->peak / MIB, (double)o->base.limit_bytes / MIB);
	if (lo->ran)
		printf("  miss rate <= 0.75x fixed-low's:        %s (%.4f vs %.4f)\n",
		       yes(1 - k->hit_rate <= 0.75 * (1 - lo->hit_rate)), 1 - k->hit_rate, 1 - lo->hit_rate);
	if (hi->ran)
		printf("  ops/s >= 0.9x fixed-high's:            %s (%.0f vs %.0f)\n",
		       yes(k->ops_per_s >= 0.9 * hi->ops_per_s), k->ops_per_s, hi->ops_per_s);
	if (tr->ran)
		printf("  limit hits <= 0.1x trim's:             %s (%llu vs %llu)\n",
		       yes((double)k->limit_hits <= 0.1 * (double)tr->limit_hits), (unsigned long long)k->limit_hits,
		       (unsigned long long)tr->limit_hits);
	printf("  event -> scan p99 <= 10 ms:            %s (%.3f ms, %llu events measured)\n",
	       yes(k->lat_samples && k->p99_ms <= 10), k->p99_ms, (unsigned long long)k->lat_samples);
	if (hi->ran)
		printf("  fixed-high OOM-killed or at the limit: %s\n",
		       yes(hi->oom_killed || hi->limit_hits > 0));
}

/* The runs of a ksync_lru cache: a line per run, then a line per variant and flavour (with / without shadows). */
static void print_lru_table(const struct result (*res)[PC_NR_VARIANTS], int ncfg)
{
	printf("\n%-10s %-7s %-7s %4s %8s %6s %6s %8s %6s %8s %8s %7s %7s %8s\n", "variant", "lru", "shadows", "oom",
	       "ops/s", "hit%", "hot%", "peak MiB", "l.hits", "refaults", "activ.", "nodes^", "budget", "direct");
	for (int c = 0; c < ncfg; c++)
		for (int v = 0; v < PC_NR_VARIANTS; v++) {
			const struct result *r = &res[c][v];

			if (!r->ran)
				continue;
			printf("%-10s %-7s %-7s %4s %8.0f %6.2f %6.2f %8.1f %6llu %8llu %8llu %7llu %7llu %8llu\n",
			       pc_variant_name[v], pc_lru_name[r->cfg.lru], r->cfg.shadows ? "on" : "off",
			       r->oom_killed ? "yes" : "no", r->ops_per_s, 100 * r->hit_rate, 100 * r->hot_hit_rate,
			       (double)r->peak / MIB, (unsigned long long)r->limit_hits,
			       (unsigned long long)r->ws_refaults, (unsigned long long)r->ws_activations,
			       (unsigned long long)r->shadow_nodes_peak, (unsigned long long)r->shadow_budget_at_peak,
			       (unsigned long long)r->direct_reclaims);
		}
	printf("(nodes^: shadow nodes at their peak, budget: the shadow shrinker's budget then, in nodes of %zu B)\n",
	       (size_t)(64 * sizeof(unsigned long)));
	for (int v = 0; v < PC_NR_VARIANTS; v++)
		for (int l = PC_LRU_CLASSIC; l < PC_NR_LRUS; l++) {
			const struct result *on = find_run(res, ncfg, v, (enum pc_lru)l, true);
			const struct result *off = find_run(res, ncfg, v, (enum pc_lru)l, false);

			if (!on || !off)
				continue;
			printf("%s, %s: hot-key hit rate %.2f %% with shadow entries, %.2f %% without%s%s "
			       "(shadow nodes peak %llu, budget %llu)\n",
			       pc_variant_name[v], pc_lru_name[l], 100 * on->hot_hit_rate, 100 * off->hot_hit_rate,
			       on->oom_killed ? "; OOM-killed with" : "", off->oom_killed ? "; OOM-killed without" : "",
			       (unsigned long long)on->shadow_nodes_peak, (unsigned long long)on->shadow_budget_at_peak);
		}
}

int main(int argc, char **argv)
{
	static struct result res[MAX_CONFIGS][PC_NR_VARIANTS];
	struct config cfgs[MAX_CONFIGS];
	int ncfg = 0;
	struct options o;
	struct sigaction sa;
	char why[512];
	int cgv, rc = 0;

	if (parse(argc, argv, &o))
		return 2;
	memset(res, 0, sizeof(res));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	atexit(pc_cgroup_remove_all);

	if (o.workingset) {
		/* the study: a fixed capacity, no cgroup, no child (workingset.c) */
		static struct pc_ws_study st;
		uint64_t cap = o.base.limit_bytes / o.base.value_bytes;

		printf("pressure_cache --workingset: capacity %llu values (%.0f MiB of %zu KiB), hot set %u keys (%s), "
		       "hot phases of %llu requests, scans of %llu keys, seed %llu\n",
		       (unsigned long long)cap, o.limit_mib, o.base.value_bytes / KIB, o.base.hot_keys,
		       o.base.hot_cyclic ? "a pass in order" : "uniform draws",
		       (unsigned long long)o.base.hot_len, (unsigned long long)o.base.scan_len,
		       (unsigned long long)o.base.seed);
		fflush(stdout);
		rc = pc_ws_study_run(&o.base, cap, o.ws_requests, &st) ? 1 : 0;
		pc_ws_print(&st);
		snprintf(why, sizeof(why), "--workingset: a fixed capacity, no memory cgroup");
		if (o.json && write_json(o.json, &o, 0, why, res, 0, &st))
			rc = 1;
		return rc;
	}
	for (int l = 0; l < PC_NR_LRUS; l++)
		for (int sh = 1; sh >= 0; sh--)
			if ((o.lru_mask & (1u << l)) && (o.shadow_mask & (1u << sh))) {
				cfgs[ncfg].lru = (enum pc_lru)l;
				cfgs[ncfg++].shadows = sh;
			}
	cgv = o.force_budget || o.no_cgroup ? 0 : pc_cgroup_detect(why, sizeof(why));
	if (o.force_budget || o.no_cgroup)
		snprintf(why, sizeof(why), o.no_cgroup ? "--no-cgroup" : "--budget");
	if (cgv) {
		/* a group that cannot be made after all: the budget path */
		struct pc_cgroup probe;
		char name[64], err[512];

		snprintf(name, sizeof(name), "ksync-pressure-cache-%d-probe", (int)getpid());
		if (pc_cgroup_create(&probe, cgv, name, o.base.limit_bytes, err, sizeof(err))) {
			snprintf(why, sizeof(why), "%s", err);
			cgv = 0;
		} else {
			pc_cgroup_remove(&probe);
		}
	}
	printf("pressure_cache: limit %.0f MiB, the cache would like %.0f MiB (%u values of %zu KiB, Zipf %.2f, "
	       "seed %llu, a request costs %.0f us, a miss %.0f us more); batch job %.0f MiB every %.1f s from %.1f s (grows %.2f s, held %.2f s); %.1f s per variant\n",
	       o.limit_mib, o.want_mib, o.base.nr_keys, o.base.value_bytes / KIB, o.base.zipf_s,
	       (unsigned long long)o.base.seed, o.base.request_us, o.base.fetch_us, o.batch_mib, o.base.batch_period_s, o.base.batch_first_s,
	       o.base.batch_grow_s, o.base.batch_hold_s, o.base.seconds);
	if (cgv) {
		printf("memory cgroup: %s; caps: fixed-high %.0f MiB, fixed-low %.0f MiB\n", why, o.high_mib, o.low_mib);
	} else if (o.no_cgroup) {
		printf("no memory cgroup (--no-cgroup): the fixed variants only capped, ksync against a budget of "
		       "%.0f MiB of RSS\n", o.limit_mib);
	} else {
		printf("no memory cgroup (%s): running only the ksync variant, against a budget of %.0f MiB of RSS\n",
		       why, o.limit_mib);
		o.variants &= 1u << PC_KSYNC;
		if (!o.variants)
			o.variants = 1u << PC_KSYNC;
	}
	for (int c = 0; c < ncfg && !got_signal; c++)
		for (int v = 0; v < PC_NR_VARIANTS && !got_signal; v++) {
			struct result *r = &res[c][v];
			char label[96];

			if (!(o.variants & (1u << v)))
				continue;
			if (cfgs[c].lru == PC_LRU_LIST)
				snprintf(label, sizeof(label), "%s", pc_variant_name[v]);
			else
				snprintf(label, sizeof(label), "%s (%s, shadows %s)", pc_variant_name[v],
					 pc_lru_name[cfgs[c].lru], cfgs[c].shadows ? "on" : "off");
			printf("running %s ...\n", label);
			fflush(stdout);
			int err = run_variant(&o, cgv, (enum pc_variant)v, &cfgs[c], r);

			if (err) {
				fprintf(stderr, "pressure_cache: %s: %s\n", label, strerror(-err));
				rc = 1;
				continue;
			}
			printf("  %s: %s%s\n", pc_variant_name[v], r->desc,
			       r->oom_killed ? " -- OOM-killed" : r->clean ? "" : " -- did not finish cleanly");
			/* a child that failed on its own (not the OOM killer's doing) fails the run */
			if (!r->oom_killed && !r->clean)
				rc = 1;
		}
	pc_cgroup_remove_all();
	if (got_signal) {
		fprintf(stderr, "pressure_cache: interrupted\n");
		return 130;
	}
	if (cfgs[0].lru == PC_LRU_LIST)
		print_table(&o, res[0], cgv == 0);
	else
		print_lru_table(res, ncfg);
	if (o.json && write_json(o.json, &o, cgv, why, res, ncfg, NULL))
		rc = 1;
	for (int c = 0; c < ncfg; c++)
		for (int v = 0; v < PC_NR_VARIANTS; v++) {
			free(res[c][v].tl);
			free(res[c][v].fine);
		}
	return rc;
}
