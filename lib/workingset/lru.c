/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/workingset/lru.c - the two LRU flavours a cache puts its items on:
 * the classic active/inactive pair and a multi-generation LRU.
 *
 * Theory of operation
 * -------------------
 * State. Per group (this LRU's client slot, allocated online) and for the
 * root, per node, KSYNC_MGLRU_NR_GENS lists with their counts; the classic
 * flavour uses list 0 (inactive) and 1 (active); MGLRU uses list seq % GENS
 * for the live sequence numbers min_seq..max_seq (at most GENS of them, at
 * least two after aging). One mutex per LRU guards every list, count and
 * item field (but @referenced, which MGLRU's mark_accessed sets without it:
 * relaxed atomics, a hint).
 *
 * Statistics. Every add and every removal (del, eviction) adds +-1 to the
 * group's local KSYNC_MEMGROUP_STAT_LRU on the node (the root's: the
 * workingset's root_lru) through clock.c; the classic flavour also keeps its
 * record's lru_size (the kernel's lru_zone_size), which MGLRU never touches,
 * as the kernel's MGLRU never touches mz->lru_zone_size.
 *
 * Offline (client order KSYNC_MEMGROUP_ORDER_LRU, before the statistics
 * move): under the mutex the group's lists are spliced onto its parent's
 * (the root lists for a top-level group), each item's ->group rewritten, and
 * the state marked dead: adds aimed at a dead state go to the nearest
 * ancestor whose state is not dead. The parent receives the child's
 * statistic when the statistics client runs, later in the same offline; a
 * top-level group's items leave the counted world for root_lru at the move.
 * MGLRU maps the child's generations onto the parent's by age from the
 * youngest. Items remember their group, so del needs no group argument.
 *
 * Release frees the state with call_srcu on the set's domain: a caller
 * inside a read section may still be looking it up (memgroup.h's rule for
 * client state).
 *
 * Eviction (under the mutex, bounded by a scan budget so that concurrent
 * marking cannot keep it rotating): items chosen are unlinked, get their
 * token from the workingset (their group is alive: its state is not dead,
 * so its offline has not passed this LRU's hook), and are handed to the
 * caller's callback after the mutex is dropped.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ksync/impl/switches.h>

#include <errno.h>
#include <stdlib.h>

#define GENS KSYNC_MGLRU_NR_GENS
#define INACTIVE 0
#define ACTIVE 1
/* Aging keeps this many generations (of GENS) before an eviction. */
#define MGLRU_MIN_GENS (GENS - 1)

struct lru_lists {
	struct ksync_list_head list[GENS];
	unsigned long nr[GENS];
	unsigned long min_seq, max_seq;
};

struct lru_state {
	struct ksync_rcu_head rcu;
	bool dead;                      /* under lru->lock */
	struct lru_lists node[];
};

struct ksync_lru {
	struct ksync_workingset *ws;
	enum ksync_lru_flavour flavour;
	pthread_mutex_t lock;
	struct ksync_memgroup_client client;
	int slot;
	int nr_nodes;
	unsigned long nr_items;         /* under lock */
	struct lru_state *root;
};

static bool classic(const struct ksync_lru *lru)
{
	return lru->flavour == KSYNC_LRU_CLASSIC;
}

static int ref_get(const struct ksync_lru_item *it)
{
	return __atomic_load_n(&it->referenced, __ATOMIC_RELAXED);
}

static void ref_set(struct ksync_lru_item *it, int v)
{
	__atomic_store_n(&it->referenced, v, __ATOMIC_RELAXED);
}

static struct lru_state *state_alloc(int nr_nodes)
{
	struct lru_state *st = KSYNC__ALLOC(calloc(1, sizeof(*st) + (size_t)nr_nodes * sizeof(st->node[0])));

	if (!st)
		return NULL;
	for (int nid = 0; nid < nr_nodes; nid++) {
		for (int i = 0; i < GENS; i++)
			ksync_init_list_head(&st->node[nid].list[i]);
		st->node[nid].min_seq = 0;
		st->node[nid].max_seq = 1;
	}
	return st;
}

static struct lru_state *state_of(struct ksync_lru *lru, const struct ksync_memgroup *g)
{
	struct lru_state *st;

	if (!g)
		return lru->root;
	st = ksync_memgroup_client_state(g, &lru->client);
	return st ? st : lru->root;
}

static void put_on(struct ksync_lru *lru, struct lru_lists *l, struct ksync_lru_item *it, int list)
{
	(void)lru;
	ksync_list_add_tail(&it->link, &l->list[list]);
	l->nr[list]++;
	it->list = list;
}

static void take_off(struct lru_lists *l, struct ksync_lru_item *it)
{
	ksync_list_del_init(&it->link);
	l->nr[it->list]--;
}

static int lru_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_lru *lru = priv;
	struct lru_state *st = state_alloc(lru->nr_nodes);

	if (!st)
		return -ENOMEM;
	ksync_memgroup_set_slot(g, slot, st);
	return 0;
}

