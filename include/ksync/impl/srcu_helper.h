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

/**
 * KSYNC_SRCU_CB_DELAY_MAX_US - the longest batching delay of a domain's
 * helper thread, in microseconds (see "Batching delay" below). A translation
 * unit may define it before including <ksync/srcu.h>; the helper thread of a
 * domain uses the value of the unit whose call started it.
 */
#ifndef KSYNC_SRCU_CB_DELAY_MAX_US
#define KSYNC_SRCU_CB_DELAY_MAX_US 2000UL
#endif
/**
 * KSYNC_SRCU_CB_HOLD_MAX_US - how long, counted in batching delays, a
 * domain's helper may hold batches whose grace period has passed while
 * producers keep queuing, before it runs them (see "Holding finished
 * batches" below). A translation unit may define it before including
 * <ksync/srcu.h>, as the delays; 0: batches are never held.
 */
#ifndef KSYNC_SRCU_CB_HOLD_MAX_US
#define KSYNC_SRCU_CB_HOLD_MAX_US 10000UL
#endif
/* The most batches held at once (see ksync__srcu_hold()). */
#define KSYNC__SRCU_HOLD_LISTS 16
/*
 * KSYNC_SRCU_CB_DELAY_MIN_US - the first batching delay after a batch that
 * found more heads queued behind it (overridable as the maximum is; the
 * tests make both long, so that a lost hurry shows as a hang).
 */
#ifndef KSYNC_SRCU_CB_DELAY_MIN_US
#define KSYNC_SRCU_CB_DELAY_MIN_US 64UL
#endif

/* The largest batch the helper invokes from an array (1 MiB of entries). */
#define KSYNC__SRCU_INVOKE_ARRAY_MAX ((size_t)1 << 17)

/* struct ksync_srcu_struct.helper_sleeping (under cb_lock) */
enum ksync__srcu_helper_sleep {
	KSYNC__SRCU_HELPER_AWAKE = 0,    /* taking or running a batch */
	KSYNC__SRCU_HELPER_IDLE = 1,     /* nothing queued: waits on cb_wake */
	KSYNC__SRCU_HELPER_DELAYING = 2, /* in a batching delay, on cb_wake with a timeout */
	KSYNC__SRCU_HELPER_HURRIED = 3,  /* a delay cut short by a waiter (hurry) */
	KSYNC__SRCU_HELPER_PROMPTED = 4, /* cut short by a producer that may run a parked batch */
	KSYNC__SRCU_HELPER_RUNNER = 5,   /* a barrier's caller that runs parked batches (ksync__srcu_park()) */
};

#if KSYNC__SRCU_BODIES

/*
 * Batching delay. With callbacks arriving without pause, a helper that takes
 * every head as soon as it is queued runs beside the producers on another
 * CPU and touches each head while it is still in the producer's cache: the
 * walk over the batch (a chain of misses) and the free() of each node meet
 * the producer's malloc() on the same allocator lists and lines, and both
 * sides pay for every node (measured: 2-3x the CPU per callback of the same
 * run on one CPU; which of the two a run gets depends on the scheduler, and
 * that was the swing of the call_srcu benchmark between 0.7x and 2x
 * liburcu's). So when a batch ends with more heads queued behind it, the
 * helper waits before taking them: 64 us at first, doubling per batch while
 * heads keep coming, up to KSYNC_SRCU_CB_DELAY_MAX_US; the producers run
 * alone meanwhile, the next batch is larger (one grace period for all of
 * it) and older. A batch that ends with nothing queued puts the delay back
 * to 0, so a lone callback is taken at once (call latency unchanged), and
 * whoever waits for the helper cuts a delay short and puts it back to 0
 * (ksync__srcu_hurry_locked()): srcu_barrier(), a producer at the callback
 * limit, a polled grace period, cleanup (in the callers' mode a barrier's
 * caller marks RUNNER instead, and a throttled producer prompts: see
 * ksync__srcu_park()). A producer crossing half the limit only prompts
 * (the delay ends, its level stays, nothing held or parked is forced out).
 */

