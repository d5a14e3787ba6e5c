/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cgroup.c - making, reading and removing pressure_cache's memory cgroups.
 *
 * Theory of operation. The groups are made under the process's own groups
 * (/proc/self/cgroup), so that whatever holds this process also holds its
 * children:
 *
 *  - cgroup v1 memory controller (mounted at /sys/fs/cgroup/memory): a group
 *    with memory.limit_in_bytes; the figures are memory.usage_in_bytes,
 *    memory.max_usage_in_bytes (the peak), memory.failcnt (the times a
 *    charge hit the limit) and memory.oom_control's oom_kill;
 *  - cgroup v2 with the memory controller: a group with memory.max (the
 *    parent's subtree_control gets +memory); memory.current, memory.peak,
 *    memory.events max + high, and its oom_kill;
 *  - PSI: memory.pressure of a v2 group; on a hybrid host (v1 memory, a v2
 *    tree at /sys/fs/cgroup/unified) a second group is made there only for
 *    that; on a v2 host it is the memory group itself.
 *
 * Names are unique per process (the caller puts its pid in them). Every
 * directory made is remembered until removed, so an error path, a signal
 * (the caller's handler sets a flag; the main loop kills the child and
 * calls pc_cgroup_remove_all()) or exit() removes them; a group can only
 * be removed once its processes are gone, so removal retries for a while.
 */
#define _GNU_SOURCE
#include "cgroup.h"
#include "pc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define V1_ROOT "/sys/fs/cgroup/memory"

/* The directories made and not yet removed. */
#define MAX_MADE 8
static char made[MAX_MADE][512];

static void remember(const char *dir)
{
	for (int i = 0; i < MAX_MADE; i++)
		if (!made[i][0]) {
			snprintf(made[i], sizeof(made[i]), "%s", dir);
			return;
		}
}

static void remove_dir(char *dir)
{
	if (!dir[0])
		return;
	for (int tries = 0; tries < 200; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			break;
		if (errno != EBUSY) {
			fprintf(stderr, "pressure_cache: rmdir %s: %s\n", dir, strerror(errno));
			break;
		}
		pc_sleep_ns(10000000);
	}
	for (int i = 0; i < MAX_MADE; i++)
		if (strcmp(made[i], dir) == 0)
			made[i][0] = 0;
	dir[0] = 0;
}

void pc_cgroup_forget(void)
{
	memset(made, 0, sizeof(made));
}

void pc_cgroup_remove_all(void)
{
	for (int i = 0; i < MAX_MADE; i++)
		if (made[i][0]) {
			char d[512];

			memcpy(d, made[i], sizeof(d));
			remove_dir(d);
		}
}

static int write_str(const char *dir, const char *file, const char *s)
{
	char path[700];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static uint64_t read_u64(const char *dir, const char *file)
{
	char path[700], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

/* A "key value" line of a flat keyed file. */
static uint64_t read_key(const char *dir, const char *file, const char *key)
{
	char path[700], line[256];
	size_t kl = strlen(key);
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ') {
			v = strtoull(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The process's own group of a hierarchy: "memory" (v1) or "" (v2). */
static int own_group(const char *controller, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[1024];
	int found = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char *tok, *save;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = 0;
		*c2 = 0;
		if (!controller[0]) {
			if (c1[1] == 0 && strncmp(line, "0", 1) == 0) {
				snprintf(out, len, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
				found = 0;
			}
			continue;
		}
		for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (strcmp(tok, controller) == 0) {
				snprintf(out, len, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
				found = 0;
			}
	}
	fclose(f);
	return found;
}

/* Where the v2 tree is mounted: /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid). */
static const char *v2_root(void)
{
	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) == 0)
		return "/sys/fs/cgroup";
	if (access("/sys/fs/cgroup/unified/cgroup.controllers", R_OK) == 0)
		return "/sys/fs/cgroup/unified";
	return NULL;
}

static bool v2_has_memory(const char *root)
{
	char path[600], buf[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strstr(buf, "memory") != NULL;
}

int pc_cgroup_detect(char *why, size_t len)
{
	const char *r2 = v2_root();

	if (PC_SANITIZER) {
		snprintf(why, len, "a sanitizer build: its shadow memory makes a cgroup limit meaningless");
		return 0;
	}
	if (geteuid() != 0) {
		snprintf(why, len, "not root: no memory cgroup can be made");
		return 0;
	}
	if (access(V1_ROOT "/memory.limit_in_bytes", R_OK) == 0 ||
	    access(V1_ROOT "/cgroup.procs", R_OK) == 0) {
		snprintf(why, len, "cgroup v1 memory controller at " V1_ROOT);
		return 1;
	}
	if (r2 && v2_has_memory(r2)) {
		snprintf(why, len, "cgroup v2 memory controller at %s", r2);
		return 2;
	}
	snprintf(why, len, "no memory cgroup controller mounted");
	return 0;
}

static int make_dir(char *out, size_t len, const char *root, const char *own, const char *name, char *why,
		    size_t wlen)
{
	snprintf(out, len, "%s%s/%s", root, own, name);
	if (mkdir(out, 0755) && errno != EEXIST) {
		int err = -errno;

		snprintf(why, wlen, "mkdir %s: %s", out, strerror(errno));
		out[0] = 0;
		return err;
	}
	remember(out);
	return 0;
}

int pc_cgroup_create(struct pc_cgroup *g, int version, const char *name, uint64_t limit, char *why, size_t len)
{
	char own[400] = "", num[32], ctl[600];
	const char *r2 = v2_root();
	int err;

	memset(g, 0, sizeof(*g));
	g->version = version;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)limit);
	if (version == 1) {
		own_group("memory", own, sizeof(own));
		err = make_dir(g->mem, sizeof(g->mem), V1_ROOT, own, name, why, len);
		if (err)
			return err;
		err = write_str(g->mem, "memory.limit_in_bytes", num);
		if (err) {
			snprintf(why, len, "%s/memory.limit_in_bytes: %s", g->mem, strerror(-err));
			goto fail;
		}
		/* the child's own PSI, in the v2 tree (optional) */
		if (r2) {
			own[0] = 0;
			own_group("", own, sizeof(own));
			if (make_dir(g->psi, sizeof(g->psi), r2, own, name, ctl, sizeof(ctl)))
				g->psi[0] = 0;
		}
		return 0;
	}
	if (!r2) {
		snprintf(why, len, "no cgroup v2 tree");
		return -ENOENT;
	}
	own_group("", own, sizeof(own));
	snprintf(ctl, sizeof(ctl), "%s%s", r2, own);
	write_str(ctl, "cgroup.subtree_control", "+memory");
	err = make_dir(g->mem, sizeof(g->mem), r2, own, name, why, len);
	if (err)
		return err;
	err = write_str(g->mem, "memory.max", num);
	if (err) {
		snprintf(why, len, "%s/memory.max: %s", g->mem, strerror(-err));
		goto fail;
	}
	write_str(g->mem, "memory.swap.max", "0");
	snprintf(g->psi, sizeof(g->psi), "%s", g->mem);
	return 0;
fail:
	pc_cgroup_remove(g);
	return err;
}

int pc_cgroup_attach(struct pc_cgroup *g, pid_t pid)
{
	char num[32];
	int err;

	snprintf(num, sizeof(num), "%d", (int)pid);
	err = write_str(g->mem, "cgroup.procs", num);
	if (err)
		return err;
	if (g->psi[0] && strcmp(g->psi, g->mem) != 0 && write_str(g->psi, "cgroup.procs", num))
		g->psi[0] = 0;   /* no PSI of its own then: read the system's */
	return 0;
}

void pc_cgroup_remove(struct pc_cgroup *g)
{
	if (strcmp(g->psi, g->mem) == 0)
		g->psi[0] = 0;
	remove_dir(g->psi);
	remove_dir(g->mem);
}

uint64_t pc_cgroup_usage(const struct pc_cgroup *g)
{
	return read_u64(g->mem, g->version == 1 ? "memory.usage_in_bytes" : "memory.current");
}

uint64_t pc_cgroup_peak(const struct pc_cgroup *g)
{
	return read_u64(g->mem, g->version == 1 ? "memory.max_usage_in_bytes" : "memory.peak");
}

uint64_t pc_cgroup_limit_hits(const struct pc_cgroup *g)
{
	if (g->version == 1)
		return read_u64(g->mem, "memory.failcnt");
	return read_key(g->mem, "memory.events", "max") + read_key(g->mem, "memory.events", "high");
}

uint64_t pc_cgroup_oom_kills(const struct pc_cgroup *g)
{
	return read_key(g->mem, g->version == 1 ? "memory.oom_control" : "memory.events", "oom_kill");
}

bool pc_psi_read(const char *dir, uint64_t *some_total_us, double *some_avg10)
{
	char path[600], line[256];
	bool ok = false;
	FILE *f;

	if (dir)
		snprintf(path, sizeof(path), "%s/memory.pressure", dir);
	else
		snprintf(path, sizeof(path), "/proc/pressure/memory");
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		double a10, a60, a300;
		unsigned long long total;

		if (sscanf(line, "some avg10=%lf avg60=%lf avg300=%lf total=%llu", &a10, &a60, &a300, &total) == 4) {
			*some_total_us = total;
			*some_avg10 = a10;
			ok = true;
		}
	}
	fclose(f);
	return ok;
}
