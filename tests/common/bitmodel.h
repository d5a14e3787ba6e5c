/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/common/bitmodel.h - what the bit and bitmap tests share: map sizes
 * that meet every word boundary, and random maps (sparse, dense, runs of
 * whole words) with a plain model, one bool per bit, of their first @size
 * bits. Include after <ksync/linux/bitops.h> (test_bit, BITS_PER_LONG).
 */
#ifndef KT_BITMODEL_H
#define KT_BITMODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rng.h"

/* A map of up to KT_MAXB bits, one spare word for stray tail bits. */
#define KT_MAXB 300
#define KT_MAXW (BITS_TO_LONGS(KT_MAXB) + 1)

/* Sizes that meet every word boundary: empty, one bit, around each multiple. */
static const unsigned long kt_bit_sizes[] = { 0,
					      1,
					      2,
					      BITS_PER_LONG - 1,
					      BITS_PER_LONG,
					      BITS_PER_LONG + 1,
					      2 * BITS_PER_LONG - 1,
					      2 * BITS_PER_LONG,
					      2 * BITS_PER_LONG + 1,
					      200,
					      KT_MAXB };
#define KT_NSIZES (sizeof(kt_bit_sizes) / sizeof(kt_bit_sizes[0]))

/*
 * Random words in all KT_MAXW words of @map (past @size too), of a random
 * density: sparse, dense, whole words of one value, or even; @m gets the
 * bits below @size.
 */
static inline void kt_random_map(unsigned long *map, bool *m, unsigned long size, uint64_t *rng)
{
	unsigned int density = (unsigned int)(kt_xorshift64s(rng) % 5);

	for (unsigned long i = 0; i < KT_MAXW; i++) {
		unsigned long w = (unsigned long)kt_xorshift64s(rng);
		if (density == 0)
			w &= (unsigned long)kt_xorshift64s(rng) & (unsigned long)kt_xorshift64s(rng);
		else if (density == 1)
			w |= (unsigned long)kt_xorshift64s(rng) | (unsigned long)kt_xorshift64s(rng);
		else if (density == 2) /* long runs: whole words of one value */
			w = kt_xorshift64s(rng) % 2 ? ~0UL : 0UL;
		map[i] = w;
	}
	for (unsigned long i = 0; i < size; i++)
		m[i] = test_bit(i, map);
}

#endif /* KT_BITMODEL_H */
