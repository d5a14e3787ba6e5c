/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of ksync::list_lru (lib/list_lru): add, del, the counts and the
 * walks with every isolate status; lazy allocation of the groups' lists;
 * offline reparenting (to the parent, up the tree, to the global list) and
 * adds racing it; del after reparenting (also with a forced schedule);
 * the shrinker bit and the memcg-aware shrinker pattern of the header's DOC;
 * misuse reports; a short concurrent churn; the kernel spellings.
 */
#include <ksync/list_lru.h>
#include <ksync/list_lru_testing.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "reports.h"
#include "rng.h"
#include "wait.h"

struct obj {
	int id;
	int visits;
	struct ksync_list_lru_item lru;
};

static void objs_init(struct obj *o, int n)
{
	for (int i = 0; i < n; i++) {
		o[i].id = i;
		o[i].visits = 0;
		ksync_list_lru_item_init(&o[i].lru);
	}
}

static struct obj *obj_of(struct ksync_list_lru_item *item)
{
	return ksync_container_of(item, struct obj, lru);
}

/* An isolate callback that records the order of the items and skips them. */
struct order_log {
	int ids[64];
	int n;
};

static enum ksync_lru_status log_skip(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	struct order_log *log = arg;

	(void)l;
	if (log->n < 64)
		log->ids[log->n++] = obj_of(item)->id;
	return KSYNC_LRU_SKIP;
}

/* The ids on the list of (@g, @nid), head first, as a string "a,b,c". */
static const char *order_of(struct ksync_list_lru *lru, int nid, struct ksync_memgroup *g)
{
	static char buf[256];
	struct order_log log = { .n = 0 };
	unsigned long budget = 64;
	size_t len = 0;

	ksync_list_lru_walk_one(lru, nid, g, log_skip, &log, &budget);
	buf[0] = 0;
	for (int i = 0; i < log.n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, i ? ",%d" : "%d", log.ids[i]);
	return buf;
}

static enum ksync_lru_status remove_all(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	(void)arg;
	ksync_list_lru_isolate(l, item);
	return KSYNC_LRU_REMOVED;
}

/* ------------------------------------------------------------------------ */

KTEST(global_add_del_count)
{
	struct ksync_list_lru lru;
	struct obj o[3];

	objs_init(o, 3);
	KCHECK_EQ(ksync_list_lru_init(&lru, NULL, 2, NULL), 0);
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, NULL));
	KCHECK(ksync_list_lru_item_on_list(&o[0].lru));
	KCHECK(!ksync_list_lru_add(&lru, &o[0].lru, 0, NULL)); /* on a list already */
	KCHECK(!ksync_list_lru_add(&lru, &o[0].lru, 1, NULL));
	KCHECK(ksync_list_lru_add(&lru, &o[1].lru, 0, NULL));
	KCHECK(ksync_list_lru_add(&lru, &o[2].lru, 1, NULL));
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, NULL), 2);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 1, NULL), 1);
	KCHECK_EQ(ksync_list_lru_count_node(&lru, 0), 2);
	KCHECK_EQ(ksync_list_lru_count_node(&lru, 1), 1);
	KCHECK_EQ(ksync_list_lru_count(&lru), 3);
	KCHECK(strcmp(order_of(&lru, 0, NULL), "0,1") == 0);

	KCHECK(ksync_list_lru_del(&lru, &o[0].lru, 0, NULL));
	KCHECK(!ksync_list_lru_item_on_list(&o[0].lru));
	KCHECK(!ksync_list_lru_del(&lru, &o[0].lru, 0, NULL)); /* on no list */
	KCHECK(ksync_list_lru_del_obj(&lru, &o[2].lru));
	KCHECK(!ksync_list_lru_del_obj(&lru, &o[2].lru));
	KCHECK_EQ(ksync_list_lru_count(&lru), 1);
	/* Added again after a del: at the tail. */
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, NULL));
	KCHECK(strcmp(order_of(&lru, 0, NULL), "1,0") == 0);
	KCHECK(ksync_list_lru_del_obj(&lru, &o[0].lru));
	KCHECK(ksync_list_lru_del_obj(&lru, &o[1].lru));
	KCHECK_EQ(ksync_list_lru_count(&lru), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK(lru.priv == NULL);
}

