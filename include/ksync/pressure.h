/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/pressure.h - reclaim driven by the operating system's memory pressure
 *
 * A &struct ksync_pressure (a *monitor*) watches one or more *sources* of
 * memory pressure and turns what they report into calls of a shrinker
 * registry (ksync_shrink_slab()), with the kernel's priorities and the
 * registry's nr_deferred carrying what one call could not do.
 *
 * Sources, strongest first (enum ksync_pressure_source). %KSYNC_PRESSURE_AUTO
 * picks one *event* source (the first that opens: systemd's protocol when its
 * variables are set, PSI on the process's own cgroup v2 directory, PSI of the
 * whole system, cgroup v1 vmpressure) and adds the *polled* limit source when
 * the process's memory cgroup has a limit, else MemAvailable. A source that
 * cannot open (no file, no permission, a kernel without PSI) is skipped and
 * ksync_pressure_describe() says why; a monitor with no working source is
 * legal and reports nothing. An explicitly selected source that fails the
 * same way leaves the monitor without it (described), it is not an error.
 *
 * PSI triggers: each level writes "some|full <stall us> <window us>" to its
 * own fd of memory.pressure and waits for POLLPRI. Kernels differ: before
 * 6.5 a trigger needs CAP_SYS_RESOURCE and takes windows of 500 ms to 10 s;
 * from 6.5 a process without the capability gets windows that are multiples
 * of 2 s up to 10 s. The window asked for is tried first; on EINVAL the
 * nearest window the kernel accepts is taken (the stall scaled with it) and
 * described.
 *
 * The reaction: every event or poll that finds a level above NONE runs a
 * *reclaim round*: ksync_shrink_slab() on every node of the registry (or of
 * the target group), starting at the level's priority and, while the source
 * says the pressure is not relieved (polled sources re-read their figure;
 * event sources count as relieved after one pass), lowering the priority by
 * one down to the level's floor, as the kernel's reclaim loop does. An
 * event source's level that stays up (a new event within @hold_ms) starts
 * its next round one priority lower (it cannot tell whether a round helped);
 * a polled source's rounds always start at the level's priority. Rounds of one level are rate limited (@min_interval_ms);
 * a higher level is never delayed by a lower one's limit. The level falls
 * back to NONE after @hold_ms without events (hysteresis).
 *
 * Two ways to run it:
 *  - ksync_pressure_start(): a helper thread the library owns (named
 *    "ksync-pressure", every signal blocked), stopped by
 *    ksync_pressure_stop() (an in-flight round finishes at its next
 *    priority step); after fork() the child has no helper thread and may
 *    call ksync_pressure_start() again, which reopens the sources (so the
 *    child gets triggers of its own).
 *  - ksync_pressure_fd() + ksync_pressure_dispatch(): an fd (an epoll fd)
 *    that the program adds to its own loop (epoll, libuv, sd-event) for
 *    readability; when it is readable, ksync_pressure_dispatch() does the
 *    work without blocking. No thread at all.
 *
 * Direct reclaim: a polled source answers in 5-200 ms, too late for a
 * program that allocates faster than that. ksync_pressure_charge(), called
 * by the allocating thread, keeps an estimate (the last figure of each byte
 * source plus the bytes charged since) and, over @direct_permille of a
 * limit, makes that thread run a bounded reclaim round itself, as the
 * kernel's direct reclaim does (docs/pressure.md).
 *
 * Misuse follows docs/errors.md: a negative errno, reported with the
 * caller's file and line.
 */
#ifndef KSYNC_PRESSURE_H
#define KSYNC_PRESSURE_H

#include <ksync/compiler.h>
#include <ksync/shrinker.h>

#include <stddef.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/** enum ksync_pressure_level - how short of memory; NONE is no pressure. */
enum ksync_pressure_level {
	KSYNC_PRESSURE_NONE = 0,
	KSYNC_PRESSURE_LOW = 1,
	KSYNC_PRESSURE_MEDIUM = 2,
	KSYNC_PRESSURE_CRITICAL = 3,
};
#define KSYNC_PRESSURE_NR_LEVELS 4

