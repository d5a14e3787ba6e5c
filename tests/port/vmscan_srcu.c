/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port of the lockless shrinker of the "make slab shrink lockless" series
 * (v3, mm/vmscan.c; ../shared/reference/lockless-shrink-v3-series-and-review.txt)
 * onto <ksync/kernel.h>: kernel spellings throughout, its own struct shrinker,
 * struct shrink_control, struct mem_cgroup and struct shrinker_info (which
 * ksync must therefore not define in <ksync/kernel.h>), and shims only for
 * what userspace lacks (an rwsem as a mutex, idr as an array, kvmalloc).
 *
 * Written from the series' description and diffs: register with
 * list_add_tail_rcu(), unregister with list_del_rcu() + a generation bump +
 * synchronize_srcu(), shrink_slab() and shrink_slab_memcg() walking the
 * per-memcg maps with for_each_set_bit_from() and yielding to writers on a
 * generation change, expand_shrinker_info() publishing copies with
 * rcu_assign_pointer() and freeing the old ones with call_srcu().
 */
#include <ksync/kernel.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmscan_srcu.h"

/* ------------------------------------------------------------------------ */
/* Shims for what userspace lacks                                           */

struct rw_semaphore {
	pthread_mutex_t m;
};
#define DECLARE_RWSEM(name) struct rw_semaphore name = { PTHREAD_MUTEX_INITIALIZER }
static void down_write(struct rw_semaphore *s) { pthread_mutex_lock(&s->m); }
static void up_write(struct rw_semaphore *s) { pthread_mutex_unlock(&s->m); }
#define lockdep_is_held(x) 1
#define kvzalloc(size, gfp) calloc(1, size)
#define kvfree(p) free(p)
#define GFP_KERNEL 0

/* idr: ids are small; an array under shrinker_rwsem. */
#define IDR_MAX 4096
static struct shrinker *idr_slot[IDR_MAX]; /* written under shrinker_rwsem, read under SRCU */
static int idr_alloc_lowest(struct shrinker *s)
{
	for (int id = 0; id < IDR_MAX; id++)
		if (!idr_slot[id]) {
			smp_store_release(&idr_slot[id], s); /* publishes s, as idr_alloc does */
			return id;
		}
	return -ENOSPC;
}
#define idr_find(id) smp_load_acquire(&idr_slot[id])
#define idr_remove(id) WRITE_ONCE(idr_slot[id], NULL)

/* ------------------------------------------------------------------------ */
/* mm/vmscan.c, lockless                                                    */

static LIST_HEAD(shrinker_list);
static DECLARE_RWSEM(shrinker_rwsem);
DEFINE_SRCU(shrinker_srcu);
static atomic_t shrinker_srcu_generation = ATOMIC_INIT(0);
static int shrinker_nr_max;

/* All memcgs, for expand_shrinker_info() (the kernel iterates the hierarchy). */
static LIST_HEAD(memcg_list);

static struct shrinker_info *shrinker_info_protected(struct mem_cgroup *memcg, int nid)
{
	return srcu_dereference_check(memcg->nodeinfo[nid].shrinker_info, &shrinker_srcu,
				      lockdep_is_held(&shrinker_rwsem));
}

static struct shrinker_info *shrinker_info_srcu(struct mem_cgroup *memcg, int nid)
{
	return srcu_dereference(memcg->nodeinfo[nid].shrinker_info, &shrinker_srcu);
}

static void free_shrinker_info_rcu(struct rcu_head *head)
{
	kvfree(container_of(head, struct shrinker_info, rcu));
}

static struct shrinker_info *alloc_info(int nr_max)
{
	size_t map_size = BITS_TO_LONGS(nr_max) * sizeof(unsigned long);
	size_t defer_size = (size_t)nr_max * sizeof(atomic_long_t);
	struct shrinker_info *info = kvzalloc(sizeof(*info) + defer_size + map_size, GFP_KERNEL);

	if (!info)
		return NULL;
	info->nr_deferred = (atomic_long_t *)(info + 1);
	info->map = (unsigned long *)(info->nr_deferred + nr_max);
	info->map_nr_max = nr_max;
	return info;
}

static int expand_one_shrinker_info(struct mem_cgroup *memcg, int new_nr_max)
{
	for (int nid = 0; nid < VMS_NR_NODES; nid++) {
		struct shrinker_info *old = shrinker_info_protected(memcg, nid), *new;

		if (new_nr_max <= old->map_nr_max)
			continue;
		new = alloc_info(new_nr_max);
		if (!new)
			return -ENOMEM;
		/* Copies of the map and the counters: the series' v3, before shared units. */
		memcpy(new->nr_deferred, old->nr_deferred, (size_t)old->map_nr_max * sizeof(atomic_long_t));
		memcpy(new->map, old->map, BITS_TO_LONGS(old->map_nr_max) * sizeof(unsigned long));
		rcu_assign_pointer(memcg->nodeinfo[nid].shrinker_info, new);
		call_srcu(&shrinker_srcu, &old->rcu, free_shrinker_info_rcu);
	}
	return 0;
}

