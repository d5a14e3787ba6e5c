/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of <ksync/pressure.h>'s monitor, driven by the test source
 * (ksync_pressure_inject()) on a registry of the test's own, whose shrinkers
 * record every call: the priority of a call is read back from what it was
 * asked to scan (ksync_shrink_budget() is the formula), so the tests check
 * levels -> priorities, sustained pressure digging to the floor, deferred
 * work, rate limits, hysteresis, callbacks, the group walk, both ways to run
 * (fd mode in an epoll loop of the test's own, the helper thread: its name
 * and signal mask), fork, stop during a round, the figures, describe.
 *
 * Nothing here asserts a duration: the tests wait for states (a level that
 * fell back, a count that grew) and sleep only to make sure that at least a
 * rate-limit interval of 1 ms has passed.
 */
#define _GNU_SOURCE
#include <ksync/pressure.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"
#include "pressure_rec.h"
#include "sanitizer.h"
#include "wait.h"


/* ------------------------------------------------------------------------ */
/* The reaction                                                             */

KTEST(levels_map_to_priorities)
{
	struct fx f;
	static const int want[] = { -1, 12, 10, 7 }; /* the defaults of the header */

	fx_init(&f, 0);
	fx_create(&f);
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++) {
		KCHECK_EQ(inject_dispatch(&f, (enum ksync_pressure_level)l), 1);
		KCHECK_EQ(rec_calls(&f.r), l);
		KCHECK_EQ(prio_of(rec_call(&f.r, l - 1).asked, 0), want[l]);
		KCHECK(rec_call(&f.r, l - 1).group == NULL); /* the global walk */
	}
	struct ksync_pressure_stats st = stats(f.p);
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++) {
		KCHECK_EQ(st.events[l], 1);
		KCHECK_EQ(st.rounds[l], 1);
	}
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_CRITICAL); /* hold: 2 s */
	fx_done(&f);
}

KTEST(configured_priorities_are_used)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.priority[KSYNC_PRESSURE_LOW] = 11;
	f.cfg.priority[KSYNC_PRESSURE_MEDIUM] = 5;
	f.cfg.floor[KSYNC_PRESSURE_MEDIUM] = 3;
	fx_create(&f);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(rec_calls(&f.r), 2);
	KCHECK_EQ(prio_of(rec_call(&f.r, 0).asked, 0), 11);
	KCHECK_EQ(prio_of(rec_call(&f.r, 1).asked, 0), 5);
	fx_done(&f);
}

KTEST(a_level_that_stays_up_digs_down_to_its_floor)
{
	struct fx f;
	static const int want[] = { 10, 9, 8, 7, 6, 6, 6 }; /* MEDIUM: 10, floor 6 */

	fx_init(&f, 0);
	f.cfg.hold_ms = 3600 * 1000; /* the level stays up for the whole test */
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 1;
	fx_create(&f);
	for (int i = 0; i < 7; i++) {
		kt_sleep_ms(2); /* past the 1 ms rate limit */
		KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
		KCHECK_EQ(rec_calls(&f.r), i + 1);
		KCHECK_EQ(prio_of(rec_call(&f.r, i).asked, 0), want[i]);
	}
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM], 7);
	KCHECK_EQ(stats(f.p).rate_limited, 0);
	fx_done(&f);
}

KTEST(deferred_work_is_carried_to_the_next_round)
{
	struct fx f;
	struct ksync_shrink_budget b1, b2;

	fx_init(&f, 0);
	f.cfg.hold_ms = 3600 * 1000;
	f.cfg.priority[KSYNC_PRESSURE_CRITICAL] = 2;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_CRITICAL] = 1;
	fx_create(&f);
	/* Round 1 at priority 2: the first scan refuses (STOP), the work stays deferred. */
	f.r.stop_next = 1;
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	ksync_shrink_budget(FREEABLE, 0, 2, SEEKS, 1, &b1);
	long deferred = ksync_shrinker_deferred(f.s, NULL, 0);
	KCHECK_EQ(deferred, ksync_shrink_next_deferred(0, b1.delta, 0, FREEABLE));
	KCHECK(deferred > 0);
	/* Round 2: the level stayed up, so priority 1, and the deferred work is asked for. */
	kt_sleep_ms(2);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	KCHECK_EQ(rec_calls(&f.r), 2);
	ksync_shrink_budget(FREEABLE, deferred, 1, SEEKS, 1, &b2);
	KCHECK_EQ(rec_call(&f.r, 1).asked, b2.total_scan);
	KCHECK(b2.total_scan > b2.delta); /* the deferred work is part of it */
	KCHECK_EQ(ksync_shrinker_deferred(f.s, NULL, 0),
		  ksync_shrink_next_deferred(deferred, b2.delta, b2.total_scan, FREEABLE));
	fx_done(&f);
}

