/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/internal.h - what the monitor (monitor.c, react.c, run.c) and
 * the sources (psi.c, systemd.c, vmpressure.c, limit.c, paths.c, parse.c)
 * share.
 *
 * Direction of calls: the monitor calls the sources through their ops (and
 * ksync__psrc_table); the sources call parse.c and paths.c, never the
 * monitor. So the files form no call circle (tests/hygiene/lib_symbols.sh).
 *
 * A source is a set of fds the monitor adds to its epoll set (event
 * sources) and/or a sample() the monitor calls on its timer (polled
 * sources). The monitor owns the timing (epoll, the timerfd, rate limits,
 * hysteresis) and the reaction; a source only turns what the kernel wrote
 * into a level.
 */
#ifndef KSYNC_LIB_PRESSURE_INTERNAL_H
#define KSYNC_LIB_PRESSURE_INTERNAL_H

#include <ksync/pressure.h>

#include <stdbool.h>
#include <stdint.h>

#define KSYNC__PSRC_MAX_FDS 4
#define KSYNC__PSRC_DESC 256
#define KSYNC__PATH_MAX 4096

/* The environment a source opens in: the config with every default filled in. */
struct ksync__penv {
	struct ksync_pressure_config cfg; /* defaults filled; cfg.root never NULL ("" = real) */
};

struct ksync__psrc;

struct ksync__psrc_ops {
	enum ksync_pressure_source kind;
	/*
	 * open: fill s->fd[], s->fd_events[] (EPOLLPRI, EPOLLIN), s->fd_level[]
	 * (the level an fd's readiness stands for, or NONE when ready() tells)
	 * and s->nr_fds; set s->polled when sample() works. Write s->desc
	 * ("<what>: <file>, <trigger/window taken>") either way. Return 0, or
	 * a negative errno when the source cannot work here (s->desc says why;
	 * the monitor then calls close()).
	 */
	int (*open)(struct ksync__psrc *s, const struct ksync__penv *env);
	/*
	 * ready: fd index @i reported @revents (epoll's). Drain it. Return the
	 * level it stands for (KSYNC_PRESSURE_NONE when it was nothing), or a
	 * negative errno when the source died (POLLERR/POLLHUP: a vanished
	 * cgroup, a closed socket): s->desc then says why and the monitor
	 * closes the source and goes on without it.
	 */
	int (*ready)(struct ksync__psrc *s, int i, uint32_t revents);
	/*
	 * sample (polled sources, NULL otherwise): read the figure now and
	 * return its level, or a negative errno when the source died. Also
	 * called by the reclaim loop after each priority step: a level below
	 * the round's means the pressure is relieved.
	 */
	int (*sample)(struct ksync__psrc *s);
	/* close: close the fds, free priv. Safe after a failed open. */
	void (*close)(struct ksync__psrc *s);
	/*
	 * probe_new (byte sources: limit, meminfo, budget; NULL otherwise):
	 * after a successful open, a copy of what sample() reads (paths, page
	 * size), owned by the monitor (freed with free()), for direct reclaim
	 * (direct.c): the charging threads read through it while the runner
	 * samples, closes or reopens the source itself. NULL: out of memory.
	 */
	void *(*probe_new)(const struct ksync__psrc *s);
	/*
	 * probe_read: the figure and the limit now, through a probe; writes
	 * nothing but its arguments (any thread, any number at once). @limit
	 * comes in holding the last limit known, kept where the limit cannot
	 * be read again. Return 0 or -errno.
	 */
	int (*probe_read)(const void *probe, uint64_t *figure, uint64_t *limit);
};

struct ksync__psrc {
	const struct ksync__psrc_ops *ops;
	int fd[KSYNC__PSRC_MAX_FDS];
	uint32_t fd_events[KSYNC__PSRC_MAX_FDS];
	int fd_level[KSYNC__PSRC_MAX_FDS];
	int nr_fds;
	bool polled;
	int status;                  /* 0 ok, else the negative errno it failed or died with */
	char desc[KSYNC__PSRC_DESC]; /* one line, no newline */
	uint64_t figure;             /* polled sources: the last usage (bytes), for describe/tests */
	uint64_t limit;              /* polled sources: the limit it was measured against */
	void *priv;                  /* the source's own */
};

/*
 * The sources, by kind (NULL where the monitor provides it: the test
 * source). sources.c defines the table.
 */
extern const struct ksync__psrc_ops *const ksync__psrc_table[KSYNC_PRESSURE_NR_SOURCES];

/* The order AUTO tries event sources in, and the polled ones after them. */
#define KSYNC__PSRC_AUTO_EVENTS                                                                    \
	{ KSYNC_PRESSURE_SRC_SYSTEMD, KSYNC_PRESSURE_SRC_PSI_CGROUP, KSYNC_PRESSURE_SRC_PSI_SYSTEM,  \
	  KSYNC_PRESSURE_SRC_VMPRESSURE }
#define KSYNC__PSRC_AUTO_POLLED { KSYNC_PRESSURE_SRC_LIMIT, KSYNC_PRESSURE_SRC_MEMINFO }

#endif /* KSYNC_LIB_PRESSURE_INTERNAL_H */
