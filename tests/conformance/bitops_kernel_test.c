/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/bits.h> and <linux/bitops.h> under their kernel spellings, against
 * the kernel's documented semantics: BIT()/GENMASK() (bits l..h inclusive,
 * constant expressions), assign_bit() (atomic) and __assign_bit() (not),
 * fns() (the n-th set bit, counting from 0; BITS_PER_LONG when there is
 * none), get_count_order() (log2 rounded up, -1 for 0), and the searches
 * that <linux/bitops.h> brings through <linux/find.h>: find_nth_bit(),
 * find_next_and_bit(), find_first_and_bit(), each cross-checked against one
 * bool per bit over random maps of every awkward size, with garbage in the
 * tail bits that the searches must ignore. Built as C and C++, on both
 * atomics back-ends.
 */
#include <ksync/linux/bitops.h>
#include <ksync/linux/bits.h>
#include <ksync/linux/build_bug.h>

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "bitmodel.h"
#include "rng.h"

static uint64_t rng_state = 0x6a09e667f3bcc909ULL;
static uint64_t rnd(void)
{
	return kt_xorshift64s(&rng_state);
}

#define MAXB KT_MAXB
#define MAXW KT_MAXW
#define sizes kt_bit_sizes
#define NSIZES KT_NSIZES

static void random_map(unsigned long *map, bool *m, unsigned long size)
{
	kt_random_map(map, m, size, &rng_state);
}

/* ------------------------------------------------------------------------ */

KTEST(bits_bit_and_genmask)
{
	/* Constant expressions: usable in case labels and BUILD_BUG_ON(). */
	BUILD_BUG_ON(BIT(0) != 1UL);
	BUILD_BUG_ON(BIT(5) != 0x20UL);
	BUILD_BUG_ON(BIT_ULL(63) != 0x8000000000000000ULL);
	BUILD_BUG_ON(GENMASK(15, 8) != 0xff00UL);
	BUILD_BUG_ON(GENMASK(0, 0) != 1UL);
	BUILD_BUG_ON(GENMASK(BITS_PER_LONG - 1, 0) != ~0UL);
	BUILD_BUG_ON(GENMASK_ULL(63, 0) != ~0ULL);
	BUILD_BUG_ON(GENMASK_ULL(39, 21) != 0x000000ffffe00000ULL);
	BUILD_BUG_ON(BITS_PER_LONG_LONG != 64);
	BUILD_BUG_ON(BITS_PER_BYTE != 8);

	int which = 0;
	unsigned long v = 0xf0;
	switch (v) {
	case GENMASK(3, 0):
		which = 1;
		break;
	case GENMASK(7, 4):
		which = 2;
		break;
	}
	KCHECK_EQ(which, 2);

	/* Types: BIT() and GENMASK() are unsigned long, the _ULL forms unsigned long long. */
	KCHECK_EQ(sizeof(BIT(1)), sizeof(unsigned long));
	KCHECK_EQ(sizeof(GENMASK(1, 0)), sizeof(unsigned long));
	KCHECK_EQ(sizeof(BIT_ULL(1)), sizeof(unsigned long long));
	KCHECK_EQ(sizeof(GENMASK_ULL(1, 0)), sizeof(unsigned long long));

	/* Every (h, l) against the bit-by-bit definition, with variables. */
	for (unsigned int h = 0; h < BITS_PER_LONG; h++) {
		for (unsigned int l = 0; l <= h; l++) {
			unsigned long want = 0;
			for (unsigned int b = l; b <= h; b++)
				want |= BIT(b);
			KASSERT(GENMASK(h, l) == want);
			KASSERT(GENMASK_ULL(h, l) == (unsigned long long)want);
		}
	}
	/* The top bit alone; BIT_MASK()/BIT_WORD() locate any bit. */
	KCHECK(GENMASK(BITS_PER_LONG - 1, BITS_PER_LONG - 1) == BIT(BITS_PER_LONG - 1));
	KCHECK(GENMASK_ULL(63, 63) == BIT_ULL(63));
	KCHECK_EQ(BIT_MASK(BITS_PER_LONG + 1), 2);
	KCHECK_EQ(BIT_WORD(BITS_PER_LONG + 1), 1);
	KCHECK_EQ(BIT_WORD(BITS_PER_LONG - 1), 0);
}

