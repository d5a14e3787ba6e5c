/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bitmap_test.c - <ksync/bitmap.h>: whole-map operations against a bool
 * model; sized maps: range checks (warning per call site, nothing written),
 * companion data, growth against a model; and growth racing with setters
 * and walkers under SRCU, which must lose no bit and no companion update.
 */
#include <ksync/bitmap.h>
#include <ksync/sized_map.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"
#include "wait.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static uint64_t rnd(void)
{
	return kt_xorshift64s(&rng_state);
}

/* ------------------------------------------------------------------------ */
/* Whole maps                                                               */

#define WM_MAX 260
#define WM_WORDS KSYNC_BITS_TO_LONGS(WM_MAX)

static void to_model(const unsigned long *map, bool *m, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		m[i] = ksync_test_bit(i, map);
}

static void random_map(unsigned long *map, bool *m, unsigned long n)
{
	/* Garbage in every word, including past @n: operations must ignore it. */
	for (size_t i = 0; i < WM_WORDS; i++)
		map[i] = (unsigned long)rnd();
	to_model(map, m, n);
}

KTEST(bitmap_whole_map_model)
{
	static const unsigned long sizes[] = { 1, 5, 63, 64, 65, 128, 191, WM_MAX };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned long n = sizes[s];
		for (int step = 0; step < 400; step++) {
			unsigned long a[WM_WORDS], b[WM_WORDS], d[WM_WORDS];
			bool ma[WM_MAX], mb[WM_MAX], md[WM_MAX];
			unsigned int w = 0;
			bool any = false, eq = true, full = true;

			random_map(a, ma, n);
			random_map(b, mb, n);
			if (rnd() % 4 == 0)
				memcpy(b, a, sizeof(a)), memcpy(mb, ma, sizeof(ma));
			for (unsigned long i = 0; i < n; i++) {
				w += ma[i];
				eq &= ma[i] == mb[i];
				full &= ma[i];
			}
			KASSERT(ksync_bitmap_weight(a, n) == w);
			KASSERT(ksync_bitmap_empty(a, n) == (w == 0));
			KASSERT(ksync_bitmap_full(a, n) == full);
			KASSERT(ksync_bitmap_equal(a, b, n) == eq);

			any = false;
			KASSERT(ksync_bitmap_and(d, a, b, n) ==
				(bool)({ for (unsigned long i = 0; i < n; i++) any |= ma[i] && mb[i]; any; }));
			to_model(d, md, n);
			for (unsigned long i = 0; i < n; i++)
				KASSERT(md[i] == (ma[i] && mb[i]));

			any = false;
			KASSERT(ksync_bitmap_andnot(d, a, b, n) ==
				(bool)({ for (unsigned long i = 0; i < n; i++) any |= ma[i] && !mb[i]; any; }));
			to_model(d, md, n);
			for (unsigned long i = 0; i < n; i++)
				KASSERT(md[i] == (ma[i] && !mb[i]));

			ksync_bitmap_or(d, a, b, n);
			to_model(d, md, n);
			for (unsigned long i = 0; i < n; i++)
				KASSERT(md[i] == (ma[i] || mb[i]));

			ksync_bitmap_copy(d, a, n);
			KASSERT(ksync_bitmap_equal(d, a, n));

			/* In-place: dst aliases an operand. */
			ksync_bitmap_and(a, a, b, n);
			to_model(a, md, n);
			for (unsigned long i = 0; i < n; i++)
				KASSERT(md[i] == (ma[i] && mb[i]));

			ksync_bitmap_fill(d, n);
			KASSERT(ksync_bitmap_full(d, n) && ksync_bitmap_weight(d, n) == n);
			/* Whole words, as the kernel's: the tail bits past n are set too. */
			KASSERT(ksync_find_first_zero_bit(d, KSYNC_BITS_TO_LONGS(n) * KSYNC_BITS_PER_LONG) ==
				KSYNC_BITS_TO_LONGS(n) * KSYNC_BITS_PER_LONG);
			ksync_bitmap_zero(d, n);
			KASSERT(ksync_bitmap_empty(d, n) && ksync_bitmap_weight(d, n) == 0);
		}
	}

	unsigned long *z = ksync_bitmap_zalloc(1000);
	KCHECK(z != NULL);
	KCHECK(ksync_bitmap_empty(z, 1000));
	ksync_bitmap_free(z);
	KSYNC_DECLARE_BITMAP(decl, 65);
	KCHECK_EQ(sizeof(decl), 2 * sizeof(long));
}