/** enum ksync_pressure_source - where pressure comes from (a bit each in a mask). */
enum ksync_pressure_source {
	KSYNC_PRESSURE_SRC_SYSTEMD = 0,    /* $MEMORY_PRESSURE_WATCH / _WRITE */
	KSYNC_PRESSURE_SRC_PSI_CGROUP = 1, /* memory.pressure of the own cgroup v2 directory */
	KSYNC_PRESSURE_SRC_PSI_SYSTEM = 2, /* /proc/pressure/memory */
	KSYNC_PRESSURE_SRC_VMPRESSURE = 3, /* cgroup v1 memory.pressure_level + eventfd */
	KSYNC_PRESSURE_SRC_LIMIT = 4,      /* cgroup usage against its limit, polled */
	KSYNC_PRESSURE_SRC_MEMINFO = 5,    /* /proc/meminfo MemAvailable, polled */
	KSYNC_PRESSURE_SRC_BUDGET = 6,     /* the process's RSS against @budget_bytes, polled */
	KSYNC_PRESSURE_SRC_TEST = 7,       /* ksync_pressure_inject() */
	KSYNC_PRESSURE_NR_SOURCES = 8,
};
/** KSYNC_PRESSURE_AUTO - a @sources mask of 0: pick as the DOC above says. */
#define KSYNC_PRESSURE_AUTO 0U
#define KSYNC_PRESSURE_SRC(s) (1U << (s))

/**
 * struct ksync_pressure_trigger - one level's PSI trigger.
 * @full: "full" (every task stalled) instead of "some"
 * @stall_us: stall time per window that fires the trigger
 * @window_us: window length
 * All zero: the default (GLib's): LOW some 70 ms / 2 s, MEDIUM some 100 ms / 2 s,
 * CRITICAL full 100 ms / 2 s. A zero @stall_us takes that default too, @full
 * and @window_us included (the kernel refuses a zero stall); a stall with a
 * zero window is longer than its window (misuse).
 */
struct ksync_pressure_trigger {
	int full;
	uint32_t stall_us;
	uint32_t window_us;
};

/**
 * struct ksync_pressure_config - what to watch and how to react (zero = defaults).
 * @sources: mask of KSYNC_PRESSURE_SRC(); %KSYNC_PRESSURE_AUTO (0) picks
 * @reg: the registry to shrink (NULL: the default registry)
 * @group: NULL for the global walk, else the group walk of @group (a group
 *         of @reg's set; the monitor takes a reference and drops it at destroy)
 * @trigger: PSI triggers per level (index LOW..CRITICAL; [0] unused)
 * @priority: first priority per level (0: LOW 12, MEDIUM 10, CRITICAL 7)
 * @floor: lowest priority per level (0 with @priority 0: LOW 10, MEDIUM 6,
 *         CRITICAL 0); a floor above the first priority is misuse
 * @limit_permille: usage per mille of the limit (or of the budget, or memory
 *         used per mille of MemTotal) at which the polled sources report each
 *         level (0: LOW 800, MEDIUM 900, CRITICAL 950)
 * @poll_ms: the polled sources' period per level, NONE..CRITICAL (0: 200,
 *         50, 20, 5: a cache that grows by 64 MiB/s crosses the 5 % between
 *         LOW and the limit of a 128 MiB group in 100 ms)
 * @min_interval_ms: least time between two rounds of one level (0: LOW 1000,
 *         MEDIUM 100, CRITICAL 10)
 * @hold_ms: how long a level stays up without events (0: 2000)
 * @budget_bytes: the budget of %KSYNC_PRESSURE_SRC_BUDGET (required with it)
 * @root: a directory standing for "/" when reading /proc and /sys (tests); NULL: "/"
 * @systemd_watch, @systemd_write: stand-ins for $MEMORY_PRESSURE_WATCH and
 *         $MEMORY_PRESSURE_WRITE (NULL: read the environment)
 * @direct_permille: direct reclaim's watermark (ksync_pressure_charge()), per
 *         mille of the limit of each byte source (limit, budget, meminfo)
 *         (0: the MEDIUM level's @limit_permille, 900 by default); above 1000 is misuse
 * @direct_max: how many threads may run a direct reclaim round at once; the
 *         others over the watermark wait for one of those rounds (0: 2)
 * @charge_batch: bytes a thread charges before it publishes them to the
 *         monitor and compares (0: 256 KiB, the kernel's memcg charge batch
 *         of 64 pages)
 *
 * ksync_pressure_create() copies the config, its strings (and the
 * environment's values) included: none of them need outlive the call.
 */
