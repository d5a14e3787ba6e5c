/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_pthread.c - pthread_rwlock for bench_srcu, writer-preferring
 * (bench_rwlock_init_writer_pref(), fx_common.c). An update is a write lock
 * around the pointer swap.
 */
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
	bench_rwlock_init_writer_pref(&prw);
	p_ptr = BENCH_NODE_NEW(struct pnode);
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
	struct pnode *n = BENCH_NODE_NEW(struct pnode), *old;

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
	.thread_begin = bench_nothing,
	.thread_end = bench_nothing,
	.reads = p_reads,
	.deref_reads = p_deref,
	.update = p_update,
};
