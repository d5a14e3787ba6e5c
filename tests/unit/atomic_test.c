/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * atomic.h: single-thread semantics of every operation, and the
 * ordering-insensitive concurrent guarantees under two threads: no lost
 * increments, xchg hands every value to exactly one thread, cmpxchg
 * increments are linearizable (each success observed a distinct old value),
 * test_and_set_bit on one word never loses a bit.
 */
#include <ksync/atomic.h>

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"

KTEST(int_ops_single_thread)
{
	ksync_atomic_t v = KSYNC_ATOMIC_INIT(5);

	KCHECK_EQ(ksync_atomic_read(&v), 5);
	ksync_atomic_set(&v, 10);
	KCHECK_EQ(ksync_atomic_read(&v), 10);
	ksync_atomic_inc(&v);
	ksync_atomic_add(5, &v);
	ksync_atomic_dec(&v);
	ksync_atomic_sub(3, &v);
	KCHECK_EQ(ksync_atomic_read(&v), 12);
	KCHECK_EQ(ksync_atomic_inc_return(&v), 13);
	KCHECK_EQ(ksync_atomic_dec_return(&v), 12);
	KCHECK_EQ(ksync_atomic_add_return(8, &v), 20);
	KCHECK_EQ(ksync_atomic_sub_return(19, &v), 1);
	KCHECK_EQ(ksync_atomic_fetch_add(4, &v), 1);
	KCHECK_EQ(ksync_atomic_fetch_sub(4, &v), 5);
	KCHECK(ksync_atomic_dec_and_test(&v));
	KCHECK(!ksync_atomic_dec_and_test(&v));
	KCHECK(ksync_atomic_inc_and_test(&v));
	KCHECK(!ksync_atomic_inc_not_zero(&v));
	KCHECK_EQ(ksync_atomic_read(&v), 0);
	ksync_atomic_set(&v, 7);
	KCHECK(ksync_atomic_inc_not_zero(&v));
	KCHECK(ksync_atomic_sub_and_test(8, &v));
	KCHECK(!ksync_atomic_add_unless(&v, 1, 0));
	KCHECK(ksync_atomic_add_unless(&v, 2, 1));
	KCHECK_EQ(ksync_atomic_xchg(&v, 9), 2);
	KCHECK_EQ(ksync_atomic_cmpxchg(&v, 3, 4), 9); /* fails, returns the value seen */
	KCHECK_EQ(ksync_atomic_cmpxchg(&v, 9, 4), 9);
	KCHECK_EQ(ksync_atomic_read(&v), 4);
	int old = 1;
	KCHECK(!ksync_atomic_try_cmpxchg(&v, &old, 2));
	KCHECK_EQ(old, 4); /* failure reports what it saw */
	KCHECK(ksync_atomic_try_cmpxchg(&v, &old, 2));
	KCHECK_EQ(ksync_atomic_read(&v), 2);
	ksync_atomic_or(0x10, &v);
	ksync_atomic_and(0x12, &v);
	ksync_atomic_xor(0x3, &v);
	KCHECK_EQ(ksync_atomic_read(&v), 0x11);
	ksync_atomic_set_release(&v, 3);
	KCHECK_EQ(ksync_atomic_read_acquire(&v), 3);
}

/*
 * The kernel's atomics wrap (it builds with -fno-strict-overflow); here the
 * arithmetic of the generators must not be signed-overflow UB either. Run
 * under UBSan (the asan stage), the old `c + a` / `0 - i` forms abort.
 */