struct ksync_pressure_config {
	unsigned sources;
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *group;
	struct ksync_pressure_trigger trigger[KSYNC_PRESSURE_NR_LEVELS];
	int priority[KSYNC_PRESSURE_NR_LEVELS];
	int floor[KSYNC_PRESSURE_NR_LEVELS];
	unsigned limit_permille[KSYNC_PRESSURE_NR_LEVELS];
	unsigned poll_ms[KSYNC_PRESSURE_NR_LEVELS];
	unsigned min_interval_ms[KSYNC_PRESSURE_NR_LEVELS];
	unsigned hold_ms;
	uint64_t budget_bytes;
	const char *root;
	const char *systemd_watch;
	const char *systemd_write;
	unsigned direct_permille;
	unsigned direct_max;
	size_t charge_batch;
};

struct ksync_pressure;

/**
 * typedef ksync_pressure_fn - a user reaction to a level (malloc_trim(), dropping a pool).
 * Called by whoever runs the monitor (the helper thread or the dispatcher),
 * after the round's shrinking, with the level of the round. It may call any
 * ksync function but ksync_pressure_stop(), _destroy() and _dispatch() of its
 * own monitor (-EDEADLK, reported).
 */
typedef void (*ksync_pressure_fn)(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg);

/**
 * ksync_pressure_create() - open the sources and make a monitor (not running yet).
 * @cfg: NULL for every default
 * @out: the monitor
 *
 * Return: 0; -EINVAL (reported) for a bad config (unknown source bits,
 * SRC_BUDGET without @budget_bytes, a priority or a floor outside 0..12, a
 * floor above its priority, a trigger with a stall longer than its window, a group of another set,
 * a @direct_permille above 1000);
 * -ENOMEM. The environment (missing files, permissions) never fails it.
 */
int ksync__pressure_create(const char *file, int line, const struct ksync_pressure_config *cfg,
			   struct ksync_pressure **out);
#define ksync_pressure_create(...) ksync__pressure_create(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_destroy() - stop the monitor if it runs, close its sources, free it.
 * A dispatch in flight on another thread (fd mode) is waited for, as the
 * helper thread's round is; a call made after destroy returned is the
 * caller's use after free. Return: 0; -EDEADLK (reported) from the monitor's own callback, or
 * from a shrinker inside a direct round of the monitor (ksync_pressure_charge()). NULL: 0.
 */
int ksync__pressure_destroy(const char *file, int line, struct ksync_pressure *p);
#define ksync_pressure_destroy(...) ksync__pressure_destroy(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_start() - run the monitor on a helper thread of its own.
 * Return: 0; -EBUSY (reported) when it runs already or an fd user dispatches
 * it; -EAGAIN when the thread cannot be made.
 */
int ksync__pressure_start(const char *file, int line, struct ksync_pressure *p);
#define ksync_pressure_start(...) ksync__pressure_start(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_stop() - stop the helper thread and wait for it.
 * A round in flight finishes at its next priority step. Return: 0; -EINVAL
 * (reported) when it does not run; -EDEADLK (reported) from its callback.
 */
int ksync__pressure_stop(const char *file, int line, struct ksync_pressure *p);
#define ksync_pressure_stop(...) ksync__pressure_stop(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_fd() - an fd to poll for readability, for running without a thread.
 * Return: the fd (owned by the monitor: do not close it), or -EBUSY
 * (reported) while the helper thread runs.
 */
int ksync__pressure_fd(const char *file, int line, struct ksync_pressure *p);
#define ksync_pressure_fd(...) ksync__pressure_fd(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_dispatch() - do the work that is due, without blocking.
 * Reads every ready source, runs at most one reclaim round for the highest
 * level found, and rearms the poll timer. Return: the number of events read
 * (0 when nothing was due); -EBUSY (reported) while the helper thread runs;
 * -EDEADLK (reported) from the monitor's own callback.
 */
