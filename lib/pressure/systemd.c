/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/systemd.c - systemd's memory pressure protocol
 * (%KSYNC_PRESSURE_SRC_SYSTEMD): $MEMORY_PRESSURE_WATCH and
 * $MEMORY_PRESSURE_WRITE, as systemd (v254+) sets them for a service whose
 * unit has MemoryPressureWatch= (the monitor passes them in
 * cfg.systemd_watch and cfg.systemd_write; NULL is unset).
 *
 * Theory of operation. WATCH names what to watch, WRITE (base64) what to
 * write to it first:
 *  - unset: the service was not started so: off;
 *  - /dev/null: the unit turned it off (MemoryPressureWatch=off): off;
 *  - an AF_UNIX stream socket (a service manager's or a proxy's): connect,
 *    write the decoded WRITE (nonblocking: a peer that takes nothing leaves
 *    the source off, it does not block the monitor's create), wait for EPOLLIN; any data read is one event
 *    (drained), end of file or a reset is the peer gone (-EPIPE);
 *  - a FIFO: open it for reading, wait for EPOLLIN; whatever a writer puts
 *    in is one event (drained). The source keeps a write end of its own
 *    open, so that a writer that closes does not leave the read end in
 *    POLLHUP forever (epoll would report it in a loop);
 *  - anything else is taken as a PSI file (memory.pressure of the unit's
 *    cgroup): open it read-write, write the decoded WRITE as a PSI trigger
 *    (through the window fallback of paths.c when it parses as one; an
 *    empty WRITE takes the MEDIUM trigger of the config), wait for EPOLLPRI.
 * WRITE that is not base64 leaves the source off, saying so.
 *
 * Levels: systemd's protocol carries one threshold (the unit's
 * MemoryPressureThresholdSec=, 200 ms per 2 s by default), not three; its
 * event is reported as %KSYNC_PRESSURE_MEDIUM.
 */
#define _GNU_SOURCE
#include "sources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum watch_kind { WATCH_PSI, WATCH_SOCKET, WATCH_FIFO };

struct systemd_priv {
	enum watch_kind kind;
	int fifo_writer; /* the FIFO's own write end, -1 otherwise */
};

/*
 * Send all of @len bytes on a fresh, nonblocking socket: 0 or -errno. A
 * trigger is a few dozen bytes and the socket's buffer empty: EAGAIN means
 * a peer that takes nothing, and the source stays off rather than block
 * ksync_pressure_create().
 */
static int write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* @trig: the decoded WRITE as the unit gave it (its NUL too, if it has one). */
static int open_socket(struct ksync__psrc *s, const char *watch, const unsigned char *trig, size_t tlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(watch) >= sizeof(sa.sun_path)) {
		ksync__psrc_desc(s, "the socket path %s is too long", watch);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, watch);
	/* Nonblocking from the start: a listener whose backlog is full says EAGAIN, it does not block us. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		ksync__psrc_desc(s, "socket(): %s", strerror(-r));
		return r;
	}
	s->fd[0] = fd;
	s->nr_fds = 1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		ksync__psrc_desc(s, "cannot connect to %s: %s", watch, strerror(-r));
		return r;
	}
	if (tlen && (r = write_all(fd, trig, tlen)) < 0) {
		ksync__psrc_desc(s, "cannot write the trigger to %s: %s", watch, strerror(-r));
		return r;
	}
	s->fd_events[0] = EPOLLIN;
	ksync__psrc_desc(s, "socket %s%s (one threshold: medium)", watch,
			 tlen ? ", trigger written" : "");
	return 0;
}

static int open_fifo(struct ksync__psrc *s, struct systemd_priv *p, const char *watch)
{
	int fd = open(watch, O_RDONLY | O_NONBLOCK | O_CLOEXEC), r;

	if (fd < 0) {
		r = -errno;
		ksync__psrc_desc(s, "cannot open the FIFO %s: %s", watch, strerror(-r));
		return r;
	}
	s->fd[0] = fd;
	s->nr_fds = 1;
	/* Our own writer: the read end never sees the last writer go (no POLLHUP loop). */
	p->fifo_writer = open(watch, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (p->fifo_writer < 0) {
		r = -errno;
		ksync__psrc_desc(s, "cannot open the FIFO %s for writing: %s", watch, strerror(-r));
		return r;
	}
	s->fd_events[0] = EPOLLIN;
	ksync__psrc_desc(s, "FIFO %s (one threshold: medium)", watch);
	return 0;
}