/* 10,000 groups, items in 10 of them: 10 lists (then 11 with another node). */
KTEST(group_lists_are_lazy)
{
	enum { NG = 10000 };
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup **g = calloc(NG, sizeof(*g));
	struct ksync_list_lru lru;
	struct ksync_list_lru_stats st;
	struct obj o[21];

	objs_init(o, 21);
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 2, NULL), 0);
	for (int i = 0; i < NG; i++)
		KCHECK((g[i] = ksync_memgroup_create(set, NULL)) != NULL);
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.group_lists, 0);
	for (int k = 0; k < 10; k++) {
		KCHECK(ksync_list_lru_add(&lru, &o[2 * k].lru, 0, g[k * 997]));
		KCHECK(ksync_list_lru_add(&lru, &o[2 * k + 1].lru, 0, g[k * 997])); /* same list */
	}
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.group_lists, 10);
	KCHECK_EQ(st.group_lists_created, 10);
	KCHECK(ksync_list_lru_add(&lru, &o[20].lru, 1, g[0]));
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.group_lists, 11);
	for (int k = 0; k < 10; k++) {
		KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, g[k * 997]), 2);
		KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, g[k * 997 + 1]), 0);
	}
	KCHECK_EQ(ksync_list_lru_count_node(&lru, 0), 20);
	/* Counting and walking a group without a list allocates nothing. */
	unsigned long budget = 10;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, g[5], remove_all, NULL, &budget), 0);
	KCHECK_EQ(budget, 10);
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.group_lists, 11);

	for (int i = 0; i < 21; i++)
		KCHECK(ksync_list_lru_del_obj(&lru, &o[i].lru));
	for (int i = 0; i < NG; i++)
		KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.group_lists, 0);
	KCHECK_EQ(st.lists_retired, 11);
	KCHECK_EQ(st.items_reparented, 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	free(g);
}

/* ------------------------------------------------------------------------ */
/* Walks                                                                    */

/*
 * The script of walk_every_status: by item id (first visit, later visits).
 * 0 REMOVED, 1 ROTATE, 2 SKIP, 3 REMOVED_RETRY, 4 RETRY then SKIP, 5 SKIP,
 * 6 STOP.
 */
static enum ksync_lru_status scripted(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	struct obj *o = obj_of(item);
	struct ksync_list_head *dispose = arg;

	o->visits++;
	switch (o->id) {
	case 0:
		ksync_list_lru_isolate_move(l, item, dispose);
		return KSYNC_LRU_REMOVED;
	case 1:
		return KSYNC_LRU_ROTATE;
	case 3:
		ksync_list_lru_isolate(l, item);
		ksync_list_lru_unlock(l);
		sched_yield();
		ksync_list_lru_lock(l);
		return KSYNC_LRU_REMOVED_RETRY;
	case 4:
		if (o->visits > 1)
			return KSYNC_LRU_SKIP;
		ksync_list_lru_unlock(l);
		ksync_list_lru_lock(l);
		return KSYNC_LRU_RETRY;
	case 6:
		return KSYNC_LRU_STOP;
	default:
		return KSYNC_LRU_SKIP;
	}
}

KTEST(walk_every_status)
{
	struct ksync_list_lru lru;
	struct obj o[10];
	KSYNC_LIST_HEAD(dispose);
	unsigned long budget = 100;

	objs_init(o, 10);
	KCHECK_EQ(ksync_list_lru_init(&lru, NULL, 1, NULL), 0);
	for (int i = 0; i < 10; i++)
		KCHECK(ksync_list_lru_add(&lru, &o[i].lru, 0, NULL));
	/*
	 * Visits: 0 (removed), 1 (to the tail), 2, 3 (removed, restart), 2,
	 * 4 (retry, restart), 2, 4 (skip), 5, 6 (stop): ten.
	 */
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, scripted, &dispose, &budget), 2);
	KCHECK_EQ(budget, 90);
	KCHECK_EQ(o[2].visits, 3);
	KCHECK_EQ(o[4].visits, 2);
	KCHECK_EQ(o[7].visits, 0);
	KCHECK(ksync_list_first_entry(&dispose, struct obj, lru.link) == &o[0]);
	KCHECK(ksync_list_is_singular(&dispose));
	KCHECK(!ksync_list_lru_item_on_list(&o[0].lru));
	KCHECK(!ksync_list_lru_item_on_list(&o[3].lru));
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, NULL), 8);
	KCHECK(strcmp(order_of(&lru, 0, NULL), "2,4,5,6,7,8,9,1") == 0);
	/* An isolated item is on no list: del says so. */
	KCHECK(!ksync_list_lru_del_obj(&lru, &o[3].lru));
	ksync_list_del_init(&o[0].lru.link);

	/* The budget: every visit counts, restarts included. */
	budget = 3;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, log_skip, &(struct order_log){ .n = 0 }, &budget), 0);
	KCHECK_EQ(budget, 0);
	budget = 0;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, remove_all, NULL, &budget), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, NULL), 8);
	/* Item 4 says RETRY once more on a fresh visit count: no livelock. */
	o[4].visits = 0;
	budget = 5;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, scripted, &dispose, &budget), 0);
	KCHECK_EQ(budget, 0);
	/* The rest, removed. */
	budget = 100;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, remove_all, NULL, &budget), 8);
	KCHECK_EQ(budget, 92);
	KCHECK_EQ(ksync_list_lru_count(&lru), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
}

static enum ksync_lru_status bogus_status(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	(void)item, (void)l, (void)arg;
	return (enum ksync_lru_status)42;
}