/*
 * Under cb_lock: someone waits for the helper. Wakes it from the idle wait,
 * ends its batching delay, or, while it runs a batch, marks that the delay
 * after this batch is skipped (the helper reads the mark under cb_lock
 * before it decides to wait, so a hurry is never lost between the two).
 * The delay then starts again from 0.
 */
static KSYNC_UNUSED void ksync__srcu_wake_locked(struct ksync_srcu_struct *ssp, int how)
{
	int was = ssp->helper_sleeping;

	if (was == KSYNC__SRCU_HELPER_IDLE) {
		/*
		 * Marked too: after a hurry the helper must not park the batch
		 * it wakes for; for a runner it may, even with nothing queued
		 * behind it (ksync__srcu_park()).
		 */
		if (how == KSYNC__SRCU_HELPER_HURRIED || how == KSYNC__SRCU_HELPER_RUNNER)
			ssp->helper_sleeping = how;
		pthread_cond_signal(&ssp->cb_wake);
		return;
	}
	if (was == KSYNC__SRCU_HELPER_HURRIED)
		return; /* a hurry already marked stays one */
	if (was == KSYNC__SRCU_HELPER_RUNNER && how == KSYNC__SRCU_HELPER_PROMPTED)
		return; /* a runner's call says more (ends the delay, allows a park) */
	KSYNC_WRITE_ONCE(ssp->helper_sleeping, how); /* the futex word */
	/*
	 * A runner that finds a batch parked runs it first and calls again
	 * once it has taken it (ksync__srcu_run_ready()): till then the helper
	 * keeps its delay, or it would wake and run that batch itself.
	 */
	if (how == KSYNC__SRCU_HELPER_RUNNER && ksync_ptr_load(&ssp->cb_ready))
		return;
	if (was == KSYNC__SRCU_HELPER_DELAYING || was == KSYNC__SRCU_HELPER_RUNNER)
		(void)ksync__futex_wake(&ssp->helper_sleeping, 1);
}

static KSYNC_UNUSED void ksync__srcu_hurry_locked(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_wake_locked(ssp, KSYNC__SRCU_HELPER_HURRIED);
}

/*
 * Under cb_lock: a producer throttled at the limit. Without callbacks in the
 * callers, a hurry (the helper runs what it holds). With them, PROMPTED:
 * the delay ends, but the helper may still park its next batch and keeps
 * the delay's level, since the producer itself runs a parked batch while
 * throttled, and so waits for nobody. (Half the limit only prompts, in
 * both modes: ksync_call_srcu().)
 */
static KSYNC_UNUSED void ksync__srcu_prompt_locked(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_wake_locked(ssp, KSYNC_READ_ONCE(ssp->cb_in_caller) ? KSYNC__SRCU_HELPER_PROMPTED
								   : KSYNC__SRCU_HELPER_HURRIED);
}

/*
 * Under cb_lock, after a batch: wait before the next one when heads are
 * queued and nobody waits for them (see "Batching delay"). Returns the
 * next delay: doubled, or 0 when there was nothing to wait for or the wait
 * was cut short. Sets *@hurried when a hurry came, *@for_runner when a
 * runner (a barrier's caller that runs parked batches) came and no hurry: see
 * ksync__srcu_park().
 */
