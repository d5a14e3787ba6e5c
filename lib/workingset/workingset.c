/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/workingset/workingset.c - the public entry points of ksync::workingset:
 * creation and teardown, argument checks (docs/errors.md), counters.
 *
 * Theory of operation
 * -------------------
 * A workingset is assembled in an order that lets nothing see it half
 * built: the clocks' client first (every group gets a record, so a token
 * can name any group), then the shadow store and its list_lru (another
 * client, with the shrinker allocated but not registered), and last the
 * shrinker's registration, which publishes the callbacks (the registry's
 * release/acquire pair). Teardown runs backwards: the shrinker is freed
 * first (ksync_shrinker_free() waits for running callbacks), then the
 * nodes and the list_lru, then the records. Both clients refuse to leave
 * while the set has groups, so destroy checks that first and changes
 * nothing when it refuses.
 *
 * The work is in clock.c (tokens, judgement, budget), shadow.c (the store
 * and the shrinker) and lru.c (the flavours); this file only checks the
 * caller's arguments and reports misuse at the caller's line.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ksync/impl/switches.h>

#include <errno.h>
#include <stdlib.h>

struct ksync_workingset *ksync__workingset_create(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg,
						 unsigned int nr_buckets)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_workingset *ws;
	struct ksync_memgroup_set *set;

	if (MISUSE(at, !reg, "ksync_workingset_create(): NULL registry"))
		return NULL;
	set = ksync_shrinker_registry_groups(reg);
	if (MISUSE(at, !set, "ksync_workingset_create(): the registry has no memory groups"))
		return NULL;
	ws = KSYNC__ALLOC(calloc(1, sizeof(*ws)));
	if (!ws)
		return NULL;
	ws->reg = reg;
	ws->set = set;
	ws->srcu = ksync_memgroup_set_srcu(set);
	ws->nr_nodes = ksync_shrinker_registry_nr_nodes(reg);
	if (ws->nr_nodes > (1 << KSYNC_WORKINGSET_NODE_BITS))
		ws->nr_nodes = 1 << KSYNC_WORKINGSET_NODE_BITS;
	ws->set_nodes = ksync_memgroup_set_nr_nodes(set);
	if (ksync__ws_clock_init(ws))
		goto fail;
	if (ksync__ws_shadow_init(ws, nr_buckets ? nr_buckets : 1024))
		goto fail_clock;
	if (ksync__ws_shadow_start(ws))
		goto fail_shadow;
	return ws;
fail_shadow:
	ksync__ws_shadow_fini(ws);
fail_clock:
	ksync__ws_clock_fini(ws);
fail:
	free(ws);
	return NULL;
}

int ksync__workingset_destroy(KSYNC_SITE_ARGS, struct ksync_workingset *ws)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	int err;

	if (MISUSE(at, !ws, "ksync_workingset_destroy(): NULL workingset"))
		return -EINVAL;
	if (MISUSE(at, ksync_atomic_long_read(&ws->nr_lrus) > 0,
		   "ksync_workingset_destroy(): an LRU still uses the workingset (ksync_lru_destroy() it first)"))
		return -EBUSY;
	if (MISUSE(at, ksync_memgroup_nr_groups(ws->set) > 0,
		   "ksync_workingset_destroy(): the set still has groups (destroy after they are freed)"))
		return -EBUSY;
	err = ksync__ws_shadow_fini(ws);
	if (!err)
		err = ksync__ws_clock_fini(ws);
	if (err)
		return err; /* not reached: nothing refuses without groups */
	free(ws);
	return 0;
}

static bool group_ok(struct ksync_site at, const char *what, struct ksync_workingset *ws,
		     struct ksync_memgroup *g, int nid)
{
	if (MISUSE(at, !ws, "%s: NULL workingset", what))
		return false;
	if (MISUSE(at, nid < 0 || nid >= ws->nr_nodes, "%s: nid %d outside 0..%d", what, nid, ws->nr_nodes - 1))
		return false;
	if (MISUSE(at, g && ksync_memgroup_set_of(g) != ws->set, "%s: a group of another set", what))
		return false;
	return true;
}

static bool token_ok(struct ksync_site at, const char *what, struct ksync_workingset *ws, unsigned long token)
{
	if (MISUSE(at, !ws, "%s: NULL workingset", what))
		return false;
	return !MISUSE(at, !ksync__ws_token_ok(ws, token), "%s: malformed token %#lx", what, token);
}

unsigned long ksync__workingset_eviction(KSYNC_SITE_ARGS, struct ksync_workingset *ws, struct ksync_memgroup *group,
					 int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!group_ok(at, "ksync_workingset_eviction()", ws, group, nid))
		return 0;
	return ksync__ws_evict(ws, group, nid);
}

bool ksync__workingset_refault(KSYNC_SITE_ARGS, struct ksync_workingset *ws, unsigned long token,
			       struct ksync_workingset_refault_info *info)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!token_ok(at, "ksync_workingset_refault()", ws, token)) {
		if (info)
			*info = (struct ksync_workingset_refault_info){ .group_id = -1 };
		return false;
	}
	return ksync__ws_judge(ws, token, info);
}

int ksync__workingset_activation(KSYNC_SITE_ARGS, struct ksync_workingset *ws, struct ksync_memgroup *group, int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!group_ok(at, "ksync_workingset_activation()", ws, group, nid))
		return -EINVAL;
	ksync__ws_activate(ws, group, nid);
	return 0;
}

int ksync__workingset_shadow_store(KSYNC_SITE_ARGS, struct ksync_workingset *ws, unsigned long key,
				   unsigned long token)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!token_ok(at, "ksync_workingset_shadow_store()", ws, token))
		return -EINVAL;
	return ksync__ws_store(ws, key, token);
}

unsigned long ksync__workingset_shadow_take(KSYNC_SITE_ARGS, struct ksync_workingset *ws, unsigned long key)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, !ws, "ksync_workingset_shadow_take(): NULL workingset"))
		return 0;
	return ksync__ws_take(ws, key);
}

unsigned long ksync__workingset_shadow_budget(KSYNC_SITE_ARGS, struct ksync_workingset *ws,
					      struct ksync_memgroup *group, int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!group_ok(at, "ksync_workingset_shadow_budget()", ws, group, nid))
		return 0;
	return ksync__ws_lru_pages(ws, group, nid) >> WS_BUDGET_SHIFT;
}

struct ksync_shrinker *ksync_workingset_shrinker(struct ksync_workingset *ws)
{
	return ws ? ws->shrinker : NULL;
}

static unsigned long rd(ksync_atomic_long_t *v)
{
	long x = ksync_atomic_long_read(v);

	return x > 0 ? (unsigned long)x : 0;
}

void ksync_workingset_stats(struct ksync_workingset *ws, struct ksync_workingset_stats *out)
{
	*out = (struct ksync_workingset_stats){ 0 };
	if (!ws)
		return;
	out->evictions = rd(&ws->evictions);
	out->refaults = rd(&ws->refaults);
	out->refaults_workingset = rd(&ws->refaults_ws);
	out->refaults_translated = rd(&ws->refaults_translated);
	out->activations = rd(&ws->activations);
	out->shadow_nodes = rd(&ws->shadow_nodes);
	out->shadow_entries = rd(&ws->shadow_entries);
	out->nodes_reclaimed = rd(&ws->nodes_reclaimed);
	out->entries_reclaimed = rd(&ws->entries_reclaimed);
}
