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
 * drop its object's reference at once). A charge to a group found in a
 * slot is a few additions and no atomic operation; an entry is flushed
 * when its pending bytes pass KSYNC_OBJCACHE_STOCK_BATCH either way and
 * when the stock is drained (ksync_objcache_drain_thread(), thread exit).
 * With one slot, a thread that alternates between groups evicts at every
 * charge: the kernel's -67.7 %.
 *
 * Entries and slots. A slot is an entry of a small per-thread table,
 * set-associative and keyed by the group (KSYNC__OC_PARK_SETS sets of
 * KSYNC__OC_PARK_WAYS entries; the set is a hash of the group's address,
 * ksync__oc_park_set()); ->slot[] points at the entries that are slots,
 * and the other entries are **parked**: the handle references and pending
 * charges of a slot that was evicted, kept for the next charge of that
 * group. A parked entry charges nothing new (every charge goes through a
 * slot; ksync_objcache_thread_stock() lists slots only); a free whose
 * handle is parked returns its reference and uncharges there. A charge
 * compares the ways of its group's set, once: a slot is a hit; a parked
 * entry is made a slot again where it lies (the victim parked where it
 * lies: two pointer and index updates, nothing copied, no atomic), where
 * the kernel's per-CPU references took no atomic either. A thread cycling
 * among more groups than slots no longer puts 65 references, flushes and
 * takes 64 again at every miss. Parked entries are dropped (flushed,
 * references put) when their set has no free way for a new group (a random
 * parked one; a set has more ways than the stock has slots, so one is
 * always parked or free), when a sweep after an offline finds their handle
 * moved off its group, when a charge finds their group no longer online,
 * and at drain and thread exit: the table is bounded.
 *
 * Eviction (more groups than slots): the least recently used slot goes, and
 * a new slot enters as the least recently used one but once in
 * KSYNC__OC_BIP fills (bimodal insertion): plain LRU missed at every charge
 * of a thread cycling among 8 groups with 5 slots (each miss evicted the
 * group needed soonest), this keeps 4 of them. The one-slot stock parks
 * nothing: it is the kernel's one-slot stock (before 2026), whose every
 * change of group drains the old handle and takes the new one, the figure
 * the five slots are measured against.
 *
 * Cost: a thread rotating among 8 groups finds its group in a different
 * entry at every charge, and half its charges miss the slots (5 slots
 * cannot hold an 8-group cycle: 4 hits in 8 at best). The ways are compared
 * into a bit mask (no branch per entry to mispredict as groups rotate), a
 * free first tries the entry of the thread's last charge (an object freed
 * soon after its allocation), and a miss that finds its group parked moves
 * no data.
 *
 * Dying groups (the kernel's 2025 rule): an entry is only filled for a
 * group that is ONLINE and whose handle points at it; a charge that finds
 * the entry, slot or parked, checks both again (the caller keeps its group
 * in memory, so reading its state is safe), and a miss after an offline
 * (ksync_objcg_generation() changed) sweeps every entry, dropping those
 * whose handle no longer points at their group (moved at offline; a
 * pointer compare, nothing dereferenced). A stale entry costs no pin: it
 * holds the handle, not the group, and its pending charges flushed later
 * land on the parent the handle was moved to, where they belong. A group
 * has at most one entry: its set is looked at before a handle is taken.
 *
 * Only the owner thread touches its stock: no atomics but the setting's.
 */
#include "internal.h"

int ksync__oc_stock_slots = KSYNC_OBJCACHE_STOCK_MAX;

#define REFS_BATCH 64
#define KSYNC__OC_BIP 16

typedef struct ksync__oc_stock_slot entry_t;

/* Hand the pending charges to the handle. */
static void entry_flush(entry_t *e)
{
	if (e->bytes || e->objects)
		(void)ksync_objcg_charge(e->objcg, 0, e->objects, e->bytes);
	e->bytes = 0;
	e->objects = 0;
}

/* A reference for a new object, from the entry's reserve. */
static inline void entry_ref_out(entry_t *e)
{
	if (ksync_unlikely(!e->refs)) {
		ksync_objcg_get_many(e->objcg, REFS_BATCH); /* the entry holds one */
		e->refs = REFS_BATCH;
	}
	e->refs--;
}

/* A freed object's charge and reference, back to the entry. */
static inline void entry_uncharge(entry_t *e, long bytes)
{
	e->bytes -= bytes;
	e->objects--;
	if (ksync_unlikely(++e->refs > 2 * REFS_BATCH)) {
		ksync_objcg_put_many(e->objcg, e->refs - REFS_BATCH);
		e->refs = REFS_BATCH;
	}
	if (ksync_unlikely(e->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH))
		entry_flush(e);
}

/* Drop @e, a slot or parked: flush, put its references, free it. */
static void entry_drop(struct ksync__oc_stock *st, entry_t *e)
{
	if (!e->objcg)
		return;
	entry_flush(e);
	ksync_objcg_put_many(e->objcg, e->refs + 1); /* the reserve and the entry's own */
	if (e->slot >= 0) {
		st->slot[e->slot] = NULL;
		st->filled--;
		st->victim = e->slot; /* a free slot goes first */
	}
	e->refs = 0;
	e->objcg = NULL;
	e->group = NULL;
	e->slot = -1;
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

static inline entry_t *set_of(struct ksync__oc_stock *st, const struct ksync_memgroup *g)
{
	return &st->ent[ksync__oc_park_set(g) * KSYNC__OC_PARK_WAYS];
}

/* @g's entry, or NULL: the ways of its set compared into a bit mask (a
 * branch per way would mispredict as groups rotate; the compilers turn a
 * per-way select back into branches). */
static inline entry_t *entry_lookup(struct ksync__oc_stock *st, const struct ksync_memgroup *g)
{
	entry_t *set = set_of(st, g);
	unsigned found = 0;

	for (int i = 0; i < KSYNC__OC_PARK_WAYS; i++)
		found |= (unsigned)(set[i].group == g) << i;
	return found ? &set[__builtin_ctz(found)] : NULL;
}

/* A way of @g's set for a new entry: a free one, else a random parked one,
 * dropped. There is one: a set has more ways than the stock has slots. */
static entry_t *entry_new(struct ksync__oc_stock *st, const struct ksync_memgroup *g)
{
	entry_t *set = set_of(st, g);
	unsigned start = stock_random(st) % KSYNC__OC_PARK_WAYS;

	for (int i = 0; i < KSYNC__OC_PARK_WAYS; i++)
		if (!set[i].objcg)
			return &set[i];
	for (int i = 0; i < KSYNC__OC_PARK_WAYS; i++) {
		entry_t *e = &set[(start + (unsigned)i) % KSYNC__OC_PARK_WAYS];

		if (e->slot < 0) {
			entry_drop(st, e);
			return e;
		}
	}
	return NULL; /* not reached (the #error in internal.h) */
}

/* A mark below every slot's: the least recently used position. */
static unsigned long lru_mark(struct ksync__oc_stock *st, int nr)
{
	unsigned long m = st->tick;

	for (int i = 0; i < nr; i++)
		if (st->slot[i] && st->slot[i]->used < m)
			m = st->slot[i]->used;
	return m ? m - 1 : 0;
}

/* The setting changed: drop the slots beyond it, and the parked entries (a
 * one-slot stock parks nothing; nor should it inherit a five-slot one's). */
static KSYNC_NOINLINE int nr_slots_changed(struct ksync__oc_stock *st, int nr)
{
	for (int i = nr; i < KSYNC_OBJCACHE_STOCK_MAX; i++)
		if (st->slot[i])
			entry_drop(st, st->slot[i]);
	for (int i = 0; i < KSYNC__OC_ENTRIES; i++)
		if (st->ent[i].objcg && st->ent[i].slot < 0)
			entry_drop(st, &st->ent[i]);
	st->nr = nr;
	st->filled = 0;
	for (int i = 0; i < nr; i++)
		st->filled += st->slot[i] != NULL;
	st->victim = -1;
	return nr;
}

static inline int nr_slots(struct ksync__oc_stock *st)
{
	int nr = __atomic_load_n(&ksync__oc_stock_slots, __ATOMIC_RELAXED);

	return ksync_likely(nr == st->nr) ? nr : nr_slots_changed(st, nr);
}

/* Is entry @e stale? Its handle was moved off its group (offline). No read
 * section: the entry holds a reference on the handle, and the group pointer
 * is compared, never dereferenced. An entry whose group is DYING but not
 * yet past its handles' move is caught by the check of its own group's
 * next charge (entry_good()), or by this one once the move is done. */
static inline bool entry_stale(entry_t *e)
{
	return ksync_objcg_group(e->objcg) != e->group;
}

/*
 * The staleness sweep, on a miss: only when some offline moved handles since
 * the last one (ksync_objcg_generation() changed; its acquire load pairs
 * with the offline's release increment, O2 in lib/memgroup/objcg.c, so the
 * moves it counts are seen here). Drops the entries whose handle moved off
 * their group. An offline still moving its handles is caught at the next
 * miss after its increment; meanwhile a charge checks its own entry again,
 * so a moved handle is never charged through a slot.
 */
static KSYNC_NOINLINE void stock_sweep(struct ksync__oc_stock *st, unsigned long gen)
{
	st->gen = gen; /* read before the checks: a later move changes it again */
	for (int i = 0; i < KSYNC__OC_ENTRIES; i++) {
		entry_t *e = &st->ent[i];

		if (!e->objcg || (e->slot >= 0 && KSYNC_PLANT(OBJCACHE_STOCK_KEEPS_DYING)))
			continue;
		if (entry_stale(e))
			entry_drop(st, e);
	}
}

/* Is the entry of @g (handle @objcg) still good: the handle @g's own, @g
 * online? The caller keeps @g in memory: its state is safe to read; the
 * entry holds @objcg. */
static inline bool entry_good(struct ksync_objcg *objcg, struct ksync_memgroup *g)
{
	return ksync_objcg_group(objcg) == g && ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE;
}

/* Charge one object of @bytes to entry @e, a slot. */
static inline struct ksync_objcg *entry_charge(struct ksync__oc_stock *st, entry_t *e, long bytes)
{
	e->bytes += bytes;
	e->objects++;
	entry_ref_out(e); /* the object's reference */
	if (ksync_unlikely(e->bytes >= KSYNC_OBJCACHE_STOCK_BATCH || e->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH))
		entry_flush(e);
	st->last = e;
	return e->objcg;
}

/*
 * Make entry @e (parked or new) a slot: a free slot, else the least recently
 * used one, whose entry is parked where it lies (dropped by a one-slot
 * stock). Then the bimodal insertion: @e goes in as the least recently used
 * slot (the next victim unless it hits before the next miss), one fill in
 * KSYNC__OC_BIP as the most recently used. A thread cycling among more
 * groups than slots keeps nr - 1 of them (LRU kept none: each miss evicted
 * the group needed soonest); a new working set still gets in.
 */
static void entry_to_slot(struct ksync__oc_stock *st, entry_t *e, int nr)
{
	int v = st->victim;
	unsigned long lru;

	if (v < 0 || v >= nr) {
		unsigned long best = st->slot[0] ? st->slot[0]->used + 1 : 0;

		/* One pass, no branch per slot: a free slot ranks 0, below every filled one. */
		v = 0;
		for (int i = 1; i < nr; i++) {
			unsigned long k = st->slot[i] ? st->slot[i]->used + 1 : 0;

			v = k < best ? i : v;
			best = k < best ? k : best;
		}
	}
	if (st->slot[v]) { /* the victim holds the least mark: the new slot's is just below it */
		entry_t *victim = st->slot[v];

		lru = victim->used ? victim->used - 1 : 0;
		if (nr == 1) {
			entry_drop(st, victim);
			st->filled++; /* refilled below */
		} else {
			victim->slot = -1; /* parked */
			st->slot[v] = NULL;
		}
	} else {
		lru = lru_mark(st, nr);
		st->filled++;
	}
	st->slot[v] = e;
	e->slot = v;
	if (++st->fills % KSYNC__OC_BIP) {
		e->used = lru;
		/* below every other slot: the next victim, unless it hits or a slot is free */
		st->victim = st->filled == nr ? v : -1;
	} else {
		e->used = ++st->tick;
		st->victim = -1;
	}
}

struct ksync_objcg *ksync__oc_stock_charge(struct ksync__oc_stock *st, struct ksync_memgroup *g, long bytes)
{
	struct ksync_objcg *objcg;
	unsigned long gen;
	entry_t *e;
	int nr;

	if (!st)
		goto direct;
	nr = nr_slots(st);
	e = entry_lookup(st, g);
	if (ksync_likely(e != NULL)) {
		if (ksync_likely(entry_good(e->objcg, g))) {
			if (ksync_likely(e->slot >= 0)) {
				ksync__oc_yield(NULL, KSYNC_OBJCACHE_YP_STOCK_HIT);
				e->used = ++st->tick;
				if (ksync_unlikely(st->victim == e->slot))
					st->victim = -1; /* no longer the least recently used */
				return entry_charge(st, e, bytes);
			}
			/* Parked: a slot again, its references and charges with it. */
			entry_to_slot(st, e, nr);
			return entry_charge(st, e, bytes);
		}
		entry_drop(st, e); /* @g is going offline: never cache its handle */
	}
	/* A miss: sweep the stale entries (only after an offline). */
	gen = ksync_objcg_generation();
	if (ksync_unlikely(gen != st->gen))
		stock_sweep(st, gen);
	objcg = ksync_memgroup_get_objcg(g);
	if (!objcg)
		return NULL; /* no online group up to the top: the root, uncharged */
	if (ksync_objcg_group(objcg) != g) {
		/* @g is not online (an ancestor's handle), or went offline
		 * meanwhile: never cache a dying group's handle. */
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
		return objcg;
	}
	e = entry_new(st, g);
	e->group = g;
	e->objcg = objcg; /* the entry's reference */
	e->bytes = e->objects = e->refs = 0;
	entry_to_slot(st, e, nr);
	return entry_charge(st, e, bytes);
direct:
	objcg = ksync_memgroup_get_objcg(g); /* the nearest online ancestor's, or NULL: the root */
	if (objcg)
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
	return objcg;
}

void ksync__oc_stock_uncharge(struct ksync__oc_stock *st, struct ksync_objcg *objcg, long bytes)
{
	if (st) {
		/* An object freed soon after its allocation: the last charge's entry. */
		if (ksync_likely(st->last && st->last->objcg == objcg)) {
			entry_uncharge(st->last, bytes);
			return;
		}
		/* No group key here: every entry, slot or parked (a free of
		 * another thread's object, or of a group rotated out). */
		for (int i = 0; i < KSYNC__OC_ENTRIES; i++) {
			if (st->ent[i].objcg == objcg) {
				entry_uncharge(&st->ent[i], bytes);
				return;
			}
		}
	}
	(void)ksync_objcg_charge(objcg, 0, -1, -bytes);
	ksync_objcg_put(objcg);
}

void ksync__oc_stock_drain(struct ksync__oc_stock *st)
{
	for (int i = 0; i < KSYNC__OC_ENTRIES; i++)
		entry_drop(st, &st->ent[i]);
	st->last = NULL;
}
