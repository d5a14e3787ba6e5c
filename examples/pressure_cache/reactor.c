/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reactor.c - the ksync variant's pressure reaction: a stand-in poller.
 *
 * Theory of operation. ksync::pressure (include/ksync/pressure.h) is the
 * mechanism this demo exists to show; until it is on the branch, this file
 * does what the header says its polled *limit* and *budget* sources and its
 * reaction do, on a thread of its own, so that the demo runs today and the
 * switch is this one file:
 *
 *  - the figure: the process's memory cgroup usage against its limit (the
 *    cgroup named in /proc/self/cgroup: v1 memory.usage_in_bytes /
 *    memory.limit_in_bytes, v2 memory.current / memory.max), or its RSS
 *    (/proc/self/statm) against a budget;
 *  - levels at 850 / 920 / 960 per mille of the limit (LOW / MEDIUM /
 *    CRITICAL), polled every 10 / 5 / 2 / 1 ms (NONE..CRITICAL): the poll
 *    rate rises with the pressure;
 *  - a level above NONE runs a reclaim round: ksync_shrink_slab() on the
 *    cache's memory group, starting at the level's priority (12 / 10 / 8)
 *    and, while the figure stays at the round's level, one priority lower
 *    per step down to the level's floor (10 / 7 / 4), as the kernel's
 *    reclaim loop does; the registry's nr_deferred carries what a call
 *    could not do. A level that is still up at its next round starts one
 *    priority lower (down to its floor); rounds of one level are at least
 *    100 / 10 / 5 ms apart; the level falls to NONE after 2 s without
 *    pressure (hysteresis).
 *
 * Why these figures and not the header's defaults (levels at 800 / 900 /
 * 950, polls of 1000 / 100 / 20 / 5 ms, rounds 1000 / 100 / 10 ms apart,
 * priorities 12..10 / 10..6 / 7..0):
 * a cache that serves 100 k requests/s with 15 % misses of 32 KiB grows by
 * some 500 MB/s when nothing stops it, the whole limit in a quarter of a
 * second. A poll of 1 s at NONE lets it run into the limit before the first
 * look, and rounds that go down to priority 0 (scan twice what is
 * freeable; a level that stays up starts each round one lower, so it gets
 * there within a few rounds) throw the whole cache away each time. Finer,
 * more frequent steps (at priority 4 a call scans an eighth of the cache)
 * keep it just under the pressure line: usage holds at 92-96 % of the limit
 * with or without the batch job, and the cache is as large as it can be. They are the config's figures
 * (&struct ksync_pressure_config @poll_ms, @min_interval_ms, @priority,
 * @floor), not special cases.
 *
 * The event time of a round (reactor_event_time(), a thread-local) is when
 * the poll read the figure that started it, as ksync_pressure_event_time()
 * is for the library.
 */
#define _GNU_SOURCE
#include "reactor.h"
#include "pc.h"

#include <ksync/shrinker.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NONE, LOW, MEDIUM, CRITICAL, NR_LEVELS };

static const unsigned permille[NR_LEVELS] = { 0, 850, 920, 960 };
static const unsigned poll_ms[NR_LEVELS] = { 10, 5, 2, 1 };
static const unsigned min_interval_ms[NR_LEVELS] = { 0, 100, 10, 5 };
static const int first_prio[NR_LEVELS] = { 0, 12, 10, 8 };
static const int floor_prio[NR_LEVELS] = { 0, 10, 7, 4 };
#define HOLD_MS 2000

static struct {
	struct reactor_cfg cfg;
	int usage_fd;        /* cgroup usage, or /proc/self/statm */
	uint64_t limit;      /* bytes */
	long page;
	pthread_t thread;
	bool running;
	int stop;
	struct reactor_stats st;
} R = { .usage_fd = -1 };

static _Thread_local uint64_t event_ns;

uint64_t reactor_event_time(void)
{
	return event_ns;
}

static uint64_t read_u64_fd(int fd)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

static uint64_t read_u64_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t v;

	if (fd < 0)
		return 0;
	v = read_u64_fd(fd);
	close(fd);
	return v;
}

