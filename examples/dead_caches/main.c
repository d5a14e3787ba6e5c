/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dead_caches - the kernel's per-group object cache scenarios, in one run,
 * beside the kernel's published figures.
 *
 * Theory of operation. The kernel accounted slab objects to memory cgroups
 * in two ways, one after the other (docs/objcache.md, issue 21):
 *
 *   A           a child cache per (cache, group); on offline the group's
 *               children are deactivated and destroy themselves with their
 *               last object (2015) - but each live object's slab pins its
 *               child cache, and the child pins its group: one long-lived
 *               object keeps a dead group in memory (2019: 1,574 dying
 *               cgroups after 6 days on Facebook's web hosts);
 *   A-reparent  the same, with the dead children handed to the parent group
 *               on offline (Linux 5.3): the dead caches stay, the groups go;
 *   B           one cache for all groups, a charge handle per object, bytes
 *               charged through a per-thread stock (Linux 5.9+).
 *
 * ksync's object cache (<ksync/objcache.h>) implements A and B behind one
 * API; designs.c maps the four caches this program compares (A,
 * A-reparent, B and an unaccounted one) onto it. Each scenario runs on a
 * fresh memory-group set, one design after the other, and reads the
 * figures from the library's counters and from the groups' own lifecycle:
 * a memgroup client of the set counts offlines (its offline hook) and
 * releases (its release hook), so "dying groups" is exactly the kernel's
 * notion, groups offlined and not yet freed, whatever pins them.
 *
 *   rounds       --rounds rounds (2000) of {create a group under a parent,
 *                allocate one long-lived object charged to it and
 *                --short-lived (100) short-lived ones, free those, offline
 *                the group}: dying_groups and dead_caches; then every
 *                long-lived object is freed: dead_caches_after_free (the
 *                self-destruction: must be 0) and dying_groups_after_free;
 *   utilisation  --util-groups groups (1000) each holding 1-10 objects
 *                (a fixed pseudo-random draw, the same for every design):
 *                live object bytes over the bytes of the slabs held;
 *   teardown     --teardown groups (100,000) each leaving one object in a
 *                cache and going offline (A: 100,000 dead caches), then
 *                teardown_s: every object freed and the cache destroyed
 *                (each dead cache destroys itself; the destroy waits for
 *                them), against the kernel's "half a day" of 2017; the
 *                fastest of --teardown-reps (3) runs, each in a fresh
 *                process (a one-shot figure on a shared machine);
 *   alloc_free   a 64-byte alloc+free pair charged to one online group,
 *                --pairs pairs a repetition, the designs interleaved within
 *                each of --reps repetitions, the fastest repetition of each
 *                kept (the machine is shared: the minimum is the least
 *                disturbed); "unaccounted" is the same pair charged to
 *                nobody (kernel 2023: 2.84x, then 1.98x of unaccounted).
 *                alloc_free_cpu_ns is the same in the thread's CPU time
 *                (CLOCK_THREAD_CPUTIME_ID), which leaves out the time other
 *                jobs held the CPU: on a shared machine, the closer figure
 *                to a quiet machine's wall time;
 *   stock        design B, one thread alternating among 8 groups, one
 *                group per pair (g0 g1 ... g7 g0 ...), against the same loop
 *                charging one group, with a 1-slot and a 5-slot stock:
 *                stock_loss_8_groups = 1 - (pairs/s with 8) / (pairs/s with
 *                1) (kernel 2026: -67.7 % with one slot, hence five); and
 *                the same with 4 groups (stock_loss_4_groups: fewer groups
 *                than slots), to tell a stock that thrashes from one that is
 *                slow on every charge. The *_cpu keys: the same losses
 *                from the thread's CPU time. The loops run in chunks of at
 *                most 50,000 pairs (a few ms), the 1-, 8- and 4-group
 *                chunks back to back in each round, and a loss is the
 *                median over the rounds of the loss within a round: other
 *                jobs' load on a shared machine comes and goes between
 *                rounds, not between the chunks compared (a minimum per
 *                loop over whole runs compared loops timed seconds apart);
 *                stock_ns is the fastest chunk of each loop.
 *
 * Every scenario (per design) runs in a child process of its own, its
 * figures written to memory shared with the parent: a scenario starts from a
 * fresh process whatever the one before left (address-space mappings
 * included: 100,000 dead caches are 100,000 slabs), and a crash or an
 * allocation failure is reported against the scenario it happened in.
 *
 * The table goes to stdout; --json FILE writes
 * {"designs": {"A": {...}, "A-reparent": {...}, "B": {...}},
 *  "unaccounted": {...}, "run": {...}} (keys in docs/objcache.md). The
 * program measures and reports; it asserts no target (the table marks each
 * one met or missed), and exits non-zero only when something failed to run.
 */
#define _GNU_SOURCE
#include "dead_caches.h"

#include <ksync/memgroup.h>

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct {
	long rounds, short_lived, util_groups, teardown, pairs;
	int reps, teardown_reps;
	const char *json;
	unsigned long seed;
	const char *only; /* run this scenario only */
} opt = { 2000, 100, 1000, 100000, 1000000, 11, 3, NULL, 12345, NULL };

/*
 * Failures of the scenario running now (in its own process): the first few
 * are printed, the rest counted; the parent sees the count in shared memory.
 */
static long *failures;

static void fail(const char *what, const char *design)
{
	if (__atomic_fetch_add(failures, 1, __ATOMIC_RELAXED) < 5)
		fprintf(stderr, "dead_caches: %s failed (%s)\n", what, design);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t xorshift64s(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* ------------------------------------------------------------------------ */
/* Dying groups: a client of the set that counts offlines and releases.     */

static long offlined, released;

static int counter_online(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)g, (void)slot, (void)priv;
	return 0;
}

static void counter_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)g, (void)slot, (void)priv;
	__atomic_fetch_add(&offlined, 1, __ATOMIC_RELAXED);
}

