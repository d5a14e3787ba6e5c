/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ported shadow-node shrinker (workingset.c) under churn: a reclaim
 * thread runs shrink_slab() on a parent group and on the global lists while
 * an evictor turns pages into shadows and back in the parent's mapping, and
 * a third thread creates child groups, fills their mappings with shadow-only
 * nodes, takes the children offline (their nodes reparent to the parent,
 * under the walks) and truncates and frees the mappings. The isolate
 * callback's trylock of the mapping against the page cache's lock order,
 * the list's lock dropped and retaken, and nodes freed by either side are
 * what ASan and TSan see; at the end every count is back to zero.
 */
#include "workingset.h"

#include <ksync/memgroup_stat.h>

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"
#include "wait.h"

#define NID 0
#define HOT 256
#define CHILD_SHADOWS 64

static struct mem_cgroup *parent;
static int stop;

static void *reclaimer(void *arg)
{
	unsigned long rounds = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		shrink_slab(0, NID, parent, (int)(rounds % 4));
		if (rounds++ % 8 == 0)
			shrink_slab(0, NID, NULL, 0);
	}
	return NULL;
}

static void *evictor(void *arg)
{
	struct address_space *mapping = arg;
	static struct page pages[HOT];
	unsigned long i = 0;

	for (unsigned long k = 0; k < HOT; k++)
		KASSERT(page_cache_add(mapping, &pages[k], k * 16, parent, NID) == NULL);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		unsigned long k = i++ % HOT;

		/* Evict, then refault (the shadow may have been reclaimed meanwhile). */
		if (page_cache_evict(mapping, k * 16) == &pages[k])
			KASSERT(page_cache_add(mapping, &pages[k], k * 16, parent, NID) != ERR_PTR_PORT);
	}
	for (unsigned long k = 0; k < HOT * 16; k++)
		page_cache_delete(mapping, k);
	return NULL;
}

static void *offliner(void *arg)
{
	long *rounds = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct mem_cgroup *child = ksync_memgroup_create(ksync_shrinker_registry_groups(NULL), parent);
		struct page *pages = calloc(CHILD_SHADOWS, sizeof(*pages));
		struct address_space mapping;

		KASSERT(child && pages);
		KASSERT(mapping_init(&mapping, CHILD_SHADOWS * XA_CHUNK_SIZE) == 0);
		for (unsigned long i = 0; i < CHILD_SHADOWS; i++) {
			KASSERT(page_cache_add(&mapping, &pages[i], i * XA_CHUNK_SIZE, child, NID) == NULL);
			KASSERT(page_cache_evict(&mapping, i * XA_CHUNK_SIZE) == &pages[i]);
		}
		KASSERT(ksync_memgroup_offline(child) == 0);
		for (unsigned long i = 0; i < CHILD_SHADOWS; i++)
			page_cache_delete(&mapping, i * XA_CHUNK_SIZE);
		KASSERT(mapping.nrshadows == 0 && mapping.nrpages == 0);
		mapping_destroy(&mapping);
		free(pages);
		(*rounds)++;
	}
	return NULL;
}

KTEST(shrink_under_evictions_and_offlines)
{
	struct address_space hot;
	pthread_t r, e, o;
	long rounds = 0, reclaimed0 = atomic_long_read(&workingset_node_reclaim);

	parent = ksync_memgroup_create(ksync_shrinker_registry_groups(NULL), NULL);
	KCHECK(parent != NULL);
	KCHECK_EQ(mapping_init(&hot, HOT * 16), 0);
	KCHECK_EQ(pthread_create(&r, NULL, reclaimer, NULL), 0);
	KCHECK_EQ(pthread_create(&e, NULL, evictor, &hot), 0);
	KCHECK_EQ(pthread_create(&o, NULL, offliner, &rounds), 0);
	kt_sleep_ms((long)(ktest_seconds(1.0) * 1000));
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(e, NULL);
	pthread_join(o, NULL);
	pthread_join(r, NULL);
	KCHECK(rounds > 0);
	KCHECK(atomic_long_read(&workingset_node_reclaim) > reclaimed0);
	KCHECK_EQ(hot.nrpages, 0);
	KCHECK_EQ(hot.nrshadows, 0);
	mapping_destroy(&hot);
	KCHECK_EQ(list_lru_count_one(&shadow_nodes, NID, parent), 0);
	KCHECK_EQ(list_lru_count(&shadow_nodes), 0);
	KCHECK_EQ(list_lru_count(&page_lru), 0);
	KCHECK_EQ(ksync_memgroup_stat_read(parent, NID, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK_EQ(ksync_memgroup_offline(parent), 0);
}

int main(int argc, char **argv)
{
	int ret;

	KCHECK_EQ(workingset_init(), 0);
	ret = ktest_run(argc, argv);
	workingset_exit();
	return ret;
}
