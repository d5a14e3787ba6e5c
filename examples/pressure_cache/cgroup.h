/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cgroup.h - the memory cgroups pressure_cache runs its variants in.
 *
 * A run makes two groups: one of the memory controller (v1
 * memory.limit_in_bytes, or v2 memory.max where the controller is on v2)
 * with the limit, and one of the v2 tree for the child's own PSI
 * (memory.pressure; the same group when the controller is on v2). The
 * child is moved into both, the parent reads their figures, and removes
 * them once the child is gone (also on error and on SIGINT/SIGTERM).
 */
#ifndef PC_CGROUP_H
#define PC_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pc_cgroup {
	int version;          /* of the memory controller: 1 or 2 */
	char mem[512];        /* the memory group's directory ("" none) */
	char psi[512];        /* the v2 group's directory ("" none) */
};

/* Which memory controller a group can be made with: 1, 2, or 0 and why not. */
int pc_cgroup_detect(char *why, size_t len);
/* Make the groups named @name with @limit bytes. Return 0 or -errno (@why says). */
int pc_cgroup_create(struct pc_cgroup *g, int version, const char *name, uint64_t limit, char *why, size_t len);
/* Move @pid into both groups. */
int pc_cgroup_attach(struct pc_cgroup *g, pid_t pid);
/* Remove the groups (the processes in them must be gone); idempotent. */
void pc_cgroup_remove(struct pc_cgroup *g);
/* In a child: the groups are the parent's to remove (atexit must not). */
void pc_cgroup_forget(void);
/* Remove every group still made (from a signal's aftermath or atexit). */
void pc_cgroup_remove_all(void);

uint64_t pc_cgroup_usage(const struct pc_cgroup *g);
uint64_t pc_cgroup_peak(const struct pc_cgroup *g);
uint64_t pc_cgroup_limit_hits(const struct pc_cgroup *g);
uint64_t pc_cgroup_oom_kills(const struct pc_cgroup *g);
/* PSI of memory.pressure in @dir (or /proc/pressure/memory for NULL): some total µs, avg10. */
bool pc_psi_read(const char *dir, uint64_t *some_total_us, double *some_avg10);

#endif /* PC_CGROUP_H */