KTEST(bitops_assign_bit)
{
	unsigned long map[2] = { 0, 0 };
	int evals = 0;

	/* Any scalar is a value; it is evaluated once. */
	assign_bit(0, map, (evals++, 7));
	assign_bit(BITS_PER_LONG, map, (evals++, 1));
	assign_bit(BITS_PER_LONG + 1, map, (evals++, 0));
	KCHECK_EQ(evals, 3);
	KCHECK_EQ(map[0], 1);
	KCHECK_EQ(map[1], 1);
	assign_bit(0, map, 0);
	assign_bit(2 * BITS_PER_LONG - 1, map, true);
	KCHECK_EQ(map[0], 0);
	KCHECK(map[1] == (BIT(BITS_PER_LONG - 1) | 1UL));

	/* The non-atomic form, same results. */
	__assign_bit(3, map, (evals++, 2));
	__assign_bit(BITS_PER_LONG, map, (evals++, false));
	KCHECK_EQ(evals, 5);
	KCHECK_EQ(map[0], 8);
	KCHECK(map[1] == BIT(BITS_PER_LONG - 1));
	__assign_bit(3, map, 0);
	KCHECK_EQ(map[0], 0);
	/* Assigning what is there changes nothing. */
	assign_bit(2 * BITS_PER_LONG - 1, map, 1);
	__assign_bit(5, map, 0);
	KCHECK_EQ(map[0], 0);
	KCHECK(map[1] == BIT(BITS_PER_LONG - 1));
}

/* assign_bit() is atomic: threads assigning their own bits of one word lose none. */
enum { ASSIGN_THREADS = 4, ASSIGN_ROUNDS = 20000 };
static unsigned long assign_word[1];

static void *assign_thread(void *arg)
{
	unsigned long id = (unsigned long)(uintptr_t)arg;

	for (unsigned long r = 0; r < ASSIGN_ROUNDS; r++) {
		/* Bits id, id + 4, id + 8, ...: set on even rounds, cleared on odd ones. */
		for (unsigned long b = id; b < BITS_PER_LONG; b += ASSIGN_THREADS)
			assign_bit(b, assign_word, r % 2 == 0);
	}
	/* End with this thread's bits set. */
	for (unsigned long b = id; b < BITS_PER_LONG; b += ASSIGN_THREADS)
		assign_bit(b, assign_word, 1);
	return NULL;
}

KTEST(bitops_assign_bit_atomic)
{
	pthread_t t[ASSIGN_THREADS];

	for (unsigned long i = 0; i < ASSIGN_THREADS; i++)
		KASSERT(pthread_create(&t[i], NULL, assign_thread, (void *)(uintptr_t)i) == 0);
	for (unsigned long i = 0; i < ASSIGN_THREADS; i++)
		pthread_join(t[i], NULL);
	KCHECK(assign_word[0] == ~0UL);
}

static unsigned int ref_fns(unsigned long word, unsigned int n)
{
	for (unsigned int b = 0; b < BITS_PER_LONG; b++)
		if ((word >> b) & 1UL) {
			if (n == 0)
				return b;
			n--;
		}
	return BITS_PER_LONG;
}

KTEST(bitops_fns)
{
	/* n counts from 0: fns(w, 0) is __ffs(w). None: BITS_PER_LONG. */
	KCHECK_EQ(fns(0, 0), BITS_PER_LONG);
	KCHECK_EQ(fns(0, 5), BITS_PER_LONG);
	KCHECK_EQ(fns(1, 0), 0);
	KCHECK_EQ(fns(1, 1), BITS_PER_LONG);
	KCHECK_EQ(fns(0xa, 0), 1);
	KCHECK_EQ(fns(0xa, 1), 3);
	KCHECK_EQ(fns(0xa, 2), BITS_PER_LONG);
	KCHECK_EQ(fns(~0UL, BITS_PER_LONG - 1), BITS_PER_LONG - 1);
	KCHECK_EQ(fns(~0UL, BITS_PER_LONG), BITS_PER_LONG);
	KCHECK_EQ(fns(BIT(BITS_PER_LONG - 1), 0), BITS_PER_LONG - 1);
	KCHECK_EQ(fns(~0UL, UINT_MAX), BITS_PER_LONG);
	for (int i = 0; i < 20000; i++) {
		unsigned long w = (unsigned long)rnd();
		if (i % 3 == 0)
			w &= (unsigned long)rnd();
		unsigned int n = (unsigned int)(rnd() % (BITS_PER_LONG + 2));
		KASSERT(fns(w, n) == ref_fns(w, n));
		if (w)
			KASSERT(fns(w, 0) == __ffs(w) && fns(w, hweight_long(w) - 1) == __fls(w));
	}
	KCHECK(1);
}

