/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The error rule, walked row by row from docs/errors.md: for each row of its
 * misuse table, the matching case below makes the call twice from one line,
 * under the row's condition. Both calls must return the row's result; the
 * report, when the row says there is one, must name this file and that line,
 * and come once. A row without a case, or a case without a row, fails.
 */
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
#include <ksync/objcache.h>
#include <ksync/workingset.h>
#include <ksync/objcg.h>
#include <ksync/pressure.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "pressure_direct.h"
#include "reports.h"
#include "shrinker_stubs.h"
#include "wait.h"

#include "../../lib/pressure/monitor.h" /* the destroy case waits for m->direct.dying */

#ifndef KSYNC_ERRORS_MD
#error "the build passes the path of docs/errors.md as KSYNC_ERRORS_MD"
#endif

/* What one case observed. */
struct seen {
	char result[2][32]; /* the two calls' results, as the table writes them */
	int line;           /* the line of the two calls */
};

static void errno_name(char *buf, long v)
{
	static const struct { long v; const char *name; } names[] = {
		{ -EINVAL, "-EINVAL" }, { -EBUSY, "-EBUSY" }, { -ENOENT, "-ENOENT" },
		{ -EDEADLK, "-EDEADLK" }, { -ENOMEM, "-ENOMEM" }, { -ESHUTDOWN, "-ESHUTDOWN" }, { 0, "0" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].v == v) {
			strcpy(buf, names[i].name);
			return;
		}
	snprintf(buf, 32, "%ld", v);
}

/* Make the call twice from one line; NUM for errno/count results, PTR for pointers. */
#define TWICE_NUM(seen, expr)                                                  \
	do {                                                                   \
		for (int k_ = 0; k_ < 2; k_++) { (seen)->line = __LINE__; errno_name((seen)->result[k_], (long)(expr)); } \
	} while (0)
#define TWICE_BOOL(seen, expr)                                                 \
	do {                                                                   \
		for (int k_ = 0; k_ < 2; k_++) { (seen)->line = __LINE__; strcpy((seen)->result[k_], (expr) ? "true" : "false"); } \
	} while (0)
#define TWICE_VOID(seen, expr)                                                 \
	do {                                                                   \
		for (int k_ = 0; k_ < 2; k_++) { (seen)->line = __LINE__; (expr); strcpy((seen)->result[k_], "none"); } \
	} while (0)
#define TWICE_PTR(seen, expr)                                                  \
	do {                                                                   \
		for (int k_ = 0; k_ < 2; k_++) { (seen)->line = __LINE__; strcpy((seen)->result[k_], (expr) ? "non-NULL" : "NULL"); } \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                 */

static struct ksync_shrinker_registry *R;

static struct ksync_shrinker *owned(unsigned flags)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(R, flags, "owned");
	s->count_objects = kt_count_one;
	s->scan_objects = kt_scan_none;
	return s;
}

static struct ksync_shrinker classic(void)
{
	return (struct ksync_shrinker){ .count_objects = kt_count_one, .scan_objects = kt_scan_none };
}

/* A shrinker whose count callback runs a misuse case from inside a callback. */
static struct seen *cb_seen;
static int cb_case;
static struct ksync_shrinker *cb_self;
static struct ksync_memgroup *cb_group;

static unsigned long count_misuse(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)sc;
	switch (cb_case) {
	case 1: TWICE_NUM(cb_seen, ksync_unregister_shrinker(s)); break;
	case 2: TWICE_NUM(cb_seen, ksync_shrinker_free(s)); break;
	case 3: TWICE_NUM(cb_seen, ksync_shrinker_group_destroy(cb_group)); break;
	case 4: TWICE_NUM(cb_seen, ksync_shrink_slab(R, 0, NULL, 0)); break;
	case 5: TWICE_NUM(cb_seen, ksync_synchronize_shrinkers(R)); break;
	case 6: TWICE_NUM(cb_seen, ksync_shrinker_debug_scan(cb_self, NULL, 0, 1)); break;
	case 7: TWICE_NUM(cb_seen, ksync_memgroup_offline(cb_group)); break;
	}
	cb_case = 0;
	return 1;
}

/* Run case @c from inside a callback of a registered shrinker (global walk). */
static void from_callback(struct seen *seen, int c, bool classic_shape)
{
	static struct ksync_shrinker cl;

	cb_seen = seen;
	cb_case = c;
	if (classic_shape) {
		cl = classic();
		cl.count_objects = count_misuse;
		KASSERT(ksync_register_shrinker(R, &cl, "cb") == 0);
		cb_self = &cl;
	} else {
		cb_self = owned(0);
		cb_self->count_objects = count_misuse;
		KASSERT(ksync_shrinker_register(cb_self) == 0);
	}
	cb_group = ksync_shrinker_group_create(R, NULL);
	ksync_shrink_slab(R, 0, NULL, 0);
	KASSERT(cb_case == 0); /* the callback ran the case */
	ksync_shrinker_group_destroy(cb_group);
	if (classic_shape)
		KASSERT(ksync_unregister_shrinker(&cl) == 0);
	else
		KASSERT(ksync_shrinker_free(cb_self) == 0);
}

/* ------------------------------------------------------------------------ */
/* One function per row                                                     */

static void c_reg_create(struct seen *s) { TWICE_PTR(s, ksync_shrinker_registry_create(0)); }

static void c_reg_destroy(struct seen *s)
{
	struct ksync_shrinker_registry *r = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(r, NULL);
	TWICE_NUM(s, ksync_shrinker_registry_destroy(r));
	ksync_shrinker_group_destroy(g);
	KASSERT(ksync_shrinker_registry_destroy(r) == 0);
}

static void c_default_bad(struct seen *s) { TWICE_NUM(s, ksync_shrinker_set_default_nr_nodes(65)); }

static void c_default_exists(struct seen *s)
{
	KASSERT(ksync_shrinker_registry_default() != NULL);
	TWICE_NUM(s, ksync_shrinker_set_default_nr_nodes(1));
}

static void c_alloc_flags(struct seen *s) { TWICE_PTR(s, ksync_shrinker_alloc(R, 1U << 20, "x")); }

static void c_register_twice(struct seen *s)
{
	struct ksync_shrinker *sh = owned(0);
	KASSERT(ksync_shrinker_register(sh) == 0);
	TWICE_NUM(s, ksync_shrinker_register(sh));
	ksync_shrinker_free(sh);
}

static void c_register_nocb(struct seen *s)
{
	struct ksync_shrinker *sh = ksync_shrinker_alloc(R, 0, "nocb");
	TWICE_NUM(s, ksync_shrinker_register(sh));
	ksync_shrinker_free(sh);
}

static void c_register_unprepared(struct seen *s)
{
	struct ksync_shrinker sh = classic();
	TWICE_NUM(s, ksync_shrinker_register(&sh));
}

static void c_prealloc_twice(struct seen *s)
{
	struct ksync_shrinker sh = classic();
	KASSERT(ksync_prealloc_shrinker(R, &sh, "p") == 0);
	TWICE_NUM(s, ksync_prealloc_shrinker(R, &sh, "p"));
	ksync_free_prealloced_shrinker(&sh);
}