static void counter_release(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)slot, (void)priv;
	/* Only groups that went offline are counted as dying (a failed create releases too). */
	if (ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
		__atomic_fetch_add(&released, 1, __ATOMIC_RELAXED);
}

static const struct ksync_memgroup_client counter_client = {
	.name = "dead_caches_counter",
	.online = counter_online,
	.offline = counter_offline,
	.release = counter_release,
	/* Last to see an offline, first to see a release: nothing else is pending then. */
	.order = KSYNC_MEMGROUP_ORDER_STATS + 1,
};

static long dying_now(void)
{
	return __atomic_load_n(&offlined, __ATOMIC_RELAXED) - __atomic_load_n(&released, __ATOMIC_RELAXED);
}

/* A fresh set with the counter registered, and a top-level parent group. */
struct env {
	struct ksync_memgroup_set *set;
	struct ksync_memgroup *parent;
	int slot;
};

static bool env_init(struct env *e)
{
	offlined = released = 0;
	e->parent = NULL;
	e->slot = -1;
	e->set = ksync_memgroup_set_create();
	if (!e->set)
		return false;
	e->slot = ksync_memgroup_client_register(e->set, &counter_client, NULL);
	e->parent = e->slot >= 0 ? ksync_memgroup_create(e->set, NULL) : NULL;
	return e->parent != NULL;
}

/* Take the parent offline: the last A cache of a set is destroyed after every group. */
static void env_offline(struct env *e)
{
	if (e->parent && ksync_memgroup_offline(e->parent) != 0)
		fail("parent offline", "-");
	e->parent = NULL;
}

static void env_fini(struct env *e)
{
	if (!e->set)
		return;
	env_offline(e);
	if (e->slot >= 0)
		ksync_memgroup_client_unregister(e->set, e->slot);
	if (ksync_memgroup_set_destroy(e->set) != 0)
		fail("memgroup set destroy", "-");
}

/* ------------------------------------------------------------------------ */
/* Results                                                                  */

struct result {
	long dying_groups, dead_caches, dead_caches_after_free, dying_groups_after_free;
	double utilisation;
	unsigned long util_objects, util_slabs;
	double teardown_s, offline_s;
	double teardown_free_s; /* of teardown_s, the frees (self-destruction included); the rest waits */
	long teardown_caches; /* child caches alive when the teardown started */
	double alloc_free_ns, alloc_free_cpu_ns;
	double stock_ns[2][3], stock_cpu_ns[2][3]; /* [slots1, slots5][1 group, 8 groups, 4 groups] */
	double stock_loss[2], stock_loss4[2], stock_loss_cpu[2], stock_loss4_cpu[2];
};

/* In memory shared with the scenarios' processes (main()). */
static struct result *res;

/* ------------------------------------------------------------------------ */
/* Scenario 1: rounds of {create, 1 long-lived + N short-lived, offline}.   */

