/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/objcache/seams.c - the hook of <ksync/objcache_testing.h> (none in a
 * production build: -DKSYNC_SEAMS=OFF compiles this file empty).
 */
#include "seams.h"

#if KSYNC_SEAMS
void (*ksync__objcache_yield_hook)(int, void *);
void *ksync__objcache_yield_arg;

void ksync_objcache_set_yield_hook(void (*hook)(int point, void *arg), void *arg)
{
	KSYNC_WRITE_ONCE(ksync__objcache_yield_arg, arg);
	/* Y1: the argument before the hook; pairs with Y2 in objcache_yield_point(). */
	ksync_smp_store_release(&ksync__objcache_yield_hook, hook);
}
#else
typedef int ksync__objcache_no_seams; /* ISO C: no empty translation unit */
#endif
