/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two translation units, each with its own static copy of the SRCU slow
 * paths, cooperate on one domain: the per-thread state and the process-wide
 * objects are weak symbols shared by both.
 */
#include <ksync/srcu.h>

#include <pthread.h>

#include "ktest.h"
#include "srcu_multi_tu.h"
#include "srcu_peek.h"
#include "wait.h"

KSYNC_DEFINE_SRCU(multi_srcu);
static int ran;

static void cb(struct ksync_rcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&ran, 1, __ATOMIC_SEQ_CST);
}

static int released;

static void *reader_in_b(void *arg)
{
	(void)arg;
	int idx = tu_b_lock(&multi_srcu);
	kt_sleep_ms(50);
	__atomic_store_n(&released, 1, __ATOMIC_SEQ_CST);
	ksync_srcu_read_unlock(&multi_srcu, idx); /* unlocked from this TU */
	return NULL;
}

KTEST(two_translation_units)
{
	KCHECK(tu_b_self() == (void *)&ksync_srcu_self);
	int idx = tu_b_lock(&multi_srcu);
	KCHECK(ksync_srcu_read_lock_held(&multi_srcu));
	ksync_srcu_read_unlock(&multi_srcu, idx);
	KCHECK(!tu_b_held(&multi_srcu));
	idx = ksync_srcu_read_lock(&multi_srcu);
	KCHECK(tu_b_held(&multi_srcu));
	tu_b_unlock(&multi_srcu, idx);

	pthread_t t;
	pthread_create(&t, NULL, reader_in_b, NULL);
	kt_sleep_ms(10);
	ksync_synchronize_srcu(&multi_srcu);
	KCHECK_EQ(__atomic_load_n(&released, __ATOMIC_SEQ_CST), 1);
	pthread_join(t, NULL);

	struct ksync_rcu_head h1, h2;
	tu_b_call(&multi_srcu, &h1, cb);
	ksync_call_srcu(&multi_srcu, &h2, cb);
	ksync_srcu_barrier(&multi_srcu);
	KCHECK_EQ(__atomic_load_n(&ran, __ATOMIC_SEQ_CST), 2);
	tu_b_synchronize(&multi_srcu);
	tu_b_barrier(&multi_srcu);

	/*
	 * Helper started by B's code, barrier from A's: the helper must know A's
	 * marker (the count is settled before the marker runs), so cleanup right
	 * after the barrier finds nothing pending.
	 */
	struct ksync_srcu_struct dyn;
	ksync_init_srcu_struct(&dyn);
	unsigned long w0 = ksync_warn_count;
	for (int round = 0; round < 50; round++) {
		struct ksync_rcu_head hs[4];
		for (int i = 0; i < 4; i++)
			tu_b_call(&dyn, &hs[i], cb);
		ksync_srcu_barrier(&dyn);
		KCHECK_EQ(kt_srcu_cb_count(&dyn), 0);
	}
	ksync_cleanup_srcu_struct(&dyn);
	KCHECK_EQ(ksync_warn_count, w0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
