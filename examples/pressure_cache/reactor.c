/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reactor.c - the ksync variant's pressure reaction, on ksync::pressure.
 *
 * Theory of operation. A monitor (include/ksync/pressure.h) targets the
 * cache's memory group of the registry: every reclaim round is
 * ksync_shrink_slab() on that group's walk, at the level's priority and
 * lower while the pressure lasts, with the registry's nr_deferred carrying
 * what a call could not do; the monitor runs on its own helper thread.
 *
 * Sources: the polled *limit* source (the process's memory cgroup usage
 * against its limit), or, on the budget path, the *budget* source (RSS
 * against the limit on top of what the child had at start); plus, as
 * root in a group of its own, whatever AUTO's event sources find (PSI of
 * the child's own cgroup v2 group, v1 vmpressure). If the polled source
 * cannot open (ksync_pressure_describe() says why; the sources are the
 * half of lib/pressure that lands last), a stand-in poller of this file
 * reads the same figure and hands each level to the monitor through the
 * test source (ksync_pressure_inject()): the reaction, its priorities,
 * rate limits, hysteresis and figures stay the library's.
 *
 * The configuration, and why not the defaults (levels at 800 / 900 / 950
 * per mille, polls of 200 / 50 / 20 / 5 ms, rounds 1000 / 100 / 10 ms
 * apart, priorities 12..10 / 10..6 / 7..0): a cache that serves 50 k
 * requests/s with 15 % misses of 32 KiB grows by some 250 MB/s when nothing
 * stops it, and a batch job beside it adds 128 MB/s; rounds that go down
 * to priority 0 (a level that stays up starts each round one lower, so
 * within a few rounds it scans twice what is freeable) throw the whole
 * cache away each time. Levels at 850 / 920 / 960 per mille, polls of
 * 10 / 5 / 2 / 1 ms, rounds at least 100 / 10 / 5 ms apart and priorities
 * 12..10 / 10..7 / 8..4 (at priority 4 a call scans an eighth of the
 * cache) hold the usage at 92-96 % of the limit, with or without the
 * batch job, and the cache as large as it can be. These are the config's
 * own fields, not special cases.
 */
#define _GNU_SOURCE
#include "reactor.h"
#include "pc.h"

#include <ksync/pressure.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const unsigned permille[KSYNC_PRESSURE_NR_LEVELS] = { 0, 850, 920, 960 };
static const unsigned poll_ms[KSYNC_PRESSURE_NR_LEVELS] = { 10, 5, 2, 1 };
static const unsigned min_interval_ms[KSYNC_PRESSURE_NR_LEVELS] = { 0, 100, 10, 5 };
static const int first_prio[KSYNC_PRESSURE_NR_LEVELS] = { 0, 12, 10, 8 };
static const int floor_prio[KSYNC_PRESSURE_NR_LEVELS] = { 0, 10, 7, 4 };

static struct {
	struct ksync_pressure *mon;
	/* the stand-in poller, when the polled source did not open */
	bool standin;
	int usage_fd;
	uint64_t limit, budget;
	long page;
	pthread_t thread;
	int stop;
} R = { .usage_fd = -1 };

uint64_t reactor_event_time(void)
{
	return ksync_pressure_event_time();
}

/* ------------------------------------------------------------------------ */
/* The stand-in poller                                                      */

static uint64_t read_u64_fd(int fd)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

static uint64_t usage_now(void)
{
	if (R.budget) {
		char buf[128];
		ssize_t n = pread(R.usage_fd, buf, sizeof(buf) - 1, 0);
		unsigned long size, res;

		if (n <= 0)
			return 0;
		buf[n] = 0;
		if (sscanf(buf, "%lu %lu", &size, &res) != 2)
			return 0;
		return (uint64_t)res * (uint64_t)R.page;
	}
	return read_u64_fd(R.usage_fd);
}

/* The memory cgroup of this process: its usage and limit files. */
static int find_cgroup(char *usage, char *limit, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[1024], v1[512] = "", v2[512] = "";
	bool have_v2 = false;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = 0;
		*c2 = 0;
		if (strcmp(c1 + 1, "memory") == 0 || strstr(c1 + 1, ",memory")) {
			snprintf(v1, sizeof(v1), "%s", c2 + 1);
		} else if (c1[1] == 0 && strncmp(line, "0", 1) == 0) {
			snprintf(v2, sizeof(v2), "%s", c2 + 1);
			have_v2 = true;
		}
	}
	fclose(f);
	if (v1[0]) {
		snprintf(usage, len, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1);
		snprintf(limit, len, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", v1);
		return 0;
	}
	if (have_v2) {
		snprintf(usage, len, "/sys/fs/cgroup%s/memory.current", v2);
		snprintf(limit, len, "/sys/fs/cgroup%s/memory.max", v2);
		return access(usage, R_OK) == 0 ? 0 : -ENOENT;
	}
	return -ENOENT;
}

