/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_callbacks.h - running SRCU callbacks: the KSYNC_DEBUG set of
 * queued heads, batches and their srcu_barrier() markers, and the fuzzing
 * mode's drive (callbacks run by the caller where no helper thread runs).
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
#ifndef KSYNC_IMPL_SRCU_CALLBACKS_H
#define KSYNC_IMPL_SRCU_CALLBACKS_H

#include <ksync/impl/srcu_gp.h>

KSYNC_EXTERN_C_BEGIN

#if KSYNC__SRCU_BODIES

/* ------------------------------------------------------------------------ */
/* Callbacks                                                                */

#if KSYNC_DEBUG_ENABLED
/* Debug set of queued heads (double call_srcu detection); under cb_lock. */
#define KSYNC__SRCU_DBG_BUCKETS 1024
struct ksync__srcu_dbg_node {
	struct ksync_rcu_head *head;
	struct ksync__srcu_dbg_node *next;
};

static KSYNC_UNUSED size_t ksync__srcu_dbg_hash(const struct ksync_rcu_head *h)
{
	return ((size_t)(uintptr_t)h >> 4) % KSYNC__SRCU_DBG_BUCKETS;
}

/* true if @h was not queued (and is now recorded), false if it already was */
static KSYNC_UNUSED bool ksync__srcu_dbg_add(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *h)
{
	bool ok = true;
	ksync__mutex_lock(&ssp->cb_lock);
	if (!ssp->dbg_set)
		ssp->dbg_set = KSYNC__ALLOC(calloc(KSYNC__SRCU_DBG_BUCKETS, sizeof(void *)));
	struct ksync__srcu_dbg_node **b = (struct ksync__srcu_dbg_node **)ssp->dbg_set;
	if (b) {
		struct ksync__srcu_dbg_node **bp = &b[ksync__srcu_dbg_hash(h)];
		for (struct ksync__srcu_dbg_node *n = *bp; n; n = n->next)
			if (n->head == h)
				ok = false;
		if (ok) {
			struct ksync__srcu_dbg_node *n =
				(struct ksync__srcu_dbg_node *)KSYNC__ALLOC(malloc(sizeof(*n)));
			if (n) {
				n->head = h;
				n->next = *bp;
				*bp = n;
			}
		}
	}
	pthread_mutex_unlock(&ssp->cb_lock);
	return ok;
}

static KSYNC_UNUSED void ksync__srcu_dbg_del(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *h)
{
	ksync__mutex_lock(&ssp->cb_lock);
	struct ksync__srcu_dbg_node **b = (struct ksync__srcu_dbg_node **)ssp->dbg_set;
	if (b) {
		for (struct ksync__srcu_dbg_node **pp = &b[ksync__srcu_dbg_hash(h)]; *pp;
		     pp = &(*pp)->next) {
			if ((*pp)->head == h) {
				struct ksync__srcu_dbg_node *n = *pp;
				*pp = n->next;
				free(n);
				break;
			}
		}
	}
	pthread_mutex_unlock(&ssp->cb_lock);
}
#endif

static KSYNC_UNUSED bool ksync__srcu_am_helper(struct ksync_srcu_struct *ssp)
{
	/* Acquire: pairs with the release that publishes ssp->helper. */
	return (ksync_smp_load_acquire(&ssp->helper_state) == KSYNC__SRCU_HELPER_RUNNING &&
		pthread_equal(ssp->helper, pthread_self())) ||
	       ksync_srcu_self.running == (const void *)ssp;
}


/*
 * A srcu_barrier() marker: a head queued like a callback, on the stack of the
 * thread waiting in the barrier. @pos is written by the helper that took it:
 * how many callbacks of its batch run before it.
 */
struct ksync__srcu_barrier_mark {
	struct ksync_rcu_head head;
	struct ksync_srcu_struct *ssp;
	unsigned long pos;
	int done;
};

