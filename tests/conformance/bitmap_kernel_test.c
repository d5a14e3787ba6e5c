/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/bitmap.h> under its kernel spellings, against the kernel's
 * documented semantics: bitmap_fill() sets whole words (the tail bits too);
 * bitmap_set()/bitmap_clear() (and the __ forms, the same non-atomic
 * functions) touch exactly their range; bitmap_find_free_region() takes the
 * lowest clear region of 2^order bits aligned to its size and wholly below
 * @bits, -ENOMEM when there is none; bitmap_release_region() clears it;
 * bitmap_replace(); bitmap_cut() (in place, partially overlapping, tail bits
 * shifting down as the kernel's do); bitmap_from/to_arr32/64() (tail bits
 * cleared, the exact number of elements written); BITMAP_FROM_U64();
 * bitmap_read()/bitmap_write() of up to BITS_PER_LONG bits at any offset.
 * Edge cases first, then random operation sequences against one bool per
 * bit. Built as C and C++, on both atomics back-ends.
 */
#include <ksync/linux/bitmap.h>
#include <ksync/linux/build_bug.h>
#include <ksync/linux/math.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

static uint64_t rng_state = 0x3c6ef372fe94f82bULL;
static uint64_t rnd(void)
{
	return kt_xorshift64s(&rng_state);
}

/* Up to MAXB bits; the map is followed by a guard word that must never change. */
#define MAXB 300
#define MAXW (BITS_TO_LONGS(MAXB) + 1)
#define GUARD 0x5a5a5a5a5a5a5a5aULL

static const unsigned long sizes[] = { 1,
				       2,
				       BITS_PER_LONG - 1,
				       BITS_PER_LONG,
				       BITS_PER_LONG + 1,
				       2 * BITS_PER_LONG - 1,
				       2 * BITS_PER_LONG,
				       2 * BITS_PER_LONG + 1,
				       200,
				       MAXB };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* The whole words of the map as bits: the model covers the tail bits too. */
static void to_model(const unsigned long *map, bool *m, unsigned long words)
{
	for (unsigned long i = 0; i < words * BITS_PER_LONG; i++)
		m[i] = test_bit(i, map);
}

static bool same(const unsigned long *map, const bool *m, unsigned long nbits)
{
	for (unsigned long i = 0; i < nbits; i++)
		if (test_bit(i, map) != m[i])
			return false;
	return true;
}

static void random_words(unsigned long *map, unsigned long words)
{
	for (unsigned long i = 0; i < words; i++)
		map[i] = (unsigned long)rnd();
}

/* ------------------------------------------------------------------------ */

KTEST(bitmap_fill_whole_words)
{
	unsigned long map[4];

	for (size_t s = 0; s < NSIZES; s++) {
		unsigned long n = sizes[s], words = BITS_TO_LONGS(n);
		if (words + 1 > 4)
			continue;
		memset(map, 0, sizeof(map));
		map[words] = (unsigned long)GUARD;
		bitmap_fill(map, n);
		/* Every bit of every word, the tail bits past n included... */
		for (unsigned long i = 0; i < words; i++)
			KCHECK(map[i] == ~0UL);
		/* ...and not one word more. */
		KCHECK(map[words] == (unsigned long)GUARD);
		KCHECK(bitmap_full(map, n));
		KCHECK_EQ(bitmap_weight(map, n), n);
		/* bitmap_zero() likewise clears whole words. */
		bitmap_zero(map, n);
		for (unsigned long i = 0; i < words; i++)
			KCHECK_EQ(map[i], 0);
		KCHECK(map[words] == (unsigned long)GUARD);
	}
	/* 0 bits: no word written. */
	map[0] = 0x1234;
	bitmap_fill(map, 0);
	KCHECK_EQ(map[0], 0x1234);
}

KTEST(bitmap_set_clear_edges)
{
	unsigned long map[4];
	const unsigned long n = 3 * BITS_PER_LONG;

	memset(map, 0, sizeof(map));
	map[3] = (unsigned long)GUARD;
	/* Zero bits: nothing, even at the very end. */
	bitmap_set(map, 5, 0);
	bitmap_set(map, n, 0);
	KCHECK(bitmap_empty(map, n));
	/* Bit 0 and the last bit. */
	bitmap_set(map, 0, 1);
	bitmap_set(map, n - 1, 1);
	KCHECK(map[0] == 1UL && map[1] == 0 && map[2] == BIT(BITS_PER_LONG - 1));
	/* Across two word boundaries. */
	bitmap_set(map, BITS_PER_LONG - 2, BITS_PER_LONG + 4);
	KCHECK(map[0] == (GENMASK(BITS_PER_LONG - 1, BITS_PER_LONG - 2) | 1UL));
	KCHECK(map[1] == ~0UL);
	KCHECK(map[2] == (GENMASK(1, 0) | BIT(BITS_PER_LONG - 1)));
	KCHECK_EQ(bitmap_weight(map, n), BITS_PER_LONG + 6);
	/* Clear within one word, then across the boundary; neighbours stay. */
	bitmap_clear(map, BITS_PER_LONG + 3, 5);
	KCHECK(map[1] == ~GENMASK(7, 3));
	bitmap_clear(map, BITS_PER_LONG - 1, 2);
	KCHECK(map[0] == (BIT(BITS_PER_LONG - 2) | 1UL));
	KCHECK(map[1] == (~GENMASK(7, 3) & ~1UL));
	/* The __ forms are the same (non-atomic) operations. */
	__bitmap_clear(map, 0, n);
	KCHECK(bitmap_empty(map, n) && map[0] == 0 && map[1] == 0 && map[2] == 0);
	__bitmap_set(map, 0, n);
	KCHECK(bitmap_full(map, n) && map[2] == ~0UL);
	/* A whole map of n bits not a multiple of the word: the tail is not touched. */
	memset(map, 0, sizeof(map));
	map[3] = (unsigned long)GUARD;
	bitmap_set(map, 0, 2 * BITS_PER_LONG + 1);
	KCHECK(map[1] == ~0UL && map[2] == 1UL);
	bitmap_clear(map, 1, 2 * BITS_PER_LONG);
	KCHECK(map[0] == 1UL && map[1] == 0 && map[2] == 0);
	KCHECK(map[3] == (unsigned long)GUARD);
}

