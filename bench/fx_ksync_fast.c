/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_ksync_fast.c - bench_srcu's read rows of ksync SRCU beyond the classic
 * form on a direct domain: the fast form (ksync_srcu_read_lock_fast()) on a
 * domain of its own, and both forms on a domain past the direct words.
 *
 * The far domain is set up on first use, after 40 filler domains took every
 * free direct entry; the fillers are then cleaned up, which hands their
 * entries back to the domains set up later in the process (the far domain
 * keeps none: a domain's key is fixed until its own cleanup).
 */
#include "fixtures.h"
#include "fx_ksync_fast.h"

#include <ksync/srcu.h>

#include <pthread.h>
#include <stdlib.h>

#define FAR_FILLERS 40

struct kfnode {
	struct ksync_rcu_head h;
	struct bench_payload p;
};

static KSYNC_DEFINE_SRCU(kf_srcu);
static struct ksync_srcu_struct kf_far;
static struct kfnode *kf_ptr;
static pthread_once_t kf_once = PTHREAD_ONCE_INIT, kf_far_once = PTHREAD_ONCE_INIT;

static void kf_setup(void)
{
	kf_ptr = BENCH_NODE_NEW(struct kfnode);
}

static void kf_far_setup(void)
{
	static struct ksync_srcu_struct fill[FAR_FILLERS];

	for (int i = 0; i < FAR_FILLERS; i++)
		if (ksync_init_srcu_struct(&fill[i]))
			abort();
	if (ksync_init_srcu_struct(&kf_far))
		abort();
	for (int i = 0; i < FAR_FILLERS; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
}

void bench_ksync_fast_reads(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&kf_srcu);
		ksync_barrier();
		ksync_srcu_read_unlock_fast(&kf_srcu, tok);
	}
}

long bench_ksync_fast_deref_reads(unsigned long n)
{
	long sum = 0;

	pthread_once(&kf_once, kf_setup);
	for (unsigned long i = 0; i < n; i++) {
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&kf_srcu);
		struct kfnode *p = ksync_srcu_dereference(kf_ptr, &kf_srcu);

		sum += KSYNC_READ_ONCE(p->p.v);
		ksync_srcu_read_unlock_fast(&kf_srcu, tok);
	}
	return sum;
}

void bench_ksync_far_reads(unsigned long n)
{
	pthread_once(&kf_far_once, kf_far_setup);
	for (unsigned long i = 0; i < n; i++) {
		int idx = ksync_srcu_read_lock(&kf_far);
		ksync_barrier();
		ksync_srcu_read_unlock(&kf_far, idx);
	}
}

void bench_ksync_far_fast_reads(unsigned long n)
{
	pthread_once(&kf_far_once, kf_far_setup);
	for (unsigned long i = 0; i < n; i++) {
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&kf_far);
		ksync_barrier();
		ksync_srcu_read_unlock_fast(&kf_far, tok);
	}
}
