/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/workingset/clock.c - eviction clocks, tokens and their translation
 * across offlines (the kernel's nonresident_age, pack_shadow,
 * workingset_test_recent), and the LRU sizes the budget reads.
 *
 * Theory of operation
 * -------------------
 * Records. The workingset is a client of the set (order
 * KSYNC_MEMGROUP_ORDER_STATS - 50: after the LRUs moved their items, before
 * the statistics move). Its online hook gives every group a record (see
 * internal.h) linked to its parent's record (the root record for a
 * top-level group); records are hashed by the token's id field under
 * rec_lock and freed only with the workingset, so a token never names
 * freed memory, however long ago its group went away.
 *
 * Clocks. An eviction or an activation in a group adds one to the clock of
 * its record and of every ancestor's record up to the root (the kernel's
 * workingset_age_nonresident()); an eviction's token carries the clock
 * before its own tick (fetch_add). Relaxed atomics: the clocks order
 * nothing, a distance is a heuristic, and a tick racing a refault moves the
 * distance by one.
 *
 * Translation. The offline hook of group G with parent record P (the root
 * record for a top-level group) stores, per node, delta = P.clock - G.clock,
 * then publishes G.inherit = P with release (W1). A token (G, e) is judged
 * on P with e + delta: the distance P.clock - (e + delta) = (G.clock_off - e)
 * + (P.clock - P.clock_off), the events G saw until its offline plus those
 * its heir saw since. Chains of offlines add their deltas. Readers load
 * inherit with acquire (R1, pairs with W1) before they read delta[]. An
 * eviction or activation aimed at a group whose record has an heir ticks
 * the heir (the statistics went there too). Ticks of the dying group that
 * race the hook (between its DYING state and W1) land on its own clock and
 * its ancestors': they shift later distances by at most those few ticks.
 *
 * Judging. The judging record's group is dereferenced (its statistics
 * read) only when its inherit reads NULL inside a read section of the
 * set's domain: W1 precedes the group's release and the call_srcu that
 * frees it, so a reader that does not see W1 began its section before that
 * grace period and the group stays in memory until it ends (the RCU
 * publication rule, with W1 as the unpublish).
 *
 * Sizes. The workingset size and the shadow budget read the group's local
 * KSYNC_MEMGROUP_STAT_LRU, which both LRU flavours and every ksync::list_lru
 * maintain; the root's is root_lru, kept by the LRUs for their root lists.
 * The classic flavour also keeps per-record lru_size (the kernel's
 * lru_zone_size): the planted bug KSYNC_PLANT(WORKINGSET_BUDGET_FROM_CLASSIC_ONLY)
 * reads that for the budget, as 7404bd37cfbe read lruvec_lru_size(), and
 * the budget of an MGLRU cache collapses to 0.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ksync/impl/seams.h>
#include <ksync/impl/switches.h>

#include <errno.h>
#include <stdlib.h>

static struct ws_record *rec_alloc(int nr_nodes)
{
	size_t n = (size_t)nr_nodes;
	struct ws_record *r = KSYNC__ALLOC(calloc(1, sizeof(*r) + n * (sizeof(long) + 2 * sizeof(ksync_atomic_long_t))));

	if (!r)
		return NULL;
	r->nr_nodes = nr_nodes;
	r->clock = (ksync_atomic_long_t *)(void *)(r + 1);
	r->lru_size = r->clock + n;
	r->delta = (long *)(void *)(r->lru_size + n);
	return r;
}

static unsigned long field_of(int id)
{
	return (unsigned long)id % WS_ID_MASK + 1;
}

static struct ws_record *rec_of(struct ksync_workingset *ws, const struct ksync_memgroup *g)
{
	struct ws_record *r;

	if (!g)
		return ws->root;
	r = ksync_memgroup_client_state(g, &ws->client);
	return r ? r : ws->root;
}

/* R1: follow the heirs (acquire, pairs with W1). */
static struct ws_record *rec_heir(struct ws_record *r)
{
	struct ws_record *h;

	while ((h = ksync_smp_load_acquire(&r->inherit)))
		r = h;
	return r;
}

static int ws_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_workingset *ws = priv;
	struct ws_record *r = rec_alloc(ws->nr_nodes);
	struct ksync_memgroup *parent = ksync_memgroup_parent(g);
	unsigned long b;

	if (!r)
		return -ENOMEM;
	r->group = g;
	r->field = field_of(ksync_memgroup_id(g));
	/* The parent is online (it has a child being created): its record exists. */
	r->up = rec_of(ws, parent);
	b = r->field % WS_REC_BUCKETS;
	pthread_mutex_lock(&ws->rec_lock);
	r->hnext = ws->rec_table[b]; /* newest first: a reused id field finds the newest group */
	ws->rec_table[b] = r;
	pthread_mutex_unlock(&ws->rec_lock);
	ksync_memgroup_set_slot(g, slot, r);
	return 0;
}

