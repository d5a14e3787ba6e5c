/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shadow shrinker must trim to its budget at the priorities real
 * pressure uses, not only at priority 0.
 *
 * Found by the pressure demo (pressure_cache --workload scan --lru both,
 * issue 22): under a real cgroup limit the monitor's rounds (priorities
 * 12..4) never freed a shadow node, and the shadow store stayed up to 182
 * nodes above a budget of a few hundred. The shrinker has seeks 0 (as the
 * kernel's: count_objects reports only the nodes beyond the budget), so a
 * round's new work is half that excess, and the work it defers comes back
 * shifted right by the priority; with the default batch of 128 objects
 * (KSYNC_SHRINK_BATCH, sized for kernel caches of millions of objects) a
 * round scans only once that work reaches a batch or the whole count, so an
 * excess under about 256 nodes was never touched above priority 1 or 2. A
 * userspace cache of a few thousand items has a budget of a few hundred
 * nodes: the excess left over could be most of the budget again.
 *
 * Here a group's LRU holds 512 items (budget (512 + nodes) >> 3), and 200
 * shadow nodes are stored (one entry each): 111 nodes beyond the budget.
 * Rounds of ksync_shrink_slab() on the group at the monitor's floor for its
 * critical level (4) and at KSYNC_DEF_PRIORITY must bring the excess under
 * 32 nodes (two of the shrinker's batches of 16) and free nodes doing it;
 * with the default batch they free none.
 */
#include <ksync/shrinker.h>
#include <ksync/workingset.h>

#include <stdlib.h>

#include "ktest.h"

#define ITEMS 512
#define NODES 200
#define ROUNDS 32
#define MAX_EXCESS 32

struct fixture {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *g;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	struct ksync_lru_item items[ITEMS];
};

static void setup(struct fixture *f)
{
	f->reg = ksync_shrinker_registry_create(1);
	KCHECK(f->reg != NULL);
	f->g = ksync_shrinker_group_create(f->reg, NULL);
	KCHECK(f->g != NULL);
	f->ws = ksync_workingset_create(f->reg, 0);
	KCHECK(f->ws != NULL);
	f->lru = ksync_lru_create(f->ws, KSYNC_MGLRU);
	KCHECK(f->lru != NULL);
	for (int i = 0; i < ITEMS; i++) {
		ksync_lru_item_init(&f->items[i]);
		KCHECK_EQ(ksync_lru_add(f->lru, &f->items[i], f->g, 0, false), 0);
	}
	/* one shadow entry in each of NODES shadow nodes (64 keys a node) */
	for (unsigned long n = 0; n < NODES; n++)
		KCHECK_EQ(ksync_workingset_shadow_store(f->ws, n * KSYNC_WORKINGSET_NODE_SLOTS,
							ksync_workingset_eviction(f->ws, f->g, 0)),
			  0);
}

static void teardown(struct fixture *f)
{
	for (int i = 0; i < ITEMS; i++)
		ksync_lru_del(f->lru, &f->items[i]);
	ksync_shrinker_group_destroy(f->g);
	KCHECK_EQ(ksync_lru_destroy(f->lru), 0);
	KCHECK_EQ(ksync_workingset_destroy(f->ws), 0);
	ksync_shrinker_registry_destroy(f->reg);
}

static unsigned long excess(struct fixture *f)
{
	struct ksync_workingset_stats st;
	unsigned long budget = ksync_workingset_shadow_budget(f->ws, f->g, 0);

	ksync_workingset_stats(f->ws, &st);
	return st.shadow_nodes > budget ? st.shadow_nodes - budget : 0;
}

static void trims_at(int priority)
{
	static struct fixture f;
	struct ksync_workingset_stats st;
	unsigned long before;

	setup(&f);
	before = excess(&f);
	KCHECK(before > 100); /* the setup made the excess it claims */
	for (int i = 0; i < ROUNDS; i++)
		ksync_shrink_slab(f.reg, 0, f.g, priority);
	ksync_workingset_stats(f.ws, &st);
	KCHECK(st.nodes_reclaimed > 0);
	KCHECK(excess(&f) < MAX_EXCESS);
	teardown(&f);
}

KTEST(shadow_trimmed_at_the_monitors_floor)
{
	trims_at(4);
}

KTEST(shadow_trimmed_at_def_priority)
{
	trims_at(KSYNC_DEF_PRIORITY);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