/* ------------------------------------------------------------------------ */
/* Sized maps, single-threaded                                              */

static int set_bit_site(struct ksync_sized_map *m, unsigned long nr)
{
	return ksync_sized_map_set_bit(m, nr); /* one call site, one warning */
}

KTEST(sized_map_range_checks)
{
	struct ksync_sized_map *m = ksync_sized_map_alloc(70, sizeof(ksync_atomic_long_t));
	KASSERT(m);
	KCHECK_EQ(ksync_sized_map_nr_max(m), 70);

	KCHECK_EQ(set_bit_site(m, 69), 0);
	KCHECK(ksync_sized_map_test_bit(m, 69));

	unsigned long before = __atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED);
	KCHECK_EQ(set_bit_site(m, 70), -EINVAL);
	KCHECK_EQ(__atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED), before + 1);
	/* Same call site again: no second warning, still refused. */
	KCHECK_EQ(set_bit_site(m, 1000), -EINVAL);
	KCHECK_EQ(set_bit_site(m, ~0UL), -EINVAL);
	KCHECK_EQ(__atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED), before + 1);
	/* Nothing written: bits 70..127 share bit 69's unit and must stay clear. */
	KCHECK_EQ(ksync_sized_map_find_next_bit(m, 0), 69);
	KCHECK_EQ(ksync_sized_map_find_next_bit(m, 70), 70);

	/* Each other accessor warns at its own call site and changes nothing. */
	KCHECK(!ksync_sized_map_test_bit(m, 70));
	ksync_sized_map_clear_bit(m, 71);
	KCHECK(!ksync_sized_map_test_and_clear_bit(m, 72));
	KCHECK(ksync_sized_map_data(m, 73) == NULL);
	KCHECK_EQ(__atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED), before + 5);
	KCHECK(ksync_sized_map_test_bit(m, 69));

	KCHECK(ksync_sized_map_test_and_clear_bit(m, 69));
	KCHECK(!ksync_sized_map_test_and_clear_bit(m, 69));
	KCHECK_EQ(ksync_sized_map_find_next_bit(m, 0), 70);
	ksync_sized_map_free(m);

	/* Zero-bit map: everything is out of range. */
	m = ksync_sized_map_alloc(0, 0);
	KASSERT(m);
	KCHECK_EQ(ksync_sized_map_find_next_bit(m, 0), 0);
	KCHECK_EQ(ksync_sized_map_set_bit(m, 0), -EINVAL);
	ksync_sized_map_free_all(m);
	ksync_sized_map_free(NULL);
}

KTEST(sized_map_companion_data)
{
	struct elem {
		long double ld; /* demands the strictest alignment */
		int tag;
	};
	struct ksync_sized_map *m = ksync_sized_map_alloc(200, sizeof(struct elem));
	KASSERT(m);
	for (unsigned int i = 0; i < 200; i++) {
		struct elem *e = (struct elem *)ksync_sized_map_data(m, i);
		KASSERT(e);
		KASSERT(((uintptr_t)e % __alignof__(struct elem)) == 0);
		KASSERT(e->tag == 0 && e->ld == 0); /* zeroed */
		e->tag = (int)i + 1;
	}
	for (unsigned int i = 0; i < 200; i++)
		KCHECK_EQ(((struct elem *)ksync_sized_map_data(m, i))->tag, i + 1);
	ksync_sized_map_free(m);
}

static struct ksync_srcu_struct model_srcu;

