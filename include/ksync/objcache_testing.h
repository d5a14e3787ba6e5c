/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/objcache_testing.h - test seams of object caches
 *
 * Not for production code: these calls exist so that tests and fuzzers can
 * stop a thread at the points of lib/objcache where a race matters (a
 * group's offline deactivating its child caches, an allocation that found
 * its group's child cache or its stock slot) and run the other side of the
 * race there, instead of waiting for luck. None of them changes what the
 * module does; with no hook installed a yield point costs one relaxed load.
 * A production build (-DKSYNC_SEAMS=OFF) has no hook (the function is not
 * defined).
 */
#ifndef KSYNC_OBJCACHE_TESTING_H
#define KSYNC_OBJCACHE_TESTING_H

#include <ksync/compiler.h>

KSYNC_EXTERN_C_BEGIN

/**
 * enum ksync_objcache_yield_point - where the hook is called.
 * @KSYNC_OBJCACHE_YP_DEACTIVATE: design A, a group's offline hook is about
 *	to deactivate one of its child caches (the child is still live: not
 *	yet marked dead, still in its root's table); no lock of the module held
 * @KSYNC_OBJCACHE_YP_DEACTIVATED: design A, the child was marked dead and
 *	taken out of its root's table, its magazines and empty slabs not yet
 *	flushed, not yet reparented; no lock of the module held
 * @KSYNC_OBJCACHE_YP_CHILD_FOUND: design A, an allocation charged to a group
 *	found the group's live child cache, before it allocates from it
 * @KSYNC_OBJCACHE_YP_STOCK_HIT: design B, a charge found its group's handle
 *	in the thread's stock (the group online), before it charges the slot
 */
enum ksync_objcache_yield_point {
	KSYNC_OBJCACHE_YP_DEACTIVATE,
	KSYNC_OBJCACHE_YP_DEACTIVATED,
	KSYNC_OBJCACHE_YP_CHILD_FOUND,
	KSYNC_OBJCACHE_YP_STOCK_HIT,
	KSYNC_OBJCACHE_YP_NR
};

/**
 * ksync_objcache_set_yield_hook() - install @hook (NULL removes it), process-wide.
 * @hook: called as hook(point, arg) at each &enum ksync_objcache_yield_point,
 *        by the thread that reached it; it may sleep or wait for other
 *        threads (which may call into lib/objcache meanwhile)
 * @arg: passed through
 */
void ksync_objcache_set_yield_hook(void (*hook)(int point, void *arg), void *arg);

KSYNC_EXTERN_C_END

#endif /* KSYNC_OBJCACHE_TESTING_H */