KTEST(arithmetic_wraps_at_the_limits)
{
	ksync_atomic_t v = KSYNC_ATOMIC_INIT(INT_MAX);

	KCHECK_EQ(ksync_atomic_inc_return(&v), INT_MIN);
	KCHECK_EQ(ksync_atomic_dec_return(&v), INT_MAX);
	KCHECK_EQ(ksync_atomic_add_return(2, &v), INT_MIN + 1);
	KCHECK_EQ(ksync_atomic_sub_return(2, &v), INT_MAX);
	KCHECK(ksync_atomic_add_unless(&v, 1, 0));
	KCHECK_EQ(ksync_atomic_read(&v), INT_MIN);
	KCHECK(ksync_atomic_sub_and_test(INT_MIN, &v));
	ksync_atomic_sub(INT_MIN, &v);
	KCHECK_EQ(ksync_atomic_read(&v), INT_MIN);
	KCHECK_EQ(ksync_atomic_fetch_sub(INT_MIN, &v), INT_MIN);
	KCHECK_EQ(ksync_atomic_read(&v), 0);
	KCHECK_EQ(ksync_atomic_sub_return(INT_MIN, &v), INT_MIN);

	ksync_atomic_long_t l = KSYNC_ATOMIC_INIT(LONG_MIN);
	KCHECK_EQ(ksync_atomic_long_dec_return(&l), LONG_MAX);
	KCHECK_EQ(ksync_atomic_long_inc_return(&l), LONG_MIN);
	KCHECK_EQ(ksync_atomic_long_sub_return(1, &l), LONG_MAX);
	KCHECK_EQ(ksync_atomic_long_add_return(1, &l), LONG_MIN);
	KCHECK(ksync_atomic_long_add_unless(&l, -1, 0));
	KCHECK_EQ(ksync_atomic_long_read(&l), LONG_MAX);
	ksync_atomic_long_set(&l, LONG_MIN);
	KCHECK(ksync_atomic_long_sub_and_test(LONG_MIN, &l));
	KCHECK_EQ(ksync_atomic_long_sub_return(LONG_MIN, &l), LONG_MIN);
}

KTEST(long_ops_single_thread)
{
	ksync_atomic_long_t v = KSYNC_ATOMIC_INIT(0);
	const long big = 1L << 40;

	ksync_atomic_long_add(big, &v);
	KCHECK_EQ(ksync_atomic_long_read(&v), big);
	KCHECK_EQ(ksync_atomic_long_add_return(big, &v), 2 * big);
	KCHECK_EQ(ksync_atomic_long_fetch_sub(big, &v), 2 * big);
	KCHECK_EQ(ksync_atomic_long_xchg(&v, -1), big);
	KCHECK(ksync_atomic_long_inc_and_test(&v));
	KCHECK_EQ(ksync_atomic_long_dec_return(&v), -1);
	KCHECK_EQ(ksync_atomic_long_cmpxchg(&v, -1, big), -1);
	long old = big;
	KCHECK(ksync_atomic_long_try_cmpxchg(&v, &old, 1));
	KCHECK(ksync_atomic_long_dec_and_test(&v));
	KCHECK(!ksync_atomic_long_inc_not_zero(&v));
	ksync_atomic_long_sub(5, &v);
	KCHECK_EQ(ksync_atomic_long_read(&v), -5);
	KCHECK_EQ(ksync_atomic_long_inc_return(&v), -4);
	KCHECK_EQ(ksync_atomic_long_sub_return(-4, &v), 0);
}

KTEST(word_and_pointer_ops)
{
	unsigned long w = 0;
	KCHECK(!ksync_ulong_test_and_set_bit(&w, 0));
	KCHECK(ksync_ulong_test_and_set_bit(&w, 0));
	KCHECK(!ksync_ulong_test_and_set_bit(&w, 63));
	KCHECK(w == (1UL | (1UL << 63)));
	KCHECK(ksync_ulong_test_and_clear_bit(&w, 63));
	KCHECK(!ksync_ulong_test_and_clear_bit(&w, 63));
	KCHECK(!ksync_ulong_test_and_change_bit(&w, 5));
	KCHECK(ksync_ulong_test_and_change_bit(&w, 5));
	KCHECK(w == 1UL);
	ksync_ulong_or(&w, 0xf0);
	ksync_ulong_andnot(&w, 0x30);
	ksync_ulong_xor(&w, 0x1);
	KCHECK(ksync_ulong_load(&w) == 0xc0);
	KCHECK(ksync_ulong_fetch_or(&w, 0x1) == 0xc0);
	KCHECK(ksync_ulong_fetch_andnot(&w, 0x80) == 0xc1);
	KCHECK(ksync_ulong_fetch_xor(&w, 0x41) == 0x41);
	KCHECK(w == 0);

	int a, b;
	void *p = &a, *expect = &b;
	KCHECK(ksync_ptr_load(&p) == &a);
	KCHECK(!ksync_ptr_try_cmpxchg(&p, &expect, NULL));
	KCHECK(expect == &a);
	KCHECK(ksync_ptr_try_cmpxchg(&p, &expect, &b));
	KCHECK(ksync_ptr_xchg(&p, NULL) == &b);
	KCHECK(p == NULL);

	uint64_t g = UINT64_MAX;
	KCHECK(ksync_u64_fetch_add(&g, 2) == UINT64_MAX);
	KCHECK(ksync_u64_load(&g) == 1);
}

