/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A workingset-shadow-style shrinker whose budget derives from a group's
 * statistics, and the bug of the seed (../shared/reference/workingset-shadow-
 * shrinker-mglru-fix.txt): count_shadow_nodes() read a counter that one LRU
 * mode never maintained, saw the LRU empty, and reclaimed nearly every shadow
 * entry it was meant to keep.
 *
 * Here the cache's objects sit on per-group LRU lists (<ksync/list_lru.h>),
 * which maintain KSYNC_MEMGROUP_STAT_LRU; the shadow shrinker keeps at most
 * SHADOW_PER_OBJECT shadow entries per object on the group's LRU, and counts
 * only the entries beyond that budget. The tests fail if the budget reads a
 * counter nobody maintains (the mutant target builds this file with
 * SHADOW_BUDGET_STAT = KSYNC_MEMGROUP_STAT_USER0 and must fail), or one that
 * misses the objects a dying child left on its parent's lists.
 */
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>

#include <stdlib.h>

#include "ktest.h"

#ifndef SHADOW_BUDGET_STAT
#define SHADOW_BUDGET_STAT KSYNC_MEMGROUP_STAT_LRU
#endif
#define SHADOW_PER_OBJECT 2

struct obj {
	struct ksync_list_lru_item lru;
};

/* Shadow entries per group (the workload's own bookkeeping, by group id). */
static long shadow_entries[64];

/* The kernel's count_shadow_nodes() shape: nodes beyond the budget, else 0. */
static unsigned long shadow_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	long objects, budget, nodes;

	(void)s;
	if (!sc->group)
		return 0;
	objects = ksync_memgroup_stat_read(sc->group, sc->nid, SHADOW_BUDGET_STAT);
	budget = objects * SHADOW_PER_OBJECT;
	nodes = shadow_entries[ksync_memgroup_id(sc->group) % 64];
	return nodes > budget ? (unsigned long)(nodes - budget) : 0;
}

static unsigned long shadow_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	long *n = &shadow_entries[ksync_memgroup_id(sc->group) % 64];
	unsigned long take = sc->nr_to_scan < (unsigned long)*n ? sc->nr_to_scan : (unsigned long)*n;
	*n -= (long)take;
	return take;
}

struct fixture {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_list_lru lru;
	struct ksync_shrinker *shadow;
};

static void setup(struct fixture *f)
{
	f->reg = ksync_shrinker_registry_create(1);
	f->set = ksync_shrinker_registry_groups(f->reg);
	f->shadow = ksync_shrinker_alloc(f->reg, KSYNC_SHRINKER_MEMCG_AWARE, "shadow");
	f->shadow->count_objects = shadow_count;
	f->shadow->scan_objects = shadow_scan;
	f->shadow->seeks = 0; /* "free half of what you can": scan the excess promptly */
	KASSERT(ksync_shrinker_register(f->shadow) == 0);
	KASSERT(ksync_list_lru_init(&f->lru, f->set, 1, NULL) == 0);
}

static void fill(struct fixture *f, struct ksync_memgroup *g, struct obj *objs, int n)
{
	for (int i = 0; i < n; i++) {
		ksync_list_lru_item_init(&objs[i].lru);
		KASSERT(ksync_list_lru_add(&f->lru, &objs[i].lru, 0, g));
	}
}

static void teardown(struct fixture *f, struct obj *objs, int n)
{
	for (int i = 0; i < n; i++)
		ksync_list_lru_del_obj(&f->lru, &objs[i].lru);
	KCHECK_EQ(ksync_shrinker_free(f->shadow), 0);
}

/* The budget follows the objects on the group's LRU: 100 objects keep 200 shadow entries. */
KTEST(budget_reads_the_maintained_counter)
{
	static struct obj objs[100];
	struct fixture f;

	setup(&f);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	fill(&f, g, objs, 100);
	shadow_entries[ksync_memgroup_id(g) % 64] = 250;
	ksync_set_shrinker_bit(g, 0, f.shadow->id);
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_LRU), 100);
	struct ksync_shrink_control sc = { .nid = 0, .group = g };
	KCHECK_EQ(shadow_count(f.shadow, &sc), 50);
	/* Reclaim under pressure keeps the budget: it takes the 50 beyond it, no more. */
	for (int i = 0; i < 8; i++)
		ksync_shrink_slab(f.reg, 0, g, 0);
	KCHECK_EQ(shadow_entries[ksync_memgroup_id(g) % 64], 200);
	teardown(&f, objs, 100);
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&f.lru), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f.reg), 0);
}

/* A dying child's objects move to the parent's lists, and its count with them. */
KTEST(budget_counts_reparented_objects)
{
	static struct obj objs[100];
	struct fixture f;

	setup(&f);
	struct ksync_memgroup *p = ksync_shrinker_group_create(f.reg, NULL);
	struct ksync_memgroup *c = ksync_shrinker_group_create(f.reg, p);
	fill(&f, p, objs, 20);
	fill(&f, c, objs + 20, 80);
	KCHECK_EQ(ksync_shrinker_group_destroy(c), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&f.lru, 0, p), 100);
	KCHECK_EQ(ksync_memgroup_stat_read(p, 0, KSYNC_MEMGROUP_STAT_LRU), 100);
	shadow_entries[ksync_memgroup_id(p) % 64] = 210;
	struct ksync_shrink_control sc = { .nid = 0, .group = p };
	KCHECK_EQ(shadow_count(f.shadow, &sc), 10); /* budget 200, not 40 */
	teardown(&f, objs, 100);
	KCHECK_EQ(ksync_memgroup_stat_read(p, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(p), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&f.lru), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f.reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
