/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/paths.c - the environment the sources open in: files under
 * the config's root, the process's cgroup directories, the kernel's version
 * and privilege, and the PSI trigger write with its window fallback.
 *
 * Theory of operation. Every path a source opens is the config's root
 * followed by the path the process would see ("" = the real system; a test
 * passes a directory holding a fake /proc and /sys). The cgroup directory of
 * the process is found as the kernel's own tools find it: the line of
 * /proc/self/cgroup for the hierarchy (v2: "0::/path"; v1 memory: the line
 * whose controller list holds "memory"), then the mount of that hierarchy in
 * /proc/self/mountinfo (v2: fstype cgroup2; v1: fstype cgroup with "memory"
 * in its super options). A mount shows the hierarchy from its root field
 * down (a container's bind mount of its own subtree, a cgroup namespace), so
 * the cgroup path is taken relative to that root; a path outside it is not
 * visible through that mount. Where several mounts qualify, the last one
 * wins (it hides the earlier ones).
 *
 * PSI triggers: the kernel's rules differ by version and privilege (see
 * ksync_pressure_psi_windows() in parse.c), and what the kernel says is the
 * only truth: ksync__psrc_psi_arm() writes the candidates in order and
 * takes the first one accepted, stopping at the first error that is not
 * EINVAL (no permission is not cured by another window). Writes go through
 * the test hook of seams.c when one is set.
 *
 * Nothing here reports misuse: every failure is the environment's, and the
 * callers turn it into their description.
 */
#define _GNU_SOURCE
#include "sources.h"

#include <ksync/impl/seams.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/** ksync__psrc_desc() - printf into s->desc (truncated to KSYNC__PSRC_DESC). */
void ksync__psrc_desc(struct ksync__psrc *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->desc, sizeof(s->desc), fmt, ap);
	va_end(ap);
}

/** ksync__psrc_path() - the root of @env, then @path; -ENAMETOOLONG past KSYNC__PATH_MAX. */
int ksync__psrc_path(char *out, const struct ksync__penv *env, const char *path)
{
	int n = snprintf(out, KSYNC__PATH_MAX, "%s%s", env->cfg.root ? env->cfg.root : "", path);

	return n < 0 || n >= KSYNC__PATH_MAX ? -ENAMETOOLONG : 0;
}

