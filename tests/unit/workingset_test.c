/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync::workingset (lib/workingset): tokens, refault distances and
 * activations against a model of the clocks; the shadow budget under both
 * LRU flavours; tokens across offline and reparenting; the flavours'
 * orders; the shadow store; the shadow shrinker under concurrent walks and
 * offlines (run under TSan: label concurrent); allocation failures.
 */
#include <ksync/fuzzing.h>
#include <ksync/memgroup_stat.h>
#include <ksync/shrinker.h>
#include <ksync/workingset.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

struct rng {
	uint64_t s;
};

static void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = seed * 0x9E3779B97F4A7C15ULL + 1;
}

static unsigned long rng_below(struct rng *r, unsigned long n)
{
	return (unsigned long)(kt_xorshift64s(&r->s) % n);
}

struct fx {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
};

static void fx_init(struct fx *f, int nodes)
{
	f->reg = ksync_shrinker_registry_create(nodes);
	KASSERT(f->reg);
	f->ws = ksync_workingset_create(f->reg, 64);
	KASSERT(f->ws);
}

static void fx_fini(struct fx *f)
{
	KCHECK_EQ(ksync_workingset_destroy(f->ws), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
}

static unsigned long distance_of(struct fx *f, unsigned long token, bool *recent)
{
	struct ksync_workingset_refault_info in;

	*recent = ksync_workingset_refault(f->ws, token, &in);
	return in.distance;
}

/* The layout of a token, and the distance: events on the clock since the eviction. */
KTEST(token_and_distance)
{
	struct fx f;
	struct ksync_workingset_refault_info in;

	fx_init(&f, 2);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	unsigned long t = ksync_workingset_eviction(f.ws, g, 1);

	KCHECK(t & 1);
	KCHECK_EQ((t >> 1) & ((1UL << KSYNC_WORKINGSET_NODE_BITS) - 1), 1);
	KCHECK_EQ((t >> (1 + KSYNC_WORKINGSET_NODE_BITS)) & ((1UL << KSYNC_WORKINGSET_ID_BITS) - 1),
		  ksync_memgroup_id(g) + 1);
	for (int i = 0; i < 5; i++)
		ksync_workingset_eviction(f.ws, g, 1);
	KCHECK_EQ(ksync_workingset_activation(f.ws, g, 1), 0);
	ksync_workingset_eviction(f.ws, g, 0); /* another node's clock */
	KCHECK(!ksync_workingset_refault(f.ws, t, &in)); /* an empty LRU: workingset size 0 */
	KCHECK_EQ(in.distance, 6 + 1 - 1 + 1); /* its own tick, 5 evictions, 1 activation */
	KCHECK_EQ(in.workingset_size, 0);
	KCHECK_EQ(in.group_id, ksync_memgroup_id(g));
	KCHECK_EQ(in.nid, 1);
	KCHECK_EQ(in.translated, 0);

	/* With 10 items on the group's LRU, a distance of 7 is in the workingset. */
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_LRU_CLASSIC);
	struct ksync_lru_item items[10];
	for (int i = 0; i < 10; i++) {
		ksync_lru_item_init(&items[i]);
		KCHECK_EQ(ksync_lru_add(lru, &items[i], g, 1, false), 0);
	}
	KCHECK(ksync_workingset_refault(f.ws, t, &in));
	KCHECK_EQ(in.workingset_size, 10);
	bool recent;
	KCHECK_EQ(distance_of(&f, t, &recent), 8); /* the workingset refault aged the clock */
	for (int i = 0; i < 10; i++)
		KCHECK(ksync_lru_del(lru, &items[i]));
	struct ksync_workingset_stats st;
	ksync_workingset_stats(f.ws, &st);
	KCHECK_EQ(st.evictions, 7);
	KCHECK_EQ(st.refaults, 3);
	KCHECK_EQ(st.refaults_workingset, 2);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_lru_destroy(lru), 0);
	fx_fini(&f);
}

/*
 * A model: per (group, node) a clock that every eviction and activation in
 * the group or a descendant ticks, and tokens judged by their group's clock.
 * Random evictions, activations and refaults in a three-level tree.
 */
