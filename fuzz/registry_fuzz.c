/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/registry_fuzz.c - the shrinker registry and its groups, one thread,
 * against a model of every shrinker's state, including misuse on purpose.
 *
 * The input picks a registry (1..4 nodes), then a stream of operations on
 * eight owned shrinkers (ksync_shrinker_alloc) and four caller-owned ones
 * (prealloc/register/unregister), up to six groups in a hierarchy, objects
 * and bits, and walks. Every call's result is predicted by the model,
 * errors included (docs/errors.md: double register, unregister of a
 * shrinker that is not registered, an owned shrinker through the classic
 * call, a bit past the map or on a bad node, destroy of a group with
 * children, a walk on a bad node). Checked besides:
 *  - memcg-aware shrinkers get the lowest free id (reused after a free);
 *  - a callback runs only on a registered shrinker, with the walk's group,
 *    node 0 unless the shrinker is NUMA aware, memcg-aware ones only in
 *    group walks;
 *  - a global walk at priority 0 counts every registered shrinker; a group
 *    walk counts every memcg-aware one whose bit was set there and has
 *    objects there;
 *  - at the end everything is freed and the registry destroys cleanly (ASan
 *    and LSan see what is left).
 * The concurrent registry (several threads under a deterministic schedule)
 * is not fuzzed here; see issue 12.
 */
#include <ksync/fuzzing.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define NOWNED 8
#define NCLASSIC 4
#define NSLOTS (NOWNED + NCLASSIC)
#define NGROUPS 6
#define NNODES 4

enum state { NONE, ALLOCATED, PREPARED, REGISTERED };

struct slot {
	enum state st;
	bool memcg, numa;
	int id;                                    /* the model's id, -1 if none */
	struct ksync_shrinker *s;                  /* owned: from alloc */
	struct ksync_shrinker classic;             /* caller-owned */
	unsigned long global_objs[NNODES];
	unsigned long group_objs[NGROUPS][NNODES];
	bool bit[NGROUPS][NNODES];                 /* the model's shrinker bits */
	bool counted;                              /* in the current walk */
};

static struct {
	struct ksync_shrinker_registry *reg;
	int nr_nodes;
	struct slot slot[NSLOTS];
	struct ksync_memgroup *group[NGROUPS];
	int parent[NGROUPS];
	struct ksync_memgroup *walk_group; /* the walk in progress */
	int walk_gidx, walk_nid;
} M;

static bool owned(int k)
{
	return k < NOWNED;
}

static struct ksync_shrinker *shr(int k)
{
	return owned(k) ? M.slot[k].s : &M.slot[k].classic;
}

static int lowest_free_id(void)
{
	for (int id = 0;; id++) {
		bool used = false;

		for (int k = 0; k < NSLOTS; k++)
			used |= M.slot[k].st != NONE && M.slot[k].id == id;
		if (!used)
			return id;
	}
}

/* ------------------------------------------------------------------------ */
/* Callbacks                                                                 */

static unsigned long *objs_of(struct slot *sl, struct ksync_shrink_control *sc)
{
	return M.walk_gidx < 0 ? &sl->global_objs[sc->nid] : &sl->group_objs[M.walk_gidx][sc->nid];
}

static void check_call(struct slot *sl, struct ksync_shrink_control *sc)
{
	CHECK(sl->st == REGISTERED);
	CHECK(sc->group == M.walk_group);
	CHECK(sc->nid == (sl->numa ? M.walk_nid : 0));
	CHECK(!M.walk_group || sl->memcg);
}

static unsigned long count_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct slot *sl = s->private_data;
	unsigned long n;

	check_call(sl, sc);
	sl->counted = true;
	n = *objs_of(sl, sc);
	if (!n && M.walk_group) {
		sl->bit[M.walk_gidx][M.walk_nid] = false; /* the walk may clear it now */
		return KSYNC_SHRINK_EMPTY;
	}
	return n;
}

