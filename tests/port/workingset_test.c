/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ported shadow-node shrinker (workingset.c): nodes become shadow-only
 * and go on the list_lru, the count is the excess over the group's budget,
 * shrink_slab() of a group trims that group's nodes down to the budget and
 * no further (the protection the MGLRU bug lost), other groups untouched,
 * and a child group's nodes, reparented by its offline, are counted and
 * trimmed at the parent.
 */
#include "workingset.h"

#include <ksync/memgroup_stat.h>

#include <stdlib.h>

#include "ktest.h"

#define NID 0
#define mem_cgroup_offline_port(memcg) ksync_memgroup_offline(memcg)

struct cache {
	struct address_space mapping;
	struct page *pages;
	unsigned long nr;
};

static struct mem_cgroup *memcg_create(struct mem_cgroup *parent)
{
	return ksync_memgroup_create(ksync_shrinker_registry_groups(NULL), parent);
}

/* @resident pages at 0.., then @shadows pages each alone in its node, evicted. */
static void cache_fill(struct cache *c, struct mem_cgroup *memcg, unsigned long resident,
		       unsigned long shadows)
{
	unsigned long base = (resident / XA_CHUNK_SIZE + 1) * XA_CHUNK_SIZE;

	c->nr = resident + shadows;
	c->pages = calloc(c->nr, sizeof(*c->pages));
	KCHECK_EQ(mapping_init(&c->mapping, base + shadows * XA_CHUNK_SIZE), 0);
	for (unsigned long i = 0; i < resident; i++)
		KCHECK(page_cache_add(&c->mapping, &c->pages[i], i, memcg, NID) == NULL);
	for (unsigned long i = 0; i < shadows; i++) {
		struct page *p = &c->pages[resident + i];

		KCHECK(page_cache_add(&c->mapping, p, base + i * XA_CHUNK_SIZE, memcg, NID) == NULL);
		KCHECK(page_cache_evict(&c->mapping, base + i * XA_CHUNK_SIZE) == p);
	}
}

static void cache_empty(struct cache *c)
{
	for (unsigned long i = 0; i < c->mapping.nr_slots_max * XA_CHUNK_SIZE; i++)
		page_cache_delete(&c->mapping, i);
	KCHECK_EQ(c->mapping.nrpages, 0);
	KCHECK_EQ(c->mapping.nrshadows, 0);
	mapping_destroy(&c->mapping);
	free(c->pages);
}

static unsigned long shadow_count(struct mem_cgroup *memcg)
{
	return list_lru_count_one(&shadow_nodes, NID, memcg);
}

/* shrink_slab() of @memcg until its shrinker reports nothing more to free. */
static unsigned long shrink_until_done(struct mem_cgroup *memcg)
{
	unsigned long freed = 0;

	for (int i = 0; i < 100; i++) {
		struct shrink_control sc = { .nid = NID, .group = memcg };

		unsigned long n = count_shadow_nodes(workingset_shadow_shrinker, &sc);

		if (n == 0 || n == SHRINK_EMPTY)
			break;
		freed += shrink_slab(0, NID, memcg, 0);
	}
	return freed;
}