static int ref_order(unsigned long long count)
{
	int order = 0;

	if (count == 0)
		return -1;
	while (order < 64 && (1ULL << order) < count)
		order++;
	return order;
}

KTEST(bitops_get_count_order)
{
	static const struct {
		unsigned int count;
		int order;
	} table[] = { { 0, -1 }, { 1, 0 },	 { 2, 1 },	     { 3, 2 },	     { 4, 2 },
		      { 5, 3 },	 { 8, 3 },	 { 9, 4 },	     { 1024, 10 },   { 1025, 11 },
		      { 0x80000000u, 31 }, { 0x80000001u, 32 }, { UINT_MAX, 32 } };

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		KCHECK_EQ(get_count_order(table[i].count), table[i].order);
		KCHECK_EQ(get_count_order_long(table[i].count), table[i].order);
	}
	KCHECK_EQ(get_count_order_long(0UL), -1);
	KCHECK_EQ(get_count_order_long(~0UL), BITS_PER_LONG);
	KCHECK_EQ(get_count_order_long(BIT(BITS_PER_LONG - 1)), BITS_PER_LONG - 1);
	KCHECK_EQ(get_count_order_long(BIT(BITS_PER_LONG - 1) + 1), BITS_PER_LONG);
	for (int i = 0; i < 5000; i++) {
		unsigned long v = (unsigned long)rnd() >> (rnd() % BITS_PER_LONG);
		KASSERT(get_count_order_long(v) == ref_order(v));
		KASSERT(get_count_order((unsigned int)v) == ref_order((unsigned int)v));
		/* The order's region holds @v: 1 << order >= v > 1 << (order - 1). */
		if (v > 1 && v <= BIT(BITS_PER_LONG - 1))
			KASSERT(BIT(get_count_order_long(v)) >= v &&
				BIT(get_count_order_long(v) - 1) < v);
	}
	KCHECK(1);
}

/* ------------------------------------------------------------------------ */
/* find_nth_bit(), find_next_and_bit(), find_first_and_bit() via <linux/bitops.h> */

static unsigned long ref_nth(const bool *m, unsigned long size, unsigned long n)
{
	for (unsigned long i = 0; i < size; i++)
		if (m[i] && n-- == 0)
			return i;
	return size;
}

static unsigned long ref_next_and(const bool *a, const bool *b, unsigned long size,
				  unsigned long off)
{
	for (unsigned long i = off; i < size; i++)
		if (a[i] && b[i])
			return i;
	return size;
}