KTEST(sized_map_model_with_growth)
{
	enum { MAXB = 64 * 9 + 5 };
	bool model[MAXB] = { false };
	long counts[MAXB] = { 0 };
	struct ksync_sized_map *slot;

	KASSERT(ksync_init_srcu_struct(&model_srcu) == 0);
	slot = ksync_sized_map_alloc(3, sizeof(ksync_atomic_long_t));
	KASSERT(slot);

	for (int step = 0; step < 4000; step++) {
		struct ksync_sized_map *m = ksync_rcu_dereference_raw(slot);
		unsigned int max = ksync_sized_map_nr_max(m);
		unsigned int nr = (unsigned int)(rnd() % max);
		switch (rnd() % 6) {
		case 0:
		case 1:
			KASSERT(ksync_sized_map_set_bit(m, nr) == 0);
			model[nr] = true;
			break;
		case 2:
			ksync_sized_map_clear_bit(m, nr);
			model[nr] = false;
			break;
		case 3:
			KASSERT(ksync_sized_map_test_and_clear_bit(m, nr) == model[nr]);
			model[nr] = false;
			break;
		case 4:
			ksync_atomic_long_add((long)nr + 1,
					      (ksync_atomic_long_t *)ksync_sized_map_data(m, nr));
			counts[nr] += (long)nr + 1;
			break;
		case 5:
			if (max < MAXB && rnd() % 8 == 0) {
				unsigned int n = max + 1 + (unsigned int)(rnd() % 100);
				if (n > MAXB)
					n = MAXB;
				KASSERT(ksync_sized_map_grow(&slot, n, &model_srcu) == 0);
				m = ksync_rcu_dereference_raw(slot);
				KASSERT(ksync_sized_map_nr_max(m) == n);
				/* Not larger: nothing happens. */
				KASSERT(ksync_sized_map_grow(&slot, n, &model_srcu) == 0);
				KASSERT(ksync_rcu_dereference_raw(slot) == m);
				max = n;
			}
			break;
		}
		/* Check the whole map against the model after every step. */
		unsigned int bit, expect = 0;
		ksync_sized_map_for_each_set_bit(bit, m) {
			KASSERT(bit < max);
			while (expect < bit)
				KASSERT(!model[expect++]);
			KASSERT(model[bit]);
			expect = bit + 1;
		}
		while (expect < max)
			KASSERT(!model[expect++]);
		for (unsigned int i = 0; i < max; i++) {
			KASSERT(ksync_sized_map_test_bit(m, i) == model[i]);
			KASSERT(ksync_atomic_long_read(
					(ksync_atomic_long_t *)ksync_sized_map_data(m, i)) == counts[i]);
		}
		bit = nr;
		ksync_sized_map_for_each_set_bit_from(bit, m) KASSERT(bit >= nr && model[bit]);
	}
	ksync_srcu_barrier(&model_srcu); /* superseded headers are freed */
	ksync_sized_map_free_all(slot);
	ksync_cleanup_srcu_struct(&model_srcu);
	KCHECK(1);
}

/*
 * ksync_sized_map_find_next_bit_in() against a plain reference: random maps
 * (random bit counts, growth in between so units are shared across
 * generations, stray bits set through a newer generation past the old
 * nr_max), every (start, end) pair for small maps. The units wholly past the
 * bound are poisoned (their pointers set to NULL) during each search, so a
 * search that read one would crash: the bound is also a bound on memory.
 */
static unsigned int ref_find_in(const bool *model, unsigned int max, unsigned int start,
				unsigned int end)
{
	for (unsigned int i = start; i < end && i < max; i++)
		if (model[i])
			return i;
	return end;
}

static unsigned int find_in_poisoned(struct ksync_sized_map *m, unsigned int start,
				     unsigned int end)
{
	enum { U = 16 };
	struct ksync__sized_map_unit *saved[U];
	unsigned int lim = end < m->nr_max ? end : m->nr_max;
	unsigned int first = lim ? (unsigned int)((lim - 1) / KSYNC_BITS_PER_LONG) + 1 : 0;
	unsigned int lo = (unsigned int)(start / KSYNC_BITS_PER_LONG), r;

	/* Units before @start's and from the bound's last unit on are off limits. */
	for (unsigned int u = 0; u < m->nr_units && u < U; u++) {
		saved[u] = m->unit[u];
		if (u < lo || u >= first || start >= lim)
			m->unit[u] = NULL;
	}
	r = ksync_sized_map_find_next_bit_in(m, start, end);
	for (unsigned int u = 0; u < m->nr_units && u < U; u++)
		m->unit[u] = saved[u];
	return r;
}

