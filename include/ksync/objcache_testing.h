/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/objcache_testing.h - the test seam of ksync::objcache
 *
 * Not for production code (and absent from a build configured with
 * -DKSYNC_SEAMS=OFF): a process-wide hook called at the points where a
 * forced schedule shows the races of design A (a free or an allocation
 * racing the group's offline). With no hook set, a point costs one acquire
 * load.
 */
#ifndef KSYNC_OBJCACHE_TESTING_H
#define KSYNC_OBJCACHE_TESTING_H

#include <ksync/compiler.h> /* not objcache.h: this seam sits on objcache.h's layer */

KSYNC_EXTERN_C_BEGIN

struct ksync_objcache;
struct ksync_objcg;
struct ksync_memgroup;

/* Where the hook is called; @cache is the child (or root) concerned. */
enum ksync_objcache_yield_point {
	/* alloc for a group: the child was found (inside the set's read
	 * section), nothing taken from it yet: alloc-during-deactivate */
	KSYNC_OBJCACHE_YP_ALLOC_CHILD_FOUND = 1,
	/* free of a child's object: its live bit is cleared, the child's dead
	 * flag not read yet: free-during-offline */
	KSYNC_OBJCACHE_YP_FREE_CHILD_FOUND,
	/* deactivation: the child is marked dead, its magazines not drained yet */
	KSYNC_OBJCACHE_YP_DEACTIVATE_MARKED,
	/* a group's offline hook is about to deactivate one of its children
	 * (still live, in its root's table; reparented already if asked):
	 * free-during-offline before the deactivation */
	KSYNC_OBJCACHE_YP_OFFLINE_CHILD,
	/* design B: a charge found its group's handle in the thread's stock,
	 * the group online, nothing charged yet (@cache: NULL, the stock
	 * serves every cache of the thread): an allocation racing the
	 * group's offline with its handle in the stock */
	KSYNC_OBJCACHE_YP_STOCK_HIT,
};

/**
 * ksync_objcache_set_yield_hook() - call @hook(cache, point, @arg) at every
 * yield point of every cache (NULL: none). Set it before the threads it
 * schedules start, clear it after they ended.
 */
void ksync_objcache_set_yield_hook(void (*hook)(struct ksync_objcache *cache, int point, void *arg), void *arg);

/**
 * ksync_objcache_thread_parked() - the handles parked in the calling
 * thread's charge stock (design B): entries evicted from its slots that
 * keep their references and pending charges for the next charge of their
 * group (docs/objcache.md). Writes up to @max of them to @out (may be NULL
 * with @max 0); no reference is taken: compare them only.
 *
 * Return: how many are parked.
 */
int ksync_objcache_thread_parked(struct ksync_objcg **out, int max);

/**
 * ksync_objcache_park_set() - the set of the stock's table a group's entry
 * goes to (design B), for tests that make groups collide in one set.
 * @g: the group (its address is hashed, never dereferenced; may be NULL)
 * @ways: if not NULL, set to the entries per set
 *
 * Return: the set's index, from 0 to the number of sets minus one.
 */
int ksync_objcache_park_set(const struct ksync_memgroup *g, int *ways);

/**
 * ksync_objcache_stock_hint() - the bucket of the charge stock's hint table
 * (design B) that a group's charges try first, for tests that make two
 * groups share one, so that each charge finds the other's entry there.
 * @g: the group (its address is hashed, never dereferenced; may be NULL)
 * @buckets: if not NULL, set to the number of buckets
 *
 * Return: the bucket's index, from 0 to the number of buckets minus one.
 */
int ksync_objcache_stock_hint(const struct ksync_memgroup *g, int *buckets);

KSYNC_EXTERN_C_END

#endif /* KSYNC_OBJCACHE_TESTING_H */
