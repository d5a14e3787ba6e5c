// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/objcache.c - object caches: create, destroy, alloc, free,
 * shrink, the shrinker, statistics and slabinfo. The theory of operation.
 *
 * Objects live in slabs (slab.c); each thread keeps a magazine of free
 * objects per cache (magazine.c), so alloc and free take no lock in the
 * common case; the magazines fill and flush in batches from the cache's
 * depot under its mutex. Who holds what:
 *   - a live object: its bit in its slab's live bitmap (set by alloc, cleared
 *     by free with one atomic RMW each: a free that finds it clear is a
 *     double free, reported, nothing else done);
 *   - a free object: its slab's free stack, or exactly one magazine;
 *   - a magazine: its thread's slot, or whoever took it out of the slot
 *     with an exchange (the owner during an operation, or a drainer).
 *
 * Accounting (objcache.h has the two designs):
 *   - design B: after alloc sets the bit, the object's charge handle is
 *     taken from the thread's stock (stock.c) and stored in the slab's
 *     handle vector; free reads it back after clearing the bit and gives the
 *     charge back through the stock;
 *   - design A: alloc and free for a child run inside a read section of the
 *     set's SRCU domain (S1): a child may be deactivated and end at any
 *     time, and is freed only a grace period after its end (slab.c), so the
 *     pointer found in the table or in a slab header stays valid through
 *     the operation. Deactivation (group.c) and the magazine owners pair
 *     through the dead flag (D1/M2, magazine.c).
 *
 * A destroyed root is kept as a tombstone (its slabs, shrinker and client
 * gone, the struct kept on a bounded list) so that an allocation from it can
 * be reported rather than read freed memory; the oldest tombstones beyond
 * KSYNC__OC_TOMBSTONES are freed.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KSYNC__OC_TOMBSTONES 256

static struct ksync_list_head tombstones = { &tombstones, &tombstones };
static unsigned long nr_tombstones;

/* ---- the shrinker ---- */

static unsigned long free_objects(struct ksync_objcache *c)
{
	unsigned long total = 0, live = ksync__oc_count_live(c, NULL, NULL, &total, NULL);

	return total - live; /* in empty slabs, partial slabs and magazines */
}

static unsigned long shrink_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct ksync_objcache *root = s->private_data, *c;
	unsigned long n;

	(void)sc;
	n = free_objects(root);
	ksync__mutex_lock(&root->lock);
	ksync_list_for_each_entry(c, &root->children, sibling) {
		ksync__mutex_lock(&c->lock); /* the root's, then a child's */
		n += c->nr_empty * c->objs_per_slab;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&root->lock);
	return n ? n : KSYNC_SHRINK_EMPTY;
}

/* Drain the magazines of @c and free its empty slabs beyond @keep. */
static unsigned long shrink_one(struct ksync_objcache *c, bool all)
{
	bool end1, end2;
	unsigned long freed;

	(void)ksync__oc_drain_cache(c, &end1);
	freed = ksync__oc_free_empty(c, all, &end2);
	if (end1 || end2)
		ksync__oc_child_end(c);
	return freed;
}

static unsigned long shrink_all(struct ksync_objcache *root, bool all)
{
	unsigned long freed = shrink_one(root, all);

	if (root->table) {
		int idx = ksync_srcu_read_lock(root->srcu); /* S1: children stay in memory */
		struct ksync_objcache *c, **list;
		unsigned long n = 0, cap;

		/* A snapshot of the live children under the root's mutex, then
		 * each shrunk under its own (a child's depot is its mutex's). */
		ksync__mutex_lock(&root->lock);
		cap = root->children_alive;
		list = cap ? KSYNC__ALLOC(malloc(cap * sizeof(*list))) : NULL;
		if (list)
			ksync_list_for_each_entry(c, &root->children, sibling)
				if (n < cap && !__atomic_load_n(&c->dead, __ATOMIC_RELAXED))
					list[n++] = c;
		pthread_mutex_unlock(&root->lock);
		for (unsigned long i = 0; i < n; i++)
			freed += shrink_one(list[i], true);
		free(list);
		ksync_srcu_read_unlock(root->srcu, idx);
	}
	return freed;
}

