/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of <ksync/srcu.h> and <ksync/rcupdate.h>: every function, misuse, fork. */
#include <ksync/kernel.h>
#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"
#include "sanitizer.h"
#include "srcu_peek.h"
#include "wait.h"

KSYNC_DEFINE_SRCU(test_static_srcu);
KSYNC_DEFINE_STATIC_SRCU(test_static_srcu2);

KTEST(init_cleanup_and_static)
{
	struct ksync_srcu_struct ss;
	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	int idx = ksync_srcu_read_lock(&ss);
	KCHECK(idx == 0 || idx == 1);
	KCHECK(ksync_srcu_read_lock_held(&ss));
	ksync_srcu_read_unlock(&ss, idx);
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);

	/* Static domains need no init call. */
	idx = ksync_srcu_read_lock(&test_static_srcu);
	KCHECK(ksync_srcu_read_lock_held(&test_static_srcu));
	KCHECK(!ksync_srcu_read_lock_held(&test_static_srcu2));
	ksync_srcu_read_unlock(&test_static_srcu, idx);
	ksync_synchronize_srcu(&test_static_srcu2);
	ksync_synchronize_srcu_expedited(&test_static_srcu);

	/* Re-init after cleanup, and cleanup of a never-used domain. */
	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	ksync_cleanup_srcu_struct(&ss);
	KCHECK_EQ(ksync_init_srcu_struct_flags(&ss, KSYNC_SRCU_FENCED), 0);
	KCHECK(kt_srcu_id(&ss) & 1);
	idx = ksync_srcu_read_lock(&ss);
	ksync_srcu_read_unlock(&ss, idx);
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(nesting_and_many_domains)
{
	enum { N = 7 }; /* more than the per-thread cache holds */
	struct ksync_srcu_struct ss[N];
	int idx[N][3];
	for (int i = 0; i < N; i++)
		ksync_init_srcu_struct(&ss[i]);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++)
			for (int j = 0; j < 3; j++)
				idx[i][j] = ksync_srcu_read_lock(&ss[i]);
		for (int i = 0; i < N; i++)
			KCHECK(ksync_srcu_read_lock_held(&ss[i]));
		for (int i = N - 1; i >= 0; i--)
			for (int j = 2; j >= 0; j--)
				ksync_srcu_read_unlock(&ss[i], idx[i][j]);
		for (int i = 0; i < N; i++) {
			KCHECK(!ksync_srcu_read_lock_held(&ss[i]));
			ksync_synchronize_srcu(&ss[i]);
		}
	}
	for (int i = 0; i < N; i++)
		ksync_cleanup_srcu_struct(&ss[i]);
}

struct reader_arg {
	struct ksync_srcu_struct *ssp;
	int entered;
	int released;
	int hold_ms;
};

static void *holding_reader(void *p)
{
	struct reader_arg *a = (struct reader_arg *)p;
	int idx = ksync_srcu_read_lock(a->ssp);
	__atomic_store_n(&a->entered, 1, __ATOMIC_SEQ_CST);
	kt_sleep_ms(a->hold_ms);
	__atomic_store_n(&a->released, 1, __ATOMIC_SEQ_CST);
	ksync_srcu_read_unlock(a->ssp, idx);
	return NULL;
}

static void check_waits_for_reader(unsigned int flags)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct_flags(&ss, flags);
	struct reader_arg a = { &ss, 0, 0, 100 };
	pthread_t t;
	pthread_create(&t, NULL, holding_reader, &a);
	KT_POLL_UNTIL(__atomic_load_n(&a.entered, __ATOMIC_SEQ_CST));
	KCHECK(!ksync_srcu_gp_pending(&ss));
	ksync_synchronize_srcu(&ss);
	KCHECK_EQ(__atomic_load_n(&a.released, __ATOMIC_SEQ_CST), 1);
	pthread_join(t, NULL);
	/* The thread exited: its slot was folded and freed. */
	KCHECK_EQ(kt_srcu_count_slots(&ss), 0);
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(synchronize_waits_for_reader)
{
	check_waits_for_reader(0);
}

KTEST(synchronize_waits_for_reader_fenced)
{
	check_waits_for_reader(KSYNC_SRCU_FENCED);
}

static void *pending_watcher(void *p)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)p;
	ksync_synchronize_srcu(ssp);
	return NULL;
}

KTEST(gp_pending)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	int idx = ksync_srcu_read_lock(&ss);
	pthread_t t;
	pthread_create(&t, NULL, pending_watcher, &ss);
	int seen = 0;
	for (int i = 0; i < 2000 && !seen; i++) {
		seen = ksync_srcu_gp_pending(&ss);
		kt_sleep_ms(1);
	}
	KCHECK(seen);
	ksync_srcu_read_unlock(&ss, idx);
	pthread_join(t, NULL);
	KCHECK(!ksync_srcu_gp_pending(&ss));
	ksync_cleanup_srcu_struct(&ss);
}

struct updown {
	struct ksync_srcu_struct *ssp;
	int idx;
	int done;
};

static void *upper(void *p)
{
	struct updown *u = (struct updown *)p;
	kt_sleep_ms(50);
	__atomic_store_n(&u->done, 1, __ATOMIC_SEQ_CST);
	ksync_srcu_up_read(u->ssp, u->idx);
	return NULL;
}

KTEST(down_up_across_threads)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	struct updown u = { &ss, ksync_srcu_down_read(&ss), 0 };
	KCHECK(!ksync_srcu_read_lock_held(&ss)); /* down_read sections belong to no thread */
	pthread_t t;
	pthread_create(&t, NULL, upper, &u);
	ksync_synchronize_srcu(&ss);
	KCHECK_EQ(__atomic_load_n(&u.done, __ATOMIC_SEQ_CST), 1);
	pthread_join(t, NULL);
	ksync_cleanup_srcu_struct(&ss);
}

