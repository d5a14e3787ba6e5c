/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/bitmap_fuzz.c - bit operations, bitmaps and sized maps (with growth)
 * against a plain model, checked after every operation.
 *
 * The input is a stream of operations. Part one runs them on two bitmaps of
 * n bits (n from the first byte, 0..300), each in a heap block of exactly
 * BITS_TO_LONGS(n) words, so that ASan reports any access past the map; the
 * model is one bool per bit. Bits past n in the last word are don't-care (the
 * kernel's bitmap_fill and bitmap_copy write whole words): every function
 * must ignore them, so the fuzzer never clears them. Part two (after a 0xff
 * byte) runs a sized map with a companion counter per bit and growth through
 * an SRCU slot: bit numbers go up to 40 past the map's size, where every call
 * must write nothing (and report), and growth must keep every bit and every
 * counter.
 */
#include <ksync/linux/bitmap.h>
#include <ksync/linux/bitops.h>
#include <ksync/linux/find.h>
#include <ksync/sized_map.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAXB 300
#define SM_MAXB 1024

/* ------------------------------------------------------------------------ */
/* Reference searches                                                        */

static unsigned long ref_next(const bool *m, unsigned long n, unsigned long off, bool val)
{
	for (unsigned long i = off; i < n; i++)
		if (m[i] == val)
			return i;
	return n;
}

static unsigned long ref_last(const bool *m, unsigned long n)
{
	for (unsigned long i = n; i-- > 0;)
		if (m[i])
			return i;
	return n;
}

static unsigned long ref_weight(const bool *m, unsigned long n)
{
	unsigned long w = 0;

	for (unsigned long i = 0; i < n; i++)
		w += m[i];
	return w;
}

/* ------------------------------------------------------------------------ */
/* Part one: two bitmaps of n bits                                           */

struct maps {
	unsigned long n;
	unsigned long *map[2];
	bool m[2][MAXB];
};

static void check_maps(const struct maps *s)
{
	for (int k = 0; k < 2; k++)
		for (unsigned long i = 0; i < s->n; i++)
			CHECK(!!test_bit(i, s->map[k]) == s->m[k][i]);
}

