/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/bitops.h - single-bit operations and bit searches on word arrays
 *
 * A bitmap is an array of unsigned long; bit @nr lives in word
 * @nr / KSYNC_BITS_PER_LONG at position @nr % KSYNC_BITS_PER_LONG, as in the
 * kernel. Ordering follows the kernel's Documentation/atomic_bitops.txt:
 *
 *  - ksync_set_bit(), ksync_clear_bit(), ksync_change_bit(): atomic, but
 *    UNORDERED (bracket them with ksync_smp_mb__before_atomic() /
 *    ksync_smp_mb__after_atomic() when ordering is needed);
 *  - ksync_test_and_set_bit(), ksync_test_and_clear_bit(),
 *    ksync_test_and_change_bit(): atomic and FULLY ORDERED, as if a
 *    ksync_smp_mb() stood before and after them (whether or not they change
 *    the bit, unlike the kernel, where a failed test_and_set_bit may be
 *    unordered: ksync gives the stronger guarantee);
 *  - ksync___set_bit(), ksync___clear_bit(), ksync___change_bit(): NOT atomic;
 *    only for words that no other thread reads or writes meanwhile;
 *  - ksync_test_bit(): a single untorn, unordered load of the word.
 *
 * The searches (ksync_find_*_bit(), ksync_for_each_*_bit()) read each word
 * once through the atomics layer, so they may run concurrently with the
 * atomic operations above: each word is seen as it was at some moment during
 * the search, a bit flipping meanwhile may or may not be reported. Searches
 * return @size when nothing is found, and never report a bit at or past
 * @size even if the last word holds one.
 *
 * Whole-map operations (ksync_bitmap_*) and the size-checked, growable maps
 * of the shrinker live in <ksync/bitmap.h>.
 */
#ifndef KSYNC_BITOPS_H
#define KSYNC_BITOPS_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>
#include <ksync/math.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

/* Bits per word as an unsigned long, so index arithmetic stays unsigned. */
#define KSYNC__BPL ((unsigned long)KSYNC_BITS_PER_LONG)

/** KSYNC_BIT_MASK() - the mask of bit @nr within its word. */
#define KSYNC_BIT_MASK(nr) (1UL << ((nr) % KSYNC__BPL))
/** KSYNC_BIT_WORD() - the index of the word that holds bit @nr. */
#define KSYNC_BIT_WORD(nr) ((nr) / KSYNC__BPL)

/* ------------------------------------------------------------------------ */
/* Atomic single-bit operations                                              */

/**
 * ksync_set_bit() - atomically set bit @nr of the bitmap at @addr.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Unordered: other accesses may be reordered around it.
 */
static KSYNC_ALWAYS_INLINE void ksync_set_bit(unsigned long nr, unsigned long *addr)
{
	ksync_ulong_or(&addr[KSYNC_BIT_WORD(nr)], KSYNC_BIT_MASK(nr));
}

/**
 * ksync_clear_bit() - atomically clear bit @nr of the bitmap at @addr.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Unordered. Use ksync_test_and_clear_bit() when the old value or ordering matters.
 */
static KSYNC_ALWAYS_INLINE void ksync_clear_bit(unsigned long nr, unsigned long *addr)
{
	ksync_ulong_andnot(&addr[KSYNC_BIT_WORD(nr)], KSYNC_BIT_MASK(nr));
}

/**
 * ksync_change_bit() - atomically flip bit @nr of the bitmap at @addr.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Unordered.
 */
static KSYNC_ALWAYS_INLINE void ksync_change_bit(unsigned long nr, unsigned long *addr)
{
	ksync_ulong_xor(&addr[KSYNC_BIT_WORD(nr)], KSYNC_BIT_MASK(nr));
}

/**
 * ksync_test_and_set_bit() - atomically set bit @nr and return its old value.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Fully ordered. Return: true if the bit was already set.
 */
static KSYNC_ALWAYS_INLINE bool ksync_test_and_set_bit(unsigned long nr, unsigned long *addr)
{
	return ksync_ulong_test_and_set_bit(&addr[KSYNC_BIT_WORD(nr)],
					    (unsigned)(nr % KSYNC__BPL));
}

/**
 * ksync_test_and_clear_bit() - atomically clear bit @nr and return its old value.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Fully ordered. Return: true if the bit was set.
 */
