/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lifetime table of docs/memgroups.md ("Lifetimes: who frees what, and
 * what each call does in each state"), cell by cell: every public call that
 * takes a memory group, on a group in each state of its life, with the
 * result the table documents (return value, report at the caller's line,
 * and where the effect landed).
 *
 * One row per call (LT_ROW), one test per (row, state): <row>__online,
 * __dying_first, __dying_last, __dead, __freed. The states are built the
 * same way for every row (lt_run()):
 *
 *   ONLINE        as created.
 *   DYING_FIRST   the call runs from the offline hook of a test client
 *                 ordered before every built-in client: the state is
 *                 DYING and no client has moved anything yet.
 *   DYING_LAST    from the offline hook of a test client ordered after
 *                 every built-in client: DYING, every client's step done,
 *                 and what those steps queued on either domain freed
 *                 (srcu_barrier of both) before the call.
 *   DEAD          offline done, the test holds a reference; both domains'
 *                 queued frees have run (the group's maps and retired lists
 *                 are gone).
 *   FREED         inside a read section of the set's domain, the last
 *                 reference is dropped (the release hooks run), then the
 *                 registry's domain is drained (srcu_barrier): everything
 *                 not freed on the set's domain is gone, and the group and
 *                 what its clients free on the set's domain is what the
 *                 section still keeps in memory.
 *
 * The fixture: a registry (its set of groups), a memcg-aware shrinker that
 * logs which group (in which state) it is asked about, a list_lru of the set
 * with that shrinker, and the groups P (top-level, online), g (the group
 * under test, P's child) and h (g's younger sibling, online).
 *
 * Misuse reports are kept once per call site (docs/errors.md), so every call
 * that must report sits on a line of its own per state: each line reports
 * in one test only.
 */
#include <ksync/list_lru.h>
#include <ksync/math.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "reports.h"

enum lt_state { LT_ONLINE, LT_DYING_FIRST, LT_DYING_LAST, LT_DEAD, LT_FREED };

/* The group's own state in each test state. */
static const enum ksync_memgroup_state lt_group_state[] = {
	[LT_ONLINE] = KSYNC_MEMGROUP_ONLINE,
	[LT_DYING_FIRST] = KSYNC_MEMGROUP_DYING,
	[LT_DYING_LAST] = KSYNC_MEMGROUP_DYING,
	[LT_DEAD] = KSYNC_MEMGROUP_DEAD,
	[LT_FREED] = KSYNC_MEMGROUP_FREED,
};

/* Where the test client's offline hook runs among the built-in clients. */
#ifndef LT_ORDER_FIRST /* -DLT_ORDER_FIRST=250: a hook between two steps */
#define LT_ORDER_FIRST (KSYNC_MEMGROUP_ORDER_LRU - 50)
#endif
#define LT_ORDER_LAST (KSYNC_MEMGROUP_ORDER_STATS + 100)

#define LT_LOG 8

/* The groups a shrinker callback was called with, and their state then. */
struct lt_log {
	int n;
	struct ksync_memgroup *group[LT_LOG];
	enum ksync_memgroup_state state[LT_LOG];
};

struct lt_fix;

/**
 * struct lt_row - one public call: a row of the table.
 * @name: the call (the tests are <name>__<state>)
 * @prepare: with g online, before its state is built (NULL: nothing)
 * @call: the cell: make the call on g in f->st and check the result
 * @check: after the state is built and @call ran, outside every read
 *	section, the groups not yet taken down (NULL: nothing)
 * @after: once every group is released and both domains drained (NULL: nothing)
 */
struct lt_row {
	const char *name;
	void (*prepare)(struct lt_fix *f);
	void (*call)(struct lt_fix *f);
	void (*check)(struct lt_fix *f);
	void (*after)(struct lt_fix *f);
};

struct lt_fix {
	enum lt_state st;
	const struct lt_row *row;
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_srcu_struct *set_srcu, *reg_srcu;
	struct ksync_shrinker *s;
	struct ksync_list_lru lru;
	struct ksync_memgroup_client tc; /* the test client */
	int tc_slot;
	int marker[2];          /* what the test client stores in a group's slot */
	bool released;          /* the test client's release hook ran for g */
	void *released_state;   /* ... and found this in g's slot */
	struct ksync_memgroup *P, *g, *h, *c; /* c: a child of g (memgroup_next_child) */
	int g_id;
	bool g_online;          /* g still needs its offline */
	bool g_ref;             /* the fixture holds a reference on g */
	bool c_ref;             /* ... on c */
	bool ran;               /* the cell's call ran (from the hook, in the DYING states) */
	unsigned long count_ret; /* what count_objects() returns */
	unsigned long objects;  /* what scan_objects() may still free */
	struct lt_log counts, scans;
	struct ksync_list_lru_item item[2];
};

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */

/* @expr (on one line) is misuse: it yields @want, and one report names this line. */
#define LT_MISUSE(expr, want)                                                  \
	do {                                                                   \
		int r0_ = reports, l_ = __LINE__;                              \
		long v_ = (long)(intptr_t)(expr);                              \
		KCHECK_EQ(v_, (long)(intptr_t)(want));                         \
		KCHECK_EQ(reports, r0_ + 1);                                   \
		KCHECK_EQ(report_line, l_);                                    \
		KCHECK(report_file && strcmp(report_file, __FILE__) == 0);     \
	} while (0)

/* The same for a call without a value. */
#define LT_MISUSE_DO(stmt)                                                     \
	do {                                                                   \
		int r0_ = reports, l_ = __LINE__;                              \
		stmt;                                                          \
		KCHECK_EQ(reports, r0_ + 1);                                   \
		KCHECK_EQ(report_line, l_);                                    \
		KCHECK(report_file && strcmp(report_file, __FILE__) == 0);     \
	} while (0)

/* @expr yields @want and reports nothing. */
#define LT_QUIET(expr, want)                                                   \
	do {                                                                   \
		int r0_ = reports;                                             \
		long v_ = (long)(intptr_t)(expr);                              \
		KCHECK_EQ(v_, (long)(intptr_t)(want));                         \
		KCHECK_EQ(reports, r0_);                                       \
	} while (0)

#define LT_QUIET_DO(stmt)                                                      \
	do {                                                                   \
		int r0_ = reports;                                             \
		stmt;                                                          \
		KCHECK_EQ(reports, r0_);                                       \
	} while (0)

/* ------------------------------------------------------------------------ */
/* The test client and the shrinker                                          */

static int tc_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct lt_fix *f = priv;

	ksync_memgroup_set_slot(g, slot, &f->marker[0]);
	return 0;
}

