/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Forced schedules of object caches (<ksync/objcache.h>) against a group's
 * offline: the races the API promises to survive ("an allocation for a
 * group may race the group's offline", "an object may be freed by any
 * thread"), each forced through the yield points of
 * <ksync/objcache_testing.h> and handshakes between the threads, never by
 * sleeps or luck:
 *
 *  1. free_during_offline: a thread frees the last live object of group G's
 *     child cache (design A, with and without reparent, magazines on and
 *     off) while G's offline is stopped just before it deactivates the
 *     child, and again just after it marked the child dead (before it
 *     leaves its root's table, its magazines are drained and its empty
 *     slabs freed): the child must end exactly once (destroyed 1, dead 0),
 *     G must be released, nothing reported, nothing leaked;
 *  2. alloc_during_deactivate: an allocation charged to G found G's live
 *     child and stops there; G's offline then runs (stopped after marking
 *     the child dead, or to its end, the child ending at once because it
 *     holds no object); the allocation resumes in the dead child. It must
 *     return an object accounted to G's child (G, or its parent with
 *     reparent) or to the root, which can be freed later with the child
 *     still in memory; afterwards no dead child is left and G is released;
 *  3. stock_hit_during_offline (design B): a thread with G's handle in its
 *     stock charges G again and stops after the stock hit checked G online;
 *     G goes offline (its handle moves to the parent); the charge resumes.
 *     The objects are accounted to the parent, the statistics add up once the
 *     stock is drained, and the next miss drops the dying group's slot: the
 *     stock holds no dying group's handle after it.
 */
#define _GNU_SOURCE
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>
#include <ksync/objcache.h>
#include <ksync/objcache_testing.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <string.h>

#include "ktest.h"
#include "reports.h"
#include "wait.h"

/* ------------------------------------------------------------------------ */
/* Small tools                                                              */

static int step;

static void step_to(int n)
{
	__atomic_store_n(&step, n, __ATOMIC_SEQ_CST);
}

static void step_wait(int n)
{
	KT_YIELD_UNTIL(__atomic_load_n(&step, __ATOMIC_SEQ_CST) >= n);
}

/*
 * One stop: the thread that reaches @point first (with the stop armed)
 * announces @at and waits for @go. Up to two stops armed at once.
 */
struct stop {
	int point, at, go;
	int armed; /* atomic */
};

static struct stop stops[2];

static void hook(struct ksync_objcache *cache, int point, void *arg)
{
	(void)cache, (void)arg;
	for (int i = 0; i < 2; i++) {
		struct stop *s = &stops[i];
		int one = 1;

		if (s->point != point || !__atomic_compare_exchange_n(&s->armed, &one, 0, false, __ATOMIC_SEQ_CST,
								     __ATOMIC_SEQ_CST))
			continue;
		step_to(s->at);
		step_wait(s->go);
	}
}

static void arm(int i, int point, int at, int go)
{
	stops[i] = (struct stop){ point, at, go, 1 };
}

static void disarm(void)
{
	__atomic_store_n(&stops[0].armed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&stops[1].armed, 0, __ATOMIC_SEQ_CST);
}

struct env {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_objcache *cache;
	struct ksync_memgroup *parent, *g;
};

static void env_init(struct env *e, enum ksync_objcache_design design, bool reparent, unsigned magazine)
{
	struct ksync_objcache_config cfg;

	memset(e, 0, sizeof(*e));
	e->reg = ksync_shrinker_registry_create(1);
	KASSERT(e->reg);
	e->set = ksync_shrinker_registry_groups(e->reg);
	memset(&cfg, 0, sizeof(cfg));
	cfg.design = design;
	cfg.reparent = reparent;
	cfg.shrinkers = e->reg;
	cfg.magazine_size = magazine;
	e->cache = ksync_objcache_create_config("regress", 64, 0, KSYNC_OBJCACHE_ACCOUNT, NULL, &cfg);
	KASSERT(e->cache);
	e->parent = ksync_memgroup_create(e->set, NULL);
	e->g = ksync_memgroup_create(e->set, e->parent);
	KASSERT(e->parent && e->g);
	step_to(0);
	reports = 0;
	ksync_warn_hook = kt_record_report;
	ksync_objcache_set_yield_hook(hook, NULL);
}

