/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * storm.h - what the two registries of the reclaim-storm demo share: the
 * workload's mounts and their callbacks, the registry interface the
 * harness drives, and the latency histogram.
 */
#ifndef RECLAIM_STORM_H
#define RECLAIM_STORM_H

#include <ksync/atomic.h>
#include <ksync/shrinker.h>

#include <stdint.h>
#include <time.h>

/*
 * A "mount": a filesystem instance whose superblock shrinker is memcg aware,
 * with objects charged to one home group (as each tmpfs of the series'
 * script lived in its own memcg). The mount thread unmounts and mounts it
 * again and again; reclaim threads add objects (the "dd") and walk.
 */
struct storm_mount {
	/* Read-only during the run. */
	int idx;
	int home_group;
	void *home;                   /* the registry's group object of home_group */
	/* Written by reclaim threads (charges, scans). */
	ksync_atomic_long_t objects KSYNC_CACHELINE_ALIGNED; /* freeable objects in the home group */
	ksync_atomic_long_t root_objects; /* objects seen by the global walk */
	/* Written by the mount thread. */
	ksync_atomic_t id KSYNC_CACHELINE_ALIGNED; /* shrinker id while mounted, -1 otherwise */
	void *handle;                 /* the registry's shrinker; mount thread only */
};

/* Per-thread tallies, summed after the phase. */
struct storm_thread_stats {
	unsigned long walks;
	unsigned long scanned; /* objects the walks' scans took */
	unsigned long charged; /* objects the thread charged (the "dd"), group and root views */
	unsigned long failed_trylocks;
};

extern _Thread_local struct storm_thread_stats *storm_tls;

unsigned long storm_count_objects(struct ksync_shrinker *s, struct ksync_shrink_control *sc);
unsigned long storm_scan_objects(struct ksync_shrinker *s, struct ksync_shrink_control *sc);

/* What the harness needs from a registry. */
struct storm_registry_ops {
	const char *name;
	void *(*create)(int nr_nodes, int max_ids); /* max_ids: the legacy maps' fixed size */
	void (*destroy)(void *reg);
	void *(*group_create)(void *reg);
	void (*group_destroy)(void *reg, void *group);
	int (*mount)(void *reg, struct storm_mount *m);   /* register; sets m->handle, m->id */
	void (*umount)(void *reg, struct storm_mount *m); /* unregister + free */
	void (*set_bit)(void *reg, void *group, int nid, int id);
	/* One walk; returns objects freed. A legacy walk that fails its trylock counts it. */
	unsigned long (*shrink)(void *reg, int nid, void *group, int priority);
};

extern const struct storm_registry_ops storm_legacy_ops;
extern const struct storm_registry_ops storm_lockless_ops;

/* Latency histogram: 32 sub-buckets per power of two of nanoseconds. */
#define HIST_SUB 32
#define HIST_POW 40
struct storm_hist {
	uint64_t count;
	uint64_t max_ns;
	uint64_t b[HIST_POW * HIST_SUB];
};

void hist_add(struct storm_hist *h, uint64_t ns);
double hist_pct_us(const struct storm_hist *h, double pct);
double hist_max_us(const struct storm_hist *h);

static inline uint64_t storm_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
