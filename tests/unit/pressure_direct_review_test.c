/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A review of direct reclaim (ksync_pressure_charge()) against its
 * documentation: the kernel-doc of include/ksync/pressure.h, the section
 * "Direct reclaim" of docs/pressure.md and the rows of docs/errors.md. Each
 * test names the sentence it holds the code to.
 *
 * Like pressure_direct_test.c, this binary defines its own
 * ksync__psrc_table (lib/pressure/internal.h): the "limit" and "budget"
 * sources are fakes whose figure and limit the test sets, read both by the
 * runner's sample() and by the probe that charging threads read. A shrinker
 * over them counts its passes, can block until released (to force a
 * schedule), and can call back into the library from its scan.
 *
 * No duration is asserted: the tests wait for counts and flags.
 */
#define _GNU_SOURCE
#include "../../lib/pressure/monitor.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ksync/pressure_testing.h>

#include "ktest.h"
#include "pressure_direct.h"
#include "reports.h"
#include "wait.h"

#define MiB (1024ull * 1024)
#define LIMIT (100 * MiB)

/* ------------------------------------------------------------------------ */
/* Two fake byte sources: [0] stands for limit, [1] for budget             */

static uint64_t fake_figure[2], fake_limit[2];

static int fake_idx(const struct ksync__psrc *s)
{
	return s->ops->kind == KSYNC_PRESSURE_SRC_LIMIT ? 0 : 1;
}

static void figure_set(int i, uint64_t v)
{
	__atomic_store_n(&fake_figure[i], v, __ATOMIC_RELEASE);
}

static uint64_t figure_get(int i)
{
	return __atomic_load_n(&fake_figure[i], __ATOMIC_ACQUIRE);
}

static void limit_set(int i, uint64_t v)
{
	__atomic_store_n(&fake_limit[i], v, __ATOMIC_RELEASE);
}

static const unsigned default_permille[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };

static int fake_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	(void)env;
	int i = fake_idx(s);

	s->nr_fds = 0;
	s->polled = true;
	s->figure = figure_get(i);
	s->limit = __atomic_load_n(&fake_limit[i], __ATOMIC_ACQUIRE);
	snprintf(s->desc, sizeof(s->desc), "fake bytes %d", i);
	return 0;
}

static int fake_sample(struct ksync__psrc *s)
{
	int i = fake_idx(s);

	s->figure = figure_get(i);
	s->limit = __atomic_load_n(&fake_limit[i], __ATOMIC_ACQUIRE);
	return (int)ksync_pressure_level_of(s->figure, s->limit, default_permille);
}

static void *fake_probe_new(const struct ksync__psrc *s)
{
	int *p = malloc(sizeof(int));

	if (p)
		*p = fake_idx(s);
	return p;
}

static int probe_reads;

static int fake_probe_read(const void *probe, uint64_t *figure, uint64_t *limit)
{
	int i = *(const int *)probe;

	__atomic_add_fetch(&probe_reads, 1, __ATOMIC_RELAXED);
	*figure = figure_get(i);
	*limit = __atomic_load_n(&fake_limit[i], __ATOMIC_ACQUIRE);
	return 0;
}

static const struct ksync__psrc_ops fake_limit_ops = {
	.kind = KSYNC_PRESSURE_SRC_LIMIT, .open = fake_open, .ready = kt_polled_ready,
	.sample = fake_sample, .close = kt_polled_close,
	.probe_new = fake_probe_new, .probe_read = fake_probe_read,
};

static const struct ksync__psrc_ops fake_budget_ops = {
	.kind = KSYNC_PRESSURE_SRC_BUDGET, .open = fake_open, .ready = kt_polled_ready,
	.sample = fake_sample, .close = kt_polled_close,
	.probe_new = fake_probe_new, .probe_read = fake_probe_read,
};

