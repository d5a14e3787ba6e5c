/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync::pressure reviewed against its documentation, not its code: every
 * case below tries to break one promise of include/ksync/pressure.h,
 * include/ksync/pressure_testing.h, docs/pressure.md or the
 * ksync_pressure_* rows of docs/errors.md.
 *
 * The promises tried:
 *  - create: -EINVAL (reported at the caller's line) for unknown source
 *    bits, SRC_BUDGET without budget_bytes, a priority outside 0..12, a
 *    floor above its level's first priority (the default one included), a
 *    stall longer than its window (a stall equal to it is not longer), a
 *    group of another set; the environment never fails it.
 *  - the test source: one inject is one event of that level, whatever was
 *    injected before it (LOW twice is not MEDIUM); dispatch runs at most one
 *    round, for the highest level read; inject is async-signal-safe.
 *  - the fd mode: dispatch never blocks (nothing due: 0); the fd wakes when
 *    the level is due to fall back (hysteresis), so a loop that dispatches
 *    only on readability sees the level go back to NONE; a second dispatcher
 *    racing the first returns 0 at once; fd and dispatch are refused while
 *    the thread runs and start is refused once the fd mode was used.
 *  - the helper thread: start twice -EBUSY, stop when not running -EINVAL,
 *    start/stop/start again, destroy while running, the level falls back
 *    to NONE in thread mode too; the own callback (or a shrinker the round
 *    runs) gets -EDEADLK from stop/destroy/dispatch and may call the rest.
 *  - fork: the child has no thread, may destroy the monitor without
 *    waiting for the parent's thread, and gets events of its own (thread
 *    and fd mode) while the parent keeps getting its events.
 *  - rate limits and hysteresis as documented: rounds of one level at least
 *    min_interval_ms apart (events counted as rate_limited), a higher level
 *    never held back, a level that stays up starts one priority lower down
 *    to its floor; custom priorities and floors.
 *  - the group target: a reference taken (the group outlives its destroy
 *    while the monitor holds it) and dropped at destroy.
 *  - describe: snprintf's contract (len 0 with NULL, truncation).
 *  - stats: events >= rounds + rate_limited, per-source sums.
 *  - sources on fake trees under cfg.root: limit (own directory and
 *    ancestors, memory.high, v1 unlimited, mount root), meminfo, budget,
 *    systemd FIFO and socket (their peers going away), a cgroup removed.
 *  - the parsers of pressure_testing.h on hostile inputs.
 *  - the real machine: PSI triggers with windows the kernel refuses.
 *
 * No duration is asserted: cases wait for states and counts with bounded
 * loops.
 */
#define _GNU_SOURCE
#include <ksync/bug.h>
#include <ksync/memgroup.h>
#include <ksync/pressure.h>
#include <ksync/pressure_testing.h>
#include <ksync/shrinker.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"
#include "pressure_rec.h"
#include "reports.h"
#include "wait.h"

#if defined(__SANITIZE_THREAD__)
#define KT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KT_TSAN 1
#endif
#endif
#ifndef KT_TSAN
#define KT_TSAN 0
#endif

#define SRC(s) KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_##s)

static void hook_reports(void)
{
	reports = 0;
	report_file = NULL;
	report_line = 0;
	__atomic_store_n(&ksync_warn_hook, kt_record_report, __ATOMIC_RELEASE);
}

static void unhook_reports(void)
{
	__atomic_store_n(&ksync_warn_hook, NULL, __ATOMIC_RELEASE);
}

/* The call on @line returned @want and was reported there, once. */
#define CHECK_MISUSE(call, want)                                               \
	do {                                                                   \
		int before_ = reports, line_ = __LINE__, r_ = (call);          \
		KCHECK_EQ(r_, (want));                                         \
		KCHECK_EQ(reports, before_ + 1);                               \
		KCHECK_EQ(report_line, line_);                                 \
		KCHECK(report_file && strstr(report_file, "pressure_review_test.c")); \
	} while (0)

/* Dispatch until @cond, waiting for the fd's readability between tries. */
static int wait_fd(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	return poll(&pfd, 1, ms);
}

static size_t describe_str(struct ksync_pressure *p, char *buf, size_t len)
{
	return ksync_pressure_describe(p, buf, len);
}

