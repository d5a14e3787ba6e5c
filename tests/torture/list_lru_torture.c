/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Torture of ksync::list_lru (runs under ASan and TSan too), and the forced
 * schedule that catches a retirement which unpublishes a list before marking
 * it dead.
 *
 * torture: all at once for KTEST_SECONDS (default 1 s), on a shrinker
 * registry's groups (2 nodes) with a memcg-aware shrinker on the list_lru:
 *  - a churner creates groups (children of random live groups, or
 *    top-level) and takes random leaves offline;
 *  - adders add and delete their own items, charged to random live groups
 *    (or to none), deleting with del_obj or with some other group;
 *  - walkers walk random (group, node) lists, whole nodes, and run the
 *    group and global shrinker walks, with isolate callbacks that return
 *    every status at random (dropping the lock for the *_RETRY ones);
 *  - a reader counts.
 * Then: the items on a list are exactly those found by walking the live
 * lists, once each; the per-node counts equal the sums of the live lists'
 * counts (an item stranded on a dead list would be counted in one and not
 * the other); every group was released exactly once; and once every group
 * is offline, every item on a list is on the global lists.
 *
 * forced_schedule_add_vs_offline: an add looks up a group's list, then the
 * group's offline hook retires that list, and the add takes the lock in the
 * middle of the retirement. Marking dead first (the shipped order) sends the
 * add to the parent; built with KSYNC_PLANT_LIST_LRU_UNPUBLISH_FIRST (the
 * list_lru_torture_mutant_unpublish_first target) the item lands on the
 * emptied, unpublished list and is lost: the test then expects the loss.
 */
#define _GNU_SOURCE
#include <ksync/list_lru.h>
#include <ksync/list_lru_testing.h>
#include <ksync/memgroup.h>
#include <ksync/shrinker.h>

#include <ksync/atomic.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"
#include "wait.h"

#ifdef KSYNC_PLANT_LIST_LRU_UNPUBLISH_FIRST
#define KT_MUTANT 1
#else
#define KT_MUTANT 0
#endif

enum { NR_NODES = 2, NR_SLOTS = 12, NR_ADDERS = 2, NR_WALKERS = 2, NR_ITEMS = 512 };

struct item {
	struct ksync_list_lru_item lru;
	int seen; /* the final walk */
};

static struct ksync_shrinker_registry *reg;
static struct ksync_memgroup_set *set;
static struct ksync_shrinker *shrinker;
static struct ksync_list_lru lru;
static struct item items[NR_ADDERS][NR_ITEMS];
static ksync_atomic_t stop;

/* The live groups: a slot holds the creator's reference; under table_mutex. */
static pthread_mutex_t table_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_memgroup *table[NR_SLOTS];
static int children[NR_SLOTS]; /* live children of the slot's group */
static int parent_slot[NR_SLOTS];

/*
 * A client of the set that keeps a record per group: released twice (or
 * never) shows in it. Records are kept to the end, on a list.
 */
struct ledger_rec {
	ksync_atomic_t released;
	struct ledger_rec *next;
};

static pthread_mutex_t ledger_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct ledger_rec *ledger_recs;
static ksync_atomic_t onlined, released, released_twice;

static int ledger_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ledger_rec *rec = calloc(1, sizeof(*rec));

	(void)priv;
	if (!rec)
		return -ENOMEM;
	pthread_mutex_lock(&ledger_mutex);
	rec->next = ledger_recs;
	ledger_recs = rec;
	pthread_mutex_unlock(&ledger_mutex);
	ksync_memgroup_set_slot(g, slot, rec);
	ksync_atomic_inc(&onlined);
	return 0;
}

static void ledger_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ledger_rec *rec = ksync_memgroup_slot(g, slot);

	(void)priv;
	if (ksync_atomic_xchg(&rec->released, 1))
		ksync_atomic_inc(&released_twice);
	ksync_atomic_inc(&released);
}

static const struct ksync_memgroup_client ledger = {
	.name = "torture ledger",
	.online = ledger_online,
	.release = ledger_release,
	.order = KSYNC_MEMGROUP_ORDER_STATS,
};

/* A live group with a reference (or NULL, the global lists), for a while. */
static struct ksync_memgroup *pick_group(uint64_t *rng)
{
	struct ksync_memgroup *g;
	unsigned r = (unsigned)kt_xorshift64s(rng);

