/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pressure_real_test.c - ksync::pressure against the kernel's real interfaces.
 *
 * As root, the test makes a memory cgroup of its own (v1 memory.limit_in_bytes
 * where the memory controller is on v1, else v2 memory.max), and a v2 group
 * for the child's own PSI file where a v2 tree exists; it forks a child into
 * them. The child runs a monitor with AUTO sources on a registry of its own,
 * whose one shrinker owns a "cache" of 64 KiB mmap'd chunks (munmap on scan:
 * the memory really goes back). The child then allocates chunk after chunk,
 * three times the limit in all, a chunk every 2 ms: without the shrinker
 * the group would hit its limit and, with no swap, the kernel would OOM-kill
 * the child. The test passes when the child was not killed, at least one
 * event came from a source of the kernel (not the test source) and the
 * shrinker was called by the monitor (ksync_pressure_event_time() non-zero
 * inside scan_objects). What fired is printed, with the monitor's
 * description.
 *
 * Skips (exit 77, saying why): not root, no memory controller to make a
 * group in, a sanitizer build (ASan's shadow memory counts against the
 * limit), or a group the kernel would not let us create.
 */
#define _GNU_SOURCE
#include <ksync/pressure.h>
#include <ksync/shrinker.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memcg.h"

#define SKIP 77
#define CHUNK (64u << 10)
#define LIMIT (64ull << 20)


static char v2_dir[1024], mem_dir[1024];
static int mem_v2; /* mem_dir is a v2 group (memory.max) */

/* ---- the child: a cache of chunks, a shrinker, a monitor ---- */

static struct kt_chunks cache = KT_CHUNKS_INIT;
static unsigned long scans_by_monitor, freed_total;

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long freed = 0;

	(void)s;
	pthread_mutex_lock(&cache.lock);
	if (ksync_pressure_event_time())
		scans_by_monitor++;
	while (freed < sc->nr_to_scan && cache.nr) {
		munmap(cache.v[--cache.nr], CHUNK);
		freed++;
	}
	freed_total += freed;
	pthread_mutex_unlock(&cache.lock);
	return freed;
}

static int child_main(void)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_pressure_config cfg = { 0 };
	struct ksync_pressure_stats st;
	struct ksync_pressure *p = NULL;
	struct ksync_shrinker *s;
	char desc[2048];
	uint64_t kernel_events = 0;
	size_t total = 0;

	if (!(s = kt_chunks_shrinker(reg, "real-cache", &cache, cache_scan)))
		return 2;
	cfg.reg = reg;
	if (ksync_pressure_create(&cfg, &p))
		return 2;
	ksync_pressure_describe(p, desc, sizeof(desc));
	printf("child: monitor sources:\n%s", desc);
	fflush(stdout);
	if (ksync_pressure_start(p))
		return 2;

	/* Three times the limit, a chunk every 2 ms (32 MiB/s). */
	while (total < 3 * LIMIT) {
		void *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct timespec ms = { 0, 2000000 };

		if (c == MAP_FAILED)
			return 3;
		memset(c, 0x5a, CHUNK);
		if (kt_chunks_add(&cache, c))
			return 3;
		total += CHUNK;
		nanosleep(&ms, NULL);
	}
	ksync_pressure_stop(p);
	ksync_pressure_get_stats(p, &st);
	for (int i = 0; i < KSYNC_PRESSURE_NR_SOURCES; i++) {
		if (st.source_events[i])
			printf("child: %s: %llu events, %llu scans, %llu freed\n",
			       ksync_pressure_source_name(i), (unsigned long long)st.source_events[i],
			       (unsigned long long)st.source_scans[i], (unsigned long long)st.source_freed[i]);
		if (i != KSYNC_PRESSURE_SRC_TEST)
			kernel_events += st.source_events[i];
	}
	printf("child: allocated %zu MiB in all, %lu chunks freed, %lu scans by the monitor, "
	       "latency p99 %.3f ms\n",
	       total >> 20, freed_total, scans_by_monitor, st.latency_ns_p99 / 1e6);
	ksync_pressure_destroy(p);
	if (!kernel_events) {
		printf("child: FAIL: no event from a source of the kernel\n");
		return 1;
	}
	if (!scans_by_monitor) {
		printf("child: FAIL: the monitor never called the shrinker\n");
		return 1;
	}
	return 0;
}

static void remove_groups(void)
{
	if (mem_dir[0])
		rmdir(mem_dir);
	if (v2_dir[0] && strcmp(v2_dir, mem_dir))
		rmdir(v2_dir);
}

int main(void)
{
	char v1[512], v2[512], pid_text[32], lim[32];
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	status = kt_cg_can_run();
	if (status)
		return status;
	kt_cg_find_mounts(v1, v2, sizeof(v1));
	if (v1[0]) {
		snprintf(mem_dir, sizeof(mem_dir), "%s/ksync-pressure-real-%d", v1, (int)getpid());
		snprintf(lim, sizeof(lim), "%llu", LIMIT);
		if (mkdir(mem_dir, 0755) || kt_cg_write(mem_dir, "memory.limit_in_bytes", lim)) {
			printf("SKIP: cannot make a v1 memory group at %s: %s\n", mem_dir, strerror(errno));
			remove_groups();
			return SKIP;
		}
	}
	if (v2[0]) {
		snprintf(v2_dir, sizeof(v2_dir), "%s/ksync-pressure-real-%d", v2, (int)getpid());
		if (mkdir(v2_dir, 0755)) {
			v2_dir[0] = 0;
		} else if (!v1[0]) {
			snprintf(lim, sizeof(lim), "%llu", LIMIT);
			if (kt_cg_write(v2_dir, "memory.max", lim)) {
				printf("SKIP: no memory controller in the v2 group %s\n", v2_dir);
				remove_groups();
				return SKIP;
			}
			snprintf(mem_dir, sizeof(mem_dir), "%s", v2_dir);
			mem_v2 = 1;
		}
	}
	if (!mem_dir[0]) {
		printf("SKIP: no memory controller mounted (v1 or v2)\n");
		remove_groups();
		return SKIP;
	}
	printf("memory group %s (%s), limit %llu MiB; PSI group %s\n", mem_dir, mem_v2 ? "v2" : "v1",
	       LIMIT >> 20, v2_dir[0] ? v2_dir : "(none)");

	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		snprintf(pid_text, sizeof(pid_text), "%d", (int)getpid());
		if (kt_cg_write(mem_dir, "cgroup.procs", pid_text) ||
		    (v2_dir[0] && !mem_v2 && kt_cg_write(v2_dir, "cgroup.procs", pid_text)))
			_exit(4);
		_exit(child_main());
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	long long failcnt = mem_v2 ? kt_cg_read_num(mem_dir, "memory.events", "max")
				   : kt_cg_read_num(mem_dir, "memory.failcnt", NULL);
	long long peak = mem_v2 ? kt_cg_read_num(mem_dir, "memory.peak", NULL)
				: kt_cg_read_num(mem_dir, "memory.max_usage_in_bytes", NULL);
	printf("group: peak usage %lld KiB, limit hits %lld\n", peak >> 10, failcnt);
	remove_groups();
	return kt_cg_child_verdict(status, "the child", " (the OOM killer: reclaim came too late)",
				   "could not move the child into the group");
}
