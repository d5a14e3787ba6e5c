/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/srcu.h - Sleepable RCU with a registration-free, fence-free read side
 *
 * A &struct ksync_srcu_struct is one SRCU domain. Readers bracket their use of
 * protected data with ksync_srcu_read_lock()/ksync_srcu_read_unlock() (they may
 * block, sleep and nest, in several domains at once, from any thread, with no
 * registration call); updaters unpublish an object and then wait for every
 * pre-existing reader with ksync_synchronize_srcu(), or hand the object to
 * ksync_call_srcu() to be freed after a grace period by the domain's helper
 * thread.
 *
 * Read side. Each (thread, domain) pair owns two counter words, for up to
 * KSYNC_SRCU_DIRECT - 1 domains at a time in the thread's TLS at the domain's
 * key (one load away, no lookup), for more in a slot behind the slow path;
 * lock and unlock are plain stores to the owner's own words. In the default mode there is no locked instruction and no fence
 * on x86-64: the grace period pays with membarrier(2). Where membarrier is not
 * available (or when asked, see ksync_init_srcu_struct_flags() and the
 * KSYNC_SRCU_FENCED environment variable), a domain is created in fenced mode
 * and readers add a full barrier after lock and a release before unlock.
 * KSYNC_ATOMIC_BUILTINS builds (ThreadSanitizer) always use fenced mode.
 *
 * Memory: one 64-byte slot per (live thread, domain) the thread has used; a
 * thread's slots are folded into the domain and freed when the thread exits.
 * O(live threads) per domain, never O(threads ever seen).
 *
 * Callbacks: one helper thread per domain, started by the first
 * ksync_call_srcu() / ksync_start_poll_synchronize_srcu(), stopped by
 * ksync_cleanup_srcu_struct(). At most KSYNC_SRCU_CB_LIMIT_DEFAULT callbacks (or the
 * limit set by ksync_srcu_set_cb_limit()) wait per
 * domain: beyond that, call_srcu() blocks until the helper catches up, except
 * when called by a callback (of any domain) or from inside a
 * ksync_srcu_read_lock() section of the same domain on the calling thread
 * (where blocking could deadlock).
 *
 * fork(): the child may use every domain (readers, synchronize, call_srcu):
 * an atfork handler resets the locks, drops the slots of threads that do not
 * exist in the child (their ksync_srcu_read_lock() sections died with them),
 * forgets the helper threads (restarted lazily; callbacks still queued at
 * fork() run in both processes, a batch the parent's helper had already taken
 * only in the parent; the markers of srcu_barrier() calls that other threads
 * were waiting in are dropped, as those threads do not exist in the child),
 * and re-registers membarrier. A callback may itself call fork(): in the
 * child, its thread finishes the batch it was running (without the barrier
 * markers of other threads) and then ends, which ends the child with status
 * 0 unless the callback ended it first (exec, _exit). A srcu_down_read() section
 * open at fork() stays open in the child until the child ends it: grace
 * periods of that domain wait for it there.
 *
 * Cancellation: synchronize, barrier and a throttled call_srcu() are not
 * cancellation points (they disable cancellation while they wait, since a
 * thread cancelled there would leave a lock held or a marker queued).
 *
 * The algorithm and its proof are in the slow-path headers: the read side's
 * half in <ksync/impl/srcu_read.h>, the grace periods' in
 * <ksync/impl/srcu_gp.h>; the Promela model tests/model/srcu.pml checks them.
 *
 * Two forms, the same code: header-only (the default: include this header,
 * link nothing but CK and pthreads; each translation unit carries a static
 * copy of the slow paths), or compiled (define KSYNC_SRCU_EXTERN, as the
 * ksync::srcu CMake target and pkg-config ksync-srcu do, and link
 * libksync_srcu: one copy of the slow paths, and no slow-path system header
 * reaches the includer). Both may be mixed in one program.
 */
#ifndef KSYNC_SRCU_H
#define KSYNC_SRCU_H

#include <ksync/atomic.h>
#include <ksync/bug.h>
#include <ksync/compiler.h>
#include <ksync/impl/srcu_types.h>
#include <ksync/rcupdate.h>

#include <stdbool.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/* ------------------------------------------------------------------------ */
/* Update side: set-up, grace periods, callbacks, polls                      */

/**
 * ksync_init_srcu_struct() - initialise a dynamically allocated domain.
 * @ssp: the domain (any content)
 *
 * Not needed for KSYNC_DEFINE_SRCU() domains. Pair with
 * ksync_cleanup_srcu_struct() before freeing the memory.
 * Return: 0 on success, -ENOMEM if resources ran out.
 */
