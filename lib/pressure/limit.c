/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/limit.c - the polled sources: usage against a limit.
 *
 * Theory of operation. Where the kernel gives no event (no PSI, no v1
 * vmpressure) or a program wants a bound of its own, the monitor polls:
 * its timer calls sample(), faster as the level rises, and after each
 * priority step of a round (a level below the round's means relieved).
 * Each source reads one figure and its limit, and the level is the highest
 * whose share of the limit (cfg.limit_permille, 800/900/950 per mille where
 * zero) the figure reaches (ksync_pressure_level_of(), parse.c):
 *  - %KSYNC_PRESSURE_SRC_LIMIT: the memory cgroup's usage against its
 *    limit. cgroup v2 first: the lowest memory.max or memory.high of the
 *    process's directory and its ancestors (a parent's limit binds its
 *    children), measured by that directory's memory.current; else cgroup
 *    v1: the lowest memory.limit_in_bytes the same way, measured by that
 *    directory's memory.usage_in_bytes. No limit
 *    anywhere (only "max", v1's huge unlimited value): off, "no limit";
 *  - %KSYNC_PRESSURE_SRC_MEMINFO: memory used (MemTotal - MemAvailable)
 *    against MemTotal, from /proc/meminfo;
 *  - %KSYNC_PRESSURE_SRC_BUDGET: the process's resident set
 *    (/proc/self/statm, resident pages times the page size) against
 *    cfg.budget_bytes.
 * open() samples once, so a source that opens can be read. s->figure and
 * s->limit hold the last reading. A file that vanishes later (the cgroup
 * removed) makes sample() return its negative errno, saying so in s->desc.
 */
#define _GNU_SOURCE
#include "sources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum poll_kind { POLL_CGROUP, POLL_MEMINFO, POLL_BUDGET };

struct poll_priv {
	enum poll_kind kind;
	unsigned permille[KSYNC_PRESSURE_NR_LEVELS];
	uint64_t page_size;
	char file[KSYNC__PATH_MAX];  /* what sample() reads */
	char shown[KSYNC__PATH_MAX]; /* the same, as the process sees it */
	char limdir[KSYNC__PATH_MAX]; /* POLL_CGROUP: the directory whose limit binds */
	bool v2;                      /* POLL_CGROUP: limdir is a v2 directory */
};

static const unsigned default_permille[KSYNC_PRESSURE_NR_LEVELS] = { 0, 800, 900, 950 };

static struct poll_priv *priv_new(struct ksync__psrc *s, const struct ksync__penv *env, enum poll_kind kind)
{
	struct poll_priv *p = KSYNC__ALLOC(calloc(1, sizeof(*p)));

	s->nr_fds = 0;
	s->priv = p;
	if (!p) {
		ksync__psrc_desc(s, "out of memory");
		return NULL;
	}
	p->kind = kind;
	for (int l = KSYNC_PRESSURE_LOW; l <= KSYNC_PRESSURE_CRITICAL; l++)
		p->permille[l] = env->cfg.limit_permille[l] ? env->cfg.limit_permille[l] : default_permille[l];
	return p;
}

/* "1.5 GiB"-like text of @bytes (KiB..TiB, one decimal). */
static const char *bytes_text(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;
	uint64_t whole = bytes, tenth = 0;

	while (whole >= 1024 && u < 5) {
		tenth = (whole % 1024) * 10 / 1024;
		whole /= 1024;
		u++;
	}
	if (u == 0 || tenth == 0)
		snprintf(buf, len, "%llu %s", (unsigned long long)whole, unit[u]);
	else
		snprintf(buf, len, "%llu.%llu %s", (unsigned long long)whole, (unsigned long long)tenth, unit[u]);
	return buf;
}

/* Read one cgroup value of @path: 0 (*@v set) or -errno. */
static int read_value(const char *path, uint64_t *v)
{
	char buf[128];
	ssize_t n = ksync__psrc_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return ksync_pressure_parse_cgroup_value(buf, (size_t)n, v);
}

/* The lesser of @dir's memory.max and memory.high (-ENOENT: neither file). */
static int dir_limit(const char *dir, bool v2, uint64_t *limit)
{
	char path[KSYNC__PATH_MAX + 32];
	uint64_t max, high;
	int rm, rh;

	if (!v2) { /* v1: one file */
		snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", dir);
		return read_value(path, limit);
	}
	snprintf(path, sizeof(path), "%s/memory.max", dir);
	rm = read_value(path, &max);
	snprintf(path, sizeof(path), "%s/memory.high", dir);
	rh = read_value(path, &high);
	if (rm < 0 && rh < 0)
		return rm;
	*limit = KSYNC_PRESSURE_UNLIMITED;
	if (rm == 0 && max < *limit)
		*limit = max;
	if (rh == 0 && high < *limit)
		*limit = high;
	return 0;
}

/*
 * find_tightest() - the tightest limit of @dir and its ancestors (v2: the
 * lower of memory.max and memory.high; v1: memory.limit_in_bytes), up to
 * the first directory without the files (above the hierarchy's mount; the
 * v2 root has none), and which directory has it. A parent's limit binds
 * its children in both versions (v1 is hierarchical on every kernel that
 * has PSI's neighbours). @dir and @rel are cut down on the way.
 * Return: 1 found (@best, @best_rel, *@limit), 0 none.
 */
static int find_tightest(const struct ksync__penv *env, bool v2, char *dir, char *rel, char *best,
			 char *best_rel, uint64_t *limit)
{
	size_t root_len = strlen(env->cfg.root ? env->cfg.root : "");
	int found = 0;

	*limit = KSYNC_PRESSURE_UNLIMITED;
	for (;;) {
		uint64_t l;
		char *slash;

		if (dir_limit(dir, v2, &l) < 0)
			break;
		if (l < *limit) {
			*limit = l;
			strcpy(best, dir);
			strcpy(best_rel, rel);
			found = 1;
		}
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) <= root_len)
			break;
		*slash = '\0';
		if ((slash = strrchr(rel, '/')) && slash != rel)
			*slash = '\0';
	}
	return found;
}

