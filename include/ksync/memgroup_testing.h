/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/memgroup_testing.h - test seams of memory groups
 *
 * Not for production code: these calls exist so that tests and fuzzers can
 * stop a thread at the point of lib/memgroup where a race matters (a reader
 * that found a group's client state, before it reads through it) and run
 * the other side of the race there, instead of waiting for luck. None of
 * them changes what the module does; with no hook installed a yield point
 * costs one relaxed load.
 */
#ifndef KSYNC_MEMGROUP_TESTING_H
#define KSYNC_MEMGROUP_TESTING_H

#include <ksync/memgroup.h>

KSYNC_EXTERN_C_BEGIN

/**
 * enum ksync_memgroup_yield_point - where the hook is called.
 * @KSYNC_MEMGROUP_YP_OBJCG_STATE_FOUND: ksync_memgroup_get_objcg() found a
 *	group's charge-handle state (inside its read section of the set's
 *	domain), before it reads the group's handle from it
 */
enum ksync_memgroup_yield_point {
	KSYNC_MEMGROUP_YP_OBJCG_STATE_FOUND,
	KSYNC_MEMGROUP_YP_NR
};

/**
 * ksync_memgroup_set_yield_hook() - install @hook (NULL removes it), process-wide.
 * @hook: called as hook(point, arg) at each &enum ksync_memgroup_yield_point,
 *        by the thread that reached it; it may sleep or wait for other
 *        threads (which may call into lib/memgroup meanwhile)
 * @arg: passed through
 */
void ksync_memgroup_set_yield_hook(void (*hook)(int point, void *arg), void *arg);

KSYNC_EXTERN_C_END

#endif /* KSYNC_MEMGROUP_TESTING_H */
