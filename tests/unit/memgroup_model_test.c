/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Model-based test of the memory-group lifecycle: random sequences of
 * create, offline, get/put, charge-handle get/put and charges, checked
 * after every step against a plain reference model of the same hierarchy:
 * each group's state, the number of groups not yet freed, where each held
 * handle points (the nearest online ancestor of the group it was taken
 * from, or the root), and every group's charged count and the total.
 */
#include <ksync/memgroup.h>
#include <ksync/objcg.h>

#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

#define MAXG 1024 /* indices are never reused: a handle's chain of ancestors stays valid */
#define MAXH 64

struct mgroup {
	struct ksync_memgroup *g; /* NULL once freed (in the model) */
	int parent;               /* index, -1 for top level */
	int state;                /* 0 unused, ONLINE, DEAD, FREED */
	int refs;                 /* references the model holds besides the creator's */
	int children;             /* not yet freed */
	long charged;             /* what the model says this group's own counter holds */
};

struct mhandle {
	struct ksync_objcg *h;
	int group; /* the group it was taken from */
	long charged;
};

static struct mgroup G[MAXG];
static struct mhandle H[MAXH];
static long root_charged;

/* Where a charge made through a handle of group @i lands: the nearest online ancestor. */
static int target(int i)
{
	while (i >= 0 && G[i].state != KSYNC_MEMGROUP_ONLINE)
		i = G[i].parent;
	return i;
}

static int nr_alive(void)
{
	int n = 0;
	for (int i = 0; i < MAXG; i++)
		n += G[i].state == KSYNC_MEMGROUP_ONLINE || G[i].state == KSYNC_MEMGROUP_DEAD;
	return n;
}

/* A dead group whose last reference goes is freed, and its counts move up; it unpins its parent. */
static void model_maybe_free(int i)
{
	while (i >= 0 && G[i].state == KSYNC_MEMGROUP_DEAD && G[i].refs == 0 && G[i].children == 0) {
		int p = G[i].parent;
		G[i].state = KSYNC_MEMGROUP_FREED;
		if (p >= 0) {
			G[p].charged += G[i].charged;
			G[p].children--;
		} else {
			root_charged += G[i].charged;
		}
		G[i].charged = 0;
		G[i].g = NULL;
		i = p;
	}
}

static void check_all(struct ksync_memgroup_set *set, int step)
{
	int bad = 0;

	if (ksync_memgroup_nr_groups(set) != nr_alive()) {
		fprintf(stderr, "groups: %d, model %d\n", ksync_memgroup_nr_groups(set), nr_alive());
		bad = 1;
	}
	for (int i = 0; i < MAXG; i++) {
		if (G[i].state != KSYNC_MEMGROUP_ONLINE && G[i].state != KSYNC_MEMGROUP_DEAD)
			continue;
		long got = ksync_memgroup_stat_read(G[i].g, 0, KSYNC_MEMGROUP_STAT_OBJECTS);
		if ((int)ksync_memgroup_state(G[i].g) != G[i].state || got != G[i].charged) {
			fprintf(stderr, "group %d: state %d (model %d), charged %ld (model %ld)\n", i,
				(int)ksync_memgroup_state(G[i].g), G[i].state, got, G[i].charged);
			bad = 1;
		}
	}
	for (int k = 0; k < MAXH; k++) {
		if (!H[k].h)
			continue;
		struct ksync_memgroup *now = ksync_objcg_get_group(H[k].h);
		int t = target(H[k].group);
		if (now != (t >= 0 ? G[t].g : NULL)) {
			fprintf(stderr, "handle %d of group %d: points at %d, model %d\n", k, H[k].group,
				now ? ksync_memgroup_id(now) : -1, t >= 0 ? ksync_memgroup_id(G[t].g) : -1);
			bad = 1;
		}
		if (now)
			ksync_memgroup_put(now);
	}
	if (ksync_memgroup_stat_root(set, 0, KSYNC_MEMGROUP_STAT_OBJECTS) != root_charged) {
		fprintf(stderr, "root %ld, model %ld\n",
			ksync_memgroup_stat_root(set, 0, KSYNC_MEMGROUP_STAT_OBJECTS), root_charged);
		bad = 1;
	}
	if (bad)
		fprintf(stderr, "model mismatch after step %d\n", step);
	KCHECK(!bad);
}