static unsigned long shrink_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct ksync_objcache *root = s->private_data;
	unsigned long slabs = shrink_all(root, true), freed = slabs * root->objs_per_slab;

	/* Whole slabs go: report at most what was asked (the registry clamps). */
	sc->nr_scanned = sc->nr_to_scan;
	if (!slabs)
		return KSYNC_SHRINK_STOP;
	return freed < sc->nr_to_scan ? freed : sc->nr_to_scan;
}

/* ---- create ---- */

static bool power_of_two(size_t x)
{
	return x && !(x & (x - 1));
}

struct ksync_objcache *ksync__objcache_create_config(KSYNC_SITE_ARGS, const char *name, size_t size, size_t align,
						     unsigned flags, void (*ctor)(void *obj),
						     const struct ksync_objcache_config *cfg)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_objcache_config def = { 0 };
	struct ksync_shrinker_registry *reg;
	struct ksync_objcache *c;

	if (!cfg)
		cfg = &def;
	if (MISUSE(at, size == 0 || size > KSYNC_OBJCACHE_MAX_SIZE,
		   "ksync_objcache_create: size %zu out of 1..%lu", size, (unsigned long)KSYNC_OBJCACHE_MAX_SIZE) ||
	    MISUSE(at, align && (!power_of_two(align) || align > KSYNC_OBJCACHE_MAX_ALIGN),
		   "ksync_objcache_create: alignment %zu is not a power of two up to %lu", align,
		   (unsigned long)KSYNC_OBJCACHE_MAX_ALIGN) ||
	    MISUSE(at, flags & ~KSYNC_OBJCACHE_FLAGS, "ksync_objcache_create: unknown flags %#x", flags) ||
	    MISUSE(at, cfg->magazine_size > KSYNC_OBJCACHE_MAGAZINE_MAX,
		   "ksync_objcache_create: magazine size %u above %d", cfg->magazine_size, KSYNC_OBJCACHE_MAGAZINE_MAX) ||
	    MISUSE(at, cfg->design != KSYNC_OBJCACHE_CHARGE_HANDLES && cfg->design != KSYNC_OBJCACHE_PER_GROUP,
		   "ksync_objcache_create: unknown design %d", (int)cfg->design))
		return NULL;
	c = KSYNC__ALLOC(calloc(1, sizeof(*c)));
	if (!c)
		return NULL;
	snprintf(c->name, sizeof(c->name), "%s", name ? name : "objcache");
	c->size = size;
	c->align = align ? align : sizeof(void *);
	if ((flags & KSYNC_OBJCACHE_HWCACHE_ALIGN) && c->align < KSYNC_CACHELINE_SIZE)
		c->align = KSYNC_CACHELINE_SIZE;
	c->stride = (size + c->align - 1) / c->align * c->align;
	c->flags = flags;
	c->ctor = ctor;
	c->accounted = flags & KSYNC_OBJCACHE_ACCOUNT;
	c->design = cfg->design;
	c->reparent = cfg->reparent;
	c->max_empty = cfg->max_empty_slabs ? cfg->max_empty_slabs : 2;
	c->mag_size = cfg->magazine_size ? cfg->magazine_size : 32;
	if (c->mag_size == 1)
		c->mag_size = 0;
	c->idx = -1;
	c->root = c;
	pthread_mutex_init(&c->lock, NULL);
	ksync_init_list_head(&c->partial);
	ksync_init_list_head(&c->full);
	ksync_init_list_head(&c->empty);
	ksync_init_list_head(&c->children);
	ksync_init_list_head(&c->sibling);
	ksync_init_list_head(&c->glink);
	ksync_init_list_head(&c->all);
	ksync__oc_layout(c);

	reg = cfg->shrinkers ? cfg->shrinkers : ksync_shrinker_registry_default();
	if (!reg)
		goto fail;
	if (c->accounted) {
		c->set = cfg->groups ? cfg->groups : ksync_shrinker_registry_groups(reg);
		if (MISUSE(at, !c->set, "ksync_objcache_create: an accounted cache needs memory groups"))
			goto fail;
		c->srcu = ksync_memgroup_set_srcu(c->set);
	}
	if (c->mag_size && (c->idx = ksync__oc_idx_get(c)) < 0)
		goto fail;
	if (c->accounted && c->design == KSYNC_OBJCACHE_PER_GROUP) {
		c->table = KSYNC__ALLOC(calloc(KSYNC__OC_CHUNKS, sizeof(*c->table)));
		if (!c->table)
			goto fail;
	}
	c->shrinker = ksync__shrinker_alloc(at.file, at.line, reg, 0, "objcache-%s", c->name);
	if (!c->shrinker)
		goto fail;
	c->shrinker->count_objects = shrink_count;
	c->shrinker->scan_objects = shrink_scan;
	c->shrinker->private_data = c;
	c->shrinker->seeks = KSYNC_DEFAULT_SEEKS;
	/* The callbacks and private_data before the shrinker is visible: the
	 * registry's release/acquire (ksync_shrinker_register()). */
	if (ksync__shrinker_register(at.file, at.line, c->shrinker))
		goto fail_shrinker;
	/* Last: a client attached cannot be detached while groups exist. */
	if (c->table && ksync__oc_client_attach(at, c))
		goto fail_shrinker;
	ksync__mutex_lock(&ksync__oc_mutex);
	ksync_list_add_tail(&c->all, &ksync__oc_caches);
	pthread_mutex_unlock(&ksync__oc_mutex);
	return c;
