/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/seams.h - every test seam of ksync's headers and compiled
 * modules, in one place, through one pair of macros (as liburcu keeps its
 * yield injection in tests/common/debug-yield.h and the kernel compiles
 * fault injection out unless configured). Private. `grep -rn
 * 'KSYNC_PLANT(\|KSYNC_TEST_POINT(' include lib` lists every seam.
 *
 * KSYNC_PLANT(name) - 1 when the build defines KSYNC_PLANT_<name> (to 1, as
 *	-DKSYNC_PLANT_<name> does), else 0; a constant expression, usable in
 *	`if` and `#if`. A plant is a bug put back on purpose (the fuzzers' plant
 *	tests and the torture tests' mutants must catch it) or a test
 *	configuration that forces a path (SRCU_NO_DIRECT: no domain gets direct
 *	words). The plants, with what each builds:
 *	  SRCU_EARLY_CALLBACK      callbacks run before their grace period
 *	  SRCU_SKIP_FIRST_WAIT     a grace period skips its wait on the old index
 *	  SRCU_SKIP_SECOND_WAIT    ... or on the index it flipped from
 *	  SRCU_NO_DIRECT           no domain gets direct words (a configuration)
 *	  SIZED_MAP_GROW_BY_COPY   growth copies the units instead of sharing them
 *	  LIST_LRU_UNPUBLISH_FIRST retirement unpublishes before it marks dead
 *	  and the compiled modules' other plants (lib/: UNREG_NO_WAIT,
 *	  GROUP_WALK_KEEPS_GROUP, MEMGROUP_PUT_UNCHECKED, OBJCG_STATE_PLAIN_FREE,
 *	  SET_BIT_ON_DEAD_MAPS, INFO_FREED_ON_REG_DOMAIN, OFFLINE_FROM_CALLBACK,
 *	  PRESSURE_BASE64_OVERRUN, OBJCACHE_STOCK_KEEPS_DYING,
 *	  WORKINGSET_BUDGET_FROM_CLASSIC_ONLY, RECORD_REUSE_NO_GP, ...): see docs/fuzzing.md,
 *	  "Planted bugs", and docs/shrinker.md for RECORD_REUSE_NO_GP; `grep -rn 'KSYNC_PLANT('
 *	  include lib` lists every site.
 *
 * KSYNC_TEST_POINT(name) - a statement at a point where a test may act (a
 *	delay that widens a race window). Expands to KSYNC_TP_<name>(), which a
 *	test defines before it includes ksync; the defaults below do nothing.
 *	The points of the headers:
 *	  SRCU_READ_LOCK    between a reader's load of the index and its lock store
 *	  SRCU_CALL         in ksync_call_srcu(), just before the head is pushed
 *	  SRCU_IDLE_GP      an idle grace period, between its first check for
 *	                    readers and the cmpxchg that takes the token
 *	  SRCU_CB_DELAY     a helper thread entering its batching delay (under
 *	                    the domain's cb_lock, before the futex wait)
 *	  SRCU_CB_PARK      a helper parking a batch for the callers of
 *	                    ksync_call_srcu() (under cb_lock, before it is seen)
 *	The compiled modules' points are run-time yield hooks, set through
 *	<ksync/shrinker_testing.h>, <ksync/memgroup_testing.h>,
 *	<ksync/list_lru_testing.h> and <ksync/objcache_testing.h>.
 *
 * KSYNC_NO_SEAMS - a production configuration: every plant reads 0, every
 *	point is empty, and the compiled modules are built without their yield
 *	hooks (cmake -DKSYNC_SEAMS=OFF; a hygiene test checks with nm that no
 *	hook symbol is left).
 */
#ifndef KSYNC_IMPL_SEAMS_H
#define KSYNC_IMPL_SEAMS_H

/* 1 if @x expands to 1, 0 if it is an undefined name (the kernel's IS_ENABLED()). */
#define KSYNC__SEAM_ONE_1 0,
#define KSYNC__SEAM_SECOND(ignored, val, ...) val
#define KSYNC__SEAM_IS_ONE(x) KSYNC__SEAM_IS_ONE_(x)
#define KSYNC__SEAM_IS_ONE_(v) KSYNC__SEAM_IS_ONE__(KSYNC__SEAM_ONE_##v)
#define KSYNC__SEAM_IS_ONE__(arg_or_junk) KSYNC__SEAM_SECOND(arg_or_junk 1, 0, 0)

#ifdef KSYNC_NO_SEAMS
#define KSYNC_SEAMS 0
#define KSYNC_PLANT(name) 0
#define KSYNC_TEST_POINT(name) do { } while (0)
#else
#define KSYNC_SEAMS 1
#define KSYNC_PLANT(name) KSYNC__SEAM_IS_ONE(KSYNC_PLANT_##name)
#define KSYNC_TEST_POINT(name) KSYNC_TP_##name()
#endif

#ifndef KSYNC_TP_SRCU_READ_LOCK
#define KSYNC_TP_SRCU_READ_LOCK() do { } while (0)
#endif
#ifndef KSYNC_TP_SRCU_CALL
#define KSYNC_TP_SRCU_CALL() do { } while (0)
#endif
#ifndef KSYNC_TP_SRCU_IDLE_GP
#define KSYNC_TP_SRCU_IDLE_GP() do { } while (0)
#endif
#ifndef KSYNC_TP_SRCU_CB_DELAY
#define KSYNC_TP_SRCU_CB_DELAY() do { } while (0)
#endif

#ifndef KSYNC_TP_SRCU_CB_PARK
#define KSYNC_TP_SRCU_CB_PARK() do { } while (0)
#endif

#endif /* KSYNC_IMPL_SEAMS_H */