/* This binary's sources: the two fakes; the test source is the library's own. */
const struct ksync__psrc_ops *const ksync__psrc_table[KSYNC_PRESSURE_NR_SOURCES] = {
	[KSYNC_PRESSURE_SRC_LIMIT] = &fake_limit_ops,
	[KSYNC_PRESSURE_SRC_BUDGET] = &fake_budget_ops,
};

/* ------------------------------------------------------------------------ */
/* A shrinker                                                               */

struct sh {
	int passes;              /* count_objects calls */
	int scans;               /* scan_objects calls */
	int block;               /* scans wait for @release */
	int in_scan;             /* scans waiting */
	int release;
	int inside, max_inside;  /* scans in flight at once */
	struct ksync_pressure *charge_to; /* a scan charges @charge_bytes to it */
	size_t charge_bytes;
	int charge_ret;
	int charge_calls;
	struct ksync_pressure *destroy_it; /* a scan destroys it (misuse) */
	int destroy_ret;
	int fork_in_scan;        /* the first scan forks; the child's pid */
	pid_t child;
};

static struct sh sh;

static unsigned long sh_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	__atomic_add_fetch(&sh.passes, 1, __ATOMIC_ACQ_REL);
	return 1 << 16;
}

static unsigned long sh_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	kt_raise_max(&sh.max_inside, __atomic_add_fetch(&sh.inside, 1, __ATOMIC_ACQ_REL));
	__atomic_add_fetch(&sh.scans, 1, __ATOMIC_ACQ_REL);
	struct ksync_pressure *to = __atomic_load_n(&sh.charge_to, __ATOMIC_ACQUIRE);
	if (to) {
		__atomic_store_n(&sh.charge_ret, ksync_pressure_charge(to, sh.charge_bytes), __ATOMIC_RELEASE);
		__atomic_add_fetch(&sh.charge_calls, 1, __ATOMIC_ACQ_REL);
	}
	struct ksync_pressure *d = __atomic_exchange_n(&sh.destroy_it, NULL, __ATOMIC_ACQ_REL);
	if (d)
		__atomic_store_n(&sh.destroy_ret, ksync_pressure_destroy(d), __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&sh.fork_in_scan, 0, __ATOMIC_ACQ_REL))
		sh.child = fork(); /* the child carries on with this round */
	if (__atomic_load_n(&sh.block, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&sh.in_scan, 1, __ATOMIC_ACQ_REL);
		KT_POLL_UNTIL(__atomic_load_n(&sh.release, __ATOMIC_ACQUIRE));
	}
	__atomic_sub_fetch(&sh.inside, 1, __ATOMIC_ACQ_REL);
	return sc->nr_to_scan;
}

struct fx {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker *s;
	struct ksync_pressure_config cfg;
};

/* A registry of @nodes nodes with one shrinker; figures of both fakes at @limit_fig of LIMIT. */
static void fx_init(struct fx *f, int nodes, uint64_t limit_fig)
{
	memset(f, 0, sizeof(*f));
	memset(&sh, 0, sizeof(sh));
	figure_set(0, limit_fig);
	figure_set(1, 0);
	limit_set(0, LIMIT);
	limit_set(1, LIMIT);
	f->reg = ksync_shrinker_registry_create(nodes);
	KASSERT(f->reg);
	f->s = ksync_shrinker_alloc(f->reg, 0, "review");
	KASSERT(f->s);
	f->s->count_objects = sh_count;
	f->s->scan_objects = sh_scan;
	f->s->batch = 1; /* every pass scans */
	KASSERT(ksync_shrinker_register(f->s) == 0);
	f->cfg.sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_LIMIT);
	f->cfg.reg = f->reg;
	f->cfg.charge_batch = 4096;
}

static struct ksync_pressure *fx_create(struct fx *f)
{
	struct ksync_pressure *p = NULL;

	KASSERT(ksync_pressure_create(&f->cfg, &p) == 0);
	return p;
}

