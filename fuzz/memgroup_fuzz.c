/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/memgroup_fuzz.c - memory groups with LRU lists, charge handles and
 * statistics, one thread, against a model.
 *
 * A set of two nodes, one list_lru on it, up to 24 groups per input in a
 * hierarchy (created under any online group, offlined leaves first), 32
 * items and the groups' charge handles. The model keeps every list in
 * order (items join the tail; offline appends a group's list to its nearest
 * online ancestor's, or to the global list). Checked after every operation:
 *  - every count (count_one per online group and the global list, count_node,
 *    count) and every item's place, and the order of the items a walk offers;
 *  - KSYNC_MEMGROUP_STAT_LRU's total equals the items on group lists (global
 *    lists are not counted), and the OBJECTS and BYTES totals equal what was
 *    charged through handles, whatever went offline in between
 *    (conservation);
 *  - the groups not yet freed are the model's; offline of a group with
 *    online children, or twice, is -EBUSY;
 *  - allocation failure (the input's last byte, below 64, fails allocation
 *    n = byte % 32 with ksync_fail_nth_alloc(); the byte also counts as an
 *    operation's byte, so the layout of the rest is unchanged): a create that
 *    fails returns NULL once, only when the injection fired, and changes
 *    nothing; an add or an offline whose list allocation failed puts its
 *    items on the nearest ancestor's list that exists (at worst the global
 *    one), as documented, and the model follows them there.
 * At the end the items are deleted, the groups offlined, and the list_lru
 * and the set destroy cleanly (LSan sees anything left).
 */
#include <ksync/fuzzing.h>
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define NNODES 2
#define MAXG 24
#define NITEMS 32
#define GLOBAL (-1)

struct mgroup {
	struct ksync_memgroup *g;  /* valid while online (offline drops the creator's reference) */
	struct ksync_objcg *h;     /* the handle taken when it was online; kept to the end */
	int parent;
	bool online, used;
};

struct mitem {
	struct ksync_list_lru_item lru;
	int group; /* GLOBAL or a group index, or -2: on no list */
	int nid;
	int id;
};

static struct {
	struct ksync_memgroup_set *set;
	struct ksync_list_lru lru;
	struct mgroup G[MAXG];
	int ng;
	struct mitem item[NITEMS];
	/* The lists, in order: [group + 1][nid] -> item ids. */
	int list[MAXG + 1][NNODES][NITEMS];
	int len[MAXG + 1][NNODES];
	long objects[NNODES], bytes[NNODES];
	unsigned long skip_mask; /* the walk's callback: bit id set -> removed */
	int offered[NITEMS], noffered;
} M;

static int *len_of(int g, int nid)
{
	return &M.len[g + 1][nid];
}

static int *list_of(int g, int nid)
{
	return M.list[g + 1][nid];
}

static void model_append(int g, int nid, int id)
{
	list_of(g, nid)[(*len_of(g, nid))++] = id;
	M.item[id].group = g;
	M.item[id].nid = nid;
}

static void model_remove(int id)
{
	struct mitem *it = &M.item[id];
	int *l = list_of(it->group, it->nid), *n = len_of(it->group, it->nid);

	for (int k = 0; k < *n; k++)
		if (l[k] == id) {
			memmove(&l[k], &l[k + 1], (size_t)(*n - k - 1) * sizeof(int));
			(*n)--;
			it->group = -2;
			return;
		}
	CHECK(0);
}

/*
 * Allocation failure (see above): a call that failed must be the one the
 * injection hit, and return the documented NULL at most once.
 */
static int failures_seen;

static void injected_failure(void)
{
	fuzz_injected_failure(&failures_seen);
}

static unsigned long lib_count(int g, int nid)
{
	return ksync_list_lru_count_one(&M.lru, nid, g == GLOBAL ? NULL : M.G[g].g);
}

/*
 * @n items bound for the list of (@to, @nid) (an online group or GLOBAL), by
 * a call during which the injected failure fired: where they went, the
 * first list up from @to that holds @n more than the model says (an
 * allocation that failed sends them to the nearest ancestor with a list).
 */
static int landed(int to, int nid, int n)
{
	for (int c = to;; c = M.G[c].parent) {
		if (lib_count(c, nid) == (unsigned long)(*len_of(c, nid) + n)) {
			if (getenv("KSYNC_FUZZ_TRACE") && c != to)
				fprintf(stderr, "  %d items went to %d, not %d (out of memory, as documented)\n",
					n, c, to);
			return c;
		}
		CHECK(c != GLOBAL); /* lost */
	}
}

