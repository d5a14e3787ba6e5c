/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * examples/cache_fuzz.c - how a program fuzzes its own code that uses ksync:
 * a small key-value cache whose lookups run under SRCU, whose removed
 * entries are freed by call_srcu, and whose shrinker evicts the oldest
 * entries under memory pressure, driven by libFuzzer.
 *
 * Build it as users build fuzzers (clang -fsanitize=fuzzer defines nothing
 * by itself; the convention is to define the macro below, as OSS-Fuzz does):
 *
 *   clang -g -O1 -fsanitize=fuzzer,address -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
 *         -Iinclude examples/cache_fuzz.c -o cache_fuzz -L<build>/lib -lksync_shrinker ...
 *
 * With that macro <ksync/fuzzing.h> puts ksync in its fuzzing mode: no SRCU
 * domain starts a helper thread, so no thread outlives an input (libFuzzer
 * warns that such threads make results depend on earlier inputs), and the
 * cache's call_srcu frees run where the input drives them: op 5
 * (ksync_srcu_run_callbacks()) and the ksync_srcu_barrier() at the end of
 * every input. Byte 0 picks an allocation of ksync to fail
 * (ksync_fail_nth_alloc()), so the cache's handling of a registry or
 * shrinker that could not be created is fuzzed too.
 *
 * Checked, after every operation: every lookup against a model of the
 * cache (entries the shrinker evicted are taken out of the model when it
 * evicts them); at the end of every input: no thread was left behind, and
 * (under ASan) no entry was freed early or leaked.
 */
#include <ksync/fuzzing.h>
#include <ksync/list.h>
#include <ksync/rculist.h>
#include <ksync/shrinker.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 16
#define NKEYS 64

/* A failed check aborts: libFuzzer saves the input as a crash. */
#define CHECK(c) ((c) ? (void)0 : (fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c), abort()))

/* ---- the code under test: a cache, as a program would write it ---------- */

struct entry {
	struct ksync_hlist_node hnode; /* bucket, RCU */
	struct ksync_list_head lru;    /* oldest first, under cache.lock */
	struct ksync_rcu_head rcu;
	unsigned int key, value;
};

KSYNC_DEFINE_STATIC_SRCU(cache_srcu);

static struct {
	pthread_mutex_t lock;
	struct ksync_hlist_head bucket[NBUCKETS];
	struct ksync_list_head lru;
	unsigned long nr;
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker *shrinker; /* NULL: created without one */
	void (*evicted)(unsigned int key); /* tells the fuzzer's model */
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void free_entry(struct ksync_rcu_head *h)
{
	free(ksync_container_of(h, struct entry, rcu));
}

/* Under cache.lock. */
static void unlink_entry(struct entry *e)
{
	ksync_hlist_del_rcu(&e->hnode);
	ksync_list_del(&e->lru);
	cache.nr--;
	ksync_call_srcu(&cache_srcu, &e->rcu, free_entry);
}

/* Under cache.lock. */
static struct entry *find_locked(unsigned int key)
{
	struct entry *e;

	ksync_hlist_for_each_entry(e, &cache.bucket[key % NBUCKETS], hnode)
		if (e->key == key)
			return e;
	return NULL;
}

static bool cache_lookup(unsigned int key, unsigned int *value)
{
	struct entry *e;
	bool found = false;
	int idx = ksync_srcu_read_lock(&cache_srcu);

	ksync_hlist_for_each_entry_srcu(e, &cache.bucket[key % NBUCKETS], hnode,
					ksync_srcu_read_lock_held(&cache_srcu)) {
		if (e->key == key) {
			*value = e->value;
			found = true;
			break;
		}
	}
	ksync_srcu_read_unlock(&cache_srcu, idx);
	return found;
}

static int cache_insert(unsigned int key, unsigned int value)
{
	struct entry *e = malloc(sizeof(*e));

	if (!e)
		return -1;
	e->key = key;
	e->value = value;
	pthread_mutex_lock(&cache.lock);
	struct entry *old = find_locked(key);
	if (old)
		unlink_entry(old);
	ksync_hlist_add_head_rcu(&e->hnode, &cache.bucket[key % NBUCKETS]);
	ksync_list_add_tail(&e->lru, &cache.lru);
	cache.nr++;
	pthread_mutex_unlock(&cache.lock);
	return 0;
}

static void cache_erase(unsigned int key)
{
	pthread_mutex_lock(&cache.lock);
	struct entry *e = find_locked(key);
	if (e)
		unlink_entry(e);
	pthread_mutex_unlock(&cache.lock);
}

static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s, (void)sc;
	return __atomic_load_n(&cache.nr, __ATOMIC_RELAXED);
}

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long freed = 0;

	(void)s;
	pthread_mutex_lock(&cache.lock);
	while (freed < sc->nr_to_scan && !ksync_list_empty(&cache.lru)) {
		struct entry *e = ksync_list_first_entry(&cache.lru, struct entry, lru);
		if (cache.evicted)
			cache.evicted(e->key);
		unlink_entry(e);
		freed++;
	}
	pthread_mutex_unlock(&cache.lock);
	return freed;
}

