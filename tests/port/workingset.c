/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port of mm/workingset.c's shadow-node shrinker onto ksync, written from
 * the kernel's documented design (the comment above count_shadow_nodes() and
 * workingset_update_node()), with the kernel's spellings and <linux/...>
 * includes resolved by ksync's spelling headers:
 *
 *  - when a mapping's node comes to hold nothing but shadow entries, it goes
 *    on the memcg-aware list_lru shadow_nodes (workingset_update_node());
 *    when it gains a page again, it comes off;
 *  - count_shadow_nodes() reports the nodes above a budget: the group's LRU
 *    size (its local LRU statistic, the kernel's lruvec_page_state_local()
 *    sum) shifted by XA_CHUNK_SHIFT - 3, i.e. shadow entries for up to eight
 *    times the group's pages if the nodes were full; without a group, the
 *    node's present pages;
 *  - scan_shadow_nodes() walks the group's list; shadow_lru_isolate() takes
 *    the mapping's lock in the reverse of the usual order with a trylock
 *    (dropping the list's lock and retrying on failure), isolates the node,
 *    drops the list's lock, deletes the node from its mapping and returns
 *    LRU_REMOVED_RETRY.
 *
 * Stand-ins (docs/porting.md): the xarray is a one-level table of 64-slot
 * nodes under a pthread mutex (the xa_lock); a page's memcg is an explicit
 * argument; the budget reads ksync's KSYNC_MEMGROUP_STAT_LRU, which every
 * ksync list_lru maintains and which counts the port's resident pages (on
 * page_lru) and the shadow nodes themselves (the kernel adds the slab bytes
 * the nodes occupy); node_present_pages() is a variable; the shadow is
 * packed as the kernel's (eviction counter, node, memcg id, value tag) with
 * a global nonresident age.
 */
#include "workingset.h"

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/container_of.h>

#include <ksync/memgroup_stat.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Shims for what userspace lacks                                           */

/* ksync's list_lru: an item knows its list; the list's lock is a mutex. */
#define list_lru_item_init(item) ksync_list_lru_item_init(item)
#define list_lru_item_on_list(item) ksync_list_lru_item_on_list(item)
#define list_lru_unlock(l) ksync_list_lru_unlock(l)
#define list_lru_lock(l) ksync_list_lru_lock(l)

#define xa_lock(m) pthread_mutex_lock(&(m)->i_pages)
#define xa_unlock(m) pthread_mutex_unlock(&(m)->i_pages)
#define xa_trylock(m) (pthread_mutex_trylock(&(m)->i_pages) == 0)
#define xa_is_value(entry) (((uintptr_t)(entry)) & 1)
#define xa_mk_value(v) ((void *)(((uintptr_t)(v) << 1) | 1))
#define xa_to_value(entry) (((uintptr_t)(entry)) >> 1)

/* The kernel's MEM_CGROUP_ID_SHIFT and NODES_SHIFT, sized for ksync's groups and nodes. */
#define MEM_CGROUP_ID_SHIFT 16
#define NODES_SHIFT 6
#define EVICTION_SHIFT (1 + NODES_SHIFT + MEM_CGROUP_ID_SHIFT)
#define EVICTION_MASK (~0UL >> EVICTION_SHIFT)

unsigned long node_present_pages_port = 1UL << 20;
struct list_lru shadow_nodes;
struct list_lru page_lru;
struct shrinker *workingset_shadow_shrinker;
atomic_long_t workingset_node_reclaim = ATOMIC_LONG_INIT(0);
static atomic_long_t nonresident_age = ATOMIC_LONG_INIT(0);

/* ------------------------------------------------------------------------ */
/* Shadow entries                                                           */

static void *pack_shadow(int memcgid, int nid, unsigned long eviction)
{
	eviction &= EVICTION_MASK;
	eviction = (eviction << MEM_CGROUP_ID_SHIFT) | (unsigned long)memcgid;
	eviction = (eviction << NODES_SHIFT) | (unsigned long)nid;
	return xa_mk_value(eviction);
}

void unpack_shadow(void *shadow, int *memcgidp, int *nidp, unsigned long *evictionp)
{
	unsigned long entry = xa_to_value(shadow);

	*nidp = (int)(entry & ((1UL << NODES_SHIFT) - 1));
	entry >>= NODES_SHIFT;
	*memcgidp = (int)(entry & ((1UL << MEM_CGROUP_ID_SHIFT) - 1));
	entry >>= MEM_CGROUP_ID_SHIFT;
	*evictionp = entry;
}

/* The shadow to leave behind @page: when, on which node, in which group. */
void *workingset_eviction(struct page *page)
{
	unsigned long eviction = (unsigned long)atomic_long_fetch_inc(&nonresident_age);

	return pack_shadow(page->memcg ? mem_cgroup_id(page->memcg) : 0, page->nid, eviction);
}