int ksync__pressure_dispatch(const char *file, int line, struct ksync_pressure *p);
#define ksync_pressure_dispatch(...) ksync__pressure_dispatch(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_on_level() - set (or clear, @fn NULL) the user reaction of one level.
 * Return: 0; -EINVAL (reported) for a level outside LOW..CRITICAL.
 */
int ksync__pressure_on_level(const char *file, int line, struct ksync_pressure *p,
			     enum ksync_pressure_level level, ksync_pressure_fn fn, void *arg);
#define ksync_pressure_on_level(...) ksync__pressure_on_level(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_inject() - the test source: report @level as if the OS had.
 * Thread-safe, async-signal-safe (a write to an eventfd). Return: 0; -EINVAL
 * (reported) when the monitor has no test source or @level is not
 * LOW..CRITICAL.
 */
int ksync__pressure_inject(const char *file, int line, struct ksync_pressure *p,
			   enum ksync_pressure_level level);
#define ksync_pressure_inject(...) ksync__pressure_inject(__FILE__, __LINE__, __VA_ARGS__)

/* What ksync_pressure_charge() did (a mask; 0: only counted the bytes). */
#define KSYNC_PRESSURE_CHARGE_RECLAIMED 1 /* this thread ran a direct reclaim round */
#define KSYNC_PRESSURE_CHARGE_THROTTLED 2 /* it waited for another thread's round */
#define KSYNC_PRESSURE_CHARGE_OVER 4      /* still above the watermark afterwards */

/**
 * ksync_pressure_charge() - count @bytes an allocating thread takes; reclaim directly when over.
 * @p: the monitor
 * @bytes: what the caller allocated (or is about to): a cache's new value
 *
 * The userspace analogue of the kernel's direct reclaim: a polled source
 * samples every few ms, a program that allocates 1 GB/s outruns it, so the
 * allocating thread itself makes room. The estimate of memory in use is
 * the last sample of each byte source (%KSYNC_PRESSURE_SRC_LIMIT, _BUDGET,
 * _MEMINFO, whichever opened) plus the bytes charged since. When it
 * crosses @direct_permille of a source's limit, the caller re-reads the
 * source; if the figure is over indeed, it runs a bounded reclaim round
 * synchronously, as the monitor's rounds do (ksync_shrink_slab() on every
 * node from the level's priority, one priority lower while the re-read
 * figure stays over the watermark, down to the level's floor), then
 * returns.
 *
 * Fast path: the bytes add to a counter of the calling thread; only every
 * @charge_batch bytes are they added to the monitor's (one atomic add) and
 * compared. Under the watermark, no syscall and no shared write between
 * batches. A thread keeps one such counter: when it charges another
 * monitor, its remainder goes back to the monitor it leaves and, if that
 * one still lives, the moving charge is published and compared at once
 * (a process-wide lock, taken on such moves only), so a thread charging
 * two monitors in turn is counted by both. At most @direct_max threads
 * reclaim at once; another caller over the watermark waits for one of
 * their rounds to end and returns (THROTTLED), it does not pile on.
 * Rounds of the helper thread or of a dispatcher may run at the same time
 * (ksync_shrink_slab() allows it). A charge made from inside a round (a
 * shrinker that allocates), of this monitor or of any other, only counts:
 * reclaim does not recurse. Without a byte source (PSI only) the call
 * only counts.
 *
 * Context: any thread, not a signal handler; may block for one round.
 * After fork() the child's monitor counts from its next sample.
 * Ordering: none for the caller's memory; the round's own ordering is
 * ksync_shrink_slab()'s.
 * Return: a mask of %KSYNC_PRESSURE_CHARGE_RECLAIMED, _THROTTLED, _OVER (0:
 * nothing but counting); -EINVAL (reported) for a NULL @p; -ESHUTDOWN
 * (reported) when ksync_pressure_destroy() has begun (a caller already
 * inside is waited for by destroy).
 */