/* Set up; a registry or shrinker that cannot be created leaves the cache without one. */
static void cache_init(void)
{
	for (int b = 0; b < NBUCKETS; b++)
		ksync_init_hlist_head(&cache.bucket[b]);
	ksync_init_list_head(&cache.lru);
	cache.nr = 0;
	cache.shrinker = NULL;
	cache.reg = ksync_shrinker_registry_create(1);
	if (!cache.reg)
		return;
	cache.shrinker = ksync_shrinker_alloc(cache.reg, 0, "cache");
	if (!cache.shrinker)
		return;
	cache.shrinker->count_objects = cache_count;
	cache.shrinker->scan_objects = cache_scan;
	cache.shrinker->seeks = 0;
	CHECK(ksync_shrinker_register(cache.shrinker) == 0);
}

static void cache_destroy(void)
{
	if (cache.shrinker)
		CHECK(ksync_shrinker_free(cache.shrinker) == 0);
	if (cache.reg)
		CHECK(ksync_shrinker_registry_destroy(cache.reg) == 0);
	pthread_mutex_lock(&cache.lock);
	while (!ksync_list_empty(&cache.lru))
		unlink_entry(ksync_list_first_entry(&cache.lru, struct entry, lru));
	pthread_mutex_unlock(&cache.lock);
	ksync_srcu_barrier(&cache_srcu); /* the fuzzing mode: runs the frees here */
}

/* ---- the fuzz target ------------------------------------------------------ */

static struct {
	bool present[NKEYS];
	unsigned int value[NKEYS];
} model;

static void model_evicted(unsigned int key)
{
	CHECK(key < NKEYS && model.present[key]);
	model.present[key] = false;
}

/* The process's threads: the "Threads:" line of /proc/self/status (-1 if unreadable). */
static int thread_count(void)
{
	char line[128];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int threads = thread_count();
	size_t i = 0;

	CHECK(ksync_fuzzing_enabled()); /* FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION did it */
	memset(&model, 0, sizeof(model));
	ksync_fail_nth_alloc(size ? data[i++] % 8 : 0); /* 0: no failure */
	cache_init();
	ksync_fail_nth_alloc(0);
	cache.evicted = model_evicted;

	while (i + 2 <= size && i < 4096) {
		unsigned int op = data[i++] % 6, key = data[i++] % NKEYS, v;

		switch (op) {
		case 0:
		case 1:
			v = key * 7u + (unsigned int)i;
			CHECK(cache_insert(key, v) == 0);
			model.present[key] = true;
			model.value[key] = v;
			break;
		case 2:
			cache_erase(key);
			model.present[key] = false;
			break;
		case 3:
			CHECK(cache_lookup(key, &v) == model.present[key]);
			CHECK(!model.present[key] || v == model.value[key]);
			break;
		case 4: /* memory pressure: priority from the key */
			if (cache.reg)
				(void)ksync_shrink_slab(cache.reg, 0, NULL, (int)(key % 13));
			break;
		case 5: /* the frees the helper thread would have run */
			(void)ksync_srcu_run_callbacks(&cache_srcu);
			break;
		}
	}
	for (unsigned int k = 0; k < NKEYS; k++) {
		unsigned int v;
		CHECK(cache_lookup(k, &v) == model.present[k]);
	}
	cache_destroy();
	CHECK(thread_count() == threads); /* no thread outlived the input */
	return 0;
}