static KSYNC_UNUSED unsigned long ksync__srcu_batch_delay(struct ksync_srcu_struct *ssp,
							  unsigned long delay_us, unsigned long by_helper0,
							  bool *hurried, bool *for_runner, bool holding)
{
	/*
	 * Heads queued by the batch's own callbacks (a chain that requeues
	 * itself) are not a producer outrunning the helper: no delay for them.
	 */
	unsigned long requeued = ksync_ulong_load(&ssp->cb_by_helper) - by_helper0;

	if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_HURRIED) {
		ssp->helper_sleeping = KSYNC__SRCU_HELPER_AWAKE; /* hurried during the batch */
		*hurried = true;
		return 0;
	}
	if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_PROMPTED) {
		ssp->helper_sleeping = KSYNC__SRCU_HELPER_AWAKE; /* prompted during the batch */
		return delay_us;
	}
	if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_RUNNER) {
		/*
		 * A runner came during the batch: a barrier's marker may be
		 * queued, so the next batch is taken at once, unless a batch
		 * is parked: then the helper waits for the runner to take it
		 * (its second call ends the wait; ksync__srcu_run_ready()).
		 */
		ssp->helper_sleeping = KSYNC__SRCU_HELPER_AWAKE;
		*for_runner = true;
		if (!ksync_ptr_load(&ssp->cb_ready))
			return 0;
		delay_us = 0;
	}
	if ((!ksync_ptr_load(&ssp->cb_stack) && !ksync_ptr_load(&ssp->cb_ready)) ||
	    ksync_ulong_load(&ssp->cb_count) <= requeued ||
	    ssp->helper_state != KSYNC__SRCU_HELPER_RUNNING ||
	    ssp->poll_req_valid || __atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED) ||
	    (ksync_ulong_load(&ssp->cb_count) > ksync__srcu_cb_limit(ssp) / 2 &&
	     !ksync_ptr_load(&ssp->cb_ready) && /* parked: a producer past half the limit runs it */
	     !holding)) /* holding: the limit's hurry ends the hold (ksync__srcu_hold()) */
		return 0;
	delay_us = delay_us ? delay_us * 2 : KSYNC_SRCU_CB_DELAY_MIN_US;
	if (delay_us > KSYNC_SRCU_CB_DELAY_MAX_US)
		delay_us = KSYNC_SRCU_CB_DELAY_MAX_US;
	if (!delay_us)
		return 0; /* KSYNC_SRCU_CB_DELAY_MAX_US 0: no delay */

	/*
	 * The wait is on the word itself (a futex, relative timeout): a hurry
	 * stores HURRIED under cb_lock and wakes it, and one that comes before
	 * the wait makes the wait return at once (the word differs). An early
	 * return (a signal) only shortens this delay.
	 */
	struct timespec ts = { (time_t)(delay_us / 1000000), (long)(delay_us % 1000000) * 1000 };
	KSYNC_WRITE_ONCE(ssp->helper_sleeping, KSYNC__SRCU_HELPER_DELAYING);
	KSYNC_TEST_POINT(SRCU_CB_DELAY);
	for (int round = 0;; round++) {
		pthread_mutex_unlock(&ssp->cb_lock);
		bool differed = ksync__futex_wait(&ssp->helper_sleeping, KSYNC__SRCU_HELPER_DELAYING, &ts) != 0 &&
				errno == EAGAIN;
		ksync__mutex_lock(&ssp->cb_lock);
		/*
		 * A runner's call stored between the unlock above and the wait
		 * ends the wait at once (the word differed) with the batch still
		 * parked for that runner: wait once more (bounded: one delay).
		 */
		if (round > 0 || !differed || ssp->helper_sleeping != KSYNC__SRCU_HELPER_RUNNER ||
		    !ksync_ptr_load(&ssp->cb_ready))
			break;
		*for_runner = true;
		KSYNC_WRITE_ONCE(ssp->helper_sleeping, KSYNC__SRCU_HELPER_DELAYING);
	}
	if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_HURRIED) {
		delay_us = 0; /* hurried: someone waits; start again from 0 */
		*hurried = true;
	} else if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_RUNNER) {
		delay_us = 0; /* a runner waits (and runs what is parked) */
		*for_runner = true;
	}
	ssp->helper_sleeping = KSYNC__SRCU_HELPER_AWAKE;
	return delay_us;
}

/*
 * The helper invokes @list: from its array (*@arr, *@cap) when it holds the
 * batch (cb_count counts every head of @list until it has run, so it bounds
 * the batch; a larger one, or no memory, takes the list's own walk).
 */
