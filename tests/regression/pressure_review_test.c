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
#include "sanitizer.h"
#include "wait.h"


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
	f.cfg.priority[KSYNC_PRESSURE_LOW] = 5;
	f.cfg.floor[KSYNC_PRESSURE_LOW] = -1;
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	f.cfg.priority[KSYNC_PRESSURE_LOW] = 0;
	f.cfg.floor[KSYNC_PRESSURE_LOW] = 0;
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
	f.cfg.hold_ms = 300; /* long enough for the check right after the round, loaded or not */
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
	__atomic_fetch_add(&c->calls, 1, __ATOMIC_RELEASE);
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

/* ------------------------------------------------------------------------ */
/* The parsers of pressure_testing.h on hostile inputs                      */

#define LIT(s) (s), (sizeof(s) - 1)

KTEST(cgroup_value_parser_hostile)
{
	uint64_t v = 7;

	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("max\n"), &v), 0);
	KCHECK_EQ(v, KSYNC_PRESSURE_UNLIMITED);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("4611686018427387904\n"), &v), 0);
	KCHECK_EQ(v, KSYNC_PRESSURE_UNLIMITED);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("4611686018427387903"), &v), 0);
	KCHECK_EQ(v, 4611686018427387903ULL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("18446744073709551615"), &v), 0);
	KCHECK_EQ(v, KSYNC_PRESSURE_UNLIMITED);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("18446744073709551616"), &v), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("99999999999999999999999999"), &v), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT(""), &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("\n"), &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("-1"), &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("12abc"), &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("maxx"), &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("ma"), &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("12\0" "34"), &v), -EINVAL);
	/* never past len, no NUL needed */
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("12345", 2, &v), 0);
	KCHECK_EQ(v, 12);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value("max", 2, &v), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_cgroup_value(LIT("42 \t\n"), &v), 0);
	KCHECK_EQ(v, 42);
}

KTEST(trigger_parser_hostile)
{
	struct ksync_pressure_trigger t;
	char buf[64];

	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 150000 1000000"), &t), 0);
	KCHECK(!t.full && t.stall_us == 150000 && t.window_us == 1000000);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("full 1 2\0\0\n"), &t), 0);
	KCHECK(t.full && t.stall_us == 1 && t.window_us == 2);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 4294967295 4294967295"), &t), 0);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 4294967296 2000000"), &t), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 1 18446744073709551617"), &t), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 100"), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some"), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT(""), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some -1 2000000"), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("somE 1 2"), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 1 2 3"), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger(LIT("some 1 2\0x"), &t), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_trigger("some 1 23", 8, &t), 0);
	KCHECK_EQ(t.window_us, 2);
	/* format: snprintf's contract, and it parses back */
	t = (struct ksync_pressure_trigger){ 1, 100000, 2000000 };
	size_t need = ksync_pressure_format_trigger(NULL, 0, &t);
	KCHECK_EQ(need, strlen("full 100000 2000000"));
	KCHECK_EQ(ksync_pressure_format_trigger(buf, 5, &t), need);
	KCHECK_EQ(strcmp(buf, "full"), 0);
	KCHECK_EQ(ksync_pressure_format_trigger(buf, sizeof(buf), &t), need);
	struct ksync_pressure_trigger back;
	KCHECK_EQ(ksync_pressure_parse_trigger(buf, need, &back), 0);
	KCHECK(back.full == 1 && back.stall_us == 100000 && back.window_us == 2000000);
}

KTEST(base64_hostile)
{
	unsigned char out[16];
	size_t n = 99;
	char enc[16];

	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUJD"), out, sizeof(out), &n), 0);
	KCHECK(n == 3 && memcmp(out, "ABC", 3) == 0);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QQ=="), out, sizeof(out), &n), 0);
	KCHECK(n == 1 && out[0] == 'A');
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QQ"), out, sizeof(out), &n), 0);
	KCHECK(n == 1 && out[0] == 'A');
	KCHECK_EQ(ksync_pressure_base64_decode(LIT(" Q U\nJ D\n"), out, sizeof(out), &n), 0);
	KCHECK_EQ(n, 3);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT(""), out, sizeof(out), &n), 0);
	KCHECK_EQ(n, 0);
	/* padding in the middle */
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QQ==QUJD"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QU=JD"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("Q=UJ"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QQ=\nQ"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QQ= =A"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("===="), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUJD=="), out, sizeof(out), &n), -EINVAL);
	/* a lone last character, trailing bits, outside the alphabet, a NUL */
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUJDQ"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QR=="), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUI="), out, sizeof(out), &n), 0);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUJ="), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QU\0JD"), out, sizeof(out), &n), -EINVAL);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QU-_"), out, sizeof(out), &n), -EINVAL);
	/* room */
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUJD"), out, 2, &n), -ENOSPC);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QUJD"), out, 3, &n), 0);
	KCHECK_EQ(ksync_pressure_base64_decode(LIT("QQ"), out, 0, &n), -ENOSPC);
	/* never past len */
	KCHECK_EQ(ksync_pressure_base64_decode("QUJDQUJD", 4, out, sizeof(out), &n), 0);
	KCHECK_EQ(n, 3);
	/* encode: snprintf's contract */
	KCHECK_EQ(ksync_pressure_base64_encode((const unsigned char *)"A", 1, NULL, 0), 4);
	KCHECK_EQ(ksync_pressure_base64_encode((const unsigned char *)"ABCD", 4, enc, 3), 8);
	KCHECK_EQ(strcmp(enc, "QU"), 0);
	KCHECK_EQ(ksync_pressure_base64_encode((const unsigned char *)"ABCD", 4, enc, sizeof(enc)), 8);
	KCHECK_EQ(strcmp(enc, "QUJDRA=="), 0);
	KCHECK_EQ(ksync_pressure_base64_encode((const unsigned char *)"", 0, enc, sizeof(enc)), 0);
	KCHECK_EQ(enc[0], '\0');
	/* systemd's trigger: text with its NUL round-trips */
	static const char trig[] = "some 200000 2000000";
	KCHECK_EQ(ksync_pressure_base64_encode((const unsigned char *)trig, sizeof(trig), enc, 0),
		  4 * ((sizeof(trig) + 2) / 3));
}

KTEST(meminfo_statm_capeff_release_hostile)
{
	uint64_t a = 0, b = 0;
	unsigned ma = 0, mi = 0;

	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("MemTotal: 1000 kB\nMemFree: 1 kB\nMemAvailable: 40 kB\n"), &a, &b), 0);
	KCHECK(a == 1024000 && b == 40960);
	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("MemTotal: 1000 kB\nMemAvailable: 40 kB"), &a, &b), 0);
	KCHECK_EQ(b, 40960);
	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("MemTotal: 1000 kB\n"), &a, &b), -ENOENT);
	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("MemAvailable: 1000 kB\n"), &a, &b), -ENOENT);
	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("XMemTotal: 9 kB\nMemTotal: 1000 kB\nMemAvailable: 40 kB\n"), &a, &b), 0);
	KCHECK_EQ(a, 1024000);
	/* kB times 1024 does not fit 64 bits */
	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("MemTotal: 18014398509481984 kB\nMemAvailable: 1 kB\n"), &a, &b), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_meminfo(LIT("MemTotal: 99999999999999999999999 kB\nMemAvailable: 1 kB\n"), &a, &b), -ERANGE);

	KCHECK_EQ(ksync_pressure_parse_statm(LIT("10 20 3 4 5 6 7\n"), &a, &b), 0);
	KCHECK(a == 10 && b == 20);
	KCHECK_EQ(ksync_pressure_parse_statm(LIT("10 20"), &a, &b), 0);
	KCHECK_EQ(ksync_pressure_parse_statm(LIT("10"), &a, &b), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_statm(LIT(""), &a, &b), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_statm(LIT("10 99999999999999999999999"), &a, &b), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_statm("10 20", 4, &a, &b), 0);
	KCHECK_EQ(b, 2);

	KCHECK_EQ(ksync_pressure_parse_capeff(LIT("Name:\tx\nCapEff:\t0000003fffffffff\n"), &a), 0);
	KCHECK_EQ(a, 0x3fffffffffULL);
	KCHECK_EQ(ksync_pressure_parse_capeff(LIT("CapEff:\t0000000001000000"), &a), 0);
	KCHECK(a & (1ULL << KSYNC_PRESSURE_CAP_SYS_RESOURCE));
	KCHECK_EQ(ksync_pressure_parse_capeff(LIT("CapPrm:\t0000000001000000\n"), &a), -ENOENT);
	KCHECK_EQ(ksync_pressure_parse_capeff(LIT("CapEff:\t10000000000000000\n"), &a), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_capeff(LIT("CapEff:\tzz\n"), &a), -EINVAL);

	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("6.18.44-fc"), &ma, &mi), 0);
	KCHECK(ma == 6 && mi == 18);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("6.18"), &ma, &mi), 0);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("5.4.0-rc1\n"), &ma, &mi), 0);
	KCHECK(ma == 5 && mi == 4);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("6"), &ma, &mi), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT(""), &ma, &mi), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("x.y"), &ma, &mi), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("99999999999.1"), &ma, &mi), -ERANGE);
	KCHECK_EQ(ksync_pressure_parse_kernel_release(LIT("6.99999999999"), &ma, &mi), -ERANGE);
}

