/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/bitmap.h - whole-bitmap operations
 *
 * Plain bitmaps (arrays of unsigned long, as in <ksync/bitops.h>):
 * ksync_bitmap_zero/fill/copy/and/or/andnot/replace/weight/empty/full/equal,
 * ranges (ksync_bitmap_set/clear), aligned power-of-two regions
 * (ksync_bitmap_find_free_region/release_region),
 * ksync_bitmap_cut(), fields of up to a word at any offset
 * (ksync_bitmap_read/write) and conversion from and to arrays of 32- and
 * 64-bit integers, with the kernel's argument order and return values.
 *
 * Words are read and written one at a time through the atomics layer
 * (untorn, unordered), so these may run beside concurrent atomic bit
 * operations without tearing a word; they are NOT atomic, as in the kernel:
 * a concurrent ksync_set_bit() may be lost by a ksync_bitmap_copy() onto the
 * same map, or by a ksync_bitmap_set() of a range that shares its word.
 *
 * Tail bits (past @nbits in the last word) follow the kernel: the queries
 * ignore them; ksync_bitmap_zero() and ksync_bitmap_fill() write whole words
 * (fill sets the tail bits); the word-wise operations (copy, and, or, andnot,
 * replace, cut) compute them like any other bit; the conversions from arrays
 * clear them.
 *
 * Sized maps (growable, size-checked, published under SRCU) are in
 * <ksync/sized_map.h>.
 */
#ifndef KSYNC_BITMAP_H
#define KSYNC_BITMAP_H

#include <ksync/bitops.h>
#include <ksync/compiler.h>
#include <ksync/impl/atomic_words.h>
#include <ksync/impl/switches.h> /* KSYNC__ALLOC */
#include <ksync/math.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/* KSYNC_BITMAP_FIRST_WORD_MASK() and KSYNC_BITMAP_LAST_WORD_MASK() are in <ksync/bitops.h>. */

/** KSYNC_DECLARE_BITMAP() - declare @name as a bitmap of @bits bits. */
#define KSYNC_DECLARE_BITMAP(name, bits) unsigned long name[KSYNC_BITS_TO_LONGS(bits)]

/**
 * KSYNC_BITMAP_FROM_U64() - a 64-bit constant as the initializer of bitmap words.
 * @n: the value; bit i of @n becomes bit i of the map
 *
 * One word on 64-bit, two (low, high) where unsigned long has 32 bits:
 * `unsigned long map[KSYNC_BITS_TO_LONGS(64)] = { KSYNC_BITMAP_FROM_U64(x) };`
 */
#if KSYNC_BITS_PER_LONG == 64
#define KSYNC_BITMAP_FROM_U64(n) ((unsigned long)(n))
#else
#define KSYNC_BITMAP_FROM_U64(n)                                               \
	((unsigned long)((uint64_t)(n) & ~0UL)), ((unsigned long)((uint64_t)(n) >> 32))
#endif

/**
 * ksync_bitmap_zero() - clear every bit of @dst.
 * @dst: the bitmap
 * @nbits: its size in bits
 *
 * Whole words are cleared, the tail bits past @nbits in the last word too
 * (as the kernel's memset of BITS_TO_LONGS(@nbits) longs). Not atomic: each
 * word is stored once, so a concurrent ksync_set_bit() either happens before
 * (and is cleared) or after (and stays).
 */
static inline void ksync_bitmap_zero(unsigned long *dst, unsigned long nbits)
{
	for (unsigned long i = 0; i < KSYNC_BITS_TO_LONGS(nbits); i++)
		ksync_ulong_store(&dst[i], 0UL);
}

/**
 * ksync_bitmap_fill() - set every bit of @dst's words, as the kernel does.
 * @dst: the bitmap
 * @nbits: its size in bits (whole words are set)
 *
 * The tail bits, past @nbits in the last word, are set too: the kernel's
 * bitmap_fill() sets whole longs. The queries ignore them; code that reads
 * the words directly, or grows the map later, sees them set (clear them with
 * ksync_bitmap_clear() where that matters).
 */
static inline void ksync_bitmap_fill(unsigned long *dst, unsigned long nbits)
{
	for (unsigned long i = 0; i < KSYNC_BITS_TO_LONGS(nbits); i++)
		ksync_ulong_store(&dst[i], ~0UL);
}

/**
 * ksync_bitmap_copy() - copy @src to @dst, whole words.
 * @dst: destination bitmap
 * @src: source bitmap
 * @nbits: size of both in bits
 *
 * BITS_TO_LONGS(@nbits) words are copied, tail bits included, one untorn
 * load and store each; the maps must not overlap unless they are the same.
 * Not atomic as a whole: a bit set in @dst meanwhile may be overwritten.
 */
static inline void ksync_bitmap_copy(unsigned long *dst, const unsigned long *src,
				     unsigned long nbits)
{
	for (unsigned long i = 0; i < KSYNC_BITS_TO_LONGS(nbits); i++)
		ksync_ulong_store(&dst[i], ksync_ulong_load(&src[i]));
}