static unsigned long scan_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct slot *sl = s->private_data;
	unsigned long *n, freed;

	check_call(sl, sc);
	n = objs_of(sl, sc);
	CHECK(sc->nr_to_scan > 0);
	freed = sc->nr_to_scan < *n ? sc->nr_to_scan : *n;
	*n -= freed;
	return freed;
}

/* ------------------------------------------------------------------------ */
/* Operations                                                                */

static void forget_objects(struct slot *sl)
{
	memset(sl->global_objs, 0, sizeof(sl->global_objs));
	memset(sl->group_objs, 0, sizeof(sl->group_objs));
	memset(sl->bit, 0, sizeof(sl->bit));
}

/*
 * Allocation failure: the input's last byte picks one allocation to fail
 * (ksync_fail_nth_alloc(); the byte also counts as an operation's byte, so
 * the layout of the rest is unchanged). A call that failed must be the one
 * the injection hit, return the documented NULL/-ENOMEM, and leave the
 * model's state as it was: every later result is still predicted.
 */
static int failures_seen;

static void injected_failure(void)
{
	fuzz_injected_failure(&failures_seen);
}

static void do_alloc(int k, unsigned int flags_byte)
{
	struct slot *sl = &M.slot[k];
	unsigned flags = 0;

	sl->memcg = flags_byte & 1;
	sl->numa = flags_byte & 2;
	flags |= sl->memcg ? KSYNC_SHRINKER_MEMCG_AWARE : 0;
	flags |= sl->numa ? KSYNC_SHRINKER_NUMA_AWARE : 0;
	sl->id = sl->memcg ? lowest_free_id() : -1;
	forget_objects(sl);
	if (owned(k)) {
		sl->s = ksync_shrinker_alloc(M.reg, flags, "fuzz-%d", k);
		if (!sl->s) { /* the injected failure: nothing changed */
			injected_failure();
			sl->id = -1;
			return;
		}
		sl->st = ALLOCATED;
	} else {
		memset(&sl->classic, 0, sizeof(sl->classic));
		sl->classic.flags = flags;
		int r = ksync_prealloc_shrinker(M.reg, &sl->classic, "classic-%d", k);
		if (r == -ENOMEM) {
			injected_failure();
			sl->id = -1;
			return;
		}
		CHECK(r == 0);
		sl->st = PREPARED;
	}
	shr(k)->count_objects = count_cb;
	shr(k)->scan_objects = scan_cb;
	shr(k)->private_data = sl;
	shr(k)->seeks = (int)(flags_byte >> 2) % 3; /* 0: free half */
	shr(k)->batch = (flags_byte >> 4) % 4 * 16;
	CHECK(shr(k)->id == sl->id);
}

/*
 * The nr_deferred ledger's total: work only moves between its columns when a
 * group goes away (to the parent or the orphans) or a shrinker is
 * unregistered (to the retired column); nothing else runs meanwhile here.
 */
static long deferred_total(void)
{
	struct ksync_shrinker_deferred_total t;

	ksync_shrinker_deferred_total(M.reg, &t);
	return t.in_groups + t.in_shrinkers + t.orphaned + t.retired;
}

static void do_free(int k)
{
	struct slot *sl = &M.slot[k];
	long before = deferred_total();

	if (owned(k)) {
		CHECK(ksync_shrinker_free(sl->s) == 0);
	} else if (sl->st == PREPARED) {
		ksync_free_prealloced_shrinker(&sl->classic);
	} else {
		CHECK(ksync_unregister_shrinker(&sl->classic) == 0);
	}
	sl->st = NONE;
	sl->id = -1;
	sl->s = NULL;
	CHECK(deferred_total() == before); /* retired, not lost */
}

static int group_children(int g)
{
	int n = 0;

	for (int c = 0; c < NGROUPS; c++)
		n += M.group[c] && M.parent[c] == g;
	return n;
}

/* KSYNC_FUZZ_TRACE=1 in the environment: print each operation (to replay a crash file). */
static bool trace;

