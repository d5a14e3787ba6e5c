/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_fuzzing_mode_test - SRCU in the fuzzing mode of <ksync/fuzzing.h>:
 * no helper thread, callbacks only where the caller drives them, in queueing
 * order and never before their grace period; polls, the callback limit and
 * misuse. Built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION defined, as a
 * user's fuzzer would be, so main() first checks that the macro alone turned
 * the mode on.
 */
#include <ksync/linux/srcu.h>
#include <ksync/srcu.h>

#include "../common/ktest.h"
#include "../common/reports.h"

#include <dirent.h>
#include <pthread.h>
#include <time.h>

/* Threads of this process (entries of /proc/self/task). */
static int thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

struct node {
	struct ksync_rcu_head rcu;
	int id;
};

static int order[64], norder;

static void record_cb(struct ksync_rcu_head *h)
{
	struct node *n = ksync_container_of(h, struct node, rcu);
	if (norder < 64)
		order[norder++] = n->id;
}

KTEST(no_thread_outlives_a_call_and_callbacks_wait_for_the_caller)
{
	KSYNC_DEFINE_STATIC_SRCU(ss);
	struct node n[3];
	int before = thread_count();

	norder = 0;
	for (int i = 0; i < 3; i++) {
		n[i].id = i;
		ksync_call_srcu(&ss, &n[i].rcu, record_cb);
	}
	KCHECK_EQ(thread_count(), before); /* no helper started */
	KCHECK_EQ(norder, 0);		   /* nothing runs by itself */
	KCHECK_EQ(ksync_srcu_run_callbacks(&ss), 3);
	KCHECK_EQ(norder, 3);
	for (int i = 0; i < 3; i++)
		KCHECK_EQ(order[i], i); /* queueing order */
	KCHECK_EQ(ksync_srcu_run_callbacks(&ss), 0);
	KCHECK_EQ(thread_count(), before);
	ksync_cleanup_srcu_struct(&ss);
}

/* A reader in another thread holds the grace period of a queued callback. */
static struct ksync_srcu_struct gp_ss;
static int reader_inside, reader_left, cb_saw_reader_inside;

static void *reader_main(void *arg)
{
	(void)arg;
	int idx = ksync_srcu_read_lock(&gp_ss);
	__atomic_store_n(&reader_inside, 1, __ATOMIC_RELEASE);
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL); /* gives a too-short grace period the time to end */
	__atomic_store_n(&reader_left, 1, __ATOMIC_RELEASE);
	ksync_srcu_read_unlock(&gp_ss, idx);
	return NULL;
}

static void gp_cb(struct ksync_rcu_head *h)
{
	(void)h;
	if (!__atomic_load_n(&reader_left, __ATOMIC_ACQUIRE))
		cb_saw_reader_inside = 1;
}

KTEST(a_driven_callback_waits_for_the_readers_before_it)
{
	pthread_t t;
	struct ksync_rcu_head head;

	KCHECK_EQ(ksync_init_srcu_struct(&gp_ss), 0);
	KCHECK_EQ(pthread_create(&t, NULL, reader_main, NULL), 0);
	while (!__atomic_load_n(&reader_inside, __ATOMIC_ACQUIRE))
		sched_yield();
	ksync_call_srcu(&gp_ss, &head, gp_cb);
	KCHECK_EQ(ksync_srcu_run_callbacks(&gp_ss), 1);
	KCHECK_EQ(cb_saw_reader_inside, 0);
	KCHECK(__atomic_load_n(&reader_left, __ATOMIC_ACQUIRE));
	pthread_join(t, NULL);
	ksync_cleanup_srcu_struct(&gp_ss);
}

/* A callback that queues another one; the barrier must run both. */
static struct ksync_srcu_struct chain_ss;
static struct node chain_tail;

static void chain_cb(struct ksync_rcu_head *h)
{
	record_cb(h);
	ksync_call_srcu(&chain_ss, &chain_tail.rcu, record_cb);
}

KTEST(barrier_drives_the_queue_and_what_callbacks_queue)
{
	struct node first = { .id = 1 };

	norder = 0;
	chain_tail.id = 2;
	KCHECK_EQ(ksync_init_srcu_struct(&chain_ss), 0);
	ksync_call_srcu(&chain_ss, &first.rcu, chain_cb);
	ksync_srcu_barrier(&chain_ss);
	KCHECK_EQ(norder, 2);
	KCHECK_EQ(order[0], 1);
	KCHECK_EQ(order[1], 2);
	ksync_cleanup_srcu_struct(&chain_ss); /* no report: nothing pending */
}