fail_shrinker:
	(void)ksync_shrinker_free(c->shrinker);
fail:
	free(c->table);
	ksync__oc_idx_put(c->idx);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

struct ksync_objcache *ksync__objcache_create(KSYNC_SITE_ARGS, const char *name, size_t size, size_t align,
					      unsigned flags, void (*ctor)(void *obj))
{
	return ksync__objcache_create_config(site_file, site_line, name, size, align, flags, ctor, NULL);
}

/* ---- alloc and free ---- */

static void *obj_alloc(struct ksync_objcache *c)
{
	void *obj = c->mag_size && !__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE) ? ksync__oc_mag_alloc(c) : NULL;
	struct ksync__oc_slab *s;
	bool fresh;

	if (!obj && !ksync__oc_take(c, &obj, 1, 0))
		return NULL;
	s = ksync__oc_slab_of(c, obj);
	fresh = ksync__oc_mark_live(s, ksync__oc_index(c, s, obj), true);
	KSYNC_WARN_ONCE(!fresh, "objcache %s: a free object was live", c->name);
	return obj;
}

static bool check_alloc(struct ksync_site at, struct ksync_objcache *cache)
{
	return !MISUSE(at, !cache, "ksync_objcache_alloc: NULL cache") &&
	       !MISUSE(at, __atomic_load_n(&cache->destroyed, __ATOMIC_RELAXED),
		       "ksync_objcache_alloc: cache %s was destroyed", cache->name);
}

void *ksync__objcache_alloc(KSYNC_SITE_ARGS, struct ksync_objcache *cache)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!check_alloc(at, cache))
		return NULL;
	return obj_alloc(cache);
}

void *ksync__objcache_alloc_group(KSYNC_SITE_ARGS, struct ksync_objcache *cache, struct ksync_memgroup *group)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__oc_slab *s;
	void *obj;

	if (!check_alloc(at, cache))
		return NULL;
	if (!group || !cache->accounted)
		return obj_alloc(cache);
	if (MISUSE(at, ksync_memgroup_set_of(group) != cache->set,
		   "ksync_objcache_alloc_group: the group is not of the cache's set"))
		return NULL;
	if (cache->design == KSYNC_OBJCACHE_PER_GROUP) {
		int idx = ksync_srcu_read_lock(cache->srcu); /* S1 */
		struct ksync_objcache *c = ksync__oc_child_get(cache, group);

		if (c)
			ksync__oc_yield(c, KSYNC_OBJCACHE_YP_ALLOC_CHILD_FOUND);
		obj = c ? obj_alloc(c) : NULL;
		/* No child, or it died meanwhile with no free object: the root. */
		if (!obj)
			obj = obj_alloc(cache);
		ksync_srcu_read_unlock(cache->srcu, idx);
		return obj;
	}
	obj = obj_alloc(cache);
	if (!obj)
		return NULL;
	s = ksync__oc_slab_of(cache, obj);
	s->objcg[ksync__oc_index(cache, s, obj)] =
		ksync__oc_stock_charge(ksync__oc_thread_stock(), group, (long)cache->size);
	return obj;
}