KTEST(cgroup_mountinfo_events_psi_hostile)
{
	static struct ksync_pressure_cgroup cg;
	static struct ksync_pressure_mount mnt;
	static char big[KSYNC_PRESSURE_PATH_MAX + 64];

	KCHECK_EQ(ksync_pressure_parse_cgroup(LIT("12:memory:/a\n0::/b"), &cg), 0);
	KCHECK(cg.has_v1_memory && strcmp(cg.v1_memory, "/a") == 0);
	KCHECK(cg.has_v2 && strcmp(cg.v2, "/b") == 0);
	KCHECK_EQ(ksync_pressure_parse_cgroup(LIT("3:cpu,memory,blkio:/x\n"), &cg), 0);
	KCHECK(cg.has_v1_memory && !cg.has_v2);
	KCHECK_EQ(ksync_pressure_parse_cgroup(LIT("3:nomemory:/x\n4:memoryx:/y\n5:name=memory:/z\n"), &cg), 0);
	KCHECK(!cg.has_v1_memory);
	/* a path with a colon: the path is everything after the second one */
	KCHECK_EQ(ksync_pressure_parse_cgroup(LIT("0::/a:b\n"), &cg), 0);
	KCHECK(cg.has_v2 && strcmp(cg.v2, "/a:b") == 0);
	memset(big, 'a', sizeof(big));
	memcpy(big, "0::/", 4);
	KCHECK_EQ(ksync_pressure_parse_cgroup(big, sizeof(big), &cg), -ENAMETOOLONG);
	/* exactly PATH_MAX - 1 characters fit */
	KCHECK_EQ(ksync_pressure_parse_cgroup(big, 3 + KSYNC_PRESSURE_PATH_MAX - 1, &cg), 0);
	KCHECK_EQ(strlen(cg.v2), KSYNC_PRESSURE_PATH_MAX - 1);
	KCHECK_EQ(ksync_pressure_parse_cgroup(big, 3 + KSYNC_PRESSURE_PATH_MAX, &cg), -ENAMETOOLONG);

	KCHECK_EQ(ksync_pressure_parse_mountinfo_line(LIT("30 25 0:26 /sub /sys/fs/cgroup/my\\040dir rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate"), &mnt), 0);
	KCHECK_EQ(strcmp(mnt.root, "/sub"), 0);
	KCHECK_EQ(strcmp(mnt.mountpoint, "/sys/fs/cgroup/my dir"), 0);
	KCHECK_EQ(strcmp(mnt.fstype, "cgroup2"), 0);
	KCHECK_EQ(strcmp(mnt.super_options, "rw,nsdelegate"), 0);
	KCHECK_EQ(ksync_pressure_parse_mountinfo_line(LIT("30 25 0:26 / /x rw - cgroup cgroup rw,memory\n"), &mnt), 0);
	KCHECK(ksync_pressure_option_has(mnt.super_options, "memory"));
	KCHECK(!ksync_pressure_option_has(mnt.super_options, "mem"));
	KCHECK(!ksync_pressure_option_has("rw,memoryx", "memory"));
	KCHECK(ksync_pressure_option_has("memory", "memory"));
	KCHECK(!ksync_pressure_option_has("", "memory"));
	KCHECK(ksync_pressure_parse_mountinfo_line(LIT("30 25 0:26 / /x rw cgroup cgroup rw"), &mnt) < 0);
	KCHECK(ksync_pressure_parse_mountinfo_line(LIT("30 25 0:26 / /x rw -"), &mnt) < 0);
	KCHECK(ksync_pressure_parse_mountinfo_line(LIT("30 25 0:26 / /x\\04"), &mnt) < 0);
	KCHECK(ksync_pressure_parse_mountinfo_line(LIT("30 25 0:26 /\\"), &mnt) < 0);
	KCHECK(ksync_pressure_parse_mountinfo_line(LIT(""), &mnt) < 0);

	struct ksync_pressure_memory_events me;
	KCHECK_EQ(ksync_pressure_parse_memory_events(LIT("oom_kill 5\noom_group_kill 6\n"), &me), 0);
	KCHECK_EQ(me.oom, 0);
	KCHECK_EQ(me.oom_kill, 5);
	KCHECK_EQ(ksync_pressure_parse_memory_events(LIT("low 1\nhigh 2\nmax 3\noom 4\noom_kill 5"), &me), 0);
	KCHECK(me.low == 1 && me.high == 2 && me.max == 3 && me.oom == 4 && me.oom_kill == 5);
	KCHECK_EQ(ksync_pressure_parse_memory_events(LIT("high 99999999999999999999999\n"), &me), -ERANGE);

	struct ksync_pressure_psi psi;
	KCHECK_EQ(ksync_pressure_parse_psi(LIT("some avg10=1.23 avg60=100.00 avg300=0.05 total=42\n"), &psi), 0);
	KCHECK(!psi.has_full && psi.some.avg10 == 123 && psi.some.avg60 == 10000 && psi.some.avg300 == 5 && psi.some.total_us == 42);
	KCHECK_EQ(ksync_pressure_parse_psi(LIT("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.50 avg60=0.00 avg300=0.00 total=18446744073709551615"), &psi), 0);
	KCHECK(psi.has_full && psi.full.avg10 == 50 && psi.full.total_us == UINT64_MAX);
	KCHECK_EQ(ksync_pressure_parse_psi(LIT("full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"), &psi), -EINVAL);
	KCHECK_EQ(ksync_pressure_parse_psi(LIT("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n"), &psi), -ERANGE);
	KCHECK(ksync_pressure_parse_psi(LIT("some avg10=0.00 avg60=0.00 total=1\n"), &psi) < 0);
	KCHECK(ksync_pressure_parse_psi(LIT("some avg10=999999999999.00 avg60=0.00 avg300=0.00 total=1\n"), &psi) < 0);
}