/** ksync__psrc_read_file() - read all of @path (up to @cap - 1 bytes); length or -errno. */
ssize_t ksync__psrc_read_file(const char *path, char *buf, size_t cap)
{
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got + 1 < cap) {
		ssize_t n = read(fd, buf + got, cap - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

/* The whole of @path in a malloc'd buffer (grown up to 4 MiB); length or -errno. */
static ssize_t read_all(const char *path, char **out)
{
	size_t cap = 16384;

	for (;;) {
		char *buf = KSYNC__ALLOC(malloc(cap));
		ssize_t n;

		if (!buf)
			return -ENOMEM;
		n = ksync__psrc_read_file(path, buf, cap);
		if (n < 0 || (size_t)n + 1 < cap || cap >= (4u << 20)) {
			if (n < 0)
				free(buf);
			else
				*out = buf;
			return n;
		}
		free(buf);
		cap *= 2;
	}
}

/*
 * The directory of @cg_path (a path of the hierarchy) under @m, or false
 * when @m's root does not hold it: the mount point, then what of @cg_path
 * lies below the mount's root.
 */
static bool under_mount(const struct ksync_pressure_mount *m, const char *cg_path, char *rel)
{
	size_t rl = strlen(m->root);
	const char *sub;
	int n;

	if (strcmp(m->root, "/") == 0) {
		sub = cg_path;
	} else {
		if (strncmp(cg_path, m->root, rl) != 0 || (cg_path[rl] != '/' && cg_path[rl] != '\0'))
			return false;
		sub = cg_path + rl;
	}
	if (strcmp(sub, "/") == 0 || sub[0] == '\0')
		n = snprintf(rel, KSYNC__PATH_MAX, "%s", m->mountpoint);
	else if (strcmp(m->mountpoint, "/") == 0)
		n = snprintf(rel, KSYNC__PATH_MAX, "%s", sub);
	else
		n = snprintf(rel, KSYNC__PATH_MAX, "%s%s", m->mountpoint, sub);
	return n > 0 && n < KSYNC__PATH_MAX;
}

static int cgroup_dir(const struct ksync__penv *env, bool v2, char *out, char *rel_out)
{
	struct ksync_pressure_cgroup *cg = KSYNC__ALLOC(malloc(sizeof(*cg)));
	struct ksync_pressure_mount *m = KSYNC__ALLOC(malloc(sizeof(*m)));
	char *path = KSYNC__ALLOC(malloc(KSYNC__PATH_MAX)), *rel = KSYNC__ALLOC(malloc(KSYNC__PATH_MAX));
	char *text = NULL, *line, *next;
	const char *cg_path;
	ssize_t n;
	int r = -ENOMEM;
	bool found = false;

	if (!cg || !m || !path || !rel)
		goto out;
	if ((r = ksync__psrc_path(path, env, "/proc/self/cgroup")) < 0)
		goto out;
	if ((n = read_all(path, &text)) < 0) {
		r = (int)n;
		goto out;
	}
	if ((r = ksync_pressure_parse_cgroup(text, (size_t)n, cg)) < 0)
		goto out;
	free(text);
	text = NULL;
	r = -ENOENT;
	if (v2 ? !cg->has_v2 : !cg->has_v1_memory)
		goto out;
	cg_path = v2 ? cg->v2 : cg->v1_memory;
	if ((r = ksync__psrc_path(path, env, "/proc/self/mountinfo")) < 0)
		goto out;
	if ((n = read_all(path, &text)) < 0) {
		r = (int)n;
		goto out;
	}
	for (line = text; line < text + n; line = next) {
		char *nl = memchr(line, '\n', (size_t)(text + n - line));

		next = nl ? nl + 1 : text + n;
		if (ksync_pressure_parse_mountinfo_line(line, (size_t)(next - line), m) < 0)
			continue; /* a line too long for us is no cgroup mount */
		if (v2 ? strcmp(m->fstype, "cgroup2") != 0
		       : strcmp(m->fstype, "cgroup") != 0 || !ksync_pressure_option_has(m->super_options, "memory"))
			continue;
		if (!under_mount(m, cg_path, rel))
			continue;
		if (ksync__psrc_path(path, env, rel) < 0)
			continue;
		strcpy(out, path);
		if (rel_out)
			strcpy(rel_out, rel);
		found = true; /* the last mount that qualifies wins */
	}
	r = found ? 0 : -ENOENT;
out:
	free(text);
	free(cg);
	free(m);
	free(path);
	free(rel);
	return r;
}

/** ksync__psrc_cgroup_v2_dir() - see sources.h. */
int ksync__psrc_cgroup_v2_dir(const struct ksync__penv *env, char *out, char *rel)
{
	return cgroup_dir(env, true, out, rel);
}

/** ksync__psrc_cgroup_v1_memory_dir() - see sources.h. */
int ksync__psrc_cgroup_v1_memory_dir(const struct ksync__penv *env, char *out, char *rel)
{
	return cgroup_dir(env, false, out, rel);
}

/** ksync__psrc_kernel() - see sources.h. */
void ksync__psrc_kernel(const struct ksync__penv *env, unsigned *major, unsigned *minor, int *cap)
{
	char path[KSYNC__PATH_MAX], buf[4096];
	uint64_t capeff = 0;
	ssize_t n;

	*major = *minor = 0;
	*cap = 0;
	if (ksync__psrc_path(path, env, "/proc/sys/kernel/osrelease") == 0 &&
	    (n = ksync__psrc_read_file(path, buf, sizeof(buf))) > 0) {
		ksync_pressure_parse_kernel_release(buf, (size_t)n, major, minor);
	} else {
		struct utsname u;

		if (uname(&u) == 0)
			ksync_pressure_parse_kernel_release(u.release, strlen(u.release), major, minor);
	}
	if (ksync__psrc_path(path, env, "/proc/self/status") == 0 &&
	    (n = ksync__psrc_read_file(path, buf, sizeof(buf))) > 0 &&
	    ksync_pressure_parse_capeff(buf, (size_t)n, &capeff) == 0)
		*cap = !!(capeff >> KSYNC_PRESSURE_CAP_SYS_RESOURCE & 1);
}

/** ksync__psrc_write_trigger() - see sources.h. */
long ksync__psrc_write_trigger(int fd, const char *buf, size_t len)
{
	ssize_t n;

#if KSYNC_SEAMS
	/* H2: pairs with H1 in ksync_pressure_set_write_hook(). */
	ksync_pressure_write_fn hook = __atomic_load_n(&ksync__pressure_write_hook, __ATOMIC_ACQUIRE);

	if (hook)
		return hook(fd, buf, len, __atomic_load_n(&ksync__pressure_write_arg, __ATOMIC_RELAXED));
#endif
	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : (long)n;
}

/** ksync__psrc_psi_arm() - see sources.h. */
int ksync__psrc_psi_arm(int fd, const struct ksync__penv *env,
			const struct ksync_pressure_trigger *asked, struct ksync_pressure_trigger *taken)
{
	struct ksync_pressure_trigger cand[KSYNC_PRESSURE_MAX_WINDOWS];
	unsigned major, minor;
	int cap, n;

	ksync__psrc_kernel(env, &major, &minor, &cap);
	n = ksync_pressure_psi_windows(asked, major, minor, cap, cand);
	for (int i = 0; i < n; i++) {
		char text[64];
		size_t len = ksync_pressure_format_trigger(text, sizeof(text), &cand[i]);
		long r;

		/* With its NUL: the kernel overwrites the last byte written with one. */
		r = ksync__psrc_write_trigger(fd, text, len + 1);
		if (r == -EINVAL)
			continue;
		if (r < 0)
			return (int)r;
		*taken = cand[i];
		return 0;
	}
	return -EINVAL;
}

/** ksync__psrc_trigger() - see sources.h. */
struct ksync_pressure_trigger ksync__psrc_trigger(const struct ksync__penv *env, int level)
{
	static const struct ksync_pressure_trigger dflt[KSYNC_PRESSURE_NR_LEVELS] = {
		[KSYNC_PRESSURE_LOW] = { 0, 70000, 2000000 },
		[KSYNC_PRESSURE_MEDIUM] = { 0, 100000, 2000000 },
		[KSYNC_PRESSURE_CRITICAL] = { 1, 100000, 2000000 },
	};
	struct ksync_pressure_trigger t = env->cfg.trigger[level];

	if (t.stall_us == 0 || t.window_us == 0 || t.stall_us > t.window_us)
		t = dflt[level];
	return t;
}

/** ksync__psrc_us() - see sources.h. */
const char *ksync__psrc_us(char *buf, size_t len, uint32_t us)
{
	if (us % 1000000 == 0)
		snprintf(buf, len, "%u s", (unsigned)(us / 1000000));
	else if (us % 1000 == 0)
		snprintf(buf, len, "%u ms", (unsigned)(us / 1000));
	else
		snprintf(buf, len, "%u us", (unsigned)us);
	return buf;
}

/** ksync__psrc_close_fds() - see sources.h. */
void ksync__psrc_close_fds(struct ksync__psrc *s)
{
	for (int i = 0; i < s->nr_fds && i < KSYNC__PSRC_MAX_FDS; i++) {
		if (s->fd[i] >= 0)
			close(s->fd[i]);
		s->fd[i] = -1;
	}
	s->nr_fds = 0;
}