KTEST(bitmap_set_clear_model)
{
	for (int round = 0; round < 3000; round++) {
		unsigned long map[MAXW + 1];
		bool m[(MAXW + 1) * BITS_PER_LONG];
		unsigned long words = MAXW, nb = words * BITS_PER_LONG;

		random_words(map, MAXW + 1);
		to_model(map, m, MAXW + 1);
		for (int k = 0; k < 6; k++) {
			unsigned long start = (unsigned long)(rnd() % nb);
			unsigned long len = (unsigned long)(rnd() % (nb - start + 1));
			bool val = rnd() % 2;
			if (rnd() % 4 == 0) /* short ranges near a boundary */
				len = len % 5;
			if (val)
				bitmap_set(map, start, len);
			else
				bitmap_clear(map, start, len);
			for (unsigned long i = start; i < start + len; i++)
				m[i] = val;
			KASSERT(same(map, m, (MAXW + 1) * BITS_PER_LONG));
		}
	}
	KCHECK(1);
}

KTEST(bitmap_find_free_region_edges)
{
	unsigned long map[4];
	const unsigned int bits = 3 * BITS_PER_LONG;

	/* Orders 0..log2(bits): on an empty map, the region at 0. */
	for (int order = 0; (1UL << order) <= bits; order++) {
		memset(map, 0, sizeof(map));
		KCHECK_EQ(bitmap_find_free_region(map, bits, order), 0);
		KCHECK_EQ(bitmap_weight(map, bits), 1UL << order);
		KCHECK_EQ(find_first_zero_bit(map, bits), 1UL << order);
		/* The next region of that order is the next aligned one. */
		if ((2UL << order) <= bits)
			KCHECK_EQ(bitmap_find_free_region(map, bits, order), 1 << order);
		bitmap_release_region(map, 0, order);
		KCHECK_EQ(find_first_bit(map, bits), (2UL << order) <= bits ? 1UL << order : bits);
	}
	/* No region bigger than the map, none of a negative order: -ENOMEM. */
	memset(map, 0, sizeof(map));
	KCHECK_EQ(bitmap_find_free_region(map, bits, 8), -ENOMEM); /* 256 > bits on 64-bit */
	KCHECK_EQ(bitmap_find_free_region(map, 0, 0), -ENOMEM);
	KCHECK_EQ(bitmap_find_free_region(map, bits, -1), -ENOMEM);
	KCHECK_EQ(bitmap_find_free_region(map, bits, BITS_PER_LONG), -ENOMEM);
	KCHECK(bitmap_empty(map, bits));

	/* Aligned: one bit set at 1 skips the whole first region of order 2. */
	__set_bit(1, map);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 2), 4);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 0), 0);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 0), 2);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 1), 8);

	/* Regions must lie wholly below @bits: 10 bits hold one region of 8, not two. */
	memset(map, 0, sizeof(map));
	KCHECK_EQ(bitmap_find_free_region(map, 10, 3), 0);
	KCHECK_EQ(bitmap_find_free_region(map, 10, 3), -ENOMEM);
	KCHECK_EQ(bitmap_find_free_region(map, 10, 1), 8);
	KCHECK_EQ(bitmap_find_free_region(map, 10, 0), -ENOMEM); /* full */
	KCHECK(bitmap_full(map, 10));
	KCHECK_EQ(find_next_bit(map, bits, 10), bits); /* nothing set past @bits */

	/* A full map: -ENOMEM at every order, nothing changed. */
	bitmap_fill(map, bits);
	for (int order = 0; order < 6; order++)
		KCHECK_EQ(bitmap_find_free_region(map, bits, order), -ENOMEM);
	KCHECK(map[0] == ~0UL && map[2] == ~0UL);
	/* A released region (a word's second half here) is found again, in two halves. */
	bitmap_release_region(map, BITS_PER_LONG, 5);
	KCHECK_EQ(bitmap_weight(map, bits), bits - 32);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 4), BITS_PER_LONG);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 4), BITS_PER_LONG + 16);
	KCHECK_EQ(bitmap_find_free_region(map, bits, 0), -ENOMEM);
	/* Order 6 on 64-bit: whole words. */
	if (BITS_PER_LONG == 64) {
		memset(map, 0, sizeof(map));
		map[0] = 1;
		KCHECK_EQ(bitmap_find_free_region(map, bits, 6), 64);
		KCHECK(map[1] == ~0UL && map[2] == 0);
		bitmap_release_region(map, 64, 6);
		KCHECK_EQ(map[1], 0);
	}
}

KTEST(bitmap_region_model)
{
	for (int round = 0; round < 200; round++) {
		unsigned long map[MAXW];
		bool m[MAXW * BITS_PER_LONG];
		unsigned int bits = 1 + (unsigned int)(rnd() % MAXB);

		memset(map, 0, sizeof(map));
		memset(m, 0, sizeof(m));
		for (int k = 0; k < 60; k++) {
			int order = (int)(rnd() % 7);
			unsigned long len = 1UL << order;
			if (rnd() % 3) {
				/* The model: the lowest aligned all-clear region below @bits. */
				long want = -ENOMEM;
				for (unsigned long pos = 0; pos + len <= bits && want < 0; pos += len) {
					bool clear = true;
					for (unsigned long i = pos; i < pos + len; i++)
						clear &= !m[i];
					if (clear)
						want = (long)pos;
				}
				int got = bitmap_find_free_region(map, bits, order);
				KASSERT(got == want);
				if (got >= 0)
					for (unsigned long i = 0; i < len; i++)
						m[(unsigned long)got + i] = true;
			} else {
				unsigned long pos = (unsigned long)(rnd() % bits) & ~(len - 1);
				if (pos + len > bits)
					continue;
				bitmap_release_region(map, pos, order);
				for (unsigned long i = 0; i < len; i++)
					m[pos + i] = false;
			}
			KASSERT(same(map, m, MAXW * BITS_PER_LONG));
		}
	}
	KCHECK(1);
}