KTEST(psi_windows_and_level_of_hostile)
{
	struct ksync_pressure_trigger out[KSYNC_PRESSURE_MAX_WINDOWS];
	struct ksync_pressure_trigger asked = { 0, 50000, 1000000 };

	/* 6.18 without the capability: 1 s, then 2, 4, 6, 8, 10 s */
	int n = ksync_pressure_psi_windows(&asked, 6, 18, 0, out);
	KCHECK_EQ(n, 6);
	static const uint32_t w1[] = { 1000000, 2000000, 4000000, 6000000, 8000000, 10000000 };
	for (int i = 0; i < n && i < 6; i++) {
		KCHECK_EQ(out[i].window_us, w1[i]);
		KCHECK(out[i].stall_us >= 1 && out[i].stall_us < out[i].window_us);
	}
	KCHECK_EQ(out[1].stall_us, 100000);
	/* 5 s: a tie between 4 and 6 goes to the shorter */
	asked = (struct ksync_pressure_trigger){ 1, 500000, 5000000 };
	n = ksync_pressure_psi_windows(&asked, 6, 18, 0, out);
	static const uint32_t w5[] = { 5000000, 4000000, 6000000, 2000000, 8000000, 10000000 };
	KCHECK_EQ(n, 6);
	for (int i = 0; i < n && i < 6; i++) {
		KCHECK_EQ(out[i].window_us, w5[i]);
		KCHECK_EQ(out[i].full, 1);
	}
	/* 4 s is accepted: no duplicate */
	asked = (struct ksync_pressure_trigger){ 0, 100, 4000000 };
	n = ksync_pressure_psi_windows(&asked, 6, 18, 0, out);
	KCHECK_EQ(n, 5);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			KCHECK(out[i].window_us != out[j].window_us);
	/* huge window and stall: the scaling does not overflow */
	asked = (struct ksync_pressure_trigger){ 0, 4000000000u, 4294967295u };
	n = ksync_pressure_psi_windows(&asked, 6, 18, 0, out);
	KCHECK(n >= 2 && n <= KSYNC_PRESSURE_MAX_WINDOWS);
	for (int i = 0; i < n; i++) {
		KCHECK(out[i].stall_us >= 1 && out[i].stall_us < out[i].window_us);
		for (int j = 0; j < i; j++)
			KCHECK(out[i].window_us != out[j].window_us);
	}
	for (int i = 1; i < n; i++)
		KCHECK(out[i].window_us <= 10000000);
	/* a tiny stall over a long window: at least 1 us */
	asked = (struct ksync_pressure_trigger){ 0, 1, 10000000 };
	n = ksync_pressure_psi_windows(&asked, 6, 18, 0, out);
	for (int i = 0; i < n; i++)
		KCHECK(out[i].stall_us >= 1 && out[i].stall_us < out[i].window_us);
	/* with the capability: brought into 500 ms..10 s, then the multiples */
	asked = (struct ksync_pressure_trigger){ 0, 10000, 100000 };
	n = ksync_pressure_psi_windows(&asked, 6, 18, 1, out);
	KCHECK(n >= 2);
	KCHECK_EQ(out[0].window_us, 100000);
	KCHECK_EQ(out[1].window_us, 500000);
	KCHECK_EQ(out[1].stall_us, 50000);
	asked = (struct ksync_pressure_trigger){ 0, 10000, 20000000 };
	n = ksync_pressure_psi_windows(&asked, 5, 10, 0, out);
	KCHECK(n >= 2 && n <= KSYNC_PRESSURE_MAX_WINDOWS);
	KCHECK_EQ(out[1].window_us, 10000000);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			KCHECK(out[i].window_us != out[j].window_us);
	/* a stall equal to its window (legal for create) scales below the window */
	asked = (struct ksync_pressure_trigger){ 0, 1000000, 1000000 };
	n = ksync_pressure_psi_windows(&asked, 6, 18, 0, out);
	for (int i = 1; i < n; i++)
		KCHECK(out[i].stall_us >= 1 && out[i].stall_us < out[i].window_us);

	unsigned pm[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };
	KCHECK_EQ(ksync_pressure_level_of(799, 1000, pm), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_level_of(800, 1000, pm), KSYNC_PRESSURE_LOW);
	KCHECK_EQ(ksync_pressure_level_of(950, 1000, pm), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(ksync_pressure_level_of(5000, 1000, pm), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(ksync_pressure_level_of(5, 0, pm), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_level_of(UINT64_MAX, KSYNC_PRESSURE_UNLIMITED, pm), KSYNC_PRESSURE_NONE);
	/* no overflow of usage * 1000 */
	KCHECK_EQ(ksync_pressure_level_of(1ULL << 62, 1ULL << 62, pm), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(ksync_pressure_level_of(UINT64_MAX - 2, UINT64_MAX - 1, pm), KSYNC_PRESSURE_CRITICAL);
	KCHECK_EQ(ksync_pressure_level_of((1ULL << 62) / 2, 1ULL << 62, pm), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_level_of(((1ULL << 62) / 1000) * 900, 1ULL << 62, pm), KSYNC_PRESSURE_LOW);
}

/* ------------------------------------------------------------------------ */
/* Sources on fake trees (cfg.root) and their death at run time             */

static char tree[256];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512];

	snprintf(path, sizeof(path), "%s/%s", tree, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *q = dir + strlen(tree) + 1; (q = strchr(q, '/')); q++) {
		*q = '\0';
		mkdir(dir, 0755);
		*q = '/';
	}
	FILE *f = fopen(path, "w");
	KASSERT(f);
	fputs(text, f);
	fclose(f);
}

static void rm_tree(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
	(void)!system(cmd);
}

static void new_tree(void)
{
	snprintf(tree, sizeof(tree), "/tmp/ksync-review-XXXXXX");
	KASSERT(mkdtemp(tree));
}

/* fd mode: wait for readability and dispatch until @cond, at most @tries times. */
#define LOOP_UNTIL(p, fd, cond, tries)                                         \
	do {                                                                   \
		for (int i_ = 0; i_ < (tries) && !(cond); i_++)                \
			if (wait_fd((fd), 50) == 1)                            \
				KCHECK(ksync_pressure_dispatch(p) >= 0);       \
	} while (0)

/* The fd is not readable forever once nothing is due (no busy loop). */
static int spurious_wakeups(struct ksync_pressure *p, int fd)
{
	int n = 0;

	for (int i = 0; i < 20; i++)
		if (wait_fd(fd, 5) == 1) {
			ksync_pressure_dispatch(p);
			n++;
		}
	return n;
}

static bool describes(struct ksync_pressure *p, const char *a, const char *b)
{
	static char buf[8192];

	ksync_pressure_describe(p, buf, sizeof(buf));
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strstr(line, a) && (!b || strstr(line, b)))
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

static void polled_cfg(struct fx *f, unsigned sources)
{
	f->cfg.sources = sources;
	f->cfg.root = tree;
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		f->cfg.poll_ms[l] = 2;
	f->cfg.hold_ms = 20;
}

KTEST(limit_of_an_ancestor_binds_and_a_removed_cgroup_ends_the_source)
{
	struct fx f;

	new_tree();
	put("proc/self/cgroup", "0::/app/sub\n");
	put("proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
	put("sys/fs/cgroup/unified/app/memory.max", "1000\n");
	put("sys/fs/cgroup/unified/app/memory.high", "max\n");
	/* The binding limit's group is read: its usage counts its children's. */
	put("sys/fs/cgroup/unified/app/memory.current", "960\n");
	put("sys/fs/cgroup/unified/app/sub/memory.max", "max\n");
	put("sys/fs/cgroup/unified/app/sub/memory.high", "max\n");
	put("sys/fs/cgroup/unified/app/sub/memory.current", "10\n");
	fx_init(&f, 0);
	polled_cfg(&f, SRC(LIMIT));
	f.cfg.min_interval_ms[KSYNC_PRESSURE_CRITICAL] = 3600 * 1000;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(LIMIT));
	KCHECK(describes(f.p, "limit", "ok"));
	int fd = ksync_pressure_fd(f.p);
	LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1, 400);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_CRITICAL], 1);
	/* The figure stays critical: the round digs from 7 down to the floor 0. */
	KCHECK_EQ(st.source_scans[KSYNC_PRESSURE_SRC_LIMIT], 8);
	KCHECK_EQ(rec_calls(&f.r), 8);
	/* Rounds of one level stay rate limited; polls keep counting events. */
	LOOP_UNTIL(f.p, fd, stats(f.p).rate_limited >= 3, 400);
	st = stats(f.p);
	KCHECK(st.rate_limited >= 3);
	KCHECK_EQ(st.rounds[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK(st.events[KSYNC_PRESSURE_CRITICAL] >= st.rounds[KSYNC_PRESSURE_CRITICAL] + st.rate_limited);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_LIMIT],
		  st.events[1] + st.events[2] + st.events[3]);
	/* Relief: the level falls back to none. */
	put("sys/fs/cgroup/unified/app/memory.current", "10\n");
	LOOP_UNTIL(f.p, fd, ksync_pressure_level(f.p) == KSYNC_PRESSURE_NONE, 400);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	/* The group is removed: the source ends, described; the monitor goes on. */
	rm_tree();
	LOOP_UNTIL(f.p, fd, ksync_pressure_sources(f.p) == 0, 400);
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "limit", NULL));
	KCHECK(!describes(f.p, "limit", "ok"));
	KCHECK(spurious_wakeups(f.p, fd) < 20);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	fx_done(&f);
}

