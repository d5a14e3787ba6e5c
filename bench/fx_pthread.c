/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_pthread.c - pthread_rwlock for bench_srcu. Writer-preferring (glibc's
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, as the reclaim-storm demo's
 * rwsem): with the default reader preference an updater would starve behind
 * readers that relock back to back. An update is a write lock around the
 * pointer swap.
 */
#define _GNU_SOURCE 1
#include "fixtures.h"

#include <pthread.h>
#include <stdlib.h>

struct pnode {
	struct bench_payload p;
};

static pthread_rwlock_t prw;
static struct pnode *p_ptr;

static void p_init(void)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&prw, &a);
	pthread_rwlockattr_destroy(&a);
	p_ptr = calloc(1, sizeof(*p_ptr));
	if (!p_ptr)
		abort();
	p_ptr->p.v = 1;
}

static void nothing(void)
{
}

static void p_reads(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pthread_rwlock_rdlock(&prw);
		__asm__ __volatile__("" ::: "memory");
		pthread_rwlock_unlock(&prw);
	}
}

static long p_deref(unsigned long n)
{
	long sum = 0;

	for (unsigned long i = 0; i < n; i++) {
		pthread_rwlock_rdlock(&prw);
		sum += __atomic_load_n(&p_ptr->p.v, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&prw);
	}
	return sum;
}

static void p_update(void)
{
	struct pnode *n = calloc(1, sizeof(*n)), *old;

	if (!n)
		abort();
	n->p.v = 1;
	pthread_rwlock_wrlock(&prw);
	old = p_ptr;
	p_ptr = n;
	pthread_rwlock_unlock(&prw);
	free(old);
}

const struct bench_ops bench_pthread_rwlock = {
	.name = "pthread_rwlock",
	.is_lock = 1,
	.init = p_init,
	.thread_begin = nothing,
	.thread_end = nothing,
	.reads = p_reads,
	.deref_reads = p_deref,
	.update = p_update,
};