KTEST(rate_limit_per_level)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 3600 * 1000;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 3600 * 1000;
	fx_create(&f);
	for (int i = 0; i < 10; i++)
		KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_LOW], 10);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(st.rate_limited, 9);
	KCHECK_EQ(rec_calls(&f.r), 1);
	/* A higher level is not held back by LOW's limit. */
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM], 1);
	KCHECK_EQ(rec_calls(&f.r), 2);
	/* Many injections read in one pass: one round, the rest counted. */
	for (int i = 0; i < 5; i++)
		KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 6);
	st = stats(f.p);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_CRITICAL], 5);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(st.rate_limited, 9 + 4);
	KCHECK_EQ(rec_calls(&f.r), 3);
	KCHECK_EQ(prio_of(rec_call(&f.r, 2).asked, 0), 7); /* the round of the highest level */
	fx_done(&f);
}

KTEST(hysteresis_level_falls_back_to_none)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.hold_ms = 20;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 1;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	/* Wait for the state: it falls once hold_ms passed without events. */
	KT_POLL_UNTIL(ksync_pressure_level(f.p) == KSYNC_PRESSURE_NONE);
	/* The monitor's fd becomes readable for the fall (its timer); dispatch reads no event. */
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };
	KCHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, ksync_pressure_fd(f.p), &ev), 0);
	KCHECK_EQ(epoll_wait(ep, &ev, 1, -1), 1);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	close(ep);
	/* The level was down: the next round starts at LOW's own priority again. */
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(rec_calls(&f.r), 2);
	KCHECK_EQ(prio_of(rec_call(&f.r, 1).asked, 0), 12);

	/* With a long hold the level is up right after the event. */
	struct fx g;
	fx_init(&g, 0);
	g.cfg.hold_ms = 3600 * 1000;
	fx_create(&g);
	KCHECK_EQ(inject_dispatch(&g, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(ksync_pressure_level(g.p), KSYNC_PRESSURE_MEDIUM);
	KCHECK_EQ(inject_dispatch(&g, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(ksync_pressure_level(g.p), KSYNC_PRESSURE_MEDIUM); /* the highest level up */
	fx_done(&g);
	fx_done(&f);
}

/* A user callback: records the levels it got, and how many shrinker calls preceded it. */
struct cb_log {
	struct rec *r;
	int n;
	int level[16];
	int calls_before[16];
};

static void log_level(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg)
{
	struct cb_log *log = arg;

	(void)p;
	if (log->n < 16) {
		log->level[log->n] = level;
		log->calls_before[log->n] = rec_calls(log->r);
		log->n++;
	}
}

KTEST(user_callbacks_per_level_after_the_shrinking)
{
	struct fx f;
	struct cb_log low = { 0 }, crit = { 0 };

	fx_init(&f, 0);
	fx_create(&f);
	low.r = crit.r = &f.r;
	KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_LOW, log_level, &low), 0);
	KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_CRITICAL, log_level, &crit), 0);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1); /* no callback */
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	KCHECK_EQ(low.n, 1);
	KCHECK_EQ(low.level[0], KSYNC_PRESSURE_LOW);
	KCHECK_EQ(low.calls_before[0], 1);
	KCHECK_EQ(crit.n, 1);
	KCHECK_EQ(crit.level[0], KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(crit.calls_before[0], 3);
	/* Cleared: not called any more. */
	KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_CRITICAL, NULL, NULL), 0);
	kt_sleep_ms(15); /* past CRITICAL's 10 ms rate limit */
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	KCHECK_EQ(rec_calls(&f.r), 4);
	KCHECK_EQ(crit.n, 1);
	fx_done(&f);
}