KTEST(clocks_against_a_model)
{
	enum { NG = 6, NN = 2, OPS = 4000 };
	struct fx f;
	struct ksync_memgroup *g[NG];
	int parent[NG] = { -1, 0, 0, 1, 1, 2 };
	unsigned long model[NG][NN] = { { 0 } };
	struct { unsigned long token; int g, nid; unsigned long clock; } tok[256];
	int ntok = 0;
	struct rng r;

	rng_seed(&r, 22);
	fx_init(&f, NN);
	for (int i = 0; i < NG; i++)
		g[i] = ksync_shrinker_group_create(f.reg, parent[i] < 0 ? NULL : g[parent[i]]);
	for (int op = 0; op < OPS; op++) {
		int i = (int)rng_below(&r, NG), nid = (int)rng_below(&r, NN);
		unsigned long what = rng_below(&r, 4);

		if (what <= 1) {
			unsigned long t = ksync_workingset_eviction(f.ws, g[i], nid);
			int slot = ntok < 256 ? ntok++ : (int)rng_below(&r, 256);

			tok[slot].token = t;
			tok[slot].g = i;
			tok[slot].nid = nid;
			tok[slot].clock = model[i][nid];
		} else if (what == 2) {
			KCHECK_EQ(ksync_workingset_activation(f.ws, g[i], nid), 0);
		} else if (ntok) {
			int k = (int)rng_below(&r, (unsigned long)ntok);
			struct ksync_workingset_refault_info in;

			KCHECK(!ksync_workingset_refault(f.ws, tok[k].token, &in)); /* no LRU: size 0 */
			KCHECK_EQ(in.distance, model[tok[k].g][tok[k].nid] - tok[k].clock);
			KCHECK_EQ(in.nid, tok[k].nid);
			continue;
		} else {
			continue;
		}
		for (int a = i; a >= 0; a = parent[a])
			model[a][nid]++;
	}
	for (int i = NG - 1; i >= 0; i--)
		KCHECK_EQ(ksync_shrinker_group_destroy(g[i]), 0);
	fx_fini(&f);
}