/* @trig: the decoded trigger, @tlen bytes without NULs, NUL-terminated. */
static int open_psi(struct ksync__psrc *s, const struct ksync__penv *env, const char *watch,
		    const unsigned char *trig, size_t tlen)
{
	struct ksync_pressure_trigger asked, taken;
	char a[24], b[24];
	int fd = open(watch, O_RDWR | O_NONBLOCK | O_CLOEXEC), r;

	if (fd < 0) {
		r = -errno;
		if (r == -EACCES || r == -EPERM)
			ksync__psrc_desc(s, "no permission to write a trigger to %s", watch);
		else
			ksync__psrc_desc(s, "cannot open %s: %s", watch, strerror(-r));
		return r;
	}
	s->fd[0] = fd;
	s->nr_fds = 1;
	s->fd_events[0] = EPOLLPRI;
	if (tlen == 0) {
		asked = ksync__psrc_trigger(env, KSYNC_PRESSURE_MEDIUM);
		r = ksync__psrc_psi_arm(fd, env, &asked, &taken);
	} else if (ksync_pressure_parse_trigger((const char *)trig, tlen, &asked) == 0 &&
		   asked.stall_us > 0 && asked.stall_us <= asked.window_us) {
		r = ksync__psrc_psi_arm(fd, env, &asked, &taken);
	} else { /* not a trigger we understand: the kernel decides (with the NUL it expects) */
		long n = ksync__psrc_write_trigger(fd, (const char *)trig, tlen + 1);

		r = n < 0 ? (int)n : 0;
		if (r == 0) {
			ksync__psrc_desc(s, "%s, the unit's trigger written as is (one threshold: medium)",
					 watch);
			return 0;
		}
	}
	if (r == -EACCES || r == -EPERM) {
		ksync__psrc_desc(s, "no permission to write a trigger to %s", watch);
		return r;
	}
	if (r < 0) {
		ksync__psrc_desc(s, "%s refused the trigger: %s", watch, strerror(-r));
		return r;
	}
	ksync__psrc_desc(s, "%s, %s %s/%s%s (one threshold: medium)", watch,
			 taken.full ? "full" : "some", ksync__psrc_us(a, sizeof(a), taken.stall_us),
			 ksync__psrc_us(b, sizeof(b), taken.window_us),
			 taken.window_us != asked.window_us ? " (the window asked for was refused)"
			 : tlen ? "" : " (no MEMORY_PRESSURE_WRITE: the medium trigger)");
	return 0;
}

