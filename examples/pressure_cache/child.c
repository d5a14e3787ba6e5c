/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * child.c - one variant of pressure_cache, run in a child process.
 *
 * Theory of operation. The child holds three things that share one memory
 * limit:
 *
 *  - the cache: values of @value_bytes each, keyed by a 32-bit key, found
 *    through a hash table (<ksync/hashtable.h>) and kept, oldest first, on a
 *    memcg-aware list_lru (<ksync/list_lru.h>) in the cache's memory group
 *    (a group of the registry's set); every value is charged to the group
 *    through its charge handle (<ksync/objcg.h>), so the group's statistics
 *    say what the cache holds. A memcg-aware shrinker counts the group's
 *    list and scans it (second chance: a value read since the last scan is
 *    rotated once), freeing what it isolates outside the list's lock.
 *    Memory must really go back to the kernel when a value is freed, or no
 *    shrinking could relieve a cgroup limit: glibc keeps freed small chunks
 *    in its heap, so every value is an mmap() of its own (@value_bytes, 16
 *    to 64 KiB) and freeing it is a munmap(); this is the same for every
 *    variant (MAP_POPULATE: one call instead of a fault per page). (The
 *    small entry that points at a value comes from malloc.)
 *  - the request stream: one serving thread draws keys from a Zipf law
 *    (or, with --workload scan, from workload.c: hot phases over a hot set
 *    that fits, alternating with one-pass scans; hits on hot keys counted
 *    apart)
 *    (exponent @zipf_s over @nr_keys keys, whose values add up to
 *    @want_bytes: more than the limit) with a fixed seed, so every variant
 *    sees the same stream. A hit reads the whole value (and checks it); a
 *    miss "fetches" it: maps a value and fills it with the key's bytes, over
 *    and over for at least @fetch_us (a real cost per miss: a decode), then
 *    inserts it; with a cap (the fixed variants)
 *    the insert evicts the oldest values past the cap. Every request also
 *    costs @request_us of CPU besides the lookup (parsing it and writing
 *    the answer: a cache server's system calls), hit or miss.
 *  - the batch job: a thread that, every @batch_period_s from
 *    @batch_first_s, maps @batch_bytes and touches it progressively over
 *    @batch_grow_s (a job grows, it does not appear), holds it
 *    @batch_hold_s, and unmaps it: the neighbour whose memory the cache must
 *    yield. In the ksync variant both threads charge what they are about
 *    to allocate (reactor_charge(), ksync_pressure_charge()): past the
 *    watermark the allocating thread reclaims itself (the kernel's direct
 *    reclaim runs in whichever task of the group allocates).
 *
 * Variants: fixed-high and fixed-low only cap the cache; trim caps it like
 * fixed-high and calls malloc_trim(0) whenever a PSI trigger on the child's
 * own cgroup v2 group fires (systemd's default reaction); ksync has no cap,
 * and the reactor (reactor.h) shrinks the cache's group when the memory
 * cgroup (or the budget) says so.
 *
 * The LRU (--lru). By default the values sit on the list_lru above, with
 * second chance. With --lru classic|mglru they sit on a ksync_lru of
 * <ksync/workingset.h> (the classic active/inactive pair, or the
 * multi-generation LRU) in the same memory group, with a workingset on the
 * same registry: the shrinker's scan and the evictions to a cap take the
 * LRU's order (ksync_lru_evict()), and with --shadows every eviction leaves
 * its token as the key's shadow entry; a miss takes the key's shadow and, if
 * ksync_workingset_refault() judges it within the workingset, adds the value
 * active. The shadow entries' own shrinker ("workingset-shadow", memcg-aware,
 * its budget the group's local LRU statistic >> 3) is registered with the
 * registry the pressure monitor drives, so the same reclaim rounds that
 * shrink the cache trim the shadows past their budget. The fixed variants
 * have no monitor: their evictions to the cap are their reclaim, and each
 * one trims the shadows to the budget (the kernel's reclaim runs the shadow
 * shrinker after the LRU). Shadows are keyed by the key's index (key times
 * the inverse of workload.c's multiplier), so neighbouring keys share a
 * shadow node as a file's neighbouring pages share an xarray node. The
 * serving loop samples the shadow nodes against their budget before each
 * poll of the monitor (the peak before a round).
 *
 * Locking: the cache's mutex covers the hash table and the values' lifetime;
 * list_lru and ksync_lru locks nest inside it (the shrinker's scan takes the
 * mutex, then walks or evicts; ksync_lru_evict() calls back without its own
 * lock, under the mutex, and the callback stores the shadow: the store's
 * lock nests inside the mutex too). Munmaps happen after the mutex is dropped.
 */
#define _GNU_SOURCE
#include "pc.h"
#include "reactor.h"

#include <ksync/hashtable.h>
#include <ksync/list_lru.h>
#include <ksync/memgroup_stat.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>
#ifdef PC_HAVE_WORKINGSET
#include <ksync/workingset.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

const char *const pc_variant_name[PC_NR_VARIANTS] = { "fixed-high", "fixed-low", "trim", "ksync" };
const char *const pc_lru_name[PC_NR_LRUS] = { "list", "classic", "mglru" };

uint64_t pc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void pc_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------------------ */
/* The cache                                                                */

struct entry {
	struct ksync_hlist_node hnode;
	struct ksync_list_lru_item lru;   /* --lru list: on C.lru; else only its link (dispose lists) */
#ifdef PC_HAVE_WORKINGSET
	struct ksync_lru_item wlru;       /* --lru classic|mglru: on C.wlru */
#endif
	uint32_t key;
	int referenced;
	unsigned char *val;
};

#define HASH_BITS 15

struct cache {
	pthread_mutex_t lock;
	KSYNC_DECLARE_HASHTABLE(table, HASH_BITS);
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *group;
	struct ksync_objcg *objcg;
	struct ksync_shrinker *shrinker;
	struct ksync_list_lru lru;
	size_t value_bytes;
	uint64_t cap;
	uint64_t bytes;
	struct pc_shared *sh;
	uint64_t last_event;   /* the event whose first scan was measured */
	enum pc_lru kind;
#ifdef PC_HAVE_WORKINGSET
	struct ksync_workingset *ws;
	struct ksync_lru *wlru;
	bool shadows;
#endif
};

static struct cache C;

static unsigned char *value_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The "fetch": the key's bytes, a word at a time over the whole value. */
static void value_fill(unsigned char *v, size_t len, uint32_t key)
{
	uint64_t *w = (uint64_t *)(void *)v, x = key * 0x9E3779B97F4A7C15ULL + 1;

	for (size_t i = 0; i < len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	w[0] = key;
}

/*
 * The fetch of a miss: the value's bytes, recomputed until @cost_ns has
 * passed (a decode: zstd takes some 20-40 us for 32 KiB; a remote fetch
 * costs more, but waits instead of computing).
 */
static void value_fetch(unsigned char *v, size_t len, uint32_t key, uint64_t cost_ns)
{
	uint64_t t0 = pc_now_ns();

	do
		value_fill(v, len, key);
	while (pc_now_ns() - t0 < cost_ns);
}

/* A hit: read the whole value; the first word is the key. */
static uint64_t value_read(const unsigned char *v, size_t len)
{
	const uint64_t *w = (const uint64_t *)(const void *)v;
	uint64_t s = 0;

	for (size_t i = 0; i < len / 8; i++)
		s += w[i];
	return s ^ w[0];
}

static struct entry *cache_lookup(uint32_t key)
{
	struct entry *e;

	ksync_hash_for_each_possible(C.table, e, hnode, key)
		if (e->key == key)
			return e;
	return NULL;
}

/* Unhash and uncharge the entries on @dispose (cache lock held); free them later. */
static unsigned long cache_unlink(struct ksync_list_head *dispose)
{
	struct ksync_list_lru_item *it;
	unsigned long n = 0;

	ksync_list_for_each_entry(it, dispose, link) {
		struct entry *e = ksync_container_of(it, struct entry, lru);

		ksync_hash_del(&e->hnode);
		C.bytes -= C.value_bytes;
		n++;
	}
	if (n)
		ksync_objcg_charge(C.objcg, 0, -(long)n, -(long)(n * C.value_bytes));
	PC_ST(C.sh->cache_bytes, C.bytes);
	return n;
}

/* Free what cache_unlink() unlinked (cache lock not held). */
static void cache_free(struct ksync_list_head *dispose)
{
	while (!ksync_list_empty(dispose)) {
		struct ksync_list_lru_item *it = ksync_list_first_entry(dispose, struct ksync_list_lru_item, link);
		struct entry *e = ksync_container_of(it, struct entry, lru);

		ksync_list_del(&it->link);
		munmap(e->val, C.value_bytes);
		free(e);
	}
}

static enum ksync_lru_status cache_isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *list,
					   void *arg)
{
	struct entry *e = ksync_container_of(item, struct entry, lru);

	if (__atomic_load_n(&e->referenced, __ATOMIC_RELAXED)) {
		__atomic_store_n(&e->referenced, 0, __ATOMIC_RELAXED);
		return KSYNC_LRU_ROTATE;
	}
	ksync_list_lru_isolate_move(list, item, arg);
	return KSYNC_LRU_REMOVED;
}

/* ------------------------------------------------------------------------ */
/* The ksync_lru cache (--lru classic|mglru) and its shadow entries         */

#ifdef PC_HAVE_WORKINGSET
/* A key's index in the stream's key space: workload.c and zipf_next() scatter index i to i * 2654435761. */
static unsigned long shadow_key(uint32_t key)
{
	uint32_t inv = 2654435761u;

	for (int i = 0; i < 5; i++)   /* Newton's iteration for the inverse mod 2^32 */
		inv *= 2u - 2654435761u * inv;
	return key * inv;
}

/* ksync_lru_evict()'s callback (cache lock held, LRU lock not): onto the dispose list, the token kept. */
static void wlru_evicted(struct ksync_lru_item *item, unsigned long token, void *arg)
{
	struct entry *e = ksync_container_of(item, struct entry, wlru);

	ksync_list_add_tail(&e->lru.link, arg);
	if (C.shadows && token)
		ksync_workingset_shadow_store(C.ws, shadow_key(e->key), token);
}

/* Evict up to @nr values of (@group, @nid) in the LRU's order and unlink them (cache lock held). */
static unsigned long wlru_evict(struct ksync_memgroup *group, int nid, unsigned long nr,
				struct ksync_list_head *dispose)
{
	KSYNC_LIST_HEAD(part);
	unsigned long n = ksync_lru_evict(C.wlru, group, nid, nr, wlru_evicted, &part);

	cache_unlink(&part);
	ksync_list_splice(&part, dispose);
	return n;
}

/*
 * The fixed variants' reclaim is their eviction to the cap: after it, the
 * shadow shrinker of the group trims the shadow nodes past its budget, as
 * the kernel's reclaim runs the shadow shrinker after the LRU. Its own
 * count_objects (the budget from the group's LRU statistic) and
 * scan_objects, called directly: no monitor runs in these variants.
 */
static void shadow_trim(void)
{
	struct ksync_shrinker *s = ksync_workingset_shrinker(C.ws);
	struct ksync_shrink_control sc = { .nid = 0, .group = C.group };
	unsigned long n = s->count_objects(s, &sc);

	if (!n || n == KSYNC_SHRINK_EMPTY)
		return;
	sc.nr_to_scan = n;
	s->scan_objects(s, &sc);
	PC_ADD(C.sh->shadow_trims, 1);
}

/* The shadow nodes against their budget (before a reclaim round may trim them). */
static void shadow_sample(struct pc_shared *sh)
{
	struct ksync_workingset_stats st;
	unsigned long budget;

	if (!C.ws)
		return;
	ksync_workingset_stats(C.ws, &st);
	budget = ksync_workingset_shadow_budget(C.ws, C.group, 0);
	PC_ST(sh->ws_refaults, st.refaults);
	PC_ST(sh->ws_activations, st.refaults_workingset);
	PC_ST(sh->shadow_nodes_end, st.shadow_nodes);
	PC_ST(sh->shadow_entries_end, st.shadow_entries);
	PC_ST(sh->shadow_nodes_freed, st.nodes_reclaimed);
	PC_ST(sh->shadow_node_bytes, KSYNC_WORKINGSET_NODE_SLOTS * sizeof(unsigned long));
	if (st.shadow_nodes > PC_LD(sh->shadow_nodes_peak)) {
		PC_ST(sh->shadow_nodes_peak, st.shadow_nodes);
		PC_ST(sh->shadow_budget_at_peak, budget);
	}
	if (budget > PC_LD(sh->shadow_budget_max))
		PC_ST(sh->shadow_budget_max, budget);
	PC_ADD(sh->shadow_samples, 1);
	if (st.shadow_nodes > budget) {
		PC_ADD(sh->shadow_over_samples, 1);
		if (st.shadow_nodes - budget > PC_LD(sh->shadow_excess_max))
			PC_ST(sh->shadow_excess_max, st.shadow_nodes - budget);
	}
}
#else
static void shadow_sample(struct pc_shared *sh)
{
	(void)sh;
}
#endif /* PC_HAVE_WORKINGSET */

static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long n;

#ifdef PC_HAVE_WORKINGSET
	if (C.wlru)
		n = ksync_lru_size(C.wlru, sc->group, sc->nid);
	else
#endif
		n = ksync_list_lru_shrinker_count(&C.lru, sc);

	(void)s;
	return n ? n : KSYNC_SHRINK_EMPTY;
}

static void note_latency(uint64_t ev)
{
	uint64_t ns, n;

	if (!ev || ev == C.last_event)
		return;
	C.last_event = ev;   /* only the first scan of an event */
	ns = pc_now_ns() - ev;
	n = PC_LD(C.sh->lat_samples);
	if (n < PC_LAT_MAX) {
		PC_ST(C.sh->lat_ns[n], ns);
		PC_ST(C.sh->lat_samples, n + 1);
	}
}

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	KSYNC_LIST_HEAD(dispose);
	unsigned long freed;

	(void)s;
	pthread_mutex_lock(&C.lock);
	note_latency(reactor_event_time());
#ifdef PC_HAVE_WORKINGSET
	if (C.wlru) {
		freed = wlru_evict(sc->group, sc->nid, sc->nr_to_scan, &dispose);
		sc->nr_scanned = freed;
	} else
#endif
	{
		freed = ksync_list_lru_shrinker_walk(&C.lru, sc, cache_isolate, &dispose);
		cache_unlink(&dispose);
	}
	pthread_mutex_unlock(&C.lock);
	cache_free(&dispose);
	PC_ADD(C.sh->scan_calls, 1);
	PC_ADD(C.sh->scan_freed, freed);
	return freed;
}

/* An eviction walk: second chance, and no more than @need values. */
struct evict {
	struct ksync_list_head *dispose;
	unsigned long need;
};

static enum ksync_lru_status evict_isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *list,
					   void *arg)
{
	struct evict *ev = arg;

	if (!ev->need)
		return KSYNC_LRU_STOP;
	if (cache_isolate(item, list, ev->dispose) == KSYNC_LRU_ROTATE)
		return KSYNC_LRU_ROTATE;
	ev->need--;
	return KSYNC_LRU_REMOVED;
}