/* ---- two threads ---- */

#define ITERS 200000

static ksync_atomic_long_t counter;
static ksync_atomic_t inc_counter;
static unsigned long shared_word;
static ksync_atomic_long_t cas_counter;
static unsigned char *cas_seen; /* cas_seen[v] = 1 when a successful cmpxchg moved v -> v+1 */
static ksync_atomic_long_t xchg_slot;
static long *xchg_taken;

static void *hammer(void *arg)
{
	long id = (long)arg;

	for (long i = 0; i < ITERS; i++) {
		ksync_atomic_long_inc(&counter);
		(void)ksync_atomic_inc_return(&inc_counter);
		/* Each thread owns half of the word's bits; toggling its own bits
		 * must never disturb the other thread's. */
		unsigned bit = (unsigned)(id * 32 + (i % 32));
		KASSERT(!ksync_ulong_test_and_set_bit(&shared_word, bit));
		KASSERT(ksync_ulong_test_and_clear_bit(&shared_word, bit));

		long old = ksync_atomic_long_read(&cas_counter);
		while (!ksync_atomic_long_try_cmpxchg(&cas_counter, &old, old + 1))
			;
		/* A linearizable cmpxchg hands each old value to exactly one thread. */
		KASSERT(__atomic_exchange_n(&cas_seen[old], 1, __ATOMIC_RELAXED) == 0);

		/* Exchange in a token; every token taken out must be unique. */
		long mine = id * ITERS + i + 1;
		long got = ksync_atomic_long_xchg(&xchg_slot, mine);
		if (got)
			KASSERT(__atomic_fetch_add(&xchg_taken[got], 1, __ATOMIC_RELAXED) == 0);
	}
	return NULL;
}

KTEST(two_threads_lose_nothing)
{
	pthread_t t[2];

	cas_seen = calloc(2 * ITERS + 1, 1);
	xchg_taken = calloc(2 * ITERS + 1, sizeof(long));
	KASSERT(cas_seen && xchg_taken);
	for (long i = 0; i < 2; i++)
		KCHECK(pthread_create(&t[i], NULL, hammer, (void *)i) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	KCHECK_EQ(ksync_atomic_long_read(&counter), 2 * ITERS);
	KCHECK_EQ(ksync_atomic_read(&inc_counter), 2 * ITERS);
	KCHECK_EQ(ksync_atomic_long_read(&cas_counter), 2 * ITERS);
	KCHECK(shared_word == 0);
	long distinct = 0;
	for (long v = 0; v < 2 * ITERS; v++)
		distinct += cas_seen[v];
	KCHECK_EQ(distinct, 2 * ITERS);
	/* Every token but the one left in the slot was taken exactly once. */
	long taken = 0;
	for (long v = 1; v <= 2 * ITERS; v++)
		taken += xchg_taken[v];
	KCHECK_EQ(taken, 2 * ITERS - 1);
	KCHECK(ksync_atomic_long_read(&xchg_slot) != 0);
	KCHECK_EQ(xchg_taken[ksync_atomic_long_read(&xchg_slot)], 0);
	free(cas_seen);
	free(xchg_taken);
}

/* Message passing through release/acquire: the payload written before the
 * flag is always seen after it. TSan checks the ordering in builtins mode. */
static int payload;
static int flag;

static void *mp_writer(void *arg)
{
	(void)arg;
	for (int i = 1; i <= 20000; i++) {
		while (ksync_smp_load_acquire(&flag) != 0)
			ksync_cpu_relax();
		payload = i; /* plain store, ordered by the release below */
		ksync_smp_store_release(&flag, i); /* pairs with the acquire in mp_reader */
	}
	return NULL;
}

static void *mp_reader(void *arg)
{
	(void)arg;
	for (int i = 1; i <= 20000; i++) {
		int f;
		while ((f = ksync_smp_load_acquire(&flag)) == 0) /* pairs with mp_writer's release */
			ksync_cpu_relax();
		KASSERT(f == i && payload == i);
		ksync_smp_store_release(&flag, 0);
	}
	return NULL;
}

KTEST(message_passing_release_acquire)
{
	pthread_t w, r;
	pthread_create(&w, NULL, mp_writer, NULL);
	pthread_create(&r, NULL, mp_reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	KCHECK_EQ(payload, 20000);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