/* In the DYING states, the cell's call runs here, on g. */
static void tc_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct lt_fix *f = priv;

	(void)slot;
	if (g != f->g || (f->st != LT_DYING_FIRST && f->st != LT_DYING_LAST) || f->ran)
		return;
	KCHECK_EQ(ksync_memgroup_state(g), KSYNC_MEMGROUP_DYING);
	if (f->st == LT_DYING_LAST) {
		/* What the other clients' offline steps queued (maps, retired lists, the handle) is freed. */
		ksync_srcu_barrier(f->reg_srcu);
		ksync_srcu_barrier(f->set_srcu);
	}
	f->ran = true;
	f->row->call(f);
}

/* The state is not allocated (markers in the fixture): nothing to free, only noted. */
static void tc_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct lt_fix *f = priv;

	if (g != f->g)
		return;
	f->released = true;
	f->released_state = ksync_memgroup_slot(g, slot);
}

static void lt_log_add(struct lt_log *l, struct ksync_memgroup *g)
{
	if (l->n < LT_LOG) {
		l->group[l->n] = g;
		l->state[l->n] = g ? ksync_memgroup_state(g) : (enum ksync_memgroup_state)0;
	}
	l->n++;
}

static unsigned long lt_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct lt_fix *f = s->private_data;

	lt_log_add(&f->counts, sc->group);
	return f->count_ret;
}

static unsigned long lt_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct lt_fix *f = s->private_data;
	unsigned long n = ksync_min(sc->nr_to_scan, f->objects);

	lt_log_add(&f->scans, sc->group);
	f->objects -= n;
	return n;
}

/*
 * Whether the shrinker's bit is set in @grp on node 0: a group walk of @grp
 * asks the shrinker to count there only then (a count of 0 keeps the bit).
 */
static bool lt_bit_at(struct lt_fix *f, struct ksync_memgroup *grp)
{
	unsigned long saved = f->count_ret;
	bool seen = false;

	f->count_ret = 0;
	f->counts.n = 0;
	(void)ksync_shrink_slab(f->reg, 0, grp, 0);
	for (int i = 0; i < f->counts.n && i < LT_LOG; i++)
		seen |= f->counts.group[i] == grp;
	f->counts.n = 0;
	f->count_ret = saved;
	return seen;
}

/* The group that takes what is aimed at g: g while online, else its nearest online ancestor. */
static struct ksync_memgroup *lt_target(struct lt_fix *f)
{
	return f->st == LT_ONLINE ? f->g : f->P;
}

/* As lt_target(), for what depends on the clients' offline steps having run. */
static struct ksync_memgroup *lt_target_after_steps(struct lt_fix *f)
{
	return f->st == LT_ONLINE || f->st == LT_DYING_FIRST ? f->g : f->P;
}

static void lt_drain(struct lt_fix *f)
{
	ksync_srcu_barrier(f->reg_srcu);
	ksync_srcu_barrier(f->set_srcu);
}

/* ------------------------------------------------------------------------ */
/* The fixture and the states                                               */

static struct lt_fix *lt_setup(const struct lt_row *row, enum lt_state st)
{
	struct lt_fix *f = calloc(1, sizeof(*f));

	KASSERT(f);
	f->st = st;
	f->row = row;
	reports = 0;
	ksync_warn_hook = kt_record_report;
	f->reg = ksync_shrinker_registry_create(1);
	KASSERT(f->reg);
	f->set = ksync_shrinker_registry_groups(f->reg);
	f->set_srcu = ksync_memgroup_set_srcu(f->set);
	f->reg_srcu = ksync_shrinker_registry_srcu(f->reg);
	f->s = ksync_shrinker_alloc(f->reg, KSYNC_SHRINKER_MEMCG_AWARE, "lifetime");
	KASSERT(f->s);
	f->s->count_objects = lt_count;
	f->s->scan_objects = lt_scan;
	f->s->private_data = f;
	KASSERT(ksync_shrinker_register(f->s) == 0);
	KASSERT(ksync_list_lru_init(&f->lru, f->set, 1, f->s) == 0);
	f->tc = (struct ksync_memgroup_client){
		.name = "lifetime",
		.online = tc_online,
		.offline = tc_offline,
		.release = tc_release,
		.order = st == LT_DYING_FIRST ? LT_ORDER_FIRST : LT_ORDER_LAST,
	};
	f->tc_slot = ksync_memgroup_client_register(f->set, &f->tc, f);
	KASSERT(f->tc_slot >= 0);
	f->P = ksync_shrinker_group_create(f->reg, NULL);
	KASSERT(f->P);
	f->g = ksync_shrinker_group_create(f->reg, f->P);
	KASSERT(f->g);
	f->h = ksync_shrinker_group_create(f->reg, f->P);
	KASSERT(f->h);
	f->g_id = ksync_memgroup_id(f->g);
	f->g_online = true;
	for (int i = 0; i < 2; i++)
		ksync_list_lru_item_init(&f->item[i]);
	KASSERT(reports == 0);
	return f;
}