/* The registry's other shrinker in the group test: not memcg-aware. */
static unsigned long plain_calls;
static unsigned long plain_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	__atomic_fetch_add(&plain_calls, 1, __ATOMIC_RELAXED);
	return FREEABLE;
}

KTEST(group_target_walks_only_that_group)
{
	struct fx f;

	fx_init(&f, KSYNC_SHRINKER_MEMCG_AWARE);
	struct ksync_shrinker *plain = ksync_shrinker_alloc(f.reg, 0, "plain");
	plain->count_objects = plain_count;
	plain->scan_objects = rec_scan;
	plain->private_data = &(struct rec){ .mu = PTHREAD_MUTEX_INITIALIZER };
	KASSERT(ksync_shrinker_register(plain) == 0);
	struct ksync_memgroup *g1 = ksync_shrinker_group_create(f.reg, NULL);
	struct ksync_memgroup *g2 = ksync_shrinker_group_create(f.reg, NULL);
	KASSERT(g1 && g2);
	KCHECK_EQ(ksync_set_shrinker_bit(g1, 0, f.s->id), 0);
	KCHECK_EQ(ksync_set_shrinker_bit(g2, 0, f.s->id), 0);
	f.cfg.group = g1;
	fx_create(&f);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	KCHECK(rec_call(&f.r, 0).group == g1);
	KCHECK_EQ(prio_of(rec_call(&f.r, 0).asked, 0), 10);
	KCHECK_EQ(__atomic_load_n(&plain_calls, __ATOMIC_RELAXED), 0);
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0); /* drops its reference on g1 */
	f.p = NULL;
	KCHECK_EQ(ksync_shrinker_group_destroy(g1), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g2), 0);
	KCHECK_EQ(ksync_shrinker_free(plain), 0);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* Two ways to run                                                          */

static void *inject_later(void *arg)
{
	struct fx *f = arg;

	kt_sleep_ms(1);
	KCHECK_EQ(ksync_pressure_inject(f->p, KSYNC_PRESSURE_MEDIUM), 0);
	return NULL;
}

KTEST(fd_mode_in_the_programs_own_epoll_loop)
{
	struct fx f;
	pthread_t t;

	fx_init(&f, 0);
	fx_create(&f);
	int fd = ksync_pressure_fd(f.p);
	KCHECK(fd >= 0);
	KCHECK_EQ(ksync_pressure_fd(f.p), fd);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0); /* nothing due */
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 };
	KCHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	pthread_create(&t, NULL, inject_later, &f);
	int events = 0;
	while (!events) { /* the program's loop: wait, then dispatch */
		KCHECK_EQ(epoll_wait(ep, &ev, 1, -1), 1);
		KCHECK_EQ(ev.data.u64, 42);
		events = ksync_pressure_dispatch(f.p);
		KCHECK(events >= 0);
	}
	pthread_join(t, NULL);
	KCHECK_EQ(events, 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM], 1);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	close(ep);
	fx_done(&f);
}

