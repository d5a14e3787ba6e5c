// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/stock.c - design B: the per-thread charge stock.
 *
 * The kernel's per-CPU obj_stock, per thread here: up to
 * ksync_objcache_stock_slots() slots (KSYNC_OBJCACHE_STOCK_MAX, the 2026
 * five), each a group (the key, compared by pointer), the group's charge
 * handle, the charges not yet handed to ksync_objcg_charge(), and handle
 * references: the slot's own and a reserve for objects, taken 64 at a time
 * with ksync_objcg_get_many() and given back by frees that find the handle
 * in the stock (every reference is a real one at all times, so a free on
 * another thread, whose stock lacks the handle, may drop its object's
 * reference at once). A charge to a group found in a slot is a few
 * additions and no atomic operation; pending charges are flushed when they
 * pass KSYNC_OBJCACHE_STOCK_BATCH either way and when the stock is drained
 * (ksync_objcache_drain_thread(), thread exit). With one slot, a thread
 * that alternates between groups evicts at every charge: the kernel's
 * -67.7 %.
 *
 * Eviction (more groups than slots): the least recently used slot goes, and
 * a new slot enters as the least recently used one but once in
 * KSYNC__OC_BIP fills (bimodal insertion): plain LRU missed at every charge
 * of a thread cycling among 8 groups with 5 slots (each miss evicted the
 * group needed soonest), this keeps 4 of them. The victim is parked, not
 * dropped: it stays in the table with its handle, references and pending
 * charges, no longer a slot; it charges nothing new (a charge of its group
 * makes it a slot again, evicting the least recently used slot in turn),
 * but a free of one of its objects returns the reference there. At most
 * KSYNC__OC_PARK entries are parked; past that a random one is dropped.
 *
 * The table (struct ksync__oc_stock): the slots and the parked entries are
 * the entries of one array of KSYNC__OC_ENTRIES, a bit of ->slots telling
 * which are slots, so a parked entry becomes a slot where it lies and the
 * victim is parked where it lies: a charge of a parked group copies
 * nothing, takes no handle reference and looks nothing up in lib/memgroup
 * (the old stock copied the park entry and the victim both ways and peeked
 * the group's handle first). The least recently used slot is remembered
 * (->nv) and found again by a scan only after it was charged or a fill
 * entered as the most recently used. A charge first tries the entry named
 * by its group's bucket of ->hint (a hash of the group's address: the entry
 * the group was last found in, right at every charge unless two of the
 * thread's groups share a bucket), a free the entry last charged (->last:
 * a short-lived object is freed before its thread charges another group);
 * a wrong guess goes on to compare all the entries at once: the low 32
 * bits of every entry's group pointer sit in one cache line (->gtag),
 * compared in one pass into a bit mask (SSE2 where there is SSE2, a loop
 * without early exit elsewhere), whose lowest entry matching in full is the
 * one; a free looks its handle up in the same way (->htag). Where the entry
 * lies no longer decides a branch: the old linear scans stopped at a
 * different slot at every charge of a cycle, a branch the predictor missed.
 * A hint is only a guess: the entry it names is compared in full, and a
 * stale one (the entry dropped or reused) fails that compare.
 *
 * Measured (docs/objcache.md), the branch that tells a slot from a parked
 * entry is kept: made branch-free as well (the swap computed with masks on
 * every charge), the bookkeeping cost a thread charging one group 2 ns a
 * pair, more than the mispredictions it saved a cycling one.
 *
 * Dying groups (the kernel's 2025 rule): an entry is only made for a group
 * that is ONLINE and whose handle points at it; a charge checks both again
 * for the entry it finds, slot or parked (the caller keeps its group in
 * memory, so reading its state is safe), and drops the entry otherwise; a
 * charge after an offline (ksync_objcg_generation() changed) first sweeps
 * every entry, dropping those whose handle no longer points at their group
 * (moved at offline; a pointer compare, nothing dereferenced). A stale
 * entry costs no pin: it holds the handle, not the group, and its pending
 * charges flushed later land on the parent the handle was moved to, where
 * they belong.
 *
 * The one-slot stock is the kernel's one-slot stock (the comparison the
 * five slots are measured against): it parks nothing, its every change of
 * group drains the old handle and takes the new one.
 *
 * Only the owner thread touches its stock: no atomics but the setting's.
 */