void ksync__objcache_free(KSYNC_SITE_ARGS, struct ksync_objcache *cache, void *obj)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync__oc_slab *s;
	struct ksync_objcache *owner;
	unsigned i;

	if (!obj)
		return;
	if (MISUSE(at, !cache, "ksync_objcache_free: NULL cache"))
		return;
	s = ksync__oc_slab_of(cache, obj);
	if (MISUSE(at, s->magic != KSYNC__OC_MAGIC, "ksync_objcache_free: %p is not an object of any cache", obj))
		return;
	owner = s->cache;
	if (MISUSE(at, owner != cache && owner->root != cache,
		   "ksync_objcache_free: %p belongs to cache %s, not %s", obj, owner->name, cache->name))
		return;
	i = ksync__oc_index(owner, s, obj);
	if (MISUSE(at, i >= owner->objs_per_slab || ksync__oc_obj(owner, s, i) != obj,
		   "ksync_objcache_free: %p is not the start of an object of %s", obj, cache->name))
		return;
	if (MISUSE(at, !ksync__oc_mark_live(s, i, false), "ksync_objcache_free: double free of %p in %s", obj,
		   cache->name))
		return;
	if (s->objcg && s->objcg[i]) {
		struct ksync_objcg *objcg = s->objcg[i];

		s->objcg[i] = NULL;
		ksync__oc_stock_uncharge(ksync__oc_thread_stock(), objcg, (long)owner->size);
	}
	if (owner != owner->root) {
		int idx = ksync_srcu_read_lock(owner->srcu); /* S1 */

		ksync__oc_yield(owner, KSYNC_OBJCACHE_YP_FREE_CHILD_FOUND);
		if (owner->mag_size && !__atomic_load_n(&owner->dead, __ATOMIC_ACQUIRE))
			ksync__oc_mag_free(owner, obj);
		else if (ksync__oc_put(owner, &obj, 1))
			ksync__oc_child_end(owner);
		ksync_srcu_read_unlock(owner->srcu, idx);
		return;
	}
	if (owner->mag_size)
		ksync__oc_mag_free(owner, obj);
	else
		(void)ksync__oc_put(owner, &obj, 1);
}

/* ---- destroy, shrink ---- */

static unsigned long live_all(struct ksync_objcache *root)
{
	struct ksync_objcache *c;
	unsigned long n = ksync__oc_count_live(root, NULL, NULL, NULL, NULL);

	ksync__mutex_lock(&root->lock);
	ksync_list_for_each_entry(c, &root->children, sibling)
		n += ksync__oc_count_live(c, NULL, NULL, NULL, NULL);
	pthread_mutex_unlock(&root->lock);
	return n;
}

int ksync__objcache_destroy(KSYNC_SITE_ARGS, struct ksync_objcache *cache)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	unsigned long live;
	bool end;
	int ret;

	if (!cache)
		return 0;
	if (MISUSE(at, cache->root != cache, "ksync_objcache_destroy: %s is a child cache", cache->name) ||
	    MISUSE(at, __atomic_load_n(&cache->destroyed, __ATOMIC_RELAXED),
		   "ksync_objcache_destroy: cache %s was destroyed already", cache->name))
		return -EINVAL;
	(void)shrink_all(cache, false);
	live = live_all(cache);
	if (MISUSE(at, live != 0, "ksync_objcache_destroy: cache %s still has %lu objects; leaking it", cache->name,
		   live))
		return -EBUSY;
	if (cache->client) {
		ret = ksync__oc_client_detach(at, cache);
		if (ret)
			return ret;
	}
	(void)ksync_shrinker_free(cache->shrinker);
	cache->shrinker = NULL;
	if (cache->table) {
		/* Children without objects: deactivation ends each at once.
		 * Then wait for their grace periods (the kernel's rcu_barrier). */
		ksync__oc_deactivate_all(cache);
		ksync_srcu_barrier(cache->srcu);
		for (int i = 0; i < KSYNC__OC_CHUNKS; i++)
			free(cache->table[i]);
		free(cache->table);
		cache->table = NULL;
	}
	(void)ksync__oc_drain_cache(cache, &end);
	(void)ksync__oc_free_empty(cache, true, &end);
	ksync__oc_idx_put(cache->idx);
	cache->idx = -1;
	__atomic_store_n(&cache->destroyed, 1, __ATOMIC_RELAXED);
	pthread_mutex_destroy(&cache->lock);

	ksync__mutex_lock(&ksync__oc_mutex);
	ksync_list_del(&cache->all);
	ksync_list_add_tail(&cache->all, &tombstones);
	if (++nr_tombstones > KSYNC__OC_TOMBSTONES) {
		struct ksync_objcache *old = ksync_list_first_entry(&tombstones, struct ksync_objcache, all);

		ksync_list_del(&old->all);
		nr_tombstones--;
		free(old);
	}
	pthread_mutex_unlock(&ksync__oc_mutex);
	return 0;
}

