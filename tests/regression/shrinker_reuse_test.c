/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Regression tests of the registry's warm record reuse (records.c, "Warm
 * reuse"): a released record goes back to the next registration at once
 * only when ksync_try_synchronize_srcu() says no reader can hold it.
 *
 *  - walker_never_sees_its_record_reused: a global walk found a shrinker's
 *    record and stops before taking its reference (yield hook); the
 *    shrinker is freed and a new one allocated and registered meanwhile.
 *    The new one must not get the walker's record: if it did, the walker's
 *    try_get would succeed on it and call the new shrinker from the old
 *    one's place in the list (a call into the wrong shrinker; freed memory
 *    had the record been freed). The plant RECORD_REUSE_NO_GP (reuse with
 *    no grace period) must fail it: the test
 *    shrinker_regression_reuse_plant passes only on that failure.
 *  - idle_release_reuses_the_record: with no other thread reading, a
 *    free followed by an allocation reuses the same record (the idle cost
 *    bench_registry measures), also after the caller walked (its own slot).
 *  - walker_never_sees_its_record_reused_polled: the walker test again,
 *    with a whole group of records (KSYNC_SHRINKER_REUSE_BATCH) released
 *    behind the walker's, so the release stamps them with a grace period
 *    cookie and asks for that grace period ("Polled reuse" in records.c).
 *    The walker's section holds the grace period back: the allocation must
 *    not get the walker's record. The plant RECORD_POLL_NO_GP (reuse
 *    without checking the cookie) must fail it:
 *    shrinker_regression_reuse_poll_plant passes only on that failure.
 *  - polled_reuse_after_a_grace_period: another thread walked once and is
 *    alive (the try fails for good); a group released, a grace period
 *    later an allocation gets the group's oldest record, in release order.
 *
 * The schedule is forced by the yield hook and flags, never by sleeps.
 */
#define _GNU_SOURCE
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdint.h>

#include "ktest.h"
#include "shrinker_stubs.h"
#include "wait.h"

static _Thread_local int is_walker;
static int walker_found, mutator_done;
static ksync_atomic_t new_calls; /* calls into the shrinker allocated while the walker waits */

static unsigned long count_tally(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	if (s->private_data == (void *)2)
		ksync_atomic_inc(&new_calls);
	return 1;
}

