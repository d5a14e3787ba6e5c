/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_helper.h - SRCU's helper thread, ksync_call_srcu(), the
 * barrier, polled grace periods that start one, and cleanup: the last of the
 * slow-path headers of <ksync/srcu.h>.
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
#ifndef KSYNC_IMPL_SRCU_HELPER_H
#define KSYNC_IMPL_SRCU_HELPER_H

#include <ksync/impl/srcu_callbacks.h>

KSYNC_EXTERN_C_BEGIN

#if KSYNC__SRCU_BODIES

static KSYNC_UNUSED void *ksync__srcu_helper_main(void *arg)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)arg;
	unsigned long gen = ksync_srcu_fork_gen;

	ksync_srcu_self.in_helper = 1;
	/* Cancelling the helper would leave cb_lock or gp_mutex held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	ksync__mutex_lock(&ssp->cb_lock);
	for (;;) {
		while (ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING && !ksync_ptr_load(&ssp->cb_stack) &&
		       !(ssp->poll_req_valid &&
			 !ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))) {
			ssp->helper_sleeping = 1;
			ksync__cond_wait(&ssp->cb_wake, &ssp->cb_lock);
			ssp->helper_sleeping = 0;
		}
		if (ssp->helper_state != KSYNC__SRCU_HELPER_RUNNING && !ksync_ptr_load(&ssp->cb_stack))
			break;
		unsigned long req = ssp->poll_req;
		bool req_valid = ssp->poll_req_valid;
		pthread_mutex_unlock(&ssp->cb_lock);

		struct ksync_rcu_head *list =
			(struct ksync_rcu_head *)ksync_ptr_xchg(&ssp->cb_stack, NULL);
		/* Every head in @list was queued before this cookie was taken. */
		unsigned long cookie = ksync_get_state_synchronize_srcu(ssp);
		if (req_valid && ksync__srcu_seq_ge(req, cookie))
			cookie = req;
		if (!KSYNC_PLANT(SRCU_EARLY_CALLBACK)) /* the fuzzers' plant (docs/fuzzing.md) */
			ksync__srcu_gp_until(ssp, cookie);
		ksync__srcu_invoke(ssp, list);
		/*
		 * A callback forked and this is the child: the domain has no
		 * helper here (the next call_srcu starts one). This thread, the
		 * child's only one, ends, and with it the child (status 0),
		 * unless the callback ended the child itself (exec, _exit).
		 */
		if (ksync_srcu_fork_gen != gen)
			return NULL;

		ksync__mutex_lock(&ssp->cb_lock);
		if (ssp->poll_req_valid &&
		    ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))
			ssp->poll_req_valid = 0;
	}
	pthread_mutex_unlock(&ssp->cb_lock);
	return NULL;
}

/* Under cb_lock: start the helper if it is not running. false if it cannot. */
static KSYNC_UNUSED bool ksync__srcu_helper_start_locked(struct ksync_srcu_struct *ssp)
{
	if (ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING)
		return true;
	if (ssp->helper_state == KSYNC__SRCU_HELPER_STOPPING || ksync_fuzzing_enabled())
		return false; /* stopping; or the fuzzing mode, where callers drive */
	if (pthread_create(&ssp->helper, NULL, ksync__srcu_helper_main, ssp) != 0)
		return false;
	ksync_smp_store_release(&ssp->helper_state, KSYNC__SRCU_HELPER_RUNNING); /* publishes ssp->helper */
	return true;
}

static KSYNC_UNUSED void ksync__srcu_kick(struct ksync_srcu_struct *ssp)
{
	ksync__mutex_lock(&ssp->cb_lock);
	bool ok = ksync__srcu_helper_start_locked(ssp);
	if (ssp->helper_sleeping)
		pthread_cond_signal(&ssp->cb_wake);
	pthread_mutex_unlock(&ssp->cb_lock);
	if (!ok && !ksync_fuzzing_enabled() && !ksync__srcu_self_inside(ssp) &&
	    !ksync__srcu_am_helper(ssp)) {
		/* No helper thread (pthread_create failed): do its work here, unless another thread does. */
		unsigned long invoked = 0;
		(void)ksync__srcu_drive_once(ssp, &invoked);
	}
}

static KSYNC_UNUSED void ksync__srcu_push(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *head)
{
	void *old = ksync_ptr_load(&ssp->cb_stack);
	do {
		head->next = (struct ksync_rcu_head *)old;
		/* fully ordered: the caller's removal and the head precede the push */
	} while (!ksync_ptr_try_cmpxchg(&ssp->cb_stack, &old, (void *)head));
	if (!old || KSYNC_READ_ONCE(ssp->helper_state) != KSYNC__SRCU_HELPER_RUNNING)
		ksync__srcu_kick(ssp);
}