unsigned long ksync__objcache_shrink(KSYNC_SITE_ARGS, struct ksync_objcache *cache)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, !cache || __atomic_load_n(&cache->destroyed, __ATOMIC_RELAXED),
		   "ksync_objcache_shrink: no cache, or a destroyed one"))
		return 0;
	return shrink_all(cache, true);
}

void ksync_objcache_drain_thread(void)
{
	ksync__oc_drain_thread();
}

/* ---- the stock setting ---- */

int ksync__objcache_set_stock_slots(KSYNC_SITE_ARGS, int slots)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, slots < 1 || slots > KSYNC_OBJCACHE_STOCK_MAX,
		   "ksync_objcache_set_stock_slots: %d out of 1..%d", slots, KSYNC_OBJCACHE_STOCK_MAX))
		return -EINVAL;
	return __atomic_exchange_n(&ksync__oc_stock_slots, slots, __ATOMIC_RELAXED);
}

int ksync_objcache_stock_slots(void)
{
	return __atomic_load_n(&ksync__oc_stock_slots, __ATOMIC_RELAXED);
}

int ksync_objcache_thread_stock(struct ksync_objcg **out, int max)
{
	return ksync__oc_stock_list(ksync__oc_thread_stock(), false, out, max);
}

#if KSYNC_SEAMS /* <ksync/objcache_testing.h> */
int ksync_objcache_thread_parked(struct ksync_objcg **out, int max)
{
	return ksync__oc_stock_list(ksync__oc_thread_stock(), true, out, max);
}

int ksync_objcache_stock_hint(const struct ksync_memgroup *g, int *buckets)
{
	if (buckets)
		*buckets = KSYNC__OC_HINTS;
	return (int)ksync__oc_stock_hint_of(g);
}

int ksync_objcache_park_set(const struct ksync_memgroup *g, int *ways)
{
	(void)g; /* one set: the park is searched whole */
	if (ways)
		*ways = KSYNC__OC_PARK;
	return 0;
}
#endif

/* ---- statistics ---- */

int ksync__objcache_stats(KSYNC_SITE_ARGS, struct ksync_objcache *cache, struct ksync_objcache_stats *out)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_objcache *c;
	unsigned long live, total = 0, stacked = 0;

	if (MISUSE(at, !cache || !out, "ksync_objcache_stats: NULL argument"))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->object_size = cache->size;
	out->stride = cache->stride;
	out->objects_per_slab = cache->objs_per_slab;
	live = ksync__oc_count_live(cache, &out->slabs, &out->empty_slabs, &total, &stacked);
	ksync__mutex_lock(&cache->lock);
	ksync_list_for_each_entry(c, &cache->children, sibling)
		live += ksync__oc_count_live(c, &out->slabs, &out->empty_slabs, &total, &stacked);
	out->children_alive = cache->children_alive;
	out->children_dead = cache->children_dead;
	out->children_destroyed = cache->children_destroyed;
	pthread_mutex_unlock(&cache->lock);
	out->active_objects = live;
	out->total_objects = total;
	out->slab_size = cache->slab_size;
	out->slab_bytes = out->slabs * cache->slab_size;
	out->live_bytes = live * cache->size;
	out->utilisation = out->slab_bytes ? (double)out->live_bytes / (double)out->slab_bytes : 0.0;
	/* Objects out of their slabs' free stacks and not live: in magazines. */
	out->magazine_objects = total - stacked - live;
	return 0;
}