KTEST(bitmap_replace_model)
{
	for (int round = 0; round < 2000; round++) {
		unsigned long o[MAXW], nw[MAXW], mask[MAXW], d[MAXW];
		bool mo[MAXW * BITS_PER_LONG], mn[MAXW * BITS_PER_LONG], mm[MAXW * BITS_PER_LONG];
		unsigned long nbits = 1 + (unsigned long)(rnd() % MAXB), words = BITS_TO_LONGS(nbits);

		random_words(o, MAXW);
		random_words(nw, MAXW);
		random_words(mask, MAXW);
		random_words(d, MAXW);
		to_model(o, mo, MAXW);
		to_model(nw, mn, MAXW);
		to_model(mask, mm, MAXW);
		unsigned long guard = d[words];
		bitmap_replace(d, o, nw, mask, nbits);
		/* Whole words, tail bits included; not one word more. */
		for (unsigned long i = 0; i < words * BITS_PER_LONG; i++)
			KASSERT(test_bit(i, d) == (mm[i] ? mn[i] : mo[i]));
		KASSERT(d[words] == guard);
		/* In place: dst is old. */
		bitmap_replace(o, o, nw, mask, nbits);
		KASSERT(bitmap_equal(o, d, nbits));
	}
	KCHECK(1);
}

/* The kernel's bitmap_cut(), bit by bit over whole words: the model. */
static void ref_cut(bool *dst, const bool *src, unsigned long first, unsigned long cut,
		    unsigned long nbits)
{
	unsigned long total = BITS_TO_LONGS(nbits) * BITS_PER_LONG;

	for (unsigned long n = 0; n < total; n++)
		dst[n] = n < first ? src[n] : (n + cut < total && cut < total ? src[n + cut] : false);
}

KTEST(bitmap_cut_edges)
{
	unsigned long src[2], dst[3];
	const unsigned long n = 2 * BITS_PER_LONG;

	/* Cut at 0: everything moves down by @cut, zeroes come in at the top. */
	src[0] = 0xf0UL;
	src[1] = 1UL;
	dst[2] = (unsigned long)GUARD;
	bitmap_cut(dst, src, 0, 4, n);
	KCHECK(dst[0] == (0xfUL | BIT(BITS_PER_LONG - 4)) && dst[1] == 0);
	KCHECK(dst[2] == (unsigned long)GUARD);
	/* Cut 0 bits: a copy. */
	bitmap_cut(dst, src, 7, 0, n);
	KCHECK(dst[0] == src[0] && dst[1] == src[1]);
	/* Cut at the last bit: only it goes. */
	src[1] = BIT(BITS_PER_LONG - 1) | 1UL;
	bitmap_cut(dst, src, n - 1, 1, n);
	KCHECK(dst[0] == src[0] && dst[1] == 1UL);
	/* First at the end (n): nothing removed, nothing written past the map. */
	bitmap_cut(dst, src, n, 3, n);
	KCHECK(dst[0] == src[0] && dst[1] == src[1] && dst[2] == (unsigned long)GUARD);
	/* Cut everything from @first on: the bits below stay, the rest is 0. */
	src[0] = ~0UL;
	src[1] = ~0UL;
	bitmap_cut(dst, src, 5, n, n);
	KCHECK(dst[0] == GENMASK(4, 0) && dst[1] == 0);
	bitmap_cut(dst, src, 5, ~0UL, n);
	KCHECK(dst[0] == GENMASK(4, 0) && dst[1] == 0);
	/* Across the word boundary, keeping the bits below @first in its word. */
	src[0] = BIT(1) | BIT(BITS_PER_LONG - 1);
	src[1] = BIT(2);
	bitmap_cut(dst, src, 3, BITS_PER_LONG - 1, n);
	KCHECK(dst[0] == (BIT(1) | BIT(3)) && dst[1] == 0);
	/* The kernel shifts the tail bits of the last word down with the rest. */
	src[0] = 0;
	src[1] = BIT(BITS_PER_LONG - 1); /* past nbits = BITS_PER_LONG + 1 */
	bitmap_cut(dst, src, 0, BITS_PER_LONG - 1, BITS_PER_LONG + 1);
	KCHECK(dst[0] == 0 && dst[1] == 1UL);
	KCHECK(test_bit(BITS_PER_LONG, dst)); /* now below nbits */
	/* In place. */
	src[0] = 0xffUL;
	src[1] = 0;
	bitmap_cut(src, src, 2, 3, n);
	KCHECK_EQ(src[0], 0x1fUL);
}

KTEST(bitmap_cut_model)
{
	for (int round = 0; round < 3000; round++) {
		unsigned long buf[2 * MAXW + 2], src[MAXW + 1], want[MAXW];
		bool ms[MAXW * BITS_PER_LONG], md[MAXW * BITS_PER_LONG];
		unsigned long nbits = 1 + (unsigned long)(rnd() % MAXB), words = BITS_TO_LONGS(nbits);
		unsigned long total = words * BITS_PER_LONG;
		unsigned long first = (unsigned long)(rnd() % (total + 2));
		unsigned long cut = rnd() % 8 ? (unsigned long)(rnd() % (total + 2)) : (unsigned long)(rnd() % 3);

		random_words(src, MAXW + 1);
		to_model(src, ms, words);
		ref_cut(md, ms, first, cut, nbits);
		/* Apart. */
		random_words(buf, 2 * MAXW + 2);
		unsigned long guard = buf[words];
		bitmap_cut(buf, src, first, cut, nbits);
		KASSERT(same(buf, md, total) && buf[words] == guard);
		for (unsigned long i = 0; i < words; i++)
			want[i] = buf[i];
		/* In place, and overlapping by one word either way (memmove semantics). */
		int how = (int)(rnd() % 3);
		unsigned long off = how == 0 ? 0 : how == 1 ? 1 : 2; /* dst = buf + 1, src = buf + off */
		memcpy(buf + off, src, words * sizeof(unsigned long));
		bitmap_cut(buf + 1, buf + off, first, cut, nbits);
		for (unsigned long i = 0; i < words; i++)
			KASSERT(buf[1 + i] == want[i]);
	}
	KCHECK(1);
}