int ksync__pressure_charge(const char *file, int line, struct ksync_pressure *p, size_t bytes);
#define ksync_pressure_charge(...) ksync__pressure_charge(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_pressure_describe() - what the monitor watches, and why not the rest.
 * One line per source tried: its name, "ok" and what it opened (the file, the
 * trigger and the window taken, the poll period) or "off" and why. Writes at
 * most @len bytes, NUL-terminated; returns the length it needed (snprintf's
 * contract).
 */
size_t ksync_pressure_describe(struct ksync_pressure *p, char *buf, size_t len);

/** ksync_pressure_sources() - the mask of sources that opened. */
unsigned ksync_pressure_sources(struct ksync_pressure *p);

/** ksync_pressure_level() - the level now (after hysteresis). */
enum ksync_pressure_level ksync_pressure_level(struct ksync_pressure *p);

/**
 * struct ksync_pressure_stats - figures since create.
 * @events: events per level (a poll that found a level counts as one event)
 * @rounds: reclaim rounds per level
 * @rate_limited: events that found their level's round too recent
 * @source_events, @source_scans, @source_freed: per source: events, calls of
 *         ksync_shrink_slab(), objects it returned
 * @latency_ns_p50, @latency_ns_p99, @latency_ns_max: from reading the event
 *         to the round's first ksync_shrink_slab() call (a histogram of
 *         power-of-two buckets: the p50/p99 are the bucket's upper bound)
 * @latency_samples: rounds measured
 * @direct_checks: batches of ksync_pressure_charge() published and compared
 * @direct_reads: re-reads of the byte sources by charging threads
 * @direct_rounds: direct reclaim rounds run by charging threads
 * @direct_throttled: charges that waited for another thread's round
 * @direct_bytes: bytes charged and published (a thread's unpublished
 *         remainder, under @charge_batch, is not in it)
 * @direct_scans, @direct_freed: ksync_shrink_slab() calls of direct rounds,
 *         objects they returned
 * @direct_ns_p50, @direct_ns_p99, @direct_ns_max: how long a charging
 *         thread spent in a direct round (the stall), power-of-two buckets
 *         as @latency_ns_p50
 */
struct ksync_pressure_stats {
	uint64_t events[KSYNC_PRESSURE_NR_LEVELS];
	uint64_t rounds[KSYNC_PRESSURE_NR_LEVELS];
	uint64_t rate_limited;
	uint64_t source_events[KSYNC_PRESSURE_NR_SOURCES];
	uint64_t source_scans[KSYNC_PRESSURE_NR_SOURCES];
	uint64_t source_freed[KSYNC_PRESSURE_NR_SOURCES];
	uint64_t latency_ns_p50;
	uint64_t latency_ns_p99;
	uint64_t latency_ns_max;
	uint64_t latency_samples;
	uint64_t direct_checks;
	uint64_t direct_reads;
	uint64_t direct_rounds;
	uint64_t direct_throttled;
	uint64_t direct_bytes;
	uint64_t direct_scans;
	uint64_t direct_freed;
	uint64_t direct_ns_p50;
	uint64_t direct_ns_p99;
	uint64_t direct_ns_max;
};

/** ksync_pressure_get_stats() - a consistent copy of the figures. */
void ksync_pressure_get_stats(struct ksync_pressure *p, struct ksync_pressure_stats *out);

/**
 * ksync_pressure_event_time() - the event the calling thread is reacting to.
 * Return: its CLOCK_MONOTONIC time in ns while the calling thread runs a
 * reclaim round (so inside a shrinker's scan_objects called by the monitor),
 * else 0. Lets a shrinker measure the latency from the event to itself.
 */
uint64_t ksync_pressure_event_time(void);

/** ksync_pressure_source_name() - "psi-cgroup", "limit", ...; NULL when out of range. */
const char *ksync_pressure_source_name(enum ksync_pressure_source s);

/** ksync_pressure_level_name() - "none", "low", "medium", "critical"; NULL when out of range. */
const char *ksync_pressure_level_name(enum ksync_pressure_level level);

KSYNC_EXTERN_C_END

#endif /* KSYNC_PRESSURE_H */
