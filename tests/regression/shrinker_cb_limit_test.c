/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Regression: no deadlock between the registry's writers' mutex and the
 * SRCU callback throttle.
 *
 * ksync_call_srcu() blocks its caller while more than the domain's callback
 * limit wait, until the domain's helper thread works the queue down.
 * The registry queues callbacks while it holds its writers' mutex (growth
 * queues two superseded map headers per group and node), and one of its
 * callbacks, the one that recycles released nodes, used to take that same
 * mutex: with that callback at the head of the queue, a growth past the
 * limit waited for the helper while the helper waited for the mutex.
 *
 * The test sets a small limit on the registry's domain
 * (ksync_srcu_set_cb_limit() through ksync_shrinker_registry_srcu()), so 200
 * groups are enough.
 * A group walk paused in its read section (yield hook) holds the grace
 * period back while 256 released nodes are queued as one batch and a new
 * high id makes a registration grow every map (400 callbacks, over the
 * limit of 256); then the walk is let go. The registration must finish.
 *
 * The second case closes the same cycle through a shrinker callback: the
 * callback (inside the walk's read section) registers another shrinker,
 * which takes the writers' mutex, while a growth holding that mutex waits
 * in call_srcu for a grace period that waits for the callback. Writers
 * therefore queue their callbacks from inside a read section, which
 * call_srcu never throttles.
 */
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"
#include "shrinker_stubs.h"
#include "wait.h"

#define CB_LIMIT 256UL
enum { GROUPS = 200, MEMCG = 64, GLOBALS = 256 /* = FREE_BATCH: the last free queues them */ };

static struct ksync_shrinker_registry *reg;
static struct ksync_memgroup *groups[GROUPS];
static _Thread_local int is_walker;
static int walker_in, walker_go, grower_done;
static struct ksync_shrinker *grown;

static unsigned long no_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return KSYNC_SHRINK_STOP;
}

static struct ksync_shrinker *mk(unsigned flags)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, flags, "cb");

	KASSERT(s);
	s->count_objects = kt_count_one;
	s->scan_objects = no_scan;
	return s;
}

static void hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_BEFORE_GET || !is_walker ||
	    __atomic_load_n(&walker_in, __ATOMIC_RELAXED))
		return;
	/* Inside the walk's read section: hold the grace period back. */
	__atomic_store_n(&walker_in, 1, __ATOMIC_RELEASE);
	KT_POLL_UNTIL(__atomic_load_n(&walker_go, __ATOMIC_ACQUIRE));
}

/* Case 2: the walked shrinker's callback registers another shrinker. */
static int cb_in, cb_go, cb_done;

static unsigned long registering_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	if (!__atomic_load_n(&cb_in, __ATOMIC_RELAXED)) {
		__atomic_store_n(&cb_in, 1, __ATOMIC_RELEASE);
		KT_POLL_UNTIL(__atomic_load_n(&cb_go, __ATOMIC_ACQUIRE));
		struct ksync_shrinker *o = mk(0); /* takes the writers' mutex */
		KASSERT(ksync_shrinker_register(o) == 0);
		s->private_data = o;
		__atomic_store_n(&cb_done, 1, __ATOMIC_RELEASE);
	}
	return 1;
}

static void *walker(void *arg)
{
	(void)arg;
	is_walker = 1;
	ksync_shrink_slab(reg, 0, groups[0], 0);
	return NULL;
}