KSYNC_SRCU_API int ksync_init_srcu_struct(struct ksync_srcu_struct *ssp);

/**
 * ksync_init_srcu_struct_flags() - initialise a domain, choosing its mode.
 * @ssp: the domain (any content)
 * @flags: 0, or KSYNC_SRCU_FENCED to force the fenced read side
 *
 * Return: 0 (nothing here can run out of memory; slots are allocated by
 * readers, callbacks by the caller).
 */
KSYNC_SRCU_API int ksync_init_srcu_struct_flags(struct ksync_srcu_struct *ssp, unsigned int flags);

/**
 * ksync_cleanup_srcu_struct() - tear down a domain before its memory is freed.
 * @ssp: the domain
 *
 * Stops the helper thread and detaches every thread's slot. With readers
 * still inside, callbacks still queued, or from a callback of @ssp, it reports
 * the misuse (file and line) and leaks the domain instead: the memory must
 * then not be freed. Afterwards the domain may be initialised again.
 */
KSYNC_SRCU_API void ksync_cleanup_srcu_struct(struct ksync_srcu_struct *ssp);

/**
 * ksync_synchronize_srcu() - wait until every read section of @ssp that began
 * before this call has ended.
 * @ssp: the domain
 *
 * Sleeps (never in scheduler-tick steps while no reader is in the way: a
 * domain no thread reads costs one cmpxchg and a few loads, one whose
 * readers are all outside their sections one membarrier and two scans). Concurrent callers share
 * grace periods. Calling it inside a ksync_srcu_read_lock() section of @ssp on
 * this thread would never return: it is reported (file and line) and returns
 * at once instead, waiting for nothing.
 *
 * Ordering: everything the caller did before is visible to every reader that
 * the grace period does not wait for; everything every waited-for reader did
 * in its section happens before the return.
 */
KSYNC_SRCU_API void ksync_synchronize_srcu(struct ksync_srcu_struct *ssp);

/**
 * ksync_synchronize_srcu_expedited() - ksync_synchronize_srcu(); already as
 * fast as the machine allows.
 * @ssp: the domain
 */
KSYNC_SRCU_API void ksync_synchronize_srcu_expedited(struct ksync_srcu_struct *ssp);

/**
 * ksync_call_srcu() - call @func(@head) after a grace period of @ssp.
 * @ssp: the domain
 * @head: a head embedded in the object; untouched by the caller until @func runs
 * @func: the callback; runs on the domain's helper thread, outside any lock,
 *        and may call ksync_call_srcu() again; on a domain that asked for it
 *        (ksync_srcu_set_cb_in_caller()), possibly in a later
 *        ksync_call_srcu() of another thread or of this one, before it queues
 *
 * Never waits for a grace period. When more than the domain's limit
 * (ksync_srcu_set_cb_limit(), default KSYNC_SRCU_CB_LIMIT_DEFAULT)
 * callbacks wait, the caller blocks until the helper catches up, unless it is
 * a callback (of any domain) or inside a ksync_srcu_read_lock() section of
 * @ssp. Queueing a
 * head that is already queued is reported (file and line) and ignored in
 * KSYNC_DEBUG builds.
 *
 * Ordering: everything the caller did before the call happens before the
 * grace period, and everything every reader it waited for did happens
 * before @func runs. The callbacks of a domain run one at a time, in the
 * order their ksync_call_srcu() calls were ordered (a callback queued by a
 * thread runs after those it queued before).
 */
KSYNC_SRCU_API void ksync_call_srcu(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *head, void (*func)(struct ksync_rcu_head *head));

/**
 * ksync_srcu_barrier() - wait until every callback queued on @ssp before this
 * call has run.
 * @ssp: the domain
 *
 * Also waits for callbacks that those callbacks queue, and so on, until a
 * round of callbacks queues none (the kernel does not promise this; a chain
 * of callbacks that re-queue themselves forever makes it wait forever).
 * Must not be called by a callback of @ssp (reported, returns at once) nor
 * inside a read section of @ssp.
 */
KSYNC_SRCU_API void ksync_srcu_barrier(struct ksync_srcu_struct *ssp);

/**
 * ksync_get_state_synchronize_srcu() - a cookie for a future grace period.
 * @ssp: the domain
 *
 * Starts nothing. Return: a cookie that ksync_poll_state_synchronize_srcu()
 * reports as done once a full grace period has elapsed after this call.
 * Everything the caller did before the call is ordered before that grace period.
 */
KSYNC_SRCU_API unsigned long ksync_get_state_synchronize_srcu(struct ksync_srcu_struct *ssp);