	if (r % 8 == 0)
		return NULL;
	pthread_mutex_lock(&table_mutex);
	g = table[(r / 8) % NR_SLOTS];
	if (g)
		ksync_memgroup_get(g);
	pthread_mutex_unlock(&table_mutex);
	return g;
}

static void put_group(struct ksync_memgroup *g)
{
	if (g)
		ksync_memgroup_put(g);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */

static void *churner(void *arg)
{
	uint64_t rng = 0x5eed;

	(void)arg;
	while (!ksync_atomic_read_acquire(&stop)) {
		int i = (int)(kt_xorshift64s(&rng) % NR_SLOTS);
		struct ksync_memgroup *old = NULL, *g;

		pthread_mutex_lock(&table_mutex);
		if (table[i] && children[i] == 0) { /* a leaf: take it offline */
			old = table[i];
			table[i] = NULL;
			if (parent_slot[i] >= 0)
				children[parent_slot[i]]--;
		} else if (!table[i]) { /* a new group, under a random live one */
			int p = (int)(kt_xorshift64s(&rng) % (NR_SLOTS + 4));

			if (p >= NR_SLOTS || !table[p] || p == i)
				p = -1;
			g = ksync_memgroup_create(set, p >= 0 ? table[p] : NULL);
			KASSERT(g);
			table[i] = g;
			parent_slot[i] = p;
			children[i] = 0;
			if (p >= 0)
				children[p]++;
		}
		pthread_mutex_unlock(&table_mutex);
		if (old)
			KASSERT(ksync_memgroup_offline(old) == 0);
		sched_yield();
	}
	return NULL;
}

static void *adder(void *arg)
{
	struct item *mine = items[(intptr_t)arg];
	uint64_t rng = 0x1234567ULL + (uint64_t)(intptr_t)arg * 7919;

	while (!ksync_atomic_read_acquire(&stop)) {
		struct item *it = &mine[kt_xorshift64s(&rng) % NR_ITEMS];
		int nid = (int)(kt_xorshift64s(&rng) % NR_NODES);
		struct ksync_memgroup *g = pick_group(&rng);

		if (!ksync_list_lru_item_on_list(&it->lru)) {
			/* Only its owner adds an item: off a list, the add must succeed. */
			KASSERT(ksync_list_lru_add(&lru, &it->lru, nid, g));
		} else if (kt_xorshift64s(&rng) & 1) {
			(void)ksync_list_lru_del_obj(&lru, &it->lru); /* false if a walk isolated it */
		} else {
			/* Any group of the set will do: the item knows its list. */
			(void)ksync_list_lru_del(&lru, &it->lru, nid, g);
		}
		put_group(g);
	}
	return NULL;
}

/* Random statuses; the isolated items are simply off every list (their owner adds them back). */
static enum ksync_lru_status random_isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l,
					    void *arg)
{
	uint64_t *rng = arg;

	switch (kt_xorshift64s(rng) % 8) {
	case 0:
	case 1:
		ksync_list_lru_isolate(l, item);
		return KSYNC_LRU_REMOVED;
	case 2:
		ksync_list_lru_isolate(l, item);
		ksync_list_lru_unlock(l);
		sched_yield();
		ksync_list_lru_lock(l);
		return KSYNC_LRU_REMOVED_RETRY;
	case 3:
		return KSYNC_LRU_ROTATE;
	case 4:
		ksync_list_lru_unlock(l);
		sched_yield();
		ksync_list_lru_lock(l);
		return KSYNC_LRU_RETRY;
	case 5:
		return (kt_xorshift64s(rng) % 16) ? KSYNC_LRU_SKIP : KSYNC_LRU_STOP;
	default:
		return KSYNC_LRU_SKIP;
	}
}

static _Thread_local uint64_t scan_rng = 99;

static unsigned long t_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long n = ksync_list_lru_shrinker_count(&lru, sc);

	(void)s;
	return n ? n : KSYNC_SHRINK_EMPTY;
}

static unsigned long t_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	return ksync_list_lru_shrinker_walk(&lru, sc, random_isolate, &scan_rng);
}