/* ------------------------------------------------------------------------ */
/* create's misuse rows                                                     */

KTEST(create_refuses_each_documented_bad_config_at_the_callers_line)
{
	struct fx f;
	struct ksync_pressure *p = NULL;

	fx_init(&f, 0);
	hook_reports();
	f.cfg.sources = 1U << KSYNC_PRESSURE_NR_SOURCES;
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.sources = SRC(TEST) | (1U << 31);
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.sources = SRC(BUDGET);
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.sources = SRC(TEST);
	f.cfg.priority[KSYNC_PRESSURE_LOW] = 13;
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.priority[KSYNC_PRESSURE_LOW] = -1;
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.priority[KSYNC_PRESSURE_LOW] = 0;
	/* A floor above the default first priority (MEDIUM starts at 10). */
	f.cfg.floor[KSYNC_PRESSURE_MEDIUM] = 11;
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.floor[KSYNC_PRESSURE_MEDIUM] = 0;
	f.cfg.priority[KSYNC_PRESSURE_CRITICAL] = 3;
	f.cfg.floor[KSYNC_PRESSURE_CRITICAL] = 4;
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.priority[KSYNC_PRESSURE_CRITICAL] = 0;
	f.cfg.floor[KSYNC_PRESSURE_CRITICAL] = 0;
	/* Triggers are checked whatever the sources. */
	f.cfg.trigger[KSYNC_PRESSURE_LOW] = (struct ksync_pressure_trigger){ 0, 2000001, 2000000 };
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.trigger[KSYNC_PRESSURE_LOW] = (struct ksync_pressure_trigger){ 0, 100000, 0 };
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	KCHECK(p == NULL);
	unhook_reports();

	/* Not misuse: a floor equal to its priority, a stall equal to its window. */
	f.cfg.trigger[KSYNC_PRESSURE_LOW] = (struct ksync_pressure_trigger){ 0, 2000000, 2000000 };
	f.cfg.floor[KSYNC_PRESSURE_LOW] = 12;
	f.cfg.budget_bytes = 1; /* without SRC_BUDGET: unused, legal */
	fx_create(&f);
	fx_done(&f);
}

KTEST(create_refuses_a_group_of_another_set)
{
	struct fx f;
	struct ksync_pressure *p = NULL;

	fx_init(&f, KSYNC_SHRINKER_MEMCG_AWARE);
	struct ksync_shrinker_registry *other = ksync_shrinker_registry_create(1);
	KASSERT(other);
	struct ksync_memgroup *g = ksync_shrinker_group_create(other, NULL);
	KASSERT(g);
	f.cfg.group = g;
	hook_reports();
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	unhook_reports();
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(other), 0);
	f.cfg.group = NULL;
	fx_create(&f);
	fx_done(&f);
}

KTEST(misuse_rows_of_the_running_calls_name_the_callers_line)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	hook_reports();
	CHECK_MISUSE(ksync_pressure_stop(f.p), -EINVAL);
	CHECK_MISUSE(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_NONE, NULL, NULL), -EINVAL);
	CHECK_MISUSE(ksync_pressure_on_level(f.p, (enum ksync_pressure_level)4, NULL, NULL), -EINVAL);
	CHECK_MISUSE(ksync_pressure_inject(f.p, KSYNC_PRESSURE_NONE), -EINVAL);
	CHECK_MISUSE(ksync_pressure_inject(f.p, (enum ksync_pressure_level)4), -EINVAL);
	CHECK_MISUSE(ksync_pressure_inject(f.p, (enum ksync_pressure_level)-1), -EINVAL);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	CHECK_MISUSE(ksync_pressure_start(f.p), -EBUSY);
	CHECK_MISUSE(ksync_pressure_fd(f.p), -EBUSY);
	CHECK_MISUSE(ksync_pressure_dispatch(f.p), -EBUSY);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	/* "-EBUSY while the helper thread runs": it no longer does. */
	KCHECK(ksync_pressure_fd(f.p) >= 0);
	CHECK_MISUSE(ksync_pressure_start(f.p), -EBUSY);
	unhook_reports();
	fx_done(&f);

	/* No test source: inject is refused. */
	fx_init(&f, 0);
	f.cfg.sources = SRC(BUDGET);
	f.cfg.budget_bytes = 1ULL << 50;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	hook_reports();
	CHECK_MISUSE(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), -EINVAL);
	unhook_reports();
	fx_done(&f);
}

