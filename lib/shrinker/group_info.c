/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/group_info.c - the registry's per-group maps, as a client of
 * memory groups (<ksync/memgroup.h>).
 *
 * Each registry owns a set of memory groups and is its first client: the
 * online hook gives a group its maps (one sized map of reg->nr_max bits with
 * a companion nr_deferred per node, and its summary), the offline hook waits
 * for the walks in the group and moves its deferred work to the parent, the
 * release hook frees what is left. The group module knows nothing of this.
 * Barrier pairs D1, P1/P2, G1, S1/S2 are described in registry.c.
 *
 * Which domain frees what. Callers reach a group's info through the group:
 * holding a reference on it, or inside a read section of the *set's* domain
 * (where they may have found a group that is released meanwhile); they
 * reach the info's maps inside a read section of the *registry's* domain,
 * after checking ->dead there (D1). So:
 *  - the info itself is freed on the set's domain, after the group's
 *    release, and its slot keeps pointing at it until then: every caller
 *    that can still see the group can still read the info (freeing it on
 *    the registry's domain was a use after free for a caller in the set's
 *    section, which read the info before entering the registry's);
 *  - the maps are freed on the registry's domain at offline, after ->dead
 *    and a grace period: a caller that saw ->dead == 0 inside its section
 *    began it before that grace period (so set_shrinker_bit must check
 *    ->dead, not just the info: a DEAD group's maps are gone).
 * ksync_set_shrinker_bit() on a group that is not alive here (its offline
 * hook has begun) sets the bit in the nearest ancestor that is: where the
 * group's deferred work went, and where list_lru moves its objects.
 * Ancestors are in memory while the group is (each child holds a reference
 * on its parent until its release, and the caller's section covers the
 * rest), and so are their infos.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

static int info_online(struct ksync_memgroup *g, int slot, void *priv);
static void info_offline(struct ksync_memgroup *g, int slot, void *priv);
static void info_release(struct ksync_memgroup *g, int slot, void *priv);
static int info_may_offline(struct ksync_memgroup *g, int slot, void *priv);

const struct ksync_memgroup_client ksync__shrinker_group_client = {
	.name = "shrinker",
	.online = info_online,
	.offline = info_offline,
	.release = info_release,
	.order = KSYNC_MEMGROUP_ORDER_SHRINKER,
	.may_offline = info_may_offline,
};

/*
 * The offline hook waits for a grace period of reg->srcu and for the walks
 * parked in the group: from inside a shrinker callback (a walk's read
 * section, and maybe a walk of this very group) or a read section of
 * reg->srcu, that wait could never end. Both doors to offline
 * (ksync_memgroup_offline(), ksync_shrinker_group_destroy()) ask here.
 */
static int info_may_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_shrinker_registry *reg = priv;

	(void)g;
	(void)slot;
	if (KSYNC_PLANT(OFFLINE_FROM_CALLBACK)) /* the fuzzers' plant (docs/fuzzing.md) */
		return 0;
	return in_callback() || ksync__srcu_self_inside(&reg->srcu) ? -EDEADLK : 0;
}


static void map_free(struct ksync_shrinker_registry *reg, struct ksync_sized_map *m, bool deferred)
{
	if (!m)
		return;
	if (deferred) /* readers (set_shrinker_bit) may still hold it */
		ksync_sized_map_free_srcu(m, &reg->srcu);
	else
		ksync_sized_map_free(m);
}

static void info_free_maps(struct shrinker_group_info *info, bool deferred)
{
	for (int nid = 0; nid < info->reg->nr_nodes; nid++) {
		struct shrinker_node_maps *n = &info->node[nid];

		map_free(info->reg, (struct ksync_sized_map *)ksync_rcu_access_pointer(n->bits), deferred);
		map_free(info->reg, (struct ksync_sized_map *)ksync_rcu_access_pointer(n->summary), deferred);
	}
}

/* Online hook (under the set's mutex): maps of the current size. */
static int info_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_shrinker_registry *reg = priv;
	struct shrinker_group_info *info;

	info = KSYNC__ALLOC(calloc(1, sizeof(*info) + (size_t)reg->nr_nodes * sizeof(info->node[0])));
	if (!info)
		return -ENOMEM;
	info->reg = reg;
	info->group = g;
	reg_lock(reg);
	for (int nid = 0; nid < reg->nr_nodes; nid++) {
		struct ksync_sized_map *m = ksync_sized_map_alloc(reg->nr_max, sizeof(ksync_atomic_long_t));
		struct ksync_sized_map *sm =
			ksync_sized_map_alloc(KSYNC_DIV_ROUND_UP(reg->nr_max, UNIT_BITS), 0);

		KSYNC_RCU_INIT_POINTER(info->node[nid].bits, m);
		KSYNC_RCU_INIT_POINTER(info->node[nid].summary, sm);
		if (!m || !sm) {
			reg_unlock(reg);
			info_free_maps(info, false); /* never published */
			free(info);
			return -ENOMEM;
		}
	}
	/* Publishes the info and its maps to the debug walkers of reg->infos. */
	ksync_list_add_tail_rcu(&info->list, &reg->infos);
	reg_unlock(reg);
	ksync_memgroup_set_slot(g, slot, info);
	return 0;
}