static KSYNC_UNUSED void ksync__srcu_helper_invoke(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *list,
						   uintptr_t **arr, size_t *cap)
{
	size_t need = (size_t)ksync_ulong_load(&ssp->cb_count);

	if (need > *cap && need <= KSYNC__SRCU_INVOKE_ARRAY_MAX) {
		size_t c = need * 2 < KSYNC__SRCU_INVOKE_ARRAY_MAX ? need * 2 : KSYNC__SRCU_INVOKE_ARRAY_MAX;
		uintptr_t *grown = (uintptr_t *)realloc(*arr, c * sizeof(**arr));
		if (grown) {
			*arr = grown;
			*cap = c;
		}
	}
	if (!*arr || !ksync__srcu_invoke_array(ssp, list, *arr, *cap))
		ksync__srcu_invoke(ssp, list);
}

/*
 * Callbacks in the callers (ksync_srcu_set_cb_in_caller()). After the grace
 * period of @list, while producers keep queuing (heads behind it) and nobody
 * waits for the helper, the helper parks @list in cb_ready instead of
 * invoking it, and waits its batching delay; the next ksync_call_srcu() on a
 * thread that may run callbacks takes the batch and runs it
 * (ksync__srcu_run_ready()), so the nodes are freed by the thread that
 * allocates the next ones, from its own cache. What no caller took by the
 * next batch, or by a hurry (barrier, throttled producer, poll, cleanup),
 * the helper runs itself, before anything newer.
 *
 * Order: one batch runs at a time, oldest first. The helper parks only when
 * cb_ready is empty and no caller runs a batch (driving), and waits for a
 * caller's run to end before it invokes or parks the next one; a caller
 * takes cb_ready only under cb_lock and with nobody driving.
 *
 * Never a batch someone waits for: a srcu_barrier() marker in @list was
 * pushed before the helper took it and its hurry came after the push, so
 * the helper either saw the hurry since it took its last batch (@hurried,
 * also from the idle wait) or sees it marked now; one that comes after the
 * park ends the delay, and the helper runs the batch. Under no lock, with
 * nothing parked (the helper takes what no caller took before its next
 * batch). Returns true when @list was parked.
 *
 * Runners. A srcu_barrier() caller that may run callbacks (not a callback
 * itself, of any domain; never inside a section of @ssp, which the barrier
 * forbids) does not hurry: it marks RUNNER (ksync__srcu_wake_locked()), and
 * runs what is parked itself while its marker has not run. The helper,
 * seeing the mark before the park (@for_runner, from a wait or the batch
 * before, or marked now), parks @list even with nothing queued behind it:
 * the batch holding the marker, and those before it, then run on the
 * barrier's caller. Likewise while more than the limit is queued: a
 * producer throttled there runs what is parked (ksync_call_srcu()), so it
 * frees its own nodes; and after waiting for a caller's run of the batch
 * before (@drove): that caller, busy with it, queued nothing meanwhile, and
 * is about to queue again. A mark that outlived its runner (its marker
 * ran), a count past the limit that no throttled producer made (callbacks
 * queue past it without waiting), or a caller that does not come back,
 * only parks a batch that the helper runs after its next delay, as any
 * batch no caller took. A hurry, from anyone, still forbids the park.
 */
