/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_dso_test - the executable and a -fvisibility=hidden shared library
 * (srcu_dso_b.c), each with its own copy of ksync SRCU, share one set of
 * process-wide objects: one per-thread cache, one id counter (no two domains
 * share an id), one lock.
 */
#include <ksync/srcu.h>

#include <pthread.h>

#include "ktest.h"
#include "srcu_dso.h"
#include "srcu_peek.h"

static int synced;

static void *sync_b(void *p)
{
	dso_synchronize((struct ksync_srcu_struct *)p);
	__atomic_store_n(&synced, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

KTEST(hidden_dso_shares_process_state)
{
	KCHECK(dso_self() == (void *)&ksync_srcu_self);
	struct ksync_srcu_struct a, b;
	ksync_init_srcu_struct(&a); /* set up by the executable's copy */
	dso_init(&b);		    /* by the library's copy */
	KCHECK(kt_srcu_id(&a) != kt_srcu_id(&b));
	/* Sections of A taken through both copies; B stays free. */
	int i = dso_lock(&a);
	int j = ksync_srcu_read_lock(&a);
	KCHECK(ksync_srcu_read_lock_held(&a));
	KCHECK(!dso_held(&b));
	KCHECK(!ksync_srcu_read_lock_held(&b));
	pthread_t t;
	pthread_create(&t, NULL, sync_b, &b);
	pthread_join(t, NULL); /* B's grace period ignores A's readers */
	KCHECK(synced);
	ksync_srcu_read_unlock(&a, j);
	dso_unlock(&a, i);
	KCHECK(!dso_held(&a));
	ksync_synchronize_srcu(&a);
	ksync_cleanup_srcu_struct(&a);
	dso_cleanup(&b);
	KCHECK_EQ(kt_srcu_id(&a), 0UL);
	KCHECK_EQ(kt_srcu_id(&b), 0UL);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
