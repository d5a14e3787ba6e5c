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
	struct stats_state *st = KSYNC__ALLOC(calloc(1, sizeof(*st) + (size_t)set->nr_nodes *
						 KSYNC_MEMGROUP_NR_STATS * sizeof(st->v[0])));

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

/*
 * @nid and @item name a counter of @set? Reported at the caller's site when
 * not (a bad index would read or write past the counters).
 */
static bool stat_args_ok(struct ksync_site at, const char *fn, const struct ksync_memgroup_set *set, int nid,
			 int item)
{
	if (KSYNC_WARN_AT(at.file, at.line, !set, "%s: NULL group or set", fn))
		return false;
	return !KSYNC_WARN_AT(at.file, at.line,
			      nid < 0 || nid >= set->nr_nodes || item < 0 || item >= KSYNC_MEMGROUP_NR_STATS,
			      "%s: nid %d or item %d out of range (%d nodes, %d items)", fn, nid, item,
			      set->nr_nodes, KSYNC_MEMGROUP_NR_STATS);
}

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

int ksync__memgroup_stat_add(KSYNC_SITE_ARGS, struct ksync_memgroup *g, int nid, int item, long delta)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (ksync_unlikely(!stat_args_ok(at, "ksync_memgroup_stat_add", g ? g->set : NULL, nid, item)))
		return -EINVAL;
	/* Fast path: no read section, one relaxed atomic. Unordered on purpose. */
	if (ksync_likely(KSYNC_READ_ONCE(g->state) == KSYNC_MEMGROUP_ONLINE)) {
		ksync_atomic_long_add(delta, &stats_of(g)->v[STAT_IDX(nid, item)]);
		return 0;
	}
	stat_add_slow(g, nid, item, delta);
	return 0;
}

int ksync__memgroup_stat_add_always_locked(KSYNC_SITE_ARGS, struct ksync_memgroup *g, int nid, int item,
					   long delta)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!stat_args_ok(at, "ksync_memgroup_stat_add_always_locked", g ? g->set : NULL, nid, item))
		return -EINVAL;
	stat_add_slow(g, nid, item, delta);
	return 0;
}

long ksync__memgroup_stat_read(KSYNC_SITE_ARGS, const struct ksync_memgroup *g, int nid, int item)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!stat_args_ok(at, "ksync_memgroup_stat_read", g ? g->set : NULL, nid, item))
		return 0;
	return ksync_atomic_long_read(&stats_of(g)->v[STAT_IDX(nid, item)]);
}

long ksync__memgroup_stat_root(KSYNC_SITE_ARGS, struct ksync_memgroup_set *set, int nid, int item)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!stat_args_ok(at, "ksync_memgroup_stat_root", set, nid, item))
		return 0;
	return ksync_atomic_long_read(&set->root_stats[STAT_IDX(nid, item)]);
}

long ksync__memgroup_stat_total(KSYNC_SITE_ARGS, struct ksync_memgroup_set *set, int nid, int item)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_memgroup *g;
	long sum;

	if (!stat_args_ok(at, "ksync_memgroup_stat_total", set, nid, item))
		return 0;
	/*
	 * It waits for the set's queued callbacks: inside a read section of
	 * that domain the wait could never end (found by review: the barrier
	 * was skipped and reported at the library's own line).
	 */
	if (MISUSE(at, ksync_srcu_read_lock_held(&set->srcu),
		   "ksync_memgroup_stat_total: inside a read section of the set's domain "
		   "(it waits for the set's queued final moves)"))
		return 0;
	/* Final moves still queued hold counts too: let them land first. */
	ksync_srcu_barrier(&set->srcu);
	ksync__mutex_lock(&set->mutex);
	sum = ksync_atomic_long_read(&set->root_stats[STAT_IDX(nid, item)]);
	ksync_list_for_each_entry(g, &set->groups, link) {
		struct stats_state *st = stats_of(g);
		/*
		 * A released group stays on set->groups until group_release()
		 * takes the mutex again, after its release hooks ran: its
		 * counters may already be freed by the final move queued there
		 * (by the barrier above, or by anyone driving the domain), and
		 * what they held is in that move. FREED is set under the
		 * mutex, before the hooks: the other groups' counters stay
		 * while we hold it. (Found by fuzz_memgroup_mt: a use after
		 * free, corpus seed regress-stat-total-reads-released-group.)
		 */
		if (st && KSYNC_READ_ONCE(g->state) != KSYNC_MEMGROUP_FREED)
			sum += ksync_atomic_long_read(&st->v[STAT_IDX(nid, item)]);
	}
	pthread_mutex_unlock(&set->mutex);
	return sum;
}

/* For ksync_objcg_charge(): @delta to the root's @item on @nid (arguments checked). */
void ksync__memgroup_stat_root_add(struct ksync_memgroup_set *set, int nid, int item, long delta)
{
	ksync_atomic_long_add(delta, &set->root_stats[STAT_IDX(nid, item)]);
}

int ksync_memgroup_set_nr_nodes(const struct ksync_memgroup_set *set)
{
	return set->nr_nodes;
}
