/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_gp.h - SRCU's grace periods: scans, the two waits, the
 * token, polled cookies, synchronize.
 *
 * THEORY OF OPERATION (the grace periods; the slots they scan are described
 * in impl/srcu_read.h)
 *
 * Scans. Index i has drained (ksync__srcu_drained) when no slot word is
 * inside i and shared unlock[i] == shared lock[i]. The scan runs under ssp->lock, so no
 * slot is added or freed meanwhile (a slot added later belongs to a reader
 * that starts later). It loads shared unlock[i] before lock[i] (A): since
 * each up_read follows its down_read in the counters' global order, every
 * counted unlock has its lock counted, and equality means no counted
 * section is open.
 *
 * Readers the scans do not see. A grace period starts with M0, a full
 * barrier on every thread of the process: membarrier(PRIVATE_EXPEDITED); in
 * fenced mode, the updater's smp_mb against the reader's own smp_mb B. Take
 * a reader R and the point P at which M0's barrier hits R's thread (fenced
 * mode: the store-buffering pattern of B against M0). If R's lock store
 * precedes P, it is visible to every scan after M0, and the scan sees it or
 * a later value of R's word, which stays busy until every section counted in
 * it has ended (a word counts sections of one index only): R is waited for. Otherwise R's lock store, and so every access of
 * R's section (after B), follows P, which follows everything the updater
 * did before M0 (the removal): R cannot obtain the removed object. A reader
 * that sees the index flipped by this grace period is in the second case
 * too: the flip is stored after M0, so R's load of it follows P. Hence M0
 * before the scans is the only barrier the grace period needs for readers
 * entering; none is needed around the flip.
 *
 * Two waits. Readers seen by the scans may be on either index: a reader that
 * loaded the index before the previous grace period's flip and stalled before
 * its lock store (a straggler) counts on the index that is now inactive. So
 * the grace period waits until the inactive index drains, flips the index,
 * then waits until the formerly active index drains. New readers go to the
 * new index (nested ones too) and cannot hold off the second wait;
 * stragglers are at most one per thread per flip (a thread has one lock in
 * progress at a time, whichever word it goes to). Without the first wait a straggler that entered
 * before this grace period would be missed (the model's mutant 1 shows it).
 *
 * End. M_end orders the scans, which saw the readers' unlock stores, before
 * what the caller does next (frees): a reader's section accesses precede its
 * unlock store (release C in fenced mode; on TSO a compiler barrier suffices,
 * as no access moves after a later store); elsewhere M_end is a membarrier,
 * which waits for each running reader's earlier accesses.
 *
 * Barrier pairs: B (reader, after the lock store) with M0; C (reader, before
 * the unlock store) with the acquire loads of the scans and M_end; A (between
 * the shared sums) with the full ordering of down_read/up_read's RMWs.
 * ThreadSanitizer builds use fenced mode, where the reader's stores are
 * releases and the scans' loads acquires: the edge it needs (reader's
 * accesses before the updater's free) is then visible to it.
 *
 * The Promela model tests/model/srcu.pml checks this argument on TSO
 * in both modes (store buffers, membarrier as a drain of all of them, scans
 * interleaved with readers, stragglers), with one word per index (ALTW: a
 * nested lock loads the index again and, after a flip, counts in the word
 * of the new index; the outer section may end first), and rejects five
 * mutants: no first wait, no second wait, no M0, a fenced reader without B,
 * and scans that read the word of the other index.
 *
 * Sharing. gp_seq = 2 * completed + (1 while a grace period runs). A caller
 * takes a cookie (the seq value at which a grace period that starts after its
 * call will have ended), then under gp_mutex runs grace periods until gp_seq
 * reaches the cookie: callers queued on the mutex behind a running grace
 * period are served together by the next one. The odd value is the token of
 * the grace period in progress, taken by a fully ordered cmpxchg; a domain
 * with no slot and balanced shared counters runs its grace period without
 * the mutex, as the token's cmpxchg and a check (ksync__srcu_no_readers()
 * says why no reader is missed), so the mutex holder may wait for the token.
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
#ifndef KSYNC_IMPL_SRCU_GP_H
#define KSYNC_IMPL_SRCU_GP_H