/* The callbacks of the set's domain: dead children's memory, released groups. */
static void run_callbacks(struct env *e)
{
	ksync_srcu_barrier(ksync_memgroup_set_srcu(e->set));
	ksync_srcu_barrier(ksync_memgroup_set_srcu(e->set));
}

static void env_fini(struct env *e)
{
	disarm();
	ksync_objcache_set_yield_hook(NULL, NULL);
	ksync_objcache_drain_thread();
	if (ksync_memgroup_state(e->parent) == KSYNC_MEMGROUP_ONLINE)
		KCHECK_EQ(ksync_memgroup_offline(e->parent), 0);
	run_callbacks(e);
	KCHECK_EQ(ksync_memgroup_nr_groups(e->set), 0);
	KCHECK_EQ(ksync_objcache_destroy(e->cache), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(e->reg), 0);
	KCHECK_EQ(reports, 0);
	ksync_warn_hook = NULL;
}

static struct ksync_objcache_stats stats_of(struct ksync_objcache *c)
{
	struct ksync_objcache_stats s;

	KASSERT(ksync_objcache_stats(c, &s) == 0);
	return s;
}

/* ------------------------------------------------------------------------ */
/* 1. A free of G's last object during G's offline                          */

struct freer {
	struct env *e;
	void *obj;
};

static void *freer_main(void *arg)
{
	struct freer *f = arg;

	step_wait(1); /* the offline stopped at the point */
	ksync_objcache_free(f->e->cache, f->obj);
	step_to(2);
	step_wait(3); /* stay (with our magazine) until the offline is done */
	return NULL;
}

static void free_during_offline(bool reparent, unsigned magazine, int point)
{
	struct env e;
	struct freer f = { &e, NULL };
	struct ksync_objcache_stats s;
	void *mine[3];
	pthread_t t;

	env_init(&e, KSYNC_OBJCACHE_PER_GROUP, reparent, magazine);
	f.obj = ksync_objcache_alloc_group(e.cache, e.g);
	KASSERT(f.obj);
	for (int i = 0; i < 3; i++) { /* more of G's child's objects, freed by us: our magazine or its slabs */
		mine[i] = ksync_objcache_alloc_group(e.cache, e.g);
		KASSERT(mine[i]);
	}
	for (int i = 0; i < 3; i++)
		ksync_objcache_free(e.cache, mine[i]);
	KCHECK_EQ(ksync_objcache_group_objects(e.cache, e.g), 1);
	KCHECK_EQ(stats_of(e.cache).children_alive, 1);
	KASSERT(pthread_create(&t, NULL, freer_main, &f) == 0);
	arm(0, point, 1, 2);
	KCHECK_EQ(ksync_memgroup_offline(e.g), 0);
	KCHECK(!__atomic_load_n(&stops[0].armed, __ATOMIC_SEQ_CST)); /* the offline went through the point */
	step_to(3);
	pthread_join(t, NULL);
	run_callbacks(&e);
	s = stats_of(e.cache);
	KCHECK_EQ(s.active_objects, 0);
	KCHECK_EQ(s.children_alive, 0);
	KCHECK_EQ(s.children_dead, 0);
	KCHECK_EQ(s.children_destroyed, 1);
	KCHECK(!ksync_objcache_group_pinned(e.cache, e.parent));
	KCHECK_EQ(ksync_memgroup_nr_groups(e.set), 1); /* G released: only its parent left */
	env_fini(&e);
}

KTEST(free_during_offline_before_deactivate)
{
	for (int r = 0; r < 2; r++)
		for (int m = 0; m < 2; m++)
			free_during_offline(r, m ? 32 : 1, KSYNC_OBJCACHE_YP_OFFLINE_CHILD);
}

KTEST(free_during_offline_after_marked_dead)
{
	for (int r = 0; r < 2; r++)
		for (int m = 0; m < 2; m++)
			free_during_offline(r, m ? 32 : 1, KSYNC_OBJCACHE_YP_DEACTIVATE_MARKED);
}

/* ------------------------------------------------------------------------ */
/* 2. An allocation charged to G racing the deactivation of G's child        */

struct offliner {
	struct ksync_memgroup *g;
	int ret;
};

static void *offliner_main(void *arg)
{
	struct offliner *o = arg;

	o->ret = ksync_memgroup_offline(o->g);
	return NULL;
}