static void scenario_rounds(enum dc_design d)
{
	const char *name = dc_design_name(d);
	struct env e = { 0 };
	struct dc_cache *c = NULL;
	void **longs = calloc((size_t)opt.rounds, sizeof(void *));
	void **shorts = calloc((size_t)opt.short_lived, sizeof(void *));
	struct dc_usage u;

	if (!longs || !shorts || !env_init(&e) || !(c = dc_create(e.set, d))) {
		fail("rounds: setup", name);
		goto out;
	}
	for (long i = 0; i < opt.rounds; i++) {
		struct ksync_memgroup *g = ksync_memgroup_create(e.set, e.parent);

		if (!g) {
			fail("rounds: group create", name);
			break;
		}
		/*
		 * Half the short-lived objects, the long-lived one, the other
		 * half: a job's allocations around the one that outlives it.
		 */
		long half = opt.short_lived / 2;
		for (long j = 0; j < half; j++)
			shorts[j] = dc_alloc(c, g);
		longs[i] = dc_alloc(c, g);
		for (long j = half; j < opt.short_lived; j++)
			shorts[j] = dc_alloc(c, g);
		for (long j = 0; j < opt.short_lived; j++)
			if (shorts[j])
				dc_free(c, shorts[j]);
			else
				fail("rounds: short-lived alloc", name);
		if (!longs[i])
			fail("rounds: long-lived alloc", name);
		if (ksync_memgroup_offline(g) != 0)
			fail("rounds: offline", name);
	}
	dc_settle(c);
	dc_usage(c, &u);
	res[d].dying_groups = dying_now();
	res[d].dead_caches = (long)u.dead;

	for (long i = 0; i < opt.rounds; i++)
		if (longs[i])
			dc_free(c, longs[i]);
	dc_settle(c);
	dc_usage(c, &u);
	res[d].dead_caches_after_free = (long)u.dead;
	res[d].dying_groups_after_free = dying_now();
	env_offline(&e);
	dc_settle(c);
	if (dc_destroy(c) != 0)
		fail("rounds: cache destroy", name);
	c = NULL;
out:
	if (c)
		dc_destroy(c);
	env_fini(&e);
	free(longs);
	free(shorts);
}

/* ------------------------------------------------------------------------ */
/* Scenario 2: utilisation with many small groups.                          */

static void scenario_utilisation(enum dc_design d)
{
	const char *name = dc_design_name(d);
	struct env e = { 0 };
	struct dc_cache *c = NULL;
	struct ksync_memgroup **groups = calloc((size_t)opt.util_groups, sizeof(*groups));
	void **objs = calloc((size_t)opt.util_groups * 10, sizeof(void *));
	long n = 0;
	uint64_t rng = opt.seed * 0x9e3779b97f4a7c15ULL | 1;
	struct dc_usage u;

	if (!groups || !objs || !env_init(&e) || !(c = dc_create(e.set, d))) {
		fail("utilisation: setup", name);
		goto out;
	}
	for (long i = 0; i < opt.util_groups; i++) {
		long k = 1 + (long)(xorshift64s(&rng) % 10);

		groups[i] = ksync_memgroup_create(e.set, e.parent);
		if (!groups[i]) {
			fail("utilisation: group create", name);
			break;
		}
		for (long j = 0; j < k; j++) {
			void *p = dc_alloc(c, d == DC_UNACCOUNTED ? NULL : groups[i]);

			if (p)
				objs[n++] = p;
			else
				fail("utilisation: alloc", name);
		}
	}
	dc_settle(c);
	dc_usage(c, &u);
	res[d].util_objects = u.objects;
	res[d].util_slabs = u.slabs;
	res[d].utilisation = u.slab_bytes ? (double)u.objects * DC_OBJ_SIZE / (double)u.slab_bytes : 0;
	for (long i = 0; i < n; i++)
		dc_free(c, objs[i]);
	for (long i = 0; i < opt.util_groups; i++)
		if (groups[i])
			ksync_memgroup_offline(groups[i]);
	env_offline(&e);
	dc_settle(c);
	if (dc_destroy(c) != 0)
		fail("utilisation: cache destroy", name);
	c = NULL;
out:
	if (c)
		dc_destroy(c);
	env_fini(&e);
	free(groups);
	free(objs);
}

/* ------------------------------------------------------------------------ */
/* Scenario 3: teardown of many dead caches.                                */

static void scenario_teardown(enum dc_design d)
{
	const char *name = dc_design_name(d);
	struct env e = { 0 };
	struct dc_cache *c = NULL;
	void **objs = calloc((size_t)opt.teardown, sizeof(void *));
	struct dc_usage u;
	double offline_s = 0;

	if (!objs || !env_init(&e) || !(c = dc_create(e.set, d))) {
		fail("teardown: setup", name);
		goto out;
	}
	for (long i = 0; i < opt.teardown; i++) {
		struct ksync_memgroup *g = ksync_memgroup_create(e.set, e.parent);

		if (!g) {
			fail("teardown: group create", name);
			break;
		}
		objs[i] = dc_alloc(c, g);
		if (!objs[i])
			fail("teardown: alloc", name);
		double t0 = now();
		if (ksync_memgroup_offline(g) != 0)
			fail("teardown: offline", name);
		offline_s += now() - t0;
	}
	dc_settle(c);
	dc_usage(c, &u);
	long caches = (long)u.caches;

	/* The groups are all offline; the parent too, so that nothing is left once the caches go. */
	env_offline(&e);
	double t0 = now();
	for (long i = 0; i < opt.teardown; i++)
		if (objs[i])
			dc_free(c, objs[i]);
	double t1 = now();
	dc_settle(c);
	int rc = dc_destroy(c);
	double t2 = now();
	/* The fastest of the --teardown-reps processes is kept, with its own split. */
	if (res[d].teardown_s <= 0 || t2 - t0 < res[d].teardown_s) {
		res[d].teardown_s = t2 - t0;
		res[d].teardown_free_s = t1 - t0;
		res[d].offline_s = offline_s;
		res[d].teardown_caches = caches;
	}
	c = NULL;
	if (rc != 0)
		fail("teardown: cache destroy", name);
out:
	if (c)
		dc_destroy(c);
	env_fini(&e);
	free(objs);
}