/* Tasks of this process named @name; the tid of the last one in *tid. */
static int tasks_named(const char *name, int *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			if (!strcmp(comm, name)) {
				n++;
				if (tid)
					*tid = atoi(e->d_name);
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The blocked-signal mask of task @tid (/proc/self/task/<tid>/status, SigBlk). */
static unsigned long long sigblk(int tid)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask;
}

#define SIGBIT(s) (1ULL << ((s) - 1))

KTEST(thread_mode_named_with_every_signal_blocked)
{
	struct fx f;
	int tid = 0;

	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(tasks_named("ksync-pressure", NULL), 0);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(tasks_named("ksync-pressure", &tid), 1);
	unsigned long long blk = sigblk(tid);
	KCHECK((blk & SIGBIT(SIGTERM)) && (blk & SIGBIT(SIGINT)) && (blk & SIGBIT(SIGHUP)) &&
	       (blk & SIGBIT(SIGUSR1)) && (blk & SIGBIT(SIGCHLD)) && (blk & SIGBIT(SIGALRM)));
	/* The caller's own mask is back as it was. */
	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	KCHECK(!sigismember(&now, SIGTERM));
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KT_POLL_UNTIL(test_scans(f.p) == 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	KCHECK_EQ(prio_of(rec_call(&f.r, 0).asked, 0), 12);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	KCHECK_EQ(tasks_named("ksync-pressure", NULL), 0);
	/* Started again after a stop. */
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KT_POLL_UNTIL(test_scans(f.p) == 2);
	KCHECK_EQ(prio_of(rec_call(&f.r, 1).asked, 0), 7);
	fx_done(&f); /* destroy stops the running thread */
	KCHECK_EQ(tasks_named("ksync-pressure", NULL), 0);
}

KTEST(fork_child_has_no_thread_and_may_start_again)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 1;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KT_POLL_UNTIL(test_scans(f.p) == 1);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;

		if (tasks_named("ksync-pressure", NULL) != 0)
			bad |= 1;
		if (ksync_pressure_stop(f.p) != -EINVAL) /* nothing to stop here */
			bad |= 2;
		if (!KT_TSAN) {
			if (ksync_pressure_start(f.p) != 0)
				bad |= 4;
			if (tasks_named("ksync-pressure", NULL) != 1)
				bad |= 8;
			kt_sleep_ms(2);
			ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW);
			KT_POLL_UNTIL_MS(test_scans(f.p) == 2, 60000);
			if (test_scans(f.p) != 2)
				bad |= 16;
			if (ksync_pressure_stop(f.p) != 0)
				bad |= 32;
		} else {
			/* No thread may start here under TSan: the fd mode reopens as well. */
			kt_sleep_ms(2);
			ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW);
			if (ksync_pressure_dispatch(f.p) != 1 || test_scans(f.p) != 2)
				bad |= 16;
		}
		if (ksync_pressure_destroy(f.p) != 0)
			bad |= 64;
		_exit(bad);
	}
	KASSERT(pid > 0);
	int status = 0;
	KCHECK_EQ(waitpid(pid, &status, 0), pid);
	KCHECK(WIFEXITED(status));
	KCHECK_EQ(WEXITSTATUS(status), 0);
	/* The parent's monitor goes on: its thread, its counts. */
	KCHECK_EQ(tasks_named("ksync-pressure", NULL), 1);
	KCHECK_EQ(test_scans(f.p), 1);
	kt_sleep_ms(2);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KT_POLL_UNTIL(test_scans(f.p) == 2);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	fx_done(&f);
}

struct stopper {
	struct fx *f;
	int stop_returned;
	int scan_returned_before;
};

static void *stop_it(void *arg)
{
	struct stopper *st = arg;

	KCHECK_EQ(ksync_pressure_stop(st->f->p), 0);
	st->scan_returned_before = __atomic_load_n(&st->f->r.returned, __ATOMIC_ACQUIRE);
	__atomic_store_n(&st->stop_returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

KTEST(stop_waits_for_the_round_in_flight)
{
	struct fx f;
	struct stopper st = { &f, 0, 0 };
	pthread_t t;

	fx_init(&f, 0);
	fx_create(&f);
	__atomic_store_n(&f.r.block, 1, __ATOMIC_RELEASE);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KT_POLL_UNTIL(__atomic_load_n(&f.r.in_scan, __ATOMIC_ACQUIRE));
	/* The round blocks in scan_objects; stop from another thread must wait for it. */
	pthread_create(&t, NULL, stop_it, &st);
	kt_sleep_ms(20); /* give stop() the chance to return early (it must not) */
	KCHECK_EQ(__atomic_load_n(&st.stop_returned, __ATOMIC_ACQUIRE), 0);
	__atomic_store_n(&f.r.release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	KCHECK_EQ(st.stop_returned, 1);
	KCHECK_EQ(st.scan_returned_before, 1);
	KCHECK_EQ(tasks_named("ksync-pressure", NULL), 0);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(test_scans(f.p), 1);
	fx_done(&f);
}

/* A callback that tries to tear its own monitor down. */
struct self_calls {
	int destroy, stop, dispatch, level;
	int ran;
};

static void call_self(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg)
{
	struct self_calls *c = arg;

	c->destroy = ksync_pressure_destroy(p);
	c->stop = ksync_pressure_stop(p);
	c->dispatch = ksync_pressure_dispatch(p);
	c->level = level;
	__atomic_store_n(&c->ran, 1, __ATOMIC_RELEASE);
}

KTEST(own_callback_cannot_destroy_stop_or_dispatch)
{
	struct fx f;
	struct self_calls fd_c = { 0 }, th_c = { 0 };
	int before = (int)ksync_warn_count;

	fx_init(&f, 0);
	fx_create(&f);
	/* fd mode */
	KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_LOW, call_self, &fd_c), 0);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(fd_c.ran, 1);
	KCHECK_EQ(fd_c.destroy, -EDEADLK);
	KCHECK_EQ(fd_c.stop, -EDEADLK);
	KCHECK_EQ(fd_c.dispatch, -EDEADLK);
	KCHECK_EQ(fd_c.level, KSYNC_PRESSURE_LOW);
	fx_done(&f);

	/* thread mode */
	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_MEDIUM, call_self, &th_c), 0);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_MEDIUM), 0);
	KT_POLL_UNTIL(__atomic_load_n(&th_c.ran, __ATOMIC_ACQUIRE));
	KCHECK_EQ(th_c.destroy, -EDEADLK);
	KCHECK_EQ(th_c.stop, -EDEADLK);
	KCHECK_EQ(th_c.dispatch, -EDEADLK);
	KCHECK((int)ksync_warn_count > before); /* reported */
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* What it tells                                                            */

