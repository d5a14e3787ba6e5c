/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reactor.c - the ksync variant's pressure reaction, on ksync::pressure.
 *
 * Theory of operation. A monitor (include/ksync/pressure.h) targets the
 * cache's memory group of the registry: every reclaim round is
 * ksync_shrink_slab() on that group's walk, at the level's priority and
 * lower while the pressure lasts, with the registry's nr_deferred carrying
 * what a call could not do. It runs in the serving thread's loop
 * (ksync_pressure_fd() + ksync_pressure_dispatch(), reactor_poll() every few
 * requests), or, with in_loop 0, on its own helper thread. In the loop, the
 * thread that grows the cache is the one that shrinks it, as the kernel
 * makes an allocating task reclaim: when other load keeps the process off
 * the CPU, the cache cannot outgrow a reaction that waits for a CPU of its
 * own, and the scans free their values without a second thread's TLB
 * shootdowns.
 *
 * Sources: the polled *limit* source (the process's memory cgroup usage
 * against its limit: the group the parent moved the child into) with the
 * event sources AUTO would add there (PSI triggers on the child's own
 * cgroup v2 group, cgroup v1 vmpressure); on the budget path, the *budget*
 * source alone (RSS against the limit on top of what the child had at
 * start). A source that cannot open is left out and described
 * (ksync_pressure_describe(), in the variant's "reaction" line).
 *
 * Direct reclaim (reactor_charge(), ksync_pressure_charge()): the serving
 * thread charges each new value before it maps it, the batch job each MiB
 * it is about to touch; past the watermark (the MEDIUM level's 900 per
 * mille of the limit) the charging thread runs a reclaim round itself, as
 * the kernel's allocating tasks do, so that a cache adding ~1 GB/s (the
 * scan workload) cannot outrun the polls between two of them.
 *
 * In practice the limit source does the work here: PSI and vmpressure
 * report stalls and reclaim, which anonymous memory without swap never
 * gets before the limit; they are there for what a real host adds (page
 * cache, swap).
 *
 * The configuration, and why not every default. The levels are the
 * defaults (800 / 900 / 950 per mille of the limit); the rest is not
 * (polls of 200 / 50 / 20 / 5 ms, rounds 1000 / 100 / 10 ms apart,
 * priorities 12..10 / 10..6 / 7..0): a cache that serves 50 k requests/s
 * with 15 % misses of 32 KiB grows by some 250 MB/s when nothing stops it,
 * and a batch job beside it adds 128 MB/s, so a poll of 200 ms at rest lets
 * it run from 80 % into the limit before the next look. Rounds that could
 * go down to priority 0 scan twice what is freeable when the limit stays
 * near (the library's polled rounds no longer dig across rounds since this
 * demo found it; with the default priorities and intervals and these polls
 * the ksync variant also lives, peak 127 of 128 MiB in one run at load 6).
 * Polls of 10 / 5 / 2 / 1 ms, rounds at least
 * 100 / 10 / 5 ms apart and priorities 12..10 / 10..7 / 8..4 (at priority
 * 4 a call scans an eighth of the cache) hold the usage at 90-95 % of the
 * limit, with or without the batch job, and the cache as large as it can
 * be. (Levels at 850 / 920 / 960 gave a slightly larger cache, and an OOM
 * kill when other load on the machine kept the monitor's thread off the
 * CPU for some milliseconds.) These are the config's own fields, not
 * special cases.
 */
#define _GNU_SOURCE
#include "reactor.h"
#include "pc.h"

#include <ksync/pressure.h>

#include <poll.h>
#include <string.h>

static const unsigned permille[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };
static const unsigned poll_ms[KSYNC_PRESSURE_NR_LEVELS] = { 10, 5, 2, 1 };
static const unsigned min_interval_ms[KSYNC_PRESSURE_NR_LEVELS] = { 0, 100, 10, 5 };
static const int first_prio[KSYNC_PRESSURE_NR_LEVELS] = { 0, 12, 10, 8 };
static const int floor_prio[KSYNC_PRESSURE_NR_LEVELS] = { 0, 10, 7, 4 };

static struct ksync_pressure *mon;
static int mon_fd = -1;   /* in-loop mode: the monitor's epoll fd */

uint64_t reactor_event_time(void)
{
	return ksync_pressure_event_time();
}

/* ------------------------------------------------------------------------ */
/* The monitor                                                              */

int reactor_start(const struct reactor_cfg *cfg, char *desc, size_t len)
{
	enum ksync_pressure_source polled = cfg->budget_bytes ? KSYNC_PRESSURE_SRC_BUDGET : KSYNC_PRESSURE_SRC_LIMIT;
	struct ksync_pressure_config pc = {
		.reg = cfg->reg,
		.group = cfg->group,
		.budget_bytes = cfg->budget_bytes,
	};
	int err;

	pc.sources = KSYNC_PRESSURE_SRC(polled);
	if (!cfg->budget_bytes)
		pc.sources |= KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_PSI_CGROUP) |
			      KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_VMPRESSURE);
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
		pc.limit_permille[l] = permille[l];
		pc.poll_ms[l] = poll_ms[l];
		pc.min_interval_ms[l] = min_interval_ms[l];
		pc.priority[l] = first_prio[l];
		pc.floor[l] = floor_prio[l];
	}
	err = ksync_pressure_create(&pc, &mon);
	if (err)
		return err;
	if (cfg->in_loop) {
		mon_fd = ksync_pressure_fd(mon);
		err = mon_fd < 0 ? mon_fd : 0;
	} else {
		err = ksync_pressure_start(mon);
	}
	if (err) {
		ksync_pressure_destroy(mon);
		mon = NULL;
		return err;
	}
	/* one line: the description's lines joined */
	size_t n = ksync_pressure_describe(mon, desc, len);

	for (size_t i = 0; i < n && i + 1 < len; i++)
		if (desc[i] == '\n')
			desc[i] = desc[i + 1] ? ';' : 0;
	return 0;
}

int reactor_charge(size_t bytes)
{
	int r;

	if (!mon)
		return 0;
	r = ksync_pressure_charge(mon, bytes);
	return r < 0 ? 0 : r;
}

void reactor_poll(void)
{
	struct pollfd pfd = { .fd = mon_fd, .events = POLLIN };

	if (mon_fd >= 0 && poll(&pfd, 1, 0) > 0)
		ksync_pressure_dispatch(mon);
}

void reactor_stop(struct reactor_stats *out)
{
	if (!mon)
		return;
	if (mon_fd < 0)
		ksync_pressure_stop(mon);
	mon_fd = -1;
	if (out)
		reactor_peek(out);
	ksync_pressure_destroy(mon);
	mon = NULL;
}

void reactor_peek(struct reactor_stats *out)
{
	struct ksync_pressure_stats st;

	memset(out, 0, sizeof(*out));
	if (!mon)
		return;
	ksync_pressure_get_stats(mon, &st);
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
		out->events += st.events[l];
		out->rounds += st.rounds[l];
	}
	for (int s = 0; s < KSYNC_PRESSURE_NR_SOURCES; s++) {
		out->scans += st.source_scans[s];
		out->freed += st.source_freed[s];
	}
	out->lib_p99_ns = st.latency_ns_p99;
	out->direct_rounds = st.direct_rounds;
	out->direct_throttled = st.direct_throttled;
	out->direct_freed = st.direct_freed;
}
