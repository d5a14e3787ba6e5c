/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_read.h - SRCU's slots and the read side's slow paths.
 *
 * THEORY OF OPERATION (the read side; the grace periods' half is in
 * impl/srcu_gp.h)
 *
 * Slots. Each (thread, domain) pair has a slot with one word per index:
 * word i is 0 until the slot is on the domain's list; then it holds REG (1)
 * plus ONE (2) per open section of the thread counted on index i. Every
 * lock, nested or not, counts on the current index i (the read word's
 * KSYNC__SRCU_IDX_OF()), as the kernel's per-index counters do, in word i:
 * an outermost one stores the
 * constant REG + ONE (a value that does not depend on a previous load), a
 * nested one adds ONE. An unlock takes ONE off the word of the index its
 * lock returned (ksync_srcu_read_unlock()), or off the word its token names
 * (ksync_srcu_read_unlock_fast(): the token is that word's address), so the
 * two forms count alike and mix in any order. Sections that overlap hand
 * over hand move to the new index after a flip, and cannot hold off a grace
 * period forever; a word never changes index, so a token stays valid for
 * its section's lifetime. Only the owner writes the words, with plain
 * stores. Sections with no owner (srcu_down_read / srcu_up_read, and readers
 * whose slot allocation failed) count in the domain's shared
 * lock[i]/unlock[i] with fully ordered read-modify-writes.
 *
 * Where the words are. The read side finds them with no lookup: a domain
 * set up while one of KSYNC_SRCU_DIRECT - 1 entries is free owns entry k of
 * every thread's TLS words (ksync_srcu_self.words[k]) and its key is that
 * entry's offset. The domain's read word (ssp->idx) holds the key, the
 * current index and the mode, so that one load gives the offset of the
 * word of the current index (KSYNC__SRCU_IDX_BIT in impl/srcu_types.h);
 * the fast path reads that word and takes the slow path unless it is
 * registered. A thread's first section registers
 * the entry (slot on the list, then the word to REG); thread exit
 * unregisters every entry before the TLS goes away (the exit hook, so the
 * direct words are used only once it is armed); cleanup puts the entry of
 * each thread back to 0 before it is handed to the next domain. Entry 0 is
 * never registered: the key of a domain without direct words (more than
 * KSYNC_SRCU_DIRECT - 1 at once) or not set up yet, whose words live in the
 * slot: the inline paths, having found entry 0's word unregistered, look at
 * the first two entries of the per-thread cache, and the slow path at the
 * rest.
 *
 *
 * Private: include <ksync/srcu.h>, which declares and documents every public
 * call. The slow paths are split by job into a chain of headers, each
 * including the one before it: impl/srcu_process.h (process-wide objects,
 * thread exit, fork, domain setup), impl/srcu_read.h (slots and the read
 * side's slow paths), impl/srcu_gp.h (grace periods), impl/srcu_callbacks.h
 * (running callbacks), impl/srcu_helper.h (the helper thread, call_srcu,
 * barrier, polls, cleanup). Their function bodies are compiled where
 * KSYNC__SRCU_BODIES is 1 (impl/srcu_types.h): in every translation unit by
 * default (each carries a static copy, all state lives in the domain, its
 * slots and a few weak process-wide objects), or only in lib/srcu/srcu.c
 * for the compiled form (KSYNC_SRCU_EXTERN).
 */
#ifndef KSYNC_IMPL_SRCU_READ_H
#define KSYNC_IMPL_SRCU_READ_H

#include <ksync/impl/srcu_process.h>

KSYNC_EXTERN_C_BEGIN

/*
 * W2, after an unlock's store: wake a grace period that sleeps waiting for
 * readers (the protocol is described at ksync__srcu_wake_gp()).
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__srcu_unlock_wake(struct ksync_srcu_struct *ssp)
{
	if (ksync_unlikely(KSYNC_READ_ONCE(ssp->gp_waiting) == KSYNC__SRCU_GP_SLEEPING))
		ksync__srcu_wake_gp(ssp);
}

#if KSYNC__SRCU_BODIES

/* ------------------------------------------------------------------------ */
/* Slots                                                                    */

/* Store a slot word of this thread (a lock or an unlock), in the domain's mode. */
#define KSYNC__SRCU_STORE_WORD(id, p, v)                                       \
	do {                                                                   \
		if ((id) & 1)                                                  \
			ksync_smp_store_release((p), (v)); /* C on unlocks */ \
		else                                                           \
			KSYNC_WRITE_ONCE(*(p), (v));                           \
	} while (0)

/* Move (or insert) the domain @id to the front of this thread's cache. */
static KSYNC_UNUSED void ksync__srcu_cache_insert(unsigned long id, struct ksync_srcu_slot *s)
{
	struct ksync_srcu_thread *t = &ksync_srcu_self;
	int i;
	for (i = 0; i < KSYNC_SRCU_TCACHE - 1; i++)
		if (t->ent[i].key == ~id)
			break;
	for (; i > 0; i--)
		t->ent[i] = t->ent[i - 1];
	t->ent[0].key = ~id;
	t->ent[0].slot = s;
}

/* Free this thread's slots of domains that were cleaned up (global lock held). */
static KSYNC_UNUSED void ksync__srcu_gc_slots(void)
{
	struct ksync_srcu_thread *t = &ksync_srcu_self;
	struct ksync_srcu_slot **pp = &t->slots;
	while (*pp) {
		struct ksync_srcu_slot *s = *pp;
		if (s->ssp) {
			pp = &s->tnext;
			continue;
		}
		*pp = s->tnext;
		for (int i = 0; i < KSYNC_SRCU_TCACHE; i++)
			if (t->ent[i].slot == s)
				t->ent[i].key = 0, t->ent[i].slot = NULL;
		free(s);
	}
}

/*
 * This thread's slot for @ssp: from the thread's list (refilling the cache),
 * or newly allocated when @alloc. NULL when out of memory or exiting: the
 * caller then counts in the shared slot.
 */
static KSYNC_UNUSED struct ksync_srcu_slot *ksync__srcu_get_slot(struct ksync_srcu_struct *ssp,
								 bool alloc)
{
	unsigned long id = ksync__srcu_ensure_init(ssp);
	struct ksync_srcu_thread *t = &ksync_srcu_self;
	struct ksync_srcu_slot *s = ksync__srcu_cached_slot(id);

	if (s) {
		ksync__srcu_cache_insert(id, s);
		return s;
	}
	for (s = t->slots; s; s = s->tnext) {
		if (s->id == id) {
			ksync__srcu_cache_insert(id, s);
			return s;
		}
	}
	if (!alloc || t->state == KSYNC__SRCU_THREAD_EXITED)
		return NULL;
	s = (struct ksync_srcu_slot *)KSYNC__ALLOC(aligned_alloc(KSYNC_CACHELINE_SIZE, sizeof(*s)));
	if (!s)
		return NULL;
	memset((void *)s, 0, sizeof(*s));
	s->id = id;
	s->ssp = ssp;
	ksync__mutex_lock(&ksync_srcu_global_lock);
	ksync__srcu_gc_slots();
	if (t->state == KSYNC__SRCU_THREAD_FRESH) {
		ksync__srcu_proc_init();
		if (ksync_srcu_proc_ready &&
		    pthread_setspecific(ksync_srcu_key, (void *)t) == 0)
			t->state = KSYNC__SRCU_THREAD_ARMED;
	}
	/*
	 * The direct words need the exit hook: at this thread's exit they
	 * leave the domain's list before its TLS goes away. They are free:
	 * only this domain uses entry k, and cleanup clears it.
	 */
	unsigned long k = ssp->key / sizeof(struct ksync_srcu_words);
	s->w = (k && t->state == KSYNC__SRCU_THREAD_ARMED) ? t->words[k].ctr : s->own;
	ksync__mutex_lock(&ssp->lock);
	ksync_list_add(&s->dnode, &ssp->slots);
	ksync_ulong_store(&ssp->nr_slots, ssp->nr_slots + 1);
	/* Registered (no section): from now on the read side's fast path takes it. */
	KSYNC__SRCU_STORE_WORD(id, &s->w[0], KSYNC__SRCU_REG);
	KSYNC__SRCU_STORE_WORD(id, &s->w[1], KSYNC__SRCU_REG);
	pthread_mutex_unlock(&ssp->lock);
	/*
	 * R: the slot is counted before this thread's first section of @ssp
	 * reads anything; pairs with the token cmpxchg that precedes the check
	 * of an idle grace period (ksync__srcu_no_readers()).
	 */
	ksync_smp_mb();
	s->tnext = t->slots;
	t->slots = s;
	pthread_mutex_unlock(&ksync_srcu_global_lock);
	ksync__srcu_cache_insert(id, s);
	return s;
}

/*
 * A lock on @idx in this thread's slot @s (see "Slots"), in the slot's word
 * of @idx. The read side's slow path. Returns the word (a
 * ksync_srcu_read_lock_fast() token).
 */
static KSYNC_UNUSED unsigned long *ksync__srcu_slot_lock(struct ksync_srcu_slot *s, unsigned long id, int idx)
{
	unsigned long *p = &s->w[idx], w = *p;

	w = KSYNC__SRCU_BUSY(w) ? w + KSYNC__SRCU_ONE : KSYNC__SRCU_REG + KSYNC__SRCU_ONE;
	KSYNC__SRCU_STORE_WORD(id, p, w);
	if (id & 1)
		ksync_smp_mb(); /* B: pairs with M0 in ksync__srcu_gp_wait_readers() */
	else
		ksync_barrier(); /* B: promoted by membarrier M0 */
	return p;
}

/*
 * Waiting for readers (gp_waiting, enum ksync__srcu_gp_waiting: none, a
 * grace period waits, it sleeps on the futex word gp_waiting). The waiter spins, yields, then
 * sleeps; a sleeper is woken by the reader unlock that may end its wait,
 * instead of sleeping its time out (with more runnable threads than CPUs the
 * sleep got the updater the CPU back only when a reader's time slice ended).
 *
 * W1 (the sleeper): store SLEEPING, then a heavy barrier (membarrier, or a full
 * fence in fenced mode), then scan again, then sleep while the word is SLEEPING.
 * W2 (every unlock): store its lock word, then load gp_waiting; on SLEEPING, move
 * it to WAITING (cmpxchg: one waker) and wake. In membarrier mode W1's membarrier
 * puts a full barrier on every running reader between W1's store and scan,
 * so either the scan sees the unlock or the unlock sees SLEEPING: no lost wake-up.
 * In fenced mode the unlock's release store may pass its load of the flag,
 * so a wake-up can be missed; the sleep's timeout (the back-off's, 1 us
 * doubling to 1 ms) bounds that, as it bounded every wait before.
 */
KSYNC_SRCU_API KSYNC_NOINLINE void ksync__srcu_wake_gp(struct ksync_srcu_struct *ssp)
{
	int v = KSYNC__SRCU_GP_SLEEPING;

	/* fully ordered; the waiter's futex wait re-reads the word */
	if (ksync__try_cmpxchg_int_full(&ssp->gp_waiting, &v, KSYNC__SRCU_GP_WAITING))
		ksync__futex_wake(&ssp->gp_waiting, 1);
}

/*
 * This thread's sections of domain @id counted in the shared slot on index
 * @idx: how many (those of domains past the per-thread table count for every
 * domain, so that an unlock still finds them), and counting one more
 * (@delta 1) or one less (-1).
 */
static KSYNC_ALWAYS_INLINE bool ksync__srcu_shared_ent_used(int i)
{
	return ksync_srcu_self.shared[i].depth[0] || ksync_srcu_self.shared[i].depth[1];
}

static KSYNC_UNUSED unsigned long ksync__srcu_shared_depth(unsigned long id, int idx)
{
	unsigned long n = ksync_srcu_self.shared_other[idx];

	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++)
		if (ksync_srcu_self.shared[i].id == id && ksync__srcu_shared_ent_used(i))
			return n + ksync_srcu_self.shared[i].depth[idx];
	return n;
}

static KSYNC_UNUSED void ksync__srcu_shared_count(unsigned long id, int idx, int delta)
{
	int free_ent = -1;

	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++) {
		if (ksync__srcu_shared_ent_used(i) && ksync_srcu_self.shared[i].id == id) {
			if (delta > 0 || ksync_srcu_self.shared[i].depth[idx]) {
				ksync_srcu_self.shared[i].depth[idx] += (unsigned long)(long)delta;
				return;
			}
			break; /* this one is counted in shared_other */
		}
		if (!ksync__srcu_shared_ent_used(i) && free_ent < 0)
			free_ent = i;
	}
	if (delta > 0 && free_ent >= 0) {
		ksync_srcu_self.shared[free_ent].id = id;
		ksync_srcu_self.shared[free_ent].depth[idx] = 1;
	} else {
		ksync_srcu_self.shared_other[idx] += (unsigned long)(long)delta;
	}
}

