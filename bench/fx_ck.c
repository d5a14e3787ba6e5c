/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_ck.c - Concurrency Kit's peers for bench_srcu: ck_epoch (begin/end,
 * synchronize, ck_epoch_call + ck_epoch_poll), ck_rwlock and ck_brlock
 * (read lock/unlock; an update is a write lock around the pointer swap).
 * ck_epoch needs a record per thread: taken from the epoch's free list or
 * registered on the thread's first use, given back by thread_end.
 */
#include "fixtures.h"

#include <ck_brlock.h>
#include <ck_epoch.h>
#include <ck_rwlock.h>

#include <stdlib.h>

struct cnode {
	ck_epoch_entry_t e;
	struct bench_payload p;
};

#define CK_BARRIER() __asm__ __volatile__("" ::: "memory")

/* ---- ck_epoch ----------------------------------------------------------- */

static ck_epoch_t ep;
static struct cnode *ep_ptr;
static __thread ck_epoch_record_t *ep_rec;
static __thread unsigned ep_calls;

static ck_epoch_record_t *ep_record(void)
{
	if (!ep_rec) {
		ep_rec = ck_epoch_recycle(&ep, NULL);
		if (!ep_rec) {
			ep_rec = bench_xmalloc(sizeof(*ep_rec));
			ck_epoch_register(&ep, ep_rec, NULL);
		}
	}
	return ep_rec;
}

static void ep_init(void)
{
	ck_epoch_init(&ep);
	ep_ptr = BENCH_NODE_NEW(struct cnode);
}

static void ep_thread_begin(void)
{
	ep_record();
}

static void ep_thread_end(void)
{
	if (ep_rec) {
		ck_epoch_barrier(ep_rec); /* nothing may stay queued on a record given back */
		ck_epoch_unregister(ep_rec);
		ep_rec = NULL;
	}
}

static void ep_reads(unsigned long n)
{
	ck_epoch_record_t *r = ep_record();

	for (unsigned long i = 0; i < n; i++) {
		ck_epoch_begin(r, NULL);
		CK_BARRIER();
		ck_epoch_end(r, NULL);
	}
}

static long ep_deref(unsigned long n)
{
	ck_epoch_record_t *r = ep_record();
	long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		ck_epoch_begin(r, NULL);
		struct cnode *p = ck_pr_load_ptr(&ep_ptr);
		sum += __atomic_load_n(&p->p.v, __ATOMIC_RELAXED);
		ck_epoch_end(r, NULL);
	}
	return sum;
}

static void ep_update(void)
{
	struct cnode *old = ck_pr_fas_ptr(&ep_ptr, BENCH_NODE_NEW(struct cnode));

	ck_epoch_synchronize(ep_record());
	free(old);
}

static void ep_sync(void)
{
	ck_epoch_synchronize(ep_record());
}

static void ep_cb(ck_epoch_entry_t *e)
{
	struct cnode *n = (struct cnode *)e; /* e is the first member */

	bench_invoked(&n->p);
	free(n);
}

static void ep_poll(void)
{
	ck_epoch_poll(ep_record());
}

/* ck_epoch has no helper thread: the caller polls, every 64 calls. */
static void ep_call(uint64_t t_enq, int *done)
{
	struct cnode *n = BENCH_CB_NODE_NEW(struct cnode, t_enq, done);

	ck_epoch_call(ep_record(), &n->e, ep_cb);
	if ((++ep_calls & 63) == 0)
		ck_epoch_poll(ep_rec);
}

static void ep_barrier(void)
{
	ck_epoch_barrier(ep_record());
}

const struct bench_ops bench_ck_epoch = {
	.name = "ck_epoch",
	.init = ep_init,
	.thread_begin = ep_thread_begin,
	.thread_end = ep_thread_end,
	.reads = ep_reads,
	.deref_reads = ep_deref,
	.update = ep_update,
	.synchronize = ep_sync,
	.caller_begin = ep_thread_begin,
	.caller_end = ep_thread_end,
	.call = ep_call,
	.poll = ep_poll,
	.barrier = ep_barrier,
};

/* ---- ck_rwlock ---------------------------------------------------------- */

static ck_rwlock_t rw = CK_RWLOCK_INITIALIZER;
static struct cnode *rw_ptr;

static void rw_init(void)
{
	rw_ptr = BENCH_NODE_NEW(struct cnode);
}

static void rw_reads(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		ck_rwlock_read_lock(&rw);
		CK_BARRIER();
		ck_rwlock_read_unlock(&rw);
	}
}

static long rw_deref(unsigned long n)
{
	long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		ck_rwlock_read_lock(&rw);
		sum += __atomic_load_n(&rw_ptr->p.v, __ATOMIC_RELAXED);
		ck_rwlock_read_unlock(&rw);
	}
	return sum;
}

static void rw_update(void)
{
	struct cnode *n = BENCH_NODE_NEW(struct cnode), *old;

	ck_rwlock_write_lock(&rw);
	old = rw_ptr;
	rw_ptr = n;
	ck_rwlock_write_unlock(&rw);
	free(old);
}

const struct bench_ops bench_ck_rwlock = {
	.name = "ck_rwlock",
	.is_lock = 1,
	.init = rw_init,
	.thread_begin = bench_nothing,
	.thread_end = bench_nothing,
	.reads = rw_reads,
	.deref_reads = rw_deref,
	.update = rw_update,
};

/* ---- ck_brlock ---------------------------------------------------------- */

static ck_brlock_t br = CK_BRLOCK_INITIALIZER;
static struct cnode *br_ptr;
static __thread ck_brlock_reader_t br_reader;
static __thread int br_registered;

static void br_init(void)
{
	br_ptr = BENCH_NODE_NEW(struct cnode);
}

static void br_thread_begin(void)
{
	if (!br_registered) {
		ck_brlock_read_register(&br, &br_reader);
		br_registered = 1;
	}
}

static void br_thread_end(void)
{
	if (br_registered) {
		ck_brlock_read_unregister(&br, &br_reader);
		br_registered = 0;
	}
}

static void br_reads(unsigned long n)
{
	br_thread_begin();
	for (unsigned long i = 0; i < n; i++) {
		ck_brlock_read_lock(&br, &br_reader);
		CK_BARRIER();
		ck_brlock_read_unlock(&br_reader);
	}
}

static long br_deref(unsigned long n)
{
	long sum = 0;

	br_thread_begin();
	for (unsigned long i = 0; i < n; i++) {
		ck_brlock_read_lock(&br, &br_reader);
		sum += __atomic_load_n(&br_ptr->p.v, __ATOMIC_RELAXED);
		ck_brlock_read_unlock(&br_reader);
	}
	return sum;
}

static void br_update(void)
{
	struct cnode *n = BENCH_NODE_NEW(struct cnode), *old;

	ck_brlock_write_lock(&br);
	old = br_ptr;
	br_ptr = n;
	ck_brlock_write_unlock(&br);
	free(old);
}

const struct bench_ops bench_ck_brlock = {
	.name = "ck_brlock",
	.is_lock = 1,
	.init = br_init,
	.thread_begin = br_thread_begin,
	.thread_end = br_thread_end,
	.reads = br_reads,
	.deref_reads = br_deref,
	.update = br_update,
};
