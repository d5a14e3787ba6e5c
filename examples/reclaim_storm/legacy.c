/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * legacy.c - the registry as mm/vmscan.c had it before the lockless series:
 * one global reader-writer lock (shrinker_rwsem).
 *
 *  - register/unregister take it for writing;
 *  - walkers (shrink_slab) only *try* to take it for reading and give up the
 *    whole walk when that fails or a writer is waiting, so reclaim loses the
 *    walk ("failed trylock", the parasite work Kirill Tkhai described);
 *  - a walk in progress checks after each shrinker whether a writer waits
 *    (rwsem_is_contended()) and leaves early, reporting progress.
 *
 * A pthread rwlock that prefers writers plays the rwsem; writers announce
 * themselves in writers_waiting first, the rwsem's "waiters" bit. Group maps
 * have a fixed capacity (max_ids) so that lock-free bit setters never race
 * with a reallocation; the old kernel grew them under the rwsem plus RCU,
 * which the steady-state storm never exercises. Lives in the demo only.
 */
#include "storm.h"

#include <ksync/list.h>
#include <ksync/math.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct legacy_node {
	struct ksync_list_head list;
	struct ksync_shrinker s;
	int nr_nodes;
	ksync_atomic_long_t nr_deferred[];
};

struct legacy_group {
	int nr_nodes;
	unsigned long **bits;           /* per node, max_ids bits */
	ksync_atomic_long_t **deferred; /* per node, max_ids counters */
};

struct legacy_reg {
	pthread_rwlock_t rwsem;
	ksync_atomic_t writers_waiting KSYNC_CACHELINE_ALIGNED;
	struct ksync_list_head shrinkers KSYNC_CACHELINE_ALIGNED; /* under rwsem */
	struct legacy_node **idr;                  /* under rwsem */
	unsigned long *ids_used;                   /* under rwsem (write) */
	int max_ids;
	int nr_nodes;
};

static void *lg_create(int nr_nodes, int max_ids)
{
	struct legacy_reg *r = calloc(1, sizeof(*r));
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&r->rwsem, &a);
	pthread_rwlockattr_destroy(&a);
	ksync_init_list_head(&r->shrinkers);
	r->max_ids = ksync_round_up(max_ids, KSYNC_BITS_PER_LONG);
	r->nr_nodes = nr_nodes;
	r->idr = calloc((size_t)r->max_ids, sizeof(r->idr[0]));
	r->ids_used = calloc(KSYNC_BITS_TO_LONGS(r->max_ids), sizeof(long));
	return r;
}

static void lg_destroy(void *reg)
{
	struct legacy_reg *r = reg;

	pthread_rwlock_destroy(&r->rwsem);
	free(r->idr);
	free(r->ids_used);
	free(r);
}

static void *lg_group_create(void *reg)
{
	struct legacy_reg *r = reg;
	struct legacy_group *g = calloc(1, sizeof(*g));

	g->nr_nodes = r->nr_nodes;
	g->bits = calloc((size_t)r->nr_nodes, sizeof(g->bits[0]));
	g->deferred = calloc((size_t)r->nr_nodes, sizeof(g->deferred[0]));
	for (int n = 0; n < r->nr_nodes; n++) {
		g->bits[n] = calloc(KSYNC_BITS_TO_LONGS(r->max_ids), sizeof(long));
		g->deferred[n] = calloc((size_t)r->max_ids, sizeof(ksync_atomic_long_t));
	}
	return g;
}

static void lg_group_destroy(void *reg, void *group)
{
	struct legacy_group *g = group;

	(void)reg;
	for (int n = 0; n < g->nr_nodes; n++) {
		free(g->bits[n]);
		free(g->deferred[n]);
	}
	free(g->bits);
	free(g->deferred);
	free(g);
}

static void down_write(struct legacy_reg *r)
{
	ksync_atomic_inc(&r->writers_waiting);
	pthread_rwlock_wrlock(&r->rwsem);
	ksync_atomic_dec(&r->writers_waiting);
}

static void up_write(struct legacy_reg *r)
{
	pthread_rwlock_unlock(&r->rwsem);
}

static bool rwsem_is_contended(struct legacy_reg *r)
{
	return ksync_atomic_read(&r->writers_waiting) != 0;
}

static int lg_mount(void *reg, struct storm_mount *m)
{
	struct legacy_reg *r = reg;
	struct legacy_node *n = calloc(1, sizeof(*n) + (size_t)r->nr_nodes * sizeof(n->nr_deferred[0]));
	int id = -1;

	if (!n)
		return -1;
	n->nr_nodes = r->nr_nodes;
	n->s.count_objects = storm_count_objects;
	n->s.scan_objects = storm_scan_objects;
	n->s.seeks = KSYNC_DEFAULT_SEEKS;
	n->s.flags = KSYNC_SHRINKER_MEMCG_AWARE;
	n->s.private_data = m;

	down_write(r);
	for (int w = 0; w < r->max_ids / KSYNC_BITS_PER_LONG; w++) {
		if (r->ids_used[w] != ~0UL) {
			id = w * KSYNC_BITS_PER_LONG + __builtin_ctzl(~r->ids_used[w]);
			break;
		}
	}
	if (id < 0) {
		up_write(r);
		free(n);
		return -1;
	}
	r->ids_used[id / KSYNC_BITS_PER_LONG] |= 1UL << (id % KSYNC_BITS_PER_LONG);
	n->s.id = id;
	r->idr[id] = n;
	ksync_list_add_tail(&n->list, &r->shrinkers);
	up_write(r);

	m->handle = n;
	ksync_atomic_set(&m->id, id);
	return 0;
}

