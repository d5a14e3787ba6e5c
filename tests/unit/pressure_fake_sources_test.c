/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pressure monitor against fake sources: this binary defines its own
 * ksync__psrc_table (lib/pressure/internal.h), so the linker takes it
 * instead of the library's sources.c, and every source is a scripted fake
 * (an eventfd the test writes levels to, or a sample() that returns a
 * script). That reaches the paths the test source cannot: the AUTO order
 * (first event source that opens, then the first polled one), sources that
 * fail to open or die at runtime (closed, described, the monitor goes on),
 * the polled sources' timer, a round that lowers its priority step by step
 * while a polled source says the pressure is not relieved, down to the
 * floor, and a child of fork() reopening its sources.
 *
 * No duration is asserted: the tests wait for counts.
 */
#define _GNU_SOURCE
#include "../../lib/pressure/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"
#include "pressure_direct.h"
#include "pressure_rec.h"
#include "wait.h"

/* What each fake does, by kind (reset by fakes_reset()). */
struct fake {
	int open_ret;     /* open(): 0 or this errno */
	bool polled;      /* a polled source (sample()), else an eventfd */
	int script[32];   /* sample()'s returns, in order; then KSYNC_PRESSURE_NONE */
	int nscript, pos;
	int die;          /* ready()/sample() report the source dead */
	int opens, closes, samples;
	int efd;          /* the event fake's eventfd (the test writes levels to it) */
};
static struct fake fakes[KSYNC_PRESSURE_NR_SOURCES];

static void fakes_reset(void)
{
	memset(fakes, 0, sizeof(fakes));
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		fakes[k].open_ret = -ENOENT;
		fakes[k].efd = -1;
	}
}

static int fake_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	struct fake *f = &fakes[s->ops->kind];

	(void)env;
	f->opens++;
	if (f->open_ret) {
		snprintf(s->desc, sizeof(s->desc), "fake: cannot open (%d)", f->open_ret);
		return f->open_ret;
	}
	if (f->polled) {
		s->polled = true;
		snprintf(s->desc, sizeof(s->desc), "fake polled");
		return 0;
	}
	s->fd[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->fd_events[0] = EPOLLIN;
	s->fd_level[0] = KSYNC_PRESSURE_NONE;
	s->nr_fds = 1;
	f->efd = s->fd[0];
	snprintf(s->desc, sizeof(s->desc), "fake events on eventfd %d", s->fd[0]);
	return 0;
}

