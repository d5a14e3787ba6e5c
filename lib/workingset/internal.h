/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/workingset/internal.h - what the files of ksync::workingset share.
 *
 * Files and who calls whom (no circle, tests/hygiene/lib_symbols.sh):
 *   workingset.c  create/destroy, stats      -> clock.c, shadow.c
 *   shadow.c      shadow store and shrinker  -> clock.c
 *   lru.c         the two LRU flavours       -> clock.c
 *   clock.c       records, clocks, tokens, budget (calls no other file)
 *
 * Record. Per group (and one for the root) the workingset keeps a record:
 * the eviction clock per node (nonresident_age), the classic flavour's
 * per-node list sizes (lru_zone_size), and, once the group went offline,
 * the record that inherited it and the per-node clock translation. Records
 * live in a hash of the token's id field under rec_lock, and are freed only
 * with the workingset: a token may name a group long gone.
 */
#ifndef KSYNC_LIB_WORKINGSET_INTERNAL_H
#define KSYNC_LIB_WORKINGSET_INTERNAL_H

#include <ksync/atomic.h>
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>
#include <ksync/srcu.h>
#include <ksync/workingset.h>

#include "../common/report.h"

#include <pthread.h>

#define WS_REC_BUCKETS 256
#define WS_ID_MASK ((1UL << KSYNC_WORKINGSET_ID_BITS) - 1)
#define WS_NODE_MASK ((1UL << KSYNC_WORKINGSET_NODE_BITS) - 1)
#define WS_CLOCK_BITS (8 * (int)sizeof(unsigned long) - KSYNC_WORKINGSET_CLOCK_SHIFT)
#define WS_CLOCK_MASK ((1UL << WS_CLOCK_BITS) - 1)
/* The kernel's count_shadow_nodes(): nodes may be 1/8 populated. */
#define WS_BUDGET_SHIFT 3
/* The shadow shrinker's batch, in nodes (shadow.c: why not KSYNC_SHRINK_BATCH). */
#define WS_SHADOW_BATCH 16

struct ws_record {
	struct ws_record *hnext;        /* rec_table bucket, under rec_lock */
	struct ksync_memgroup *group;   /* NULL: the root; dereferenced only while inherit is NULL, in a read section */
	struct ws_record *inherit;      /* W1: published with release after delta[] */
	struct ws_record *up;           /* the parent group's record (the root's: NULL); ticks go up it */
	unsigned long field;            /* the token's id field: id % WS_ID_MASK + 1; 0 for the root */
	int nr_nodes;
	long *delta;                    /* per node: inherit's clock - this clock at the offline */
	ksync_atomic_long_t *clock;     /* per node: nonresident_age */
	ksync_atomic_long_t *lru_size;  /* per node: classic flavour's items (lru_zone_size) */
};

struct ksync_workingset {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_srcu_struct *srcu;
	int nr_nodes;
	int set_nodes;                  /* nodes of the set's statistics */

	/* clock.c */
	struct ksync_memgroup_client client;
	int slot;
	pthread_mutex_t rec_lock;
	struct ws_record *rec_table[WS_REC_BUCKETS];
	struct ws_record *root;
	ksync_atomic_long_t *root_lru;  /* per node: items on the LRUs' root lists */
	ksync_atomic_long_t nr_lrus;    /* LRUs using this workingset */

	/* shadow.c */
	struct ksync_shrinker *shrinker;
	struct ksync_list_lru shadow_lru;
	pthread_mutex_t shadow_lock;
	struct ws_shadow_node **buckets;
	unsigned int nr_buckets;

	/* counters (relaxed) */
	ksync_atomic_long_t evictions, refaults, refaults_ws, refaults_translated, activations;
	ksync_atomic_long_t shadow_nodes, shadow_entries, nodes_reclaimed, entries_reclaimed;
};

/* clock.c */
int ksync__ws_clock_init(struct ksync_workingset *ws);
int ksync__ws_clock_fini(struct ksync_workingset *ws);
bool ksync__ws_judge(struct ksync_workingset *ws, unsigned long token, struct ksync_workingset_refault_info *info);
unsigned long ksync__ws_evict(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid);
void ksync__ws_activate(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid);
bool ksync__ws_token_ok(const struct ksync_workingset *ws, unsigned long token);
struct ws_record *ksync__ws_resolve(struct ksync_workingset *ws, unsigned long token, unsigned long *eviction,
				    int *translated);
unsigned long ksync__ws_lru_pages(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid);
void ksync__ws_lru_account(struct ksync_workingset *ws, struct ksync_memgroup *g, int nid, long delta,
			   bool classic);
void ksync__ws_lru_to_root(struct ksync_workingset *ws, struct ksync_memgroup *child, int nid, long n,
			   bool classic);
void ksync__ws_lru_classic_move(struct ksync_workingset *ws, struct ksync_memgroup *from,
				struct ksync_memgroup *to, int nid, long n);

/* shadow.c */
int ksync__ws_shadow_init(struct ksync_workingset *ws, unsigned int nr_buckets);
int ksync__ws_shadow_start(struct ksync_workingset *ws);
int ksync__ws_shadow_fini(struct ksync_workingset *ws);
int ksync__ws_store(struct ksync_workingset *ws, unsigned long key, unsigned long token);
unsigned long ksync__ws_take(struct ksync_workingset *ws, unsigned long key);

static inline int ksync__ws_token_nid(unsigned long token)
{
	return (int)((token >> 1) & WS_NODE_MASK);
}

#endif /* KSYNC_LIB_WORKINGSET_INTERNAL_H */