struct obj {
	int value;
	struct ksync_rcu_head rh;
};

static int freed;
static struct ksync_srcu_struct *chain_ssp;
static int chain_left;

static void free_obj(struct ksync_rcu_head *h)
{
	struct obj *o = ksync_container_of(h, struct obj, rh);
	__atomic_fetch_add(&freed, 1, __ATOMIC_SEQ_CST);
	free(o);
}

static void chain_cb(struct ksync_rcu_head *h)
{
	if (__atomic_sub_fetch(&chain_left, 1, __ATOMIC_SEQ_CST) > 0)
		ksync_call_srcu(chain_ssp, h, chain_cb); /* callbacks may queue again */
	else
		free_obj(h);
}

KTEST(pointers_and_call_srcu)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	struct obj *KSYNC_RCU gp = NULL;
	KCHECK(ksync_rcu_access_pointer(gp) == NULL);
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	o->value = 42;
	ksync_rcu_assign_pointer(gp, o);
	int idx = ksync_srcu_read_lock(&ss);
	struct obj *r = ksync_srcu_dereference(gp, &ss);
	KCHECK_EQ(r->value, 42);
	ksync_srcu_read_unlock(&ss, idx);
	struct obj *o2 = (struct obj *)malloc(sizeof(*o2));
	o2->value = 7;
	struct obj *old = ksync_rcu_replace_pointer(gp, o2, 1);
	KCHECK(old == o);
	KCHECK_EQ(ksync_srcu_dereference_check(gp, &ss, 1)->value, 7);
	KCHECK_EQ(ksync_rcu_dereference_raw(gp)->value, 7);

	freed = 0;
	ksync_call_srcu(&ss, &old->rh, free_obj);
	KSYNC_RCU_INIT_POINTER(gp, NULL);
	ksync_call_srcu(&ss, &o2->rh, free_obj);
	for (int i = 0; i < 1000; i++) {
		struct obj *x = (struct obj *)malloc(sizeof(*x));
		ksync_call_srcu(&ss, &x->rh, free_obj);
	}
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), 1002);

	/* srcu_barrier() also waits for what callbacks queue. */
	freed = 0;
	chain_ssp = &ss;
	chain_left = 5;
	struct obj *c = (struct obj *)malloc(sizeof(*c));
	ksync_call_srcu(&ss, &c->rh, chain_cb);
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), 1);
	KCHECK_EQ(__atomic_load_n(&chain_left, __ATOMIC_SEQ_CST), 0);
	ksync_cleanup_srcu_struct(&ss);
}

static void *flood(void *p)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)p;
	for (int i = 0; i < 200000; i++) {
		struct obj *x = (struct obj *)malloc(sizeof(*x));
		ksync_call_srcu(ssp, &x->rh, free_obj);
	}
	return NULL;
}

KTEST(call_srcu_bounded)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	freed = 0;
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, flood, &ss);
	unsigned long max = 0;
	for (int i = 0; i < 200; i++) {
		unsigned long n = kt_srcu_cb_count(&ss);
		if (n > max)
			max = n;
		kt_sleep_ms(1);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), 400000);
	/* Each producer overshoots the limit by at most one before blocking. */
	KCHECK(max <= KSYNC_SRCU_CB_LIMIT_DEFAULT + 2);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Streams of callbacks from two producers, with barriers in between: the
 * helper batches them (its batching delay grows while heads keep coming and
 * is cut short by each barrier), and still every callback runs once, after
 * a grace period that began after its call_srcu() (its cookie has
 * completed), each producer's callbacks in the order it queued them, and
 * each barrier returns after every callback queued before it.
 */
#define STREAM_N 100000
struct stream_obj {
	struct ksync_rcu_head rh;
	struct ksync_srcu_struct *ssp;
	unsigned long cookie;
	int producer, seq;
};
static int stream_last[2], stream_bad_order, stream_early, stream_ran;

static void stream_cb(struct ksync_rcu_head *h)
{
	struct stream_obj *o = ksync_container_of(h, struct stream_obj, rh);
	/* Callbacks run one at a time (helper, or a caller in turn): plain counters suffice. */
	if (o->seq != stream_last[o->producer] + 1)
		stream_bad_order++;
	stream_last[o->producer] = o->seq;
	if (!ksync_poll_state_synchronize_srcu(o->ssp, o->cookie))
		stream_early++;
	__atomic_fetch_add(&stream_ran, 1, __ATOMIC_SEQ_CST);
	free(o);
}

struct stream_arg {
	struct ksync_srcu_struct *ssp;
	int producer, bad_barriers;
};

static void *stream_producer(void *p)
{
	struct stream_arg *a = (struct stream_arg *)p;
	for (int i = 1; i <= STREAM_N; i++) {
		struct stream_obj *o = (struct stream_obj *)malloc(sizeof(*o));
		o->ssp = a->ssp;
		o->producer = a->producer;
		o->seq = i;
		o->cookie = ksync_get_state_synchronize_srcu(a->ssp);
		ksync_call_srcu(a->ssp, &o->rh, stream_cb);
		if (a->producer == 0 && i % 30000 == 0) {
			ksync_srcu_barrier(a->ssp);
			/* Every callback of this producer so far has run. */
			if (__atomic_load_n(&stream_ran, __ATOMIC_SEQ_CST) < i)
				a->bad_barriers++;
		}
	}
	return NULL;
}