static void walker_hook(int point, void *arg)
{
	(void)arg;
	if (point != KSYNC_SHRINKER_YP_BEFORE_GET || !is_walker ||
	    __atomic_load_n(&walker_found, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&walker_found, 1, __ATOMIC_SEQ_CST);
	/* Inside the walk's read section, holding the record but no reference. */
	KT_YIELD_UNTIL(__atomic_load_n(&mutator_done, __ATOMIC_SEQ_CST));
}

static void *walker(void *arg)
{
	is_walker = 1;
	ksync_shrink_slab((struct ksync_shrinker_registry *)arg, 0, NULL, 0);
	return NULL;
}

/*
 * s1's record was released while the walker (thread @t) stops on it, inside
 * its read section: register a new shrinker, which must not get s1's record
 * (an allocated shrinker lives in its record: the same address is the same
 * record; the walker's section holds back the grace period a reuse needs),
 * let the walker go on, and check that it never called the new one (the
 * walker goes on from s1's unlinked record, whose next is the list head:
 * the new shrinker was added after the unlink). Then tear down.
 */
static void register_new_and_release_walker(struct ksync_shrinker_registry *reg, struct ksync_shrinker *s1,
					    pthread_t t)
{
	struct ksync_shrinker *s2 = ksync_shrinker_alloc(reg, 0, "new");

	KASSERT(s2);
	s2->count_objects = count_tally;
	s2->scan_objects = kt_scan_none;
	s2->private_data = (void *)2;
	KCHECK_EQ(ksync_shrinker_register(s2), 0);
	KCHECK(s2 != s1);
	__atomic_store_n(&mutator_done, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK_EQ(ksync_atomic_read(&new_calls), 0);
	KCHECK_EQ(ksync_shrinker_free(s2), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(walker_never_sees_its_record_reused)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_shrinker *s1 = ksync_shrinker_alloc(reg, 0, "old");
	pthread_t t;

	KASSERT(reg && s1);
	s1->count_objects = count_tally;
	s1->scan_objects = kt_scan_none;
	s1->private_data = (void *)1;
	KCHECK_EQ(ksync_shrinker_register(s1), 0);
	ksync_shrinker_set_yield_hook(walker_hook, NULL);
	KCHECK_EQ(pthread_create(&t, NULL, walker, reg), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&walker_found, __ATOMIC_SEQ_CST));

	/* The walker holds s1's record (no reference: nothing to wait for). */
	KCHECK_EQ(ksync_shrinker_free(s1), 0);
	register_new_and_release_walker(reg, s1, t);
}

KTEST(idle_release_reuses_the_record)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);

	KASSERT(reg);
	for (int walked = 0; walked < 2; walked++) {
		struct ksync_shrinker *s1 = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "a-%d", 1);

		KASSERT(s1);
		s1->count_objects = kt_count_one;
		s1->scan_objects = kt_scan_none;
		KCHECK_EQ(ksync_shrinker_register(s1), 0);
		if (walked)
			ksync_shrink_slab(reg, 0, NULL, 0); /* this thread now has a slot of the domain */
		KCHECK_EQ(ksync_shrinker_free(s1), 0);
		struct ksync_shrinker *s2 = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "b-%d", 2);
		KCHECK(s2 == s1); /* the same (warm) record */
		KCHECK_EQ(s2->id, 0); /* and the lowest free id */
		ksync_shrinker_free(s2);
	}
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(walker_never_sees_its_record_reused_polled)
{
	enum { N = KSYNC_SHRINKER_REUSE_BATCH };
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_shrinker *s1 = ksync_shrinker_alloc(reg, 0, "old");
	static struct ksync_shrinker *others[N - 1];
	pthread_t t;

	KASSERT(reg && s1);
	__atomic_store_n(&walker_found, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&mutator_done, 0, __ATOMIC_SEQ_CST);
	ksync_atomic_set(&new_calls, 0);
	s1->count_objects = count_tally;
	s1->scan_objects = kt_scan_none;
	s1->private_data = (void *)1;
	KCHECK_EQ(ksync_shrinker_register(s1), 0); /* first on the list: the walker stops on it */
	for (int i = 0; i < N - 1; i++)
		others[i] = kt_stub_shrinker(reg, 0, "other-%d", i, count_tally, (void *)3);
	ksync_shrinker_set_yield_hook(walker_hook, NULL);
	KCHECK_EQ(pthread_create(&t, NULL, walker, reg), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&walker_found, __ATOMIC_SEQ_CST));

	/* s1's record heads a whole group: stamped, its grace period asked for. */
	KCHECK_EQ(ksync_shrinker_free(s1), 0);
	for (int i = 0; i < N - 1; i++)
		KCHECK_EQ(ksync_shrinker_free(others[i]), 0);
	register_new_and_release_walker(reg, s1, t);
}

KTEST(polled_reuse_after_a_grace_period)
{
	enum { N = KSYNC_SHRINKER_REUSE_BATCH };
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	static struct ksync_shrinker *s[N];
	struct kt_walked_once p = { reg, 0, 0 };
	pthread_t t;

	KASSERT(reg);
	KCHECK_EQ(pthread_create(&t, NULL, kt_walk_once_then_wait, &p), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&p.walked, __ATOMIC_SEQ_CST));
	for (int i = 0; i < N; i++)
		s[i] = kt_stub_shrinker(reg, 0, "g-%d", i, kt_count_one, NULL);
	for (int i = 0; i < N; i++)
		KCHECK_EQ(ksync_shrinker_free(s[i]), 0);
	/* Any grace period that begins now ends after the group's cookie was taken. */
	ksync_synchronize_srcu(ksync_shrinker_registry_srcu(reg));
	for (int i = 0; i < 3; i++) {
		struct ksync_shrinker *n = ksync_shrinker_alloc(reg, 0, "n-%d", i);

		KCHECK(n == s[i]); /* the oldest first */
		ksync_shrinker_free(n);
	}
	__atomic_store_n(&p.go, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
