/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/hash.h> and <linux/hashtable.h> under their kernel spellings,
 * through the umbrella <ksync/kernel.h>: the golden-ratio hashes' values
 * (worked out independently of the code under test) and ranges, the
 * table's sizes, add/del and what they leave in a node, walkers that visit
 * only their key's bucket, the break rule of hash_for_each(), the choice of
 * hash by key width, and the RCU forms with readers under SRCU. Random
 * sequences are cross-checked against an array. Built as C and C++, on both
 * atomics back-ends.
 */
#include <ksync/kernel.h>

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

struct ent {
	uint32_t key;
	uint32_t val;
	struct hlist_node hn;
};

static uint64_t rng_state = 0xd1b54a32d192ed03ULL;
static uint64_t rnd64(void)
{
	return kt_xorshift64s(&rng_state);
}

/* ------------------------------------------------------------------------ */
/* hash.h                                                                   */

KTEST(golden_ratio_constants)
{
	KCHECK(GOLDEN_RATIO_32 == 0x61C88647u);
	KCHECK(GOLDEN_RATIO_64 == 0x61C8864680B583EBull);
#if BITS_PER_LONG == 64
	KCHECK(GOLDEN_RATIO_PRIME == GOLDEN_RATIO_64);
#else
	KCHECK(GOLDEN_RATIO_PRIME == GOLDEN_RATIO_32);
#endif
	KCHECK(__hash_32(1) == GOLDEN_RATIO_32);
	KCHECK(__hash_32(0) == 0);
}

/* Expected values computed apart (exact integer arithmetic, top bits kept). */
KTEST(hash_32_values)
{
	KCHECK_EQ(hash_32(1, 32), 0x61c88647);
	KCHECK_EQ(hash_32(1, 16), 0x61c8);
	KCHECK_EQ(hash_32(0xdeadbeef, 10), 0x1b7);
	KCHECK_EQ(hash_32(12345, 7), 0x2f);
	KCHECK_EQ(hash_32(0xffffffff, 32), 0x9e3779b9);
	KCHECK_EQ(hash_32(42, 1), 0);
	KCHECK_EQ(hash_32(0, 32), 0);
	/* bits == 0: ksync defines it (one bucket); the kernel's shift is undefined */
	KCHECK_EQ(hash_32(0xdeadbeef, 0), 0);
	for (int i = 0; i < 10000; i++) {
		uint32_t v = (uint32_t)rnd64();
		unsigned bits = 1 + (unsigned)(rnd64() % 32);
		uint32_t h = hash_32(v, bits);

		/* the top @bits bits of the full product, so below 2^bits */
		KCHECK(h == (uint32_t)(__hash_32(v) >> (32 - bits)));
		KCHECK((uint64_t)h < (1ull << bits));
	}
}

KTEST(hash_64_values)
{
	KCHECK_EQ(sizeof(hash_64(1, 1)), 4); /* the kernel's hash_64 returns u32 */
#if BITS_PER_LONG == 64
	KCHECK_EQ(hash_64(1, 32), 0x61c88646);
	KCHECK_EQ(hash_64(1, 16), 0x61c8);
	KCHECK_EQ(hash_64(0x123456789abcdef0ull, 10), 0xdb);
	KCHECK_EQ(hash_64(0xffffffffffffffffull, 32), 0x9e3779b9);
	KCHECK_EQ(hash_64(12345, 7), 0x2f);
	KCHECK_EQ(hash_64(42, 1), 0);
#endif
	KCHECK_EQ(hash_64(0x123456789abcdef0ull, 0), 0);
	for (int i = 0; i < 10000; i++) {
		uint64_t v = rnd64();
		unsigned bits = 1 + (unsigned)(rnd64() % 32);
		uint32_t h = hash_64(v, bits);

		KCHECK((uint64_t)h < (1ull << bits));
		KCHECK(hash_long((unsigned long)v, bits) ==
		       (BITS_PER_LONG == 64 ? h : hash_32((uint32_t)v, bits)));
#if BITS_PER_LONG == 64
		KCHECK(h == (uint32_t)((v * GOLDEN_RATIO_64) >> (64 - bits)));
#endif
	}
}

KTEST(hash_ptr_and_fold)
{
	static int objs[4];

	for (int i = 0; i < 4; i++) {
		KCHECK(hash_ptr(&objs[i], 8) == hash_long((unsigned long)(uintptr_t)&objs[i], 8));
		KCHECK(hash_ptr(&objs[i], 8) < 256);
	}
	KCHECK_EQ(hash_ptr(NULL, 12), 0);
#if BITS_PER_LONG == 64
	KCHECK_EQ(hash32_ptr((const void *)(uintptr_t)0x0000123456789abcull), 0x56788888);
#endif
	KCHECK_EQ(hash32_ptr((const void *)(uintptr_t)0x1234u), 0x1234);
}