/*
 * The slot of the domain @id if it is in the first two entries of this
 * thread's cache, else NULL: the slow path's own fast path, for domains
 * past the direct words (a lookup that moves nothing, so two such domains
 * used in turn both stay here; id 0, a domain not set up, matches no entry).
 */
static KSYNC_ALWAYS_INLINE struct ksync_srcu_slot *ksync__srcu_recent_slot(unsigned long id)
{
	const struct ksync_srcu_tcache_ent *e = ksync_srcu_self.ent;

	if (e[0].key == ~id)
		return e[0].slot;
	return e[1].key == ~id ? e[1].slot : NULL;
}

/*
 * The slow path of both lock forms: counts one section of @ssp on the
 * current index, stores that index in *@idxp and returns the slot word that
 * counts it, or NULL when the section went to the shared counters (no slot).
 */
static KSYNC_UNUSED unsigned long *ksync__srcu_lock_any(struct ksync_srcu_struct *ssp, int *idxp)
{
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	struct ksync_srcu_slot *s = ksync__srcu_recent_slot(id);

	if (!s) {
		s = ksync__srcu_get_slot(ssp, true);
		id = KSYNC_READ_ONCE(ssp->id);
	}
	int idx = KSYNC__SRCU_IDX_OF(KSYNC_READ_ONCE(ssp->idx));

	*idxp = idx;
	if (!s) {
		/* B: fully ordered RMW, pairs with M0 */
		(void)ksync_ulong_fetch_add(&ssp->shared.lock[idx], 1);
		ksync__srcu_shared_count(id, idx, 1); /* lets this thread's unlocks reach the shared slot */
		return NULL;
	}
	return ksync__srcu_slot_lock(s, id, idx);
}

