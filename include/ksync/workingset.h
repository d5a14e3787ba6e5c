/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/workingset.h - workingset detection with shadow entries (the kernel's mm/workingset.c)
 *
 * A cache that evicts an item forgets it; a cache with workingset detection
 * leaves a *shadow entry* where the item was: a compact token saying when,
 * on the eviction clock of the item's memory group and node, the item was
 * evicted. If the item comes back (a refault) while its shadow is still
 * there, the *refault distance* (how many evictions and activations the
 * group saw since) tells whether the item would have stayed had the cache
 * been a little larger: distance <= the group's workingset size means the
 * item belongs to the workingset, and the caller adds it back active at
 * once instead of letting it go round the inactive list again (thrashing
 * protection). A one-pass scan of many keys cannot push out a hot set that
 * keeps refaulting within its distance.
 *
 * Pieces (and their kernel names):
 *  - &struct ksync_workingset: per memory group and node an eviction clock
 *    (``nonresident_age``), aged by every eviction and activation of the
 *    group and of its descendants;
 *  - ksync_workingset_eviction() (``workingset_eviction``): a token packing
 *    the group's id, the node and the clock (``pack_shadow``);
 *  - ksync_workingset_refault() (``workingset_refault`` /
 *    ``workingset_test_recent``): the decision, distance <= the group's
 *    workingset size, which is the group's **local** LRU statistic
 *    (%KSYNC_MEMGROUP_STAT_LRU on the node, <ksync/memgroup_stat.h>: the one
 *    counter every LRU flavour maintains);
 *  - ksync_workingset_activation() (``workingset_activation``);
 *  - a shadow store: shadow entries live in *shadow nodes* of
 *    %KSYNC_WORKINGSET_NODE_SLOTS slots of the cache's key space (the
 *    kernel's xarray nodes); nodes sit on a ``ksync::list_lru`` per (group,
 *    node) and a memcg-aware shrinker trims them: its count_objects is the
 *    kernel's ``count_shadow_nodes`` (nodes beyond a budget of the group's
 *    local LRU statistic >> 3: nodes may be 1/8 populated), its scan is
 *    ``shadow_lru_isolate`` (a node beyond the budget is freed, with every
 *    shadow entry in it);
 *  - two LRU flavours for the cache (&struct ksync_lru): %KSYNC_LRU_CLASSIC,
 *    an active/inactive pair, and %KSYNC_MGLRU, a few generations aged by a
 *    sweep. Both maintain %KSYNC_MEMGROUP_STAT_LRU; only the classic one
 *    also keeps per-list sizes (the kernel's ``mz->lru_zone_size``). The
 *    budget must read the former: reading the latter collapses it to ~0
 *    under MGLRU ("mm: workingset: fix the shadow node budget under MGLRU";
 *    docs/workingset.md, and the planted bug
 *    KSYNC_PLANT(WORKINGSET_BUDGET_FROM_CLASSIC_ONLY)).
 *
 * Reparenting. Tokens outlive their group: when a group goes offline its
 * statistics go to its parent (memgroup's dying redirection), and its clock
 * is *translated* onto the parent's: the workingset remembers, per node, the
 * difference of the two clocks at that moment, so a token of the dead group
 * is judged against the ancestor that inherited its statistics, with the
 * distance it would have had (evictions in the group until its offline,
 * plus the ancestor's since). Groups going offline in a chain translate
 * through each step. A group's record (clock, translation) is kept until
 * the workingset is destroyed: a few dozen bytes per group ever created.
 * Group ids in tokens are %KSYNC_WORKINGSET_ID_BITS wide: a token of a group
 * whose id has been reused modulo that width is judged against the newer
 * group (the kernel's memcg id reuse), never against freed memory.
 *
 * Typical use (a cache of key -> item, items embed a &struct ksync_lru_item):
 *
 *   miss(key):
 *           token = ksync_workingset_shadow_take(ws, key);
 *           active = token && ksync_workingset_refault(ws, token, NULL);
 *           ksync_lru_add(lru, &item->lru, group, nid, active);
 *   hit(item):
 *           ksync_lru_mark_accessed(lru, &item->lru);
 *   make room:
 *           ksync_lru_evict(lru, group, nid, n, evicted, cache);
 *   evicted(lru_item, token, cache):      // off the LRU, the caller's again
 *           remove the item from the cache's index, free it;
 *           ksync_workingset_shadow_store(ws, key_of(lru_item), token);
 *
 * Concurrency: every function may be called from any thread. The shadow
 * store is one lock (taken by the shrinker's scan with a trylock, so the
 * shrinker never waits for a cache); each &struct ksync_lru is one lock.
 * The clocks are atomics. An LRU's callback runs without its lock.
 *
 * Errors follow docs/errors.md: misuse (a NULL workingset, a bad nid, a
 * group of another set, a malformed token, destroying a non-empty LRU) is
 * reported once per call site with the caller's file and line and returns
 * a negative errno, false or 0; running out of memory is not reported (a
 * shadow store that cannot allocate a node drops the shadow: -ENOMEM).
 * Destroy a workingset and its LRUs after the set's groups are freed (they
 * are clients of the set, which refuses to unregister them while groups
 * exist), the LRUs first.
 *
 * Compiled in ksync::workingset (lib/workingset/).
 */
#ifndef KSYNC_WORKINGSET_H
#define KSYNC_WORKINGSET_H

#include <ksync/compiler.h>
#include <ksync/list.h>
#include <ksync/memgroup.h>
#include <ksync/shrinker.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_workingset;
struct ksync_lru;

/** KSYNC_WORKINGSET_NODE_SLOTS - shadow entries per shadow node (the kernel's XA_CHUNK_SIZE). */
#define KSYNC_WORKINGSET_NODE_SLOTS 64

/**
 * DOC: token layout
 *
 * A token is an unsigned long, never 0 (0 means "no shadow"):
 *  bit 0                      1 (the kernel's xa_mk_value() tag)
 *  bits 1..6                  the node (%KSYNC_WORKINGSET_NODE_BITS)
 *  bits 7..26                 the group's id + 1, 0 for no group (%KSYNC_WORKINGSET_ID_BITS)
 *  bits 27..                  the eviction clock, modulo 2^(BITS_PER_LONG - 27)
 * Distances are computed modulo the clock's width (the kernel's EVICTION_MASK).
 */
#define KSYNC_WORKINGSET_NODE_BITS 6
#define KSYNC_WORKINGSET_ID_BITS 20
#define KSYNC_WORKINGSET_CLOCK_SHIFT (1 + KSYNC_WORKINGSET_NODE_BITS + KSYNC_WORKINGSET_ID_BITS)

/**
 * ksync_workingset_create() - a workingset for the groups of @reg.
 * @reg: the shrinker registry whose groups (ksync_shrinker_registry_groups())
 *	and nodes (ksync_shrinker_registry_nr_nodes(), at most 64) the
 *	workingset keeps clocks for, and where its shadow shrinker registers
 * @nr_buckets: hash buckets of the shadow store (rounded up to a power of
 *	two; 0: 1024)
 *
 * Registers a client of the set (clocks per group and node) and a
 * ``ksync::list_lru`` of shadow nodes (another client), allocates and
 * registers a %KSYNC_SHRINKER_MEMCG_AWARE | %KSYNC_SHRINKER_NUMA_AWARE
 * shrinker named "workingset-shadow". Return: the workingset; NULL for a
 * NULL @reg or a registry without a set (reported), when the set has no
 * client slots left, or out of memory.
 */
struct ksync_workingset *ksync__workingset_create(const char *file, int line, struct ksync_shrinker_registry *reg,
						 unsigned int nr_buckets);
#define ksync_workingset_create(...) ksync__workingset_create(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_workingset_destroy() - free @ws: its shrinker, its shadow entries, its records.
 * @ws: the workingset; the set must have no groups left and no LRU may
 *	still use @ws (ksync_lru_destroy() them first)
 *
 * Return: 0; -EINVAL for NULL (reported); -EBUSY (reported, nothing freed)
 * while the set has groups or an LRU uses @ws.
 */
int ksync__workingset_destroy(const char *file, int line, struct ksync_workingset *ws);
#define ksync_workingset_destroy(...) ksync__workingset_destroy(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_workingset_eviction() - an item of (@group, @nid) is being evicted: its token.
 * @ws: the workingset
 * @group: the group the item is charged to (the caller holds a reference or
 *	is inside a read section of the set's domain), or NULL for the root;
 *	a group going or gone offline is replaced by the ancestor that took
 *	its statistics
 * @nid: the node, below the registry's node count
 *
 * Reads the group's clock, then ages it and its ancestors' by one (the
 * kernel's order: the token names the clock before this eviction). Relaxed
 * atomics: a token orders nothing. Return: the token (never 0); 0 on
 * misuse (reported).
 */
unsigned long ksync__workingset_eviction(const char *file, int line, struct ksync_workingset *ws,
					 struct ksync_memgroup *group, int nid);
#define ksync_workingset_eviction(...) ksync__workingset_eviction(__FILE__, __LINE__, __VA_ARGS__)

/**
 * struct ksync_workingset_refault_info - how ksync_workingset_refault() judged a token.
 * @distance: evictions and activations on the judging clock since the eviction
 * @workingset_size: the judging group's local %KSYNC_MEMGROUP_STAT_LRU on the node
 * @group_id: ksync_memgroup_id() of the judging group (the token's, or the
 *	ancestor that inherited it); -1 for the root
 * @nid: the token's node
 * @translated: offlines the token was translated through (0: its own group)
 */
struct ksync_workingset_refault_info {
	unsigned long distance;
	unsigned long workingset_size;
	int group_id;
	int nid;
	int translated;
};

/**
 * ksync_workingset_refault() - an evicted item comes back: is it in the workingset?
 * @ws: the workingset
 * @token: what ksync_workingset_eviction() returned for the item
 * @info: filled with the judgement when not NULL (on true and on false)
 *
 * The distance is measured on the clock of the token's group, or of the
 * nearest ancestor that inherited it (see "Reparenting" above). When the
 * distance is within the workingset size, the judging clock is aged as an
 * activation would, and the caller should add the item active
 * (ksync_lru_add(..., true)). Return: true for a workingset refault; false
 * otherwise, and for a malformed token (0, tag bit clear, node out of
 * range: reported).
 */
bool ksync__workingset_refault(const char *file, int line, struct ksync_workingset *ws, unsigned long token,
			       struct ksync_workingset_refault_info *info);
#define ksync_workingset_refault(...) ksync__workingset_refault(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_workingset_activation() - an item of (@group, @nid) was promoted to the workingset.
 *
 * Ages the clocks of @group and its ancestors by one, as an eviction does
 * (the kernel's workingset_activation(): activations push inactive items
 * towards eviction too). The LRU flavours call it on promotion. Same
 * rules for @group and @nid as ksync_workingset_eviction(). Return: 0;
 * -EINVAL on misuse (reported).
 */
int ksync__workingset_activation(const char *file, int line, struct ksync_workingset *ws,
				 struct ksync_memgroup *group, int nid);
#define ksync_workingset_activation(...) ksync__workingset_activation(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_workingset_shadow_store() - leave @token at @key in the shadow store.
 * @ws: the workingset
 * @key: the item's key in the cache's key space; keys that differ only
 *	in their low 6 bits share a shadow node
 * @token: from ksync_workingset_eviction() (not 0)
 *
 * Replaces a shadow already there. A new shadow node goes on the shadow
 * list_lru of the token's (group, node) (the ancestor that inherited it,
 * if the group is gone), which sets the shrinker's bit for it. Return: 0;
 * -ENOMEM (nothing stored, not reported); -EINVAL for a malformed token or
 * a NULL @ws (reported).
 */
int ksync__workingset_shadow_store(const char *file, int line, struct ksync_workingset *ws, unsigned long key,
				   unsigned long token);
#define ksync_workingset_shadow_store(...) ksync__workingset_shadow_store(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_workingset_shadow_take() - remove and return the shadow at @key.
 *
 * A node left empty is taken off its list and freed. Return: the token, or
 * 0 when there is none (never stored, taken, or reclaimed by the shadow
 * shrinker); 0 for a NULL @ws (reported).
 */
unsigned long ksync__workingset_shadow_take(const char *file, int line, struct ksync_workingset *ws,
					    unsigned long key);
#define ksync_workingset_shadow_take(...) ksync__workingset_shadow_take(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_workingset_shadow_budget() - the shadow shrinker's budget for (@group, @nid), in nodes.
 *
 * The kernel's count_shadow_nodes() without the shrinker: the group's local
 * %KSYNC_MEMGROUP_STAT_LRU on @nid (for the root: the LRUs' root lists plus
 * the set's root counter) >> 3. The shrinker's count_objects returns the
 * nodes of (group, node) beyond it. Return: the budget; 0 on misuse (reported).
 */
unsigned long ksync__workingset_shadow_budget(const char *file, int line, struct ksync_workingset *ws,
					      struct ksync_memgroup *group, int nid);
#define ksync_workingset_shadow_budget(...) ksync__workingset_shadow_budget(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_workingset_shrinker() - @ws's shadow shrinker (to pass to ksync_shrink_slab() callers, or for tests). */
struct ksync_shrinker *ksync_workingset_shrinker(struct ksync_workingset *ws);

/**
 * struct ksync_workingset_stats - what a workingset did (relaxed counters, a snapshot).
 * @evictions: tokens made
 * @refaults: ksync_workingset_refault() calls with a well-formed token
 * @refaults_workingset: of those, judged within the workingset (activate)
 * @refaults_translated: of those, judged by an ancestor after offlines
 * @activations: ksync_workingset_activation() calls
 * @shadow_nodes: shadow nodes allocated now
 * @shadow_entries: shadow entries stored now
 * @nodes_reclaimed: shadow nodes freed by the shrinker
 * @entries_reclaimed: shadow entries those nodes held
 */
struct ksync_workingset_stats {
	unsigned long evictions;
	unsigned long refaults;
	unsigned long refaults_workingset;
	unsigned long refaults_translated;
	unsigned long activations;
	unsigned long shadow_nodes;
	unsigned long shadow_entries;
	unsigned long nodes_reclaimed;
	unsigned long entries_reclaimed;
};

/** ksync_workingset_stats() - a snapshot of @ws's counters into @out (zeroes for a NULL @ws). */
void ksync_workingset_stats(struct ksync_workingset *ws, struct ksync_workingset_stats *out);

/* ------------------------------------------------------------------------ */
/* LRU flavours                                                             */

/**
 * enum ksync_lru_flavour - how a &struct ksync_lru orders its items.
 * @KSYNC_LRU_CLASSIC: the classic active/inactive pair. New items go to the
 *	inactive list (refaults in the workingset to the active one); a
 *	second access on the inactive list promotes to active (an
 *	activation); eviction first deactivates the head of the active list
 *	while it is larger than the inactive one (referenced items rotate),
 *	then evicts from the inactive head (referenced items are promoted).
 *	Keeps per-list sizes for the group besides the shared statistic (the
 *	kernel's lru_zone_size).
 * @KSYNC_MGLRU: a multi-generation LRU of %KSYNC_MGLRU_NR_GENS generations.
 *	New items go to the oldest generation (workingset refaults to the
 *	youngest); an access only marks the item (no list move); eviction
 *	takes the oldest generation, promoting marked items to the youngest
 *	(an activation); when fewer than two generations are left, aging
 *	opens a new youngest generation and sweeps the others, moving marked
 *	items into it. Maintains only the shared statistic.
 */
enum ksync_lru_flavour {
	KSYNC_LRU_CLASSIC,
	KSYNC_MGLRU,
};

/** KSYNC_MGLRU_NR_GENS - generations of a %KSYNC_MGLRU (the kernel's MAX_NR_GENS). */
#define KSYNC_MGLRU_NR_GENS 4

/**
 * struct ksync_lru_item - what a cached item embeds to be on a &struct ksync_lru.
 *
 * Fields are the LRU's (written under its lock; @referenced by
 * ksync_lru_mark_accessed() without it; @token holds an evicted item's
 * token from the eviction to its callback). Initialise with
 * ksync_lru_item_init(); do not write.
 */
struct ksync_lru_item {
	struct ksync_list_head link;
	struct ksync_memgroup *group;
	unsigned long token;
	int nid;
	int list;
	bool on_lru;
	int referenced;
};

/** ksync_lru_item_init() - make @item an item on no LRU. */
static inline void ksync_lru_item_init(struct ksync_lru_item *item)
{
	ksync_init_list_head(&item->link);
	item->group = NULL;
	item->token = 0;
	item->nid = 0;
	item->list = 0;
	item->on_lru = false;
	item->referenced = 0;
}

/**
 * ksync_lru_evict_cb - called by ksync_lru_evict() for each evicted item,
 * without the LRU's lock: the item is on no list and belongs to the caller
 * again. @token is its eviction token (0 when the LRU has no workingset).
 */
typedef void (*ksync_lru_evict_cb)(struct ksync_lru_item *item, unsigned long token, void *arg);

/**
 * ksync_lru_create() - an LRU of @flavour per (group, node) of @ws's set.
 * @ws: the workingset whose clocks evictions and activations age and whose
 *	tokens ksync_lru_evict() makes
 * @flavour: &enum ksync_lru_flavour
 *
 * A client of the set (%KSYNC_MEMGROUP_ORDER_LRU): a group going offline
 * has its items moved to its parent's lists (the root lists for a
 * top-level group), in order, with their per-list sizes. Return: the LRU;
 * NULL for a NULL @ws or a bad @flavour (reported), no client slot left,
 * or out of memory.
 */
struct ksync_lru *ksync__lru_create(const char *file, int line, struct ksync_workingset *ws,
				   enum ksync_lru_flavour flavour);
#define ksync_lru_create(...) ksync__lru_create(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_lru_destroy() - free an empty @lru. Return: 0; -EBUSY (reported,
 * nothing freed) while it holds items or its set has groups; -EINVAL for NULL.
 */
int ksync__lru_destroy(const char *file, int line, struct ksync_lru *lru);
#define ksync_lru_destroy(...) ksync__lru_destroy(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_lru_add() - put @item on the list of (@group, @nid).
 * @lru: the LRU
 * @item: an item on no LRU
 * @group: a group of the set (alive: a reference or a read section), or
 *	NULL for the root lists; a group going offline is replaced by its
 *	nearest online ancestor
 * @nid: the node
 * @active: a workingset refault: the active list (classic) or the youngest
 *	generation (MGLRU); else the inactive list or the oldest generation
 *
 * Adds one to the group's %KSYNC_MEMGROUP_STAT_LRU on @nid. Return: 0;
 * -EBUSY when @item is on an LRU already, -EINVAL for a bad nid or a group
 * of another set (both reported).
 */
int ksync__lru_add(const char *file, int line, struct ksync_lru *lru, struct ksync_lru_item *item,
		   struct ksync_memgroup *group, int nid, bool active);
#define ksync_lru_add(...) ksync__lru_add(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_lru_del() - take @item off @lru (wherever reparenting moved it).
 * Return: true if it was on the LRU; false if on none (already evicted).
 */
bool ksync__lru_del(const char *file, int line, struct ksync_lru *lru, struct ksync_lru_item *item);
#define ksync_lru_del(...) ksync__lru_del(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_lru_mark_accessed() - a hit on @item (the kernel's folio_mark_accessed()).
 *
 * Classic: a second access on the inactive list moves the item to the
 * active list (an activation of its group's clock); MGLRU: marks it, which
 * the next eviction or aging pass honours. An item on no LRU is ignored.
 */
void ksync_lru_mark_accessed(struct ksync_lru *lru, struct ksync_lru_item *item);

/**
 * ksync_lru_evict() - evict up to @nr items of the lists of (@group, @nid).
 * @lru: the LRU
 * @group: the group whose own lists to take from (NULL: the root lists)
 * @nid: the node
 * @nr: most items to evict
 * @cb: called for each evicted item, without the lock, with its token
 * @arg: passed to @cb
 *
 * Each eviction makes a token with ksync_workingset_eviction() (under the
 * lock, where the item's group is alive) and takes one off the group's
 * %KSYNC_MEMGROUP_STAT_LRU. Return: the items evicted (fewer than @nr when
 * the lists ran out); 0 on misuse (reported).
 */
unsigned long ksync__lru_evict(const char *file, int line, struct ksync_lru *lru, struct ksync_memgroup *group,
			       int nid, unsigned long nr, ksync_lru_evict_cb cb, void *arg);
#define ksync_lru_evict(...) ksync__lru_evict(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_lru_size() - items on the lists of (@group, @nid) now (0 on misuse, reported). */
unsigned long ksync__lru_size(const char *file, int line, struct ksync_lru *lru, struct ksync_memgroup *group,
			      int nid);
#define ksync_lru_size(...) ksync__lru_size(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_lru_flavour() - @lru's flavour. */
enum ksync_lru_flavour ksync_lru_flavour(const struct ksync_lru *lru);

KSYNC_EXTERN_C_END

#endif /* KSYNC_WORKINGSET_H */
