/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/bitmap.h - whole-bitmap operations
 *
 * Plain bitmaps (arrays of unsigned long, as in <ksync/bitops.h>):
 * ksync_bitmap_zero/fill/copy/and/or/andnot/weight/empty/full/equal, with the
 * kernel's argument order and return values. Words are read and written one
 * at a time through the atomics layer (untorn, unordered), so these may run
 * beside concurrent atomic bit operations without tearing a word; they are
 * not atomic as a whole (a concurrent ksync_set_bit() may be lost by a
 * ksync_bitmap_copy() onto the same map, for instance). Bits past @nbits in
 * the last word are ignored by the queries; ksync_bitmap_fill() sets none of
 * them.
 *
 * Sized maps (growable, size-checked, published under SRCU) are in
 * <ksync/sized_map.h>.
 */
#ifndef KSYNC_BITMAP_H
#define KSYNC_BITMAP_H

#include <ksync/atomic.h>
#include <ksync/bitops.h>
#include <ksync/compiler.h>
#include <ksync/math.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/** KSYNC_BITMAP_LAST_WORD_MASK() - the bits of the last word that belong to an @nbits map. */
#define KSYNC_BITMAP_LAST_WORD_MASK(nbits)                                     \
	(~0UL >> ((KSYNC__BPL - (unsigned long)(nbits) % KSYNC__BPL) % KSYNC__BPL))

/** KSYNC_DECLARE_BITMAP() - declare @name as a bitmap of @bits bits. */
#define KSYNC_DECLARE_BITMAP(name, bits) unsigned long name[KSYNC_BITS_TO_LONGS(bits)]

/**
 * ksync_bitmap_zero() - clear every bit of @dst.
 * @dst: the bitmap
 * @nbits: its size in bits (whole words are cleared)
 */
static inline void ksync_bitmap_zero(unsigned long *dst, unsigned long nbits)
{
	for (unsigned long i = 0; i < KSYNC_BITS_TO_LONGS(nbits); i++)
		ksync_ulong_store(&dst[i], 0UL);
}

/**
 * ksync_bitmap_fill() - set bits 0..@nbits-1 of @dst; the rest of the last word is cleared.
 * @dst: the bitmap
 * @nbits: its size in bits
 */
static inline void ksync_bitmap_fill(unsigned long *dst, unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits);

	for (unsigned long i = 0; i < n; i++)
		ksync_ulong_store(&dst[i], ~0UL);
	if (n)
		ksync_ulong_store(&dst[n - 1], KSYNC_BITMAP_LAST_WORD_MASK(nbits));
}

/**
 * ksync_bitmap_copy() - copy @src to @dst, whole words.
 * @dst: destination bitmap
 * @src: source bitmap
 * @nbits: size of both in bits
 */
static inline void ksync_bitmap_copy(unsigned long *dst, const unsigned long *src,
				     unsigned long nbits)
{
	for (unsigned long i = 0; i < KSYNC_BITS_TO_LONGS(nbits); i++)
		ksync_ulong_store(&dst[i], ksync_ulong_load(&src[i]));
}

/**
 * ksync_bitmap_and() - @dst = @a & @b.
 * @dst: destination (may be @a or @b)
 * @a: first operand
 * @b: second operand
 * @nbits: size of the maps in bits
 *
 * Return: true if the result has any bit set (below @nbits).
 */
static inline bool ksync_bitmap_and(unsigned long *dst, const unsigned long *a,
				    const unsigned long *b, unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits), any = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long w = ksync_ulong_load(&a[i]) & ksync_ulong_load(&b[i]);
		ksync_ulong_store(&dst[i], w);
		any |= i + 1 == n ? w & KSYNC_BITMAP_LAST_WORD_MASK(nbits) : w;
	}
	return any != 0;
}

/**
 * ksync_bitmap_or() - @dst = @a | @b.
 * @dst: destination (may be @a or @b)
 * @a: first operand
 * @b: second operand
 * @nbits: size of the maps in bits
 */
static inline void ksync_bitmap_or(unsigned long *dst, const unsigned long *a,
				   const unsigned long *b, unsigned long nbits)
{
	for (unsigned long i = 0; i < KSYNC_BITS_TO_LONGS(nbits); i++)
		ksync_ulong_store(&dst[i], ksync_ulong_load(&a[i]) | ksync_ulong_load(&b[i]));
}

/**
 * ksync_bitmap_andnot() - @dst = @a & ~@b.
 * @dst: destination (may be @a or @b)
 * @a: first operand
 * @b: the bits to remove
 * @nbits: size of the maps in bits
 *
 * Return: true if the result has any bit set (below @nbits).
 */
static inline bool ksync_bitmap_andnot(unsigned long *dst, const unsigned long *a,
				       const unsigned long *b, unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits), any = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long w = ksync_ulong_load(&a[i]) & ~ksync_ulong_load(&b[i]);
		ksync_ulong_store(&dst[i], w);
		any |= i + 1 == n ? w & KSYNC_BITMAP_LAST_WORD_MASK(nbits) : w;
	}
	return any != 0;
}

/**
 * ksync_bitmap_weight() - the number of set bits below @nbits.
 * @src: the bitmap
 * @nbits: its size in bits
 */
static inline unsigned int ksync_bitmap_weight(const unsigned long *src, unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits);
	unsigned int w = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long word = ksync_ulong_load(&src[i]);
		if (i + 1 == n)
			word &= KSYNC_BITMAP_LAST_WORD_MASK(nbits);
		w += ksync_hweight_long(word);
	}
	return w;
}

/**
 * ksync_bitmap_empty() - whether no bit below @nbits is set.
 * @src: the bitmap
 * @nbits: its size in bits
 */
static inline bool ksync_bitmap_empty(const unsigned long *src, unsigned long nbits)
{
	return ksync_find_first_bit(src, nbits) >= nbits;
}

/**
 * ksync_bitmap_full() - whether every bit below @nbits is set.
 * @src: the bitmap
 * @nbits: its size in bits
 */
static inline bool ksync_bitmap_full(const unsigned long *src, unsigned long nbits)
{
	return ksync_find_first_zero_bit(src, nbits) >= nbits;
}

/**
 * ksync_bitmap_equal() - whether @a and @b agree on every bit below @nbits.
 * @a: first bitmap
 * @b: second bitmap
 * @nbits: size of both in bits
 */
static inline bool ksync_bitmap_equal(const unsigned long *a, const unsigned long *b,
				      unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits);

	for (unsigned long i = 0; i < n; i++) {
		unsigned long d = ksync_ulong_load(&a[i]) ^ ksync_ulong_load(&b[i]);
		if (i + 1 == n)
			d &= KSYNC_BITMAP_LAST_WORD_MASK(nbits);
		if (d)
			return false;
	}
	return true;
}

/**
 * ksync_bitmap_zalloc() - allocate a cleared bitmap of @nbits bits.
 * @nbits: its size in bits
 *
 * Return: the bitmap (free it with ksync_bitmap_free()), or NULL on ENOMEM.
 */
static inline unsigned long *ksync_bitmap_zalloc(unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits);
	/*
	 * The compiler's names for calloc/free: this header stays free of
	 * <stdlib.h> (about 1,300 lines to every includer).
	 */
	return (unsigned long *)__builtin_calloc(n ? n : 1, sizeof(unsigned long));
}

/** ksync_bitmap_free() - free a bitmap from ksync_bitmap_zalloc(); NULL is ignored. */
static inline void ksync_bitmap_free(unsigned long *map)
{
	__builtin_free(map);
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_BITMAP_H */