KSYNC_SRCU_API KSYNC_NOINLINE int ksync__srcu_read_lock_slow(struct ksync_srcu_struct *ssp)
{
	int idx;

	(void)ksync__srcu_lock_any(ssp, &idx);
	return idx;
}

/*
 * ksync_srcu_read_lock_fast()'s slow path. A section counted in the shared
 * counters gets a token naming the word of its index in entry 0 of the
 * direct words, which is never registered and so stays 0: its unlock fails
 * the inline check and comes here, where ksync__srcu_read_unlock_slow()
 * finds the shared count.
 */
KSYNC_SRCU_API KSYNC_NOINLINE struct ksync_srcu_ctr *ksync__srcu_read_lock_fast_slow(struct ksync_srcu_struct *ssp)
{
	int idx;
	unsigned long *p = ksync__srcu_lock_any(ssp, &idx);

	if (!p)
		p = &ksync_srcu_self.words[0].ctr[idx];
	return (struct ksync_srcu_ctr *)p;
}

/*
 * Count one unlock of @idx in the shared slot if it has an open section on
 * that index; false (nothing counted) otherwise. The cmpxchg keeps
 * U(shared) <= L(shared) whatever the callers do.
 */
KSYNC_SRCU_API bool ksync__srcu_shared_unlock(struct ksync_srcu_struct *ssp, int idx)
{
	unsigned long u = ksync_ulong_load(&ssp->shared.unlock[idx]);
	for (;;) {
		unsigned long l = ksync_ulong_load(&ssp->shared.lock[idx]);
		if ((long)(l - u) <= 0)
			return false;
		/* C: fully ordered, pairs with the acquire sums and M_end */
		if (ksync_ulong_try_cmpxchg(&ssp->shared.unlock[idx], &u, u + 1))
			return true;
	}
}