/* Every group released, both domains drained. */
static void lt_finish(struct lt_fix *f)
{
	if (f->c_ref) {
		ksync_memgroup_put(f->c);
		f->c_ref = false;
	}
	if (f->g_online) {
		KCHECK_EQ(ksync_memgroup_offline(f->g), 0);
		f->g_online = false;
	}
	if (f->g_ref) {
		ksync_memgroup_put(f->g);
		f->g_ref = false;
	}
	KCHECK_EQ(ksync_memgroup_offline(f->h), 0);
	KCHECK_EQ(ksync_memgroup_offline(f->P), 0);
	KCHECK_EQ(ksync_memgroup_nr_groups(f->set), 0);
	lt_drain(f);
}

static void lt_teardown(struct lt_fix *f)
{
	for (int i = 0; i < 2; i++)
		(void)ksync_list_lru_del_obj(&f->lru, &f->item[i]);
	KCHECK_EQ(ksync_list_lru_destroy(&f->lru), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(f->set, f->tc_slot), 0);
	KCHECK_EQ(ksync_shrinker_free(f->s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
	ksync_warn_hook = NULL;
	free(f);
}

/* Build g's state @st, make @row's call on it, check, take everything down. */
static void lt_run(const struct lt_row *row, enum lt_state st)
{
	struct lt_fix *f = lt_setup(row, st);
	int idx;

	if (row->prepare)
		row->prepare(f);
	switch (st) {
	case LT_ONLINE:
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_ONLINE);
		f->ran = true;
		row->call(f);
		break;
	case LT_DYING_FIRST:
	case LT_DYING_LAST:
		f->g_online = false;
		KCHECK_EQ(ksync_memgroup_offline(f->g), 0); /* the call runs in tc_offline() */
		KCHECK(f->ran);
		break;
	case LT_DEAD:
		ksync_memgroup_get(f->g);
		f->g_ref = true;
		f->g_online = false;
		KCHECK_EQ(ksync_memgroup_offline(f->g), 0);
		lt_drain(f);
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_DEAD);
		f->ran = true;
		row->call(f);
		break;
	case LT_FREED:
		ksync_memgroup_get(f->g);
		f->g_online = false;
		KCHECK_EQ(ksync_memgroup_offline(f->g), 0);
		lt_drain(f);
		idx = ksync_srcu_read_lock(f->set_srcu);
		if (f->c_ref) { /* a child holds a reference on g: released first */
			ksync_memgroup_put(f->c);
			f->c_ref = false;
		}
		ksync_memgroup_put(f->g); /* the last reference */
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_FREED);
		KCHECK(f->released);
		ksync_srcu_barrier(f->reg_srcu); /* not the set's: the section keeps g */
		f->ran = true;
		row->call(f);
		ksync_srcu_read_unlock(f->set_srcu, idx);
		break;
	}
	if (row->check)
		row->check(f);
	lt_finish(f);
	if (row->after)
		row->after(f);
	lt_teardown(f);
}

/*
 * LT_ROW(name, prepare, check, after) { body } - a row: @body is the cell
 * function (struct lt_fix *f), one test per state.
 */
#define LT_ROW(name, prepare_fn, check_fn, after_fn)                           \
	static void name##_call(struct lt_fix *f);                             \
	static const struct lt_row lt_row_##name = { #name, prepare_fn, name##_call, check_fn, after_fn }; \
	KTEST(name##__online) { lt_run(&lt_row_##name, LT_ONLINE); }           \
	KTEST(name##__dying_first) { lt_run(&lt_row_##name, LT_DYING_FIRST); } \
	KTEST(name##__dying_last) { lt_run(&lt_row_##name, LT_DYING_LAST); }   \
	KTEST(name##__dead) { lt_run(&lt_row_##name, LT_DEAD); }               \
	KTEST(name##__freed) { lt_run(&lt_row_##name, LT_FREED); }             \
	static void name##_call(struct lt_fix *f)

/* ------------------------------------------------------------------------ */
/* <ksync/memgroup.h>                                                       */

LT_ROW(memgroup_get, NULL, NULL, NULL)
{
	int n = ksync_memgroup_nr_groups(f->set);

	if (f->st == LT_FREED) {
		LT_MISUSE_DO(ksync_memgroup_get(f->g));
		KCHECK(!ksync_memgroup_tryget(f->g)); /* no reference taken: still released */
		return;
	}
	/* A reference is taken: the put that pairs with it is accepted, without a report. */
	LT_QUIET_DO(ksync_memgroup_get(f->g));
	LT_QUIET_DO(ksync_memgroup_put(f->g));
	KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n);
	KCHECK_EQ(ksync_memgroup_state(f->g), lt_group_state[f->st]);
}

LT_ROW(memgroup_tryget, NULL, NULL, NULL)
{
	int n = ksync_memgroup_nr_groups(f->set);

	if (f->st == LT_FREED) {
		KCHECK(!ksync_memgroup_tryget(f->g));
		return;
	}
	KCHECK(ksync_memgroup_tryget(f->g));
	LT_QUIET_DO(ksync_memgroup_put(f->g));
	KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n);
	KCHECK_EQ(ksync_memgroup_state(f->g), lt_group_state[f->st]);
}

LT_ROW(memgroup_tryget_online, NULL, NULL, NULL)
{
	if (f->st != LT_ONLINE) {
		KCHECK(!ksync_memgroup_tryget_online(f->g));
		return;
	}
	KCHECK(ksync_memgroup_tryget_online(f->g));
	LT_QUIET_DO(ksync_memgroup_put(f->g));
	KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_ONLINE);
}

/* A DYING group whose unpaired put was refused still goes the whole way at the end of its offline. */
static void memgroup_put_check(struct lt_fix *f)
{
	if (f->st == LT_DYING_FIRST || f->st == LT_DYING_LAST) {
		KCHECK(f->released);
		KCHECK_EQ(ksync_memgroup_nr_groups(f->set), 2); /* P and h */
	}
}

LT_ROW(memgroup_put, NULL, memgroup_put_check, NULL)
{
	int n = ksync_memgroup_nr_groups(f->set), idx;

	switch (f->st) {
	case LT_ONLINE:
		/* Only offline drops the creator's reference: refused, nothing changes. */
		LT_MISUSE_DO(ksync_memgroup_put(f->g));
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_ONLINE);
		KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n);
		KCHECK(ksync_memgroup_tryget(f->g));
		LT_QUIET_DO(ksync_memgroup_put(f->g)); /* a paired put is accepted */
		break;
	case LT_DYING_FIRST:
		LT_MISUSE_DO(ksync_memgroup_put(f->g));
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_DYING);
		KCHECK(!f->released);
		break;
	case LT_DYING_LAST:
		LT_MISUSE_DO(ksync_memgroup_put(f->g));
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_DYING);
		KCHECK(!f->released);
		break;
	case LT_DEAD:
		/* The caller's reference is the last one: the group is released (seen in a section). */
		idx = ksync_srcu_read_lock(f->set_srcu);
		LT_QUIET_DO(ksync_memgroup_put(f->g));
		f->g_ref = false;
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_FREED);
		KCHECK(f->released);
		KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n - 1);
		ksync_srcu_read_unlock(f->set_srcu, idx);
		break;
	case LT_FREED:
		LT_MISUSE_DO(ksync_memgroup_put(f->g));
		KCHECK(!ksync_memgroup_tryget(f->g)); /* the count stayed 0: no resurrection */
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_FREED);
		break;
	}
}

