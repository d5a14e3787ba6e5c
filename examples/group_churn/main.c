/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * group_churn - memory groups that die while their objects live on.
 *
 * A cache keeps its objects on per-(group, node) LRU lists (<ksync/list_lru.h>),
 * charges them through charge handles (<ksync/objcg.h>) and trims them with a
 * memcg-aware shrinker of a registry (<ksync/shrinker.h>). All at once:
 *
 *   churn      keeps --groups groups alive, replacing one at a time: create a
 *              group, take the old one offline (at least 2,000 cycles);
 *   producers  (--threads) allocate objects, charge them to a random live
 *              group and put them on its LRU list; the objects outlive
 *              their groups, on the parents' lists and charged to them;
 *   reclaim    (--threads) walks groups and the global lists with
 *              ksync_shrink_slab(): the shrinker frees objects, uncharging them.
 *
 * At the end every object is accounted for (charged = freed + still on a
 * list: objects_lost must be 0), the statistics are conserved (the sum over
 * groups plus the root equals charged minus freed, and the LRU counters the
 * objects on the lists), the dying groups are
 * gone (objects do not pin dead groups), and the memory is back near its
 * start. --json FILE writes the figures.
 */
#define _GNU_SOURCE
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>

#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NR_NODES 2
#define OBJ_BYTES 256

struct obj {
	struct ksync_list_lru_item lru;
	struct ksync_objcg *objcg;
	int nid;
	char payload[OBJ_BYTES - sizeof(struct ksync_list_lru_item) - sizeof(void *) - sizeof(int)];
};

struct slot {
	pthread_mutex_t lock;
	struct ksync_memgroup *g;
};

static struct {
	double seconds;
	int groups, threads;
	const char *json;
	long min_cycles;
} opt = { 2.0, 64, 2, NULL, 2000 };

static struct ksync_shrinker_registry *reg;
static struct ksync_memgroup_set *set;
static struct ksync_memgroup *root;
static struct ksync_list_lru lru;
static struct slot *slots;
static int stop;
static long created, destroyed, charged, freed, walks, dying_peak;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void free_obj(struct obj *o)
{
	ksync_objcg_charge(o->objcg, o->nid, -1, -(long)sizeof(*o));
	ksync_objcg_put(o->objcg);
	free(o);
	__atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------ */
/* The cache's shrinker: count its list, walk it, free what it isolated.     */

static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long n = ksync_list_lru_shrinker_count(&lru, sc);

	(void)s;
	return n ? n : KSYNC_SHRINK_EMPTY;
}

static enum ksync_lru_status cache_isolate(struct ksync_list_lru_item *item,
					   struct ksync_list_lru_one *list, void *arg)
{
	ksync_list_lru_isolate_move(list, item, (struct ksync_list_head *)arg);
	return KSYNC_LRU_REMOVED;
}

static unsigned long dispose(struct ksync_list_head *head)
{
	unsigned long n = 0;

	while (!ksync_list_empty(head)) {
		struct obj *o = ksync_container_of(head->next, struct obj, lru.link);

		ksync_list_del_init(&o->lru.link);
		free_obj(o);
		n++;
	}
	return n;
}

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	KSYNC_LIST_HEAD(list);

	(void)s;
	ksync_list_lru_shrinker_walk(&lru, sc, cache_isolate, &list);
	return dispose(&list);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */

/* A reference on the group of a random slot (NULL if the slot is empty). */
static struct ksync_memgroup *pick_group(unsigned *seed)
{
	struct slot *sl = &slots[rand_r(seed) % (unsigned)opt.groups];
	struct ksync_memgroup *g;

	pthread_mutex_lock(&sl->lock);
	g = sl->g;
	if (g)
		ksync_memgroup_get(g);
	pthread_mutex_unlock(&sl->lock);
	return g;
}