static int poll_sample(struct ksync__psrc *s);

static int limit_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	char *dir = KSYNC__ALLOC(malloc(KSYNC__PATH_MAX)), *rel = KSYNC__ALLOC(malloc(KSYNC__PATH_MAX));
	char *best = KSYNC__ALLOC(malloc(KSYNC__PATH_MAX)), *best_rel = KSYNC__ALLOC(malloc(KSYNC__PATH_MAX));
	struct poll_priv *p = priv_new(s, env, POLL_CGROUP);
	const char *limit_file = NULL;
	uint64_t limit = KSYNC_PRESSURE_UNLIMITED;
	bool any_cgroup = false;
	char a[32];
	int r = -ENOMEM;

	if (!p || !dir || !rel || !best || !best_rel) {
		if (p)
			ksync__psrc_desc(s, "out of memory");
		goto out;
	}
	if (ksync__psrc_cgroup_v2_dir(env, dir, rel) == 0) {
		any_cgroup = true;
		if (find_tightest(env, true, dir, rel, best, best_rel, &limit) > 0) {
			snprintf(p->file, sizeof(p->file), "%s/memory.current", best);
			snprintf(p->shown, sizeof(p->shown), "%s/memory.current", best_rel);
			snprintf(p->limdir, sizeof(p->limdir), "%s", best);
			p->v2 = true;
			limit_file = "the lower of memory.max and memory.high";
		}
	}
	if (!limit_file && ksync__psrc_cgroup_v1_memory_dir(env, dir, rel) == 0) {
		any_cgroup = true;
		if (find_tightest(env, false, dir, rel, best, best_rel, &limit) > 0) {
			snprintf(p->file, sizeof(p->file), "%s/memory.usage_in_bytes", best);
			snprintf(p->shown, sizeof(p->shown), "%s/memory.usage_in_bytes", best_rel);
			snprintf(p->limdir, sizeof(p->limdir), "%s", best);
			limit_file = "memory.limit_in_bytes";
		}
	}
	if (!limit_file) {
		r = -ENOENT;
		ksync__psrc_desc(s, "%s", any_cgroup ? "no limit (memory.max, memory.high and "
								    "memory.limit_in_bytes unlimited or absent)"
								  : "no memory cgroup found");
		goto out;
	}
	s->limit = limit;
	s->polled = true;
	if ((r = poll_sample(s)) < 0)
		goto out;
	r = 0;
	ksync__psrc_desc(s, "%s against %s, %s", p->shown, limit_file,
			 bytes_text(a, sizeof(a), limit));
out:
	free(dir);
	free(rel);
	free(best);
	free(best_rel);
	return r;
}

static int meminfo_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	struct poll_priv *p = priv_new(s, env, POLL_MEMINFO);
	int r;

	if (!p)
		return -ENOMEM;
	if ((r = ksync__psrc_path(p->file, env, "/proc/meminfo")) < 0) {
		ksync__psrc_desc(s, "the root is too long");
		return r;
	}
	strcpy(p->shown, "/proc/meminfo");
	s->polled = true;
	if ((r = poll_sample(s)) < 0)
		return r;
	ksync__psrc_desc(s, "/proc/meminfo, MemTotal - MemAvailable against MemTotal");
	return 0;
}

static int budget_open(struct ksync__psrc *s, const struct ksync__penv *env)
{
	struct poll_priv *p = priv_new(s, env, POLL_BUDGET);
	long page = sysconf(_SC_PAGESIZE);
	char a[32];
	int r;

	if (!p)
		return -ENOMEM;
	if (env->cfg.budget_bytes == 0) { /* the monitor refuses it: never here */
		ksync__psrc_desc(s, "no budget (budget_bytes is 0)");
		return -EINVAL;
	}
	p->page_size = page > 0 ? (uint64_t)page : 4096;
	s->limit = env->cfg.budget_bytes;
	if ((r = ksync__psrc_path(p->file, env, "/proc/self/statm")) < 0) {
		ksync__psrc_desc(s, "the root is too long");
		return r;
	}
	strcpy(p->shown, "/proc/self/statm");
	s->polled = true;
	if ((r = poll_sample(s)) < 0)
		return r;
	ksync__psrc_desc(s, "resident set (/proc/self/statm) against %s",
			 bytes_text(a, sizeof(a), s->limit));
	return 0;
}

