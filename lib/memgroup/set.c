/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/memgroup/set.c - sets of memory groups: creation, with the two
 * built-in clients (charge handles, objcg.c; statistics, stats.c) in the
 * last slots, and destruction. Apart from memgroup.c, which the built-in
 * clients call: so no file of the module calls back into one that calls it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct ksync_memgroup_set *ksync_memgroup_set_create_nodes(int nr_nodes)
{
	struct ksync_memgroup_set *set;

	if (nr_nodes < 1 || nr_nodes > KSYNC_MEMGROUP_MAX_NODES)
		return NULL;
	set = KSYNC__ALLOC(calloc(1, sizeof(*set)));
	if (!set)
		return NULL;
	set->nr_nodes = nr_nodes;
	set->root_stats = KSYNC__ALLOC(calloc((size_t)nr_nodes * KSYNC_MEMGROUP_NR_STATS, sizeof(ksync_atomic_long_t)));
	if (!set->root_stats || ksync_init_srcu_struct(&set->srcu) != 0) {
		free(set->root_stats);
		free(set);
		return NULL;
	}
	pthread_mutex_init(&set->mutex, NULL);
	pthread_mutex_init(&set->objcg_lock, NULL);
	ksync_init_list_head(&set->groups);
	/*
	 * The built-in clients, charge handles and statistics, take the last two
	 * slots: the program's clients get the first ones, where
	 * ksync_memgroup_client_state() finds them with a single compare.
	 */
	set->objcg_slot = KSYNC_MEMGROUP_MAX_CLIENTS - 2;
	set->stats_slot = KSYNC_MEMGROUP_MAX_CLIENTS - 1;
	set->clients[set->objcg_slot] = &ksync__objcg_client;
	set->priv[set->objcg_slot] = set;
	set->clients[set->stats_slot] = &ksync__stats_client;
	set->priv[set->stats_slot] = set;
	return set;
}

struct ksync_memgroup_set *ksync_memgroup_set_create(void)
{
	return ksync_memgroup_set_create_nodes(1);
}

int ksync__memgroup_set_destroy(KSYNC_SITE_ARGS, struct ksync_memgroup_set *set)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	bool busy = false;

	if (!set)
		return -EINVAL;
	ksync__mutex_lock(&set->mutex);
	busy = set->nr_groups != 0;
	for (int i = 0; i < KSYNC_MEMGROUP_MAX_CLIENTS; i++)
		busy |= set->clients[i] != NULL && i != set->objcg_slot && i != set->stats_slot;
	if (!busy) {
		set->clients[set->objcg_slot] = NULL;
		set->clients[set->stats_slot] = NULL;
	}
	pthread_mutex_unlock(&set->mutex);
	if (MISUSE(at, busy, "ksync_memgroup_set_destroy: groups or clients remain; leaking the set"))
		return -EBUSY;
	ksync_srcu_barrier(&set->srcu); /* queued group and handle frees, final stat moves */
	ksync_cleanup_srcu_struct(&set->srcu);
	pthread_mutex_destroy(&set->mutex);
	pthread_mutex_destroy(&set->objcg_lock);
	free(set->root_stats);
	free(set);
	return 0;
}
