/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/find.h> under its kernel spellings, through the umbrella
 * <ksync/kernel.h>, against the kernel's documented semantics: every
 * search returns @size when nothing is found and never reports a bit at or
 * past @size (garbage in the tail bits is ignored); find_next_bit_wrap()
 * searches @offset..@size-1 then 0..@offset-1; for_each_set_bit_wrap()
 * visits @start..@size-1 then 0..@start-1, each set bit once; the bit-range
 * iterators yield maximal runs [b, e); the _from forms start at the
 * cursor's value. Each is cross-checked against one bool per bit over random
 * maps of every awkward size. Built as C and C++, on both atomics back-ends.
 */
#include <ksync/kernel.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "bitmodel.h"
#include "bitref.h"
#include "rng.h"

static uint64_t rng_state = 0xbb67ae8584caa73bULL;
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


/* The kernel's find_next_bit_wrap(), on the model (offset clamped to @size). */
static unsigned long ref_wrap(const bool *m, unsigned long size, unsigned long off)
{
	unsigned long bit = kt_ref_next(m, size, off, true);

	if (bit < size || off == 0)
		return bit;
	bit = kt_ref_next(m, off < size ? off : size, 0, true);
	return bit < off && bit < size ? bit : size;
}

/* ------------------------------------------------------------------------ */

KTEST(find_basic_edges)
{
	unsigned long map[3];

	memset(map, 0, sizeof(map));
	/* Empty map: every search returns @size. */
	KCHECK_EQ(find_first_bit(map, 3 * BITS_PER_LONG), 3 * BITS_PER_LONG);
	KCHECK_EQ(find_last_bit(map, 3 * BITS_PER_LONG), 3 * BITS_PER_LONG);
	KCHECK_EQ(find_first_zero_bit(map, 3 * BITS_PER_LONG), 0);
	KCHECK_EQ(find_next_bit_wrap(map, 3 * BITS_PER_LONG, 5), 3 * BITS_PER_LONG);
	/* Size 0: nothing, whatever the map holds. */
	map[0] = ~0UL;
	KCHECK_EQ(find_first_bit(map, 0), 0);
	KCHECK_EQ(find_last_bit(map, 0), 0);
	KCHECK_EQ(find_nth_bit(map, 0, 0), 0);
	KCHECK_EQ(find_next_bit_wrap(map, 0, 0), 0);
	/* Full map: no zero bit; bit 0 and the last bit. */
	memset(map, 0xff, sizeof(map));
	KCHECK_EQ(find_first_zero_bit(map, 2 * BITS_PER_LONG + 1), 2 * BITS_PER_LONG + 1);
	KCHECK_EQ(find_next_zero_bit(map, 2 * BITS_PER_LONG + 1, 7), 2 * BITS_PER_LONG + 1);
	KCHECK_EQ(find_first_bit(map, 2 * BITS_PER_LONG + 1), 0);
	KCHECK_EQ(find_last_bit(map, 2 * BITS_PER_LONG + 1), 2 * BITS_PER_LONG);
	/* Tail bits past @size are never reported. */
	memset(map, 0, sizeof(map));
	map[1] = BIT(5);
	KCHECK_EQ(find_first_bit(map, BITS_PER_LONG + 5), BITS_PER_LONG + 5);
	KCHECK_EQ(find_last_bit(map, BITS_PER_LONG + 5), BITS_PER_LONG + 5);
	KCHECK_EQ(find_next_bit(map, BITS_PER_LONG + 6, 0), BITS_PER_LONG + 5);
	/* Offsets at and past @size. */
	KCHECK_EQ(find_next_bit(map, BITS_PER_LONG + 6, BITS_PER_LONG + 6), BITS_PER_LONG + 6);
	KCHECK_EQ(find_next_zero_bit(map, BITS_PER_LONG, ~0UL), BITS_PER_LONG);
}

