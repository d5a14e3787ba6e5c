/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/records.c - shrinker records: allocation, recycling, frees.
 *
 * A released record may still be held by a reader that found it in the list
 * or the id table, so it is freed by call_srcu(). Released records are
 * handed over in batches of FREE_BATCH: one callback (and at most one
 * wake-up of the SRCU helper) per batch instead of per unregister; at most
 * FREE_BATCH - 1 records wait for a later release, for
 * ksync_synchronize_shrinkers() or for ksync_shrinker_registry_destroy().
 * Records that went through their grace period are kept (up to
 * RECORD_CACHE_MAX) for the next registration: mount/umount storms then
 * neither hit malloc's slow paths nor fault in pages that free() trimmed.
 *
 * The cache has its own lock, never reg->mutex: the SRCU callback that fills
 * it must never wait for reg->mutex, because writers holding the mutex call
 * ksync_call_srcu(), which may wait until that callback's helper thread has
 * worked the queue down (a deadlock). cache_lock is never held across a call
 * into SRCU.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define RECORD_CACHE_MAX 4096
#define FREE_BATCH 256

/* call_srcu callback: recycle or free a batch of records chained through free_next. */
static void free_rcu_record_batch(struct ksync_rcu_head *head)
{
	struct ksync_shrinker_record *rec = ksync_container_of(head, struct ksync_shrinker_record, rcu);
	struct ksync_shrinker_registry *reg = rec->reg;

	/* No reader can hold these any more: keep some for reuse. */
	ksync__mutex_lock(&reg->cache_lock);
	while (rec && reg->record_cache_len < RECORD_CACHE_MAX) {
		struct ksync_shrinker_record *next = rec->free_next;

		rec->magic = 0;
		rec->free_next = reg->record_cache;
		reg->record_cache = rec;
		reg->record_cache_len++;
		rec = next;
	}
	pthread_mutex_unlock(&reg->cache_lock);
	while (rec) {
		struct ksync_shrinker_record *next = rec->free_next;

		rec->magic = 0;
		free(rec);
		rec = next;
	}
}

/* Detach the pending batch (under reg->mutex); queue it with queue_batch(). */
static struct ksync_shrinker_record *take_batch_locked(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *batch = reg->free_batch;

	reg->free_batch = NULL;
	reg->free_batch_len = 0;
	return batch;
}

static void queue_batch(struct ksync_shrinker_registry *reg, struct ksync_shrinker_record *batch)
{
	if (batch)
		ksync_call_srcu(&reg->srcu, &batch->rcu, free_rcu_record_batch);
}

/* Queue the pending batch now (synchronize, registry destroy). */
void records_flush_locked_batch(struct ksync_shrinker_registry *reg)
{
	ksync__mutex_lock(&reg->mutex);
	struct ksync_shrinker_record *batch = take_batch_locked(reg);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
}

/* After the registry's last grace period: free the cache. */
void records_destroy(struct ksync_shrinker_registry *reg)
{
	while (reg->record_cache) {
		struct ksync_shrinker_record *r = reg->record_cache;

		reg->record_cache = r->free_next;
		free(r);
	}
}

/* A zeroed record, from the cache or malloc. */
struct ksync_shrinker_record *record_alloc(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_record *rec;

	ksync__mutex_lock(&reg->cache_lock);
	rec = reg->record_cache;
	if (rec) {
		reg->record_cache = rec->free_next;
		reg->record_cache_len--;
	}
	pthread_mutex_unlock(&reg->cache_lock);
	if (rec)
		memset(rec, 0, reg->record_size);
	else
		rec = KSYNC__ALLOC(calloc(1, reg->record_size));
	return rec;
}

/* Move @rec's global counters to reg->retired (under reg->mutex). */
void retire_deferred_locked(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;
	long retired = 0;

	for (int nid = 0; nid < reg->nr_nodes; nid++)
		retired += ksync_atomic_long_xchg(&rec->nr_deferred[nid], 0);
	if (retired)
		ksync_atomic_long_add(retired, &reg->retired);
}

/* Retire @rec's id and global counters and queue its memory (mutex not held). */
void record_release(struct ksync_shrinker_record *rec)
{
	struct ksync_shrinker_registry *reg = rec->reg;
	struct ksync_shrinker_record *batch = NULL;

	ksync__mutex_lock(&reg->mutex);
	if (rec->id >= 0)
		id_free_locked(reg, rec->id);
	/* Unregistered records were retired at unlink; prepared ones are here. */
	retire_deferred_locked(rec);
	reg->nr_records_alive--;
	yield_point(KSYNC_SHRINKER_YP_BEFORE_FREE);
	rec->free_next = reg->free_batch;
	reg->free_batch = rec;
	if (++reg->free_batch_len >= FREE_BATCH)
		batch = take_batch_locked(reg);
	pthread_mutex_unlock(&reg->mutex);
	queue_batch(reg, batch);
}

/*
 * The record of @s if @s is one of ours, else NULL (reported by the caller).
 * For calls on the caller's own @s that no other thread races with
 * (register, free of an allocated shrinker); the debug calls and
 * ksync_unregister_shrinker() look the record up inside a read section.
 */
struct ksync_shrinker_record *record_of(const struct ksync_shrinker *s)
{
	struct ksync_shrinker_record *rec = s ? ksync_smp_load_acquire(&s->record) : NULL; /* PUB */

	if (!rec || rec->magic != RECORD_MAGIC || rec->shrinker != s)
		return NULL;
	return rec;
}