LT_ROW(memgroup_offline, NULL, NULL, NULL)
{
	int idx;

	switch (f->st) {
	case LT_ONLINE:
		idx = ksync_srcu_read_lock(f->set_srcu);
		LT_QUIET(ksync_memgroup_offline(f->g), 0);
		f->g_online = false;
		/* Nothing else referenced it: released at the end of its offline. */
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_FREED);
		KCHECK(f->released);
		ksync_srcu_read_unlock(f->set_srcu, idx);
		break;
	case LT_DYING_FIRST:
		LT_MISUSE(ksync_memgroup_offline(f->g), -EBUSY);
		break;
	case LT_DYING_LAST:
		LT_MISUSE(ksync_memgroup_offline(f->g), -EBUSY);
		break;
	case LT_DEAD:
		LT_MISUSE(ksync_memgroup_offline(f->g), -EBUSY);
		break;
	case LT_FREED:
		LT_MISUSE(ksync_memgroup_offline(f->g), -EBUSY);
		break;
	}
	if (f->st != LT_ONLINE)
		KCHECK_EQ(ksync_memgroup_state(f->g), lt_group_state[f->st]);
}

LT_ROW(memgroup_create, NULL, NULL, NULL)
{
	int n = ksync_memgroup_nr_groups(f->set);
	struct ksync_memgroup *k;

	switch (f->st) {
	case LT_ONLINE:
		k = ksync_memgroup_create(NULL, f->g);
		KCHECK(k != NULL);
		if (!k)
			break;
		KCHECK(ksync_memgroup_parent(k) == f->g);
		KCHECK_EQ(ksync_memgroup_state(k), KSYNC_MEMGROUP_ONLINE);
		KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n + 1);
		KCHECK_EQ(ksync_memgroup_offline(k), 0);
		break;
	case LT_DYING_FIRST:
		LT_MISUSE(ksync_memgroup_create(NULL, f->g), NULL);
		break;
	case LT_DYING_LAST:
		LT_MISUSE(ksync_memgroup_create(NULL, f->g), NULL);
		break;
	case LT_DEAD:
		LT_MISUSE(ksync_memgroup_create(NULL, f->g), NULL);
		break;
	case LT_FREED:
		LT_MISUSE(ksync_memgroup_create(NULL, f->g), NULL);
		break;
	}
	KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n);
}

LT_ROW(memgroup_slot, NULL, NULL, NULL)
{
	/* The test client leaves its state in the slot at release (as memgroup.h allows). */
	LT_QUIET(ksync_memgroup_slot(f->g, f->tc_slot), &f->marker[0]);
}

/* Who saw the new state: the release hook, unless it had run already. */
static void memgroup_set_slot_after(struct lt_fix *f)
{
	KCHECK(f->released);
	KCHECK(f->released_state == (f->st == LT_FREED ? &f->marker[0] : &f->marker[1]));
}

LT_ROW(memgroup_set_slot, NULL, NULL, memgroup_set_slot_after)
{
	LT_QUIET_DO(ksync_memgroup_set_slot(f->g, f->tc_slot, &f->marker[1]));
	KCHECK(ksync_memgroup_slot(f->g, f->tc_slot) == &f->marker[1]);
	KCHECK(ksync_memgroup_client_state(f->g, &f->tc) == &f->marker[1]);
}

static const struct ksync_memgroup_client lt_stranger = { .name = "stranger", .online = tc_online };

LT_ROW(memgroup_client_state, NULL, NULL, NULL)
{
	KCHECK(ksync_memgroup_client_state(f->g, &f->tc) == &f->marker[0]);
	KCHECK(ksync_memgroup_client_state(f->g, &lt_stranger) == NULL); /* not a client of the set */
}

LT_ROW(memgroup_id, NULL, NULL, NULL)
{
	KCHECK_EQ(ksync_memgroup_id(f->g), f->g_id);
}

LT_ROW(memgroup_parent, NULL, NULL, NULL)
{
	KCHECK(ksync_memgroup_parent(f->g) == f->P);
}