static const char *const names[] = {
	"systemd", "psi-cgroup", "psi-system", "vmpressure", "limit", "meminfo", "budget", "test",
};

/* Every line "<name>: ok: ..." or "<name>: off: ..."; the ok ones make @mask. */
static bool lines_well_formed(const char *text, unsigned *mask, unsigned *named)
{
	const char *line = text;

	*mask = *named = 0;
	while (*line) {
		const char *nl = strchr(line, '\n');
		int k, found = -1;

		if (!nl)
			return false;
		/* Direct reclaim's line (ksync_pressure_charge()) closes the text. */
		if (!strncmp(line, "direct: ok: ", 12) || !strncmp(line, "direct: off: ", 13)) {
			line = nl + 1;
			if (*line)
				return false;
			break;
		}
		for (k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
			size_t n = strlen(names[k]);
			if (!strncmp(line, names[k], n) && line[n] == ':') {
				found = k;
				if (!strncmp(line + n, ": ok: ", 6))
					*mask |= 1u << k;
				else if (strncmp(line + n, ": off: ", 7))
					return false;
			}
		}
		if (found < 0)
			return false;
		*named |= 1u << found;
		line = nl + 1;
	}
	return true;
}

KTEST(describe_says_every_source_tried)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	char dir[] = "/tmp/ksync-pressure-root-XXXXXX";
	struct ksync_pressure *p;
	char buf[8192];
	unsigned mask, named;

	KASSERT(reg && mkdtemp(dir));
	/* Every source, against an empty root: none of the real ones can open. */
	struct ksync_pressure_config cfg = {
		.sources = (1u << KSYNC_PRESSURE_NR_SOURCES) - 1,
		.reg = reg,
		.budget_bytes = 1ull << 40,
		.root = dir,
		.systemd_watch = "/nonexistent/ksync-pressure-watch",
		.systemd_write = "",
	};
	KCHECK_EQ(ksync_pressure_create(&cfg, &p), 0);
	size_t need = ksync_pressure_describe(p, buf, sizeof(buf));
	KCHECK(need < sizeof(buf));
	KCHECK_EQ(strlen(buf), need);
	KCHECK(lines_well_formed(buf, &mask, &named));
	KCHECK_EQ(named, (1u << KSYNC_PRESSURE_NR_SOURCES) - 1);
	KCHECK_EQ(mask, ksync_pressure_sources(p));
	KCHECK(mask & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST));
	/* snprintf's contract. */
	KCHECK_EQ(ksync_pressure_describe(p, NULL, 0), need);
	char small[10];
	KCHECK_EQ(ksync_pressure_describe(p, small, sizeof(small)), need);
	KCHECK_EQ(strlen(small), sizeof(small) - 1);
	KCHECK(!strncmp(small, buf, sizeof(small) - 1));
	KCHECK_EQ(ksync_pressure_destroy(p), 0);

	/* AUTO: whatever opened, each line names a source tried and says ok or off. */
	cfg.sources = KSYNC_PRESSURE_AUTO;
	KCHECK_EQ(ksync_pressure_create(&cfg, &p), 0);
	need = ksync_pressure_describe(p, buf, sizeof(buf));
	KCHECK(need > 0 && need < sizeof(buf));
	KCHECK(lines_well_formed(buf, &mask, &named));
	KCHECK_EQ(mask, ksync_pressure_sources(p));
	KCHECK(named & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_SYSTEMD)); /* AUTO tries it first */
	KCHECK(!(named & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST)));  /* never picked by AUTO */
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	rmdir(dir);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(names_of_levels_and_sources)
{
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
		KCHECK(!strcmp(ksync_pressure_source_name((enum ksync_pressure_source)k), names[k]));
	KCHECK(ksync_pressure_source_name(KSYNC_PRESSURE_NR_SOURCES) == NULL);
	KCHECK(ksync_pressure_source_name((enum ksync_pressure_source)-1) == NULL);
	KCHECK(!strcmp(ksync_pressure_level_name(KSYNC_PRESSURE_NONE), "none"));
	KCHECK(!strcmp(ksync_pressure_level_name(KSYNC_PRESSURE_LOW), "low"));
	KCHECK(!strcmp(ksync_pressure_level_name(KSYNC_PRESSURE_MEDIUM), "medium"));
	KCHECK(!strcmp(ksync_pressure_level_name(KSYNC_PRESSURE_CRITICAL), "critical"));
	KCHECK(ksync_pressure_level_name((enum ksync_pressure_level)4) == NULL);
}