static void c_register_classic_nocb(struct seen *s)
{
	struct ksync_shrinker sh = { 0 };
	TWICE_NUM(s, ksync_register_shrinker(R, &sh, "n"));
}

static void c_unreg_never(struct seen *s)
{
	struct ksync_shrinker sh = classic();
	TWICE_NUM(s, ksync_unregister_shrinker(&sh));
}

static void c_unreg_prepared(struct seen *s)
{
	struct ksync_shrinker sh = classic();
	KASSERT(ksync_prealloc_shrinker(R, &sh, "p") == 0);
	TWICE_NUM(s, ksync_unregister_shrinker(&sh));
	ksync_free_prealloced_shrinker(&sh);
}

static void c_unreg_owned(struct seen *s)
{
	struct ksync_shrinker *sh = owned(0);
	KASSERT(ksync_shrinker_register(sh) == 0);
	TWICE_NUM(s, ksync_unregister_shrinker(sh));
	ksync_shrinker_free(sh);
}

static void c_unreg_own_cb(struct seen *s) { from_callback(s, 1, true); }
static void c_free_own_cb(struct seen *s) { from_callback(s, 2, false); }

static void c_free_classic(struct seen *s)
{
	struct ksync_shrinker sh = classic();
	KASSERT(ksync_register_shrinker(R, &sh, "c") == 0);
	TWICE_NUM(s, ksync_shrinker_free(&sh));
	KASSERT(ksync_unregister_shrinker(&sh) == 0);
}

static void c_group_children(struct seen *s)
{
	struct ksync_memgroup *p = ksync_shrinker_group_create(R, NULL);
	struct ksync_memgroup *c = ksync_shrinker_group_create(R, p);
	TWICE_NUM(s, ksync_shrinker_group_destroy(p));
	ksync_shrinker_group_destroy(c);
	ksync_shrinker_group_destroy(p);
}

static void c_group_from_cb(struct seen *s) { from_callback(s, 3, false); }
static void c_mg_offline_from_cb(struct seen *s) { from_callback(s, 7, false); }

/* Inside a read section of the registry's domain, both doors to offline refuse. */
static void offline_in_registry_section(struct seen *s, bool destroy)
{
	struct ksync_memgroup *g = ksync_shrinker_group_create(R, NULL);
	struct ksync_srcu_struct *rs = ksync_shrinker_registry_srcu(R);
	int idx = ksync_srcu_read_lock(rs);
	if (destroy)
		TWICE_NUM(s, ksync_shrinker_group_destroy(g));
	else
		TWICE_NUM(s, ksync_memgroup_offline(g));
	ksync_srcu_read_unlock(rs, idx);
	KASSERT(ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE);
	KASSERT(ksync_shrinker_group_destroy(g) == 0);
}
static void c_group_in_section(struct seen *s) { offline_in_registry_section(s, true); }
static void c_mg_offline_in_section(struct seen *s) { offline_in_registry_section(s, false); }

static void c_bit_past(struct seen *s)
{
	struct ksync_memgroup *g = ksync_shrinker_group_create(R, NULL);
	TWICE_NUM(s, ksync_set_shrinker_bit(g, 0, ksync_shrinker_nr_max(R)));
	ksync_shrinker_group_destroy(g);
}

static void c_bit_nid(struct seen *s)
{
	struct ksync_memgroup *g = ksync_shrinker_group_create(R, NULL);
	TWICE_NUM(s, ksync_set_shrinker_bit(g, 7, 0));
	ksync_shrinker_group_destroy(g);
}

static void c_slab_nid(struct seen *s) { TWICE_NUM(s, ksync_shrink_slab(R, 9, NULL, 0)); }
static void c_slab_cb(struct seen *s) { from_callback(s, 4, false); }
static void c_sync_cb(struct seen *s) { from_callback(s, 5, false); }

static void c_dbg_unreg(struct seen *s)
{
	struct ksync_shrinker sh = classic();
	TWICE_NUM(s, ksync_shrinker_debug_count(&sh, NULL, 0));
}

static void c_dbg_nid(struct seen *s)
{
	struct ksync_shrinker *sh = owned(0);
	KASSERT(ksync_shrinker_register(sh) == 0);
	TWICE_NUM(s, ksync_shrinker_debug_count(sh, NULL, 5));
	ksync_shrinker_free(sh);
}

static void c_dbg_cb(struct seen *s) { from_callback(s, 6, false); }

static int on_online(struct ksync_memgroup *g, int slot, void *priv)
{
	(void)g;
	(void)slot;
	(void)priv;
	return 0;
}