/* W1: translate @r's clocks onto @heir's and publish the heir. */
static void rec_retire(struct ksync_workingset *ws, struct ws_record *r, struct ws_record *heir)
{
	for (int nid = 0; nid < ws->nr_nodes; nid++) {
		long n = ksync_atomic_long_xchg(&r->lru_size[nid], 0);

		if (n)
			ksync_atomic_long_add(n, &heir->lru_size[nid]);
		r->delta[nid] = ksync_atomic_long_read(&heir->clock[nid]) - ksync_atomic_long_read(&r->clock[nid]);
	}
	ksync_smp_store_release(&r->inherit, heir); /* W1: delta[] before the heir */
}

static void ws_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_workingset *ws = priv;
	struct ws_record *r = ksync_memgroup_slot(g, slot);

	if (!r)
		return;
	pthread_mutex_lock(&ws->rec_lock);
	/* The parent is still online (it has a child going offline): its record has no heir. */
	rec_retire(ws, r, rec_heir(rec_of(ws, ksync_memgroup_parent(g))));
	pthread_mutex_unlock(&ws->rec_lock);
}

/* A group released without going offline (its creation failed): the root inherits. */
static void ws_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_workingset *ws = priv;
	struct ws_record *r = ksync_memgroup_slot(g, slot);

	if (!r)
		return;
	pthread_mutex_lock(&ws->rec_lock);
	if (!ksync_smp_load_acquire(&r->inherit))
		rec_retire(ws, r, ws->root);
	pthread_mutex_unlock(&ws->rec_lock);
}

int ksync__ws_clock_init(struct ksync_workingset *ws)
{
	int slot;

	pthread_mutex_init(&ws->rec_lock, NULL);
	ws->root = rec_alloc(ws->nr_nodes);
	ws->root_lru = KSYNC__ALLOC(calloc((size_t)ws->nr_nodes, sizeof(*ws->root_lru)));
	if (!ws->root || !ws->root_lru)
		goto fail;
	ws->client = (struct ksync_memgroup_client){
		.name = "workingset",
		.online = ws_online,
		.offline = ws_offline,
		.release = ws_release,
		.order = KSYNC_MEMGROUP_ORDER_STATS - 50,
	};
	slot = ksync_memgroup_client_register(ws->set, &ws->client, ws);
	if (slot < 0)
		goto fail;
	ws->slot = slot;
	return 0;
fail:
	free(ws->root_lru);
	free(ws->root);
	pthread_mutex_destroy(&ws->rec_lock);
	return -ENOMEM;
}

int ksync__ws_clock_fini(struct ksync_workingset *ws)
{
	int err = ksync_memgroup_client_unregister(ws->set, ws->slot);

	if (err)
		return err;
	for (int b = 0; b < WS_REC_BUCKETS; b++) {
		struct ws_record *r = ws->rec_table[b], *next;

		for (; r; r = next) {
			next = r->hnext;
			free(r);
		}
	}
	free(ws->root_lru);
	free(ws->root);
	pthread_mutex_destroy(&ws->rec_lock);
	return 0;
}

/* Tick @r and every record above it on @nid; return @r's clock before. */
static unsigned long tick(struct ws_record *r, int nid)
{
	unsigned long before = (unsigned long)ksync_atomic_long_fetch_add(1, &r->clock[nid]);

	/* Records are never freed before the workingset: no group is read here. */
	for (r = r->up; r; r = r->up)
		ksync_atomic_long_inc(&r->clock[nid]);
	return before;
}

unsigned long ksync__ws_evict(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid)
{
	struct ws_record *r = rec_heir(rec_of(ws, g));
	unsigned long e = tick(r, nid);

	ksync_atomic_long_inc(&ws->evictions);
	return 1UL | ((unsigned long)nid << 1) | (r->field << (1 + KSYNC_WORKINGSET_NODE_BITS)) |
	       ((e & WS_CLOCK_MASK) << KSYNC_WORKINGSET_CLOCK_SHIFT);
}

void ksync__ws_activate(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid)
{
	tick(rec_heir(rec_of(ws, g)), nid);
	ksync_atomic_long_inc(&ws->activations);
}

bool ksync__ws_token_ok(const struct ksync_workingset *ws, unsigned long token)
{
	return (token & 1) && ksync__ws_token_nid(token) < ws->nr_nodes;
}