/* A status that is none is the callback's nonsense: reported (once per library site), read as SKIP. */
KTEST(walk_bogus_status_is_skip)
{
	struct ksync_list_lru lru;
	struct obj o[2];
	unsigned long budget = 10, w = ksync_warn_count;

	objs_init(o, 2);
	KCHECK_EQ(ksync_list_lru_init(&lru, NULL, 1, NULL), 0);
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, NULL));
	KCHECK(ksync_list_lru_add(&lru, &o[1].lru, 0, NULL));
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, bogus_status, NULL, &budget), 0);
	KCHECK_EQ(budget, 8);
	KCHECK_EQ(ksync_warn_count, w + 1);
	KCHECK_EQ(ksync_list_lru_count(&lru), 2);
	KCHECK(ksync_list_lru_del_obj(&lru, &o[0].lru));
	KCHECK(ksync_list_lru_del_obj(&lru, &o[1].lru));
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
}

/* walk_node: the global list, then the groups' lists of that node only; walk: every node. */
KTEST(walk_node_and_walk)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *a, *b;
	struct ksync_list_lru lru;
	struct order_log log = { .n = 0 };
	struct obj o[6];
	unsigned long budget = 100;

	objs_init(o, 6);
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 2, NULL), 0);
	a = ksync_memgroup_create(set, NULL);
	b = ksync_memgroup_create(set, a);
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, b));
	KCHECK(ksync_list_lru_add(&lru, &o[1].lru, 0, a));
	KCHECK(ksync_list_lru_add(&lru, &o[2].lru, 0, NULL));
	KCHECK(ksync_list_lru_add(&lru, &o[3].lru, 1, a));
	KCHECK(ksync_list_lru_add(&lru, &o[4].lru, 0, b));
	KCHECK(ksync_list_lru_add(&lru, &o[5].lru, 1, NULL));
	KCHECK_EQ(ksync_list_lru_walk_node(&lru, 0, log_skip, &log, &budget), 0);
	KCHECK_EQ(log.n, 4);
	KCHECK_EQ(budget, 96);
	KCHECK_EQ(log.ids[0], 2); /* global first, then b's list (created first), then a's */
	KCHECK_EQ(log.ids[1], 0);
	KCHECK_EQ(log.ids[2], 4);
	KCHECK_EQ(log.ids[3], 1);
	budget = 3; /* the budget spans the lists */
	KCHECK_EQ(ksync_list_lru_walk_node(&lru, 0, remove_all, NULL, &budget), 3);
	KCHECK_EQ(ksync_list_lru_count_node(&lru, 0), 1);
	KCHECK_EQ(ksync_list_lru_walk(&lru, remove_all, NULL, 100), 3);
	KCHECK_EQ(ksync_list_lru_count(&lru), 0);
	KCHECK_EQ(ksync_memgroup_offline(b), 0);
	KCHECK_EQ(ksync_memgroup_offline(a), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* ------------------------------------------------------------------------ */
/* Offline                                                                  */

KTEST(offline_reparents_up_to_the_global_list)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *p, *c, *gc;
	struct ksync_list_lru lru;
	struct ksync_list_lru_stats st;
	struct obj o[8];
	unsigned long budget;

	objs_init(o, 8);
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 1, NULL), 0);
	p = ksync_memgroup_create(set, NULL);
	c = ksync_memgroup_create(set, p);
	gc = ksync_memgroup_create(set, c);
	for (int i = 0; i < 3; i++)
		KCHECK(ksync_list_lru_add(&lru, &o[i].lru, 0, c));
	KCHECK(ksync_list_lru_add(&lru, &o[3].lru, 0, gc));
	KCHECK(ksync_list_lru_add(&lru, &o[4].lru, 0, gc));
	KCHECK(ksync_list_lru_add(&lru, &o[5].lru, 0, p));
	ksync_memgroup_get(gc); /* keep gc's memory past its offline */
	ksync_memgroup_get(c);

	/* gc -> c: c's items, then gc's, in order. */
	KCHECK_EQ(ksync_memgroup_offline(gc), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, gc), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, c), 5);
	KCHECK(strcmp(order_of(&lru, 0, c), "0,1,2,3,4") == 0);
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.lists_retired, 1);
	KCHECK_EQ(st.items_reparented, 2);
	/* gc's list is dead: a walk there finds nothing, an add goes to c. */
	budget = 10;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, gc, remove_all, NULL, &budget), 0);
	KCHECK_EQ(budget, 10);
	KCHECK(ksync_list_lru_add(&lru, &o[6].lru, 0, gc));
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, c), 6);
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.add_retries, 1);

	/* c -> p; then del with the group the item was added to. */
	KCHECK_EQ(ksync_memgroup_offline(c), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, p), 7);
	KCHECK(strcmp(order_of(&lru, 0, p), "5,0,1,2,3,4,6") == 0);
	KCHECK(ksync_list_lru_del(&lru, &o[3].lru, 0, gc));
	KCHECK(ksync_list_lru_del(&lru, &o[0].lru, 0, c));
	KCHECK(ksync_list_lru_del_obj(&lru, &o[6].lru));
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, p), 4);
	/* An add to gc now climbs two dead groups. */
	KCHECK(ksync_list_lru_add(&lru, &o[7].lru, 0, gc));
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, p), 5);

	/* p is top-level: its items go to the global list. */
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, NULL), 0);
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, NULL), 5);
	KCHECK_EQ(ksync_list_lru_count_node(&lru, 0), 5);
	KCHECK(strcmp(order_of(&lru, 0, NULL), "5,1,2,4,7") == 0);
	KCHECK(ksync_list_lru_del(&lru, &o[1].lru, 0, gc));
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.lists_retired, 3);
	KCHECK_EQ(st.items_reparented, 2 + 6 + 5);
	KCHECK_EQ(st.group_lists, 0);

	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, remove_all, NULL, &(unsigned long){ 10 }), 4);
	ksync_memgroup_put(gc);
	ksync_memgroup_put(c);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/*
 * Regression (adversarial review): the STAT_LRU counter is conserved when a
 * top-level group's items go to the (uncounted) global list. Before the fix
 * the dying group's counter carried those items into the root, and their
 * later del from the global list subtracted nothing: the set's total grew by
 * one per cycle while every list was empty.
 */
