/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_regression_test.c - regression tests of ksync SRCU: the schedules
 * that broke its promises (a bad unlock ending a down_read section,
 * hand-over-hand sections starving grace periods, a callback throttled by
 * another domain's bound, a barrier missing a head queued by a callback),
 * and the corners around them (overlapping sections across flips, the slot
 * cache and domain re-initialisation at the same address, a thread exiting
 * inside a section, a reader's first section racing an idle domain's
 * grace period).
 */
#include "wait.h"

/* A small callback bound for one domain, so the throttle test needs few callbacks. */
#define SMALL_CB_LIMIT 8UL

/* Stall one ksync_call_srcu() just before its push, when armed. */
static int call_hook_armed, call_hook_hit;
static void call_delay_hook(void)
{
	if (__atomic_exchange_n(&call_hook_armed, 0, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&call_hook_hit, 1, __ATOMIC_SEQ_CST);
		kt_sleep_ms(50);
	}
}
#define KSYNC_TP_SRCU_CALL() call_delay_hook()

/*
 * Let a new reader in between an idle grace period's first check and its
 * token, when armed: the reader registers, enters and reads before the
 * updater goes on.
 */
static int idle_hook_armed, idle_reader_go, idle_reader_inside;
static void idle_delay_hook(void)
{
	if (__atomic_exchange_n(&idle_hook_armed, 0, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&idle_reader_go, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&idle_reader_inside, __ATOMIC_SEQ_CST))
			kt_sleep_ms(1);
	}
}
#define KSYNC_TP_SRCU_IDLE_GP() idle_delay_hook()

#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdlib.h>

#include "ktest.h"
#include "srcu_peek.h"

/*
 * The read form of the forced-schedule tests: built with KT_FAST
 * (srcu_regression_fast*), their sections are ksync_srcu_read_lock_fast()
 * ones; the tests of the classic form's index contract stay classic.
 * Two sections of one thread are on the same index exactly when their
 * handles are equal (a fast token names the thread's word of the index).
 */
#ifdef KT_FAST
typedef struct ksync_srcu_ctr *rt_sec;
#define RT_LOCK(ssp) ksync_srcu_read_lock_fast(ssp)
#define RT_UNLOCK(ssp, s) ksync_srcu_read_unlock_fast(ssp, s)
#else
typedef int rt_sec;
#define RT_LOCK(ssp) ksync_srcu_read_lock(ssp)
#define RT_UNLOCK(ssp, s) ksync_srcu_read_unlock(ssp, s)
#endif

struct syncer {
	struct ksync_srcu_struct *ssp;
	int done;
};