static void *walker(void *arg)
{
	uint64_t rng = 0xabcdefULL + (uint64_t)(intptr_t)arg * 104729;

	scan_rng = rng ^ 0x77;
	while (!ksync_atomic_read_acquire(&stop)) {
		int nid = (int)(kt_xorshift64s(&rng) % NR_NODES);
		struct ksync_memgroup *g = pick_group(&rng);
		unsigned long budget = 1 + kt_xorshift64s(&rng) % 32;

		switch (kt_xorshift64s(&rng) % 4) {
		case 0:
		case 1:
			(void)ksync_list_lru_walk_one(&lru, nid, g, random_isolate, &rng, &budget);
			break;
		case 2:
			(void)ksync_list_lru_walk_node(&lru, nid, random_isolate, &rng, &budget);
			break;
		default:
			(void)ksync_shrink_slab(reg, nid, g, (int)(kt_xorshift64s(&rng) % 4));
			break;
		}
		put_group(g);
	}
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t rng = 42;

	(void)arg;
	while (!ksync_atomic_read_acquire(&stop)) {
		struct ksync_memgroup *g = pick_group(&rng);
		int nid = (int)(kt_xorshift64s(&rng) % NR_NODES);

		KASSERT(ksync_list_lru_count_one(&lru, nid, g) <= NR_ADDERS * NR_ITEMS);
		KASSERT(ksync_list_lru_count_node(&lru, nid) <= NR_ADDERS * NR_ITEMS);
		put_group(g);
		sched_yield();
	}
	return NULL;
}

/*
 * Widen the windows of the races the forced schedule pins down: a retirement
 * pauses between its two steps (in the shipped order, with the list locked),
 * an add between its lookup and its lock.
 */
static void torture_hook(struct ksync_list_lru *l, int point, void *arg)
{
	static _Thread_local uint64_t rng = 0x7777;

	(void)l, (void)arg;
	if (point == KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN)
		kt_sleep_us(20);
	else if (kt_xorshift64s(&rng) % 8 == 0)
		sched_yield();
}

/* ------------------------------------------------------------------------ */
/* The accounting                                                           */

static enum ksync_lru_status mark_seen(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	(void)l, (void)arg;
	ksync_container_of(item, struct item, lru)->seen++;
	return KSYNC_LRU_SKIP;
}

/* Walk every live list (quiescent): each item on a list is seen there once; counts agree. */
static void check_accounting(const char *when)
{
	unsigned long on = 0, seen_total = 0;

	for (int a = 0; a < NR_ADDERS; a++)
		for (int i = 0; i < NR_ITEMS; i++) {
			items[a][i].seen = 0;
			on += ksync_list_lru_item_on_list(&items[a][i].lru);
		}
	for (int nid = 0; nid < NR_NODES; nid++) {
		unsigned long live = ksync_list_lru_count_one(&lru, nid, NULL), budget = ~0UL;

		(void)ksync_list_lru_walk_one(&lru, nid, NULL, mark_seen, NULL, &budget);
		for (int s = 0; s < NR_SLOTS; s++) {
			if (!table[s])
				continue;
			live += ksync_list_lru_count_one(&lru, nid, table[s]);
			budget = ~0UL;
			(void)ksync_list_lru_walk_one(&lru, nid, table[s], mark_seen, NULL, &budget);
		}
		/* An item left on a dead list is in the node's count, not on a live list. */
		if (live != ksync_list_lru_count_node(&lru, nid))
			fprintf(stderr, "%s: node %d: live lists hold %lu, the node counts %lu\n", when, nid,
				live, ksync_list_lru_count_node(&lru, nid));
		KCHECK_EQ(live, ksync_list_lru_count_node(&lru, nid));
	}
	for (int a = 0; a < NR_ADDERS; a++)
		for (int i = 0; i < NR_ITEMS; i++) {
			struct item *it = &items[a][i];
			int want = ksync_list_lru_item_on_list(&it->lru) ? 1 : 0;

			if (it->seen != want)
				fprintf(stderr, "%s: item %d/%d on_list=%d seen %d times\n", when, a, i, want,
					it->seen);
			KCHECK_EQ(it->seen, want);
			seen_total += (unsigned long)it->seen;
		}
	KCHECK_EQ(seen_total, on);
	KCHECK_EQ(ksync_list_lru_count(&lru), on);
}