/* A token of a group gone offline is judged by its heir, with the distance it would have had. */
KTEST(tokens_across_offline_and_reparent)
{
	struct fx f;
	struct ksync_workingset_refault_info in;
	struct ksync_lru_item items[70];

	fx_init(&f, 1);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_MGLRU);
	struct ksync_memgroup *p = ksync_shrinker_group_create(f.reg, NULL);
	struct ksync_memgroup *c = ksync_shrinker_group_create(f.reg, p);
	for (int i = 0; i < 70; i++) {
		ksync_lru_item_init(&items[i]);
		KCHECK_EQ(ksync_lru_add(lru, &items[i], i < 50 ? p : c, 0, false), 0);
	}
	unsigned long t = ksync_workingset_eviction(f.ws, c, 0);
	for (int i = 0; i < 3; i++)
		ksync_workingset_eviction(f.ws, c, 0);
	ksync_memgroup_get(c); /* kept in memory past its offline, for the eviction below */
	KCHECK_EQ(ksync_shrinker_group_destroy(c), 0); /* c's items and statistics go to p */
	for (int i = 0; i < 4; i++)
		ksync_workingset_eviction(f.ws, p, 0);
	KCHECK_EQ(ksync_lru_size(lru, p, 0), 70);
	KCHECK(ksync_workingset_refault(f.ws, t, &in));
	KCHECK_EQ(in.translated, 1);
	KCHECK_EQ(in.group_id, ksync_memgroup_id(p));
	KCHECK_EQ(in.distance, 4 + 4); /* c's 4 ticks after the token, p's 4 since the offline */
	KCHECK_EQ(in.workingset_size, 70);
	/* An eviction aimed at the offline group (still referenced) ticks its heir. */
	unsigned long t2 = ksync_workingset_eviction(f.ws, c, 0);
	ksync_memgroup_put(c);
	KCHECK(ksync_workingset_refault(f.ws, t2, &in));
	KCHECK_EQ(in.translated, 0);
	KCHECK_EQ(in.group_id, ksync_memgroup_id(p));

	/* p goes too: its items go to the root lists, and the tokens to the root. */
	for (int i = 0; i < 70; i++)
		KCHECK(ksync_lru_del(lru, &items[i]));
	KCHECK_EQ(ksync_shrinker_group_destroy(p), 0);
	KCHECK(!ksync_workingset_refault(f.ws, t, &in)); /* nothing left on the root lists */
	KCHECK_EQ(in.translated, 2);
	KCHECK_EQ(in.group_id, -1);
	KCHECK_EQ(ksync_memgroup_stat_total(ksync_shrinker_registry_groups(f.reg), 0, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK_EQ(ksync_lru_destroy(lru), 0);
	fx_fini(&f);
}

/* A top-level group's items and their count go to the root lists at its offline. */
KTEST(offline_moves_items_to_the_root)
{
	for (int fl = 0; fl < 2; fl++) {
		struct fx f;
		struct ksync_lru_item items[20];

		fx_init(&f, 1);
		struct ksync_lru *lru = ksync_lru_create(f.ws, fl ? KSYNC_MGLRU : KSYNC_LRU_CLASSIC);
		struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
		for (int i = 0; i < 20; i++) {
			ksync_lru_item_init(&items[i]);
			KCHECK_EQ(ksync_lru_add(lru, &items[i], g, 0, i & 1), 0);
		}
		KCHECK_EQ(ksync_workingset_shadow_budget(f.ws, g, 0), 20 >> 3);
		ksync_memgroup_get(g);
		KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
		KCHECK_EQ(ksync_lru_size(lru, NULL, 0), 20);
		KCHECK_EQ(ksync_lru_size(lru, g, 0), 0);
		KCHECK_EQ(ksync_workingset_shadow_budget(f.ws, NULL, 0), 20 >> 3);
		/* An add aimed at the dead group lands at the root. */
		struct ksync_lru_item late;
		ksync_lru_item_init(&late);
		KCHECK_EQ(ksync_lru_add(lru, &late, g, 0, false), 0);
		KCHECK_EQ(ksync_lru_size(lru, NULL, 0), 21);
		ksync_memgroup_put(g);
		KCHECK(ksync_lru_del(lru, &late));
		for (int i = 0; i < 20; i++)
			KCHECK(ksync_lru_del(lru, &items[i]));
		KCHECK_EQ(ksync_workingset_shadow_budget(f.ws, NULL, 0), 0);
		KCHECK_EQ(ksync_memgroup_stat_total(ksync_shrinker_registry_groups(f.reg), 0, KSYNC_MEMGROUP_STAT_LRU), 0);
		KCHECK_EQ(ksync_lru_destroy(lru), 0);
		fx_fini(&f);
	}
}

static unsigned long keys_evicted[64];
static int nkeys_evicted;

static void record_evicted(struct ksync_lru_item *item, unsigned long token, void *arg)
{
	struct ksync_lru_item *base = arg;

	KCHECK(token != 0);
	if (nkeys_evicted < 64)
		keys_evicted[nkeys_evicted++] = (unsigned long)(item - base);
}

/* The classic pair: a second access activates; eviction takes the oldest inactive. */
KTEST(classic_order)
{
	struct fx f;
	struct ksync_lru_item it[4];

	fx_init(&f, 1);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_LRU_CLASSIC);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	for (int i = 0; i < 4; i++) {
		ksync_lru_item_init(&it[i]);
		KCHECK_EQ(ksync_lru_add(lru, &it[i], g, 0, false), 0);
	}
	ksync_lru_mark_accessed(lru, &it[0]);
	ksync_lru_mark_accessed(lru, &it[0]); /* promoted: an activation */
	ksync_lru_mark_accessed(lru, &it[1]); /* referenced once: promoted when the eviction reaches it */
	nkeys_evicted = 0;
	KCHECK_EQ(ksync_lru_evict(lru, g, 0, 2, record_evicted, it), 2);
	KCHECK_EQ(nkeys_evicted, 2);
	KCHECK_EQ(keys_evicted[0], 2);
	KCHECK_EQ(keys_evicted[1], 3);
	struct ksync_workingset_stats st;
	ksync_workingset_stats(f.ws, &st);
	KCHECK_EQ(st.activations, 2);
	KCHECK_EQ(st.evictions, 2);
	KCHECK(!ksync_lru_del(lru, &it[2])); /* evicted: on no LRU */
	KCHECK(ksync_lru_del(lru, &it[0]));
	KCHECK(ksync_lru_del(lru, &it[1]));
	KCHECK_EQ(ksync_lru_size(lru, g, 0), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_lru_destroy(lru), 0);
	fx_fini(&f);
}