static void *syncer_main(void *p)
{
	struct syncer *s = (struct syncer *)p;
	ksync_synchronize_srcu(s->ssp);
	__atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * The caller has a section of @ssp open on @idx: a ksync_synchronize_srcu()
 * begun in another thread must still be waiting after a while; @end ends the
 * section (ksync_srcu_read_unlock() or ksync_srcu_up_read()), after which it
 * returns.
 */
static void check_sync_waits_for(struct ksync_srcu_struct *ssp, void (*end)(struct ksync_srcu_struct *, int),
				 int idx)
{
	struct syncer s = { ssp, 0 };
	pthread_t t;

	pthread_create(&t, NULL, syncer_main, &s);
	kt_sleep_ms(50);
	KCHECK_EQ(__atomic_load_n(&s.done, __ATOMIC_SEQ_CST), 0);
	end(ssp, idx);
	pthread_join(t, NULL);
	KCHECK_EQ(s.done, 1);
}

/*
 * Bug: ksync_srcu_read_unlock() with an index this thread holds no section
 * on fell back to the domain's shared counters, and when a
 * ksync_srcu_down_read() section was open on that index it silently counted
 * the unlock against it: no warning, and the next grace period ended while
 * the down_read section was still inside (a use-after-free for its reader).
 */
KTEST(bad_unlock_cannot_end_a_down_read_section)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	int idx = ksync_srcu_down_read(&ss);
	unsigned long w0 = ksync_warn_count;
	ksync_srcu_read_unlock(&ss, idx); /* misuse: this thread holds no section */
	KCHECK(ksync_warn_count > w0);

	/*
	 * Also with a section of this thread open on the other index (the
	 * report is once per call site: only the outcome is checked below).
	 */
	kt_srcu_flip(&ss);
	int mine = ksync_srcu_read_lock(&ss);
	KCHECK(mine != idx);
	ksync_srcu_read_unlock(&ss, idx);
	ksync_srcu_read_unlock(&ss, mine);
	KCHECK(!ksync_srcu_read_lock_held(&ss));

	/* The down_read section is still open: the grace period must wait. */
	check_sync_waits_for(&ss, ksync_srcu_up_read, idx);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Bug: a thread whose sections overlap hand over hand (lock the next, then
 * unlock the previous, as a long walk does to keep a position) never let a
 * grace period end: nested locks stayed on the outermost section's index, so
 * the thread was inside the old index forever after a flip. Kernel SRCU
 * counts each lock on the current index, and so must ksync: each section is
 * finite, so every grace period must end.
 */
struct walker {
	struct ksync_srcu_struct *ssp;
	int started;
	int stop;
	int capped; /* the walk ran out of time before being told to stop */
	unsigned int flags;
};

static void *hand_over_hand(void *p)
{
	struct walker *w = (struct walker *)p;
	double end = ktest_now() + 10.0;
	rt_sec prev = RT_LOCK(w->ssp);
	__atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
	unsigned long n = 0;
	while (!__atomic_load_n(&w->stop, __ATOMIC_SEQ_CST)) {
		rt_sec next = RT_LOCK(w->ssp);
		RT_UNLOCK(w->ssp, prev);
		prev = next;
		if ((++n & 1023) == 0 && ktest_now() > end) {
			w->capped = 1;
			break;
		}
	}
	RT_UNLOCK(w->ssp, prev);
	KCHECK(!ksync_srcu_read_lock_held(w->ssp));
	return NULL;
}

static void check_hand_over_hand(unsigned int flags)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct_flags(&ss, flags);
	struct walker w = { &ss, 0, 0, 0, flags };
	pthread_t t;
	pthread_create(&t, NULL, hand_over_hand, &w);
	KT_POLL_UNTIL(__atomic_load_n(&w.started, __ATOMIC_SEQ_CST));
	for (int i = 0; i < 4; i++)
		ksync_synchronize_srcu(&ss); /* hung until the walk gave up */
	__atomic_store_n(&w.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	KCHECK_EQ(w.capped, 0);
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(hand_over_hand_sections_do_not_starve_grace_periods)
{
	check_hand_over_hand(0);
}

KTEST(hand_over_hand_sections_do_not_starve_grace_periods_fenced)
{
	check_hand_over_hand(KSYNC_SRCU_FENCED);
}

/* Overlapping sections on both indexes at once, in any unlock order. */

KTEST(overlapping_sections_across_flips)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	unsigned long w0 = ksync_warn_count;
	rt_sec a = RT_LOCK(&ss);
	rt_sec b = RT_LOCK(&ss);
	KCHECK_EQ(a, b);
	kt_srcu_flip(&ss);
	rt_sec c = RT_LOCK(&ss);
	rt_sec d = RT_LOCK(&ss);
	KCHECK(c != a); /* counted on the current index, not the outermost's */
	KCHECK_EQ(c, d);
	RT_UNLOCK(&ss, a);
	RT_UNLOCK(&ss, b); /* a's index is free again */
	KCHECK(ksync_srcu_read_lock_held(&ss));
	rt_sec e = RT_LOCK(&ss); /* on c's index too */
	KCHECK_EQ(e, c);
	kt_srcu_flip(&ss);
	rt_sec f = RT_LOCK(&ss); /* back on a's index, while it has sections of c's open */
	KCHECK_EQ(f, a);
	RT_UNLOCK(&ss, c);
	RT_UNLOCK(&ss, e);
	KCHECK(ksync_srcu_read_lock_held(&ss));
	RT_UNLOCK(&ss, f);
	KCHECK(ksync_srcu_read_lock_held(&ss));
	RT_UNLOCK(&ss, d);
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	KCHECK_EQ(ksync_warn_count, w0);
	ksync_synchronize_srcu(&ss); /* nothing left inside */
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Both forms on one thread across two flips. With the slot's former two
 * words (ctr and alt, each carrying its index), this schedule made a later
 * lock merge alt's count into ctr and start alt afresh on the new index: a
 * fast token naming alt would then have ended the new section (the grace
 * period no longer waiting for it) and left the old one counted. With one
 * word per index a token's word never changes index.
 */
KTEST(mixed_forms_overlapping_across_two_flips)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	unsigned long w0 = ksync_warn_count;
	struct ksync_srcu_ctr *f1 = ksync_srcu_read_lock_fast(&ss);
	kt_srcu_flip(&ss);
	struct ksync_srcu_ctr *f2 = ksync_srcu_read_lock_fast(&ss); /* the new index */
	KCHECK(f2 != f1);
	ksync_srcu_read_unlock_fast(&ss, f1);
	struct ksync_srcu_ctr *f3 = ksync_srcu_read_lock_fast(&ss);
	KCHECK(f3 == f2);
	kt_srcu_flip(&ss);
	int c = ksync_srcu_read_lock(&ss); /* f1's index again, f2 and f3 still open */
	ksync_srcu_read_unlock_fast(&ss, f2);
	ksync_srcu_read_unlock_fast(&ss, f3);
	KCHECK(ksync_srcu_read_lock_held(&ss)); /* c is open */

	/* c is still open: the grace period must wait for it. */
	check_sync_waits_for(&ss, ksync_srcu_read_unlock, c);
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	KCHECK_EQ(ksync_warn_count, w0);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Fast-form misuse: an unbalanced unlock is reported and ends nothing (not
 * an open section of the thread, nor a down_read one); in KSYNC_DEBUG builds
 * a token of another domain is reported and ignored too.
 */
KTEST(fast_unlock_misuse_is_reported_and_ends_nothing)
{
	struct ksync_srcu_struct ss, other;
	ksync_init_srcu_struct(&ss);
	ksync_init_srcu_struct(&other);
	int down = ksync_srcu_down_read(&ss);
	struct ksync_srcu_ctr *outer = ksync_srcu_read_lock_fast(&ss);
	struct ksync_srcu_ctr *inner = ksync_srcu_read_lock_fast(&ss);
	ksync_srcu_read_unlock_fast(&ss, inner);
	unsigned long w0 = ksync_warn_count;
#ifdef KSYNC_DEBUG
	struct ksync_srcu_ctr *o = ksync_srcu_read_lock_fast(&other);
	ksync_srcu_read_unlock_fast(&ss, o); /* misuse: another domain's token */
	KCHECK(ksync_warn_count > w0);
	KCHECK(ksync_srcu_read_lock_held(&other));
	ksync_srcu_read_unlock_fast(&other, o);
	w0 = ksync_warn_count;
#endif
	ksync_srcu_read_unlock_fast(&ss, outer);
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	ksync_srcu_read_unlock_fast(&ss, outer); /* misuse: no section open on it */
	KCHECK(ksync_warn_count > w0);

	/* The down_read section is still open: the grace period must wait. */
	check_sync_waits_for(&ss, ksync_srcu_up_read, down);
	ksync_cleanup_srcu_struct(&other);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Slot cache: a domain cleaned up and initialised again at the same address
 * gets a new id, so no thread reuses its old (detached) slot; a static
 * domain used again after cleanup is set up again. Checked from a thread
 * that keeps its cache across the reuse.
 */
static struct ksync_srcu_struct reuse_dyn;
KSYNC_DEFINE_STATIC_SRCU(reuse_static);
static int reuse_phase = -2;

static void *reuse_reader(void *p)
{
	(void)p;
	for (int phase = 0; phase < 3; phase++) {
		KT_POLL_UNTIL(__atomic_load_n(&reuse_phase, __ATOMIC_SEQ_CST) == 2 * phase);
		rt_sec i = RT_LOCK(&reuse_dyn);
		rt_sec j = RT_LOCK(&reuse_static);
		KCHECK(ksync_srcu_read_lock_held(&reuse_dyn));
		RT_UNLOCK(&reuse_static, j);
		RT_UNLOCK(&reuse_dyn, i);
		__atomic_store_n(&reuse_phase, 2 * phase + 1, __ATOMIC_SEQ_CST);
	}
	/* Stay alive (exit detaches the slots) until the last count is done. */
	KT_POLL_UNTIL(__atomic_load_n(&reuse_phase, __ATOMIC_SEQ_CST) == 6);
	return NULL;
}

KTEST(domain_reinit_at_same_address)
{
	pthread_t t;
	pthread_create(&t, NULL, reuse_reader, NULL);
	unsigned long ids[3];
	for (int phase = 0; phase < 3; phase++) {
		ksync_init_srcu_struct(&reuse_dyn);
		ids[phase] = kt_srcu_id(&reuse_dyn);
		__atomic_store_n(&reuse_phase, 2 * phase, __ATOMIC_SEQ_CST);
		KT_POLL_UNTIL(__atomic_load_n(&reuse_phase, __ATOMIC_SEQ_CST) == 2 * phase + 1);
		KCHECK_EQ(kt_srcu_count_slots(&reuse_dyn), 1);	/* the thread's new slot */
		KCHECK_EQ(kt_srcu_count_slots(&reuse_static), 1);
		ksync_synchronize_srcu(&reuse_dyn);
		ksync_synchronize_srcu(&reuse_static);
		ksync_cleanup_srcu_struct(&reuse_dyn);
		ksync_cleanup_srcu_struct(&reuse_static);
		KCHECK_EQ(kt_srcu_count_slots(&reuse_static), 0);
	}
	__atomic_store_n(&reuse_phase, 6, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	KCHECK(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
}

/*
 * A thread that exits inside a section: reported, the section is dropped
 * (it can only end on its own thread), and grace periods go on.
 */
static void *exit_inside(void *p)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)p;
	(void)RT_LOCK(ssp);
	(void)RT_LOCK(ssp);
	return NULL;
}

KTEST(thread_exit_inside_a_section)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	unsigned long w0 = ksync_warn_count;
	pthread_t t;
	pthread_create(&t, NULL, exit_inside, &ss);
	pthread_join(t, NULL);
	KCHECK(ksync_warn_count > w0);
	KCHECK_EQ(kt_srcu_count_slots(&ss), 0);
	ksync_synchronize_srcu(&ss); /* else: hangs */
	ksync_cleanup_srcu_struct(&ss);
	KCHECK_EQ(kt_srcu_id(&ss), 0UL); /* not leaked: nothing is inside any more */
}

struct robj {
	struct ksync_rcu_head rh;
};

/*
 * Bug: ksync_call_srcu() throttled a caller that was another domain's
 * helper. A callback of A queueing on B (over its bound) blocked A's helper
 * until B's helper caught up; B's grace period waited for a reader of B that
 * was itself waiting in srcu_barrier(A): deadlock. Callbacks must never block.
 */
static struct ksync_srcu_struct dl_a, dl_b;
static int dl_b_freed, dl_barrier_done;

static void dl_free_b(struct ksync_rcu_head *h)
{
	__atomic_fetch_add(&dl_b_freed, 1, __ATOMIC_SEQ_CST);
	free(ksync_container_of(h, struct robj, rh));
}

static void dl_cb_a(struct ksync_rcu_head *h)
{
	ksync_call_srcu(&dl_b, h, dl_free_b); /* B is over its bound */
}

static void *dl_barrier_a(void *p)
{
	(void)p;
	ksync_srcu_barrier(&dl_a);
	__atomic_store_n(&dl_barrier_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

KTEST(callbacks_are_never_throttled_by_another_domain)
{
	ksync_init_srcu_struct(&dl_a);
	ksync_init_srcu_struct(&dl_b);
	ksync_srcu_set_cb_limit(&dl_b, SMALL_CB_LIMIT);
	int ib = ksync_srcu_read_lock(&dl_b); /* holds B's grace periods off */
	for (int i = 0; i < 20; i++) { /* inside B: not throttled */
		struct robj *o = (struct robj *)malloc(sizeof(*o));
		ksync_call_srcu(&dl_b, &o->rh, dl_free_b);
	}
	KCHECK(kt_srcu_cb_count(&dl_b) > SMALL_CB_LIMIT);
	struct robj *o = (struct robj *)malloc(sizeof(*o));
	ksync_call_srcu(&dl_a, &o->rh, dl_cb_a);
	pthread_t t;
	pthread_create(&t, NULL, dl_barrier_a, NULL);
	/* srcu_barrier(A) must not depend on B's grace period. */
	KT_POLL_UNTIL_MS(__atomic_load_n(&dl_barrier_done, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&dl_barrier_done, __ATOMIC_SEQ_CST), 1);
	ksync_srcu_read_unlock(&dl_b, ib); /* (lets a broken build finish) */
	pthread_join(t, NULL);
	ksync_srcu_barrier(&dl_b);
	KCHECK_EQ(__atomic_load_n(&dl_b_freed, __ATOMIC_SEQ_CST), 21);
	ksync_cleanup_srcu_struct(&dl_a);
	ksync_cleanup_srcu_struct(&dl_b);
}

/*
 * Bug: ksync_call_srcu() from a callback counted the head in cb_by_helper
 * before pushing it. A srcu_barrier() starting in between took a snapshot
 * that already counted the head, pushed its marker below it, saw no change
 * after its marker ran, and returned before the head (queued by a callback
 * queued before the barrier, which the barrier promises to wait for) ran.
 */
static struct ksync_srcu_struct bq;
static int bq_c2_done;

static void bq_c2(struct ksync_rcu_head *h)
{
	kt_sleep_ms(50); /* still running when a barrier that missed it returns */
	__atomic_store_n(&bq_c2_done, 1, __ATOMIC_SEQ_CST);
	free(ksync_container_of(h, struct robj, rh));
}

static void bq_c1(struct ksync_rcu_head *h)
{
	__atomic_store_n(&call_hook_armed, 1, __ATOMIC_SEQ_CST);
	ksync_call_srcu(&bq, h, bq_c2); /* stalls 50 ms before its push */
}

KTEST(barrier_waits_for_a_callback_queued_while_it_starts)
{
	ksync_init_srcu_struct(&bq);
	struct robj *o = (struct robj *)malloc(sizeof(*o));
	ksync_call_srcu(&bq, &o->rh, bq_c1);
	KT_POLL_UNTIL_MS(__atomic_load_n(&call_hook_hit, __ATOMIC_SEQ_CST), 5000);
	KCHECK_EQ(__atomic_load_n(&call_hook_hit, __ATOMIC_SEQ_CST), 1);
	ksync_srcu_barrier(&bq); /* bq_c1 was queued before: wait for bq_c2 too */
	KCHECK_EQ(__atomic_load_n(&bq_c2_done, __ATOMIC_SEQ_CST), 1);
	ksync_srcu_barrier(&bq);
	ksync_cleanup_srcu_struct(&bq);
}

/*
 * Design check of the idle grace period (no gp_mutex, no scan): its first
 * look for readers is only a hint; a reader whose first section registers
 * between that look and the token must still be waited for (the check
 * after the token's cmpxchg sees its slot). Without the second check the
 * grace period ended with the reader inside.
 */
static struct ksync_srcu_struct idle_ss;
static int idle_sync_returned, idle_bad;

static void *idle_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&idle_reader_go, __ATOMIC_SEQ_CST))
		kt_sleep_ms(1);
	rt_sec idx = RT_LOCK(&idle_ss); /* its first: registers the slot */
	__atomic_store_n(&idle_reader_inside, 1, __ATOMIC_SEQ_CST);
	kt_sleep_ms(50);
	if (__atomic_load_n(&idle_sync_returned, __ATOMIC_SEQ_CST))
		idle_bad = 1; /* the grace period ended while this section was open */
	RT_UNLOCK(&idle_ss, idx);
	return NULL;
}

KTEST(idle_grace_period_waits_for_a_reader_registering_before_its_token)
{
	pthread_t t;
	KCHECK_EQ(ksync_init_srcu_struct(&idle_ss), 0);
	__atomic_store_n(&idle_hook_armed, 1, __ATOMIC_SEQ_CST);
	KCHECK_EQ(pthread_create(&t, NULL, idle_reader, NULL), 0);
	ksync_synchronize_srcu(&idle_ss); /* idle at its first look: the hook lets the reader in */
	__atomic_store_n(&idle_sync_returned, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	KCHECK(__atomic_load_n(&idle_reader_inside, __ATOMIC_SEQ_CST));
	KCHECK_EQ(idle_bad, 0);
	ksync_cleanup_srcu_struct(&idle_ss);
}

/*
 * Bug: the unlock fast path read only bit 0 of the index, so an index of 2
 * or -2 ended a section on index 0 silently: no report, and a nested outer
 * section counted as ended (read_lock_held false, grace periods no longer
 * waiting for it).
 */
KTEST(an_index_other_than_0_or_1_is_reported_and_ends_nothing)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	int outer = ksync_srcu_read_lock(&ss);
	int inner = ksync_srcu_read_lock(&ss);
	unsigned long w0 = ksync_warn_count;
	ksync_srcu_read_unlock(&ss, inner + 2); /* misuse */
	ksync_srcu_read_unlock(&ss, inner - 2); /* misuse */
	KCHECK(ksync_warn_count > w0);
	KCHECK(ksync_srcu_read_lock_held(&ss));
	ksync_srcu_read_unlock(&ss, inner);
	KCHECK(ksync_srcu_read_lock_held(&ss)); /* the outer section is still open */
	ksync_srcu_read_unlock(&ss, outer);
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Bug: a synchronize that holds gp_mutex and waits for the token of an
 * idle grace period turned full (a reader registered in between) slept in
 * nanosleep(), a cancellation point, with cancellation enabled: cancelled
 * there, it left gp_mutex held, and every later grace period of a domain
 * with readers blocked forever.
 */
static struct ksync_srcu_struct cancel_ss;
static int cancel_reader_leave, cancel_reader_exit;

static void *cancel_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&idle_reader_go, __ATOMIC_SEQ_CST))
		kt_sleep_ms(1);
	rt_sec idx = RT_LOCK(&cancel_ss);
	__atomic_store_n(&idle_reader_inside, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&cancel_reader_leave, __ATOMIC_SEQ_CST))
		kt_sleep_ms(1);
	RT_UNLOCK(&cancel_ss, idx);
	/* Alive, so its slot keeps the domain off the idle path. */
	while (!__atomic_load_n(&cancel_reader_exit, __ATOMIC_SEQ_CST))
		kt_sleep_ms(1);
	return NULL;
}