static void run_streams(bool in_caller)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	ksync_srcu_set_cb_in_caller(&ss, in_caller);
	stream_last[0] = stream_last[1] = 0;
	stream_bad_order = stream_early = 0;
	__atomic_store_n(&stream_ran, 0, __ATOMIC_SEQ_CST);
	struct stream_arg a[2] = { { &ss, 0, 0 }, { &ss, 1, 0 } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, stream_producer, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(__atomic_load_n(&stream_ran, __ATOMIC_SEQ_CST), 2 * STREAM_N);
	KCHECK_EQ(stream_last[0], STREAM_N);
	KCHECK_EQ(stream_last[1], STREAM_N);
	KCHECK_EQ(stream_bad_order, 0);
	KCHECK_EQ(stream_early, 0);
	KCHECK_EQ(a[0].bad_barriers, 0);
	KCHECK_EQ(kt_srcu_cb_count(&ss), 0UL);
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(call_srcu_streams_keep_order_and_lose_nothing)
{
	run_streams(false);
}

/*
 * The same with callbacks run by the producers' call_srcu() as well as by
 * the helper (ksync_srcu_set_cb_in_caller()): still one at a time (the
 * plain counters are then written by several threads, in turn: TSan checks
 * the hand-over), in order, once, after their grace period.
 */
KTEST(call_srcu_streams_in_callers_keep_order_and_lose_nothing)
{
	run_streams(true);
}

KTEST(polled_grace_periods)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	unsigned long c = ksync_get_state_synchronize_srcu(&ss);
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, c));
	ksync_synchronize_srcu(&ss);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, c));

	unsigned long c2 = ksync_start_poll_synchronize_srcu(&ss);
	int done = 0;
	for (int i = 0; i < 5000 && !done; i++) {
		done = ksync_poll_state_synchronize_srcu(&ss, c2);
		if (!done)
			kt_sleep_ms(1);
	}
	KCHECK(done);

	/* A reader in the way holds polled grace periods off. */
	int idx = ksync_srcu_read_lock(&ss);
	unsigned long c3 = ksync_start_poll_synchronize_srcu(&ss);
	kt_sleep_ms(20);
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, c3));
	ksync_srcu_read_unlock(&ss, idx);
	ksync_srcu_barrier(&ss);
	KT_POLL_UNTIL_MS(ksync_poll_state_synchronize_srcu(&ss, c3), 5000);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, c3));

	/* Wrap-safe cookies: gp_seq just below the wrap. */
	kt_srcu_set_gp_seq(&ss, (unsigned long)-4);
	unsigned long w = ksync_get_state_synchronize_srcu(&ss);
	KCHECK_EQ(w, (unsigned long)-2);
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, w));
	ksync_synchronize_srcu(&ss);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, w));
	unsigned long w2 = ksync_get_state_synchronize_srcu(&ss);
	KCHECK_EQ(w2, 0UL); /* wrapped */
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, w2));
	ksync_synchronize_srcu(&ss);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, w2));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, w));
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(guards)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	{
		KSYNC_SRCU_GUARD(&ss);
		KCHECK(ksync_srcu_read_lock_held(&ss));
	}
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	ksync_scoped_guard_srcu(&ss) {
		KCHECK(ksync_srcu_read_lock_held(&ss));
	}
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	for (int i = 0; i < 3; i++) {
		ksync_scoped_guard_srcu(&ss) {
			if (i == 1)
				break;
			KCHECK(ksync_srcu_read_lock_held(&ss));
		}
	}
	KCHECK(!ksync_srcu_read_lock_held(&ss));
	{
		guard(srcu)(&ss);
		KCHECK(srcu_read_lock_held(&ss));
	}
	scoped_guard(srcu, &ss) {
		KCHECK(srcu_read_lock_held(&ss));
	}
	KCHECK(!srcu_read_lock_held(&ss));
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(kernel_spellings)
{
	static DEFINE_SRCU(kss);
	struct srcu_struct dyn;
	KCHECK_EQ(init_srcu_struct(&dyn), 0);
	int idx = srcu_read_lock(&kss);
	KCHECK(srcu_read_lock_held(&kss));
	srcu_read_unlock(&kss, idx);
	idx = srcu_down_read(&dyn);
	srcu_up_read(&dyn, idx);
	struct srcu_ctr __percpu *scp = srcu_read_lock_fast(&kss);
	KCHECK(scp != NULL);
	KCHECK(srcu_read_lock_held(&kss));
	idx = srcu_read_lock(&kss); /* the forms nest in each other */
	srcu_read_unlock_fast(&kss, scp);
	KCHECK(srcu_read_lock_held(&kss));
	srcu_read_unlock(&kss, idx);
	KCHECK(!srcu_read_lock_held(&kss));
	scp = srcu_down_read_fast(&dyn);
	KCHECK(!srcu_read_lock_held(&dyn)); /* a down_read section belongs to no thread */
	srcu_up_read_fast(&dyn, scp);
	unsigned long wc = ksync_warn_count;
	srcu_up_read_fast(&dyn, scp); /* misuse: no section open on it */
	KCHECK(ksync_warn_count > wc);
	synchronize_srcu(&kss);
	synchronize_srcu_expedited(&dyn);
	unsigned long c = get_state_synchronize_srcu(&dyn);
	synchronize_srcu(&dyn);
	KCHECK(poll_state_synchronize_srcu(&dyn, c));
	c = start_poll_synchronize_srcu(&dyn);
	srcu_barrier(&dyn);
	KCHECK(!srcu_gp_pending(&dyn));
	srcu_set_cb_limit(&dyn, 1024);
	srcu_set_cb_in_caller(&dyn, false);
	KCHECK(try_synchronize_srcu(&dyn)); /* no other thread has a slot in dyn */
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	struct obj *__rcu p = NULL;
	RCU_INIT_POINTER(p, NULL);
	rcu_assign_pointer(p, o);
	KCHECK(rcu_access_pointer(p) == o);
	KCHECK(srcu_dereference_check(p, &dyn, 1) == o);
	KCHECK(rcu_dereference_raw(p) == o);
	struct obj *old = rcu_replace_pointer(p, NULL, 1);
	struct rcu_head *h = &old->rh;
	freed = 0;
	call_srcu(&dyn, h, free_obj);
	srcu_barrier(&dyn);
	KCHECK_EQ(freed, 1);
	cleanup_srcu_struct(&dyn);
	(void)c;
}

