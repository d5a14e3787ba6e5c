/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Charge handles and statistics of memory groups (<ksync/objcg.h>): handles
 * move to the parent when their group goes offline, objects do not pin dead
 * groups, updates aimed at a dying group land at its nearest online
 * ancestor, and the statistics are conserved exactly, also with updates that
 * race offline and with groups churning under concurrent charging.
 */
#include <ksync/linux/memcontrol.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "ktest.h"

enum { OBJ = KSYNC_MEMGROUP_STAT_OBJECTS, BYTES = KSYNC_MEMGROUP_STAT_BYTES };

/* Counts the groups whose memory is released (release hook of a client). */
static int released;
static int count_online(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)g;
	(void)slot;
	(void)priv;
	return 0;
}
static void count_release(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)g;
	(void)slot;
	(void)priv;
	__atomic_fetch_add(&released, 1, __ATOMIC_RELAXED);
}
static const struct ksync_memgroup_client counter = { .name = "count", .online = count_online, .release = count_release };

KTEST(handles_move_to_the_parent_and_do_not_pin_the_group)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create_nodes(2);
	int slot = ksync_memgroup_client_register(set, &counter, NULL);
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *c = ksync_memgroup_create(NULL, p);
	struct ksync_objcg *h = ksync_memgroup_get_objcg(c);

	released = 0;
	KCHECK(h != NULL);
	ksync_objcg_charge(h, 1, 3, 300);
	KCHECK_EQ(ksync_memgroup_stat_read(c, 1, OBJ), 3);
	KCHECK_EQ(ksync_memgroup_stat_read(c, 1, BYTES), 300);
	struct ksync_memgroup *g = ksync_objcg_get_group(h);
	KCHECK(g == c);
	ksync_memgroup_put(g);

	/* Offline: the handle (held by the "objects") now points at the parent... */
	KCHECK_EQ(ksync_memgroup_offline(c), 0);
	g = ksync_objcg_get_group(h);
	KCHECK(g == p);
	ksync_memgroup_put(g);
	/* ...the child's counters moved there, and the child is gone: not pinned. */
	KCHECK_EQ(ksync_memgroup_stat_read(p, 1, OBJ), 3);
	KCHECK_EQ(ksync_memgroup_stat_read(p, 1, BYTES), 300);
	KCHECK_EQ(released, 1);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 1);
	/* Uncharging the objects lands at the parent too. */
	ksync_objcg_charge(h, 1, -3, -300);
	KCHECK_EQ(ksync_memgroup_stat_read(p, 1, OBJ), 0);

	/* A top-level group's handles end at the root. */
	ksync_objcg_charge(h, 0, 1, 10);
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK(ksync_objcg_get_group(h) == NULL);
	KCHECK_EQ(ksync_memgroup_stat_root(set, 0, OBJ), 1);
	ksync_objcg_charge(h, 0, -1, -10);
	KCHECK_EQ(ksync_memgroup_stat_root(set, 0, OBJ), 0);
	KCHECK_EQ(ksync_memgroup_stat_total(set, 0, BYTES), 0);
	ksync_objcg_put(h);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, slot), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(dying_group_updates_go_to_the_nearest_online_ancestor)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *a = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *b = ksync_memgroup_create(NULL, a);
	struct ksync_memgroup *c = ksync_memgroup_create(NULL, b);

	ksync_memgroup_get(c); /* an updater's reference */
	ksync_memgroup_get(b);
	ksync_memgroup_stat_add(c, 0, KSYNC_MEMGROUP_STAT_USER0, 5);
	KCHECK_EQ(ksync_memgroup_offline(c), 0); /* DEAD, still referenced */
	KCHECK_EQ(ksync_memgroup_stat_read(b, 0, KSYNC_MEMGROUP_STAT_USER0), 5);
	ksync_memgroup_stat_add(c, 0, KSYNC_MEMGROUP_STAT_USER0, 2);
	KCHECK_EQ(ksync_memgroup_stat_read(c, 0, KSYNC_MEMGROUP_STAT_USER0), 0);
	KCHECK_EQ(ksync_memgroup_stat_read(b, 0, KSYNC_MEMGROUP_STAT_USER0), 7);
	KCHECK_EQ(ksync_memgroup_offline(b), 0); /* now c's nearest online ancestor is a */
	ksync_memgroup_stat_add(c, 0, KSYNC_MEMGROUP_STAT_USER0, 1);
	KCHECK_EQ(ksync_memgroup_stat_read(a, 0, KSYNC_MEMGROUP_STAT_USER0), 8);
	/* The slow path gives the same results when forced. */
	ksync_memgroup_stat_add_always_locked(a, 0, KSYNC_MEMGROUP_STAT_USER0, 1);
	KCHECK_EQ(ksync_memgroup_stat_read(a, 0, KSYNC_MEMGROUP_STAT_USER0), 9);
	ksync_memgroup_put(c);
	ksync_memgroup_put(b);
	KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_USER0), 9);
	KCHECK_EQ(ksync_memgroup_offline(a), 0);
	KCHECK_EQ(ksync_memgroup_stat_root(set, 0, KSYNC_MEMGROUP_STAT_USER0), 9);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/*
 * Charging threads against churning groups: totals are conserved exactly.
 * This is where fast-path adds race offline: an add that saw its group online
 * may land after the group's counters were moved; the final move at release
 * carries it up (stats.c), or the totals below would not balance.
 */