KSYNC_SRCU_API KSYNC_NOINLINE void ksync__srcu_read_unlock_slow(struct ksync_srcu_struct *ssp,
								     int idx)
{
	if (KSYNC_WARN_ONCE((unsigned)idx > 1, "ksync_srcu_read_unlock(): index is not 0 or 1"))
		return;
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	struct ksync_srcu_slot *s = ksync__srcu_recent_slot(id);

	if (!s)
		s = ksync__srcu_get_slot(ssp, false);
	if (s && KSYNC__SRCU_BUSY(s->w[idx])) {
		unsigned long *p = &s->w[idx];
		if (!(id & 1))
			ksync_barrier(); /* C: promoted by membarrier */
		KSYNC__SRCU_STORE_WORD(id, p, *p - KSYNC__SRCU_ONE); /* C: release in fenced mode */
		ksync__srcu_unlock_wake(ssp); /* W2 */
		return;
	}
	/*
	 * A section counted in the shared slot (out of memory at lock time)?
	 * Only a thread that has such sections may take an unlock off the
	 * shared counters: anything else would end another thread's section,
	 * or a srcu_down_read() one, early.
	 */
	if (ksync__srcu_shared_depth(id, idx) && ksync__srcu_shared_unlock(ssp, idx)) {
		ksync__srcu_shared_count(id, idx, -1);
		ksync__srcu_unlock_wake(ssp); /* W2 (the cmpxchg was fully ordered) */
		return;
	}
	KSYNC_WARN_ONCE(1, "ksync_srcu_read_unlock(): index not returned by a "
			   "ksync_srcu_read_lock() of this thread; ignored");
}