KTEST(misuse_is_reported)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	unsigned long w0 = ksync_warn_count;

	/* Unlock with an index that no section holds: reported, ignored. */
	ksync_srcu_read_unlock(&ss, 0);
	ksync_srcu_read_unlock(&ss, 5);
	ksync_srcu_up_read(&ss, 1);
	ksync_synchronize_srcu(&ss); /* still works: nothing was miscounted */
	KCHECK(ksync_warn_count >= w0 + 3);

	/* synchronize inside a section of the same domain: reported, returns. */
	unsigned long w1 = ksync_warn_count;
	int idx = ksync_srcu_read_lock(&ss);
	ksync_synchronize_srcu(&ss);
	KCHECK(ksync_warn_count > w1);
	/* cleanup with a reader inside: reported, leaked (still usable). */
	unsigned long w2 = ksync_warn_count;
	ksync_cleanup_srcu_struct(&ss);
	KCHECK(ksync_warn_count > w2);
	KCHECK(kt_srcu_id(&ss) != 0);
	ksync_srcu_read_unlock(&ss, idx);
	ksync_synchronize_srcu(&ss);

	/* cleanup with callbacks pending: reported, leaked. */
	idx = ksync_srcu_read_lock(&ss);
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	freed = 0;
	ksync_call_srcu(&ss, &o->rh, free_obj);
	kt_sleep_ms(5);
	unsigned long w3 = ksync_warn_count;
	ksync_srcu_read_unlock(&ss, idx);
	/* the callback may already run now; only check when it has not */
	if (kt_srcu_cb_count(&ss)) {
		ksync_cleanup_srcu_struct(&ss);
		KCHECK(ksync_warn_count > w3 || freed == 1);
	}
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(freed, 1);
#if KSYNC_DEBUG_ENABLED
	/* call_srcu of a head already queued (debug builds). */
	idx = ksync_srcu_read_lock(&ss);
	struct obj *d = (struct obj *)malloc(sizeof(*d));
	freed = 0;
	ksync_call_srcu(&ss, &d->rh, free_obj);
	unsigned long w4 = ksync_warn_count;
	ksync_call_srcu(&ss, &d->rh, free_obj);
	KCHECK(ksync_warn_count > w4);
	ksync_srcu_read_unlock(&ss, idx);
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(freed, 1);
#endif
	ksync_cleanup_srcu_struct(&ss);
}

static int thread_slots_ok;

static void *short_lived(void *p)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)p;
	int idx = ksync_srcu_read_lock(ssp);
	ksync_srcu_read_unlock(ssp, idx);
	return NULL;
}

KTEST(thread_exit_frees_slots)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	for (int i = 0; i < 50; i++) {
		pthread_t t;
		pthread_create(&t, NULL, short_lived, &ss);
		pthread_join(t, NULL);
	}
	KCHECK_EQ(kt_srcu_count_slots(&ss), 0);
	thread_slots_ok = 1;
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

static void fork_child_cb(struct ksync_rcu_head *h)
{
	__atomic_fetch_add(&freed, 1, __ATOMIC_SEQ_CST);
	free(ksync_container_of(h, struct obj, rh));
}

KTEST(fork_child_uses_domain)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	/* Another thread used the domain (and still lives); the helper runs. */
	struct reader_arg a = { &ss, 0, 0, 300 };
	pthread_t t;
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	freed = 0;
	ksync_call_srcu(&ss, &o->rh, fork_child_cb);
	ksync_srcu_barrier(&ss);
	int idx = ksync_srcu_read_lock(&ss); /* this thread is inside across fork() */
	pthread_create(&t, NULL, short_lived, &ss);
	pthread_join(t, NULL);
	(void)a;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		ksync_srcu_read_unlock(&ss, idx);
		ksync_synchronize_srcu(&ss);
		int i2 = ksync_srcu_read_lock(&ss);
		ksync_srcu_read_unlock(&ss, i2);
		if (!KT_TSAN) { /* the helper thread is restarted in the child */
			struct obj *c = (struct obj *)malloc(sizeof(*c));
			freed = 0;
			ksync_call_srcu(&ss, &c->rh, fork_child_cb);
			ksync_srcu_barrier(&ss);
			bad |= freed != 1;
		}
		ksync_cleanup_srcu_struct(&ss);
		_exit(bad ? 3 : 0);
	}
	KCHECK(pid > 0);
	ksync_srcu_read_unlock(&ss, idx);
	int status = 0;
	waitpid(pid, &status, 0);
	KCHECK(WIFEXITED(status));
	KCHECK_EQ(WEXITSTATUS(status), 0);
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

struct holder {
	struct ksync_srcu_struct *ssp;
	int entered;
	int release;
};

static void *hold_until_told(void *p)
{
	struct holder *h = (struct holder *)p;
	int idx = ksync_srcu_read_lock(h->ssp);
	__atomic_store_n(&h->entered, 1, __ATOMIC_SEQ_CST);
	KT_POLL_UNTIL(__atomic_load_n(&h->release, __ATOMIC_SEQ_CST));
	ksync_srcu_read_unlock(h->ssp, idx);
	return NULL;
}