/* ------------------------------------------------------------------------ */
/* hashtable.h                                                              */

static DEFINE_HASHTABLE(tbl8, 3);
static DEFINE_HASHTABLE(tbl1, 0);
static DEFINE_READ_MOSTLY_HASHTABLE(tbl_rm, 5);

struct holder {
	int before;
	DECLARE_HASHTABLE(tbl, 4);
	int after;
};

KTEST(sizes_and_empty)
{
	struct holder h;

	KCHECK_EQ(HASH_SIZE(tbl8), 8);
	KCHECK_EQ(HASH_BITS(tbl8), 3);
	KCHECK_EQ(HASH_SIZE(tbl1), 1);
	KCHECK_EQ(HASH_BITS(tbl1), 0);
	KCHECK_EQ(HASH_SIZE(tbl_rm), 32);
	KCHECK_EQ(HASH_BITS(tbl_rm), 5);
	KCHECK(hash_empty(tbl8) && hash_empty(tbl1) && hash_empty(tbl_rm));
	KCHECK_EQ(HASH_SIZE(h.tbl), 16);
	KCHECK_EQ(HASH_BITS(h.tbl), 4);
	KCHECK_EQ(sizeof(h.tbl), 16 * sizeof(struct hlist_head));
	h.before = h.after = 7;
	memset(h.tbl, 0xa5, sizeof(h.tbl));
	hash_init(h.tbl);
	KCHECK(hash_empty(h.tbl));
	for (int i = 0; i < 16; i++)
		KCHECK(hlist_empty(&h.tbl[i]));
	KCHECK(h.before == 7 && h.after == 7); /* exactly the table is cleared */
}

KTEST(add_del_hashed)
{
	DEFINE_HASHTABLE(t, 3);
	struct ent e, f;
	struct ent *pos;
	uint32_t key = 0xdeadbeef;
	int k = 0;

	e.key = key;
	INIT_HLIST_NODE(&e.hn);
	KCHECK(!hash_hashed(&e.hn));
	hash_add(t, &e.hn, e.key);
	KCHECK(hash_hashed(&e.hn));
	KCHECK(!hash_empty(t));
	/* in bucket hash_min(key, bits) == hash_32(key, 3) for a 32-bit key */
	KCHECK_EQ(hash_min(key, HASH_BITS(t)), 3);
	KCHECK(t[3].first == &e.hn && e.hn.pprev == &t[3].first);
	for (int b = 0; b < 8; b++)
		KCHECK(hlist_empty(&t[b]) == (b != 3));
	/* two entries with one key: both kept, the newer first */
	f.key = key;
	hash_add(t, &f.hn, f.key);
	hash_for_each_possible(t, pos, hn, key) {
		KCHECK(pos == (k == 0 ? &f : &e));
		k++;
	}
	KCHECK_EQ(k, 2);
	/* hash_del leaves the node unhashed (hlist_del_init), and twice is fine */
	hash_del(&e.hn);
	KCHECK(!hash_hashed(&e.hn) && hlist_unhashed(&e.hn));
	KCHECK(e.hn.next == NULL && e.hn.pprev == NULL);
	hash_del(&e.hn);
	KCHECK(!hash_empty(t));
	hash_del(&f.hn);
	KCHECK(hash_empty(t));
}

KTEST(hash_min_picks_the_hash_by_key_width)
{
	DEFINE_HASHTABLE(t, 3);
	struct ent a, b;
	struct ent *pos;
	uint32_t k32 = 0xdeadbeef;
	uint64_t k64 = 0xdeadbeef;
	int found = 0;

	KCHECK_EQ(hash_min(k32, 3), hash_32(k32, 3));
	KCHECK_EQ(hash_min(k64, 3), hash_long(k64, 3));
#if BITS_PER_LONG == 64
	/* one value, two widths, two buckets (3 and 7) */
	KCHECK_EQ(hash_min(k32, 3), 3);
	KCHECK_EQ(hash_min(k64, 3), 7);
	/* small values tend to agree: 5 lands in one bucket either way */
	KCHECK_EQ(hash_min((uint32_t)5, 3), hash_min((uint64_t)5, 3));
#endif
	a.key = 1;
	b.key = 2;
	hash_add(t, &a.hn, k32);
	hash_add(t, &b.hn, k64);
	hash_for_each_possible(t, pos, hn, k64) found += pos == &b ? 1 : 100;
	KCHECK_EQ(found, 1); /* the 32-bit-keyed entry is in another bucket */
}

