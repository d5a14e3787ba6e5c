/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Direct reclaim (ksync_pressure_charge(), lib/pressure/direct.c) against a
 * fake byte source: this binary defines its own ksync__psrc_table
 * (lib/pressure/internal.h), whose "limit" source reads a figure and a limit
 * the test sets (both through sample() and through the probe that direct
 * reclaim reads), and a shrinker that can give the figure back, block until
 * released, or charge from inside its scan.
 *
 * What it checks: the fast path publishes only once per batch; the estimate
 * (last figure + bytes since) is what sends a thread to read; a read that
 * finds the figure under the watermark is all; a figure over it makes the
 * thread run a round stepping down from its level's priority to the floor
 * while the figure stays over, and stop when it is relieved; the runner's
 * samples restart the estimate; a charge inside a round only counts; at
 * most direct_max threads reclaim and another one waits for a round
 * (THROTTLED), with the schedule forced by a blocking shrinker; destroy
 * waits for a thread inside and refuses one that comes after it began; fork;
 * many threads with the helper thread running (TSan).
 *
 * No duration is asserted: the tests wait for counts and flags.
 */
#define _GNU_SOURCE
#include "../../lib/pressure/monitor.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ksync/pressure_testing.h>

#include "ktest.h"
#include "pressure_direct.h"
#include "reports.h"
#include "wait.h"

#define MiB (1024ull * 1024)
#define LIMIT (100 * MiB)

/* The fake byte source's figure and limit (atomics: read by every thread). */
static uint64_t fake_figure, fake_limit;
static int fake_probe_reads;

static uint64_t figure_now(void)
{
	return __atomic_load_n(&fake_figure, __ATOMIC_ACQUIRE);
}

static void figure_set(uint64_t v)
{
	__atomic_store_n(&fake_figure, v, __ATOMIC_RELEASE);
}

static const unsigned permille[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };

static int fake_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	(void)env;
	s->nr_fds = 0;
	s->polled = true;
	s->figure = figure_now();
	s->limit = __atomic_load_n(&fake_limit, __ATOMIC_ACQUIRE);
	snprintf(s->desc, sizeof(s->desc), "fake bytes");
	return 0;
}

static int fake_samples;

static int fake_sample(struct ksync__psrc *s)
{
	__atomic_add_fetch(&fake_samples, 1, __ATOMIC_RELAXED);
	s->figure = figure_now();
	s->limit = __atomic_load_n(&fake_limit, __ATOMIC_ACQUIRE);
	return (int)ksync_pressure_level_of(s->figure, s->limit, permille);
}

static int fake_token;

static void *fake_probe_new(const struct ksync__psrc *s)
{
	(void)s;
	void *p = malloc(sizeof(int));
	if (p)
		memcpy(p, &fake_token, sizeof(int));
	return p;
}

static int fake_probe_read(const void *probe, uint64_t *figure, uint64_t *limit)
{
	(void)probe;
	__atomic_add_fetch(&fake_probe_reads, 1, __ATOMIC_RELAXED);
	*figure = figure_now();
	*limit = __atomic_load_n(&fake_limit, __ATOMIC_ACQUIRE);
	return 0;
}

static const struct ksync__psrc_ops fake_limit_ops = {
	.kind = KSYNC_PRESSURE_SRC_LIMIT, .open = fake_open, .ready = kt_polled_ready,
	.sample = fake_sample, .close = kt_polled_close,
	.probe_new = fake_probe_new, .probe_read = fake_probe_read,
};

/* This binary's sources: the limit source is the fake; the others do not exist. */
const struct ksync__psrc_ops *const ksync__psrc_table[KSYNC_PRESSURE_NR_SOURCES] = {
	[KSYNC_PRESSURE_SRC_LIMIT] = &fake_limit_ops,
};

/* ------------------------------------------------------------------------ */
/* A shrinker over the fake figure                                          */