static KSYNC_UNUSED bool ksync__srcu_park(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *list,
					  bool hurried, bool for_runner)
{
	bool park, drove = false;

	if (!KSYNC_READ_ONCE(ssp->cb_in_caller) && !KSYNC_READ_ONCE(ssp->driving))
		return false; /* not asked for; nobody runs a batch in place of the helper */
	ksync__mutex_lock(&ssp->cb_lock);
	while (ssp->driving) { /* a caller runs the batch parked before: @list runs after it */
		ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
		drove = true;
	}
	park = !hurried && KSYNC_READ_ONCE(ssp->cb_in_caller) &&
	       ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING &&
	       ssp->helper_sleeping != KSYNC__SRCU_HELPER_HURRIED && !ssp->poll_req_valid &&
	       (ksync_ptr_load(&ssp->cb_stack) || for_runner || drove ||
		ssp->helper_sleeping == KSYNC__SRCU_HELPER_RUNNER ||
		ksync_ulong_load(&ssp->cb_count) > ksync__srcu_cb_limit(ssp)) &&
	       !__atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED);
	if (park) {
		KSYNC_TEST_POINT(SRCU_CB_PARK);
		(void)ksync_ptr_xchg(&ssp->cb_ready, (void *)list); /* under cb_lock; read without it */
		pthread_cond_broadcast(&ssp->cb_done); /* a throttled producer runs it */
	}
	pthread_mutex_unlock(&ssp->cb_lock);
	return park;
}

/*
 * Run the @nheld batches the helper held, oldest first. False when a
 * callback forked (the fork generation moved past @gen): the helper then
 * returns at once, as after any batch.
 */
static KSYNC_UNUSED bool ksync__srcu_run_held(struct ksync_srcu_struct *ssp, struct ksync_rcu_head **held,
					      unsigned nheld, uintptr_t **arr, size_t *cap, unsigned long gen)
{
	for (unsigned i = 0; i < nheld; i++) {
		ksync__srcu_helper_invoke(ssp, held[i], arr, cap);
		if (ksync_srcu_fork_gen != gen)
			return false;
	}
	return true;
}

/*
 * Holding finished batches (the default mode). With the helper on another
 * CPU, running a batch while the producers keep allocating makes both
 * sides pay for every node: the helper's free() and the producers'
 * malloc() meet on the same allocator bins and lock, and each node's line
 * crosses between the caches while both are busy with them (measured: the
 * helper's share 69-88 ns a node this way, liburcu's thread, which frees
 * while the producer waits in its barrier, 27-39). So while producers keep
 * queuing (heads queued behind the batch when its grace period ends) and
 * nobody waits, the helper holds the finished batch instead of running it,
 * and goes on to its delay and the next batch; it runs what it holds, oldest
 * first and then the new batch, once the producers pause (nothing queued
 * behind a batch), someone waits (a hurry: srcu_barrier(), a producer
 * throttled at the limit, a polled grace period, cleanup), or the held
 * batches reach KSYNC__SRCU_HOLD_LISTS or KSYNC_SRCU_CB_HOLD_MAX_US of
 * delays. A producer that streams without pause thus reaches the limit
 * and waits while the helper starts on what it held: the frees come in
 * large batches that begin while nobody allocates, as liburcu's do. The
 * throttled producers are woken as usual, once the count is back under
 * the limit (waking them only after the last held batch left one CPU idle
 * with two producers: measured 1.3-4.7x liburcu's throughput against
 * 1.5-6.7x this way, the same runs). Held batches count in cb_count, so the
 * limit bounds them as it bounds the queue. Not in the callers' mode
 * (its batches go to the callers) nor under a test scheduler. Callbacks
 * still run in queueing order; a callback's grace period has passed
 * before it is held, so holding only delays it.
 *
 * Returns whether the helper may hold @list (taken after @nheld held
 * batches, @held_us of delays ago) rather than run it now. Takes cb_lock.
 */
static KSYNC_UNUSED bool ksync__srcu_hold(struct ksync_srcu_struct *ssp, bool hurried, unsigned nheld,
					  unsigned long held_us)
{
	bool hold;

	if (KSYNC_READ_ONCE(ssp->cb_in_caller) || hurried || nheld >= KSYNC__SRCU_HOLD_LISTS ||
	    held_us + 1 > KSYNC_SRCU_CB_HOLD_MAX_US) /* (not >=: no type-limits warning for 0) */
		return false;
	ksync__mutex_lock(&ssp->cb_lock);
	hold = ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING &&
	       ssp->helper_sleeping != KSYNC__SRCU_HELPER_HURRIED && !ssp->poll_req_valid &&
	       ksync_ptr_load(&ssp->cb_stack) && !ksync_ptr_load(&ssp->cb_ready) &&
	       ksync_ulong_load(&ssp->cb_count) <= ksync__srcu_cb_limit(ssp) &&
	       !__atomic_load_n(&ksync_sched_hook, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ssp->cb_lock);
	return hold;
}