/* MGLRU: new items in the oldest generation; a marked one survives the eviction pass. */
KTEST(mglru_order)
{
	struct fx f;
	struct ksync_lru_item it[6];

	fx_init(&f, 1);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_MGLRU);
	KCHECK_EQ(ksync_lru_flavour(lru), KSYNC_MGLRU);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	for (int i = 0; i < 6; i++) {
		ksync_lru_item_init(&it[i]);
		KCHECK_EQ(ksync_lru_add(lru, &it[i], g, 0, i == 5), 0); /* 5: a workingset refault */
	}
	ksync_lru_mark_accessed(lru, &it[0]);
	nkeys_evicted = 0;
	KCHECK_EQ(ksync_lru_evict(lru, g, 0, 4, record_evicted, it), 4);
	KCHECK_EQ(keys_evicted[0], 1);
	KCHECK_EQ(keys_evicted[1], 2);
	KCHECK_EQ(keys_evicted[2], 3);
	KCHECK_EQ(keys_evicted[3], 4);
	KCHECK_EQ(ksync_lru_size(lru, g, 0), 2);
	KCHECK(ksync_lru_del(lru, &it[0]));
	KCHECK(ksync_lru_del(lru, &it[5]));
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_lru_destroy(lru), 0);
	fx_fini(&f);
}

/* The store: 64 keys to a node, take returns and clears, an emptied node goes. */
KTEST(shadow_store)
{
	struct fx f;
	struct ksync_workingset_stats st;

	fx_init(&f, 1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	for (unsigned long k = 0; k < 130; k++)
		KCHECK_EQ(ksync_workingset_shadow_store(f.ws, k, ksync_workingset_eviction(f.ws, g, 0)), 0);
	ksync_workingset_stats(f.ws, &st);
	KCHECK_EQ(st.shadow_entries, 130);
	KCHECK_EQ(st.shadow_nodes, 3);
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_LRU), 3); /* the nodes' list_lru counts them */
	unsigned long t = ksync_workingset_shadow_take(f.ws, 129);
	KCHECK(t != 0);
	KCHECK_EQ(ksync_workingset_shadow_take(f.ws, 129), 0);
	KCHECK_EQ(ksync_workingset_shadow_take(f.ws, 1000), 0);
	KCHECK(ksync_workingset_shadow_take(f.ws, 128) != 0); /* the last of its node */
	ksync_workingset_stats(f.ws, &st);
	KCHECK_EQ(st.shadow_nodes, 2);
	KCHECK_EQ(st.shadow_entries, 128);
	/* Without LRU items the budget is the nodes themselves >> 3: the shrinker takes both. */
	for (int i = 0; i < 64; i++)
		ksync_shrink_slab(f.reg, 0, g, 0);
	ksync_workingset_stats(f.ws, &st);
	KCHECK_EQ(st.shadow_nodes, 0);
	KCHECK_EQ(st.nodes_reclaimed, 2);
	KCHECK_EQ(st.entries_reclaimed, 128);
	KCHECK_EQ(ksync_workingset_shadow_take(f.ws, 5), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	fx_fini(&f);
}

static void store_evicted(struct ksync_lru_item *item, unsigned long token, void *arg)
{
	struct ksync_lru_item *base = ((struct ksync_lru_item **)arg)[0];
	struct ksync_workingset *ws = ((struct ksync_workingset **)arg)[1];

	KCHECK_EQ(ksync_workingset_shadow_store(ws, (unsigned long)(item - base) * 7, token), 0);
}