LT_ROW(memgroup_state, NULL, NULL, NULL)
{
	KCHECK_EQ(ksync_memgroup_state(f->g), lt_group_state[f->st]);
}

LT_ROW(memgroup_set_of, NULL, NULL, NULL)
{
	KCHECK(ksync_memgroup_set_of(f->g) == f->set);
}

/* g gets a child c, offlined and kept by a reference: DEAD, so g can go offline. */
static void memgroup_next_child_prepare(struct lt_fix *f)
{
	f->c = ksync_memgroup_create(NULL, f->g);
	KASSERT(f->c);
	ksync_memgroup_get(f->c);
	f->c_ref = true;
	KCHECK_EQ(ksync_memgroup_offline(f->c), 0);
}

/* @parent's children, by ksync_memgroup_for_each_child(), into @out (at most 4). */
static int lt_children(struct ksync_memgroup *parent, struct ksync_memgroup **out)
{
	struct ksync_memgroup *pos;
	int n = 0;

	ksync_memgroup_for_each_child(pos, parent) {
		if (n < 4)
			out[n] = pos;
		n++;
	}
	return n;
}

LT_ROW(memgroup_next_child, memgroup_next_child_prepare, NULL, NULL)
{
	struct ksync_memgroup *seen[4] = { 0 };
	int idx = ksync_srcu_read_lock(f->set_srcu), n;

	n = lt_children(f->g, seen);
	if (f->st != LT_FREED) {
		/* Its children not yet released, whatever their state: the DEAD c. */
		KCHECK_EQ(n, 1);
		KCHECK(seen[0] == f->c);
	} else {
		/* Released: so were its children (each held a reference on it). */
		KCHECK_EQ(n, 0);
		KCHECK(ksync_memgroup_next_child(f->g, NULL) == NULL);
	}
	n = lt_children(f->P, seen);
	if (f->st != LT_FREED) {
		KCHECK_EQ(n, 2);
		KCHECK(seen[0] == f->g);
		KCHECK(seen[1] == f->h);
	} else {
		/* A new walk of P no longer sees g; one standing on g steps on to h. */
		KCHECK_EQ(n, 1);
		KCHECK(seen[0] == f->h);
		KCHECK(ksync_memgroup_next_child(f->P, f->g) == f->h);
	}
	ksync_srcu_read_unlock(f->set_srcu, idx);
}

/* ------------------------------------------------------------------------ */
/* <ksync/objcg.h>                                                          */

LT_ROW(memgroup_get_objcg, NULL, NULL, NULL)
{
	struct ksync_objcg *h = ksync_memgroup_get_objcg(f->g);
	int idx;

	KCHECK(h != NULL);
	if (!h)
		return;
	/* g's own handle while it is online, else its nearest online ancestor's. */
	idx = ksync_srcu_read_lock(f->set_srcu);
	KCHECK(ksync_objcg_group(h) == lt_target(f));
	ksync_srcu_read_unlock(f->set_srcu, idx);
	ksync_objcg_put(h);
}

LT_ROW(memgroup_objcg_peek, NULL, NULL, NULL)
{
	struct ksync_objcg *h = ksync_memgroup_objcg_peek(f->g);

	/* g's own handle while it is online (no reference taken), else NULL: no ancestor's. */
	if (f->st == LT_ONLINE) {
		struct ksync_objcg *own = ksync_memgroup_get_objcg(f->g);

		KCHECK(h != NULL && h == own);
		ksync_objcg_put(own);
	} else {
		KCHECK(h == NULL);
	}
}

/* A counter of g's and P's after an add aimed at g: where it landed. */
static void lt_stat_landed(struct lt_fix *f, int item, long v)
{
	KCHECK_EQ(ksync_memgroup_stat_read(lt_target(f), 0, item), v);
	KCHECK_EQ(ksync_memgroup_stat_read(f->st == LT_ONLINE ? f->P : f->g, 0, item), 0);
}

/* Conservation: what was added is in the groups not yet freed plus the root. */
static void lt_stat_total_3(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_total(f->set, 0, KSYNC_MEMGROUP_STAT_USER0), 3);
}

/* Once everything is released, at the root (P is top-level). */
static void lt_stat_root_3(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_root(f->set, 0, KSYNC_MEMGROUP_STAT_USER0), 3);
	KCHECK_EQ(ksync_memgroup_stat_total(f->set, 0, KSYNC_MEMGROUP_STAT_USER0), 3);
}

LT_ROW(memgroup_stat_add, NULL, lt_stat_total_3, lt_stat_root_3)
{
	LT_QUIET(ksync_memgroup_stat_add(f->g, 0, KSYNC_MEMGROUP_STAT_USER0, 3), 0);
	lt_stat_landed(f, KSYNC_MEMGROUP_STAT_USER0, 3);
}

LT_ROW(memgroup_stat_add_always_locked, NULL, lt_stat_total_3, lt_stat_root_3)
{
	LT_QUIET(ksync_memgroup_stat_add_always_locked(f->g, 0, KSYNC_MEMGROUP_STAT_USER0, 3), 0);
	lt_stat_landed(f, KSYNC_MEMGROUP_STAT_USER0, 3);
}

static void memgroup_stat_read_prepare(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_add(f->g, 0, KSYNC_MEMGROUP_STAT_USER0, 5), 0);
}

static void lt_stat_total_5(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_total(f->set, 0, KSYNC_MEMGROUP_STAT_USER0), 5);
}

static void lt_stat_root_5(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_root(f->set, 0, KSYNC_MEMGROUP_STAT_USER0), 5);
}

