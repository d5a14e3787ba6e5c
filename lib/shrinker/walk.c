/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/walk.c - ksync_shrink_slab(): the global and the group walk.
 *
 * Both walks run inside a read section of the registry, take a reference on
 * each shrinker before calling it (R2) and leave and re-enter their section
 * when a writer waits for a grace period. The group walk visits only the
 * 64-id units its summary marks, and within a unit the set bits; see
 * shrink_slab_group() and registry.c for the barrier pairs (L1, W1, W2).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>

/*
 * One shrinker, one (group, node): count, add the carried-over work, scan in
 * batches, carry over what was not done. Returns SHRINK_EMPTY when the
 * shrinker said so, else the objects freed. Caller holds a reference.
 */
static unsigned long do_shrink(struct ksync_shrinker_record *rec, struct ksync_shrink_control *sc,
			       ksync_atomic_long_t *deferred, int priority)
{
	struct ksync_shrinker *s = rec->shrinker;
	struct ksync_shrink_budget b;
	unsigned long freeable, freed = 0, scanned = 0;
	long nr = 0, next;

	freeable = shrinker_call_count(rec, sc);
	if (freeable == 0 || freeable == KSYNC_SHRINK_EMPTY)
		return freeable;
	if (KSYNC_WARN_ONCE(freeable > KSYNC_SHRINKER_MAX_OBJECTS,
			    "shrink_slab: count_objects returned an absurd value; read as 0"))
		return 0;

	if (ksync_atomic_long_read(deferred))
		nr = ksync_atomic_long_xchg(deferred, 0);
	if (KSYNC_WARN_ONCE(nr < 0, "shrink_slab: negative nr_deferred; read as 0"))
		nr = 0;

	ksync_shrink_budget(freeable, nr, priority, s->seeks, s->batch, &b);
	while (b.total_scan >= b.batch || b.total_scan >= freeable) {
		unsigned long n = ksync_min(b.batch, b.total_scan), ret;

		sc->nr_to_scan = n;
		sc->nr_scanned = n;
		ret = shrinker_call_scan(rec, sc);
		if (ret == KSYNC_SHRINK_STOP)
			break;
		if (KSYNC_WARN_ONCE(ret > n, "shrink_slab: scan_objects freed more than asked; clamped"))
			ret = n;
		if (sc->nr_scanned > n)
			sc->nr_scanned = n;
		freed += ret;
		b.total_scan -= sc->nr_scanned;
		scanned += sc->nr_scanned;
		if (!sc->nr_scanned)
			break; /* no progress: do not spin */
	}

	next = ksync_shrink_next_deferred(nr, b.delta, scanned, freeable);
	if (KSYNC_PLANT(DEFERRED_PUT_BACK_BY_SET)) { /* the fuzzers' plant (docs/fuzzing.md) */
		ksync_atomic_long_set(deferred, next); /* over what others added since the take */
		return freed;
	}
	if (next)
		ksync_atomic_long_add(next, deferred);
	return freed;
}

static unsigned long shrink_slab_global(struct ksync_shrinker_registry *reg, int nid, int priority)
{
	struct ksync_shrinker_record *rec;
	unsigned long freed = 0;
	int idx = ksync_srcu_read_lock(&reg->srcu);

	ksync_list_for_each_entry_srcu(rec, &reg->shrinkers, list, true) {
		struct ksync_shrink_control sc = { 0 };
		unsigned long ret;

		yield_point(KSYNC_SHRINKER_YP_BEFORE_GET);
		if (!record_try_get(rec))
			continue;
		yield_point(KSYNC_SHRINKER_YP_AFTER_GET);
		sc.nid = (rec->flags & KSYNC_SHRINKER_NUMA_AWARE) ? nid : 0;
		ret = do_shrink(rec, &sc, &rec->nr_deferred[sc.nid], priority);
		if (ret != KSYNC_SHRINK_EMPTY)
			freed += ret;
		if (ksync_unlikely(ksync_srcu_gp_pending(&reg->srcu))) {
			/*
			 * A writer waits: leave the read section. Our reference
			 * keeps @rec linked (unlinking waits for the count), so
			 * its ->next is valid once we are back.
			 */
			ksync_srcu_read_unlock(&reg->srcu, idx);
			yield_point(KSYNC_SHRINKER_YP_SECTION_DROPPED);
			idx = ksync_srcu_read_lock(&reg->srcu);
		}
		yield_point(KSYNC_SHRINKER_YP_BEFORE_PUT);
		record_put(rec);
	}
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return freed;
}