#define SLOTS 32
struct churn {
	struct ksync_memgroup_set *set;
	struct ksync_memgroup *root;
	struct ksync_memgroup *group[SLOTS];
	pthread_mutex_t lock[SLOTS];
	int stop;
	long charged[2], uncharged[2]; /* per charging thread */
	long cycles;
};

static void *charger(void *arg)
{
	struct churn *ch = ((struct churn **)arg)[0];
	int me = (int)(intptr_t)((void **)arg)[1];
	struct ksync_objcg *held[64] = { 0 };
	unsigned seed = 11u + (unsigned)me;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		int k = (int)(rand_r(&seed) % 64);
		if (held[k]) {
			ksync_objcg_charge(held[k], 0, -1, -64);
			ch->uncharged[me]++;
			ksync_objcg_put(held[k]);
			held[k] = NULL;
			continue;
		}
		int s = (int)(rand_r(&seed) % SLOTS);
		pthread_mutex_lock(&ch->lock[s]);
		struct ksync_memgroup *g = ch->group[s];
		held[k] = g ? ksync_memgroup_get_objcg(g) : NULL;
		pthread_mutex_unlock(&ch->lock[s]);
		if (held[k]) {
			ksync_objcg_charge(held[k], 0, 1, 64);
			ch->charged[me]++;
		}
	}
	for (int k = 0; k < 64; k++)
		if (held[k]) {
			ksync_objcg_charge(held[k], 0, -1, -64);
			ch->uncharged[me]++;
			ksync_objcg_put(held[k]);
		}
	return NULL;
}

KTEST(charging_against_churning_groups_is_conserved)
{
	static struct churn ch;
	pthread_t t[2];
	void *args[2][2];
	unsigned seed = 3;

	ch.set = ksync_memgroup_set_create();
	ch.root = ksync_memgroup_create(ch.set, NULL);
	for (int s = 0; s < SLOTS; s++) {
		pthread_mutex_init(&ch.lock[s], NULL);
		ch.group[s] = ksync_memgroup_create(NULL, ch.root);
	}
	for (int i = 0; i < 2; i++) {
		args[i][0] = &ch;
		args[i][1] = (void *)(intptr_t)i;
		pthread_create(&t[i], NULL, charger, args[i]);
	}
	double end = ktest_now() + ktest_seconds(0.5);
	while (ktest_now() < end) {
		int s = (int)(rand_r(&seed) % SLOTS);
		pthread_mutex_lock(&ch.lock[s]);
		struct ksync_memgroup *old = ch.group[s];
		ch.group[s] = ksync_memgroup_create(NULL, ch.root);
		pthread_mutex_unlock(&ch.lock[s]);
		KASSERT(ksync_memgroup_offline(old) == 0);
		ch.cycles++;
	}
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	long net = ch.charged[0] + ch.charged[1] - ch.uncharged[0] - ch.uncharged[1];
	printf("  %ld create/offline cycles, %ld charges\n", ch.cycles, ch.charged[0] + ch.charged[1]);
	KCHECK_EQ(net, 0);
	KCHECK_EQ(ksync_memgroup_stat_total(ch.set, 0, OBJ), 0);
	KCHECK_EQ(ksync_memgroup_stat_total(ch.set, 0, BYTES), 0);
	/* Every offlined group is gone (no object pinned one): the live ones remain. */
	KCHECK_EQ(ksync_memgroup_nr_groups(ch.set), SLOTS + 1);
	for (int s = 0; s < SLOTS; s++)
		KCHECK_EQ(ksync_memgroup_offline(ch.group[s]), 0);
	KCHECK_EQ(ksync_memgroup_offline(ch.root), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(ch.set), 0);
}