KTEST(bitmap_arr32_arr64)
{
	static const unsigned long ns[] = { 0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 100, 128, 130, MAXB };

	for (size_t s = 0; s < sizeof(ns) / sizeof(ns[0]); s++) {
		unsigned long nbits = ns[s], words = BITS_TO_LONGS(nbits);
		unsigned long h32 = (nbits + 31) / 32, h64 = (nbits + 63) / 64;
		for (int round = 0; round < 50; round++) {
			uint32_t a32[MAXB / 32 + 3], b32[MAXB / 32 + 3];
			uint64_t a64[MAXB / 64 + 3], b64[MAXB / 64 + 3];
			unsigned long map[MAXW + 1], map2[MAXW + 1];

			for (size_t i = 0; i < sizeof(a32) / sizeof(a32[0]); i++)
				a32[i] = (uint32_t)rnd(), b32[i] = 0xdeadbeef;
			for (size_t i = 0; i < sizeof(a64) / sizeof(a64[0]); i++)
				a64[i] = rnd(), b64[i] = GUARD;
			random_words(map, MAXW + 1);
			unsigned long guard = map[words];

			/* From u32s: bit i is bit i % 32 of element i / 32; the tail bits cleared. */
			bitmap_from_arr32(map, a32, nbits);
			for (unsigned long i = 0; i < words * BITS_PER_LONG; i++)
				KASSERT(test_bit(i, map) == (i < nbits && ((a32[i / 32] >> (i % 32)) & 1)));
			KASSERT(map[words] == guard);
			/* Back: exactly DIV_ROUND_UP(nbits, 32) elements, the last one's tail cleared. */
			bitmap_to_arr32(b32, map, nbits);
			for (unsigned long j = 0; j < h32; j++) {
				uint32_t mask = j + 1 < h32 || nbits % 32 == 0 ? ~0U : (1U << (nbits % 32)) - 1;
				KASSERT(b32[j] == (a32[j] & mask));
			}
			KASSERT(b32[h32] == 0xdeadbeef);

			/* The same with u64s. */
			random_words(map, MAXW + 1);
			guard = map[words];
			bitmap_from_arr64(map, a64, nbits);
			for (unsigned long i = 0; i < words * BITS_PER_LONG; i++)
				KASSERT(test_bit(i, map) == (i < nbits && ((a64[i / 64] >> (i % 64)) & 1)));
			KASSERT(map[words] == guard);
			bitmap_to_arr64(b64, map, nbits);
			for (unsigned long j = 0; j < h64; j++) {
				uint64_t mask = j + 1 < h64 || nbits % 64 == 0 ? ~0ULL : (1ULL << (nbits % 64)) - 1;
				KASSERT(b64[j] == (a64[j] & mask));
			}
			KASSERT(b64[h64] == GUARD);

			/* From a map with garbage in its tail: the elements hold only bits below nbits. */
			random_words(map, MAXW + 1);
			bitmap_to_arr32(b32, map, nbits);
			bitmap_to_arr64(b64, map, nbits);
			for (unsigned long i = 0; i < h64 * 64; i++) {
				bool want = i < nbits && test_bit(i, map);
				if (i < h32 * 32)
					KASSERT(((b32[i / 32] >> (i % 32)) & 1) == want);
				KASSERT(((b64[i / 64] >> (i % 64)) & 1) == want);
			}
			KASSERT(b32[h32] == 0xdeadbeef && b64[h64] == GUARD);
			/* A random map round-trips through either, tail bits dropped. */
			bitmap_to_arr32(b32, map, nbits);
			bitmap_from_arr32(map2, b32, nbits);
			KASSERT(bitmap_equal(map, map2, nbits));
			bitmap_to_arr64(b64, map, nbits);
			bitmap_from_arr64(map2, b64, nbits);
			KASSERT(bitmap_equal(map, map2, nbits));
			if (nbits % BITS_PER_LONG)
				KASSERT((map2[words - 1] & ~BITMAP_LAST_WORD_MASK(nbits)) == 0);
		}
	}
	KCHECK(1);
}

KTEST(bitmap_from_u64)
{
	DECLARE_BITMAP(map, 64) = { BITMAP_FROM_U64(0x8000000100000003ULL) };
	DECLARE_BITMAP(two, 128) = { BITMAP_FROM_U64(1), BITMAP_FROM_U64(0xf0ULL) };

	KCHECK(test_bit(0, map) && test_bit(1, map) && !test_bit(2, map));
	KCHECK(test_bit(32, map) && test_bit(63, map));
	KCHECK_EQ(bitmap_weight(map, 64), 4);
	KCHECK(test_bit(0, two) && test_bit(68, two) && test_bit(71, two));
	KCHECK_EQ(bitmap_weight(two, 128), 5);
}

