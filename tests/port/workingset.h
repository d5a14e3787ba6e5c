/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The port of mm/workingset.c's shadow-node shrinker (workingset.c): a page
 * cache whose evicted pages leave shadow entries in their mapping's nodes,
 * nodes that hold nothing but shadows on a memcg-aware list_lru, and the
 * shrinker that trims them to a budget taken from the group's LRU size.
 * The page cache is the port's stand-in for the kernel's (an xarray of
 * 64-slot nodes becomes a one-level table of them).
 */
#ifndef WORKINGSET_PORT_H
#define WORKINGSET_PORT_H

#include <linux/atomic.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/shrinker.h>

#include <pthread.h>
#include <stdbool.h>

/* page_cache_add()'s failure (no memory, or a page at the index already). */
#define ERR_PTR_PORT ((void *)-1L)

#define XA_CHUNK_SHIFT 6
#define XA_CHUNK_SIZE (1UL << XA_CHUNK_SHIFT)

struct address_space;

/* One node of a mapping: XA_CHUNK_SIZE slots, each a page, a shadow or empty. */
struct xa_node {
	unsigned char count;     /* slots in use */
	unsigned char nr_values; /* of which shadow entries */
	unsigned long index;     /* the node's place in its mapping */
	struct address_space *mapping;
	struct list_lru_item private_list; /* on shadow_nodes while count == nr_values */
	void *slots[XA_CHUNK_SIZE];
};

struct page {
	struct list_lru_item lru; /* on the group's page LRU while resident */
	struct address_space *mapping;
	unsigned long index;
	struct mem_cgroup *memcg;
	int nid;
};

struct address_space {
	pthread_mutex_t i_pages; /* the xa_lock */
	struct xa_node **nodes;
	unsigned long nr_slots_max; /* nodes[] holds this many nodes */
	unsigned long nrpages, nrshadows;
};

/* The stand-in for node_present_pages() of a shrink without a group. */
extern unsigned long node_present_pages_port;
extern struct list_lru shadow_nodes;
extern struct list_lru page_lru;
extern struct shrinker *workingset_shadow_shrinker;
extern atomic_long_t workingset_node_reclaim;

int workingset_init(void);
void workingset_exit(void);

int mapping_init(struct address_space *mapping, unsigned long max_index);
void mapping_destroy(struct address_space *mapping); /* the mapping must be empty */

/* Add @page at @index; returns the shadow that was there (NULL if none). */
void *page_cache_add(struct address_space *mapping, struct page *page, unsigned long index,
		     struct mem_cgroup *memcg, int nid);
/* Evict the page at @index, leaving a shadow entry; returns the page. */
struct page *page_cache_evict(struct address_space *mapping, unsigned long index);
/* Drop whatever is at @index (a page or a shadow): truncation. */
struct page *page_cache_delete(struct address_space *mapping, unsigned long index);
bool page_cache_has_shadow(struct address_space *mapping, unsigned long index);
unsigned long mapping_nr_nodes(struct address_space *mapping);

void *workingset_eviction(struct page *page);
void unpack_shadow(void *shadow, int *memcgidp, int *nidp, unsigned long *evictionp);

unsigned long count_shadow_nodes(struct shrinker *shrinker, struct shrink_control *sc);
unsigned long scan_shadow_nodes(struct shrinker *shrinker, struct shrink_control *sc);
/* The budget count_shadow_nodes() computes for (@memcg, @nid). */
unsigned long shadow_nodes_budget(struct mem_cgroup *memcg, int nid);

#endif /* WORKINGSET_PORT_H */