static KSYNC_ALWAYS_INLINE bool ksync_test_and_clear_bit(unsigned long nr, unsigned long *addr)
{
	return ksync_ulong_test_and_clear_bit(&addr[KSYNC_BIT_WORD(nr)],
					      (unsigned)(nr % KSYNC__BPL));
}

/**
 * ksync_test_and_change_bit() - atomically flip bit @nr and return its old value.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Fully ordered. Return: true if the bit was set before the flip.
 */
static KSYNC_ALWAYS_INLINE bool ksync_test_and_change_bit(unsigned long nr, unsigned long *addr)
{
	return ksync_ulong_test_and_change_bit(&addr[KSYNC_BIT_WORD(nr)],
					       (unsigned)(nr % KSYNC__BPL));
}

/**
 * ksync_test_bit() - read bit @nr of the bitmap at @addr.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * One untorn, unordered load of the word; safe against concurrent atomic
 * updates (the answer may be stale by the time the caller acts on it).
 */
static KSYNC_ALWAYS_INLINE bool ksync_test_bit(unsigned long nr, const unsigned long *addr)
{
	return (ksync_ulong_load(&addr[KSYNC_BIT_WORD(nr)]) >> (nr % KSYNC__BPL)) & 1UL;
}

/* ------------------------------------------------------------------------ */
/* Non-atomic single-bit operations                                          */

/**
 * ksync___set_bit() - set bit @nr, non-atomically.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * The caller must own the word: no other thread may access it meanwhile,
 * not even with the atomic operations (an update racing with this plain
 * read-modify-write would be lost).
 */
static KSYNC_ALWAYS_INLINE void ksync___set_bit(unsigned long nr, unsigned long *addr)
{
	addr[KSYNC_BIT_WORD(nr)] |= KSYNC_BIT_MASK(nr);
}

/**
 * ksync___clear_bit() - clear bit @nr, non-atomically.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Same contract as ksync___set_bit().
 */
static KSYNC_ALWAYS_INLINE void ksync___clear_bit(unsigned long nr, unsigned long *addr)
{
	addr[KSYNC_BIT_WORD(nr)] &= ~KSYNC_BIT_MASK(nr);
}

/**
 * ksync___change_bit() - flip bit @nr, non-atomically.
 * @nr: the bit number
 * @addr: the bitmap
 *
 * Same contract as ksync___set_bit().
 */
static KSYNC_ALWAYS_INLINE void ksync___change_bit(unsigned long nr, unsigned long *addr)
{
	addr[KSYNC_BIT_WORD(nr)] ^= KSYNC_BIT_MASK(nr);
}

/* ------------------------------------------------------------------------ */
/* Word helpers                                                              */

/** ksync___ffs() - index of the lowest set bit of @word, which must not be 0. */
static KSYNC_ALWAYS_INLINE unsigned long ksync___ffs(unsigned long word)
{
	return (unsigned long)__builtin_ctzl(word);
}

/** ksync___fls() - index of the highest set bit of @word, which must not be 0. */
static KSYNC_ALWAYS_INLINE unsigned long ksync___fls(unsigned long word)
{
	return KSYNC__BPL - 1 - (unsigned long)__builtin_clzl(word);
}

/** ksync_hweight_long() - number of set bits in @word. */
static KSYNC_ALWAYS_INLINE unsigned int ksync_hweight_long(unsigned long word)
{
	return (unsigned int)__builtin_popcountl(word);
}

/* ------------------------------------------------------------------------ */
/* Searches                                                                  */

/*
 * The one search loop: the first bit at or after @start, below @size, whose
 * value XOR @invert is 1 (invert = 0 finds set bits, ~0UL clear ones). Each
 * word is loaded once, unordered.
 */
static inline unsigned long ksync__find_next(const unsigned long *addr, unsigned long size,
					     unsigned long start, unsigned long invert)
{
	if (ksync_unlikely(start >= size))
		return size;

	unsigned long idx = KSYNC_BIT_WORD(start);
	unsigned long word = (ksync_ulong_load(&addr[idx]) ^ invert) &
			     (~0UL << (start % KSYNC__BPL));

	for (;;) {
		if (word) {
			unsigned long bit = idx * KSYNC__BPL + ksync___ffs(word);
			return bit < size ? bit : size;
		}
		idx++;
		if (idx >= KSYNC_BITS_TO_LONGS(size))
			return size;
		word = ksync_ulong_load(&addr[idx]) ^ invert;
	}
}