static void *grower(void *arg)
{
	(void)arg;
	grown = mk(KSYNC_SHRINKER_MEMCG_AWARE); /* id MEMCG: grows every map */
	KASSERT(ksync_shrinker_register(grown) == 0);
	__atomic_store_n(&grower_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

KTEST(growth_past_callback_limit_no_deadlock)
{
	struct ksync_shrinker *memcg[MEMCG], *global[GLOBALS];
	pthread_t w, g;

	reg = ksync_shrinker_registry_create(1);
	ksync_srcu_set_cb_limit(ksync_shrinker_registry_srcu(reg), CB_LIMIT);
	KASSERT(reg);
	for (int i = 0; i < GROUPS; i++)
		KASSERT((groups[i] = ksync_shrinker_group_create(reg, NULL)) != NULL);
	for (int i = 0; i < MEMCG; i++) {
		memcg[i] = mk(KSYNC_SHRINKER_MEMCG_AWARE);
		KASSERT(ksync_shrinker_register(memcg[i]) == 0);
	}
	KCHECK_EQ(ksync_shrinker_nr_max(reg), 64);
	for (int i = 0; i < GLOBALS; i++) {
		global[i] = mk(0);
		KASSERT(ksync_shrinker_register(global[i]) == 0);
	}
	KASSERT(ksync_set_shrinker_bit(groups[0], 0, memcg[0]->id) == 0);

	ksync_shrinker_set_yield_hook(hook, NULL);
	KASSERT(pthread_create(&w, NULL, walker, NULL) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&walker_in, __ATOMIC_ACQUIRE));
	/* The last free queues the batch of 256 released nodes (call_srcu). */
	for (int i = 0; i < GLOBALS; i++)
		KCHECK_EQ(ksync_shrinker_free(global[i]), 0);
	KASSERT(pthread_create(&g, NULL, grower, NULL) == 0);
	kt_sleep_ms(200); /* the grower is now throttled in call_srcu */
	__atomic_store_n(&walker_go, 1, __ATOMIC_RELEASE);

	/* With the old lock order the grower never finishes: report, do not hang. */
	KT_POLL_UNTIL_MS(__atomic_load_n(&grower_done, __ATOMIC_ACQUIRE), 20000);
	if (!__atomic_load_n(&grower_done, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "deadlock: the registration that grows the maps never returned\n");
		fflush(NULL);
		_exit(1);
	}
	pthread_join(g, NULL);
	pthread_join(w, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK_EQ(ksync_shrinker_nr_max(reg), 128);

	KCHECK_EQ(ksync_shrinker_free(grown), 0);
	for (int i = 0; i < MEMCG; i++)
		KCHECK_EQ(ksync_shrinker_free(memcg[i]), 0);
	for (int i = 0; i < GROUPS; i++)
		KCHECK_EQ(ksync_shrinker_group_destroy(groups[i]), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(callback_registers_during_throttled_growth_no_deadlock)
{
	struct ksync_shrinker *memcg[MEMCG], *x;
	pthread_t w, g;

	__atomic_store_n(&grower_done, 0, __ATOMIC_RELAXED);
	reg = ksync_shrinker_registry_create(1);
	ksync_srcu_set_cb_limit(ksync_shrinker_registry_srcu(reg), CB_LIMIT);
	KASSERT(reg);
	for (int i = 0; i < GROUPS; i++)
		KASSERT((groups[i] = ksync_shrinker_group_create(reg, NULL)) != NULL);
	for (int i = 0; i < MEMCG; i++) {
		memcg[i] = mk(KSYNC_SHRINKER_MEMCG_AWARE);
		if (i == 0)
			memcg[i]->count_objects = registering_count;
		KASSERT(ksync_shrinker_register(memcg[i]) == 0);
	}
	x = memcg[0];
	KASSERT(ksync_set_shrinker_bit(groups[0], 0, x->id) == 0);

	KASSERT(pthread_create(&w, NULL, walker, NULL) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&cb_in, __ATOMIC_ACQUIRE));
	KASSERT(pthread_create(&g, NULL, grower, NULL) == 0);
	kt_sleep_ms(200); /* old code: the grower is throttled, holding the mutex */
	__atomic_store_n(&cb_go, 1, __ATOMIC_RELEASE);

	KT_POLL_UNTIL_MS(__atomic_load_n(&grower_done, __ATOMIC_ACQUIRE) &&
			 __atomic_load_n(&cb_done, __ATOMIC_ACQUIRE), 20000);
	if (!__atomic_load_n(&grower_done, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&cb_done, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "deadlock: growth %d, registration from the callback %d\n",
			__atomic_load_n(&grower_done, __ATOMIC_ACQUIRE),
			__atomic_load_n(&cb_done, __ATOMIC_ACQUIRE));
		fflush(NULL);
		_exit(1);
	}
	pthread_join(g, NULL);
	pthread_join(w, NULL);
	KCHECK_EQ(ksync_shrinker_nr_max(reg), 128);

	KCHECK_EQ(ksync_shrinker_free((struct ksync_shrinker *)x->private_data), 0);
	KCHECK_EQ(ksync_shrinker_free(grown), 0);
	for (int i = 0; i < MEMCG; i++)
		KCHECK_EQ(ksync_shrinker_free(memcg[i]), 0);
	for (int i = 0; i < GROUPS; i++)
		KCHECK_EQ(ksync_shrinker_group_destroy(groups[i]), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