/* Caps: evict the oldest (second chance) until under @cap (cache lock held). */
static void cache_evict_to_cap(uint64_t cap, struct ksync_list_head *dispose)
{
#ifdef PC_HAVE_WORKINGSET
	if (C.wlru) {
		unsigned long total = 0, n;

		while (cap && C.bytes > cap) {
			n = wlru_evict(C.group, 0, (unsigned long)((C.bytes - cap + C.value_bytes - 1) / C.value_bytes),
				       dispose);
			PC_ADD(C.sh->evictions, n);
			total += n;
			if (!n)
				break;   /* the LRU is empty */
		}
		if (total && C.shadows)
			shadow_trim();
		return;
	}
#endif
	while (cap && C.bytes > cap) {
		unsigned long need = (unsigned long)((C.bytes - cap + C.value_bytes - 1) / C.value_bytes);
		unsigned long walk = 2 * need + 2;
		KSYNC_LIST_HEAD(part);
		struct evict ev = { .dispose = &part, .need = need };
		unsigned long n;

		n = ksync_list_lru_walk_one(&C.lru, 0, C.group, evict_isolate, &ev, &walk);
		cache_unlink(&part);
		ksync_list_splice(&part, dispose);
		PC_ADD(C.sh->evictions, n);
		if (!n && walk)
			break;   /* the list is empty */
	}
}

