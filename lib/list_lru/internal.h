/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/list_lru/internal.h - the types and helpers the files of ksync::list_lru
 * share. The theory of operation, with every barrier pair, opens list_lru.c.
 *
 * Files, by job, and whom each calls (one way only):
 *   list_lru.c  init and destroy, add, del, counts, statistics  -> group, lists
 *   group.c     the memory-group client: online, offline (retirement and
 *               reparenting), release                          -> lists
 *   walk.c      walks of one list, a node, every list; isolation; the
 *               shrinker helpers                   -> lists, list_lru (counts)
 *   lists.c     the lists: create, look up and lock, add and del under the
 *               lock, counts, the argument checks              -> (none)
 * Functions one file exports to another carry the private prefix ksync__lru_.
 */
#ifndef KSYNC_LIB_LIST_LRU_INTERNAL_H
#define KSYNC_LIB_LIST_LRU_INTERNAL_H

#include <ksync/impl/sched.h> /* the blocking wrappers; <ksync/fuzzing.h> */
#include <ksync/list_lru.h>
#include <ksync/list_lru_testing.h>

#include <ksync/atomic.h>
#include <ksync/list.h>
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>
#include <ksync/rculist.h>
#include <ksync/rcupdate.h>
#include <ksync/shrinker.h>
#include <ksync/srcu.h>

#include "../common/report.h"

#include <pthread.h>
#include <stdbool.h>

struct ksync_list_lru_one {
	pthread_mutex_t lock;
	struct ksync_list_head items;   /* under lock */
	long nr_items;                  /* written under lock; read lockless */
	bool dead;                      /* under lock; set once by retirement */
	int nid;
	struct ksync__list_lru *lru;
	struct ksync_memgroup *group;   /* NULL: a global list */
	struct ksync_list_head link;    /* lru->lists (groups' lists only); RCU, under lru->mutex */
	struct ksync_rcu_head rcu;
};

/*
 * Lists never share a cache line: groups' lists are allocated a line (or
 * two) of their own, and each global list sits in a slot aligned to one.
 * (The list type itself is not over-aligned: the head of lru->lists is
 * not one, and list iteration forms its container.)
 */
#define LIST_ALLOC_SIZE                                                        \
	((sizeof(struct ksync_list_lru_one) + KSYNC_CACHELINE_SIZE - 1) & ~(size_t)(KSYNC_CACHELINE_SIZE - 1))

struct lru_global {
	struct ksync_list_lru_one l;
} KSYNC_CACHELINE_ALIGNED;

/* A group's lists, one entry per node: NULL, a list, or RETIRED. */
struct lru_table {
	struct ksync_rcu_head rcu;
	struct ksync_list_lru_one *node[];
};

struct ksync__list_lru {
	struct ksync_memgroup_client client; /* its address names this lru in every group */
	struct ksync_list_lru *owner;
	struct ksync_memgroup_set *set;      /* NULL: global lists only */
	struct ksync_srcu_struct *srcu;      /* the set's domain */
	struct ksync_shrinker *shrinker;     /* memcg aware, or NULL */
	int nr_nodes;
	int slot;
	pthread_mutex_t mutex;               /* creation and retirement of entries; lists */
	struct ksync_list_head lists;        /* every group list not yet retired */
	void (*hook)(struct ksync_list_lru *lru, int point, void *arg); /* L3 */
	void *hook_arg;
	ksync_atomic_long_t nr_group_lists, nr_created, nr_retired, nr_reparented, nr_retries;
	struct lru_global global[];          /* nr_nodes */
};

/* The marker of a retired table entry (lists.c): its address is all that counts. */
extern char ksync__lru_retired_marker;
#define RETIRED ((struct ksync_list_lru_one *)(void *)&ksync__lru_retired_marker)