/**
 * ksync_start_poll_synchronize_srcu() - a cookie, and make sure a grace
 * period that satisfies it will run.
 * @ssp: the domain
 *
 * Does not wait: the helper thread runs the grace period.
 * Return: the cookie for ksync_poll_state_synchronize_srcu().
 */
KSYNC_SRCU_API unsigned long ksync_start_poll_synchronize_srcu(struct ksync_srcu_struct *ssp);

/**
 * ksync_poll_state_synchronize_srcu() - has the grace period of @cookie ended?
 * @ssp: the domain
 * @cookie: from ksync_get_state_synchronize_srcu() or ksync_start_poll_synchronize_srcu()
 *
 * Wrap-safe. When it returns true, everything the caller does next is ordered
 * after the end of every reader that the grace period waited for.
 */
KSYNC_SRCU_API bool ksync_poll_state_synchronize_srcu(struct ksync_srcu_struct *ssp, unsigned long cookie);

/**
 * ksync_try_synchronize_srcu() - complete a grace period now if no other
 * thread can be inside a read section of @ssp; never wait.
 * @ssp: the domain
 *
 * Succeeds when no thread but the caller has ever entered a read section of
 * @ssp (or those that did have exited), no section counted in the domain's
 * shared counters is open (srcu_down_read(), or a section of a thread whose
 * slot could not be allocated: out of memory, or a thread past its exit
 * hook), and the caller itself is outside every section of @ssp: then it
 * runs a whole grace period in a few loads and one cmpxchg. Otherwise (a
 * reader may be inside, or another grace period is running, or a reader
 * registered its first section meanwhile) it does nothing and returns
 * false, at once: no sleep, no membarrier, no lock but the process-wide
 * one that sets up a statically defined domain on its first use (as every
 * call does), so it may be called under the caller's locks, from callbacks,
 * inside sections of other domains. A thread that has read once and is
 * alive counts as a possible reader even while outside its sections: it
 * may enter again with no barrier that the try could pair with. Not in the
 * kernel (whose readers are per-CPU, never "none").
 *
 * Return: true when a grace period began after the call and ended before
 * it returned: every reader of @ssp that began before the call has ended,
 * and cookies of ksync_get_state_synchronize_srcu() taken before the call
 * are done. Ordering: as ksync_synchronize_srcu() when true: everything
 * the caller did before is ordered before the grace period, which precedes
 * everything it does after. The pairs: the token's fully ordered cmpxchg
 * (after the caller's removals) against the full barrier a thread runs
 * after counting its first slot and before its first section reads, and
 * against the fully ordered increment of a shared-counter section; the
 * acquire load of the slot count against the release of an exiting thread.
 * When false, the try leaves gp_seq as it found it (a token it took is
 * handed back) and satisfies no cookie.
 */
KSYNC_SRCU_API bool ksync_try_synchronize_srcu(struct ksync_srcu_struct *ssp);

/**
 * ksync_srcu_set_cb_limit() - how many callbacks may wait in @ssp before
 * ksync_call_srcu() throttles its caller.
 * @ssp: the domain
 * @limit: the limit, at least 1; 0 restores KSYNC_SRCU_CB_LIMIT_DEFAULT
 *
 * A property of the domain, seen alike by every translation unit that
 * queues on it. May be called at any time; a caller already throttled
 * re-reads it when the helper next signals progress.
 */
static inline void ksync_srcu_set_cb_limit(struct ksync_srcu_struct *ssp, unsigned long limit)
{
	ksync_ulong_store(&ssp->cb_limit, limit);
}

/**
 * ksync_srcu_set_cb_in_caller() - let ksync_call_srcu() run @ssp's callbacks.
 * @ssp: the domain
 * @on: true to allow it, false (the default) to keep every callback on the helper
 *
 * With @on, while producers queue callbacks without pause, the helper hands
 * a batch whose grace period has passed to the next caller of
 * ksync_call_srcu() on @ssp, which runs it before it queues its own head
 * (not from a callback, of any domain, nor inside a ksync_srcu_read_lock()
 * section of @ssp); a ksync_srcu_barrier() caller (not a callback) runs the
 * batches it waits for itself, as does a caller throttled at the limit;
 * what no caller takes before the helper's next batch, the helper runs. The nodes
 * are then freed by the thread that allocates the next ones, from its own
 * cache and allocator arena, instead of on another CPU while it allocates.
 * Ask for it only where every caller of ksync_call_srcu() and
 * ksync_srcu_barrier() on @ssp may run any of its callbacks at that point:
 * no lock or state a callback takes is
 * held around the call (the kernel runs callbacks in another context, and
 * so does this domain without it). Order, the barrier and the grace period
 * are unchanged. May be called at any time.
 */