#include "internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

int ksync__oc_stock_slots = KSYNC_OBJCACHE_STOCK_MAX;

#define REFS_BATCH 64
#define KSYNC__OC_BIP 16

_Static_assert(KSYNC__OC_ENTRIES == 16, "the lookups compare 16 tags");
_Static_assert(KSYNC__OC_ENTRIES >= KSYNC_OBJCACHE_STOCK_MAX + KSYNC__OC_PARK + 1,
	       "a fill finds a free entry with every slot and the park full");

static inline uint32_t tag_of(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

/* The entries whose tag is @t, as a mask; no branch. */
static inline unsigned tag_match(const uint32_t *tags, uint32_t t)
{
#if defined(__SSE2__)
	__m128i k = _mm_set1_epi32((int)t);
	__m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)&tags[0]), k);
	__m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)&tags[4]), k);
	__m128i c = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)&tags[8]), k);
	__m128i d = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)&tags[12]), k);

	/* -1 and 0 stay -1 and 0 through the saturating packs: byte i is entry i. */
	return (unsigned)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
#else
	unsigned m = 0;

	for (int i = 0; i < KSYNC__OC_ENTRIES; i++)
		m |= (unsigned)(tags[i] == t) << i;
	return m;
#endif
}

/* A group's bucket of ->hint (a multiplicative hash of its address). */
_Static_assert(KSYNC__OC_HINTS == 64, "hint_of() keeps 6 bits");
static inline unsigned hint_of(const struct ksync_memgroup *g)
{
	return (unsigned)(((uint64_t)(uintptr_t)g * 0x9e3779b97f4a7c15ull) >> 58);
}

unsigned ksync__oc_stock_hint_of(const struct ksync_memgroup *g)
{
	return hint_of(g);
}

static inline int ctz(unsigned m)
{
	return __builtin_ctz(m);
}

/* The entry of group @g, or -1. Two groups whose pointers share their low
 * 32 bits both match the tag: the full compare tells them apart. */
static inline int find_group(const struct ksync__oc_stock *st, const struct ksync_memgroup *g)
{
	for (unsigned m = tag_match(st->gtag, tag_of(g)); m; m &= m - 1)
		if (ksync_likely(st->group[ctz(m)] == g))
			return ctz(m);
	return -1;
}

/* The first entry holding handle @objcg, or -1. */
static inline int find_objcg(const struct ksync__oc_stock *st, const struct ksync_objcg *objcg)
{
	for (unsigned m = tag_match(st->htag, tag_of(objcg)); m; m &= m - 1)
		if (ksync_likely(st->objcg[ctz(m)] == objcg))
			return ctz(m);
	return -1;
}

/* Hand entry @e's pending charges to its handle. */
static void ent_flush(struct ksync__oc_stock *st, int e)
{
	struct ksync__oc_stock_entry *s = &st->ent[e];

	if (s->bytes || s->objects)
		(void)ksync_objcg_charge(st->objcg[e], 0, s->objects, s->bytes);
	s->bytes = 0;
	s->objects = 0;
}

/* Drop entry @e (a slot or parked): flush it, put its references, free it. */
static void ent_drop(struct ksync__oc_stock *st, int e)
{
	if (!st->group[e])
		return;
	ent_flush(st, e);
	ksync_objcg_put_many(st->objcg[e], st->ent[e].refs);
	st->ent[e].refs = 0;
	st->group[e] = NULL;
	st->objcg[e] = NULL;
	st->gtag[e] = 0;
	st->htag[e] = 0;
	st->nslots -= !!(st->slots & (1u << e));
	st->slots &= ~(1u << e);
	st->used &= ~(1u << e);
	st->nused--;
	if (st->nv == e)
		st->nv = -1;
}