static int cache_init(const struct pc_params *p, struct pc_shared *sh)
{
	int err;

	memset(&C, 0, sizeof(C));
	pthread_mutex_init(&C.lock, NULL);
	ksync_hash_init(C.table);
	C.sh = sh;
	C.value_bytes = p->value_bytes;
	C.cap = p->cap_bytes;
	C.reg = ksync_shrinker_registry_create(1);
	if (!C.reg)
		return -ENOMEM;
	C.group = ksync_shrinker_group_create(C.reg, NULL);
	if (!C.group)
		return -ENOMEM;
	C.objcg = ksync_memgroup_get_objcg(C.group);
	C.shrinker = ksync_shrinker_alloc(C.reg, KSYNC_SHRINKER_MEMCG_AWARE, "pressure_cache");
	if (!C.shrinker)
		return -ENOMEM;
	C.shrinker->count_objects = cache_count;
	C.shrinker->scan_objects = cache_scan;
	C.shrinker->seeks = 2;
	C.shrinker->batch = 32;   /* 1 MiB of values per call */
	C.kind = p->lru;
	if (p->lru != PC_LRU_LIST) {
#ifdef PC_HAVE_WORKINGSET
		/* the workingset on the monitor's registry: its shadow shrinker is walked with the cache's */
		C.shadows = p->shadows;
		C.ws = ksync_workingset_create(C.reg, 0);
		if (!C.ws)
			return -ENOMEM;
		C.wlru = ksync_lru_create(C.ws, p->lru == PC_LRU_MGLRU ? KSYNC_MGLRU : KSYNC_LRU_CLASSIC);
		if (!C.wlru)
			return -ENOMEM;
#else
		return -ENOSYS;
#endif
	} else {
		err = ksync_list_lru_init(&C.lru, ksync_shrinker_registry_groups(C.reg), 1, C.shrinker);
		if (err)
			return err;
	}
	return ksync_shrinker_register(C.shrinker);
}