KTEST(bitops_find_nth_bit_edges)
{
	unsigned long map[3] = { 0, 0, 0 };

	/* Empty map, empty size, n past the end: @size. */
	KCHECK_EQ(find_nth_bit(map, 0, 0), 0);
	KCHECK_EQ(find_nth_bit(map, 2 * BITS_PER_LONG, 0), 2 * BITS_PER_LONG);
	map[0] = 1; /* bit 0 */
	KCHECK_EQ(find_nth_bit(map, 1, 0), 0);
	KCHECK_EQ(find_nth_bit(map, 1, 1), 1);
	KCHECK_EQ(find_nth_bit(map, 0, 0), 0); /* a size of 0 sees nothing */
	/* The last bit of a word and the first of the next. */
	map[0] |= BIT(BITS_PER_LONG - 1);
	map[1] = 1;
	KCHECK_EQ(find_nth_bit(map, 2 * BITS_PER_LONG, 1), BITS_PER_LONG - 1);
	KCHECK_EQ(find_nth_bit(map, 2 * BITS_PER_LONG, 2), BITS_PER_LONG);
	KCHECK_EQ(find_nth_bit(map, 2 * BITS_PER_LONG, 3), 2 * BITS_PER_LONG);
	/* Bits at or past @size do not count, even in the last word. */
	map[1] = ~0UL;
	KCHECK_EQ(find_nth_bit(map, BITS_PER_LONG + 3, 4), BITS_PER_LONG + 2);
	KCHECK_EQ(find_nth_bit(map, BITS_PER_LONG + 3, 5), BITS_PER_LONG + 3);
	KCHECK_EQ(find_nth_bit(map, BITS_PER_LONG + 3, ~0UL), BITS_PER_LONG + 3);
	/* n = 0 is find_first_bit(). */
	map[0] = 0;
	KCHECK_EQ(find_nth_bit(map, 3 * BITS_PER_LONG, 0), find_first_bit(map, 3 * BITS_PER_LONG));
}

KTEST(bitops_find_and_edges)
{
	unsigned long a[2] = { 0, 0 }, b[2] = { 0, 0 };

	KCHECK_EQ(find_first_and_bit(a, b, 2 * BITS_PER_LONG), 2 * BITS_PER_LONG);
	a[0] = 0x6; /* bits 1, 2 */
	b[0] = 0x5; /* bits 0, 2 */
	KCHECK_EQ(find_first_and_bit(a, b, 2 * BITS_PER_LONG), 2);
	KCHECK_EQ(find_next_and_bit(a, b, 2 * BITS_PER_LONG, 2), 2);
	KCHECK_EQ(find_next_and_bit(a, b, 2 * BITS_PER_LONG, 3), 2 * BITS_PER_LONG);
	KCHECK_EQ(find_first_and_bit(a, b, 2), 2); /* bit 2 is past a size of 2 */
	/* Across the word boundary; and in the tail past @size. */
	a[1] = b[1] = BIT(3);
	KCHECK_EQ(find_next_and_bit(a, b, 2 * BITS_PER_LONG, 3), BITS_PER_LONG + 3);
	KCHECK_EQ(find_next_and_bit(a, b, BITS_PER_LONG + 3, 3), BITS_PER_LONG + 3);
	KCHECK_EQ(find_next_and_bit(a, b, BITS_PER_LONG + 4, 3), BITS_PER_LONG + 3);
	/* Offset at or past the size. */
	KCHECK_EQ(find_next_and_bit(a, b, BITS_PER_LONG, BITS_PER_LONG), BITS_PER_LONG);
	KCHECK_EQ(find_next_and_bit(a, b, BITS_PER_LONG, ~0UL), BITS_PER_LONG);
	/* A map and itself: find_next_bit(). */
	KCHECK_EQ(find_next_and_bit(a, a, 2 * BITS_PER_LONG, 0), 1);
}

KTEST(bitops_find_model_random)
{
	for (size_t s = 0; s < NSIZES; s++) {
		unsigned long size = sizes[s];
		for (int round = 0; round < 300; round++) {
			unsigned long a[MAXW], b[MAXW];
			bool ma[MAXB + 1], mb[MAXB + 1];
			unsigned long weight = 0;

			random_map(a, ma, size);
			random_map(b, mb, size);
			for (unsigned long i = 0; i < size; i++)
				weight += ma[i];
			/* Every n up to the weight, and a few past it. */
			for (unsigned long n = 0; n < weight + 3; n += 1 + (unsigned long)(rnd() % 3))
				KASSERT(find_nth_bit(a, size, n) == ref_nth(ma, size, n));
			KASSERT(find_nth_bit(a, size, weight) == size);
			for (int k = 0; k < 8; k++) {
				unsigned long off = (unsigned long)(rnd() % (size + 3));
				KASSERT(find_next_and_bit(a, b, size, off) ==
					ref_next_and(ma, mb, size, off));
			}
			KASSERT(find_first_and_bit(a, b, size) == ref_next_and(ma, mb, size, 0));
		}
	}
	KCHECK(1);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