KTEST(lru_stat_conserved_through_the_global_list)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_list_lru lru;
	struct obj o[3];

	objs_init(o, 3);
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 1, NULL), 0);
	for (int cycle = 0; cycle < 50; cycle++) {
		struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
		struct ksync_memgroup *c = ksync_memgroup_create(set, p);

		KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, p));
		KCHECK(ksync_list_lru_add(&lru, &o[1].lru, 0, c));
		KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_LRU), 2);
		KCHECK_EQ(ksync_memgroup_offline(c), 0); /* c -> p: counted to counted */
		KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_LRU), 2);
		KCHECK_EQ(ksync_memgroup_offline(p), 0); /* p -> global: leaves the counted lists */
		KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, NULL), 2);
		KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
		KCHECK(ksync_list_lru_del_obj(&lru, &o[0].lru));
		KCHECK(ksync_list_lru_del_obj(&lru, &o[1].lru));
		/* A global item never counts: adding and deleting one moves nothing. */
		KCHECK(ksync_list_lru_add(&lru, &o[2].lru, 0, NULL));
		KCHECK(ksync_list_lru_del_obj(&lru, &o[2].lru));
		KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
		KCHECK_EQ(ksync_memgroup_stat_root(set, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
	}
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* Clients that add to the dying group before and after the lru's offline hook. */
struct adder_client {
	struct ksync_memgroup_client c;
	struct ksync_list_lru *lru;
	struct obj *o;
	bool added;
	struct ksync_memgroup *only; /* the group whose offline adds */
};

static int ac_online(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)g, (void)slot, (void)priv;
	return 0;
}

static void ac_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct adder_client *ac = priv;

	(void)slot;
	if (g != ac->only)
		return;
	KCHECK_EQ(ksync_memgroup_state(g), KSYNC_MEMGROUP_DYING);
	ac->added = ksync_list_lru_add(ac->lru, &ac->o->lru, 0, g);
}

KTEST(add_to_a_dying_group_lands_at_the_parent)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_list_lru lru;
	struct obj o[3];
	struct adder_client before = { { .name = "before", .online = ac_online, .offline = ac_offline, .order = KSYNC_MEMGROUP_ORDER_LRU - 1 },
				       &lru, &o[0], false, NULL };
	struct adder_client after = { { .name = "after", .online = ac_online, .offline = ac_offline, .order = KSYNC_MEMGROUP_ORDER_LRU + 1 },
				      &lru, &o[1], false, NULL };
	struct ksync_memgroup *p, *c;
	int s1, s2;

	objs_init(o, 3);
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 1, NULL), 0);
	KCHECK((s1 = ksync_memgroup_client_register(set, &before.c, &before)) >= 0);
	KCHECK((s2 = ksync_memgroup_client_register(set, &after.c, &after)) >= 0);
	p = ksync_memgroup_create(set, NULL);
	c = ksync_memgroup_create(set, p);
	before.only = after.only = c;
	KCHECK(ksync_list_lru_add(&lru, &o[2].lru, 0, c));
	KCHECK_EQ(ksync_memgroup_offline(c), 0);
	/* Before the hook: added to c's list, then moved. After it: straight to p. */
	KCHECK(before.added);
	KCHECK(after.added);
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, p), 3);
	KCHECK(strcmp(order_of(&lru, 0, p), "2,0,1") == 0);
	for (int i = 0; i < 3; i++)
		KCHECK(ksync_list_lru_del(&lru, &o[i].lru, 0, p));
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, s2), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, s1), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/*
 * Forced schedule: a del reads the item's list, then the group goes offline
 * and the item moves to the parent before the del takes the lock. The del
 * finds the item gone from the (dead, not yet freed) list and follows it.
 */
struct del_race {
	pthread_t deleter;
	int looked_up, offlined, fired;
	struct ksync_list_lru *lru;
	struct obj *o;
	bool ret;
};