KTEST(limit_on_the_mount_root_of_a_container_and_memory_high)
{
	struct fx f;

	/* The container's own subtree is mounted: the mount's root is /ctr. */
	new_tree();
	put("proc/self/cgroup", "0::/ctr/sub\n");
	put("proc/self/mountinfo", "41 31 0:38 /ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put("sys/fs/cgroup/memory.max", "1000\n");
	put("sys/fs/cgroup/memory.high", "max\n");
	put("sys/fs/cgroup/memory.current", "960\n");
	put("sys/fs/cgroup/sub/memory.max", "100000\n");
	put("sys/fs/cgroup/sub/memory.high", "max\n");
	put("sys/fs/cgroup/sub/memory.current", "10\n");
	fx_init(&f, 0);
	polled_cfg(&f, SRC(LIMIT));
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(LIMIT));
	int fd = ksync_pressure_fd(f.p);
	LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1, 400);
	KCHECK(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1);
	fx_done(&f);
	rm_tree();

	/* memory.high below memory.max is the limit. */
	new_tree();
	put("proc/self/cgroup", "0::/a\n");
	put("proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put("sys/fs/cgroup/a/memory.max", "100000\n");
	put("sys/fs/cgroup/a/memory.high", "1000\n");
	put("sys/fs/cgroup/a/memory.current", "910\n");
	fx_init(&f, 0);
	polled_cfg(&f, SRC(LIMIT));
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	fd = ksync_pressure_fd(f.p);
	LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] >= 1, 400);
	KCHECK(stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] >= 1);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 0);
	fx_done(&f);
	rm_tree();
}

KTEST(v1_unlimited_is_no_limit_and_auto_falls_back_to_meminfo)
{
	struct fx f;

	new_tree();
	put("proc/self/cgroup", "4:memory:/grp\n");
	put("proc/self/mountinfo", "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
	put("sys/fs/cgroup/memory/grp/memory.limit_in_bytes", "9223372036854771712\n");
	put("sys/fs/cgroup/memory/grp/memory.usage_in_bytes", "9223372036854771000\n");
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("proc/meminfo", "MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 40 kB\n");
	fx_init(&f, 0);
	polled_cfg(&f, SRC(LIMIT));
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "limit", "off"));
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0);
	/* AUTO: no event source opens in this tree; limit is off: meminfo. */
	f.cfg.sources = KSYNC_PRESSURE_AUTO;
	f.cfg.systemd_watch = "";
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK(ksync_pressure_sources(f.p) & SRC(MEMINFO));
	KCHECK(!(ksync_pressure_sources(f.p) & SRC(LIMIT)));
	int fd = ksync_pressure_fd(f.p);
	LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1, 400);
	KCHECK(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1);
	KCHECK(stats(f.p).source_scans[KSYNC_PRESSURE_SRC_MEMINFO] >= 1);
	/* The meminfo file vanishes: the source dies, described. */
	rm_tree();
	LOOP_UNTIL(f.p, fd, !(ksync_pressure_sources(f.p) & SRC(MEMINFO)), 400);
	KCHECK(!(ksync_pressure_sources(f.p) & SRC(MEMINFO)));
	KCHECK(describes(f.p, "meminfo", NULL));
	KCHECK(spurious_wakeups(f.p, fd) < 20);
	fx_done(&f);
}

KTEST(budget_reads_the_rss_against_the_budget)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.sources = SRC(BUDGET);
	f.cfg.budget_bytes = 4096; /* far below any RSS */
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		f.cfg.poll_ms[l] = 2;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(BUDGET));
	int fd = ksync_pressure_fd(f.p);
	LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1, 400);
	KCHECK(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] >= 1);
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0);
	f.cfg.budget_bytes = 1ULL << 60;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	fd = ksync_pressure_fd(f.p);
	for (int i = 0; i < 20; i++)
		if (wait_fd(fd, 10) == 1)
			KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	fx_done(&f);
}

/* systemd's protocol: a FIFO, a socket, /dev/null */

static void no_systemd_env(void)
{
	unsetenv("MEMORY_PRESSURE_WATCH");
	unsetenv("MEMORY_PRESSURE_WRITE");
}

KTEST(systemd_fifo_a_writer_that_closes_does_not_end_or_spin)
{
	struct fx f;
	char path[300];

	no_systemd_env();
	new_tree();
	snprintf(path, sizeof(path), "%s/fifo", tree);
	KASSERT(mkfifo(path, 0600) == 0);
	fx_init(&f, 0);
	f.cfg.sources = SRC(SYSTEMD);
	f.cfg.systemd_watch = path;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 1;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(SYSTEMD));
	int fd = ksync_pressure_fd(f.p);
	for (int round = 1; round <= 2; round++) {
		int w = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		KASSERT(w >= 0);
		KCHECK_EQ(write(w, "x", 1), 1);
		LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] >= (uint64_t)round, 400);
		KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM], (uint64_t)round);
		close(w);
		KCHECK(spurious_wakeups(f.p, fd) < 20);
		KCHECK_EQ(ksync_pressure_sources(f.p), SRC(SYSTEMD));
		kt_sleep_ms(3);
	}
	KCHECK_EQ(stats(f.p).source_events[KSYNC_PRESSURE_SRC_SYSTEMD], 2);
	fx_done(&f);
	rm_tree();
}

KTEST(systemd_socket_gets_the_trigger_then_its_close_ends_the_source)
{
	struct fx f;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static const char trig[] = "some 200000 2000000"; /* sent with its NUL */
	char b64[64];

	no_systemd_env();
	new_tree();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.90s/sock", tree);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	KASSERT(l >= 0);
	KASSERT(bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	KASSERT(listen(l, 4) == 0);
	ksync_pressure_base64_encode((const unsigned char *)trig, sizeof(trig), b64, sizeof(b64));
	fx_init(&f, 0);
	f.cfg.sources = SRC(SYSTEMD);
	f.cfg.systemd_watch = sa.sun_path;
	f.cfg.systemd_write = b64;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(SYSTEMD));
	int c = accept(l, NULL, NULL);
	KASSERT(c >= 0);
	char got[64];
	size_t n = 0;
	for (int i = 0; i < 1000 && n < sizeof(trig); i++) {
		ssize_t r = recv(c, got + n, sizeof(got) - n, MSG_DONTWAIT);
		if (r > 0)
			n += (size_t)r;
		else
			kt_sleep_ms(1);
	}
	KCHECK_EQ(n, sizeof(trig));
	KCHECK(memcmp(got, trig, sizeof(trig)) == 0);
	int fd = ksync_pressure_fd(f.p);
	KCHECK_EQ(write(c, "!", 1), 1);
	LOOP_UNTIL(f.p, fd, stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] >= 1, 400);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM], 1);
	/* The peer goes away: the source ends, described, nothing spins. */
	close(c);
	LOOP_UNTIL(f.p, fd, ksync_pressure_sources(f.p) == 0, 400);
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "systemd", NULL));
	KCHECK(!describes(f.p, "systemd", "ok"));
	KCHECK(spurious_wakeups(f.p, fd) < 20);
	fx_done(&f);
	close(l);
	rm_tree();
}