static int expand_shrinker_info(int new_id)
{
	int new_nr_max = round_up(new_id + 1, BITS_PER_LONG), ret = 0;
	struct mem_cgroup *memcg;

	list_for_each_entry(memcg, &memcg_list, node) {
		ret = expand_one_shrinker_info(memcg, new_nr_max);
		if (ret)
			return ret;
	}
	shrinker_nr_max = new_nr_max;
	return 0;
}

void set_shrinker_bit(struct mem_cgroup *memcg, int nid, int shrinker_id)
{
	if (shrinker_id >= 0 && memcg) {
		struct shrinker_info *info;
		int srcu_idx = srcu_read_lock(&shrinker_srcu);

		info = shrinker_info_srcu(memcg, nid);
		if (!WARN_ON_ONCE(shrinker_id >= info->map_nr_max)) {
			/* Pairs with smp mb in shrink_slab() */
			smp_mb__before_atomic();
			set_bit(shrinker_id, info->map);
		}
		srcu_read_unlock(&shrinker_srcu, srcu_idx);
	}
}

static long xchg_nr_deferred(int nid, struct shrinker *shrinker, struct shrink_control *sc)
{
	if (sc->memcg && (READ_ONCE(shrinker->flags) & SHRINKER_MEMCG_AWARE)) {
		struct shrinker_info *info = shrinker_info_srcu(sc->memcg, nid);
		return atomic_long_xchg(&info->nr_deferred[shrinker->id], 0);
	}
	return atomic_long_xchg(&shrinker->nr_deferred[nid], 0);
}

static long add_nr_deferred(long nr, int nid, struct shrinker *shrinker, struct shrink_control *sc)
{
	if (sc->memcg && (READ_ONCE(shrinker->flags) & SHRINKER_MEMCG_AWARE)) {
		struct shrinker_info *info = shrinker_info_srcu(sc->memcg, nid);
		return atomic_long_add_return(nr, &info->nr_deferred[shrinker->id]);
	}
	return atomic_long_add_return(nr, &shrinker->nr_deferred[nid]);
}

static unsigned long do_shrink_slab(struct shrink_control *sc, struct shrinker *shrinker,
				    int priority)
{
	unsigned long freeable = shrinker->count_objects(shrinker, sc), freed = 0, scanned = 0;
	long nr, delta, total_scan, next;
	int nid = sc->nid;

	if (freeable == 0 || freeable == SHRINK_EMPTY)
		return freeable;
	nr = xchg_nr_deferred(nid, shrinker, sc);
	delta = (long)((freeable >> priority) * 4 / (unsigned long)shrinker->seeks);
	total_scan = min_t(long, (nr >> priority) + delta, (long)(2 * freeable));
	while (total_scan >= SHRINK_BATCH || total_scan >= (long)freeable) {
		unsigned long ret;

		sc->nr_to_scan = min_t(unsigned long, SHRINK_BATCH, (unsigned long)total_scan);
		sc->nr_scanned = sc->nr_to_scan;
		ret = shrinker->scan_objects(shrinker, sc);
		if (ret == SHRINK_STOP)
			break;
		freed += ret;
		total_scan -= (long)sc->nr_scanned;
		scanned += sc->nr_scanned;
	}
	next = nr + delta - (long)scanned;
	if (next > 0)
		add_nr_deferred(min_t(long, next, (long)(2 * freeable)), nid, shrinker, sc);
	return freed;
}