static KSYNC_UNUSED void *ksync__srcu_helper_main(void *arg)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)arg;
	unsigned long gen = ksync_srcu_fork_gen, delay_us = 0;
	bool hurried = false; /* since the last batch was taken: see ksync__srcu_park() */
	bool for_runner = false; /* likewise, a runner's call (ksync__srcu_park()) */
	bool streamed = false; /* the last batch had company: more than one head counted */
	uintptr_t *arr = NULL; /* ksync__srcu_invoke_array()'s, grown to the largest batch */
	size_t arr_cap = 0;
	struct ksync_rcu_head *held[KSYNC__SRCU_HOLD_LISTS]; /* oldest first: ksync__srcu_hold() */
	unsigned nheld = 0;
	unsigned long held_us = 0;

	ksync_srcu_self.in_helper = 1;
	/* Cancelling the helper would leave cb_lock or gp_mutex held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	ksync__mutex_lock(&ssp->cb_lock);
	for (;;) {
		while (ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING && !ksync_ptr_load(&ssp->cb_stack) &&
		       !ksync_ptr_load(&ssp->cb_ready) && !nheld &&
		       !(ssp->poll_req_valid &&
			 !ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))) {
			ssp->helper_sleeping = KSYNC__SRCU_HELPER_IDLE;
			for_runner = false; /* nothing queued nor parked: no runner waits */
			ksync__cond_wait(&ssp->cb_wake, &ssp->cb_lock);
			if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_HURRIED)
				hurried = true;
			else if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_RUNNER)
				for_runner = true;
			ssp->helper_sleeping = KSYNC__SRCU_HELPER_AWAKE;
			delay_us = 0; /* the producers paused */
			/*
			 * Callers' mode: a producer's push woke this thread. On
			 * the producer's CPU, the helper (asleep while the
			 * producers run the callbacks) would preempt it at once
			 * and take a batch of a few heads, a grace period each
			 * (measured on one CPU: ten times the batches, 52-84 ns a
			 * callback against 33-55); one yield lets the producer
			 * fill the batch first. Only after a batch of more than
			 * one head (a lone callback's latency tripled on a busy
			 * machine, where the yield lets other programs run), and
			 * not for a waiter (hurry, runner).
			 */
			if (!hurried && !for_runner && streamed && KSYNC_READ_ONCE(ssp->cb_in_caller)) {
				pthread_mutex_unlock(&ssp->cb_lock);
				sched_yield();
				ksync__mutex_lock(&ssp->cb_lock);
			}
		}
		if (ssp->helper_state != KSYNC__SRCU_HELPER_RUNNING && !ksync_ptr_load(&ssp->cb_stack) &&
		    !ksync_ptr_load(&ssp->cb_ready) && !nheld)
			break;
		unsigned long req = ssp->poll_req;
		bool req_valid = ssp->poll_req_valid;
		pthread_mutex_unlock(&ssp->cb_lock);

		/* A batch parked for the callers that none took runs first (ksync__srcu_park()). */
		struct ksync_rcu_head *older = (struct ksync_rcu_head *)ksync_ptr_load(&ssp->cb_ready);
		if (older) {
			ksync__mutex_lock(&ssp->cb_lock);
			older = (struct ksync_rcu_head *)ksync_ptr_xchg(&ssp->cb_ready, NULL);
			pthread_mutex_unlock(&ssp->cb_lock);
			if (older)
				ksync__srcu_helper_invoke(ssp, older, &arr, &arr_cap);
			if (ksync_srcu_fork_gen != gen)
				return NULL; /* a callback forked: see below */
		}
		struct ksync_rcu_head *list =
			(struct ksync_rcu_head *)ksync_ptr_xchg(&ssp->cb_stack, NULL);
		unsigned long by_helper0 = ksync_ulong_load(&ssp->cb_by_helper);
		if (list)
			streamed = ksync_ulong_load(&ssp->cb_count) > 1;
		/* Every head in @list was queued before this cookie was taken. */
		unsigned long cookie = ksync_get_state_synchronize_srcu(ssp);
		if (req_valid && ksync__srcu_seq_ge(req, cookie))
			cookie = req;
		if ((list || req_valid) && !KSYNC_PLANT(SRCU_EARLY_CALLBACK)) /* the fuzzers' plant */
			ksync__srcu_gp_until(ssp, cookie);
		/* Nothing parks after a held batch: it would run first. */
		if (list && (nheld || !ksync__srcu_park(ssp, list, hurried, for_runner))) {
			if (ksync__srcu_hold(ssp, hurried, nheld, held_us)) {
				held[nheld++] = list;
			} else {
				if (!ksync__srcu_run_held(ssp, held, nheld, &arr, &arr_cap, gen))
					return NULL; /* a callback forked: see below */
				nheld = 0;
				held_us = 0;
				ksync__srcu_helper_invoke(ssp, list, &arr, &arr_cap);
			}
		} else if (!list && nheld) { /* the producers paused; a poll request; stopping */
			if (!ksync__srcu_run_held(ssp, held, nheld, &arr, &arr_cap, gen))
				return NULL; /* a callback forked: see below */
			nheld = 0;
			held_us = 0;
		}
		hurried = false;
		for_runner = false;
		/*
		 * A callback forked and this is the child: the domain has no
		 * helper here (the next call_srcu starts one). This thread, the
		 * child's only one, ends, and with it the child (status 0),
		 * unless the callback ended the child itself (exec, _exit).
		 */
		if (ksync_srcu_fork_gen != gen)
			return NULL; /* (arr: the parent's helper frees its own) */

		ksync__mutex_lock(&ssp->cb_lock);
		if (ssp->poll_req_valid &&
		    ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))
			ssp->poll_req_valid = 0;
		delay_us = ksync__srcu_batch_delay(ssp, delay_us, by_helper0, &hurried, &for_runner, nheld != 0);
		if (nheld)
			held_us += delay_us ? delay_us : KSYNC_SRCU_CB_DELAY_MIN_US; /* a delay waited, or cut short */
	}
	pthread_mutex_unlock(&ssp->cb_lock);
	free(arr);
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
	/*
	 * Only the idle wait: a push onto an empty stack while the helper runs
	 * a batch is the normal flow of a busy domain, not a reason to skip its
	 * batching delay (a delay never starts with the stack empty).
	 */
	if (ssp->helper_sleeping == KSYNC__SRCU_HELPER_IDLE)
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

