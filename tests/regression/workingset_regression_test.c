/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The MGLRU shadow-budget bug ("mm: workingset: fix the shadow node budget
 * under MGLRU", ../shared/reference/workingset-shadow-shrinker-mglru-fix.txt):
 * commit 7404bd37cfbe made count_shadow_nodes() read lruvec_lru_size(),
 * a counter (mz->lru_zone_size) that only the classic LRU maintains; under
 * MGLRU the budget collapsed to ~0, the shadow shrinker reclaimed the
 * eviction tokens as fast as they were made, and refaults were no longer
 * activated: thrashing protection silently gone.
 *
 * Here a small cache (CAPACITY items of one group, ksync::workingset's two
 * LRU flavours) is filled, then a one-pass scan of as many new keys evicts
 * every old item, leaving a shadow entry for each, while a second thread
 * runs the shadow shrinker on the group (the reclaim that races the cache).
 * Then the shrinker runs to completion, and the last-evicted old keys come
 * back. With the budget read from KSYNC_MEMGROUP_STAT_LRU (both flavours
 * maintain it), the budget is CAPACITY >> 3 nodes or more, no shadow node
 * beyond it is taken, and every refault is judged in the workingset. Built
 * with lib/workingset and KSYNC_PLANT_WORKINGSET_BUDGET_FROM_CLASSIC_ONLY
 * (the budget reads the classic flavour's own list sizes, the bug), the
 * MGLRU case must fail on all three counts (workingset_regression_plant in
 * tests/regression/CMakeLists.txt passes only on that failure); the classic
 * case still passes, as the kernel's classic LRU did.
 */
#include <ksync/memgroup_stat.h>
#include <ksync/shrinker.h>
#include <ksync/workingset.h>

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"

#define CAPACITY 512
#define SCAN_BASE 100000UL
#define COMEBACK 128

struct item {
	struct ksync_lru_item lru;
	unsigned long key;
	bool present;
};

struct cache {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	struct ksync_memgroup *g;
	struct item *items; /* [0, CAPACITY) old keys, then the scan's */
	unsigned long nr;
	unsigned long activated;
};

static struct item *item_of(struct cache *c, unsigned long key)
{
	return &c->items[key < SCAN_BASE ? key : CAPACITY + (key - SCAN_BASE)];
}

static void evicted(struct ksync_lru_item *li, unsigned long token, void *arg)
{
	struct cache *c = arg;
	struct item *it = ksync_container_of(li, struct item, lru);

	it->present = false;
	c->nr--;
	KCHECK(token != 0);
	KCHECK_EQ(ksync_workingset_shadow_store(c->ws, it->key, token), 0);
}

/* A lookup: a hit marks the item; a miss refaults through its shadow and inserts. */
static void lookup(struct cache *c, unsigned long key)
{
	struct item *it = item_of(c, key);
	unsigned long token;
	bool active = false;

	if (it->present) {
		ksync_lru_mark_accessed(c->lru, &it->lru);
		return;
	}
	token = ksync_workingset_shadow_take(c->ws, key);
	if (token && ksync_workingset_refault(c->ws, token, NULL)) {
		active = true;
		c->activated++;
	}
	if (c->nr >= CAPACITY)
		KCHECK_EQ(ksync_lru_evict(c->lru, c->g, 0, 1, evicted, c), 1);
	it->key = key;
	ksync_lru_item_init(&it->lru);
	KCHECK_EQ(ksync_lru_add(c->lru, &it->lru, c->g, 0, active), 0);
	it->present = true;
	c->nr++;
}

struct reclaimer {
	struct cache *c;
	int stop;
	unsigned long freed;
};

static void *reclaim_thread(void *arg)
{
	struct reclaimer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
		r->freed += ksync_shrink_slab(r->c->reg, 0, r->c->g, 0);
	return NULL;
}

/*
 * The shadow shrinker on the group, at the highest pressure, enough times
 * for its deferred work to reach anything it counts (seeks 0: half of the
 * count per call, carried over until it makes a scan).
 */
static unsigned long shrink_all(struct cache *c)
{
	unsigned long freed = 0;

	for (int i = 0; i < 64; i++)
		freed += ksync_shrink_slab(c->reg, 0, c->g, 0);
	return freed;
}

static void run(enum ksync_lru_flavour flavour)
{
	struct cache c = { 0 };
	struct reclaimer rec = { .c = &c };
	struct ksync_workingset_stats st;
	unsigned long budget, nodes_before;
	pthread_t t;

	c.items = calloc(2 * CAPACITY, sizeof(*c.items));
	KASSERT(c.items);
	c.reg = ksync_shrinker_registry_create(1);
	KASSERT(c.reg);
	c.ws = ksync_workingset_create(c.reg, 0);
	KASSERT(c.ws);
	c.lru = ksync_lru_create(c.ws, flavour);
	KASSERT(c.lru);
	c.g = ksync_shrinker_group_create(c.reg, NULL);
	KASSERT(c.g);

	for (unsigned long k = 0; k < CAPACITY; k++)
		lookup(&c, k);
	/* The one-pass scan evicts every old key, racing the shadow shrinker. */
	KASSERT(pthread_create(&t, NULL, reclaim_thread, &rec) == 0);
	for (unsigned long k = 0; k < CAPACITY; k++)
		lookup(&c, SCAN_BASE + k);
	__atomic_store_n(&rec.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);

	ksync_workingset_stats(c.ws, &st);
	nodes_before = st.shadow_nodes;
	budget = ksync_workingset_shadow_budget(c.ws, c.g, 0);
	KCHECK(nodes_before > 0);
	/* The budget follows the group's LRU: CAPACITY items, so CAPACITY >> 3 nodes at least. */
	KCHECK(budget >= CAPACITY >> 3);
	shrink_all(&c);
	ksync_workingset_stats(c.ws, &st);
	/* Within the budget, the shadow shrinker takes nothing. */
	KCHECK_EQ(st.shadow_nodes, nodes_before);
	KCHECK_EQ(st.nodes_reclaimed, 0);

	/* The last-evicted old keys come back: each refault is in the workingset. */
	for (unsigned long k = CAPACITY - COMEBACK; k < CAPACITY; k++)
		lookup(&c, k);
	KCHECK_EQ(c.activated, COMEBACK);

	for (unsigned long i = 0; i < 2 * CAPACITY; i++)
		if (c.items[i].present)
			KCHECK(ksync_lru_del(c.lru, &c.items[i].lru));
	for (unsigned long k = 0; k < CAPACITY; k++) {
		ksync_workingset_shadow_take(c.ws, k);
		ksync_workingset_shadow_take(c.ws, SCAN_BASE + k);
	}
	ksync_workingset_stats(c.ws, &st);
	KCHECK_EQ(st.shadow_entries, 0);
	KCHECK_EQ(st.shadow_nodes, 0);
	KCHECK_EQ(ksync_memgroup_stat_read(c.g, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(c.g), 0);
	KCHECK_EQ(ksync_lru_destroy(c.lru), 0);
	KCHECK_EQ(ksync_workingset_destroy(c.ws), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(c.reg), 0);
	free(c.items);
}

KTEST(classic_keeps_shadow_budget)
{
	run(KSYNC_LRU_CLASSIC);
}

KTEST(mglru_keeps_shadow_budget)
{
	run(KSYNC_MGLRU);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