KTEST(find_next_bit_wrap_semantics)
{
	unsigned long map[2] = { 0, 0 };
	const unsigned long size = BITS_PER_LONG + 10;

	__set_bit(3, map);
	__set_bit(BITS_PER_LONG + 2, map);
	/* From the middle: the next one up, or wrap to the lowest. */
	KCHECK_EQ(find_next_bit_wrap(map, size, 0), 3);
	KCHECK_EQ(find_next_bit_wrap(map, size, 3), 3);
	KCHECK_EQ(find_next_bit_wrap(map, size, 4), BITS_PER_LONG + 2);
	KCHECK_EQ(find_next_bit_wrap(map, size, BITS_PER_LONG + 3), 3);
	KCHECK_EQ(find_next_bit_wrap(map, size, size - 1), 3);
	/* Only one bit: found from anywhere; none below @offset: @size. */
	__clear_bit(BITS_PER_LONG + 2, map);
	KCHECK_EQ(find_next_bit_wrap(map, size, 4), 3);
	KCHECK_EQ(find_next_bit_wrap(map, size, 3), 3);
	__clear_bit(3, map);
	KCHECK_EQ(find_next_bit_wrap(map, size, 4), size);
	/* Past @size: the search starts at 0 (bits past @size never count). */
	__set_bit(1, map);
	map[1] = ~0UL << 10; /* every tail bit */
	KCHECK_EQ(find_next_bit_wrap(map, size, size), 1);
	KCHECK_EQ(find_next_bit_wrap(map, size, size + 40), 1);
	KCHECK_EQ(find_next_bit_wrap(map, size, 2), 1);
}

/* Visit order of for_each_set_bit_wrap() against the model. */
static void check_wrap_walk(const unsigned long *map, const bool *m, unsigned long size,
			    unsigned long start)
{
	unsigned long bit, n = 0, want = 0, expect[MAXB + 1];

	for (unsigned long i = start; i < size; i++)
		if (m[i])
			expect[want++] = i;
	for (unsigned long i = 0; i < (start < size ? start : size); i++)
		if (m[i])
			expect[want++] = i;
	for_each_set_bit_wrap(bit, map, size, start) {
		KASSERT(n < want && bit == expect[n]);
		n++;
	}
	KASSERT(n == want);
	KASSERT(bit >= size);
}

KTEST(find_for_each_set_bit_wrap)
{
	unsigned long map[2] = { 0, 0 }, bit, order[8], n = 0;
	const unsigned long size = BITS_PER_LONG + 8;

	/* Start in the middle: the upper part first, then the wrapped lower one. */
	__set_bit(0, map);
	__set_bit(5, map);
	__set_bit(BITS_PER_LONG - 1, map);
	__set_bit(BITS_PER_LONG + 7, map);
	map[1] |= BIT(9); /* a tail bit: never visited */
	for_each_set_bit_wrap(bit, map, size, 6) {
		KASSERT(n < 8);
		order[n++] = bit;
	}
	KCHECK_EQ(n, 4);
	KCHECK_EQ(order[0], BITS_PER_LONG - 1);
	KCHECK_EQ(order[1], BITS_PER_LONG + 7);
	KCHECK_EQ(order[2], 0);
	KCHECK_EQ(order[3], 5);
	/* Starting on a set bit visits it first and only once. */
	n = 0;
	for_each_set_bit_wrap(bit, map, size, 5)
		order[n++] = bit;
	KCHECK_EQ(n, 4);
	KCHECK_EQ(order[0], 5);
	KCHECK_EQ(order[3], 0);
	/* Start 0 is for_each_set_bit(); an empty map visits nothing. */
	n = 0;
	for_each_set_bit_wrap(bit, map, size, 0)
		order[n++] = bit;
	KCHECK(n == 4 && order[0] == 0 && order[3] == BITS_PER_LONG + 7);
	memset(map, 0, sizeof(map));
	n = 0;
	for_each_set_bit_wrap(bit, map, size, 3)
		n++;
	KCHECK_EQ(n, 0);
	/* A single bit just below the start is visited last and once. */
	__set_bit(2, map);
	n = 0;
	for_each_set_bit_wrap(bit, map, size, 3)
		order[n++] = bit;
	KCHECK(n == 1 && order[0] == 2);
}