struct sh {
	struct ksync_pressure *p;
	int passes;         /* count_objects calls: one per ksync_shrink_slab() */
	int relieve_at;     /* the pass whose scans drop the figure to @relieved (0: never) */
	uint64_t relieved;
	int block;          /* scans wait for @release */
	int in_scan, release;
	int charge_inside;  /* each scan charges this many MiB (recursion) */
	int charge_ret;     /* what that charge returned */
	int inside, max_inside; /* scans in flight at once */
	int per_scan_free;  /* bytes a scan gives back per object (0: none) */
};

static struct sh sh;

static unsigned long sh_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	int n = __atomic_add_fetch(&sh.passes, 1, __ATOMIC_ACQ_REL);
	if (sh.relieve_at && n == sh.relieve_at)
		figure_set(sh.relieved);
	return 1 << 16;
}

static unsigned long sh_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	kt_raise_max(&sh.max_inside, __atomic_add_fetch(&sh.inside, 1, __ATOMIC_ACQ_REL));
	if (sh.charge_inside)
		__atomic_store_n(&sh.charge_ret, ksync_pressure_charge(sh.p, (size_t)sh.charge_inside * MiB),
				 __ATOMIC_RELEASE);
	if (sh.per_scan_free) {
		uint64_t give = (uint64_t)sc->nr_to_scan * (uint64_t)sh.per_scan_free, cur = figure_now();
		while (!__atomic_compare_exchange_n(&fake_figure, &cur, cur > give ? cur - give : 0, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		}
	}
	if (__atomic_load_n(&sh.block, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&sh.in_scan, 1, __ATOMIC_RELEASE);
		KT_POLL_UNTIL(__atomic_load_n(&sh.release, __ATOMIC_ACQUIRE));
	}
	__atomic_sub_fetch(&sh.inside, 1, __ATOMIC_ACQ_REL);
	return sc->nr_to_scan;
}

struct fx {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker *s;
	struct ksync_pressure *p;
	struct ksync_pressure_config cfg;
};

/* A registry with one shrinker; the monitor on the fake limit source at @figure of LIMIT. */
static void fx_init(struct fx *f, uint64_t figure)
{
	memset(f, 0, sizeof(*f));
	memset(&sh, 0, sizeof(sh));
	figure_set(figure);
	__atomic_store_n(&fake_limit, LIMIT, __ATOMIC_RELEASE);
	__atomic_store_n(&fake_probe_reads, 0, __ATOMIC_RELAXED);
	f->reg = ksync_shrinker_registry_create(1);
	KASSERT(f->reg);
	f->s = ksync_shrinker_alloc(f->reg, 0, "direct");
	KASSERT(f->s);
	f->s->count_objects = sh_count;
	f->s->scan_objects = sh_scan;
	f->s->batch = 1;
	KASSERT(ksync_shrinker_register(f->s) == 0);
	f->cfg.sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_LIMIT);
	f->cfg.reg = f->reg;
	f->cfg.charge_batch = 4096;
}

static void fx_create(struct fx *f)
{
	KASSERT(ksync_pressure_create(&f->cfg, &f->p) == 0);
	KASSERT(ksync_pressure_sources(f->p) == KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_LIMIT));
	sh.p = f->p;
}

static void fx_done(struct fx *f)
{
	KCHECK_EQ(ksync_pressure_destroy(f->p), 0);
	KCHECK_EQ(ksync_shrinker_free(f->s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
}

/* ------------------------------------------------------------------------ */

KTEST(the_fast_path_publishes_once_per_batch)
{
	struct fx f;

	fx_init(&f, 10 * MiB);
	fx_create(&f);
	for (int i = 0; i < 4; i++)
		KCHECK_EQ(ksync_pressure_charge(f.p, 1000), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_checks, 0u); /* 4000 < 4096: the thread's own counter only */
	KCHECK_EQ(kt_pressure_stats(f.p).direct_bytes, 0u);
	KCHECK_EQ(ksync_pressure_charge(f.p, 100), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_checks, 1u);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_bytes, 4100u);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 0u); /* far under the watermark: no read */
	KCHECK_EQ(__atomic_load_n(&fake_probe_reads, __ATOMIC_RELAXED), 0);
	/* A charge of a batch or more is published at once. */
	KCHECK_EQ(ksync_pressure_charge(f.p, 8192), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_checks, 2u);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_bytes, 4100u + 8192u);
	fx_done(&f);
}

