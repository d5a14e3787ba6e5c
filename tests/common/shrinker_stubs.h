/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shrinker_stubs.h - the trivial shrinker callbacks several tests register
 * when only the registry's behaviour matters: a cache that always holds one
 * object and a scan that frees nothing.
 */
#ifndef KTEST_SHRINKER_STUBS_H
#define KTEST_SHRINKER_STUBS_H

#include <ksync/shrinker.h>

static inline unsigned long kt_count_one(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return 1;
}

static inline unsigned long kt_scan_none(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return 0;
}

#endif /* KTEST_SHRINKER_STUBS_H */