/* The target list of a child's list @i (@c: the child's lists, @p: the parent's). */
static int target_list(const struct ksync_lru *lru, const struct lru_lists *c, const struct lru_lists *p, int i)
{
	unsigned long seq, age;

	if (classic(lru))
		return i;
	/* The child's generation of this index, counted from its youngest. */
	for (seq = c->min_seq; seq <= c->max_seq; seq++)
		if ((int)(seq % GENS) == i)
			break;
	age = c->max_seq - seq;
	seq = p->max_seq - age < p->min_seq || age > p->max_seq ? p->min_seq : p->max_seq - age;
	return (int)(seq % GENS);
}

static void lru_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_lru *lru = priv;
	struct lru_state *st = ksync_memgroup_slot(g, slot);
	struct ksync_memgroup *parent = ksync_memgroup_parent(g);
	struct lru_state *pst;

	if (!st)
		return;
	pthread_mutex_lock(&lru->lock);
	pst = state_of(lru, parent); /* the parent is online: not dead */
	for (int nid = 0; nid < lru->nr_nodes; nid++) {
		struct lru_lists *c = &st->node[nid], *p = &pst->node[nid];
		long moved = 0;

		for (int i = 0; i < GENS; i++) {
			struct ksync_lru_item *it;
			int t = target_list(lru, c, p, i);

			ksync_list_for_each_entry(it, &c->list[i], link) {
				it->group = parent;
				it->list = t;
			}
			p->nr[t] += c->nr[i];
			moved += (long)c->nr[i];
			c->nr[i] = 0;
			ksync_list_splice_tail_init(&c->list[i], &p->list[t]);
		}
		if (!moved)
			continue;
		if (!parent)
			ksync__ws_lru_to_root(lru->ws, g, nid, moved, classic(lru));
		else if (classic(lru))
			ksync__ws_lru_classic_move(lru->ws, g, parent, nid, moved);
	}
	st->dead = true;
	pthread_mutex_unlock(&lru->lock);
}

static void free_state_rcu(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct lru_state, rcu));
}

static void lru_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct lru_state *st = ksync_memgroup_slot(g, slot);

	(void)priv;
	if (st)
		ksync_call_srcu(ksync_memgroup_set_srcu(ksync_memgroup_set_of(g)), &st->rcu, free_state_rcu);
}

struct ksync_lru *ksync__lru_create(KSYNC_SITE_ARGS, struct ksync_workingset *ws, enum ksync_lru_flavour flavour)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_lru *lru;
	int slot;

	if (MISUSE(at, !ws, "ksync_lru_create(): NULL workingset"))
		return NULL;
	if (MISUSE(at, flavour != KSYNC_LRU_CLASSIC && flavour != KSYNC_MGLRU,
		   "ksync_lru_create(): unknown flavour %d", (int)flavour))
		return NULL;
	lru = KSYNC__ALLOC(calloc(1, sizeof(*lru)));
	if (!lru)
		return NULL;
	lru->ws = ws;
	lru->flavour = flavour;
	lru->nr_nodes = ws->nr_nodes;
	lru->root = state_alloc(ws->nr_nodes);
	if (!lru->root)
		goto fail;
	pthread_mutex_init(&lru->lock, NULL);
	lru->client = (struct ksync_memgroup_client){
		.name = classic(lru) ? "lru-classic" : "mglru",
		.online = lru_online,
		.offline = lru_offline,
		.release = lru_release,
		.order = KSYNC_MEMGROUP_ORDER_LRU,
	};
	slot = ksync_memgroup_client_register(ws->set, &lru->client, lru);
	if (slot < 0) {
		pthread_mutex_destroy(&lru->lock);
		goto fail;
	}
	lru->slot = slot;
	ksync_atomic_long_inc(&ws->nr_lrus);
	return lru;
fail:
	free(lru->root);
	free(lru);
	return NULL;
}

int ksync__lru_destroy(KSYNC_SITE_ARGS, struct ksync_lru *lru)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	unsigned long items;
	int err;

	if (MISUSE(at, !lru, "ksync_lru_destroy(): NULL LRU"))
		return -EINVAL;
	pthread_mutex_lock(&lru->lock);
	items = lru->nr_items;
	pthread_mutex_unlock(&lru->lock);
	if (MISUSE(at, items, "ksync_lru_destroy(): %lu items still on the LRU", items))
		return -EBUSY;
	if (MISUSE(at, ksync_memgroup_nr_groups(lru->ws->set) > 0,
		   "ksync_lru_destroy(): the set still has groups (destroy after they are freed)"))
		return -EBUSY;
	err = ksync_memgroup_client_unregister(lru->ws->set, lru->slot);
	if (err)
		return err;
	ksync_atomic_long_dec(&lru->ws->nr_lrus);
	pthread_mutex_destroy(&lru->lock);
	free(lru->root);
	free(lru);
	return 0;
}