/* Wait until no walker of @info is between two sections (after the grace period). */
static void wait_parked(struct shrinker_group_info *info)
{
	for (;;) {
		/* Acquire: pairs with P2 in ksync__shr_group_resume_after_gap(). */
		int v = ksync_atomic_read_acquire(&info->parked);

		if (!v)
			return;
		ksync_futex_wait(&info->parked, v);
	}
}

/* Move every nr_deferred counter of @info to @pinfo (NULL: the registry's orphans). */
static void reparent_locked(struct shrinker_group_info *info, struct shrinker_group_info *pinfo)
{
	struct ksync_shrinker_registry *reg = info->reg;
	long orphaned = 0;

	for (int nid = 0; nid < reg->nr_nodes; nid++) {
		struct ksync_sized_map *m = (struct ksync_sized_map *)ksync_rcu_access_pointer(info->node[nid].bits);
		struct ksync_sized_map *pm = pinfo
			? (struct ksync_sized_map *)ksync_rcu_access_pointer(pinfo->node[nid].bits) : NULL;
		unsigned int nr = ksync_sized_map_nr_max(m);

		for (unsigned int id = 0; id < nr; id++) {
			ksync_atomic_long_t *c = ksync_sized_map_data(m, id);
			if (!ksync_atomic_long_read(c))
				continue;
			long v = ksync_atomic_long_xchg(c, 0);
			if (!pm) {
				orphaned += v;
				continue;
			}
			/* The parent's maps are as large as ours: grown together under the mutex. */
			ksync_atomic_long_add(v, (ksync_atomic_long_t *)ksync_sized_map_data(pm, id));
			/* Its walks should visit the id that now carries work. */
			ksync_sized_map_set_bit(pm, id);
			/* S2 as in ksync_set_shrinker_bit(): the bit before the summary bit. */
			ksync_smp_mb__after_atomic();
			ksync_sized_map_set_bit(
				(struct ksync_sized_map *)ksync_rcu_access_pointer(pinfo->node[nid].summary),
				id / UNIT_BITS);
		}
	}
	if (orphaned)
		ksync_atomic_long_add(orphaned, &reg->orphaned);
}

/*
 * Offline hook: new walks in @g return at once; wait for the walks inside
 * @g (they add to its counters): a grace period (D1), and the walks between
 * two sections (->parked, P1/P2). Walks take no reference on the group, so
 * that a group walk costs no atomic on the group's line; going offline (the
 * kernel's memcg offlining) is rare and may wait, unlike unregister.
 */
static void info_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_shrinker_registry *reg = priv;
	struct shrinker_group_info *info = ksync_memgroup_slot(g, slot);
	struct ksync_memgroup *parent = ksync_memgroup_parent(g);
	int ridx;

	reg_lock(reg);
	KSYNC_WRITE_ONCE(info->dead, 1); /* D1 */
	ksync_list_del_rcu(&info->list);
	/* Its counters stay in the ledger until they are moved below. */
	ksync_list_add_tail(&info->dying, &reg->dying_infos);
	reg_unlock(reg);

	yield_point(KSYNC_SHRINKER_YP_GROUP_BEFORE_WAIT);
	ksync_synchronize_srcu(&reg->srcu);
	/* And the walks that left their section for a writer: see ksync__shr_group_resume_after_gap(). */
	yield_point(KSYNC_SHRINKER_YP_GROUP_WAIT_WALKERS);
	wait_parked(info);

	reg_lock(reg);
	ksync_list_del(&info->dying);
	/* Q (see ids.c): the map frees below are queued unthrottled. */
	ridx = ksync_srcu_read_lock(&reg->srcu);
	/* The parent is online: it cannot go offline while it has an online child. */
	reparent_locked(info, parent ? ksync_memgroup_slot(parent, slot) : NULL);
	info_free_maps(info, true);
	ksync_srcu_read_unlock(&reg->srcu, ridx);
	reg_unlock(reg);
}