#include <ksync/impl/srcu_read.h>

KSYNC_EXTERN_C_BEGIN

#if KSYNC__SRCU_BODIES

/* ------------------------------------------------------------------------ */
/* Grace periods                                                            */

/* Are the shared counters of index @idx balanced (no section counted there open)? */
static KSYNC_UNUSED bool ksync__srcu_shared_drained(struct ksync_srcu_struct *ssp, int idx)
{
	/* C pairs with this acquire load: the sections' accesses precede it. */
	unsigned long u = ksync_smp_load_acquire(&ssp->shared.unlock[idx]);
	/*
	 * A: every unlock counted above has its lock counted below (the shared
	 * counters change only by fully ordered read-modify-writes).
	 */
	ksync_smp_rmb();
	return ksync_ulong_load(&ssp->shared.lock[idx]) == u;
}

/* Has index @idx drained? See "Scans" in the theory of operation. */
static KSYNC_UNUSED bool ksync__srcu_drained(struct ksync_srcu_struct *ssp, int idx)
{
	bool drained;
	struct ksync_list_head *pos;

	ksync__mutex_lock(&ssp->lock);
	drained = ksync__srcu_shared_drained(ssp, idx);
	ksync_list_for_each(pos, &ssp->slots) {
		struct ksync_srcu_slot *s = ksync_list_entry(pos, struct ksync_srcu_slot, dnode);
		/* the slot's word of index @idx; pairs with C */
		if (KSYNC__SRCU_BUSY(ksync_smp_load_acquire(&s->w[idx])))
			drained = false;
	}
	pthread_mutex_unlock(&ssp->lock);
	return drained;
}

static KSYNC_UNUSED void ksync__srcu_backoff(unsigned long n)
{
	if (n < 16) {
		for (int i = 0; i < 32; i++)
			ksync_cpu_relax();
	} else {
		sched_yield();
	}
}

static KSYNC_UNUSED void ksync__srcu_wait_idx(struct ksync_srcu_struct *ssp, unsigned long id,
					      int idx)
{
	for (unsigned long n = 0; !ksync__srcu_drained(ssp, idx); n++) {
		if (n == 0)
			KSYNC_WRITE_ONCE(ssp->gp_waiting, KSYNC__SRCU_GP_WAITING);
		if (ksync__sched_yield(&ksync_srcu_id_counter))
			continue; /* a scheduler runs the readers instead (<ksync/fuzzing.h>) */
		if (n < 24) {
			ksync__srcu_backoff(n);
			continue;
		}
		unsigned long us = n < 34 ? 1UL << (n - 24) : 1000UL;
		struct timespec ts = { 0, (long)(us * 1000) };
		KSYNC_WRITE_ONCE(ssp->gp_waiting, KSYNC__SRCU_GP_SLEEPING);
		ksync__srcu_heavy_mb(id); /* W1: pairs with W2 in every unlock */
		if (!ksync__srcu_drained(ssp, idx))
			(void)ksync__futex_wait(&ssp->gp_waiting, KSYNC__SRCU_GP_SLEEPING, &ts);
		int v = KSYNC__SRCU_GP_SLEEPING;
		(void)ksync__try_cmpxchg_int_full(&ssp->gp_waiting, &v, KSYNC__SRCU_GP_WAITING); /* no reader woke us */
	}
}

