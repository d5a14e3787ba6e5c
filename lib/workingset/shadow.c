/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/workingset/shadow.c - the shadow store and its shrinker (the kernel's
 * shadow nodes, count_shadow_nodes() and shadow_lru_isolate()).
 *
 * Theory of operation
 * -------------------
 * Nodes. A shadow node holds KSYNC_WORKINGSET_NODE_SLOTS tokens for the keys
 * that share key / SLOTS (the kernel's xarray node of a mapping), with the
 * count of slots in use. Nodes are hashed by that index under shadow_lock
 * (the kernel's i_pages lock), and every node in the hash is on
 * ws->shadow_lru, on the list of the (group, node) named by the token that
 * created it (its heir, if the group went offline), as the kernel puts an
 * xarray node on the list of the memcg it was charged to. ksync::list_lru
 * moves nodes to the parent's list when a group goes offline, and keeps
 * KSYNC_MEMGROUP_STAT_LRU for them (the kernel's budget counts the shadow
 * nodes' slab pages too).
 *
 *   store  inside a read section of the set's domain (the token's group
 *          is looked at: clock.c, "Judging"): under shadow_lock, find or
 *          create the node (a new node goes into the hash and onto its
 *          list_lru list), set the slot.
 *   take   under shadow_lock, clear the slot; a node left empty leaves the
 *          hash and its list, and is freed after the lock.
 *   count  the shrinker's count_objects: nodes on the (group, node) list
 *          beyond the budget, lru_pages >> 3 (nodes may be 1/8 populated),
 *          KSYNC_SHRINK_EMPTY without nodes; lru_pages is the group's local
 *          KSYNC_MEMGROUP_STAT_LRU (clock.c).
 *   scan   walks the (group, node) list from its oldest node: the isolate
 *          callback runs under the list's lock and TRIES shadow_lock (the
 *          lock order is shadow_lock, then a list's lock: store and take add
 *          and delete under shadow_lock), skipping the node if it is busy;
 *          holding both, it unhashes the node and moves it to the walk's
 *          dispose list. Nodes are freed after the walk, outside every lock,
 *          with every shadow entry in them. A scan takes at most the
 *          nodes beyond the budget as counted at its start (the walk's
 *          total may come from an older, larger count), and none when
 *          there are none (KSYNC_SHRINK_STOP). Batches of WS_SHADOW_BATCH
 *          (16) nodes, so that rounds at any priority trim an excess of
 *          more than two batches (seeks 0: new work is half the excess).
 * A node in the hash is on its list and nowhere else; a node off the hash
 * is the freeing thread's alone (take's or scan's: both unhash it under
 * shadow_lock, and only the one that found it in the hash does).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ksync/impl/switches.h>

#include <errno.h>
#include <stdlib.h>

struct ws_shadow_node {
	struct ksync_list_lru_item lru;
	struct ws_shadow_node *hnext;   /* hash chain, under shadow_lock */
	unsigned long index;            /* key / KSYNC_WORKINGSET_NODE_SLOTS */
	unsigned int count;             /* slots in use */
	unsigned long slots[KSYNC_WORKINGSET_NODE_SLOTS];
};

static struct ws_shadow_node **bucket(struct ksync_workingset *ws, unsigned long index)
{
	return &ws->buckets[(index * 0x9E3779B97F4A7C15ULL >> 17) & (ws->nr_buckets - 1)];
}

/* Under shadow_lock: the node of @index, and where its chain link is. */
static struct ws_shadow_node *lookup(struct ksync_workingset *ws, unsigned long index,
				     struct ws_shadow_node ***linkp)
{
	struct ws_shadow_node **link = bucket(ws, index), *n;

	for (; (n = *link); link = &n->hnext)
		if (n->index == index)
			break;
	*linkp = link;
	return n;
}

static void unhash(struct ksync_workingset *ws, struct ws_shadow_node *node)
{
	struct ws_shadow_node **link;
	struct ws_shadow_node *n = lookup(ws, node->index, &link);

	if (n == node)
		*link = node->hnext;
}

int ksync__ws_store(struct ksync_workingset *ws, unsigned long key, unsigned long token)
{
	unsigned long index = key / KSYNC_WORKINGSET_NODE_SLOTS, e;
	unsigned int slot = (unsigned int)(key % KSYNC_WORKINGSET_NODE_SLOTS);
	struct ws_shadow_node **link, *n;
	struct ws_record *r;
	int translated, err = 0;
	int idx = ksync_srcu_read_lock(ws->srcu);

	r = ksync__ws_resolve(ws, token, &e, &translated);
	pthread_mutex_lock(&ws->shadow_lock);
	n = lookup(ws, index, &link);
	if (!n) {
		n = KSYNC__ALLOC(calloc(1, sizeof(*n)));
		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		ksync_list_lru_item_init(&n->lru);
		n->index = index;
		*link = n;
		/* r->group is alive: its inherit read NULL inside this section (clock.c, "Judging"). */
		ksync_list_lru_add(&ws->shadow_lru, &n->lru, ksync__ws_token_nid(token), r ? r->group : NULL);
		ksync_atomic_long_inc(&ws->shadow_nodes);
	}
	if (!n->slots[slot]) {
		n->count++;
		ksync_atomic_long_inc(&ws->shadow_entries);
	}
	n->slots[slot] = token;
out:
	pthread_mutex_unlock(&ws->shadow_lock);
	ksync_srcu_read_unlock(ws->srcu, idx);
	return err;
}