KTEST(the_estimate_sends_the_thread_to_read_and_a_read_under_the_watermark_is_all)
{
	struct fx f;

	fx_init(&f, 50 * MiB); /* the watermark: 900 per mille of 100 MiB, 40 MiB away */
	fx_create(&f);
	uint64_t wm = LIMIT / 1000 * 900;
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(wm - 50 * MiB - 1)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 0u);
	/* One more byte crosses the estimate; the figure read is still 50 MiB. */
	KCHECK_EQ(ksync_pressure_charge(f.p, 8192), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 1u);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_rounds, 0u);
	KCHECK_EQ(sh.passes, 0);
	/* The read restarted the estimate: 40 MiB more before the next one. */
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(wm - 50 * MiB - 1)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 1u);
	fx_done(&f);
}

KTEST(over_the_watermark_the_thread_reclaims_from_its_level_down_to_the_floor)
{
	struct fx f;

	fx_init(&f, 92 * MiB); /* MEDIUM: priority 10, floor 6 */
	fx_create(&f);
	int r = ksync_pressure_charge(f.p, 8192);
	KCHECK_EQ(r, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(sh.passes, 10 - 6 + 1); /* the figure never fell: every priority to the floor */
	struct ksync_pressure_stats st = kt_pressure_stats(f.p);
	KCHECK_EQ(st.direct_rounds, 1u);
	KCHECK_EQ(st.direct_scans, 5u);
	KCHECK(st.direct_freed > 0);
	KCHECK(st.direct_ns_max > 0);
	KCHECK(st.direct_ns_p50 <= st.direct_ns_max);
	KCHECK_EQ(st.direct_reads, 1u + 5u); /* the read that found it over, then one per step */
	/* CRITICAL (97 %): priority 7 down to 0. */
	figure_set(97 * MiB);
	sh.passes = 0;
	KCHECK_EQ(ksync_pressure_charge(f.p, 8192), KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(sh.passes, 8);
	fx_done(&f);
}

KTEST(a_round_stops_when_the_figure_falls_under_the_watermark)
{
	struct fx f;

	fx_init(&f, 92 * MiB);
	sh.relieve_at = 2; /* the second step gives enough back */
	sh.relieved = 60 * MiB;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_charge(f.p, 8192), KSYNC_PRESSURE_CHARGE_RECLAIMED);
	KCHECK_EQ(sh.passes, 2);
	/* Relieved: the room is 30 MiB again, charges under it only count. */
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(20 * MiB)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_rounds, 1u);
	fx_done(&f);
}

KTEST(the_runners_samples_restart_the_estimate)
{
	struct fx f;
	int ep;

	fx_init(&f, 10 * MiB);
	f.cfg.poll_ms[0] = 1;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(30 * MiB)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 0u);
	/* The figure rises to 85 MiB (5 MiB from the watermark); the runner samples it. */
	figure_set(85 * MiB);
	int before = __atomic_load_n(&fake_samples, __ATOMIC_RELAXED);
	ep = ksync_pressure_fd(f.p);
	KASSERT(ep >= 0);
	while (__atomic_load_n(&fake_samples, __ATOMIC_RELAXED) == before) {
		struct pollfd pfd = { .fd = ep, .events = POLLIN };
		if (poll(&pfd, 1, 100) == 1)
			KCHECK(ksync_pressure_dispatch(f.p) >= 0);
	}
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(4 * MiB)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 0u); /* 85 + 4 < 90: the charges before the sample are gone */
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(2 * MiB)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 1u); /* 85 + 6 crosses: a read (still 85: nothing to do) */
	fx_done(&f);
}

KTEST(a_charge_inside_a_round_only_counts)
{
	struct fx f;

	fx_init(&f, 92 * MiB);
	sh.charge_inside = 64;
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_charge(f.p, 8192), KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(__atomic_load_n(&sh.charge_ret, __ATOMIC_ACQUIRE), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_rounds, 1u); /* no round inside the round */
	KCHECK_EQ(sh.passes, 5);
	fx_done(&f);
}

