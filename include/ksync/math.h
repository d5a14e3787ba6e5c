/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/math.h - word-size constants and integer helpers
 *
 * KSYNC_BITS_PER_LONG, KSYNC_BITS_PER_LONG_LONG, KSYNC_BITS_TO_LONGS(),
 * KSYNC_DIV_ROUND_UP(), ksync_round_up()/ksync_round_down() (power-of-two
 * alignment, as in the kernel), ksync_min()/ksync_max() (each argument
 * evaluated once), and
 * ksync_min_t()/ksync_max_t() (arguments converted to a named type).
 */
#ifndef KSYNC_MATH_H
#define KSYNC_MATH_H

#include <ksync/compiler.h>

#include <limits.h>

#define KSYNC_BITS_PER_BYTE CHAR_BIT
/**
 * KSYNC_BITS_PER_LONG - number of bits in an unsigned long (an int).
 * Usable in #if, as kernel code does (`#if BITS_PER_LONG == 64`).
 */
#define KSYNC_BITS_PER_LONG (__SIZEOF_LONG__ * CHAR_BIT)
/** KSYNC_BITS_PER_LONG_LONG - number of bits in an unsigned long long; usable in #if. */
#define KSYNC_BITS_PER_LONG_LONG (__SIZEOF_LONG_LONG__ * CHAR_BIT)
/** KSYNC_DIV_ROUND_UP() - @n / @d rounded up; @d must be non-zero. */
#define KSYNC_DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
/** KSYNC_BITS_TO_LONGS() - longs needed to hold @nr bits. */
#define KSYNC_BITS_TO_LONGS(nr) KSYNC_DIV_ROUND_UP((nr), (sizeof(long) * CHAR_BIT))
/** ksync_round_up() - round @x up to a multiple of @y, a power of two. */
#define ksync_round_up(x, y) ((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
/** ksync_round_down() - round @x down to a multiple of @y, a power of two. */
#define ksync_round_down(x, y) ((x) & ~((__typeof__(x))((y) - 1)))

/** ksync_min() - the smaller of @a and @b, each evaluated once. */
#define ksync_min(a, b)                                                        \
	__extension__({                                                        \
		__typeof__(a) ksync__min_a = (a);                              \
		__typeof__(b) ksync__min_b = (b);                              \
		ksync__min_a < ksync__min_b ? ksync__min_a : ksync__min_b;     \
	})
/** ksync_max() - the larger of @a and @b, each evaluated once. */
#define ksync_max(a, b)                                                        \
	__extension__({                                                        \
		__typeof__(a) ksync__max_a = (a);                              \
		__typeof__(b) ksync__max_b = (b);                              \
		ksync__max_a > ksync__max_b ? ksync__max_a : ksync__max_b;     \
	})
/** ksync_min_t() - ksync_min() after converting both to @type. */
#define ksync_min_t(type, a, b) ksync_min((type)(a), (type)(b))
/** ksync_max_t() - ksync_max() after converting both to @type. */
#define ksync_max_t(type, a, b) ksync_max((type)(a), (type)(b))
/** ksync_clamp() - @v limited to [@lo, @hi]. */
#define ksync_clamp(v, lo, hi) ksync_min(ksync_max((v), (lo)), (hi))

#endif /* KSYNC_MATH_H */
