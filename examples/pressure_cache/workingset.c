/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * workingset.c - pressure_cache's workingset study (--workingset).
 *
 * Theory of operation. The study asks one question of <ksync/workingset.h>:
 * on the scan workload (workload.c: hot phases over a hot set that fits in
 * the cache, alternating with one-pass scans larger than the cache), do
 * shadow entries keep the hot set? For each LRU flavour the library offers
 * (classic active/inactive, multi-generation), it runs the same cache twice,
 * with and without shadow entries, on the same request stream (same seed)
 * and the same capacity, and counts the hits on hot keys.
 *
 * The capacity is fixed (the limit in values: --limit-mib / --value-kib), so
 * the study needs no root and no memory cgroup: the hot/scan effect is one
 * of replacement order, not of how the limit is enforced. The pressure that
 * the shadow shrinker answers to is applied as the pressure reaction would
 * (reactor.c): every @pressure_every requests, one reclaim round over the
 * cache's memory group (ksync_shrink_slab() at the default priority), which
 * calls the shadow-node shrinker's count_objects (the budget, from the
 * group's local LRU statistics) and scan_objects (trim past the budget).
 * Between rounds the study samples the shadow nodes, so the JSON says how
 * far the shadow memory went against its budget.
 *
 * Values carry no payload here (a key and the LRU's links): the study is
 * about which keys stay, and 2 M requests take about a second.
 */
#define _GNU_SOURCE
#include "pc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pc_ws_flavour_name[PC_WS_NR_FLAVOURS] = { "classic", "mglru" };

/* ------------------------------------------------------------------------ */
/* The cache on the library's LRU flavours                                  */

#ifdef PC_HAVE_WORKINGSET
#include <ksync/hashtable.h>
#include <ksync/shrinker.h>
#include <ksync/workingset.h>

/*
 * The cache: a hash table of entries on a ksync_lru of the flavour asked
 * for, in one memory group of a registry of its own. A miss takes the key's
 * shadow (if shadows are on); a workingset refault adds the entry active.
 * Making room evicts one entry (the LRU's order), whose token is stored as
 * the key's shadow (if shadows are on). Shadows are keyed by the key's
 * index in the stream's key space (workload.c: key = index * 2654435761),
 * so neighbouring indices share a shadow node as a file's neighbouring
 * pages share an xarray node in the kernel.
 */
struct ws_entry {
	struct ksync_hlist_node hnode;
	struct ksync_lru_item lru;
	uint32_t key;
};

#define WS_HASH_BITS 16

struct ws_cache {
	KSYNC_DECLARE_HASHTABLE(table, WS_HASH_BITS);
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *group;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	uint64_t capacity, size;
	bool shadows;
	uint32_t inv;          /* the inverse of the key multiplier, mod 2^32 */
};

static uint32_t ws_index(const struct ws_cache *c, uint32_t key)
{
	return key * c->inv;
}

static struct ws_entry *ws_lookup(struct ws_cache *c, uint32_t key)
{
	struct ws_entry *e;

	ksync_hash_for_each_possible(c->table, e, hnode, key)
		if (e->key == key)
			return e;
	return NULL;
}

static void ws_evicted(struct ksync_lru_item *item, unsigned long token, void *arg)
{
	struct ws_cache *c = arg;
	struct ws_entry *e = ksync_container_of(item, struct ws_entry, lru);

	ksync_hash_del(&e->hnode);
	c->size--;
	if (c->shadows && token)
		ksync_workingset_shadow_store(c->ws, ws_index(c, e->key), token);
	free(e);
}

static void ws_cache_destroy(struct ws_cache *c)
{
	if (!c)
		return;
	if (c->lru) {
		while (c->size && ksync_lru_evict(c->lru, c->group, 0, 1024, ws_evicted, c))
			;
	}
	if (c->group)
		ksync_shrinker_group_destroy(c->group);
	if (c->lru)
		ksync_lru_destroy(c->lru);
	if (c->ws)
		ksync_workingset_destroy(c->ws);
	if (c->reg)
		ksync_shrinker_registry_destroy(c->reg);
	free(c);
}

static int ws_cache_create(enum pc_ws_flavour fl, bool shadows, uint64_t capacity, struct ws_cache **out)
{
	struct ws_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	ksync_hash_init(c->table);
	c->capacity = capacity ? capacity : 1;
	c->shadows = shadows;
	c->inv = 2654435761u;
	for (int i = 0; i < 5; i++)   /* Newton: x *= 2 - a x, doubling the correct bits */
		c->inv *= 2u - 2654435761u * c->inv;
	c->reg = ksync_shrinker_registry_create(1);
	c->group = c->reg ? ksync_shrinker_group_create(c->reg, NULL) : NULL;
	c->ws = c->group ? ksync_workingset_create(c->reg, 0) : NULL;
	c->lru = c->ws ? ksync_lru_create(c->ws, fl == PC_WS_MGLRU ? KSYNC_MGLRU : KSYNC_LRU_CLASSIC) : NULL;
	if (!c->lru) {
		ws_cache_destroy(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

static void ws_sample(struct ws_cache *c, struct pc_ws_run *r)
{
	struct ksync_workingset_stats st;

	ksync_workingset_stats(c->ws, &st);
	if (st.shadow_nodes > r->shadow_nodes_peak)
		r->shadow_nodes_peak = st.shadow_nodes;
	r->shadow_nodes_end = st.shadow_nodes;
	r->shadow_nodes_freed = st.nodes_reclaimed;
	r->refaults = st.refaults;
	r->activations = st.refaults_workingset;
	r->shadow_node_bytes = KSYNC_WORKINGSET_NODE_SLOTS * sizeof(unsigned long);
}

static bool ws_cache_get(struct ws_cache *c, uint32_t key, struct pc_ws_run *r)
{
	struct ws_entry *e = ws_lookup(c, key);
	bool active = false;

	if (e) {
		ksync_lru_mark_accessed(c->lru, &e->lru);
		return true;
	}
	if (c->shadows) {
		unsigned long token = ksync_workingset_shadow_take(c->ws, ws_index(c, key));

		active = token && ksync_workingset_refault(c->ws, token, NULL);
	}
	if (c->size >= c->capacity)
		ksync_lru_evict(c->lru, c->group, 0, c->size - c->capacity + 1, ws_evicted, c);
	e = malloc(sizeof(*e));
	if (!e)
		return false;
	e->key = key;
	ksync_lru_item_init(&e->lru);
	ksync_hash_add(c->table, &e->hnode, key);
	ksync_lru_add(c->lru, &e->lru, c->group, 0, active);
	c->size++;
	(void)r;
	return false;
}

/* A reclaim round on the cache's group at the most pressure: the shadow shrinker trims to its budget. */
static void ws_cache_pressure(struct ws_cache *c, struct pc_ws_run *r)
{
	unsigned long budget;

	ws_sample(c, r);   /* the peak is before the round */
	ksync_shrink_slab(c->reg, 0, c->group, 0);
	r->pressure_rounds++;
	budget = ksync_workingset_shadow_budget(c->ws, c->group, 0);
	if (budget > r->shadow_budget_max)
		r->shadow_budget_max = budget;
	if (budget < r->shadow_budget_min)
		r->shadow_budget_min = budget;
	ws_sample(c, r);
	if (r->shadow_nodes_end > budget)
		r->over_budget_rounds++;
}

static void ws_cache_finish(struct ws_cache *c, struct pc_ws_run *r)
{
	ws_sample(c, r);
}
#else /* !PC_HAVE_WORKINGSET */
struct ws_cache;

static int ws_cache_create(enum pc_ws_flavour fl, bool shadows, uint64_t capacity, struct ws_cache **out)
{
	(void)fl;
	(void)shadows;
	(void)capacity;
	*out = NULL;
	return -ENOSYS;   /* ksync::workingset is not built */
}

static bool ws_cache_get(struct ws_cache *c, uint32_t key, struct pc_ws_run *r)
{
	(void)c;
	(void)key;
	(void)r;
	return false;
}

static void ws_cache_pressure(struct ws_cache *c, struct pc_ws_run *r)
{
	(void)c;
	(void)r;
}

static void ws_cache_finish(struct ws_cache *c, struct pc_ws_run *r)
{
	(void)c;
	(void)r;
}

static void ws_cache_destroy(struct ws_cache *c)
{
	(void)c;
}
#endif /* PC_HAVE_WORKINGSET */

/* ------------------------------------------------------------------------ */
/* The study                                                                */

static int ws_one(const struct pc_params *p, const struct pc_ws_study *st, enum pc_ws_flavour fl, bool shadows,
		  struct pc_ws_run *r)
{
	struct ws_cache *c;
	struct pc_scan scan;
	uint64_t t0;
	int err;

	memset(r, 0, sizeof(*r));
	r->shadow_budget_min = UINT64_MAX;
	err = ws_cache_create(fl, shadows, st->capacity_values, &c);
	if (err)
		return err;
	pc_scan_init(&scan, p->hot_keys, p->hot_len, p->scan_len, p->hot_cyclic, p->seed);
	t0 = pc_now_ns();
	for (uint64_t i = 0; i < st->requests; i++) {
		bool hot, hit;
		uint32_t key = pc_scan_next(&scan, &hot);

		hit = ws_cache_get(c, key, r);
		r->ops++;
		r->hits += hit;
		r->hot_ops += hot;
		r->hot_hits += hot && hit;
		if (st->pressure_every && (i + 1) % st->pressure_every == 0)
			ws_cache_pressure(c, r);
	}
	r->seconds = (double)(pc_now_ns() - t0) / 1e9;
	ws_cache_finish(c, r);
	if (r->shadow_budget_min == UINT64_MAX)
		r->shadow_budget_min = 0;
	ws_cache_destroy(c);
	r->ran = true;
	return 0;
}

int pc_ws_study_run(const struct pc_params *p, uint64_t capacity_values, uint64_t requests, struct pc_ws_study *st)
{
	memset(st, 0, sizeof(*st));
	st->capacity_values = capacity_values;
	st->requests = requests;
	/* a reclaim round every eighth of the cache's worth of requests */
	st->pressure_every = capacity_values / 8 ? capacity_values / 8 : 1;
	for (int fl = 0; fl < PC_WS_NR_FLAVOURS; fl++)
		for (int sh = 1; sh >= 0; sh--) {
			int err = ws_one(p, st, (enum pc_ws_flavour)fl, sh, &st->run[fl][sh]);

			if (err) {
				st->err = err;
				snprintf(st->why, sizeof(st->why), "%s, shadows %s: %s", pc_ws_flavour_name[fl],
					 sh ? "on" : "off",
					 err == -ENOSYS ? "the workingset library is not built in" : strerror(-err));
				return err;
			}
		}
	return 0;
}

static double rate(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

void pc_ws_write_json(FILE *f, const struct pc_ws_study *st)
{
	fprintf(f, "  \"workingset\": {\"capacity_values\": %llu, \"requests\": %llu, \"pressure_every\": %llu",
		(unsigned long long)st->capacity_values, (unsigned long long)st->requests,
		(unsigned long long)st->pressure_every);
	if (st->err) {
		fprintf(f, ", \"error\": \"%s\"", st->why);
	}
	for (int fl = 0; fl < PC_WS_NR_FLAVOURS; fl++) {
		const struct pc_ws_run *on = &st->run[fl][1], *off = &st->run[fl][0];

		if (!on->ran || !off->ran)
			continue;
		fprintf(f,
			",\n    \"%s\": {\"hot_hit_rate_shadow\": %.4f, \"hot_hit_rate_no_shadow\": %.4f, "
			"\"hit_rate_shadow\": %.4f, \"hit_rate_no_shadow\": %.4f,\n      "
			"\"refaults\": %llu, \"activations\": %llu, \"pressure_rounds\": %llu, "
			"\"shadow_nodes_peak\": %llu, \"shadow_nodes_end\": %llu, \"shadow_nodes_freed\": %llu,\n      "
			"\"shadow_budget\": %llu, \"shadow_budget_min\": %llu, \"shadow_node_bytes\": %llu, "
			"\"shadow_bytes_peak\": %llu, \"shadow_budget_bytes\": %llu, \"over_budget_rounds\": %llu, "
			"\"seconds_shadow\": %.3f, \"seconds_no_shadow\": %.3f}",
			pc_ws_flavour_name[fl], rate(on->hot_hits, on->hot_ops), rate(off->hot_hits, off->hot_ops),
			rate(on->hits, on->ops), rate(off->hits, off->ops), (unsigned long long)on->refaults,
			(unsigned long long)on->activations, (unsigned long long)on->pressure_rounds,
			(unsigned long long)on->shadow_nodes_peak, (unsigned long long)on->shadow_nodes_end,
			(unsigned long long)on->shadow_nodes_freed, (unsigned long long)on->shadow_budget_max,
			(unsigned long long)on->shadow_budget_min, (unsigned long long)on->shadow_node_bytes,
			(unsigned long long)(on->shadow_nodes_peak * on->shadow_node_bytes),
			(unsigned long long)(on->shadow_budget_max * on->shadow_node_bytes),
			(unsigned long long)on->over_budget_rounds, on->seconds, off->seconds);
	}
	fprintf(f, "},\n");
}

void pc_ws_print(const struct pc_ws_study *st)
{
	printf("\nworkingset study: capacity %llu values, %llu requests per run, a reclaim round every %llu\n",
	       (unsigned long long)st->capacity_values, (unsigned long long)st->requests,
	       (unsigned long long)st->pressure_every);
	if (st->err)
		printf("  not run: %s\n", st->why);
	printf("%-8s %12s %12s %10s %10s %12s %12s\n", "flavour", "hot% shadow", "hot% none", "refaults",
	       "activated", "nodes peak", "budget max");
	for (int fl = 0; fl < PC_WS_NR_FLAVOURS; fl++) {
		const struct pc_ws_run *on = &st->run[fl][1], *off = &st->run[fl][0];

		if (!on->ran || !off->ran)
			continue;
		printf("%-8s %12.2f %12.2f %10llu %10llu %12llu %12llu\n", pc_ws_flavour_name[fl],
		       100 * rate(on->hot_hits, on->hot_ops), 100 * rate(off->hot_hits, off->hot_ops),
		       (unsigned long long)on->refaults, (unsigned long long)on->activations,
		       (unsigned long long)on->shadow_nodes_peak, (unsigned long long)on->shadow_budget_max);
	}
}