KTEST(without_a_byte_source_a_charge_only_counts_and_describe_says_so)
{
	struct fx f;

	fx_init(&f, 99 * MiB);
	f.cfg.sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST);
	KASSERT(ksync_pressure_create(&f.cfg, &f.p) == 0);
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(200 * MiB)), 0);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_reads, 0u);
	KCHECK(kt_describe_has_line(f.p, "direct: off: no byte source"));
	fx_done(&f);

	fx_init(&f, 10 * MiB);
	fx_create(&f);
	KCHECK(kt_describe_has_line(f.p, "direct: ok: ksync_pressure_charge() reclaims above 900 per mille of the bound of: limit; "
			     "batch 4096 bytes, at most 2 threads"));
	fx_done(&f);
}

KTEST(misuse_is_reported_at_the_callers_line)
{
	struct fx f;

	ksync_warn_hook = kt_record_report;
	reports = 0;
	int line = __LINE__ + 1;
	KCHECK_EQ(ksync_pressure_charge(NULL, 1), -EINVAL);
	KCHECK_EQ(reports, 1);
	KCHECK_EQ(report_line, line);
	KCHECK(strstr(report_file, "pressure_direct_test.c") != NULL);

	fx_init(&f, 10 * MiB);
	f.cfg.direct_permille = 1001;
	line = __LINE__ + 1;
	KCHECK_EQ(ksync_pressure_create(&f.cfg, &f.p), -EINVAL);
	KCHECK_EQ(reports, 2);
	KCHECK_EQ(report_line, line);
	KCHECK_EQ(ksync_shrinker_free(f.s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f.reg), 0);
	ksync_warn_hook = NULL;
}

/* ------------------------------------------------------------------------ */
/* Threads: throttling, destroy, many chargers                              */

KTEST(beyond_direct_max_a_thread_waits_for_a_round_instead_of_piling_on)
{
	struct fx f;
	struct kt_charger a, b;
	pthread_t ta, tb;

	fx_init(&f, 92 * MiB);
	f.cfg.direct_max = 1;
	sh.block = 1;
	fx_create(&f);
	a = (struct kt_charger){ f.p, 8192, 0, 0 };
	b = a;
	KASSERT(pthread_create(&ta, NULL, kt_charge_thread, &a) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&sh.in_scan, __ATOMIC_ACQUIRE)); /* A reclaims, held in its scan */
	KASSERT(pthread_create(&tb, NULL, kt_charge_thread, &b) == 0);
	KT_POLL_UNTIL(kt_pressure_stats(f.p).direct_throttled == 1); /* B found the slot taken and waits */
	KCHECK(!__atomic_load_n(&b.done, __ATOMIC_ACQUIRE));
	figure_set(50 * MiB); /* A's next read finds it relieved */
	__atomic_store_n(&sh.release, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	KCHECK_EQ(a.ret, KSYNC_PRESSURE_CHARGE_RECLAIMED);
	KCHECK_EQ(b.ret, KSYNC_PRESSURE_CHARGE_THROTTLED);
	KCHECK_EQ(kt_pressure_stats(f.p).direct_rounds, 1u);
	KCHECK_EQ(sh.max_inside, 1);
	fx_done(&f);
}