static inline void ksync_srcu_set_cb_in_caller(struct ksync_srcu_struct *ssp, bool on)
{
	KSYNC_WRITE_ONCE(ssp->cb_in_caller, on ? 1 : 0);
}

/**
 * ksync_srcu_run_callbacks() - run @ssp's queued callbacks on this thread.
 * @ssp: the domain
 *
 * For the fuzzing mode (<ksync/fuzzing.h>), where no helper thread runs
 * them: waits for the grace period of every callback queued (and every
 * pending ksync_start_poll_synchronize_srcu() cookie), runs them in queueing
 * order, then those they queued, until none is left. Also legal with a
 * helper running, but then callbacks the helper took already may still run
 * after it returns (ksync_srcu_barrier() waits for those). Must not be called
 * inside a read section of @ssp nor from one of its callbacks: reported
 * (file and line), and it returns 0 at once.
 *
 * Return: the number of callbacks it invoked.
 */
KSYNC_SRCU_API unsigned long ksync_srcu_run_callbacks(struct ksync_srcu_struct *ssp);

/**
 * ksync_srcu_run_all_callbacks() - ksync_srcu_run_callbacks() of every domain.
 *
 * For the fuzzing mode: also drives the domains a program cannot name (a
 * library's internal ones, such as a shrinker registry's). Domains whose
 * read section the caller is inside, or whose callbacks it is running, are
 * skipped. Must not run concurrently with a ksync_cleanup_srcu_struct().
 *
 * Return: the number of callbacks it invoked.
 */
KSYNC_SRCU_API unsigned long ksync_srcu_run_all_callbacks(void);

/*
 * Internal, declared here for the inline read side below (and, in the
 * compiled form, exported by libksync_srcu): its slow paths and checks.
 */
KSYNC_SRCU_API unsigned long ksync__srcu_ensure_init(struct ksync_srcu_struct *ssp);
KSYNC_SRCU_API KSYNC_NOINLINE int ksync__srcu_read_lock_slow(struct ksync_srcu_struct *ssp);
KSYNC_SRCU_API KSYNC_NOINLINE void ksync__srcu_read_unlock_slow(struct ksync_srcu_struct *ssp, int idx);
KSYNC_SRCU_API KSYNC_NOINLINE void ksync__srcu_wake_gp(struct ksync_srcu_struct *ssp);
KSYNC_SRCU_API bool ksync__srcu_shared_unlock(struct ksync_srcu_struct *ssp, int idx);
KSYNC_SRCU_API int ksync__srcu_self_inside(const struct ksync_srcu_struct *ssp);
KSYNC_SRCU_API KSYNC_NOINLINE struct ksync_srcu_ctr *ksync__srcu_read_lock_fast_slow(struct ksync_srcu_struct *ssp);
KSYNC_SRCU_API KSYNC_NOINLINE void ksync__srcu_read_unlock_fast_slow(struct ksync_srcu_struct *ssp,
								      struct ksync_srcu_ctr *tok);
KSYNC_SRCU_API int ksync__srcu_token_index(const struct ksync_srcu_struct *ssp,
					   const struct ksync_srcu_ctr *tok);

KSYNC_EXTERN_C_END

/* The slow paths (bodies where KSYNC__SRCU_BODIES), and the read side's inline helpers. */
#include <ksync/impl/srcu_helper.h>

KSYNC_EXTERN_C_BEGIN

/* ------------------------------------------------------------------------ */
/* Read side                                                                */

/*
 * The value of the slot word @w of the current index after one more lock,
 * when the inline path can take it: the word is registered (an outermost
 * section: a constant; nested: one more). 0 when it is not registered (the
 * thread's first section of the domain, or a domain past the direct words):
 * the slow path then registers it.
 */
static KSYNC_ALWAYS_INLINE unsigned long ksync__srcu_lock_value(unsigned long w)
{
	if (ksync_likely(w == KSYNC__SRCU_REG)) { /* registered, none open on this index */
		KSYNC_TEST_POINT(SRCU_READ_LOCK); /* the straggler window */
		return KSYNC__SRCU_REG + KSYNC__SRCU_ONE;
	}
	if (ksync_likely(w > KSYNC__SRCU_REG)) /* nested */
		return w + KSYNC__SRCU_ONE;
	return 0;
}