KTEST(one_bucket_table)
{
	struct ent e[3];
	struct ent *pos;
	int k = 0;

	/* HASH_BITS == 0: every key hashes to 0 (ksync defines hash_32(v, 0)) */
	for (int i = 0; i < 3; i++) {
		e[i].key = (uint32_t)(i * 1000003u);
		hash_add(tbl1, &e[i].hn, e[i].key);
	}
	hash_for_each_possible(tbl1, pos, hn, 123456u) k++;
	KCHECK_EQ(k, 3);
	for (int i = 0; i < 3; i++)
		hash_del(&e[i].hn);
	KCHECK(hash_empty(tbl1));
}

#define NE 64

KTEST(for_each_possible_visits_only_its_bucket)
{
	DEFINE_HASHTABLE(t, 4);
	static struct ent es[NE];
	struct ent *pos;

	for (int i = 0; i < NE; i++) {
		es[i].key = (uint32_t)rnd64() % 40u; /* collisions and shared buckets */
		hash_add(t, &es[i].hn, es[i].key);
	}
	for (uint32_t key = 0; key < 40; key++) {
		uint32_t bkt = hash_32(key, 4);
		int visited = 0, in_bucket = 0, with_key = 0, with_key_model = 0;

		hash_for_each_possible(t, pos, hn, key) {
			visited++;
			KCHECK_EQ(hash_32(pos->key, 4), bkt); /* never another bucket */
			with_key += pos->key == key;
		}
		for (int i = 0; i < NE; i++) {
			in_bucket += hash_32(es[i].key, 4) == bkt;
			with_key_model += es[i].key == key;
		}
		KCHECK_EQ(visited, in_bucket);
		KCHECK_EQ(with_key, with_key_model);
	}
}

KTEST(for_each_walks_everything_and_break_rule)
{
	DEFINE_HASHTABLE(t, 3);
	static struct ent es[NE];
	struct ent *pos;
	int bkt, last_bkt = -1, visits = 0;
	unsigned bkt_u;

	for (int i = 0; i < NE; i++) {
		es[i].key = (uint32_t)i;
		es[i].val = 0;
		hash_add(t, &es[i].hn, es[i].key);
	}
	hash_for_each(t, bkt, pos, hn) {
		KCHECK(bkt >= last_bkt); /* buckets in index order */
		KCHECK_EQ(hash_32(pos->key, 3), bkt);
		last_bkt = bkt;
		pos->val++;
		visits++;
	}
	KCHECK_EQ(visits, NE);
	KCHECK(pos == NULL && bkt == 8);
	for (int i = 0; i < NE; i++)
		KCHECK_EQ(es[i].val, 1);

	/*
	 * A break ends the whole walk with the cursor on the entry; the bucket
	 * cursor is then one past its bucket (the outer loop's increment runs
	 * before its obj == NULL test).
	 */
	hash_for_each(t, bkt_u, pos, hn) {
		if (pos->key == 37)
			break;
	}
	KCHECK(pos == &es[37]);
	KCHECK_EQ(bkt_u, hash_32(37, 3) + 1);
}

KTEST(safe_walkers_delete_as_they_go)
{
	DEFINE_HASHTABLE(t, 3);
	static struct ent es[NE];
	struct ent *pos;
	struct hlist_node *tmp;
	int bkt, n = 0;

	for (int i = 0; i < NE; i++) {
		es[i].key = (uint32_t)(i % 10);
		hash_add(t, &es[i].hn, es[i].key);
	}
	/* every entry of key 4, through its bucket */
	hash_for_each_possible_safe(t, pos, tmp, hn, 4u) {
		if (pos->key == 4) {
			hash_del(&pos->hn);
			n++;
		}
	}
	KCHECK_EQ(n, 6); /* keys i % 10 for i < 64: 4, 14, 24, 34, 44, 54 */
	for (int i = 0; i < NE; i++)
		KCHECK(hash_hashed(&es[i].hn) == (es[i].key != 4));
	/* everything left, across the table */
	n = 0;
	hash_for_each_safe(t, bkt, tmp, pos, hn) {
		hash_del(&pos->hn);
		n++;
	}
	KCHECK_EQ(n, NE - 6);
	KCHECK(hash_empty(t));
}