static void del_race_hook(struct ksync_list_lru *lru, int point, void *arg)
{
	struct del_race *r = arg;

	(void)lru;
	if (point != KSYNC_LIST_LRU_YP_DEL_LOOKED_UP || !pthread_equal(pthread_self(), r->deleter) ||
	    __atomic_exchange_n(&r->fired, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&r->looked_up, 1, __ATOMIC_RELEASE);
	KT_POLL_UNTIL_MS(__atomic_load_n(&r->offlined, __ATOMIC_ACQUIRE), 5000);
}

static void *deleter(void *arg)
{
	struct del_race *r = arg;

	r->ret = ksync_list_lru_del_obj(r->lru, &r->o->lru);
	return NULL;
}

KTEST(del_races_reparenting)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_list_lru lru;
	struct del_race r = { .lru = &lru };
	struct ksync_memgroup *p, *c;
	struct obj o[2];

	objs_init(o, 2);
	r.o = &o[0];
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 1, NULL), 0);
	p = ksync_memgroup_create(set, NULL);
	c = ksync_memgroup_create(set, p);
	KCHECK(ksync_list_lru_add(&lru, &o[1].lru, 0, c));
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, c));
	ksync_list_lru_set_yield_hook(&lru, del_race_hook, &r);
	KCHECK_EQ(pthread_create(&r.deleter, NULL, deleter, &r), 0);
	KT_POLL_UNTIL_MS(__atomic_load_n(&r.looked_up, __ATOMIC_ACQUIRE), 5000);
	KCHECK(__atomic_load_n(&r.looked_up, __ATOMIC_ACQUIRE));
	KCHECK_EQ(ksync_memgroup_offline(c), 0); /* o[0] moves to p meanwhile */
	__atomic_store_n(&r.offlined, 1, __ATOMIC_RELEASE);
	pthread_join(r.deleter, NULL);
	ksync_list_lru_set_yield_hook(&lru, NULL, NULL);
	KCHECK(r.ret);
	KCHECK(!ksync_list_lru_item_on_list(&o[0].lru));
	KCHECK_EQ(ksync_list_lru_count_one(&lru, 0, p), 1);
	KCHECK(strcmp(order_of(&lru, 0, p), "1") == 0);
	KCHECK(ksync_list_lru_del_obj(&lru, &o[1].lru));
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/*
 * Regression (adversarial review; TSan is the judge): a del that runs after
 * an offline whose reparenting created the parent's list, with nothing else
 * ordering the two threads. The del reaches the new list only through
 * item->list; before the fix that pointer was stored relaxed, so the list's
 * initialisation (its mutex) was not ordered before the del's lock, a data
 * race TSan reported in nearly every run of this test.
 */
struct offliner_arg {
	struct ksync_memgroup *volatile group;
	int phase;
	int rounds;
};