/*
 * poll_read() - the figure and its limit now, from @p alone (so that both
 * poll_sample() and direct reclaim's probes use it). *@limit is kept where
 * it cannot be read again. *@parsed tells a parse failure from a read one.
 * Return: 0 or -errno.
 */
static int poll_read(const struct poll_priv *p, uint64_t *out, uint64_t *limit, bool *parsed)
{
	char buf[16384];
	ssize_t n = ksync__psrc_read_file(p->file, buf, sizeof(buf));
	uint64_t figure = 0, total, avail, size, resident;
	int r;

	*parsed = false;
	if (n < 0)
		return (int)n;
	*parsed = true;
	switch (p->kind) {
	case POLL_CGROUP:
		r = ksync_pressure_parse_cgroup_value(buf, (size_t)n, &figure);
		/*
		 * The limit is read again each time: senpai, systemd-oomd and
		 * administrators move memory.high and limit_in_bytes while a
		 * program runs. A limit lifted since (unlimited now) reads as
		 * no pressure; the directory is the one that bound at open.
		 */
		if (r == 0) {
			uint64_t lim;

			if (dir_limit(p->limdir, p->v2, &lim) == 0)
				*limit = lim;
		}
		break;
	case POLL_MEMINFO:
		r = ksync_pressure_parse_meminfo(buf, (size_t)n, &total, &avail);
		if (r == 0) {
			figure = total - avail;
			*limit = total;
		}
		break;
	default:
		r = ksync_pressure_parse_statm(buf, (size_t)n, &size, &resident);
		if (r == 0)
			figure = resident > UINT64_MAX / p->page_size ? UINT64_MAX : resident * p->page_size;
		break;
	}
	if (r == 0)
		*out = figure;
	return r;
}

/* poll_sample() - read the figure (and MemTotal) now; the level, or -errno. */
static int poll_sample(struct ksync__psrc *s)
{
	struct poll_priv *p = s->priv;
	uint64_t figure = 0, limit = s->limit;
	bool parsed;
	int r = poll_read(p, &figure, &limit, &parsed);

	if (r < 0 && !parsed) {
		if (r == -ENOENT || r == -ENODEV)
			ksync__psrc_desc(s, "%s vanished (%s)", p->shown, strerror(-r));
		else
			ksync__psrc_desc(s, "cannot read %s: %s", p->shown, strerror(-r));
		s->status = r;
		return r;
	}
	s->limit = limit;
	if (r < 0) {
		if (r == -ENOENT && p->kind == POLL_MEMINFO)
			ksync__psrc_desc(s, "no MemTotal or MemAvailable in /proc/meminfo "
					    "(MemAvailable: Linux 3.14)");
		else
			ksync__psrc_desc(s, "cannot parse %s", p->shown);
		s->status = r;
		return r;
	}
	s->figure = figure;
	return ksync_pressure_level_of(figure, s->limit, p->permille);
}

/* Direct reclaim's copy of what poll_sample() reads (internal.h). */
static void *poll_probe_new(const struct ksync__psrc *s)
{
	struct poll_priv *copy = KSYNC__ALLOC(malloc(sizeof(*copy)));

	if (copy)
		memcpy(copy, s->priv, sizeof(*copy));
	return copy;
}

static int poll_probe_read(const void *probe, uint64_t *figure, uint64_t *limit)
{
	bool parsed;

	return poll_read(probe, figure, limit, &parsed);
}

/* No fds: never called; NONE for a monitor that asks anyway. */
static int poll_ready(struct ksync__psrc *s, int i, uint32_t revents)
{
	(void)s;
	(void)i;
	(void)revents;
	return KSYNC_PRESSURE_NONE;
}

static void poll_close(struct ksync__psrc *s)
{
	free(s->priv);
	s->priv = NULL;
	s->nr_fds = 0;
}

const struct ksync__psrc_ops ksync__psrc_limit_ops = {
	.kind = KSYNC_PRESSURE_SRC_LIMIT,
	.open = limit_open,
	.ready = poll_ready,
	.sample = poll_sample,
	.close = poll_close,
	.probe_new = poll_probe_new,
	.probe_read = poll_probe_read,
};

const struct ksync__psrc_ops ksync__psrc_meminfo_ops = {
	.kind = KSYNC_PRESSURE_SRC_MEMINFO,
	.open = meminfo_open,
	.ready = poll_ready,
	.sample = poll_sample,
	.close = poll_close,
	.probe_new = poll_probe_new,
	.probe_read = poll_probe_read,
};

const struct ksync__psrc_ops ksync__psrc_budget_ops = {
	.kind = KSYNC_PRESSURE_SRC_BUDGET,
	.open = budget_open,
	.ready = poll_ready,
	.sample = poll_sample,
	.close = poll_close,
	.probe_new = poll_probe_new,
	.probe_read = poll_probe_read,
};