static void run_bitmaps(struct maps *s, struct input *in)
{
	unsigned long n = s->n;

	while (more(in)) {
		unsigned int op = take(in);
		if (op == 0xff)
			return; /* part two follows */

		int t = op & 1, o = !t; /* target map, the other one */
		unsigned long *a = s->map[t], *b = s->map[o];
		bool *ma = s->m[t], *mb = s->m[o];
		unsigned long i = n ? take16(in) % n : 0;
		unsigned long off = take16(in) % (n + 4); /* may be past the end */

		switch ((op >> 1) % 24) {
		case 0: if (n) { set_bit(i, a); ma[i] = true; } break;
		case 1: if (n) { clear_bit(i, a); ma[i] = false; } break;
		case 2: if (n) { change_bit(i, a); ma[i] = !ma[i]; } break;
		case 3: if (n) { CHECK(!!test_and_set_bit(i, a) == ma[i]); ma[i] = true; } break;
		case 4: if (n) { CHECK(!!test_and_clear_bit(i, a) == ma[i]); ma[i] = false; } break;
		case 5: if (n) { CHECK(!!test_and_change_bit(i, a) == ma[i]); ma[i] = !ma[i]; } break;
		case 6:
		case 7: {
			unsigned long start = n ? i : 0, len = n ? off % (n - start + 1) : 0;
			bool v = (op >> 1) % 24 == 6;

			if (v)
				bitmap_set(a, (unsigned int)start, (unsigned int)len);
			else
				bitmap_clear(a, (unsigned int)start, (unsigned int)len);
			for (unsigned long j = start; j < start + len; j++)
				ma[j] = v;
			break;
		}
		case 8: CHECK(find_next_bit(a, n, off) == ref_next(ma, n, off, true)); break;
		case 9: CHECK(find_next_zero_bit(a, n, off) == ref_next(ma, n, off, false)); break;
		case 10: CHECK(find_last_bit(a, n) == ref_last(ma, n)); break;
		case 11:
			CHECK(find_first_bit(a, n) == ref_next(ma, n, 0, true));
			CHECK(find_first_zero_bit(a, n) == ref_next(ma, n, 0, false));
			break;
		case 12: CHECK(bitmap_weight(a, (unsigned int)n) == ref_weight(ma, n)); break;
		case 13: {
			bool any = false;

			for (unsigned long j = 0; j < n; j++)
				any |= (ma[j] = ma[j] && mb[j]);
			CHECK(bitmap_and(a, a, b, (unsigned int)n) == any);
			break;
		}
		case 14:
			bitmap_or(a, a, b, (unsigned int)n);
			for (unsigned long j = 0; j < n; j++)
				ma[j] = ma[j] || mb[j];
			break;
		case 15: {
			bool any = false;

			for (unsigned long j = 0; j < n; j++)
				any |= (ma[j] = ma[j] && !mb[j]);
			CHECK(bitmap_andnot(a, a, b, (unsigned int)n) == any);
			break;
		}
		case 16:
			bitmap_copy(a, b, (unsigned int)n);
			memcpy(ma, mb, n);
			break;
		case 17: CHECK(bitmap_equal(a, b, (unsigned int)n) == (memcmp(ma, mb, n) == 0)); break;
		case 18:
			CHECK(bitmap_empty(a, (unsigned int)n) == (ref_weight(ma, n) == 0));
			CHECK(bitmap_full(a, (unsigned int)n) == (ref_weight(ma, n) == n));
			break;
		case 19:
			if (off & 1)
				bitmap_fill(a, (unsigned int)n);
			else
				bitmap_zero(a, (unsigned int)n);
			memset(ma, off & 1, n);
			break;
		case 20: {
			unsigned long k = off, want = n, seen = 0;

			for (unsigned long j = 0; j < n; j++)
				if (ma[j] && seen++ == k) {
					want = j;
					break;
				}
			CHECK(find_nth_bit(a, n, k) == want);
			break;
		}
		case 21: {
			unsigned long want = n;

			for (unsigned long j = off; j < n; j++)
				if (ma[j] && mb[j]) {
					want = j;
					break;
				}
			CHECK(find_next_and_bit(a, b, n, off) == want);
			break;
		}
		case 22: {
			/* A field of 1..BITS_PER_LONG bits inside the map. */
			unsigned long nbits = 1 + off % BITS_PER_LONG, start = i, v = 0;

			if (!n || start + nbits > n)
				break;
			for (unsigned long j = 0; j < nbits; j++)
				v |= (unsigned long)ma[start + j] << j;
			CHECK(bitmap_read(a, start, nbits) == v);
			v = (unsigned long)take16(in) * 0x9e3779b97f4a7c15UL;
			bitmap_write(a, v, start, nbits);
			for (unsigned long j = 0; j < nbits; j++)
				ma[start + j] = (v >> j) & 1;
			break;
		}
		case 23: {
			unsigned long o2 = n ? off % n : 0, want = n;

			for (unsigned long j = 0; j < n; j++)
				if (ma[(o2 + j) % n]) {
					want = (o2 + j) % n;
					break;
				}
			CHECK(find_next_bit_wrap(a, n, o2) == want);
			break;
		}
		}
		check_maps(s);
	}
}

/* ------------------------------------------------------------------------ */
/* Part two: a sized map that grows                                          */

static KSYNC_DEFINE_SRCU(fuzz_srcu);
static unsigned long reports;

static void count_report(const char *file, int line, const char *what)
{
	(void)file, (void)line, (void)what;
	reports++;
}

struct sized {
	struct ksync_sized_map *KSYNC_RCU slot;
	unsigned int nr;           /* the model's nr_max */
	bool m[SM_MAXB];
	long data[SM_MAXB];
};

static struct ksync_sized_map *cur(struct sized *z)
{
	return ksync_rcu_dereference_raw(z->slot); /* the only writer and reader */
}

