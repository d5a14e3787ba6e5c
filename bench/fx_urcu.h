/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_urcu.h - one liburcu flavour for bench_srcu, included by
 * fx_urcu_memb.c, fx_urcu_qsbr.c and fx_urcu_bp.c after each defines
 * URCU_FLAV (memb, qsbr, bp) and includes its flavour header with
 * _LGPL_SOURCE (the inline fast paths, as ksync's are inline). The
 * flavours' symbols are prefixed (urcu_memb_*, urcu_qsbr_*, urcu_bp_*), so
 * all three link into one binary; their headers are not meant to share a
 * translation unit, hence one file each.
 *
 * Registration: memb and qsbr threads register before reading and unregister
 * after (outside the timed loop); bp registers itself on a thread's first
 * read and unregisters at thread exit. qsbr readers announce a quiescent
 * state every BENCH_QSBR_PERIOD pairs; qsbr updaters and callers go offline.
 */
#include "fixtures.h"

#include <stdlib.h>

#define FX_CAT2(a, b) a##b
#define FX_CAT(a, b) FX_CAT2(a, b)
#define U(x) FX_CAT(FX_CAT(urcu_, URCU_FLAV), _##x)   /* U(read_lock) = urcu_memb_read_lock */
#define FX(x) FX_CAT(FX_CAT(fx_, URCU_FLAV), _##x)    /* file-local names */

struct unode {
	struct rcu_head h;
	struct bench_payload p;
};

static struct unode *FX(ptr);

static void FX(init)(void)
{
	FX(ptr) = BENCH_NODE_NEW(struct unode);
}

static void FX(thread_begin)(void)
{
#ifndef URCU_FLAV_BP
	U(register_thread)();
#endif
}

static void FX(thread_end)(void)
{
#ifndef URCU_FLAV_BP
	U(unregister_thread)();
#endif
}

static void FX(reads)(unsigned long n)
{
#ifdef URCU_FLAV_QSBR
	while (n) {
		unsigned long k = n < BENCH_QSBR_PERIOD ? n : BENCH_QSBR_PERIOD;

		for (unsigned long i = 0; i < k; i++) {
			U(read_lock)();
			__asm__ __volatile__("" ::: "memory");
			U(read_unlock)();
		}
		U(quiescent_state)();
		n -= k;
	}
#else
	for (unsigned long i = 0; i < n; i++) {
		U(read_lock)();
		__asm__ __volatile__("" ::: "memory");
		U(read_unlock)();
	}
#endif
}

static inline long FX(deref_one)(void)
{
	long v;

	U(read_lock)();
	v = CMM_LOAD_SHARED(rcu_dereference(FX(ptr))->p.v);
	U(read_unlock)();
	return v;
}

static long FX(deref_reads)(unsigned long n)
{
	long sum = 0;
#ifdef URCU_FLAV_QSBR
	while (n) {
		unsigned long k = n < BENCH_QSBR_PERIOD ? n : BENCH_QSBR_PERIOD;

		for (unsigned long i = 0; i < k; i++)
			sum += FX(deref_one)();
		U(quiescent_state)();
		n -= k;
	}
#else
	for (unsigned long i = 0; i < n; i++)
		sum += FX(deref_one)();
#endif
	return sum;
}

static void FX(update)(void)
{
	struct unode *old = rcu_xchg_pointer(&FX(ptr), BENCH_NODE_NEW(struct unode));

	U(synchronize_rcu)();
	free(old);
}

static void FX(synchronize)(void)
{
	U(synchronize_rcu)();
}

/* call_rcu needs a registered thread; a qsbr one must not hold grace periods off. */
static void FX(caller_begin)(void)
{
#ifndef URCU_FLAV_BP
	U(register_thread)();
#endif
#ifdef URCU_FLAV_QSBR
	U(thread_offline)();
#endif
}

static void FX(caller_end)(void)
{
#ifdef URCU_FLAV_QSBR
	U(thread_online)();
#endif
#ifndef URCU_FLAV_BP
	U(unregister_thread)();
#endif
}

static void FX(cb)(struct rcu_head *h)
{
	struct unode *n = caa_container_of(h, struct unode, h);

	bench_invoked(&n->p);
	free(n);
}

static void FX(call)(uint64_t t_enq, int *done)
{
	struct unode *n = BENCH_CB_NODE_NEW(struct unode, t_enq, done);

	U(call_rcu)(&n->h, FX(cb));
}

static void FX(barrier)(void)
{
	U(barrier)();
}

#ifdef URCU_FLAV_QSBR
static void FX(offline)(void)
{
	U(thread_offline)();
}

static void FX(online)(void)
{
	U(thread_online)();
}
#endif

const struct bench_ops FX_CAT(bench_urcu_, URCU_FLAV) = {
	.name = URCU_NAME,
	.init = FX(init),
	.thread_begin = FX(thread_begin),
	.thread_end = FX(thread_end),
#ifdef URCU_FLAV_QSBR
	.offline = FX(offline),
	.online = FX(online),
#endif
	.reads = FX(reads),
	.deref_reads = FX(deref_reads),
	.update = FX(update),
	.synchronize = FX(synchronize),
	.sync_never_read = FX(synchronize),
	.caller_begin = FX(caller_begin),
	.caller_end = FX(caller_end),
	.call = FX(call),
	.barrier = FX(barrier),
};