/* Store a lock's word value @w at @p, in the mode of @v, and barrier B. */
static KSYNC_ALWAYS_INLINE void ksync__srcu_lock_store(unsigned long *p, unsigned long w, unsigned long v)
{
	if (ksync_unlikely(v & KSYNC__SRCU_FENCED_BIT)) {
		ksync_smp_store_release(p, w); /* release for TSan's sake (see C) */
		ksync_smp_mb(); /* B: pairs with M0 in ksync__srcu_gp_wait_readers() (fenced mode) */
	} else {
		KSYNC_WRITE_ONCE(*p, w);
		ksync_barrier(); /* B: membarrier M0 promotes this to a full barrier */
	}
}

/* Store an unlock's word value @w at @p (barrier C), and wake a sleeping grace period (W2). */
static KSYNC_ALWAYS_INLINE void ksync__srcu_unlock_store(struct ksync_srcu_struct *ssp,
							 unsigned long *p, unsigned long w)
{
#if KSYNC__SRCU_TSO
	/* C: on TSO a compiler barrier and a store are a release, in both modes */
	ksync_barrier();
	KSYNC_WRITE_ONCE(*p, w);
#else
	if (KSYNC_READ_ONCE(ssp->idx) & KSYNC__SRCU_FENCED_BIT) {
		/* C: release, pairs with the acquire loads of ksync__srcu_drained() */
		ksync_smp_store_release(p, w);
	} else {
		/* C: the grace period's membarriers stand for the reader's barrier */
		ksync_barrier();
		KSYNC_WRITE_ONCE(*p, w);
	}
#endif
	ksync__srcu_unlock_wake(ssp); /* W2: a sleeping grace period (impl/srcu_read.h) */
}

/*
 * The entry of this thread's slot cache that holds @ssp's slot, for a
 * domain without direct words (key 0), when it is one of the cache's two
 * most recent entries: the inline path of domains past the direct words,
 * whose words are the slot's @own, at the slot's address. NULL otherwise
 * (the slow path then finds the slot and moves it to the front). A cache
 * entry of the domain exists only once this thread has set the domain up
 * or seen it set up (ksync__srcu_get_slot()), so its key is then seen as
 * well.
 */
static KSYNC_ALWAYS_INLINE const struct ksync_srcu_tcache_ent *
ksync__srcu_far_ent(const struct ksync_srcu_struct *ssp)
{
	const struct ksync_srcu_tcache_ent *e = ksync_srcu_self.ent;
	unsigned long key = ~KSYNC_READ_ONCE(ssp->id);

	if (ksync_likely(e[0].key == key))
		return &e[0];
	return e[1].key == key ? &e[1] : NULL;
}

/*
 * The inline lock of both forms: counts one more section in this thread's
 * word of the current index of @ssp (barrier B) and returns the word, or
 * returns NULL, counting nothing, when the slow path must count it (this
 * thread's first section of the domain, a domain past the direct words
 * that is not one of the thread's two most recent, a domain not set up).
 * *@vp: the read word it loaded (key, index and mode; see
 * KSYNC__SRCU_IDX_BIT). A domain without direct words has key 0, whose word
 * (entry 0's) is never registered: it fails the first check like an
 * unregistered word, and only then is the per-thread cache looked at.
 */
static KSYNC_ALWAYS_INLINE unsigned long *ksync__srcu_lock_inline(struct ksync_srcu_struct *ssp,
								   unsigned long *vp)
{
	/* Every section counts on the current index, nested or not. */
	unsigned long v = KSYNC_READ_ONCE(ssp->idx);
	unsigned long *p = ksync__srcu_direct_word(v & KSYNC__SRCU_WORD_MASK);
	unsigned long w = *p;

	*vp = v;
	if (ksync_unlikely(w != KSYNC__SRCU_REG)) {
		/*
		 * Not "registered, none open". A zero word first (laid out to
		 * fall through, so that a domain past the direct words takes
		 * as few branches as it can): entry 0, or a first section.
		 */
		if (ksync_likely(!w)) {
			const struct ksync_srcu_tcache_ent *e;

			if ((v & KSYNC__SRCU_KEY_MASK) || !(e = ksync__srcu_far_ent(ssp)))
				return NULL;
			/* key 0: the mask left the offset of the index's word */
			p = (unsigned long *)((char *)e->slot->own + (v & KSYNC__SRCU_WORD_MASK));
			w = *p;
		}
		w = ksync__srcu_lock_value(w);
		if (!w)
			return NULL;
	} else {
		w = ksync__srcu_lock_value(w);
	}
	ksync__srcu_lock_store(p, w, v); /* B */
	return p;
}

/**
 * ksync_srcu_read_lock() - enter a read section of @ssp.
 * @ssp: the domain
 *
 * Sections nest, may block or sleep, and may be open in several domains at
 * once. The section must end on the same thread with ksync_srcu_read_unlock()
 * and the index returned here (use ksync_srcu_down_read() for sections that
 * end elsewhere). No registration is needed, and no thread is too new.
 *
 * Ordering: a grace period cannot end before every section that began
 * before it has ended; a section that a grace period does not wait for sees
 * everything the updater did before starting that grace period.
 *
 * Return: the index to pass to ksync_srcu_read_unlock() (0 or 1).
 */
