/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_hash.c - read-mostly lookups for bench_srcu: a table of 1024 keys in
 * 1024 buckets, each operation a lookup of a random key or, with the
 * probability the benchmark asks for (per mille), the replacement of that
 * key's entry by a new malloc'd one. Three twins:
 *
 *   ksync_srcu      <ksync/hashtable.h>: lookups walk the bucket inside an
 *                   SRCU read section; updaters, serialised by a mutex,
 *                   ksync_hlist_replace_rcu() and retire the old entry with
 *                   call_srcu (freed in the callback);
 *   urcu_memb       liburcu's lock-free cds_lfht (urcu-memb flavour):
 *                   cds_lfht_lookup and cds_lfht_add_replace inside read
 *                   sections, the old entry retired with call_rcu;
 *   pthread_rwlock  the same ksync table with the plain (non-RCU)
 *                   operations under a writer-preferring pthread_rwlock,
 *                   the old entry freed at once.
 */
#define _GNU_SOURCE 1
#define _LGPL_SOURCE 1
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

#include <ksync/hashtable.h>
#include <ksync/srcu.h>

#include "fixtures.h"
#include "rng.h" /* tests/common: kt_xorshift64() */

#include <pthread.h>
#include <stdlib.h>

#define HT_KEYS 1024

/* ---- ksync SRCU + ksync/hashtable.h -------------------------------------- */

struct kent {
	struct ksync_hlist_node node;
	struct ksync_rcu_head rcu;
	unsigned long key;
	long v;
};

static KSYNC_DEFINE_HASHTABLE(kt, 10);
static KSYNC_DEFINE_SRCU(kt_srcu);
static pthread_mutex_t kt_lock = PTHREAD_MUTEX_INITIALIZER;

static void kent_free(struct ksync_rcu_head *h)
{
	free(ksync_container_of(h, struct kent, rcu));
}

static struct kent *kent_new(unsigned long key)
{
	struct kent *e = bench_xmalloc(sizeof(*e));

	e->key = key;
	e->v = 1;
	return e;
}

/* The entry of @key in @bucket (every key has one), for an updater under the table's lock. */
static struct kent *kent_in(struct ksync_hlist_head *bucket, unsigned long key)
{
	struct kent *e;

	ksync_hlist_for_each_entry(e, bucket, node)
		if (e->key == key)
			return e;
	return NULL;
}

#define kent_find(table, key) kent_in(&(table)[ksync_hash_min(key, KSYNC_HASH_BITS(table))], key)

static void kt_init(void)
{
	for (unsigned long k = 0; k < HT_KEYS; k++) {
		struct kent *e = kent_new(k);

		ksync_hash_add_rcu(kt, &e->node, k);
	}
}

static long kt_lookup(unsigned long key)
{
	struct kent *e;
	long v = 0;
	int idx = ksync_srcu_read_lock(&kt_srcu);

	ksync_hash_for_each_possible_rcu(kt, e, node, key)
		if (e->key == key) {
			v = KSYNC_READ_ONCE(e->v);
			break;
		}
	ksync_srcu_read_unlock(&kt_srcu, idx);
	return v;
}

static void kt_replace(unsigned long key)
{
	struct kent *n = kent_new(key), *old;

	pthread_mutex_lock(&kt_lock);
	old = kent_find(kt, key);
	ksync_hlist_replace_rcu(&old->node, &n->node);
	pthread_mutex_unlock(&kt_lock);
	ksync_call_srcu(&kt_srcu, &old->rcu, kent_free);
}

/* ---- liburcu cds_lfht (urcu-memb) ---------------------------------------- */

struct uent {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	unsigned long key;
	long v;
};

static struct cds_lfht *ut;

static unsigned long u_hash(unsigned long key)
{
	return key * 0x9E3779B97F4A7C15ul;
}

static int u_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct uent, node)->key == *(const unsigned long *)key;
}

static void uent_free(struct rcu_head *h)
{
	free(caa_container_of(h, struct uent, rcu));
}

static struct uent *uent_new(unsigned long key)
{
	struct uent *e = bench_xmalloc(sizeof(*e));

	cds_lfht_node_init(&e->node);
	e->key = key;
	e->v = 1;
	return e;
}

