/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ported lockless shrinker (vmscan_srcu.c) under churn: reclaim threads
 * walk the global list and the memcgs' maps while a writer registers and
 * unregisters memcg-aware and global shrinkers (growing the maps past their
 * size), sets their bits, and frees each shrinker as soon as
 * unregister_shrinker() returns. A callback of a shrinker whose unregister
 * returned is counted (its owner marks it dead first), and ASan sees any
 * access to a freed shrinker or map; TSan sees the races.
 */
#include "vmscan_srcu.h"

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"

#define NR_MEMCGS 8
#define LIVE_MAX 96

struct cache {
	struct shrinker s;
	int dead;  /* set before unregister returns to its owner: no callback may see 1 */
	long objects;
};

static struct mem_cgroup memcgs[NR_MEMCGS];
static int stop;
static long late_calls, calls;

static unsigned long count(struct shrinker *s, struct shrink_control *sc)
{
	struct cache *c = container_of(s, struct cache, s);

	(void)sc;
	if (__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&late_calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	return (unsigned long)__atomic_load_n(&c->objects, __ATOMIC_RELAXED) ? 200 : SHRINK_EMPTY;
}

static unsigned long scan(struct shrinker *s, struct shrink_control *sc)
{
	struct cache *c = container_of(s, struct cache, s);

	if (__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&late_calls, 1, __ATOMIC_RELAXED);
	return sc->nr_to_scan / 2;
}

static void *reclaimer(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		shrink_slab((int)(k % VMS_NR_NODES), NULL, 0);
		for (int m = 0; m < NR_MEMCGS; m++)
			shrink_slab((int)((k + (unsigned)m) % VMS_NR_NODES), &memcgs[m], 1);
		k++;
	}
	return NULL;
}

KTEST(port_survives_churn)
{
	struct cache *live[LIVE_MAX] = { 0 };
	pthread_t t[2];
	unsigned seed = 7;
	long rounds = 0;

	for (int m = 0; m < NR_MEMCGS; m++)
		KCHECK_EQ(memcg_online(&memcgs[m]), 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reclaimer, (void *)(uintptr_t)i);
	double end = ktest_now() + ktest_seconds(1.0);
	while (ktest_now() < end || rounds < 400) {
		int i = (int)(rand_r(&seed) % LIVE_MAX);

		if (live[i]) {
			unregister_shrinker(&live[i]->s);
			/* From here on no callback of it may run. */
			__atomic_store_n(&live[i]->dead, 1, __ATOMIC_RELEASE);
			free(live[i]);
			live[i] = NULL;
		} else {
			struct cache *c = calloc(1, sizeof(*c));

			c->objects = 1;
			c->s.count_objects = count;
			c->s.scan_objects = scan;
			c->s.seeks = DEFAULT_SEEKS;
			c->s.flags = (rand_r(&seed) & 1) ? SHRINKER_MEMCG_AWARE : 0;
			KCHECK_EQ(register_shrinker(&c->s), 0);
			if (c->s.id >= 0)
				for (int m = 0; m < NR_MEMCGS; m++)
					set_shrinker_bit(&memcgs[m], m % VMS_NR_NODES, c->s.id);
			live[i] = c;
		}
		rounds++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < LIVE_MAX; i++)
		if (live[i]) {
			unregister_shrinker(&live[i]->s);
			free(live[i]);
		}
	for (int m = 0; m < NR_MEMCGS; m++)
		memcg_offline(&memcgs[m]);
	vmscan_barrier();
	printf("  %ld register/unregister rounds, %ld count calls\n", rounds, calls);
	KCHECK(calls > 0);
	KCHECK_EQ(late_calls, 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