KTEST(a_fresh_dispatch_makes_start_busy)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	hook_reports();
	CHECK_MISUSE(ksync_pressure_start(f.p), -EBUSY);
	unhook_reports();
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* The test source and the reaction                                         */

KTEST(two_injections_of_low_are_two_low_events_not_one_medium)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	int n = ksync_pressure_dispatch(f.p);
	KCHECK(n >= 1);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_MEDIUM], 0);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_CRITICAL], 0);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_MEDIUM], 0);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_CRITICAL], 0);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_LOW);
	fx_done(&f);
}

KTEST(low_then_medium_is_one_round_at_medium_not_critical)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_MEDIUM), 0);
	KCHECK(ksync_pressure_dispatch(f.p) >= 1);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_CRITICAL], 0);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_CRITICAL], 0);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_MEDIUM], 1);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_LOW] + st.rounds[KSYNC_PRESSURE_MEDIUM], 1);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_MEDIUM);
	fx_done(&f);
}

KTEST(rate_limit_counts_and_a_higher_level_is_not_held_back)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 3600 * 1000;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 3600 * 1000;
	fx_create(&f);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_LOW], 3);
	KCHECK_EQ(st.rate_limited, 2);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	st = stats(f.p);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_MEDIUM], 1);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(st.rate_limited, 2);
	KCHECK_EQ(rec_calls(&f.r), 3);
	/* stats consistency */
	uint64_t ev = 0, rd = 0;
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
		ev += st.events[l];
		rd += st.rounds[l];
		KCHECK(st.events[l] >= st.rounds[l]);
	}
	KCHECK(ev >= rd + st.rate_limited);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_TEST], ev);
	KCHECK_EQ(st.source_scans[KSYNC_PRESSURE_SRC_TEST], 3);
	KCHECK_EQ(st.source_freed[KSYNC_PRESSURE_SRC_TEST], f.r.freed);
	KCHECK_EQ(st.latency_samples, rd);
	KCHECK(st.latency_ns_p50 <= st.latency_ns_p99);
	fx_done(&f);
}

KTEST(custom_priority_with_floor_zero_digs_to_zero)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.priority[KSYNC_PRESSURE_CRITICAL] = 2;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_CRITICAL] = 1;
	fx_create(&f);
	int want[] = { 2, 1, 0, 0 };
	for (int i = 0; i < 4; i++) {
		kt_sleep_ms(3);
		KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
		KCHECK_EQ(rec_calls(&f.r), i + 1);
	}
	/* The registry's deferred work is carried, so read each priority
	 * from what was asked with no deferred work (0: not KSYNC_SHRINK_STOP). */
	for (int i = 0; i < 4 && i < rec_calls(&f.r); i++)
		KCHECK_EQ(prio_of(rec_call(&f.r, i).asked, 0), want[i]);
	fx_done(&f);
}

static volatile sig_atomic_t sig_ret = 1;
static struct ksync_pressure *sig_mon;

static void on_usr1(int sig)
{
	(void)sig;
	sig_ret = ksync_pressure_inject(sig_mon, KSYNC_PRESSURE_CRITICAL);
}

KTEST(inject_from_a_signal_handler)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	sig_mon = f.p;
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigemptyset(&sa.sa_mask);
	KASSERT(sigaction(SIGUSR1, &sa, &old) == 0);
	raise(SIGUSR1);
	KCHECK_EQ(sig_ret, 0);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 1);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 1);
	/* the thread mode too: the signal lands on this thread, the helper blocks all */
	sig_ret = 1;
	fx_done(&f);
	fx_init(&f, 0);
	fx_create(&f);
	sig_mon = f.p;
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	raise(SIGUSR1);
	KCHECK_EQ(sig_ret, 0);
	KT_POLL_UNTIL_MS(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] == 1, 60000);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0); /* destroy while running */
	f.p = NULL;
	sigaction(SIGUSR1, &old, NULL);
	KCHECK_EQ(ksync_shrinker_free(f.s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f.reg), 0);
}

/* ------------------------------------------------------------------------ */
/* The fd mode                                                              */