/*
 * @dst = @a & (@b ^ @invert), whole words: the one loop of
 * ksync_bitmap_and() (@invert 0) and ksync_bitmap_andnot() (~0UL).
 *
 * @dst may be @a or @b: each word of the operands is loaded once, before the
 * word of @dst is stored. The tail bits past @nbits are computed like the
 * others, but not counted in the result.
 *
 * Return: non-zero if the result has a bit set below @nbits.
 */
static inline unsigned long ksync__bitmap_and(unsigned long *dst, const unsigned long *a,
					      const unsigned long *b, unsigned long nbits,
					      unsigned long invert)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits), any = 0;
	for (unsigned long i = 0; i < n; i++) {
		unsigned long w = ksync_ulong_load(&a[i]) & (ksync_ulong_load(&b[i]) ^ invert);
		ksync_ulong_store(&dst[i], w);
		any |= i + 1 < n ? w : w & KSYNC_BITMAP_LAST_WORD_MASK(nbits);
	}
	return any;
}

/**
 * ksync_bitmap_and() - @dst = @a & @b.
 * @dst: destination (may be @a or @b)
 * @a: first operand
 * @b: second operand
 * @nbits: size of the maps in bits
 *
 * Whole words are written (tail bits are the AND of the operands' tails).
 *
 * Return: true if the result has any bit set below @nbits.
 */
static inline bool ksync_bitmap_and(unsigned long *dst, const unsigned long *a,
				    const unsigned long *b, unsigned long nbits)
{
	return ksync__bitmap_and(dst, a, b, nbits, 0UL) != 0;
}

/**
 * ksync_bitmap_or() - @dst = @a | @b.
 * @dst: destination (may be @a or @b)
 * @a: first operand
 * @b: second operand
 * @nbits: size of the maps in bits
 *
 * Whole words are written (tail bits are the OR of the operands' tails).
 * Nothing is returned, as in the kernel.
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
 * Whole words are written.
 *
 * Return: true if the result has any bit set below @nbits.
 */
static inline bool ksync_bitmap_andnot(unsigned long *dst, const unsigned long *a,
				       const unsigned long *b, unsigned long nbits)
{
	return ksync__bitmap_and(dst, a, b, nbits, ~0UL) != 0;
}

/**
 * ksync_bitmap_replace() - @dst = (@old_map & ~@mask) | (@new_map & @mask).
 * @dst: destination (may be any of the others)
 * @old_map: the bits kept where @mask is clear
 * @new_map: the bits taken where @mask is set
 * @mask: which bits to take from @new_map
 * @nbits: size of the maps in bits
 *
 * Whole words are written. Nothing is returned, as in the kernel.
 */
static inline void ksync_bitmap_replace(unsigned long *dst, const unsigned long *old_map,
					const unsigned long *new_map, const unsigned long *mask,
					unsigned long nbits)
{
	for (unsigned long i = 0, m; i < KSYNC_BITS_TO_LONGS(nbits); i++) {
		m = ksync_ulong_load(&mask[i]);
		ksync_ulong_store(&dst[i], (ksync_ulong_load(&old_map[i]) & ~m) |
						   (ksync_ulong_load(&new_map[i]) & m));
	}
}

/**
 * ksync_bitmap_weight() - the number of set bits below @nbits.
 * @src: the bitmap
 * @nbits: its size in bits
 *
 * Each word is loaded once; with concurrent updates the count is that of a
 * map that may never have existed as a whole.
 *
 * Return: the count; the tail bits past @nbits are not counted.
 */
static inline unsigned int ksync_bitmap_weight(const unsigned long *src, unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits);
	unsigned int w = 0;
	for (unsigned long i = 0; i < n; i++)
		w += ksync_hweight_long(ksync_ulong_load(&src[i]) &
					(i + 1 < n ? ~0UL : KSYNC_BITMAP_LAST_WORD_MASK(nbits)));
	return w;
}

/**
 * ksync_bitmap_empty() - whether no bit below @nbits is set.
 * @src: the bitmap
 * @nbits: its size in bits
 *
 * The tail bits past @nbits are ignored.
 *
 * Return: true when every bit below @nbits is clear (always for @nbits 0).
 */
static inline bool ksync_bitmap_empty(const unsigned long *src, unsigned long nbits)
{
	return ksync_find_first_bit(src, nbits) >= nbits;
}

/**
 * ksync_bitmap_full() - whether every bit below @nbits is set.
 * @src: the bitmap
 * @nbits: its size in bits
 *
 * The tail bits past @nbits are ignored.
 *
 * Return: true when every bit below @nbits is set (always for @nbits 0).
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
 *
 * The tail bits past @nbits are not compared.
 *
 * Return: true when they agree.
 */