struct ws_record *ksync__ws_resolve(struct ksync_workingset *ws, unsigned long token, unsigned long *eviction,
				    int *translated)
{
	unsigned long field = (token >> (1 + KSYNC_WORKINGSET_NODE_BITS)) & WS_ID_MASK;
	int nid = ksync__ws_token_nid(token);
	unsigned long e = token >> KSYNC_WORKINGSET_CLOCK_SHIFT;
	struct ws_record *r = NULL, *h;
	int n = 0;

	if (!field) {
		r = ws->root;
	} else {
		pthread_mutex_lock(&ws->rec_lock);
		for (r = ws->rec_table[field % WS_REC_BUCKETS]; r && r->field != field; r = r->hnext)
			;
		pthread_mutex_unlock(&ws->rec_lock);
		if (!r)
			return NULL; /* a token of another workingset */
	}
	while ((h = ksync_smp_load_acquire(&r->inherit))) { /* R1, pairs with W1 */
		e += (unsigned long)r->delta[nid];
		r = h;
		n++;
	}
	*eviction = e & WS_CLOCK_MASK;
	*translated = n;
	return r;
}

static unsigned long clamp(long v)
{
	return v > 0 ? (unsigned long)v : 0;
}

/* The local LRU statistic (the kernel's lruvec_page_state_local() of the LRU items). */
static unsigned long lru_pages_real(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid)
{
	if (!g)
		return clamp(ksync_atomic_long_read(&ws->root_lru[nid]));
	if (nid >= ws->set_nodes)
		return 0;
	return clamp(ksync_memgroup_stat_read(g, nid, KSYNC_MEMGROUP_STAT_LRU));
}

unsigned long ksync__ws_lru_pages(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid)
{
	if (KSYNC_PLANT(WORKINGSET_BUDGET_FROM_CLASSIC_ONLY))
		/* The bug: a counter only the classic flavour maintains (lru_zone_size). */
		return clamp(ksync_atomic_long_read(&rec_of(ws, g)->lru_size[nid]));
	return lru_pages_real(ws, g, nid);
}

void ksync__ws_lru_account(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid, long delta,
			   bool classic)
{
	if (!g)
		ksync_atomic_long_add(delta, &ws->root_lru[nid]);
	else if (nid < ws->set_nodes)
		ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_LRU, delta);
	if (classic)
		ksync_atomic_long_add(delta, &rec_of(ws, g)->lru_size[nid]);
}

void ksync__ws_lru_to_root(struct ksync_workingset *ws, struct ksync_memgroup *child, int nid, long n,
			   bool classic)
{
	/* @child is dying: the subtraction goes where its statistics go (the root counter). */
	if (nid < ws->set_nodes)
		ksync_memgroup_stat_add(child, nid, KSYNC_MEMGROUP_STAT_LRU, -n);
	ksync_atomic_long_add(n, &ws->root_lru[nid]);
	if (classic)
		ksync__ws_lru_classic_move(ws, child, NULL, nid, n);
}

void ksync__ws_lru_classic_move(struct ksync_workingset *ws, struct ksync_memgroup *from,
				struct ksync_memgroup *to, int nid, long n)
{
	ksync_atomic_long_sub(n, &rec_of(ws, from)->lru_size[nid]);
	ksync_atomic_long_add(n, &rec_of(ws, to)->lru_size[nid]);
}

bool ksync__ws_judge(struct ksync_workingset *ws, unsigned long token, struct ksync_workingset_refault_info *info)
{
	struct ksync_workingset_refault_info in = { .group_id = -1, .nid = ksync__ws_token_nid(token) };
	struct ws_record *r;
	unsigned long e, now;
	bool recent = false;
	int idx = ksync_srcu_read_lock(ws->srcu); /* the judging group stays in memory (see Judging) */

	r = ksync__ws_resolve(ws, token, &e, &in.translated);
	if (r) {
		now = (unsigned long)ksync_atomic_long_read(&r->clock[in.nid]);
		in.distance = (now - e) & WS_CLOCK_MASK;
		if (r->group) {
			unsigned long lru = lru_pages_real(ws, r->group, in.nid);
			unsigned long nodes = ksync_list_lru_count_one(&ws->shadow_lru, in.nid, r->group);

			/* The shadow nodes are on counted lists too: they are no part of the workingset. */
			in.workingset_size = lru > nodes ? lru - nodes : 0;
			in.group_id = ksync_memgroup_id(r->group);
		} else {
			in.workingset_size = lru_pages_real(ws, NULL, in.nid);
		}
		recent = in.distance <= in.workingset_size;
		ksync_atomic_long_inc(&ws->refaults);
		if (in.translated)
			ksync_atomic_long_inc(&ws->refaults_translated);
		if (recent) {
			/* The kernel ages the lruvec on a workingset refault, as an activation. */
			tick(r, in.nid);
			ksync_atomic_long_inc(&ws->refaults_ws);
		}
	}
	ksync_srcu_read_unlock(ws->srcu, idx);
	if (info)
		*info = in;
	return recent;
}
