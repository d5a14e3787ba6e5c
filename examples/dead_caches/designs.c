/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * designs.c - dead_caches.h on <ksync/objcache.h>.
 *
 * Theory of operation: each design is one ksync_objcache_create_config()
 * of 64-byte objects on the scenario's memory-group set, differing only in
 * the accounting fields (design A or B, reparent, or no
 * KSYNC_OBJCACHE_ACCOUNT at all), every other setting left at the library's
 * default (8 KiB slabs for 64-byte objects, 32-object magazines, 2 empty slabs kept, the
 * default shrinker registry). The usage figures are the library's own
 * statistics (ksync_objcache_stats(): the root cache and every child);
 * nothing is estimated here. A dc_cache is the library's cache itself.
 */
#include "dead_caches.h"

#include <ksync/objcache.h>
#include <ksync/srcu.h>

#include <stdio.h>
#include <stdlib.h>

struct dc_cache {
	struct ksync_objcache *cache;
	struct ksync_memgroup_set *set;
};

static const char *const names[DC_NR_DESIGNS] = {
	[DC_A] = "A", [DC_A_REPARENT] = "A-reparent", [DC_B] = "B", [DC_UNACCOUNTED] = "unaccounted",
};

const char *dc_design_name(enum dc_design d)
{
	return d < DC_NR_DESIGNS ? names[d] : "?";
}

struct dc_cache *dc_create(struct ksync_memgroup_set *set, enum dc_design design)
{
	struct ksync_objcache_config cfg = { .groups = set };
	unsigned flags = KSYNC_OBJCACHE_ACCOUNT;
	char name[32];

	switch (design) {
	case DC_A: cfg.design = KSYNC_OBJCACHE_PER_GROUP; break;
	case DC_A_REPARENT: cfg.design = KSYNC_OBJCACHE_PER_GROUP; cfg.reparent = true; break;
	case DC_B: cfg.design = KSYNC_OBJCACHE_CHARGE_HANDLES; break;
	default: flags = 0; cfg.groups = NULL; break;
	}
	struct dc_cache *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	snprintf(name, sizeof(name), "dc-%s", dc_design_name(design));
	c->cache = ksync_objcache_create_config(name, DC_OBJ_SIZE, 0, flags, NULL, &cfg);
	c->set = set;
	if (!c->cache) {
		free(c);
		return NULL;
	}
	return c;
}

void dc_set_stock_slots(int slots)
{
	ksync_objcache_set_stock_slots(slots);
}

void *dc_alloc(struct dc_cache *c, struct ksync_memgroup *g)
{
	return ksync_objcache_alloc_group(c->cache, g);
}

void dc_free(struct dc_cache *c, void *obj)
{
	ksync_objcache_free(c->cache, obj);
}

void dc_settle(struct dc_cache *c)
{
	ksync_objcache_drain_thread();
	ksync_srcu_barrier(ksync_memgroup_set_srcu(c->set));
}

void dc_usage(struct dc_cache *c, struct dc_usage *u)
{
	struct ksync_objcache_stats st = { 0 };

	ksync_objcache_stats(c->cache, &st);
	u->objects = st.active_objects;
	u->slabs = st.slabs;
	u->slab_bytes = st.slab_bytes;
	u->caches = st.children_alive + st.children_dead;
	u->dead = st.children_dead;
}

int dc_destroy(struct dc_cache *c)
{
	int rc = ksync_objcache_destroy(c->cache);

	if (rc == 0)
		free(c); /* else the library keeps the cache (leaked, reported): so do we */
	return rc;
}