static int fake_ready(struct ksync__psrc *s, int i, uint32_t revents)
{
	struct fake *f = &fakes[s->ops->kind];
	uint64_t v = 0;

	(void)revents;
	if (read(s->fd[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
		return KSYNC_PRESSURE_NONE;
	if (f->die) {
		snprintf(s->desc, sizeof(s->desc), "fake: the peer went away");
		return -EPIPE;
	}
	return (int)v;
}

static int fake_sample(struct ksync__psrc *s)
{
	struct fake *f = &fakes[s->ops->kind];

	f->samples++;
	if (f->die) {
		snprintf(s->desc, sizeof(s->desc), "fake: the cgroup vanished");
		return -ENOENT;
	}
	return f->pos < f->nscript ? f->script[f->pos++] : KSYNC_PRESSURE_NONE;
}

static void fake_close(struct ksync__psrc *s)
{
	struct fake *f = &fakes[s->ops->kind];

	f->closes++;
	if (s->fd[0] >= 0)
		close(s->fd[0]);
	s->fd[0] = -1;
}

#define FAKE(k) { .kind = (k), .open = fake_open, .ready = fake_ready, .sample = fake_sample, .close = fake_close }
static const struct ksync__psrc_ops fake_ops[KSYNC_PRESSURE_NR_SOURCES] = {
	FAKE(KSYNC_PRESSURE_SRC_SYSTEMD), FAKE(KSYNC_PRESSURE_SRC_PSI_CGROUP),
	FAKE(KSYNC_PRESSURE_SRC_PSI_SYSTEM), FAKE(KSYNC_PRESSURE_SRC_VMPRESSURE),
	FAKE(KSYNC_PRESSURE_SRC_LIMIT), FAKE(KSYNC_PRESSURE_SRC_MEMINFO),
	FAKE(KSYNC_PRESSURE_SRC_BUDGET), FAKE(KSYNC_PRESSURE_SRC_TEST),
};

/* This binary's sources: every one a fake; the test source is the monitor's own. */
const struct ksync__psrc_ops *const ksync__psrc_table[KSYNC_PRESSURE_NR_SOURCES] = {
	&fake_ops[0], &fake_ops[1], &fake_ops[2], &fake_ops[3],
	&fake_ops[4], &fake_ops[5], &fake_ops[6], NULL,
};

#define BIT(k) KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_##k)

static void make(struct fx *f, unsigned sources)
{
	f->cfg.sources = sources;
	f->cfg.budget_bytes = 1 << 20;
	KASSERT(ksync_pressure_create(&f->cfg, &f->p) == 0);
}

static void emit(int kind, enum ksync_pressure_level level)
{
	uint64_t v = (uint64_t)level;
	KCHECK_EQ(write(fakes[kind].efd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/* Run the monitor from an epoll loop of the test's own until @cond. */
#define LOOP_UNTIL(f, cond)                                                    \
	do {                                                                   \
		int ep_ = epoll_create1(0);                                    \
		struct epoll_event ev_ = { .events = EPOLLIN };                \
		KASSERT(epoll_ctl(ep_, EPOLL_CTL_ADD, ksync_pressure_fd((f)->p), &ev_) == 0); \
		while (!(cond)) {                                              \
			if (epoll_wait(ep_, &ev_, 1, 100) == 1)                \
				KCHECK(ksync_pressure_dispatch((f)->p) >= 0);  \
		}                                                              \
		close(ep_);                                                    \
	} while (0)

KTEST(auto_takes_the_first_event_source_then_the_first_polled_one)
{
	struct fx f;

	fakes_reset();
	fakes[KSYNC_PRESSURE_SRC_SYSTEMD].open_ret = -ENOENT;
	fakes[KSYNC_PRESSURE_SRC_PSI_CGROUP].open_ret = -EACCES;
	fakes[KSYNC_PRESSURE_SRC_PSI_SYSTEM].open_ret = 0;
	fakes[KSYNC_PRESSURE_SRC_VMPRESSURE].open_ret = 0; /* never tried: PSI came first */
	fakes[KSYNC_PRESSURE_SRC_LIMIT].open_ret = -ENOENT;
	fakes[KSYNC_PRESSURE_SRC_MEMINFO].open_ret = 0;
	fakes[KSYNC_PRESSURE_SRC_MEMINFO].polled = true;
	fakes[KSYNC_PRESSURE_SRC_BUDGET].open_ret = 0;     /* not an AUTO source */
	fx_init(&f, 0);
	make(&f, KSYNC_PRESSURE_AUTO);
	KCHECK_EQ(ksync_pressure_sources(f.p), BIT(PSI_SYSTEM) | BIT(MEMINFO));
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		bool tried = k != KSYNC_PRESSURE_SRC_VMPRESSURE && k != KSYNC_PRESSURE_SRC_BUDGET &&
			     k != KSYNC_PRESSURE_SRC_TEST;
		KCHECK_EQ(fakes[k].opens, tried);
	}
	/* A source that failed to open was closed (close() is safe after a failed open). */
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_SYSTEMD].closes, 1);
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_PSI_SYSTEM].closes, 0);
	KCHECK(kt_describe_has_line(f.p, "systemd: off: fake: cannot open"));
	KCHECK(kt_describe_has_line(f.p, "psi-cgroup: off: fake: cannot open"));
	KCHECK(kt_describe_has_line(f.p, "psi-system: ok: fake events"));
	KCHECK(!kt_describe_has_line(f.p, "vmpressure:"));
	KCHECK(kt_describe_has_line(f.p, "limit: off:"));
	KCHECK(kt_describe_has_line(f.p, "meminfo: ok: fake polled; polled every"));
	KCHECK(!kt_describe_has_line(f.p, "budget:"));
	KCHECK(!kt_describe_has_line(f.p, "test:"));
	fx_done(&f);
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_PSI_SYSTEM].closes, 1);
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_MEMINFO].closes, 1);
}