/* ------------------------------------------------------------------------ */
/* The page cache: a mapping's nodes                                        */

int mapping_init(struct address_space *mapping, unsigned long max_index)
{
	pthread_mutex_init(&mapping->i_pages, NULL);
	mapping->nr_slots_max = max_index / XA_CHUNK_SIZE + 1;
	mapping->nodes = calloc(mapping->nr_slots_max, sizeof(*mapping->nodes));
	mapping->nrpages = mapping->nrshadows = 0;
	return mapping->nodes ? 0 : -ENOMEM;
}

void mapping_destroy(struct address_space *mapping)
{
	for (unsigned long i = 0; i < mapping->nr_slots_max; i++)
		WARN_ON_ONCE(mapping->nodes[i]);
	free(mapping->nodes);
	pthread_mutex_destroy(&mapping->i_pages);
}

unsigned long mapping_nr_nodes(struct address_space *mapping)
{
	unsigned long n = 0;

	xa_lock(mapping);
	for (unsigned long i = 0; i < mapping->nr_slots_max; i++)
		n += mapping->nodes[i] != NULL;
	xa_unlock(mapping);
	return n;
}

/*
 * Track nodes that hold nothing but shadow entries (the mapping's lock held):
 * they are what the shrinker may free, so they go on shadow_nodes; a node
 * that gains a page comes off. Its group is the group of the page whose
 * eviction made it all-shadows (the kernel's: the memcg of the node's slab).
 */
static void workingset_update_node(struct xa_node *node, struct mem_cgroup *memcg, int nid)
{
	if (node->count && node->count == node->nr_values) {
		if (!list_lru_item_on_list(&node->private_list))
			list_lru_add(&shadow_nodes, &node->private_list, nid, memcg);
	} else if (list_lru_item_on_list(&node->private_list)) {
		list_lru_del_obj(&shadow_nodes, &node->private_list);
	}
}

static void xas_delete_node(struct address_space *mapping, struct xa_node *node)
{
	mapping->nrshadows -= node->nr_values;
	mapping->nodes[node->index] = NULL;
	free(node);
}

void *page_cache_add(struct address_space *mapping, struct page *page, unsigned long index,
		     struct mem_cgroup *memcg, int nid)
{
	unsigned long n = index >> XA_CHUNK_SHIFT, off = index & (XA_CHUNK_SIZE - 1);
	struct xa_node *node;
	void *old;

	page->mapping = mapping;
	page->index = index;
	page->memcg = memcg;
	page->nid = nid;
	xa_lock(mapping);
	node = mapping->nodes[n];
	if (!node) {
		node = calloc(1, sizeof(*node));
		if (!node) {
			xa_unlock(mapping);
			return ERR_PTR_PORT;
		}
		node->index = n;
		node->mapping = mapping;
		list_lru_item_init(&node->private_list);
		mapping->nodes[n] = node;
	}
	old = node->slots[off];
	if (old && !xa_is_value(old)) {
		xa_unlock(mapping);
		return ERR_PTR_PORT; /* a page is there already */
	}
	if (old) {
		node->nr_values--;
		mapping->nrshadows--;
	} else {
		node->count++;
	}
	node->slots[off] = page;
	mapping->nrpages++;
	workingset_update_node(node, memcg, nid);
	list_lru_add(&page_lru, &page->lru, nid, memcg);
	xa_unlock(mapping);
	return old;
}

struct page *page_cache_evict(struct address_space *mapping, unsigned long index)
{
	unsigned long n = index >> XA_CHUNK_SHIFT, off = index & (XA_CHUNK_SIZE - 1);
	struct xa_node *node;
	struct page *page;

	xa_lock(mapping);
	node = mapping->nodes[n];
	page = node ? node->slots[off] : NULL;
	if (!page || xa_is_value(page)) {
		xa_unlock(mapping);
		return NULL;
	}
	list_lru_del_obj(&page_lru, &page->lru);
	node->slots[off] = workingset_eviction(page);
	node->nr_values++;
	mapping->nrpages--;
	mapping->nrshadows++;
	workingset_update_node(node, page->memcg, page->nid);
	xa_unlock(mapping);
	return page;
}

struct page *page_cache_delete(struct address_space *mapping, unsigned long index)
{
	unsigned long n = index >> XA_CHUNK_SHIFT, off = index & (XA_CHUNK_SIZE - 1);
	struct xa_node *node;
	void *entry;

	xa_lock(mapping);
	node = mapping->nodes[n];
	entry = node ? node->slots[off] : NULL;
	if (entry) {
		node->slots[off] = NULL;
		node->count--;
		if (xa_is_value(entry)) {
			node->nr_values--;
			mapping->nrshadows--;
			entry = NULL;
		} else {
			list_lru_del_obj(&page_lru, &((struct page *)entry)->lru);
			mapping->nrpages--;
		}
		if (!node->count) {
			if (list_lru_item_on_list(&node->private_list))
				list_lru_del_obj(&shadow_nodes, &node->private_list);
			xas_delete_node(mapping, node);
		} else if (entry) {
			/* A page gone may leave shadows only: the node goes to the page's group. */
			struct page *page = entry;

			workingset_update_node(node, page->memcg, page->nid);
		}
	}
	xa_unlock(mapping);
	return entry;
}