static int systemd_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	const char *watch = env->cfg.systemd_watch, *write64 = env->cfg.systemd_write;
	unsigned char trig[512];
	size_t tlen = 0;
	struct systemd_priv *p;
	struct stat st;
	int r;

	s->nr_fds = 0;
	s->priv = NULL;
	s->fd_level[0] = KSYNC_PRESSURE_MEDIUM;
	if (!watch || !watch[0]) {
		ksync__psrc_desc(s, "not started by systemd with MemoryPressureWatch=");
		return -ENOENT;
	}
	if (strcmp(watch, "/dev/null") == 0) {
		ksync__psrc_desc(s, "disabled by the unit (MEMORY_PRESSURE_WATCH=/dev/null)");
		return -ENOENT;
	}
	if (write64 && write64[0]) {
		r = ksync_pressure_base64_decode(write64, strlen(write64), trig, sizeof(trig), &tlen);
		if (r < 0) {
			ksync__psrc_desc(s, "MEMORY_PRESSURE_WRITE is not %s",
					 r == -ENOSPC ? "a trigger (too long)" : "valid base64");
			return -EINVAL;
		}
	}
	if (stat(watch, &st) < 0) {
		r = -errno;
		ksync__psrc_desc(s, "MEMORY_PRESSURE_WATCH=%s: %s", watch, strerror(-r));
		return r;
	}
	if (!(p = KSYNC__ALLOC(malloc(sizeof(*p))))) {
		ksync__psrc_desc(s, "out of memory");
		return -ENOMEM;
	}
	p->fifo_writer = -1;
	s->priv = p;
	if (S_ISSOCK(st.st_mode)) {
		p->kind = WATCH_SOCKET;
		return open_socket(s, watch, trig, tlen);
	}
	if (S_ISFIFO(st.st_mode)) {
		p->kind = WATCH_FIFO;
		return open_fifo(s, p, watch);
	}
	p->kind = WATCH_PSI;
	/*
	 * systemd encodes the trigger with its NUL (the kernel overwrites the
	 * last byte written with one): a PSI file gets the text without its
	 * NULs, and the write adds exactly one.
	 */
	while (tlen && trig[tlen - 1] == '\0')
		tlen--;
	if (tlen == sizeof(trig)) {
		ksync__psrc_desc(s, "MEMORY_PRESSURE_WRITE is not a trigger (too long)");
		return -EINVAL;
	}
	trig[tlen] = '\0';
	return open_psi(s, env, watch, trig, tlen);
}

/*
 * Read everything there is, up to 64 KiB a call (a peer that floods us gets
 * the rest read at the next readiness, not an endless loop here).
 * Return: >0 something read, 0 end of file, -errno (-EAGAIN: nothing).
 */
static ssize_t drain(int fd)
{
	char buf[256];
	ssize_t total = 0, n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			total += n;
			if (total >= 65536)
				return total;
			continue;
		}
		if (n == 0)
			return total; /* end of file: 0 unless data came first */
		return total ? total : -errno;
	}
}

static int systemd_ready(struct ksync__psrc *s, int i, uint32_t revents)
{
	struct systemd_priv *p = s->priv;
	ssize_t n;

	if (p->kind == WATCH_PSI) {
		if (revents & (EPOLLERR | EPOLLHUP)) {
			ksync__psrc_desc(s, "the PSI file went away (POLLERR: the cgroup was removed)");
			s->status = -ENODEV;
			return -ENODEV;
		}
		return revents & EPOLLPRI ? s->fd_level[i] : KSYNC_PRESSURE_NONE;
	}
	n = drain(s->fd[i]);
	if (n > 0)
		return s->fd_level[i];
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return (revents & (EPOLLERR | EPOLLHUP)) && p->kind == WATCH_SOCKET ? -EPIPE : KSYNC_PRESSURE_NONE;
	if (p->kind == WATCH_FIFO && n == 0)
		return KSYNC_PRESSURE_NONE; /* cannot happen while we hold a writer */
	ksync__psrc_desc(s, "socket closed (%s)", n == 0 ? "end of file" : strerror((int)-n));
	s->status = -EPIPE;
	return -EPIPE;
}

static void systemd_close(struct ksync__psrc *s)
{
	struct systemd_priv *p = s->priv;

	ksync__psrc_close_fds(s);
	if (p) {
		if (p->fifo_writer >= 0)
			close(p->fifo_writer);
		free(p);
		s->priv = NULL;
	}
}

const struct ksync__psrc_ops ksync__psrc_systemd_ops = {
	.kind = KSYNC_PRESSURE_SRC_SYSTEMD,
	.open = systemd_open,
	.ready = systemd_ready,
	.sample = NULL,
	.close = systemd_close,
};