/* ------------------------------------------------------------------------ */
/* Scenario 4: alloc+free pairs, every design in the same repetitions.      */

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * ns per pair of @pairs pairs, each charged to groups[i % ngroups] (a power
 * of two), in wall-clock time; *@cpu_ns the same in the thread's CPU time,
 * which leaves out the time other jobs held the CPU.
 */
static double time_pairs(struct dc_cache *c, struct ksync_memgroup **groups, int ngroups, long pairs,
			 double *cpu_ns)
{
	double c0 = thread_cpu(), t0 = now();

	*cpu_ns = -1;

	if (ngroups == 1) {
		struct ksync_memgroup *g = groups[0];
		for (long i = 0; i < pairs; i++) {
			void *p = dc_alloc(c, g);
			if (!p)
				return -1;
			dc_free(c, p);
		}
	} else {
		for (long i = 0; i < pairs; i++) {
			void *p = dc_alloc(c, groups[i & (ngroups - 1)]);
			if (!p)
				return -1;
			dc_free(c, p);
		}
	}
	double t1 = now();
	*cpu_ns = (thread_cpu() - c0) * 1e9 / (double)pairs;
	return (t1 - t0) * 1e9 / (double)pairs;
}

/* The stock loops' chunk (pairs) and the most rounds of them. */
#define STOCK_CHUNK 50000L
#define STOCK_MAX_ROUNDS 1000L

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @n values (sorted in place). */
static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void keep_min(double *best, double v)
{
	if (v >= 0 && (*best <= 0 || v < *best))
		*best = v;
}

static void scenario_alloc_free(enum dc_design unused)
{
	(void)unused;
	struct env e = { 0 };
	struct dc_cache *c[DC_NR_DESIGNS] = { 0 };
	struct ksync_memgroup *g = NULL;

	if (!env_init(&e) || !(g = ksync_memgroup_create(e.set, e.parent))) {
		fail("alloc_free: setup", "-");
		goto out;
	}
	for (int d = 0; d < DC_NR_DESIGNS; d++)
		if (!(c[d] = dc_create(e.set, (enum dc_design)d)))
			fail("alloc_free: cache create", dc_design_name((enum dc_design)d));
	/* Warm up: child caches created, magazines and stocks filled. */
	for (int d = 0; d < DC_NR_DESIGNS; d++)
		if (c[d]) {
			struct ksync_memgroup *gg = d == DC_UNACCOUNTED ? NULL : g;
			double cpu;
			time_pairs(c[d], &gg, 1, 1000, &cpu);
			dc_settle(c[d]);
			time_pairs(c[d], &gg, 1, opt.pairs / 10 + 1, &cpu);
		}
	for (int r = 0; r < opt.reps; r++)
		for (int d = 0; d < DC_NR_DESIGNS; d++)
			if (c[d]) {
				struct ksync_memgroup *gg = d == DC_UNACCOUNTED ? NULL : g;
				double cpu;
				keep_min(&res[d].alloc_free_ns, time_pairs(c[d], &gg, 1, opt.pairs, &cpu));
				keep_min(&res[d].alloc_free_cpu_ns, cpu);
			}
out:
	if (g)
		ksync_memgroup_offline(g);
	env_offline(&e);
	for (int d = 0; d < DC_NR_DESIGNS; d++)
		if (c[d]) {
			dc_settle(c[d]);
			if (dc_destroy(c[d]) != 0)
				fail("alloc_free: cache destroy", dc_design_name((enum dc_design)d));
		}
	env_fini(&e);
}

/* ------------------------------------------------------------------------ */
/* Scenario 5: the stock, 1 vs 5 slots, one thread among 8 groups.          */