/* The budget is the same under both flavours: the local LRU statistic >> 3. */
KTEST(budget_under_both_flavours)
{
	for (int fl = 0; fl < 2; fl++) {
		struct fx f;
		static struct ksync_lru_item it[400];
		void *arg[2];
		struct ksync_workingset_stats st;

		fx_init(&f, 1);
		struct ksync_lru *lru = ksync_lru_create(f.ws, fl ? KSYNC_MGLRU : KSYNC_LRU_CLASSIC);
		struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
		arg[0] = it;
		arg[1] = f.ws;
		for (int i = 0; i < 400; i++) {
			ksync_lru_item_init(&it[i]);
			KCHECK_EQ(ksync_lru_add(lru, &it[i], g, 0, false), 0);
		}
		KCHECK_EQ(ksync_workingset_shadow_budget(f.ws, g, 0), 400 >> 3);
		/* 160 evictions, shadows 7 keys apart: 18 nodes. */
		KCHECK_EQ(ksync_lru_evict(lru, g, 0, 160, store_evicted, arg), 160);
		ksync_workingset_stats(f.ws, &st);
		unsigned long nodes = st.shadow_nodes;
		KCHECK_EQ(nodes, (160 * 7 + 63) / 64);
		KCHECK_EQ(ksync_workingset_shadow_budget(f.ws, g, 0), (240 + nodes) >> 3);
		for (int i = 0; i < 64; i++)
			ksync_shrink_slab(f.reg, 0, g, 0);
		ksync_workingset_stats(f.ws, &st);
		KCHECK_EQ(st.shadow_nodes, nodes); /* within the budget: kept */
		/* Shrink the LRU to 40 items: the budget falls to 5 + 0 and the excess goes. */
		KCHECK_EQ(ksync_lru_evict(lru, g, 0, 200, store_evicted, arg), 200);
		ksync_workingset_stats(f.ws, &st);
		nodes = st.shadow_nodes;
		for (int i = 0; i < 64; i++)
			ksync_shrink_slab(f.reg, 0, g, 0);
		ksync_workingset_stats(f.ws, &st);
		KCHECK(st.shadow_nodes < nodes);
		KCHECK(st.shadow_nodes <= ksync_workingset_shadow_budget(f.ws, g, 0) + 1);
		KCHECK(st.shadow_nodes >= (40 >> 3));
		for (int i = 0; i < 400; i++)
			ksync_lru_del(lru, &it[i]);
		for (unsigned long k = 0; k < 400 * 7; k += 7)
			ksync_workingset_shadow_take(f.ws, k);
		ksync_workingset_stats(f.ws, &st);
		KCHECK_EQ(st.shadow_nodes, 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
		KCHECK_EQ(ksync_lru_destroy(lru), 0);
		fx_fini(&f);
	}
}

/*
 * The shadow shrinker under concurrent walks and offlines: cache threads
 * evict and refault through their own child groups, which a churner
 * offlines and recreates, while reclaimers walk every group. Afterwards every
 * count is consistent: the LRU statistic conserved, the store emptied.
 */
enum { CT = 2, CITEMS = 256, CROUNDS = 300 };

struct conc {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	struct ksync_memgroup *top;
	int stop;
};

struct cthread;

struct citem {
	struct ksync_lru_item lru;
	struct cthread *owner;
	unsigned long key;
	int present; /* release by the evictor's callback, acquire by the owner */
};

struct cthread {
	struct conc *c;
	int id;
	struct citem items[CITEMS];
};

/* Any thread's eviction (the top group holds every thread's reparented items). */
static void conc_evicted(struct ksync_lru_item *item, unsigned long token, void *arg)
{
	struct citem *it = ksync_container_of(item, struct citem, lru);
	struct conc *c = arg;

	ksync_workingset_shadow_store(c->ws, it->key, token);
	__atomic_store_n(&it->present, 0, __ATOMIC_RELEASE);
}

static void *cache_thread(void *arg)
{
	struct cthread *t = arg;
	struct conc *c = t->c;
	struct rng r;

	rng_seed(&r, (uint64_t)t->id + 1);
	for (int round = 0; round < CROUNDS; round++) {
		/* A group of its own for this round, offlined at its end. */
		struct ksync_memgroup *g = ksync_shrinker_group_create(c->reg, c->top);

		KASSERT(g);
		for (int n = 0; n < 64; n++) {
			struct citem *it = &t->items[rng_below(&r, CITEMS)];

			if (__atomic_load_n(&it->present, __ATOMIC_ACQUIRE)) {
				ksync_lru_mark_accessed(c->lru, &it->lru);
				continue;
			}
			unsigned long tok = ksync_workingset_shadow_take(c->ws, it->key);
			bool active = tok && ksync_workingset_refault(c->ws, tok, NULL);
			ksync_lru_item_init(&it->lru);
			__atomic_store_n(&it->present, 1, __ATOMIC_RELAXED);
			KASSERT(ksync_lru_add(c->lru, &it->lru, g, 0, active) == 0);
		}
		ksync_lru_evict(c->lru, g, 0, 32, conc_evicted, c);
		/* Items of the round's group move to the top group at the offline. */
		KASSERT(ksync_shrinker_group_destroy(g) == 0);
		ksync_lru_evict(c->lru, c->top, 0, 8, conc_evicted, c);
	}
	return NULL;
}

static void *reclaim_thread(void *arg)
{
	struct conc *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		ksync_shrink_slab(c->reg, 0, c->top, 0);
		ksync_shrink_slab(c->reg, 0, NULL, 0);
	}
	return NULL;
}