KTEST(random_lifecycles_match_the_model)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	int steps = 4000;

	int next_index = 0;

	memset(G, 0, sizeof(G));
	memset(H, 0, sizeof(H));
	root_charged = 0;
	for (int step = 0; step < steps; step++) {
		int op = (int)(kt_xorshift64(&rng) % 6);
		int i = next_index ? (int)(kt_xorshift64(&rng) % (uint64_t)next_index) : 0;

		switch (op) {
		case 0: { /* create, under a random online parent or at the top */
			if (next_index == MAXG)
				break;
			int p = i;
			i = next_index++;
			if (G[p].state != KSYNC_MEMGROUP_ONLINE || (kt_xorshift64(&rng) & 3) == 0)
				p = -1;
			G[i].g = ksync_memgroup_create(set, p >= 0 ? G[p].g : NULL);
			KASSERT(G[i].g);
			G[i].parent = p;
			G[i].state = KSYNC_MEMGROUP_ONLINE;
			G[i].refs = 0;
			G[i].children = 0;
			G[i].charged = 0;
			if (p >= 0)
				G[p].children++;
			break;
		}
		case 1: { /* offline a group without online children */
			if (G[i].state != KSYNC_MEMGROUP_ONLINE)
				break;
			int online_children = 0;
			for (int c = 0; c < MAXG; c++)
				online_children += G[c].parent == i && G[c].state == KSYNC_MEMGROUP_ONLINE;
			if (online_children)
				break;
			KCHECK_EQ(ksync_memgroup_offline(G[i].g), 0);
			/* Its counts go to the nearest online ancestor (or the root). */
			int t = target(G[i].parent);
			if (t >= 0)
				G[t].charged += G[i].charged;
			else
				root_charged += G[i].charged;
			G[i].charged = 0;
			G[i].state = KSYNC_MEMGROUP_DEAD;
			model_maybe_free(i);
			break;
		}
		case 2: /* a direct reference: take or drop */
			if (G[i].state == KSYNC_MEMGROUP_ONLINE && (kt_xorshift64(&rng) & 1)) {
				ksync_memgroup_get(G[i].g);
				G[i].refs++;
			} else if ((G[i].state == KSYNC_MEMGROUP_ONLINE || G[i].state == KSYNC_MEMGROUP_DEAD) &&
				   G[i].refs > 0) {
				G[i].refs--;
				ksync_memgroup_put(G[i].g);
				model_maybe_free(i);
			}
			break;
		case 3: { /* take a charge handle of an online group */
			int k = (int)(kt_xorshift64(&rng) % MAXH);
			if (H[k].h || G[i].state != KSYNC_MEMGROUP_ONLINE)
				break;
			H[k].h = ksync_memgroup_get_objcg(G[i].g);
			H[k].group = i;
			H[k].charged = 0;
			KCHECK(H[k].h != NULL);
			break;
		}
		case 4: { /* charge or uncharge through a handle */
			int k = (int)(kt_xorshift64(&rng) % MAXH);
			if (!H[k].h)
				break;
			long n = (kt_xorshift64(&rng) & 1) || !H[k].charged ? 1 : -1;
			ksync_objcg_charge(H[k].h, 0, n, 8 * n);
			H[k].charged += n;
			int t = target(H[k].group);
			if (t >= 0)
				G[t].charged += n;
			else
				root_charged += n;
			break;
		}
		case 5: { /* drop a handle (its objects uncharged first) */
			int k = (int)(kt_xorshift64(&rng) % MAXH);
			if (!H[k].h)
				break;
			ksync_objcg_charge(H[k].h, 0, -H[k].charged, -8 * H[k].charged);
			int t = target(H[k].group);
			if (t >= 0)
				G[t].charged -= H[k].charged;
			else
				root_charged -= H[k].charged;
			ksync_objcg_put(H[k].h);
			H[k].h = NULL;
			break;
		}
		}
		check_all(set, step);
	}
	/* Tear down: handles, references, then groups leaves first. */
	for (int k = 0; k < MAXH; k++)
		if (H[k].h) {
			ksync_objcg_charge(H[k].h, 0, -H[k].charged, -8 * H[k].charged);
			ksync_objcg_put(H[k].h);
		}
	for (int i = 0; i < MAXG; i++)
		while ((G[i].state == KSYNC_MEMGROUP_ONLINE || G[i].state == KSYNC_MEMGROUP_DEAD) &&
		       G[i].refs > 0) {
			G[i].refs--;
			ksync_memgroup_put(G[i].g);
		}
	for (int round = 0; round < MAXG; round++)
		for (int i = 0; i < MAXG; i++) {
			if (G[i].state != KSYNC_MEMGROUP_ONLINE)
				continue;
			int kids = 0;
			for (int c = 0; c < MAXG; c++)
				kids += G[c].parent == i && G[c].state == KSYNC_MEMGROUP_ONLINE;
			if (!kids) {
				KCHECK_EQ(ksync_memgroup_offline(G[i].g), 0);
				G[i].state = KSYNC_MEMGROUP_DEAD;
			}
		}
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);
	KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_OBJECTS), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