KTEST(domains_are_independent)
{
	struct ksync_srcu_struct a, b;
	ksync_init_srcu_struct(&a);
	ksync_init_srcu_struct(&b);
	struct holder h = { &a, 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, hold_until_told, &h);
	KT_POLL_UNTIL(__atomic_load_n(&h.entered, __ATOMIC_SEQ_CST));
	/* A reader asleep in A: grace periods of B complete (else: hang). */
	for (int i = 0; i < 10; i++)
		ksync_synchronize_srcu(&b);
	unsigned long c = ksync_get_state_synchronize_srcu(&a);
	KCHECK(!ksync_poll_state_synchronize_srcu(&a, c));
	__atomic_store_n(&h.release, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	ksync_synchronize_srcu(&a);
	KCHECK(ksync_poll_state_synchronize_srcu(&a, c));
	ksync_cleanup_srcu_struct(&a);
	ksync_cleanup_srcu_struct(&b);
}

static int sync_callers_in;

static void *sync_caller(void *p)
{
	__atomic_fetch_add(&sync_callers_in, 1, __ATOMIC_SEQ_CST);
	ksync_synchronize_srcu((struct ksync_srcu_struct *)p);
	return NULL;
}

KTEST(concurrent_synchronize_shares_grace_periods)
{
	enum { N = 8 };
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	struct holder h = { &ss, 0, 0 };
	pthread_t t, c[N];
	pthread_create(&t, NULL, hold_until_told, &h);
	KT_POLL_UNTIL(__atomic_load_n(&h.entered, __ATOMIC_SEQ_CST));
	unsigned long before = kt_srcu_gp_seq(&ss);
	for (int i = 0; i < N; i++)
		pthread_create(&c[i], NULL, sync_caller, &ss);
	KT_POLL_UNTIL(__atomic_load_n(&sync_callers_in, __ATOMIC_SEQ_CST) >= N);
	kt_sleep_ms(50); /* let them all queue behind the blocked grace period */
	__atomic_store_n(&h.release, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < N; i++)
		pthread_join(c[i], NULL);
	pthread_join(t, NULL);
	unsigned long gps = (kt_srcu_gp_seq(&ss) - before) / 2;
	/*
	 * One blocked grace period, then one more serves all later arrivals
	 * (typically 2 in all; the bound leaves room for a slow scheduler).
	 */
	KCHECK(gps >= 1);
	KCHECK(gps <= N / 2);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Regression: fork() while another thread waits in ksync_srcu_barrier(). The
 * barrier's marker lives on the waiting thread's stack and was queued on the
 * domain's callback stack; the child kept it, although that thread does not
 * exist there and glibc hands its stack to the child's next threads, so the
 * child's helper called through whatever the new threads wrote there
 * (SIGSEGV). The schedule is forced: a reader holds the helper in a grace
 * period (the first batch is taken), so the marker is the one head queued at
 * fork(). The child checks that no marker is left queued, then starts
 * threads that scribble over their stacks, and uses call_srcu + barrier.
 */
static void *scribble_stack(void *arg)
{
	volatile unsigned char buf[64 * 1024];
	memset((void *)buf, 0xa5, sizeof(buf));
	return (void *)(uintptr_t)buf[(uintptr_t)arg % sizeof(buf)];
}

static void *barrier_waiter(void *p)
{
	ksync_srcu_barrier((struct ksync_srcu_struct *)p);
	return NULL;
}

static void fork_barrier_cb(struct ksync_rcu_head *h)
{
	__atomic_fetch_add(&freed, 1, __ATOMIC_SEQ_CST);
	free(ksync_container_of(h, struct obj, rh));
}

KTEST(fork_while_another_thread_waits_in_barrier)
{
	struct ksync_srcu_struct ss;
	ksync_init_srcu_struct(&ss);
	struct holder h = { &ss, 0, 0 };
	pthread_t reader, waiter;

	pthread_create(&reader, NULL, hold_until_told, &h);
	KT_POLL_UNTIL(__atomic_load_n(&h.entered, __ATOMIC_SEQ_CST));
	freed = 0;
	struct obj *o = (struct obj *)malloc(sizeof(*o));
	ksync_call_srcu(&ss, &o->rh, fork_barrier_cb);
	/* The helper takes that batch and waits for the reader. */
	KT_POLL_UNTIL(kt_srcu_cb_stack_empty(&ss));
	pthread_create(&waiter, NULL, barrier_waiter, &ss);
	/* The waiter's marker is queued behind the helper's grace period. */
	KT_POLL_UNTIL(kt_srcu_queued_barrier_markers(&ss) > 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		if (kt_srcu_queued_barrier_markers(&ss) != 0)
			bad |= 1; /* a marker of a thread that does not exist here */
		if (!KT_TSAN) { /* TSan: no threads in the child of a threaded fork */
			pthread_t t[4];
			for (int i = 0; i < 4; i++)
				pthread_create(&t[i], NULL, scribble_stack, (void *)(uintptr_t)i);
			for (int i = 0; i < 4; i++)
				pthread_join(t[i], NULL);
			freed = 0;
			struct obj *c = (struct obj *)malloc(sizeof(*c));
			ksync_call_srcu(&ss, &c->rh, fork_barrier_cb);
			ksync_srcu_barrier(&ss);
			bad |= (freed != 1) << 1;
		}
		ksync_synchronize_srcu(&ss);
		_exit(bad ? 10 + bad : 0);
	}
	KCHECK(pid > 0);
	__atomic_store_n(&h.release, 1, __ATOMIC_SEQ_CST);
	pthread_join(reader, NULL);
	pthread_join(waiter, NULL);
	KCHECK_EQ(freed, 1); /* the parent's barrier saw its callback run */
	int status = 0;
	waitpid(pid, &status, 0);
	KCHECK(WIFEXITED(status));
	if (WIFSIGNALED(status))
		fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
	KCHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Regression: a callback calls fork() while its batch also holds another
 * thread's srcu_barrier() marker. In the child the helper (the forking
 * thread) came back into its batch and called the marker on a stack the
 * child's new threads had reused (SIGSEGV), and settled counts the child
 * never had (cb_count wrapped). Forced: a reader holds the helper in a
 * grace period while the forking callback and then the marker are queued,
 * so one batch holds both, the marker after the callback.
 */
static int forked_child_status = -1;

/* The child ends with its callback's thread; its copies of the parent's objects are no leak. */
static void child_exit_quietly(void)
{
	_exit(0);
}

static void forking_cb(struct ksync_rcu_head *h)
{
	(void)h;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		atexit(child_exit_quietly); /* runs before LeakSanitizer's exit check */
		if (!KT_TSAN) {
			pthread_t t[4];
			for (int i = 0; i < 4; i++)
				pthread_create(&t[i], NULL, scribble_stack, (void *)(uintptr_t)i);
			for (int i = 0; i < 4; i++)
				pthread_join(t[i], NULL);
		}
		return; /* back into the helper's batch, in the child */
	}
	int status = 0;
	waitpid(pid, &status, 0);
	__atomic_store_n(&forked_child_status, status, __ATOMIC_SEQ_CST);
}

static void nop_cb(struct ksync_rcu_head *h)
{
	(void)h;
}

KTEST(fork_from_a_callback_with_a_barrier_in_its_batch)
{
	struct ksync_srcu_struct ss;
	struct ksync_rcu_head first, forker;
	struct holder h;
	pthread_t reader, waiter;

	if (KT_TSAN) { /* TSan does not follow a fork() from a non-main thread */
		printf("  skipped under ThreadSanitizer\n");
		return;
	}
	ksync_init_srcu_struct(&ss);
	h = (struct holder){ &ss, 0, 0 };
	pthread_create(&reader, NULL, hold_until_told, &h);
	KT_POLL_UNTIL(__atomic_load_n(&h.entered, __ATOMIC_SEQ_CST));
	ksync_call_srcu(&ss, &first, nop_cb);
	KT_POLL_UNTIL(kt_srcu_cb_stack_empty(&ss)); /* the helper took it, waits for the reader */
	ksync_call_srcu(&ss, &forker, forking_cb);
	pthread_create(&waiter, NULL, barrier_waiter, &ss);
	KT_POLL_UNTIL(kt_srcu_queued_barrier_markers(&ss) > 0);
	__atomic_store_n(&h.release, 1, __ATOMIC_SEQ_CST);
	pthread_join(reader, NULL);
	pthread_join(waiter, NULL); /* the barrier returns in the parent */
	int status = __atomic_load_n(&forked_child_status, __ATOMIC_SEQ_CST);
	if (WIFSIGNALED(status))
		fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
	/* The child finished the batch without the marker and ended (status 0). */
	KCHECK(WIFEXITED(status));
	KCHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	KCHECK_EQ(kt_srcu_cb_count(&ss), 0);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * Regression: pthread_cancel() of a thread waiting in ksync_srcu_barrier().
 * The wait is a cancellation point: the cancelled thread kept cb_lock (a
 * condition wait reacquires it before unwinding) and left its marker
 * queued, so the helper and every later barrier blocked. Now the barrier is
 * not cancellable; the thread ends after it returns.
 */
KTEST(cancel_a_thread_waiting_in_barrier)
{
	struct ksync_srcu_struct ss;
	struct ksync_rcu_head first;
	struct holder h;
	pthread_t reader, waiter;

	ksync_init_srcu_struct(&ss);
	h = (struct holder){ &ss, 0, 0 };
	pthread_create(&reader, NULL, hold_until_told, &h);
	KT_POLL_UNTIL(__atomic_load_n(&h.entered, __ATOMIC_SEQ_CST));
	ksync_call_srcu(&ss, &first, nop_cb);
	KT_POLL_UNTIL(kt_srcu_cb_stack_empty(&ss));
	pthread_create(&waiter, NULL, barrier_waiter, &ss);
	KT_POLL_UNTIL(kt_srcu_queued_barrier_markers(&ss) > 0);
	/* The marker is queued: the waiter is in (or entering) its wait. */
	KCHECK_EQ(pthread_cancel(waiter), 0);
	__atomic_store_n(&h.release, 1, __ATOMIC_SEQ_CST);
	pthread_join(reader, NULL);
	pthread_join(waiter, NULL);
	/*
	 * The helper takes cb_lock for moments while it finishes the batch; a
	 * lock the cancelled thread kept stays held. Wait up to 5 s for it to
	 * be free (not a timing assertion: the bug held it forever).
	 */
	KT_POLL_UNTIL_MS(!kt_srcu_cb_lock_busy(&ss), 5000);
	int busy = kt_srcu_cb_lock_busy(&ss);
	KCHECK_EQ(busy, 0);
	if (busy) /* the helper is stuck on cb_lock: leak the domain rather than hang */
		return;
	ksync_srcu_barrier(&ss);
	KCHECK_EQ(kt_srcu_queued_barrier_markers(&ss), 0);
	KCHECK_EQ(kt_srcu_cb_count(&ss), 0);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * A reader whose slot could not be allocated is counted in the domain's
 * shared slot; it is still this thread's section: read_lock_held() says so,
 * and synchronize_srcu() inside it is reported instead of waiting for
 * itself forever (found by oom_test's review: both looked at the slot only).
 */
KTEST(a_section_counted_in_the_shared_slot_is_still_this_threads)
{
	KSYNC_DEFINE_STATIC_SRCU(ss);

	ksync_fail_nth_alloc(1); /* the slot of this thread for @ss */
	int idx = ksync_srcu_read_lock(&ss);
	KCHECK(ksync_fail_nth_alloc_fired());
	ksync_fail_nth_alloc(0);
	KCHECK_EQ(ksync_srcu_read_lock_held(&ss), 1);
	if (ksync_srcu_read_lock_held(&ss)) { /* else this would never return */
		unsigned long c = ksync_get_state_synchronize_srcu(&ss);
		ksync_synchronize_srcu(&ss); /* reported (once per site), returns at once */
		KCHECK(!ksync_poll_state_synchronize_srcu(&ss, c)); /* it waited for nothing */
	}
	ksync_srcu_read_unlock(&ss, idx);
	KCHECK_EQ(ksync_srcu_read_lock_held(&ss), 0);
	ksync_synchronize_srcu(&ss); /* outside now: a real grace period */
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * The idle fast path of a grace period (no slot, shared counters balanced:
 * no membarrier, no scan) against readers that appear and vanish: each
 * reader is a fresh thread (its first section adds its slot; its exit takes
 * it away), so the domain keeps going from "no reader" to "a reader" while
 * an updater retires objects. A reader must never see an object retired by
 * a grace period that ended while it was inside.
 */
static struct ksync_srcu_struct fast_ss;
struct fast_obj {
	int alive;
};
static struct fast_obj *fast_ptr;
static int fast_stop, fast_bad, fast_done;

static void *fast_reader(void *arg)
{
	(void)arg;
	int idx = ksync_srcu_read_lock(&fast_ss);
	struct fast_obj *o = __atomic_load_n(&fast_ptr, __ATOMIC_ACQUIRE);
	for (int i = 0; i < 50; i++) {
		if (!__atomic_load_n(&o->alive, __ATOMIC_RELAXED))
			__atomic_store_n(&fast_bad, 1, __ATOMIC_RELAXED);
		sched_yield();
	}
	ksync_srcu_read_unlock(&fast_ss, idx);
	__atomic_add_fetch(&fast_done, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *fast_readers(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&fast_stop, __ATOMIC_RELAXED)) {
		pthread_t t;
		if (pthread_create(&t, NULL, fast_reader, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

KTEST(idle_fast_path_never_misses_a_new_reader)
{
	pthread_t r[2];
	/* A ring: an object is published again only a grace period after it was retired. */
	struct fast_obj *pool = calloc(64, sizeof(*pool));

	KCHECK_EQ(ksync_init_srcu_struct(&fast_ss), 0);
	pool[0].alive = 1;
	fast_ptr = &pool[0];
	for (int i = 0; i < 2; i++)
		KCHECK_EQ(pthread_create(&r[i], NULL, fast_readers, NULL), 0);
	for (unsigned long i = 1; __atomic_load_n(&fast_done, __ATOMIC_RELAXED) < 600; i++) {
		__atomic_store_n(&pool[i % 64].alive, 1, __ATOMIC_RELAXED);
		struct fast_obj *old = __atomic_exchange_n(&fast_ptr, &pool[i % 64], __ATOMIC_ACQ_REL);
		ksync_synchronize_srcu(&fast_ss);
		__atomic_store_n(&old->alive, 0, __ATOMIC_RELAXED); /* retired: no reader may see it */
	}
	__atomic_store_n(&fast_stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	KCHECK_EQ(fast_bad, 0);
	ksync_cleanup_srcu_struct(&fast_ss);
	free(pool);
}

/*
 * The read side reaches a thread's words of a domain through the domain's
 * key, with no lookup: KSYNC_SRCU_DIRECT - 1 domains at a time have direct
 * words in every thread's TLS, the rest keep them in the slot (slow path).
 * Cleanup hands a domain's direct entry to the next domain set up; the
 * entry must then be registered again by each thread, on the new domain's
 * list, or the new domain's grace periods would not see its sections.
 */
#define MANY_DOMAINS (KSYNC_SRCU_DIRECT + 9)
static struct ksync_srcu_struct many_ss[MANY_DOMAINS];

struct gp_probe {
	struct ksync_srcu_struct *ssp;
	int returned;
};

static void *gp_probe_main(void *arg)
{
	struct gp_probe *g = (struct gp_probe *)arg;
	ksync_synchronize_srcu(g->ssp);
	__atomic_store_n(&g->returned, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * With a section of @ssp open on this thread, a grace period started by
 * another thread must not end within @ms; then @end ends the section
 * (@idx: its index, or @tok: its fast-form token) and the grace period
 * must end.
 */
static void gp_must_wait_then_end(struct ksync_srcu_struct *ssp, long ms, int idx, struct ksync_srcu_ctr *tok)
{
	struct gp_probe g = { ssp, 0 };
	pthread_t t;
	KCHECK_EQ(pthread_create(&t, NULL, gp_probe_main, &g), 0);
	kt_sleep_ms(ms);
	KCHECK_EQ(__atomic_load_n(&g.returned, __ATOMIC_SEQ_CST), 0);
	if (tok)
		ksync_srcu_read_unlock_fast(ssp, tok);
	else
		ksync_srcu_read_unlock(ssp, idx);
	pthread_join(t, NULL);
	KCHECK_EQ(g.returned, 1);
}

static void gp_must_wait_then_unlock(struct ksync_srcu_struct *ssp, int idx)
{
	gp_must_wait_then_end(ssp, 20, idx, NULL);
}

KTEST(direct_words_recycled_by_cleanup_and_domains_past_them)
{
	int idx[MANY_DOMAINS];

	for (int i = 0; i < MANY_DOMAINS; i++)
		KCHECK_EQ(ksync_init_srcu_struct(&many_ss[i]), 0);
	/* Sections open in every domain at once, two deep, from one thread. */
	for (int i = 0; i < MANY_DOMAINS; i++) {
		idx[i] = ksync_srcu_read_lock(&many_ss[i]);
		int in = ksync_srcu_read_lock(&many_ss[i]);
		ksync_srcu_read_unlock(&many_ss[i], in);
	}
	for (int i = 0; i < MANY_DOMAINS; i++)
		KCHECK(ksync_srcu_read_lock_held(&many_ss[i]));
	/* The first domains have direct words, the last ones do not: both are waited for. */
	gp_must_wait_then_unlock(&many_ss[0], idx[0]);
	gp_must_wait_then_unlock(&many_ss[MANY_DOMAINS - 1], idx[MANY_DOMAINS - 1]);
	for (int i = 1; i < MANY_DOMAINS - 1; i++)
		ksync_srcu_read_unlock(&many_ss[i], idx[i]);
	for (int i = 0; i < MANY_DOMAINS; i++)
		KCHECK(!ksync_srcu_read_lock_held(&many_ss[i]));

	/*
	 * Recycle: clean the first ten up and set ten up again (they take the
	 * freed direct entries). This thread registered with the old owners of
	 * those entries; its sections of the new domains must still be seen.
	 */
	for (int i = 0; i < 10; i++) {
		ksync_cleanup_srcu_struct(&many_ss[i]);
		KCHECK_EQ(ksync_init_srcu_struct(&many_ss[i]), 0);
	}
	for (int i = 0; i < 10; i++) {
		int x = ksync_srcu_read_lock(&many_ss[i]);
		KCHECK(ksync_srcu_read_lock_held(&many_ss[i]));
		gp_must_wait_then_unlock(&many_ss[i], x);
	}
	for (int i = 0; i < MANY_DOMAINS; i++)
		ksync_cleanup_srcu_struct(&many_ss[i]);
}

/*
 * The read word holds the key, the index and the mode in one word
 * (KSYNC__SRCU_IDX_BIT, impl/srcu_types.h). On a direct domain and on one
 * past the direct words, in both modes, across flips: a section of either
 * form counts on the current index in this thread's word of that index
 * (the direct TLS word, or the slot's for the far domain, never entry 0's);
 * a flip changes the index and nothing else; sections of both indexes and
 * both forms, ended in crossed order, are each waited for.
 */
static void read_word_case(struct ksync_srcu_struct *ssp, bool direct)
{
	int first = ksync_srcu_read_lock(ssp); /* sets the domain up and registers this thread */
	ksync_srcu_read_unlock(ssp, first);
	const unsigned long key = kt_srcu_key(ssp), mode = kt_srcu_read_word(ssp) & KSYNC__SRCU_FENCED_BIT;
	const unsigned long *entry0 = ksync__srcu_direct_word(0);

	KCHECK_EQ(direct, key != 0);
	KCHECK_EQ(mode != 0, (kt_srcu_id(ssp) & 1) != 0); /* the read word's mode is the domain's */
	for (int round = 0; round < 4; round++) {
		unsigned long v = kt_srcu_read_word(ssp);
		int cur = (int)(v & 1);

		KCHECK_EQ(v & KSYNC__SRCU_KEY_MASK, key);
		KCHECK_EQ(v & KSYNC__SRCU_FENCED_BIT, mode);
		KCHECK_EQ((v & KSYNC__SRCU_IDX_BIT) != 0, cur != 0); /* both index bits agree */
		int i = ksync_srcu_read_lock(ssp);
		struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(ssp);
		KCHECK_EQ(i, cur);
		KCHECK_EQ(ksync__srcu_token_index(ssp, t), cur);
		KCHECK((const unsigned long *)t != entry0 + cur); /* not the shared counters' token */
		if (direct)
			KCHECK((const unsigned long *)t == ksync__srcu_direct_word(key) + cur);

		kt_srcu_flip(ssp);
		KCHECK_EQ(kt_srcu_read_word(ssp), v ^ KSYNC__SRCU_FLIP);
		int j = ksync_srcu_read_lock(ssp);
		struct ksync_srcu_ctr *u = ksync_srcu_read_lock_fast(ssp);
		KCHECK_EQ(j, cur ^ 1);
		KCHECK_EQ(ksync__srcu_token_index(ssp, u), cur ^ 1);
		KCHECK(u != t);

		/* Crossed order: the old index's sections first, each form's own unlock. */
		ksync_srcu_read_unlock_fast(ssp, t);
		KCHECK(ksync_srcu_read_lock_held(ssp));
		ksync_srcu_read_unlock(ssp, i);
		KCHECK(ksync_srcu_read_lock_held(ssp));
		ksync_srcu_read_unlock(ssp, j);
		KCHECK(ksync_srcu_read_lock_held(ssp)); /* u is still open */
		struct ksync_srcu_ctr *again = ksync_srcu_read_lock_fast(ssp); /* nested on u's word */
		KCHECK(again == u);
		ksync_srcu_read_unlock_fast(ssp, again);
		/* The last section, on the new index, holds a grace period off. */
		gp_must_wait_then_end(ssp, 5, -1, u);
		KCHECK(!ksync_srcu_read_lock_held(ssp));
	}
}

KTEST(read_word_key_index_and_mode)
{
	for (int fenced = 0; fenced < 2; fenced++) {
		for (int i = 0; i < MANY_DOMAINS; i++)
			KCHECK_EQ(ksync_init_srcu_struct_flags(&many_ss[i], fenced ? KSYNC_SRCU_FENCED : 0), 0);
		for (int i = 0; i < MANY_DOMAINS; i++) /* the first ones take the direct words */
			ksync_srcu_read_unlock(&many_ss[i], ksync_srcu_read_lock(&many_ss[i]));
		read_word_case(&many_ss[0], true);
		read_word_case(&many_ss[MANY_DOMAINS - 1], false);
		for (int i = 0; i < MANY_DOMAINS; i++)
			ksync_cleanup_srcu_struct(&many_ss[i]);
	}
	/* Cleanup leaves the read word of a domain never used: every section goes the slow way. */
	KCHECK_EQ(kt_srcu_read_word(&many_ss[0]), 0UL);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