static int level_of(uint64_t usage)
{
	uint64_t pm = R.limit ? usage * 1000 / R.limit : 0;
	int l = KSYNC_PRESSURE_NONE;

	for (int i = KSYNC_PRESSURE_LOW; i < KSYNC_PRESSURE_NR_LEVELS; i++)
		if (pm >= permille[i])
			l = i;
	return l;
}

/* The polled source's work, done here: a level per poll, at the level's rate. */
static void *standin_poller(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&R.stop, __ATOMIC_ACQUIRE)) {
		int l = level_of(usage_now());

		if (l > KSYNC_PRESSURE_NONE)
			ksync_pressure_inject(R.mon, (enum ksync_pressure_level)l);
		pc_sleep_ns((uint64_t)poll_ms[l] * 1000000);
	}
	return NULL;
}

static int standin_start(const struct reactor_cfg *cfg, char *desc, size_t len)
{
	char usage[600], limit[600];
	sigset_t all, old;
	int err;

	R.page = sysconf(_SC_PAGESIZE);
	R.budget = cfg->budget_bytes;
	if (R.budget) {
		R.usage_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
		R.limit = R.budget;
		snprintf(usage, sizeof(usage), "RSS (/proc/self/statm)");
	} else {
		err = find_cgroup(usage, limit, sizeof(usage));
		if (err)
			return err;
		R.usage_fd = open(usage, O_RDONLY | O_CLOEXEC);
		int lfd = open(limit, O_RDONLY | O_CLOEXEC);

		R.limit = lfd >= 0 ? read_u64_fd(lfd) : 0;
		if (lfd >= 0)
			close(lfd);
	}
	if (R.usage_fd < 0)
		return -errno;
	snprintf(desc, len, "stand-in poller: %s against %llu bytes, levels injected through the test source; ",
		 usage, (unsigned long long)R.limit);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&R.thread, NULL, standin_poller, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(R.usage_fd);
		R.usage_fd = -1;
		return -err;
	}
	pthread_setname_np(R.thread, "pc-standin");
	R.standin = true;
	return 0;
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
	size_t off = 0;
	int err;

	/*
	 * The polled source, the event sources AUTO would pick as root in a
	 * group of its own (PSI of that group, v1 vmpressure), and the test
	 * source for the stand-in.
	 */
	pc.sources = KSYNC_PRESSURE_SRC(polled) | KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST);
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
	err = ksync_pressure_create(&pc, &R.mon);
	if (err)
		return err;
	if (!(ksync_pressure_sources(R.mon) & KSYNC_PRESSURE_SRC(polled))) {
		err = standin_start(cfg, desc, len);
		if (err) {
			ksync_pressure_destroy(R.mon);
			R.mon = NULL;
			return err;
		}
		off = strlen(desc);
	}
	err = ksync_pressure_start(R.mon);
	if (err) {
		reactor_stop(NULL);
		return err;
	}
	if (off < len) {
		size_t n = ksync_pressure_describe(R.mon, desc + off, len - off);

		/* one line: the description's lines joined */
		for (size_t i = off; i < off + n && i < len && desc[i]; i++)
			if (desc[i] == '\n')
				desc[i] = (i + 1 < len && desc[i + 1]) ? ';' : 0;
	}
	return 0;
}

void reactor_stop(struct reactor_stats *out)
{
	if (R.standin) {
		__atomic_store_n(&R.stop, 1, __ATOMIC_RELEASE);
		pthread_join(R.thread, NULL);
		R.standin = false;
	}
	if (R.usage_fd >= 0)
		close(R.usage_fd);
	R.usage_fd = -1;
	if (!R.mon)
		return;
	ksync_pressure_stop(R.mon);
	if (out)
		reactor_peek(out);
	ksync_pressure_destroy(R.mon);
	R.mon = NULL;
}

void reactor_peek(struct reactor_stats *out)
{
	struct ksync_pressure_stats st;

	memset(out, 0, sizeof(*out));
	if (!R.mon)
		return;
	ksync_pressure_get_stats(R.mon, &st);
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
		out->events += st.events[l];
		out->rounds += st.rounds[l];
	}
	for (int s = 0; s < KSYNC_PRESSURE_NR_SOURCES; s++) {
		out->scans += st.source_scans[s];
		out->freed += st.source_freed[s];
	}
	out->lib_p99_ns = st.latency_ns_p99;
}