KTEST(bitmap_read_write_edges)
{
	unsigned long map[3];

	memset(map, 0, sizeof(map));
	/* Inside one word, at bit 0 and at its top. */
	bitmap_write(map, 0x5, 0, 3);
	KCHECK_EQ(map[0], 0x5);
	KCHECK_EQ(bitmap_read(map, 0, 3), 0x5);
	bitmap_write(map, 0x3, BITS_PER_LONG - 2, 2);
	KCHECK(map[0] == (0x5UL | GENMASK(BITS_PER_LONG - 1, BITS_PER_LONG - 2)));
	KCHECK_EQ(bitmap_read(map, BITS_PER_LONG - 2, 2), 3);
	/* Bits of @value at or above @nbits are ignored. */
	bitmap_write(map, ~0UL, 4, 2);
	KCHECK_EQ(map[0] & 0xff, 0x35);
	/* Across the boundary: the low part ends the first word, the rest starts the next. */
	memset(map, 0, sizeof(map));
	bitmap_write(map, 0xabcUL, BITS_PER_LONG - 4, 12);
	KCHECK(map[0] == 0xcUL << (BITS_PER_LONG - 4) && map[1] == 0xabUL && map[2] == 0);
	KCHECK_EQ(bitmap_read(map, BITS_PER_LONG - 4, 12), 0xabc);
	KCHECK_EQ(bitmap_read(map, BITS_PER_LONG - 4, 8), 0xbc);
	/* A whole word's worth at any offset, aligned or not. */
	bitmap_write(map, ~0UL, 0, BITS_PER_LONG);
	KCHECK(map[0] == ~0UL && map[1] == 0xabUL);
	KCHECK(bitmap_read(map, 0, BITS_PER_LONG) == ~0UL);
	bitmap_write(map, 0x8000000000000001ULL & ~0UL, 7, BITS_PER_LONG);
	KCHECK(bitmap_read(map, 7, BITS_PER_LONG) == (0x8000000000000001ULL & ~0UL));
	KCHECK(map[0] == (GENMASK(6, 0) | BIT(7)));
	KCHECK(map[2] == 0);
	/* nbits 0, or wider than a word: bitmap_read() gives 0, bitmap_write() does nothing. */
	unsigned long before[3];
	memcpy(before, map, sizeof(map));
	KCHECK_EQ(bitmap_read(map, 7, 0), 0);
	KCHECK_EQ(bitmap_read(map, 7, BITS_PER_LONG + 1), 0);
	bitmap_write(map, ~0UL, 3, 0);
	bitmap_write(map, ~0UL, 3, BITS_PER_LONG + 1);
	KCHECK(memcmp(before, map, sizeof(map)) == 0);
	/* The last bits of a map: reading them does not touch the next word. */
	KCHECK_EQ(bitmap_read(map, 3 * BITS_PER_LONG - 1, 1), 0);
}

KTEST(bitmap_read_write_model)
{
	for (int round = 0; round < 20000; round++) {
		unsigned long map[MAXW];
		bool m[MAXW * BITS_PER_LONG];
		unsigned long total = MAXW * BITS_PER_LONG;
		unsigned long nbits = 1 + (unsigned long)(rnd() % BITS_PER_LONG);
		unsigned long start = (unsigned long)(rnd() % (total - nbits + 1));
		unsigned long value = (unsigned long)rnd(), want = 0;

		random_words(map, MAXW);
		to_model(map, m, MAXW);
		for (unsigned long i = 0; i < nbits; i++)
			want |= (unsigned long)m[start + i] << i;
		KASSERT(bitmap_read(map, start, nbits) == want);
		/* As if by nbits calls of __assign_bit(). */
		bitmap_write(map, value, start, nbits);
		for (unsigned long i = 0; i < nbits; i++)
			m[start + i] = (value >> i) & 1UL;
		KASSERT(same(map, m, total));
		KASSERT(bitmap_read(map, start, nbits) == (value & BITMAP_LAST_WORD_MASK(nbits)));
	}
	KCHECK(1);
}

/*
 * Random sequences of every operation on one map, checked after each step
 * against the model (which also holds the tail bits, to check that those
 * operations that must not touch them do not).
 */
KTEST(bitmap_ops_model_random)
{
	for (size_t s = 0; s < NSIZES; s++) {
		unsigned long nbits = sizes[s], words = BITS_TO_LONGS(nbits), total = words * BITS_PER_LONG;
		unsigned long map[MAXW + 1], other[MAXW + 1], tmp[MAXW + 1];
		bool m[(MAXW + 1) * BITS_PER_LONG], mo[(MAXW + 1) * BITS_PER_LONG];

		random_words(map, MAXW + 1);
		to_model(map, m, MAXW + 1);
		for (int step = 0; step < 2000; step++) {
			unsigned long a = (unsigned long)(rnd() % nbits);
			unsigned long len = (unsigned long)(rnd() % (nbits - a + 1));
			switch (rnd() % 9) {
			case 0:
				bitmap_set(map, a, len);
				for (unsigned long i = a; i < a + len; i++)
					m[i] = true;
				break;
			case 1:
				bitmap_clear(map, a, len);
				for (unsigned long i = a; i < a + len; i++)
					m[i] = false;
				break;
			case 2: {
				unsigned long w = 1 + (unsigned long)(rnd() % BITS_PER_LONG);
				unsigned long v = (unsigned long)rnd();
				if (a + w > total)
					break;
				bitmap_write(map, v, a, w);
				for (unsigned long i = 0; i < w; i++)
					m[a + i] = (v >> i) & 1UL;
				break;
			}
			case 3:
				random_words(other, MAXW + 1);
				to_model(other, mo, MAXW + 1);
				random_words(tmp, MAXW + 1);
				bitmap_replace(map, map, other, tmp, nbits);
				for (unsigned long i = 0; i < total; i++)
					if (test_bit(i, tmp))
						m[i] = mo[i];
				break;
			case 4: {
				bool cut[(MAXW + 1) * BITS_PER_LONG];
				unsigned long c = (unsigned long)(rnd() % 8);
				ref_cut(cut, m, a, c, nbits);
				bitmap_cut(map, map, a, c, nbits);
				memcpy(m, cut, total * sizeof(bool));
				break;
			}
			case 5: {
				bool v = rnd() % 2;
				assign_bit(a, map, v);
				m[a] = v;
				break;
			}
			case 6:
				if (rnd() % 16 == 0) {
					bitmap_fill(map, nbits);
					for (unsigned long i = 0; i < total; i++)
						m[i] = true;
				}
				break;
			case 7:
				if (rnd() % 16 == 0) {
					bitmap_zero(map, nbits);
					for (unsigned long i = 0; i < total; i++)
						m[i] = false;
				}
				break;
			case 8: {
				int order = (int)(rnd() % 4);
				int got = bitmap_find_free_region(map, (unsigned int)nbits, order);
				if (got >= 0) {
					KASSERT(got % (1 << order) == 0);
					for (unsigned long i = 0; i < (1UL << order); i++) {
						KASSERT(!m[(unsigned long)got + i]);
						m[(unsigned long)got + i] = true;
					}
				}
				break;
			}
			}
			KASSERT(same(map, m, (MAXW + 1) * BITS_PER_LONG));
			/* The queries see the bits below nbits only. */
			unsigned long w = 0;
			for (unsigned long i = 0; i < nbits; i++)
				w += m[i];
			KASSERT(bitmap_weight(map, nbits) == w);
			KASSERT(bitmap_empty(map, nbits) == (w == 0));
			KASSERT(bitmap_full(map, nbits) == (w == nbits));
			KASSERT(find_nth_bit(map, nbits, w ? w - 1 : 0) ==
				(w ? find_last_bit(map, nbits) : nbits));
		}
	}
	KCHECK(1);
}