static inline bool ksync_bitmap_equal(const unsigned long *a, const unsigned long *b,
				      unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits), d = 0;
	for (unsigned long i = 0; !d && i < n; i++)
		d = (ksync_ulong_load(&a[i]) ^ ksync_ulong_load(&b[i])) &
		    (i + 1 < n ? ~0UL : KSYNC_BITMAP_LAST_WORD_MASK(nbits));
	return !d;
}

/*
 * Bits @start..@start+@len-1 of @map take the value of @fill (0 or ~0UL):
 * the one loop of ksync_bitmap_set() and ksync_bitmap_clear().
 *
 * Each word of the range is loaded and stored once, not atomically: a
 * concurrent change to a bit outside the range, in the first or the last
 * word, may be lost. Whole words inside the range are stored the same way
 * (a load and a store), which keeps the loop simple; the range is rarely
 * more than a few words.
 */
static inline void ksync__bitmap_fill_range(unsigned long *map, unsigned long start,
					    unsigned long len, unsigned long fill)
{
	unsigned long i = KSYNC_BIT_WORD(start), last = KSYNC_BIT_WORD(start + len - 1);
	unsigned long m = KSYNC_BITMAP_FIRST_WORD_MASK(start);
	for (; len && i <= last; i++, m = ~0UL) {
		if (i == last)
			m &= KSYNC_BITMAP_LAST_WORD_MASK(start + len);
		ksync_ulong_store(&map[i], (ksync_ulong_load(&map[i]) & ~m) | (fill & m));
	}
}

/**
 * ksync_bitmap_set() - set bits @start..@start+@nbits-1 of @map.
 * @map: the bitmap (unsigned long *)
 * @start: the first bit to set
 * @nbits: how many bits to set (0: none)
 *
 * NOT atomic, as in the kernel: each word of the range is read, changed
 * and written back, so a concurrent change to another bit of the words at
 * either end may be lost. ksync___bitmap_set() is the same (the kernel's
 * __bitmap_set() is the worker behind bitmap_set(), not an atomic/non-atomic
 * pair as __set_bit() and set_bit() are). A macro; each argument is
 * evaluated once.
 */
#define ksync_bitmap_set(map, start, nbits) ksync__bitmap_fill_range((map), (start), (nbits), ~0UL)
/**
 * ksync_bitmap_clear() - clear bits @start..@start+@nbits-1 of @map.
 * @map: the bitmap (unsigned long *)
 * @start: the first bit to clear
 * @nbits: how many bits to clear (0: none)
 *
 * NOT atomic, as ksync_bitmap_set(); ksync___bitmap_clear() is the same.
 * Bits outside the range are left as they are, the tail bits of the last
 * word included. A macro; each argument is evaluated once.
 */
#define ksync_bitmap_clear(map, start, nbits) ksync__bitmap_fill_range((map), (start), (nbits), 0UL)
/** ksync___bitmap_set() - ksync_bitmap_set() (both non-atomic, as in the kernel). */
#define ksync___bitmap_set(map, start, len) ksync_bitmap_set((map), (start), (len))
/** ksync___bitmap_clear() - ksync_bitmap_clear() (both non-atomic, as in the kernel). */
#define ksync___bitmap_clear(map, start, len) ksync_bitmap_clear((map), (start), (len))

/**
 * ksync_bitmap_find_free_region() - find a clear aligned region of 2^@order bits, set it.
 * @bitmap: the bitmap
 * @bits: its size in bits; only regions wholly below it are considered
 * @order: log2 of the region's size
 *
 * Regions start at multiples of their size; the lowest one whose bits are
 * all clear is taken and set. Not atomic (a search, then
 * ksync_bitmap_set()); the caller serializes.
 *
 * Return: the first bit of the region, or -ENOMEM when no aligned region of
 * that order is clear (also when 2^@order exceeds @bits, or @order is
 * negative).
 */
static inline int ksync_bitmap_find_free_region(unsigned long *bitmap, unsigned int bits, int order)
{
	unsigned long len = order >= 0 && order < KSYNC_BITS_PER_LONG ? 1UL << order : ~0UL;
	for (unsigned long pos = 0; len <= bits - pos; pos += len)
		if (ksync_find_next_bit(bitmap, pos + len, pos) >= pos + len) {
			ksync_bitmap_set(bitmap, pos, len);
			return (int)pos;
		}
	return -ENOMEM;
}

/**
 * ksync_bitmap_release_region() - clear the 2^@order bits from @pos.
 * @bitmap: the bitmap (unsigned long *)
 * @pos: the first bit of the region
 * @order: log2 of the region's size, 0 <= @order < KSYNC_BITS_PER_LONG
 *
 * The complement of ksync_bitmap_find_free_region(); not atomic. Nothing
 * is returned. A macro; each argument is evaluated once.
 */
#define ksync_bitmap_release_region(bitmap, pos, order)                        \
	ksync_bitmap_clear((bitmap), (pos), 1UL << (order))

