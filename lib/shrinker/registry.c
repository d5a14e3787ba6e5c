/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/registry.c - registries, the default registry, the yield hook.
 *
 * Theory of operation of the lockless shrinker registry
 * -----------------------------------------------------
 * Objects and who may touch them:
 *
 *  registry   one SRCU domain (reg->srcu), one writers' mutex (reg->mutex),
 *             an RCU list of shrinker records (reg->shrinkers), an RCU list
 *             of group infos (reg->infos), and an id table (reg->ids: id ->
 *             record, published through an RCU pointer, grown by copy +
 *             publish + call_srcu free of the old table).
 *  record     the registry's private record of one shrinker: list link, id,
 *             a reference count, a completion, the state, per-node
 *             nr_deferred of the global walk. The caller's struct
 *             ksync_shrinker is reached only through rec->shrinker and only
 *             while a reference is held.
 *  group info the registry's state in one memory group (<ksync/memgroup.h>:
 *             the registry is a client of its own set of groups): per node a
 *             sized map (<ksync/sized_map.h>) with one bit per shrinker id
 *             and a companion ksync_atomic_long_t, the group's nr_deferred
 *             of that id. All maps have reg->nr_max bits; a new high id grows
 *             all of them (shared units: a bit or a count written through an
 *             old generation is never lost).
 *
 * Readers (ksync_shrink_slab(), ksync_set_shrinker_bit(), the debug calls)
 * run inside ksync_srcu_read_lock(&reg->srcu) and never take reg->mutex.
 * Before calling into a shrinker they take a reference
 * (ksync_atomic_inc_not_zero(&rec->refcount): "try_get"), and drop it after.
 * Writers hold reg->mutex while they change the lists, the id table or the
 * maps, but never while they wait.
 *
 * Lifetime of a shrinker (records.c, register.c):
 *   prepare   record allocated; in one critical section a memcg-aware
 *             shrinker gets the lowest free id, its record is stored in the
 *             id table, and the record is linked into reg->shrinkers, all
 *             with refcount 0 (a walker that meets it fails try_get and
 *             moves on; a group walk clears the bit). s->reg, then
 *             s->record, are published with release (PUB). A record freed
 *             without being registered is unlinked, and freed after a grace
 *             period like any other.
 *   register  PREPARED -> REGISTERED (cmpxchg), then refcount := 1
 *             (release, R1): no critical section. A walker whose try_get
 *             succeeds read-acquires the count (fully ordered RMW, R2 pairs
 *             with R1) and so sees every field of the caller's struct.
 *   unregister  REGISTERED -> UNREGISTERING (cmpxchg: one winner); drop the
 *             initial reference; unless that put was the last one (no call
 *             running: nothing to wait for), wait for the completion that
 *             the thread dropping the count to zero fires. From then on
 *             try_get fails forever, so no callback starts again and none is
 *             running: the guarantee of ksync_unregister_shrinker(), and its
 *             ONLY wait.
 *             Then, under the mutex, unlink and clear the id slot; the
 *             record is freed by call_srcu (in batches) once no reader can
 *             hold it, or, when ksync_try_synchronize_srcu() completes a
 *             grace period at once (no other thread can be reading: it
 *             never waits), kept warm for the next registration
 *             (records.c). No synchronize_srcu() on this path (the 6.4
 *             regression). From a callback, the wait is published and one
 *             that would close a cycle of callbacks unregistering each other
 *             is refused (-EDEADLK), see register.c.
 *
 * Walks (walk.c): the global walk iterates reg->shrinkers; the group walk
 * finds set bits in the group's maps and looks the ids up in the id table.
 * A walk that notices a writer waiting for a grace period of reg->srcu
 * (ksync_srcu_gp_pending()) leaves and re-enters its read section: with a
 * reference held (global walk) the record stays on the list, because
 * unlinking waits for the count; the group walk counts itself in the group
 * info's ->parked across the gap (P1/P2) and re-fetches the maps.
 *
 * Groups (group_info.c): a group walk takes no reference (no atomic on the
 * group's cache line); it checks ->dead inside each read section. The
 * offline hook sets ->dead, unlinks the info, waits for one grace period
 * (every walk that may have missed ->dead is done) and for the walks that
 * were between two sections (->parked), then moves the nr_deferred counters
 * to the parent (deferred work is never lost) and frees the maps by
 * call_srcu. This is the one grace-period wait of the registry, and it is
 * not on the register/unregister path.
 *
 * nr_deferred ledger: work sits in a group counter (group walk), in the
 * record's per-node counter (global walk), in reg->orphaned (work of a
 * destroyed top-level group) or in reg->retired (global counters of an
 * unregistered shrinker). Growth moves nothing (shared units), reparenting
 * moves counts with xchg + add, unregister leaves group counters in place:
 * an id reused later inherits them, as in the kernel.
 *
 * Barrier pairs:
 *   R1/R2  register publishes the refcount; try_get acquires it.
 *   C1/C2  completion: the last put releases, the waiter acquires.
 *   PUB    prepare publishes s->reg and s->record with release; the debug
 *          calls and unregister load them with acquire.
 *   D1     group offline: ->dead, then a grace period; walkers read ->dead
 *          inside their read section.
 *   P1/P2  a group walk leaving its section counts itself in ->parked inside
 *          it (ordered before offline's read by the grace period), and
 *          withdraws, fully ordered, in the next; offline reads ->parked
 *          with acquire after its grace period.
 *   G1     growth publishes a group's summary map before its bit map.
 *   S2/W2  set_shrinker_bit sets the bit, then tests the summary bit; the
 *          walk clears a summary bit, then looks at the unit again.
 *   S1/W1  set_shrinker_bit's full barrier between "objects are visible" and
 *          the bit, against the group walk's barrier between clearing the
 *          bit on SHRINK_EMPTY and counting again.
 *   S1/L1  the same barrier of set_shrinker_bit also orders the shrinker's
 *          publication in the id table before its bit; the group walk reads
 *          a found bit before looking its id up.
 *   Y1/Y2  the yield hook's argument, then the hook.
 *   N1/N2  a name kept as its format: the first reader formats it under
 *          the mutex and clears the flag with release; readers that see the
 *          flag clear (acquire) read the finished name (records.c).
 *   Q      not a barrier: writers holding reg->mutex queue SRCU callbacks
 *          from inside a read section, so call_srcu's throttle never makes
 *          them wait for a grace period (see ids.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------------ */
/* Registries                                                               */

static void registry_free(struct ksync_shrinker_registry *reg)
{
	if (reg->groups) {
		if (reg->group_slot >= 0)
			ksync_memgroup_client_unregister(reg->groups, reg->group_slot);
		ksync_memgroup_set_destroy(reg->groups);
	}
	ksync__shr_shrinker_ids_destroy(reg);
	ksync_cleanup_srcu_struct(&reg->srcu);
	free(reg);
}

struct ksync_shrinker_registry *ksync__shrinker_registry_create(KSYNC_SITE_ARGS, int nr_nodes)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_shrinker_registry *reg;

	if (MISUSE(at, nr_nodes < 1 || nr_nodes > KSYNC_SHRINKER_MAX_NODES,
		       "ksync_shrinker_registry_create: bad nr_nodes"))
		return NULL;
	/* The layout is cache-line aligned: so must the memory be. */
	reg = KSYNC__ALLOC(aligned_alloc(KSYNC_CACHELINE_SIZE,
			    ksync_round_up(sizeof(*reg), (size_t)KSYNC_CACHELINE_SIZE)));
	if (!reg)
		return NULL;
	memset(reg, 0, sizeof(*reg));
	if (ksync_init_srcu_struct(&reg->srcu) != 0) {
		free(reg);
		return NULL;
	}
	ksync_atomic_set(&reg->mutex, 0);
	ksync_init_list_head(&reg->shrinkers);
	ksync_init_list_head(&reg->infos);
	ksync_init_list_head(&reg->dying_infos);
	reg->nr_nodes = nr_nodes;
	reg->record_size = sizeof(struct ksync_shrinker_record) +
			   (size_t)nr_nodes * sizeof(ksync_atomic_long_t);
	reg->group_slot = -1;
	if (ksync__shr_shrinker_ids_init(reg) != 0)
		goto fail;
	reg->groups = ksync_memgroup_set_create_nodes(nr_nodes);
	if (!reg->groups)
		goto fail;
	reg->group_slot = ksync_memgroup_client_register(reg->groups, &ksync__shrinker_group_client, reg);
	if (reg->group_slot < 0)
		goto fail;
	return reg;
fail:
	registry_free(reg);
	return NULL;
}

int ksync__shrinker_registry_destroy(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!reg)
		return -EINVAL;
	reg_lock(reg);
	bool busy = reg->nr_records_alive != 0;
	reg_unlock(reg);
	busy |= ksync_memgroup_nr_groups(reg->groups) != 0;
	if (MISUSE(at, busy, "ksync_shrinker_registry_destroy: shrinkers or groups remain; leaking the registry"))
		return -EBUSY;
	ksync__shr_records_flush_locked_batch(reg);
	ksync_srcu_barrier(&reg->srcu);
	ksync__shr_records_destroy(reg);
	registry_free(reg);
	return 0;
}

