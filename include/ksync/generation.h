/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/generation.h - generation counters: "has a writer come by since?"
 *
 * A &struct ksync_generation is a counter that writers bump and long-running
 * readers poll. The pattern it serves (the kernel's shrinker_srcu_generation,
 * and the memcg walk's "unlock, i++, goto again"): a reader walks a long
 * list or bitmap inside an SRCU read section; a writer that needs the readers
 * gone (it is about to call ksync_synchronize_srcu(), say to unregister
 * something) bumps the generation first. The reader, between two items,
 * sees the generation moved, remembers where it was, leaves its read section
 * (letting the grace period end) and resumes from the remembered position in
 * a fresh section, or simply stops early:
 *
 *     snap = ksync_generation_snapshot(&gen);
 *     idx = ksync_srcu_read_lock(&ss);
 *     ksync_sized_map_for_each_set_bit_from(bit, map) {
 *             do_one(bit);
 *             if (ksync_generation_changed_since(&gen, snap)) {
 *                     bit++;                     // resume after this one
 *                     ksync_srcu_read_unlock(&ss, idx);
 *                     goto again;                // re-fetch the map, re-snapshot
 *             }
 *     }
 *
 * Writer:  ksync_generation_bump(&gen); ksync_synchronize_srcu(&ss);
 *
 * Ordering (labels used below): the bump is fully ordered (G1), so every
 * update the writer made before it (an unlink, a flag) is visible to a reader
 * whose acquire load (G2) of the counter sees the new value. The counter
 * itself orders nothing for readers that do not look at it: it is a hint to
 * yield early, never a substitute for the grace period.
 *
 * Values are unsigned long and wrap; compare them only with
 * ksync_generation_after() / ksync_generation_changed_since(), never with <.
 *
 * The alternative without a counter: SRCU itself can say that a grace period
 * is waiting on a domain, with ksync_srcu_gp_pending(&ss) (see <ksync/srcu.h>).
 * It costs the writer nothing extra (no counter to bump, no shared cache line
 * written per unregister) and it fires for EVERY writer of the domain, which
 * is what a reader holding up grace periods wants to know; a generation
 * counter fires only for the writers that bump it, and can also carry
 * meaning across read sections ("the set changed since my snapshot, start
 * over"), which gp_pending cannot. examples/walk_and_grow.c shows both.
 */
#ifndef KSYNC_GENERATION_H
#define KSYNC_GENERATION_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

/**
 * struct ksync_generation - a wrap-safe generation counter.
 *
 * Private: use the ksync_generation_*() functions. Bumped by writers,
 * polled by readers; keep it on a cache line readers share rather than
 * writers' hot data.
 */
struct ksync_generation {
	/* private: */
	unsigned long seq;
};

/** KSYNC_GENERATION_INIT - static initialiser (generation 0). */
#define KSYNC_GENERATION_INIT { 0UL }

/**
 * ksync_generation_init() - set @g to generation 0; no reader may use it yet.
 * @g: the counter
 */
static inline void ksync_generation_init(struct ksync_generation *g)
{
	ksync_ulong_store(&g->seq, 0UL);
}

/**
 * ksync_generation_after() - wrap-safe "@a is a later generation than @b".
 * @a: a generation value
 * @b: another
 *
 * Correct while the two are less than LONG_MAX bumps apart.
 */
static KSYNC_ALWAYS_INLINE bool ksync_generation_after(unsigned long a, unsigned long b)
{
	return (long)(a - b) > 0;
}

/**
 * ksync_generation_snapshot() - the current generation, to compare with later.
 * @g: the counter
 *
 * G2: an acquire load; pairs with the fully ordered bump (G1): the caller
 * sees every update a writer made before the bump it observes.
 */
static KSYNC_ALWAYS_INLINE unsigned long ksync_generation_snapshot(const struct ksync_generation *g)
{
	return ksync_smp_load_acquire(&g->seq);
}

/**
 * ksync_generation_bump() - start a new generation.
 * @g: the counter
 *
 * G1: fully ordered (as if ksync_smp_mb() stood on both sides): updates
 * before it are visible to readers that see the new value (pairs with G2), and
 * the caller's later accesses (typically ksync_synchronize_srcu()) happen
 * after it. Writers may bump concurrently; each bump counts.
 *
 * Return: the new generation.
 */
static KSYNC_ALWAYS_INLINE unsigned long ksync_generation_bump(struct ksync_generation *g)
{
	return ksync_ulong_fetch_add(&g->seq, 1UL) + 1UL;
}

/**
 * ksync_generation_changed_since() - whether any bump happened after @snap was taken.
 * @g: the counter
 * @snap: a value from ksync_generation_snapshot() of @g
 *
 * G2: an acquire load of the counter, as in ksync_generation_snapshot().
 * Cheap enough to call between every two items of a walk (one load of a
 * line that only changes when a writer bumps it). Exact for any number of
 * bumps short of a full wrap of unsigned long.
 */
static KSYNC_ALWAYS_INLINE bool ksync_generation_changed_since(const struct ksync_generation *g,
							       unsigned long snap)
{
	return ksync_smp_load_acquire(&g->seq) != snap;
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_GENERATION_H */