/*
 * Invoke a batch (LIFO order as taken from the stack): reverse it, and set
 * the srcu_barrier() markers apart, each with its position; call the
 * callbacks in order, each marker once the callbacks queued before it have
 * run, and take the invoked callbacks off cb_count. The count is settled
 * before each marker is called, so that when a barrier returns the count
 * holds nothing it waited for (ksync_cleanup_srcu_struct() checks it).
 *
 * Cost. The heads were written by the producers, usually on other CPUs, so
 * the first touch of each is a cache miss, and a linked list's misses come
 * one after the other. Reversing and sorting out the markers is therefore
 * one walk (a marker's position is counted from the newest end, then turned
 * round), and the invoking walk prefetches the next head while the current
 * callback runs. A batch of tens of thousands of heads no longer fits in
 * this CPU's cache, so each walk over it pays its misses again: an earlier
 * version walked three times and spent most of the helper's time there.
 *
 * A callback may call fork(). In the child this thread (the only one there)
 * comes back here with the rest of a batch the fork handler could not see.
 * Its markers live on the stacks of threads that do not exist in the child,
 * stacks glibc hands to the child's next threads, so they must not even be
 * read again: that is why they were set apart, with their positions, before
 * any callback ran. Once ksync_srcu_fork_gen has changed, the markers are
 * forgotten and no count is settled (the child's cb_count was recounted from
 * cb_stack and never held this batch); the remaining callbacks still run
 * (their grace period has passed), as queued callbacks do in both processes.
 */
static KSYNC_UNUSED unsigned long ksync__srcu_invoke(struct ksync_srcu_struct *ssp,
						     struct ksync_rcu_head *list)
{
	unsigned long invoked = 0;
	struct ksync_rcu_head *cbs = NULL, *marks = NULL;
	unsigned long n = 0, pos = 0, gen = ksync_srcu_fork_gen;

	/*
	 * One walk from the newest head to the oldest, pushing each onto the
	 * front of its list (so both come out oldest first). A marker's pos is
	 * first the number of callbacks newer than it, the walk's count so far.
	 */
	while (list) {
		struct ksync_rcu_head *next = list->next;
		if (list->func == ksync__srcu_barrier_cb) {
			ksync_container_of(list, struct ksync__srcu_barrier_mark, head)->pos = pos;
			list->next = marks;
			marks = list;
		} else {
			list->next = cbs;
			cbs = list;
			pos++;
		}
		list = next;
	}
	/* Turned round: the callbacks older than the marker, which run before it. */
	for (struct ksync_rcu_head *m = marks; m; m = m->next) {
		struct ksync__srcu_barrier_mark *bm = ksync_container_of(m, struct ksync__srcu_barrier_mark, head);
		bm->pos = pos - bm->pos;
	}

	pos = 0;
	for (struct ksync_rcu_head *h = cbs;;) {
		if (ksync_srcu_fork_gen != gen)
			return invoked; /* in a child: see above */
		while (marks &&
		       ksync_container_of(marks, struct ksync__srcu_barrier_mark, head)->pos == pos) {
			struct ksync_rcu_head *m = marks;
			marks = m->next; /* before the call: its waiter may return at once */
			/* fully ordered: producers read cb_count without a lock */
			(void)ksync_ulong_fetch_add(&ssp->cb_count, (unsigned long)0 - (n + 1));
			n = 0;
			m->func(m);
		}
		if (!h)
			break;
		struct ksync_rcu_head *next = h->next; /* before func frees the head */
		if (next)
			__builtin_prefetch(next); /* its miss overlaps this callback */
#if KSYNC_DEBUG_ENABLED
		ksync__srcu_dbg_del(ssp, h);
#endif
		n++;
		pos++;
		invoked++;
		h->func(h);
		h = next;
	}
	if (n)
		(void)ksync_ulong_fetch_add(&ssp->cb_count, (unsigned long)0 - n);
	if (ksync_ulong_load(&ssp->cb_count) < ksync__srcu_cb_limit(ssp)) {
		ksync__mutex_lock(&ssp->cb_lock);
		pthread_cond_broadcast(&ssp->cb_done);
		pthread_mutex_unlock(&ssp->cb_lock);
	}
	return invoked;
}

/*
 * The helper's way to invoke a batch: as ksync__srcu_invoke(), but the walk
 * over the LIFO list only reads, recording each head in @arr (bit 0 set for
 * an srcu_barrier() marker, told apart before any callback runs, as the
 * fork case needs), and the callbacks then run from the array, newest
 * entry last, with the head a few entries ahead prefetched: the list's
 * misses come one after the other, the array's overlap, and the heads need
 * no write before their callbacks. Returns false, having run and changed
 * nothing, when the batch has more than @cap heads (the caller then uses
 * ksync__srcu_invoke()).
 */