static void *offliner(void *arg)
{
	struct offliner_arg *a = arg;

	for (int t = 0; t < a->rounds; t++) {
		while (__atomic_load_n(&a->phase, __ATOMIC_ACQUIRE) != 2 * t + 1)
			sched_yield();
		KCHECK_EQ(ksync_memgroup_offline(a->group), 0);
		__atomic_store_n(&a->phase, 2 * t + 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

KTEST(del_after_reparenting_to_a_new_list)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct offliner_arg a = { .rounds = 1000 };
	struct ksync_list_lru lru;
	pthread_t th;
	struct obj o;
	long dels = 0;

	KCHECK_EQ(ksync_list_lru_init(&lru, set, 1, NULL), 0);
	KCHECK_EQ(pthread_create(&th, NULL, offliner, &a), 0);
	for (int t = 0; t < a.rounds; t++) {
		struct ksync_memgroup *p = ksync_memgroup_create(set, NULL); /* no list yet */

		a.group = ksync_memgroup_create(set, p);
		objs_init(&o, 1);
		KCHECK(ksync_list_lru_add(&lru, &o.lru, 0, a.group));
		__atomic_store_n(&a.phase, 2 * t + 1, __ATOMIC_RELEASE);
		for (volatile int i = 0; i < (t % 64) * 50; i++)
			;
		dels += ksync_list_lru_del_obj(&lru, &o.lru);
		while (__atomic_load_n(&a.phase, __ATOMIC_ACQUIRE) != 2 * t + 2)
			sched_yield();
		KCHECK(!ksync_list_lru_item_on_list(&o.lru));
		KCHECK_EQ(ksync_memgroup_offline(p), 0);
	}
	pthread_join(th, NULL);
	KCHECK_EQ(dels, a.rounds); /* the item was on some list every time */
	KCHECK_EQ(ksync_list_lru_count_node(&lru, 0), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* ------------------------------------------------------------------------ */
/* The shrinker: its bit, and the pattern of the header's DOC                */

struct cache {
	struct ksync_list_lru lru;
	int count_calls, scan_calls;
	struct ksync_memgroup *last_group;
};

static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct cache *c = s->private_data;
	unsigned long n = ksync_list_lru_shrinker_count(&c->lru, sc);

	__atomic_fetch_add(&c->count_calls, 1, __ATOMIC_RELAXED);
	c->last_group = sc->group;
	return n ? n : KSYNC_SHRINK_EMPTY;
}

static enum ksync_lru_status cache_isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *list,
					   void *arg)
{
	ksync_list_lru_isolate_move(list, item, arg);
	return KSYNC_LRU_REMOVED;
}

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct cache *c = s->private_data;
	KSYNC_LIST_HEAD(dispose);
	unsigned long freed = ksync_list_lru_shrinker_walk(&c->lru, sc, cache_isolate, &dispose);
	struct ksync_list_head *pos, *n;

	__atomic_fetch_add(&c->scan_calls, 1, __ATOMIC_RELAXED);
	ksync_list_for_each_safe(pos, n, &dispose) /* "free" them: back to no list */
		ksync_list_del_init(pos);
	return freed;
}

KTEST(shrinker_bit_on_the_first_item)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup_set *set = ksync_shrinker_registry_groups(reg);
	struct cache c = { .count_calls = 0 };
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "list_lru_test");
	struct ksync_memgroup *g, *child;
	struct obj o[3];

	objs_init(o, 3);
	s->count_objects = cache_count;
	s->scan_objects = cache_scan;
	s->private_data = &c;
	KCHECK_EQ(ksync_list_lru_init(&c.lru, set, 1, s), 0);
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	g = ksync_shrinker_group_create(reg, NULL);

	int calls;

	/* No item: no bit, the group walk does not call the shrinker. */
	ksync_shrink_slab(reg, 0, g, 0);
	KCHECK_EQ(c.count_calls, 0);
	/* Empty -> non-empty sets the bit. */
	KCHECK(ksync_list_lru_add(&c.lru, &o[0].lru, 0, g));
	KCHECK(ksync_list_lru_add(&c.lru, &o[1].lru, 0, g));
	KCHECK_EQ(ksync_shrink_slab(reg, 0, g, 0), 2);
	KCHECK(c.count_calls >= 1);
	KCHECK(c.last_group == g);
	KCHECK(c.scan_calls >= 1);
	KCHECK_EQ(ksync_list_lru_count_one(&c.lru, 0, g), 0);
	KCHECK(!ksync_list_lru_item_on_list(&o[0].lru));
	/* Empty: the count says KSYNC_SHRINK_EMPTY, the walk clears the bit... */
	calls = c.count_calls;
	ksync_shrink_slab(reg, 0, g, 0);
	KCHECK(c.count_calls > calls);
	calls = c.count_calls;
	ksync_shrink_slab(reg, 0, g, 0);
	KCHECK_EQ(c.count_calls, calls);
	/* ...and the next first item sets it again. */
	KCHECK(ksync_list_lru_add(&c.lru, &o[0].lru, 0, g));
	KCHECK_EQ(ksync_shrink_slab(reg, 0, g, 0), 1);
	KCHECK(c.count_calls > calls);
	ksync_shrink_slab(reg, 0, g, 0); /* clears it */
	calls = c.count_calls;
	ksync_shrink_slab(reg, 0, g, 0);
	KCHECK_EQ(c.count_calls, calls);

	/* Reparenting into an empty list sets the parent's bit. */
	child = ksync_shrinker_group_create(reg, g);
	KCHECK(ksync_list_lru_add(&c.lru, &o[2].lru, 0, child));
	KCHECK_EQ(ksync_shrinker_group_destroy(child), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&c.lru, 0, g), 1);
	KCHECK_EQ(ksync_shrink_slab(reg, 0, g, 0), 1);
	KCHECK(c.count_calls > calls);

	/* Global items are counted by the global walk (sc->group NULL). */
	KCHECK(ksync_list_lru_add(&c.lru, &o[1].lru, 0, NULL));
	KCHECK_EQ(ksync_shrink_slab(reg, 0, NULL, 0), 1);
	KCHECK_EQ(ksync_list_lru_count(&c.lru), 0);

	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&c.lru), 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/* ------------------------------------------------------------------------ */
/* Misuse                                                                   */

/* Make the call twice from one line: both return @want, one report names that line. */
#define TWICE(expr, want)                                                      \
	do {                                                                   \
		int r0_ = reports, line_ = __LINE__;                           \
		for (int k_ = 0; k_ < 2; k_++) { long v_ = (long)(expr); KCHECK_EQ(v_, (long)(want)); } \
		KCHECK_EQ(reports, r0_ + 1);                                   \
		KCHECK(report_file && strcmp(report_file, __FILE__) == 0);     \
		KCHECK_EQ(report_line, line_);                                 \
	} while (0)