KTEST(systemd_dev_null_and_a_full_backlog_leave_the_source_off)
{
	struct fx f;

	no_systemd_env();
	fx_init(&f, 0);
	f.cfg.sources = SRC(SYSTEMD);
	f.cfg.systemd_watch = "/dev/null";
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "systemd", "off"));
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0);
	f.p = NULL;

	/* A listener whose backlog is full: the connect does not block. */
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int conns[64], nc = 0;
	new_tree();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.90s/sock", tree);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	KASSERT(bind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	KASSERT(listen(l, 0) == 0);
	for (; nc < 64; nc++) {
		conns[nc] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (connect(conns[nc], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			close(conns[nc]);
			break;
		}
	}
	KCHECK(nc < 64);
	f.cfg.systemd_watch = sa.sun_path;
	f.cfg.systemd_write = "c29tZSAyMDAwMDAgMjAwMDAwMAA=";
	kt_watchdog("systemd connect blocks", 60);
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	kt_watchdog_cancel();
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "systemd", "off"));
	for (int i = 0; i < nc; i++)
		close(conns[i]);
	close(l);
	fx_done(&f);
	rm_tree();
}

/* ------------------------------------------------------------------------ */
/* The real machine                                                         */

KTEST(real_psi_a_refused_window_takes_the_nearest_and_says_so)
{
	struct fx f;

	if (access("/proc/pressure/memory", W_OK) != 0) {
		printf("# no writable /proc/pressure/memory: skipped\n");
		return;
	}
	fx_init(&f, 0);
	f.cfg.sources = SRC(PSI_SYSTEM);
	f.cfg.trigger[KSYNC_PRESSURE_LOW] = (struct ksync_pressure_trigger){ 0, 50000, 1000000 };
	f.cfg.trigger[KSYNC_PRESSURE_MEDIUM] = (struct ksync_pressure_trigger){ 0, 300000, 3000000 };
	f.cfg.trigger[KSYNC_PRESSURE_CRITICAL] = (struct ksync_pressure_trigger){ 1, 100000, 20000000 };
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	char buf[4096];
	ksync_pressure_describe(f.p, buf, sizeof(buf));
	printf("# %s", buf);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(PSI_SYSTEM));
	KCHECK(describes(f.p, "psi-system", "ok"));
	KCHECK(describes(f.p, "psi-system", "1 s refused, 2 s taken"));
	KCHECK(describes(f.p, "psi-system", "low some 100 ms/2 s"));
	fx_done(&f);
}

KTEST(real_auto_takes_one_event_source_and_one_polled)
{
	struct fx f;

	no_systemd_env();
	fx_init(&f, 0);
	f.cfg.sources = KSYNC_PRESSURE_AUTO;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	unsigned m = ksync_pressure_sources(f.p);
	unsigned ev = m & (SRC(SYSTEMD) | SRC(PSI_CGROUP) | SRC(PSI_SYSTEM) | SRC(VMPRESSURE));
	unsigned po = m & (SRC(LIMIT) | SRC(MEMINFO) | SRC(BUDGET));
	KCHECK(ev == 0 || (ev & (ev - 1)) == 0);
	KCHECK(po != 0 && (po & (po - 1)) == 0);
	KCHECK(!(m & (SRC(TEST) | SRC(BUDGET))));
	if (access("/sys/fs/cgroup/unified/memory.pressure", R_OK) == 0)
		KCHECK(m & SRC(PSI_CGROUP));
	char buf[4096];
	ksync_pressure_describe(f.p, buf, sizeof(buf));
	printf("# %s", buf);
	KCHECK(!describes(f.p, "systemd", "ok"));
	/* It runs on a thread and stops cleanly. */
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	fx_done(&f);
}

/* A fake root whose cgroup hierarchy @mnt is the machine's real one. */
static bool real_cgroup_tree(const char *cgroup_line, const char *mountinfo_line, const char *mnt)
{
	char link[512], status[8192];

	new_tree();
	put("proc/self/cgroup", cgroup_line);
	put("proc/self/mountinfo", mountinfo_line);
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	size_t n = fread(status, 1, sizeof(status) - 1, f);
	fclose(f);
	status[n] = '\0';
	put("proc/self/status", status);
	put("proc/sys/kernel/osrelease", "");
	f = fopen("/proc/sys/kernel/osrelease", "r");
	if (f) {
		n = fread(status, 1, sizeof(status) - 1, f);
		status[n] = '\0';
		fclose(f);
		put("proc/sys/kernel/osrelease", status);
	}
	put("sys/fs/cgroup/.keep", "");
	snprintf(link, sizeof(link), "%s%s", tree, mnt);
	return symlink(mnt, link) == 0;
}

/*
 * A new group "ksync-review-<@tag><pid>" in the machine's cgroup2 tree (@v2)
 * or cgroup v1 memory hierarchy, its path in @dir, and a fake root (tree)
 * whose process lives in it; false, printed why, where the machine has no
 * such tree or the group cannot be made (the test then skips).
 */
static bool real_group(bool v2, const char *tag, char *dir, size_t len)
{
	const char *mnt = v2 ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup/memory";
	char probe[300], line[300];

	snprintf(probe, sizeof(probe), "%s/%s", mnt, v2 ? "memory.pressure" : "cgroup.event_control");
	if (access(probe, W_OK) != 0) {
		printf("# %s: skipped\n", v2 ? "no cgroup2 tree at /sys/fs/cgroup/unified" : "no cgroup v1 memory controller");
		return false;
	}
	snprintf(dir, len, "%s/ksync-review-%s%d", mnt, tag, (int)getpid());
	if (mkdir(dir, 0755) != 0) {
		printf("# cannot make %s: skipped\n", dir);
		return false;
	}
	snprintf(line, sizeof(line), "%s:/ksync-review-%s%d\n", v2 ? "0:" : "4:memory", tag, (int)getpid());
	KASSERT(real_cgroup_tree(line,
				 v2 ? "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
				    : "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
				 mnt));
	return true;
}

KTEST(real_psi_cgroup_removed_at_run_time_ends_the_source)
{
	struct fx f;
	char dir[256];

	if (!real_group(true, "", dir, sizeof(dir)))
		return;
	fx_init(&f, 0);
	f.cfg.sources = SRC(PSI_CGROUP) | SRC(TEST);
	f.cfg.root = tree;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(PSI_CGROUP) | SRC(TEST));
	KCHECK(describes(f.p, "psi-cgroup", "ok"));
	int fd = ksync_pressure_fd(f.p);
	KCHECK_EQ(rmdir(dir), 0);
	LOOP_UNTIL(f.p, fd, !(ksync_pressure_sources(f.p) & SRC(PSI_CGROUP)), 400);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(TEST));
	KCHECK(describes(f.p, "psi-cgroup", NULL));
	KCHECK(!describes(f.p, "psi-cgroup", "ok"));
	KCHECK_EQ(stats(f.p).rounds[1] + stats(f.p).rounds[2] + stats(f.p).rounds[3], 0);
	KCHECK(spurious_wakeups(f.p, fd) < 20);
	/* The monitor goes on with the others. */
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(test_scans(f.p), 1);
	fx_done(&f);
	rmdir(dir);
	rm_tree();
}

KTEST(real_vmpressure_of_a_removed_group_is_not_believed)
{
	struct fx f;
	char dir[256];

	if (!real_group(false, "", dir, sizeof(dir)))
		return;
	fx_init(&f, 0);
	f.cfg.sources = SRC(VMPRESSURE) | SRC(TEST);
	f.cfg.root = tree;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(VMPRESSURE) | SRC(TEST));
	KCHECK(describes(f.p, "vmpressure", "ok"));
	int fd = ksync_pressure_fd(f.p);
	KCHECK_EQ(rmdir(dir), 0);
	for (int i = 0; i < 40; i++)
		if (wait_fd(fd, 25) == 1)
			KCHECK(ksync_pressure_dispatch(f.p) >= 0);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.rounds[1] + st.rounds[2] + st.rounds[3], 0);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_VMPRESSURE], 0);
	KCHECK(spurious_wakeups(f.p, fd) < 20);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(test_scans(f.p), 1);
	fx_done(&f);
	rmdir(dir);
	rm_tree();
}