static uint64_t usage_now(void)
{
	if (R.cfg.budget_bytes) {
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

/* The memory cgroup of this process: fills usage and limit paths. */
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
		if (strcmp(c1 + 1, "memory") == 0 || strstr(c1 + 1, ",memory"))
			snprintf(v1, sizeof(v1), "%s", c2 + 1);
		else if (strncmp(line, "0", 1) == 0 && c1[1] == 0) {
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
	int l = NONE;

	for (int i = LOW; i < NR_LEVELS; i++)
		if (pm >= permille[i])
			l = i;
	return l;
}

static void *poller(void *arg)
{
	uint64_t last_round[NR_LEVELS] = { 0 }, last_seen[NR_LEVELS] = { 0 };
	int next_prio[NR_LEVELS];
	int level = NONE;
	uint64_t level_since = 0;

	(void)arg;
	for (int i = 0; i < NR_LEVELS; i++)
		next_prio[i] = first_prio[i];
	while (!__atomic_load_n(&R.stop, __ATOMIC_ACQUIRE)) {
		uint64_t t = pc_now_ns();
		int seen = level_of(usage_now());

		if (seen > NONE) {
			R.st.events++;
			/* still up since its last round: start lower this time */
			if (last_seen[seen] && t - last_seen[seen] < (uint64_t)HOLD_MS * 1000000)
				next_prio[seen] = next_prio[seen] > floor_prio[seen] ? next_prio[seen] - 1
										     : floor_prio[seen];
			else
				next_prio[seen] = first_prio[seen];
			last_seen[seen] = t;
			if (seen >= level) {
				level = seen;
				level_since = t;
			}
			if (t - last_round[seen] >= (uint64_t)min_interval_ms[seen] * 1000000) {
				last_round[seen] = t;
				R.st.rounds++;
				event_ns = t;
				for (int prio = next_prio[seen];; prio--) {
					R.st.freed += ksync_shrink_slab(R.cfg.reg, 0, R.cfg.group, prio);
					R.st.scans++;
					if (level_of(usage_now()) < seen || prio <= floor_prio[seen])
						break;
				}
				event_ns = 0;
			}
		} else if (level > NONE && t - level_since > (uint64_t)HOLD_MS * 1000000) {
			level = NONE;
		}
		pc_sleep_ns((uint64_t)poll_ms[seen > level ? seen : level] * 1000000);
	}
	return NULL;
}

int reactor_start(const struct reactor_cfg *cfg, char *desc, size_t len)
{
	char usage[600], limit[600];
	sigset_t all, old;
	int err;

	R.cfg = *cfg;
	R.page = sysconf(_SC_PAGESIZE);
	memset(&R.st, 0, sizeof(R.st));
	R.stop = 0;
	if (cfg->budget_bytes) {
		R.usage_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
		R.limit = cfg->budget_bytes;
		snprintf(desc, len, "poller (stand-in for ksync::pressure): budget: RSS against %llu bytes",
			 (unsigned long long)R.limit);
	} else {
		err = find_cgroup(usage, limit, sizeof(usage));
		if (err)
			return err;
		R.usage_fd = open(usage, O_RDONLY | O_CLOEXEC);
		R.limit = read_u64_path(limit);
		snprintf(desc, len, "poller (stand-in for ksync::pressure): limit: %s against %llu bytes",
			 usage, (unsigned long long)R.limit);
	}
	if (R.usage_fd < 0)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&R.thread, NULL, poller, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close(R.usage_fd);
		R.usage_fd = -1;
		return -err;
	}
	pthread_setname_np(R.thread, "pc-poller");
	R.running = true;
	return 0;
}

void reactor_stop(struct reactor_stats *out)
{
	if (R.running) {
		__atomic_store_n(&R.stop, 1, __ATOMIC_RELEASE);
		pthread_join(R.thread, NULL);
		R.running = false;
	}
	if (R.usage_fd >= 0)
		close(R.usage_fd);
	R.usage_fd = -1;
	if (out)
		*out = R.st;
}
