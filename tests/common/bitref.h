/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/common/bitref.h - reference bit searches over the plain model of a
 * map (one bool per bit), which the bit tests check ksync's searches against.
 * Both return @size when nothing is found, as the kernel's searches do.
 */
#ifndef KT_BITREF_H
#define KT_BITREF_H

#include <stdbool.h>

/* The first bit at or after @off whose value is @val. */
static inline unsigned long kt_ref_next(const bool *m, unsigned long size, unsigned long off, bool val)
{
	for (unsigned long i = off; i < size; i++)
		if (m[i] == val)
			return i;
	return size;
}

/* The last set bit. */
static inline unsigned long kt_ref_last(const bool *m, unsigned long size)
{
	for (unsigned long i = size; i-- > 0;)
		if (m[i])
			return i;
	return size;
}

#endif /* KT_BITREF_H */