/* A yield point of <ksync/list_lru_testing.h> (nothing in a build without seams). */
static KSYNC_ALWAYS_INLINE void lru_yield_point(struct ksync__list_lru *p, int point)
{
#if KSYNC_SEAMS
	void (*hook)(struct ksync_list_lru *, int, void *) = ksync_smp_load_acquire(&p->hook); /* L3 */

	if (ksync_unlikely(hook))
		hook(p->owner, point, p->hook_arg);
#else
	(void)p;
	(void)point;
#endif
}

static inline struct lru_table *table_of(struct ksync__list_lru *p, const struct ksync_memgroup *g)
{
	return (struct lru_table *)ksync_memgroup_client_state(g, &p->client);
}

static inline struct ksync_list_lru_one *entry_load(struct lru_table *t, int nid)
{
	return ksync_smp_load_acquire(&t->node[nid]); /* L1 */
}

/*
 * The group's KSYNC_MEMGROUP_STAT_LRU counter (<ksync/objcg.h>) follows the
 * items on its lists, so that a shrinker can derive a budget from it (the
 * workingset shadow shrinker's lruvec_page_state_local()). Every caller runs
 * inside a read section of the set's domain (or holds the group), as the
 * statistics require. Reparenting moves no count: the dying group's counter
 * goes to its parent when the statistics client runs, last of the offline
 * steps, so sums stay exact in between. Nodes beyond the set's statistics
 * (a list_lru with more nodes than its set) and the global lists are not
 * counted; items reparented from a counted list to an uncounted one (a
 * top-level group's items going to the global list) leave the counted
 * world there, so their count is taken off the dying group's counter at the
 * move, before the statistics client hands that counter to the root.
 */
static inline bool list_counted(const struct ksync_list_lru_one *l)
{
	return l->group && l->nid < ksync_memgroup_set_nr_nodes(ksync_memgroup_set_of(l->group));
}

static inline void list_account(struct ksync_list_lru_one *l, long delta)
{
	if (list_counted(l))
		ksync_memgroup_stat_add(l->group, l->nid, KSYNC_MEMGROUP_STAT_LRU, delta);
}

/* lists.c */
bool ksync__lru_args_ok(struct ksync_site at, const char *what, struct ksync__list_lru *p, int nid, struct ksync_memgroup *g);
unsigned long ksync__lru_count_lists(struct ksync__list_lru *p, int nid);
void ksync__lru_free_list_rcu(struct ksync_rcu_head *head);
void ksync__lru_free_table_rcu(struct ksync_rcu_head *head);
bool ksync__lru_is_global(const struct ksync__list_lru *p, const struct ksync_list_lru_one *l);
bool ksync__lru_list_add_locked(struct ksync_list_lru_one *l, struct ksync_list_lru_item *item);
void ksync__lru_list_del_locked(struct ksync_list_lru_one *l, struct ksync_list_lru_item *item, struct ksync_list_head *head);
struct ksync_list_lru_one *ksync__lru_list_get_or_create(struct ksync__list_lru *p, struct lru_table *t, struct ksync_memgroup *g, int nid);
void ksync__lru_list_init(struct ksync_list_lru_one *l, struct ksync__list_lru *p, int nid, struct ksync_memgroup *g);
struct ksync_list_lru_one *ksync__lru_lock_list_for_add(struct ksync__list_lru *p, struct ksync_memgroup *g, int nid);
struct ksync_list_lru_one *ksync__lru_lock_list_for_walk(struct ksync__list_lru *p, struct ksync_memgroup *g, int nid);
void ksync__lru_set_shrinker_bit_at(struct ksync__list_lru *p, struct ksync_site at, struct ksync_memgroup *g, int nid);

/* group.c */
void ksync__lru_lru_offline(struct ksync_memgroup *g, int slot, void *priv);
int ksync__lru_lru_online(struct ksync_memgroup *g, int slot, void *priv);
void ksync__lru_lru_release(struct ksync_memgroup *g, int slot, void *priv);

#endif /* KSYNC_LIB_LIST_LRU_INTERNAL_H */