/**
 * ksync_bitmap_cut() - remove @cut bits at @first and shift the bits above down.
 * @dst: destination; may overlap @src partially or entirely
 * @src: source
 * @first: the first bit removed
 * @cut: how many bits are removed
 * @nbits: size of the maps in bits (whole words are written)
 *
 * Bit n of @dst is bit n of @src for n < @first, and bit n + @cut of @src
 * for n >= @first, or 0 where n + @cut is past @src's last word. As in the
 * kernel, the tail bits of @src's last word shift down like the others, so
 * they land below @nbits unless they are clear. A @first past the last word
 * just copies (the kernel would write past the map).
 */
static inline void ksync_bitmap_cut(unsigned long *dst, const unsigned long *src,
				    unsigned long first, unsigned long cut, unsigned long nbits)
{
	unsigned long len = KSYNC_BITS_TO_LONGS(nbits), w0 = KSYNC_BIT_WORD(first), i;
	unsigned long s = cut / KSYNC__BPL, r = cut % KSYNC__BPL;
	unsigned long low = ~KSYNC_BITMAP_FIRST_WORD_MASK(first); /* the bits below @first in w0 */
	unsigned long keep = w0 < len ? ksync_ulong_load(&src[w0]) & low : 0; /* before the copy */
	if ((uintptr_t)dst <= (uintptr_t)src) /* copy as memmove() does, then cut in place */
		ksync_bitmap_copy(dst, src, nbits);
	else
		for (i = len; i-- > 0;)
			ksync_ulong_store(&dst[i], ksync_ulong_load(&src[i]));
	for (i = w0; i < len; i++) { /* dst[i + s] and dst[i + s + 1] are not written yet */
		unsigned long lo = s < len - i ? ksync_ulong_load(&dst[i + s]) : 0;
		unsigned long hi = s + 1 < len - i ? ksync_ulong_load(&dst[i + s + 1]) : 0;
		unsigned long w = r ? lo >> r | hi << (KSYNC__BPL - r) : lo;
		ksync_ulong_store(&dst[i], i == w0 ? (w & ~low) | keep : w);
	}
}

/**
 * ksync_bitmap_read() - the @nbits-bit value at bit @start of @map.
 * @map: the bitmap
 * @start: the value's lowest bit, anywhere (the value may span two words)
 * @nbits: its width, 1..KSYNC_BITS_PER_LONG
 *
 * Return: the value, its bit 0 from bit @start; 0 when @nbits is 0 or
 * wider than a word (the kernel leaves that undefined).
 */
static inline unsigned long ksync_bitmap_read(const unsigned long *map, unsigned long start,
					      unsigned long nbits)
{
	unsigned long i = KSYNC_BIT_WORD(start), off = start % KSYNC__BPL, v;
	if (ksync_unlikely(!nbits || nbits > KSYNC__BPL))
		return 0;
	v = ksync_ulong_load(&map[i]) >> off;
	if (KSYNC__BPL - off < nbits)
		v |= ksync_ulong_load(&map[i + 1]) << (KSYNC__BPL - off);
	return v & KSYNC_BITMAP_LAST_WORD_MASK(nbits);
}

/**
 * ksync_bitmap_write() - store the low @nbits bits of @value at bit @start of @map.
 * @map: the bitmap
 * @value: the value; its bits at or above @nbits are ignored
 * @start: the value's lowest bit, anywhere (the value may span two words)
 * @nbits: its width, 1..KSYNC_BITS_PER_LONG; 0 or wider: nothing is written
 *
 * As if by @nbits calls of ksync___assign_bit(): no other bit changes, and
 * it is NOT atomic (the one or two words are read, changed, written back).
 */
static inline void ksync_bitmap_write(unsigned long *map, unsigned long value, unsigned long start,
				      unsigned long nbits)
{
	unsigned long i = KSYNC_BIT_WORD(start), off = start % KSYNC__BPL, sp = KSYNC__BPL - off;
	unsigned long mask = KSYNC_BITMAP_LAST_WORD_MASK(nbits);
	if (ksync_unlikely(!nbits || nbits > KSYNC__BPL))
		return;
	value &= mask;
	ksync_ulong_store(&map[i], (ksync_ulong_load(&map[i]) & ~(mask << off)) | value << off);
	if (sp < nbits)
		ksync_ulong_store(&map[i + 1],
				  (ksync_ulong_load(&map[i + 1]) & ~(mask >> sp)) | value >> sp);
}

/*
 * The conversions from and to arrays of u32 or u64: bit i of the map is bit
 * i % 32 of b32[i / 32], or bit i % 64 of b64[i / 64], whichever array is
 * given (the other is NULL), 32 bits at a time with ksync_bitmap_read() and
 * ksync_bitmap_write(). The map's words are all written, the tail bits past
 * @nbits cleared; DIV_ROUND_UP(@nbits, 32 or 64) elements of the array are
 * read or written, the bits of the last past @nbits cleared.
 */