/* A reference for a new object, from the reserve of entry @e. */
static inline void ref_out(struct ksync__oc_stock *st, int e)
{
	struct ksync__oc_stock_entry *s = &st->ent[e];

	if (ksync_unlikely(s->refs <= 1)) { /* one is the entry's own */
		ksync_objcg_get_many(st->objcg[e], REFS_BATCH);
		s->refs += REFS_BATCH;
	}
	s->refs--;
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

/* The least recently used slot (the lowest mark; ->slots not empty). */
static int lru_slot(const struct ksync__oc_stock *st)
{
	int v = -1;

	for (unsigned m = st->slots; m; m &= m - 1) {
		int i = ctz(m);

		if (v < 0 || st->ent[i].used < st->ent[v].used)
			v = i;
	}
	return v;
}

/*
 * The staleness sweep: only when some offline moved handles since the last
 * one (ksync_objcg_generation() changed; its acquire load pairs with the
 * offline's release increment, O2 in lib/memgroup/objcg.c, so the moves it
 * counts are seen here). Drops the entries whose handle moved off their
 * group (no read section: the entry holds a reference on the handle, and
 * the group pointer is compared, never dereferenced). An offline still
 * moving its handles is caught at the next charge after its increment;
 * meanwhile a charge checks its own entry again, so a moved handle is never
 * charged through the stock.
 */
static void stock_sweep(struct ksync__oc_stock *st, unsigned long gen)
{
	st->gen = gen; /* read before the checks: a later move changes it again */
	for (int i = 0; i < KSYNC__OC_ENTRIES; i++) {
		if (!st->group[i] || ksync_objcg_group(st->objcg[i]) == st->group[i])
			continue;
		if ((st->slots & (1u << i)) && KSYNC_PLANT(OBJCACHE_STOCK_KEEPS_DYING))
			continue;
		ent_drop(st, i);
	}
}

/*
 * Entry @e of the caller's group is charged: if it is parked, it becomes a
 * slot and the least recently used slot is parked in its place.
 */
static KSYNC_ALWAYS_INLINE void ent_use(struct ksync__oc_stock *st, int e, int nr)
{
	unsigned bit = 1u << e;
	unsigned long tick = ++st->tick;
	unsigned long vused;
	bool mru;
	int v;

	if (st->slots & bit) { /* a slot: the hit */
		st->ent[e].used = tick;
		if (e == st->nv)
			st->nv = -1; /* no longer the least recently used */
		return;
	}
	st->fills++;
	if (ksync_unlikely(st->nslots < nr)) { /* a free slot: no victim */
		st->slots |= bit;
		st->nslots++;
		st->ent[e].used = tick;
		st->nv = -1;
		return;
	}
	v = st->nv >= 0 ? st->nv : lru_slot(st);
	vused = st->ent[v].used;
	/* Bimodal insertion: a parked entry back as a slot goes in as the least
	 * recently used (the next victim unless it is charged before the next
	 * swap), one in KSYNC__OC_BIP as the most recently used. */
	mru = !(st->fills % KSYNC__OC_BIP);
	st->slots ^= bit | (1u << v); /* the swap: e in, v out, where they lie */
	st->ent[e].used = mru ? tick : vused - (vused != 0);
	st->nv = mru ? -1 : e;
}

/* A new entry for @g and its handle @objcg (one reference, the caller's),
 * as a slot: the victim, if every slot is taken, is parked (the one-slot
 * stock drops it), and a random parked entry is dropped past the park's
 * bound. */
static int ent_fill(struct ksync__oc_stock *st, struct ksync_memgroup *g, struct ksync_objcg *objcg, int nr)
{
	int f;

	if (st->nslots >= nr) {
		int v = st->nv >= 0 ? st->nv : lru_slot(st);

		if (nr == 1) {
			/* The kernel's one-slot stock: drain the old handle, the
			 * new one takes its entry. */
			ent_drop(st, v);
			f = v;
			goto fill;
		} else {
			st->slots &= ~(1u << v); /* parked where it lies */
			st->nslots--;
		}
		st->nv = -1;
	}
	if (st->nused - st->nslots > KSYNC__OC_PARK) {
		unsigned parked = st->used & ~st->slots;
		int k = (int)(stock_random(st) % KSYNC__OC_PARK);

		while (k--)
			parked &= parked - 1;
		ent_drop(st, ctz(parked));
	}
	f = ctz(~st->used);
fill:
	st->group[f] = g;
	st->objcg[f] = objcg;
	st->gtag[f] = tag_of(g);
	st->htag[f] = tag_of(objcg);
	st->ent[f].refs = 1; /* the entry's own */
	st->ent[f].bytes = 0;
	st->ent[f].objects = 0;
	/* Bimodal insertion, as for a parked entry coming back (ent_use()). */
	if (++st->fills % KSYNC__OC_BIP && st->slots) {
		int v = lru_slot(st);
		unsigned long u = st->ent[v].used;

		st->ent[f].used = u - (u != 0);
		st->nv = f;
	} else {
		st->ent[f].used = ++st->tick;
		st->nv = -1;
	}
	st->slots |= 1u << f;
	st->used |= 1u << f;
	st->nslots++;
	st->nused++;
	return f;
}

/* The setting changed, or an offline moved handles: bring @st up to date. */
static KSYNC_NOINLINE void stock_resync(struct ksync__oc_stock *st, int nr, unsigned long gen)
{
	if (nr != st->nr) {
		/* Drop the least recently used slots beyond the setting, and the
		 * park for the one-slot stock (it parks nothing). */
		while (st->nslots > nr)
			ent_drop(st, lru_slot(st));
		if (nr == 1)
			for (int i = 0; i < KSYNC__OC_ENTRIES; i++)
				if (!(st->slots & (1u << i)))
					ent_drop(st, i);
		st->nr = nr;
		st->nv = -1;
	}
	if (gen != st->gen)
		stock_sweep(st, gen);
}

static void ent_charge(struct ksync__oc_stock *st, int e, long bytes)
{
	struct ksync__oc_stock_entry *s = &st->ent[e];

	st->last = e;
	s->bytes += bytes;
	s->objects++;
	ref_out(st, e); /* the object's reference */
	if (ksync_unlikely(s->bytes >= KSYNC_OBJCACHE_STOCK_BATCH || s->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH))
		ent_flush(st, e);
}

/* Charge without the stock: the handle of @g or of its nearest online
 * ancestor (NULL: the root, nothing charged). */
static struct ksync_objcg *charge_direct(struct ksync_memgroup *g, long bytes)
{
	struct ksync_objcg *objcg = ksync_memgroup_get_objcg(g);

	if (objcg)
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
	return objcg;
}

/*
 * Both misses' first step: @g's handle, with a reference (the new entry's
 * own); NULL when @g has none. An offline or going group's handle is never
 * cached: the object is charged straight through it, *@direct is set and the
 * caller returns the handle as it is.
 */
static inline struct ksync_objcg *miss_objcg(struct ksync_memgroup *g, long bytes, bool *direct)
{
	struct ksync_objcg *objcg = ksync_memgroup_get_objcg(g);

	*direct = false;
	if (!objcg)
		return NULL;
	if (ksync_objcg_group(objcg) != g || ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE) {
		(void)ksync_objcg_charge(objcg, 0, 1, bytes);
		*direct = true;
	}
	return objcg;
}

/*
 * The one-slot stock's miss (the kernel's one-slot stock): drain the slot,
 * take @g's handle into the same entry. No park, no victim to choose.
 */
static struct ksync_objcg *charge_miss_one(struct ksync__oc_stock *st, struct ksync_memgroup *g, long bytes)
{
	int f = st->slots ? ctz(st->slots) : 0;
	struct ksync__oc_stock_entry *s = &st->ent[f];
	struct ksync_objcg *objcg;
	bool direct;

	ent_drop(st, f);
	objcg = miss_objcg(g, bytes, &direct);
	if (!objcg || direct)
		return objcg;
	st->group[f] = g;
	st->objcg[f] = objcg;
	st->gtag[f] = tag_of(g);
	st->htag[f] = tag_of(objcg);
	st->slots = st->used = 1u << f;
	st->nslots = st->nused = 1;
	st->nv = -1;
	st->last = f;
	st->hint[hint_of(g)] = (uint8_t)f;
	s->used = ++st->tick;
	s->bytes = bytes;
	s->objects = 1;
	ksync_objcg_get_many(objcg, REFS_BATCH);
	s->refs = REFS_BATCH; /* the entry's own, and the reserve less the object's */
	if (ksync_unlikely(bytes >= KSYNC_OBJCACHE_STOCK_BATCH))
		ent_flush(st, f);
	return objcg;
}

/* @g has no usable entry (@e: a stale one to drop, or -1): a new one. */
static KSYNC_NOINLINE struct ksync_objcg *charge_miss(struct ksync__oc_stock *st, struct ksync_memgroup *g, int e,
							 long bytes)
{
	struct ksync_objcg *objcg;
	bool direct;

	if (st->nr == 1)
		return charge_miss_one(st, g, bytes);
	if (e >= 0)
		ent_drop(st, e); /* never charge through a dying group's entry */
	objcg = miss_objcg(g, bytes, &direct);
	if (!objcg || direct)
		return objcg;
	e = ent_fill(st, g, objcg, st->nr);
	st->hint[hint_of(g)] = (uint8_t)e;
	ent_charge(st, e, bytes);
	return objcg;
}

struct ksync_objcg *ksync__oc_stock_charge(struct ksync__oc_stock *st, struct ksync_memgroup *g, long bytes)
{
	struct ksync_objcg *objcg;
	unsigned long gen;
	unsigned h;
	int nr, e;

	if (ksync_unlikely(!st))
		return charge_direct(g, bytes);
	nr = __atomic_load_n(&ksync__oc_stock_slots, __ATOMIC_RELAXED);
	gen = ksync_objcg_generation();
	if (ksync_unlikely(nr != st->nr || gen != st->gen))
		stock_resync(st, nr, gen);
	/* The entry last charged first (a thread charging one group finds it
	 * there at once); then all the entries, but with one slot there is no
	 * other entry to find. */
	h = hint_of(g);
	e = st->hint[h];
	if (st->group[e] != g) {
		e = nr > 1 ? find_group(st, g) : -1;
		if (e >= 0)
			st->hint[h] = (uint8_t)e;
	}
	if (ksync_likely(e >= 0)) {
		objcg = st->objcg[e];
		/* The caller keeps @g in memory: its state is safe to read. */
		if (ksync_likely(ksync_objcg_group(objcg) == g && ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE)) {
			ksync__oc_yield(NULL, KSYNC_OBJCACHE_YP_STOCK_HIT);
			ent_use(st, e, nr);
			ent_charge(st, e, bytes);
			return objcg;
		}
	}
	return charge_miss(st, g, e, bytes);
}

void ksync__oc_stock_uncharge(struct ksync__oc_stock *st, struct ksync_objcg *objcg, long bytes)
{
	int e = -1;

	if (ksync_likely(st != NULL)) {
		/* The entry last charged first: a short-lived object is freed
		 * before its thread charges another group. */
		e = st->last;
		if (st->objcg[e] != objcg)
			e = find_objcg(st, objcg);
	}

	if (ksync_likely(e >= 0)) {
		/* A slot or a parked entry alike: the object's reference joins
		 * the reserve, its bytes the pending charges. */
		struct ksync__oc_stock_entry *s = &st->ent[e];

		s->bytes -= bytes;
		s->objects--;
		if (ksync_unlikely(++s->refs > 2 * REFS_BATCH + 1)) {
			ksync_objcg_put_many(objcg, s->refs - REFS_BATCH - 1);
			s->refs = REFS_BATCH + 1;
		}
		if (ksync_unlikely(s->bytes <= -KSYNC_OBJCACHE_STOCK_BATCH))
			ent_flush(st, e);
		return;
	}
	(void)ksync_objcg_charge(objcg, 0, -1, -bytes);
	ksync_objcg_put(objcg);
}

void ksync__oc_stock_drain(struct ksync__oc_stock *st)
{
	for (int i = 0; i < KSYNC__OC_ENTRIES; i++)
		ent_drop(st, i);
	st->slots = 0;
	st->used = 0;
	st->nslots = 0;
	st->nused = 0;
	st->nv = -1;
}

int ksync__oc_stock_list(struct ksync__oc_stock *st, bool parked, struct ksync_objcg **out, int max)
{
	int n = 0;

	if (!st)
		return 0;
	for (int i = 0; i < KSYNC__OC_ENTRIES; i++) {
		if (!st->group[i] || !!(st->slots & (1u << i)) == parked)
			continue;
		if (n < max && out)
			out[n] = st->objcg[i];
		n++;
	}
	return n;
}