/*
 * The default registry is created on first use, under default_lock. Not a
 * pthread_once(): a creation that runs out of memory must not stick, the
 * next call that needs the registry tries again (docs/errors.md: out of
 * memory returns NULL / -ENOMEM and leaves everything as it was).
 */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_shrinker_registry *default_reg;
static int default_nr_nodes = 1;
static int default_created;

struct ksync_shrinker_registry *ksync_shrinker_registry_default(void)
{
	/* DR2: pairs with DR1 below: a non-NULL pointer is initialised. */
	struct ksync_shrinker_registry *r = ksync_smp_load_acquire(&default_reg);

	if (ksync_likely(r != NULL))
		return r;
	ksync__mutex_lock(&default_lock);
	r = default_reg;
	if (!r) {
		r = ksync_shrinker_registry_create(KSYNC_READ_ONCE(default_nr_nodes));
		if (r) {
			/* DR1: publishes the initialised registry; pairs with DR2 above. */
			ksync_smp_store_release(&default_reg, r);
			KSYNC_WRITE_ONCE(default_created, 1);
		}
	}
	pthread_mutex_unlock(&default_lock);
	return r; /* NULL: out of memory, and the next call tries again */
}

int ksync__shrinker_set_default_nr_nodes(KSYNC_SITE_ARGS, int nr_nodes)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, nr_nodes < 1 || nr_nodes > KSYNC_SHRINKER_MAX_NODES,
		       "ksync_shrinker_set_default_nr_nodes: bad nr_nodes"))
		return -EINVAL;
	if (KSYNC_READ_ONCE(default_created))
		return -EBUSY;
	KSYNC_WRITE_ONCE(default_nr_nodes, nr_nodes);
	return 0;
}