/*
 * A caller of ksync_call_srcu() runs the batch the helper parked
 * (ksync__srcu_park()), marked as running @ssp's callbacks as the helper
 * does (a callback's ksync_call_srcu() never blocks and counts in
 * cb_by_helper; its ksync_srcu_barrier() is reported). Nothing when another
 * caller took it first. @for_runner: the caller is a barrier's caller whose
 * marker has not run (a runner, ksync__srcu_park()), and calls the helper
 * again once it has taken the batch (the helper, in its delay until then,
 * takes the next one, which may hold the marker).
 */
static KSYNC_UNUSED KSYNC_NOINLINE void ksync__srcu_run_ready(struct ksync_srcu_struct *ssp, bool for_runner)
{
	const void *was_running = ksync_srcu_self.running;
	struct ksync_rcu_head *list;

	ksync__mutex_lock(&ssp->cb_lock);
	list = (struct ksync_rcu_head *)ksync_ptr_load(&ssp->cb_ready);
	if (!list || ssp->driving) {
		pthread_mutex_unlock(&ssp->cb_lock);
		return;
	}
	(void)ksync_ptr_xchg(&ssp->cb_ready, NULL);
	ssp->driving = 1; /* the helper's next batch waits for this one */
	if (for_runner)
		ksync__srcu_wake_locked(ssp, KSYNC__SRCU_HELPER_RUNNER);
	pthread_mutex_unlock(&ssp->cb_lock);

	ksync_srcu_self.running = ssp;
	ksync_srcu_self.in_helper = 1;
	(void)ksync__srcu_invoke(ssp, list);
	ksync_srcu_self.running = was_running;
	ksync_srcu_self.in_helper = 0; /* only set here when it was 0 */

	ksync__mutex_lock(&ssp->cb_lock);
	ssp->driving = 0;
	pthread_cond_broadcast(&ssp->cb_done); /* the helper, waiting to invoke or park */
	pthread_mutex_unlock(&ssp->cb_lock);
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
	/*
	 * A batch parked for the callers runs here first: not from a callback
	 * (of any domain) nor inside a section of @ssp.
	 */
	if (ksync_unlikely(ksync_ptr_load(&ssp->cb_ready) != NULL) && !ksync_srcu_self.in_helper &&
	    !ksync__srcu_self_inside(ssp))
		ksync__srcu_run_ready(ssp, false);
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
	 * Half the limit queued: the helper's batching delay ends (once per
	 * crossing), without a hurry: nobody waits yet, so a batch may still
	 * be parked or held.
	 */
	if (ksync_unlikely(n == ksync__srcu_cb_limit(ssp) / 2 + 1)) {
		ksync__mutex_lock(&ssp->cb_lock);
		ksync__srcu_wake_locked(ssp, KSYNC__SRCU_HELPER_PROMPTED);
		pthread_mutex_unlock(&ssp->cb_lock);
	}
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
		ksync__srcu_prompt_locked(ssp);
		while (ksync_ulong_load(&ssp->cb_count) > ksync__srcu_cb_limit(ssp) &&
		       ssp->helper_state == KSYNC__SRCU_HELPER_RUNNING) {
			if (ksync_ptr_load(&ssp->cb_ready) && !ssp->driving) {
				/* parked for the callers: run it here (ksync__srcu_park()) */
				pthread_mutex_unlock(&ssp->cb_lock);
				ksync__srcu_run_ready(ssp, false);
				ksync__mutex_lock(&ssp->cb_lock);
				continue;
			}
			ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
		}
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
	 * In the callers' mode a caller that may run callbacks (not a
	 * callback, of any domain) runs the batches parked while it waits,
	 * its marker's included, on this thread (ksync__srcu_park()).
	 */
	bool runner = KSYNC_READ_ONCE(ssp->cb_in_caller) && !ksync_srcu_self.in_helper;
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
		/* the marker is not to wait out a batching delay */
		ksync__mutex_lock(&ssp->cb_lock);
		ksync__srcu_wake_locked(ssp, runner ? KSYNC__SRCU_HELPER_RUNNER : KSYNC__SRCU_HELPER_HURRIED);
		pthread_mutex_unlock(&ssp->cb_lock);
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
			if (!done && runner && ksync_ptr_load(&ssp->cb_ready) && !ssp->driving) {
				/* parked: its broadcast (ksync__srcu_park()) ended the wait below */
				pthread_mutex_unlock(&ssp->cb_lock);
				ksync__srcu_run_ready(ssp, true);
				continue;
			}
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
	ksync__srcu_hurry_locked(ssp); /* a delay would hold the grace period back */
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
	ksync__srcu_hurry_locked(ssp); /* out of a batching delay too */
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
	ssp->helper_sleeping = KSYNC__SRCU_HELPER_AWAKE; /* cleanup's own hurry may have marked it */
	ssp->cb_by_helper = 0;
	KSYNC_WRITE_ONCE(ssp->key, 0);
	KSYNC_WRITE_ONCE(ssp->id, 0);
	pthread_mutex_unlock(&ksync_srcu_global_lock);
}


#endif /* KSYNC__SRCU_BODIES */

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_HELPER_H */