KTEST(torture)
{
	pthread_t th_churn, th_add[NR_ADDERS], th_walk[NR_WALKERS], th_read;
	struct ksync_list_lru_stats st;
	double secs = ktest_seconds(1.0);
	int ledger_slot, created = 0;

	reg = ksync_shrinker_registry_create(NR_NODES);
	set = ksync_shrinker_registry_groups(reg);
	KCHECK((ledger_slot = ksync_memgroup_client_register(set, &ledger, NULL)) >= 0);
	shrinker = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, "torture");
	shrinker->count_objects = t_count;
	shrinker->scan_objects = t_scan;
	KCHECK_EQ(ksync_list_lru_init(&lru, set, NR_NODES, shrinker), 0);
	KCHECK_EQ(ksync_shrinker_register(shrinker), 0);
	ksync_list_lru_set_yield_hook(&lru, torture_hook, NULL);
	for (int a = 0; a < NR_ADDERS; a++)
		for (int i = 0; i < NR_ITEMS; i++)
			ksync_list_lru_item_init(&items[a][i].lru);
	for (int i = 0; i < NR_SLOTS; i++)
		parent_slot[i] = -1;

	kt_watchdog("list_lru_torture", (unsigned)(secs * 20 + 60));
	pthread_create(&th_churn, NULL, churner, NULL);
	for (intptr_t a = 0; a < NR_ADDERS; a++)
		pthread_create(&th_add[a], NULL, adder, (void *)a);
	for (intptr_t w = 0; w < NR_WALKERS; w++)
		pthread_create(&th_walk[w], NULL, walker, (void *)w);
	pthread_create(&th_read, NULL, reader, NULL);
	kt_sleep_ms((int)(secs * 1000));
	ksync_atomic_set_release(&stop, 1);
	pthread_join(th_churn, NULL);
	for (int a = 0; a < NR_ADDERS; a++)
		pthread_join(th_add[a], NULL);
	for (int w = 0; w < NR_WALKERS; w++)
		pthread_join(th_walk[w], NULL);
	pthread_join(th_read, NULL);
	ksync_list_lru_set_yield_hook(&lru, NULL, NULL);

	ksync_list_lru_stats(&lru, &st);
	printf("# %ld lists created, %ld retired, %ld items reparented, %ld adds retried at a parent\n",
	       st.group_lists_created, st.lists_retired, st.items_reparented, st.add_retries);
	KCHECK(st.lists_retired > 0);
	check_accounting("after the run");

	/* Every group offline, leaves first: all items end on the global lists. */
	for (int round = 0; round < NR_SLOTS; round++)
		for (int i = 0; i < NR_SLOTS; i++)
			if (table[i] && children[i] == 0) {
				KCHECK_EQ(ksync_memgroup_offline(table[i]), 0);
				if (parent_slot[i] >= 0)
					children[parent_slot[i]]--;
				table[i] = NULL;
			}
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);
	check_accounting("all groups offline");
	ksync_list_lru_stats(&lru, &st);
	KCHECK_EQ(st.group_lists, 0);

	/* Every group that came online was released, once. */
	created = ksync_atomic_read(&onlined);
	KCHECK_EQ(ksync_atomic_read(&released), created);
	KCHECK_EQ(ksync_atomic_read(&released_twice), 0);
	for (struct ledger_rec *rec = ledger_recs, *next; rec; rec = next) {
		next = rec->next;
		KCHECK_EQ(ksync_atomic_read(&rec->released), 1);
		free(rec);
	}
	ledger_recs = NULL;
	printf("# %d groups created and released\n", created);
	KCHECK(created > 0);

	KCHECK_EQ(ksync_list_lru_walk(&lru, random_isolate, &(uint64_t){ 1 }, 0), 0);
	for (int a = 0; a < NR_ADDERS; a++)
		for (int i = 0; i < NR_ITEMS; i++)
			(void)ksync_list_lru_del_obj(&lru, &items[a][i].lru);
	KCHECK_EQ(ksync_list_lru_count(&lru), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	KCHECK_EQ(ksync_shrinker_free(shrinker), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, ledger_slot), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	kt_watchdog_cancel();
}

/* ------------------------------------------------------------------------ */
/* The forced schedule                                                      */

struct schedule {
	pthread_t adder;
	int fired, looked_up, between, add_done;
	struct ksync_list_lru *lru;
	struct ksync_memgroup *child;
	struct ksync_list_lru_item *item;
	bool added;
};