static void ut_init(void)
{
	ut = cds_lfht_new_flavor(HT_KEYS, HT_KEYS, 0, 0, &urcu_memb_flavor, NULL);
	if (!ut)
		abort();
	urcu_memb_register_thread();
	urcu_memb_read_lock();
	for (unsigned long k = 0; k < HT_KEYS; k++)
		cds_lfht_add(ut, u_hash(k), &uent_new(k)->node);
	urcu_memb_read_unlock();
	urcu_memb_unregister_thread();
}

static long ut_lookup(unsigned long key)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;
	long v = 0;

	urcu_memb_read_lock();
	cds_lfht_lookup(ut, u_hash(key), u_match, &key, &it);
	n = cds_lfht_iter_get_node(&it);
	if (n)
		v = CMM_LOAD_SHARED(caa_container_of(n, struct uent, node)->v);
	urcu_memb_read_unlock();
	return v;
}

static void ut_replace(unsigned long key)
{
	struct uent *n = uent_new(key);
	struct cds_lfht_node *old;

	urcu_memb_read_lock();
	old = cds_lfht_add_replace(ut, u_hash(key), u_match, &key, &n->node);
	urcu_memb_read_unlock();
	if (old)
		urcu_memb_call_rcu(&caa_container_of(old, struct uent, node)->rcu, uent_free);
}

/* ---- the same table under a pthread_rwlock -------------------------------- */

static KSYNC_DEFINE_HASHTABLE(pt, 10);
static pthread_rwlock_t pt_lock;

static void pt_init(void)
{
	bench_rwlock_init_writer_pref(&pt_lock);
	for (unsigned long k = 0; k < HT_KEYS; k++)
		ksync_hash_add(pt, &kent_new(k)->node, k);
}

static long pt_lookup(unsigned long key)
{
	struct kent *e;
	long v = 0;

	pthread_rwlock_rdlock(&pt_lock);
	ksync_hash_for_each_possible(pt, e, node, key)
		if (e->key == key) {
			v = e->v;
			break;
		}
	pthread_rwlock_unlock(&pt_lock);
	return v;
}

static void pt_replace(unsigned long key)
{
	struct kent *n = kent_new(key), *old;

	pthread_rwlock_wrlock(&pt_lock);
	old = kent_find(pt, key);
	ksync_hlist_replace_rcu(&old->node, &n->node);
	pthread_rwlock_unlock(&pt_lock);
	free(old);
}

/* ---- the loop ------------------------------------------------------------- */

#define HASH_LOOP(lookup, replace)                                             \
	do {                                                                   \
		long sum = 0;                                                  \
		for (unsigned long i = 0; i < n; i++) {                        \
			uint64_t r = kt_xorshift64(rng);                       \
			unsigned long key = (unsigned long)(r % HT_KEYS);      \
			if ((r >> 32) % 1000 < permille)                       \
				replace(key);                                  \
			else                                                   \
				sum += lookup(key);                            \
		}                                                              \
		return sum;                                                    \
	} while (0)

static long kt_run(unsigned long n, unsigned permille, uint64_t *rng)
{
	HASH_LOOP(kt_lookup, kt_replace);
}

static long ut_run(unsigned long n, unsigned permille, uint64_t *rng)
{
	HASH_LOOP(ut_lookup, ut_replace);
}

static long pt_run(unsigned long n, unsigned permille, uint64_t *rng)
{
	HASH_LOOP(pt_lookup, pt_replace);
}

static void u_begin(void)
{
	urcu_memb_register_thread();
}

static void u_end(void)
{
	urcu_memb_unregister_thread();
}

static void kt_barrier(void)
{
	ksync_srcu_barrier(&kt_srcu);
}

static void ut_barrier(void)
{
	urcu_memb_barrier();
}

const struct bench_hash_ops bench_hash_ksync = { "ksync_srcu", kt_init, bench_nothing, bench_nothing, kt_run,
						 kt_barrier };
const struct bench_hash_ops bench_hash_urcu = { "urcu_memb", ut_init, u_begin, u_end, ut_run, ut_barrier };
const struct bench_hash_ops bench_hash_rwlock = { "pthread_rwlock", pt_init, bench_nothing, bench_nothing, pt_run,
						  bench_nothing };