#define KSYNC__SRCU_INVOKE_AHEAD 4
static KSYNC_UNUSED bool ksync__srcu_invoke_array(struct ksync_srcu_struct *ssp,
						  struct ksync_rcu_head *list, uintptr_t *arr,
						  size_t cap)
{
	size_t n = 0;
	unsigned long done = 0, gen = ksync_srcu_fork_gen;

	for (struct ksync_rcu_head *h = list; h; h = h->next) {
		if (n == cap)
			return false;
		arr[n++] = (uintptr_t)h | (uintptr_t)(h->func == ksync__srcu_barrier_cb);
	}
	for (size_t i = n; i-- > 0;) {
		if (ksync_srcu_fork_gen != gen)
			return true; /* in a child: see ksync__srcu_invoke() */
		if (i >= KSYNC__SRCU_INVOKE_AHEAD)
			__builtin_prefetch((void *)(arr[i - KSYNC__SRCU_INVOKE_AHEAD] & ~(uintptr_t)1));
		struct ksync_rcu_head *h = (struct ksync_rcu_head *)(arr[i] & ~(uintptr_t)1);
		if (arr[i] & 1) {
			/* A marker: the callbacks queued before it have run; settle them and it. */
			(void)ksync_ulong_fetch_add(&ssp->cb_count, (unsigned long)0 - (done + 1));
			done = 0;
			h->func(h);
			continue;
		}
#if KSYNC_DEBUG_ENABLED
		ksync__srcu_dbg_del(ssp, h);
#endif
		done++;
		h->func(h);
	}
	if (done)
		(void)ksync_ulong_fetch_add(&ssp->cb_count, (unsigned long)0 - done);
	if (ksync_ulong_load(&ssp->cb_count) < ksync__srcu_cb_limit(ssp)) {
		ksync__mutex_lock(&ssp->cb_lock);
		pthread_cond_broadcast(&ssp->cb_done);
		pthread_mutex_unlock(&ssp->cb_lock);
	}
	return true;
}

/*
 * Run one batch on the calling thread in place of the helper: the grace
 * period that covers every head of @list (and the pending poll request),
 * then the callbacks, with this thread marked as running them (so that a
 * callback's ksync_call_srcu() never blocks and counts as a helper's, and
 * its ksync_srcu_barrier() is reported). Returns the callbacks invoked.
 */
static KSYNC_UNUSED unsigned long ksync__srcu_run_batch(struct ksync_srcu_struct *ssp,
							struct ksync_rcu_head *list)
{
	const void *was_running = ksync_srcu_self.running;
	int was_in_helper = ksync_srcu_self.in_helper;
	unsigned long cookie = ksync_get_state_synchronize_srcu(ssp), invoked;

	ksync__mutex_lock(&ssp->cb_lock);
	if (ssp->poll_req_valid && ksync__srcu_seq_ge(ssp->poll_req, cookie))
		cookie = ssp->poll_req;
	pthread_mutex_unlock(&ssp->cb_lock);
	if (!KSYNC_PLANT(SRCU_EARLY_CALLBACK)) /* the fuzzers' plant (docs/fuzzing.md) */
		ksync__srcu_gp_until(ssp, cookie);
	ksync__mutex_lock(&ssp->cb_lock);
	if (ssp->poll_req_valid &&
	    ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))
		ssp->poll_req_valid = 0;
	pthread_mutex_unlock(&ssp->cb_lock);
	ksync_srcu_self.running = ssp;
	ksync_srcu_self.in_helper = 1;
	invoked = ksync__srcu_invoke(ssp, list);
	ksync_srcu_self.running = was_running;
	ksync_srcu_self.in_helper = was_in_helper;
	return invoked;
}

/* Does the caller drive @ssp's callbacks (fuzzing mode, no helper running)? */
static inline KSYNC_UNUSED bool ksync__srcu_caller_drives(const struct ksync_srcu_struct *ssp)
{
	return ksync_fuzzing_enabled() && KSYNC_READ_ONCE(ssp->helper_state) != KSYNC__SRCU_HELPER_RUNNING;
}

