/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memcg.h - the file plumbing of the tests that run a child in a real memory
 * cgroup (pressure_real, pressure_direct_real): find the v1 memory hierarchy
 * and the v2 tree, write a control file, read a number back.
 *
 *   kt_cg_write(dir, name, text)       0, or -errno (open or a short write)
 *   kt_cg_read_num(dir, name, key)     the file's number (key NULL), or the
 *                                      value of the line "key N"; -1 if none
 *   kt_cg_find_mounts(v1, v2, len)     the first v1 mount with the memory
 *                                      controller and the first cgroup2
 *                                      mount, from /proc/self/mounts ("" if
 *                                      none)
 *
 * and the child's side: a cache of chunks behind the test's shrinker, under
 * a mutex (the shrinker's scan takes it too):
 *
 *   struct kt_chunks c = KT_CHUNKS_INIT;
 *   kt_chunks_nr(&c)                   how many chunks it holds
 *   kt_chunks_add(&c, chunk)           0, or -1 when the array cannot grow
 *   kt_chunks_count                    a shrinker's count_objects: the
 *                                      chunks of the cache at its
 *                                      private_data
 *   kt_chunks_shrinker(reg, name, &c, scan)
 *                                      a registered shrinker of the cache
 *                                      (kt_chunks_count and the test's own
 *                                      scan), or NULL
 *
 * and the parent's side: whether it may run at all (kt_cg_can_run()), its
 * verdict on the child (kt_cg_child_verdict()).
 *
 * Header-only, static inline: a test uses what it needs.
 */
#ifndef KT_MEMCG_H
#define KT_MEMCG_H

#include <ksync/shrinker.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sanitizer.h"

static inline int kt_cg_write(const char *dir, const char *name, const char *text)
{
	char path[2048];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = -errno;
	close(fd);
	return r;
}

static inline long long kt_cg_read_num(const char *dir, const char *name, const char *key)
{
	char path[2048], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (!key)
		return atoll(buf);
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, strlen(key)) && l[strlen(key)] == ' ')
			return atoll(l + strlen(key) + 1);
	return -1;
}

static inline void kt_cg_find_mounts(char *v1, char *v2, size_t len)
{
	char dev[256], dir[512], type[64], opts[512];
	FILE *f = fopen("/proc/self/mounts", "re");

	v1[0] = v2[0] = 0;
	if (!f)
		return;
	while (fscanf(f, "%255s %511s %63s %511s %*d %*d", dev, dir, type, opts) == 4) {
		if (!strcmp(type, "cgroup2") && !v2[0])
			snprintf(v2, len, "%s", dir);
		if (!strcmp(type, "cgroup") && !v1[0])
			for (char *o = strtok(opts, ","); o; o = strtok(NULL, ","))
				if (!strcmp(o, "memory"))
					snprintf(v1, len, "%s", dir);
	}
	fclose(f);
}

struct kt_chunks {
	pthread_mutex_t lock;
	void **v;
	size_t nr, cap;
};

#define KT_CHUNKS_INIT { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 }

static inline unsigned long kt_chunks_nr(struct kt_chunks *c)
{
	pthread_mutex_lock(&c->lock);
	unsigned long n = c->nr;
	pthread_mutex_unlock(&c->lock);
	return n;
}

static inline unsigned long kt_chunks_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	return kt_chunks_nr((struct kt_chunks *)s->private_data);
}

static inline int kt_chunks_add(struct kt_chunks *c, void *chunk)
{
	pthread_mutex_lock(&c->lock);
	if (c->nr == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 1024;
		void **n = (void **)realloc(c->v, ncap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&c->lock);
			return -1;
		}
		c->v = n;
		c->cap = ncap;
	}
	c->v[c->nr++] = chunk;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* A shrinker over @c on @reg, registered: count by kt_chunks_count, scan by
 * the test's own @scan (each test frees its chunks in its own order). */
static inline struct ksync_shrinker *kt_chunks_shrinker(struct ksync_shrinker_registry *reg, const char *name,
							 struct kt_chunks *c,
							 unsigned long (*scan)(struct ksync_shrinker *,
									       struct ksync_shrink_control *))
{
	struct ksync_shrinker *s = reg ? ksync_shrinker_alloc(reg, 0, "%s", name) : NULL;

	if (!s)
		return NULL;
	s->private_data = c;
	s->count_objects = kt_chunks_count;
	s->scan_objects = scan;
	s->seeks = KSYNC_DEFAULT_SEEKS;
	if (ksync_shrinker_register(s)) {
		ksync_shrinker_free(s);
		return NULL;
	}
	return s;
}

/*
 * 0 where the test may make a memory cgroup; else 77 (the tests'
 * SKIP_RETURN_CODE), printed why: a sanitizer build (its shadow memory would
 * count against the group's limit), or not root.
 */
static inline int kt_cg_can_run(void)
{
	if (KT_SANITIZED) {
		printf("SKIP: a sanitizer build (its shadow memory would count against the group's limit)\n");
		return 77;
	}
	if (geteuid() != 0) {
		printf("SKIP: not root: cannot make a memory cgroup\n");
		return 77;
	}
	return 0;
}

/*
 * main()'s exit code from the child's wait @status, printed: killed is a
 * failure (@oom_note added after SIGKILL, the OOM killer's signal), exit 4
 * a skip (77, the tests' SKIP_RETURN_CODE; @skip_why says why), any other
 * non-zero exit a failure, 0 a pass. @who names the child.
 */
static inline int kt_cg_child_verdict(int status, const char *who, const char *oom_note, const char *skip_why)
{
	if (WIFSIGNALED(status)) {
		printf("FAIL: %s was killed by signal %d%s\n", who, WTERMSIG(status),
		       WTERMSIG(status) == SIGKILL ? oom_note : "");
		return 1;
	}
	if (WEXITSTATUS(status) == 4) {
		printf("SKIP: %s\n", skip_why);
		return 77;
	}
	if (WEXITSTATUS(status)) {
		printf("FAIL: child exit %d\n", WEXITSTATUS(status));
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}

#endif /* KT_MEMCG_H */
