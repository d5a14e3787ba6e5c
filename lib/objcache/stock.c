// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/stock.c - design B: the per-thread charge stock.
 *
 * The kernel's per-CPU obj_stock, per thread here: up to
 * ksync_objcache_stock_slots() slots (KSYNC_OBJCACHE_STOCK_MAX, the 2026
 * five), each a group (the key, compared by pointer), the group's charge
 * handle (the slot holds a reference) and the charges not yet handed to
 * ksync_objcg_charge(), and a reserve of handle references for objects,
 * taken 64 at a time with ksync_objcg_get_many() and given back by frees
 * that find the handle in the stock (every reference is a real one at all
 * times, so a free on another thread, whose stock lacks the handle, may
 * drop its object's reference at once). A charge to a group found in the
 * stock is a few additions and no atomic operation; a slot is flushed when
 * its pending bytes pass KSYNC_OBJCACHE_STOCK_BATCH either way, when it is
 * evicted (least recently used first) and when the stock is drained
 * (ksync_objcache_drain_thread(), thread exit). With one slot, a thread that
 * alternates between groups evicts at every charge: the kernel's -67.7 %.
 *
 * Dying groups (the kernel's 2025 rule): a slot is only filled for a group
 * that is ONLINE and whose handle points at it; a hit checks both again (the
 * caller keeps its group in memory, so reading its state is safe), and a
 * miss sweeps every slot, dropping those whose handle no longer points at
 * their group (moved at offline; a pointer compare, nothing dereferenced).
 * A stale slot costs no pin:
 * it holds the handle, not the group, and its pending charges flushed later
 * land on the parent the handle was moved to, where they belong.
 *
 * Only the owner thread touches its stock: no atomics but the setting's.
 */
#include "internal.h"

int ksync__oc_stock_slots = KSYNC_OBJCACHE_STOCK_MAX;

#define REFS_BATCH 64

/* Hand the pending charges to the handle. */
static void slot_flush(struct ksync__oc_stock_slot *s)
{
	if (s->bytes || s->objects)
		(void)ksync_objcg_charge(s->objcg, 0, s->objects, s->bytes);
	s->bytes = 0;
	s->objects = 0;
}

/* A reference for a new object, from the slot's reserve. */
static void slot_ref_out(struct ksync__oc_stock_slot *s)
{
	if (!s->refs) {
		ksync_objcg_get_many(s->objcg, REFS_BATCH); /* the slot holds one */
		s->refs = REFS_BATCH;
	}
	s->refs--;
}

/* A freed object's reference, back to the reserve. */
static void slot_ref_in(struct ksync__oc_stock_slot *s)
{
	if (++s->refs > 2 * REFS_BATCH) {
		ksync_objcg_put_many(s->objcg, s->refs - REFS_BATCH);
		s->refs = REFS_BATCH;
	}
}

static void slot_drop(struct ksync__oc_stock_slot *s)
{
	if (!s->objcg)
		return;
	slot_flush(s);
	ksync_objcg_put_many(s->objcg, s->refs + 1); /* the reserve and the slot's own */
	s->refs = 0;
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

/* Is slot @s stale? Its handle was moved off its group (offline). No read
 * section: the group pointer is compared, never dereferenced. A slot whose
 * group is DYING but not yet past its handles' move is caught by the hit
 * check of its own group, or by this one once the move is done. */
static bool slot_stale(struct ksync__oc_stock_slot *s)
{
	return ksync_objcg_group(s->objcg) != s->group;
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
			ksync__oc_yield(NULL, KSYNC_OBJCACHE_YP_STOCK_HIT);
			s->bytes += bytes;
			s->objects++;
			s->used = ++st->tick;
			slot_ref_out(s); /* the object's reference */
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
	victim->refs = 0;
	slot_ref_out(victim); /* the object's reference */
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
			slot_ref_in(s); /* the object's reference */
			if (s->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH)
				slot_flush(s);
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