/*
 * The index of the token @tok when it is one of this thread's words of @ssp
 * (its direct words, its slot's words, or entry 0's, the token of a section
 * in the shared counters); -1 otherwise. KSYNC_DEBUG builds check every
 * ksync_srcu_read_unlock_fast() with it.
 */
KSYNC_SRCU_API int ksync__srcu_token_index(const struct ksync_srcu_struct *ssp,
					   const struct ksync_srcu_ctr *tok)
{
	const unsigned long *p = (const unsigned long *)tok;
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	const unsigned long *d = ksync__srcu_direct_word(KSYNC_READ_ONCE(ssp->key));
	const unsigned long *z = ksync_srcu_self.words[0].ctr;

	if (p == z || p == z + 1)
		return (int)(p - z);
	if (d != z && (p == d || p == d + 1))
		return (int)(p - d);
	const struct ksync_srcu_slot *s = id ? ksync__srcu_cached_slot(id) : NULL;
	if (!s && id)
		for (s = ksync_srcu_self.slots; s && s->id != id; s = s->tnext)
			;
	return s && (p == s->w || p == s->w + 1) ? (int)(p - s->w) : -1;
}

/*
 * ksync_srcu_read_unlock_fast()'s slow path: misuse (a token of another
 * domain or thread, an unbalanced unlock), a section in the shared
 * counters. Once the token is known to be this thread's word of index i,
 * the unlock is the classic form's of index i: both count in the same word.
 */
KSYNC_SRCU_API KSYNC_NOINLINE void ksync__srcu_read_unlock_fast_slow(struct ksync_srcu_struct *ssp,
								      struct ksync_srcu_ctr *tok)
{
	int idx = ksync__srcu_token_index(ssp, tok);

	if (KSYNC_WARN_ONCE(idx < 0, "ksync_srcu_read_unlock_fast(): token of another domain or thread; ignored"))
		return;
	if (KSYNC_WARN_ONCE(!KSYNC__SRCU_BUSY(*(const unsigned long *)tok) &&
				    !ksync__srcu_shared_depth(KSYNC_READ_ONCE(ssp->id), idx),
			    "ksync_srcu_read_unlock_fast(): no open section of this thread holds "
			    "this token; ignored"))
		return;
	ksync__srcu_read_unlock_slow(ssp, idx);
}

/* Is this thread inside a ksync_srcu_read_lock() section of @ssp? */
KSYNC_SRCU_API int ksync__srcu_self_inside(const struct ksync_srcu_struct *ssp)
{
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	if (!id)
		return 0;
	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++) /* sections in the shared slot */
		if (ksync_srcu_self.shared[i].id == id && ksync__srcu_shared_ent_used(i))
			return 1;
	const struct ksync_srcu_slot *s = ksync__srcu_cached_slot(id);
	if (!s) {
		for (s = ksync_srcu_self.slots; s; s = s->tnext)
			if (s->id == id)
				break;
		if (!s)
			return 0;
	}
	return KSYNC__SRCU_BUSY(s->w[0]) || KSYNC__SRCU_BUSY(s->w[1]);
}


#endif /* KSYNC__SRCU_BODIES */

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_READ_H */