static void c_mg_parent(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	ksync_memgroup_get(p);
	KASSERT(ksync_memgroup_offline(p) == 0);
	TWICE_PTR(s, ksync_memgroup_create(NULL, p));
	ksync_memgroup_put(p);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_twice(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	ksync_memgroup_get(g);
	KASSERT(ksync_memgroup_offline(g) == 0);
	TWICE_NUM(s, ksync_memgroup_offline(g));
	ksync_memgroup_put(g);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_put_online(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	TWICE_VOID(s, ksync_memgroup_put(g));
	KASSERT(ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE);
	KASSERT(ksync_memgroup_offline(g) == 0);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_put_child_ref(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *c = ksync_memgroup_create(NULL, p);
	ksync_memgroup_get(c);
	KASSERT(ksync_memgroup_offline(c) == 0);
	KASSERT(ksync_memgroup_offline(p) == 0); /* p DEAD, kept by c's reference only */
	TWICE_VOID(s, ksync_memgroup_put(p));
	KASSERT(ksync_memgroup_state(p) == KSYNC_MEMGROUP_DEAD);
	ksync_memgroup_put(c);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_stat_total_in_section(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	int idx = ksync_srcu_read_lock(ksync_memgroup_set_srcu(set));
	TWICE_NUM(s, ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_USER0));
	ksync_srcu_read_unlock(ksync_memgroup_set_srcu(set), idx);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

/* A group released while this thread is inside a read section of its set. */
static void released_group(struct seen *s, bool get)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	int idx = ksync_srcu_read_lock(ksync_memgroup_set_srcu(set));
	KASSERT(ksync_memgroup_offline(g) == 0);
	if (get)
		TWICE_VOID(s, ksync_memgroup_get(g));
	else
		TWICE_VOID(s, ksync_memgroup_put(g));
	KASSERT(!ksync_memgroup_tryget(g));
	ksync_srcu_read_unlock(ksync_memgroup_set_srcu(set), idx);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}
static void c_mg_put_released(struct seen *s) { released_group(s, false); }
static void c_mg_get_released(struct seen *s) { released_group(s, true); }

static void c_mg_children(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *c = ksync_memgroup_create(NULL, p);
	TWICE_NUM(s, ksync_memgroup_offline(p));
	KASSERT(ksync_memgroup_offline(c) == 0 && ksync_memgroup_offline(p) == 0);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_client_nohook(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	static const struct ksync_memgroup_client nohook = { .name = "nohook" };
	TWICE_NUM(s, ksync_memgroup_client_register(set, &nohook, NULL));
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_client_groups(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	static const struct ksync_memgroup_client c = { .name = "c", .online = on_online };
	int slot = ksync_memgroup_client_register(set, &c, NULL);
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	TWICE_NUM(s, ksync_memgroup_client_unregister(set, slot));
	KASSERT(ksync_memgroup_offline(g) == 0);
	KASSERT(ksync_memgroup_client_unregister(set, slot) == 0);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_client_twice(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	static const struct ksync_memgroup_client c = { .name = "c", .online = on_online };
	int a = 1, b = 2;
	int slot = ksync_memgroup_client_register(set, &c, &a);
	int other = ksync_memgroup_client_register(set, &c, &b); /* another priv: a client of its own */
	KASSERT(slot >= 0 && other >= 0 && other != slot);
	TWICE_NUM(s, ksync_memgroup_client_register(set, &c, &a));
	KASSERT(ksync_memgroup_client_unregister(set, slot) == 0);
	KASSERT(ksync_memgroup_client_unregister(set, other) == 0);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_mg_client_free_slot(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL); /* -ENOENT comes before -EBUSY */
	TWICE_NUM(s, ksync_memgroup_client_unregister(set, 0));
	KASSERT(ksync_memgroup_offline(g) == 0);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

/* A set with one online group and a bad (nid, item) pair for each stats case. */
static struct ksync_memgroup_set *stat_set;
static struct ksync_memgroup *stat_group;

static void stat_fixture(void)
{
	stat_set = ksync_memgroup_set_create();
	stat_group = ksync_memgroup_create(stat_set, NULL);
	KASSERT(stat_set && stat_group);
}

static void stat_fixture_done(void)
{
	/* Nothing bad landed anywhere: every counter of node 0 is still zero. */
	for (int item = 0; item < KSYNC_MEMGROUP_NR_STATS; item++)
		KASSERT(ksync_memgroup_stat_total(stat_set, 0, item) == 0);
	KASSERT(ksync_memgroup_offline(stat_group) == 0);
	KASSERT(ksync_memgroup_set_destroy(stat_set) == 0);
}

static void c_stat_add(struct seen *s)
{
	stat_fixture();
	TWICE_NUM(s, ksync_memgroup_stat_add(stat_group, ksync_memgroup_set_nr_nodes(stat_set),
					     KSYNC_MEMGROUP_STAT_LRU, 1));
	stat_fixture_done();
}

static void c_stat_add_locked(struct seen *s)
{
	stat_fixture();
	TWICE_NUM(s, ksync_memgroup_stat_add_always_locked(stat_group, 0, -1, 1));
	stat_fixture_done();
}

static void c_stat_read(struct seen *s)
{
	stat_fixture();
	TWICE_NUM(s, ksync_memgroup_stat_read(stat_group, 0, KSYNC_MEMGROUP_NR_STATS));
	stat_fixture_done();
}

static void c_stat_root(struct seen *s)
{
	stat_fixture();
	TWICE_NUM(s, ksync_memgroup_stat_root(stat_set, 1 << 20, 0));
	stat_fixture_done();
}

static void c_stat_total(struct seen *s)
{
	stat_fixture();
	TWICE_NUM(s, ksync_memgroup_stat_total(stat_set, -5, 0));
	stat_fixture_done();
}

static void c_objcg_charge(struct seen *s)
{
	struct ksync_objcg *h;
	stat_fixture();
	h = ksync_memgroup_get_objcg(stat_group);
	KASSERT(h);
	TWICE_NUM(s, ksync_objcg_charge(h, ksync_memgroup_set_nr_nodes(stat_set), 1, 64));
	ksync_objcg_put(h);
	stat_fixture_done();
}

static void c_mg_set_busy(struct seen *s)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	TWICE_NUM(s, ksync_memgroup_set_destroy(set));
	KASSERT(ksync_memgroup_offline(g) == 0);
	KASSERT(ksync_memgroup_set_destroy(set) == 0);
}

static void c_lru_add_nid(struct seen *s)
{
	struct ksync_list_lru lru;
	struct ksync_list_lru_item item;
	ksync_list_lru_item_init(&item);
	KASSERT(ksync_list_lru_init(&lru, NULL, 1, NULL) == 0);
	TWICE_BOOL(s, ksync_list_lru_add(&lru, &item, 3, NULL));
	KASSERT(ksync_list_lru_destroy(&lru) == 0);
}

static void c_lru_add_foreign(struct seen *s)
{
	struct ksync_memgroup_set *mine = ksync_memgroup_set_create(), *other = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(other, NULL);
	struct ksync_list_lru lru;
	struct ksync_list_lru_item item;
	ksync_list_lru_item_init(&item);
	KASSERT(ksync_list_lru_init(&lru, mine, 1, NULL) == 0);
	TWICE_BOOL(s, ksync_list_lru_add(&lru, &item, 0, g));
	KASSERT(ksync_list_lru_destroy(&lru) == 0);
	KASSERT(ksync_memgroup_offline(g) == 0);
	KASSERT(ksync_memgroup_set_destroy(mine) == 0 && ksync_memgroup_set_destroy(other) == 0);
}

static void c_lru_count_nid(struct seen *s)
{
	struct ksync_list_lru lru;
	KASSERT(ksync_list_lru_init(&lru, NULL, 2, NULL) == 0);
	TWICE_NUM(s, ksync_list_lru_count_one(&lru, 2, NULL));
	KASSERT(ksync_list_lru_destroy(&lru) == 0);
}

static void c_lru_destroy_items(struct seen *s)
{
	struct ksync_list_lru lru;
	struct ksync_list_lru_item item;
	ksync_list_lru_item_init(&item);
	KASSERT(ksync_list_lru_init(&lru, NULL, 1, NULL) == 0);
	KASSERT(ksync_list_lru_add(&lru, &item, 0, NULL));
	TWICE_NUM(s, ksync_list_lru_destroy(&lru));
	KASSERT(ksync_list_lru_del_obj(&lru, &item));
	KASSERT(ksync_list_lru_destroy(&lru) == 0);
}

/* The pressure monitor: a monitor of the test source on R, run in fd mode. */
static struct ksync_pressure *test_monitor(void)
{
	struct ksync_pressure_config cfg = { .sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST), .reg = R };
	struct ksync_pressure *p = NULL;
	KASSERT(ksync_pressure_create(&cfg, &p) == 0);
	return p;
}

/* A bad config, made twice from the case's own line (one report per line). */
#define BAD_CONFIG(s, ...)                                                     \
	do {                                                                   \
		struct ksync_pressure_config cfg_ = __VA_ARGS__;               \
		struct ksync_pressure *p_ = NULL;                              \
		if (!cfg_.reg)                                                 \
			cfg_.reg = R;                                          \
		TWICE_NUM(s, ksync_pressure_create(&cfg_, &p_));               \
		KASSERT(p_ == NULL);                                           \
	} while (0)

static const struct ksync_pressure_trigger long_stall = { .stall_us = 3000000, .window_us = 2000000 };

static void c_pr_bits(struct seen *s) { BAD_CONFIG(s, { .sources = 1u << 20 }); }
static void c_pr_budget(struct seen *s) { BAD_CONFIG(s, { .sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_BUDGET) }); }
static void c_pr_prio(struct seen *s) { BAD_CONFIG(s, { .priority = { [KSYNC_PRESSURE_LOW] = 13 } }); }
static void c_pr_floor(struct seen *s) { BAD_CONFIG(s, { .priority = { [2] = 5 }, .floor = { [2] = 6 } }); }
static void c_pr_floor_range(struct seen *s) { BAD_CONFIG(s, { .priority = { [2] = 5 }, .floor = { [2] = -1 } }); }
static void c_pr_trigger(struct seen *s) { BAD_CONFIG(s, { .trigger = { [KSYNC_PRESSURE_LOW] = long_stall } }); }
static void c_pr_group(struct seen *s)
{
	struct ksync_shrinker_registry *other = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(other, NULL);
	BAD_CONFIG(s, { .group = g });
	KASSERT(ksync_shrinker_group_destroy(g) == 0);
	KASSERT(ksync_shrinker_registry_destroy(other) == 0);
}

/* A user callback of the monitor running a case (its own monitor's calls). */
static struct seen *pcb_seen;
static int pcb_case;

static void pressure_cb(struct ksync_pressure *p, enum ksync_pressure_level level, void *arg)
{
	(void)level;
	(void)arg;
	switch (pcb_case) {
	case 1: TWICE_NUM(pcb_seen, ksync_pressure_destroy(p)); break;
	case 2: TWICE_NUM(pcb_seen, ksync_pressure_stop(p)); break;
	case 3: TWICE_NUM(pcb_seen, ksync_pressure_dispatch(p)); break;
	}
	pcb_case = 0;
}

static void from_pressure_cb(struct seen *s, int c)
{
	struct ksync_pressure *p = test_monitor();
	KASSERT(ksync_pressure_on_level(p, KSYNC_PRESSURE_LOW, pressure_cb, NULL) == 0);
	pcb_seen = s;
	pcb_case = c;
	KASSERT(ksync_pressure_inject(p, KSYNC_PRESSURE_LOW) == 0);
	KASSERT(ksync_pressure_dispatch(p) == 1);
	KASSERT(pcb_case == 0); /* the callback ran the case */
	KASSERT(ksync_pressure_destroy(p) == 0);
}
static void c_pr_destroy_cb(struct seen *s) { from_pressure_cb(s, 1); }
static void c_pr_stop_cb(struct seen *s) { from_pressure_cb(s, 2); }
static void c_pr_dispatch_cb(struct seen *s) { from_pressure_cb(s, 3); }

/* Case @c with the helper thread running. */
static void with_thread(struct seen *s, int c)
{
	struct ksync_pressure *p = test_monitor();
	KASSERT(ksync_pressure_start(p) == 0);
	switch (c) {
	case 1: TWICE_NUM(s, ksync_pressure_start(p)); break;
	case 2: TWICE_NUM(s, ksync_pressure_fd(p)); break;
	case 3: TWICE_NUM(s, ksync_pressure_dispatch(p)); break;
	}
	KASSERT(ksync_pressure_stop(p) == 0);
	KASSERT(ksync_pressure_destroy(p) == 0);
}
static void c_pr_start_twice(struct seen *s) { with_thread(s, 1); }
static void c_pr_fd_thread(struct seen *s) { with_thread(s, 2); }
static void c_pr_dispatch_thread(struct seen *s) { with_thread(s, 3); }

static void c_pr_start_fd(struct seen *s)
{
	struct ksync_pressure *p = test_monitor();
	KASSERT(ksync_pressure_fd(p) >= 0);
	TWICE_NUM(s, ksync_pressure_start(p));
	KASSERT(ksync_pressure_destroy(p) == 0);
}

static void c_pr_stop_idle(struct seen *s)
{
	struct ksync_pressure *p = test_monitor();
	TWICE_NUM(s, ksync_pressure_stop(p));
	KASSERT(ksync_pressure_destroy(p) == 0);
}

static void c_pr_on_level(struct seen *s)
{
	struct ksync_pressure *p = test_monitor();
	TWICE_NUM(s, ksync_pressure_on_level(p, KSYNC_PRESSURE_NONE, pressure_cb, NULL));
	KASSERT(ksync_pressure_destroy(p) == 0);
}

static void c_pr_inject_nosrc(struct seen *s)
{
	struct ksync_pressure_config cfg = { .sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_MEMINFO),
					     .reg = R, .root = "/nonexistent" };
	struct ksync_pressure *p = NULL;
	KASSERT(ksync_pressure_create(&cfg, &p) == 0);
	TWICE_NUM(s, ksync_pressure_inject(p, KSYNC_PRESSURE_LOW));
	KASSERT(ksync_pressure_destroy(p) == 0);
}

static void c_pr_inject_level(struct seen *s)
{
	struct ksync_pressure *p = test_monitor();
	TWICE_NUM(s, ksync_pressure_inject(p, (enum ksync_pressure_level)4));
	KASSERT(ksync_pressure_dispatch(p) == 0); /* nothing was counted */
	KASSERT(ksync_pressure_destroy(p) == 0);
}

/* Direct reclaim (ksync_pressure_charge()). */
static void c_pr_direct_permille(struct seen *s) { BAD_CONFIG(s, { .direct_permille = 1001 }); }
static void c_pr_charge_null(struct seen *s) { TWICE_NUM(s, ksync_pressure_charge(NULL, 1)); }

/* A shrinker that holds the direct round of the thread in it until released. */
static int dr_in, dr_release;
static unsigned long dr_count(struct ksync_shrinker *sh, struct ksync_shrink_control *sc)
{
	(void)sh;
	(void)sc;
	return 1024;
}
static unsigned long dr_scan(struct ksync_shrinker *sh, struct ksync_shrink_control *sc)
{
	(void)sh;
	__atomic_store_n(&dr_in, 1, __ATOMIC_RELEASE);
	KT_POLL_UNTIL(__atomic_load_n(&dr_release, __ATOMIC_ACQUIRE));
	return sc->nr_to_scan;
}
static void *dr_charge(void *p)
{
	/* The budget of 1 byte is far below the resident set: a direct round, held in dr_scan. */
	KASSERT(ksync_pressure_charge((struct ksync_pressure *)p, 1 << 20) & KSYNC_PRESSURE_CHARGE_RECLAIMED);
	return NULL;
}
static void *dr_destroy(void *p)
{
	KASSERT(ksync_pressure_destroy((struct ksync_pressure *)p) == 0);
	return NULL;
}
static void c_pr_charge_dying(struct seen *s)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_shrinker *sh = ksync_shrinker_alloc(reg, 0, "held");
	struct ksync_pressure_config cfg = { .sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_BUDGET),
					     .budget_bytes = 1, .reg = reg };
	struct ksync_pressure *p = NULL;
	pthread_t a, d;

	KASSERT(sh);
	sh->count_objects = dr_count;
	sh->scan_objects = dr_scan;
	KASSERT(ksync_shrinker_register(sh) == 0);
	KASSERT(ksync_pressure_create(&cfg, &p) == 0);
	dr_in = dr_release = 0;
	KASSERT(pthread_create(&a, NULL, dr_charge, p) == 0);
	KT_POLL_UNTIL(__atomic_load_n(&dr_in, __ATOMIC_ACQUIRE)); /* a thread is inside */
	KASSERT(pthread_create(&d, NULL, dr_destroy, p) == 0);
	KT_POLL_UNTIL(kt_direct_dying(p));                        /* destroy began and waits for it */
	TWICE_NUM(s, ksync_pressure_charge(p, 1 << 20));
	__atomic_store_n(&dr_release, 1, __ATOMIC_RELEASE);
	KASSERT(pthread_join(a, NULL) == 0);
	KASSERT(pthread_join(d, NULL) == 0);
	KASSERT(ksync_shrinker_free(sh) == 0);
	KASSERT(ksync_shrinker_registry_destroy(reg) == 0);
}

/* A shrinker that destroys the monitor from inside the direct round that called it. */
static struct seen *drd_seen;
static struct ksync_pressure *drd_p;
static int drd_done;
static unsigned long drd_scan(struct ksync_shrinker *sh, struct ksync_shrink_control *sc)
{
	(void)sh;
	if (!drd_done) {
		drd_done = 1;
		TWICE_NUM(drd_seen, ksync_pressure_destroy(drd_p));
	}
	return sc->nr_to_scan;
}
static void c_pr_destroy_in_direct(struct seen *s)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_shrinker *sh = ksync_shrinker_alloc(reg, 0, "destroyer");
	struct ksync_pressure_config cfg = { .sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_BUDGET),
					     .budget_bytes = 1, .reg = reg };
	struct ksync_pressure *p = NULL;

	KASSERT(sh);
	sh->count_objects = dr_count;
	sh->scan_objects = drd_scan;
	KASSERT(ksync_shrinker_register(sh) == 0);
	KASSERT(ksync_pressure_create(&cfg, &p) == 0);
	drd_seen = s;
	drd_p = p;
	drd_done = 0;
	/* The budget of 1 byte is far below the resident set: a direct round on this thread. */
	KASSERT(ksync_pressure_charge(p, 1 << 20) & KSYNC_PRESSURE_CHARGE_RECLAIMED);
	KASSERT(drd_done);
	KASSERT(ksync_pressure_destroy(p) == 0); /* refused inside, it works outside */
	KASSERT(ksync_shrinker_free(sh) == 0);
	KASSERT(ksync_shrinker_registry_destroy(reg) == 0);
}