KTEST(fd_wakes_when_the_level_falls_back_to_none)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.hold_ms = 30;
	fx_create(&f);
	int fd = ksync_pressure_fd(f.p);
	KASSERT(fd >= 0);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_MEDIUM);
	/* The program's loop: wait for readability (bounded), then dispatch. */
	for (int i = 0; i < 200 && ksync_pressure_level(f.p) != KSYNC_PRESSURE_NONE; i++) {
		if (wait_fd(fd, 100) == 1)
			KCHECK(ksync_pressure_dispatch(f.p) >= 0);
	}
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	/* Nothing more is due: the fd is not left readable for nothing. */
	int spurious = 0;
	for (int i = 0; i < 20; i++) {
		if (wait_fd(fd, 0) == 1) {
			KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
			spurious++;
		}
	}
	KCHECK(spurious < 20);
	fx_done(&f);
}

KTEST(level_falls_back_to_none_in_thread_mode)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.hold_ms = 30;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KT_POLL_UNTIL_MS(test_scans(f.p) == 1, 60000);
	KT_POLL_UNTIL_MS(ksync_pressure_level(f.p) == KSYNC_PRESSURE_NONE, 20000);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	fx_done(&f);
}

struct racer {
	struct fx *f;
	int ret, done;
};

static void *dispatch_it(void *arg)
{
	struct racer *r = arg;

	r->ret = ksync_pressure_dispatch(r->f->p);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *destroy_it(void *arg)
{
	struct racer *r = arg;

	r->ret = ksync_pressure_destroy(r->f->p);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

KTEST(a_second_dispatcher_returns_at_once_and_destroy_waits_for_the_first)
{
	struct fx f;
	pthread_t a, b;

	fx_init(&f, 0);
	fx_create(&f);
	f.r.block = 1;
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	struct racer ra = { &f, 0, 0 }, rb = { &f, 0, 0 };
	pthread_create(&a, NULL, dispatch_it, &ra);
	KT_POLL_UNTIL(__atomic_load_n(&f.r.in_scan, __ATOMIC_ACQUIRE));
	/* A second dispatcher, with an event due: returns 0 at once. */
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	/* Readers of the monitor do not wait for the round either. */
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(TEST));
	(void)stats(f.p);
	char buf[256];
	(void)describe_str(f.p, buf, sizeof(buf));
	/* destroy from another thread while the round is in flight */
	pthread_create(&b, NULL, destroy_it, &rb);
	kt_sleep_ms(50);
	KCHECK_EQ(__atomic_load_n(&rb.done, __ATOMIC_ACQUIRE), 0);
	__atomic_store_n(&f.r.release, 1, __ATOMIC_RELEASE);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	KCHECK_EQ(ra.ret, 1);
	KCHECK_EQ(rb.ret, 0);
	f.p = NULL;
	KCHECK_EQ(ksync_shrinker_free(f.s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f.reg), 0);
}

/* ------------------------------------------------------------------------ */
/* Callbacks and what they may call                                         */

struct cbstate {
	struct ksync_pressure *p;
	int calls;
	int stop, destroy, dispatch, start, fd, inject, on_level;
};

static void noop_cb(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg)
{
	(void)p;
	(void)level;
	(void)arg;
}

static void busy_cb(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg)
{
	struct cbstate *c = arg;
	struct ksync_pressure_stats st;
	char buf[64];

	(void)level;
	c->calls++;
	c->stop = ksync_pressure_stop(p);
	c->destroy = ksync_pressure_destroy(p);
	c->dispatch = ksync_pressure_dispatch(p);
	ksync_pressure_get_stats(p, &st);
	(void)ksync_pressure_describe(p, buf, sizeof(buf));
	(void)ksync_pressure_level(p);
	(void)ksync_pressure_sources(p);
	c->on_level = ksync_pressure_on_level(p, KSYNC_PRESSURE_LOW, noop_cb, NULL);
	c->inject = ksync_pressure_inject(p, KSYNC_PRESSURE_LOW);
}

KTEST(the_own_callback_may_call_the_rest_in_both_modes)
{
	kt_watchdog("callback deadlock", 60);
	for (int mode = 0; mode < 2; mode++) {
		struct fx f;
		struct cbstate c = { 0 };

		fx_init(&f, 0);
		fx_create(&f);
		c.p = f.p;
		KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_MEDIUM, busy_cb, &c), 0);
		if (mode == 0) {
			KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
		} else {
			KCHECK_EQ(ksync_pressure_start(f.p), 0);
			KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_MEDIUM), 0);
			KT_POLL_UNTIL_MS(__atomic_load_n(&c.calls, __ATOMIC_ACQUIRE) == 1, 60000);
			KT_POLL_UNTIL_MS(stats(f.p).events[KSYNC_PRESSURE_LOW] == 1, 60000);
			KCHECK_EQ(ksync_pressure_stop(f.p), 0);
		}
		KCHECK_EQ(c.calls, 1);
		/* Both rows of stop (not running, own callback) and of dispatch
		 * (thread runs, own callback) apply in one mode: own callback wins. */
		KCHECK_EQ(c.stop, -EDEADLK);
		KCHECK_EQ(c.destroy, -EDEADLK);
		KCHECK_EQ(c.dispatch, -EDEADLK);
		KCHECK_EQ(c.on_level, 0);
		KCHECK_EQ(c.inject, 0);
		fx_done(&f);
	}
	kt_watchdog_cancel();
}