static void *producer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct ksync_memgroup *g = pick_group(&seed);
		struct obj *o;

		if (!g)
			continue;
		o = calloc(1, sizeof(*o));
		if (!o) {
			ksync_memgroup_put(g);
			continue;
		}
		ksync_list_lru_item_init(&o->lru);
		o->nid = (int)(rand_r(&seed) % NR_NODES);
		o->objcg = ksync_memgroup_get_objcg(g);
		if (!o->objcg) { /* the group went offline and has no online ancestor */
			ksync_memgroup_put(g);
			free(o);
			continue;
		}
		ksync_objcg_charge(o->objcg, o->nid, 1, (long)sizeof(*o));
		__atomic_fetch_add(&charged, 1, __ATOMIC_RELAXED);
		ksync_list_lru_add(&lru, &o->lru, o->nid, g);
		ksync_memgroup_put(g);
		/* Keep the cache from growing without bound between reclaims. */
		if ((rand_r(&seed) & 1023) == 0)
			usleep(100);
	}
	return NULL;
}

static void *reclaimer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 104729u + 3;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int nid = (int)(rand_r(&seed) % NR_NODES);
		struct ksync_memgroup *g = (rand_r(&seed) & 15) ? pick_group(&seed) : NULL;

		if (g) {
			ksync_shrink_slab(reg, nid, g, 2);
			ksync_memgroup_put(g);
		} else {
			/* The parents' lists hold what dead groups left: the root and global walks. */
			ksync_shrink_slab(reg, nid, root, 2);
			ksync_shrink_slab(reg, nid, NULL, 2);
		}
		__atomic_fetch_add(&walks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static long dying_now(void)
{
	/* Groups not yet freed, less the live ones and the root. */
	return ksync_memgroup_nr_groups(set) - opt.groups - 1;
}

/* Replace one group: create a child of the root, take the old one offline. */
static void churn_one(unsigned *seed)
{
	struct slot *sl = &slots[rand_r(seed) % (unsigned)opt.groups];
	struct ksync_memgroup *fresh = ksync_shrinker_group_create(reg, root), *old;

	if (!fresh)
		return;
	pthread_mutex_lock(&sl->lock);
	old = sl->g;
	sl->g = fresh;
	pthread_mutex_unlock(&sl->lock);
	created++;
	if (old) {
		if (ksync_shrinker_group_destroy(old) == 0)
			destroyed++;
	}
	long d = dying_now();
	if (d > dying_peak)
		dying_peak = d;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--seconds S] [--groups N] [--threads N] [--json FILE]\n"
		"  --seconds S   churn phase (default 2; runs on until 2,000 create/offline cycles)\n"
		"  --groups N    live groups (default 64)\n"
		"  --threads N   producer threads and reclaim threads each (default 2)\n"
		"  --json FILE   write the figures\n",
		argv0);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' }, { "groups", required_argument, NULL, 'g' },
		{ "threads", required_argument, NULL, 't' }, { "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': opt.seconds = atof(optarg); break;
		case 'g': opt.groups = atoi(optarg); break;
		case 't': opt.threads = atoi(optarg); break;
		case 'j': opt.json = optarg; break;
		default: usage(argv[0]); return c == 'h' ? 0 : 2;
		}
	}
	if (opt.groups < 1 || opt.threads < 1 || opt.seconds < 0) {
		usage(argv[0]);
		return 2;
	}

	reg = ksync_shrinker_registry_create(NR_NODES);
	set = ksync_shrinker_registry_groups(reg);
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE |
							 KSYNC_SHRINKER_NUMA_AWARE, "group_churn");
	s->count_objects = cache_count;
	s->scan_objects = cache_scan;
	if (!reg || !s || ksync_list_lru_init(&lru, set, NR_NODES, s) != 0) {
		fprintf(stderr, "group_churn: setup failed\n");
		return 1;
	}
	ksync_shrinker_register(s);
	root = ksync_shrinker_group_create(reg, NULL);
	slots = calloc((size_t)opt.groups, sizeof(*slots));
	for (int i = 0; i < opt.groups; i++) {
		pthread_mutex_init(&slots[i].lock, NULL);
		slots[i].g = ksync_shrinker_group_create(reg, root);
		created++;
	}

	/* Memory before the churn: the registry, the cache and the live groups exist. */
	long rss_start = rss_kb();
	pthread_t *t = calloc(2 * (size_t)opt.threads, sizeof(*t));
	for (int i = 0; i < opt.threads; i++) {
		pthread_create(&t[2 * i], NULL, producer, (void *)(uintptr_t)i);
		pthread_create(&t[2 * i + 1], NULL, reclaimer, (void *)(uintptr_t)i);
	}
	unsigned seed = 12345;
	double t0 = now();
	while (now() - t0 < opt.seconds || destroyed < opt.min_cycles)
		churn_one(&seed);
	double elapsed = now() - t0;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2 * opt.threads; i++)
		pthread_join(t[i], NULL);
	long walks_total = walks;
	long dying_end = dying_now();

	/* What is left on the lists, and what the statistics say about it. */
	long on_lists = (long)ksync_list_lru_count(&lru);
	bool conserved = true;
	long stat_objects = 0, stat_lru = 0;
	for (int nid = 0; nid < NR_NODES; nid++) {
		stat_objects += ksync_memgroup_stat_total(set, nid, KSYNC_MEMGROUP_STAT_OBJECTS);
		stat_lru += ksync_memgroup_stat_total(set, nid, KSYNC_MEMGROUP_STAT_LRU);
	}
	/* Charged objects, and objects on the groups' LRU lists (all are on the root's or below). */
	conserved = stat_objects == charged - freed && stat_lru == on_lists;
	long lost = charged - freed - on_lists;

	/* Tear down: free every object, then the groups, the cache, the registry. */
	KSYNC_LIST_HEAD(rest);
	ksync_list_lru_walk(&lru, cache_isolate, &rest, ~0UL);
	dispose(&rest);
	for (int i = 0; i < opt.groups; i++)
		if (ksync_shrinker_group_destroy(slots[i].g) == 0)
			destroyed++;
	ksync_shrinker_group_destroy(root);
	long stat_after = 0;
	for (int nid = 0; nid < NR_NODES; nid++)
		stat_after += ksync_memgroup_stat_total(set, nid, KSYNC_MEMGROUP_STAT_OBJECTS);
	conserved = conserved && stat_after == 0 && charged == freed;
	ksync_shrinker_free(s);
	ksync_list_lru_destroy(&lru);
	ksync_shrinker_registry_destroy(reg);
	free(t);
	free(slots);
	/* Hand what the allocator keeps in its free lists back, then measure. */
	malloc_trim(0);
	long rss_end = rss_kb();

	printf("group_churn: %ld groups created, %ld destroyed in %.2f s; dying peak %ld, at the end %ld\n",
	       created, destroyed, elapsed, dying_peak, dying_end);
	printf("group_churn: %ld objects charged, %ld freed, %ld lost; statistics %s\n", charged,
	       freed, lost, conserved ? "conserved" : "NOT conserved");
	printf("group_churn: %.0f reclaim walks/s; RSS %ld kB -> %ld kB\n", walks_total / elapsed,
	       rss_start, rss_end);
	if (opt.json) {
		FILE *f = fopen(opt.json, "w");
		if (!f) {
			perror(opt.json);
			return 1;
		}
		fprintf(f,
			"{\"groups_created\": %ld, \"groups_destroyed\": %ld, \"dying_peak\": %ld, "
			"\"dying_end\": %ld, \"objects_charged\": %ld, \"objects_freed\": %ld, "
			"\"objects_lost\": %ld, \"stats_conserved\": %s, \"rss_start_kb\": %ld, "
			"\"rss_end_kb\": %ld, \"reclaim_walks_per_s\": %.1f}\n",
			created, destroyed, dying_peak, dying_end, charged, freed, lost,
			conserved ? "true" : "false", rss_start, rss_end, walks_total / elapsed);
		fclose(f);
	}
	return lost == 0 && conserved ? 0 : 1;
}