KTEST(rcu_forms_single_threaded)
{
	DEFINE_HASHTABLE(t, 2);
	struct ent es[6];
	struct ent *pos;
	int bkt, k;

	for (int i = 0; i < 6; i++) {
		es[i].key = (uint32_t)i;
		hash_add_rcu(t, &es[i].hn, es[i].key);
		KCHECK(hash_hashed(&es[i].hn));
	}
	k = 0;
	hash_for_each_rcu(t, bkt, pos, hn) k++;
	KCHECK_EQ(k, 6);
	/* the optional condition of the kernel's hash_for_each_possible_rcu */
	k = 0;
	hash_for_each_possible_rcu(t, pos, hn, 3u, true) k += pos->key == 3;
	hash_for_each_possible_rcu(t, pos, hn, 3u) k += pos->key == 3;
	hash_for_each_possible_rcu_notrace(t, pos, hn, 3u) k += pos->key == 3;
	KCHECK_EQ(k, 3);
	/* hash_del_rcu: unhashed, ->next kept for a reader standing on it */
	{
		struct hlist_node *next = es[3].hn.next;
		hash_del_rcu(&es[3].hn);
		KCHECK(!hash_hashed(&es[3].hn));
		KCHECK(es[3].hn.next == next);
	}
	k = 0;
	hash_for_each_possible_rcu(t, pos, hn, 3u) k += pos->key == 3;
	KCHECK_EQ(k, 0);
}

/* Random add/del sequences against an array of (key, hashed) pairs. */
KTEST(random_sequences_match_array)
{
	DEFINE_HASHTABLE(t, 3);
	static struct ent es[32];
	int hashed[32];

	memset(hashed, 0, sizeof(hashed));
	for (int i = 0; i < 32; i++)
		INIT_HLIST_NODE(&es[i].hn);
	for (int step = 0; step < 20000; step++) {
		int i = (int)(rnd64() % 32);

		if (hashed[i]) {
			hash_del(&es[i].hn);
			hashed[i] = 0;
		} else {
			es[i].key = (uint32_t)(rnd64() % 20);
			hash_add(t, &es[i].hn, es[i].key);
			hashed[i] = 1;
		}
		KCHECK(hash_hashed(&es[i].hn) == (hashed[i] != 0));
		if (step % 16 == 0) {
			int any = 0;
			for (uint32_t key = 0; key < 20; key++) {
				struct ent *pos;
				int got = 0, want = 0;
				hash_for_each_possible(t, pos, hn, key) got += pos->key == key;
				for (int j = 0; j < 32; j++)
					want += hashed[j] && es[j].key == key;
				KCHECK_EQ(got, want);
				any |= want;
			}
			KCHECK(hash_empty(t) == !any);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* RCU readers under SRCU against an updater                                */

#define POOL 48
static DEFINE_HASHTABLE(rcu_tbl, 4);
static struct ent pool[POOL];
static struct srcu_struct rcu_ss;
static int stop_readers;
static long reader_errors;

static void *reader(void *arg)
{
	uint64_t st = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)arg;
	long errors = 0;

	while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE)) {
		uint32_t key = (uint32_t)(kt_xorshift64s(&st) % 64);
		struct ent *pos;
		int idx = srcu_read_lock(&rcu_ss);
		int n = 0, bkt;

		hash_for_each_possible_rcu(rcu_tbl, pos, hn, key, srcu_read_lock_held(&rcu_ss)) {
			/* published whole: the payload matches the key it was filed under */
			if (pos->val != pos->key * 3u || hash_32(pos->key, 4) != hash_32(key, 4))
				errors++;
			if (++n > POOL)
				errors++; /* a walk terminates */
		}
		n = 0;
		hash_for_each_rcu(rcu_tbl, bkt, pos, hn) {
			if (pos->val != pos->key * 3u)
				errors++;
			if (++n > POOL + 2)
				errors++;
		}
		srcu_read_unlock(&rcu_ss, idx);
	}
	__atomic_fetch_add(&reader_errors, errors, __ATOMIC_RELAXED);
	return NULL;
}

KTEST(rcu_readers_see_whole_entries)
{
	pthread_t r[3];
	double end;
	long ops = 0;

	KASSERT(init_srcu_struct(&rcu_ss) == 0);
	for (int i = 0; i < POOL; i++) {
		pool[i].key = (uint32_t)i;
		pool[i].val = (uint32_t)i * 3u;
		hash_add_rcu(rcu_tbl, &pool[i].hn, pool[i].key);
	}
	for (int i = 0; i < 3; i++)
		KASSERT(pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i + 1)) == 0);
	end = ktest_now() + ktest_seconds(0.3);
	while (ktest_now() < end) {
		struct ent *e = &pool[rnd64() % POOL];

		hash_del_rcu(&e->hn);
		synchronize_srcu(&rcu_ss); /* no reader is left on it */
		e->key = (uint32_t)(rnd64() % 64);
		e->val = e->key * 3u;
		hash_add_rcu(rcu_tbl, &e->hn, e->key);
		ops++;
	}
	__atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	KCHECK(ops > 0);
	KCHECK_EQ(reader_errors, 0);
	cleanup_srcu_struct(&rcu_ss);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