static bool args_ok(struct ksync_site at, const char *what, struct ksync_lru *lru, struct ksync_memgroup *g, int nid)
{
	if (MISUSE(at, !lru, "%s: NULL LRU", what))
		return false;
	if (MISUSE(at, nid < 0 || nid >= lru->nr_nodes, "%s: nid %d outside 0..%d", what, nid, lru->nr_nodes - 1))
		return false;
	if (MISUSE(at, g && ksync_memgroup_set_of(g) != lru->ws->set, "%s: a group of another set", what))
		return false;
	return true;
}

int ksync__lru_add(KSYNC_SITE_ARGS, struct ksync_lru *lru, struct ksync_lru_item *item, struct ksync_memgroup *group,
		   int nid, bool active)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct lru_state *st;
	struct lru_lists *l;
	bool busy;
	int list;

	if (!args_ok(at, "ksync_lru_add()", lru, group, nid) || MISUSE(at, !item, "ksync_lru_add(): NULL item"))
		return -EINVAL;
	pthread_mutex_lock(&lru->lock);
	busy = item->on_lru;
	if (!busy) {
		/* A dead state's group went past our offline hook: its nearest live ancestor. */
		for (st = state_of(lru, group); group && st->dead; st = state_of(lru, group))
			group = ksync_memgroup_parent(group);
		l = &st->node[nid];
		if (classic(lru))
			list = active ? ACTIVE : INACTIVE;
		else
			list = (int)((active ? l->max_seq : l->min_seq) % GENS);
		item->group = group;
		item->nid = nid;
		item->on_lru = true;
		item->token = 0;
		ref_set(item, 0);
		put_on(lru, l, item, list);
		lru->nr_items++;
		ksync__ws_lru_account(lru->ws, group, nid, 1, classic(lru));
	}
	pthread_mutex_unlock(&lru->lock);
	if (MISUSE(at, busy, "ksync_lru_add(): the item is on an LRU already"))
		return -EBUSY;
	return 0;
}

/* Under the lock: unlink @it from wherever it is and account for it. */
static void remove_item(struct ksync_lru *lru, struct ksync_lru_item *it)
{
	take_off(&state_of(lru, it->group)->node[it->nid], it);
	it->on_lru = false;
	lru->nr_items--;
	ksync__ws_lru_account(lru->ws, it->group, it->nid, -1, classic(lru));
}

bool ksync__lru_del(KSYNC_SITE_ARGS, struct ksync_lru *lru, struct ksync_lru_item *item)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	bool was;

	if (MISUSE(at, !lru || !item, "ksync_lru_del(): NULL LRU or item"))
		return false;
	pthread_mutex_lock(&lru->lock);
	was = item->on_lru;
	if (was)
		remove_item(lru, item);
	pthread_mutex_unlock(&lru->lock);
	return was;
}

void ksync_lru_mark_accessed(struct ksync_lru *lru, struct ksync_lru_item *item)
{
	if (!lru || !item)
		return;
	if (!classic(lru)) {
		ref_set(item, 1); /* MGLRU: the eviction or aging pass honours it */
		return;
	}
	pthread_mutex_lock(&lru->lock);
	if (item->on_lru) {
		if (item->list == INACTIVE && ref_get(item)) {
			struct lru_lists *l = &state_of(lru, item->group)->node[item->nid];

			take_off(l, item);
			put_on(lru, l, item, ACTIVE);
			ref_set(item, 0);
			ksync__ws_activate(lru->ws, item->group, item->nid);
		} else {
			ref_set(item, 1);
		}
	}
	pthread_mutex_unlock(&lru->lock);
}

/* Under the lock: evict @it onto @victims with its token. */
static void evict_one(struct ksync_lru *lru, struct ksync_lru_item *it, struct ksync_list_head *victims)
{
	struct ksync_memgroup *g = it->group;
	int nid = it->nid;

	remove_item(lru, it);
	it->token = ksync__ws_evict(lru->ws, g, nid);
	ksync_list_add_tail(&it->link, victims);
}

static void move_to(struct ksync_lru *lru, struct lru_lists *l, struct ksync_lru_item *it, int list)
{
	take_off(l, it);
	put_on(lru, l, it, list);
}