LT_ROW(memgroup_stat_read, memgroup_stat_read_prepare, lt_stat_total_5, lt_stat_root_5)
{
	/* g's own counter: moved to the parent by the statistics' offline step. */
	struct ksync_memgroup *at = lt_target_after_steps(f);

	LT_QUIET(ksync_memgroup_stat_read(f->g, 0, KSYNC_MEMGROUP_STAT_USER0), at == f->g ? 5 : 0);
	LT_QUIET(ksync_memgroup_stat_read(f->P, 0, KSYNC_MEMGROUP_STAT_USER0), at == f->P ? 5 : 0);
}

/* ------------------------------------------------------------------------ */
/* <ksync/list_lru.h>                                                       */

/* Two items on g's list (node 0). */
static void lt_lru_two_on_g(struct lt_fix *f)
{
	for (int i = 0; i < 2; i++)
		KCHECK(ksync_list_lru_add(&f->lru, &f->item[i], 0, f->g));
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->g), 2);
}

static void lt_lru_one_on_g(struct lt_fix *f)
{
	KCHECK(ksync_list_lru_add(&f->lru, &f->item[0], 0, f->g));
}

/* Items on the groups' lists are counted in KSYNC_MEMGROUP_STAT_LRU, wherever they moved. */
static void lt_lru_stat_is_1(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_total(f->set, 0, KSYNC_MEMGROUP_STAT_LRU), 1);
}

static void lt_lru_stat_is_0(struct lt_fix *f)
{
	KCHECK_EQ(ksync_memgroup_stat_total(f->set, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
}

/* The add's item is on P's list now, P's bit set: also where DYING_FIRST's add on g ended up. */
static void list_lru_add_check(struct lt_fix *f)
{
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->P), f->st == LT_ONLINE ? 0 : 1);
	if (f->st != LT_ONLINE)
		KCHECK(lt_bit_at(f, f->P));
	lt_lru_stat_is_1(f);
}

LT_ROW(list_lru_add, NULL, list_lru_add_check, NULL)
{
	/* The list: g's until the LRU step retires it; then the nearest live ancestor's. */
	struct ksync_memgroup *at = lt_target_after_steps(f);

	LT_QUIET(ksync_list_lru_add(&f->lru, &f->item[0], 0, f->g), true);
	KCHECK(ksync_list_lru_item_on_list(&f->item[0]));
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->g), at == f->g);
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->P), at == f->P);
	KCHECK(lt_bit_at(f, at)); /* the list went from empty to one item */
	/* The statistic follows the item's group, redirected as any update is. */
	KCHECK_EQ(ksync_memgroup_stat_read(lt_target(f), 0, KSYNC_MEMGROUP_STAT_LRU), 1);
}

LT_ROW(list_lru_del, lt_lru_one_on_g, lt_lru_stat_is_0, NULL)
{
	/* Found through the item, wherever reparenting moved it. */
	LT_QUIET(ksync_list_lru_del(&f->lru, &f->item[0], 0, f->g), true);
	KCHECK(!ksync_list_lru_item_on_list(&f->item[0]));
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->g), 0);
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->P), 0);
	LT_QUIET(ksync_list_lru_del(&f->lru, &f->item[0], 0, f->g), false); /* on no list now */
}

LT_ROW(list_lru_count_one, lt_lru_two_on_g, NULL, NULL)
{
	/* g's list until the LRU step retires it; its items are counted at the parent then. */
	bool own = lt_target_after_steps(f) == f->g;

	LT_QUIET(ksync_list_lru_count_one(&f->lru, 0, f->g), own ? 2 : 0);
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->P), own ? 0 : 2);
}

static enum ksync_lru_status lt_isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *list,
				       void *arg)
{
	(*(int *)arg)++;
	ksync_list_lru_isolate(list, item);
	return KSYNC_LRU_REMOVED;
}

LT_ROW(list_lru_walk_one, lt_lru_two_on_g, NULL, NULL)
{
	/* g's live list, or nothing (no retry at the parent: the kernel's walk). */
	bool own = lt_target_after_steps(f) == f->g;
	unsigned long budget = 10;
	int visits = 0;

	LT_QUIET(ksync_list_lru_walk_one(&f->lru, 0, f->g, lt_isolate, &visits, &budget), own ? 2 : 0);
	KCHECK_EQ(visits, own ? 2 : 0);
	KCHECK_EQ(budget, own ? 8 : 10);
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->P), own ? 0 : 2);
}

LT_ROW(list_lru_shrinker_count, lt_lru_two_on_g, NULL, NULL)
{
	struct ksync_shrink_control sc = { .nid = 0, .group = f->g };
	bool own = lt_target_after_steps(f) == f->g;

	LT_QUIET(ksync_list_lru_shrinker_count(&f->lru, &sc), own ? 2 : 0);
}

LT_ROW(list_lru_shrinker_walk, lt_lru_two_on_g, NULL, NULL)
{
	struct ksync_shrink_control sc = { .nid = 0, .group = f->g, .nr_to_scan = 10 };
	bool own = lt_target_after_steps(f) == f->g;
	int visits = 0;

	LT_QUIET(ksync_list_lru_shrinker_walk(&f->lru, &sc, lt_isolate, &visits), own ? 2 : 0);
	KCHECK_EQ(visits, own ? 2 : 0);
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, f->P), own ? 0 : 2);
}

/* ------------------------------------------------------------------------ */
/* <ksync/shrinker.h>                                                       */

LT_ROW(shrinker_group_create, NULL, NULL, NULL)
{
	int n = ksync_memgroup_nr_groups(f->set);
	struct ksync_memgroup *k;

	switch (f->st) {
	case LT_ONLINE:
		k = ksync_shrinker_group_create(f->reg, f->g);
		KCHECK(k != NULL);
		if (!k)
			break;
		KCHECK(ksync_memgroup_parent(k) == f->g);
		KCHECK_EQ(ksync_shrinker_group_destroy(k), 0);
		break;
	case LT_DYING_FIRST:
		LT_MISUSE(ksync_shrinker_group_create(f->reg, f->g), NULL);
		break;
	case LT_DYING_LAST:
		LT_MISUSE(ksync_shrinker_group_create(f->reg, f->g), NULL);
		break;
	case LT_DEAD:
		LT_MISUSE(ksync_shrinker_group_create(f->reg, f->g), NULL);
		break;
	case LT_FREED:
		LT_MISUSE(ksync_shrinker_group_create(f->reg, f->g), NULL);
		break;
	}
	KCHECK_EQ(ksync_memgroup_nr_groups(f->set), n);
}