/* ksync_call_srcu(): see <ksync/srcu.h>. */
KSYNC_SRCU_API void ksync_call_srcu(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *head,
					 void (*func)(struct ksync_rcu_head *head))
{
	ksync__srcu_ensure_init(ssp);
#if KSYNC_DEBUG_ENABLED
	if (KSYNC_WARN_ONCE(!ksync__srcu_dbg_add(ssp, head),
			    "ksync_call_srcu() of a head that is already queued; ignored"))
		return;
#endif
	head->func = func;
	bool helper = ksync__srcu_am_helper(ssp);
	unsigned long n = ksync_ulong_fetch_add(&ssp->cb_count, 1) + 1;
	KSYNC_TEST_POINT(SRCU_CALL);
	ksync__srcu_push(ssp, head);
	/*
	 * After the push (fully ordered, both): a srcu_barrier() whose snapshot
	 * of cb_by_helper counts this head pushes its marker after the head, so
	 * the head runs first; one whose snapshot does not sees the count change
	 * once its marker has run, and goes round again.
	 */
	if (helper)
		(void)ksync_ulong_fetch_add(&ssp->cb_by_helper, 1);
	/*
	 * A callback (of any domain's helper) never blocks here: the helper it
	 * would wait for may itself wait, through a reader or a barrier, on
	 * this helper's progress (cross-domain deadlock).
	 */
	if (ksync_unlikely(n > ksync__srcu_cb_limit(ssp)) && !ksync_srcu_self.in_helper &&
	    !ksync__srcu_self_inside(ssp) && ksync__srcu_caller_drives(ssp)) {
		/* Fuzzing mode: no helper to wait for; work the queue down here. */
		(void)ksync_srcu_run_callbacks(ssp);
	} else if (ksync_unlikely(n > ksync__srcu_cb_limit(ssp)) && !ksync_srcu_self.in_helper &&
		   !ksync__srcu_self_inside(ssp)) {
		/* Bounded memory: wait for the helper to work the queue down. */
		int cancel;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel); /* cb_lock held in the wait */
		ksync__mutex_lock(&ssp->cb_lock);
		while (ksync_ulong_load(&ssp->cb_count) > ksync__srcu_cb_limit(ssp) &&
		       ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING)
			ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
		pthread_mutex_unlock(&ssp->cb_lock);
		pthread_setcancelstate(cancel, NULL);
	}
}

KSYNC__SRCU_SHARED void ksync__srcu_barrier_cb(struct ksync_rcu_head *h)
{
	struct ksync__srcu_barrier_mark *m = ksync_container_of(h, struct ksync__srcu_barrier_mark, head);
	struct ksync_srcu_struct *ssp = m->ssp;
	ksync__mutex_lock(&ssp->cb_lock);
	m->done = 1;
	pthread_cond_broadcast(&ssp->cb_done);
	pthread_mutex_unlock(&ssp->cb_lock);
}

/* ksync_srcu_barrier(): see <ksync/srcu.h>. */
KSYNC_SRCU_API void ksync_srcu_barrier(struct ksync_srcu_struct *ssp)
{
	if (!ksync_smp_load_acquire(&ssp->id))
		return; /* never used: nothing queued */
	if (KSYNC_WARN_ONCE(ksync__srcu_am_helper(ssp),
			    "ksync_srcu_barrier() called from a callback of the same domain"))
		return;
	if (KSYNC_WARN_ONCE(ksync__srcu_self_inside(ssp),
			    "ksync_srcu_barrier() inside a read section of the same domain"))
		return;
	unsigned long by_helper;
	int cancel;
	/*
	 * Not cancellable: the marker lives on this stack and the wait holds
	 * cb_lock; a thread cancelled in the wait left both behind (the marker
	 * queued, every later user of cb_lock blocked).
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	do {
		struct ksync__srcu_barrier_mark m;
		by_helper = ksync_ulong_load(&ssp->cb_by_helper);
		m.ssp = ssp;
		m.done = 0;
		m.head.func = ksync__srcu_barrier_cb;
		(void)ksync_ulong_fetch_add(&ssp->cb_count, 1);
		ksync__srcu_push(ssp, &m.head);
		for (;;) {
			unsigned long invoked = 0;
			/*
			 * Fuzzing mode: run the queue here until the marker has
			 * run; when the queue is empty another thread has taken
			 * the batch holding the marker, and its broadcast ends
			 * the wait below.
			 */
			if (ksync__srcu_caller_drives(ssp) && ksync__srcu_drive_once(ssp, &invoked) > 0)
				continue;
			ksync__mutex_lock(&ssp->cb_lock);
			bool done = m.done;
			if (!done)
				ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
			pthread_mutex_unlock(&ssp->cb_lock);
			if (done)
				break;
		}
	} while (ksync_ulong_load(&ssp->cb_by_helper) != by_helper);
	pthread_setcancelstate(cancel, NULL);
}