static struct ksync_pressure *scan_mon;
static int scan_dispatch_ret = 1, scan_destroy_ret = 1;

static unsigned long self_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	if (scan_mon) {
		scan_dispatch_ret = ksync_pressure_dispatch(scan_mon);
		scan_destroy_ret = ksync_pressure_destroy(scan_mon);
	}
	return sc->nr_to_scan;
}

KTEST(a_shrinker_the_round_runs_gets_edeadlk_from_its_monitor)
{
	struct fx f;

	fx_init(&f, 0);
	f.s->scan_objects = self_scan;
	fx_create(&f);
	scan_mon = f.p;
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	scan_mon = NULL;
	KCHECK_EQ(scan_dispatch_ret, -EDEADLK);
	KCHECK_EQ(scan_destroy_ret, -EDEADLK);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* The helper thread, fork                                                  */

KTEST(start_stop_start_again_keeps_working)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 1;
	fx_create(&f);
	for (int i = 0; i < 5; i++) {
		KCHECK_EQ(ksync_pressure_start(f.p), 0);
		kt_sleep_ms(2);
		KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
		KT_POLL_UNTIL_MS(test_scans(f.p) == (uint64_t)i + 1, 60000);
		KCHECK_EQ(test_scans(f.p), (uint64_t)i + 1);
		KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	}
	/* An event injected while stopped is answered by the next start. */
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KT_POLL_UNTIL_MS(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] == 1, 60000);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 1);
	fx_done(&f); /* destroy while running */
}

static int run_child(int (*fn)(struct fx *), struct fx *f)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(60);
		_exit(fn(f));
	}
	KASSERT(pid > 0);
	int status = 0;
	KCHECK_EQ(waitpid(pid, &status, 0), pid);
	KCHECK(WIFEXITED(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

static int child_destroys(struct fx *f)
{
	/* No thread here: destroy must not wait for the parent's. */
	return ksync_pressure_destroy(f->p) == 0 ? 0 : 1;
}

static int child_fd_mode(struct fx *f)
{
	int bad = 0;
	uint64_t before = test_scans(f->p);

	kt_sleep_ms(2);
	if (ksync_pressure_inject(f->p, KSYNC_PRESSURE_CRITICAL) != 0)
		bad |= 1;
	int fd = ksync_pressure_fd(f->p);
	if (fd < 0)
		bad |= 2;
	int got = 0;
	for (int i = 0; i < 100 && !got; i++) {
		if (wait_fd(fd, 100) == 1)
			got = ksync_pressure_dispatch(f->p) > 0;
	}
	if (!got || test_scans(f->p) != before + 1)
		bad |= 4;
	if (ksync_pressure_destroy(f->p) != 0)
		bad |= 8;
	return bad;
}

static int child_leaves_an_event(struct fx *f)
{
	/* The child injects and exits without dispatching. */
	return ksync_pressure_inject(f->p, KSYNC_PRESSURE_CRITICAL) == 0 ? 0 : 1;
}

KTEST(fork_in_thread_mode_child_destroy_does_not_hang_and_parent_goes_on)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_CRITICAL] = 1;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(run_child(child_destroys, &f), 0);
	if (!KT_TSAN)
		KCHECK_EQ(run_child(child_fd_mode, &f), 0);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KT_POLL_UNTIL_MS(test_scans(f.p) == 1, 60000);
	KCHECK_EQ(test_scans(f.p), 1);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	fx_done(&f);
}