KTEST(after_the_hold_the_next_round_starts_at_the_first_priority_again)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.hold_ms = 300; /* the second event falls within it, loaded or not */
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 1;
	fx_create(&f);
	int fd = ksync_pressure_fd(f.p);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	kt_sleep_ms(3);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1); /* within the hold: one lower */
	for (int i = 0; i < 200 && ksync_pressure_level(f.p) != KSYNC_PRESSURE_NONE; i++)
		if (wait_fd(fd, 50) == 1)
			ksync_pressure_dispatch(f.p);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(rec_calls(&f.r), 3);
	KCHECK_EQ(prio_of(rec_call(&f.r, 0).asked, 0), 12);
	KCHECK_EQ(prio_of(rec_call(&f.r, 1).asked, 0), 11);
	KCHECK_EQ(prio_of(rec_call(&f.r, 2).asked, 0), 12);
	fx_done(&f);
}

KTEST(many_injections_are_as_many_events)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	for (int i = 0; i < 100000; i++)
		KASSERT(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW) == 0);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 100000);
	KCHECK_EQ(stats(f.p).events[KSYNC_PRESSURE_LOW], 100000);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	fx_done(&f);
}

struct stopper2 {
	struct ksync_pressure *p;
	int ret, done, tid;
};

static void *stop_it2(void *arg)
{
	struct stopper2 *s = arg;

	__atomic_store_n(&s->tid, (int)gettid(), __ATOMIC_RELEASE);
	s->ret = ksync_pressure_stop(s->p);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The state letter of thread @tid of this process ('R', 'S', ...), or 0. */
static char thread_state(int tid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

KTEST(stop_ends_a_digging_round_at_its_next_step)
{
	struct fx f;
	pthread_t t;

	new_tree();
	put("proc/self/cgroup", "0::/a\n");
	put("proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put("sys/fs/cgroup/a/memory.max", "1000\n");
	put("sys/fs/cgroup/a/memory.high", "max\n");
	put("sys/fs/cgroup/a/memory.current", "990\n");
	fx_init(&f, 0);
	polled_cfg(&f, SRC(LIMIT));
	f.r.block = 1;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KT_POLL_UNTIL(__atomic_load_n(&f.r.in_scan, __ATOMIC_ACQUIRE));
	struct stopper2 st = { f.p, 1, 0, 0 };
	pthread_create(&t, NULL, stop_it2, &st);
	/*
	 * Release the round only once the stopper sleeps: in stop's join, so
	 * after it raised the stop flag (the monitor's lock is not held by
	 * the blocked round, so the join is stop's only sleep).
	 */
	KT_POLL_UNTIL(__atomic_load_n(&st.tid, __ATOMIC_ACQUIRE));
	for (int i = 0; i < 10000 && thread_state(st.tid) != 'S'; i++)
		kt_sleep_ms(1);
	KCHECK_EQ(thread_state(st.tid), 'S');
	KCHECK_EQ(__atomic_load_n(&st.done, __ATOMIC_ACQUIRE), 0); /* it waits for the round */
	__atomic_store_n(&f.r.release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	KCHECK_EQ(st.ret, 0);
	/* critical digs 7..0 (8 steps) unless stopped: it ended at the next step */
	KCHECK(rec_calls(&f.r) <= 2);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 1);
	fx_done(&f);
	rm_tree();
}

KTEST(systemd_watch_of_a_psi_file_takes_the_window_fallback)
{
	struct fx f;
	static const char trig[] = "some 100000 1000000";
	char b64[64];

	if (access("/proc/pressure/memory", W_OK) != 0) {
		printf("# no writable /proc/pressure/memory: skipped\n");
		return;
	}
	no_systemd_env();
	ksync_pressure_base64_encode((const unsigned char *)trig, sizeof(trig), b64, sizeof(b64));
	fx_init(&f, 0);
	f.cfg.sources = SRC(SYSTEMD);
	f.cfg.systemd_watch = "/proc/pressure/memory";
	f.cfg.systemd_write = b64;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	char buf[2048];
	ksync_pressure_describe(f.p, buf, sizeof(buf));
	printf("# %s", buf);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(SYSTEMD));
	KCHECK(describes(f.p, "systemd", "ok"));
	KCHECK(describes(f.p, "systemd", "2 s"));
	fx_done(&f);

	/* The environment is read when the config leaves both NULL. */
	new_tree();
	char path[300];
	snprintf(path, sizeof(path), "%s/fifo", tree);
	KASSERT(mkfifo(path, 0600) == 0);
	setenv("MEMORY_PRESSURE_WATCH", path, 1);
	fx_init(&f, 0);
	f.cfg.sources = SRC(SYSTEMD);
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(SYSTEMD));
	no_systemd_env();
	fx_done(&f);
	rm_tree();
}

KTEST(a_group_with_the_default_registry_must_be_of_its_set)
{
	struct fx f;
	struct ksync_pressure *p = NULL;

	fx_init(&f, KSYNC_SHRINKER_MEMCG_AWARE);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	KASSERT(g);
	f.cfg.reg = NULL; /* the default registry: g is of another set */
	f.cfg.group = g;
	hook_reports();
	CHECK_MISUSE(ksync_pressure_create(&f.cfg, &p), -EINVAL);
	unhook_reports();
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	f.cfg.reg = f.reg;
	f.cfg.group = NULL;
	fx_create(&f);
	fx_done(&f);
}

KTEST(a_floor_with_the_default_first_priority)
{
	struct fx f;

	fx_init(&f, 0);
	f.cfg.floor[KSYNC_PRESSURE_CRITICAL] = 5;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_CRITICAL] = 1;
	fx_create(&f);
	int want[] = { 7, 6, 5, 5 };
	for (int i = 0; i < 4; i++) {
		kt_sleep_ms(3);
		KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	}
	KCHECK_EQ(rec_calls(&f.r), 4);
	for (int i = 0; i < 4 && i < rec_calls(&f.r); i++)
		KCHECK_EQ(prio_of(rec_call(&f.r, i).asked, 0), want[i]);
	fx_done(&f);
}

static int cb_count[KSYNC_PRESSURE_NR_LEVELS];

static void count_cb(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg)
{
	(void)p;
	KCHECK_EQ((int)(intptr_t)arg, (int)level);
	if (level >= 0 && level < KSYNC_PRESSURE_NR_LEVELS)
		__atomic_fetch_add(&cb_count[level], 1, __ATOMIC_RELAXED);
}

KTEST(callbacks_run_once_per_round_not_per_event)
{
	struct fx f;

	memset(cb_count, 0, sizeof(cb_count));
	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_LOW] = 3600 * 1000;
	fx_create(&f);
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++)
		KCHECK_EQ(ksync_pressure_on_level(f.p, (enum ksync_pressure_level)l, count_cb, (void *)(intptr_t)l), 0);
	for (int i = 0; i < 3; i++)
		KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(cb_count[KSYNC_PRESSURE_LOW], 1);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	KCHECK_EQ(cb_count[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(cb_count[KSYNC_PRESSURE_MEDIUM], 0);
	/* cleared: no more calls */
	KCHECK_EQ(ksync_pressure_on_level(f.p, KSYNC_PRESSURE_CRITICAL, NULL, NULL), 0);
	kt_sleep_ms(15);
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_CRITICAL), 1);
	KCHECK_EQ(stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL], 2);
	KCHECK_EQ(cb_count[KSYNC_PRESSURE_CRITICAL], 1);
	fx_done(&f);
}

struct injector {
	struct ksync_pressure *p;
	int stop;
};

static void *inject_loop(void *arg)
{
	struct injector *in = arg;

	for (unsigned i = 0; !__atomic_load_n(&in->stop, __ATOMIC_ACQUIRE); i++)
		ksync_pressure_inject(in->p, (enum ksync_pressure_level)(1 + i % 3));
	return NULL;
}