/*
 * The group walk. The summary map tells which 64-id units may hold set bits,
 * so a walk touches the units that matter instead of every unit of a map of
 * thousands of ids (each unit is a separate allocation: a cache miss).
 * Within a unit, ids are visited in order with the clear-then-recount
 * protocol on SHRINK_EMPTY (W1). A unit found empty has its summary bit
 * cleared, then is checked again (W2), against set_shrinker_bit(), which
 * sets the bit, then checks the summary bit (S2).
 */
static unsigned long shrink_slab_group(struct ksync_memgroup *g, struct shrinker_group_info *info,
				       int nid, int priority)
{
	struct ksync_shrinker_registry *reg = info->reg;
	struct ksync_sized_map *m, *sm;
	unsigned long freed = 0;
	unsigned int u;
	int idx;

	idx = ksync_srcu_read_lock(&reg->srcu);
	if (!group_alive(info))
		goto out; /* going offline */
	m = ksync_srcu_dereference(info->node[nid].bits, &reg->srcu);
	sm = ksync_srcu_dereference(info->node[nid].summary, &reg->srcu);
	for (u = ksync_sized_map_find_next_bit(sm, 0); u < ksync_sized_map_nr_max(sm);
	     u = ksync_sized_map_find_next_bit(sm, u + 1)) {
		unsigned int start = u * UNIT_BITS, end, id;
		bool any = false;

		if (start >= ksync_sized_map_nr_max(m))
			break; /* summary grown past our map: those ids are not ours to see yet */
		/* One unit: the bounded search loads this unit's word only. */
		end = ksync_min(start + UNIT_BITS, ksync_sized_map_nr_max(m));
		for (id = ksync_sized_map_find_next_bit_in(m, start, end); id < end;
		     id = ksync_sized_map_find_next_bit_in(m, id + 1, end)) {
			struct ksync_shrink_control sc = { .nid = nid, .group = g };
			struct ksync_shrinker_record *rec;
			ksync_atomic_long_t *deferred;
			unsigned long ret;

			any = true;
			/*
			 * L1: the bit before the id lookup; pairs with S1 in
			 * ksync_set_shrinker_bit() (its owner set the bit after
			 * the shrinker was published in the id table). Else a
			 * weakly ordered CPU may read the table first, find no
			 * shrinker for a bit just set, and clear that bit. A
			 * compiler barrier on x86; no plain data rides on it, so
			 * TSan builds need no acquire load here.
			 */
			ksync_smp_rmb();
			rec = id_lookup(reg, id);
			yield_point(KSYNC_SHRINKER_YP_BEFORE_GET);
			if (!rec || !(rec->flags & KSYNC_SHRINKER_MEMCG_AWARE)) {
				/* Nobody to call for this id: a later set_shrinker_bit() sets it again. */
				ksync_sized_map_clear_bit(m, id);
				goto next;
			}
			if (!record_try_get(rec)) {
				/*
				 * Not callable now. One that is leaving loses its
				 * bit. One allocated but not yet registered keeps
				 * it: its owner may have added objects and set the
				 * bit before registering, and nothing would set it
				 * again (the kernel before 6.7 kept it the same way,
				 * SHRINKER_REGISTERING; 6.7's shrinker_try_get()
				 * path clears it and loses those objects).
				 */
				if (ksync_atomic_read(&rec->state) != RECORD_PREPARED)
					ksync_sized_map_clear_bit(m, id);
				goto next;
			}
			yield_point(KSYNC_SHRINKER_YP_AFTER_GET);
			if (!(rec->flags & KSYNC_SHRINKER_NUMA_AWARE))
				sc.nid = 0;
			deferred = ksync_sized_map_data(m, id);
			ret = do_shrink(rec, &sc, deferred, priority);
			if (ret == KSYNC_SHRINK_EMPTY) {
				ksync_sized_map_clear_bit(m, id);
				/*
				 * W1: the clear before the recount; pairs with S1 in
				 * ksync_set_shrinker_bit(). Objects added before a
				 * set_shrinker_bit() that saw the bit still set are
				 * seen by the recount below.
				 */
				ksync_smp_mb__after_atomic();
				yield_point(KSYNC_SHRINKER_YP_EMPTY_CLEARED);
				ret = do_shrink(rec, &sc, deferred, priority);
				if (ret == KSYNC_SHRINK_EMPTY)
					ret = 0;
				else
					ksync_sized_map_set_bit(m, id);
			}
			freed += ret;
			yield_point(KSYNC_SHRINKER_YP_BEFORE_PUT);
			record_put(rec);
next:
			if (ksync_unlikely(ksync_srcu_gp_pending(&reg->srcu))) {
				/* A writer waits: resume at the next id in a fresh section. */
				if (!ksync__shr_group_resume_after_gap(info, &idx))
					goto out; /* its counters now belong to the parent */
				if (!KSYNC_PLANT(GROUP_WALK_STALE_MAPS)) { /* the fuzzers' plant: the last section's maps kept */
					m = ksync_srcu_dereference(info->node[nid].bits, &reg->srcu);
					sm = ksync_srcu_dereference(info->node[nid].summary, &reg->srcu);
				}
			}
			yield_point(KSYNC_SHRINKER_YP_BETWEEN_IDS);
		}
		if (!any) {
			/* W2: clear the summary bit, then look again; pairs with S2. */
			ksync_sized_map_clear_bit(sm, u);
			ksync_smp_mb__after_atomic();
			if (ksync_sized_map_find_next_bit_in(m, start, end) < end)
				ksync_sized_map_set_bit(sm, u);
		}
	}
out:
	ksync_srcu_read_unlock(&reg->srcu, idx);
	return freed;
}

