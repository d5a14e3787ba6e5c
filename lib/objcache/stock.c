// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/stock.c - design B: the per-thread charge stock.
 *
 * The kernel's per-CPU obj_stock, per thread here: up to
 * ksync_objcache_stock_slots() slots (KSYNC_OBJCACHE_STOCK_MAX, the 2026
 * five), each a group (the key, compared by pointer), the group's charge
 * handle (the slot holds a reference) and the charges not yet handed to
 * ksync_objcg_charge(). A charge to a group found in the stock is two
 * additions and one handle reference for the object; a slot is flushed when
 * its pending bytes pass KSYNC_OBJCACHE_STOCK_BATCH either way, when it is
 * evicted (least recently used first) and when the stock is drained
 * (ksync_objcache_drain_thread(), thread exit). With one slot, a thread that
 * alternates between groups evicts at every charge: the kernel's -67.7 %.
 *
 * Dying groups (the kernel's 2025 rule): a slot is only filled for a group
 * that is ONLINE and whose handle points at it; a hit checks both again (the
 * caller keeps its group in memory, so reading its state is safe), and a
 * miss sweeps every slot, dropping those whose handle no longer points at
 * their group or whose group left ONLINE (read inside a read section of the
 * group's set, where a group its handle still points at stays in memory:
 * handles are moved before a group is released). A stale slot costs no pin:
 * it holds the handle, not the group, and its pending charges flushed later
 * land on the parent the handle was moved to, where they belong.
 *
 * Only the owner thread touches its stock: no atomics but the setting's.
 */
#include "internal.h"
#include "seams.h"

int ksync__oc_stock_slots = KSYNC_OBJCACHE_STOCK_MAX;

static void slot_flush(struct ksync__oc_stock_slot *s)
{
	if (s->bytes || s->objects)
		(void)ksync_objcg_charge(s->objcg, 0, s->objects, s->bytes);
	s->bytes = 0;
	s->objects = 0;
}

static void slot_drop(struct ksync__oc_stock_slot *s)
{
	if (!s->objcg)
		return;
	slot_flush(s);
	ksync_objcg_put(s->objcg);
	s->objcg = NULL;
	s->group = NULL;
}

static int nr_slots(struct ksync__oc_stock *st)
{
	int nr = __atomic_load_n(&ksync__oc_stock_slots, __ATOMIC_RELAXED);

	/* The setting shrank: drop the slots beyond it. */
	for (int i = nr; i < st->nr; i++)
		slot_drop(&st->slot[i]);
	st->nr = nr;
	return nr;
}

/* Is slot @s stale? Its group is read inside a read section of its set. */
static bool slot_stale(struct ksync__oc_stock_slot *s)
{
	struct ksync_memgroup *now = ksync_objcg_group(s->objcg);
	struct ksync_srcu_struct *ssp;
	bool stale;
	int idx;

	if (now != s->group)
		return true;
	ssp = ksync_memgroup_set_srcu(ksync_memgroup_set_of(now));
	idx = ksync_srcu_read_lock(ssp);
	/* Still pointed at inside the section: in memory until its end. */
	stale = ksync_objcg_group(s->objcg) != s->group || ksync_memgroup_state(s->group) != KSYNC_MEMGROUP_ONLINE;
	ksync_srcu_read_unlock(ssp, idx);
	return stale;
}

struct ksync_objcg *ksync__oc_stock_charge(struct ksync__oc_stock *st, struct ksync_memgroup *g, long bytes)
{
	struct ksync__oc_stock_slot *s, *victim = NULL;
	struct ksync_objcg *objcg;
	int nr;

	if (!st)
		goto direct;
	nr = nr_slots(st);
	for (int i = 0; i < nr; i++) {
		s = &st->slot[i];
		if (s->group != g || !s->objcg)
			continue;
		/* The caller keeps @g in memory: its state is safe to read. */
		if (ksync_objcg_group(s->objcg) == g && ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE) {
			objcache_yield_point(KSYNC_OBJCACHE_YP_STOCK_HIT);
			s->bytes += bytes;
			s->objects++;
			s->used = ++st->tick;
			ksync_objcg_get(s->objcg); /* the object's reference */
			if (s->bytes >= KSYNC_OBJCACHE_STOCK_BATCH)
				slot_flush(s);
			return s->objcg;
		}
		slot_drop(s);
		break;
	}
	/* A miss: sweep the stale slots, choose a victim. */
	for (int i = 0; i < nr; i++) {
		s = &st->slot[i];
		if (s->objcg && !KSYNC_PLANT(OBJCACHE_STOCK_KEEPS_DYING) && slot_stale(s))
			slot_drop(s);
	}
	for (int i = 0; i < nr; i++) {
		s = &st->slot[i];
		if (!s->objcg) {
			victim = s;
			break;
		}
		if (!victim || s->used < victim->used)
			victim = s;
	}
	if (ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
		goto direct;
	objcg = ksync_memgroup_get_objcg(g);
	if (!objcg)
		return NULL;
	if (ksync_objcg_group(objcg) != g) {
		/* Went offline meanwhile: never cache a dying group's handle. */
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
		return objcg;
	}
	slot_drop(victim);
	victim->group = g;
	victim->objcg = objcg; /* the slot's reference */
	victim->bytes = bytes;
	victim->objects = 1;
	victim->used = ++st->tick;
	ksync_objcg_get(objcg); /* the object's reference */
	if (victim->bytes >= KSYNC_OBJCACHE_STOCK_BATCH)
		slot_flush(victim);
	return objcg;
direct:
	objcg = ksync_memgroup_get_objcg(g); /* the nearest online ancestor's, or NULL: the root */
	if (objcg)
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
	return objcg;
}

void ksync__oc_stock_uncharge(struct ksync__oc_stock *st, struct ksync_objcg *objcg, long bytes)
{
	if (st) {
		for (int i = 0; i < st->nr; i++) {
			struct ksync__oc_stock_slot *s = &st->slot[i];

			if (s->objcg != objcg)
				continue;
			s->bytes -= bytes;
			s->objects--;
			if (s->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH)
				slot_flush(s);
			ksync_objcg_put(objcg); /* the object's; the slot's keeps it */
			return;
		}
	}
	(void)ksync_objcg_charge(objcg, 0, -1, -bytes);
	ksync_objcg_put(objcg);
}

void ksync__oc_stock_drain(struct ksync__oc_stock *st)
{
	for (int i = 0; i < KSYNC_OBJCACHE_STOCK_MAX; i++)
		slot_drop(&st->slot[i]);
}
