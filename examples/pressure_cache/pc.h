/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pc.h - what the parts of pressure_cache share.
 *
 * The program is a parent (main.c: options, the runs, the JSON and the
 * table) that runs each variant in a forked child (child.c: the cache, the
 * request stream, the batch job) inside memory cgroups it makes and removes
 * (cgroup.c). The ksync variant's reaction to pressure lives behind one
 * small interface (reactor.c), so that how pressure is turned into shrinker
 * calls can change without touching the rest.
 *
 * Parent and child talk through one MAP_SHARED page block (struct pc_shared)
 * that the parent maps and touches before fork(): its pages are charged to
 * the parent's cgroup, not the child's, and what the child wrote there
 * survives the child being OOM-killed (the ops it served until then, its
 * cache and batch sizes).
 */
#ifndef PC_H
#define PC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIB (1024UL * 1024UL)
#define KIB 1024UL

/* Sanitizer builds: ASan's shadow memory makes a cgroup limit meaningless. */
#if defined(__SANITIZE_ADDRESS__)
#define PC_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define PC_SANITIZER 1
#endif
#endif
#ifndef PC_SANITIZER
#define PC_SANITIZER 0
#endif

enum pc_variant {
	PC_FIXED_HIGH,
	PC_FIXED_LOW,
	PC_TRIM,
	PC_KSYNC,
	PC_NR_VARIANTS,
};

extern const char *const pc_variant_name[PC_NR_VARIANTS];

/* What a child is told to do (copied into it by fork()). */
struct pc_params {
	enum pc_variant variant;
	double seconds;            /* serving time */
	uint64_t limit_bytes;      /* the cgroup limit (or the budget) */
	uint64_t cap_bytes;        /* the cache's cap; 0: none (ksync) */
	uint64_t want_bytes;       /* the working set: keys * value size */
	size_t value_bytes;        /* one value (its own mmap) */
	uint32_t nr_keys;
	double zipf_s;
	double fetch_us;           /* a miss's fetch costs at least this much CPU */
	double request_us;         /* every request costs at least this much CPU */
	uint64_t seed;
	uint64_t batch_bytes;
	double batch_first_s;      /* first batch after this long */
	double batch_period_s;     /* one batch every this long */
	double batch_grow_s;       /* touching the block takes this long */
	double batch_hold_s;       /* then it is held this long */
	bool budget;               /* no cgroup: the ksync variant against a budget */
	bool reactor_in_loop;      /* ksync: the monitor in the serving loop, not a thread */
	char psi_path[600];        /* the child's own memory.pressure (trim; "" none) */
	
};

/* Event -> first scan_objects latencies kept (the first ones, exactly). */
#define PC_LAT_MAX 8192

/* Written by the child, read by the parent (relaxed atomics: figures only). */
struct pc_shared {
	uint64_t ops, hits;
	uint64_t cache_bytes, batch_bytes;
	uint64_t start_ns, end_ns;          /* serving window (CLOCK_MONOTONIC) */
	uint64_t baseline_rss;              /* budget path: RSS before serving */
	uint64_t pressure_events, scans, objects_freed;  /* the reaction's figures */
	uint64_t lib_p99_ns;                /* the monitor's own latency p99 (power of two) */
	uint64_t scan_calls, scan_freed;    /* the cache's own: scan_objects calls, values freed */
	uint64_t lat_samples;               /* events whose first scan was measured */
	uint64_t lat_ns[PC_LAT_MAX];        /* event -> first scan_objects */
	uint64_t trims;                     /* trim: malloc_trim(0) calls */
	uint64_t evictions;                 /* cap evictions (fixed variants) */
	int done;                           /* the child finished cleanly */
	char desc[1024];                     /* how the child watched pressure */
};

/* child.c */
int pc_child_run(const struct pc_params *p, struct pc_shared *sh);

/* Time. */
uint64_t pc_now_ns(void);
void pc_sleep_ns(uint64_t ns);

#define PC_LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define PC_ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define PC_ADD(x, v) __atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

#endif /* PC_H */
