/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/linux/swap.h - the kernel's workingset calls of <linux/swap.h>, on ksync
 *
 * A subset of the kernel's <linux/swap.h>: workingset_eviction(),
 * workingset_refault() and workingset_activation(), on ksync's workingset
 * (lib/workingset, <ksync/workingset.h>: link ksync::workingset). Not part
 * of <ksync/kernel.h> (a compiled module's spellings, as
 * <ksync/linux/list_lru.h>). Includable alone; with -I<prefix>/include/ksync
 * on the compiler's path a port keeps its own `#include <linux/swap.h>` line
 * (docs/porting.md).
 *
 * How the arguments differ from the kernel's, and why:
 *  - **A workingset comes first.** The kernel's workingset state is global
 *    (a clock per lruvec, found from the folio's memcg and node); ksync's is
 *    a value (&struct ksync_workingset), one per cache, so each call takes
 *    it as an extra first argument.
 *  - **A &struct ksync_lru_item stands for the folio.** The kernel finds a
 *    folio's memcg and node in the folio; ksync's cached item embeds a
 *    &struct ksync_lru_item (the link of its &struct ksync_lru), which
 *    holds the item's group and node while it is on an LRU. A calling
 *    cache passes the item's embedded &struct ksync_lru_item.
 *  - **The shadow is a ksync token cast to void \*.** Its bit 0 is set, as
 *    the kernel's xa_mk_value() sets it, so a port that stores shadows in
 *    slots of its own can tell them from pointers the kernel's way
 *    (``(unsigned long)shadow & 1``).
 *  - **The refault decision is returned**, where the kernel's
 *    workingset_refault() returns nothing and sets the folio's PG_active
 *    (and charges the refault statistics to the folio's memcg) before the
 *    caller puts the folio on the LRU. ksync's item has no flags a caller
 *    may set; the caller passes the result to ksync_lru_add() as its
 *    @active argument, which is what PG_active does at the kernel's
 *    folio_add_lru(). The item argument is kept for the kernel's call shape
 *    and type-checked, not read.
 *  - **Arguments are evaluated once**, as the kernel's functions evaluate
 *    theirs (the macros only add the caller's file and line).
 *  - **One item is one page**: the clocks age by one per eviction and
 *    activation, where the kernel's age by folio_nr_pages().
 *
 * Misuse (a NULL workingset, a bad node, a malformed shadow) is reported at
 * the caller's line, as the ksync_workingset_*() calls it expands to report
 * it (docs/errors.md).
 */
#ifndef KSYNC_LINUX_SWAP_H
#define KSYNC_LINUX_SWAP_H

#include <ksync/workingset.h>

#include <stdint.h>

/*
 * The three are macros (the caller's file and line go to the reports) over
 * inline functions, so that each argument is evaluated once, as the
 * kernel's functions evaluate theirs, and the item is type-checked by the
 * parameter's type.
 */
static inline void *ksync__swap_eviction(const char *file, int line, struct ksync_workingset *ws,
					 const struct ksync_lru_item *item, struct ksync_memgroup *target_memcg)
{
	return (void *)ksync__workingset_eviction(file, line, ws, target_memcg, item->nid);
}

static inline bool ksync__swap_refault(const char *file, int line, struct ksync_workingset *ws,
				       const struct ksync_lru_item *item, const void *shadow)
{
	(void)item; /* the kernel's call shape; see the DOC above */
	return ksync__workingset_refault(file, line, ws, (unsigned long)(uintptr_t)shadow, NULL);
}

static inline void ksync__swap_activation(const char *file, int line, struct ksync_workingset *ws,
					  const struct ksync_lru_item *item)
{
	(void)ksync__workingset_activation(file, line, ws, item->group, item->nid);
}

/**
 * workingset_eviction() - the shadow to leave where an evicted item was.
 * @ws: the &struct ksync_workingset of the cache (the kernel's is global)
 * @item: the item's &struct ksync_lru_item (the kernel's folio), off the
 *	LRU: its node is taken from it
 * @target_memcg: the group whose clock the eviction ages and whose id the
 *	shadow names (the kernel's reclaim target; NULL: the root)
 *
 * ksync_workingset_eviction(): reads the group's eviction clock into the
 * shadow, then ages the clock of the group and its ancestors by one.
 * Relaxed atomics: a shadow orders nothing. Return: the shadow, a ksync
 * token as ``void *`` with bit 0 set (never NULL); NULL on misuse
 * (reported).
 */
#define workingset_eviction(ws, item, target_memcg) \
	ksync__swap_eviction(__FILE__, __LINE__, (ws), (item), (target_memcg))

/**
 * workingset_refault() - an evicted item comes back: does it belong to the workingset?
 * @ws: the &struct ksync_workingset of the cache
 * @item: the returning item's &struct ksync_lru_item, not yet on an LRU
 *	(type-checked and evaluated, never read: see the DOC above)
 * @shadow: what workingset_eviction() returned for it
 *
 * ksync_workingset_refault(): the refault distance (evictions and
 * activations on the clock of the shadow's group, or of the ancestor that
 * inherited it, since the eviction) against the group's workingset size;
 * within it, the judging clock ages as an activation would. Return: true
 * when the item should be added active (the kernel sets PG_active
 * instead): pass it to ksync_lru_add() as @active; false otherwise, and
 * for a malformed shadow (reported).
 */
#define workingset_refault(ws, item, shadow) \
	ksync__swap_refault(__FILE__, __LINE__, (ws), (item), (shadow))

/**
 * workingset_activation() - an item was promoted to the workingset.
 * @ws: the &struct ksync_workingset of the cache
 * @item: the item's &struct ksync_lru_item (the kernel's folio): its group
 *	and node name the clock
 *
 * ksync_workingset_activation(): ages the clock of the item's group and its
 * ancestors by one, as an eviction does (activations push inactive items
 * towards eviction too). ksync's LRU flavours already call it on their own
 * promotions; a port calls it where it promotes by itself. No value (the
 * kernel's is void); misuse is reported.
 */
#define workingset_activation(ws, item) \
	ksync__swap_activation(__FILE__, __LINE__, (ws), (item))

#endif /* KSYNC_LINUX_SWAP_H */