KTEST(destroy_waits_for_a_thread_inside_and_refuses_one_that_comes_after)
{
	struct fx f;
	struct kt_charger a;
	struct kt_destroyer d;
	pthread_t ta, td;

	fx_init(&f, 92 * MiB);
	sh.block = 1;
	fx_create(&f);
	a = (struct kt_charger){ f.p, 8192, 0, 0 };
	KASSERT(pthread_create(&ta, NULL, kt_charge_thread, &a) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&sh.in_scan, __ATOMIC_ACQUIRE));
	d = (struct kt_destroyer){ f.p, -1, 0 };
	KASSERT(pthread_create(&td, NULL, kt_destroy_thread, &d) == 0);
	KT_POLL_UNTIL(kt_direct_dying(f.p)); /* destroy has begun, and waits for A */
	KCHECK(!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE));
	/* A thread that comes now is refused, reported at its line. */
	ksync_warn_hook = kt_record_report;
	reports = 0;
	int line = __LINE__ + 1;
	KCHECK_EQ(ksync_pressure_charge(f.p, (size_t)(64 * MiB)), -ESHUTDOWN);
	KCHECK_EQ(reports, 1);
	KCHECK_EQ(report_line, line);
	ksync_warn_hook = NULL;
	__atomic_store_n(&sh.release, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(td, NULL);
	KCHECK_EQ(a.ret, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(d.ret, 0);
	KCHECK_EQ(ksync_shrinker_free(f.s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f.reg), 0);
}

KTEST(a_child_of_fork_reclaims_directly)
{
	struct fx f;
	pid_t pid;
	int status;

	fx_init(&f, 92 * MiB);
	fx_create(&f);
	KCHECK_EQ(ksync_pressure_charge(f.p, 100), 0); /* this thread's counter has bytes to inherit */
	sh.passes = 0;
	pid = fork();
	KASSERT(pid >= 0);
	if (pid == 0) {
		int r = ksync_pressure_charge(f.p, 8192);
		_exit(r == (KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER) && sh.passes == 5 ? 0 : 1);
	}
	KASSERT(waitpid(pid, &status, 0) == pid);
	KCHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	KCHECK_EQ(sh.passes, 0); /* the child's round was its own */
	fx_done(&f);
}

#define THREADS 4
#define CHARGES 2000
#define VALUE (32 * 1024)

static void *alloc_thread(void *arg)
{
	struct ksync_pressure *p = arg;

	for (int i = 0; i < CHARGES; i++) {
		/* "Allocate": the figure grows, then the charge. */
		__atomic_add_fetch(&fake_figure, VALUE, __ATOMIC_ACQ_REL);
		KCHECK(ksync_pressure_charge(p, VALUE) >= 0);
	}
	return NULL;
}

KTEST(many_threads_charge_while_the_helper_thread_samples)
{
	struct fx f;
	pthread_t t[THREADS];

	fx_init(&f, 80 * MiB); /* THREADS * CHARGES * VALUE = 250 MiB more: over and over */
	sh.per_scan_free = 4096;
	f.cfg.direct_max = 2;
	f.cfg.poll_ms[0] = f.cfg.poll_ms[1] = f.cfg.poll_ms[2] = f.cfg.poll_ms[3] = 1;
	f.cfg.min_interval_ms[1] = f.cfg.min_interval_ms[2] = f.cfg.min_interval_ms[3] = 1;
	fx_create(&f);
	KASSERT(ksync_pressure_start(f.p) == 0);
	for (int i = 0; i < THREADS; i++)
		KASSERT(pthread_create(&t[i], NULL, alloc_thread, f.p) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	KCHECK_EQ(ksync_pressure_stop(f.p), 0);
	struct ksync_pressure_stats st = kt_pressure_stats(f.p);
	printf("# direct rounds %llu throttled %llu reads %llu scans %llu freed %llu, helper rounds %llu, max inside %d\n", (unsigned long long)st.direct_rounds, (unsigned long long)st.direct_throttled, (unsigned long long)st.direct_reads, (unsigned long long)st.direct_scans, (unsigned long long)st.direct_freed, (unsigned long long)(st.rounds[1] + st.rounds[2] + st.rounds[3]), sh.max_inside);
	KCHECK(st.direct_rounds > 0);
	KCHECK(st.direct_bytes <= (uint64_t)THREADS * CHARGES * VALUE);
	KCHECK(st.direct_bytes + (uint64_t)THREADS * 4096 >= (uint64_t)THREADS * CHARGES * VALUE);
	/* Direct rounds at once never beyond direct_max, plus the helper thread's one. */
	KCHECK(sh.max_inside <= 3);
	fx_done(&f);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