static inline void ksync__bitmap_from_arr(unsigned long *bitmap, const uint32_t *b32,
					  const uint64_t *b64, unsigned long nbits)
{
	ksync_bitmap_zero(bitmap, nbits);
	for (unsigned long b = 0; b < nbits; b += 32)
		ksync_bitmap_write(bitmap, b32 ? b32[b / 32] : (uint32_t)(b64[b / 64] >> b % 64), b,
				   ksync_min(nbits - b, 32UL));
}
static inline void ksync__bitmap_to_arr(uint32_t *b32, uint64_t *b64, const unsigned long *bitmap,
					unsigned long nbits)
{
	for (unsigned long b = 0; b < nbits; b += 32) {
		uint32_t v = (uint32_t)ksync_bitmap_read(bitmap, b, ksync_min(nbits - b, 32UL));
		if (b32)
			b32[b / 32] = v;
		else
			b64[b / 64] = b % 64 ? b64[b / 64] | (uint64_t)v << 32 : v;
	}
}

/**
 * ksync_bitmap_from_arr32() - fill a bitmap from an array of 32-bit words.
 * @bitmap: destination, KSYNC_BITS_TO_LONGS(@nbits) words, all written
 * @buf: source, a const uint32_t *: bit i of the map is bit i % 32 of @buf[i / 32]
 * @nbits: number of bits; DIV_ROUND_UP(@nbits, 32) elements of @buf are read
 *
 * The tail bits past @nbits in the last word are cleared, as in the kernel.
 * ksync_bitmap_from_arr64() is the same for an array of 64-bit words. Both
 * are macros (the kernel's are, on some architectures).
 */
#define ksync_bitmap_from_arr32(bitmap, buf, nbits)                            \
	ksync__bitmap_from_arr((bitmap), (buf), (const uint64_t *)0, (nbits))
/** ksync_bitmap_from_arr64() - ksync_bitmap_from_arr32() from a const uint64_t *@buf. */
#define ksync_bitmap_from_arr64(bitmap, buf, nbits)                            \
	ksync__bitmap_from_arr((bitmap), (const uint32_t *)0, (buf), (nbits))
/**
 * ksync_bitmap_to_arr32() - copy a bitmap into an array of 32-bit words.
 * @buf: destination, a uint32_t *: DIV_ROUND_UP(@nbits, 32) elements, all written
 * @bitmap: source
 * @nbits: number of bits
 *
 * The bits of the last element past @nbits are cleared, as in the kernel.
 * ksync_bitmap_to_arr64() is the same for an array of 64-bit words
 * (DIV_ROUND_UP(@nbits, 64) of them). Both are macros.
 */
#define ksync_bitmap_to_arr32(buf, bitmap, nbits)                              \
	ksync__bitmap_to_arr((buf), (uint64_t *)0, (bitmap), (nbits))
/** ksync_bitmap_to_arr64() - ksync_bitmap_to_arr32() into a uint64_t *@buf. */
#define ksync_bitmap_to_arr64(buf, bitmap, nbits)                              \
	ksync__bitmap_to_arr((uint32_t *)0, (buf), (bitmap), (nbits))

/**
 * ksync_bitmap_zalloc() - allocate a cleared bitmap of @nbits bits.
 * @nbits: its size in bits
 *
 * The compiler's names for calloc/free are used: this header stays free of
 * <stdlib.h> (about 1,300 lines to every includer). A bitmap of 0 bits
 * still gets one word.
 *
 * Return: the bitmap (free it with ksync_bitmap_free()), or NULL on ENOMEM.
 */
static inline unsigned long *ksync_bitmap_zalloc(unsigned long nbits)
{
	unsigned long n = KSYNC_BITS_TO_LONGS(nbits);
	return (unsigned long *)KSYNC__ALLOC(__builtin_calloc(n ? n : 1, sizeof(unsigned long)));
}

/** ksync_bitmap_free() - free a bitmap from ksync_bitmap_zalloc(); NULL is ignored. */
static inline void ksync_bitmap_free(unsigned long *map)
{
	__builtin_free(map);
}

/* ------------------------------------------------------------------------ */
/* 8-bit clumps, gather and scatter                                         */

/**
 * ksync_bitmap_get_value8() - the 8 bits of @map at @start.
 * @map: the bitmap
 * @start: a multiple of 8 (the clump's first bit)
 *
 * Return: bits @start..@start+7 as a value 0..255.
 */
#define ksync_bitmap_get_value8(map, start) ksync_bitmap_read((map), (start), 8)

/**
 * ksync_bitmap_set_value8() - store the low 8 bits of @value at @start.
 * @map: the bitmap
 * @value: the value; bits above the low 8 are ignored
 * @start: a multiple of 8
 *
 * No other bit changes; not atomic.
 */