KTEST(shadow_shrinker_concurrent_walks_and_offlines)
{
	for (int fl = 0; fl < 2; fl++) {
		struct conc c = { 0 };
		static struct cthread th[CT];
		pthread_t tid[CT], rt[2];
		struct ksync_workingset_stats st;

		c.reg = ksync_shrinker_registry_create(1);
		c.ws = ksync_workingset_create(c.reg, 256);
		c.lru = ksync_lru_create(c.ws, fl ? KSYNC_MGLRU : KSYNC_LRU_CLASSIC);
		c.top = ksync_shrinker_group_create(c.reg, NULL);
		KASSERT(c.reg && c.ws && c.lru && c.top);
		for (int i = 0; i < 2; i++)
			KASSERT(pthread_create(&rt[i], NULL, reclaim_thread, &c) == 0);
		for (int i = 0; i < CT; i++) {
			memset(&th[i], 0, sizeof(th[i]));
			th[i].c = &c;
			th[i].id = i;
			for (int k = 0; k < CITEMS; k++) {
				th[i].items[k].owner = &th[i];
				th[i].items[k].key = (unsigned long)i * 100000 + (unsigned long)k;
			}
			KASSERT(pthread_create(&tid[i], NULL, cache_thread, &th[i]) == 0);
		}
		for (int i = 0; i < CT; i++)
			pthread_join(tid[i], NULL);
		__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 2; i++)
			pthread_join(rt[i], NULL);

		unsigned long items = 0;
		for (int i = 0; i < CT; i++)
			for (int k = 0; k < CITEMS; k++)
				if (th[i].items[k].present) {
					KCHECK(ksync_lru_del(c.lru, &th[i].items[k].lru));
					items++;
				}
		(void)items;
		KCHECK_EQ(ksync_lru_size(c.lru, c.top, 0), 0);
		for (int i = 0; i < CT; i++)
			for (unsigned long k = 0; k < CITEMS; k++)
				ksync_workingset_shadow_take(c.ws, (unsigned long)i * 100000 + k);
		ksync_workingset_stats(c.ws, &st);
		KCHECK_EQ(st.shadow_entries, 0);
		KCHECK_EQ(st.shadow_nodes, 0);
		KCHECK(st.evictions > 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(c.top), 0);
		KCHECK_EQ(ksync_memgroup_stat_total(ksync_shrinker_registry_groups(c.reg), 0, KSYNC_MEMGROUP_STAT_LRU), 0);
		KCHECK_EQ(ksync_lru_destroy(c.lru), 0);
		KCHECK_EQ(ksync_workingset_destroy(c.ws), 0);
		KCHECK_EQ(ksync_shrinker_registry_destroy(c.reg), 0);
	}
}

/* Out of memory: creation fails cleanly at every allocation; a store drops its shadow. */
KTEST(out_of_memory)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_workingset *ws = NULL;
	int n;

	KASSERT(reg);
	for (n = 1; n < 64; n++) {
		ksync_fail_nth_alloc((unsigned long)n);
		ws = ksync_workingset_create(reg, 0);
		bool fired = ksync_fail_nth_alloc_fired();
		ksync_fail_nth_alloc(0);
		if (!fired)
			break;
		KCHECK(ws == NULL);
	}
	KCHECK(ws != NULL);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	unsigned long t = ksync_workingset_eviction(ws, g, 0);
	int enomem = 0;
	/* The first allocation of a store is its node's (once the thread's SRCU state exists). */
	for (int tries = 0; tries < 4 && !enomem; tries++) {
		ksync_fail_nth_alloc(1);
		int err = ksync_workingset_shadow_store(ws, 1, t);
		ksync_fail_nth_alloc(0);
		if (err) {
			KCHECK_EQ(err, -ENOMEM); /* the shadow is dropped, nothing half-made */
			KCHECK_EQ(ksync_workingset_shadow_take(ws, 1), 0);
			enomem++;
		} else {
			KCHECK_EQ(ksync_workingset_shadow_take(ws, 1), t);
		}
	}
	KCHECK(enomem >= 1);
	struct ksync_lru *lru = NULL;
	for (n = 1; n < 16; n++) {
		ksync_fail_nth_alloc((unsigned long)n);
		lru = ksync_lru_create(ws, KSYNC_MGLRU);
		bool fired = ksync_fail_nth_alloc_fired();
		ksync_fail_nth_alloc(0);
		if (!fired)
			break;
		KCHECK(lru == NULL);
	}
	KCHECK(lru != NULL);
	/* A group whose creation fails at the workingset's record leaves nothing behind. */
	ksync_fail_nth_alloc(1);
	struct ksync_memgroup *bad = ksync_shrinker_group_create(reg, NULL);
	ksync_fail_nth_alloc(0);
	if (bad)
		KCHECK_EQ(ksync_shrinker_group_destroy(bad), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_lru_destroy(lru), 0);
	KCHECK_EQ(ksync_workingset_destroy(ws), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