KTEST(no_working_source_is_legal)
{
	struct fx f;

	fakes_reset(); /* every fake fails to open */
	fx_init(&f, 0);
	make(&f, KSYNC_PRESSURE_AUTO);
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK(kt_describe_has_line(f.p, "systemd: off:"));
	KCHECK(kt_describe_has_line(f.p, "meminfo: off:"));
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	KCHECK_EQ(ksync_pressure_level(f.p), KSYNC_PRESSURE_NONE);
	fx_done(&f);
	/* The same in thread mode: it starts, waits for nothing, stops. */
	fx_init(&f, 0);
	make(&f, BIT(PSI_CGROUP) | BIT(LIMIT));
	KCHECK_EQ(ksync_pressure_sources(f.p), 0);
	KCHECK_EQ(ksync_pressure_start(f.p), 0);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	fx_done(&f);
}

KTEST(an_event_source_drives_rounds_with_its_figures)
{
	struct fx f;

	fakes_reset();
	fakes[KSYNC_PRESSURE_SRC_PSI_SYSTEM].open_ret = 0;
	fx_init(&f, 0);
	make(&f, BIT(PSI_SYSTEM) | BIT(TEST));
	KCHECK_EQ(ksync_pressure_sources(f.p), BIT(PSI_SYSTEM) | BIT(TEST));
	emit(KSYNC_PRESSURE_SRC_PSI_SYSTEM, KSYNC_PRESSURE_MEDIUM);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	KCHECK_EQ(prio_of(rec_call(&f.r, 0).asked, 0), 10); /* one pass: an event source */
	struct ksync_pressure_stats st = kt_pressure_stats(f.p);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_PSI_SYSTEM], 1);
	KCHECK_EQ(st.source_scans[KSYNC_PRESSURE_SRC_PSI_SYSTEM], 1);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_TEST], 0);
	/* An fd that stands for nothing (NONE) is no event. */
	emit(KSYNC_PRESSURE_SRC_PSI_SYSTEM, KSYNC_PRESSURE_NONE);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 0);
	fx_done(&f);
}

KTEST(a_source_that_dies_is_closed_and_described)
{
	struct fx f;

	fakes_reset();
	fakes[KSYNC_PRESSURE_SRC_SYSTEMD].open_ret = 0;
	fakes[KSYNC_PRESSURE_SRC_LIMIT].open_ret = 0;
	fakes[KSYNC_PRESSURE_SRC_LIMIT].polled = true;
	fx_init(&f, 0);
	f.cfg.poll_ms[KSYNC_PRESSURE_NONE] = 1;
	make(&f, BIT(SYSTEMD) | BIT(LIMIT) | BIT(TEST));
	/* The event source's peer goes away. */
	fakes[KSYNC_PRESSURE_SRC_SYSTEMD].die = 1;
	emit(KSYNC_PRESSURE_SRC_SYSTEMD, KSYNC_PRESSURE_LOW);
	LOOP_UNTIL(&f, !(ksync_pressure_sources(f.p) & BIT(SYSTEMD)));
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_SYSTEMD].closes, 1);
	KCHECK(kt_describe_has_line(f.p, "systemd: off: died (error 32): fake: the peer went away"));
	/* The polled one's cgroup vanishes. */
	fakes[KSYNC_PRESSURE_SRC_LIMIT].die = 1;
	LOOP_UNTIL(&f, !(ksync_pressure_sources(f.p) & BIT(LIMIT)));
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_LIMIT].closes, 1);
	KCHECK(kt_describe_has_line(f.p, "limit: off: died (error 2): fake: the cgroup vanished"));
	KCHECK_EQ(rec_calls(&f.r), 0);
	/* The monitor goes on with what is left. */
	KCHECK_EQ(ksync_pressure_sources(f.p), BIT(TEST));
	KCHECK_EQ(inject_dispatch(&f, KSYNC_PRESSURE_LOW), 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	fx_done(&f);
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_SYSTEMD].closes, 1); /* not closed twice */
	KCHECK_EQ(fakes[KSYNC_PRESSURE_SRC_LIMIT].closes, 1);
}