static unsigned long evict_classic(struct ksync_lru *lru, struct lru_lists *l, unsigned long nr,
				   struct ksync_list_head *victims)
{
	unsigned long done = 0, budget = nr + 2 * (l->nr[INACTIVE] + l->nr[ACTIVE]) + 2;
	struct ksync_lru_item *it;

	while (done < nr && budget--) {
		if (l->nr[ACTIVE] > l->nr[INACTIVE]) {
			/* shrink_active_list(): deactivate the oldest, unless referenced. */
			int ref;

			it = ksync_list_first_entry(&l->list[ACTIVE], struct ksync_lru_item, link);
			ref = ref_get(it);
			if (ref)
				ref_set(it, 0);
			move_to(lru, l, it, ref ? ACTIVE : INACTIVE);
			continue;
		}
		if (!l->nr[INACTIVE])
			break;
		it = ksync_list_first_entry(&l->list[INACTIVE], struct ksync_lru_item, link);
		if (ref_get(it)) {
			ref_set(it, 0);
			move_to(lru, l, it, ACTIVE);
			ksync__ws_activate(lru->ws, it->group, it->nid);
			continue;
		}
		evict_one(lru, it, victims);
		done++;
	}
	return done;
}

/* MGLRU aging: open a new youngest generation and sweep the marked items into it. */
static void mglru_age(struct ksync_lru *lru, struct lru_lists *l)
{
	int young = (int)(++l->max_seq % GENS);

	for (unsigned long seq = l->min_seq; seq < l->max_seq; seq++) {
		struct ksync_lru_item *it, *next;
		int i = (int)(seq % GENS);

		ksync_list_for_each_entry_safe(it, next, &l->list[i], link) {
			if (!ref_get(it))
				continue;
			ref_set(it, 0);
			move_to(lru, l, it, young);
			ksync__ws_activate(lru->ws, it->group, it->nid);
		}
	}
}

static unsigned long evict_mglru(struct ksync_lru *lru, struct lru_lists *l, unsigned long nr,
				 struct ksync_list_head *victims)
{
	unsigned long total = 0, done = 0, budget;
	struct ksync_lru_item *it;

	for (int i = 0; i < GENS; i++)
		total += l->nr[i];
	budget = nr + 2 * total + 2 * GENS;
	while (done < nr && total && budget--) {
		while (l->min_seq < l->max_seq && !l->nr[l->min_seq % GENS])
			l->min_seq++;
		if (l->max_seq - l->min_seq + 1 < MGLRU_MIN_GENS) {
			mglru_age(lru, l); /* too few generations left */
			continue;
		}
		it = ksync_list_first_entry(&l->list[l->min_seq % GENS], struct ksync_lru_item, link);
		if (ref_get(it)) {
			ref_set(it, 0);
			move_to(lru, l, it, (int)(l->max_seq % GENS));
			ksync__ws_activate(lru->ws, it->group, it->nid);
			continue;
		}
		evict_one(lru, it, victims);
		done++;
		total--;
	}
	return done;
}

unsigned long ksync__lru_evict(KSYNC_SITE_ARGS, struct ksync_lru *lru, struct ksync_memgroup *group, int nid,
			       unsigned long nr, ksync_lru_evict_cb cb, void *arg)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	KSYNC_LIST_HEAD(victims);
	struct ksync_lru_item *it, *next;
	struct lru_state *st;
	unsigned long done = 0;

	if (!args_ok(at, "ksync_lru_evict()", lru, group, nid) || MISUSE(at, !cb, "ksync_lru_evict(): NULL callback"))
		return 0;
	pthread_mutex_lock(&lru->lock);
	st = state_of(lru, group);
	if (!st->dead) /* a dead state's items are its heir's now */
		done = classic(lru) ? evict_classic(lru, &st->node[nid], nr, &victims)
				    : evict_mglru(lru, &st->node[nid], nr, &victims);
	pthread_mutex_unlock(&lru->lock);
	ksync_list_for_each_entry_safe(it, next, &victims, link) {
		ksync_init_list_head(&it->link);
		cb(it, it->token, arg); /* may free @it */
	}
	return done;
}

unsigned long ksync__lru_size(KSYNC_SITE_ARGS, struct ksync_lru *lru, struct ksync_memgroup *group, int nid)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	unsigned long n = 0;
	struct lru_state *st;

	if (!args_ok(at, "ksync_lru_size()", lru, group, nid))
		return 0;
	pthread_mutex_lock(&lru->lock);
	st = state_of(lru, group);
	for (int i = 0; i < GENS; i++)
		n += st->node[nid].nr[i];
	pthread_mutex_unlock(&lru->lock);
	return n;
}

enum ksync_lru_flavour ksync_lru_flavour(const struct ksync_lru *lru)
{
	return lru->flavour;
}