struct allocer {
	struct env *e;
	void *obj;
	struct ksync_memgroup *acct; /* where the object was accounted, right after */
};

static void *allocer_main(void *arg)
{
	struct allocer *a = arg;
	struct ksync_srcu_struct *ss = ksync_memgroup_set_srcu(a->e->set);
	int idx;

	a->obj = ksync_objcache_alloc_group(a->e->cache, a->e->g); /* stops at CHILD_FOUND */
	if (a->obj) {
		idx = ksync_srcu_read_lock(ss);
		a->acct = ksync_objcache_obj_group(a->e->cache, a->obj);
		ksync_srcu_read_unlock(ss, idx);
	}
	step_to(10); /* the allocation returned */
	step_wait(11);
	return NULL;
}

/*
 * @mid: stop the offline after it marked the child dead (the allocation
 * resumes there); otherwise the offline runs to its end (the child, empty,
 * ends at once) before the allocation resumes.
 */
static void alloc_during_deactivate(bool reparent, unsigned magazine, bool mid)
{
	struct env e;
	struct allocer a = { &e, NULL, NULL };
	struct ksync_objcache_stats s;
	void *x;
	pthread_t t;

	env_init(&e, KSYNC_OBJCACHE_PER_GROUP, reparent, magazine);
	x = ksync_objcache_alloc_group(e.cache, e.g); /* G's child exists */
	KASSERT(x);
	ksync_objcache_free(e.cache, x);
	ksync_objcache_drain_thread();
	arm(0, KSYNC_OBJCACHE_YP_ALLOC_CHILD_FOUND, 1, 2);
	/* mid: the offline announces 2 (the child dead), so the allocation resumes, then waits for its return. */
	if (mid)
		arm(1, KSYNC_OBJCACHE_YP_DEACTIVATE_MARKED, 2, 10);
	KASSERT(pthread_create(&t, NULL, allocer_main, &a) == 0);
	step_wait(1); /* the allocation found G's live child */
	if (mid) {
		struct offliner o = { e.g, -1 };
		pthread_t off;

		KASSERT(pthread_create(&off, NULL, offliner_main, &o) == 0);
		pthread_join(off, NULL);
		KCHECK_EQ(o.ret, 0);
		KCHECK(!__atomic_load_n(&stops[1].armed, __ATOMIC_SEQ_CST));
	} else {
		KCHECK_EQ(ksync_memgroup_offline(e.g), 0);
		step_to(2);
	}
	step_wait(10);
	KCHECK(a.obj != NULL); /* not out of memory: the allocation must land somewhere */
	KCHECK(a.acct == NULL || a.acct == e.g || a.acct == e.parent);
	run_callbacks(&e); /* a child that ended is freed now: the object must not be in it */
	if (a.obj) {
		KCHECK_EQ(ksync_objcache_group_objects(e.cache, a.acct), 1);
		ksync_objcache_free(e.cache, a.obj);
	}
	step_to(11);
	pthread_join(t, NULL);
	run_callbacks(&e);
	s = stats_of(e.cache);
	KCHECK_EQ(s.active_objects, 0);
	KCHECK_EQ(s.children_alive, 0);
	KCHECK_EQ(s.children_dead, 0);
	KCHECK_EQ(s.children_destroyed, 1);
	KCHECK_EQ(ksync_memgroup_nr_groups(e.set), 1);
	env_fini(&e);
}

KTEST(alloc_during_deactivate_after_marked_dead)
{
	for (int r = 0; r < 2; r++)
		for (int m = 0; m < 2; m++)
			alloc_during_deactivate(r, m ? 32 : 1, true);
}

KTEST(alloc_during_deactivate_after_the_child_ended)
{
	for (int r = 0; r < 2; r++)
		for (int m = 0; m < 2; m++)
			alloc_during_deactivate(r, m ? 32 : 1, false);
}

/* ------------------------------------------------------------------------ */
/* 3. Design B: a stock hit on G's handle racing G's offline                 */

struct charger {
	struct env *e;
	struct ksync_memgroup *other; /* an online group, for the miss */
	void *obj[3];
	struct ksync_objcg *g_handle; /* G's handle, in our stock after the first charge */
	int stock_had_g, stock_has_g_after_miss;
};

