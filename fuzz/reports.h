/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/reports.h - misuse reports as the concurrent targets check them.
 *
 * ksync reports misuse (docs/errors.md) at the caller's file and line, once
 * per call site and process (KSYNC_WARN_AT), through ksync_warn_hook. A
 * target that installs fuzz_report_hook() says around every call that may
 * be reported that it expects a report (EXPECT_MISUSE); a report anywhere
 * else is a legal call reported as misuse, and fails the input (issue 18:
 * a set_shrinker_bit() on a group found inside the set's read section was
 * reported as "not a group of a registry" once the registry had freed the
 * group's state). Reports are counted per thread, so a check can ask
 * whether the call it just made was reported (fuzz_must_report()).
 * Also the checks on groups that both concurrent targets make.
 */
#ifndef KSYNC_FUZZ_REPORTS_H
#define KSYNC_FUZZ_REPORTS_H

#include <ksync/memgroup.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

static __thread int fuzz_report_expect;		/* > 0: a call on this thread may be reported */
static __thread unsigned long fuzz_reports;	/* reports made on this thread */

static void fuzz_report_hook(const char *file, int line, const char *what)
{
	fuzz_reports++;
	if (fuzz_report_expect)
		return;
	fprintf(stderr, "a legal call was reported as misuse: %s:%d: %s\n", file, line, what);
	CHECK(!"a legal call was reported as misuse");
}

/* @stmt may be reported (misuse on purpose). */
#define EXPECT_MISUSE(stmt)                                                    \
	do {                                                                   \
		fuzz_report_expect++;                                          \
		stmt;                                                          \
		fuzz_report_expect--;                                          \
	} while (0)

/*
 * The misuse call just made, with fuzz_reports at @before when it began,
 * must have been reported, unless its call site was reported before (once
 * per site and process): *@site_flag remembers that. Only exact when no
 * other thread can reach the same site meanwhile (@exact: the baton).
 */
static inline void fuzz_must_report(int *site_flag, unsigned long before, bool exact)
{
	bool now = fuzz_reports > before;

	if (now)
		__atomic_store_n(site_flag, 1, __ATOMIC_RELEASE);
	else if (exact)
		CHECK(__atomic_load_n(site_flag, __ATOMIC_ACQUIRE));
}

/*
 * Inside a read section of the set's domain (or holding a reference on @g):
 * the nearest group of @g's chain (@g, its parent, ...) that is online, or
 * NULL. Ancestors stay in memory while @g is (each child holds a reference
 * on its parent until its release) and the section covers the rest.
 */
static inline KSYNC_UNUSED struct ksync_memgroup *nearest_online_group(struct ksync_memgroup *g)
{
	while (g && ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
		g = ksync_memgroup_parent(g);
	return g;
}

/* Is @a on @g's chain (NULL: the root, on every chain)? Same context. */
static inline KSYNC_UNUSED bool on_group_chain(const struct ksync_memgroup *a, struct ksync_memgroup *g)
{
	for (; g; g = ksync_memgroup_parent(g))
		if (g == a)
			return true;
	return a == NULL;
}

/*
 * @g, seen FREED inside a read section of its set (FREED is final): get and
 * put are refused and reported (once per site), and nothing brings it back.
 * One copy for both concurrent targets, whose threads hold such groups.
 */
static int site_put_released, site_get_released;

static inline void fuzz_released_group_refuses(struct ksync_memgroup *g, bool exact)
{
	unsigned long before = fuzz_reports;

	EXPECT_MISUSE(ksync_memgroup_put(g));
	fuzz_must_report(&site_put_released, before, exact);
	CHECK(!ksync_memgroup_tryget(g));
	before = fuzz_reports;
	EXPECT_MISUSE(ksync_memgroup_get(g));
	fuzz_must_report(&site_get_released, before, exact);
	CHECK(!ksync_memgroup_tryget(g));
	CHECK(ksync_memgroup_state(g) == KSYNC_MEMGROUP_FREED);
}

#endif /* KSYNC_FUZZ_REPORTS_H */