static void free_rcu_info(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct shrinker_group_info, rcu));
}

/*
 * Release hook: the maps went at offline, unless the group never went online
 * fully. The info is freed on the set's domain (see the top of this file).
 */
static void info_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_shrinker_registry *reg = priv;
	struct shrinker_group_info *info = ksync_memgroup_slot(g, slot);

	if (!info)
		return;
	if (!KSYNC_READ_ONCE(info->dead)) {
		/*
		 * A group whose creation failed in a later client: never
		 * offlined, never seen by a caller, but its info was on
		 * reg->infos, where the debug walks of reg->srcu find it: freed
		 * on that domain.
		 */
		reg_lock(reg);
		KSYNC_WRITE_ONCE(info->dead, 1);
		ksync_list_del_rcu(&info->list);
		int ridx = ksync_srcu_read_lock(&reg->srcu); /* Q */
		reparent_locked(info, NULL);
		info_free_maps(info, true);
		ksync_srcu_read_unlock(&reg->srcu, ridx);
		reg_unlock(reg);
		ksync_memgroup_set_slot(g, slot, NULL);
		ksync_call_srcu(&reg->srcu, &info->rcu, free_rcu_info);
		return;
	}
	if (KSYNC_PLANT(INFO_FREED_ON_REG_DOMAIN)) { /* the fuzzers' plant (docs/fuzzing.md) */
		ksync_memgroup_set_slot(g, slot, NULL);
		ksync_call_srcu(&reg->srcu, &info->rcu, free_rcu_info);
		return;
	}
	/*
	 * Offlined: its unlink from reg->infos was followed by a grace period
	 * of reg->srcu in the offline hook, so only callers that reached it
	 * through the group remain, and they are covered by the set's domain.
	 */
	ksync_call_srcu(ksync_memgroup_set_srcu(reg->groups), &info->rcu, free_rcu_info);
}

/*
 * Grow every online group's maps to @new_nr bits (under reg->mutex, inside a
 * read section: Q). Summary before its map (G1, release by the publication):
 * a reader that fetched the grown map, then the summary, gets a summary
 * large enough for it (pairs with the fetch order in ksync_set_shrinker_bit()).
 */