static int nearest_online(int g)
{
	while (g >= 0 && !M.G[g].online)
		g = M.G[g].parent;
	return g;
}

/*
 * @stats: also the statistics' totals (each total waits for the set's
 * pending final moves, an SRCU barrier: checked after every offline, every
 * eighth operation and at the end, to keep the fuzzer fast).
 */
static void check_all(bool stats)
{
	unsigned long total = 0;

	for (int nid = 0; nid < NNODES; nid++) {
		unsigned long node = 0;
		long on_groups = 0;

		CHECK(ksync_list_lru_count_one(&M.lru, nid, NULL) == (unsigned long)*len_of(GLOBAL, nid));
		node += (unsigned long)*len_of(GLOBAL, nid);
		for (int g = 0; g < M.ng; g++) {
			if (M.G[g].online)
				CHECK(ksync_list_lru_count_one(&M.lru, nid, M.G[g].g) ==
				      (unsigned long)*len_of(g, nid));
			else
				CHECK(*len_of(g, nid) == 0); /* reparented */
			node += (unsigned long)*len_of(g, nid);
			on_groups += *len_of(g, nid);
		}
		CHECK(ksync_list_lru_count_node(&M.lru, nid) == node);
		if (stats) {
			CHECK(ksync_memgroup_stat_total(M.set, nid, KSYNC_MEMGROUP_STAT_LRU) == on_groups);
			CHECK(ksync_memgroup_stat_total(M.set, nid, KSYNC_MEMGROUP_STAT_OBJECTS) == M.objects[nid]);
			CHECK(ksync_memgroup_stat_total(M.set, nid, KSYNC_MEMGROUP_STAT_BYTES) == M.bytes[nid]);
		}
		total += node;
	}
	CHECK(ksync_list_lru_count(&M.lru) == total);
	for (int id = 0; id < NITEMS; id++)
		CHECK(ksync_list_lru_item_on_list(&M.item[id].lru) == (M.item[id].group != -2));
}

static enum ksync_lru_status isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	struct mitem *it = ksync_container_of(item, struct mitem, lru);

	(void)arg;
	M.offered[M.noffered++] = it->id;
	if (M.skip_mask >> it->id & 1)
		return KSYNC_LRU_SKIP;
	ksync_list_lru_isolate(l, item);
	return KSYNC_LRU_REMOVED;
}

static void do_walk(int g, int nid, unsigned long budget)
{
	unsigned long left = budget, removed;
	int n = *len_of(g, nid), want = (int)(budget < (unsigned long)n ? budget : (unsigned long)n);
	int expect[NITEMS];

	memcpy(expect, list_of(g, nid), sizeof(expect));
	M.noffered = 0;
	removed = ksync_list_lru_walk_one(&M.lru, nid, g == GLOBAL ? NULL : M.G[g].g, isolate, NULL, &left);
	/* The oldest items first, one budget unit each. */
	CHECK(M.noffered == want);
	CHECK(left == budget - (unsigned long)want);
	for (int k = 0; k < want; k++)
		CHECK(M.offered[k] == expect[k]);
	for (int k = 0; k < want; k++)
		if (!(M.skip_mask >> expect[k] & 1)) {
			model_remove(expect[k]);
			removed--;
		}
	CHECK(removed == 0);
}

static void do_offline(int g)
{
	int to = nearest_online(M.G[g].parent);

	for (int c = 0; c < M.ng; c++)
		if (M.G[c].online && M.G[c].parent == g) {
			CHECK(ksync_memgroup_offline(M.G[g].g) == -EBUSY);
			return;
		}
	bool fired = ksync_fail_nth_alloc_fired();

	CHECK(ksync_memgroup_offline(M.G[g].g) == 0);
	fired = !fired && ksync_fail_nth_alloc_fired(); /* during this offline */
	M.G[g].online = false;
	M.G[g].g = NULL; /* the creator's reference is gone: the group may be freed */
	for (int nid = 0; nid < NNODES; nid++) {
		int moving[NITEMS], n = *len_of(g, nid);

		memcpy(moving, list_of(g, nid), (size_t)n * sizeof(int));
		*len_of(g, nid) = 0;
		int dst = fired && n ? landed(to, nid, n) : to;
		for (int k = 0; k < n; k++)
			model_append(dst, nid, moving[k]);
	}
}