KTEST(a_polled_round_digs_while_the_pressure_is_not_relieved)
{
	struct fx f;
	struct fake *lim = &fakes[KSYNC_PRESSURE_SRC_LIMIT];

	fakes_reset();
	lim->open_ret = 0;
	lim->polled = true;
	/* The poll finds CRITICAL; after the passes at 7 and 6 it still is; after 5, LOW. */
	int script[] = { KSYNC_PRESSURE_CRITICAL, KSYNC_PRESSURE_CRITICAL, KSYNC_PRESSURE_CRITICAL,
			 KSYNC_PRESSURE_LOW };
	memcpy(lim->script, script, sizeof(script));
	lim->nscript = 4;
	fx_init(&f, 0);
	f.cfg.poll_ms[KSYNC_PRESSURE_NONE] = 1;
	make(&f, BIT(LIMIT));
	LOOP_UNTIL(&f, kt_pressure_stats(f.p).rounds[KSYNC_PRESSURE_CRITICAL] == 1);
	KCHECK_EQ(rec_calls(&f.r), 3);
	KCHECK_EQ(prio_of(rec_call(&f.r, 0).asked, 0), 7);
	KCHECK_EQ(prio_of(rec_call(&f.r, 1).asked, 0), 6);
	KCHECK_EQ(prio_of(rec_call(&f.r, 2).asked, 0), 5);
	KCHECK_EQ(lim->samples, 4);
	struct ksync_pressure_stats st = kt_pressure_stats(f.p);
	KCHECK_EQ(st.events[KSYNC_PRESSURE_CRITICAL], 1);
	KCHECK_EQ(st.source_events[KSYNC_PRESSURE_SRC_LIMIT], 1);
	KCHECK_EQ(st.source_scans[KSYNC_PRESSURE_SRC_LIMIT], 3);
	KCHECK_EQ(st.latency_samples, 1);
	fx_done(&f);

	/* Never relieved: down to the floor (MEDIUM: 10 .. 6) and no further. */
	fakes_reset();
	lim->open_ret = 0;
	lim->polled = true;
	for (int i = 0; i < 20; i++)
		lim->script[i] = KSYNC_PRESSURE_MEDIUM;
	lim->nscript = 20;
	fx_init(&f, 0);
	f.cfg.poll_ms[KSYNC_PRESSURE_NONE] = 1;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 3600 * 1000; /* one round only */
	make(&f, BIT(LIMIT));
	LOOP_UNTIL(&f, kt_pressure_stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] == 1);
	KCHECK_EQ(rec_calls(&f.r), 5);
	for (int i = 0; i < 5; i++)
		KCHECK_EQ(prio_of(rec_call(&f.r, i).asked, 0), 10 - i);
	fx_done(&f);
}

/*
 * A polled source's level that stays up does not dig across rounds: each
 * round starts at the level's priority (it measured relief inside the
 * round); an event source's next round starts one lower (it cannot).
 */