unsigned long ksync__shrink_slab(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg, int nid,
				struct ksync_memgroup *group, int priority)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct shrinker_group_info *info = NULL;

	if (MISUSE(at, in_callback(), "ksync_shrink_slab: called from a shrinker callback (recursion refused)"))
		return 0;
	if (group) {
		info = group_info(group);
		if (MISUSE(at, !info, "ksync_shrink_slab: not a group of a registry"))
			return 0;
		reg = info->reg;
	} else {
		reg = ksync__shr_reg_or_default(reg);
	}
	if (!reg)
		return 0;
	if (MISUSE(at, nid < 0 || nid >= reg->nr_nodes, "ksync_shrink_slab: bad nid"))
		return 0;
	if (priority < 0)
		priority = 0;
	if (priority > KSYNC_BITS_PER_LONG - 1)
		priority = KSYNC_BITS_PER_LONG - 1;
	return group ? shrink_slab_group(group, info, nid, priority)
		     : shrink_slab_global(reg, nid, priority);
}

int ksync__synchronize_shrinkers(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, in_callback(), "ksync_synchronize_shrinkers: called from a shrinker callback"))
		return -EDEADLK;
	reg = ksync__shr_reg_or_default(reg);
	if (!reg)
		return -ENOMEM;
	ksync__shr_records_flush_locked_batch(reg);
	ksync_synchronize_srcu(&reg->srcu);
	return 0;
}