KTEST(misuse_is_reported_at_the_callers_line)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create(), *other = ksync_memgroup_set_create();
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_shrinker *plain = ksync_shrinker_alloc(reg, 0, "not memcg aware");
	struct ksync_shrinker *aware = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "aware");
	struct ksync_memgroup *g, *foreign;
	struct ksync_list_lru lru, lru2;
	struct obj o[2];
	unsigned long budget = 1;

	objs_init(o, 2);
	ksync_warn_hook = kt_record_report;
	TWICE(ksync_list_lru_init(&lru2, set, 0, NULL), -EINVAL);
	TWICE(ksync_list_lru_init(&lru2, set, 65, NULL), -EINVAL);
	TWICE(ksync_list_lru_init(&lru2, ksync_shrinker_registry_groups(reg), 1, plain), -EINVAL);
	TWICE(ksync_list_lru_init(&lru2, set, 1, aware), -EINVAL); /* another registry's set */
	KCHECK_EQ(ksync_list_lru_init(&lru, set, 2, NULL), 0);
	g = ksync_memgroup_create(set, NULL);
	foreign = ksync_memgroup_create(other, NULL);
	TWICE(ksync_list_lru_add(&lru, &o[0].lru, 2, NULL), false);
	TWICE(ksync_list_lru_add(&lru, &o[0].lru, -1, g), false);
	TWICE(ksync_list_lru_add(&lru, &o[0].lru, 0, foreign), false);
	TWICE(ksync_list_lru_del(&lru, &o[0].lru, 5, g), false);
	TWICE(ksync_list_lru_del(&lru, &o[0].lru, 0, foreign), false);
	TWICE(ksync_list_lru_count_one(&lru, 2, NULL), 0);
	TWICE(ksync_list_lru_count_one(&lru, 0, foreign), 0);
	TWICE(ksync_list_lru_count_node(&lru, 7), 0);
	TWICE(ksync_list_lru_walk_one(&lru, 0, foreign, remove_all, NULL, &budget), 0);
	TWICE(ksync_list_lru_walk_one(&lru, 0, g, NULL, NULL, &budget), 0);
	TWICE(ksync_list_lru_walk_node(&lru, 3, remove_all, NULL, &budget), 0);
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 1, g));
	/* Destroy with an item left: refused and reported, nothing freed. */
	TWICE(ksync_list_lru_destroy(&lru), -EBUSY);
	KCHECK(lru.priv != NULL);
	KCHECK(ksync_list_lru_del(&lru, &o[0].lru, 1, g));
	/* Destroy while the set has groups: the set refuses the unregister. */
	TWICE(ksync_list_lru_destroy(&lru), -EBUSY);
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	KCHECK_EQ(ksync_memgroup_offline(foreign), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	TWICE(ksync_list_lru_destroy(&lru), -EINVAL); /* not initialised any more */
	/* A group given to a list_lru without groups. */
	KCHECK_EQ(ksync_list_lru_init(&lru, NULL, 1, NULL), 0);
	g = ksync_memgroup_create(set, NULL);
	TWICE(ksync_list_lru_add(&lru, &o[1].lru, 0, g), false);
	ksync_warn_hook = NULL;
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_shrinker_free(plain), 0);
	KCHECK_EQ(ksync_shrinker_free(aware), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(other), 0);
}

static struct ksync_list_lru_item *stray_item;

static enum ksync_lru_status isolate_stray(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	(void)item, (void)arg;
	TWICE((ksync_list_lru_isolate(l, stray_item), 0), 0);
	return KSYNC_LRU_SKIP;
}

KTEST(isolate_of_a_stranger_is_reported)
{
	struct ksync_list_lru lru;
	struct obj o[2];

	objs_init(o, 2);
	stray_item = &o[1].lru; /* on no list */
	KCHECK_EQ(ksync_list_lru_init(&lru, NULL, 1, NULL), 0);
	KCHECK(ksync_list_lru_add(&lru, &o[0].lru, 0, NULL));
	ksync_warn_hook = kt_record_report;
	KCHECK_EQ(ksync_list_lru_walk_one(&lru, 0, NULL, isolate_stray, NULL, &(unsigned long){ 1 }), 0);
	ksync_warn_hook = NULL;
	KCHECK_EQ(ksync_list_lru_count(&lru), 1);
	KCHECK(ksync_list_lru_del_obj(&lru, &o[0].lru));
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
}

/* ------------------------------------------------------------------------ */
/* A short concurrent churn (the torture test runs the long one)            */

enum { CH_THREADS = 3, CH_ITEMS = 64, CH_GROUPS = 8 };

struct churn_arg {
	struct churn *ch;
	int t;
};

struct churn {
	struct ksync_list_lru lru;
	struct ksync_memgroup_set *set;
	pthread_mutex_t mutex;
	struct ksync_memgroup *groups[CH_GROUPS]; /* under mutex; each holds a reference */
	int stop;
	struct obj items[CH_THREADS][CH_ITEMS];
};

static struct ksync_memgroup *churn_pick(struct churn *ch, uint64_t *rng)
{
	struct ksync_memgroup *g;

	pthread_mutex_lock(&ch->mutex);
	g = ch->groups[kt_xorshift64s(rng) % CH_GROUPS];
	if (g)
		ksync_memgroup_get(g);
	pthread_mutex_unlock(&ch->mutex);
	return g;
}

