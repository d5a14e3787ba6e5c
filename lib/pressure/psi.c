/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/psi.c - PSI triggers: the process's own cgroup v2 directory
 * (memory.pressure, %KSYNC_PRESSURE_SRC_PSI_CGROUP) and the whole system
 * (/proc/pressure/memory, %KSYNC_PRESSURE_SRC_PSI_SYSTEM).
 *
 * Theory of operation. A PSI file takes one trigger per open file
 * description: "some|full <stall us> <window us>" makes the kernel raise
 * POLLPRI on that fd each time the tasks of the group (or of the system)
 * stalled on memory for @stall within a moving @window (at most once per
 * window). So each level LOW, MEDIUM, CRITICAL gets an fd of its own, with
 * its trigger from the config (GLib's defaults where it is zero), and the
 * fd's readiness stands for its level (fd_level[]). The kernel consumes the
 * event when it reports it (its poll clears the trigger's flag): there is
 * nothing to read, nothing to drain.
 *
 * Which windows a kernel accepts depends on its version and the process's
 * privilege (paths.c, ksync__psrc_psi_arm()): each level takes the first
 * candidate the kernel accepts, and the description says which was taken
 * when it is not the one asked for.
 *
 * A cgroup that is removed while watched wakes its triggers' waiters with
 * POLLERR | POLLHUP: ready() reports -ENODEV and the monitor goes on
 * without the source. Failures to open are the environment's: no PSI file
 * (a kernel without CONFIG_PSI, or booted with psi=0), no permission to
 * write a trigger (EACCES, EPERM: an older kernel without CAP_SYS_RESOURCE,
 * a cgroup file not delegated), every window refused; each leaves the
 * source off, saying why.
 */
#define _GNU_SOURCE
#include "sources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const level_names[KSYNC_PRESSURE_NR_LEVELS] = { "none", "low", "medium", "critical" };

/* "some 70 ms/2 s" into @buf. */
static const char *trigger_text(char *buf, size_t len, const struct ksync_pressure_trigger *t)
{
	char a[24], b[24];

	snprintf(buf, len, "%s %s/%s", t->full ? "full" : "some", ksync__psrc_us(a, sizeof(a), t->stall_us),
		 ksync__psrc_us(b, sizeof(b), t->window_us));
	return buf;
}

/*
 * psi_open() - one fd per level on @path (@shown: the path as the process
 * sees it, for the description).
 */
static int psi_open(struct ksync__psrc *s, const struct ksync__penv *env, const char *path,
		    const char *shown)
{
	char levels[3][64], moved[96] = "";
	int r;

	s->nr_fds = 0;
	for (int level = KSYNC_PRESSURE_LOW; level <= KSYNC_PRESSURE_CRITICAL; level++) {
		struct ksync_pressure_trigger asked = ksync__psrc_trigger(env, level), taken;
		int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

		if (fd < 0) {
			r = -errno;
			if (r == -ENOENT)
				ksync__psrc_desc(s, "no %s (kernel without PSI, or psi=0)", shown);
			else if (r == -EACCES || r == -EPERM)
				ksync__psrc_desc(s, "no permission to write a trigger to %s", shown);
			else if (r == -EOPNOTSUPP)
				ksync__psrc_desc(s, "PSI is disabled (%s: %s)", shown, strerror(-r));
			else
				ksync__psrc_desc(s, "cannot open %s: %s", shown, strerror(-r));
			return r;
		}
		s->fd[s->nr_fds] = fd;
		s->fd_events[s->nr_fds] = EPOLLPRI;
		s->fd_level[s->nr_fds] = level;
		s->nr_fds++;
		r = ksync__psrc_psi_arm(fd, env, &asked, &taken);
		if (r == -EACCES || r == -EPERM) {
			ksync__psrc_desc(s, "no permission to write a trigger to %s (%s)", shown,
					 strerror(-r));
			return r;
		}
		if (r == -EINVAL) {
			char t[64];

			ksync__psrc_desc(s, "%s refused every window for %s (%s)", shown,
					 level_names[level], trigger_text(t, sizeof(t), &asked));
			return r;
		}
		if (r < 0) {
			ksync__psrc_desc(s, "cannot write a trigger to %s: %s", shown, strerror(-r));
			return r;
		}
		trigger_text(levels[level - 1], sizeof(levels[0]), &taken);
		if (taken.window_us != asked.window_us && !moved[0]) {
			char a[24], b[24];

			snprintf(moved, sizeof(moved), " (window %s refused, %s taken)",
				 ksync__psrc_us(a, sizeof(a), asked.window_us),
				 ksync__psrc_us(b, sizeof(b), taken.window_us));
		}
	}
	ksync__psrc_desc(s, "%s, low %s, medium %s, critical %s%s", shown, levels[0], levels[1],
			 levels[2], moved);
	return 0;
}

static int psi_system_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	char path[KSYNC__PATH_MAX];
	struct stat st;
	int r;

	if ((r = ksync__psrc_path(path, env, "/proc/pressure/memory")) < 0) {
		ksync__psrc_desc(s, "the root is too long");
		return r;
	}
	*strrchr(path, '/') = '\0';
	if (stat(path, &st) < 0) {
		r = -errno;
		ksync__psrc_desc(s, "no /proc/pressure (kernel without PSI, or psi=0)");
		return r;
	}
	path[strlen(path)] = '/'; /* back to .../proc/pressure/memory */
	return psi_open(s, env, path, "/proc/pressure/memory");
}

static int psi_cgroup_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	char dir[KSYNC__PATH_MAX], rel[KSYNC__PATH_MAX], path[KSYNC__PATH_MAX], shown[KSYNC__PATH_MAX];
	int r;

	r = ksync__psrc_cgroup_v2_dir(env, dir, rel);
	if (r == -ENOENT) {
		ksync__psrc_desc(s, "no cgroup v2 directory (no \"0::\" line in "
				    "/proc/self/cgroup, or no cgroup2 mount that shows it)");
		return r;
	}
	if (r < 0) {
		ksync__psrc_desc(s, "cannot find the cgroup v2 directory: %s", strerror(-r));
		return r;
	}
	if (snprintf(path, sizeof(path), "%s/memory.pressure", dir) >= (int)sizeof(path) ||
	    snprintf(shown, sizeof(shown), "%s/memory.pressure", rel) >= (int)sizeof(shown)) {
		ksync__psrc_desc(s, "the cgroup path is too long");
		return -ENAMETOOLONG;
	}
	return psi_open(s, env, path, shown);
}

/*
 * psi_ready() - POLLPRI: the fd's level. POLLERR/POLLHUP first: the file
 * went away (the cgroup was removed), the source is dead.
 */
static int psi_ready(struct ksync__psrc *s, int i, uint32_t revents)
{
	if (revents & (EPOLLERR | EPOLLHUP)) {
		ksync__psrc_desc(s, "the PSI file went away (POLLERR: the cgroup was removed)");
		s->status = -ENODEV;
		return -ENODEV;
	}
	if (revents & EPOLLPRI)
		return s->fd_level[i];
	return KSYNC_PRESSURE_NONE;
}

static void psi_close(struct ksync__psrc *s)
{
	ksync__psrc_close_fds(s);
}

const struct ksync__psrc_ops ksync__psrc_psi_cgroup_ops = {
	.kind = KSYNC_PRESSURE_SRC_PSI_CGROUP,
	.open = psi_cgroup_open,
	.ready = psi_ready,
	.sample = NULL,
	.close = psi_close,
};

const struct ksync__psrc_ops ksync__psrc_psi_system_ops = {
	.kind = KSYNC_PRESSURE_SRC_PSI_SYSTEM,
	.open = psi_system_open,
	.ready = psi_ready,
	.sample = NULL,
	.close = psi_close,
};