KTEST(find_bitrange_edges)
{
	unsigned long map[3], b, e, runs = 0;
	unsigned long rb[8], re[8];

	/* Empty map: no set range; the whole map is one clear range. */
	memset(map, 0, sizeof(map));
	for_each_set_bitrange(b, e, map, 2 * BITS_PER_LONG)
		runs++;
	KCHECK_EQ(runs, 0);
	for_each_clear_bitrange(b, e, map, 2 * BITS_PER_LONG) {
		KASSERT(runs < 8);
		rb[runs] = b, re[runs] = e, runs++;
	}
	KCHECK(runs == 1 && rb[0] == 0 && re[0] == 2 * BITS_PER_LONG);
	/* Full map (and full tail): one set range [0, size). */
	memset(map, 0xff, sizeof(map));
	runs = 0;
	for_each_set_bitrange(b, e, map, BITS_PER_LONG + 3) {
		KASSERT(runs < 8);
		rb[runs] = b, re[runs] = e, runs++;
	}
	KCHECK(runs == 1 && rb[0] == 0 && re[0] == BITS_PER_LONG + 3);
	/* Runs across a word boundary, touching bit 0 and the last bit. */
	memset(map, 0, sizeof(map));
	bitmap_set(map, 0, 2);
	bitmap_set(map, BITS_PER_LONG - 3, 6); /* across the boundary */
	bitmap_set(map, 2 * BITS_PER_LONG - 1, 1); /* the last bit of a 2-word map */
	runs = 0;
	for_each_set_bitrange(b, e, map, 2 * BITS_PER_LONG) {
		KASSERT(runs < 8);
		rb[runs] = b, re[runs] = e, runs++;
	}
	KCHECK_EQ(runs, 3);
	KCHECK(rb[0] == 0 && re[0] == 2);
	KCHECK(rb[1] == BITS_PER_LONG - 3 && re[1] == BITS_PER_LONG + 3);
	KCHECK(rb[2] == 2 * BITS_PER_LONG - 1 && re[2] == 2 * BITS_PER_LONG);
	/* The _from forms start at the cursor, inside a run if it is one. */
	b = BITS_PER_LONG - 1;
	runs = 0;
	for_each_set_bitrange_from(b, e, map, 2 * BITS_PER_LONG) {
		KASSERT(runs < 8);
		rb[runs] = b, re[runs] = e, runs++;
	}
	KCHECK(runs == 2 && rb[0] == BITS_PER_LONG - 1 && re[0] == BITS_PER_LONG + 3);
	b = 1;
	runs = 0;
	for_each_clear_bitrange_from(b, e, map, 2 * BITS_PER_LONG) {
		KASSERT(runs < 8);
		rb[runs] = b, re[runs] = e, runs++;
	}
	KCHECK(runs == 2 && rb[0] == 2 && re[0] == BITS_PER_LONG - 3);
	KCHECK(rb[1] == BITS_PER_LONG + 3 && re[1] == 2 * BITS_PER_LONG - 1);
	/* for_each_clear_bit_from() starting on a clear bit includes it. */
	b = 2;
	runs = 0;
	for_each_clear_bit_from(b, map, 8) {
		KASSERT(runs < 8);
		rb[runs++] = b;
	}
	KCHECK(runs == 6 && rb[0] == 2 && rb[5] == 7);
}

