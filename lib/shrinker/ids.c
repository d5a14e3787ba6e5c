/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/ids.c - shrinker ids and the id table.
 *
 * Memcg-aware shrinkers get the lowest free id (writers, under reg->mutex).
 * The id table maps an id to its record for the group walk; it and every
 * group's maps have reg->nr_max entries. A new id at or past nr_max grows
 * them all, in the caller (register.c, as the kernel's shrinker_memcg_alloc()
 * does): the group maps first (group_info.c; shared units, see
 * <ksync/sized_map.h>), then the table here, a copy published and the old
 * one freed by call_srcu. This file calls no other file of the registry.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define INITIAL_NR_MAX ((unsigned int)KSYNC_BITS_PER_LONG)

static struct shrinker_id_table *id_table_alloc(unsigned int nr)
{
	struct shrinker_id_table *t = KSYNC__ALLOC(calloc(1, sizeof(*t) + (size_t)nr * sizeof(t->slot[0])));

	if (t)
		t->nr = nr;
	return t;
}

static void free_rcu_id_table(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct shrinker_id_table, rcu));
}

int ksync__shr_shrinker_ids_init(struct ksync_shrinker_registry *reg)
{
	struct shrinker_id_table *t = id_table_alloc(INITIAL_NR_MAX);

	reg->nr_max = INITIAL_NR_MAX;
	reg->ids_cap = INITIAL_NR_MAX;
	reg->ids_free_hint = 0;
	reg->ids_used = KSYNC__ALLOC(calloc(KSYNC_BITS_TO_LONGS(reg->ids_cap), sizeof(unsigned long)));
	if (!reg->ids_used || !t) {
		free(reg->ids_used);
		reg->ids_used = NULL;
		free(t);
		return -ENOMEM;
	}
	KSYNC_RCU_INIT_POINTER(reg->ids, t);
	return 0;
}

void ksync__shr_shrinker_ids_destroy(struct ksync_shrinker_registry *reg)
{
	free((void *)ksync_rcu_access_pointer(reg->ids));
	free(reg->ids_used);
}

/*
 * Grow the id table to @new_nr entries and say so in reg->nr_max. Under
 * reg->mutex, inside a read section (Q, below), after every group's maps
 * were grown to @new_nr: once nr_max says "new_nr", set_shrinker_bit callers
 * expect room.
 */
int ksync__shr_id_table_grow_locked(struct ksync_shrinker_registry *reg, unsigned int new_nr)
{
	struct shrinker_id_table *old, *t;

	old = (struct shrinker_id_table *)ksync_rcu_access_pointer(reg->ids);
	t = id_table_alloc(new_nr);
	if (!t)
		return -ENOMEM;
	for (unsigned int i = 0; i < old->nr; i++)
		KSYNC_RCU_INIT_POINTER(t->slot[i], ksync_rcu_access_pointer(old->slot[i]));
	/* Publishes the copied slots; pairs with ksync_srcu_dereference() in id_lookup(). */
	ksync_rcu_assign_pointer(reg->ids, t);
	KSYNC_WRITE_ONCE(reg->nr_max, new_nr);
	yield_point(KSYNC_SHRINKER_YP_GROW_PUBLISHED);
	ksync_call_srcu(&reg->srcu, &old->rcu, free_rcu_id_table);
	return 0;
}

/*
 * Q (for the callers of ksync__shr_id_table_grow_locked() and ksync__shr_group_infos_grow_locked()):
 * writers holding reg->mutex queue their SRCU callbacks from inside a
 * read section of reg->srcu. ksync_call_srcu() throttles a caller past the
 * domain's callback limit until the helper works the queue down, which
 * takes a grace period; a thread holding reg->mutex must never wait for one,
 * because a shrinker callback (inside a walk's read section) may be waiting
 * for reg->mutex (registering or freeing another shrinker), and one growth
 * queues two callbacks per group and node. call_srcu() never throttles a
 * caller inside a read section of the same domain (srcu.h). The section
 * only holds grace periods back while the writer works; nothing under
 * reg->mutex waits for a grace period.
 */

/* No free id below ids_cap: double ids_used (kept out of line: rare, and it needs registers). */
static __attribute__((noinline)) int id_grow_locked(struct ksync_shrinker_registry *reg)
{
	unsigned int id = reg->ids_cap, words = (unsigned int)KSYNC_BITS_TO_LONGS(reg->ids_cap);
	unsigned int cap = reg->ids_cap * 2;
	unsigned long *n;

	if (id >= (unsigned int)INT_MAX / 2)
		return -ENOSPC;
	n = KSYNC__ALLOC(realloc(reg->ids_used, KSYNC_BITS_TO_LONGS(cap) * sizeof(long)));
	if (!n)
		return -ENOMEM;
	memset(n + words, 0, (KSYNC_BITS_TO_LONGS(cap) - words) * sizeof(long));
	reg->ids_used = n;
	reg->ids_cap = cap;
	n[id / KSYNC_BITS_PER_LONG] |= 1UL << (id % KSYNC_BITS_PER_LONG);
	return (int)id;
}

/*
 * The lowest free id, marked used: at or past reg->nr_max, the caller grows
 * the maps and the table before it publishes a record there, or gives the id
 * back with ksync__shr_id_unreserve_locked().
 */
int ksync__shr_id_alloc_locked(struct ksync_shrinker_registry *reg)
{
	unsigned int words = (unsigned int)KSYNC_BITS_TO_LONGS(reg->ids_cap);

	/* Every word below ids_free_hint is full: a mount storm over 4000 ids scans one word, not 63. */
	for (unsigned int w = reg->ids_free_hint; w < words; w++) {
		unsigned long used = reg->ids_used[w];

		if (used != ~0UL) {
			unsigned int id = w * KSYNC_BITS_PER_LONG + (unsigned int)__builtin_ctzl(~used);

			reg->ids_free_hint = w;
			if (id >= (unsigned int)INT_MAX / 2)
				return -ENOSPC;
			reg->ids_used[w] = used | 1UL << (id % KSYNC_BITS_PER_LONG);
			return (int)id;
		}
	}
	reg->ids_free_hint = words;
	return id_grow_locked(reg);
}

/* Give back an id that ksync__shr_id_alloc_locked() returned and nothing was published at. */
static void id_clear_locked(struct ksync_shrinker_registry *reg, int id)
{
	unsigned int w = (unsigned int)id / KSYNC_BITS_PER_LONG;

	reg->ids_used[w] &= ~(1UL << (id % KSYNC_BITS_PER_LONG));
	if (w < reg->ids_free_hint)
		reg->ids_free_hint = w;
}

void ksync__shr_id_unreserve_locked(struct ksync_shrinker_registry *reg, int id)
{
	id_clear_locked(reg, id);
}