/* ------------------------------------------------------------------------ */
/* bitmap_parselist()                                                       */

struct parselist_case {
	int nbits;
	const char *str;
	int ret;
	const char *bits; /* the bits set, as a plain "a b c" list of numbers */
};

static const struct parselist_case parselist_cases[] = {
	{ 8, "0", 0, "0" },
	{ 8, "1", 0, "1" },
	{ 32, "0-3,5,8-15:2/4", 0, "0 1 2 3 5 8 9 12 13" },
	{ 32, "0-31:1/2", 0, "0 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30" },
	{ 32, "1-31:1/4", 0, "1 5 9 13 17 21 25 29" },
	{ 32, "0-31:4/4", 0, "all" },
	{ 32, "0-31:0/4", 0, "" },
	{ 64, "  ,,  0-31:3/32  ,, 32-63:1/16  ,,  ", 0, "0 1 2 32 48" },
	{ 10, "all", 0, "all" },
	{ 10, "ALL:1/3", 0, "0 3 6 9" },
	{ 10, "0-N", 0, "all" },
	{ 10, "N", 0, "9" },
	{ 10, "N-N,4", 0, "4 9" },
	{ 10, "1,3\nxyz", 0, "1 3" },
	{ 10, "1 2\t3", 0, "1 2 3" },
	{ 10, "", 0, "" },
	{ 10, " , \n", 0, "" },
	{ 2048, "0-2047:128/256", 0, "range 0-2047:128/256" },
	{ 8, "-1", -EINVAL, NULL },
	{ 8, "-0", -EINVAL, NULL },
	{ 8, "5-1", -EINVAL, NULL },
	{ 8, "8-8", -ERANGE, NULL },
	{ 8, "8", -ERANGE, NULL },
	{ 8, "0-31", -ERANGE, NULL },
	{ 32, "0-31:", -EINVAL, NULL },
	{ 32, "0-31:4", -EINVAL, NULL },
	{ 32, "0-31:0/0", -EINVAL, NULL },
	{ 32, "0-31:1/0", -EINVAL, NULL },
	{ 32, "0-31:10/1", -EINVAL, NULL },
	{ 32, "4294967296", -EOVERFLOW, NULL },
	{ 32, "0-99999999999999999999", -EOVERFLOW, NULL },
	{ 8, "a-3", -EINVAL, NULL },
	{ 8, "0-a1", -EINVAL, NULL },
	{ 8, "0-3:a/1", -EINVAL, NULL },
	{ 8, "0-\n", -EINVAL, NULL },
	{ 8, "1;2", -EINVAL, NULL },
	{ 8, "0x1", -EINVAL, NULL },
};

/* The expected map of a case, from its plain list. */
static void parselist_expect(unsigned long *map, const struct parselist_case *c)
{
	const char *p = c->bits;

	memset(map, 0, MAXW * sizeof(unsigned long));
	if (!strcmp(p, "all")) {
		for (int i = 0; i < c->nbits; i++)
			__set_bit(i, map);
		return;
	}
	if (!strncmp(p, "range ", 6)) { /* the one big case: by rule */
		for (int i = 0; i < c->nbits; i++)
			if (i % 256 < 128)
				__set_bit(i, map);
		return;
	}
	while (*p) {
		unsigned long n = strtoul(p, (char **)&p, 10);

		__set_bit(n, map);
		while (*p == ' ')
			p++;
	}
}

KTEST(bitmap_parselist_cases)
{
	static unsigned long map[2048 / BITS_PER_LONG + 1], exp[2048 / BITS_PER_LONG + 1];

	for (size_t i = 0; i < sizeof(parselist_cases) / sizeof(parselist_cases[0]); i++) {
		const struct parselist_case *c = &parselist_cases[i];
		int ret;

		memset(map, 0xa5, sizeof(map));
		ret = bitmap_parselist(c->str, map, c->nbits);
		if (ret != c->ret)
			printf("bitmap_parselist(\"%s\", %d): %d, not %d\n", c->str, c->nbits, ret, c->ret);
		KCHECK_EQ(ret, c->ret);
		if (c->ret)
			continue;
		if (c->nbits <= MAXB) {
			parselist_expect(exp, c);
		} else {
			memset(exp, 0, sizeof(exp));
			for (int b = 0; b < c->nbits; b++)
				if (b % 256 < 128)
					__set_bit(b, exp);
		}
		KCHECK(bitmap_equal(map, exp, c->nbits));
	}
}

/* On an error, the regions before the bad one are set (the kernel parses and sets in one pass). */
KTEST(bitmap_parselist_partial)
{
	unsigned long map[MAXW];

	KCHECK_EQ(bitmap_parselist("0-3,5,x", map, 16), -EINVAL);
	KCHECK_EQ(map[0] & 0xffff, 0x2f);
	KCHECK_EQ(bitmap_parselist("0-3:1/2x", map, 16), -EINVAL);
	KCHECK_EQ(map[0] & 0xffff, 0x5);
	KCHECK_EQ(bitmap_parselist("1,2,20", map, 16), -ERANGE);
	KCHECK_EQ(map[0] & 0xffff, 0x6);
}