KTEST(only_an_event_source_digs_across_rounds)
{
	struct fx f;
	struct fake *lim = &fakes[KSYNC_PRESSURE_SRC_LIMIT];

	/* Polled: MEDIUM, relieved after one pass; three times, within the hold. */
	fakes_reset();
	lim->open_ret = 0;
	lim->polled = true;
	int script[] = { KSYNC_PRESSURE_MEDIUM, KSYNC_PRESSURE_NONE, KSYNC_PRESSURE_MEDIUM,
			 KSYNC_PRESSURE_NONE, KSYNC_PRESSURE_MEDIUM, KSYNC_PRESSURE_NONE };
	memcpy(lim->script, script, sizeof(script));
	lim->nscript = 6;
	fx_init(&f, 0);
	f.cfg.poll_ms[KSYNC_PRESSURE_NONE] = 1;
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 1;
	f.cfg.hold_ms = 3600 * 1000;
	make(&f, BIT(LIMIT));
	LOOP_UNTIL(&f, kt_pressure_stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] == 3);
	KCHECK_EQ(rec_calls(&f.r), 3);
	for (int i = 0; i < 3; i++)
		KCHECK_EQ(prio_of(rec_call(&f.r, i).asked, 0), 10);
	fx_done(&f);

	/* An event source, the same three events within the hold: 10, 9, 8. */
	fakes_reset();
	fakes[KSYNC_PRESSURE_SRC_PSI_CGROUP].open_ret = 0;
	fx_init(&f, 0);
	f.cfg.min_interval_ms[KSYNC_PRESSURE_MEDIUM] = 1;
	f.cfg.hold_ms = 3600 * 1000;
	make(&f, BIT(PSI_CGROUP));
	for (int i = 0; i < 3; i++) {
		emit(KSYNC_PRESSURE_SRC_PSI_CGROUP, KSYNC_PRESSURE_MEDIUM);
		LOOP_UNTIL(&f, kt_pressure_stats(f.p).rounds[KSYNC_PRESSURE_MEDIUM] == (uint64_t)i + 1);
		struct timespec ms2 = { 0, 2000000 };
		nanosleep(&ms2, NULL); /* past the 1 ms interval */
	}
	KCHECK_EQ(rec_calls(&f.r), 3);
	for (int i = 0; i < 3; i++)
		KCHECK_EQ(prio_of(rec_call(&f.r, i).asked, 0), 10 - i);
	fx_done(&f);
}

KTEST(a_child_of_fork_reopens_its_sources)
{
	struct fx f;
	struct fake *psi = &fakes[KSYNC_PRESSURE_SRC_PSI_SYSTEM];

	fakes_reset();
	psi->open_ret = 0;
	fx_init(&f, 0);
	make(&f, BIT(PSI_SYSTEM));
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		/* The first dispatch in the child closes what it shares with the parent and reopens. */
		if (ksync_pressure_dispatch(f.p) != 0)
			bad |= 1;
		if (psi->opens != 2 || psi->closes != 1)
			bad |= 2;
		emit(KSYNC_PRESSURE_SRC_PSI_SYSTEM, KSYNC_PRESSURE_LOW);
		if (ksync_pressure_dispatch(f.p) != 1 || rec_calls(&f.r) != 1)
			bad |= 4;
		if (ksync_pressure_destroy(f.p) != 0)
			bad |= 8;
		_exit(bad);
	}
	KASSERT(pid > 0);
	int status = 0;
	KCHECK_EQ(waitpid(pid, &status, 0), pid);
	KCHECK(WIFEXITED(status));
	KCHECK_EQ(WEXITSTATUS(status), 0);
	/* The parent's source is its own still: opened once, still in its epoll set. */
	KCHECK_EQ(psi->opens, 1);
	emit(KSYNC_PRESSURE_SRC_PSI_SYSTEM, KSYNC_PRESSURE_LOW);
	KCHECK_EQ(ksync_pressure_dispatch(f.p), 1);
	KCHECK_EQ(rec_calls(&f.r), 1);
	fx_done(&f);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