static bool stock_has(struct ksync_objcg *h)
{
	struct ksync_objcg *s[KSYNC_OBJCACHE_STOCK_MAX];
	int n = ksync_objcache_thread_stock(s, KSYNC_OBJCACHE_STOCK_MAX);

	for (int i = 0; i < n; i++)
		if (s[i] == h)
			return true;
	return false;
}

static void *charger_main(void *arg)
{
	struct charger *c = arg;

	c->obj[0] = ksync_objcache_alloc_group(c->e->cache, c->e->g); /* G's handle into the stock */
	c->stock_had_g = stock_has(c->g_handle);
	arm(0, KSYNC_OBJCACHE_YP_STOCK_HIT, 1, 2);
	c->obj[1] = ksync_objcache_alloc_group(c->e->cache, c->e->g); /* stops after the hit */
	c->obj[2] = ksync_objcache_alloc_group(c->e->cache, c->other); /* a miss: sweeps the stock */
	c->stock_has_g_after_miss = stock_has(c->g_handle);
	ksync_objcache_drain_thread(); /* our pending charges into the statistics */
	step_to(10);
	step_wait(11);
	return NULL;
}

KTEST(stock_hit_during_offline)
{
	for (int slots = 1; slots <= KSYNC_OBJCACHE_STOCK_MAX; slots += KSYNC_OBJCACHE_STOCK_MAX - 1) {
		struct env e;
		struct charger c;
		struct ksync_srcu_struct *ss;
		pthread_t t;
		int idx, prev;

		env_init(&e, KSYNC_OBJCACHE_CHARGE_HANDLES, false, 32);
		ss = ksync_memgroup_set_srcu(e.set);
		prev = ksync_objcache_set_stock_slots(slots);
		KASSERT(prev > 0);
		memset(&c, 0, sizeof(c));
		c.e = &e;
		c.other = ksync_memgroup_create(e.set, NULL);
		KASSERT(c.other);
		c.g_handle = ksync_memgroup_get_objcg(e.g);
		KASSERT(c.g_handle);
		KASSERT(pthread_create(&t, NULL, charger_main, &c) == 0);
		step_wait(1); /* the second charge found G's slot, G online */
		KCHECK_EQ(ksync_memgroup_offline(e.g), 0);
		step_to(2);
		step_wait(10);
		KCHECK(c.stock_had_g);
		KCHECK(!c.stock_has_g_after_miss); /* the miss dropped the dying group's slot */
		for (int i = 0; i < 3; i++)
			KASSERT(c.obj[i]);
		idx = ksync_srcu_read_lock(ss);
		KCHECK(ksync_objcache_obj_group(e.cache, c.obj[0]) == e.parent);
		KCHECK(ksync_objcache_obj_group(e.cache, c.obj[1]) == e.parent);
		KCHECK(ksync_objcache_obj_group(e.cache, c.obj[2]) == c.other);
		ksync_srcu_read_unlock(ss, idx);
		ksync_objcg_put(c.g_handle);
		run_callbacks(&e); /* G released: its statistics moved to the parent */
		KCHECK_EQ(ksync_memgroup_nr_groups(e.set), 2);
		KCHECK_EQ(ksync_objcache_group_objects(e.cache, e.parent), 2);
		KCHECK_EQ(ksync_memgroup_stat_read(e.parent, 0, KSYNC_MEMGROUP_STAT_OBJECTS), 2);
		KCHECK_EQ(ksync_memgroup_stat_read(c.other, 0, KSYNC_MEMGROUP_STAT_OBJECTS), 1);
		KCHECK_EQ(ksync_memgroup_stat_total(e.set, 0, KSYNC_MEMGROUP_STAT_OBJECTS), 3);
		for (int i = 0; i < 3; i++)
			ksync_objcache_free(e.cache, c.obj[i]);
		ksync_objcache_drain_thread();
		KCHECK_EQ(ksync_memgroup_stat_total(e.set, 0, KSYNC_MEMGROUP_STAT_OBJECTS), 0);
		step_to(11);
		pthread_join(t, NULL);
		KCHECK_EQ(ksync_memgroup_offline(c.other), 0);
		(void)ksync_objcache_set_stock_slots(prev);
		env_fini(&e);
	}
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
