/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/sources.h - what the sources (psi.c, systemd.c, vmpressure.c,
 * limit.c) share among themselves: the environment's files (paths.c), the
 * trigger write (paths.c, through the hook of seams.c) and the ops of each
 * source (sources.c puts them in ksync__psrc_table). The monitor does not
 * include it: its side of the contract is internal.h.
 *
 * Direction of calls, one way only (tests/hygiene/lib_symbols.sh):
 *   psi.c systemd.c vmpressure.c limit.c -> paths.c -> parse.c, seams.c
 *   sources.c -> (the ops' addresses only)
 */
#ifndef KSYNC_LIB_PRESSURE_SOURCES_H
#define KSYNC_LIB_PRESSURE_SOURCES_H

#include "internal.h"

#include <ksync/pressure_testing.h>
#include <ksync/impl/switches.h> /* KSYNC__ALLOC */

#include <stddef.h>
#include <sys/types.h>

extern const struct ksync__psrc_ops ksync__psrc_psi_cgroup_ops;
extern const struct ksync__psrc_ops ksync__psrc_psi_system_ops;
extern const struct ksync__psrc_ops ksync__psrc_systemd_ops;
extern const struct ksync__psrc_ops ksync__psrc_vmpressure_ops;
extern const struct ksync__psrc_ops ksync__psrc_limit_ops;
extern const struct ksync__psrc_ops ksync__psrc_meminfo_ops;
extern const struct ksync__psrc_ops ksync__psrc_budget_ops;

/* seams.c: the trigger hook of <ksync/pressure_testing.h> (NULL: write()). */
extern ksync_pressure_write_fn ksync__pressure_write_hook;
extern void *ksync__pressure_write_arg;

/* Set s->desc to "<fmt...>" (one line, truncated to fit). */
void ksync__psrc_desc(struct ksync__psrc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* @env's root + @path into @out (KSYNC__PATH_MAX). 0 or -ENAMETOOLONG. */
int ksync__psrc_path(char *out, const struct ksync__penv *env, const char *path);

/* The whole file @path (at most @cap - 1 bytes), NUL-terminated: its length or -errno. */
ssize_t ksync__psrc_read_file(const char *path, char *buf, size_t cap);

/*
 * The process's cgroup directories, with @env's root: the v2 one (from the
 * "0::" line and the cgroup2 mount) and the v1 memory one (the line listing
 * "memory" and the cgroup mount whose super options hold "memory"). @rel
 * (may be NULL) gets the path as the process sees it (without the root).
 * Return 0, -ENOENT (no such line or no mount that holds it), or another
 * -errno of reading /proc/self/cgroup or /proc/self/mountinfo.
 */
int ksync__psrc_cgroup_v2_dir(const struct ksync__penv *env, char *out, char *rel);
int ksync__psrc_cgroup_v1_memory_dir(const struct ksync__penv *env, char *out, char *rel);

/*
 * The kernel's version (@env's /proc/sys/kernel/osrelease, else uname()) and
 * whether CAP_SYS_RESOURCE is in @env's /proc/self/status CapEff (unknown:
 * no). Never fails: an unreadable version reads as 0.0.
 */
void ksync__psrc_kernel(const struct ksync__penv *env, unsigned *major, unsigned *minor, int *cap);

/* write() of a PSI trigger, through the hook: bytes written or -errno. */
long ksync__psrc_write_trigger(int fd, const char *buf, size_t len);

/*
 * ksync__psrc_psi_arm() - write @asked to the PSI fd @fd, trying the windows
 * of ksync_pressure_psi_windows() in order until one is accepted.
 * @taken: the trigger the kernel accepted
 * Return: 0; -EINVAL when every window was refused; the first other -errno
 * (-EACCES, -EPERM, -EBUSY ...) as soon as it comes.
 */
int ksync__psrc_psi_arm(int fd, const struct ksync__penv *env,
			const struct ksync_pressure_trigger *asked, struct ksync_pressure_trigger *taken);

/* The trigger of @level from @env, GLib's default where it is all zero. */
struct ksync_pressure_trigger ksync__psrc_trigger(const struct ksync__penv *env, int level);

/* "70 ms/2 s", "1.5 s" ...: @us as the shortest exact text, into @buf. */
const char *ksync__psrc_us(char *buf, size_t len, uint32_t us);

/* Close every fd of @s (setting them to -1) and zero nr_fds. */
void ksync__psrc_close_fds(struct ksync__psrc *s);

#endif /* KSYNC_LIB_PRESSURE_SOURCES_H */