#define ksync_bitmap_set_value8(map, value, start) ksync_bitmap_write((map), (value), (start), 8)

/**
 * ksync_find_next_clump8() - the next 8-bit clump with a bit set.
 * @clump: where to store the clump's value
 * @addr: the bitmap
 * @size: its size in bits
 * @offset: where to start looking
 *
 * The clump is the aligned byte that holds the first set bit at or after
 * @offset; its bits at or past @size read as 0 (the kernel reads them as
 * stored).
 *
 * Return: the clump's first bit (a multiple of 8), or @size if no bit is set.
 */
static inline unsigned long ksync_find_next_clump8(unsigned long *clump, const unsigned long *addr,
						   unsigned long size, unsigned long offset)
{
	offset = ksync_find_next_bit(addr, size, offset);
	if (offset >= size)
		return size;
	offset -= offset % 8;
	*clump = ksync_bitmap_get_value8(addr, offset);
	if (size - offset < 8)
		*clump &= (1UL << (size - offset)) - 1;
	return offset;
}

/**
 * ksync_for_each_set_clump8() - loop over the 8-bit clumps that hold a set bit.
 * @start: the clump's first bit (unsigned long)
 * @clump: the clump's value (unsigned long)
 * @bits: the bitmap
 * @size: its size in bits
 */
#define ksync_for_each_set_clump8(start, clump, bits, size)                     \
	for ((start) = ksync_find_next_clump8(&(clump), (bits), (size), 0); (start) < (size); \
	     (start) = ksync_find_next_clump8(&(clump), (bits), (size), (start) + 8))

/**
 * ksync_bitmap_scatter() - spread the low bits of @src over the set bits of @mask.
 * @dst: the result, @nbits bits
 * @src: the bits to spread: bit n goes to the position of the n-th set bit of @mask
 * @mask: where they go
 * @nbits: the size of the three bitmaps
 *
 * @dst bits where @mask is clear are cleared. With @src 0x005a and @mask
 * 0x1313, @dst is 0x0302. @dst must not overlap @src or @mask.
 */
static inline void ksync_bitmap_scatter(unsigned long *dst, const unsigned long *src,
					const unsigned long *mask, unsigned long nbits)
{
	unsigned long n = 0, bit;

	ksync_bitmap_zero(dst, nbits);
	ksync_for_each_set_bit(bit, mask, nbits)
		ksync___assign_bit(bit, dst, ksync_test_bit(n++, src));
}

/**
 * ksync_bitmap_gather() - collect the bits of @src at the set bits of @mask into the low bits of @dst.
 * @dst: the result, @nbits bits: bit n is the bit of @src at the n-th set bit of @mask
 * @src: the bits to collect
 * @mask: which bits
 * @nbits: the size of the three bitmaps
 *
 * The other bits of @dst are cleared. With @src 0x0302 and @mask 0x1313,
 * @dst is 0x001a; gather after scatter with the same @mask gives back the
 * low bits. @dst must not overlap @src or @mask.
 */
static inline void ksync_bitmap_gather(unsigned long *dst, const unsigned long *src,
				       const unsigned long *mask, unsigned long nbits)
{
	unsigned long n = 0, bit;

	ksync_bitmap_zero(dst, nbits);
	ksync_for_each_set_bit(bit, mask, nbits)
		ksync___assign_bit(n++, dst, ksync_test_bit(bit, src));
}

/* ------------------------------------------------------------------------ */
/* Parsing a list of ranges                                                 */

/* A region of a list: bits start..end, the first off of every group_len. */
struct ksync__bitmap_region {
	unsigned int start, end, off, group_len, nbits;
};

static inline bool ksync__bitmap_end_of_str(char c)
{
	return c == '\0' || c == '\n';
}

static inline bool ksync__bitmap_sep(char c) /* the kernel's __end_of_region(): ',' or isspace() */
{
	return c == ',' || c == ' ' || (c >= '\t' && c <= '\r');
}

/* A decimal number or N (the last bit) into @num: the rest, or NULL with @err set. */
static inline const char *ksync__bitmap_getnum(const char *str, unsigned int *num,
					       unsigned int lastbit, int *err)
{
	unsigned long long n = 0;
	const char *p = str;
	bool overflow = false;

	if (*str == 'N') {
		*num = lastbit;
		return str + 1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (~0ULL - (unsigned long long)(*p - '0')) / 10)
			overflow = true;
		n = n * 10 + (unsigned long long)(*p - '0');
	}
	if (p == str) {
		*err = -EINVAL;
		return NULL;
	}
	if (overflow || n != (unsigned int)n) {
		*err = -EOVERFLOW;
		return NULL;
	}
	*num = (unsigned int)n;
	return p;
}