static void scenario_stock(enum dc_design unused)
{
	(void)unused;
	static const int slots[2] = { 1, 5 };
	struct env e = { 0 };
	struct ksync_memgroup *g[8] = { 0 };
	struct dc_cache *c = NULL;
	struct result *r = &res[DC_B];

	if (!env_init(&e) || !(c = dc_create(e.set, DC_B))) {
		fail("stock: setup", "B");
		goto out;
	}
	for (int i = 0; i < 8; i++)
		if (!(g[i] = ksync_memgroup_create(e.set, e.parent)))
			fail("stock: group create", "B");
	if (*failures)
		goto out;
	/* The stock's size is process-wide: set it before each timed loop. */
	for (int s = 0; s < 2; s++) {
		dc_set_stock_slots(slots[s]);
		double cpu;
		time_pairs(c, g, 8, opt.pairs / 10 + 8, &cpu);
		time_pairs(c, g, 1, opt.pairs / 10 + 1, &cpu);
	}
	{
		static const int ngroups[3] = { 1, 8, 4 };
		long chunk = opt.pairs < STOCK_CHUNK ? opt.pairs : STOCK_CHUNK;
		long rounds = opt.pairs / chunk * opt.reps;
		double *loss = calloc((size_t)(8 * (rounds > 0 ? rounds : 1)), sizeof(*loss));

		if (rounds > STOCK_MAX_ROUNDS)
			rounds = STOCK_MAX_ROUNDS;
		if (!loss || rounds < 1) {
			free(loss);
			fail("stock: rounds", "B");
			goto out;
		}
		/* loss[(s * 4 + which) * rounds + round]: which = 8 groups, 4 groups, then their CPU forms */
		for (long rd = 0; rd < rounds; rd++)
			for (int s = 0; s < 2; s++) {
				double ns[3], cpu[3];

				dc_set_stock_slots(slots[s]);
				for (int k = 0; k < 3; k++) {
					ns[k] = time_pairs(c, g, ngroups[k], chunk, &cpu[k]);
					keep_min(&r->stock_ns[s][k], ns[k]);
					keep_min(&r->stock_cpu_ns[s][k], cpu[k]);
				}
				loss[(s * 4 + 0) * rounds + rd] = ns[1] > 0 ? 1.0 - ns[0] / ns[1] : -1;
				loss[(s * 4 + 1) * rounds + rd] = ns[2] > 0 ? 1.0 - ns[0] / ns[2] : -1;
				loss[(s * 4 + 2) * rounds + rd] = cpu[1] > 0 ? 1.0 - cpu[0] / cpu[1] : -1;
				loss[(s * 4 + 3) * rounds + rd] = cpu[2] > 0 ? 1.0 - cpu[0] / cpu[2] : -1;
			}
		for (int s = 0; s < 2; s++) {
			r->stock_loss[s] = median(&loss[(s * 4 + 0) * rounds], rounds);
			r->stock_loss4[s] = median(&loss[(s * 4 + 1) * rounds], rounds);
			r->stock_loss_cpu[s] = median(&loss[(s * 4 + 2) * rounds], rounds);
			r->stock_loss4_cpu[s] = median(&loss[(s * 4 + 3) * rounds], rounds);
		}
		free(loss);
	}
out:
	dc_set_stock_slots(5);
	for (int i = 0; i < 8; i++)
		if (g[i])
			ksync_memgroup_offline(g[i]);
	env_offline(&e);
	if (c) {
		dc_settle(c);
		if (dc_destroy(c) != 0)
			fail("stock: cache destroy", "B");
	}
	env_fini(&e);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */

static const char *mark(bool met)
{
	return met ? "met" : "MISSED";
}

static void print_table(void)
{
	struct result *a = &res[DC_A], *ar = &res[DC_A_REPARENT], *b = &res[DC_B], *n = &res[DC_UNACCOUNTED];
	double ratio[3];

	for (int d = 0; d < 3; d++)
		ratio[d] = n->alloc_free_ns > 0 ? res[d].alloc_free_ns / n->alloc_free_ns : 0;
	printf("\n%-34s | %-42s | %10s | %10s | %10s | %s\n", "figure", "kernel", "A", "A-reparent", "B",
	       "target");
	printf("%.*s\n", 140, "-----------------------------------------------------------------------"
			       "-----------------------------------------------------------------------");
	printf("%-34s | %-42s | %10ld | %10ld | %10ld | A>=1000 %s, A-rep<=100 %s, B<=16 %s\n",
	       "dying_groups", "39 -> 1,574 (6 days); 23 -> 55 reparent", a->dying_groups,
	       ar->dying_groups, b->dying_groups, mark(a->dying_groups >= 1000),
	       mark(ar->dying_groups <= 100), mark(b->dying_groups <= 16));
	printf("%-34s | %-42s | %10ld | %10ld | %10ld |\n", "dead_caches", "one per group and cache",
	       a->dead_caches, ar->dead_caches, b->dead_caches);
	printf("%-34s | %-42s | %10ld | %10ld | %10ld | A, A-rep 0: %s, %s\n", "dead_caches_after_free",
	       "0 (self-destruction, 2015)", a->dead_caches_after_free, ar->dead_caches_after_free,
	       b->dead_caches_after_free, mark(a->dead_caches_after_free == 0),
	       mark(ar->dead_caches_after_free == 0));
	printf("%-34s | %-42s | %10ld | %10ld | %10ld |\n", "dying_groups_after_free", "-",
	       a->dying_groups_after_free, ar->dying_groups_after_free, b->dying_groups_after_free);
	printf("%-34s | %-42s | %10.3f | %10.3f | %10.3f | B>=0.9 %s, A<B %s (unaccounted %.3f)\n",
	       "utilisation", "0.45-0.65 per-group; high 0.9s without", a->utilisation, ar->utilisation,
	       b->utilisation, mark(b->utilisation >= 0.9),
	       mark(a->utilisation < b->utilisation && ar->utilisation < b->utilisation), n->utilisation);
	printf("%-34s | %-42s | %10.3f | %10.3f | %10.3f | <1 s %s\n", "teardown_s", "\"half a day\" (2017)",
	       a->teardown_s, ar->teardown_s, b->teardown_s,
	       mark(a->teardown_s < 1 && ar->teardown_s < 1 && b->teardown_s < 1));
	printf("%-34s | %-42s | %10.3f | %10.3f | %10.3f |\n", "  of which the frees", "-", a->teardown_free_s,
	       ar->teardown_free_s, b->teardown_free_s);
	printf("%-34s | %-42s | %10ld | %10ld | %10ld | %ld wanted\n", "teardown_caches (caches torn down)",
	       "\"hundreds of thousands\"", a->teardown_caches, ar->teardown_caches, b->teardown_caches,
	       opt.teardown);
	printf("%-34s | %-42s | %10.3f | %10.3f | %10.3f |\n", "offline_s (all offlines)", "-", a->offline_s,
	       ar->offline_s, b->offline_s);
	printf("%-34s | %-42s | %10.1f | %10.1f | %10.1f | unaccounted %.1f ns\n", "alloc_free_ns", "-",
	       a->alloc_free_ns, ar->alloc_free_ns, b->alloc_free_ns, n->alloc_free_ns);
	printf("%-34s | %-42s | %9.2fx | %9.2fx | %9.2fx | B<=1.6x %s\n", "  / unaccounted",
	       "2.84x -> 1.98x (2023)", ratio[0], ratio[1], ratio[2], mark(ratio[2] > 0 && ratio[2] <= 1.6));
	printf("%-34s | %-42s | %10.1f | %10.1f | %10.1f | unaccounted %.1f ns\n", "alloc_free_cpu_ns (thread CPU)",
	       "-", a->alloc_free_cpu_ns, ar->alloc_free_cpu_ns, b->alloc_free_cpu_ns, n->alloc_free_cpu_ns);
	double un_cpu = n->alloc_free_cpu_ns > 0 ? n->alloc_free_cpu_ns : 1e300;
	printf("%-34s | %-42s | %9.2fx | %9.2fx | %9.2fx |\n", "  / unaccounted", "-",
	       a->alloc_free_cpu_ns / un_cpu, ar->alloc_free_cpu_ns / un_cpu, b->alloc_free_cpu_ns / un_cpu);
	printf("%-34s | %-42s | %10s | %10s | %9.1f%% | -\n", "stock_loss_8_groups slots1", "-67.7% (2026)",
	       "-", "-", 100 * b->stock_loss[0]);
	printf("%-34s | %-42s | %10s | %10s | %9.1f%% | <=10%% %s\n", "stock_loss_8_groups slots5",
	       "the 2026 fix", "-", "-", 100 * b->stock_loss[1], mark(b->stock_loss[1] <= 0.10));
	printf("%-34s | %-42s | %10s | %10s | %9.1f%% |\n", "stock_loss_4_groups slots1", "-", "-", "-",
	       100 * b->stock_loss4[0]);
	printf("%-34s | %-42s | %10s | %10s | %9.1f%% |\n", "stock_loss_4_groups slots5", "-", "-", "-",
	       100 * b->stock_loss4[1]);
	printf("%-34s | %-42s | %10s | %10s | %4.0f%%, %3.0f%% |\n", "  thread CPU, 8 groups: 1, 5 slots", "-",
	       "-", "-", 100 * b->stock_loss_cpu[0], 100 * b->stock_loss_cpu[1]);
	printf("%-34s | %-42s | %10s | %10s | %4.0f%%, %3.0f%% |\n", "  thread CPU, 4 groups: 1, 5 slots", "-",
	       "-", "-", 100 * b->stock_loss4_cpu[0], 100 * b->stock_loss4_cpu[1]);
	printf("  (stock ns/pair with 1, 8, 4 groups: slots1 %.1f, %.1f, %.1f; slots5 %.1f, %.1f, %.1f)\n",
	       b->stock_ns[0][0], b->stock_ns[0][1], b->stock_ns[0][2], b->stock_ns[1][0], b->stock_ns[1][1],
	       b->stock_ns[1][2]);
}

static void json_design(FILE *f, enum dc_design d, bool last)
{
	struct result *r = &res[d];
	double un = res[DC_UNACCOUNTED].alloc_free_ns, un_cpu = res[DC_UNACCOUNTED].alloc_free_cpu_ns;

	fprintf(f,
		"    \"%s\": {\"dying_groups\": %ld, \"dead_caches\": %ld, \"dead_caches_after_free\": %ld, "
		"\"dying_groups_after_free\": %ld, \"utilisation\": %.4f, \"utilisation_objects\": %lu, "
		"\"utilisation_slabs\": %lu, \"teardown_s\": %.4f, \"teardown_caches\": %ld, "
		"\"teardown_free_s\": %.4f, \"offline_s\": %.4f, \"alloc_free_ns\": %.2f, "
		"\"alloc_free_vs_unaccounted\": %.3f, \"alloc_free_cpu_ns\": %.2f, "
		"\"alloc_free_cpu_vs_unaccounted\": %.3f",
		dc_design_name(d), r->dying_groups, r->dead_caches, r->dead_caches_after_free,
		r->dying_groups_after_free, r->utilisation, r->util_objects, r->util_slabs, r->teardown_s,
		r->teardown_caches, r->teardown_free_s, r->offline_s, r->alloc_free_ns, un > 0 ? r->alloc_free_ns / un : 0,
		r->alloc_free_cpu_ns, un_cpu > 0 ? r->alloc_free_cpu_ns / un_cpu : 0);
	if (d == DC_B)
		fprintf(f,
			", \"stock_loss_8_groups\": {\"slots1\": %.4f, \"slots5\": %.4f}, "
			"\"stock_loss_4_groups\": {\"slots1\": %.4f, \"slots5\": %.4f}, "
			"\"stock_loss_8_groups_cpu\": {\"slots1\": %.4f, \"slots5\": %.4f}, "
			"\"stock_loss_4_groups_cpu\": {\"slots1\": %.4f, \"slots5\": %.4f}, "
			"\"stock_ns\": {\"slots1_1_group\": %.2f, \"slots1_8_groups\": %.2f, "
			"\"slots1_4_groups\": %.2f, \"slots5_1_group\": %.2f, \"slots5_8_groups\": %.2f, "
			"\"slots5_4_groups\": %.2f}",
			r->stock_loss[0], r->stock_loss[1], r->stock_loss4[0], r->stock_loss4[1], r->stock_loss_cpu[0],
			r->stock_loss_cpu[1], r->stock_loss4_cpu[0], r->stock_loss4_cpu[1],
			r->stock_ns[0][0], r->stock_ns[0][1], r->stock_ns[0][2], r->stock_ns[1][0],
			r->stock_ns[1][1], r->stock_ns[1][2]);
	fprintf(f, "}%s\n", last ? "" : ",");
}

static int write_json(const char *path)
{
	FILE *f = fopen(path, "w");
	struct utsname un;
	struct result *n = &res[DC_UNACCOUNTED];

	if (!f) {
		perror(path);
		return -1;
	}
	if (uname(&un) != 0)
		strcpy(un.release, "?");
	fprintf(f, "{\n  \"designs\": {\n");
	json_design(f, DC_A, false);
	json_design(f, DC_A_REPARENT, false);
	json_design(f, DC_B, true);
	fprintf(f, "  },\n");
	fprintf(f,
		"  \"unaccounted\": {\"alloc_free_ns\": %.2f, \"alloc_free_cpu_ns\": %.2f, \"utilisation\": %.4f, "
		"\"utilisation_objects\": %lu, \"utilisation_slabs\": %lu},\n",
		n->alloc_free_ns, n->alloc_free_cpu_ns, n->utilisation, n->util_objects, n->util_slabs);
	fprintf(f,
		"  \"run\": {\"rounds\": %ld, \"short_lived\": %ld, \"util_groups\": %ld, "
		"\"teardown_groups\": %ld, \"teardown_reps\": %d, \"pairs\": %ld, \"reps\": %d, "
		"\"object_bytes\": %d, "
		"\"nproc\": %ld, \"kernel\": \"%s\"}\n}\n",
		opt.rounds, opt.short_lived, opt.util_groups, opt.teardown, opt.teardown_reps, opt.pairs, opt.reps,
		DC_OBJ_SIZE,
		sysconf(_SC_NPROCESSORS_ONLN), un.release);
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * Each scenario runs in a process of its own (fork; the parent never
 * touches the library), writing its figures to the shared results: what one
 * scenario leaves behind (mappings, memory, a crash) cannot move another's
 * figures, and under the sanitizers each process is checked at its exit.
 */
static bool failed;

static void run_scenario(const char *name, void (*fn)(enum dc_design), enum dc_design d)
{
	int status;

	if (opt.only && strcmp(opt.only, name) != 0)
		return;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		failed = true;
		return;
	}
	if (pid == 0) {
		*failures = 0;
		fn(d);
		exit(*failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (WIFSIGNALED(status))
			fprintf(stderr, "dead_caches: %s (%s) killed by signal %d\n", name,
				d < DC_NR_DESIGNS ? dc_design_name(d) : "all", WTERMSIG(status));
		else
			fprintf(stderr, "dead_caches: %s (%s): %ld failures\n", name,
				d < DC_NR_DESIGNS ? dc_design_name(d) : "all", *failures);
		failed = true;
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--rounds N] [--short-lived N] [--util-groups N] [--teardown N]\n"
		"          [--pairs N] [--reps N] [--teardown-reps N] [--seed N] [--only NAME] [--json FILE]\n"
		"  --rounds N       groups created, charged and offlined (default 2000)\n"
		"  --short-lived N  short-lived objects per round (default 100)\n"
		"  --util-groups N  groups holding 1-10 objects for utilisation (default 1000)\n"
		"  --teardown N     dead caches (groups) torn down (default 100000)\n"
		"  --pairs N        alloc+free pairs per timed repetition (default 1000000)\n"
		"  --reps N         timed repetitions of the pairs, the fastest kept (default 11)\n"
		"  --teardown-reps N  teardowns per design, each in a fresh process, the fastest kept (default 3)\n"
		"  --only NAME      run one scenario: rounds, teardown, utilisation, alloc_free, stock\n"
		"  --json FILE      write the figures\n",
		argv0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'r' },   { "short-lived", required_argument, NULL, 's' },
		{ "util-groups", required_argument, NULL, 'u' }, { "teardown", required_argument, NULL, 't' },
		{ "pairs", required_argument, NULL, 'p' },    { "reps", required_argument, NULL, 'R' },
		{ "teardown-reps", required_argument, NULL, 'T' },
		{ "seed", required_argument, NULL, 'S' },     { "json", required_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'o' },     { "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r': opt.rounds = atol(optarg); break;
		case 's': opt.short_lived = atol(optarg); break;
		case 'u': opt.util_groups = atol(optarg); break;
		case 't': opt.teardown = atol(optarg); break;
		case 'p': opt.pairs = atol(optarg); break;
		case 'R': opt.reps = atoi(optarg); break;
		case 'T': opt.teardown_reps = atoi(optarg); break;
		case 'S': opt.seed = strtoul(optarg, NULL, 0); break;
		case 'j': opt.json = optarg; break;
		case 'o': opt.only = optarg; break;
		default: usage(argv[0]); return ch == 'h' ? 0 : 2;
		}
	}
	if (opt.rounds < 1 || opt.short_lived < 0 || opt.util_groups < 1 || opt.teardown < 1 ||
	    opt.pairs < 1 || opt.reps < 1 || opt.teardown_reps < 1) {
		usage(argv[0]);
		return 2;
	}

	res = mmap(NULL, sizeof(*res) * DC_NR_DESIGNS + sizeof(long), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(res, 0, sizeof(*res) * DC_NR_DESIGNS);
	failures = (long *)(void *)(res + DC_NR_DESIGNS);

	double t0 = now();
	for (int d = 0; d < DC_NR_DESIGNS; d++) {
		if (d != DC_UNACCOUNTED) {
			run_scenario("rounds", scenario_rounds, (enum dc_design)d);
			for (int r = 0; r < opt.teardown_reps; r++)
				run_scenario("teardown", scenario_teardown, (enum dc_design)d);
		}
		run_scenario("utilisation", scenario_utilisation, (enum dc_design)d);
	}
	run_scenario("alloc_free", scenario_alloc_free, DC_NR_DESIGNS);
	run_scenario("stock", scenario_stock, DC_B);

	printf("dead_caches: %ld rounds of 1 long-lived + %ld short-lived objects, %ld groups for "
	       "utilisation, %ld dead caches torn down, %ld pairs x %d reps; %ld CPUs; %.1f s\n",
	       opt.rounds, opt.short_lived, opt.util_groups, opt.teardown, opt.pairs, opt.reps,
	       sysconf(_SC_NPROCESSORS_ONLN), now() - t0);
	print_table();
	if (opt.json && write_json(opt.json) != 0)
		failed = true;
	if (failed)
		fprintf(stderr, "dead_caches: some scenarios failed (above); their figures are incomplete\n");
	return failed ? 1 : 0;
}