KTEST(start_poll_runs_its_grace_period_unless_the_caller_is_inside)
{
	KSYNC_DEFINE_STATIC_SRCU(ss);

	unsigned long c = ksync_start_poll_synchronize_srcu(&ss);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, c));

	int idx = ksync_srcu_read_lock(&ss);
	c = ksync_start_poll_synchronize_srcu(&ss);
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, c));
	ksync_srcu_read_unlock(&ss, idx);
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, c)); /* deferred to the next drive */
	KCHECK_EQ(ksync_srcu_run_callbacks(&ss), 0);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, c));
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(over_the_limit_the_caller_works_the_queue_down)
{
	KSYNC_DEFINE_STATIC_SRCU(ss);
	struct node n[10];

	norder = 0;
	ksync_srcu_set_cb_limit(&ss, 4);
	for (int i = 0; i < 10; i++) {
		n[i].id = i;
		ksync_call_srcu(&ss, &n[i].rcu, record_cb);
		KCHECK(i + 1 - norder <= 4); /* never more than the limit waits */
	}
	KCHECK(norder >= 6);
	(void)ksync_srcu_run_callbacks(&ss);
	KCHECK_EQ(norder, 10);
	for (int i = 0; i < 10; i++)
		KCHECK_EQ(order[i], i);
	ksync_cleanup_srcu_struct(&ss);
}

/* Misuse: driving a domain from inside it. */
static struct ksync_srcu_struct misuse_ss;
static unsigned long from_cb_run, from_cb_reports;

static void misuse_cb(struct ksync_rcu_head *h)
{
	(void)h;
	int before = reports;
	from_cb_run = ksync_srcu_run_callbacks(&misuse_ss);
	ksync_srcu_barrier(&misuse_ss);
	from_cb_reports = (unsigned long)(reports - before);
}

KTEST(driving_a_domain_from_inside_it_is_reported)
{
	struct ksync_rcu_head h1;
	struct node n2 = { .id = 2 };

	ksync_warn_hook = kt_record_report;
	KCHECK_EQ(ksync_init_srcu_struct(&misuse_ss), 0);
	int idx = ksync_srcu_read_lock(&misuse_ss);
	ksync_call_srcu(&misuse_ss, &h1, misuse_cb);
	int before = reports;
	KCHECK_EQ(ksync_srcu_run_callbacks(&misuse_ss), 0); /* inside: reported, nothing run */
	KCHECK_EQ(reports, before + 1);
	ksync_srcu_read_unlock(&misuse_ss, idx);

	from_cb_run = 99;
	KCHECK_EQ(ksync_srcu_run_callbacks(&misuse_ss), 1);
	KCHECK_EQ(from_cb_run, 0);     /* from the callback: refused */
	KCHECK_EQ(from_cb_reports, 2); /* both calls reported */
	ksync_call_srcu(&misuse_ss, &n2.rcu, record_cb);
	ksync_srcu_barrier(&misuse_ss);
	ksync_cleanup_srcu_struct(&misuse_ss);
	ksync_warn_hook = NULL;
}

KTEST(run_all_callbacks_drives_every_domain)
{
	KSYNC_DEFINE_STATIC_SRCU(a);
	KSYNC_DEFINE_STATIC_SRCU(b);
	struct node n[5];

	norder = 0;
	for (int i = 0; i < 5; i++) {
		n[i].id = i;
		ksync_call_srcu(i < 2 ? &a : &b, &n[i].rcu, record_cb);
	}
	KCHECK_EQ(srcu_run_all_callbacks(), 5); /* the kernel-style spelling */
	KCHECK_EQ(norder, 5);
	KCHECK_EQ(srcu_run_callbacks(&a) + srcu_run_callbacks(&b), 0);
	ksync_cleanup_srcu_struct(&a);
	ksync_cleanup_srcu_struct(&b);
}

KTEST(off_again_the_helper_thread_runs_callbacks)
{
	KSYNC_DEFINE_STATIC_SRCU(ss);
	struct node n = { .id = 7 };
	int before = thread_count();

	norder = 0;
	ksync_fuzzing_enable(false);
	ksync_call_srcu(&ss, &n.rcu, record_cb);
	ksync_srcu_barrier(&ss); /* the helper ran it */
	KCHECK_EQ(norder, 1);
	KCHECK_EQ(thread_count(), before + 1);
	ksync_cleanup_srcu_struct(&ss);
	KCHECK_EQ(thread_count(), before);
	ksync_fuzzing_enable(true);
}

int main(int argc, char **argv)
{
	/* FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION alone turned the mode on. */
	if (!ksync_fuzzing_enabled()) {
		fprintf(stderr, "the fuzzing mode is off at start\n");
		return 1;
	}
	return ktest_run(argc, argv);
}
