// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/slab.c - slabs and the depot, cache indices, a dead child's end.
 *
 * A slab is KSYNC_OBJCACHE_SLAB_SIZE bytes mmap'd at that alignment, so that
 * an object's slab is its address rounded down. Its header (struct
 * ksync__oc_slab) is followed by three arrays, then the objects:
 *   live   a bitmap, one bit per object, set while a user holds it: written
 *          with atomic RMW by alloc and free on any thread (no lock): a free
 *          that finds the bit clear is a double free;
 *   free   a stack of free object indices, under the cache's mutex;
 *   objcg  design B: the charge handle of each live object, written by the
 *          allocating thread after setting the bit and read by the freeing
 *          thread after clearing it (the user's hand-off of the object
 *          orders them, as for the object's own bytes).
 * Objects are constructed when their slab is made and never again.
 *
 * The depot is the cache's three lists (partial, full, empty) under its
 * mutex; magazines (magazine.c) take and put objects in batches here. A
 * partial slab may have an owner, the thread whose magazine refills took
 * from it last: a refill prefers its own slab, then one without owner,
 * then an empty or new one, and takes from another thread's only when no
 * slab can be made, so that two threads' objects do not share the live
 * bitmap's words (each alloc and free does an atomic RMW there) or the
 * handle vector's lines. A full slab has no owner; a thread's exit clears
 * its ownerships (ksync__oc_unclaim()). Ownership is a placement hint
 * only: frees go to an object's slab whoever owns it.
 * An empty slab goes back to its arena at once when the cache keeps
 * max_empty empty slabs already, or when the cache is dead (a deactivated
 * child, the kernel's 4.0 "dead caches discard free slabs immediately").
 *
 * A dead child whose last slab goes is ended (ksync__oc_child_end()) by the
 * one thread that saw nr_slabs reach 0 (the finishing flag, under the mutex):
 * it leaves its group's list and its root's list, drops its group reference
 * and is freed after a grace period of the set's domain, inside whose read
 * sections allocations and frees for children run (objcache.c). Its index
 * is released in that callback too: a magazine owner that raced the
 * deactivation may still store to the index's slot until its section ends.
 *
 * Cache indices name each cache's slot in every thread's magazine table;
 * the index map (index -> cache) is read by thread exit under the threads'
 * mutex, and an index is reused only once every thread's slot for it has
 * been drained (destroy, deactivation).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

pthread_mutex_t ksync__oc_mutex = PTHREAD_MUTEX_INITIALIZER;
struct ksync_list_head ksync__oc_caches = { &ksync__oc_caches, &ksync__oc_caches };
struct ksync_list_head ksync__oc_clients = { &ksync__oc_clients, &ksync__oc_clients };

/* ---- the test seam ---- */

#if KSYNC_SEAMS /* <ksync/objcache_testing.h>; none in a production build */
void (*ksync__oc_yield_hook)(struct ksync_objcache *, int, void *);
void *ksync__oc_yield_arg;

void ksync_objcache_set_yield_hook(void (*hook)(struct ksync_objcache *cache, int point, void *arg), void *arg)
{
	__atomic_store_n(&ksync__oc_yield_arg, arg, __ATOMIC_RELAXED);
	__atomic_store_n(&ksync__oc_yield_hook, hook, __ATOMIC_RELEASE); /* Y1 */
}
#endif

/* ---- cache indices ---- */

static pthread_mutex_t idx_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_objcache **idx_map[KSYNC__OC_CHUNKS]; /* entries: atomic */
static int *idx_free;   /* stack of released indices */
static int idx_nfree, idx_cap, idx_next;

int ksync__oc_idx_get(struct ksync_objcache *c)
{
	int idx = -ENOMEM;

	ksync__mutex_lock(&idx_mutex);
	if (idx_nfree) {
		idx = idx_free[--idx_nfree];
	} else if (idx_next < KSYNC__OC_MAX_IDX) {
		struct ksync_objcache ***chunk = &idx_map[idx_next / KSYNC__OC_CHUNK];

		if (!*chunk)
			*chunk = KSYNC__ALLOC(calloc(KSYNC__OC_CHUNK, sizeof(**chunk)));
		if (*chunk)
			idx = idx_next++;
	}
	if (idx >= 0)
		__atomic_store_n(&idx_map[idx / KSYNC__OC_CHUNK][idx % KSYNC__OC_CHUNK], c, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&idx_mutex);
	return idx;
}

void ksync__oc_idx_put(int idx)
{
	if (idx < 0)
		return;
	ksync__mutex_lock(&idx_mutex);
	__atomic_store_n(&idx_map[idx / KSYNC__OC_CHUNK][idx % KSYNC__OC_CHUNK], NULL, __ATOMIC_RELAXED);
	if (idx_nfree == idx_cap) {
		int cap = idx_cap ? 2 * idx_cap : 64;
		int *p = KSYNC__ALLOC(realloc(idx_free, (size_t)cap * sizeof(*p)));

		if (!p) {
			/* Out of memory: the index is lost, not reused. */
			pthread_mutex_unlock(&idx_mutex);
			return;
		}
		idx_free = p;
		idx_cap = cap;
	}
	idx_free[idx_nfree++] = idx;
	pthread_mutex_unlock(&idx_mutex);
}

struct ksync_objcache *ksync__oc_idx_cache(int idx)
{
	struct ksync_objcache **chunk = idx_map[idx / KSYNC__OC_CHUNK];

	return chunk ? __atomic_load_n(&chunk[idx % KSYNC__OC_CHUNK], __ATOMIC_RELAXED) : NULL;
}

/* ---- layout ---- */

static size_t round_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

/* Per slab: its header, then the live bitmap and the free stack, then the
 * objects (design B's handle vector lives outside the slab, allocated with
 * it, as the kernel's obj_exts: the slab holds as many objects as an
 * unaccounted one). Returns the objects @slab_size holds. */
static size_t layout_n(struct ksync_objcache *c, size_t slab_size, bool set)
{
	size_t n = (slab_size - sizeof(struct ksync__oc_slab)) / c->stride;

	for (; n; n--) {
		size_t off = sizeof(struct ksync__oc_slab), live_off, free_off;

		live_off = off;
		off += round_up(n, 64) / 8;
		free_off = off;
		off += n * sizeof(uint16_t);
		off = round_up(off, c->align);
		if (off + n * c->stride <= slab_size) {
			if (set) {
				c->live_off = live_off;
				c->free_off = free_off;
				c->obj_off = off;
			}
			return n;
		}
	}
	return 0;
}

/*
 * The slab size, per object size, as the kernel picks a slab order per
 * cache: the smallest power of two from 4 KiB (a page) up to
 * KSYNC_OBJCACHE_SLAB_SIZE that holds KSYNC__OC_MIN_OBJS objects, the
 * largest otherwise. Small objects get small slabs, so the last, partly
 * empty slab of a cache (or of a group's cache, design A) wastes less; every
 * design gets the same slabs for one object size.
 */
#define KSYNC__OC_MIN_OBJS 64

void ksync__oc_layout(struct ksync_objcache *c)
{
	size_t sz = 4096;

	while (sz < KSYNC_OBJCACHE_SLAB_SIZE && layout_n(c, sz, false) < KSYNC__OC_MIN_OBJS)
		sz *= 2;
	c->slab_size = sz;
	c->objs_per_slab = (unsigned)layout_n(c, sz, true);
	c->recip = (uint32_t)((1ULL << 32) / c->stride + 1);
}

/* ---- arenas ----
 *
 * Slabs are carved out of arenas of KSYNC__OC_ARENA bytes (2 MiB) mapped at
 * that alignment, one slab size per arena, so that a slab is still aligned
 * to its size (an object's slab is its address rounded down) and an address
 * of an arena rounded down to any slab size stays in that arena (mapped).
 * One mmap serves 32 to 512 slabs, and an arena is unmapped in one call when
 * its last slab is freed: slabs no longer cost one mmap and one munmap each
 * (the teardown of 100,000 dead caches was almost all munmap), nor one
 * mapping each (vm.max_map_count). A freed slab of an arena that still has
 * others in use keeps its pages until the arena goes, as freed pages stay in
 * the kernel's page allocator. The arena mutex is a leaf (taken under a
 * cache's mutex).
 */
#define KSYNC__OC_ARENA (2UL * 1024 * 1024)
#define KSYNC__OC_SIZES 5 /* 4 KiB .. 64 KiB */

struct ksync__oc_arena {
	struct ksync_list_head link; /* on arena_avail[] while it has a slab to give */
	char *base;
	unsigned nslabs, used, next; /* next: the first slab never given out */
	void *free;                  /* freed slabs, linked through their first word */
};

static pthread_mutex_t arena_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_list_head arena_avail[KSYNC__OC_SIZES]; /* initialised at first use */

static void *map_aligned(size_t sz)
{
	char *p = mmap(NULL, 2 * sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = round_up((uintptr_t)p, sz);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((char *)a + sz, (uintptr_t)p + sz - a);
	return (void *)a;
}

static struct ksync_list_head *avail_list(size_t slab_size)
{
	struct ksync_list_head *avail = &arena_avail[__builtin_ctzl(slab_size) - 12];

	if (!avail->next)
		ksync_init_list_head(avail);
	return avail;
}

static struct ksync__oc_slab *slab_get(size_t slab_size)
{
	struct ksync_list_head *avail;
	struct ksync__oc_arena *a;
	char *s;

	ksync__mutex_lock(&arena_mutex);
	avail = avail_list(slab_size);
	if (ksync_list_empty(avail)) {
		a = calloc(1, sizeof(*a));
		if (a && !(a->base = map_aligned(KSYNC__OC_ARENA))) {
			free(a);
			a = NULL;
		}
		if (!a) {
			pthread_mutex_unlock(&arena_mutex);
			return NULL;
		}
		a->nslabs = (unsigned)(KSYNC__OC_ARENA / slab_size);
		ksync_list_add(&a->link, avail);
	}
	a = ksync_list_first_entry(avail, struct ksync__oc_arena, link);
	if (a->free) {
		s = a->free;
		a->free = *(void **)a->free;
	} else {
		s = a->base + (size_t)a->next++ * slab_size;
	}
	if (++a->used == a->nslabs)
		ksync_list_del_init(&a->link);
	pthread_mutex_unlock(&arena_mutex);
	((struct ksync__oc_slab *)(void *)s)->arena = a;
	return (struct ksync__oc_slab *)(void *)s;
}

static void slab_put(struct ksync__oc_slab *s)
{
	struct ksync__oc_arena *a = s->arena;

	ksync__mutex_lock(&arena_mutex);
	if (a->used == a->nslabs)
		ksync_list_add(&a->link, avail_list(KSYNC__OC_ARENA / a->nslabs));
	*(void **)(void *)s = a->free; /* over the magic, cleared already */
	a->free = s;
	if (--a->used == 0) {
		ksync_list_del(&a->link);
		munmap(a->base, KSYNC__OC_ARENA);
		free(a);
	}
	pthread_mutex_unlock(&arena_mutex);
}

/* ---- slabs ---- */

/* Under c->lock. */
static struct ksync__oc_slab *new_slab(struct ksync_objcache *c)
{
	struct ksync__oc_slab *s = KSYNC__ALLOC(slab_get(c->slab_size));
	struct ksync__oc_arena *a;
	struct ksync_objcg **objcg = NULL;

	if (!s)
		return NULL;
	if (c->design == KSYNC_OBJCACHE_CHARGE_HANDLES && c->accounted) {
		objcg = KSYNC__ALLOC(calloc(c->objs_per_slab, sizeof(*objcg)));
		if (!objcg) {
			slab_put(s);
			return NULL;
		}
	}
	/* A slab may come back from its arena used: clear header and bitmap. */
	a = s->arena;
	memset(s, 0, c->free_off);
	s->arena = a;
	s->magic = KSYNC__OC_MAGIC;
	s->cache = c;
	s->live = (unsigned long *)(void *)((char *)s + c->live_off);
	s->free = (uint16_t *)(void *)((char *)s + c->free_off);
	s->objcg = objcg;
	s->nfree = c->objs_per_slab;
	for (unsigned i = 0; i < c->objs_per_slab; i++) {
		s->free[i] = (uint16_t)(c->objs_per_slab - 1 - i);
		if (c->ctor)
			c->ctor(ksync__oc_obj(c, s, i));
	}
	ksync_list_add(&s->link, &c->empty);
	c->nr_slabs++;
	c->nr_empty++;
	return s;
}

/* Under c->lock. */
static void drop_slab(struct ksync_objcache *c, struct ksync__oc_slab *s)
{
	ksync_list_del(&s->link);
	c->nr_slabs--;
	s->magic = 0;
	free(s->objcg);
	slab_put(s);
}

/* How many partial slabs a refill looks at for one of its own or nobody's. */
#define OWNER_WALK 4

/*
 * Under c->lock: the slab a refill of thread @owner takes from. Its own
 * partial slab, else a partial slab nobody refills from, else an empty or
 * new one, and only when that fails a partial slab of another thread's (a
 * dead child makes no slab). Two threads refilling from one slab would
 * share its live bitmap's words (an atomic RMW per alloc and per free) and
 * design B's handle vector: each would pull the other's cache line at every
 * pair, which cost more than a whole pair of a lone thread.
 */
static struct ksync__oc_slab *take_slab(struct ksync_objcache *c, uint32_t owner)
{
	struct ksync__oc_slab *s, *free_one = NULL;
	int walked = 0;

	ksync_list_for_each_entry(s, &c->partial, link) {
		if (!owner || s->owner == owner)
			return s;
		if (!s->owner && !free_one)
			free_one = s;
		if (++walked == OWNER_WALK)
			break;
	}
	if (free_one)
		return free_one;
	if (!ksync_list_empty(&c->empty) || (!__atomic_load_n(&c->dead, __ATOMIC_RELAXED) && new_slab(c))) {
		s = ksync_list_first_entry(&c->empty, struct ksync__oc_slab, link);
		s->owner = 0; /* whoever refilled from it before it emptied */
		c->nr_empty--;
		c->nr_partial++;
		ksync_list_move(&s->link, &c->partial);
		return s;
	}
	/* A dead child, or out of memory: share. */
	return ksync_list_empty(&c->partial) ? NULL : ksync_list_first_entry(&c->partial, struct ksync__oc_slab, link);
}

unsigned ksync__oc_take(struct ksync_objcache *c, void **out, unsigned n, uint32_t owner)
{
	unsigned got = 0;

	ksync__mutex_lock(&c->lock);
	while (got < n) {
		/* A dead child makes no slab (dead is set before its
		 * deactivation takes this mutex): once its last slab is gone
		 * it ends, and a slab made after that, by an allocator that
		 * found the child before it died, would hold objects in freed
		 * memory. Its free objects are still handed out. */
		struct ksync__oc_slab *s = take_slab(c, owner);

		if (!s)
			break;
		if (owner)
			s->owner = owner;
		while (got < n && s->nfree) {
			out[got++] = ksync__oc_obj(c, s, s->free[--s->nfree]);
			s->inuse++;
		}
		if (!s->nfree) {
			s->owner = 0; /* back on the partial list for anyone */
			c->nr_partial--;
			c->nr_full++;
			ksync_list_move(&s->link, &c->full);
		}
	}
	pthread_mutex_unlock(&c->lock);
	return got;
}

void ksync__oc_unclaim(struct ksync_objcache *c, uint32_t owner)
{
	struct ksync__oc_slab *s;

	ksync__mutex_lock(&c->lock);
	ksync_list_for_each_entry(s, &c->partial, link)
		if (s->owner == owner)
			s->owner = 0;
	pthread_mutex_unlock(&c->lock);
}

/* Under c->lock: the end condition, claimed once. */
static bool claim_end(struct ksync_objcache *c)
{
	if (c->root == c || !__atomic_load_n(&c->dead, __ATOMIC_RELAXED) || c->nr_slabs || c->finishing)
		return false;
	c->finishing = true;
	return true;
}

bool ksync__oc_put(struct ksync_objcache *c, void *const *objs, unsigned n)
{
	bool dead = __atomic_load_n(&c->dead, __ATOMIC_RELAXED), end;

	ksync__mutex_lock(&c->lock);
	for (unsigned k = 0; k < n; k++) {
		struct ksync__oc_slab *s = ksync__oc_slab_of(c, objs[k]);

		if (!s->nfree) {
			c->nr_full--;
			c->nr_partial++;
			ksync_list_move(&s->link, &c->partial);
		}
		s->free[s->nfree++] = (uint16_t)ksync__oc_index(c, s, objs[k]);
		s->inuse--;
		if (s->inuse)
			continue;
		c->nr_partial--;
		if (dead || c->nr_empty >= c->max_empty) {
			drop_slab(c, s);
		} else {
			c->nr_empty++;
			ksync_list_move(&s->link, &c->empty);
		}
	}
	end = claim_end(c);
	pthread_mutex_unlock(&c->lock);
	return end;
}

unsigned long ksync__oc_free_empty(struct ksync_objcache *c, bool all, bool *end)
{
	unsigned long freed = 0;

	ksync__mutex_lock(&c->lock);
	while (c->nr_empty > (all ? 0 : c->max_empty)) {
		drop_slab(c, ksync_list_first_entry(&c->empty, struct ksync__oc_slab, link));
		c->nr_empty--;
		freed++;
	}
	*end = claim_end(c);
	pthread_mutex_unlock(&c->lock);
	return freed;
}

unsigned long ksync__oc_count_live(struct ksync_objcache *c, unsigned long *slabs, unsigned long *empty,
				   unsigned long *total, unsigned long *stacked)
{
	struct ksync_list_head *lists[] = { &c->partial, &c->full };
	unsigned long live = 0, words = (c->objs_per_slab + 63) / 64;
	struct ksync__oc_slab *s;

	ksync__mutex_lock(&c->lock);
	for (int l = 0; l < 2; l++)
		ksync_list_for_each_entry(s, lists[l], link)
			for (unsigned long w = 0; w < words; w++)
				live += (unsigned long)__builtin_popcountl(
					__atomic_load_n(&s->live[w], __ATOMIC_RELAXED));
	if (slabs)
		*slabs += c->nr_slabs;
	if (empty)
		*empty += c->nr_empty;
	if (total)
		*total += c->nr_slabs * c->objs_per_slab;
	if (stacked) {
		*stacked += c->nr_empty * c->objs_per_slab;
		ksync_list_for_each_entry(s, &c->partial, link)
			*stacked += s->nfree;
	}
	pthread_mutex_unlock(&c->lock);
	return live;
}

/* ---- a dead child's end ---- */

static void child_free_rcu(struct ksync_rcu_head *head)
{
	struct ksync_objcache *c = ksync_container_of(head, struct ksync_objcache, rcu);

	ksync__oc_idx_put(c->idx);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void ksync__oc_child_end(struct ksync_objcache *c)
{
	struct ksync_objcache *root = c->root;
	struct ksync_memgroup *g;

	ksync__mutex_lock(&ksync__oc_mutex);
	if (!ksync_list_empty(&c->glink))
		ksync_list_del_init(&c->glink);
	g = c->group; /* reparenting moves it under this mutex */
	c->group = NULL;
	ksync__mutex_lock(&root->lock);
	ksync_list_del_init(&c->sibling);
	root->children_dead--;
	root->children_destroyed++;
	pthread_mutex_unlock(&root->lock);
	pthread_mutex_unlock(&ksync__oc_mutex);
	if (g)
		ksync_memgroup_put(g);
	/* Readers that found @c (allocations, frees inside the set's domain)
	 * may still look at it: free after a grace period. */
	ksync_call_srcu(c->srcu, &c->rcu, child_free_rcu);
}