/* Object caches (lib/objcache). */
static void c_oc_size(struct seen *s) { TWICE_PTR(s, ksync_objcache_create("e", 0, 0, 0, NULL)); }
static void c_oc_align(struct seen *s) { TWICE_PTR(s, ksync_objcache_create("e", 8, 24, 0, NULL)); }
static void c_oc_flags(struct seen *s) { TWICE_PTR(s, ksync_objcache_create("e", 8, 0, 1U << 20, NULL)); }
static void c_oc_mag(struct seen *s)
{
	struct ksync_objcache_config cfg = { .magazine_size = KSYNC_OBJCACHE_MAGAZINE_MAX + 1 };
	TWICE_PTR(s, ksync_objcache_create_config("e", 8, 0, 0, NULL, &cfg));
}
static void c_oc_design(struct seen *s)
{
	struct ksync_objcache_config cfg = { .design = (enum ksync_objcache_design)7 };
	TWICE_PTR(s, ksync_objcache_create_config("e", 8, 0, 0, NULL, &cfg));
}
static void c_oc_alloc_destroyed(struct seen *s)
{
	struct ksync_objcache *c = ksync_objcache_create("e", 8, 0, 0, NULL);
	KASSERT(c && ksync_objcache_destroy(c) == 0);
	TWICE_PTR(s, ksync_objcache_alloc(c));
}
static void c_oc_alloc_foreign(struct seen *s)
{
	struct ksync_memgroup_set *mine = ksync_memgroup_set_create(), *other = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(other, NULL);
	struct ksync_objcache_config cfg = { .groups = mine };
	struct ksync_objcache *c = ksync_objcache_create_config("e", 8, 0, KSYNC_OBJCACHE_ACCOUNT, NULL, &cfg);
	KASSERT(c && g);
	TWICE_PTR(s, ksync_objcache_alloc_group(c, g));
	KASSERT(ksync_objcache_destroy(c) == 0);
	KASSERT(ksync_memgroup_offline(g) == 0);
	KASSERT(ksync_memgroup_set_destroy(mine) == 0 && ksync_memgroup_set_destroy(other) == 0);
}
static void c_oc_double_free(struct seen *s)
{
	struct ksync_objcache *c = ksync_objcache_create("e", 8, 0, 0, NULL);
	void *o = ksync_objcache_alloc(c);
	KASSERT(o);
	ksync_objcache_free(c, o);
	TWICE_VOID(s, ksync_objcache_free(c, o));
	KASSERT(ksync_objcache_destroy(c) == 0);
}
static void c_oc_free_wrong(struct seen *s)
{
	struct ksync_objcache *a = ksync_objcache_create("e", 8, 0, 0, NULL), *b = ksync_objcache_create("f", 8, 0, 0, NULL);
	void *o = ksync_objcache_alloc(a);
	KASSERT(o && b);
	TWICE_VOID(s, ksync_objcache_free(b, o));
	ksync_objcache_free(a, o);
	KASSERT(ksync_objcache_destroy(a) == 0 && ksync_objcache_destroy(b) == 0);
}
static void c_oc_free_inside(struct seen *s)
{
	struct ksync_objcache *c = ksync_objcache_create("e", 16, 0, 0, NULL);
	char *o = ksync_objcache_alloc(c);
	KASSERT(o);
	TWICE_VOID(s, ksync_objcache_free(c, o + 1));
	ksync_objcache_free(c, o);
	KASSERT(ksync_objcache_destroy(c) == 0);
}
static void c_oc_free_foreign(struct seen *s)
{
	struct ksync_objcache *c = ksync_objcache_create("e", 16, 0, 0, NULL);
	char *block = aligned_alloc(KSYNC_OBJCACHE_SLAB_SIZE, KSYNC_OBJCACHE_SLAB_SIZE);
	KASSERT(c && block);
	memset(block, 0, KSYNC_OBJCACHE_SLAB_SIZE);
	TWICE_VOID(s, ksync_objcache_free(c, block + 256));
	free(block);
	KASSERT(ksync_objcache_destroy(c) == 0);
}
static void c_oc_destroy_live(struct seen *s)
{
	struct ksync_objcache *c = ksync_objcache_create("e", 16, 0, 0, NULL);
	void *o = ksync_objcache_alloc(c);
	KASSERT(o);
	TWICE_NUM(s, ksync_objcache_destroy(c));
	ksync_objcache_free(c, o);
	KASSERT(ksync_objcache_destroy(c) == 0);
}
static void c_oc_destroy_twice(struct seen *s)
{
	struct ksync_objcache *c = ksync_objcache_create("e", 16, 0, 0, NULL);
	KASSERT(c && ksync_objcache_destroy(c) == 0);
	TWICE_NUM(s, ksync_objcache_destroy(c));
}
static void c_oc_stock_slots(struct seen *s) { TWICE_NUM(s, ksync_objcache_set_stock_slots(6)); }

