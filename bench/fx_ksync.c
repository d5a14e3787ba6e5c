/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_ksync.c - ksync SRCU for bench_srcu: the default (membarrier) read side
 * and the fenced one, each on its own domain, plus a third domain no thread
 * ever reads (the "no reader ever" grace period).
 */
#include "fixtures.h"

#include <ksync/srcu.h>

#include <stdlib.h>

struct knode {
	struct ksync_rcu_head h;
	struct bench_payload p;
};

static KSYNC_DEFINE_SRCU(k_srcu);        /* readers, updaters, callbacks */
static KSYNC_DEFINE_SRCU(k_never);       /* never read by any thread */
static struct ksync_srcu_struct k_fenced; /* KSYNC_SRCU_FENCED, set up in init */
static struct knode *k_ptr, *k_fptr;

static void k_init(void)
{
	k_ptr = BENCH_NODE_NEW(struct knode);
}

static void k_init_fenced(void)
{
	ksync_init_srcu_struct_flags(&k_fenced, KSYNC_SRCU_FENCED);
	k_fptr = BENCH_NODE_NEW(struct knode);
}

static KSYNC_ALWAYS_INLINE void k_reads_on(struct ksync_srcu_struct *ssp, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		int idx = ksync_srcu_read_lock(ssp);
		ksync_barrier();
		ksync_srcu_read_unlock(ssp, idx);
	}
}

static void k_reads(unsigned long n)
{
	k_reads_on(&k_srcu, n);
}

static void k_reads_fenced(unsigned long n)
{
	k_reads_on(&k_fenced, n);
}

static KSYNC_ALWAYS_INLINE long k_deref_on(struct ksync_srcu_struct *ssp, struct knode **pp,
					   unsigned long n)
{
	long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		int idx = ksync_srcu_read_lock(ssp);
		struct knode *p = ksync_srcu_dereference(*pp, ssp);

		sum += KSYNC_READ_ONCE(p->p.v);
		ksync_srcu_read_unlock(ssp, idx);
	}
	return sum;
}

static long k_deref(unsigned long n)
{
	return k_deref_on(&k_srcu, &k_ptr, n);
}

static long k_deref_fenced(unsigned long n)
{
	return k_deref_on(&k_fenced, &k_fptr, n);
}

static void k_update_on(struct ksync_srcu_struct *ssp, struct knode **pp)
{
	struct knode *old = __atomic_exchange_n(pp, BENCH_NODE_NEW(struct knode), __ATOMIC_ACQ_REL);

	ksync_synchronize_srcu(ssp);
	free(old);
}

static void k_update(void)
{
	k_update_on(&k_srcu, &k_ptr);
}

static void k_update_fenced(void)
{
	k_update_on(&k_fenced, &k_fptr);
}

static void k_sync(void)
{
	ksync_synchronize_srcu(&k_srcu);
}

static void k_sync_fenced(void)
{
	ksync_synchronize_srcu(&k_fenced);
}

static void k_sync_never(void)
{
	ksync_synchronize_srcu(&k_never);
}

static void k_cb(struct ksync_rcu_head *h)
{
	struct knode *n = ksync_container_of(h, struct knode, h);

	bench_invoked(&n->p);
	free(n);
}

static void k_call(uint64_t t_enq, int *done)
{
	struct knode *n = BENCH_CB_NODE_NEW(struct knode, t_enq, done);

	ksync_call_srcu(&k_srcu, &n->h, k_cb);
}

static void k_barrier(void)
{
	ksync_srcu_barrier(&k_srcu);
}

/* The same callbacks on a domain that lets call_srcu() run them (ksync_srcu_set_cb_in_caller()). */
static KSYNC_DEFINE_SRCU(k_srcu_ic);

static void k_init_in_caller(void)
{
	ksync_srcu_set_cb_in_caller(&k_srcu_ic, true);
}

static void k_call_in_caller(uint64_t t_enq, int *done)
{
	struct knode *n = BENCH_CB_NODE_NEW(struct knode, t_enq, done);

	ksync_call_srcu(&k_srcu_ic, &n->h, k_cb);
}

static void k_barrier_in_caller(void)
{
	ksync_srcu_barrier(&k_srcu_ic);
}

void bench_ksync_poll_gp(void)
{
	unsigned long cookie = ksync_start_poll_synchronize_srcu(&k_srcu);

	for (unsigned i = 0; !ksync_poll_state_synchronize_srcu(&k_srcu, cookie); i++)
		bench_backoff(i);
}

int bench_ksync_poll_done(void)
{
	static unsigned long cookie;
	static int have;

	if (!have) {
		cookie = ksync_get_state_synchronize_srcu(&k_srcu);
		ksync_synchronize_srcu(&k_srcu);
		have = 1;
	}
	return ksync_poll_state_synchronize_srcu(&k_srcu, cookie);
}

const struct bench_ops bench_ksync_srcu = {
	.name = "ksync_srcu",
	.init = k_init,
	.thread_begin = bench_nothing,
	.thread_end = bench_nothing,
	.reads = k_reads,
	.deref_reads = k_deref,
	.update = k_update,
	.synchronize = k_sync,
	.sync_never_read = k_sync_never,
	.caller_begin = bench_nothing,
	.caller_end = bench_nothing,
	.call = k_call,
	.barrier = k_barrier,
};

/* call and call_latency only (bench_srcu.cc registers it apart from the read-side modules). */
const struct bench_ops bench_ksync_srcu_in_caller = {
	.name = "ksync_srcu_in_caller",
	.init = k_init_in_caller,
	.thread_begin = bench_nothing,
	.thread_end = bench_nothing,
	.caller_begin = bench_nothing,
	.caller_end = bench_nothing,
	.call = k_call_in_caller,
	.barrier = k_barrier_in_caller,
};

const struct bench_ops bench_ksync_srcu_fenced = {
	.name = "ksync_srcu_fenced",
	.init = k_init_fenced,
	.thread_begin = bench_nothing,
	.thread_end = bench_nothing,
	.reads = k_reads_fenced,
	.deref_reads = k_deref_fenced,
	.update = k_update_fenced,
	.synchronize = k_sync_fenced,
};
