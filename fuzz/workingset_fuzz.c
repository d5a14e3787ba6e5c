/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/workingset_fuzz.c - ksync::workingset (<ksync/workingset.h>) against a
 * model, one thread.
 *
 * The input: byte 0 picks the LRU flavour (even: classic, odd: MGLRU); then
 * operations of one byte and their arguments: groups created (top-level or
 * under an online group) and offlined (leaves first), items added to a
 * group's or the root's lists (a miss: the key's shadow taken and judged,
 * the item added active on a workingset refault) and deleted, LRU
 * evictions (the callback stores the token), explicit evictions with a
 * store, activations, shadow takes with a refault, shrinker walks (group
 * and global, any priority). The last byte (below 64) fails one allocation.
 *
 * The model: per group (and the root) and node the clock that every
 * eviction and activation in the group or below ticks; at an offline the
 * group's heir (parent or root) and the clock translation; every item's
 * group (moved to the heir at an offline); every stored shadow's group, node
 * and clock. Checked: every token's fields and clock; every refault's
 * distance, judging group, translations, workingset size (the judging
 * group's items) and decision; a take returns the stored token, or 0 only
 * after a shrinker walk could have taken its node; per online group the
 * shadow nodes on its list (its LRU statistic minus its items) never
 * negative, the budget ksync_workingset_shadow_budget() equal to (items +
 * nodes) >> 3 and the shrinker's count equal to the nodes beyond it (the
 * kernel's count_shadow_nodes()); at the end every item and shadow gone,
 * the LRU statistic's total 0, a clean teardown. The LRU flavours' internal
 * promotions (second accesses, marked items) are not driven: their clock
 * ticks are covered by tests/unit/workingset_test.c.
 *
 * Plant: KSYNC_PLANT_WORKINGSET_BUDGET_FROM_CLASSIC_ONLY (the budget from the
 * classic flavour's own list sizes) fails the budget check.
 */
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>
#include <ksync/shrinker.h>
#include <ksync/workingset.h>

#include <errno.h>
#include <string.h>

#include "fuzz.h"

#define NNODES 2
#define NSLOTS 8
#define ROOT NSLOTS
#define NKEYS 256
#define CLOCK_MASK ((1UL << (8 * sizeof(unsigned long) - KSYNC_WORKINGSET_CLOCK_SHIFT)) - 1)
#define ID_MASK ((1UL << KSYNC_WORKINGSET_ID_BITS) - 1)

struct mgroup {
	struct ksync_memgroup *g; /* while online */
	int used, online, parent, id, heir;
	unsigned long clock[NNODES];
	long delta[NNODES];
};

struct mitem {
	struct ksync_lru_item lru;
	int present, group, nid; /* group: slot or ROOT */
};

struct mshadow {
	unsigned long token;
	int group, nid, maybe_gone;
	unsigned long clock;
};

static struct {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	struct mgroup G[NSLOTS + 1];
	struct mitem item[NKEYS];
	struct mshadow shadow[NKEYS];
	int failures_seen;
} M;

static int trace;

static void tick(int s, int nid)
{
	for (int r = s; r != ROOT; r = M.G[r].parent < 0 ? ROOT : M.G[r].parent)
		M.G[r].clock[nid]++;
	M.G[ROOT].clock[nid]++;
}

static long items_in(int s, int nid)
{
	long n = 0;

	for (int k = 0; k < NKEYS; k++)
		n += M.item[k].present && M.item[k].group == s && M.item[k].nid == nid;
	return n;
}

static unsigned long field_of(int s)
{
	return s == ROOT ? 0 : (unsigned long)M.G[s].id % ID_MASK + 1;
}

/* A token just made on slot @s, node @nid: its fields and clock; the model ticks. */
static void check_token(unsigned long t, int s, int nid)
{
	CHECK(t & 1);
	CHECK((int)((t >> 1) & ((1UL << KSYNC_WORKINGSET_NODE_BITS) - 1)) == nid);
	CHECK(((t >> (1 + KSYNC_WORKINGSET_NODE_BITS)) & ID_MASK) == field_of(s));
	CHECK((t >> KSYNC_WORKINGSET_CLOCK_SHIFT) == (M.G[s].clock[nid] & CLOCK_MASK));
}

static void remember(unsigned long key, unsigned long t, int s, int nid)
{
	M.shadow[key] = (struct mshadow){ .token = t, .group = s, .nid = nid, .clock = M.G[s].clock[nid] };
}

static struct ksync_memgroup *gp(int s)
{
	return s == ROOT ? NULL : M.G[s].g;
}

/* The model's judgement of a stored shadow; the library's must agree. */
static bool refault(unsigned long key, unsigned long t)
{
	struct mshadow *sh = &M.shadow[key];
	struct ksync_workingset_refault_info in;
	int s = sh->group, translated = 0;
	unsigned long e = sh->clock;
	bool recent;

	while (s != ROOT && !M.G[s].online) {
		e += (unsigned long)M.G[s].delta[sh->nid];
		s = M.G[s].heir;
		translated++;
	}
	unsigned long dist = (M.G[s].clock[sh->nid] - e) & CLOCK_MASK;
	long size = items_in(s, sh->nid);

	recent = ksync_workingset_refault(M.ws, t, &in);
	CHECK(in.distance == dist);
	CHECK(in.translated == translated);
	CHECK(in.group_id == (s == ROOT ? -1 : M.G[s].id));
	CHECK(in.nid == sh->nid);
	CHECK((long)in.workingset_size == size);
	CHECK(recent == (dist <= (unsigned long)size));
	if (recent)
		tick(s, sh->nid);
	return recent;
}

/* Take @key's shadow: the stored token, or 0 only where a walk may have taken its node. */
static unsigned long take_shadow(unsigned long key)
{
	unsigned long t = ksync_workingset_shadow_take(M.ws, key);

	if (M.shadow[key].token) {
		CHECK(t == M.shadow[key].token || (t == 0 && M.shadow[key].maybe_gone));
	} else {
		CHECK(t == 0);
	}
	if (!t)
		M.shadow[key].token = 0;
	return t;
}

static void evicted(struct ksync_lru_item *li, unsigned long token, void *arg)
{
	struct mitem *it = ksync_container_of(li, struct mitem, lru);
	unsigned long key = (unsigned long)(it - M.item);
	int s = it->group, nid = it->nid;

	(void)arg;
	CHECK(it->present);
	check_token(token, s, nid);
	tick(s, nid);
	it->present = 0;
	int err = ksync_workingset_shadow_store(M.ws, key, token);
	if (err == -ENOMEM) {
		fuzz_injected_failure(&M.failures_seen);
		M.shadow[key].token = 0;
		take_shadow(key);
		return;
	}
	CHECK(err == 0);
	remember(key, token, s, nid);
	M.shadow[key].clock = M.G[s].clock[nid] - 1;
}

static void check_budgets(void)
{
	struct ksync_workingset_stats st;
	long group_nodes = 0;
	struct ksync_shrinker *sh = ksync_workingset_shrinker(M.ws);

	ksync_workingset_stats(M.ws, &st);
	for (int s = 0; s < NSLOTS; s++) {
		if (!M.G[s].online)
			continue;
		for (int nid = 0; nid < NNODES; nid++) {
			long items = items_in(s, nid);
			long stat = ksync_memgroup_stat_read(M.G[s].g, nid, KSYNC_MEMGROUP_STAT_LRU);
			long nodes = stat - items;

			CHECK(nodes >= 0);
			group_nodes += nodes;
			unsigned long budget = (unsigned long)(items + nodes) >> 3;
			CHECK(ksync_workingset_shadow_budget(M.ws, M.G[s].g, nid) == budget);
			struct ksync_shrink_control sc = { .nid = nid, .group = M.G[s].g };
			unsigned long count = sh->count_objects(sh, &sc);
			if (!nodes)
				CHECK(count == KSYNC_SHRINK_EMPTY);
			else
				CHECK(count == ((unsigned long)nodes > budget ? (unsigned long)nodes - budget : 0));
		}
	}
	CHECK((long)st.shadow_nodes >= group_nodes);
	for (int nid = 0; nid < NNODES; nid++)
		CHECK(ksync_workingset_shadow_budget(M.ws, NULL, nid) == (unsigned long)items_in(ROOT, nid) >> 3);
}

static int pick_online(unsigned int b)
{
	for (int i = 0; i < NSLOTS; i++) {
		int s = (int)((b + (unsigned)i) % NSLOTS);
		if (M.G[s].online)
			return s;
	}
	return ROOT;
}

static void do_offline(int s)
{
	int heir = M.G[s].parent >= 0 ? M.G[s].parent : ROOT;

	CHECK(ksync_shrinker_group_destroy(M.G[s].g) == 0);
	for (int nid = 0; nid < NNODES; nid++)
		M.G[s].delta[nid] = (long)(M.G[heir].clock[nid] - M.G[s].clock[nid]);
	M.G[s].heir = heir;
	M.G[s].online = 0;
	M.G[s].g = NULL;
	for (int k = 0; k < NKEYS; k++)
		if (M.item[k].present && M.item[k].group == s)
			M.item[k].group = heir;
}

static bool has_online_child(int s)
{
	for (int c = 0; c < NSLOTS; c++)
		if (M.G[c].online && M.G[c].parent == s)
			return true;
	return false;
}

static void run(struct input *in)
{
	while (more(in)) {
		unsigned int op = take(in) % 10, a = take(in), b = take(in);
		int nid = (int)(b & 1);
		unsigned long key = a % NKEYS;

		switch (op) {
		case 0: { /* create */
			int s = (int)(a % NSLOTS), parent = (b & 2) ? pick_online(b >> 2) : ROOT;

			if (M.G[s].used)
				break;
			struct ksync_memgroup *g = ksync_shrinker_group_create(M.reg, gp(parent));
			if (!g) {
				fuzz_injected_failure(&M.failures_seen);
				break;
			}
			M.G[s] = (struct mgroup){ .g = g, .used = 1, .online = 1, .id = ksync_memgroup_id(g),
						  .parent = parent == ROOT ? -1 : parent };
			/* A new group's clock starts at 0; the ancestors' do not change. */
			break;
		}
		case 1: { /* offline, a leaf */
			int s = (int)(a % NSLOTS);

			if (M.G[s].online && !has_online_child(s))
				do_offline(s);
			break;
		}
		case 2: { /* a miss: the shadow judged, the item added */
			int s = (b & 2) ? pick_online(b >> 2) : ROOT;
			struct mitem *it = &M.item[key];
			bool active = false;

			if (it->present)
				break;
			unsigned long t = take_shadow(key);
			if (t) {
				active = refault(key, t);
				M.shadow[key].token = 0;
			}
			ksync_lru_item_init(&it->lru);
			CHECK(ksync_lru_add(M.lru, &it->lru, gp(s), nid, active) == 0);
			it->present = 1;
			it->group = s;
			it->nid = nid;
			break;
		}
		case 3: /* del */
			CHECK(ksync_lru_del(M.lru, &M.item[key].lru) == (M.item[key].present != 0));
			M.item[key].present = 0;
			break;
		case 4: { /* LRU eviction */
			int s = (b & 2) ? pick_online(b >> 2) : ROOT;
			unsigned long nr = a % 8, have = (unsigned long)items_in(s, nid);
			unsigned long done = ksync_lru_evict(M.lru, gp(s), nid, nr, evicted, NULL);

			CHECK(done == (nr < have ? nr : have));
			CHECK((unsigned long)items_in(s, nid) == have - done);
			break;
		}
		case 5: { /* explicit eviction and store (a key whose item is not cached) */
			int s = (b & 2) ? pick_online(b >> 2) : ROOT;

			if (M.item[key].present)
				break;
			unsigned long t = ksync_workingset_eviction(M.ws, gp(s), nid);
			check_token(t, s, nid);
			unsigned long clock = M.G[s].clock[nid];
			tick(s, nid);
			int err = ksync_workingset_shadow_store(M.ws, key, t);
			if (err == -ENOMEM) {
				fuzz_injected_failure(&M.failures_seen);
				M.shadow[key].token = 0;
				take_shadow(key);
				break;
			}
			CHECK(err == 0);
			remember(key, t, s, nid);
			M.shadow[key].clock = clock;
			break;
		}
		case 6: { /* activation */
			int s = (b & 2) ? pick_online(b >> 2) : ROOT;

			CHECK(ksync_workingset_activation(M.ws, gp(s), nid) == 0);
			tick(s, nid);
			break;
		}
		case 7: { /* a take and its refault, the item not added */
			if (M.item[key].present)
				break;
			unsigned long t = take_shadow(key);
			if (t)
				refault(key, t);
			M.shadow[key].token = 0;
			break;
		}
		case 8: { /* shrinker walks */
			int s = (b & 2) ? pick_online(b >> 2) : ROOT;

			ksync_shrink_slab(M.reg, nid, gp(s), (int)(a % 13));
			for (int k = 0; k < NKEYS; k++)
				M.shadow[k].maybe_gone = 1;
			break;
		}
		case 9:
			check_budgets();
			break;
		}
		if (trace)
			fprintf(stderr, "op %u a %u b %u\n", op, a, b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + (size > 900 ? 900 : size) };
	unsigned int flavour;

	trace = getenv("KSYNC_FUZZ_TRACE") != NULL;
	memset(&M, 0, sizeof(M));
	M.reg = ksync_shrinker_registry_create(NNODES);
	CHECK(M.reg);
	M.ws = ksync_workingset_create(M.reg, 16);
	CHECK(M.ws);
	flavour = take(&in);
	M.lru = ksync_lru_create(M.ws, flavour & 1 ? KSYNC_MGLRU : KSYNC_LRU_CLASSIC);
	CHECK(M.lru);
	for (int s = 0; s <= NSLOTS; s++)
		M.G[s].heir = ROOT;
	ksync_fail_nth_alloc(fuzz_fail_nth_of_last_byte(data, size));
	run(&in);
	ksync_fail_nth_alloc(0);

	check_budgets();
	for (int k = 0; k < NKEYS; k++) {
		if (M.item[k].present)
			CHECK(ksync_lru_del(M.lru, &M.item[k].lru));
		M.item[k].present = 0;
		take_shadow((unsigned long)k);
	}
	struct ksync_workingset_stats st;
	ksync_workingset_stats(M.ws, &st);
	CHECK(st.shadow_entries == 0 && st.shadow_nodes == 0);
	/* Leaves first (slots are not ordered by depth: a round per level). */
	for (int round = 0; round < NSLOTS; round++)
		for (int s = 0; s < NSLOTS; s++)
			if (M.G[s].online && !has_online_child(s))
				do_offline(s);
	for (int nid = 0; nid < NNODES; nid++)
		CHECK(ksync_memgroup_stat_total(ksync_shrinker_registry_groups(M.reg), nid, KSYNC_MEMGROUP_STAT_LRU) == 0);
	CHECK(ksync_lru_destroy(M.lru) == 0);
	CHECK(ksync_workingset_destroy(M.ws) == 0);
	CHECK(ksync_shrinker_registry_destroy(M.reg) == 0);
	return 0;
}