KTEST(sized_map_find_next_bit_in_model)
{
	enum { MAXB = 64 * 5 + 7 };
	bool model[MAXB];

	KASSERT(ksync_init_srcu_struct(&model_srcu) == 0);
	for (int round = 0; round < 60; round++) {
		unsigned int max = 1 + (unsigned int)(rnd() % 200);
		struct ksync_sized_map *slot = ksync_sized_map_alloc(max, 0), *old, *m;
		unsigned int density = 1 + (unsigned int)(rnd() % 40);

		KASSERT(slot);
		memset(model, 0, sizeof(model));
		for (unsigned int i = 0; i < max; i++)
			if (rnd() % density == 0) {
				KASSERT(ksync_sized_map_set_bit(slot, i) == 0);
				model[i] = true;
			}
		/* Grow, then set bits through the new generation only. */
		old = ksync_rcu_dereference_raw(slot);
		unsigned int nmax = max + (unsigned int)(rnd() % (MAXB - max));
		int idx = ksync_srcu_read_lock(&model_srcu); /* keeps @old's header alive */
		KASSERT(ksync_sized_map_grow(&slot, nmax, &model_srcu) == 0);
		m = ksync_rcu_dereference_raw(slot);
		for (unsigned int i = max; i < nmax; i++)
			if (rnd() % density == 0) {
				KASSERT(ksync_sized_map_set_bit(m, i) == 0);
				model[i] = true;
			}
		/* Old generation: bounded by its own nr_max; new: by nmax. */
		for (unsigned int start = 0; start <= nmax + 2; start++) {
			for (unsigned int end = start > 70 ? start - 70 : 0; end <= nmax + 70;
			     end += 1 + (unsigned int)(rnd() % 3)) {
				KASSERT(find_in_poisoned(old, start, end) ==
					ref_find_in(model, max, start, end));
				KASSERT(find_in_poisoned(m, start, end) ==
					ref_find_in(model, nmax, start, end));
			}
			/* The unbounded search is the bounded one with end = nr_max. */
			KASSERT(ksync_sized_map_find_next_bit(m, start) ==
				ksync_sized_map_find_next_bit_in(m, start, nmax));
			/* Unit-at-a-time use, as the shrinker does. */
			unsigned int us = start - start % KSYNC_BITS_PER_LONG;
			KASSERT(find_in_poisoned(m, start, us + KSYNC_BITS_PER_LONG) ==
				ref_find_in(model, nmax, start, us + KSYNC_BITS_PER_LONG));
		}
		ksync_srcu_read_unlock(&model_srcu, idx);
		ksync_srcu_barrier(&model_srcu);
		ksync_sized_map_free_all(slot);
	}
	/* A zero-bit map: nothing is found and nothing is read. */
	struct ksync_sized_map *z = ksync_sized_map_alloc(0, 0);
	KASSERT(z);
	KASSERT(ksync_sized_map_find_next_bit_in(z, 0, 0) == 0);
	KASSERT(ksync_sized_map_find_next_bit_in(z, 0, 64) == 64);
	ksync_sized_map_free_all(z);
	ksync_cleanup_srcu_struct(&model_srcu);
	KCHECK(1);
}

/* ------------------------------------------------------------------------ */
/* Growth racing with setters and walkers                                   */

enum { GROW_SETTERS = 2, GROW_MAX_BITS = 64 * 24 };

static struct ksync_srcu_struct grow_srcu;
static struct ksync_sized_map *KSYNC_RCU grow_slot;
static int grow_stop;

struct setter_arg {
	unsigned int id;
	bool set[GROW_MAX_BITS];
	long added[GROW_MAX_BITS];
	unsigned long sets;
};