static KSYNC_ALWAYS_INLINE int ksync_srcu_read_lock(struct ksync_srcu_struct *ssp)
{
	unsigned long v;

	if (ksync_unlikely(!ksync__srcu_lock_inline(ssp, &v)))
		return ksync__srcu_read_lock_slow(ssp);
	return KSYNC__SRCU_IDX_OF(v);
}

/**
 * ksync_srcu_read_unlock() - leave a read section of @ssp.
 * @ssp: the domain
 * @idx: what the matching ksync_srcu_read_lock() returned, on this thread
 *
 * An index that no open section of this thread holds is reported
 * (KSYNC_WARN_ONCE, file and line) and ignored, so that misuse can only make
 * grace periods wait longer, never end early (it cannot end another
 * thread's section, nor a ksync_srcu_down_read() one). Sections may overlap
 * in any order: each unlock names its lock's index.
 *
 * Ordering: every access of the section happens before the end of any grace
 * period that waits for it (release; pairs with the acquire loads of the
 * slot words in ksync__srcu_drained()).
 */
static KSYNC_ALWAYS_INLINE void ksync_srcu_read_unlock(struct ksync_srcu_struct *ssp, int idx)
{
	/* The key: the section's index may no longer be the current one. */
	unsigned long key = KSYNC_READ_ONCE(ssp->idx) & KSYNC__SRCU_KEY_MASK;
	unsigned long *p, w;

	/*
	 * Misuse (an index that is not 0 or 1, no open section on it) goes out
	 * of line; domains past the direct words (key 0, entry 0's words are
	 * never busy) go through the thread's recent slots.
	 */
	if (ksync_unlikely((unsigned)idx > 1)) {
		ksync__srcu_read_unlock_slow(ssp, idx);
		return;
	}
	p = ksync__srcu_direct_word(key) + (unsigned)idx;
	w = *p;
	if (ksync_unlikely(!KSYNC__SRCU_BUSY(w))) {
		const struct ksync_srcu_tcache_ent *e;

		if (key || !(e = ksync__srcu_far_ent(ssp)) ||
		    !KSYNC__SRCU_BUSY(w = *(p = e->slot->own + (unsigned)idx))) {
			ksync__srcu_read_unlock_slow(ssp, idx);
			return;
		}
	}
	ksync__srcu_unlock_store(ssp, p, w - KSYNC__SRCU_ONE); /* C, W2 */
}

/**
 * ksync_srcu_read_lock_fast() - enter a read section of @ssp, for an unlock
 * that needs no lookup.
 * @ssp: the domain
 *
 * The kernel's srcu_read_lock_fast() (v6.15): the same section as
 * ksync_srcu_read_lock()'s, with the same guarantees and rules (it nests,
 * may block or sleep, must end on this thread), but the token it returns
 * points at the thread's counter word that counts the section, so that
 * ksync_srcu_read_unlock_fast() neither looks the domain's words up nor
 * turns an index into a word. Both forms may be used on one domain, by one
 * thread, nested in each other in any order (unlike the kernel, which warns
 * when one srcu_struct sees both flavours): each section ends with the
 * unlock of its own form. Callable from any thread, with no registration;
 * nothing is asked of the updater (the grace period does not tell the forms
 * apart).
 *
 * Ordering: as ksync_srcu_read_lock().
 *
 * Return: the token to pass to ksync_srcu_read_unlock_fast() on this thread
 * (opaque; never NULL).
 */
static KSYNC_ALWAYS_INLINE struct ksync_srcu_ctr *ksync_srcu_read_lock_fast(struct ksync_srcu_struct *ssp)
{
	unsigned long v;
	unsigned long *p = ksync__srcu_lock_inline(ssp, &v);

	if (ksync_unlikely(!p))
		return ksync__srcu_read_lock_fast_slow(ssp);
	return (struct ksync_srcu_ctr *)p; /* the word of the section's index */
}

/**
 * ksync_srcu_read_unlock_fast() - leave a section begun by
 * ksync_srcu_read_lock_fast().
 * @ssp: the domain
 * @tok: what the matching ksync_srcu_read_lock_fast() returned, on this thread
 *
 * One load and one store of the word @tok names (the thread's word of the
 * section's index: both forms count a section of index i in the same word,
 * so they mix freely), and the check that the word counts a section.
 * An unlock with no open section of the token's index on this thread is
 * reported (file and line) and ignored, as for ksync_srcu_read_unlock().
 * KSYNC_DEBUG builds also check that @tok is one of this thread's words of
 * @ssp (a token of another domain or thread is reported and ignored); other
 * builds do not look, and such a token then ends a section it does not own.
 *
 * Ordering: as ksync_srcu_read_unlock() (barrier C, then the wake-up W2).
 */