KTEST(stats_are_consistent_while_the_thread_runs)
{
	struct fx f;
	pthread_t t;

	fx_init(&f, 0);
	for (int l = 1; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		f.cfg.min_interval_ms[l] = 1;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	struct injector in = { f.p, 0 };
	pthread_create(&t, NULL, inject_loop, &in);
	int bad = 0;
	for (int i = 0; i < 3000; i++) {
		struct ksync_pressure_stats st = stats(f.p);
		uint64_t ev = 0, rd = 0;
		for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
			ev += st.events[l];
			rd += st.rounds[l];
			bad += st.events[l] < st.rounds[l];
		}
		bad += ev < rd + st.rate_limited;
		bad += st.source_events[KSYNC_PRESSURE_SRC_TEST] != ev;
		/* A round in flight is counted before it is measured and its
		 * scans added (one runner: at most one such round). */
		bad += st.latency_samples > rd || st.latency_samples + 1 < rd;
		bad += st.source_scans[KSYNC_PRESSURE_SRC_TEST] + 1 < rd;
		if (i % 100 == 0)
			sched_yield();
	}
	/* Rounds happen (the injector and the thread may start late). */
	KT_POLL_UNTIL_MS(stats(f.p).rounds[1] + stats(f.p).rounds[2] + stats(f.p).rounds[3] >= 1, 60000);
	__atomic_store_n(&in.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	KCHECK_EQ(bad, 0);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	KCHECK(stats(f.p).rounds[1] + stats(f.p).rounds[2] + stats(f.p).rounds[3] >= 1);
	fx_done(&f);
}

static void *start_it(void *arg)
{
	struct racer *r = arg;

	r->ret = ksync_pressure_start(r->f->p);
	return NULL;
}

static void *stop_it3(void *arg)
{
	struct racer *r = arg;

	r->ret = ksync_pressure_stop(r->f->p);
	return NULL;
}

KTEST(racing_starts_and_stops_one_wins_each_time)
{
	struct fx f;

	fx_init(&f, 0);
	fx_create(&f);
	for (int i = 0; i < 50; i++) {
		pthread_t a, b;
		struct racer ra = { &f, 9, 0 }, rb = { &f, 9, 0 };

		pthread_create(&a, NULL, start_it, &ra);
		pthread_create(&b, NULL, start_it, &rb);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		KCHECK((ra.ret == 0) + (rb.ret == 0) == 1);
		KCHECK(ra.ret == -EBUSY || rb.ret == -EBUSY);
		pthread_create(&a, NULL, stop_it3, &ra);
		pthread_create(&b, NULL, stop_it3, &rb);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		KCHECK((ra.ret == 0) + (rb.ret == 0) == 1);
		KCHECK(ra.ret == -EINVAL || rb.ret == -EINVAL);
	}
	KCHECK_EQ(ksync_pressure_inject(f.p, KSYNC_PRESSURE_LOW), 0);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KT_POLL_UNTIL_MS(test_scans(f.p) == 1, 60000);
	KCHECK_EQ(test_scans(f.p), 1);
	fx_done(&f);
}

/* The trigger hook plays a kernel: it accepts only @ok_window (for real). */
struct hook_log {
	int calls;
	uint32_t window[64];
	int perm_first;
	uint32_t ok_window;
};
static struct hook_log hl;

static long play_kernel(int fd, const char *buf, size_t len, void *arg)
{
	struct ksync_pressure_trigger t;

	(void)arg;
	if (ksync_pressure_parse_trigger(buf, len, &t) != 0)
		return -EINVAL;
	if (hl.calls < 64)
		hl.window[hl.calls] = t.window_us;
	hl.calls++;
	if (hl.perm_first)
		return -EPERM;
	if (t.window_us != hl.ok_window)
		return -EINVAL;
	ssize_t n = write(fd, buf, len);
	return n < 0 ? -errno : n;
}

KTEST(psi_fallback_through_the_hook_and_no_window_cures_a_permission)
{
	struct fx f;

	if (access("/proc/pressure/memory", W_OK) != 0) {
		printf("# no writable /proc/pressure/memory: skipped\n");
		return;
	}
	memset(&hl, 0, sizeof(hl));
	hl.ok_window = 4000000;
	ksync_pressure_set_write_hook(play_kernel, NULL);
	fx_init(&f, 0);
	f.cfg.sources = SRC(PSI_SYSTEM);
	f.cfg.trigger[KSYNC_PRESSURE_LOW] = (struct ksync_pressure_trigger){ 0, 50000, 1000000 };
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(PSI_SYSTEM));
	KCHECK(describes(f.p, "psi-system", "200 ms/4 s"));
	KCHECK(hl.calls >= 3);
	KCHECK_EQ(hl.window[0], 1000000); /* the window asked for first */
	KCHECK_EQ(ksync_pressure_destroy(f.p), 0);
	f.p = NULL;

	memset(&hl, 0, sizeof(hl));
	hl.perm_first = 1;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "psi-system", "off"));
	/* One try per level at most, each with the window asked for. */
	KCHECK(hl.calls >= 1 && hl.calls <= 3);
	for (int i = 0; i < hl.calls && i < 3; i++)
		KCHECK(hl.window[i] == 1000000 || hl.window[i] == 2000000);
	ksync_pressure_set_write_hook(NULL, NULL);
	fx_done(&f);
}

/*
 * The config's strings (root, systemd_watch, systemd_write) are the
 * caller's: nothing says they must outlive create. A child of fork()
 * reopens the sources from them (start, fd or dispatch in the child).
 */
static int child_reopens(struct fx *f)
{
	int bad = 0;

	if (ksync_pressure_fd(f->p) < 0) /* reopens in the child */
		bad |= 1;
	if (ksync_pressure_sources(f->p) != (SRC(LIMIT) | SRC(SYSTEMD)))
		bad |= 2;
	if (!describes(f->p, "limit", "ok"))
		bad |= 4;
	if (!describes(f->p, "systemd", "FIFO"))
		bad |= 8;
	if (ksync_pressure_destroy(f->p) != 0)
		bad |= 16;
	return bad;
}

KTEST(config_strings_need_not_outlive_create)
{
	struct fx f;
	char fifo[300];

	no_systemd_env();
	new_tree();
	put("proc/self/cgroup", "0::/a\n");
	put("proc/self/mountinfo", "41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put("sys/fs/cgroup/a/memory.max", "1000\n");
	put("sys/fs/cgroup/a/memory.high", "max\n");
	put("sys/fs/cgroup/a/memory.current", "10\n");
	snprintf(fifo, sizeof(fifo), "%s/fifo", tree);
	KASSERT(mkfifo(fifo, 0600) == 0);
	char *root = strdup(tree), *watch = strdup(fifo);
	KASSERT(root && watch);
	fx_init(&f, 0);
	polled_cfg(&f, SRC(LIMIT) | SRC(SYSTEMD));
	f.cfg.root = root;
	f.cfg.systemd_watch = watch;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(LIMIT) | SRC(SYSTEMD));
	/* The caller reuses its buffers, then frees them. */
	memset(root, 'x', strlen(root));
	memset(watch, 'y', strlen(watch));
	free(root);
	free(watch);
	f.cfg.root = NULL;
	f.cfg.systemd_watch = NULL;
	KCHECK_EQ(run_child(child_reopens, &f), 0);
	fx_done(&f);
	rm_tree();
}

/*
 * MemTotal - MemAvailable is memory in use: a MemAvailable above MemTotal
 * must not read as 2^64 - x bytes of it (critical pressure).
 */
KTEST(meminfo_available_above_total_is_no_pressure)
{
	struct fx f;

	new_tree();
	put("proc/meminfo", "MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 2000 kB\n");
	fx_init(&f, 0);
	polled_cfg(&f, SRC(MEMINFO));
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	/* The parser refuses the text (-EINVAL): the source stays off, described. */
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(describes(f.p, "meminfo", "off"));
	int fd = ksync_pressure_fd(f.p);
	for (int i = 0; i < 20; i++)
		if (wait_fd(fd, 10) == 1)
			KCHECK(ksync_pressure_dispatch(f.p) >= 0);
	struct ksync_pressure_stats st = stats(f.p);
	KCHECK_EQ(st.events[1] + st.events[2] + st.events[3], 0);
	KCHECK_EQ(st.rounds[1] + st.rounds[2] + st.rounds[3], 0);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	fx_done(&f);
	rm_tree();
}