/* One region at @str (not a separator): the rest of the string, or NULL at its end or on error. */
static inline const char *ksync__bitmap_parse_region(const char *str, struct ksync__bitmap_region *r,
						     int *err)
{
	unsigned int lastbit = r->nbits - 1;

	if ((str[0] | 0x20) == 'a' && (str[1] | 0x20) == 'l' && (str[2] | 0x20) == 'l') {
		r->start = 0;
		r->end = lastbit;
		str += 3;
	} else {
		str = ksync__bitmap_getnum(str, &r->start, lastbit, err);
		if (!str)
			return NULL;
		if (ksync__bitmap_sep(*str) || ksync__bitmap_end_of_str(*str)) {
			r->end = r->start;
			goto no_pattern;
		}
		if (*str != '-')
			goto einval;
		str = ksync__bitmap_getnum(str + 1, &r->end, lastbit, err);
		if (!str)
			return NULL;
	}
	if (ksync__bitmap_sep(*str) || ksync__bitmap_end_of_str(*str))
		goto no_pattern;
	if (*str != ':')
		goto einval;
	str = ksync__bitmap_getnum(str + 1, &r->off, lastbit, err);
	if (!str)
		return NULL;
	if (*str != '/')
		goto einval;
	return ksync__bitmap_getnum(str + 1, &r->group_len, lastbit, err);
no_pattern:
	r->off = r->end + 1;
	r->group_len = r->end + 1;
	return str;
einval:
	*err = -EINVAL;
	return NULL;
}

/**
 * ksync_bitmap_parselist() - set the bits a list of ranges names.
 * @buf: a string, ending at its NUL or first newline
 * @maskp: the bitmap, @nmaskbits bits, cleared first
 * @nmaskbits: its size
 *
 * The list is regions separated by commas and white space (which may also
 * lead and trail): "5" (one bit), "0-7" (a range, both ends included),
 * "0-31:2/8" (in the range, the first 2 bits of every group of 8: 0, 1, 8,
 * 9, 16...). "all" stands for the range 0-N, N for the last bit
 * (@nmaskbits - 1): "all:1/2", "8-N", "N". Numbers are decimal.
 *
 * Return: 0; -EINVAL for a malformed region (a bad character, a range that
 * ends before it starts, a group of 0 bits or one whose used part is longer
 * than it), -ERANGE for a region past the last bit, -EOVERFLOW for a number
 * that does not fit an unsigned int. On error the regions before the bad one
 * are set, as the kernel's.
 */
static inline int ksync_bitmap_parselist(const char *buf, unsigned long *maskp, int nmaskbits)
{
	struct ksync__bitmap_region r = { 0, 0, 0, 0, (unsigned int)nmaskbits };
	int err = 0;

	ksync_bitmap_zero(maskp, (unsigned long)r.nbits);
	for (;;) {
		while (ksync__bitmap_sep(*buf) && !ksync__bitmap_end_of_str(*buf))
			buf++;
		if (ksync__bitmap_end_of_str(*buf))
			return 0;
		buf = ksync__bitmap_parse_region(buf, &r, &err);
		if (!buf)
			return err;
		if (r.start > r.end || r.group_len == 0 || r.off > r.group_len)
			return -EINVAL;
		if (r.end >= r.nbits)
			return -ERANGE;
		for (unsigned long start = r.start; start <= r.end; start += r.group_len)
			ksync_bitmap_set(maskp, start, ksync_min((unsigned long)r.end - start + 1,
								 (unsigned long)r.off));
	}
}

/* ------------------------------------------------------------------------ */
/* Hex words: parsing and printing                                          */