KTEST(a_synchronize_cancelled_while_it_waits_for_the_token_leaves_no_lock_held)
{
	pthread_t r, idle, c, later;
	struct syncer idle_sync = { &cancel_ss, 0 }, cancelled = { &cancel_ss, 0 };
	struct syncer later_sync = { &cancel_ss, 0 };

	KCHECK_EQ(ksync_init_srcu_struct(&cancel_ss), 0);
	__atomic_store_n(&idle_reader_go, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&idle_reader_inside, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&idle_hook_armed, 1, __ATOMIC_SEQ_CST);
	KCHECK_EQ(pthread_create(&r, NULL, cancel_reader, NULL), 0);
	/* Idle at its first look; the reader registers before the token: a full grace period. */
	KCHECK_EQ(pthread_create(&idle, NULL, syncer_main, &idle_sync), 0);
	while (!__atomic_load_n(&idle_reader_inside, __ATOMIC_SEQ_CST) || !(kt_srcu_gp_seq(&cancel_ss) & 1))
		kt_sleep_ms(1); /* the idle grace period holds the token, waiting for the reader */
	/* Takes gp_mutex, then waits for the token: spins, yields, sleeps. */
	KCHECK_EQ(pthread_create(&c, NULL, syncer_main, &cancelled), 0);
	kt_sleep_ms(100);
	pthread_cancel(c);
	kt_sleep_ms(20);
	__atomic_store_n(&cancel_reader_leave, 1, __ATOMIC_SEQ_CST);
	pthread_join(idle, NULL);
	pthread_join(c, NULL);
	/* The reader's slot stays registered: this one goes through gp_mutex. */
	KCHECK_EQ(pthread_create(&later, NULL, syncer_main, &later_sync), 0);
	for (int i = 0; i < 5000 && !__atomic_load_n(&later_sync.done, __ATOMIC_SEQ_CST); i++)
		kt_sleep_ms(1);
	KCHECK(__atomic_load_n(&later_sync.done, __ATOMIC_SEQ_CST));
	__atomic_store_n(&cancel_reader_exit, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&later_sync.done, __ATOMIC_SEQ_CST))
		return; /* deadlocked: leave the domain (and the stuck thread) alone */
	pthread_join(later, NULL);
	pthread_join(r, NULL);
	ksync_cleanup_srcu_struct(&cancel_ss);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