static KSYNC_ALWAYS_INLINE void ksync_srcu_read_unlock_fast(struct ksync_srcu_struct *ssp,
							    struct ksync_srcu_ctr *tok)
{
	unsigned long *p = (unsigned long *)tok;
	unsigned long w;

#ifdef KSYNC_DEBUG
	if (ksync__srcu_token_index(ssp, tok) < 0) {
		ksync__srcu_read_unlock_fast_slow(ssp, tok); /* reports it */
		return;
	}
#endif
	w = *p;
	if (ksync_unlikely(!KSYNC__SRCU_BUSY(w))) { /* misuse, or a section in the shared counters */
		ksync__srcu_read_unlock_fast_slow(ssp, tok);
		return;
	}
	ksync__srcu_unlock_store(ssp, p, w - KSYNC__SRCU_ONE); /* C, W2 */
}

/**
 * ksync_srcu_down_read() - enter a read section of @ssp that may end on
 * another thread.
 * @ssp: the domain
 *
 * Like ksync_srcu_read_lock(), but the section is not tied to this thread:
 * pass the index to ksync_srcu_up_read() on any thread. Costs a locked
 * read-modify-write on a domain-wide counter (the section has no owner slot).
 *
 * Return: the index to pass to ksync_srcu_up_read().
 */
static inline int ksync_srcu_down_read(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_ensure_init(ssp);
	int idx = KSYNC__SRCU_IDX_OF(KSYNC_READ_ONCE(ssp->idx));
	/* B: fully ordered RMW, pairs with M0 in ksync__srcu_gp_one() */
	(void)ksync_ulong_fetch_add(&ssp->shared.lock[idx], 1);
	return idx;
}

/**
 * ksync_srcu_up_read() - end a section begun by ksync_srcu_down_read().
 * @ssp: the domain
 * @idx: what ksync_srcu_down_read() returned (on any thread)
 *
 * An index with no open down_read section is reported and ignored.
 */
static inline void ksync_srcu_up_read(struct ksync_srcu_struct *ssp, int idx)
{
	if (KSYNC_WARN_ONCE((unsigned)idx > 1, "ksync_srcu_up_read(): index is not 0 or 1"))
		return;
	/* C: fully ordered cmpxchg, pairs with the acquire sums of ksync__srcu_drained() */
	if (!ksync__srcu_shared_unlock(ssp, idx))
		KSYNC_WARN_ONCE(1, "ksync_srcu_up_read(): no srcu_down_read() section holds this index");
	else
		ksync__srcu_unlock_wake(ssp); /* W2 */
}

/**
 * ksync_srcu_down_read_fast() - ksync_srcu_down_read() with a pointer token.
 * @ssp: the domain
 *
 * The kernel's srcu_down_read_fast(): a section that may end on another
 * thread, through ksync_srcu_up_read_fast(). ksync's fast words belong to one
 * thread and are written with plain stores, so a section that ends elsewhere
 * cannot count in them: it counts in the domain's shared counters, as
 * ksync_srcu_down_read() does, at the same cost (a locked read-modify-write);
 * the token is the address of the counter.
 *
 * Return: the token to pass to ksync_srcu_up_read_fast() (on any thread).
 */
static inline struct ksync_srcu_ctr *ksync_srcu_down_read_fast(struct ksync_srcu_struct *ssp)
{
	return (struct ksync_srcu_ctr *)&ssp->shared.lock[ksync_srcu_down_read(ssp)];
}

/**
 * ksync_srcu_up_read_fast() - end a section begun by ksync_srcu_down_read_fast().
 * @ssp: the domain
 * @tok: what ksync_srcu_down_read_fast() returned (on any thread)
 *
 * A token that is not one of @ssp's shared counters, or one with no open
 * section, is reported (file and line) and ignored.
 * Ordering: as ksync_srcu_up_read().
 */
