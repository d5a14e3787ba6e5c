/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every bit index and every boundary constant, as compile-time constants, in
 * every word-sized atomic of both back-ends and at every optimisation level
 * (the build compiles this file at -O0, -O1, -O2, -O3 and -Os, on CK and on
 * the builtins).
 *
 * Regression: CK's x86-64 assembly accepted unsigned 32-bit immediates for
 * the 64-bit `orq`/`xorq`/`addq`/`andq`, which only encode sign-extended
 * 32-bit ones, so set_bit(31, map), change_bit(31, map),
 * atomic_long_or(0x80000000L, v) and atomic_long_add(0x80000000L, v) did
 * not assemble at -O1 and above ("operand type mismatch for `or'"). This
 * file failing to build is the failure; the run checks the values.
 */
#include <ksync/kernel.h>

#include <stdint.h>

#include "ktest.h"

#define REP8(X, b) X(b + 0) X(b + 1) X(b + 2) X(b + 3) X(b + 4) X(b + 5) X(b + 6) X(b + 7)
#define REP64(X)                                                               \
	REP8(X, 0) REP8(X, 8) REP8(X, 16) REP8(X, 24) REP8(X, 32) REP8(X, 40) REP8(X, 48) REP8(X, 56)

static unsigned long map[2];

KTEST(every_constant_bit_index)
{
	int bad = 0;
	map[0] = map[1] = 0;
	/* Literal indices: each expansion is a separate constant operand. */
#define ONE_BIT(nr)                                                            \
	set_bit(nr, map);                                                      \
	bad += map[0] != 1UL << (nr);                                          \
	change_bit(nr, map);                                                   \
	bad += map[0] != 0;                                                    \
	change_bit(nr, map);                                                   \
	clear_bit(nr, map);                                                    \
	bad += map[0] != 0;                                                    \
	bad += test_and_set_bit(nr, map) != 0;                                 \
	bad += test_and_change_bit(nr, map) != 1;                              \
	bad += test_and_change_bit(nr, map) != 0;                              \
	bad += test_and_clear_bit(nr, map) != 1;                               \
	set_bit(64 + (nr), map);                                               \
	bad += map[1] != 1UL << (nr) || map[0] != 0;                           \
	clear_bit(64 + (nr), map);
	REP64(ONE_BIT)
#undef ONE_BIT
	KCHECK_EQ(bad, 0);
	KCHECK_EQ(map[0], 0);
	KCHECK_EQ(map[1], 0);
}

/* The constants around each immediate-encoding boundary. */
#define BOUNDARIES(X)                                                          \
	X(0x7fL) X(0x80L) X(0xffL) X(0x7fffL) X(0x8000L) X(0xffffL)            \
	X(0x7fffffffL) X(0x80000000L) X(0x80000001L) X(0xfffffffeL)            \
	X(0xffffffffL) X(0x100000000L) X(0x7fffffffffffffffL) X(-1L)           \
	X(-0x80000000L) X(-0x80000001L) X(-0x100000000L) X(INT64_MIN)

KTEST(long_ops_boundary_constants)
{
	ksync_atomic_long_t v = KSYNC_ATOMIC_INIT(0);
	int bad = 0;

#define ONE_CONST(c)                                                           \
	{                                                                      \
		const unsigned long k = (unsigned long)(long)(c);              \
		ksync_atomic_long_set(&v, 0x5a5a5a5a5a5a5a5aL);                \
		ksync_atomic_long_or((long)(c), &v);                           \
		bad += (unsigned long)ksync_atomic_long_read(&v) != (0x5a5a5a5a5a5a5a5aUL | k); \
		ksync_atomic_long_xor((long)(c), &v);                          \
		bad += (unsigned long)ksync_atomic_long_read(&v) !=            \
		       ((0x5a5a5a5a5a5a5a5aUL | k) ^ k);                       \
		ksync_atomic_long_and((long)(c), &v);                          \
		bad += (unsigned long)ksync_atomic_long_read(&v) !=            \
		       (((0x5a5a5a5a5a5a5a5aUL | k) ^ k) & k);                 \
		ksync_atomic_long_set(&v, 3);                                  \
		ksync_atomic_long_add((long)(c), &v);                          \
		bad += (unsigned long)ksync_atomic_long_read(&v) != 3UL + k;   \
		ksync_atomic_long_sub((long)(c), &v);                          \
		bad += ksync_atomic_long_read(&v) != 3;                        \
		atomic_long_set(&v, 0);                                        \
		atomic_long_or((long)(c), &v);                                 \
		atomic_long_add((long)(c), &v);                                \
		bad += (unsigned long)atomic_long_read(&v) != k + k;           \
		unsigned long w = 0;                                           \
		ksync_ulong_or(&w, k);                                         \
		ksync_ulong_xor(&w, k);                                        \
		ksync_ulong_or(&w, k);                                         \
		ksync_ulong_andnot(&w, k);                                     \
		ksync_ulong_add(&w, k);                                        \
		bad += w != k;                                                 \
	}
	BOUNDARIES(ONE_CONST)
#undef ONE_CONST
	KCHECK_EQ(bad, 0);
}

KTEST(int_ops_boundary_constants)
{
	ksync_atomic_t v = KSYNC_ATOMIC_INIT(0);
	int bad = 0;

#define ONE_INT(c)                                                             \
	{                                                                      \
		const unsigned int k = (unsigned int)(c);                      \
		ksync_atomic_set(&v, 0);                                       \
		ksync_atomic_or((int)(c), &v);                                 \
		ksync_atomic_xor((int)(c), &v);                                \
		ksync_atomic_or((int)(c), &v);                                 \
		ksync_atomic_and((int)(c), &v);                                \
		ksync_atomic_add((int)(c), &v);                                \
		bad += (unsigned int)ksync_atomic_read(&v) != k + k;           \
	}
	ONE_INT(0x7f) ONE_INT(0x80) ONE_INT(0x7fffffff) ONE_INT(0x80000000u)
	ONE_INT(0xffffffffu) ONE_INT(-1)
#undef ONE_INT
	KCHECK_EQ(bad, 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
