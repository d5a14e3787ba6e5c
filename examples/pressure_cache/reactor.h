/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reactor.h - how the ksync variant turns memory pressure into shrinker calls.
 *
 * One small interface, so that the mechanism behind it can change without
 * touching the cache: reactor_start() begins watching the pressure of the
 * process (its memory cgroup's usage against the limit, or its RSS against
 * a budget) and calls ksync_shrink_slab() on the cache's memory group when
 * there is some; reactor_event_time() tells a scan_objects callback which
 * event it is reacting to (for the event -> scan latency); reactor_stop()
 * stops it and returns its figures.
 */
#ifndef PC_REACTOR_H
#define PC_REACTOR_H

#include <stddef.h>
#include <stdint.h>

struct ksync_shrinker_registry;
struct ksync_memgroup;

struct reactor_cfg {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *group;  /* the cache's group: its walk is the target */
	uint64_t budget_bytes;         /* 0: the cgroup's limit; else RSS against this */
	int in_loop;                   /* no thread: the caller calls reactor_poll() */
};

struct reactor_stats {
	uint64_t events;   /* pressure events (a poll that found a level counts as one) */
	uint64_t rounds;   /* reclaim rounds */
	uint64_t scans;    /* ksync_shrink_slab() calls */
	uint64_t freed;    /* objects they returned */
	uint64_t lib_p99_ns; /* the monitor's own event -> first shrink p99 (a power of two) */
	uint64_t direct_rounds, direct_throttled, direct_freed;  /* ksync_pressure_charge()'s */
};

/* Start watching; @desc gets a line on what is watched. Return 0 or -errno. */
int reactor_start(const struct reactor_cfg *cfg, char *desc, size_t len);
/*
 * The insert path: @bytes about to be allocated (ksync_pressure_charge():
 * over the watermark the calling thread reclaims itself). Call it without
 * the cache's lock: the round calls the cache's shrinker. Return its mask,
 * 0 without a monitor.
 */
int reactor_charge(size_t bytes);
/* In-loop mode: do the monitor's work if some is due (never blocks). */
void reactor_poll(void);
/* Stop, and the figures since start (@out may be NULL). */
void reactor_stop(struct reactor_stats *out);
/* The figures so far. */
void reactor_peek(struct reactor_stats *out);
/* The CLOCK_MONOTONIC ns of the event the calling thread reacts to, or 0. */
uint64_t reactor_event_time(void);

#endif /* PC_REACTOR_H */