/*
 * Take what is queued on @ssp and run it here (see ksync__srcu_run_batch()).
 * One caller drives a domain at a time (ssp->driving, under cb_lock), as one
 * helper would: callbacks run in queueing order across batches, which
 * callers rely on (a memory group's statistics make their final move into
 * the parent before the parent's own callback frees it). Two threads each
 * running the batch it took, the later batch could run first.
 * Returns 1 when it ran a batch, 0 when nothing was queued and no poll
 * request pending, -1 when another thread drives (its end broadcasts cb_done).
 */
static KSYNC_UNUSED int ksync__srcu_drive_once(struct ksync_srcu_struct *ssp, unsigned long *invoked)
{
	struct ksync_rcu_head *list;

	ksync__mutex_lock(&ssp->cb_lock);
	if (ssp->driving) {
		pthread_mutex_unlock(&ssp->cb_lock);
		return -1;
	}
	list = (struct ksync_rcu_head *)ksync_ptr_xchg(&ssp->cb_stack, NULL);
	if (!list && !ssp->poll_req_valid) {
		pthread_mutex_unlock(&ssp->cb_lock);
		return 0;
	}
	ssp->driving = 1;
	pthread_mutex_unlock(&ssp->cb_lock);

	*invoked += ksync__srcu_run_batch(ssp, list);

	ksync__mutex_lock(&ssp->cb_lock);
	ssp->driving = 0;
	pthread_cond_broadcast(&ssp->cb_done); /* callers that found it busy */
	pthread_mutex_unlock(&ssp->cb_lock);
	return 1;
}

/*
 * Drive @ssp until nothing is queued and nobody drives it: what was queued
 * before the call has run when it returns.
 */
static KSYNC_UNUSED void ksync__srcu_drive_all(struct ksync_srcu_struct *ssp, unsigned long *invoked)
{
	for (;;) {
		int r = ksync__srcu_drive_once(ssp, invoked);

		if (r == 0)
			return;
		if (r < 0) { /* another thread drives: wait for its end, then look again */
			ksync__mutex_lock(&ssp->cb_lock);
			if (ssp->driving)
				ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
			pthread_mutex_unlock(&ssp->cb_lock);
		}
	}
}

/* ksync_srcu_run_callbacks(): see <ksync/srcu.h>. */
KSYNC_SRCU_API unsigned long ksync_srcu_run_callbacks(struct ksync_srcu_struct *ssp)
{
	unsigned long invoked = 0;

	if (!ksync_smp_load_acquire(&ssp->id))
		return 0; /* never used: nothing queued */
	if (KSYNC_WARN_ONCE(ksync__srcu_am_helper(ssp),
			    "ksync_srcu_run_callbacks() called from a callback of the same domain"))
		return 0;
	if (KSYNC_WARN_ONCE(ksync__srcu_self_inside(ssp),
			    "ksync_srcu_run_callbacks() inside a read section of the same domain"))
		return 0;
	ksync__srcu_drive_all(ssp, &invoked);
	return invoked;
}

/* ksync_srcu_run_all_callbacks(): see <ksync/srcu.h>. */
KSYNC_SRCU_API unsigned long ksync_srcu_run_all_callbacks(void)
{
	unsigned long invoked = 0;

	for (;;) {
		struct ksync_srcu_struct *next = NULL;
		struct ksync_list_head *pos;

		ksync__mutex_lock(&ksync_srcu_global_lock);
		ksync_list_for_each(pos, &ksync_srcu_domains) {
			struct ksync_srcu_struct *ssp =
				ksync_list_entry(pos, struct ksync_srcu_struct, dlink);
			if ((ksync_ptr_load(&ssp->cb_stack) || KSYNC_READ_ONCE(ssp->poll_req_valid)) &&
			    !ksync__srcu_am_helper(ssp) && !ksync__srcu_self_inside(ssp)) {
				next = ssp;
				break;
			}
		}
		pthread_mutex_unlock(&ksync_srcu_global_lock);
		if (!next)
			return invoked;
		/* Queued callbacks count in cb_count: a cleanup leaks @next rather than free it. */
		ksync__srcu_drive_all(next, &invoked);
	}
}


#endif /* KSYNC__SRCU_BODIES */

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_CALLBACKS_H */