struct ksync_shrinker_registry *ksync__shr_reg_or_default(struct ksync_shrinker_registry *reg)
{
	return reg ? reg : ksync_shrinker_registry_default();
}

int ksync_shrinker_registry_nr_nodes(struct ksync_shrinker_registry *reg)
{
	reg = ksync__shr_reg_or_default(reg);
	return reg ? reg->nr_nodes : 0;
}

int ksync_shrinker_nr_max(struct ksync_shrinker_registry *reg)
{
	reg = ksync__shr_reg_or_default(reg);
	return reg ? (int)KSYNC_READ_ONCE(reg->nr_max) : 0;
}

struct ksync_memgroup_set *ksync_shrinker_registry_groups(struct ksync_shrinker_registry *reg)
{
	reg = ksync__shr_reg_or_default(reg);
	return reg ? reg->groups : NULL;
}

struct ksync_srcu_struct *ksync_shrinker_registry_srcu(struct ksync_shrinker_registry *reg)
{
	reg = ksync__shr_reg_or_default(reg);
	return reg ? &reg->srcu : NULL;
}

/* ------------------------------------------------------------------------ */
/* Groups of <ksync/shrinker.h>: the registry's set, through memgroup.h     */

struct ksync_memgroup *ksync__shrinker_group_create(KSYNC_SITE_ARGS, struct ksync_shrinker_registry *reg,
						   struct ksync_memgroup *parent)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (parent) {
		if (MISUSE(at, !group_info(parent), "ksync_shrinker_group_create: bad parent"))
			return NULL;
		return ksync__memgroup_create(at.file, at.line, NULL, parent);
	}
	reg = ksync__shr_reg_or_default(reg);
	return reg ? ksync__memgroup_create(at.file, at.line, reg->groups, NULL) : NULL;
}

int ksync__shrinker_group_destroy(KSYNC_SITE_ARGS, struct ksync_memgroup *g)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, !g || !group_info(g), "ksync_shrinker_group_destroy: not a group of a registry"))
		return -EINVAL;
	/* The one door: the registry's may_offline refuses from a callback (-EDEADLK). */
	return ksync__memgroup_offline(at.file, at.line, g);
}

int ksync_shrinker_group_id(const struct ksync_memgroup *g)
{
	return ksync_memgroup_id(g);
}
