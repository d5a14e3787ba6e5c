/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/memgroup/internal.h - the types shared by the files of the memory-group
 * module: memgroup.c (hierarchy, lifecycle, clients), objcg.c (charge
 * handles) and stats.c (statistics with dying redirection). The last two are
 * built-in clients of every set, registered by ksync_memgroup_set_create().
 */
#ifndef KSYNC_LIB_MEMGROUP_INTERNAL_H
#define KSYNC_LIB_MEMGROUP_INTERNAL_H

#include <ksync/memgroup.h>
#include <ksync/memgroup_testing.h>
#include <ksync/objcg.h>

#include <ksync/atomic.h>
#include <ksync/list.h>
#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include "../common/report.h"

#include <pthread.h>
#include <stdbool.h>

struct ksync_memgroup_set {
	struct ksync_srcu_struct srcu;
	pthread_mutex_t mutex;
	struct ksync_list_head groups; /* every group not yet released; under mutex */
	const struct ksync_memgroup_client *clients[KSYNC_MEMGROUP_MAX_CLIENTS];
	void *priv[KSYNC_MEMGROUP_MAX_CLIENTS];
	int nr_groups;
	int next_id;
	int nr_nodes;              /* of the statistics */
	int objcg_slot, stats_slot; /* the built-in clients (objcg.c, stats.c) */
	pthread_mutex_t objcg_lock; /* the handles' group pointers and lists */
	/* Statistics of top-level groups that went away: [nid][item]. */
	ksync_atomic_long_t *root_stats;
};

struct ksync_memgroup {
	struct ksync__memgroup_head head; /* first: read inline by ksync_memgroup_client_state() */
	struct ksync_memgroup_set *set;
	struct ksync_memgroup *parent;
	int id;
	int state;                 /* enum ksync_memgroup_state; M1 */
	int nr_online_children;    /* under set->mutex */
	unsigned int onlined;      /* clients whose online hook ran here; under set->mutex */
	ksync_atomic_long_t refcount; /* M2; callers' | children's | the creator's, see memgroup.c */
	struct ksync_list_head link; /* set->groups */
	struct ksync_list_head children; /* RCU list of the children not yet released */
	struct ksync_list_head sibling;  /* on parent->children; under set->mutex, read under SRCU */
	struct ksync_rcu_head rcu;
};


/* memgroup.c: the yield hook of <ksync/memgroup_testing.h>. */
extern void (*ksync__memgroup_yield_hook)(int, void *);
extern void *ksync__memgroup_yield_arg;

static inline void memgroup_yield_point(int point)
{
#if KSYNC_SEAMS /* a production build (-DKSYNC_SEAMS=OFF) has no seam */
	void (*hook)(int, void *) = KSYNC_READ_ONCE(ksync__memgroup_yield_hook);

	if (ksync_unlikely(hook != NULL)) {
		/* Y2: pairs with Y1 in ksync_memgroup_set_yield_hook(). */
		hook = ksync_smp_load_acquire(&ksync__memgroup_yield_hook);
		if (hook)
			hook(point, KSYNC_READ_ONCE(ksync__memgroup_yield_arg));
	}
#else
	(void)point;
#endif
}

/* objcg.c, stats.c: the built-in clients. */
extern const struct ksync_memgroup_client ksync__objcg_client;
extern const struct ksync_memgroup_client ksync__stats_client;
/* stats.c: @delta to the set's root counter (the caller checked @nid and @item). */
void ksync__memgroup_stat_root_add(struct ksync_memgroup_set *set, int nid, int item, long delta);

#endif /* KSYNC_LIB_MEMGROUP_INTERNAL_H */
