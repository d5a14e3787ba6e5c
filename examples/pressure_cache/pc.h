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
#include <stdio.h>

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

/* The request stream: a Zipf law over every key, or a hot set and one-pass scans. */
enum pc_workload {
	PC_WL_ZIPF,
	PC_WL_SCAN,
};

/* The cache's LRU: issue 20's list_lru with second chance, or a ksync_lru of <ksync/workingset.h>. */
enum pc_lru {
	PC_LRU_LIST,
	PC_LRU_CLASSIC,
	PC_LRU_MGLRU,
	PC_NR_LRUS,
};

extern const char *const pc_lru_name[PC_NR_LRUS];

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
	enum pc_workload workload;
	uint32_t hot_keys;         /* scan: the hot set, in keys */
	uint64_t hot_len;          /* scan: requests per hot phase */
	uint64_t scan_len;         /* scan: keys per one-pass scan */
	bool hot_cyclic;           /* scan: the hot phase a pass in order (else uniform draws) */
	enum pc_lru lru;           /* the cache's LRU */
	bool shadows;              /* classic/mglru: evictions leave shadow entries, misses refault */
	uint64_t requests;         /* serve exactly this many requests (0: for @seconds) */
	bool direct_reclaim;       /* ksync: the insert path reclaims when over the watermark */
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
	uint64_t hot_ops, hot_hits;         /* scan workload: requests for hot keys, their hits */
	/* the ksync_lru cache (--lru classic|mglru): shadow entries and their budget */
	uint64_t ws_refaults, ws_activations;   /* misses that found a shadow; judged in the workingset */
	uint64_t shadow_nodes_peak;             /* shadow nodes, the most sampled (before each reclaim) */
	uint64_t shadow_budget_at_peak;         /* the shadow shrinker's budget then, in nodes */
	uint64_t shadow_budget_max;             /* the largest budget sampled */
	uint64_t shadow_excess_max;             /* the most nodes sampled beyond the budget */
	uint64_t shadow_samples, shadow_over_samples;  /* samples; those beyond the budget */
	uint64_t shadow_nodes_end, shadow_nodes_freed, shadow_entries_end;
	uint64_t shadow_trims;                  /* cap evictions' own shadow trims (fixed variants) */
	uint64_t shadow_node_bytes;             /* one shadow node's slots */
	uint64_t direct_reclaims, direct_freed; /* ksync: the insert path's own reclaim */
	int done;                           /* the child finished cleanly */
	char desc[1024];                     /* how the child watched pressure */
};

/* workload.c: the scan workload (hot phases, then a one-pass scan). */
struct pc_scan {
	uint64_t rng;
	uint32_t hot_keys;
	uint64_t hot_len, scan_len;
	uint64_t pos, scanned, hot_pos;
	bool cyclic;
};

void pc_scan_init(struct pc_scan *s, uint32_t hot_keys, uint64_t hot_len, uint64_t scan_len, bool cyclic,
		  uint64_t seed);
uint32_t pc_scan_next(struct pc_scan *s, bool *hot);

/* workingset.c: the workingset study (--workingset). */
enum pc_ws_flavour {
	PC_WS_CLASSIC,
	PC_WS_MGLRU,
	PC_WS_NR_FLAVOURS,
};

extern const char *const pc_ws_flavour_name[PC_WS_NR_FLAVOURS];

/* One run: one flavour, shadow entries on or off. */
struct pc_ws_run {
	bool ran;
	uint64_t ops, hits, hot_ops, hot_hits;
	uint64_t refaults, activations;          /* shadows found on a miss; of those, activated */
	uint64_t pressure_rounds;                /* shadow shrinker rounds (the pressure) */
	uint64_t shadow_nodes_peak, shadow_nodes_end, shadow_nodes_freed;
	uint64_t shadow_budget_min, shadow_budget_max;  /* the shrinker's budget, in nodes, as it saw it */
	uint64_t over_budget_rounds;             /* rounds that ended with more nodes than the budget */
	uint64_t shadow_node_bytes;              /* one shadow node */
	double seconds;
};

struct pc_ws_study {
	uint64_t capacity_values, requests, pressure_every;
	struct pc_ws_run run[PC_WS_NR_FLAVOURS][2];   /* [flavour][shadows] */
	int err;
	char why[256];
};

int pc_ws_study_run(const struct pc_params *p, uint64_t capacity_values, uint64_t requests,
		    struct pc_ws_study *st);
void pc_ws_write_json(FILE *f, const struct pc_ws_study *st);
void pc_ws_print(const struct pc_ws_study *st);

/* child.c */
int pc_child_run(const struct pc_params *p, struct pc_shared *sh);

/* Time. */
uint64_t pc_now_ns(void);
void pc_sleep_ns(uint64_t ns);

#define PC_LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define PC_ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define PC_ADD(x, v) __atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED)

#endif /* PC_H */