static void walk(int nid, int gidx, int priority)
{
	for (int k = 0; k < NSLOTS; k++)
		M.slot[k].counted = false;
	M.walk_gidx = gidx;
	M.walk_nid = nid;
	M.walk_group = gidx < 0 ? NULL : M.group[gidx];
	(void)ksync_shrink_slab(M.reg, nid, M.walk_group, priority);
	if (priority)
		return;
	for (int k = 0; k < NSLOTS; k++) {
		struct slot *sl = &M.slot[k];

		if (sl->st != REGISTERED)
			continue;
		if (trace)
			fprintf(stderr, "  walk nid %d group %d: slot %d counted %d bit %d objs %lu\n", nid, gidx, k,
				sl->counted, gidx < 0 ? -1 : sl->bit[gidx][nid], gidx < 0 ? 0 : sl->group_objs[gidx][nid]);
		if (gidx < 0)
			CHECK(sl->counted); /* every registered shrinker is reachable */
		else if (sl->memcg && sl->bit[gidx][nid] && sl->group_objs[gidx][nid])
			CHECK(sl->counted);
	}
}

static void run(struct input *in)
{
	while (in->p < in->end) {
		unsigned int op = take(in) % 14, a = take(in), b = take(in);
		int k = (int)(a % NSLOTS), g = (int)(b % NGROUPS), nid = (int)(b >> 4) % (M.nr_nodes + 1);
		struct slot *sl = &M.slot[k];

		if (trace)
			fprintf(stderr, "op %u slot %d (state %d id %d memcg %d numa %d) group %d (%s) nid %d a %u b %u\n",
				op, k, sl->st, sl->id, sl->memcg, sl->numa, g, M.group[g] ? "live" : "none", nid, a, b);
		switch (op) {
		case 0: /* allocate or prepare */
			if (sl->st == NONE)
				do_alloc(k, b);
			else if (!owned(k)) /* prepared twice */
				CHECK(ksync_prealloc_shrinker(M.reg, &sl->classic, "again") == -EBUSY);
			break;
		case 1: /* register */
			if (sl->st == NONE) {
				if (!owned(k)) { /* never prepared: the classic struct is zeroed */
					memset(&sl->classic, 0, sizeof(sl->classic));
					CHECK(ksync_register_shrinker_prepared(&sl->classic) == -EINVAL);
				}
			} else if (sl->st == REGISTERED) {
				CHECK((owned(k) ? ksync_shrinker_register(sl->s)
						: ksync_register_shrinker_prepared(&sl->classic)) == -EBUSY);
			} else {
				CHECK((owned(k) ? ksync_shrinker_register(sl->s)
						: ksync_register_shrinker_prepared(&sl->classic)) == 0);
				sl->st = REGISTERED;
			}
			break;
		case 2: /* free / unregister */
			if (sl->st != NONE)
				do_free(k);
			break;
		case 3: /* misuse: the classic unregister of what it cannot take */
			if (owned(k) && sl->st != NONE)
				CHECK(ksync_unregister_shrinker(sl->s) == -EINVAL);
			else if (!owned(k) && sl->st == PREPARED)
				CHECK(ksync_unregister_shrinker(&sl->classic) == -ENOENT);
			else if (!owned(k) && sl->st == NONE) {
				memset(&sl->classic, 0, sizeof(sl->classic));
				CHECK(ksync_unregister_shrinker(&sl->classic) == -ENOENT);
			} else if (!owned(k) && sl->st == REGISTERED)
				CHECK(ksync_shrinker_free(&sl->classic) == -EINVAL);
			break;
		case 4: /* create a group, top-level or under another */
			if (!M.group[g]) {
				int p = (int)(a % (NGROUPS + 1)) - 1;

				if (p >= 0 && !M.group[p])
					p = -1;
				M.group[g] = ksync_shrinker_group_create(M.reg, p < 0 ? NULL : M.group[p]);
				if (!M.group[g]) {
					injected_failure();
					break;
				}
				M.parent[g] = p;
				for (int j = 0; j < NSLOTS; j++) {
					memset(M.slot[j].group_objs[g], 0, sizeof(M.slot[j].group_objs[g]));
					memset(M.slot[j].bit[g], 0, sizeof(M.slot[j].bit[g]));
				}
			}
			break;
		case 5: /* destroy a group */
			if (M.group[g]) {
				if (group_children(g)) {
					CHECK(ksync_shrinker_group_destroy(M.group[g]) == -EBUSY);
				} else {
					long before = deferred_total();
					CHECK(ksync_shrinker_group_destroy(M.group[g]) == 0);
					CHECK(deferred_total() == before); /* conserved across destruction */
					M.group[g] = NULL;
				}
			}
			break;
		case 6: /* objects in a group: add them, then set the bit (the kernel's order) */
			if (M.group[g] && sl->st != NONE && sl->memcg && nid < M.nr_nodes) {
				int rnid = sl->numa ? nid : 0;

				sl->group_objs[g][rnid] += 1 + a % 200;
				if (a & 1) /* and deferred work there, for the ledger checks */
					CHECK(ksync_shrinker_add_deferred(shr(k), M.group[g], rnid, 1 + a % 7) == 0);
				CHECK(ksync_set_shrinker_bit(M.group[g], rnid, sl->id) == 0);
				sl->bit[g][rnid] = true;
			}
			break;
		case 7: /* global objects */
			if (sl->st != NONE && nid < M.nr_nodes)
				sl->global_objs[sl->numa ? nid : 0] += 1 + a % 500;
			break;
		case 8: /* misuse: a bit on a bad node, or past the map */
			if (M.group[g]) {
				CHECK(ksync_set_shrinker_bit(M.group[g], M.nr_nodes + (int)(a % 3), 0) == -EINVAL);
				CHECK(ksync_set_shrinker_bit(M.group[g], 0, ksync_shrinker_nr_max(M.reg) + (int)(a % 5)) ==
				      -EINVAL);
			}
			break;
		case 9: /* global walk */
		case 10:
			if (nid < M.nr_nodes)
				walk(nid, -1, op == 9 ? 0 : (int)(a % 13));
			else
				CHECK(ksync_shrink_slab(M.reg, nid, NULL, 0) == 0); /* bad nid */
			break;
		case 11: /* group walk */
		case 12:
			if (M.group[g] && nid < M.nr_nodes)
				walk(nid, g, op == 11 ? 0 : (int)(a % 13));
			break;
		case 13:
			CHECK(ksync_synchronize_shrinkers(M.reg) == 0);
			break;
		}
	}
}