static void check_sized(struct sized *z)
{
	struct ksync_sized_map *map = cur(z);

	CHECK(ksync_sized_map_nr_max(map) == z->nr);
	for (unsigned int i = 0; i < z->nr; i++) {
		CHECK(ksync_sized_map_test_bit(map, i) == z->m[i]);
		CHECK(*(long *)ksync_sized_map_data(map, i) == z->data[i]);
	}
	/* The search agrees with the model, from every start. */
	for (unsigned int i = 0; i <= z->nr; i++) {
		unsigned int want = (unsigned int)ref_next(z->m, z->nr, i, true);

		CHECK(ksync_sized_map_find_next_bit(map, i) == want);
	}
}

static void run_sized(struct input *in)
{
	static struct sized z;
	struct ksync_sized_map *map;

	memset(&z, 0, sizeof(z));
	z.nr = take(in) % 200;
	map = ksync_sized_map_alloc(z.nr, sizeof(long));
	CHECK(map);
	ksync_rcu_assign_pointer(z.slot, map);
	while (more(in)) {
		unsigned int op = take(in) % 6;
		unsigned int nr = take16(in) % (z.nr + 40); /* up to 40 past the end */
		bool in_range = nr < z.nr;
		unsigned long before = reports;
		int idx = ksync_srcu_read_lock(&fuzz_srcu);

		map = ksync_srcu_dereference(z.slot, &fuzz_srcu);
		switch (op) {
		case 0:
			CHECK(ksync_sized_map_set_bit(map, nr) == (in_range ? 0 : -EINVAL));
			if (in_range)
				z.m[nr] = true;
			break;
		case 1:
			ksync_sized_map_clear_bit(map, nr);
			if (in_range)
				z.m[nr] = false;
			break;
		case 2:
			CHECK(ksync_sized_map_test_and_clear_bit(map, nr) == (in_range && z.m[nr]));
			if (in_range)
				z.m[nr] = false;
			break;
		case 3: {
			long *d = ksync_sized_map_data(map, nr);

			CHECK((d != NULL) == in_range);
			if (d) {
				*d += (long)nr + 1;
				z.data[nr] += (long)nr + 1;
			}
			break;
		}
		case 4:
			CHECK(ksync_sized_map_test_bit(map, nr) == (in_range && z.m[nr]));
			break;
		case 5: {
			/* Grow while this section still holds the old generation. */
			unsigned int to = z.nr + take(in) % 200;

			if (to >= SM_MAXB)
				to = SM_MAXB - 1;
			CHECK(ksync_sized_map_grow(&z.slot, to, &fuzz_srcu) == 0);
			if (to > z.nr)
				z.nr = to;
			/* An update through the superseded generation still lands. */
			if (in_range && ksync_sized_map_set_bit(map, nr) == 0)
				z.m[nr] = true;
			break;
		}
		}
		ksync_srcu_read_unlock(&fuzz_srcu, idx);
		/* Exactly the out-of-range calls were reported (each call site once). */
		if (in_range || op == 5)
			CHECK(reports == before);
		check_sized(&z);
	}
	/* Readers are gone: free the newest generation and its units, flush the old headers. */
	ksync_synchronize_srcu(&fuzz_srcu);
	ksync_sized_map_free_all(cur(&z));
	ksync_srcu_barrier(&fuzz_srcu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + size };
	static struct maps s;

	ksync_warn_hook = count_report;
	memset(&s, 0, sizeof(s));
	s.n = take(&in) % (MAXB + 1);
	for (int k = 0; k < 2; k++) {
		/* Exactly the map's words: ASan sees any access past them. */
		s.map[k] = malloc(BITS_TO_LONGS(s.n) * sizeof(unsigned long) + !s.n);
		CHECK(s.map[k]);
		bitmap_zero(s.map[k], (unsigned int)s.n);
	}
	run_bitmaps(&s, &in);
	free(s.map[0]);
	free(s.map[1]);
	if (more(&in))
		run_sized(&in);
	return 0;
}