static void lg_umount(void *reg, struct storm_mount *m)
{
	struct legacy_reg *r = reg;
	struct legacy_node *n = m->handle;
	int id = n->s.id;

	ksync_atomic_set(&m->id, -1);
	down_write(r);
	ksync_list_del(&n->list);
	r->idr[id] = NULL;
	r->ids_used[id / KSYNC_BITS_PER_LONG] &= ~(1UL << (id % KSYNC_BITS_PER_LONG));
	up_write(r);
	free(n);
	m->handle = NULL;
}

static void lg_set_bit(void *reg, void *group, int nid, int id)
{
	struct legacy_group *g = group;

	(void)reg;
	/* Pairs with the barrier after the clear in lg_shrink_group(), as in the kernel. */
	ksync_smp_mb();
	ksync_ulong_or(&g->bits[nid][id / KSYNC_BITS_PER_LONG], 1UL << (id % KSYNC_BITS_PER_LONG));
}

/*
 * The kernel's do_shrink_slab() of that time, on the demo's callbacks. The
 * budget arithmetic is ksync_shrink_budget(), the one ksync_shrink_slab()
 * uses, so both registries scan alike by construction.
 */
static unsigned long lg_do_shrink(struct ksync_shrinker *s, struct ksync_shrink_control *sc,
				  ksync_atomic_long_t *deferred, int priority)
{
	struct ksync_shrink_budget b;
	unsigned long freeable, freed = 0, scanned = 0;
	long nr = 0, next;

	freeable = s->count_objects(s, sc);
	if (freeable == 0 || freeable == KSYNC_SHRINK_EMPTY)
		return freeable;
	if (ksync_atomic_long_read(deferred))
		nr = ksync_atomic_long_xchg(deferred, 0);
	ksync_shrink_budget(freeable, nr, priority, s->seeks, s->batch, &b);
	while (b.total_scan >= b.batch || b.total_scan >= freeable) {
		unsigned long n = ksync_min(b.batch, b.total_scan), ret;

		sc->nr_to_scan = n;
		sc->nr_scanned = n;
		ret = s->scan_objects(s, sc);
		if (ret == KSYNC_SHRINK_STOP)
			break;
		freed += ret;
		b.total_scan -= sc->nr_scanned;
		scanned += sc->nr_scanned;
		if (!sc->nr_scanned)
			break;
	}
	next = ksync_shrink_next_deferred(nr, b.delta, scanned, freeable);
	if (next)
		ksync_atomic_long_add(next, deferred);
	return freed;
}

static unsigned long lg_shrink_group(struct legacy_reg *r, struct legacy_group *g, int nid,
				     int priority)
{
	unsigned long freed = 0, *bits = g->bits[nid];
	int words = r->max_ids / KSYNC_BITS_PER_LONG;

	for (int w = 0; w < words; w++) {
		unsigned long word = ksync_ulong_load(&bits[w]);

		while (word) {
			int id = w * KSYNC_BITS_PER_LONG + __builtin_ctzl(word);
			unsigned long mask = 1UL << (id % KSYNC_BITS_PER_LONG), ret;
			struct legacy_node *n = r->idr[id];
			struct ksync_shrink_control sc = { .nid = nid,
							   .group = (struct ksync_memgroup *)g };

			word &= word - 1;
			if (!n) {
				ksync_ulong_andnot(&bits[w], mask);
				continue;
			}
			ret = lg_do_shrink(&n->s, &sc, &g->deferred[nid][id], priority);
			if (ret == KSYNC_SHRINK_EMPTY) {
				ksync_ulong_andnot(&bits[w], mask);
				ksync_smp_mb(); /* pairs with the barrier in lg_set_bit() */
				ret = lg_do_shrink(&n->s, &sc, &g->deferred[nid][id], priority);
				if (ret == KSYNC_SHRINK_EMPTY)
					ret = 0;
				else
					ksync_ulong_or(&bits[w], mask);
			}
			freed += ret;
			if (rwsem_is_contended(r))
				return freed ? freed : 1;
		}
	}
	return freed;
}

static unsigned long lg_shrink_global(struct legacy_reg *r, int nid, int priority)
{
	struct legacy_node *n;
	unsigned long freed = 0;

	ksync_list_for_each_entry(n, &r->shrinkers, list) {
		struct ksync_shrink_control sc = { .nid = 0 };
		unsigned long ret = lg_do_shrink(&n->s, &sc, &n->nr_deferred[nid], priority);

		if (ret != KSYNC_SHRINK_EMPTY)
			freed += ret;
		if (rwsem_is_contended(r))
			return freed ? freed : 1;
	}
	return freed;
}

static unsigned long lg_shrink(void *reg, int nid, void *group, int priority)
{
	struct legacy_reg *r = reg;
	unsigned long freed;

	/* down_read_trylock(&shrinker_rwsem): fails when a writer holds or waits. */
	if (rwsem_is_contended(r) || pthread_rwlock_tryrdlock(&r->rwsem) != 0) {
		storm_tls->failed_trylocks++;
		return 0;
	}
	freed = group ? lg_shrink_group(r, group, nid, priority) : lg_shrink_global(r, nid, priority);
	pthread_rwlock_unlock(&r->rwsem);
	storm_tls->walks++;
	return freed;
}

const struct storm_registry_ops storm_legacy_ops = {
	.name = "legacy",
	.create = lg_create,
	.destroy = lg_destroy,
	.group_create = lg_group_create,
	.group_destroy = lg_group_destroy,
	.mount = lg_mount,
	.umount = lg_umount,
	.set_bit = lg_set_bit,
	.shrink = lg_shrink,
};
