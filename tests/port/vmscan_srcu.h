/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The types of the ported lockless shrinker (vmscan_srcu.c): the kernel's own
 * struct shrinker, struct shrink_control, struct mem_cgroup and struct
 * shrinker_info, declared here by the port, beside <ksync/kernel.h>.
 */
#ifndef VMSCAN_SRCU_H
#define VMSCAN_SRCU_H

#include <ksync/kernel.h>

#define VMS_NR_NODES 2

#define SHRINK_STOP (~0UL)
#define SHRINK_EMPTY (~0UL - 1)
#define SHRINK_BATCH 128
#define DEFAULT_SEEKS 2
#define SHRINKER_REGISTERED (1 << 0)
#define SHRINKER_MEMCG_AWARE (1 << 2)

struct mem_cgroup;

struct shrink_control {
	int nid;
	unsigned long nr_to_scan;
	unsigned long nr_scanned;
	struct mem_cgroup *memcg;
};

struct shrinker {
	unsigned long (*count_objects)(struct shrinker *, struct shrink_control *sc);
	unsigned long (*scan_objects)(struct shrinker *, struct shrink_control *sc);
	long batch;
	int seeks;
	unsigned flags;
	struct list_head list;
	int id;
	atomic_long_t *nr_deferred;
};

struct shrinker_info {
	struct rcu_head rcu;
	atomic_long_t *nr_deferred;
	unsigned long *map;
	int map_nr_max;
};

struct mem_cgroup_per_node {
	struct shrinker_info __rcu *shrinker_info;
};

struct mem_cgroup {
	struct list_head node;
	struct mem_cgroup_per_node nodeinfo[VMS_NR_NODES];
};

extern struct srcu_struct shrinker_srcu;
int register_shrinker(struct shrinker *shrinker);
void unregister_shrinker(struct shrinker *shrinker);
void set_shrinker_bit(struct mem_cgroup *memcg, int nid, int shrinker_id);
unsigned long shrink_slab(int nid, struct mem_cgroup *memcg, int priority);
int memcg_online(struct mem_cgroup *memcg);
void memcg_offline(struct mem_cgroup *memcg);
void vmscan_barrier(void);

#endif /* VMSCAN_SRCU_H */
