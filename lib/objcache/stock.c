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
 * its pending bytes pass KSYNC_OBJCACHE_STOCK_BATCH either way and when the
 * stock is drained (ksync_objcache_drain_thread(), thread exit). With one
 * slot, a thread that alternates between groups evicts at every charge: the
 * kernel's -67.7 %.
 *
 * Eviction (more groups than slots): the least recently used slot goes, and
 * a new slot enters as the least recently used one but once in
 * KSYNC__OC_BIP fills (bimodal insertion): plain LRU missed at every charge
 * of a thread cycling among 8 groups with 5 slots (each miss evicted the
 * group needed soonest), this keeps 4 of them. The victim is parked, not
 * dropped (below): its references and pending charges wait with its handle
 * for the next fill of that handle. A miss finds the group's handle with
 * ksync_memgroup_objcg_peek() (no reference, no atomic); if it is parked,
 * the parked references become the slot's and the victim takes the entry:
 * no atomic at all, where the kernel's per-CPU references took none either.
 *
 * Dying groups (the kernel's 2025 rule): a slot is only filled for a group
 * that is ONLINE and whose handle points at it; a hit checks both again (the
 * caller keeps its group in memory, so reading its state is safe), and a
 * miss after an offline (ksync_objcg_generation() changed) sweeps every slot
 * and parked entry, dropping those whose handle no longer points at their
 * group (moved at offline; a pointer compare, nothing dereferenced).
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

/* xorshift32: the evictions' draws, per thread. */
static unsigned stock_random(struct ksync__oc_stock *st)
{
	unsigned x = st->rnd ? st->rnd : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	st->rnd = x;
	return x;
}

/* ---- parked reserves ----
 *
 * An evicted slot's handle references (its own and its reserve) and its
 * pending charges are not handed back at once: they are parked with the
 * handle, in a small per-thread table keyed by the handle. A later fill of
 * a slot whose lookup (ksync_memgroup_objcg_peek(), or ksync_memgroup_get_objcg()
 * for a handle not parked; both see online groups only) finds a parked handle takes them back,
 * and a free whose handle is parked returns its reference and uncharges
 * there: a thread cycling among more groups than slots no longer puts 65
 * references, flushes and takes 64 again at every miss, only the lookup's.
 * A parked entry charges nothing new: it is no slot (ksync_objcache_thread_stock()
 * does not list it) and every charge goes through a slot. Parked entries
 * are dropped (flushed, references put) when the table is full (a random
 * one), when a sweep after an offline finds their handle moved off its
 * group, and at drain and thread exit; the table is bounded.
 */
static void park_drop(struct ksync__oc_parked *p)
{
	if (!p->objcg)
		return;
	if (p->bytes || p->objects)
		(void)ksync_objcg_charge(p->objcg, 0, p->objects, p->bytes);
	ksync_objcg_put_many(p->objcg, p->refs);
	p->objcg = NULL;
	p->group = NULL;
	p->refs = p->bytes = p->objects = 0;
}

static struct ksync__oc_parked *park_find(struct ksync__oc_stock *st, struct ksync_objcg *objcg)
{
	for (int i = 0; i < KSYNC__OC_PARK; i++)
		if (st->park[i].objcg == objcg)
			return &st->park[i];
	return NULL;
}

static unsigned stock_random(struct ksync__oc_stock *st);

/* Move slot @s (holding a handle) into the free park entry @p; @s is left empty. */
static void park_slot(struct ksync__oc_parked *p, struct ksync__oc_stock_slot *s)
{
	p->objcg = s->objcg;
	p->group = s->group;
	p->refs = s->refs + 1; /* the reserve and the slot's own */
	p->bytes = s->bytes;
	p->objects = s->objects;
	s->objcg = NULL;
	s->group = NULL;
	s->refs = s->bytes = s->objects = 0;
}


/*
 * Evict slot @s: park its handle, references and pending charges. The
 * one-slot stock parks nothing: it is the kernel's one-slot stock (before
 * 2026), whose every change of group drains the old handle and takes the
 * new one, the figure the five slots are measured against.
 */
static void slot_park(struct ksync__oc_stock *st, struct ksync__oc_stock_slot *s, int nr)
{
	struct ksync__oc_parked *p = NULL;

	if (!s->objcg)
		return;
	if (nr == 1) {
		slot_drop(s);
		return;
	}
	for (int i = 0; i < KSYNC__OC_PARK && !p; i++)
		if (!st->park[i].objcg)
			p = &st->park[i];
	if (!p) {
		p = &st->park[stock_random(st) % KSYNC__OC_PARK];
		park_drop(p);
	}
	park_slot(p, s);
}

#define KSYNC__OC_BIP 16

/* A mark below every slot's: the least recently used position. */
static unsigned long lru_mark(struct ksync__oc_stock *st, int nr)
{
	unsigned long m = st->tick;

	for (int i = 0; i < nr; i++)
		if (st->slot[i].objcg && st->slot[i].used < m)
			m = st->slot[i].used;
	return m ? m - 1 : 0;
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
 * section: the slot holds a reference on the handle, and the group pointer
 * is compared, never dereferenced. A slot whose group is DYING but not yet
 * past its handles' move is caught by the hit check of its own group, or by
 * this one once the move is done. */
static inline bool slot_stale(struct ksync__oc_stock_slot *s)
{
	return ksync_objcg_group(s->objcg) != s->group;
}

/*
 * The staleness sweep, on a miss: only when some offline moved handles since
 * the last one (ksync_objcg_generation() changed; its acquire load pairs
 * with the offline's release increment, O2 in lib/memgroup/objcg.c, so the
 * moves it counts are seen here). Drops the slots and the parked entries
 * whose handle moved off their group. An offline still moving its handles
 * is caught at the next miss after its increment; meanwhile a hit checks
 * its own slot again, so a moved handle is never charged through a slot.
 */
static void stock_sweep(struct ksync__oc_stock *st, int nr)
{
	unsigned long gen = ksync_objcg_generation();

	if (gen == st->gen)
		return;
	st->gen = gen; /* read before the checks: a later move changes it again */
	for (int i = 0; i < nr; i++) {
		struct ksync__oc_stock_slot *s = &st->slot[i];

		if (s->objcg && !KSYNC_PLANT(OBJCACHE_STOCK_KEEPS_DYING) && slot_stale(s))
			slot_drop(s);
	}
	for (int i = 0; i < KSYNC__OC_PARK; i++) {
		struct ksync__oc_parked *p = &st->park[i];

		if (p->objcg && ksync_objcg_group(p->objcg) != p->group)
			park_drop(p);
	}
}

struct ksync_objcg *ksync__oc_stock_charge(struct ksync__oc_stock *st, struct ksync_memgroup *g, long bytes)
{
	struct ksync__oc_stock_slot *s, *victim = NULL;
	struct ksync__oc_parked *park;
	struct ksync_objcg *objcg;
	unsigned long lru = ~0ul; /* the new slot's LRU mark, if known (~0: compute it) */
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
			s->used = ++st->tick;
			s->bytes += bytes;
			s->objects++;
			slot_ref_out(s); /* the object's reference */
			if (s->bytes >= KSYNC_OBJCACHE_STOCK_BATCH)
				slot_flush(s);
			return s->objcg;
		}
		slot_drop(s);
		break;
	}
	/* A miss: sweep the stale slots (only after an offline), choose a
	 * victim: a free slot, else the least recently used. */
	stock_sweep(st, nr);
	for (int i = 0; i < nr; i++) {
		s = &st->slot[i];
		if (!s->objcg) {
			victim = s;
			break;
		}
	}
	if (!victim) {
		victim = &st->slot[0];
		for (int i = 1; i < nr; i++)
			if (st->slot[i].used < victim->used)
				victim = &st->slot[i];
		/* The victim holds the least mark: the new slot's LRU mark is just below it. */
		lru = victim->used ? victim->used - 1 : 0;
	}
	/* @g's handle, no reference taken: if it is parked, the park's
	 * references are the slot's, and the miss takes no atomic at all. The
	 * park holds references on its handles, so a peeked pointer equal to a
	 * parked one is that live handle (compared only, never dereferenced
	 * otherwise). */
	objcg = ksync_memgroup_objcg_peek(g);
	if (!objcg)
		goto direct; /* not online (or going): the nearest online ancestor's */
	park = nr > 1 ? park_find(st, objcg) : NULL;
	if (park && ksync_objcg_group(objcg) == g) {
		long refs = park->refs, pbytes = park->bytes, pobjects = park->objects;

		/* The victim (if any) takes the entry's place in the park: no scan, nothing dropped. */
		park->objcg = NULL;
		park->group = NULL;
		park->refs = park->bytes = park->objects = 0;
		if (victim->objcg)
			park_slot(park, victim);
		victim->group = g;
		victim->objcg = objcg;
		victim->refs = refs - 1; /* one is the slot's own */
		victim->bytes = pbytes + bytes;
		victim->objects = pobjects + 1;
		goto filled;
	}
	objcg = ksync_memgroup_get_objcg(g);
	if (!objcg)
		return NULL;
	if (ksync_objcg_group(objcg) != g) {
		/* Went offline meanwhile: never cache a dying group's handle. */
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
		return objcg;
	}
	slot_park(st, victim, nr);
	victim->group = g;
	victim->objcg = objcg; /* the slot's reference */
	victim->bytes = bytes;
	victim->objects = 1;
	victim->refs = 0;
	{
		park = nr > 1 ? park_find(st, objcg) : NULL;

		if (park) { /* back from the park: its references join the reserve */
			victim->refs = park->refs;
			victim->bytes += park->bytes;
			victim->objects += park->objects;
			park->objcg = NULL;
			park->group = NULL;
			park->refs = park->bytes = park->objects = 0;
		}
	}
filled:
	/* Bimodal insertion: the new slot goes in as the least recently used
	 * (the next victim unless it hits before the next miss), one fill in
	 * KSYNC__OC_BIP as the most recently used. A thread cycling among more
	 * groups than slots keeps nr - 1 of them (LRU kept none: each miss
	 * evicted the group needed soonest); a new working set still gets in. */
	if (++st->fills % KSYNC__OC_BIP)
		victim->used = lru != ~0ul ? lru : lru_mark(st, nr);
	else
		victim->used = ++st->tick;
	slot_ref_out(victim); /* the object's reference */
	if (victim->bytes >= KSYNC_OBJCACHE_STOCK_BATCH || victim->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH)
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
		for (int i = 0; i < KSYNC__OC_PARK; i++) {
			struct ksync__oc_parked *p = &st->park[i];

			if (p->objcg != objcg)
				continue;
			p->bytes -= bytes;
			p->objects--;
			p->refs++; /* the object's reference: p holds at least one more */
			if (p->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH || p->refs > 2 * REFS_BATCH)
				park_drop(p);
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
	for (int i = 0; i < KSYNC__OC_PARK; i++)
		park_drop(&st->park[i]);
}
