/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pressure_direct_real_test.c - direct reclaim (ksync_pressure_charge())
 * against a real memory cgroup limit.
 *
 * As root, the test makes a memory cgroup of its own with a 64 MiB limit
 * (v1 memory.limit_in_bytes where the memory controller is on v1, else v2
 * memory.max) and forks children into it. Each child keeps a "cache" of
 * 32 KiB mmap'd chunks behind a shrinker (munmap on scan: the memory really
 * goes back) and adds chunks as fast as it can, four times the limit in
 * all: about the pressure demo's 1 GB/s, faster than any polled source.
 * The monitor has the limit source only and no helper thread: nothing but
 * the allocating thread can reclaim in time.
 *
 *  - the control child never calls ksync_pressure_charge(); with no swap
 *    the kernel OOM-kills it. Its fate is printed, not asserted (swap, or a
 *    kernel that reclaims the cache's pages some other way, would save it),
 *    so that the run shows what direct reclaim is for;
 *  - the direct child calls ksync_pressure_charge() before each chunk. The
 *    test passes when it was not killed and ran direct rounds.
 *
 * Skips (exit 77, saying why): not root, no memory controller to make a
 * group in, a sanitizer build (its shadow memory counts against the limit),
 * or a group the kernel would not let us create or join.
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
#include <unistd.h>

#include "memcg.h"

#define SKIP 77
#define CHUNK (32u << 10)
#define LIMIT (64ull << 20)

static char mem_dir[1024];
static int mem_v2;

/* ---- a child: a cache of chunks, a shrinker, a monitor without a thread ---- */

static struct kt_chunks cache = KT_CHUNKS_INIT;
static unsigned long freed_total;

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long freed = 0;

	(void)s;
	pthread_mutex_lock(&cache.lock);
	/* Oldest first: the front of the array. */
	size_t n = sc->nr_to_scan < cache.nr ? sc->nr_to_scan : cache.nr;
	for (size_t i = 0; i < n; i++)
		munmap(cache.v[i], CHUNK);
	memmove(cache.v, cache.v + n, (cache.nr - n) * sizeof(*cache.v));
	cache.nr -= n;
	freed = n;
	freed_total += freed;
	pthread_mutex_unlock(&cache.lock);
	return freed;
}

static int child_main(int direct)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_pressure_config cfg = { 0 };
	struct ksync_pressure_stats st;
	struct ksync_pressure *p = NULL;
	struct ksync_shrinker *s;
	char desc[2048];
	size_t total = 0;

	if (!(s = kt_chunks_shrinker(reg, "direct-real-cache", &cache, cache_scan)))
		return 2;
	cfg.reg = reg;
	cfg.sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_LIMIT);
	if (ksync_pressure_create(&cfg, &p))
		return 2;
	if (!(ksync_pressure_sources(p) & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_LIMIT))) {
		ksync_pressure_describe(p, desc, sizeof(desc));
		printf("child: the limit source did not open:\n%s", desc);
		return 4;
	}
	if (direct) {
		ksync_pressure_describe(p, desc, sizeof(desc));
		printf("child: monitor:\n%s", desc);
	}
	while (total < 4 * LIMIT) {
		if (direct && ksync_pressure_charge(p, CHUNK) < 0)
			return 3;
		void *c = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return 3;
		memset(c, 0x5a, CHUNK);
		if (kt_chunks_add(&cache, c))
			return 3;
		total += CHUNK;
	}
	ksync_pressure_get_stats(p, &st);
	printf("child (%s): allocated %zu MiB, %lu chunks freed; direct: %llu reads, %llu rounds, "
	       "%llu throttled, stall p50 %.3f ms max %.3f ms\n",
	       direct ? "direct" : "control", total >> 20, freed_total, (unsigned long long)st.direct_reads,
	       (unsigned long long)st.direct_rounds, (unsigned long long)st.direct_throttled,
	       st.direct_ns_p50 / 1e6, st.direct_ns_max / 1e6);
	ksync_pressure_destroy(p);
	if (direct && !st.direct_rounds) {
		printf("child: FAIL: no direct round ran\n");
		return 1;
	}
	return 0;
}

/* Run a child in the group; its wait status, or -1 when it could not join it. */
static int run_child(int direct)
{
	char pid_text[32];
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		snprintf(pid_text, sizeof(pid_text), "%d", (int)getpid());
		if (kt_cg_write(mem_dir, "cgroup.procs", pid_text))
			_exit(4);
		_exit(child_main(direct));
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

int main(void)
{
	char v1[512], v2[512], lim[32];
	int status;

	setvbuf(stdout, NULL, _IOLBF, 0);
	status = kt_cg_can_run();
	if (status)
		return status;
	kt_cg_find_mounts(v1, v2, sizeof(v1));
	snprintf(lim, sizeof(lim), "%llu", LIMIT);
	if (v1[0]) {
		snprintf(mem_dir, sizeof(mem_dir), "%s/ksync-pressure-direct-%d", v1, (int)getpid());
		if (mkdir(mem_dir, 0755) || kt_cg_write(mem_dir, "memory.limit_in_bytes", lim)) {
			printf("SKIP: cannot make a v1 memory group at %s: %s\n", mem_dir, strerror(errno));
			rmdir(mem_dir);
			return SKIP;
		}
	} else if (v2[0]) {
		snprintf(mem_dir, sizeof(mem_dir), "%s/ksync-pressure-direct-%d", v2, (int)getpid());
		if (mkdir(mem_dir, 0755) || kt_cg_write(mem_dir, "memory.max", lim)) {
			printf("SKIP: cannot make a v2 memory group at %s: %s\n", mem_dir, strerror(errno));
			rmdir(mem_dir);
			return SKIP;
		}
		mem_v2 = 1;
	} else {
		printf("SKIP: no memory controller mounted (v1 or v2)\n");
		return SKIP;
	}
	printf("memory group %s (%s), limit %llu MiB, %u KiB chunks, 4x the limit, no pause\n", mem_dir,
	       mem_v2 ? "v2" : "v1", LIMIT >> 20, CHUNK >> 10);

	status = run_child(0);
	if (status != -1 && WIFSIGNALED(status))
		printf("control (no ksync_pressure_charge()): killed by signal %d%s\n", WTERMSIG(status),
		       WTERMSIG(status) == SIGKILL ? " (the OOM killer)" : "");
	else if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		printf("control (no ksync_pressure_charge()): survived (swap, or the kernel reclaimed "
		       "otherwise): this machine does not show what direct reclaim is for\n");

	status = run_child(1);
	rmdir(mem_dir);
	if (status == -1)
		return 1;
	return kt_cg_child_verdict(status, "the direct child", " (the OOM killer: direct reclaim did not keep up)",
				   "could not move the child into the group, or its limit source did not open");
}