static void fx_done(struct fx *f)
{
	KCHECK_EQ(ksync_shrinker_free(f->s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
}

static int passes(void)
{
	return __atomic_load_n(&sh.passes, __ATOMIC_ACQUIRE);
}

/* The "direct:" line of describe, or "" (copied into @out). */
static void direct_line(struct ksync_pressure *p, char *out, size_t cap)
{
	char buf[4096];
	const char *l;

	ksync_pressure_describe(p, buf, sizeof(buf));
	out[0] = 0;
	l = strstr(buf, "direct:");
	if (!l)
		return;
	size_t n = strcspn(l, "\n");
	if (n >= cap)
		n = cap - 1;
	memcpy(out, l, n);
	out[n] = 0;
}

/* ------------------------------------------------------------------------ */
/* Return values, the watermark, levels                                     */

/*
 * "The watermark is direct_permille of the source's limit": exact to the
 * byte for a limit that is not a multiple of 1000, and without overflow for
 * a limit near 2^64 (a charge sends the thread to read once the estimate
 * reaches the watermark, and a figure at it is over).
 */
KTEST(the_watermark_is_direct_permille_of_the_limit_to_the_byte)
{
	static const uint64_t limits[] = { 1000003, 123456789, (1ull << 63) + 12345, UINT64_MAX - 7 };

	for (unsigned i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct fx f;
		uint64_t lim = limits[i];
		/* floor(lim * 900 / 1000), computed in 128 bits */
		uint64_t wm = (uint64_t)((unsigned __int128)lim * 900 / 1000);

		fx_init(&f, 1, wm - 100);
		limit_set(0, lim);
		f.cfg.charge_batch = 1; /* every charge publishes and compares */
		struct ksync_pressure *p = fx_create(&f);
		KCHECK_EQ(ksync_pressure_charge(p, 99), 0);
		KCHECK_EQ(kt_pressure_stats(p).direct_reads, 0u); /* wm - 1: under */
		KCHECK_EQ(ksync_pressure_charge(p, 1), 0); /* the estimate reaches wm: a read */
		KCHECK_EQ(kt_pressure_stats(p).direct_reads, 1u);
		KCHECK_EQ(passes(), 0); /* the figure read (wm - 100) is under */
		figure_set(0, wm - 1);
		KCHECK_EQ(ksync_pressure_charge(p, 99), 0); /* the room of the last read is 100 */
		KCHECK_EQ(kt_pressure_stats(p).direct_reads, 1u);
		KCHECK_EQ(ksync_pressure_charge(p, 1), 0); /* reached: a read; the figure, wm - 1, is under */
		KCHECK_EQ(kt_pressure_stats(p).direct_reads, 2u);
		KCHECK_EQ(passes(), 0);
		figure_set(0, wm);
		int r = ksync_pressure_charge(p, 1); /* room 1 from the last read: a read, over */
		KCHECK(r & KSYNC_PRESSURE_CHARGE_RECLAIMED);
		KCHECK(passes() > 0);
		KCHECK_EQ(ksync_pressure_destroy(p), 0);
		fx_done(&f);
	}
}

/* "0: the MEDIUM level's @limit_permille": a custom MEDIUM share moves the watermark, and describe says it. */
KTEST(direct_permille_0_takes_the_medium_levels_share)
{
	struct fx f;
	char line[512];

	fx_init(&f, 1, 84 * MiB);
	f.cfg.limit_permille[1] = 700;
	f.cfg.limit_permille[2] = 850;
	f.cfg.limit_permille[3] = 950;
	f.cfg.charge_batch = 1; /* every charge publishes and compares */
	struct ksync_pressure *p = fx_create(&f);
	direct_line(p, line, sizeof(line));
	KCHECK(strstr(line, "reclaims above 850 per mille") != NULL);
	/* 85 MiB is 850 per mille of 100 MiB; 84 MiB + 1 MiB reaches it. */
	KCHECK_EQ(ksync_pressure_charge(p, (size_t)(MiB - 1)), 0);
	KCHECK_EQ(kt_pressure_stats(p).direct_reads, 0u);
	figure_set(0, 85 * MiB);
	int r = ksync_pressure_charge(p, 1);
	KCHECK_EQ(r, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(kt_pressure_stats(p).direct_reads, 1u + 5u); /* MEDIUM: 10..6 */
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * "ksync_shrink_slab() on every node from the priority of the level the
 * figure reads (at least low's), one priority lower after each pass while a
 * figure stays over, down to that level's floor": a watermark below LOW's
 * share (500 per mille) at 60 % reads NONE, so LOW's 12..10: three passes
 * on each of three nodes; custom priorities and floors are taken.
 */
KTEST(a_round_under_lows_share_steps_lows_priorities_on_every_node)
{
	struct fx f;

	fx_init(&f, 3, 60 * MiB);
	f.cfg.direct_permille = 500;
	struct ksync_pressure *p = fx_create(&f);
	int r = ksync_pressure_charge(p, 4096);
	KCHECK_EQ(r, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(kt_pressure_stats(p).direct_scans, 3u * 3u); /* three priorities, three nodes */
	KCHECK(passes() >= 3);
	KCHECK_EQ(kt_pressure_stats(p).direct_rounds, 1u);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);

	fx_init(&f, 1, 92 * MiB);
	f.cfg.priority[1] = 11;
	f.cfg.floor[1] = 9;
	f.cfg.priority[2] = 8;
	f.cfg.floor[2] = 5;
	f.cfg.priority[3] = 4;
	f.cfg.floor[3] = 1;
	p = fx_create(&f);
	KCHECK_EQ(ksync_pressure_charge(p, 4096), KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(passes(), 8 - 5 + 1);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * "over @direct_permille of a limit": of *a* limit, any byte source's. With
 * limit and budget both open, the budget over and the limit far under, the
 * charge reclaims; describe names both sources.
 */
KTEST(any_byte_source_over_its_watermark_is_enough)
{
	struct fx f;
	char line[512];

	fx_init(&f, 1, 10 * MiB);
	f.cfg.sources |= KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_BUDGET);
	f.cfg.budget_bytes = LIMIT;
	figure_set(1, 50 * MiB);
	struct ksync_pressure *p = fx_create(&f);
	direct_line(p, line, sizeof(line));
	KCHECK(strstr(line, "limit") != NULL);
	KCHECK(strstr(line, "budget") != NULL);
	/* The least room is the budget's 40 MiB. */
	KCHECK_EQ(ksync_pressure_charge(p, (size_t)(39 * MiB)), 0);
	KCHECK_EQ(kt_pressure_stats(p).direct_reads, 0u);
	figure_set(1, 95 * MiB);
	KCHECK_EQ(ksync_pressure_charge(p, (size_t)(2 * MiB)),
		  KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(passes(), 8); /* CRITICAL by the budget: 7..0 */
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* The fast path                                                            */

/*
 * A seccomp filter on the calling thread: any syscall but exit and
 * exit_group kills the whole process (not the thread only: a sanitizer's
 * own thread would keep a killed thread's process alive).
 */
static int no_syscalls_but_exit(void)
{
#if defined(__x86_64__)
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#else
	return -1;
#endif
}

/*
 * "Under the watermark, no syscall and no shared write between batches":
 * in a child of fork() under a seccomp filter that kills it at any syscall
 * but exit, a new thread's first charge, charges under a batch, and
 * batches published under the watermark all return 0.
 */
KTEST(under_the_watermark_a_charge_makes_no_syscall)
{
	struct fx f;
	pid_t pid;
	int status;

	fx_init(&f, 1, 10 * MiB);
	struct ksync_pressure *p = fx_create(&f);
	pid = fork();
	KASSERT(pid >= 0);
	if (pid == 0) {
		int bad = 0;

		if (no_syscalls_but_exit() != 0)
			_exit(77);
		for (int i = 0; i < 10000; i++)
			bad |= ksync_pressure_charge(p, 1000); /* 10 MB: ~2400 batches, far under 90 MiB */
		/* Not _exit(): ASan checks the signal stack before a noreturn call. */
		syscall(SYS_exit_group, bad ? 1 : 0);
	}
	KASSERT(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("# no seccomp filter here: the fast path's syscalls not checked\n");
	} else {
		KCHECK(WIFEXITED(status));
		KCHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	}
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * "the estimate may be short by a batch per thread" (docs/pressure.md):
 * a thread that charges two monitors in turn, each charge under a batch,
 * must still have all but a batch of each monitor's bytes published.
 */
KTEST(a_thread_charging_two_monitors_in_turn_loses_at_most_a_batch_of_each)
{
	struct fx f;

	fx_init(&f, 1, 10 * MiB);
	f.cfg.charge_batch = 64 * 1024;
	struct ksync_pressure *a = fx_create(&f);
	struct ksync_pressure *b = fx_create(&f);
	const size_t chunk = 16 * 1024;
	const int n = 400; /* 6.25 MiB each: under the watermark */
	for (int i = 0; i < n; i++) {
		KCHECK_EQ(ksync_pressure_charge(a, chunk), 0);
		KCHECK_EQ(ksync_pressure_charge(b, chunk), 0);
	}
	uint64_t total = (uint64_t)n * chunk;
	KCHECK(kt_pressure_stats(a).direct_bytes + f.cfg.charge_batch >= total);
	KCHECK(kt_pressure_stats(b).direct_bytes + f.cfg.charge_batch >= total);
	KCHECK(kt_pressure_stats(a).direct_bytes <= total);
	KCHECK(kt_pressure_stats(b).direct_bytes <= total);
	KCHECK_EQ(ksync_pressure_destroy(a), 0);
	KCHECK_EQ(ksync_pressure_destroy(b), 0);
	fx_done(&f);
}

/*
 * The same promise seen from the reclaim side: two monitors on the same
 * byte source (a cache per cgroup pair, a budget monitor beside a limit
 * monitor); a thread alternating between them must reach the watermark of
 * each after about its room, not never.
 */
KTEST(alternating_charges_still_reach_the_watermark)
{
	struct fx f;

	fx_init(&f, 1, 80 * MiB);
	f.cfg.charge_batch = 64 * 1024;
	struct ksync_pressure *a = fx_create(&f);
	struct ksync_pressure *b = fx_create(&f);
	/* 10 MiB of room each; 2 x 20 MiB charged in 16 KiB pieces, in turn. */
	for (int i = 0; i < 1280; i++) {
		KCHECK(ksync_pressure_charge(a, 16 * 1024) >= 0);
		KCHECK(ksync_pressure_charge(b, 16 * 1024) >= 0);
	}
	KCHECK(kt_pressure_stats(a).direct_reads >= 1u);
	KCHECK(kt_pressure_stats(b).direct_reads >= 1u);
	KCHECK_EQ(ksync_pressure_destroy(a), 0);
	KCHECK_EQ(ksync_pressure_destroy(b), 0);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* Recursion                                                                */

/*
 * "A charge made from inside a round (a shrinker that allocates) only
 * counts": in the runner's round (a dispatch answering an injected level),
 * a scan's charge far over the watermark returns 0, runs no direct round,
 * and its bytes are counted.
 */
KTEST(a_charge_inside_the_runners_round_only_counts)
{
	struct fx f;

	fx_init(&f, 1, 92 * MiB);
	f.cfg.sources |= KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST);
	struct ksync_pressure *p = fx_create(&f);
	sh.charge_bytes = 64 * MiB;
	__atomic_store_n(&sh.charge_to, p, __ATOMIC_RELEASE);
	KCHECK_EQ(ksync_pressure_inject(p, KSYNC_PRESSURE_CRITICAL), 0);
	int ep = ksync_pressure_fd(p);
	KASSERT(ep >= 0);
	while (kt_pressure_stats(p).rounds[KSYNC_PRESSURE_CRITICAL] == 0) {
		struct pollfd pfd = { .fd = ep, .events = POLLIN };
		if (poll(&pfd, 1, 100) == 1)
			KCHECK(ksync_pressure_dispatch(p) >= 0);
	}
	__atomic_store_n(&sh.charge_to, NULL, __ATOMIC_RELEASE);
	KCHECK(__atomic_load_n(&sh.charge_calls, __ATOMIC_ACQUIRE) > 0);
	KCHECK_EQ(__atomic_load_n(&sh.charge_ret, __ATOMIC_ACQUIRE), 0);
	struct ksync_pressure_stats st = kt_pressure_stats(p);
	KCHECK_EQ(st.direct_rounds, 0u);
	KCHECK_EQ(st.direct_reads, 0u);
	KCHECK(st.direct_bytes >= 64 * MiB);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * "reclaim does not recurse", as PF_MEMALLOC (a flag of the task, not of a
 * cgroup) keeps the kernel's from recursing: a shrinker that allocates inside
 * monitor A's direct round and charges monitor B, which shrinks the same
 * registry, must not start a round of B inside A's round.
 */
KTEST(a_charge_inside_a_round_of_another_monitor_does_not_recurse)
{
	struct fx f;

	fx_init(&f, 1, 92 * MiB);
	struct ksync_pressure *a = fx_create(&f);
	struct ksync_pressure *b = fx_create(&f);
	sh.charge_bytes = 64 * MiB;
	__atomic_store_n(&sh.charge_to, b, __ATOMIC_RELEASE);
	KCHECK_EQ(ksync_pressure_charge(a, 8192), KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	__atomic_store_n(&sh.charge_to, NULL, __ATOMIC_RELEASE);
	KCHECK_EQ(__atomic_load_n(&sh.charge_ret, __ATOMIC_ACQUIRE), 0);
	KCHECK_EQ(kt_pressure_stats(b).direct_rounds, 0u);
	KCHECK_EQ(kt_pressure_stats(b).direct_reads, 0u);
	KCHECK_EQ(passes(), 10 - 6 + 1); /* A's round alone: MEDIUM 10..6 */
	KCHECK_EQ(ksync_pressure_destroy(a), 0);
	KCHECK_EQ(ksync_pressure_destroy(b), 0);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* Threads: direct_max, throttling, destroy, fork                           */

/*
 * "At most @direct_max threads reclaim at once; another caller over the
 * watermark waits for one of their rounds to end and returns (THROTTLED)",
 * "with _OVER when that round left the figure over": direct_max 2, two
 * rounds held in their scans, a third caller waits; the figure stays over
 * to the floor, so every caller gets _OVER.
 */
KTEST(direct_max_two_rounds_at_once_a_third_waits_and_learns_it_is_still_over)
{
	struct fx f;
	struct kt_charger c[3];
	pthread_t t[3];

	fx_init(&f, 1, 92 * MiB);
	f.cfg.direct_max = 2;
	sh.block = 1;
	struct ksync_pressure *p = fx_create(&f);
	for (int i = 0; i < 3; i++)
		c[i] = (struct kt_charger){ p, 8192, 0, 0 };
	KASSERT(pthread_create(&t[0], NULL, kt_charge_thread, &c[0]) == 0);
	KASSERT(pthread_create(&t[1], NULL, kt_charge_thread, &c[1]) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&sh.in_scan, __ATOMIC_ACQUIRE) == 2); /* both reclaim */
	KASSERT(pthread_create(&t[2], NULL, kt_charge_thread, &c[2]) == 0);
	KT_POLL_UNTIL(kt_pressure_stats(p).direct_throttled == 1);
	KCHECK(!__atomic_load_n(&c[2].done, __ATOMIC_ACQUIRE));
	KCHECK_EQ(__atomic_load_n(&sh.max_inside, __ATOMIC_ACQUIRE), 2);
	__atomic_store_n(&sh.release, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	KCHECK_EQ(c[0].ret, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(c[1].ret, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(c[2].ret, KSYNC_PRESSURE_CHARGE_THROTTLED | KSYNC_PRESSURE_CHARGE_OVER);
	struct ksync_pressure_stats st = kt_pressure_stats(p);
	KCHECK_EQ(st.direct_rounds, 2u);
	KCHECK_EQ(st.direct_throttled, 1u);
	KCHECK(st.direct_ns_p50 <= st.direct_ns_p99);
	KCHECK(st.direct_ns_p99 <= st.direct_ns_max);
	KCHECK(st.direct_ns_max > 0);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * "a caller already inside is waited for by destroy": a caller throttled
 * (waiting for another thread's round, not reclaiming itself) is inside
 * too; destroy returns only after both returned.
 */
KTEST(destroy_waits_for_a_throttled_caller_too)
{
	struct fx f;
	struct kt_charger a, b;
	struct kt_destroyer d;
	pthread_t ta, tb, td;

	fx_init(&f, 1, 92 * MiB);
	f.cfg.direct_max = 1;
	sh.block = 1;
	struct ksync_pressure *p = fx_create(&f);
	a = (struct kt_charger){ p, 8192, 0, 0 };
	b = a;
	KASSERT(pthread_create(&ta, NULL, kt_charge_thread, &a) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&sh.in_scan, __ATOMIC_ACQUIRE) == 1);
	KASSERT(pthread_create(&tb, NULL, kt_charge_thread, &b) == 0);
	KT_POLL_UNTIL(kt_pressure_stats(p).direct_throttled == 1);
	d = (struct kt_destroyer){ p, -1, 0 };
	KASSERT(pthread_create(&td, NULL, kt_destroy_thread, &d) == 0);
	pthread_mutex_lock(&p->lock);
	while (!p->direct.dying) {
		pthread_mutex_unlock(&p->lock);
		kt_sleep_ms(1);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	KCHECK(!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE));
	__atomic_store_n(&sh.release, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_join(td, NULL);
	KCHECK_EQ(a.ret, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(b.ret, KSYNC_PRESSURE_CHARGE_THROTTLED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(d.ret, 0);
	fx_done(&f);
}

/*
 * Misuse is reported, never a hang: a shrinker that destroys the monitor
 * from inside that monitor's direct round is the same misuse as destroy
 * from the monitor's own callback (-EDEADLK, reported at the caller's
 * line), since destroy waits for the round it is called from.
 */
KTEST(destroy_from_inside_a_direct_round_is_refused)
{
	struct fx f;

	fx_init(&f, 1, 92 * MiB);
	struct ksync_pressure *p = fx_create(&f);
	ksync_warn_hook = kt_record_report;
	reports = 0;
	__atomic_store_n(&sh.destroy_it, p, __ATOMIC_RELEASE);
	KCHECK_EQ(ksync_pressure_charge(p, 8192), KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(__atomic_load_n(&sh.destroy_ret, __ATOMIC_ACQUIRE), -EDEADLK);
	KCHECK_EQ(reports, 1);
	KCHECK(report_file && strstr(report_file, "pressure_direct_review_test.c") != NULL);
	ksync_warn_hook = NULL;
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * "After fork() the child's monitor counts from its next sample" and "the
 * child's monitor has no thread in a direct round": a fork while another
 * thread holds the only direct slot (direct_max 1) leaves the child free to
 * reclaim itself, not waiting for a round that will never end there.
 */
KTEST(a_child_forked_while_another_thread_reclaims_reclaims_itself)
{
	struct fx f;
	struct kt_charger a;
	pthread_t ta;
	pid_t pid;
	int status;

	fx_init(&f, 1, 92 * MiB);
	f.cfg.direct_max = 1;
	sh.block = 1;
	struct ksync_pressure *p = fx_create(&f);
	a = (struct kt_charger){ p, 8192, 0, 0 };
	KASSERT(pthread_create(&ta, NULL, kt_charge_thread, &a) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&sh.in_scan, __ATOMIC_ACQUIRE) == 1);
	pid = fork();
	KASSERT(pid >= 0);
	if (pid == 0) {
		alarm(30); /* a hang guard: a child stuck waiting dies of SIGALRM */
		__atomic_store_n(&sh.block, 0, __ATOMIC_RELEASE);
		int r = ksync_pressure_charge(p, 8192);
		int ok = r == (KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
		ok = ok && ksync_pressure_destroy(p) == 0;
		_exit(ok ? 0 : 1);
	}
	KASSERT(waitpid(pid, &status, 0) == pid);
	KCHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	__atomic_store_n(&sh.release, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	KCHECK_EQ(a.ret, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/*
 * fork() from inside a direct round (a shrinker that runs a helper
 * program): the child carries on with the round the forking thread was
 * in; when it ends, the child's monitor reclaims again and can be
 * destroyed (its count of threads inside does not go below zero).
 */
KTEST(a_child_forked_inside_a_direct_round_finishes_it_and_destroys_its_monitor)
{
	struct fx f;
	int status;

	fx_init(&f, 1, 92 * MiB);
	struct ksync_pressure *p = fx_create(&f);
	__atomic_store_n(&sh.fork_in_scan, 1, __ATOMIC_RELEASE);
	sh.child = -1;
	int r = ksync_pressure_charge(p, 8192);
	KCHECK_EQ(r, KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
	if (sh.child == 0) {
		alarm(30); /* a hang guard: a destroy that waits forever dies of SIGALRM */
		int ok = ksync_pressure_charge(p, 8192) == (KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER);
		ok = ok && ksync_pressure_destroy(p) == 0;
		_exit(ok && r == (KSYNC_PRESSURE_CHARGE_RECLAIMED | KSYNC_PRESSURE_CHARGE_OVER) ? 0 : 1);
	}
	KASSERT(sh.child > 0);
	KASSERT(waitpid(sh.child, &status, 0) == sh.child);
	KCHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/* ------------------------------------------------------------------------ */
/* describe, figures, misuse                                                */

/* The describe line of docs/pressure.md, defaults and all. */
KTEST(describe_has_the_documented_direct_line)
{
	struct fx f;
	char line[512];

	fx_init(&f, 1, 10 * MiB);
	f.cfg.charge_batch = 0;
	struct ksync_pressure *p = fx_create(&f);
	direct_line(p, line, sizeof(line));
	KCHECK_EQ(strcmp(line, "direct: ok: ksync_pressure_charge() reclaims above 900 per mille of the bound of: "
			       "limit; batch 262144 bytes, at most 2 threads reclaiming at once"),
		  0);
	if (strcmp(line, "direct: ok: ksync_pressure_charge() reclaims above 900 per mille of the bound of: "
			 "limit; batch 262144 bytes, at most 2 threads reclaiming at once"))
		printf("# got: %s\n", line);
	/* The default batch: 256 KiB - 1 stays on the thread, 1 more publishes. */
	KCHECK_EQ(ksync_pressure_charge(p, 256 * 1024 - 1), 0);
	KCHECK_EQ(kt_pressure_stats(p).direct_checks, 0u);
	KCHECK_EQ(ksync_pressure_charge(p, 1), 0);
	KCHECK_EQ(kt_pressure_stats(p).direct_checks, 1u);
	KCHECK_EQ(kt_pressure_stats(p).direct_bytes, 256u * 1024);
	KCHECK_EQ(ksync_pressure_destroy(p), 0);
	fx_done(&f);
}

/* errors.md: a NULL monitor is -EINVAL, reported at the caller's file and line (the fast path included). */
KTEST(a_null_monitor_is_reported_at_the_callers_line)
{
	ksync_warn_hook = kt_record_report;
	reports = 0;
	int line = __LINE__ + 1;
	KCHECK_EQ(ksync_pressure_charge(NULL, 0), -EINVAL);
	KCHECK_EQ(reports, 1);
	KCHECK_EQ(report_line, line);
	KCHECK(report_file && strstr(report_file, "pressure_direct_review_test.c") != NULL);
	ksync_warn_hook = NULL;
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