int ksync__shr_group_infos_grow_locked(struct ksync_shrinker_registry *reg, unsigned int new_nr)
{
	struct shrinker_group_info *info;
	int ret;

	ksync_list_for_each_entry(info, &reg->infos, list) {
		for (int nid = 0; nid < reg->nr_nodes; nid++) {
			ret = ksync_sized_map_grow(&info->node[nid].summary,
						   KSYNC_DIV_ROUND_UP(new_nr, UNIT_BITS), &reg->srcu);
			if (!ret)
				ret = ksync_sized_map_grow(&info->node[nid].bits, new_nr, &reg->srcu);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Leave the read section *@idx for a waiting writer and enter a new one,
 * keeping @info valid across the gap; false if its group is going offline
 * (the caller then ends the walk: no access to @info after that but the
 * unlock).
 *
 * The grace period the offline hook waits for covers read sections, not a
 * walker between two of them. So the walker announces itself in ->parked
 * inside the section it leaves (P1: a plain increment; the grace period
 * orders it before the hook's read, as it does every access of a section
 * it waits for), and withdraws inside the next section after reading ->dead
 * (P2: fully ordered, pairs with the acquire read in wait_parked()). The
 * hook waits for ->parked to reach zero before it frees anything, so the
 * walker's new section always finds @info in memory. A walker that sees
 * ->dead == 0 in the new section began it before the hook's grace period
 * (SRCU: a later section would see ->dead), so that grace period waits for
 * it; only one that sees ->dead == 1 may be the last thing the hook waits
 * for, and it wakes the hook.
 */
bool ksync__shr_group_resume_after_gap(struct shrinker_group_info *info, int *idx)
{
	struct ksync_shrinker_registry *reg = info->reg;
	bool alive;

	if (KSYNC_PLANT(GROUP_WALK_KEEPS_GROUP)) { /* the fuzzers' plant (docs/fuzzing.md) */
		ksync_srcu_read_unlock(&reg->srcu, *idx);
		yield_point(KSYNC_SHRINKER_YP_SECTION_DROPPED);
		*idx = ksync_srcu_read_lock(&reg->srcu);
		return group_alive(info);
	}
	ksync_atomic_inc(&info->parked); /* P1 */
	ksync_srcu_read_unlock(&reg->srcu, *idx);
	yield_point(KSYNC_SHRINKER_YP_SECTION_DROPPED);
	*idx = ksync_srcu_read_lock(&reg->srcu);
	alive = group_alive(info);
	/* P2: pairs with the acquire in wait_parked(). */
	if (ksync_atomic_dec_and_test(&info->parked) && !alive)
		ksync_futex_wake_all(&info->parked);
	return alive;
}

/* ------------------------------------------------------------------------ */
/* ksync_set_shrinker_bit() (the group wrappers are in registry.c)           */

int ksync__set_shrinker_bit(KSYNC_SITE_ARGS, struct ksync_memgroup *g, int nid, int id)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct shrinker_group_info *info;
	struct ksync_shrinker_registry *reg;
	struct ksync_sized_map *m, *sm;
	int ret = 0, idx;

	if (!g)
		return 0;
	info = group_info(g);
	if (MISUSE(at, !info, "ksync_set_shrinker_bit: not a group of a registry"))
		return -EINVAL;
	reg = info->reg;
	if (MISUSE(at, nid < 0 || nid >= reg->nr_nodes, "ksync_set_shrinker_bit: bad nid"))
		return -EINVAL;
	if (MISUSE(at, id < 0, "ksync_set_shrinker_bit: negative shrinker id"))
		return -EINVAL;
	idx = ksync_srcu_read_lock(&reg->srcu);
	/*
	 * D1: a group whose offline hook has begun has no maps to trust; its
	 * nearest live ancestor takes the bit (see the top of this file).
	 */
	/* The fuzzers' plant SET_BIT_ON_DEAD_MAPS (docs/fuzzing.md) skips this. */
	while (!KSYNC_PLANT(SET_BIT_ON_DEAD_MAPS) && !group_alive(info)) {
		g = ksync_memgroup_parent(g);
		if (!g) {
			ksync_srcu_read_unlock(&reg->srcu, idx);
			return 0; /* a top-level group: its work went to reg->orphaned */
		}
		info = group_info(g);
	}
	/* Map, then summary: see G1 in ksync__shr_group_infos_grow_locked(). */
	m = ksync_srcu_dereference(info->node[nid].bits, &reg->srcu);
	sm = ksync_srcu_dereference(info->node[nid].summary, &reg->srcu);
	if (MISUSE(at, (unsigned int)id >= ksync_sized_map_nr_max(m),
		       "ksync_set_shrinker_bit: id beyond the group's map (map_nr_max)")) {
		ret = -EINVAL;
	} else {
		/*
		 * S1: full barrier between the caller's new objects and the bit
		 * test/set; pairs with W1 in shrink_slab_group(). Either the
		 * walker's recount sees the objects, or we see the bit cleared
		 * and set it again.
		 */
		ksync_smp_mb__before_atomic();
		ksync_sized_map_set_bit(m, (unsigned int)id);
		/*
		 * S2: the bit before the summary test; pairs with W2 in
		 * shrink_slab_group(). Either the walker's recheck of the unit
		 * sees our bit, or we see its summary bit cleared and set it.
		 */
		ksync_smp_mb__after_atomic();
		if (!ksync_sized_map_test_bit(sm, (unsigned int)id / UNIT_BITS))
			ksync_sized_map_set_bit(sm, (unsigned int)id / UNIT_BITS);
	}
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return ret;
}