/* Random lists against a model of the grammar: ranges with groups, in any order. */
KTEST(bitmap_parselist_model)
{
	unsigned long map[MAXW];
	bool model[MAXB];

	for (int round = 0; round < 2000; round++) {
		int nbits = 1 + (int)(rnd() % MAXB), nr = (int)(rnd() % 5), len = 0;
		char buf[256];

		memset(model, 0, sizeof(model));
		for (int r = 0; r < nr; r++) {
			unsigned a = (unsigned)(rnd() % (unsigned)nbits), b = a + (unsigned)(rnd() % (unsigned)(nbits - a));
			unsigned g = 1 + (unsigned)(rnd() % 9), u = (unsigned)(rnd() % (g + 1));

			switch (rnd() % 3) {
			case 0:
				len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s%u", r ? "," : "", a);
				model[a] = true;
				break;
			case 1:
				len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s%u-%u", r ? " , " : "", a, b);
				for (unsigned k = a; k <= b; k++)
					model[k] = true;
				break;
			default:
				len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s%u-%u:%u/%u", r ? "," : "", a, b, u, g);
				for (unsigned k = a; k <= b; k++)
					if ((k - a) % g < u)
						model[k] = true;
				break;
			}
		}
		buf[len] = 0;
		KCHECK_EQ(bitmap_parselist(buf, map, nbits), 0);
		for (int k = 0; k < nbits; k++)
			if (test_bit(k, map) != model[k]) {
				KCHECK_EQ(test_bit(k, map), model[k]);
				printf("list \"%s\" of %d bits, bit %d\n", buf, nbits, k);
				return;
			}
	}
}

/* ------------------------------------------------------------------------ */
/* bitmap_scatter(), bitmap_gather(), 8-bit clumps, __bitmap_equal()        */

KTEST(bitmap_scatter_gather)
{
	unsigned long src[MAXW] = { 0x005a }, mask[MAXW] = { 0x1313 }, dst[MAXW], back[MAXW];

	/* The kernel-doc's examples. */
	bitmap_scatter(dst, src, mask, 16);
	KCHECK_EQ(dst[0], 0x0302);
	bitmap_gather(back, dst, mask, 16);
	KCHECK_EQ(back[0], 0x001a);
	/* Random maps: gather undoes scatter for the low weight(mask) bits. */
	for (int round = 0; round < 500; round++) {
		unsigned long nbits = sizes[rnd() % (sizeof(sizes) / sizeof(sizes[0]))];
		unsigned long w;

		for (unsigned long i = 0; i < MAXW; i++) {
			src[i] = rnd();
			mask[i] = rnd() & rnd();
		}
		w = bitmap_weight(mask, nbits);
		bitmap_scatter(dst, src, mask, nbits);
		/* Only mask bits, and the n-th of them is bit n of src. */
		unsigned long n = 0, bit;
		for (bit = 0; bit < nbits; bit++) {
			if (!test_bit(bit, mask))
				KCHECK(!test_bit(bit, dst));
			else
				KCHECK_EQ(test_bit(bit, dst), test_bit(n++, src));
		}
		KCHECK_EQ(n, w);
		bitmap_gather(back, dst, mask, nbits);
		for (bit = 0; bit < nbits; bit++)
			KCHECK_EQ(test_bit(bit, back), bit < w ? test_bit(bit, src) : 0);
	}
}

KTEST(bitmap_clump8)
{
	unsigned long map[MAXW], clump, start;

	memset(map, 0, sizeof(map));
	bitmap_set_value8(map, 0x81, 0);
	bitmap_set_value8(map, 0x1ff, 16); /* only the low 8 bits are stored */
	bitmap_set_value8(map, 0x3c, BITS_PER_LONG);
	KCHECK_EQ(bitmap_get_value8(map, 0), 0x81);
	KCHECK_EQ(bitmap_get_value8(map, 8), 0);
	KCHECK_EQ(bitmap_get_value8(map, 16), 0xff);
	KCHECK_EQ(bitmap_get_value8(map, 24), 0);
	KCHECK_EQ(bitmap_get_value8(map, BITS_PER_LONG), 0x3c);
	/* Random maps against a byte-by-byte model, the last clump cut at size. */
	for (int round = 0; round < 500; round++) {
		unsigned long size = 1 + rnd() % MAXB, expect = 0, seen = 0;

		for (unsigned long i = 0; i < MAXW; i++)
			map[i] = rnd() & rnd() & rnd() & (rnd() % 3 ? 0 : ~0UL);
		for_each_set_clump8(start, clump, map, size) {
			unsigned long v = 0;

			KCHECK_EQ(start % 8, 0);
			for (unsigned long k = 0; k < 8 && start + k < size; k++)
				v |= (unsigned long)test_bit(start + k, map) << k;
			KCHECK(v != 0);
			KCHECK_EQ(clump, v);
			seen++;
		}
		for (unsigned long b = 0; b < size; b += 8) {
			bool any = false;

			for (unsigned long k = b; k < b + 8 && k < size; k++)
				any |= test_bit(k, map);
			expect += any;
		}
		KCHECK_EQ(seen, expect);
	}
}

KTEST(bitmap___bitmap_equal)
{
	unsigned long a[MAXW], b[MAXW];

	for (int round = 0; round < 200; round++) {
		unsigned long nbits = sizes[rnd() % (sizeof(sizes) / sizeof(sizes[0]))];
		unsigned long bit = rnd() % nbits;

		for (unsigned long i = 0; i < MAXW; i++)
			a[i] = b[i] = rnd();
		KCHECK(__bitmap_equal(a, b, nbits));
		/* Past nbits nothing counts... */
		if (nbits % BITS_PER_LONG) {
			__change_bit(nbits, b);
			KCHECK(__bitmap_equal(a, b, nbits));
		}
		/* ...below it every bit does. */
		__change_bit(bit, b);
		KCHECK(!__bitmap_equal(a, b, nbits));
		KCHECK_EQ(__bitmap_equal(a, b, nbits), bitmap_equal(a, b, nbits));
	}
}

