/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/objcache/seams.h - the yield points of <ksync/objcache_testing.h>,
 * for the files of ksync::objcache (seams.c holds the hook). Private.
 */
#ifndef KSYNC_LIB_OBJCACHE_SEAMS_H
#define KSYNC_LIB_OBJCACHE_SEAMS_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>
#include <ksync/impl/seams.h>
#include <ksync/objcache_testing.h>

extern void (*ksync__objcache_yield_hook)(int, void *);
extern void *ksync__objcache_yield_arg;

static inline void objcache_yield_point(int point)
{
#if KSYNC_SEAMS /* a production build (-DKSYNC_SEAMS=OFF) has no seam */
	void (*hook)(int, void *) = KSYNC_READ_ONCE(ksync__objcache_yield_hook);

	if (ksync_unlikely(hook != NULL)) {
		/* Y2: pairs with Y1 in ksync_objcache_set_yield_hook(). */
		hook = ksync_smp_load_acquire(&ksync__objcache_yield_hook);
		if (hook)
			hook(point, KSYNC_READ_ONCE(ksync__objcache_yield_arg));
	}
#else
	(void)point;
#endif
}

#endif /* KSYNC_LIB_OBJCACHE_SEAMS_H */