LT_ROW(shrinker_group_destroy, NULL, NULL, NULL)
{
	int idx;

	switch (f->st) {
	case LT_ONLINE:
		idx = ksync_srcu_read_lock(f->set_srcu);
		LT_QUIET(ksync_shrinker_group_destroy(f->g), 0);
		f->g_online = false;
		KCHECK_EQ(ksync_memgroup_state(f->g), KSYNC_MEMGROUP_FREED);
		ksync_srcu_read_unlock(f->set_srcu, idx);
		break;
	case LT_DYING_FIRST:
		LT_MISUSE(ksync_shrinker_group_destroy(f->g), -EBUSY);
		break;
	case LT_DYING_LAST:
		LT_MISUSE(ksync_shrinker_group_destroy(f->g), -EBUSY);
		break;
	case LT_DEAD:
		LT_MISUSE(ksync_shrinker_group_destroy(f->g), -EBUSY);
		break;
	case LT_FREED:
		LT_MISUSE(ksync_shrinker_group_destroy(f->g), -EBUSY);
		break;
	}
	if (f->st != LT_ONLINE)
		KCHECK_EQ(ksync_memgroup_state(f->g), lt_group_state[f->st]);
}

/* DYING_FIRST's bit went with g's maps: no deferred work, so nothing moved to P. */
static void set_shrinker_bit_check(struct lt_fix *f)
{
	if (f->st == LT_DYING_FIRST)
		KCHECK(!lt_bit_at(f, f->P));
}

LT_ROW(set_shrinker_bit, NULL, set_shrinker_bit_check, NULL)
{
	/* g's own map while the registry's offline step has not begun; else the nearest live ancestor's. */
	struct ksync_memgroup *at = lt_target_after_steps(f);

	LT_QUIET(ksync_set_shrinker_bit(f->g, 0, f->s->id), 0);
	KCHECK(lt_bit_at(f, at));
	if (at == f->g)
		KCHECK(!lt_bit_at(f, f->P));
}

static void shrink_slab_prepare(struct lt_fix *f)
{
	KCHECK_EQ(ksync_set_shrinker_bit(f->g, 0, f->s->id), 0);
	f->count_ret = 10;
	f->objects = 10;
}

LT_ROW(shrink_slab, shrink_slab_prepare, NULL, NULL)
{
	/* A group walk of g while the registry's offline step has not begun; else nothing. */
	bool walks = lt_target_after_steps(f) == f->g;
	unsigned long freed;

	f->counts.n = 0;
	LT_QUIET_DO(freed = ksync_shrink_slab(f->reg, 0, f->g, 0));
	if (walks) {
		KCHECK(freed > 0);
		KCHECK_EQ(freed, 10 - f->objects);
		KCHECK(f->counts.n >= 1);
		KCHECK(f->counts.group[0] == f->g);
		KCHECK_EQ(f->counts.state[0], lt_group_state[f->st]);
	} else {
		KCHECK_EQ(freed, 0);
		KCHECK_EQ(f->counts.n, 0);
		KCHECK_EQ(f->objects, 10);
	}
}

LT_ROW(shrinker_group_id, NULL, NULL, NULL)
{
	KCHECK_EQ(ksync_shrinker_group_id(f->g), f->g_id);
}

/* ------------------------------------------------------------------------ */
/* <ksync/shrinker_debug.h>                                                 */

LT_ROW(shrinker_debug_count, NULL, NULL, NULL)
{
	/* The callback gets g until the registry's offline step; then -ENOENT, no call. */
	bool alive = lt_target_after_steps(f) == f->g;

	f->count_ret = 7;
	f->counts.n = 0;
	LT_QUIET(ksync_shrinker_debug_count(f->s, f->g, 0), alive ? 7 : -ENOENT);
	KCHECK_EQ(f->counts.n, alive ? 1 : 0);
	if (alive) {
		KCHECK(f->counts.group[0] == f->g);
		KCHECK_EQ(f->counts.state[0], lt_group_state[f->st]);
	}
}

LT_ROW(shrinker_debug_scan, NULL, NULL, NULL)
{
	bool alive = lt_target_after_steps(f) == f->g;

	f->objects = 10;
	f->scans.n = 0;
	LT_QUIET(ksync_shrinker_debug_scan(f->s, f->g, 0, 4), alive ? 4 : -ENOENT);
	KCHECK_EQ(f->scans.n, alive ? 1 : 0);
	if (alive) {
		KCHECK(f->scans.group[0] == f->g);
		KCHECK_EQ(f->scans.state[0], lt_group_state[f->st]);
	}
	KCHECK_EQ(f->objects, alive ? 6 : 10);
}

static void shrinker_deferred_prepare(struct lt_fix *f)
{
	KCHECK_EQ(ksync_shrinker_add_deferred(f->s, f->g, 0, 9), 0);
}

/* The ledger holds the work in every state: in g, or in P once it moved. */
static void shrinker_deferred_check(struct lt_fix *f)
{
	struct ksync_shrinker_deferred_total t;

	ksync_shrinker_deferred_total(f->reg, &t);
	KCHECK_EQ(t.in_groups, 9);
	KCHECK_EQ(ksync_shrinker_deferred(f->s, f->P, 0), f->st == LT_ONLINE ? 0 : 9);
}