/* ------------------------------------------------------------------------ */
/* bitmap_parse(), bitmap_print_to_pagebuf()                                */

KTEST(bitmap_parse_cases)
{
	unsigned long map[MAXW];

	KCHECK_EQ(bitmap_parse("1ff,ffffffff", 100, map, 64), 0);
	KCHECK_EQ(map[0] & 0xffffffffUL, 0xffffffffUL);
	KCHECK_EQ(bitmap_read(map, 32, 32), 0x1ff);
	KCHECK_EQ(bitmap_parse("  5 ,\n", 100, map, 40), 0); /* separators around, a newline ends */
	KCHECK_EQ(bitmap_read(map, 0, 40), 5);
	KCHECK_EQ(bitmap_parse("dead,beef", 4, map, 64), 0); /* buflen ends the string: "dead" */
	KCHECK_EQ(bitmap_read(map, 0, 64), 0xdead);
	KCHECK_EQ(bitmap_parse("", 10, map, 64), 0);
	KCHECK(bitmap_empty(map, 64));
	KCHECK_EQ(bitmap_parse("0,0,1", 100, map, 64), -EOVERFLOW); /* three words, two fit */
	KCHECK_EQ(bitmap_parse("123456789", 100, map, 64), -EOVERFLOW); /* nine digits */
	KCHECK_EQ(bitmap_parse("100", 100, map, 8), -EOVERFLOW); /* bit 8 of 8 bits */
	KCHECK_EQ(bitmap_parse("ff", 100, map, 8), 0);
	KCHECK_EQ(bitmap_parse("fg", 100, map, 8), -EINVAL);
	KCHECK_EQ(bitmap_parse("-1", 100, map, 8), -EINVAL);
}

KTEST(bitmap_print_cases)
{
	unsigned long map[MAXW] = { 0 };
	char buf[64];

	bitmap_set(map, 0, 4);
	__set_bit(5, map);
	bitmap_set(map, 8, 8);
	__set_bit(39, map);
	KCHECK_EQ(ksync_bitmap_print(true, buf, sizeof(buf), map, 40), 14);
	KCHECK(!strcmp(buf, "0-3,5,8-15,39\n"));
	/* 40 bits: a first word of 8 bits, two digits wide; 37: 5 bits, two digits too. */
	KCHECK_EQ(ksync_bitmap_print(false, buf, sizeof(buf), map, 40), 12);
	KCHECK(!strcmp(buf, "80,0000ff2f\n"));
	KCHECK_EQ(ksync_bitmap_print(false, buf, sizeof(buf), map, 37), 12);
	KCHECK(!strcmp(buf, "00,0000ff2f\n"));
	/* Cut to the buffer, as scnprintf. */
	KCHECK_EQ(ksync_bitmap_print(true, buf, 5, map, 40), 4);
	KCHECK(!strcmp(buf, "0-3,"));
	bitmap_zero(map, 40);
	KCHECK_EQ(ksync_bitmap_print(true, buf, sizeof(buf), map, 40), 1);
	KCHECK(!strcmp(buf, "\n"));
}

/* What the printers write, the parsers read back. */
KTEST(bitmap_print_parse_round_trip)
{
	static char page[2 * 4096];
	char *buf = (char *)(((uintptr_t)page + 4095) & ~(uintptr_t)4095);
	unsigned long map[MAXW], back[MAXW];

	for (int round = 0; round < 500; round++) {
		unsigned long nbits = 1 + rnd() % MAXB;
		int n;

		for (unsigned long i = 0; i < MAXW; i++)
			map[i] = rnd() & (rnd() % 2 ? rnd() : ~0UL);
		bitmap_clear(map, nbits, MAXW * BITS_PER_LONG - nbits);
		n = bitmap_print_to_pagebuf(true, buf, map, (int)nbits);
		KCHECK_EQ((size_t)n, strlen(buf));
		KCHECK_EQ(bitmap_parselist(buf, back, (int)nbits), 0);
		KCHECK(bitmap_equal(map, back, nbits));
		n = bitmap_print_to_pagebuf(false, buf, map, (int)nbits);
		KCHECK_EQ((size_t)n, strlen(buf));
		KCHECK_EQ(bitmap_parse(buf, (unsigned)n, back, (int)nbits), 0);
		KCHECK(bitmap_equal(map, back, nbits));
	}
	/* The page's end bounds the text. */
	bitmap_fill(map, MAXB);
	KCHECK_EQ(bitmap_print_to_pagebuf(false, buf + 4096 - 8, map, MAXB), 7);
}

/* ------------------------------------------------------------------------ */
/* BUILD_BUG_ON() as the kernel's tests use it                              */

#define EXP2_IN_BITS (sizeof(unsigned long) * 8 * 2)

KTEST(build_bug_on_constants_after_optimisation)
{
	unsigned int nbits = 64;
	unsigned long nlongs = DIV_ROUND_UP(nbits, BITS_PER_LONG);

	/* Constant expressions, at every optimisation level. */
	BUILD_BUG_ON(sizeof(unsigned long) * 8 != BITS_PER_LONG);
	BUILD_BUG_ON_MSG(BITS_TO_LONGS(65) != 65 / BITS_PER_LONG + 1, "BITS_TO_LONGS");
#ifdef __OPTIMIZE__
	/*
	 * A local variable's known value: what the kernel's bitmap tests write
	 * (a bit-field width or static_assert() refuses it; the kernel's
	 * __compiletime_assert() leaves it to the optimiser).
	 */
	BUILD_BUG_ON(EXP2_IN_BITS < nbits * 2);
	BUILD_BUG_ON(!__builtin_constant_p(nbits * 2));
	BUILD_BUG_ON(nlongs != 64 / BITS_PER_LONG);
#endif
	KCHECK_EQ(nlongs, 64 / BITS_PER_LONG);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
