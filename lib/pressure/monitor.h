/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/monitor.h - the monitor's own state, shared by its three
 * files (not by the sources: they see lib/pressure/internal.h only).
 *
 * Direction of calls (tests/hygiene/lib_symbols.sh):
 *   monitor.c  (create, destroy, describe, figures, inject)
 *     -> run.c   (fds, epoll, the helper thread, dispatch, fork, opening sources)
 *       -> react.c (a batch of events -> at most one reclaim round, callbacks)
 * react.c calls nothing of run.c or monitor.c: what it finds out that run.c
 * must act on (a source that died in sample()) it leaves in @dead.
 *
 * Who touches what:
 *  - @lock guards the reaction state (last events and rounds, the callbacks'
 *    table, the figures, the run flags). It is held only for short updates,
 *    never across ksync_shrink_slab(), a source's ops or a user callback, so
 *    that fork()'s prepare handler (run.c) can take it without waiting for a
 *    round, and readers (ksync_pressure_level(), _get_stats()) never wait
 *    for one either.
 *  - One *runner* at a time processes events: the helper thread, or one
 *    ksync_pressure_dispatch() caller; @busy (an atomic flag) says a runner
 *    is in. Only the runner touches the sources, the timer and @next_poll.
 *  - @pending and @stop are written by any thread (inject, stop) and read by
 *    the runner; the eventfd @wakefd wakes it.
 */
#ifndef KSYNC_LIB_PRESSURE_MONITOR_H
#define KSYNC_LIB_PRESSURE_MONITOR_H

#include "internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Latency histogram: bucket b holds values of bit length b (0 holds 0). */
#define KSYNC__PM_HIST 65

/* epoll data of the monitor's own fds; a source's fd is (kind << 8) | index. */
#define KSYNC__PM_TAG_WAKE 0xfffffffeu
#define KSYNC__PM_TAG_TIMER 0xfffffffdu

struct ksync_pressure {
	/* Set at create, read-only afterwards. */
	struct ksync__penv env;    /* the config, every default filled in */
	char *strings;             /* env.cfg's root, systemd_watch, systemd_write: our copies */
	unsigned requested;        /* cfg->sources as given (0: AUTO) */
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup *group; /* a reference of ours, or NULL */
	int nr_nodes;

	/* The sources: written by whoever opens them (create, or a runner
	 * reopening after fork) and by the runner when one dies. */
	struct ksync__psrc src[KSYNC_PRESSURE_NR_SOURCES];
	unsigned tried;            /* sources tried (described) */
	unsigned open;             /* sources working: atomic (ksync_pressure_sources()) */
	unsigned dead;             /* runner only: died, to be closed by run.c at the end of its pass */
	unsigned died;             /* sources closed because they died at runtime (described) */

	/* The fds (atomic loads where another thread reads them: inject). */
	int epfd, timerfd, wakefd;
	pid_t pid;                 /* the process they were opened in */
	uint64_t next_poll;        /* runner: when the polled sources are due (ns) */

	pthread_mutex_t lock;      /* see above */
	pthread_t thread;
	bool thread_running;       /* under lock */
	bool stopping;             /* under lock: a stop() is joining the thread */
	bool fd_mode;              /* under lock: ksync_pressure_fd()/_dispatch() used */
	int busy;                  /* atomic: a runner is in (run.c) */
	int stop;                  /* atomic: the helper thread must stop */
	unsigned pending[KSYNC_PRESSURE_NR_LEVELS]; /* atomic: injections not read yet */

	/* Reaction state, under lock. */
	uint64_t last_event[KSYNC_PRESSURE_NR_LEVELS]; /* ns of the last event per level; 0 none */
	uint64_t last_round[KSYNC_PRESSURE_NR_LEVELS]; /* ns of the last round per level; 0 none */
	int last_start[KSYNC_PRESSURE_NR_LEVELS];      /* first priority of that round */
	struct {
		ksync_pressure_fn fn;
		void *arg;
	} cb[KSYNC_PRESSURE_NR_LEVELS];
	struct ksync_pressure_stats st;                /* without the latency percentiles */
	uint64_t hist[KSYNC__PM_HIST];