static void cache_destroy(void)
{
	struct ksync_hlist_node *tmp;
	struct entry *e;
	unsigned bkt;
	long n = 0;

	/* the cache's own teardown: every value off its list, unmapped */
	pthread_mutex_lock(&C.lock);
	ksync_hash_for_each_safe(C.table, bkt, tmp, e, hnode) {
#ifdef PC_HAVE_WORKINGSET
		if (C.wlru)
			ksync_lru_del(C.wlru, &e->wlru);
		else
#endif
			ksync_list_lru_del_obj(&C.lru, &e->lru);
		ksync_hash_del(&e->hnode);
		munmap(e->val, C.value_bytes);
		free(e);
		n++;
	}
	if (n)
		ksync_objcg_charge(C.objcg, 0, -n, -n * (long)C.value_bytes);
	C.bytes = 0;
	pthread_mutex_unlock(&C.lock);
	ksync_objcg_put(C.objcg);
	ksync_shrinker_group_destroy(C.group);
	ksync_shrinker_free(C.shrinker);
#ifdef PC_HAVE_WORKINGSET
	if (C.ws) {
		/* the groups are gone: the LRU, then the workingset (its shrinker, its shadows) */
		if (C.wlru)
			ksync_lru_destroy(C.wlru);
		ksync_workingset_destroy(C.ws);
	}
#endif
	if (C.kind == PC_LRU_LIST)
		ksync_list_lru_destroy(&C.lru);
	ksync_shrinker_registry_destroy(C.reg);
}