/* Design B: objects whose handle points at @g (a walk of the slabs). */
static unsigned long group_objects_b(struct ksync_objcache *c, struct ksync_memgroup *g)
{
	struct ksync_list_head *lists[] = { &c->partial, &c->full };
	struct ksync__oc_slab *s;
	unsigned long n = 0;
	int idx = ksync_srcu_read_lock(c->srcu);

	ksync__mutex_lock(&c->lock);
	for (int l = 0; l < 2; l++) {
		ksync_list_for_each_entry(s, lists[l], link) {
			for (unsigned i = 0; i < c->objs_per_slab; i++) {
				unsigned long w = __atomic_load_n(&s->live[i / 64], __ATOMIC_RELAXED);
				struct ksync_objcg *objcg;

				if (!(w & (1UL << (i % 64))))
					continue;
				objcg = s->objcg[i];
				if ((objcg ? ksync_objcg_group(objcg) : NULL) == g)
					n++;
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	ksync_srcu_read_unlock(c->srcu, idx);
	return n;
}

unsigned long ksync_objcache_group_objects(struct ksync_objcache *cache, struct ksync_memgroup *group)
{
	if (!cache)
		return 0;
	if (!cache->accounted)
		return group ? 0 : ksync__oc_count_live(cache, NULL, NULL, NULL, NULL);
	if (cache->design == KSYNC_OBJCACHE_PER_GROUP)
		return ksync__oc_group_objects_a(cache, group);
	return group_objects_b(cache, group);
}

bool ksync_objcache_group_pinned(struct ksync_objcache *cache, struct ksync_memgroup *group)
{
	if (!cache || !group || !cache->accounted || cache->design != KSYNC_OBJCACHE_PER_GROUP)
		return false;
	return ksync__oc_group_pinned(cache, group);
}

struct ksync_memgroup *ksync_objcache_obj_group(struct ksync_objcache *cache, const void *obj)
{
	struct ksync__oc_slab *s;

	if (!cache || !obj || !cache->accounted)
		return NULL;
	s = ksync__oc_slab_of(cache, obj);
	if (cache->design == KSYNC_OBJCACHE_PER_GROUP) {
		struct ksync_memgroup *g = NULL;

		ksync__mutex_lock(&ksync__oc_mutex); /* reparenting moves it under this mutex */
		if (s->cache != cache)
			g = s->cache->group;
		pthread_mutex_unlock(&ksync__oc_mutex);
		return g;
	}
	{
		struct ksync_objcg *objcg = s->objcg[ksync__oc_index(cache, s, obj)];

		return objcg ? ksync_objcg_group(objcg) : NULL;
	}
}

const char *ksync_objcache_name(const struct ksync_objcache *cache)
{
	return cache ? cache->name : NULL;
}

size_t ksync_objcache_size(const struct ksync_objcache *cache)
{
	return cache ? cache->size : 0;
}

/* ---- slabinfo ---- */

static void slabinfo_line(FILE *out, struct ksync_objcache *c, const char *tag)
{
	unsigned long slabs = 0, empty = 0, total = 0, live = ksync__oc_count_live(c, &slabs, &empty, &total, NULL);

	fprintf(out, "%-24s%s %6lu %6lu %6zu %4u %4lu : tunables %4u %4u %4u : slabdata %6lu %6lu %6u\n", c->name,
		tag, live, total, c->stride, c->objs_per_slab, c->slab_size / 4096, c->mag_size,
		(c->mag_size + 1) / 2, 0U, slabs - empty, slabs, 0U);
}

int ksync__objcache_slabinfo(KSYNC_SITE_ARGS, FILE *out)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_objcache *root, *c;
	int n = 0;

	if (MISUSE(at, !out, "ksync_objcache_slabinfo: NULL stream"))
		return -EINVAL;
	fprintf(out, "slabinfo - version: 2.1\n");
	fprintf(out, "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables "
		     "<limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n");
	ksync__mutex_lock(&ksync__oc_mutex);
	ksync_list_for_each_entry(root, &ksync__oc_caches, all) {
		slabinfo_line(out, root, "");
		n++;
		ksync__mutex_lock(&root->lock);
		ksync_list_for_each_entry(c, &root->children, sibling) {
			slabinfo_line(out, c, __atomic_load_n(&c->dead, __ATOMIC_RELAXED) ? ":dead" : "");
			n++;
		}
		pthread_mutex_unlock(&root->lock);
	}
	pthread_mutex_unlock(&ksync__oc_mutex);
	return n;
}