/* Workingset detection (lib/workingset). */
struct wsfx {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
};
static void wsfx_init(struct wsfx *f)
{
	f->reg = ksync_shrinker_registry_create(2);
	KASSERT(f->reg);
	f->ws = ksync_workingset_create(f->reg, 0);
	KASSERT(f->ws);
}
static void wsfx_fini(struct wsfx *f)
{
	KASSERT(ksync_workingset_destroy(f->ws) == 0);
	KASSERT(ksync_shrinker_registry_destroy(f->reg) == 0);
}
static void c_ws_create_null(struct seen *s) { TWICE_PTR(s, ksync_workingset_create(NULL, 0)); }
static void c_ws_destroy_lru(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_MGLRU);
	KASSERT(lru);
	TWICE_NUM(s, ksync_workingset_destroy(f.ws));
	KASSERT(ksync_lru_destroy(lru) == 0);
	wsfx_fini(&f);
}
static void c_ws_destroy_groups(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	struct ksync_memgroup *g = ksync_shrinker_group_create(f.reg, NULL);
	TWICE_NUM(s, ksync_workingset_destroy(f.ws));
	KASSERT(ksync_shrinker_group_destroy(g) == 0);
	wsfx_fini(&f);
}
static void c_ws_evict_nid(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	TWICE_NUM(s, ksync_workingset_eviction(f.ws, NULL, 2));
	wsfx_fini(&f);
}
static void c_ws_evict_foreign(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	struct ksync_shrinker_registry *other = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(other, NULL);
	TWICE_NUM(s, ksync_workingset_eviction(f.ws, g, 0));
	KASSERT(ksync_shrinker_group_destroy(g) == 0 && ksync_shrinker_registry_destroy(other) == 0);
	wsfx_fini(&f);
}
static void c_ws_activation_nid(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	TWICE_NUM(s, ksync_workingset_activation(f.ws, NULL, -1));
	wsfx_fini(&f);
}
static void c_ws_refault_token(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	TWICE_BOOL(s, ksync_workingset_refault(f.ws, 2UL, NULL));
	wsfx_fini(&f);
}
static void c_ws_store_token(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	TWICE_NUM(s, ksync_workingset_shadow_store(f.ws, 1, 0));
	wsfx_fini(&f);
}
static void c_ws_take_null(struct seen *s) { TWICE_NUM(s, ksync_workingset_shadow_take(NULL, 1)); }
static void c_ws_budget_nid(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	TWICE_NUM(s, ksync_workingset_shadow_budget(f.ws, NULL, 9));
	wsfx_fini(&f);
}
static void c_wlru_flavour(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	TWICE_PTR(s, ksync_lru_create(f.ws, (enum ksync_lru_flavour)7));
	wsfx_fini(&f);
}
static void c_wlru_add_twice(struct seen *s)
{
	struct wsfx f;
	struct ksync_lru_item it;
	wsfx_init(&f);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_LRU_CLASSIC);
	ksync_lru_item_init(&it);
	KASSERT(ksync_lru_add(lru, &it, NULL, 0, false) == 0);
	TWICE_NUM(s, ksync_lru_add(lru, &it, NULL, 0, false));
	KASSERT(ksync_lru_del(lru, &it));
	KASSERT(ksync_lru_destroy(lru) == 0);
	wsfx_fini(&f);
}
static void c_wlru_add_nid(struct seen *s)
{
	struct wsfx f;
	struct ksync_lru_item it;
	wsfx_init(&f);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_MGLRU);
	ksync_lru_item_init(&it);
	TWICE_NUM(s, ksync_lru_add(lru, &it, NULL, 5, false));
	KASSERT(ksync_lru_destroy(lru) == 0);
	wsfx_fini(&f);
}
static void ws_noop_evicted(struct ksync_lru_item *item, unsigned long token, void *arg)
{
	(void)item, (void)token, (void)arg;
}
static void c_wlru_evict_nid(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_MGLRU);
	TWICE_NUM(s, ksync_lru_evict(lru, NULL, 2, 1, ws_noop_evicted, NULL));
	KASSERT(ksync_lru_destroy(lru) == 0);
	wsfx_fini(&f);
}
static void c_wlru_destroy_items(struct seen *s)
{
	struct wsfx f;
	struct ksync_lru_item it;
	wsfx_init(&f);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_MGLRU);
	ksync_lru_item_init(&it);
	KASSERT(ksync_lru_add(lru, &it, NULL, 0, true) == 0);
	TWICE_NUM(s, ksync_lru_destroy(lru));
	KASSERT(ksync_lru_del(lru, &it));
	KASSERT(ksync_lru_destroy(lru) == 0);
	wsfx_fini(&f);
}
static void c_wlru_size_foreign(struct seen *s)
{
	struct wsfx f;
	wsfx_init(&f);
	struct ksync_lru *lru = ksync_lru_create(f.ws, KSYNC_LRU_CLASSIC);
	struct ksync_shrinker_registry *other = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(other, NULL);
	TWICE_NUM(s, ksync_lru_size(lru, g, 0));
	KASSERT(ksync_shrinker_group_destroy(g) == 0 && ksync_shrinker_registry_destroy(other) == 0);
	KASSERT(ksync_lru_destroy(lru) == 0);
	wsfx_fini(&f);
}