/**
 * ksync_find_next_bit() - the first set bit at or after @offset.
 * @addr: the bitmap
 * @size: its size in bits; bits at or past it are ignored
 * @offset: where to start
 *
 * Return: the bit number, or @size when there is none (also when @offset >= @size).
 */
static inline unsigned long ksync_find_next_bit(const unsigned long *addr, unsigned long size,
						unsigned long offset)
{
	return ksync__find_next(addr, size, offset, 0UL);
}

/**
 * ksync_find_next_zero_bit() - the first clear bit at or after @offset.
 * @addr: the bitmap
 * @size: its size in bits
 * @offset: where to start
 *
 * Return: the bit number, or @size when there is none.
 */
static inline unsigned long ksync_find_next_zero_bit(const unsigned long *addr,
						     unsigned long size, unsigned long offset)
{
	return ksync__find_next(addr, size, offset, ~0UL);
}

/**
 * ksync_find_first_bit() - the first set bit of a bitmap of @size bits.
 * @addr: the bitmap
 * @size: its size in bits
 *
 * Return: the bit number, or @size when no bit is set.
 */
static inline unsigned long ksync_find_first_bit(const unsigned long *addr, unsigned long size)
{
	return ksync__find_next(addr, size, 0, 0UL);
}

/**
 * ksync_find_first_zero_bit() - the first clear bit of a bitmap of @size bits.
 * @addr: the bitmap
 * @size: its size in bits
 *
 * Return: the bit number, or @size when every bit is set.
 */
static inline unsigned long ksync_find_first_zero_bit(const unsigned long *addr,
						      unsigned long size)
{
	return ksync__find_next(addr, size, 0, ~0UL);
}

/**
 * ksync_find_last_bit() - the last (highest) set bit of a bitmap of @size bits.
 * @addr: the bitmap
 * @size: its size in bits
 *
 * Return: the bit number, or @size when no bit is set.
 */
static inline unsigned long ksync_find_last_bit(const unsigned long *addr, unsigned long size)
{
	if (ksync_unlikely(size == 0))
		return size;

	unsigned long idx = KSYNC_BIT_WORD(size - 1);
	/* Keep only the bits below @size in the last word. */
	unsigned long word = ksync_ulong_load(&addr[idx]) &
			     (~0UL >> ((KSYNC__BPL - size % KSYNC__BPL) % KSYNC__BPL));

	for (;;) {
		if (word)
			return idx * KSYNC__BPL + ksync___fls(word);
		if (idx == 0)
			return size;
		idx--;
		word = ksync_ulong_load(&addr[idx]);
	}
}

/**
 * ksync_for_each_set_bit() - loop over the set bits of a bitmap, ascending.
 * @bit: an unsigned long (or wider) cursor, the current bit number
 * @addr: the bitmap
 * @size: its size in bits
 *
 * @addr and @size are evaluated on every step. Bits set behind the cursor
 * during the loop are not visited; bits set ahead of it may be.
 */
#define ksync_for_each_set_bit(bit, addr, size)                                \
	for ((bit) = ksync_find_first_bit((addr), (size)); (bit) < (size);     \
	     (bit) = ksync_find_next_bit((addr), (size), (bit) + 1))

/**
 * ksync_for_each_set_bit_from() - as ksync_for_each_set_bit(), starting at @bit.
 * @bit: cursor; its value on entry is the first bit considered
 * @addr: the bitmap
 * @size: its size in bits
 *
 * Resumes a walk that dropped out (the shrinker's "restart where I was").
 */
#define ksync_for_each_set_bit_from(bit, addr, size)                           \
	for ((bit) = ksync_find_next_bit((addr), (size), (bit)); (bit) < (size); \
	     (bit) = ksync_find_next_bit((addr), (size), (bit) + 1))

/**
 * ksync_for_each_clear_bit() - loop over the clear bits of a bitmap, ascending.
 * @bit: cursor
 * @addr: the bitmap
 * @size: its size in bits
 */
#define ksync_for_each_clear_bit(bit, addr, size)                              \
	for ((bit) = ksync_find_first_zero_bit((addr), (size)); (bit) < (size); \
	     (bit) = ksync_find_next_zero_bit((addr), (size), (bit) + 1))

KSYNC_EXTERN_C_END

#endif /* KSYNC_BITOPS_H */