static unsigned long shrink_slab_memcg(int nid, struct mem_cgroup *memcg, int priority)
{
	unsigned long ret, freed = 0;
	struct shrinker_info *info;
	int srcu_idx, generation, i = 0;

again:
	srcu_idx = srcu_read_lock(&shrinker_srcu);
	info = shrinker_info_srcu(memcg, nid);
	if (unlikely(!info))
		goto unlock;
	generation = atomic_read(&shrinker_srcu_generation);
	for_each_set_bit_from(i, info->map, info->map_nr_max) {
		struct shrink_control sc = { .nid = nid, .memcg = memcg };
		struct shrinker *shrinker = idr_find(i);

		/* Acquire: the fields register_shrinker() set before the flag (the kernel reads it plainly). */
		if (unlikely(!shrinker || !(smp_load_acquire(&shrinker->flags) & SHRINKER_REGISTERED))) {
			if (!shrinker)
				clear_bit(i, info->map);
			continue;
		}
		ret = do_shrink_slab(&sc, shrinker, priority);
		if (ret == SHRINK_EMPTY) {
			clear_bit(i, info->map);
			/* Pairs with the barrier in set_shrinker_bit(). */
			smp_mb__after_atomic();
			ret = do_shrink_slab(&sc, shrinker, priority);
			if (ret == SHRINK_EMPTY)
				ret = 0;
			else
				set_shrinker_bit(memcg, nid, i);
		}
		freed += ret;
		if (atomic_read(&shrinker_srcu_generation) != generation) {
			srcu_read_unlock(&shrinker_srcu, srcu_idx);
			i++;
			goto again;
		}
	}
unlock:
	srcu_read_unlock(&shrinker_srcu, srcu_idx);
	return freed;
}

unsigned long shrink_slab(int nid, struct mem_cgroup *memcg, int priority)
{
	unsigned long ret, freed = 0;
	struct shrinker *shrinker;
	int srcu_idx, generation;

	if (memcg)
		return shrink_slab_memcg(nid, memcg, priority);
	srcu_idx = srcu_read_lock(&shrinker_srcu);
	generation = atomic_read(&shrinker_srcu_generation);
	list_for_each_entry_srcu(shrinker, &shrinker_list, list, srcu_read_lock_held(&shrinker_srcu)) {
		struct shrink_control sc = { .nid = nid, .memcg = memcg };

		ret = do_shrink_slab(&sc, shrinker, priority);
		if (ret == SHRINK_EMPTY)
			ret = 0;
		freed += ret;
		if (atomic_read(&shrinker_srcu_generation) != generation) {
			freed = freed ? freed : 1;
			break;
		}
	}
	srcu_read_unlock(&shrinker_srcu, srcu_idx);
	return freed;
}

int register_shrinker(struct shrinker *shrinker)
{
	shrinker->nr_deferred = kvzalloc(VMS_NR_NODES * sizeof(atomic_long_t), GFP_KERNEL);
	if (!shrinker->nr_deferred)
		return -ENOMEM;
	shrinker->id = -1;
	down_write(&shrinker_rwsem);
	if (shrinker->flags & SHRINKER_MEMCG_AWARE) {
		int id = idr_alloc_lowest(shrinker);

		if (id >= shrinker_nr_max && expand_shrinker_info(id)) {
			idr_remove(id);
			up_write(&shrinker_rwsem);
			kvfree(shrinker->nr_deferred);
			return -ENOMEM;
		}
		shrinker->id = id;
	}
	list_add_tail_rcu(&shrinker->list, &shrinker_list);
	smp_store_release(&shrinker->flags, shrinker->flags | SHRINKER_REGISTERED);
	up_write(&shrinker_rwsem);
	return 0;
}

void unregister_shrinker(struct shrinker *shrinker)
{
	down_write(&shrinker_rwsem);
	list_del_rcu(&shrinker->list);
	WRITE_ONCE(shrinker->flags, shrinker->flags & ~SHRINKER_REGISTERED);
	if (shrinker->id >= 0)
		idr_remove(shrinker->id);
	up_write(&shrinker_rwsem);
	atomic_inc(&shrinker_srcu_generation);
	synchronize_srcu(&shrinker_srcu);
	kvfree(shrinker->nr_deferred);
	shrinker->nr_deferred = NULL;
}

int memcg_online(struct mem_cgroup *memcg)
{
	int ret = 0;

	down_write(&shrinker_rwsem);
	for (int nid = 0; nid < VMS_NR_NODES; nid++) {
		struct shrinker_info *info = alloc_info(shrinker_nr_max ? shrinker_nr_max : BITS_PER_LONG);

		if (!info) {
			ret = -ENOMEM;
			break;
		}
		RCU_INIT_POINTER(memcg->nodeinfo[nid].shrinker_info, info);
	}
	if (!ret)
		list_add_tail(&memcg->node, &memcg_list);
	up_write(&shrinker_rwsem);
	return ret;
}

void memcg_offline(struct mem_cgroup *memcg)
{
	down_write(&shrinker_rwsem);
	list_del(&memcg->node);
	up_write(&shrinker_rwsem);
	synchronize_srcu(&shrinker_srcu);
	for (int nid = 0; nid < VMS_NR_NODES; nid++)
		kvfree(rcu_access_pointer(memcg->nodeinfo[nid].shrinker_info));
}

void vmscan_barrier(void)
{
	srcu_barrier(&shrinker_srcu);
}