static inline void ksync_srcu_up_read_fast(struct ksync_srcu_struct *ssp, struct ksync_srcu_ctr *tok)
{
	uintptr_t d = (uintptr_t)tok - (uintptr_t)&ssp->shared.lock[0];

	if (KSYNC_WARN_ONCE(d != 0 && d != sizeof(unsigned long),
			    "ksync_srcu_up_read_fast(): not a token of this domain's srcu_down_read_fast()"))
		return;
	/* C: fully ordered cmpxchg, pairs with the acquire sums of ksync__srcu_drained() */
	if (!ksync__srcu_shared_unlock(ssp, (int)(d / sizeof(unsigned long))))
		KSYNC_WARN_ONCE(1, "ksync_srcu_up_read_fast(): no srcu_down_read_fast() section holds this token");
	else
		ksync__srcu_unlock_wake(ssp); /* W2 */
}

/**
 * ksync_srcu_read_lock_held() - is the calling thread inside a read
 * section of @ssp (ksync_srcu_read_lock() or ksync_srcu_read_lock_fast())?
 * @ssp: the domain
 *
 * Exact in every build for the sections of both forms (they count in the
 * same per-thread words); sections of ksync_srcu_down_read() and
 * ksync_srcu_down_read_fast() belong to no thread and do not count.
 *
 * Return: 1 if inside, 0 otherwise.
 */
static inline int ksync_srcu_read_lock_held(const struct ksync_srcu_struct *ssp)
{
	return ksync__srcu_self_inside(ssp);
}

/**
 * ksync_srcu_dereference_check() - load an SRCU-protected pointer.
 * @p: the pointer (an lvalue)
 * @ssp: the domain whose read section protects it
 * @c: another condition that makes the access legal (an update-side lock held)
 *
 * In KSYNC_DEBUG builds, warns once (file and line) unless @c holds or the
 * caller is inside a read section of @ssp.
 * Return: the pointer, dependency ordered (see ksync_rcu_dereference_raw()).
 */
#define ksync_srcu_dereference_check(p, ssp, c)                                \
	__extension__({                                                        \
		(void)KSYNC_DEBUG_WARN_ON_ONCE(!(c) && !ksync_srcu_read_lock_held(ssp)); \
		ksync_rcu_dereference_raw(p);                                  \
	})

/**
 * ksync_srcu_dereference() - load an SRCU-protected pointer inside a read
 * section of @ssp.
 * @p: the pointer (an lvalue)
 * @ssp: the domain
 */
#define ksync_srcu_dereference(p, ssp) ksync_srcu_dereference_check(p, ssp, 0)

/**
 * ksync_srcu_gp_pending() - is a grace period of @ssp waiting for readers?
 * @ssp: the domain
 *
 * One relaxed load: a long traversal can poll it and, when true, drop its
 * section (after taking a reference or noting where to resume) so that the
 * updater can proceed. A hint, never a guarantee either way.
 */
static KSYNC_ALWAYS_INLINE bool ksync_srcu_gp_pending(const struct ksync_srcu_struct *ssp)
{
	return KSYNC_READ_ONCE(ssp->gp_waiting) != 0;
}

/* Scoped sections (cleanup attribute). */
struct ksync__srcu_guard {
	struct ksync_srcu_struct *ssp;
	int idx;
	int once;
};

static inline struct ksync__srcu_guard ksync__srcu_guard_enter(struct ksync_srcu_struct *ssp)
{
	struct ksync__srcu_guard g = { ssp, ksync_srcu_read_lock(ssp), 1 };
	return g;
}

static inline void ksync__srcu_guard_exit(struct ksync__srcu_guard *g)
{
	ksync_srcu_read_unlock(g->ssp, g->idx);
}

/**
 * KSYNC_SRCU_GUARD() - be inside a read section of @ssp until the end of the
 * enclosing scope (the kernel's guard(srcu)(ssp)).
 * @ssp: the domain
 */
#define KSYNC_SRCU_GUARD(ssp)                                                  \
	struct ksync__srcu_guard KSYNC_UNIQUE(ksync__srcu_guard_)              \
		__attribute__((__cleanup__(ksync__srcu_guard_exit), __unused__)) = \
			ksync__srcu_guard_enter(ssp)

/**
 * ksync_scoped_guard_srcu() - run the following statement or block inside a
 * read section of @ssp (the kernel's scoped_guard(srcu, ssp)). `break` leaves
 * the block and the section.
 * @ssp: the domain
 */
#define ksync_scoped_guard_srcu(ssp)                                           \
	for (struct ksync__srcu_guard KSYNC_UNIQUE(ksync__srcu_sg_)            \
		     __attribute__((__cleanup__(ksync__srcu_guard_exit))) =    \
			     ksync__srcu_guard_enter(ssp);                     \
	     KSYNC_UNIQUE(ksync__srcu_sg_).once; KSYNC_UNIQUE(ksync__srcu_sg_).once = 0)

KSYNC_EXTERN_C_END

#endif /* KSYNC_SRCU_H */