KTEST(stats_count_events_rounds_scans_and_latency)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 3600 * 1000;
	fx_create(&f);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.latency_samples, 0);
	KCHECK_EQ(st.latency_ns_max, 0);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1); /* rate limited */
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	st = stats(f.p);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_NONE], 0);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_LOW], 2);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_MEDIUM], 1);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_MEDIUM] + st.rounds[KSYNC_PRESSURE_CRITICAL], 2);
	KCHECK_EQ(st.rate_limited, 1);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_TEST], 4);
	KCHECK_EQ(st.source_scans[KSYNC_PRESSURE_SRC_TEST], 3); /* one node, one step each */
	pthread_mutex_lock(&f.r.mu);
	KCHECK_EQ(st.source_freed[KSYNC_PRESSURE_SRC_TEST], f.r.freed);
	pthread_mutex_unlock(&f.r.mu);
	for (int k = 0; k < KSYNC_PRESSURE_SRC_TEST; k++)
		KCHECK_EQ(st.source_events[k] + st.source_scans[k] + st.source_freed[k], 0);
	KCHECK_EQ(st.latency_samples, 3);
	KCHECK(st.latency_ns_p50 <= st.latency_ns_p99);
	KCHECK(st.latency_ns_p99 <= st.latency_ns_max);
	KCHECK(st.latency_ns_max > 0);
	fx_done(&f);
}

KTEST(event_time_is_set_inside_scan_only)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_event_time(), 0);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK(rec_call(&f.r, 0).event_time != 0);
	KCHECK_EQ(ksync_pressure_event_time(), 0);
	/* On the helper thread too. */
	KCHECK_EQ(ksync_shrinker_free(f.s), 0);
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0);
	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KT_POLL_UNTIL(test_scans(f.p) == 1);
	KCHECK(rec_call(&f.r, 0).event_time != 0);
	/* A shrink from outside the monitor sees none. */
	ksync_shrink_slab(f.reg, 0, NULL, 12);
	KCHECK_EQ(rec_calls(&f.r), 2);
	KCHECK_EQ(rec_call(&f.r, 1).event_time, 0);
	fx_done(&f);
}

KTEST(create_defaults_and_no_source)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
	struct ksync_pressure *p;
	struct ksync_pressure_config cfg = { .sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST), .reg = reg };

	KCHECK_EQ(ksync_pressure_create(&cfg, &p), 0);
	/* Two nodes: a round calls ksync_shrink_slab() on each. */
	KCHECK_EQ(ksync_pressure_inject(p, KSYNC_PRESSURE_LOW), 0);
	KCHECK_EQ(ksync_pressure_dispatch(p), 1);
	KCHECK_EQ(stats(p).source_scans[KSYNC_PRESSURE_SRC_TEST], 2);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	KCHECK_EQ(ksync_pressure_destroy(NULL), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
