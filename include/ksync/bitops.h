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
 * ksync_assign_bit() is ksync_set_bit() or ksync_clear_bit() (atomic,
 * unordered), ksync___assign_bit() their non-atomic forms.
 *
 * The searches (ksync_find_*_bit(), ksync_for_each_*()) read each word
 * once through the atomics layer, so they may run concurrently with the
 * atomic operations above: each word is seen as it was at some moment during
 * the search, a bit flipping meanwhile may or may not be reported. Searches
 * return @size when nothing is found, and never report a bit at or past
 * @size even if the last word holds one. The iterators re-evaluate their
 * arguments at every step, as the kernel's do.
 *
 * Word helpers: KSYNC_BIT(), KSYNC_GENMASK() (bits l..h inclusive, as the
 * kernel's), ksync___ffs()/ksync___fls() (0-based, undefined for 0),
 * ksync_fns() (the n-th set bit), ksync_get_count_order() (log2 rounded up;
 * -1 for 0).
 *
 * Whole-map operations (ksync_bitmap_*) and the size-checked, growable maps
 * of the shrinker live in <ksync/bitmap.h>.
 */
#ifndef KSYNC_BITOPS_H
#define KSYNC_BITOPS_H

#include <ksync/compiler.h>
#include <ksync/impl/atomic_words.h>
#include <ksync/math.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

/* Bits per word as an unsigned long, so index arithmetic stays unsigned. */
#define KSYNC__BPL ((unsigned long)KSYNC_BITS_PER_LONG)

/** KSYNC_BIT_MASK() - the mask of bit @nr within its word. */
#define KSYNC_BIT_MASK(nr) (1UL << ((nr) % KSYNC__BPL))
/** KSYNC_BIT_WORD() - the index of the word that holds bit @nr. */
#define KSYNC_BIT_WORD(nr) ((nr) / KSYNC__BPL)
/* The position of bit @nr within its word, as the atomics layer takes it. */
#define KSYNC__BIT_POS(nr) ((unsigned)((nr) % KSYNC__BPL))
/** KSYNC_BITMAP_FIRST_WORD_MASK() - the bits of @start's word from @start up. */
#define KSYNC_BITMAP_FIRST_WORD_MASK(start) (~0UL << ((unsigned long)(start) % KSYNC__BPL))
/** KSYNC_BITMAP_LAST_WORD_MASK() - the bits of the last word that belong to an @nbits map. */
#define KSYNC_BITMAP_LAST_WORD_MASK(nbits)                                     \
	(~0UL >> ((KSYNC__BPL - (unsigned long)(nbits) % KSYNC__BPL) % KSYNC__BPL))

/** KSYNC_BIT() - the unsigned long with bit @nr set; @nr < KSYNC_BITS_PER_LONG. */
#define KSYNC_BIT(nr) (1UL << (nr))
/** KSYNC_BIT_ULL() - the unsigned long long with bit @nr set; @nr < 64. */
#define KSYNC_BIT_ULL(nr) (1ULL << (nr))

#ifdef __cplusplus
#define KSYNC__GENMASK_CHECK(h, l) 0
#else
/* True for an integer constant expression, false otherwise (never evaluates @x). */
#define KSYNC__IS_CONSTEXPR(x) (sizeof(int) == sizeof(*(8 ? ((void *)((long)(x) * 0L)) : (int *)8)))
/* In C, GENMASK(h, l) with constant l > h fails the build (as in the kernel). */
#define KSYNC__GENMASK_CHECK(h, l)                                             \
	((int)sizeof(struct { int ksync__genmask_l_above_h : __builtin_choose_expr( \
		KSYNC__IS_CONSTEXPR((l) > (h)), (l) > (h), 0) ? -1 : 1; }) * 0)
#endif
/**
 * KSYNC_GENMASK() - an unsigned long with bits @l..@h set, both included.
 * @h: the highest bit of the mask, below KSYNC_BITS_PER_LONG
 * @l: the lowest bit, at most @h
 *
 * GENMASK(15, 8) == 0xff00UL; GENMASK(KSYNC_BITS_PER_LONG - 1, 0) == ~0UL.
 * A constant expression when @h and @l are; in C, constant @l > @h fails the
 * build, as in the kernel (C++ has no such check).
 */
#define KSYNC_GENMASK(h, l)                                                    \
	(KSYNC__GENMASK_CHECK(h, l) + ((~0UL << (l)) & (~0UL >> (KSYNC__BPL - 1 - (h)))))
/** KSYNC_GENMASK_ULL() - KSYNC_GENMASK() for an unsigned long long; @h < 64. */
#define KSYNC_GENMASK_ULL(h, l)                                                \
	(KSYNC__GENMASK_CHECK(h, l) +                                          \
	 ((~0ULL << (l)) & (~0ULL >> (KSYNC_BITS_PER_LONG_LONG - 1 - (h)))))

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
	return ksync_ulong_test_and_set_bit(&addr[KSYNC_BIT_WORD(nr)], KSYNC__BIT_POS(nr));
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
	return ksync_ulong_test_and_clear_bit(&addr[KSYNC_BIT_WORD(nr)], KSYNC__BIT_POS(nr));
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
	return ksync_ulong_test_and_change_bit(&addr[KSYNC_BIT_WORD(nr)], KSYNC__BIT_POS(nr));
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

/**
 * ksync_assign_bit() - atomically set bit @nr if @value is true, else clear it.
 * @nr: the bit number
 * @addr: the bitmap
 * @value: the bit's new value (any scalar; evaluated once)
 *
 * ksync_set_bit() or ksync_clear_bit(): atomic and unordered. A macro, as in
 * the kernel.
 */
#define ksync_assign_bit(nr, addr, value)                                      \
	((value) ? ksync_set_bit((nr), (addr)) : ksync_clear_bit((nr), (addr)))
/**
 * ksync___assign_bit() - ksync_assign_bit(), non-atomically.
 * @nr: the bit number
 * @addr: the bitmap
 * @value: the bit's new value (evaluated once)
 *
 * ksync___set_bit() or ksync___clear_bit(): the caller must own the word.
 */
#define ksync___assign_bit(nr, addr, value)                                    \
	((value) ? ksync___set_bit((nr), (addr)) : ksync___clear_bit((nr), (addr)))

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

/**
 * ksync_fns() - find the @n-th set bit of @word, counting from 0.
 * @word: the word to search
 * @n: which set bit: 0 is the lowest (ksync___ffs()), 1 the next, ...
 *
 * Return: its bit number, or KSYNC_BITS_PER_LONG when @word has at most @n
 * bits set.
 */
static inline unsigned int ksync_fns(unsigned long word, unsigned int n)
{
	while (word && n--)
		word &= word - 1;
	return word ? (unsigned int)ksync___ffs(word) : (unsigned int)KSYNC__BPL;
}

/**
 * ksync_get_count_order_long() - the order of @count: log2 rounded up.
 * @count: the count
 *
 * 1 -> 0, 2 -> 1, 3 and 4 -> 2, 5 -> 3: the smallest order with
 * 1 << order >= @count. ksync_get_count_order() is the same for an
 * unsigned int.
 *
 * Return: that order; -1 when @count is 0.
 */
static KSYNC_ALWAYS_INLINE int ksync_get_count_order_long(unsigned long count)
{
	return count > 1 ? KSYNC_BITS_PER_LONG - __builtin_clzl(count - 1) : (int)count - 1;
}
/** ksync_get_count_order() - the order of @count (log2 rounded up); -1 for 0. */
static KSYNC_ALWAYS_INLINE int ksync_get_count_order(unsigned int count)
{
	return ksync_get_count_order_long(count);
}

/* ------------------------------------------------------------------------ */
/* Searches                                                                  */

/* No second map: ksync__find_next() searches @addr alone. */
#define KSYNC__NO_MAP ((const unsigned long *)0)
/* Word @i as ksync__find_next() searches it. */
#define KSYNC__FIND_WORD(addr, and_addr, i, invert)                            \
	((ksync_ulong_load(&(addr)[i]) ^ (invert)) &                           \
	 ((and_addr) ? ksync_ulong_load(&(and_addr)[i]) : ~0UL))

/*
 * The one search loop: the first bit at or after @start, below @size, whose
 * value XOR @invert is 1 (invert = 0 finds set bits, ~0UL clear ones) and
 * that is set in @and_addr too unless that is KSYNC__NO_MAP. Each word is
 * loaded once, unordered.
 */
static inline unsigned long ksync__find_next(const unsigned long *addr,
					     const unsigned long *and_addr, unsigned long size,
					     unsigned long start, unsigned long invert)
{
	if (ksync_unlikely(start >= size))
		return size;
	unsigned long idx = KSYNC_BIT_WORD(start);
	unsigned long word = KSYNC__FIND_WORD(addr, and_addr, idx, invert) &
			     KSYNC_BITMAP_FIRST_WORD_MASK(start);
	for (;;) {
		if (word) {
			unsigned long bit = idx * KSYNC__BPL + ksync___ffs(word);
			return bit < size ? bit : size;
		}
		if (++idx >= KSYNC_BITS_TO_LONGS(size))
			return size;
		word = KSYNC__FIND_WORD(addr, and_addr, idx, invert);
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
	return ksync__find_next(addr, KSYNC__NO_MAP, size, offset, 0UL);
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
	return ksync__find_next(addr, KSYNC__NO_MAP, size, offset, ~0UL);
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
	return ksync__find_next(addr, KSYNC__NO_MAP, size, 0, 0UL);
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
	return ksync__find_next(addr, KSYNC__NO_MAP, size, 0, ~0UL);
}

/**
 * ksync_find_next_and_bit() - the first bit at or after @offset set in both maps.
 * @addr1: the first bitmap
 * @addr2: the second bitmap
 * @size: their size in bits
 * @offset: where to start
 *
 * Return: the bit number, or @size when there is none.
 */
static inline unsigned long ksync_find_next_and_bit(const unsigned long *addr1,
						    const unsigned long *addr2, unsigned long size,
						    unsigned long offset)
{
	return ksync__find_next(addr1, addr2, size, offset, 0UL);
}

/**
 * ksync_find_first_and_bit() - the first bit set in both maps.
 * @addr1: the first bitmap
 * @addr2: the second bitmap
 * @size: their size in bits
 *
 * ksync_find_next_and_bit() from bit 0 (a macro).
 *
 * Return: the bit number, or @size when there is none.
 */
#define ksync_find_first_and_bit(addr1, addr2, size)                           \
	ksync_find_next_and_bit((addr1), (addr2), (size), 0)

/**
 * ksync_find_nth_bit() - the @n-th set bit of a bitmap, counting from 0.
 * @addr: the bitmap
 * @size: its size in bits
 * @n: which set bit: ksync_find_nth_bit(addr, size, 0) is ksync_find_first_bit()
 *
 * Return: the bit number, or @size when fewer than @n + 1 bits are set
 * below @size (the kernel promises only ">= @size"; this is exactly @size).
 */
static inline unsigned long ksync_find_nth_bit(const unsigned long *addr, unsigned long size,
					       unsigned long n)
{
	for (unsigned long i = 0, word, w; n < size && i < KSYNC_BITS_TO_LONGS(size); i++, n -= w) {
		word = ksync_ulong_load(&addr[i]);
		if (n < (w = ksync_hweight_long(word))) /* in this word */
			return ksync_min(i * KSYNC__BPL + ksync_fns(word, (unsigned int)n), size);
	}
	return size;
}

/*
 * The wrapping search: the next set bit in the order @start..@size-1, then
 * 0..@start-1 (0..@size-1 when @start >= @size), from position @n of that
 * order: @n > @start is in the first part, @n <= @start in the second (@n ==
 * @start is the step after bit @start - 1: the end), and KSYNC__WRAP_BEGIN is
 * the beginning, @start itself. Never reads at or past @size.
 * Return: the bit, or @size when there is none left.
 */
#define KSYNC__WRAP_BEGIN (~0UL)
static inline unsigned long ksync__find_wrap(const unsigned long *addr, unsigned long size,
					     unsigned long start, unsigned long n)
{
	unsigned long bit, lim = start < size ? start : size;
	if (n > start || n == KSYNC__WRAP_BEGIN) { /* in @start..@size-1 */
		bit = ksync_find_next_bit(addr, size, n == KSYNC__WRAP_BEGIN ? start : n);
		if (bit < size)
			return bit;
		n = 0;
	}
	bit = ksync_find_next_bit(addr, lim, n); /* in 0..@start-1 */
	return bit < lim ? bit : size;
}

/**
 * ksync_find_next_bit_wrap() - the first set bit at or after @offset, wrapping.
 * @addr: the bitmap
 * @size: its size in bits
 * @offset: where to start; at or past @size, the search starts at bit 0
 *
 * Searches @offset..@size-1, then 0..@offset-1 (the kernel's reads bits
 * @size..@offset-1 too when @offset > @size; this one never reads past
 * @size). A macro; each argument is evaluated once.
 *
 * Return: the bit number, or @size when no bit below @size is set.
 */
#define ksync_find_next_bit_wrap(addr, size, offset)                           \
	ksync__find_wrap((addr), (size), (offset), KSYNC__WRAP_BEGIN)

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
	unsigned long idx = KSYNC_BIT_WORD(size - 1); /* the last word: only its bits below @size */
	unsigned long word = ksync_ulong_load(&addr[idx]) & KSYNC_BITMAP_LAST_WORD_MASK(size);
	for (;;) {
		if (word)
			return idx * KSYNC__BPL + ksync___fls(word);
		if (idx == 0)
			return size;
		word = ksync_ulong_load(&addr[--idx]);
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

/**
 * ksync_for_each_clear_bit_from() - as ksync_for_each_clear_bit(), starting at @bit.
 * @bit: cursor; its value on entry is the first bit considered
 * @addr: the bitmap
 * @size: its size in bits
 */
#define ksync_for_each_clear_bit_from(bit, addr, size)                         \
	for ((bit) = ksync_find_next_zero_bit((addr), (size), (bit)); (bit) < (size); \
	     (bit) = ksync_find_next_zero_bit((addr), (size), (bit) + 1))

/**
 * ksync_for_each_and_bit() - loop over the bits set in both @addr1 and @addr2.
 * @bit: cursor
 * @addr1: the first bitmap
 * @addr2: the second bitmap
 * @size: their size in bits
 */
#define ksync_for_each_and_bit(bit, addr1, addr2, size)                        \
	for ((bit) = ksync_find_first_and_bit((addr1), (addr2), (size)); (bit) < (size); \
	     (bit) = ksync_find_next_and_bit((addr1), (addr2), (size), (bit) + 1))

/**
 * ksync_for_each_set_bitrange() - loop over the runs of set bits, [@b, @e).
 * @b: cursor, the first bit of the run (set)
 * @e: cursor, the bit after the run (clear, or @size)
 * @addr: the bitmap
 * @size: its size in bits
 *
 * Each maximal run of set bits below @size is visited once, ascending; on
 * exit @b is at least @size.
 */
#define ksync_for_each_set_bitrange(b, e, addr, size)                          \
	for ((b) = 0; (b) = ksync_find_next_bit((addr), (size), (b)),           \
	     (e) = ksync_find_next_zero_bit((addr), (size), (b) + 1), (b) < (size); \
	     (b) = (e) + 1)

/**
 * ksync_for_each_set_bitrange_from() - ksync_for_each_set_bitrange() from @b.
 * @b: cursor; its value on entry is the first bit considered (a run that
 *     began before it is visited from @b on)
 * @e: cursor, the bit after the run
 * @addr: the bitmap
 * @size: its size in bits
 */
#define ksync_for_each_set_bitrange_from(b, e, addr, size)                     \
	for (; (b) = ksync_find_next_bit((addr), (size), (b)),                  \
	     (e) = ksync_find_next_zero_bit((addr), (size), (b) + 1), (b) < (size); \
	     (b) = (e) + 1)

/**
 * ksync_for_each_clear_bitrange() - loop over the runs of clear bits, [@b, @e).
 * @b: cursor, the first bit of the run (clear)
 * @e: cursor, the bit after the run (set, or @size)
 * @addr: the bitmap
 * @size: its size in bits
 */
#define ksync_for_each_clear_bitrange(b, e, addr, size)                        \
	for ((b) = 0; (b) = ksync_find_next_zero_bit((addr), (size), (b)),      \
	     (e) = ksync_find_next_bit((addr), (size), (b) + 1), (b) < (size);   \
	     (b) = (e) + 1)

/**
 * ksync_for_each_clear_bitrange_from() - ksync_for_each_clear_bitrange() from @b.
 * @b: cursor; its value on entry is the first bit considered
 * @e: cursor, the bit after the run
 * @addr: the bitmap
 * @size: its size in bits
 */
#define ksync_for_each_clear_bitrange_from(b, e, addr, size)                   \
	for (; (b) = ksync_find_next_zero_bit((addr), (size), (b)),             \
	     (e) = ksync_find_next_bit((addr), (size), (b) + 1), (b) < (size);   \
	     (b) = (e) + 1)

/**
 * ksync_for_each_set_bit_wrap() - loop over the set bits from @start, wrapping.
 * @bit: cursor
 * @addr: the bitmap
 * @size: its size in bits
 * @start: the first bit considered: bits @start..@size-1 are visited, then
 *         0..@start-1 (with @start >= @size: 0..@size-1)
 *
 * Each set bit is visited at most once.
 */
#define ksync_for_each_set_bit_wrap(bit, addr, size, start)                    \
	for ((bit) = ksync_find_next_bit_wrap((addr), (size), (start)); (bit) < (size); \
	     (bit) = ksync__find_wrap((addr), (size), (start), (bit) + 1))

KSYNC_EXTERN_C_END

#endif /* KSYNC_BITOPS_H */