unsigned long ksync__ws_take(struct ksync_workingset *ws, unsigned long key)
{
	unsigned long index = key / KSYNC_WORKINGSET_NODE_SLOTS, token = 0;
	unsigned int slot = (unsigned int)(key % KSYNC_WORKINGSET_NODE_SLOTS);
	struct ws_shadow_node **link, *n, *dead = NULL;

	pthread_mutex_lock(&ws->shadow_lock);
	n = lookup(ws, index, &link);
	if (n && (token = n->slots[slot])) {
		n->slots[slot] = 0;
		ksync_atomic_long_dec(&ws->shadow_entries);
		if (!--n->count) {
			*link = n->hnext;
			ksync_list_lru_del_obj(&ws->shadow_lru, &n->lru);
			ksync_atomic_long_dec(&ws->shadow_nodes);
			dead = n;
		}
	}
	pthread_mutex_unlock(&ws->shadow_lock);
	free(dead);
	return token;
}

static unsigned long shadow_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct ksync_workingset *ws = s->private_data;
	unsigned long nodes = ksync_list_lru_shrinker_count(&ws->shadow_lru, sc);
	unsigned long max_nodes;

	if (!nodes)
		return KSYNC_SHRINK_EMPTY;
	max_nodes = ksync__ws_lru_pages(ws, sc->group, sc->nid) >> WS_BUDGET_SHIFT;
	return nodes > max_nodes ? nodes - max_nodes : 0;
}

struct scan_arg {
	struct ksync_workingset *ws;
	struct ksync_list_head dispose;
};

static enum ksync_lru_status shadow_isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *list,
					    void *arg)
{
	struct scan_arg *a = arg;
	struct ws_shadow_node *n = ksync_container_of(item, struct ws_shadow_node, lru);

	/* Lock order is shadow_lock before a list's lock: only try it here. */
	if (pthread_mutex_trylock(&a->ws->shadow_lock))
		return KSYNC_LRU_SKIP;
	unhash(a->ws, n);
	ksync_atomic_long_sub((long)n->count, &a->ws->shadow_entries);
	ksync_atomic_long_add((long)n->count, &a->ws->entries_reclaimed);
	ksync_list_lru_isolate_move(list, item, &a->dispose);
	pthread_mutex_unlock(&a->ws->shadow_lock);
	return KSYNC_LRU_REMOVED;
}

static unsigned long shadow_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct scan_arg a = { .ws = s->private_data };
	struct ksync_list_head *pos, *next;
	unsigned long freed, excess = shadow_count(s, sc);

	/*
	 * Only the nodes beyond the budget now: the walk's total comes from a
	 * count made before earlier batches (and from deferred work of larger
	 * counts), and would otherwise take nodes within the budget.
	 */
	if (!excess || excess == KSYNC_SHRINK_EMPTY)
		return KSYNC_SHRINK_STOP;
	if (sc->nr_to_scan > excess)
		sc->nr_to_scan = excess;
	ksync_init_list_head(&a.dispose);
	freed = ksync_list_lru_shrinker_walk(&a.ws->shadow_lru, sc, shadow_isolate, &a);
	for (pos = a.dispose.next; pos != &a.dispose; pos = next) {
		next = pos->next;
		free(ksync_container_of(pos, struct ws_shadow_node, lru.link));
	}
	ksync_atomic_long_sub((long)freed, &a.ws->shadow_nodes);
	ksync_atomic_long_add((long)freed, &a.ws->nodes_reclaimed);
	return freed;
}

int ksync__ws_shadow_init(struct ksync_workingset *ws, unsigned int nr_buckets)
{
	unsigned int n = 1;
	int err;

	while (n < nr_buckets && n < (1U << 30))
		n <<= 1;
	ws->nr_buckets = n;
	ws->buckets = KSYNC__ALLOC(calloc(n, sizeof(*ws->buckets)));
	if (!ws->buckets)
		return -ENOMEM;
	pthread_mutex_init(&ws->shadow_lock, NULL);
	ws->shrinker = ksync_shrinker_alloc(ws->reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE,
					    "workingset-shadow");
	if (!ws->shrinker) {
		err = -ENOMEM;
		goto fail;
	}
	ws->shrinker->count_objects = shadow_count;
	ws->shrinker->scan_objects = shadow_scan;
	ws->shrinker->seeks = 0; /* as the kernel's: count reports only nodes beyond the budget */
	/*
	 * With seeks 0 a round's new work is half the excess, and deferred work
	 * comes back shifted by the priority: a round scans once that reaches a
	 * batch. The default batch (128, for kernel caches of millions) left an
	 * excess under ~256 nodes untouched above priority 1-2, most of the
	 * budget of a cache of a few thousand items; 16 nodes (8 KiB of slots)
	 * leaves less than two batches over the budget at any priority.
	 */
	ws->shrinker->batch = WS_SHADOW_BATCH;
	ws->shrinker->private_data = ws;
	err = ksync_list_lru_init(&ws->shadow_lru, ws->set, ws->nr_nodes, ws->shrinker);
	if (err)
		goto fail_shrinker;
	return 0;
fail_shrinker:
	ksync_shrinker_free(ws->shrinker);
fail:
	pthread_mutex_destroy(&ws->shadow_lock);
	free(ws->buckets);
	return err;
}

int ksync__ws_shadow_start(struct ksync_workingset *ws)
{
	return ksync_shrinker_register(ws->shrinker);
}

int ksync__ws_shadow_fini(struct ksync_workingset *ws)
{
	int err = ksync_shrinker_free(ws->shrinker);

	if (err)
		return err;
	for (unsigned int b = 0; b < ws->nr_buckets; b++) {
		struct ws_shadow_node *n, *next;

		for (n = ws->buckets[b]; n; n = next) {
			next = n->hnext;
			ksync_list_lru_del_obj(&ws->shadow_lru, &n->lru);
			free(n);
		}
	}
	err = ksync_list_lru_destroy(&ws->shadow_lru);
	pthread_mutex_destroy(&ws->shadow_lock);
	free(ws->buckets);
	return err;
}