static void *grow_setter(void *p)
{
	struct setter_arg *a = (struct setter_arg *)p;
	uint64_t x = 0xabcdef12345ULL + a->id;

	while (!__atomic_load_n(&grow_stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(&grow_srcu);
		struct ksync_sized_map *m = ksync_srcu_dereference(grow_slot, &grow_srcu);
		unsigned int max = ksync_sized_map_nr_max(m);
		for (int k = 0; k < 50; k++) {
			kt_xorshift64(&x);
			/* This thread's bits: nr % GROW_SETTERS == id; favour the newest ones. */
			unsigned int span = (x >> 40) % 2 ? max : (max < 64 ? max : 64);
			unsigned int nr = max - 1 - (unsigned int)(x % span);
			nr -= nr % GROW_SETTERS;
			nr += a->id;
			if (nr >= max)
				continue;
			KASSERT(ksync_sized_map_set_bit(m, nr) == 0);
			ksync_atomic_long_inc((ksync_atomic_long_t *)ksync_sized_map_data(m, nr));
			a->set[nr] = true;
			a->added[nr]++;
			a->sets++;
		}
		ksync_srcu_read_unlock(&grow_srcu, idx);
	}
	return NULL;
}

static void *grow_walker(void *p)
{
	static bool seen[GROW_MAX_BITS];
	unsigned long *walks = (unsigned long *)p;

	while (!__atomic_load_n(&grow_stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(&grow_srcu);
		struct ksync_sized_map *m = ksync_srcu_dereference(grow_slot, &grow_srcu);
		unsigned int max = ksync_sized_map_nr_max(m), bit, n = 0;

		ksync_sized_map_for_each_set_bit(bit, m) {
			KASSERT(bit < max);
			seen[bit] = true;
			n++;
		}
		/* Bits are never cleared here: a bit seen once must stay set in every newer map. */
		for (unsigned int i = 0; i < max; i++)
			KASSERT(!seen[i] || ksync_sized_map_test_bit(m, i));
		KASSERT(ksync_sized_map_find_next_bit(m, max) == max);
		ksync_srcu_read_unlock(&grow_srcu, idx);
		(*walks)++;
	}
	return NULL;
}

KTEST(sized_map_grow_concurrent)
{
	static struct setter_arg args[GROW_SETTERS];
	pthread_t setters[GROW_SETTERS], walker;
	unsigned long walks = 0, grows = 0;
	double seconds = ktest_seconds(1.5);
	double deadline = ktest_now() + seconds;

	KASSERT(ksync_init_srcu_struct(&grow_srcu) == 0);
	KSYNC_RCU_INIT_POINTER(grow_slot, ksync_sized_map_alloc(5, sizeof(ksync_atomic_long_t)));
	KASSERT(ksync_rcu_access_pointer(grow_slot));
	for (unsigned int i = 0; i < GROW_SETTERS; i++) {
		args[i].id = i;
		KASSERT(pthread_create(&setters[i], NULL, grow_setter, &args[i]) == 0);
	}
	KASSERT(pthread_create(&walker, NULL, grow_walker, &walks) == 0);

	/*
	 * The grower: small steps (often within one unit, often adding one),
	 * about 80 of them spread over the run, so that setters and the walker
	 * meet growth all along, however long KTEST_SECONDS makes it.
	 */
	unsigned int n = 5;
	double step = seconds / 80;
	while (ktest_now() < deadline) {
		n = n + 1 + (unsigned int)(rnd() % 36);
		if (n > GROW_MAX_BITS)
			break;
		KASSERT(ksync_sized_map_grow(&grow_slot, n, &grow_srcu) == 0);
		grows++;
		kt_yield_for(step);
	}
	while (ktest_now() < deadline)
		ksync_cpu_relax();
	__atomic_store_n(&grow_stop, 1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < GROW_SETTERS; i++)
		pthread_join(setters[i], NULL);
	pthread_join(walker, NULL);

	/* Every bit any setter set, and every increment, is in the final map. */
	struct ksync_sized_map *m = ksync_rcu_dereference_raw(grow_slot);
	unsigned long sets = 0;
	for (unsigned int nr = 0; nr < ksync_sized_map_nr_max(m); nr++) {
		bool want = false;
		long added = 0;
		for (unsigned int i = 0; i < GROW_SETTERS; i++) {
			want |= args[i].set[nr];
			added += args[i].added[nr];
		}
		KCHECK(ksync_sized_map_test_bit(m, nr) == want);
		KCHECK_EQ(ksync_atomic_long_read((ksync_atomic_long_t *)ksync_sized_map_data(m, nr)),
			  added);
	}
	for (unsigned int i = 0; i < GROW_SETTERS; i++)
		sets += args[i].sets;
	printf("  %lu grows, %lu sets, %lu walks, final nr_max %u\n", grows, sets, walks,
	       ksync_sized_map_nr_max(m));
	KCHECK(grows > 0 && sets > 0 && walks > 0);

	ksync_srcu_barrier(&grow_srcu);
	ksync_sized_map_free_all(m);
	ksync_cleanup_srcu_struct(&grow_srcu);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
