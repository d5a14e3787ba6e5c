/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/shrinker_testing.h - test seams of the shrinker registry
 *
 * Not for production code: these calls exist so that tests, fuzzers and
 * model checkers can force the schedules that matter (a walker stopped
 * between two read sections, a debug call stopped after finding a record)
 * instead of waiting for luck. None of them changes what the registry does;
 * with no hook installed each yield point costs one relaxed load.
 */
#ifndef KSYNC_SHRINKER_TESTING_H
#define KSYNC_SHRINKER_TESTING_H

#include <ksync/shrinker.h>
#include <ksync/srcu.h>

KSYNC_EXTERN_C_BEGIN

/* ------------------------------------------------------------------------ */
/* Deterministic-yield hook (for fuzzers and model tests)                   */

/**
 * enum ksync_shrinker_yield_point - where the hook is called.
 * @KSYNC_SHRINKER_YP_BEFORE_GET: walker found a shrinker, before taking a reference
 * @KSYNC_SHRINKER_YP_AFTER_GET: walker holds the reference, before calling into it
 * @KSYNC_SHRINKER_YP_BEFORE_PUT: walker returned from the callbacks, before dropping it
 * @KSYNC_SHRINKER_YP_BETWEEN_IDS: group walk, between two ids (after the writer check)
 * @KSYNC_SHRINKER_YP_EMPTY_CLEARED: group walk cleared a bit on SHRINK_EMPTY, before the recount
 * @KSYNC_SHRINKER_YP_UNREG_BEFORE_WAIT: unregister dropped the initial reference
 * @KSYNC_SHRINKER_YP_UNREG_AFTER_WAIT: no call into the shrinker remains
 * @KSYNC_SHRINKER_YP_BEFORE_FREE: unlinked, before call_srcu of its memory
 * @KSYNC_SHRINKER_YP_GROW_PUBLISHED: a writer published grown maps, before the old ones are queued for freeing
 * @KSYNC_SHRINKER_YP_GROUP_BEFORE_WAIT: group destroy unlinked the group, before waiting for its walks
 * @KSYNC_SHRINKER_YP_SECTION_DROPPED: a walk left its read section for a waiting writer, before re-entering
 * @KSYNC_SHRINKER_YP_GROUP_WAIT_WALKERS: group destroy, after its grace period, before waiting for
 *	group walks that were between two read sections
 * @KSYNC_SHRINKER_YP_RECORD_FOUND: a debug call or ksync_unregister_shrinker() found a caller-owned
 *	shrinker's record inside a read section, before using it
 * @KSYNC_SHRINKER_YP_UNREG_WAIT_CHECKED: unregister from a callback published its wait and
 *	found no cycle, before waiting
 */
enum ksync_shrinker_yield_point {
	KSYNC_SHRINKER_YP_BEFORE_GET,
	KSYNC_SHRINKER_YP_AFTER_GET,
	KSYNC_SHRINKER_YP_BEFORE_PUT,
	KSYNC_SHRINKER_YP_BETWEEN_IDS,
	KSYNC_SHRINKER_YP_EMPTY_CLEARED,
	KSYNC_SHRINKER_YP_UNREG_BEFORE_WAIT,
	KSYNC_SHRINKER_YP_UNREG_AFTER_WAIT,
	KSYNC_SHRINKER_YP_BEFORE_FREE,
	KSYNC_SHRINKER_YP_GROW_PUBLISHED,
	KSYNC_SHRINKER_YP_GROUP_BEFORE_WAIT,
	KSYNC_SHRINKER_YP_SECTION_DROPPED,
	KSYNC_SHRINKER_YP_GROUP_WAIT_WALKERS,
	KSYNC_SHRINKER_YP_RECORD_FOUND,
	KSYNC_SHRINKER_YP_UNREG_WAIT_CHECKED,
	KSYNC_SHRINKER_YP_NR
};

/**
 * ksync_shrinker_set_yield_hook() - install @hook (NULL removes it), process-wide.
 * @hook: called as hook(point, arg) at each &enum ksync_shrinker_yield_point;
 *        it may sleep or yield but must not call into the registry
 * @arg: passed through
 *
 * Costs one relaxed load per point when no hook is installed.
 */
void ksync_shrinker_set_yield_hook(void (*hook)(int point, void *arg), void *arg);

/**
 * ksync_shrinker_registry_srcu() - the SRCU domain of @reg (NULL: default).
 *
 * For tests that must know whether a grace period of the registry is waiting
 * (ksync_srcu_gp_pending()), whether a thread is inside a walk's read section
 * (ksync_srcu_read_lock_held()), or that must wait for the registry's queued
 * frees (ksync_srcu_barrier()). Callers must not end sections they did not
 * begin.
 */
struct ksync_srcu_struct *ksync_shrinker_registry_srcu(struct ksync_shrinker_registry *reg);

/*
 * Polled record reuse (lib/shrinker/records.c, docs/shrinker.md): while
 * another thread may read, released records wait in groups of
 * KSYNC_SHRINKER_REUSE_BATCH, each with one grace period cookie, at most
 * KSYNC_SHRINKER_REUSE_GROUPS groups; a registration reuses the oldest once
 * its group's grace period has ended. Tests release a group's worth to
 * reach the path.
 */
#define KSYNC_SHRINKER_REUSE_BATCH 1024
#define KSYNC_SHRINKER_REUSE_GROUPS 2

KSYNC_EXTERN_C_END

#endif /* KSYNC_SHRINKER_TESTING_H */