static const struct row_case {
	const char *call, *condition;
	void (*run)(struct seen *);
	int late; /* runs after the others (creates the default registry) */
	int used;
} cases[] = {
	{ "ksync_shrinker_registry_create", "nr_nodes outside 1..64", c_reg_create, 0, 0 },
	{ "ksync_shrinker_registry_destroy", "shrinkers or groups remain", c_reg_destroy, 0, 0 },
	{ "ksync_shrinker_set_default_nr_nodes", "nr_nodes outside 1..64", c_default_bad, 0, 0 },
	{ "ksync_shrinker_set_default_nr_nodes", "the default registry exists", c_default_exists, 1, 0 },
	{ "ksync_shrinker_alloc", "unknown flags", c_alloc_flags, 0, 0 },
	{ "ksync_shrinker_register", "already registered", c_register_twice, 0, 0 },
	{ "ksync_shrinker_register", "count_objects or scan_objects missing", c_register_nocb, 0, 0 },
	{ "ksync_shrinker_register", "not allocated or prepared", c_register_unprepared, 0, 0 },
	{ "ksync_prealloc_shrinker", "already prepared", c_prealloc_twice, 0, 0 },
	{ "ksync_register_shrinker", "count_objects or scan_objects missing", c_register_classic_nocb, 0, 0 },
	{ "ksync_unregister_shrinker", "never registered", c_unreg_never, 0, 0 },
	{ "ksync_unregister_shrinker", "prepared but not registered", c_unreg_prepared, 0, 0 },
	{ "ksync_unregister_shrinker", "a shrinker from ksync_shrinker_alloc", c_unreg_owned, 0, 0 },
	{ "ksync_unregister_shrinker", "from its own callback", c_unreg_own_cb, 0, 0 },
	{ "ksync_shrinker_free", "a caller-owned (classic) shrinker", c_free_classic, 0, 0 },
	{ "ksync_shrinker_free", "from its own callback", c_free_own_cb, 0, 0 },
	{ "ksync_shrinker_group_destroy", "the group has children", c_group_children, 0, 0 },
	{ "ksync_shrinker_group_destroy", "from a callback", c_group_from_cb, 0, 0 },
	{ "ksync_shrinker_group_destroy", "inside a read section of the registry's domain", c_group_in_section, 0, 0 },
	{ "ksync_set_shrinker_bit", "id at or past the map", c_bit_past, 0, 0 },
	{ "ksync_set_shrinker_bit", "bad nid", c_bit_nid, 0, 0 },
	{ "ksync_shrink_slab", "bad nid", c_slab_nid, 0, 0 },
	{ "ksync_shrink_slab", "from a callback", c_slab_cb, 0, 0 },
	{ "ksync_synchronize_shrinkers", "from a callback", c_sync_cb, 0, 0 },
	{ "ksync_shrinker_debug_count", "not registered", c_dbg_unreg, 0, 0 },
	{ "ksync_shrinker_debug_count", "bad nid", c_dbg_nid, 0, 0 },
	{ "ksync_shrinker_debug_scan", "from a callback", c_dbg_cb, 0, 0 },
	{ "ksync_memgroup_create", "the parent is not online", c_mg_parent, 0, 0 },
	{ "ksync_memgroup_offline", "not online (offline twice)", c_mg_twice, 0, 0 },
	{ "ksync_memgroup_offline", "online children", c_mg_children, 0, 0 },
	{ "ksync_memgroup_offline", "from a shrinker callback", c_mg_offline_from_cb, 0, 0 },
	{ "ksync_memgroup_offline", "inside a read section of the registry's domain", c_mg_offline_in_section, 0, 0 },
	{ "ksync_memgroup_put", "no reference left but the creator's (online or dying)", c_mg_put_online, 0, 0 },
	{ "ksync_memgroup_put", "the group is already released", c_mg_put_released, 0, 0 },
	{ "ksync_memgroup_put", "no reference left but its children's (a parent nobody took a reference on)", c_mg_put_child_ref, 0, 0 },
	{ "ksync_memgroup_get", "the group is already released", c_mg_get_released, 0, 0 },
	{ "ksync_memgroup_client_register", "no online hook", c_mg_client_nohook, 0, 0 },
	{ "ksync_memgroup_client_register", "the same client and priv already registered", c_mg_client_twice, 0, 0 },
	{ "ksync_memgroup_client_unregister", "groups remain", c_mg_client_groups, 0, 0 },
	{ "ksync_memgroup_client_unregister", "a free slot", c_mg_client_free_slot, 0, 0 },
	{ "ksync_memgroup_stat_add", "nid or item out of range", c_stat_add, 0, 0 },
	{ "ksync_memgroup_stat_add_always_locked", "nid or item out of range", c_stat_add_locked, 0, 0 },
	{ "ksync_memgroup_stat_read", "nid or item out of range", c_stat_read, 0, 0 },
	{ "ksync_memgroup_stat_root", "nid or item out of range", c_stat_root, 0, 0 },
	{ "ksync_memgroup_stat_total", "nid or item out of range", c_stat_total, 0, 0 },
	{ "ksync_memgroup_stat_total", "inside a read section of the set's domain", c_stat_total_in_section, 0, 0 },
	{ "ksync_objcg_charge", "nid out of range", c_objcg_charge, 0, 0 },
	{ "ksync_memgroup_set_destroy", "groups or clients remain", c_mg_set_busy, 0, 0 },
	{ "ksync_list_lru_add", "bad nid", c_lru_add_nid, 0, 0 },
	{ "ksync_list_lru_add", "a group of another set", c_lru_add_foreign, 0, 0 },
	{ "ksync_list_lru_count_one", "bad nid", c_lru_count_nid, 0, 0 },
	{ "ksync_list_lru_destroy", "items remain on the lists", c_lru_destroy_items, 0, 0 },
	{ "ksync_pressure_create", "unknown source bits", c_pr_bits, 0, 0 },
	{ "ksync_pressure_create", "SRC_BUDGET without budget_bytes", c_pr_budget, 0, 0 },
	{ "ksync_pressure_create", "a priority outside 0..12", c_pr_prio, 0, 0 },
	{ "ksync_pressure_create", "a floor above its priority", c_pr_floor, 0, 0 },
	{ "ksync_pressure_create", "a floor outside 0..12", c_pr_floor_range, 0, 0 },
	{ "ksync_pressure_create", "a trigger whose stall is longer than its window", c_pr_trigger, 0, 0 },
	{ "ksync_pressure_create", "a group of another set than the registry's", c_pr_group, 0, 0 },
	{ "ksync_pressure_destroy", "from the monitor's own callback", c_pr_destroy_cb, 0, 0 },
	{ "ksync_pressure_destroy", "from a shrinker inside a direct round of the monitor", c_pr_destroy_in_direct, 0, 0 },
	{ "ksync_pressure_start", "its helper thread runs already", c_pr_start_twice, 0, 0 },
	{ "ksync_pressure_start", "the fd mode is in use (ksync_pressure_fd or _dispatch called)", c_pr_start_fd, 0, 0 },
	{ "ksync_pressure_stop", "the helper thread does not run", c_pr_stop_idle, 0, 0 },
	{ "ksync_pressure_stop", "from the monitor's own callback", c_pr_stop_cb, 0, 0 },
	{ "ksync_pressure_fd", "the helper thread runs", c_pr_fd_thread, 0, 0 },
	{ "ksync_pressure_dispatch", "the helper thread runs", c_pr_dispatch_thread, 0, 0 },
	{ "ksync_pressure_dispatch", "from the monitor's own callback", c_pr_dispatch_cb, 0, 0 },
	{ "ksync_pressure_on_level", "a level outside LOW..CRITICAL", c_pr_on_level, 0, 0 },
	{ "ksync_pressure_inject", "the monitor has no test source", c_pr_inject_nosrc, 0, 0 },
	{ "ksync_pressure_inject", "a level outside LOW..CRITICAL", c_pr_inject_level, 0, 0 },
	{ "ksync_pressure_create", "a direct_permille above 1000", c_pr_direct_permille, 0, 0 },
	{ "ksync_pressure_charge", "a NULL monitor", c_pr_charge_null, 0, 0 },
	{ "ksync_pressure_charge", "over the watermark after ksync_pressure_destroy began", c_pr_charge_dying, 0, 0 },
	{ "ksync_objcache_create", "size 0 or above KSYNC_OBJCACHE_MAX_SIZE", c_oc_size, 0, 0 },
	{ "ksync_objcache_create", "an alignment not a power of two, or above KSYNC_OBJCACHE_MAX_ALIGN", c_oc_align, 0, 0 },
	{ "ksync_objcache_create", "unknown flags", c_oc_flags, 0, 0 },
	{ "ksync_objcache_create_config", "a magazine size above KSYNC_OBJCACHE_MAGAZINE_MAX", c_oc_mag, 0, 0 },
	{ "ksync_objcache_create_config", "an unknown design", c_oc_design, 0, 0 },
	{ "ksync_objcache_alloc", "a destroyed cache", c_oc_alloc_destroyed, 1, 0 },
	{ "ksync_objcache_alloc_group", "a group of another set", c_oc_alloc_foreign, 1, 0 },
	{ "ksync_objcache_free", "a double free", c_oc_double_free, 1, 0 },
	{ "ksync_objcache_free", "an object of another cache", c_oc_free_wrong, 1, 0 },
	{ "ksync_objcache_free", "not the start of an object", c_oc_free_inside, 1, 0 },
	{ "ksync_objcache_free", "a pointer no cache gave out (its 64 KiB block mapped)", c_oc_free_foreign, 1, 0 },
	{ "ksync_objcache_destroy", "live objects in the cache or a child (the cache is leaked, kept usable)", c_oc_destroy_live, 1, 0 },
	{ "ksync_objcache_destroy", "a cache destroyed already", c_oc_destroy_twice, 1, 0 },
	{ "ksync_objcache_set_stock_slots", "a count outside 1..5", c_oc_stock_slots, 0, 0 },
	{ "ksync_workingset_create", "a NULL registry", c_ws_create_null, 0, 0 },
	{ "ksync_workingset_destroy", "an LRU still uses the workingset", c_ws_destroy_lru, 0, 0 },
	{ "ksync_workingset_destroy", "the set still has groups", c_ws_destroy_groups, 0, 0 },
	{ "ksync_workingset_eviction", "bad nid", c_ws_evict_nid, 0, 0 },
	{ "ksync_workingset_eviction", "a group of another set", c_ws_evict_foreign, 0, 0 },
	{ "ksync_workingset_activation", "bad nid", c_ws_activation_nid, 0, 0 },
	{ "ksync_workingset_refault", "a malformed token (0, tag bit clear, node out of range)", c_ws_refault_token, 0, 0 },
	{ "ksync_workingset_shadow_store", "a malformed token", c_ws_store_token, 0, 0 },
	{ "ksync_workingset_shadow_take", "a NULL workingset", c_ws_take_null, 0, 0 },
	{ "ksync_workingset_shadow_budget", "bad nid", c_ws_budget_nid, 0, 0 },
	{ "ksync_lru_create", "an unknown flavour", c_wlru_flavour, 0, 0 },
	{ "ksync_lru_add", "the item is on an LRU already", c_wlru_add_twice, 0, 0 },
	{ "ksync_lru_add", "bad nid", c_wlru_add_nid, 0, 0 },
	{ "ksync_lru_evict", "bad nid", c_wlru_evict_nid, 0, 0 },
	{ "ksync_lru_destroy", "items remain on the LRU", c_wlru_destroy_items, 0, 0 },
	{ "ksync_lru_size", "a group of another set", c_wlru_size_foreign, 0, 0 },
};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