/* ksync_start_poll_synchronize_srcu(): see <ksync/srcu.h>. */
KSYNC_SRCU_API unsigned long ksync_start_poll_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	unsigned long cookie = ksync_get_state_synchronize_srcu(ssp);
	bool ok;

	ksync__mutex_lock(&ssp->cb_lock);
	if (!ssp->poll_req_valid || ksync__srcu_seq_ge(cookie, ssp->poll_req)) {
		ssp->poll_req = cookie;
		ssp->poll_req_valid = 1;
	}
	ok = ksync__srcu_helper_start_locked(ssp);
	if (ssp->helper_sleeping)
		pthread_cond_signal(&ssp->cb_wake);
	pthread_mutex_unlock(&ssp->cb_lock);
	if (!ok && !ksync__srcu_self_inside(ssp))
		ksync__srcu_gp_until(ssp, cookie);
	return cookie;
}

/* ksync_cleanup_srcu_struct(): see <ksync/srcu.h>. */
KSYNC_SRCU_API void ksync_cleanup_srcu_struct(struct ksync_srcu_struct *ssp)
{
	unsigned long id = ksync_smp_load_acquire(&ssp->id);
	if (!id)
		return;
	if (KSYNC_WARN_ONCE(ksync__srcu_am_helper(ssp),
			    "ksync_cleanup_srcu_struct() from a callback of the same domain; leaked"))
		return;
	if (KSYNC_WARN_ONCE(ksync_ulong_load(&ssp->cb_count) != 0,
			    "ksync_cleanup_srcu_struct() with callbacks pending; leaked"))
		return;
	if (KSYNC_WARN_ONCE(!ksync__srcu_drained(ssp, 0) || !ksync__srcu_drained(ssp, 1),
			    "ksync_cleanup_srcu_struct() with readers inside; leaked"))
		return;

	ksync__mutex_lock(&ssp->cb_lock);
	int running = ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING;
	KSYNC_WRITE_ONCE(ssp->helper_state, KSYNC__SRCU_HELPER_STOPPING);
	pthread_cond_signal(&ssp->cb_wake);
	pthread_mutex_unlock(&ssp->cb_lock);
	if (running)
		pthread_join(ssp->helper, NULL);

	ksync__mutex_lock(&ksync_srcu_global_lock);
	ksync__mutex_lock(&ssp->lock);
	struct ksync_list_head *pos, *n;
	ksync_list_for_each_safe(pos, n, &ssp->slots) {
		struct ksync_srcu_slot *s = ksync_list_entry(pos, struct ksync_srcu_slot, dnode);
		s->ssp = NULL; /* the owner frees it (ksync__srcu_gc_slots, thread exit) */
		ksync__srcu_detach_slot(ssp, s);
		/*
		 * Unregistered: the owner's direct words go back to 0 for the
		 * next domain given entry k (no section is open: checked above;
		 * a later use of this domain is a use after cleanup).
		 */
		if (s->w != s->own) {
			ksync_ulong_store(&s->w[0], 0);
			ksync_ulong_store(&s->w[1], 0);
		}
	}
	pthread_mutex_unlock(&ssp->lock);
	ksync_srcu_direct_used &= ~((1UL << (ssp->key / sizeof(struct ksync_srcu_words))) & ~1UL);
	ksync_list_del_init(&ssp->dlink);
#if KSYNC_DEBUG_ENABLED
	if (ssp->dbg_set) {
		free(ssp->dbg_set); /* empty: no callback pending */
		ssp->dbg_set = NULL;
	}
#endif
	/* Back to the state of a static domain never used: a later use sets it up again. */
	memset(&ssp->shared, 0, sizeof(ssp->shared));
	KSYNC_WRITE_ONCE(ssp->idx, 0);
	KSYNC_WRITE_ONCE(ssp->helper_state, KSYNC__SRCU_HELPER_NONE);
	ssp->poll_req_valid = 0;
	ssp->cb_by_helper = 0;
	KSYNC_WRITE_ONCE(ssp->key, 0);
	KSYNC_WRITE_ONCE(ssp->id, 0);
	pthread_mutex_unlock(&ksync_srcu_global_lock);
}


#endif /* KSYNC__SRCU_BODIES */

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_HELPER_H */
