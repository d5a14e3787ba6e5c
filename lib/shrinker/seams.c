/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/shrinker/seams.c - the registry's test seam: the yield hook of
 * <ksync/shrinker_testing.h>, called at the yield points of every file
 * (yield_point(), internal.h). A file of its own, which calls nothing, so
 * that no file of the registry calls back into one that calls it.
 */
#define _GNU_SOURCE
#include "internal.h"

#if KSYNC_SEAMS /* a production build (-DKSYNC_SEAMS=OFF) has no seam */
void (*ksync__shrinker_yield_hook)(int, void *);
void *ksync__shrinker_yield_arg;

void ksync_shrinker_set_yield_hook(void (*hook)(int point, void *arg), void *arg)
{
	KSYNC_WRITE_ONCE(ksync__shrinker_yield_arg, arg);
	/* Y1: orders the argument before the hook; pairs with Y2 in yield_point(). */
	ksync_smp_store_release(&ksync__shrinker_yield_hook, hook);
}
#endif