bool page_cache_has_shadow(struct address_space *mapping, unsigned long index)
{
	unsigned long n = index >> XA_CHUNK_SHIFT, off = index & (XA_CHUNK_SIZE - 1);
	bool ret;

	xa_lock(mapping);
	ret = mapping->nodes[n] && xa_is_value(mapping->nodes[n]->slots[off]);
	xa_unlock(mapping);
	return ret;
}

/* ------------------------------------------------------------------------ */
/* The shadow-node shrinker                                                 */

unsigned long shadow_nodes_budget(struct mem_cgroup *memcg, int nid)
{
	unsigned long pages;

	/*
	 * The kernel sums the lruvec's LRU lists and its reclaimable and
	 * unreclaimable slab, all local to the group: pages the group could
	 * refault. ksync's one LRU statistic stands for that sum; it must be a
	 * counter that every LRU of the group maintains, or the budget
	 * collapses (the MGLRU bug of issue 22).
	 */
	if (memcg) {
		long lru = ksync_memgroup_stat_read(memcg, nid, KSYNC_MEMGROUP_STAT_LRU);

		pages = lru > 0 ? (unsigned long)lru : 0;
	} else {
		pages = node_present_pages_port;
	}
	/*
	 * Shadow entries for up to 8x the group's pages if every node were full
	 * (XA_CHUNK_SIZE / 8 shadows per node on average allowed).
	 */
	return pages >> (XA_CHUNK_SHIFT - 3);
}

unsigned long count_shadow_nodes(struct shrinker *shrinker, struct shrink_control *sc)
{
	unsigned long max_nodes, nodes;

	(void)shrinker;
	nodes = list_lru_shrink_count(&shadow_nodes, sc);
	if (!nodes)
		return SHRINK_EMPTY;
	max_nodes = shadow_nodes_budget(sc->group, sc->nid);
	if (nodes <= max_nodes)
		return 0;
	return nodes - max_nodes;
}

static enum lru_status shadow_lru_isolate(struct list_lru_item *item, struct list_lru_one *lru,
					  void *arg)
{
	struct xa_node *node = container_of(item, struct xa_node, private_list);
	struct address_space *mapping = node->mapping;

	(void)arg;
	/*
	 * Page cache insertions and deletions take the mapping's lock, then the
	 * list's: here it is the other way round, so only try, and on failure
	 * drop the list's lock and let the walk retry.
	 */
	if (!xa_trylock(mapping)) {
		list_lru_unlock(lru);
		cpu_relax();
		list_lru_lock(lru);
		return LRU_RETRY;
	}
	list_lru_isolate(lru, item);
	list_lru_unlock(lru);

	/* A node on the list holds shadows only: anything else is a bug. */
	if (!WARN_ON_ONCE(!node->nr_values) && !WARN_ON_ONCE(node->count != node->nr_values)) {
		xas_delete_node(mapping, node);
		atomic_long_inc(&workingset_node_reclaim);
	}
	xa_unlock(mapping);
	list_lru_lock(lru);
	return LRU_REMOVED_RETRY;
}

unsigned long scan_shadow_nodes(struct shrinker *shrinker, struct shrink_control *sc)
{
	(void)shrinker;
	return list_lru_shrink_walk(&shadow_nodes, sc, shadow_lru_isolate, NULL);
}

int workingset_init(void)
{
	int ret;

	workingset_shadow_shrinker =
		shrinker_alloc(SHRINKER_NUMA_AWARE | SHRINKER_MEMCG_AWARE, "mm-shadow");
	if (!workingset_shadow_shrinker)
		return -ENOMEM;
	ret = list_lru_init_memcg(&shadow_nodes, workingset_shadow_shrinker);
	if (ret)
		goto err_free;
	ret = list_lru_init_memcg(&page_lru, NULL);
	if (ret)
		goto err_lru;
	workingset_shadow_shrinker->count_objects = count_shadow_nodes;
	workingset_shadow_shrinker->scan_objects = scan_shadow_nodes;
	/* ->count reports only fully expendable nodes */
	workingset_shadow_shrinker->seeks = 0;
	shrinker_register(workingset_shadow_shrinker);
	return 0;
err_lru:
	list_lru_destroy(&shadow_nodes);
err_free:
	shrinker_free(workingset_shadow_shrinker);
	return ret;
}

/* After every group is offline (a list_lru leaves its set only then). */
void workingset_exit(void)
{
	list_lru_destroy(&page_lru);
	list_lru_destroy(&shadow_nodes);
	shrinker_free(workingset_shadow_shrinker);
}