/*
 * Does @ssp have no reader at all, now: no thread has a slot for it and the
 * shared counters are balanced? Then a grace period has nothing to wait for,
 * and no membarrier, flip or scan is needed.
 *
 * Called without any lock, by the holder of the grace-period token, after
 * the fully ordered cmpxchg that took it (ksync__srcu_gp_begin()). Why no
 * reader can be missed: a thread's first section of @ssp counts its slot in
 * nr_slots, then runs a full barrier (R, in ksync__srcu_get_slot()), then
 * stores its lock word and reads. If this check does not see the count, R
 * and the token cmpxchg order the reader's reads after everything the
 * updater did before taking the token (store buffering with full barriers
 * on both sides): the reader cannot obtain what was removed. A slot leaves
 * nr_slots only after its owner's last unlock (thread exit, cleanup), with a
 * release that the acquire load here pairs with. The shared counters: each
 * shared reader's fully ordered increment of lock[] (B) pairs with the
 * token cmpxchg the same way; unlock[] before lock[] as in
 * ksync__srcu_drained() (A).
 */
static KSYNC_UNUSED bool ksync__srcu_no_readers(struct ksync_srcu_struct *ssp)
{
	if (ksync_smp_load_acquire(&ssp->nr_slots) != 0) /* pairs with detach's release */
		return false;
	return ksync__srcu_shared_drained(ssp, 0) && ksync__srcu_shared_drained(ssp, 1);
}

/*
 * The grace-period token: gp_seq odd. Whoever moves gp_seq from even to odd
 * (fully ordered cmpxchg) runs the one grace period in progress, and ends it
 * by storing the next even value. Callers of ksync__srcu_gp_until() queue on
 * gp_mutex and take the token under it; an idle domain's grace period takes
 * it without the mutex (ksync__srcu_gp_try_idle()), so a mutex holder may
 * find it taken and waits here (briefly: such a holder only checks, unless
 * a reader registered meanwhile). Returns the odd value taken.
 */
static KSYNC_UNUSED unsigned long ksync__srcu_gp_begin(struct ksync_srcu_struct *ssp)
{
	for (unsigned long n = 0;; n++) {
		unsigned long s = ksync_ulong_load(&ssp->gp_seq);
		/* fully ordered: the caller's removals precede the scans and checks; pairs with R */
		if (!(s & 1) && ksync_ulong_try_cmpxchg(&ssp->gp_seq, &s, s + 1))
			return s + 1;
		if (ksync__sched_yield(&ssp->gp_seq))
			continue; /* a scheduler runs the holder instead (<ksync/fuzzing.h>) */
		if (n < 24) {
			ksync__srcu_backoff(n);
			continue;
		}
		struct timespec ts = { 0, (long)((n < 34 ? 1UL << (n - 24) : 1000UL) * 1000) };
		/*
		 * nanosleep() is a cancellation point, and the caller may hold
		 * gp_mutex: cancelled here, it would leave the mutex held forever.
		 */
		int cancel;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
		nanosleep(&ts, NULL);
		pthread_setcancelstate(cancel, NULL);
	}
}

/*
 * Ending the grace period of token @odd. Release: pairs with the acquire in
 * ksync_poll_state_synchronize_srcu(); the scans' acquire loads and M_end
 * precede it.
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__srcu_gp_end(struct ksync_srcu_struct *ssp,
								unsigned long odd)
{
	ksync_smp_store_release(&ssp->gp_seq, odd + 1);
}

/* The waits of a grace period whose domain has readers. Token held. */
static KSYNC_UNUSED void ksync__srcu_gp_wait_readers(struct ksync_srcu_struct *ssp)
{
	unsigned long id = ssp->id;

	/*
	 * The waits below may sleep; a thread cancelled in one would leave
	 * the token held and a grace period half run. (Here, not around the
	 * whole synchronize: the idle path needs no such care.)
	 */
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	ksync__srcu_heavy_mb(id); /* M0: pairs with every reader's B */
	int cur = KSYNC__SRCU_IDX_OF(KSYNC_READ_ONCE(ssp->idx));
	if (!KSYNC_PLANT(SRCU_SKIP_FIRST_WAIT)) /* the torture test's mutant */
		ksync__srcu_wait_idx(ssp, id, cur ^ 1);
	KSYNC_WRITE_ONCE(ssp->idx, ssp->idx ^ KSYNC__SRCU_FLIP); /* the flip (key and mode stay) */
	if (!KSYNC_PLANT(SRCU_SKIP_SECOND_WAIT))
		ksync__srcu_wait_idx(ssp, id, cur);
	/* M_end: pairs with the readers' C (see "End") */
	if (!(id & 1) && !KSYNC__SRCU_TSO)
		ksync__srcu_heavy_mb(id);
	else
		ksync_smp_mb();
	KSYNC_WRITE_ONCE(ssp->gp_waiting, KSYNC__SRCU_GP_NOT_WAITING);
	pthread_setcancelstate(cancel, NULL);
}

