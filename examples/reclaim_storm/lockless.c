/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lockless.c - the reclaim-storm registry interface on ksync::shrinker, the
 * library's SRCU + per-shrinker refcount registry (the kernel's 6.7 design).
 * Mounting is ksync_shrinker_alloc() + ksync_shrinker_register(); unmounting
 * is ksync_shrinker_free(), which waits only for calls into that one shrinker.
 */
#include "storm.h"

#include <stdlib.h>

static void *ll_create(int nr_nodes, int max_ids)
{
	(void)max_ids; /* the library grows its maps itself */
	return ksync_shrinker_registry_create(nr_nodes);
}

static void ll_destroy(void *reg)
{
	ksync_shrinker_registry_destroy(reg);
}

static void *ll_group_create(void *reg)
{
	return ksync_shrinker_group_create(reg, NULL);
}

static void ll_group_destroy(void *reg, void *group)
{
	(void)reg;
	ksync_shrinker_group_destroy(group);
}

static int ll_mount(void *reg, struct storm_mount *m)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "mnt-%d", m->idx);

	if (!s)
		return -1;
	s->count_objects = storm_count_objects;
	s->scan_objects = storm_scan_objects;
	s->seeks = KSYNC_DEFAULT_SEEKS;
	s->private_data = m;
	if (ksync_shrinker_register(s)) {
		ksync_shrinker_free(s);
		return -1;
	}
	m->handle = s;
	ksync_atomic_set(&m->id, s->id);
	return 0;
}

static void ll_umount(void *reg, struct storm_mount *m)
{
	(void)reg;
	ksync_atomic_set(&m->id, -1);
	ksync_shrinker_free(m->handle);
	m->handle = NULL;
}

static void ll_set_bit(void *reg, void *group, int nid, int id)
{
	(void)reg;
	ksync_set_shrinker_bit(group, nid, id);
}

static unsigned long ll_shrink(void *reg, int nid, void *group, int priority)
{
	unsigned long freed = ksync_shrink_slab(reg, nid, group, priority);

	storm_tls->walks++;
	return freed;
}

const struct storm_registry_ops storm_lockless_ops = {
	.name = "lockless",
	.create = ll_create,
	.destroy = ll_destroy,
	.group_create = ll_group_create,
	.group_destroy = ll_group_destroy,
	.mount = ll_mount,
	.umount = ll_umount,
	.set_bit = ll_set_bit,
	.shrink = ll_shrink,
};