KTEST(auto_takes_systemd_first_when_its_variables_are_set)
{
	struct fx f;
	char fifo[300];

	no_systemd_env();
	new_tree();
	snprintf(fifo, sizeof(fifo), "%s/fifo", tree);
	KASSERT(mkfifo(fifo, 0600) == 0);
	fx_init(&f, 0);
	f.cfg.sources = KSYNC_PRESSURE_AUTO;
	f.cfg.systemd_watch = fifo;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	unsigned m = ksync_pressure_sources(f.p);
	KCHECK(m & SRC(SYSTEMD));
	KCHECK(!(m & (SRC(PSI_CGROUP) | SRC(PSI_SYSTEM) | SRC(VMPRESSURE))));
	KCHECK(m & (SRC(LIMIT) | SRC(MEMINFO)));
	KCHECK(!describes(f.p, "psi-cgroup", NULL)); /* not tried */
	fx_done(&f);
	rm_tree();
}

/*
 * "Every parser takes a buffer and its length, needs no NUL, never reads
 * past @len": each input is copied into a heap block of exactly its length
 * (no NUL after it), so ASan sees a read one byte too far. The inputs end
 * where a scanner would look one further: inside a number, a word, an
 * escape, a base64 quantum. Every prefix of each is tried too.
 */
typedef int (*parse_fn)(const char *buf, size_t len);

static int p_psi(const char *b, size_t n) { struct ksync_pressure_psi o; return ksync_pressure_parse_psi(b, n, &o); }
static int p_meminfo(const char *b, size_t n) { uint64_t t, a; return ksync_pressure_parse_meminfo(b, n, &t, &a); }
static int p_cgroup(const char *b, size_t n)
{
	static struct ksync_pressure_cgroup o;
	return ksync_pressure_parse_cgroup(b, n, &o);
}
static int p_mount(const char *b, size_t n)
{
	static struct ksync_pressure_mount o;
	return ksync_pressure_parse_mountinfo_line(b, n, &o);
}
static int p_value(const char *b, size_t n) { uint64_t v; return ksync_pressure_parse_cgroup_value(b, n, &v); }
static int p_events(const char *b, size_t n) { struct ksync_pressure_memory_events o; return ksync_pressure_parse_memory_events(b, n, &o); }
static int p_statm(const char *b, size_t n) { uint64_t a, c; return ksync_pressure_parse_statm(b, n, &a, &c); }
static int p_capeff(const char *b, size_t n) { uint64_t v; return ksync_pressure_parse_capeff(b, n, &v); }
static int p_release(const char *b, size_t n) { unsigned a, c; return ksync_pressure_parse_kernel_release(b, n, &a, &c); }
static int p_b64(const char *b, size_t n) { unsigned char o[64]; size_t l; return ksync_pressure_base64_decode(b, n, o, sizeof(o), &l); }
static int p_trigger(const char *b, size_t n) { struct ksync_pressure_trigger t; return ksync_pressure_parse_trigger(b, n, &t); }

KTEST(parsers_never_read_past_len)
{
	static const struct {
		parse_fn fn;
		const char *text;
	} cases[] = {
		{ p_psi, "some avg10=1.23 avg60=0.00 avg300=0.00 total=12345" },
		{ p_psi, "some avg10=1.23 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=9" },
		{ p_meminfo, "MemTotal: 1000 kB\nMemAvailable: 40 kB" },
		{ p_meminfo, "MemAvailable: 40 kB\nMemTotal: 1000 kB" },
		{ p_cgroup, "4:memory:/a\n0::/abc" },
		{ p_cgroup, "0::/" },
		{ p_mount, "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate" },
		{ p_mount, "30 25 0:26 / /sys/fs/cg\\040x rw - cgroup2 cgroup2 rw\\04" },
		{ p_mount, "30 25 0:26 /\\" },
		{ p_value, "12345" },
		{ p_value, "max" },
		{ p_events, "low 1\nhigh 2\nmax 3\noom 4\noom_kill 5" },
		{ p_statm, "100 200" },
		{ p_capeff, "Name:\tx\nCapEff:\t000001fffeffffff" },
		{ p_release, "6.18" },
		{ p_release, "6.18.44-fc" },
		{ p_b64, "c29tZSAyMDAwMDAgMjAwMDAwMAA" },
		{ p_b64, "QUJD" },
		{ p_trigger, "some 150000 1000000" },
		{ p_trigger, "full 1 2" },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t len = strlen(cases[c].text);
		for (size_t n = 0; n <= len; n++) {
			char *b = malloc(n ? n : 1);
			KASSERT(b);
			memcpy(b, cases[c].text, n);
			int r = cases[c].fn(b, n);
			KCHECK(r <= 0);
			free(b);
		}
	}
	/* The whole inputs parse. */
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t len = strlen(cases[c].text);
		char *b = malloc(len);
		memcpy(b, cases[c].text, len);
		int r = cases[c].fn(b, len);
		if ((cases[c].fn != p_mount || c == 6) && r != 0) {
			printf("# %s: %d\n", cases[c].text, r);
			KCHECK_EQ(r, 0);
		}
		free(b);
	}
}

/*
 * vmpressure's levels are the kernel's own: one kernel event is one event
 * of its level. The kernel signals every registration whose level is at or
 * below the event's (mm/vmpressure.c: "if (level < ev->level) continue"),
 * so a critical event also signals the low and the medium eventfds: read
 * one by one, one critical event counted as a low, a medium and a critical
 * one (and, read in separate passes, ran extra low and medium rounds).
 * A child allocates anonymous memory past a v1 group's limit on a host
 * without swap: reclaim finds nothing to free, the kernel reports critical
 * until the child is killed by the group's OOM killer.
 */
KTEST(real_vmpressure_critical_events_are_not_low_and_medium_too)
{
	struct fx f;
	char dir[256], path[320];

	if (KT_SANITIZED) {
		/* As pressure_unit_real: the sanitizer's shadow and allocator
		 * change what the child's allocations charge to the group. */
		printf("# a sanitizer build: skipped\n");
		return;
	}
	if (!real_group(false, "oom-", dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", dir);
	FILE *lf = fopen(path, "w");
	KASSERT(lf);
	fputs("33554432", lf); /* 32 MiB */
	KASSERT(fclose(lf) == 0);
	fx_init(&f, 0);
	f.cfg.sources = SRC(VMPRESSURE);
	f.cfg.root = tree;
	for (int l = 1; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		f.cfg.min_interval_ms[l] = 1;
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_sources(f.p), SRC(VMPRESSURE));
	int fd = ksync_pressure_fd(f.p);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		char me[32];
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		snprintf(me, sizeof(me), "%d", (int)getpid());
		int cfd = open(path, O_WRONLY);
		if (cfd < 0 || write(cfd, me, strlen(me)) < 0)
			_exit(3);
		close(cfd);
		for (int i = 0; i < 256; i++) { /* 256 MiB, 8 times the limit */
			char *x = malloc(1 << 20);
			if (!x)
				_exit(4);
			memset(x, 1, 1 << 20);
		}
		_exit(5); /* not killed: the limit did not hold */
	}
	KASSERT(pid > 0);
	int status = 0;
	bool done = false;
	for (int i = 0; i < 6000 && !done; i++) {
		if (wait_fd(fd, 10) == 1)
			ksync_pressure_dispatch(f.p);
		done = waitpid(pid, &status, WNOHANG) == pid;
	}
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	for (int i = 0; i < 20; i++) /* what the kernel signalled last */
		if (wait_fd(fd, 10) == 1)
			ksync_pressure_dispatch(f.p);
	struct ksync_pressure_stats st = stats(f.p);
	printf("# vmpressure events: low %llu, medium %llu, critical %llu; child %s\n",
	       (unsigned long long)st.events[1], (unsigned long long)st.events[2],
	       (unsigned long long)st.events[3],
	       WIFSIGNALED(status) ? "killed" : "exited");
	KCHECK(WIFSIGNALED(status));
	if (st.events[KSYNC_PRESSURE_CRITICAL] >= 2)
		KCHECK(st.events[KSYNC_PRESSURE_LOW] + st.events[KSYNC_PRESSURE_MEDIUM] <
		       st.events[KSYNC_PRESSURE_CRITICAL]);
	else
		printf("# too few critical events to judge\n");
	fx_done(&f);
	rmdir(dir);
	rm_tree();
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