/* One full grace period. Under gp_mutex. */
static KSYNC_UNUSED void ksync__srcu_gp_one(struct ksync_srcu_struct *ssp)
{
	unsigned long odd = ksync__srcu_gp_begin(ssp);

	if (!ksync__srcu_no_readers(ssp))
		ksync__srcu_gp_wait_readers(ssp);
	ksync__srcu_gp_end(ssp, odd);
}

/*
 * A grace period of an idle domain (no slot, shared counters balanced),
 * without gp_mutex: one cmpxchg and a few loads. False, having done nothing,
 * when the domain is not idle or a grace period is running; true once a
 * grace period that began after the call has ended (a reader that
 * registered between the first check and the token makes it a full one).
 */
static KSYNC_UNUSED bool ksync__srcu_gp_try_idle(struct ksync_srcu_struct *ssp)
{
	if (!ksync__srcu_no_readers(ssp)) /* a hint; the check that counts is below */
		return false;
	KSYNC_TEST_POINT(SRCU_IDLE_GP);
	unsigned long s = ksync_ulong_load(&ssp->gp_seq);
	/* fully ordered: the caller's removals precede the check below; pairs with R */
	if ((s & 1) || !ksync_ulong_try_cmpxchg(&ssp->gp_seq, &s, s + 1))
		return false;
	if (!ksync__srcu_no_readers(ssp))
		ksync__srcu_gp_wait_readers(ssp);
	ksync__srcu_gp_end(ssp, s + 1);
	return true;
}

/*
 * Has @ssp no reader but, perhaps, the calling thread, which is outside
 * every section of @ssp? Like ksync__srcu_no_readers(), with one slot
 * allowed: the caller's own (id @id). A thread counted in nr_slots stays
 * counted until it exits or the domain is cleaned up, so when the caller
 * owns a slot and nr_slots is 1, that slot is the caller's, and no other
 * thread has one; the caller reads its own words (only it writes them).
 * Same ordering argument as ksync__srcu_no_readers(): called after a fully
 * ordered RMW that pairs with R of any thread that registers later.
 */
static KSYNC_UNUSED bool ksync__srcu_no_other_readers(struct ksync_srcu_struct *ssp, unsigned long id)
{
	unsigned long n = ksync_smp_load_acquire(&ssp->nr_slots); /* pairs with detach's release */

	if (n > 1)
		return false;
	if (n == 1) {
		/* The caller's words: its direct ones when registered (non-zero), else its slot's. */
		const unsigned long *w = ksync__srcu_direct_word(KSYNC_READ_ONCE(ssp->key));

		if (w == ksync_srcu_self.words[0].ctr || !w[0]) {
			const struct ksync_srcu_slot *s = ksync__srcu_cached_slot(id);

			if (!s)
				for (s = ksync_srcu_self.slots; s && s->id != id; s = s->tnext)
					;
			if (!s)
				return false; /* another thread's slot */
			w = s->w;
		}
		if (KSYNC__SRCU_BUSY(w[0]) || KSYNC__SRCU_BUSY(w[1]))
			return false; /* the caller is inside */
	}
	/* the caller's own shared sections, if any, count here too */
	return ksync__srcu_shared_drained(ssp, 0) && ksync__srcu_shared_drained(ssp, 1);
}