	/* Direct reclaim (direct.c): ksync_pressure_charge(). */
	struct {
		/* Set at create, read-only afterwards. */
		uint64_t serial;          /* this monitor's number (threads' counters name it) */
		size_t batch;             /* cfg.charge_batch */
		unsigned kinds;           /* byte sources with a probe */
		void *probe[KSYNC_PRESSURE_NR_SOURCES];
		const struct ksync__psrc_ops *probe_ops[KSYNC_PRESSURE_NR_SOURCES];
		uint64_t limit0[KSYNC_PRESSURE_NR_SOURCES]; /* the limit at open (probe_read's fallback) */
		/*
		 * Atomic, written by charging threads once per batch, and by
		 * reads: a cache line of their own, so that the fast path's
		 * reads of the fields above do not miss after every batch.
		 */
		uint64_t published __attribute__((aligned(64))); /* bytes published since create */
		uint64_t checks;          /* batches published */
		uint64_t base;            /* @published when the figures were last read */
		uint64_t room;            /* bytes from the last read to the nearest watermark */
		/* Under @lock. */
		int inflight __attribute__((aligned(64))); /* threads in the slow path (destroy waits for 0) */
		int reclaiming;           /* threads in a direct round (<= cfg.direct_max) */
		uint64_t rounds_done;     /* direct rounds ended (throttled threads wait for a change) */
		bool dying;               /* destroy has begun */
		pthread_cond_t cv;        /* with @lock: a round ended, or the last caller left */
		uint64_t hist[KSYNC__PM_HIST]; /* stall of direct rounds */
		/* direct.c's list of monitors with a byte source (its own lock). */
		struct ksync_pressure *live_next, *live_prev;
	} direct;

	/* Every monitor of the process, for the fork handlers (run.c's list lock). */
	struct ksync_pressure *list_next, *list_prev;
};

/* What one runner pass read, per level (react.c). */
struct ksync__pm_batch {
	unsigned n[KSYNC_PRESSURE_NR_LEVELS];  /* events of the level */
	int kind[KSYNC_PRESSURE_NR_LEVELS];    /* the source of the level's first event */
	uint64_t t[KSYNC_PRESSURE_NR_LEVELS];  /* when that event was read (ns) */
	bool up[KSYNC_PRESSURE_NR_LEVELS];     /* the level was already up (an event within hold) */
	unsigned total;
};

/* react.c */
extern _Thread_local struct ksync_pressure *ksync__pm_running; /* the monitor this thread runs */
uint64_t ksync__pm_now(void);
enum ksync_pressure_level ksync__pm_level_locked(struct ksync_pressure *m, uint64_t now);
void ksync__pm_note(struct ksync_pressure *m, struct ksync__pm_batch *b, int kind, int level, unsigned n);
void ksync__pm_react(struct ksync_pressure *m, struct ksync__pm_batch *b);

/* direct.c */
int ksync__pm_direct_init(struct ksync_pressure *m);
void ksync__pm_direct_fini(struct ksync_pressure *m);
bool ksync__pm_direct_inside(const struct ksync_pressure *m);
uint64_t ksync__pm_direct_sampling(struct ksync_pressure *m);
void ksync__pm_direct_sampled(struct ksync_pressure *m, uint64_t base);
void ksync__pm_direct_child(struct ksync_pressure *m);

/* run.c */
int ksync__pm_open(struct ksync_pressure *m);
void ksync__pm_close(struct ksync_pressure *m);
int ksync__pm_list_add(struct ksync_pressure *m);
void ksync__pm_list_del(struct ksync_pressure *m);
int ksync__pm_stop_thread(struct ksync_pressure *m);
void ksync__pm_wait_runner(struct ksync_pressure *m);

#endif /* KSYNC_LIB_PRESSURE_MONITOR_H */