static void teardown(void)
{
	for (int k = 0; k < NSLOTS; k++)
		if (M.slot[k].st != NONE)
			do_free(k);
	/* Children first: repeat until every group is gone. */
	for (bool left = true; left;) {
		left = false;
		for (int g = 0; g < NGROUPS; g++) {
			if (!M.group[g])
				continue;
			if (group_children(g)) {
				left = true;
				continue;
			}
			CHECK(ksync_shrinker_group_destroy(M.group[g]) == 0);
			M.group[g] = NULL;
		}
	}
	CHECK(ksync_shrinker_registry_destroy(M.reg) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + (size > 600 ? 600 : size) };

	ksync_warn_hook = fuzz_quiet_reports; /* misuse is on purpose here: results are checked instead */
	trace = getenv("KSYNC_FUZZ_TRACE") != NULL;
	memset(&M, 0, sizeof(M));
	for (int k = 0; k < NSLOTS; k++)
		M.slot[k].id = -1;
	M.nr_nodes = 1 + (int)(take(&in) % NNODES);
	M.reg = ksync_shrinker_registry_create(M.nr_nodes);
	CHECK(M.reg);
	failures_seen = 0;
	ksync_fail_nth_alloc(fuzz_fail_nth_of_last_byte(data, size));
	run(&in);
	ksync_fail_nth_alloc(0);
	teardown();
	return 0;
}