/* Random maps: every search and iterator against the model. */
static void check_map(const unsigned long *a, const bool *ma, const unsigned long *b,
		      const bool *mb, unsigned long size)
{
	unsigned long bit, e, n, off = (unsigned long)(rnd() % (size + 3));

	KASSERT(find_first_bit(a, size) == kt_ref_next(ma, size, 0, true));
	KASSERT(find_first_zero_bit(a, size) == kt_ref_next(ma, size, 0, false));
	KASSERT(find_next_bit(a, size, off) == kt_ref_next(ma, size, off, true));
	KASSERT(find_next_zero_bit(a, size, off) == kt_ref_next(ma, size, off, false));
	KASSERT(find_last_bit(a, size) == kt_ref_last(ma, size));
	KASSERT(find_next_bit_wrap(a, size, off) == ref_wrap(ma, size, off));

	/* for_each_set_bit / _from / for_each_clear_bit / _from */
	n = 0;
	for_each_set_bit(bit, a, size) {
		KASSERT(bit == kt_ref_next(ma, size, n, true));
		n = bit + 1;
	}
	KASSERT(kt_ref_next(ma, size, n, true) == size);
	n = off;
	bit = off;
	for_each_set_bit_from(bit, a, size) {
		KASSERT(bit == kt_ref_next(ma, size, n, true));
		n = bit + 1;
	}
	KASSERT(kt_ref_next(ma, size, n, true) == size);
	n = 0;
	for_each_clear_bit(bit, a, size) {
		KASSERT(bit == kt_ref_next(ma, size, n, false));
		n = bit + 1;
	}
	KASSERT(kt_ref_next(ma, size, n, false) == size);
	n = off;
	bit = off;
	for_each_clear_bit_from(bit, a, size) {
		KASSERT(bit == kt_ref_next(ma, size, n, false));
		n = bit + 1;
	}
	KASSERT(kt_ref_next(ma, size, n, false) == size);

	/* for_each_and_bit */
	n = 0;
	for_each_and_bit(bit, a, b, size) {
		KASSERT(bit < size && ma[bit] && mb[bit]);
		for (unsigned long i = n; i < bit; i++)
			KASSERT(!(ma[i] && mb[i]));
		n = bit + 1;
	}
	for (unsigned long i = n; i < size; i++)
		KASSERT(!(ma[i] && mb[i]));

	/* The ranges: maximal runs, in order, covering exactly the set bits. */
	n = 0;
	for_each_set_bitrange(bit, e, a, size) {
		KASSERT(bit >= n && bit < e && e <= size);
		for (unsigned long i = n; i < bit; i++)
			KASSERT(!ma[i]);
		for (unsigned long i = bit; i < e; i++)
			KASSERT(ma[i]);
		KASSERT(e == size || !ma[e]);
		n = e;
	}
	for (unsigned long i = n; i < size; i++)
		KASSERT(!ma[i]);
	n = 0;
	for_each_clear_bitrange(bit, e, a, size) {
		KASSERT(bit >= n && bit < e && e <= size);
		for (unsigned long i = n; i < bit; i++)
			KASSERT(ma[i]);
		for (unsigned long i = bit; i < e; i++)
			KASSERT(!ma[i]);
		KASSERT(e == size || ma[e]);
		n = e;
	}
	for (unsigned long i = n; i < size; i++)
		KASSERT(ma[i]);
	/* _from: as the plain walk with bits below @off ignored. */
	n = off;
	bit = off;
	for_each_set_bitrange_from(bit, e, a, size) {
		KASSERT(bit == kt_ref_next(ma, size, n, true) && e == kt_ref_next(ma, size, bit, false));
		n = e;
	}
	KASSERT(kt_ref_next(ma, size, n, true) == size);
	n = off;
	bit = off;
	for_each_clear_bitrange_from(bit, e, a, size) {
		KASSERT(bit == kt_ref_next(ma, size, n, false) && e == kt_ref_next(ma, size, bit, true));
		n = e;
	}
	KASSERT(kt_ref_next(ma, size, n, false) == size);

	/* The wrapping walk from the middle, from 0, from the end and past it. */
	check_wrap_walk(a, ma, size, off);
	check_wrap_walk(a, ma, size, 0);
	check_wrap_walk(a, ma, size, size ? size - 1 : 0);
	check_wrap_walk(a, ma, size, size + 1);
}

KTEST(find_model_random)
{
	for (size_t s = 0; s < NSIZES; s++) {
		for (int round = 0; round < 400; round++) {
			unsigned long a[MAXW], b[MAXW];
			bool ma[MAXB + 1], mb[MAXB + 1];

			random_map(a, ma, sizes[s]);
			random_map(b, mb, sizes[s]);
			check_map(a, ma, b, mb, sizes[s]);
		}
	}
	KCHECK(1);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