static void run(struct input *in)
{
	for (unsigned int step = 1; in->p < in->end; step++) {
		unsigned int op = take(in) % 9, a = take(in), b = take(in);
		int g = M.ng ? (int)(a % (unsigned int)M.ng) : -1, nid = (int)(b & 1), id = (int)(b >> 1) % NITEMS;

		switch (op) {
		case 0: /* create under an online group, or at the top */
			if (M.ng < MAXG) {
				int p = (g >= 0 && M.G[g].online && (b & 1)) ? g : -1;
				struct mgroup *ng = &M.G[M.ng];

				ng->g = ksync_memgroup_create(M.set, p < 0 ? NULL : M.G[p].g);
				if (!ng->g) { /* the injected failure: nothing changed */
					injected_failure();
					break;
				}
				ng->parent = p;
				ng->online = ng->used = true;
				ng->h = ksync_memgroup_get_objcg(ng->g);
				CHECK(ng->h);
				M.ng++;
			}
			break;
		case 1:
			if (g >= 0) {
				if (M.G[g].online)
					do_offline(g);
			}
			break;
		case 2: /* add: an online group's list, or the global one */
		{
			int to = (g >= 0 && M.G[g].online && (a & 0x80)) ? g : GLOBAL;
			bool on = M.item[id].group != -2, fired = ksync_fail_nth_alloc_fired();

			/* Never fails: out of memory, the item goes up (see landed()). */
			CHECK(ksync_list_lru_add(&M.lru, &M.item[id].lru, nid, to == GLOBAL ? NULL : M.G[to].g) == !on);
			if (!on)
				model_append(!fired && ksync_fail_nth_alloc_fired() ? landed(to, nid, 1) : to, nid, id);
			break;
		}
		case 3:
		{
			bool on = M.item[id].group != -2;

			CHECK(ksync_list_lru_del_obj(&M.lru, &M.item[id].lru) == on);
			if (on)
				model_remove(id);
			break;
		}
		case 4: /* walk one list */
		case 5:
		{
			int w = (g >= 0 && M.G[g].online && (a & 0x80)) ? g : GLOBAL;

			M.skip_mask = (unsigned long)a * 0x9e3779b97f4a7c15UL;
			do_walk(w, nid, b % 12);
			break;
		}
		case 6: /* charge through a handle, which follows its group's offline */
		case 7:
			if (g >= 0) {
				long objs = (long)(b % 9) - 2, bytes = objs * 64;

				CHECK(ksync_objcg_charge(M.G[g].h, nid, objs, bytes) == 0);
				M.objects[nid] += objs;
				M.bytes[nid] += bytes;
			}
			break;
		case 8: /* charge a group's statistics directly while it is online */
			if (g >= 0 && M.G[g].online) {
				CHECK(ksync_memgroup_stat_add(M.G[g].g, nid, KSYNC_MEMGROUP_STAT_OBJECTS, 1) == 0);
				M.objects[nid]++;
			}
			break;
		}
		check_all(op == 1 || step % 8 == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + (size > 900 ? 900 : size) };

	memset(&M, 0, sizeof(M));
	M.set = ksync_memgroup_set_create_nodes(NNODES);
	CHECK(M.set);
	CHECK(ksync_list_lru_init(&M.lru, M.set, NNODES, NULL) == 0);
	for (int id = 0; id < NITEMS; id++) {
		ksync_list_lru_item_init(&M.item[id].lru);
		M.item[id].group = -2;
		M.item[id].id = id;
	}
	failures_seen = 0;
	ksync_fail_nth_alloc(fuzz_fail_nth_of_last_byte(data, size));
	run(&in);
	ksync_fail_nth_alloc(0);

	for (int id = 0; id < NITEMS; id++)
		if (M.item[id].group != -2) {
			CHECK(ksync_list_lru_del_obj(&M.lru, &M.item[id].lru));
			model_remove(id);
		}
	/* Leaves first: the newest groups are never ancestors of older ones. */
	for (int g = M.ng - 1; g >= 0; g--)
		if (M.G[g].online)
			do_offline(g);
	check_all(true);
	for (int g = 0; g < M.ng; g++)
		ksync_objcg_put(M.G[g].h);
	CHECK(ksync_memgroup_nr_groups(M.set) == 0);
	CHECK(ksync_list_lru_destroy(&M.lru) == 0);
	CHECK(ksync_memgroup_set_destroy(M.set) == 0);
	return 0;
}