struct row {
	char call[96], condition[128], result[32];
	int reported;
};

/* "| `call` | condition | result | yes/no |" -> @r; false for other lines. */
static bool parse_row(const char *line, struct row *r)
{
	char rep[16];

	if (strncmp(line, "| `ksync_", 9) != 0)
		return false;
	if (sscanf(line, "| `%95[^`]` | %127[^|]| %31[^ |] | %15[^ |] |", r->call, r->condition,
		   r->result, rep) != 4)
		return false;
	size_t n = strlen(r->condition);
	while (n && r->condition[n - 1] == ' ')
		r->condition[--n] = '\0';
	r->reported = strcmp(rep, "yes") == 0;
	return strcmp(rep, "yes") == 0 || strcmp(rep, "no") == 0;
}

static void run_row(const struct row *r, const struct row_case *c)
{
	struct seen seen = { .line = 0 };
	int before = reports;

	report_file = NULL;
	c->run(&seen);
	int n = reports - before;
	bool ok = strcmp(seen.result[0], r->result) == 0 && strcmp(seen.result[1], r->result) == 0 &&
		  n == (r->reported ? 1 : 0) &&
		  (!r->reported || (report_file && strcmp(report_file, __FILE__) == 0 &&
				    report_line == seen.line));
	if (!ok)
		fprintf(stderr, "row `%s` / %s: results %s, %s (table: %s); %d report(s)%s%s:%d "
			"(table: %s, at line %d)\n", r->call, r->condition, seen.result[0],
			seen.result[1], r->result, n, report_file ? " at " : "",
			report_file ? report_file : "", report_line,
			r->reported ? "one" : "none", seen.line);
	KCHECK(ok);
}