LT_ROW(shrinker_deferred, shrinker_deferred_prepare, shrinker_deferred_check, NULL)
{
	/* g's counter until the registry's offline step moves it to the parent; -ENOENT then. */
	bool own = lt_target_after_steps(f) == f->g;

	LT_QUIET(ksync_shrinker_deferred(f->s, f->g, 0), own ? 9 : -ENOENT);
	KCHECK_EQ(ksync_shrinker_deferred(f->s, f->P, 0), own ? 0 : 9);
}

/* Work added to g while it was alive for the registry moved to P (with P's bit); none otherwise. */
static void shrinker_add_deferred_check(struct lt_fix *f)
{
	struct ksync_shrinker_deferred_total t;
	bool added = lt_target_after_steps(f) == f->g;

	ksync_shrinker_deferred_total(f->reg, &t);
	KCHECK_EQ(t.in_groups, added ? 4 : 0);
	if (f->st == LT_DYING_FIRST) {
		KCHECK_EQ(ksync_shrinker_deferred(f->s, f->P, 0), 4);
		KCHECK(lt_bit_at(f, f->P));
	}
}

LT_ROW(shrinker_add_deferred, NULL, shrinker_add_deferred_check, NULL)
{
	bool own = lt_target_after_steps(f) == f->g;

	LT_QUIET(ksync_shrinker_add_deferred(f->s, f->g, 0, 4), own ? 0 : -ENOENT);
	if (own)
		KCHECK_EQ(ksync_shrinker_deferred(f->s, f->g, 0), 4);
	KCHECK_EQ(ksync_shrinker_deferred(f->s, f->P, 0), 0);
}

/* ------------------------------------------------------------------------ */
/* A top-level group: what is redirected goes to the root                   */

KTEST(toplevel_dead_group_redirects_to_the_root)
{
	struct lt_fix *f = lt_setup(&lt_row_memgroup_state, LT_DEAD);
	struct ksync_memgroup *t = ksync_shrinker_group_create(f->reg, NULL);
	struct ksync_list_lru_item item;

	KASSERT(t);
	ksync_list_lru_item_init(&item);
	ksync_memgroup_get(t);
	KCHECK_EQ(ksync_memgroup_offline(t), 0);
	lt_drain(f);
	KCHECK_EQ(ksync_memgroup_state(t), KSYNC_MEMGROUP_DEAD);

	KCHECK(ksync_memgroup_get_objcg(t) == NULL); /* no online ancestor: charges go to the root */
	LT_QUIET(ksync_memgroup_stat_add(t, 0, KSYNC_MEMGROUP_STAT_USER0, 3), 0);
	KCHECK_EQ(ksync_memgroup_stat_root(f->set, 0, KSYNC_MEMGROUP_STAT_USER0), 3);
	LT_QUIET(ksync_list_lru_add(&f->lru, &item, 0, t), true); /* the global list */
	KCHECK_EQ(ksync_list_lru_count_one(&f->lru, 0, NULL), 1);
	LT_QUIET(ksync_set_shrinker_bit(t, 0, f->s->id), 0); /* no live ancestor: no bit anywhere */
	KCHECK(!lt_bit_at(f, f->P));
	KCHECK(!lt_bit_at(f, f->h));
	KCHECK_EQ(ksync_memgroup_stat_total(f->set, 0, KSYNC_MEMGROUP_STAT_LRU), 0); /* global: not counted */

	KCHECK(ksync_list_lru_del_obj(&f->lru, &item));
	ksync_memgroup_put(t);
	lt_finish(f);
	lt_teardown(f);
}

/* ------------------------------------------------------------------------ */
/* The table in docs/memgroups.md names these tests, and only these         */

#ifndef KSYNC_MEMGROUPS_MD
#error "the build passes the path of docs/memgroups.md as KSYNC_MEMGROUPS_MD"
#endif

static bool lt_registered(const char *name, size_t len)
{
	for (int i = 0; i < ktest_ncases; i++)
		if (strlen(ktest_cases[i].name) == len && strncmp(ktest_cases[i].name, name, len) == 0)
			return true;
	return false;
}

KTEST(doc_table_names_every_cell_test)
{
	FILE *md = fopen(KSYNC_MEMGROUPS_MD, "r");
	static char doc[1 << 17];
	size_t len;
	int cells = 0;

	KCHECK(md != NULL);
	if (!md)
		return;
	len = fread(doc, 1, sizeof(doc) - 1, md);
	fclose(md);
	doc[len] = '\0';
	/* Every test of a cell is named in the doc, in backquotes. */
	for (int i = 0; i < ktest_ncases; i++) {
		char want[128];

		if (!strstr(ktest_cases[i].name, "__"))
			continue;
		snprintf(want, sizeof(want), "`%s`", ktest_cases[i].name);
		if (!strstr(doc, want)) {
			fprintf(stderr, "  not in docs/memgroups.md: %s\n", want);
			KCHECK(strstr(doc, want) != NULL);
		}
		cells++;
	}
	KCHECK_EQ(cells, 34 * 5);
	/* Every `<row>__<state>` the doc names is a test of this file. */
	for (const char *p = strchr(doc, '`'); p; p = strchr(p + 1, '`')) {
		const char *q = strchr(p + 1, '`');
		size_t n;

		if (!q)
			break;
		n = (size_t)(q - p - 1);
		if (n < 64 && memchr(p + 1, '_', n) && strstr(p + 1, "__") && strstr(p + 1, "__") < q &&
		    !memchr(p + 1, ' ', n) && !memchr(p + 1, '(', n)) {
			if (!lt_registered(p + 1, n))
				fprintf(stderr, "  no such test: %.*s\n", (int)n, p + 1);
			KCHECK(lt_registered(p + 1, n));
		}
		p = q;
	}
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
