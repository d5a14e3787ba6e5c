/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bitops_test.c - single-bit operations and searches of <ksync/bitops.h>:
 * random operation sequences checked against a bool-array model after every
 * step, edge cases of the searches, and two threads hammering set/clear on
 * shared words without losing a bit.
 */
#include <ksync/bitops.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "bitref.h"
#include "rng.h"

#define NBITS_MAX 300

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	return kt_xorshift64s(&rng_state);
}


static void check_against_model(const unsigned long *map, const bool *m, unsigned long size)
{
	for (unsigned long i = 0; i < size; i++)
		KASSERT(ksync_test_bit(i, map) == m[i]);
	KASSERT(ksync_find_first_bit(map, size) == kt_ref_next(m, size, 0, true));
	KASSERT(ksync_find_first_zero_bit(map, size) == kt_ref_next(m, size, 0, false));
	KASSERT(ksync_find_last_bit(map, size) == kt_ref_last(m, size));
	unsigned long off = size ? rnd() % (size + 2) : 0;
	KASSERT(ksync_find_next_bit(map, size, off) == kt_ref_next(m, size, off, true));
	KASSERT(ksync_find_next_zero_bit(map, size, off) == kt_ref_next(m, size, off, false));

	unsigned long bit, n = 0;
	ksync_for_each_set_bit(bit, map, size) {
		KASSERT(m[bit]);
		n++;
	}
	unsigned long z = 0;
	ksync_for_each_clear_bit(bit, map, size) {
		KASSERT(!m[bit]);
		z++;
	}
	KASSERT(n + z == size);
	bit = off;
	ksync_for_each_set_bit_from(bit, map, size) KASSERT(m[bit] && bit >= off);
}

KTEST(bitops_model_random)
{
	static const unsigned long sizes[] = { 0, 1, 63, 64, 65, 127, 128, 129, 200, NBITS_MAX };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned long size = sizes[s];
		/* One spare word filled with garbage past @size: searches must ignore it. */
		unsigned long map[KSYNC_BITS_TO_LONGS(NBITS_MAX) + 1];
		bool m[NBITS_MAX] = { false };

		memset(map, 0, sizeof(map));
		if (size % KSYNC_BITS_PER_LONG)
			map[size / KSYNC_BITS_PER_LONG] = ~0UL << (size % KSYNC_BITS_PER_LONG);
		else
			map[size / KSYNC_BITS_PER_LONG] = ~0UL;

		for (int step = 0; step < 3000 && size; step++) {
			unsigned long nr = rnd() % size;
			bool old = m[nr];
			switch (rnd() % 9) {
			case 0: ksync_set_bit(nr, map); m[nr] = true; break;
			case 1: ksync_clear_bit(nr, map); m[nr] = false; break;
			case 2: ksync_change_bit(nr, map); m[nr] = !m[nr]; break;
			case 3: KASSERT(ksync_test_and_set_bit(nr, map) == old); m[nr] = true; break;
			case 4: KASSERT(ksync_test_and_clear_bit(nr, map) == old); m[nr] = false; break;
			case 5: KASSERT(ksync_test_and_change_bit(nr, map) == old); m[nr] = !old; break;
			case 6: ksync___set_bit(nr, map); m[nr] = true; break;
			case 7: ksync___clear_bit(nr, map); m[nr] = false; break;
			case 8: ksync___change_bit(nr, map); m[nr] = !m[nr]; break;
			}
			check_against_model(map, m, size);
		}
		check_against_model(map, m, size);
	}
	KCHECK(1);
}