KTEST(fork_in_fd_mode_parent_and_child_each_get_their_own)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_CRITICAL] = 1;
	fx_create(&f);
	int fd = ksync_pressure_fd(f.p);
	KASSERT(fd >= 0);
	KCHECK_EQ(run_child(child_fd_mode, &f), 0);
	/* The child's event was the child's: nothing is due here. */
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	KCHECK_EQ(run_child(child_leaves_an_event, &f), 0);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	KCHECK_EQ(test_scans(f.p), 0);
	/* The parent keeps getting its own events. */
	kt_sleep_ms(2);
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_CRITICAL), 0);
	KCHECK(wait_fd(fd, 10000) == 1);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 1);
	KCHECK_EQ(test_scans(f.p), 1);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* The group target                                                         */

KTEST(the_group_reference_outlives_the_groups_destroy)
{
	struct fx f;

	fx_init(&f, KSYNC_SHRINKER_MEMCG_AWARE);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	KASSERT(g);
	KCHECK_EQ(ksync_set_shrinker_bit(g, 0, f.s->id), 0);
	f.cfg.group = g;
	fx_create(&f);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_MEDIUM), 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	KCHECK(rec_call(&f.r, 0).group == g);
	/* The group goes away; the monitor's reference keeps its memory. */
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	kt_sleep_ms(2);
	KCHECK(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL) >= 0);
	fx_done(&f); /* drops it: ASan/LSan see a leak or a use after free */
}

/* ------------------------------------------------------------------------ */
/* describe                                                                 */

KTEST(describe_keeps_snprintfs_contract)
{
	struct fx f;
	char full[4096], small[8];

	fx_init(&f, 0);
	f.cfg.sources = SRC(TEST) | SRC(PSI_SYSTEM) | SRC(MEMINFO);
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	size_t need = ksync_pressure_describe(f.p, NULL, 0);
	KCHECK(need > 0);
	KCHECK(need < sizeof(full));
	KCHECK_EQ(ksync_pressure_describe(f.p, full, sizeof(full)), need);
	KCHECK_EQ(strlen(full), need);
	memset(small, 'x', sizeof(small));
	KCHECK_EQ(ksync_pressure_describe(f.p, small, sizeof(small)), need);
	KCHECK_EQ(small[7], '\0');
	KCHECK_EQ(strncmp(small, full, 7), 0);
	char one = 'x';
	KCHECK_EQ(ksync_pressure_describe(f.p, &one, 1), need);
	KCHECK_EQ(one, '\0');
	/* Exactly need bytes: truncated by one, NUL at the end. */
	char *exact = malloc(need);
	KASSERT(exact);
	KCHECK_EQ(ksync_pressure_describe(f.p, exact, need), need);
	KCHECK_EQ(exact[need - 1], '\0');
	KCHECK_EQ(strncmp(exact, full, need - 1), 0);
	free(exact);
	/* One line per source tried, each named. */
	KCHECK(strstr(full, "test") != NULL);
	KCHECK(strstr(full, "psi-system") != NULL);
	KCHECK(strstr(full, "meminfo") != NULL);
	fx_done(&f);
}

KTEST(names_out_of_range_are_null)
{
	KCHECK(ksync_pressure_source_name(KSYNC_PRESSURE_NR_SOURCES) == NULL);
	KCHECK(ksync_pressure_source_name((enum ksync_pressure_source)-1) == NULL);
	KCHECK(ksync_pressure_level_name((enum ksync_pressure_level)4) == NULL);
	KCHECK(ksync_pressure_level_name((enum ksync_pressure_level)-1) == NULL);
	KCHECK(strcmp(ksync_pressure_level_name(KSYNC_PRESSURE_NONE), "none") == 0);
	KCHECK(strcmp(ksync_pressure_source_name(KSYNC_PRESSURE_SRC_PSI_CGROUP), "psi-cgroup") == 0);
	KCHECK_EQ(ksync_pressure_event_time(), 0);
	KCHECK_EQ(ksync_pressure_destroy(NULL), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