static inline int ksync__hex_to_bin(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/**
 * ksync_bitmap_parse() - set a bitmap from hexadecimal 32-bit words.
 * @start: the string: words of up to 8 hex digits, the most significant
 *	   first, separated by commas or white space ("1ff,ffffffff")
 * @buflen: the string's length at most; it also ends at a NUL or a newline
 * @maskp: the bitmap, @nmaskbits bits; every bit below @nmaskbits is written
 * @nmaskbits: its size
 *
 * The last word of the string is bits 0..31, the one before it 32..63, and
 * so on; words left out are 0.
 *
 * Return: 0; -EINVAL for a character that is not a hex digit; -EOVERFLOW for
 * a word of more than 8 digits, more words than the bitmap holds, or a bit
 * set at or above @nmaskbits. On error, the words already read are stored.
 */
static inline int ksync_bitmap_parse(const char *start, unsigned int buflen, unsigned long *maskp,
				     int nmaskbits)
{
	const char *end = start;
	unsigned long chunks = ((unsigned long)nmaskbits + 31) / 32, total = chunks, unset_bit;

	while ((unsigned int)(end - start) < buflen && *end && *end != '\n')
		end++;
	end--;
	for (unsigned long chunk = 0;; chunk++) {
		uint32_t num = 0;
		int i;

		while (start <= end && ksync__bitmap_sep(*end))
			end--;
		if (start > end)
			break;
		if (!chunks--)
			return -EOVERFLOW;
		for (i = 0; i < 32; i += 4) {
			int c = ksync__hex_to_bin(*end--);

			if (c < 0)
				return -EINVAL;
			num |= (uint32_t)c << i;
			if (start > end || ksync__bitmap_sep(*end))
				break;
		}
		if (i == 32 && ksync__hex_to_bin(*end) >= 0)
			return -EOVERFLOW;
		ksync_bitmap_write(maskp, num, chunk * 32, 32);
	}
	unset_bit = (total - chunks) * 32;
	if (unset_bit < (unsigned long)nmaskbits) {
		ksync_bitmap_clear(maskp, unset_bit, (unsigned long)nmaskbits - unset_bit);
		return 0;
	}
	if (ksync_find_next_bit(maskp, unset_bit, (unsigned long)nmaskbits) != unset_bit)
		return -EOVERFLOW;
	return 0;
}

/* Append @c at @pos of @buf (@size bytes, the last kept for the NUL): the next position. */
static inline unsigned long ksync__print_char(char *buf, unsigned long size, unsigned long pos, char c)
{
	if (pos + 1 < size)
		buf[pos] = c;
	return pos + 1;
}

static inline unsigned long ksync__print_num(char *buf, unsigned long size, unsigned long pos,
					     unsigned long v, unsigned base, int width)
{
	char d[24];
	int n = 0;

	do {
		d[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n < width)
		d[n++] = '0';
	while (n)
		pos = ksync__print_char(buf, size, pos, d[--n]);
	return pos;
}

/**
 * ksync_bitmap_print() - print a bitmap as the kernel's "%*pb" or "%*pbl", and a newline.
 * @list: true: a list of ranges ("0-3,5,8-15", what ksync_bitmap_parselist()
 *	  reads); false: hexadecimal 32-bit words, the most significant first,
 *	  separated by commas, the first as wide as its bits need ("1ff,ffffffff",
 *	  what ksync_bitmap_parse() reads)
 * @buf: where to write
 * @size: @buf's size in bytes; the text is cut to @size - 1 characters and
 *	  NUL-terminated (nothing is written for @size 0)
 * @maskp: the bitmap
 * @nmaskbits: its size
 *
 * Return: the characters written, without the NUL (scnprintf()'s count).
 */
static inline int ksync_bitmap_print(bool list, char *buf, unsigned long size,
				     const unsigned long *maskp, int nmaskbits)
{
	unsigned long nbits = nmaskbits > 0 ? (unsigned long)nmaskbits : 0, pos = 0;
	bool first = true;

	if (list) {
		unsigned long b = ksync_find_next_bit(maskp, nbits, 0), e;

		while (b < nbits) {
			e = ksync_find_next_zero_bit(maskp, nbits, b + 1);
			if (!first)
				pos = ksync__print_char(buf, size, pos, ',');
			first = false;
			pos = ksync__print_num(buf, size, pos, b, 10, 0);
			if (e > b + 1) {
				pos = ksync__print_char(buf, size, pos, '-');
				pos = ksync__print_num(buf, size, pos, e - 1, 10, 0);
			}
			b = e < nbits ? ksync_find_next_bit(maskp, nbits, e) : nbits;
		}
	} else if (nbits) {
		unsigned long chunksz = nbits % 32 ? nbits % 32 : 32;

		for (long i = (long)((nbits + 31) / 32 * 32) - 32; i >= 0; i -= 32) {
			unsigned long v = ksync_bitmap_read(maskp, (unsigned long)i, chunksz);

			if (!first)
				pos = ksync__print_char(buf, size, pos, ',');
			first = false;
			pos = ksync__print_num(buf, size, pos, v, 16, (int)((chunksz + 3) / 4));
			chunksz = 32;
		}
	}
	pos = ksync__print_char(buf, size, pos, '\n');
	if (!size)
		return 0;
	if (pos >= size)
		pos = size - 1;
	buf[pos] = '\0';
	return (int)pos;
}

/** KSYNC_PAGE_SIZE - the page of ksync_bitmap_print_to_pagebuf(). */
#define KSYNC_PAGE_SIZE 4096UL

/**
 * ksync_bitmap_print_to_pagebuf() - ksync_bitmap_print() into the rest of @buf's page.
 * @list: as for ksync_bitmap_print()
 * @buf: a buffer that runs at least to the end of the %KSYNC_PAGE_SIZE page
 *	 it starts in (the kernel's contract: a sysfs page)
 * @maskp: the bitmap
 * @nmaskbits: its size
 *
 * Return: the characters written, without the NUL.
 */
#define ksync_bitmap_print_to_pagebuf(list, buf, maskp, nmaskbits)              \
	ksync_bitmap_print((list), (buf),                                      \
			   KSYNC_PAGE_SIZE - ((uintptr_t)(buf) & (KSYNC_PAGE_SIZE - 1)), \
			   (maskp), (nmaskbits))

KSYNC_EXTERN_C_END

#endif /* KSYNC_BITMAP_H */