static void schedule_hook(struct ksync_list_lru *l, int point, void *arg)
{
	struct schedule *s = arg;

	(void)l;
	if (point == KSYNC_LIST_LRU_YP_ADD_LOOKED_UP && pthread_equal(pthread_self(), s->adder) &&
	    !__atomic_exchange_n(&s->fired, 1, __ATOMIC_ACQ_REL)) {
		/* The adder holds the child's list, unlocked: let the retirement begin. */
		__atomic_store_n(&s->looked_up, 1, __ATOMIC_RELEASE);
		KT_POLL_UNTIL_MS(__atomic_load_n(&s->between, __ATOMIC_ACQUIRE), 5000);
	} else if (point == KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN) {
		/*
		 * Mid-retirement. Shipped order: the list is dead and locked
		 * here, the add blocks on the lock until we are done (so we
		 * wait in vain). Reversed order: the list is unpublished,
		 * emptied and unlocked, not dead: the add completes on it.
		 */
		__atomic_store_n(&s->between, 1, __ATOMIC_RELEASE);
		KT_POLL_UNTIL_MS(__atomic_load_n(&s->add_done, __ATOMIC_ACQUIRE), 200);
	}
}

static void *schedule_adder(void *arg)
{
	struct schedule *s = arg;

	s->added = ksync_list_lru_add(s->lru, s->item, 0, s->child);
	__atomic_store_n(&s->add_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct sobj {
	struct ksync_list_lru_item it;
	int found;
};

static enum ksync_lru_status find_item(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	(void)l, (void)arg;
	ksync_container_of(item, struct sobj, it)->found++;
	return KSYNC_LRU_SKIP;
}

KTEST(forced_schedule_add_vs_offline)
{
	struct ksync_memgroup_set *s_set = ksync_memgroup_set_create();
	struct ksync_list_lru s_lru;
	struct schedule s = { .lru = &s_lru };
	struct sobj o[2];
	struct ksync_memgroup *parent, *child;
	struct ksync_list_lru_stats st;
	unsigned long budget = 100;
	bool lost;

	memset(o, 0, sizeof(o));
	ksync_list_lru_item_init(&o[0].it);
	ksync_list_lru_item_init(&o[1].it);
	kt_watchdog("forced_schedule_add_vs_offline", 30);
	KCHECK_EQ(ksync_list_lru_init(&s_lru, s_set, 1, NULL), 0);
	parent = ksync_memgroup_create(s_set, NULL);
	child = ksync_memgroup_create(s_set, parent);
	s.child = child;
	s.item = &o[1].it;
	KCHECK(ksync_list_lru_add(&s_lru, &o[0].it, 0, child)); /* the child's list exists */
	ksync_list_lru_set_yield_hook(&s_lru, schedule_hook, &s);
	ksync_memgroup_get(child); /* the adder's reference */
	KCHECK_EQ(pthread_create(&s.adder, NULL, schedule_adder, &s), 0);
	KT_POLL_UNTIL_MS(__atomic_load_n(&s.looked_up, __ATOMIC_ACQUIRE), 5000);
	KCHECK(__atomic_load_n(&s.looked_up, __ATOMIC_ACQUIRE));
	KCHECK_EQ(ksync_memgroup_offline(child), 0);
	pthread_join(s.adder, NULL);
	ksync_list_lru_set_yield_hook(&s_lru, NULL, NULL);
	KCHECK(s.added);

	/* Where is the item? o[0] moved to the parent: the item should be beside it. */
	(void)ksync_list_lru_walk_one(&s_lru, 0, parent, find_item, NULL, &budget);
	lost = !o[1].found || ksync_list_lru_count_one(&s_lru, 0, parent) != 2 ||
	       o[1].it.list != o[0].it.list;
	ksync_list_lru_stats(&s_lru, &st);
	printf("# the add %s (adds retried at a parent: %ld)\n",
	       lost ? "was LOST on the retired list" : "landed at the parent", st.add_retries);
	if (KT_MUTANT) {
		KCHECK(lost); /* the mutation must be caught */
		/* The item sits on a freed list: leak everything rather than touch it. */
		ksync_memgroup_put(child);
		kt_watchdog_cancel();
		return;
	}
	KCHECK(!lost);
	KCHECK_EQ(st.add_retries, 1);
	KCHECK(ksync_list_lru_del(&s_lru, &o[1].it, 0, child));
	KCHECK(ksync_list_lru_del(&s_lru, &o[0].it, 0, child));
	ksync_memgroup_put(child);
	KCHECK_EQ(ksync_memgroup_offline(parent), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&s_lru), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(s_set), 0);
	kt_watchdog_cancel();
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