KTEST(misuse_table_of_docs)
{
	FILE *f = fopen(KSYNC_ERRORS_MD, "r");
	struct row rows[160];
	int nrows = 0, used[NR_CASES] = { 0 };
	char line[512];

	KCHECK(f != NULL);
	if (!f)
		return;
	bool in_table = false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "## ", 3) == 0)
			in_table = strncmp(line, "## Misuse table", 15) == 0;
		if (in_table && nrows < 160 && parse_row(line, &rows[nrows]))
			nrows++;
	}
	fclose(f);
	KCHECK(nrows >= 30);
	R = ksync_shrinker_registry_create(1);
	ksync_warn_hook = kt_record_report;
	for (int late = 0; late < 2; late++) {
		for (int i = 0; i < nrows; i++) {
			size_t k;
			for (k = 0; k < NR_CASES; k++)
				if (!strcmp(cases[k].call, rows[i].call) &&
				    !strcmp(cases[k].condition, rows[i].condition))
					break;
			if (k == NR_CASES) {
				if (!late) {
					fprintf(stderr, "row `%s` / %s has no case\n", rows[i].call,
						rows[i].condition);
					KCHECK(k < NR_CASES);
				}
				continue;
			}
			if (cases[k].late != late)
				continue;
			used[k]++;
			run_row(&rows[i], &cases[k]);
		}
	}
	ksync_warn_hook = NULL;
	for (size_t k = 0; k < NR_CASES; k++) {
		if (used[k] != 1)
			fprintf(stderr, "case `%s` / %s matches %d rows\n", cases[k].call,
				cases[k].condition, used[k]);
		KCHECK_EQ(used[k], 1);
	}
	KCHECK_EQ(ksync_shrinker_registry_destroy(R), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
