/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * generation_test.c - <ksync/generation.h>: wrap-safe comparison, the
 * bump/snapshot ordering (a reader that sees generation k sees what the
 * writer wrote before bump k), and the yield protocol with SRCU: a reader
 * that would hold its read section forever unless told lets a writer's grace
 * period end, once through a generation counter and once through
 * ksync_srcu_gp_pending().
 */
#include <ksync/generation.h>
#include <ksync/srcu.h>

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include "ktest.h"
#include "wait.h"

KTEST(generation_wrap_safe)
{
	struct ksync_generation g = { ULONG_MAX - 2 };
	unsigned long s0 = ksync_generation_snapshot(&g);

	KCHECK(!ksync_generation_changed_since(&g, s0));
	unsigned long s1 = ksync_generation_bump(&g);
	KCHECK(s1 == ULONG_MAX - 1);
	KCHECK(ksync_generation_changed_since(&g, s0));
	ksync_generation_bump(&g);
	unsigned long s3 = ksync_generation_bump(&g); /* wraps to 0 */
	KCHECK_EQ(s3, 0);
	KCHECK(ksync_generation_after(s3, s0));
	KCHECK(ksync_generation_after(s3, s1));
	KCHECK(!ksync_generation_after(s0, s3));
	KCHECK(!ksync_generation_after(s3, s3));
	KCHECK(ksync_generation_after(5, ULONG_MAX - 5));
	KCHECK(ksync_generation_changed_since(&g, s1));
	KCHECK(!ksync_generation_changed_since(&g, s3));

	struct ksync_generation z = KSYNC_GENERATION_INIT;
	KCHECK_EQ(ksync_generation_snapshot(&z), 0);
	ksync_generation_bump(&z);
	ksync_generation_init(&z);
	KCHECK_EQ(ksync_generation_snapshot(&z), 0);
}

/* Ordering: data[k % 2] = k is written before bump k (G1); a reader seeing generation k (G2) sees it. */
static struct ksync_generation ord_gen = KSYNC_GENERATION_INIT;
static unsigned long ord_data;
static int ord_stop;

static void *ord_reader(void *p)
{
	unsigned long *checks = (unsigned long *)p;

	while (!__atomic_load_n(&ord_stop, __ATOMIC_RELAXED)) {
		unsigned long g = ksync_generation_snapshot(&ord_gen);
		unsigned long d = ksync_ulong_load(&ord_data);
		KASSERT(!ksync_generation_after(g, d)); /* d >= g */
		if (ksync_generation_changed_since(&ord_gen, g)) {
			d = ksync_ulong_load(&ord_data);
			KASSERT(ksync_generation_after(d, g));
		}
		(*checks)++;
	}
	return NULL;
}

KTEST(generation_bump_orders_prior_updates)
{
	pthread_t t;
	unsigned long checks = 0, bumps = 0;
	double deadline = ktest_now() + ktest_seconds(0.5);

	KASSERT(pthread_create(&t, NULL, ord_reader, &checks) == 0);
	while (ktest_now() < deadline) {
		for (int k = 0; k < 1000; k++) {
			ksync_ulong_store(&ord_data, bumps + 1);
			ksync_generation_bump(&ord_gen);
			bumps++;
		}
	}
	__atomic_store_n(&ord_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	KCHECK(checks > 0);
	KCHECK_EQ(ksync_generation_snapshot(&ord_gen), bumps);
}

/*
 * Yield protocol. The reader stays in its read section until told to leave
 * (a 20 s failsafe fails the test instead of hanging); the writer's
 * synchronize_srcu() can only return once the reader has yielded. A
 * handshake makes it deterministic: the reader announces each section after
 * taking its snapshot, the writer bumps only after seeing the announcement
 * (so that snapshot precedes the bump), and the reader opens its next section
 * only after that grace period has ended (a section opened during it might be
 * waited for, and would never see a bump). This is why a generation counter
 * is a hint for FINITE walks: a walk that starts after the bump sees no
 * change; ksync_srcu_gp_pending() has no such window.
 */
static struct ksync_srcu_struct y_srcu;
static struct ksync_generation y_gen = KSYNC_GENERATION_INIT;
static int y_stop;
static int y_use_gp_pending;
static unsigned long y_sections; /* sections announced by the reader */
static unsigned long y_gps_done; /* grace periods completed by the writer */

/* Until @cond or the end of the test, failing after 20 s. */
#define SPIN_UNTIL(cond) KT_SPIN_UNTIL((cond) || __atomic_load_n(&y_stop, __ATOMIC_ACQUIRE), 20.0)

static void *y_reader(void *p)
{
	unsigned long *yields = (unsigned long *)p;
	unsigned long done = 0;

	while (!__atomic_load_n(&y_stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(&y_srcu);
		unsigned long snap = ksync_generation_snapshot(&y_gen);
		__atomic_fetch_add(&y_sections, 1, __ATOMIC_RELEASE);
		/* ... a long walk, polling between items ... */
		SPIN_UNTIL(y_use_gp_pending ? ksync_srcu_gp_pending(&y_srcu)
					    : ksync_generation_changed_since(&y_gen, snap));
		ksync_srcu_read_unlock(&y_srcu, idx);
		(*yields)++;
		SPIN_UNTIL(__atomic_load_n(&y_gps_done, __ATOMIC_ACQUIRE) > done);
		done = __atomic_load_n(&y_gps_done, __ATOMIC_ACQUIRE);
	}
	return NULL;
}

static void run_yield(bool gp_pending)
{
	pthread_t t;
	unsigned long yields = 0, gps = 0, seen = 0;
	double deadline = ktest_now() + ktest_seconds(0.5);

	KASSERT(ksync_init_srcu_struct(&y_srcu) == 0);
	y_use_gp_pending = gp_pending;
	__atomic_store_n(&y_sections, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&y_gps_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&y_stop, 0, __ATOMIC_RELEASE);
	KASSERT(pthread_create(&t, NULL, y_reader, &yields) == 0);
	while (ktest_now() < deadline || gps < 3) {
		SPIN_UNTIL(__atomic_load_n(&y_sections, __ATOMIC_ACQUIRE) > seen);
		seen = __atomic_load_n(&y_sections, __ATOMIC_ACQUIRE);
		if (!gp_pending)
			ksync_generation_bump(&y_gen);
		ksync_synchronize_srcu(&y_srcu); /* returns only because the reader yields */
		gps++;
		__atomic_store_n(&y_gps_done, gps, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&y_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ksync_cleanup_srcu_struct(&y_srcu);
	printf("  %lu grace periods, %lu reader yields\n", gps, yields);
	KCHECK(gps >= 3 && yields >= gps - 1);
}

KTEST(generation_reader_yields_to_writer)
{
	run_yield(false);
}

KTEST(gp_pending_reader_yields_to_writer)
{
	run_yield(true);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
