/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/vmpressure.c - cgroup v1's vmpressure notifications
 * (%KSYNC_PRESSURE_SRC_VMPRESSURE), for hosts whose memory controller is
 * still bound to v1.
 *
 * Theory of operation. The v1 memory controller rates each reclaim pass of
 * a group by its scanned:reclaimed ratio and signals the eventfds that
 * registered for the level reached (low, medium, critical). A registration
 * is one write to the group's cgroup.event_control: "<eventfd>
 * <fd of memory.pressure_level> <level>". So the source opens
 * memory.pressure_level once (kept open: the registration holds it), makes
 * one eventfd per level, registers each, and waits for EPOLLIN on the
 * eventfds.
 *
 * The kernel signals every registration whose level is at or below the
 * event's (mm/vmpressure.c, vmpressure_event(): "if (level < ev->level)
 * continue"): a critical event increments the critical, the medium and the
 * low eventfd. So an eventfd's counter is the number of events *at or
 * above* its level, and the events of exactly level L are the counter of L
 * less the counter of L + 1. ready() reads all three counters, lowest level
 * first, into running totals, and reports the highest level whose exact
 * count grew (one event; the other eventfds are drained, so their pending
 * readiness reads nothing). The kernel signals the registrations in list
 * order, the newest first (critical, then medium, then low, as registered
 * low first), and the counters are read the other way round: a read that
 * overlaps a signalling sees a higher level's increment without the lower
 * one's, a dip that the next read fills, never an event that is not there
 * (@taken keeps the exact counts already reported, so a dip is not counted
 * twice).
 *
 * A group that is removed signals its eventfds once more as it drops the
 * registrations: ready() therefore checks that the group's directory still
 * exists before it believes an event, and reports -ENODEV when it does not.
 */
#define _GNU_SOURCE
#include "sources.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

struct vmp_priv {
	int level_fd; /* memory.pressure_level */
	uint64_t total[KSYNC_PRESSURE_NR_LEVELS]; /* counters read: events at or above the level */
	uint64_t taken[KSYNC_PRESSURE_NR_LEVELS]; /* exact events of the level reported so far */
	char dir[KSYNC__PATH_MAX];
};

static int vmp_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	static const char *const names[KSYNC_PRESSURE_NR_LEVELS] = { NULL, "low", "medium", "critical" };
	char path[KSYNC__PATH_MAX + 32], rel[KSYNC__PATH_MAX];
	struct vmp_priv *p;
	int ctl, r;

	s->nr_fds = 0;
	s->priv = NULL;
	if (!(p = KSYNC__ALLOC(malloc(sizeof(*p))))) {
		ksync__psrc_desc(s, "out of memory");
		return -ENOMEM;
	}
	memset(p, 0, sizeof(*p));
	p->level_fd = -1;
	s->priv = p;
	r = ksync__psrc_cgroup_v1_memory_dir(env, p->dir, rel);
	if (r < 0) {
		ksync__psrc_desc(s, "no cgroup v1 memory controller%s%s",
				 r == -ENOENT ? "" : ": ", r == -ENOENT ? "" : strerror(-r));
		return r;
	}
	snprintf(path, sizeof(path), "%s/memory.pressure_level", p->dir);
	p->level_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->level_fd < 0) {
		r = -errno;
		ksync__psrc_desc(s, "cannot open %s/memory.pressure_level: %s", rel, strerror(-r));
		return r;
	}
	snprintf(path, sizeof(path), "%s/cgroup.event_control", p->dir);
	ctl = open(path, O_WRONLY | O_CLOEXEC);
	if (ctl < 0) {
		r = -errno;
		ksync__psrc_desc(s, "cannot open %s/cgroup.event_control: %s", rel, strerror(-r));
		return r;
	}
	for (int level = KSYNC_PRESSURE_LOW; level <= KSYNC_PRESSURE_CRITICAL; level++) {
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), n;
		char line[64];

		if (efd < 0) {
			r = -errno;
			ksync__psrc_desc(s, "eventfd(): %s", strerror(-r));
			close(ctl);
			return r;
		}
		s->fd[s->nr_fds] = efd;
		s->fd_events[s->nr_fds] = EPOLLIN;
		s->fd_level[s->nr_fds] = level;
		s->nr_fds++;
		n = snprintf(line, sizeof(line), "%d %d %s\n", efd, p->level_fd, names[level]);
		errno = 0;
		if (write(ctl, line, (size_t)n) != n) {
			r = errno ? -errno : -EIO;
			ksync__psrc_desc(s, "cannot register with %s/cgroup.event_control: %s", rel,
					 strerror(-r));
			close(ctl);
			return r;
		}
	}
	close(ctl);
	ksync__psrc_desc(s, "%s/memory.pressure_level, low, medium, critical", rel);
	return 0;
}

/* Add what the eventfd of @level holds to its total: true when it held something. */
static bool vmp_drain(struct ksync__psrc *s, struct vmp_priv *p, int level)
{
	for (int j = 0; j < s->nr_fds; j++) {
		uint64_t count;
		ssize_t n;

		if (s->fd_level[j] != level)
			continue;
		do
			n = read(s->fd[j], &count, sizeof(count));
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(count))
			return false; /* EAGAIN: nothing */
		p->total[level] += count;
		return true;
	}
	return false;
}

static int vmp_ready(struct ksync__psrc *s, int i, uint32_t revents)
{
	struct vmp_priv *p = s->priv;
	int found = KSYNC_PRESSURE_NONE;
	bool any = false;
	struct stat st;

	(void)i;
	(void)revents;
	/* Every counter, the lowest level first (see the theory above). */
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++)
		any |= vmp_drain(s, p, l);
	if (!any)
		return KSYNC_PRESSURE_NONE; /* drained by an earlier ready() of this pass */
	if (stat(p->dir, &st) < 0) {
		ksync__psrc_desc(s, "the memory cgroup was removed");
		s->status = -ENODEV;
		return -ENODEV;
	}
	for (int l = KSYNC_PRESSURE_CRITICAL; l >= KSYNC_PRESSURE_LOW; l--) {
		uint64_t above = l < KSYNC_PRESSURE_CRITICAL ? p->total[l + 1] : 0;
		uint64_t exact = p->total[l] > above ? p->total[l] - above : 0;

		if (exact > p->taken[l]) {
			p->taken[l] = exact;
			if (found == KSYNC_PRESSURE_NONE)
				found = l;
		}
	}
	return found;
}

static void vmp_close(struct ksync__psrc *s)
{
	struct vmp_priv *p = s->priv;

	ksync__psrc_close_fds(s);
	if (p) {
		if (p->level_fd >= 0)
			close(p->level_fd);
		free(p);
		s->priv = NULL;
	}
}

const struct ksync__psrc_ops ksync__psrc_vmpressure_ops = {
	.kind = KSYNC_PRESSURE_SRC_VMPRESSURE,
	.open = vmp_open,
	.ready = vmp_ready,
	.sample = NULL,
	.close = vmp_close,
};
