/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/pressure_testing.h - test seam of the pressure sources
 *
 * Not for production code. The sources of <ksync/pressure.h> read text the
 * kernel and systemd wrote (PSI files, /proc/meminfo, /proc/self/cgroup,
 * mountinfo, cgroup values, base64 triggers); the parsers that read it are
 * pure functions (no I/O), declared here so that unit tests and the fuzzer
 * (fuzz/pressure_fuzz.c) can call them on any bytes. Every parser takes a
 * buffer and its length, needs no NUL, never reads past @len, and returns 0
 * or a negative errno (-EINVAL for text it does not understand, -ERANGE for
 * a number that does not fit, -ENAMETOOLONG for a path longer than its
 * field, -ENOENT for a key that is missing); on error *@out is unspecified.
 *
 * The window rule (ksync_pressure_psi_windows()) is the list of PSI triggers
 * a source tries, in order, for one level. And the trigger hook replaces the
 * write() of a PSI trigger, so that a test can play a kernel of any version
 * and privilege on a fake /proc tree.
 */
#ifndef KSYNC_PRESSURE_TESTING_H
#define KSYNC_PRESSURE_TESTING_H

#include <ksync/pressure.h>

#include <stddef.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/** KSYNC_PRESSURE_PATH_MAX - the longest path a parser keeps, with its NUL. */
#define KSYNC_PRESSURE_PATH_MAX 4096
/** KSYNC_PRESSURE_UNLIMITED - a cgroup value of "max", or v1's huge "unlimited". */
#define KSYNC_PRESSURE_UNLIMITED UINT64_MAX
/** KSYNC_PRESSURE_CAP_SYS_RESOURCE - the capability's bit number in CapEff. */
#define KSYNC_PRESSURE_CAP_SYS_RESOURCE 24

/**
 * struct ksync_pressure_psi_record - one line of a PSI file.
 * @avg10, @avg60, @avg300: the averages in hundredths of a per cent (0..10000)
 * @total_us: the total stall time in microseconds
 */
struct ksync_pressure_psi_record {
	uint32_t avg10, avg60, avg300;
	uint64_t total_us;
};

/**
 * struct ksync_pressure_psi - a whole PSI file: its "some" line (required) and
 * its "full" line (@has_full: kernels before 5.13 have none for cpu).
 */
struct ksync_pressure_psi {
	int has_full;
	struct ksync_pressure_psi_record some, full;
};

/** ksync_pressure_parse_psi() - "some avg10=.. avg60=.. avg300=.. total=..", "full ...". */
int ksync_pressure_parse_psi(const char *buf, size_t len, struct ksync_pressure_psi *out);

/**
 * ksync_pressure_parse_meminfo() - MemTotal and MemAvailable of /proc/meminfo, in bytes.
 * Return: 0; -ENOENT when either line is missing (MemAvailable: Linux 3.14+).
 */
int ksync_pressure_parse_meminfo(const char *buf, size_t len, uint64_t *total_bytes,
				 uint64_t *available_bytes);

/**
 * struct ksync_pressure_cgroup - what /proc/self/cgroup says of the process.
 * @has_v2: a "0::/path" line; @v2 its path
 * @has_v1_memory: a v1 line whose controller list holds "memory"; @v1_memory its path
 */
struct ksync_pressure_cgroup {
	int has_v2, has_v1_memory;
	char v2[KSYNC_PRESSURE_PATH_MAX];
	char v1_memory[KSYNC_PRESSURE_PATH_MAX];
};

/** ksync_pressure_parse_cgroup() - the lines "<id>:<controllers>:<path>" of /proc/self/cgroup. */
int ksync_pressure_parse_cgroup(const char *buf, size_t len, struct ksync_pressure_cgroup *out);

/**
 * struct ksync_pressure_mount - the fields of a mountinfo line that matter here.
 * @root: the directory of the file system mounted (octal escapes decoded)
 * @mountpoint: where (decoded)
 * @fstype: "cgroup2", "cgroup", ...
 * @super_options: the super block's options, comma-separated ("rw,memory")
 */
struct ksync_pressure_mount {
	char root[KSYNC_PRESSURE_PATH_MAX];
	char mountpoint[KSYNC_PRESSURE_PATH_MAX];
	char fstype[64];
	char super_options[1024];
};

/**
 * ksync_pressure_parse_mountinfo_line() - one line of /proc/self/mountinfo (no newline needed).
 * "<id> <parent> <maj:min> <root> <mountpoint> <options> [<optional>...] - <fstype> <source> <super options>"
 */
int ksync_pressure_parse_mountinfo_line(const char *line, size_t len, struct ksync_pressure_mount *out);

/**
 * ksync_pressure_option_has() - whether the comma-separated list @opts holds @word (whole).
 */
int ksync_pressure_option_has(const char *opts, const char *word);

/**
 * ksync_pressure_parse_cgroup_value() - a cgroup file of one value: "max" or a
 * number, trailing whitespace allowed. "max" and v1's "unlimited" (any value
 * of 2^62 or more: v1 prints LONG_MAX rounded down to a page) read as
 * %KSYNC_PRESSURE_UNLIMITED.
 */
int ksync_pressure_parse_cgroup_value(const char *buf, size_t len, uint64_t *out);