/* ------------------------------------------------------------------------ */
/* The request stream                                                       */

struct zipf {
	double *cdf;
	uint32_t n;
	uint64_t rng;
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static int zipf_init(struct zipf *z, uint32_t n, double s, uint64_t seed)
{
	double sum = 0;

	z->cdf = malloc(n * sizeof(double));
	if (!z->cdf)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		z->cdf[i] = (sum += 1.0 / pow((double)(i + 1), s));
	for (uint32_t i = 0; i < n; i++)
		z->cdf[i] /= sum;
	z->n = n;
	z->rng = seed;
	return 0;
}

/* A key: rank r (0 the hottest) scattered over the key space. */
static uint32_t zipf_next(struct zipf *z)
{
	double u = (double)(rng_next(&z->rng) >> 11) * 0x1.0p-53;
	uint32_t lo = 0, hi = z->n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (z->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo * 2654435761u;
}

/* ------------------------------------------------------------------------ */
/* The batch job                                                            */

static int stop_all;
volatile uint64_t pc_sink;   /* what the hits read, so that the reads stay */

static bool stopping(void)
{
	return __atomic_load_n(&stop_all, __ATOMIC_ACQUIRE);
}

/* Sleep until @t (CLOCK_MONOTONIC ns) or until the run stops; false when it stopped. */
static bool sleep_until(uint64_t t)
{
	for (uint64_t now; (now = pc_now_ns()) < t;) {
		if (stopping())
			return false;
		pc_sleep_ns(t - now < 5000000 ? t - now : 5000000);
	}
	return !stopping();
}

static void *batch_job(void *arg)
{
	const struct pc_params *p = arg;
	struct pc_shared *sh = C.sh;
	uint64_t t0 = pc_now_ns();
	const size_t step = MIB;
	size_t steps = (size_t)(p->batch_bytes / step);

	for (unsigned i = 0; p->batch_bytes; i++) {
		uint64_t start = t0 + (uint64_t)((p->batch_first_s + i * p->batch_period_s) * 1e9);
		uint64_t grow_ns = (uint64_t)(p->batch_grow_s * 1e9);
		unsigned char *blk;
		volatile unsigned char sink = 0;

		if (!sleep_until(start))
			break;
		blk = mmap(NULL, p->batch_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			   -1, 0);
		if (blk == MAP_FAILED)
			break;
		/* grow: a MiB at a time, evenly over batch_grow_s */
		for (size_t s = 0; s < steps; s++) {
			/* ksync: an allocating thread of the group reclaims too, as in the kernel */
			if (p->direct_reclaim)
				reactor_charge(step);
			memset(blk + s * step, (int)(s + 1), step);
			PC_ST(sh->batch_bytes, (uint64_t)(s + 1) * step);
			if (!sleep_until(start + grow_ns * (s + 1) / steps))
				break;
		}
		/* hold (and use) it */
		if (sleep_until(start + grow_ns + (uint64_t)(p->batch_hold_s * 1e9)))
			for (size_t s = 0; s < steps; s++)
				sink += blk[s * step];
		munmap(blk, p->batch_bytes);
		PC_ST(sh->batch_bytes, 0);
		(void)sink;
		if (stopping())
			break;
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* The trim variant: malloc_trim(0) on PSI events (systemd's default)       */

struct trim_watch {
	int fd;
	pthread_t thread;
};

static void *trim_watcher(void *arg)
{
	struct trim_watch *w = arg;

	while (!stopping()) {
		struct pollfd pfd = { .fd = w->fd, .events = POLLPRI };
		int n = poll(&pfd, 1, 50);

		if (n > 0 && (pfd.revents & POLLERR))
			break;
		if (n > 0 && (pfd.revents & POLLPRI)) {
			PC_ADD(C.sh->pressure_events, 1);
			malloc_trim(0);
			PC_ADD(C.sh->trims, 1);
		}
	}
	return NULL;
}

/* A PSI trigger on @path: GLib's LOW level (some 70 ms per window), the shortest window taken. */
static int trim_open(const char *path, char *desc, size_t len)
{
	static const unsigned windows_ms[] = { 1000, 2000, 4000, 10000 };
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(desc, len, "trim: %s: %s: no PSI events", path, strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < sizeof(windows_ms) / sizeof(windows_ms[0]); i++) {
		char trig[64];
		int n = snprintf(trig, sizeof(trig), "some %u %u", 70000u * windows_ms[i] / 2000u,
				 windows_ms[i] * 1000u);

		if (write(fd, trig, (size_t)n + 1) > 0) {
			snprintf(desc, len, "trim: PSI trigger \"%s\" on %s", trig, path);
			return fd;
		}
	}
	snprintf(desc, len, "trim: %s: no trigger accepted (%s)", path, strerror(errno));
	close(fd);
	return -EINVAL;
}

/* ------------------------------------------------------------------------ */
/* Serving                                                                  */

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* What every request costs besides the lookup: parsing it, writing the answer. */
static void request_work(uint64_t cost_ns)
{
	uint64_t t0 = pc_now_ns();

	while (cost_ns && pc_now_ns() - t0 < cost_ns)
		;
}

/* The reaction's figures into the shared block, so that they survive an OOM kill. */
static void publish_reaction(struct pc_shared *sh)
{
	struct reactor_stats rs;

	reactor_peek(&rs);
	PC_ST(sh->pressure_events, rs.events);
	PC_ST(sh->scans, rs.scans);
	PC_ST(sh->objects_freed, rs.freed);
	PC_ST(sh->lib_p99_ns, rs.lib_p99_ns);
	PC_ST(sh->direct_reclaims, rs.direct_rounds);
	PC_ST(sh->direct_freed, rs.direct_freed);
}

static uint64_t serve(const struct pc_params *p, struct pc_shared *sh, struct zipf *z, bool reacting)
{
	bool in_loop = reacting && p->reactor_in_loop;
	uint64_t next_publish = 0;

	uint64_t end = pc_now_ns() + (uint64_t)(p->seconds * 1e9);
	uint64_t ops = 0, hits = 0, sink = 0, req_ns = (uint64_t)(p->request_us * 1000);
	uint64_t hot_ops = 0, hot_hits = 0;
	struct pc_scan scan;
	bool hot = false;

	if (p->workload == PC_WL_SCAN)
		pc_scan_init(&scan, p->hot_keys, p->hot_len, p->scan_len, p->hot_cyclic, p->seed);
	for (;; ops++) {
		uint32_t key;
		struct entry *e;
		bool active = false;

		if (p->requests && ops == p->requests)
			break;
		if ((ops & 31) == 0) {
			PC_ST(sh->ops, ops);
			PC_ST(sh->hits, hits);
			PC_ST(sh->hot_ops, hot_ops);
			PC_ST(sh->hot_hits, hot_hits);
			uint64_t now = pc_now_ns();

			if (!p->requests && now >= end)
				break;
			if (C.kind != PC_LRU_LIST)
				shadow_sample(sh);   /* before the round a poll may start */
			if (in_loop)
				reactor_poll();
			if (reacting && now >= next_publish) {
				publish_reaction(sh);
				next_publish = now + 50000000;
			}
		}
		key = p->workload == PC_WL_SCAN ? pc_scan_next(&scan, &hot) : zipf_next(z);
		hot_ops += hot;
		request_work(req_ns);
		pthread_mutex_lock(&C.lock);
		e = cache_lookup(key);
		if (e) {
#ifdef PC_HAVE_WORKINGSET
			if (C.wlru)
				ksync_lru_mark_accessed(C.wlru, &e->wlru);
			else
#endif
				__atomic_store_n(&e->referenced, 1, __ATOMIC_RELAXED);
			sink += value_read(e->val, C.value_bytes);
			pthread_mutex_unlock(&C.lock);
			hits++;
			hot_hits += hot;
			continue;
		}
#ifdef PC_HAVE_WORKINGSET
		/* a miss: a shadow of the key within the workingset says "add it active" */
		if (C.shadows) {
			unsigned long token = ksync_workingset_shadow_take(C.ws, shadow_key(key));

			active = token && ksync_workingset_refault(C.ws, token, NULL);
		}
#endif
		pthread_mutex_unlock(&C.lock);

		/* a miss: fetch the value, then insert it */
		KSYNC_LIST_HEAD(dispose);

		if (p->direct_reclaim && reacting)
			reactor_charge(C.value_bytes);   /* over the watermark: reclaim first, unlocked */
		unsigned char *v = value_map(C.value_bytes);

		e = v ? malloc(sizeof(*e)) : NULL;
		if (!e) {
			if (v)
				munmap(v, C.value_bytes);
			continue;
		}
		value_fetch(v, C.value_bytes, key, (uint64_t)(p->fetch_us * 1000));
		e->key = key;
		e->val = v;
		e->referenced = 0;
		ksync_list_lru_item_init(&e->lru);
		pthread_mutex_lock(&C.lock);
		ksync_hash_add(C.table, &e->hnode, key);
#ifdef PC_HAVE_WORKINGSET
		if (C.wlru) {
			ksync_lru_item_init(&e->wlru);
			ksync_lru_add(C.wlru, &e->wlru, C.group, 0, active);
			/* after the value is on the LRU, as ksync_set_shrinker_bit() asks */
			ksync_set_shrinker_bit(C.group, 0, C.shrinker->id);
		} else
#endif
			ksync_list_lru_add(&C.lru, &e->lru, 0, C.group);
		(void)active;
		ksync_objcg_charge(C.objcg, 0, 1, (long)C.value_bytes);
		C.bytes += C.value_bytes;
		cache_evict_to_cap(C.cap, &dispose);
		PC_ST(sh->cache_bytes, C.bytes);
		pthread_mutex_unlock(&C.lock);
		cache_free(&dispose);
	}
	PC_ST(sh->ops, ops);
	PC_ST(sh->hits, hits);
	PC_ST(sh->hot_ops, hot_ops);
	PC_ST(sh->hot_hits, hot_hits);
	if (C.kind != PC_LRU_LIST)
		shadow_sample(sh);
	return sink;
}

int pc_child_run(const struct pc_params *p, struct pc_shared *sh)
{
	struct trim_watch tw = { .fd = -1 };
	struct reactor_stats rs = { 0 };
	bool reacting = false;
	pthread_t batch;
	struct zipf z;
	int err;

	if (p->budget)
		PC_ST(sh->baseline_rss, rss_bytes());
	err = zipf_init(&z, p->nr_keys, p->zipf_s, p->seed);
	if (!err)
		err = cache_init(p, sh);
	if (err) {
		fprintf(stderr, "pressure_cache: %s: setup failed: %s\n", pc_variant_name[p->variant], strerror(-err));
		return 1;
	}
	if (p->variant == PC_KSYNC) {
		struct reactor_cfg rc = {
			.reg = C.reg,
			.group = C.group,
			.budget_bytes = p->budget ? p->limit_bytes + sh->baseline_rss : 0,
			.in_loop = p->reactor_in_loop,
		};

		err = reactor_start(&rc, sh->desc, sizeof(sh->desc));
		if (err)
			snprintf(sh->desc, sizeof(sh->desc), "ksync: no pressure source: %s", strerror(-err));
		reacting = !err;
		if (reacting && p->direct_reclaim) {
			size_t n = strlen(sh->desc);

			snprintf(sh->desc + n, sizeof(sh->desc) - n, "; direct reclaim on the insert path");
		}
	} else if (p->variant == PC_TRIM) {
		tw.fd = p->psi_path[0] ? trim_open(p->psi_path, sh->desc, sizeof(sh->desc)) : -1;
		if (!p->psi_path[0])
			snprintf(sh->desc, sizeof(sh->desc), "trim: no cgroup v2 group, no PSI trigger");
		if (tw.fd >= 0 && pthread_create(&tw.thread, NULL, trim_watcher, &tw)) {
			close(tw.fd);
			tw.fd = -1;
		}
	} else {
		snprintf(sh->desc, sizeof(sh->desc), "%s: a cap of %llu MiB, no reaction", pc_variant_name[p->variant],
			 (unsigned long long)(p->cap_bytes / MIB));
	}
	if (pthread_create(&batch, NULL, batch_job, (void *)p)) {
		fprintf(stderr, "pressure_cache: no batch thread\n");
		return 1;
	}
	PC_ST(sh->start_ns, pc_now_ns());
	uint64_t sink = serve(p, sh, &z, reacting);
	PC_ST(sh->end_ns, pc_now_ns());
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	pthread_join(batch, NULL);
	if (tw.fd >= 0) {
		pthread_join(tw.thread, NULL);
		close(tw.fd);
	}
	if (reacting) {
		publish_reaction(sh);
		reactor_stop(&rs);
		PC_ST(sh->pressure_events, rs.events);
		PC_ST(sh->scans, rs.scans);
		PC_ST(sh->objects_freed, rs.freed);
		PC_ST(sh->lib_p99_ns, rs.lib_p99_ns);
		PC_ST(sh->direct_reclaims, rs.direct_rounds);
		PC_ST(sh->direct_freed, rs.direct_freed);
	}
	cache_destroy();
	free(z.cdf);
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	pc_sink = sink;
	return 0;
}
