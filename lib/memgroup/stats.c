/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/memgroup/stats.c - per-group, per-node statistics with dying redirection.
 *
 * Theory of operation
 * -------------------
 * Each group keeps nr_nodes * KSYNC_MEMGROUP_NR_STATS atomic counters (this
 * client's state, allocated online). An update:
 *   fast  the group is online (a relaxed load of its state): one relaxed
 *         atomic add to its counter. No read section, no other atomic.
 *   slow  otherwise, inside a read section of the set's domain: walk up to
 *         the nearest online ancestor (ancestors stay in memory: a group
 *         holds a reference on its parent) and add there, or to the set's
 *         root counters when there is none.
 * Conservation. Every add lands in some counter, and counters move only by
 * xchg + add, so nothing is lost if every counter is eventually moved to a
 * live place before its memory goes:
 *   offline  (last of the clients, KSYNC_MEMGROUP_ORDER_STATS) moves the
 *            group's counters to the parent (online: it has an online
 *            child) or the root;
 *   late     an updater that saw the group online just before it went
 *            DYING may still add to its counters afterwards; it holds a
 *            reference on the group, or a read section of the set;
 *   release  (no reference left) queues the final move with call_srcu: after
 *            a grace period no updater of either kind can touch the group.
 *            The callback runs before the group's own free and before its
 *            parent's final move and free, which are queued after it (SRCU
 *            callbacks run in the order they were queued), so the residue
 *            reaches the parent while its counters still exist, and goes up
 *            from there.
 * The sum over all groups not yet freed plus the root therefore equals all
 * that was added (ksync_memgroup_stat_total()).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

struct stats_state {
	struct ksync_memgroup *group;
	struct ksync_memgroup_set *set;
	struct ksync_rcu_head rcu;
	ksync_atomic_long_t v[]; /* [nid * KSYNC_MEMGROUP_NR_STATS + item] */
};

#define STAT_IDX(nid, item) ((size_t)(nid) * KSYNC_MEMGROUP_NR_STATS + (size_t)(item))

static struct stats_state *stats_of(const struct ksync_memgroup *g)
{
	return ksync_memgroup_slot(g, ksync_memgroup_set_of(g)->stats_slot);
}

static int stats_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_memgroup_set *set = priv;
	struct stats_state *st = calloc(1, sizeof(*st) + (size_t)set->nr_nodes *
						 KSYNC_MEMGROUP_NR_STATS * sizeof(st->v[0]));

	if (!st)
		return -ENOMEM;
	st->group = g;
	st->set = set;
	ksync_memgroup_set_slot(g, slot, st);
	return 0;
}

/* Move every counter of @from into @to (a group's or the root's). */
static void stats_move(struct ksync_memgroup_set *set, struct stats_state *from,
		       ksync_atomic_long_t *to)
{
	size_t n = (size_t)set->nr_nodes * KSYNC_MEMGROUP_NR_STATS;

	for (size_t i = 0; i < n; i++) {
		if (!ksync_atomic_long_read(&from->v[i]))
			continue;
		ksync_atomic_long_add(ksync_atomic_long_xchg(&from->v[i], 0), &to[i]);
	}
}

static void stats_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_memgroup_set *set = priv;
	struct ksync_memgroup *parent = ksync_memgroup_parent(g);

	stats_move(set, ksync_memgroup_slot(g, slot),
		   parent ? ((struct stats_state *)ksync_memgroup_slot(parent, slot))->v : set->root_stats);
}

/* After a grace period past the release: the final move, then the memory. */
static void stats_final_move(struct ksync_rcu_head *head)
{
	struct stats_state *st = ksync_container_of(head, struct stats_state, rcu);
	struct ksync_memgroup *parent = ksync_memgroup_parent(st->group);
	/* The parent's own final move and free were queued after this callback. */
	struct stats_state *pst = parent ? stats_of(parent) : NULL;

	stats_move(st->set, st, pst ? pst->v : st->set->root_stats);
	free(st);
}

static void stats_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_memgroup_set *set = priv;
	struct stats_state *st = ksync_memgroup_slot(g, slot);

	if (st)
		ksync_call_srcu(&set->srcu, &st->rcu, stats_final_move);
}

const struct ksync_memgroup_client ksync__stats_client = {
	.name = "stats",
	.online = stats_online,
	.offline = stats_offline,
	.release = stats_release,
	.order = KSYNC_MEMGROUP_ORDER_STATS,
};

static KSYNC_COLD void stat_add_slow(struct ksync_memgroup *g, int nid, int item, long delta)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_of(g);
	int idx = ksync_srcu_read_lock(&set->srcu);

	while (g && ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
		g = ksync_memgroup_parent(g);
	ksync_atomic_long_add(delta, g ? &stats_of(g)->v[STAT_IDX(nid, item)]
				       : &set->root_stats[STAT_IDX(nid, item)]);
	ksync_srcu_read_unlock(&set->srcu, idx);
}

void ksync_memgroup_stat_add(struct ksync_memgroup *g, int nid, int item, long delta)
{
	/* Fast path: no read section, one relaxed atomic. Unordered on purpose. */
	if (ksync_likely(KSYNC_READ_ONCE(g->state) == KSYNC_MEMGROUP_ONLINE)) {
		ksync_atomic_long_add(delta, &stats_of(g)->v[STAT_IDX(nid, item)]);
		return;
	}
	stat_add_slow(g, nid, item, delta);
}

void ksync_memgroup_stat_add_always_locked(struct ksync_memgroup *g, int nid, int item, long delta)
{
	stat_add_slow(g, nid, item, delta);
}

long ksync_memgroup_stat_read(const struct ksync_memgroup *g, int nid, int item)
{
	return ksync_atomic_long_read(&stats_of(g)->v[STAT_IDX(nid, item)]);
}

long ksync_memgroup_stat_root(struct ksync_memgroup_set *set, int nid, int item)
{
	return ksync_atomic_long_read(&set->root_stats[STAT_IDX(nid, item)]);
}

long ksync_memgroup_stat_total(struct ksync_memgroup_set *set, int nid, int item)
{
	struct ksync_memgroup *g;
	long sum;

	/* Final moves still queued hold counts too: let them land first. */
	ksync_srcu_barrier(&set->srcu);
	pthread_mutex_lock(&set->mutex);
	sum = ksync_memgroup_stat_root(set, nid, item);
	ksync_list_for_each_entry(g, &set->groups, link) {
		struct stats_state *st = stats_of(g);
		if (st)
			sum += ksync_atomic_long_read(&st->v[STAT_IDX(nid, item)]);
	}
	pthread_mutex_unlock(&set->mutex);
	return sum;
}

int ksync_memgroup_set_nr_nodes(const struct ksync_memgroup_set *set)
{
	return set->nr_nodes;
}