KTEST(bitops_search_edges)
{
	unsigned long map[3] = { 0, 0, 0 };

	KCHECK_EQ(ksync_find_first_bit(map, 0), 0);
	KCHECK_EQ(ksync_find_last_bit(map, 0), 0);
	KCHECK_EQ(ksync_find_first_bit(map, 150), 150);
	KCHECK_EQ(ksync_find_first_zero_bit(map, 150), 0);
	KCHECK_EQ(ksync_find_next_bit(map, 150, 149), 150);
	KCHECK_EQ(ksync_find_next_bit(map, 150, 150), 150);
	KCHECK_EQ(ksync_find_next_bit(map, 150, 1000), 150);
	ksync_set_bit(149, map);
	KCHECK_EQ(ksync_find_next_bit(map, 150, 0), 149);
	KCHECK_EQ(ksync_find_last_bit(map, 150), 149);
	KCHECK_EQ(ksync_find_last_bit(map, 149), 149); /* bit 149 is past a 149-bit map */
	KCHECK_EQ(ksync_find_next_bit(map, 149, 0), 149);
	ksync_set_bit(0, map);
	KCHECK_EQ(ksync_find_last_bit(map, 149), 0);
	ksync_set_bit(64, map);
	KCHECK_EQ(ksync_find_next_bit(map, 150, 1), 64);
	KCHECK_EQ(ksync_find_next_bit(map, 150, 65), 149);
	KCHECK_EQ(ksync___ffs(0x8UL), 3);
	KCHECK_EQ(ksync___fls(0x8UL), 3);
	KCHECK_EQ(ksync___fls(~0UL), KSYNC_BITS_PER_LONG - 1);
	KCHECK_EQ(ksync_hweight_long(0xf0f0UL), 8);
	KCHECK_EQ(KSYNC_BIT_WORD(130UL), 2);
	KCHECK_EQ(KSYNC_BIT_MASK(130UL), 1UL << 2);
}

/*
 * Two (or three) threads own disjoint bits of the SAME words and flip them
 * with the atomic set/clear/change operations; a plain read-modify-write
 * would lose the other thread's updates. Each thread checks its own bits
 * after every operation: nobody else may have changed them.
 */
#define HAMMER_WORDS 2
#define HAMMER_THREADS 3
static unsigned long hammer_map[HAMMER_WORDS];
static double hammer_deadline;

struct hammer_arg {
	unsigned int id;
	unsigned long ops;
};

static void *hammer(void *p)
{
	struct hammer_arg *a = (struct hammer_arg *)p;
	bool mine[HAMMER_WORDS * 64] = { false };
	uint64_t x = 0x1234567ULL * (a->id + 1);
	unsigned long nbits = HAMMER_WORDS * (unsigned long)KSYNC_BITS_PER_LONG;

	while (ktest_now() < hammer_deadline) {
		for (int k = 0; k < 1000; k++) {
			kt_xorshift64(&x);
			/* Bits owned by this thread: nr % HAMMER_THREADS == id. */
			unsigned long nr = (x % (nbits / HAMMER_THREADS)) * HAMMER_THREADS + a->id;
			switch ((x >> 32) % 6) {
			case 0: ksync_set_bit(nr, hammer_map); mine[nr] = true; break;
			case 1: ksync_clear_bit(nr, hammer_map); mine[nr] = false; break;
			case 2: ksync_change_bit(nr, hammer_map); mine[nr] = !mine[nr]; break;
			case 3: KASSERT(ksync_test_and_set_bit(nr, hammer_map) == mine[nr]);
				mine[nr] = true; break;
			case 4: KASSERT(ksync_test_and_clear_bit(nr, hammer_map) == mine[nr]);
				mine[nr] = false; break;
			case 5: KASSERT(ksync_test_and_change_bit(nr, hammer_map) == mine[nr]);
				mine[nr] = !mine[nr]; break;
			}
			KASSERT(ksync_test_bit(nr, hammer_map) == mine[nr]);
			a->ops++;
		}
	}
	for (unsigned long nr = a->id; nr < nbits; nr += HAMMER_THREADS)
		KASSERT(ksync_test_bit(nr, hammer_map) == mine[nr]);
	return NULL;
}

KTEST(bitops_concurrent_no_lost_bit)
{
	pthread_t t[HAMMER_THREADS];
	struct hammer_arg a[HAMMER_THREADS];

	hammer_deadline = ktest_now() + ktest_seconds(1.0);
	for (unsigned int i = 0; i < HAMMER_THREADS; i++) {
		a[i] = (struct hammer_arg){ i, 0 };
		KASSERT(pthread_create(&t[i], NULL, hammer, &a[i]) == 0);
	}
	unsigned long ops = 0;
	for (unsigned int i = 0; i < HAMMER_THREADS; i++) {
		pthread_join(t[i], NULL);
		ops += a[i].ops;
	}
	KCHECK(ops > 0);
	printf("  %lu bit operations\n", ops);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