KTEST(nodes_become_shadow_only)
{
	struct mem_cgroup *g = memcg_create(NULL);
	struct cache c;
	int memcgid, nid;
	unsigned long eviction;

	cache_fill(&c, g, 100, 10);
	/* Two nodes of pages (not on the list), ten of shadows only. */
	KCHECK_EQ(mapping_nr_nodes(&c.mapping), 12);
	KCHECK_EQ(shadow_count(g), 10);
	KCHECK_EQ(c.mapping.nrshadows, 10);
	/* The group's LRU statistic: its resident pages and its shadow nodes. */
	KCHECK_EQ(ksync_memgroup_stat_read(g, NID, KSYNC_MEMGROUP_STAT_LRU), 110);
	/* The shadow says which group and node evicted it. */
	unpack_shadow(c.mapping.nodes[2]->slots[0], &memcgid, &nid, &eviction);
	KCHECK_EQ(memcgid, mem_cgroup_id(g));
	KCHECK_EQ(nid, NID);
	/* A page evicted among resident ones leaves its node off the list... */
	KCHECK(page_cache_evict(&c.mapping, 5) == &c.pages[5]);
	KCHECK(page_cache_has_shadow(&c.mapping, 5));
	KCHECK_EQ(shadow_count(g), 10);
	/* ...and a refault into a shadow-only node takes the node off. */
	KCHECK(page_cache_add(&c.mapping, &c.pages[5], 5, g, NID) != NULL);
	KCHECK(page_cache_add(&c.mapping, &c.pages[100], 128, g, NID) != NULL);
	KCHECK_EQ(shadow_count(g), 9);
	/* Truncating the last page of a node with shadows puts it back, in the page's group. */
	KCHECK(page_cache_evict(&c.mapping, 64) == &c.pages[64]);
	for (unsigned long i = 65; i < 100; i++)
		KCHECK(page_cache_delete(&c.mapping, i) == &c.pages[i]);
	KCHECK_EQ(shadow_count(g), 10);
	KCHECK_EQ(shadow_count(NULL), 0);
	for (unsigned long i = 65; i < 100; i++)
		KCHECK(page_cache_add(&c.mapping, &c.pages[i], i, g, NID) == NULL);
	KCHECK_EQ(shadow_count(g), 9);
	KCHECK(page_cache_add(&c.mapping, &c.pages[64], 64, g, NID) != NULL);
	KCHECK_EQ(shadow_count(g), 9);
	/* Under budget: nothing to count (100 pages allow 13 nodes). */
	{
		struct shrink_control sc = { .nid = NID, .group = g };

		KCHECK_EQ(count_shadow_nodes(workingset_shadow_shrinker, &sc), 0);
		KCHECK_EQ(shadow_nodes_budget(g, NID), (unsigned long)(101 + 9) >> 3);
	}
	KCHECK_EQ(shrink_until_done(g), 0);
	KCHECK_EQ(shadow_count(g), 9);
	cache_empty(&c);
	KCHECK_EQ(shadow_count(g), 0);
	KCHECK_EQ(ksync_memgroup_stat_read(g, NID, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK_EQ(mem_cgroup_offline_port(g), 0);
}

KTEST(shrink_slab_trims_to_the_budget_of_each_group)
{
	struct mem_cgroup *a = memcg_create(NULL), *b = memcg_create(NULL);
	struct cache ca, cb;
	unsigned long left, reclaimed0 = (unsigned long)atomic_long_read(&workingset_node_reclaim);

	cache_fill(&ca, a, 800, 1000);
	cache_fill(&cb, b, 800, 50);
	{
		struct shrink_control sc = { .nid = NID, .group = a };

		/* 1800 on a's LRU: a budget of 225 nodes, 775 over it. */
		KCHECK_EQ(count_shadow_nodes(workingset_shadow_shrinker, &sc), 775);
		sc.group = b;
		KCHECK_EQ(count_shadow_nodes(workingset_shadow_shrinker, &sc), 0);
	}
	KCHECK(shrink_until_done(a) > 0);
	left = shadow_count(a);
	/* Down to the budget, which shrinks with the nodes: (800 + n) >> 3 >= n. */
	KCHECK(left <= (800 + left) >> 3);
	/*
	 * ...and not far below: the protection is kept, not collapsed (the last
	 * scans may take up to twice what was counted, as the kernel's).
	 */
	KCHECK(left >= 57);
	KCHECK_EQ(ca.mapping.nrshadows, left);
	KCHECK_EQ(ca.mapping.nrpages, 800);
	KCHECK_EQ((unsigned long)atomic_long_read(&workingset_node_reclaim) - reclaimed0, 1000 - left);
	KCHECK_EQ(ksync_memgroup_stat_read(a, NID, KSYNC_MEMGROUP_STAT_LRU), (long)(800 + left));
	/* b was not walked. */
	KCHECK_EQ(shadow_count(b), 50);
	KCHECK_EQ(cb.mapping.nrshadows, 50);
	/* A group with its pages gone loses its protection: the budget is 0. */
	for (unsigned long i = 0; i < 800; i++)
		KCHECK(page_cache_evict(&cb.mapping, i) == &cb.pages[i]);
	/* 13 more shadow-only nodes, no resident page: budget (50 + 13) >> 3, trimmed towards 0. */
	KCHECK_EQ(shadow_count(b), 63);
	shrink_until_done(b);
	KCHECK_EQ(shadow_count(b), 0);
	cache_empty(&ca);
	cache_empty(&cb);
	KCHECK_EQ(mem_cgroup_offline_port(a), 0);
	KCHECK_EQ(mem_cgroup_offline_port(b), 0);
}

KTEST(offline_reparents_shadow_nodes_to_the_parent)
{
	struct mem_cgroup *parent = memcg_create(NULL), *child = memcg_create(parent);
	struct cache cp, cc;
	unsigned long left;

	cache_fill(&cp, parent, 400, 20);
	cache_fill(&cc, child, 0, 300);
	KCHECK_EQ(shadow_count(parent), 20);
	KCHECK_EQ(shadow_count(child), 300);
	/* The child has no pages: all of its nodes are over its budget of 37. */
	{
		struct shrink_control sc = { .nid = NID, .group = child };

		KCHECK_EQ(count_shadow_nodes(workingset_shadow_shrinker, &sc), 300 - (300 >> 3));
	}
	KCHECK_EQ(mem_cgroup_offline_port(child), 0);
	/* The parent inherits the nodes and the statistic. */
	KCHECK_EQ(shadow_count(parent), 320);
	KCHECK_EQ(ksync_memgroup_stat_read(parent, NID, KSYNC_MEMGROUP_STAT_LRU), 400 + 320);
	shrink_until_done(parent);
	left = shadow_count(parent);
	KCHECK(left <= (400 + left) >> 3);
	KCHECK(left >= 28);
	KCHECK_EQ(cp.mapping.nrshadows + cc.mapping.nrshadows, left);
	cache_empty(&cp);
	cache_empty(&cc);
	KCHECK_EQ(mem_cgroup_offline_port(parent), 0);
}

/* A shrink without a group trims the global list against the node's pages. */
KTEST(global_list_against_present_pages)
{
	struct cache c;

	cache_fill(&c, NULL, 0, 200);
	KCHECK_EQ(shadow_count(NULL), 200);
	node_present_pages_port = 8 * 64;
	{
		struct shrink_control sc = { .nid = NID, .group = NULL };

		KCHECK_EQ(count_shadow_nodes(workingset_shadow_shrinker, &sc), 136);
	}
	for (int i = 0; i < 100 && shadow_count(NULL) > 64; i++)
		shrink_slab(0, NID, NULL, 0);
	KCHECK(shadow_count(NULL) <= 64);
	KCHECK(shadow_count(NULL) >= 32);
	node_present_pages_port = 1UL << 20;
	cache_empty(&c);
}

int main(int argc, char **argv)
{
	int ret;

	KCHECK_EQ(workingset_init(), 0);
	ret = ktest_run(argc, argv);
	workingset_exit();
	return ret;
}