/* ksync_try_synchronize_srcu(): see <ksync/srcu.h>. */
KSYNC_SRCU_API bool ksync_try_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	unsigned long id = ksync__srcu_ensure_init(ssp);

	/* A hint (most domains with readers fail here); the check that counts is below. */
	if (ksync_ulong_load(&ssp->nr_slots) > 1)
		return false;
	KSYNC_TEST_POINT(SRCU_IDLE_GP); /* the same window as an idle grace period's */
	unsigned long s = ksync_ulong_load(&ssp->gp_seq);
	/* fully ordered: the caller's removals precede the check below; pairs with R */
	if ((s & 1) || !ksync_ulong_try_cmpxchg(&ssp->gp_seq, &s, s + 1))
		return false;
	if (!ksync__srcu_no_other_readers(ssp, id)) {
		/*
		 * A reader: give the token back, the grace period forgotten
		 * (gp_seq back to even, as fork does). Nothing completed, so no
		 * cookie was satisfied; a waiter for the token takes it next.
		 */
		ksync_smp_store_release(&ssp->gp_seq, s);
		return false;
	}
	ksync__srcu_gp_end(ssp, s + 1);
	return true;
}

/* ksync_poll_state_synchronize_srcu(): see <ksync/srcu.h>. */
KSYNC_SRCU_API bool ksync_poll_state_synchronize_srcu(struct ksync_srcu_struct *ssp,
							   unsigned long cookie)
{
	/* Acquire: pairs with the fully ordered seq increment ending ksync__srcu_gp_one() */
	unsigned long seq = ksync_smp_load_acquire(&ssp->gp_seq);
	if (!ksync__srcu_seq_ge(seq, cookie))
		return false;
	ksync_smp_mb(); /* the caller's frees follow the check */
	return true;
}

/* ksync_get_state_synchronize_srcu(): see <ksync/srcu.h>. */
KSYNC_SRCU_API unsigned long ksync_get_state_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_ensure_init(ssp);
	ksync_smp_mb(); /* the caller's removals precede the read of gp_seq (and M0) */
	unsigned long seq = ksync_ulong_load(&ssp->gp_seq);
	return (seq + 3) & ~1UL;
}

/* Run grace periods until @cookie is reached; shares with concurrent callers. */
static KSYNC_UNUSED void ksync__srcu_gp_until(struct ksync_srcu_struct *ssp, unsigned long cookie)
{
	if (ksync_poll_state_synchronize_srcu(ssp, cookie))
		return;
	/* The cookie was taken before this call: a grace period run here satisfies it. */
	if (ksync__srcu_gp_try_idle(ssp) && ksync_poll_state_synchronize_srcu(ssp, cookie))
		return;
	ksync__mutex_lock(&ssp->gp_mutex);
	while (!ksync_poll_state_synchronize_srcu(ssp, cookie))
		ksync__srcu_gp_one(ssp);
	pthread_mutex_unlock(&ssp->gp_mutex);
}

/* ksync_synchronize_srcu(): see <ksync/srcu.h>. */
KSYNC_SRCU_API void ksync_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_ensure_init(ssp);
	/* An idle domain: no cookie needed, the grace period begins after this call. */
	if (ksync__srcu_gp_try_idle(ssp))
		return;
	if (KSYNC_WARN_ONCE(ksync__srcu_self_inside(ssp),
			    "ksync_synchronize_srcu() inside a read section of the same domain "
			    "(self-deadlock); not waiting"))
		return;
	ksync__srcu_gp_until(ssp, ksync_get_state_synchronize_srcu(ssp));
}

/* ksync_synchronize_srcu_expedited(): see <ksync/srcu.h>. */
KSYNC_SRCU_API void ksync_synchronize_srcu_expedited(struct ksync_srcu_struct *ssp)
{
	ksync_synchronize_srcu(ssp);
}


#endif /* KSYNC__SRCU_BODIES */

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_GP_H */
