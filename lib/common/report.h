/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/common/report.h - the one error rule of ksync's compiled modules.
 *
 *  - Misuse (a bad argument, a call in the wrong state or context) returns a
 *    negative errno and is reported naming the CALLER's file and line, once
 *    per call site (KSYNC_WARN_AT() in <ksync/compiler.h>). Every public call
 *    that can report is a macro passing __FILE__ and __LINE__ to a
 *    ksync__<name>() function whose first two parameters are KSYNC_SITE_ARGS.
 *  - Running out of memory returns -ENOMEM (or NULL) and is not reported.
 *  - What a shrinker's callback returns that makes no sense is reported once
 *    per library site (KSYNC_WARN_ONCE): the caller of ksync_shrink_slab() did
 *    nothing wrong.
 *
 * docs/errors.md holds the table of every (call, condition, errno, report);
 * tests/unit/error_rule_test.c walks it.
 */
#ifndef KSYNC_LIB_COMMON_REPORT_H
#define KSYNC_LIB_COMMON_REPORT_H

#include <ksync/bug.h>
#include <ksync/compiler.h>

/* The caller's site, as the public macros pass it. */
struct ksync_site {
	const char *file;
	int line;
};

#define KSYNC_SITE_ARGS const char *site_file, int site_line
#define KSYNC_SITE_INIT { site_file, site_line }

/* Report the printf-style message at @at when @cond holds (once per site); value: !!@cond. */
#define MISUSE(at, cond, ...) KSYNC_WARN_AT((at).file, (at).line, cond, __VA_ARGS__)

#endif /* KSYNC_LIB_COMMON_REPORT_H */