static void *churn_worker(void *arg)
{
	struct churn_arg *a = arg;
	struct churn *ch = a->ch;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(a->t + 1);
	struct obj *mine = ch->items[a->t];

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		struct obj *o = &mine[kt_xorshift64s(&rng) % CH_ITEMS];
		struct ksync_memgroup *g = churn_pick(ch, &rng);

		if (ksync_list_lru_item_on_list(&o->lru))
			KASSERT(ksync_list_lru_del(&ch->lru, &o->lru, 0, g));
		else
			KASSERT(ksync_list_lru_add(&ch->lru, &o->lru, 0, g));
		if (g)
			ksync_memgroup_put(g);
	}
	return NULL;
}

KTEST(concurrent_add_del_offline)
{
	static struct churn ch;
	static struct churn_arg args[CH_THREADS];
	pthread_t th[CH_THREADS];
	uint64_t rng = 7;
	double until = ktest_now() + 0.3;

	memset(&ch, 0, sizeof(ch));
	pthread_mutex_init(&ch.mutex, NULL);
	ch.set = ksync_memgroup_set_create();
	KCHECK_EQ(ksync_list_lru_init(&ch.lru, ch.set, 1, NULL), 0);
	for (int t = 0; t < CH_THREADS; t++)
		objs_init(ch.items[t], CH_ITEMS);
	for (int t = 0; t < CH_THREADS; t++) {
		args[t] = (struct churn_arg){ &ch, t };
		KCHECK_EQ(pthread_create(&th[t], NULL, churn_worker, &args[t]), 0);
	}
	while (ktest_now() < until) {
		int i = (int)(kt_xorshift64s(&rng) % CH_GROUPS);
		struct ksync_memgroup *old, *g = ksync_memgroup_create(ch.set, NULL);

		pthread_mutex_lock(&ch.mutex);
		old = ch.groups[i];
		ch.groups[i] = g;
		pthread_mutex_unlock(&ch.mutex);
		if (old)
			KCHECK_EQ(ksync_memgroup_offline(old), 0);
		kt_sleep_us(200);
	}
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
	for (int t = 0; t < CH_THREADS; t++)
		pthread_join(th[t], NULL);
	/* Every item on a list is found there, and the counts agree. */
	unsigned long on = 0;
	for (int t = 0; t < CH_THREADS; t++)
		for (int i = 0; i < CH_ITEMS; i++)
			on += ksync_list_lru_item_on_list(&ch.items[t][i].lru);
	KCHECK_EQ(ksync_list_lru_count(&ch.lru), on);
	for (int i = 0; i < CH_GROUPS; i++)
		if (ch.groups[i])
			KCHECK_EQ(ksync_memgroup_offline(ch.groups[i]), 0);
	/* All groups gone: every item is on the global list now. */
	KCHECK_EQ(ksync_list_lru_count_one(&ch.lru, 0, NULL), on);
	KCHECK_EQ(ksync_list_lru_walk(&ch.lru, remove_all, NULL, ~0UL), on);
	KCHECK_EQ(ksync_list_lru_destroy(&ch.lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(ch.set), 0);
	pthread_mutex_destroy(&ch.mutex);
}

/* ------------------------------------------------------------------------ */
/* The kernel spellings (<ksync/linux/list_lru.h>), last: they are macros.  */

#include <ksync/linux/list_lru.h>

static enum lru_status k_isolate(struct list_lru_item *item, struct list_lru_one *list, void *arg)
{
	list_lru_isolate_move(list, item, (struct ksync_list_head *)arg);
	return LRU_REMOVED;
}

KTEST(kernel_spellings)
{
	struct list_lru lru;
	struct obj o[3];
	KSYNC_LIST_HEAD(dispose);
	unsigned long nr = 10;

	objs_init(o, 3);
	KCHECK_EQ(list_lru_init(&lru), 0);
	KCHECK(list_lru_add(&lru, &o[0].lru, 0, NULL));
	KCHECK(list_lru_add(&lru, &o[1].lru, 0, NULL));
	KCHECK(list_lru_add(&lru, &o[2].lru, 0, NULL));
	KCHECK_EQ(list_lru_count(&lru), 3);
	KCHECK_EQ(list_lru_count_node(&lru, 0), 3);
	KCHECK_EQ(list_lru_count_one(&lru, 0, NULL), 3);
	KCHECK(list_lru_del(&lru, &o[1].lru, 0, NULL));
	KCHECK(list_lru_del_obj(&lru, &o[2].lru));
	KCHECK_EQ(list_lru_walk_one(&lru, 0, NULL, k_isolate, &dispose, &nr), 1);
	KCHECK_EQ(nr, 9);
	KCHECK(ksync_list_is_singular(&dispose));
	KCHECK(list_lru_add(&lru, &o[1].lru, 0, NULL));
	KCHECK_EQ(list_lru_walk_node(&lru, 0, k_isolate, &dispose, &nr), 1);
	KCHECK(list_lru_add(&lru, &o[2].lru, 0, NULL));
	KCHECK_EQ(list_lru_walk(&lru, k_isolate, &dispose, 10), 1);
	KCHECK_EQ(list_lru_count(&lru), 0);
	list_lru_destroy(&lru);
	KCHECK(lru.priv == NULL);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