/** struct ksync_pressure_memory_events - v2 memory.events (a key missing reads 0). */
struct ksync_pressure_memory_events {
	uint64_t low, high, max, oom, oom_kill;
};

/** ksync_pressure_parse_memory_events() - "low N\nhigh N\nmax N\noom N\noom_kill N\n..." */
int ksync_pressure_parse_memory_events(const char *buf, size_t len,
				       struct ksync_pressure_memory_events *out);

/** ksync_pressure_parse_statm() - the first two fields of /proc/self/statm (pages). */
int ksync_pressure_parse_statm(const char *buf, size_t len, uint64_t *size_pages,
			       uint64_t *resident_pages);

/** ksync_pressure_parse_capeff() - the "CapEff:" line of /proc/self/status (hex). */
int ksync_pressure_parse_capeff(const char *buf, size_t len, uint64_t *capeff);

/** ksync_pressure_parse_kernel_release() - "6.18.44-fc" (uname -r) to 6 and 18. */
int ksync_pressure_parse_kernel_release(const char *buf, size_t len, unsigned *major,
					unsigned *minor);

/**
 * ksync_pressure_base64_decode() - base64 (RFC 4648, '=' padding optional,
 * whitespace ignored) as systemd writes $MEMORY_PRESSURE_WRITE.
 * @out: room for @cap bytes (never written past)
 * @outlen: the decoded length
 * Return: 0; -EINVAL for a character outside the alphabet, padding in the
 * middle, a lone last character or trailing bits that are not zero (so that
 * encoding the result gives the input back, whitespace aside); -ENOSPC when
 * @cap is too small.
 */
int ksync_pressure_base64_decode(const char *in, size_t len, unsigned char *out, size_t cap,
				 size_t *outlen);

/**
 * ksync_pressure_base64_encode() - the padded encoding of @len bytes.
 * Writes at most @cap bytes, NUL-terminated when @cap > 0; returns the
 * length it needed without the NUL (snprintf's contract).
 */
size_t ksync_pressure_base64_encode(const unsigned char *in, size_t len, char *out, size_t cap);

/**
 * ksync_pressure_parse_trigger() - "some|full <stall us> <window us>", as
 * written to a PSI file (trailing whitespace or NULs allowed). Both numbers
 * must fit 32 bits.
 */
int ksync_pressure_parse_trigger(const char *buf, size_t len, struct ksync_pressure_trigger *out);

/** ksync_pressure_format_trigger() - the text of @t; snprintf's contract. */
size_t ksync_pressure_format_trigger(char *buf, size_t cap, const struct ksync_pressure_trigger *t);

/** KSYNC_PRESSURE_MAX_WINDOWS - the most triggers ksync_pressure_psi_windows() returns. */
#define KSYNC_PRESSURE_MAX_WINDOWS 8

/**
 * ksync_pressure_psi_windows() - the triggers to try for one level, in order.
 * @asked: the trigger configured (stall below window, window nonzero)
 * @major, @minor: the kernel's version
 * @cap_sys_resource: whether the process has CAP_SYS_RESOURCE
 * @out: the candidates
 *
 * First @asked itself. Then, from 6.5 without the capability, the windows
 * the unprivileged path accepts (2, 4, 6, 8, 10 s) nearest to @asked's first
 * (a tie: the shorter); before 6.5 or with the capability, @asked's window
 * brought into 500 ms..10 s, then the same multiples of 2 s (a kernel that
 * says less than it does is still served). No window appears twice. Each
 * candidate's stall is @asked's scaled with its window, at least 1 us and
 * below the window. Return: the number of candidates (1..8).
 */
int ksync_pressure_psi_windows(const struct ksync_pressure_trigger *asked, unsigned major,
			       unsigned minor, int cap_sys_resource,
			       struct ksync_pressure_trigger out[KSYNC_PRESSURE_MAX_WINDOWS]);

/**
 * ksync_pressure_level_of() - the level of @usage against @limit.
 * @permille: per level LOW..CRITICAL ([0] unused), ascending
 * Return: the highest level whose share of @limit @usage reaches; NONE for a
 * @limit of 0 or %KSYNC_PRESSURE_UNLIMITED.
 */
enum ksync_pressure_level ksync_pressure_level_of(uint64_t usage, uint64_t limit,
						  const unsigned permille[KSYNC_PRESSURE_NR_LEVELS]);

/**
 * typedef ksync_pressure_write_fn - stands for write(@fd, @buf, @len) of a PSI trigger.
 * Return: the bytes written, or a negative errno (-EINVAL: the kernel refused
 * the window; -EPERM: no capability).
 */
typedef long (*ksync_pressure_write_fn)(int fd, const char *buf, size_t len, void *arg);

/**
 * ksync_pressure_set_write_hook() - install @fn (NULL: write() again), process-wide.
 * Every PSI trigger the sources write (psi-cgroup, psi-system, systemd on a
 * PSI file) goes through it. Set it while no monitor opens sources.
 */
void ksync_pressure_set_write_hook(ksync_pressure_write_fn fn, void *arg);

KSYNC_EXTERN_C_END

#endif /* KSYNC_PRESSURE_TESTING_H */