/* peek: the group's own handle with no reference taken; NULL once offline;
 * the generation grows at each offline that moved handles, never otherwise. */
KTEST(peek_takes_no_reference_and_generation_counts_offlines)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *c = ksync_memgroup_create(NULL, p);
	struct ksync_objcg *h = ksync_memgroup_get_objcg(c);
	unsigned long gen = ksync_objcg_generation();

	KCHECK(h != NULL);
	KCHECK(ksync_memgroup_objcg_peek(c) == h);
	KCHECK(ksync_memgroup_objcg_peek(p) != NULL && ksync_memgroup_objcg_peek(p) != h);
	/* No reference taken (one taken would leak the handle: ASan's leak check). */
	for (int i = 0; i < 1000; i++)
		(void)ksync_memgroup_objcg_peek(c);
	KCHECK_EQ(ksync_objcg_generation(), gen); /* no offline yet */
	KCHECK(ksync_memgroup_tryget(c)); /* keep c's memory past its offline */
	KCHECK_EQ(ksync_memgroup_offline(c), 0);
	KCHECK(ksync_objcg_generation() != gen); /* the move is counted... */
	{
		struct ksync_memgroup *g = ksync_objcg_get_group(h);

		KCHECK(g == p); /* ...and seen */
		ksync_memgroup_put(g);
	}
	KCHECK(ksync_memgroup_objcg_peek(c) == NULL); /* offline: no handle, not the parent's */
	ksync_memgroup_put(c);
	/* Our reference is the last one now (the group dropped its own at offline). */
	ksync_objcg_put(h);
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}

/* <ksync/linux/memcontrol.h>: the kernel's spellings name the same objects and calls. */
KTEST(kernel_spellings)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct mem_cgroup *p = ksync_memgroup_create(set, NULL);
	struct mem_cgroup *c = ksync_memgroup_create(NULL, p);
	struct obj_cgroup *h = ksync_memgroup_get_objcg(c);
	struct mem_cgroup *m;

	KCHECK(mem_cgroup_online(c) && parent_mem_cgroup(c) == p && parent_mem_cgroup(p) == NULL);
	KCHECK_EQ(mem_cgroup_id(c), ksync_memgroup_id(c));
	KCHECK(mem_cgroup_tryget_online(c));
	mem_cgroup_put(c);
	obj_cgroup_get(h);
	obj_cgroup_put(h);
	m = get_mem_cgroup_from_objcg(h);
	KCHECK(m == c);
	mem_cgroup_put(m);
	KCHECK(mem_cgroup_tryget(c)); /* keep c's memory past its offline */
	KCHECK_EQ(ksync_memgroup_offline(c), 0);
	KCHECK(!mem_cgroup_online(c) && !mem_cgroup_tryget_online(c));
	{
		struct ksync_srcu_struct *ss = ksync_memgroup_set_srcu(set);
		int idx = ksync_srcu_read_lock(ss);
		KCHECK(obj_cgroup_memcg(h) == p); /* the handle followed the offline */
		ksync_srcu_read_unlock(ss, idx);
	}
	mem_cgroup_put(c);
	obj_cgroup_put(h);
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}
