/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Out of memory, call by call (docs/errors.md, "Out of memory"): every
 * public function that allocates is made to fail its 1st, 2nd, ... allocation
 * with ksync_fail_nth_alloc() (<ksync/fuzzing.h>) until the call makes fewer
 * allocations than the one armed. Each failure must return the documented
 * error (NULL / -ENOMEM) or take the documented fallback, report nothing
 * (ksync_warn_count unchanged), and leave everything as it was: the same
 * call then succeeds, ids are not leaked (the lowest free one is reused),
 * every object still works (register, shrink, charge, walk, reparent), and
 * everything tears down cleanly (destroy calls return 0; the asan stage's
 * LeakSanitizer finds any leak).
 *
 * Disarming (ksync_fail_nth_alloc(0)) clears the "fired" flag, so each loop
 * reads ksync_fail_nth_alloc_fired() first, then disarms (oom_disarm()).
 * The loop itself, and the checks every failure shares, are OOM_EACH() and
 * struct oom_trial: a test writes only its set-up, its call and what must
 * hold after a failure and after the retry.
 */
#include <ksync/bitmap.h>
#include <ksync/fuzzing.h>
#include <ksync/list_lru.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/pressure.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
#include <ksync/shrinker_testing.h>
#include <ksync/sized_map.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ktest.h"

/* No call makes this many allocations: a loop that reaches it is broken. */
#define OOM_MAX_N 400

static unsigned long warns(void)
{
	return __atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED);
}

/* Disarm the injection; return whether the armed allocation failed. */
static bool oom_disarm(void)
{
	bool fired = ksync_fail_nth_alloc_fired();

	ksync_fail_nth_alloc(0);
	return fired;
}

/* One line per call for the log: how many of its allocations were failed. */
static void oom_note(const char *call, unsigned long failures, unsigned long fallbacks)
{
	printf("  oom: %-58s %3lu injected failures", call, failures);
	if (fallbacks)
		printf(" (%lu took the fallback)", fallbacks);
	printf("\n");
}

/*
 * One call failed allocation by allocation: OOM_EACH(&t) runs its body for
 * n = 1, 2, ... (t.n). The body sets up, calls oom_arm(&t) right before the
 * call under test (its n-th allocation from there fails) and oom_fired(&t)
 * right after it (disarm; count the failure), then checks the failure,
 * retries and checks that everything works. The loop ends after the first
 * pass whose call did not reach the armed allocation (it makes fewer than
 * n): that pass is the plain success. Nothing may be reported: the warning
 * count is checked after the call and again at the end of every pass (a
 * body that breaks out skips that last check).
 */
struct oom_trial {
	unsigned long n;         /* the allocation failed in this pass */
	unsigned long failures;  /* passes whose armed allocation failed */
	unsigned long fallbacks; /* of those, the ones the call survived by its fallback */
	unsigned long w;         /* ksync_warn_count when armed */
	bool fired;              /* whether this pass's armed allocation failed */
};

static void oom_start(struct oom_trial *t)
{
	memset(t, 0, sizeof(*t));
}

/* Between passes: end the one before (if any), start the next (if any). */
static bool oom_pass(struct oom_trial *t)
{
	if (t->n) {
		KCHECK_EQ(warns(), t->w);
		if (!t->fired)
			return false;
	}
	t->fired = false;
	t->w = warns();
	return ++t->n < OOM_MAX_N;
}

#define OOM_EACH(t) for (oom_start(t); oom_pass(t);)

static void oom_arm(struct oom_trial *t)
{
	t->w = warns();
	ksync_fail_nth_alloc(t->n);
}

static bool oom_fired(struct oom_trial *t)
{
	t->fired = oom_disarm();
	t->failures += t->fired;
	KCHECK_EQ(warns(), t->w);
	return t->fired;
}

static void oom_done(struct oom_trial *t, const char *call)
{
	oom_note(call, t->failures, t->fallbacks);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Enter and leave a read section: this thread's reader slot of @ssp exists after. */
static void warm_srcu(struct ksync_srcu_struct *ssp)
{
	int idx = ksync_srcu_read_lock(ssp);

	ksync_srcu_read_unlock(ssp, idx);
}

/* ------------------------------------------------------------------------ */
/* A cache with a plain object count, for the shrinker calls                */

struct cache {
	long objects;
	int count_calls, scan_calls;
};

static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct cache *c = s->private_data;

	(void)sc;
	c->count_calls++;
	return c->objects ? (unsigned long)c->objects : KSYNC_SHRINK_EMPTY;
}

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct cache *c = s->private_data;
	unsigned long take = (unsigned long)c->objects < sc->nr_to_scan ? (unsigned long)c->objects
									  : sc->nr_to_scan;

	c->scan_calls++;
	c->objects -= (long)take;
	return take;
}

static void fill(struct ksync_shrinker *s, struct cache *c)
{
	memset(c, 0, sizeof(*c));
	s->count_objects = cache_count;
	s->scan_objects = cache_scan;
	s->private_data = c;
}

/*
 * @s (registered) works: the global walk frees its objects; for a memcg-aware
 * one with a group, the group walk calls it once its bit is set.
 */
static void check_shrinker_works(struct ksync_shrinker_registry *reg, struct ksync_shrinker *s,
				 struct ksync_memgroup *g)
{
	struct cache *c = s->private_data;
	int calls;

	c->objects = 1000;
	KCHECK(ksync_shrink_slab(reg, 0, NULL, 0) >= 1000);
	KCHECK_EQ(c->objects, 0);
	if (g && (s->flags & KSYNC_SHRINKER_MEMCG_AWARE)) {
		c->objects = 100;
		calls = c->count_calls;
		KCHECK_EQ(ksync_set_shrinker_bit(g, 0, s->id), 0);
		KCHECK(ksync_shrink_slab(reg, 0, g, 0) >= 100);
		KCHECK(c->count_calls > calls);
		KCHECK_EQ(c->objects, 0);
	}
}

/* ------------------------------------------------------------------------ */
/* Registries                                                               */

KTEST(registry_create)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct ksync_shrinker_registry *reg;
		struct ksync_shrinker *s;
		struct ksync_memgroup *g;
		struct cache c;

		oom_arm(&t);
		reg = ksync_shrinker_registry_create(2);
		if (oom_fired(&t)) {
			KCHECK(reg == NULL);
			reg = ksync_shrinker_registry_create(2); /* the retry */
		}
		KCHECK(reg != NULL);
		if (!reg)
			break;
		s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "r");
		g = ksync_shrinker_group_create(reg, NULL);
		KCHECK(s && g);
		if (s && g) {
			KCHECK_EQ(s->id, 0);
			fill(s, &c);
			KCHECK_EQ(ksync_shrinker_register(s), 0);
			check_shrinker_works(reg, s, g);
		}
		KCHECK_EQ(ksync_shrinker_free(s), 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
		KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	}
	KCHECK(t.failures >= 3);
	oom_done(&t, "ksync_shrinker_registry_create");
}

/*
 * The default registry is created on first use. A failed creation must not
 * stick: the next call that needs it tries again. Only this test uses it.
 */
KTEST(default_registry_first_use)
{
	struct oom_trial t;
	struct ksync_shrinker *s = NULL;
	struct cache c;

	/* No retry: the pass after the last failure is the first use that succeeds. */
	OOM_EACH(&t) {
		oom_arm(&t);
		s = ksync_shrinker_alloc(NULL, 0, "default");
		if (!oom_fired(&t))
			break;
		KCHECK(s == NULL);
		if (s)
			break;
		/* n = 1 fails the registry itself; later ones its parts, or the record. */
	}
	KCHECK(t.failures >= 1);
	KCHECK(s != NULL);
	KCHECK(ksync_shrinker_registry_default() != NULL);
	if (s) {
		fill(s, &c);
		KCHECK_EQ(ksync_shrinker_register(s), 0);
		check_shrinker_works(NULL, s, NULL);
		KCHECK_EQ(ksync_shrinker_free(s), 0);
	}
	oom_done(&t, "ksync_shrinker_alloc (default registry, first use)");
}

/* ------------------------------------------------------------------------ */
/* Shrinkers: both shapes                                                   */

enum shape { SHAPE_ALLOC, SHAPE_PREALLOC, SHAPE_REGISTER };

static const char *const shape_name[] = { "ksync_shrinker_alloc", "ksync_prealloc_shrinker",
					   "ksync_register_shrinker" };

/*
 * Prepare (and for SHAPE_REGISTER register) a shrinker of @flags in @reg:
 * allocated into *@out, or the caller's @own. Return: 0 or what the call
 * returned (-ENOMEM; NULL from ksync_shrinker_alloc() reads -ENOMEM).
 */
static int make(enum shape shape, struct ksync_shrinker_registry *reg, unsigned flags,
		struct ksync_shrinker *own, struct cache *c, struct ksync_shrinker **out)
{
	int ret = 0;

	*out = NULL;
	switch (shape) {
	case SHAPE_ALLOC:
		*out = ksync_shrinker_alloc(reg, flags, "alloc-%u", flags);
		if (!*out)
			return -ENOMEM;
		fill(*out, c);
		return 0;
	case SHAPE_PREALLOC:
		memset(own, 0, sizeof(*own));
		fill(own, c);
		own->flags = flags;
		own->seeks = KSYNC_DEFAULT_SEEKS;
		ret = ksync_prealloc_shrinker(reg, own, "prealloc-%u", flags);
		break;
	case SHAPE_REGISTER:
		memset(own, 0, sizeof(*own));
		fill(own, c);
		own->flags = flags;
		own->seeks = KSYNC_DEFAULT_SEEKS;
		ret = ksync_register_shrinker(reg, own, "register-%u", flags);
		break;
	}
	if (!ret)
		*out = own;
	return ret;
}

/* Register a prepared @s of @shape (SHAPE_REGISTER already is). */
static int publish(enum shape shape, struct ksync_shrinker *s)
{
	switch (shape) {
	case SHAPE_ALLOC:
		return ksync_shrinker_register(s);
	case SHAPE_PREALLOC:
		return ksync_register_shrinker_prepared(s);
	default:
		return 0;
	}
}

static int unmake(enum shape shape, struct ksync_shrinker *s)
{
	return shape == SHAPE_ALLOC ? ksync_shrinker_free(s) : ksync_unregister_shrinker(s);
}

/*
 * After a failed call, @own (the classic shapes) must be as the caller left
 * it: no record, no registry, so that the same struct may be prepared again.
 */
static void check_untouched(enum shape shape, const struct ksync_shrinker *own)
{
	if (shape == SHAPE_ALLOC)
		return;
	KCHECK(own->record == NULL);
	KCHECK(own->reg == NULL);
}

/* One memcg-aware (or not) shrinker of every shape, in a fresh registry with a group. */
static void shape_case(enum shape shape, unsigned flags)
{
	struct oom_trial t;
	char what[96];

	OOM_EACH(&t) {
		struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
		struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
		struct ksync_shrinker own, *s;
		struct cache c;
		int ret;

		KCHECK(reg && g);
		if (!reg || !g)
			return;
		warm_srcu(ksync_shrinker_registry_srcu(reg)); /* the reader slot is not what fails here */
		oom_arm(&t);
		ret = make(shape, reg, flags, &own, &c, &s);
		if (oom_fired(&t)) {
			KCHECK_EQ(ret, -ENOMEM);
			KCHECK(s == NULL);
			check_untouched(shape, &own);
			ret = make(shape, reg, flags, &own, &c, &s); /* the retry */
		}
		KCHECK_EQ(ret, 0);
		if (ret)
			break;
		/* The failed attempt took no id: the retry gets the lowest one. */
		KCHECK_EQ(s->id, (flags & KSYNC_SHRINKER_MEMCG_AWARE) ? 0 : -1);
		KCHECK_EQ(publish(shape, s), 0);
		check_shrinker_works(reg, s, g);
		KCHECK_EQ(unmake(shape, s), 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
		KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	}
	KCHECK(t.failures >= 1);
	snprintf(what, sizeof(what), "%s (%s)", shape_name[shape],
		 (flags & KSYNC_SHRINKER_MEMCG_AWARE) ? "memcg aware" : "global");
	oom_done(&t, what);
}

KTEST(shrinker_alloc)
{
	shape_case(SHAPE_ALLOC, 0);
	shape_case(SHAPE_ALLOC, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE);
}

KTEST(prealloc_shrinker)
{
	shape_case(SHAPE_PREALLOC, 0);
	shape_case(SHAPE_PREALLOC, KSYNC_SHRINKER_MEMCG_AWARE);
}

KTEST(register_shrinker)
{
	shape_case(SHAPE_REGISTER, 0);
	shape_case(SHAPE_REGISTER, KSYNC_SHRINKER_MEMCG_AWARE);
}

/* ksync_shrinker_register() and ksync_register_shrinker_prepared() allocate nothing. */
KTEST(register_prepared_allocates_nothing)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "a");
	struct ksync_shrinker own;
	struct cache c1, c2;

	KCHECK(reg && s);
	if (!reg || !s)
		return;
	warm_srcu(ksync_shrinker_registry_srcu(reg));
	fill(s, &c1);
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	KCHECK(!oom_disarm());
	memset(&own, 0, sizeof(own));
	fill(&own, &c2);
	KCHECK_EQ(ksync_prealloc_shrinker(reg, &own, "p"), 0);
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_register_shrinker_prepared(&own), 0);
	KCHECK(!oom_disarm());
	KCHECK_EQ(ksync_unregister_shrinker(&own), 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	oom_note("ksync_shrinker_register, ksync_register_shrinker_prepared", 0, 0);
}

/*
 * Growth past the first capacity: 64 memcg-aware shrinkers take ids 0..63,
 * the 65th needs id 64, which grows the id bitmap, every group's maps (two
 * groups, two nodes) and the id table. A failure anywhere leaves nr_max at
 * 64 and takes no id; maps already grown stay grown (harmless). With @warm
 * false the writer's read section (entered to queue frees unthrottled) is
 * this thread's first on the registry's domain: its reader slot is one of
 * the allocations, and its failure falls back to the shared slot and the
 * call succeeds.
 */
static void growth_case(enum shape shape, bool warm)
{
	enum { NR = 64 };
	struct oom_trial t;
	char what[128];

	OOM_EACH(&t) {
		struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
		struct ksync_memgroup *p = ksync_shrinker_group_create(reg, NULL);
		struct ksync_memgroup *ch = ksync_shrinker_group_create(reg, p);
		struct ksync_shrinker *s[NR], own, *x;
		struct cache c[NR], cx;
		int ret;

		KCHECK(reg && p && ch);
		if (!reg || !p || !ch)
			return;
		for (int i = 0; i < NR; i++) {
			s[i] = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE,
						    "s%d", i);
			KASSERT(s[i] && s[i]->id == i);
			fill(s[i], &c[i]);
			KCHECK_EQ(ksync_shrinker_register(s[i]), 0);
		}
		KCHECK_EQ(ksync_shrinker_nr_max(reg), NR);
		if (warm)
			warm_srcu(ksync_shrinker_registry_srcu(reg));
		oom_arm(&t);
		ret = make(shape, reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, &own, &cx, &x);
		if (oom_fired(&t) && ret == 0) {
			/* Only the reader slot may fail without failing the call. */
			KCHECK(!warm);
			t.fallbacks++;
		} else if (t.fired) {
			KCHECK_EQ(ret, -ENOMEM);
			KCHECK(x == NULL);
			check_untouched(shape, &own);
			KCHECK_EQ(ksync_shrinker_nr_max(reg), NR);
			/* The shrinkers there are still work, in both groups. */
			check_shrinker_works(reg, s[3], ch);
			check_shrinker_works(reg, s[NR - 1], p);
			ret = make(shape, reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, &own, &cx,
				   &x); /* the retry */
		}
		KCHECK_EQ(ret, 0);
		if (ret)
			break;
		KCHECK_EQ(x->id, NR); /* no id leaked by the failure */
		KCHECK_EQ(ksync_shrinker_nr_max(reg), 2 * NR);
		KCHECK_EQ(publish(shape, x), 0);
		for (int nid = 0; nid < 2; nid++) {
			KCHECK_EQ(ksync_set_shrinker_bit(p, nid, NR), 0);
			KCHECK_EQ(ksync_set_shrinker_bit(ch, nid, NR), 0);
		}
		check_shrinker_works(reg, x, ch);
		check_shrinker_works(reg, s[5], ch);
		/* Deferred work at the new id moves to the parent with the child. */
		KCHECK_EQ(ksync_shrinker_add_deferred(x, ch, 1, 77), 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(ch), 0);
		KCHECK_EQ(ksync_shrinker_deferred(x, p, 1), 77);
		KCHECK_EQ(unmake(shape, x), 0);
		for (int i = 0; i < NR; i++)
			KCHECK_EQ(ksync_shrinker_free(s[i]), 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(p), 0);
		KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	}
	KCHECK(t.failures - t.fallbacks >= 5);
	if (!warm)
		KCHECK_EQ(t.fallbacks, 1);
	snprintf(what, sizeof(what), "%s, id 64: growth of the ids and maps%s", shape_name[shape],
		 warm ? "" : " (+reader slot)");
	oom_done(&t, what);
}

KTEST(growth_past_first_capacity)
{
	growth_case(SHAPE_ALLOC, true);
	growth_case(SHAPE_PREALLOC, true);
	growth_case(SHAPE_REGISTER, true);
	growth_case(SHAPE_ALLOC, false);
}

/* ------------------------------------------------------------------------ */
/* Groups of a registry, with every kind of client                          */

struct lcache {
	struct ksync_list_lru lru;
};

static unsigned long lcache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct lcache *lc = s->private_data;
	unsigned long n = ksync_list_lru_shrinker_count(&lc->lru, sc);

	return n ? n : KSYNC_SHRINK_EMPTY;
}

static enum ksync_lru_status isolate_all(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l,
					 void *arg)
{
	(void)arg;
	ksync_list_lru_isolate(l, item);
	return KSYNC_LRU_REMOVED;
}

static unsigned long lcache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct lcache *lc = s->private_data;

	return ksync_list_lru_shrinker_walk(&lc->lru, sc, isolate_all, NULL);
}

/*
 * A registry with a list_lru-backed memcg-aware shrinker: the groups of its
 * set have all four clients (LRU lists, charge handles, the registry's maps,
 * statistics).
 */
struct world {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_shrinker *s;
	struct lcache lc;
	struct ksync_memgroup *top;
};

static bool world_up(struct world *wd, int nr_nodes)
{
	memset(wd, 0, sizeof(*wd));
	wd->reg = ksync_shrinker_registry_create(nr_nodes);
	if (!wd->reg)
		return false;
	wd->set = ksync_shrinker_registry_groups(wd->reg);
	wd->s = ksync_shrinker_alloc(wd->reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, "lru");
	if (!wd->s)
		return false;
	wd->s->count_objects = lcache_count;
	wd->s->scan_objects = lcache_scan;
	wd->s->private_data = &wd->lc;
	if (ksync_list_lru_init(&wd->lc.lru, wd->set, nr_nodes, wd->s) != 0)
		return false;
	if (ksync_shrinker_register(wd->s) != 0)
		return false;
	wd->top = ksync_shrinker_group_create(wd->reg, NULL);
	return wd->top != NULL;
}

/* world_up() (or abort), with this thread's reader slots of both domains: they are not what fails. */
static void world_up_warm(struct world *wd, int nr_nodes)
{
	KASSERT(world_up(wd, nr_nodes));
	warm_srcu(ksync_shrinker_registry_srcu(wd->reg));
	warm_srcu(ksync_memgroup_set_srcu(wd->set));
}

static void world_down(struct world *wd)
{
	if (wd->top)
		KCHECK_EQ(ksync_shrinker_group_destroy(wd->top), 0);
	KCHECK_EQ(ksync_list_lru_destroy(&wd->lc.lru), 0);
	KCHECK_EQ(ksync_shrinker_free(wd->s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(wd->reg), 0);
}

/* An item in @g works end to end: added, counted, found by the group walk, charged. */
static void check_group_works(struct world *wd, struct ksync_memgroup *g)
{
	struct ksync_list_lru_item item;
	struct ksync_objcg *h = ksync_memgroup_get_objcg(g);

	ksync_list_lru_item_init(&item);
	KCHECK(ksync_list_lru_add(&wd->lc.lru, &item, 0, g));
	KCHECK_EQ(ksync_list_lru_count_one(&wd->lc.lru, 0, g), 1);
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_LRU), 1);
	KCHECK_EQ(ksync_shrink_slab(wd->reg, 0, g, 0), 1); /* the bit was set, the walk takes it */
	KCHECK(!ksync_list_lru_item_on_list(&item));
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_LRU), 0);
	KCHECK(h != NULL);
	if (h) {
		int idx = ksync_srcu_read_lock(ksync_memgroup_set_srcu(wd->set));
		KCHECK(ksync_objcg_group(h) == g);
		ksync_srcu_read_unlock(ksync_memgroup_set_srcu(wd->set), idx);
		KCHECK_EQ(ksync_objcg_charge(h, 0, 2, 64), 0);
		KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_BYTES), 64);
		KCHECK_EQ(ksync_objcg_charge(h, 0, -2, -64), 0);
		ksync_objcg_put(h);
	}
}

KTEST(shrinker_group_create)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct world wd;
		struct ksync_memgroup *g;
		struct ksync_shrinker_deferred_total tot;
		int groups;

		world_up_warm(&wd, 2);
		groups = ksync_memgroup_nr_groups(wd.set);
		KCHECK_EQ(ksync_shrinker_add_deferred(wd.s, wd.top, 1, 5), 0);
		oom_arm(&t);
		g = ksync_shrinker_group_create(wd.reg, wd.top);
		if (oom_fired(&t)) {
			KCHECK(g == NULL);
			KCHECK_EQ(ksync_memgroup_nr_groups(wd.set), groups);
			/* The ledger walks every group's maps: nothing of the failed one is left there. */
			ksync_shrinker_deferred_total(wd.reg, &tot);
			KCHECK_EQ(tot.in_groups, 5);
			KCHECK_EQ(tot.orphaned, 0);
			check_group_works(&wd, wd.top);
			g = ksync_shrinker_group_create(wd.reg, wd.top); /* the retry */
		}
		KCHECK(g != NULL);
		if (!g)
			break;
		check_group_works(&wd, g);
		KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
		/* The parent counts one online child, not two: it goes offline. */
		KCHECK_EQ(ksync_shrinker_group_destroy(wd.top), 0);
		wd.top = NULL;
		world_down(&wd);
	}
	KCHECK(t.failures >= 6);
	oom_done(&t, "ksync_shrinker_group_create (lru, objcg, shrinker, stats)");
}

/*
 * The lock-free calls allocate nothing but this thread's reader slot of the
 * registry's (or the set's) domain on their first read section; when that
 * fails they run in the shared slot and do their job, silently.
 */
KTEST(walks_reader_slot)
{
	struct world wd;
	struct ksync_list_lru_item item;
	unsigned long w, fallbacks = 0;

	KCHECK(world_up(&wd, 2));
	if (!wd.top)
		return;
	w = warns();
	ksync_list_lru_item_init(&item);
	ksync_fail_nth_alloc(1);
	KCHECK(ksync_list_lru_add(&wd.lc.lru, &item, 1, wd.top)); /* set's domain, then the registry's */
	fallbacks += oom_disarm();
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_set_shrinker_bit(wd.top, 1, wd.s->id), 0);
	fallbacks += oom_disarm();
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_shrinker_debug_count(wd.s, wd.top, 1), 1);
	fallbacks += oom_disarm();
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_list_lru_count_node(&wd.lc.lru, 1), 1);
	fallbacks += oom_disarm();
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_shrink_slab(wd.reg, 1, wd.top, 0), 1); /* the group walk */
	fallbacks += oom_disarm();
	KCHECK(!ksync_list_lru_item_on_list(&item));
	KCHECK(ksync_list_lru_add(&wd.lc.lru, &item, 1, NULL));
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_shrink_slab(wd.reg, 1, NULL, 0), 1); /* the global walk */
	fallbacks += oom_disarm();
	KCHECK_EQ(warns(), w);
	KCHECK(fallbacks >= 4); /* the add allocates the registry's slot (for the bit) once its own failed */
	world_down(&wd);
	KCHECK_EQ(warns(), w);
	oom_note("set_shrinker_bit, shrink_slab, debug_count, lru add/count (reader slot)", fallbacks,
		 fallbacks);
}

/* ------------------------------------------------------------------------ */
/* Memory groups                                                            */

KTEST(memgroup_set_create)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct ksync_memgroup_set *set;

		oom_arm(&t);
		set = t.n & 1 ? ksync_memgroup_set_create_nodes(3) : ksync_memgroup_set_create();
		if (oom_fired(&t)) {
			KCHECK(set == NULL);
			set = t.n & 1 ? ksync_memgroup_set_create_nodes(3) : ksync_memgroup_set_create();
		}
		KCHECK(set != NULL);
		if (!set)
			break;
		struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
		KCHECK(g != NULL);
		if (g) {
			KCHECK_EQ(ksync_memgroup_stat_add(g, 0, KSYNC_MEMGROUP_STAT_USER0, 3), 0);
			KCHECK_EQ(ksync_memgroup_offline(g), 0);
		}
		KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	}
	KCHECK(t.failures >= 2);
	oom_done(&t, "ksync_memgroup_set_create(_nodes)");
}

/*
 * A program's client whose online hook allocates (through the same
 * injection) a state that records its group's id; @priv is its count of
 * live states (an int).
 */
static int counted_online(struct ksync_memgroup *g, int slot, void *priv)
{
	long *st = KSYNC__ALLOC(calloc(1, sizeof(long)));

	if (!st)
		return -ENOMEM;
	*st = ksync_memgroup_id(g);
	__atomic_fetch_add((int *)priv, 1, __ATOMIC_RELAXED);
	ksync_memgroup_set_slot(g, slot, st);
	return 0;
}

static void counted_release(struct ksync_memgroup *g, int slot, void *priv)
{
	long *st = ksync_memgroup_slot(g, slot);

	KCHECK(st != NULL);
	if (st)
		KCHECK_EQ(*st, ksync_memgroup_id(g));
	free(st);
	ksync_memgroup_set_slot(g, slot, NULL);
	__atomic_fetch_sub((int *)priv, 1, __ATOMIC_RELAXED);
}

/*
 * Ordered after every built-in client (statistics included): its failure
 * is the last possible one of a group's creation.
 */
static int late_live;

static const struct ksync_memgroup_client late_client = {
	.name = "late",
	.online = counted_online,
	.release = counted_release,
	.order = KSYNC_MEMGROUP_ORDER_STATS + 100,
};

KTEST(memgroup_create)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct ksync_memgroup_set *set = ksync_memgroup_set_create_nodes(2);
		struct ksync_memgroup *top, *g;
		struct ksync_objcg *h;
		int slot;

		KCHECK(set != NULL);
		if (!set)
			return;
		slot = ksync_memgroup_client_register(set, &late_client, &late_live);
		KCHECK(slot >= 0);
		top = ksync_memgroup_create(set, NULL);
		KCHECK(top != NULL);
		if (!top)
			return;
		warm_srcu(ksync_memgroup_set_srcu(set));
		h = ksync_memgroup_get_objcg(top);
		KCHECK_EQ(ksync_objcg_charge(h, 1, 1, 10), 0);
		oom_arm(&t);
		g = ksync_memgroup_create(set, top);
		if (oom_fired(&t)) {
			KCHECK(g == NULL);
			KCHECK_EQ(ksync_memgroup_nr_groups(set), 1);
			KCHECK_EQ(late_live, 1);
			/* The statistics are exact: the failed group counts nothing. */
			KCHECK_EQ(ksync_memgroup_stat_total(set, 1, KSYNC_MEMGROUP_STAT_BYTES), 10);
			/* Its queued frees run now: nothing of it may be touched after. */
			ksync_srcu_barrier(ksync_memgroup_set_srcu(set));
			KCHECK_EQ(ksync_memgroup_stat_total(set, 1, KSYNC_MEMGROUP_STAT_BYTES), 10);
			g = ksync_memgroup_create(set, top); /* the retry */
		}
		KCHECK(g != NULL);
		if (!g)
			break;
		KCHECK_EQ(late_live, 2);
		struct ksync_objcg *hg = ksync_memgroup_get_objcg(g);
		KCHECK(hg != NULL);
		KCHECK_EQ(ksync_objcg_charge(hg, 0, 1, 7), 0);
		KCHECK_EQ(ksync_memgroup_offline(g), 0);
		/* The handle moved to the parent with the group: the uncharge lands there. */
		int idx = ksync_srcu_read_lock(ksync_memgroup_set_srcu(set));
		KCHECK(ksync_objcg_group(hg) == top);
		ksync_srcu_read_unlock(ksync_memgroup_set_srcu(set), idx);
		KCHECK_EQ(ksync_objcg_charge(hg, 0, -1, -7), 0);
		ksync_objcg_put(hg);
		KCHECK_EQ(ksync_objcg_charge(h, 1, -1, -10), 0);
		ksync_objcg_put(h);
		KCHECK_EQ(ksync_memgroup_offline(top), 0); /* one online child counted, gone */
		ksync_srcu_barrier(ksync_memgroup_set_srcu(set));
		KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);
		KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_BYTES), 0);
		KCHECK_EQ(ksync_memgroup_stat_total(set, 1, KSYNC_MEMGROUP_STAT_BYTES), 0);
		KCHECK_EQ(late_live, 0);
		KCHECK_EQ(ksync_memgroup_client_unregister(set, slot), 0);
		KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	}
	KCHECK(t.failures >= 4);
	oom_done(&t, "ksync_memgroup_create (objcg, stats, a client after stats)");
}

/* The same kind of client, registered while groups are online. */
static int busy_live;

static const struct ksync_memgroup_client busy_client = {
	.name = "busy",
	.online = counted_online,
	.release = counted_release,
	.order = 50,
};

KTEST(memgroup_client_register)
{
	enum { NG = 4 };
	struct oom_trial t;

	OOM_EACH(&t) {
		struct ksync_memgroup_set *set = ksync_memgroup_set_create();
		struct ksync_memgroup *g[NG];
		int slot;

		KCHECK(set != NULL);
		if (!set)
			return;
		g[0] = ksync_memgroup_create(set, NULL);
		g[1] = ksync_memgroup_create(set, g[0]);
		g[2] = ksync_memgroup_create(set, g[1]);
		g[3] = ksync_memgroup_create(set, NULL);
		KASSERT(g[0] && g[1] && g[2] && g[3]);
		oom_arm(&t);
		slot = ksync_memgroup_client_register(set, &busy_client, &busy_live);
		if (oom_fired(&t)) {
			KCHECK_EQ(slot, -ENOMEM);
			KCHECK_EQ(busy_live, 0); /* the groups brought online were released */
			KCHECK_EQ(ksync_memgroup_client_find(set, &busy_client), -ENOENT);
			for (int i = 0; i < NG; i++)
				KCHECK(ksync_memgroup_client_state(g[i], &busy_client) == NULL);
			slot = ksync_memgroup_client_register(set, &busy_client, &busy_live); /* the retry */
		}
		KCHECK_EQ(slot, 0); /* the lowest slot: the failure kept none */
		KCHECK_EQ(busy_live, NG);
		for (int i = 0; i < NG; i++) {
			long *st = ksync_memgroup_client_state(g[i], &busy_client);
			KCHECK(st != NULL && *st == ksync_memgroup_id(g[i]));
		}
		struct ksync_memgroup *extra = ksync_memgroup_create(set, g[2]);
		KCHECK(extra != NULL);
		KCHECK_EQ(busy_live, NG + 1);
		KCHECK_EQ(ksync_memgroup_offline(extra), 0);
		for (int i = NG - 1; i >= 0; i--)
			KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
		KCHECK_EQ(busy_live, 0);
		KCHECK_EQ(ksync_memgroup_client_unregister(set, slot), 0);
		KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	}
	KCHECK_EQ(t.failures, NG);
	oom_done(&t, "ksync_memgroup_client_register (4 groups online)");
}

/* Charging through a handle allocates nothing but this thread's reader slot. */
KTEST(objcg_charge_reader_slot)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	struct ksync_objcg *h;
	unsigned long w = warns();
	bool fired;

	KASSERT(set && g);
	ksync_fail_nth_alloc(1);
	h = ksync_memgroup_get_objcg(g); /* first read section of the set's domain here */
	fired = oom_disarm();
	KCHECK(fired);
	KCHECK(h != NULL);
	KCHECK_EQ(warns(), w);
	ksync_fail_nth_alloc(1);
	KCHECK_EQ(ksync_objcg_charge(h, 0, 3, 300), 0);
	fired = oom_disarm();
	KCHECK(fired); /* still no slot: the shared one again */
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_BYTES), 300);
	KCHECK_EQ(ksync_memgroup_stat_read(g, 0, KSYNC_MEMGROUP_STAT_OBJECTS), 3);
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	/* The handle moved to the root with its top-level group. */
	KCHECK_EQ(ksync_memgroup_stat_root(set, 0, KSYNC_MEMGROUP_STAT_BYTES), 300);
	KCHECK_EQ(ksync_objcg_charge(h, 0, -3, -300), 0);
	KCHECK_EQ(ksync_memgroup_stat_total(set, 0, KSYNC_MEMGROUP_STAT_BYTES), 0);
	ksync_objcg_put(h);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	KCHECK_EQ(warns(), w);
	oom_note("ksync_memgroup_get_objcg, ksync_objcg_charge (reader slot)", 2, 2);
}

/* ------------------------------------------------------------------------ */
/* LRU lists                                                                */

KTEST(list_lru_init)
{
	struct oom_trial t;

	/* Global lists only: one allocation. */
	OOM_EACH(&t) {
		struct ksync_list_lru lru = { NULL };
		struct ksync_list_lru_item item;
		int ret;

		oom_arm(&t);
		ret = ksync_list_lru_init(&lru, NULL, 2, NULL);
		if (oom_fired(&t)) {
			KCHECK_EQ(ret, -ENOMEM);
			KCHECK(lru.priv == NULL);
			ret = ksync_list_lru_init(&lru, NULL, 2, NULL);
		}
		KCHECK_EQ(ret, 0);
		ksync_list_lru_item_init(&item);
		KCHECK(ksync_list_lru_add(&lru, &item, 1, NULL));
		KCHECK_EQ(ksync_list_lru_count(&lru), 1);
		KCHECK(ksync_list_lru_del_obj(&lru, &item));
		KCHECK_EQ(ksync_list_lru_destroy(&lru), 0);
	}
	KCHECK_EQ(t.failures, 1);
	oom_done(&t, "ksync_list_lru_init (global lists)");

	/* On a registry's set with three groups online and a memcg-aware shrinker. */
	OOM_EACH(&t) {
		struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
		struct ksync_memgroup_set *set = ksync_shrinker_registry_groups(reg);
		struct ksync_shrinker *s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE,
							  "lru");
		struct ksync_memgroup *a = ksync_shrinker_group_create(reg, NULL);
		struct ksync_memgroup *b = ksync_shrinker_group_create(reg, a);
		struct ksync_memgroup *c = ksync_shrinker_group_create(reg, NULL);
		struct lcache lc;
		int ret;

		KASSERT(reg && s && a && b && c);
		s->count_objects = lcache_count;
		s->scan_objects = lcache_scan;
		s->private_data = &lc;
		KCHECK_EQ(ksync_shrinker_register(s), 0);
		warm_srcu(ksync_memgroup_set_srcu(set));
		memset(&lc, 0, sizeof(lc));
		oom_arm(&t);
		ret = ksync_list_lru_init(&lc.lru, set, 2, s);
		if (oom_fired(&t)) {
			KCHECK_EQ(ret, -ENOMEM);
			KCHECK(lc.lru.priv == NULL);
			ret = ksync_list_lru_init(&lc.lru, set, 2, s); /* the retry */
		}
		KCHECK_EQ(ret, 0);
		if (ret)
			break;
		struct ksync_list_lru_item it[3];
		struct ksync_memgroup *gs[3] = { a, b, c };
		for (int i = 0; i < 3; i++) {
			ksync_list_lru_item_init(&it[i]);
			KCHECK(ksync_list_lru_add(&lc.lru, &it[i], 1, gs[i]));
			KCHECK_EQ(ksync_list_lru_count_one(&lc.lru, 1, gs[i]), 1);
		}
		KCHECK_EQ(ksync_shrink_slab(reg, 1, c, 0), 1);
		KCHECK_EQ(ksync_shrinker_group_destroy(b), 0); /* b's item goes to a */
		KCHECK_EQ(ksync_list_lru_count_one(&lc.lru, 1, a), 2);
		KCHECK_EQ(ksync_shrink_slab(reg, 1, a, 0), 2);
		KCHECK_EQ(ksync_list_lru_count(&lc.lru), 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(a), 0);
		KCHECK_EQ(ksync_shrinker_group_destroy(c), 0);
		KCHECK_EQ(ksync_list_lru_destroy(&lc.lru), 0);
		KCHECK_EQ(ksync_shrinker_free(s), 0);
		/* -EBUSY (and a report) here would mean a client slot leaked by the failure. */
		KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	}
	KCHECK_EQ(t.failures, 4);
	oom_done(&t, "ksync_list_lru_init (a set with 3 groups online)");
}

/*
 * An add whose group list cannot be allocated goes to the nearest ancestor
 * that has one (at worst the global list): it never fails, and the item is
 * where the counts, the shrinker bit, the walks and del find it.
 */
KTEST(list_lru_add_fallback)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct world wd;
		struct ksync_list_lru_item item;
		struct ksync_memgroup *ch;
		struct ksync_memgroup *where = NULL;
		bool added;

		world_up_warm(&wd, 1);
		ch = ksync_shrinker_group_create(wd.reg, wd.top);
		KASSERT(ch);
		ksync_list_lru_item_init(&item);
		oom_arm(&t);
		added = ksync_list_lru_add(&wd.lc.lru, &item, 0, ch);
		oom_fired(&t);
		KCHECK(added);
		KCHECK_EQ(ksync_list_lru_count(&wd.lc.lru), 1);
		if (ksync_list_lru_count_one(&wd.lc.lru, 0, ch) == 1)
			where = ch;
		else if (ksync_list_lru_count_one(&wd.lc.lru, 0, wd.top) == 1)
			where = wd.top;
		if (t.fired) {
			t.fallbacks++;
			/* The child's list failed: the parent's took the item. */
			KCHECK(where == wd.top);
		} else {
			KCHECK(where == ch);
		}
		KCHECK_EQ(ksync_memgroup_stat_read(where ? where : ch, 0, KSYNC_MEMGROUP_STAT_LRU), 1);
		/* The bit was set where the item is: the group walk there takes it. */
		KCHECK_EQ(ksync_shrink_slab(wd.reg, 0, where ? where : ch, 0), 1);
		KCHECK(!ksync_list_lru_item_on_list(&item));
		/* Once memory is back, the child gets its list. */
		KCHECK(ksync_list_lru_add(&wd.lc.lru, &item, 0, ch));
		KCHECK_EQ(ksync_list_lru_count_one(&wd.lc.lru, 0, ch), 1);
		KCHECK(ksync_list_lru_del(&wd.lc.lru, &item, 0, ch));
		KCHECK_EQ(ksync_shrinker_group_destroy(ch), 0);
		world_down(&wd);
	}
	KCHECK_EQ(t.failures, 1);
	oom_done(&t, "ksync_list_lru_add (group list creation)");
}

/*
 * Offline moves a child's items to its parent's list, creating it; if that
 * fails they go further up (here: the global list). Nothing is lost.
 */
KTEST(list_lru_offline_reparent_fallback)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct world wd;
		struct ksync_list_lru_item item[2];
		struct ksync_memgroup *ch;

		world_up_warm(&wd, 1);
		ch = ksync_shrinker_group_create(wd.reg, wd.top);
		KASSERT(ch);
		for (int i = 0; i < 2; i++) {
			ksync_list_lru_item_init(&item[i]);
			KCHECK(ksync_list_lru_add(&wd.lc.lru, &item[i], 0, ch));
		}
		KCHECK_EQ(ksync_list_lru_count_one(&wd.lc.lru, 0, wd.top), 0); /* the parent has no list yet */
		oom_arm(&t);
		KCHECK_EQ(ksync_shrinker_group_destroy(ch), 0);
		KCHECK_EQ(ksync_list_lru_count(&wd.lc.lru), 2);
		if (oom_fired(&t)) {
			t.fallbacks++;
			KCHECK_EQ(ksync_list_lru_count_one(&wd.lc.lru, 0, NULL), 2);
			/* The global walk takes them. */
			KCHECK_EQ(ksync_shrink_slab(wd.reg, 0, NULL, 0), 2);
		} else {
			KCHECK_EQ(ksync_list_lru_count_one(&wd.lc.lru, 0, wd.top), 2);
			KCHECK_EQ(ksync_shrink_slab(wd.reg, 0, wd.top, 0), 2);
		}
		KCHECK_EQ(ksync_list_lru_count(&wd.lc.lru), 0);
		/* The parent still gets a list of its own when memory is back. */
		KCHECK(ksync_list_lru_add(&wd.lc.lru, &item[0], 0, wd.top));
		KCHECK_EQ(ksync_list_lru_count_one(&wd.lc.lru, 0, wd.top), 1);
		KCHECK(ksync_list_lru_del_obj(&wd.lc.lru, &item[0]));
		world_down(&wd);
	}
	KCHECK_EQ(t.failures, 1);
	oom_done(&t, "ksync_shrinker_group_destroy / memgroup_offline (LRU reparent)");
}

/* ------------------------------------------------------------------------ */
/* Header-only allocations                                                  */

KTEST(bitmap_zalloc)
{
	unsigned long w = warns();
	unsigned long *map;

	ksync_fail_nth_alloc(1);
	map = ksync_bitmap_zalloc(200);
	KCHECK(oom_disarm());
	KCHECK(map == NULL);
	ksync_fail_nth_alloc(2);
	map = ksync_bitmap_zalloc(200);
	KCHECK(!oom_disarm());
	KCHECK(map != NULL);
	if (map) {
		KCHECK(ksync_bitmap_empty(map, 200));
		ksync_set_bit(199, map);
		KCHECK(ksync_test_bit(199, map));
	}
	ksync_bitmap_free(map);
	KCHECK_EQ(warns(), w);
	oom_note("ksync_bitmap_zalloc", 1, 0);
}

KTEST(sized_map_alloc)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct ksync_sized_map *m;

		oom_arm(&t);
		m = ksync_sized_map_alloc(200, sizeof(long)); /* a header and 4 units */
		if (oom_fired(&t)) {
			KCHECK(m == NULL); /* the units already allocated were freed (LeakSanitizer) */
			m = ksync_sized_map_alloc(200, sizeof(long));
		}
		KCHECK(m != NULL);
		if (!m)
			break;
		KCHECK_EQ(ksync_sized_map_nr_max(m), 200);
		KCHECK_EQ(ksync_sized_map_set_bit(m, 199), 0);
		KCHECK_EQ(ksync_sized_map_find_next_bit(m, 0), 199);
		*(long *)ksync_sized_map_data(m, 150) = 4;
		ksync_sized_map_free(m);
	}
	KCHECK_EQ(t.failures, 5);
	oom_done(&t, "ksync_sized_map_alloc (200 bits: header + 4 units)");
}

KTEST(sized_map_grow)
{
	struct oom_trial t;

	OOM_EACH(&t) {
		struct ksync_srcu_struct ssp;
		struct ksync_sized_map *KSYNC_RCU slot;
		struct ksync_sized_map *m, *old;
		int ret;

		KASSERT(ksync_init_srcu_struct(&ssp) == 0);
		old = ksync_sized_map_alloc(64, sizeof(long));
		KASSERT(old);
		KCHECK_EQ(ksync_sized_map_set_bit(old, 63), 0);
		*(long *)ksync_sized_map_data(old, 10) = 42;
		KSYNC_RCU_INIT_POINTER(slot, old);
		oom_arm(&t);
		ret = ksync_sized_map_grow(&slot, 300, &ssp); /* a header and 4 new units */
		if (oom_fired(&t)) {
			KCHECK_EQ(ret, -ENOMEM);
			/* The old map stays published, untouched. */
			m = (struct ksync_sized_map *)ksync_rcu_access_pointer(slot);
			KCHECK(m == old);
			KCHECK_EQ(ksync_sized_map_nr_max(m), 64);
			KCHECK(ksync_sized_map_test_bit(m, 63));
			KCHECK_EQ(*(long *)ksync_sized_map_data(m, 10), 42);
			ret = ksync_sized_map_grow(&slot, 300, &ssp); /* the retry */
		}
		KCHECK_EQ(ret, 0);
		m = (struct ksync_sized_map *)ksync_rcu_access_pointer(slot);
		KCHECK_EQ(ksync_sized_map_nr_max(m), 300);
		KCHECK(ksync_sized_map_test_bit(m, 63));
		KCHECK_EQ(*(long *)ksync_sized_map_data(m, 10), 42);
		KCHECK_EQ(ksync_sized_map_set_bit(m, 299), 0);
		KCHECK_EQ(ksync_sized_map_find_next_bit(m, 64), 299);
		ksync_srcu_barrier(&ssp); /* the old header */
		ksync_sized_map_free_all(m);
		ksync_cleanup_srcu_struct(&ssp);
	}
	KCHECK_EQ(t.failures, 5);
	oom_done(&t, "ksync_sized_map_grow (64 -> 300 bits)");
}

/* ------------------------------------------------------------------------ */
/* SRCU: a reader without a slot of its own                                 */

struct slotless {
	struct ksync_srcu_struct *ssp;
	int stage; /* 1: inside, 2: may leave, 3: left */
	bool fired;
	int nested_held;
	unsigned long warns_before, warns_after;
};

static void *slotless_reader(void *arg)
{
	struct slotless *r = arg;
	int idx, idx2;

	r->warns_before = warns();
	ksync_fail_nth_alloc(1);
	idx = ksync_srcu_read_lock(r->ssp); /* this thread's first section: its slot fails */
	r->fired = oom_disarm();
	/* A nested section: memory is back, the slot is allocated now. */
	idx2 = ksync_srcu_read_lock(r->ssp);
	r->nested_held = ksync_srcu_read_lock_held(r->ssp);
	ksync_srcu_read_unlock(r->ssp, idx2);
	__atomic_store_n(&r->stage, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&r->stage, __ATOMIC_ACQUIRE) != 2)
		sched_yield();
	ksync_srcu_read_unlock(r->ssp, idx); /* from the shared slot, without a report */
	r->warns_after = warns();
	__atomic_store_n(&r->stage, 3, __ATOMIC_RELEASE);
	return NULL;
}

struct gp_waiter {
	struct ksync_srcu_struct *ssp;
	int done;
};

static void *gp_waiter_main(void *arg)
{
	struct gp_waiter *gw = arg;

	ksync_synchronize_srcu(gw->ssp);
	__atomic_store_n(&gw->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct marked_cb {
	int ran;
	struct ksync_rcu_head head;
};

static void cb_mark(struct ksync_rcu_head *head)
{
	__atomic_store_n(&ksync_container_of(head, struct marked_cb, head)->ran, 1, __ATOMIC_RELEASE);
}

KTEST(srcu_reader_slot_fallback)
{
	struct ksync_srcu_struct ssp;
	struct slotless r = { .ssp = &ssp };
	struct gp_waiter gw = { .ssp = &ssp };
	struct marked_cb cb;
	pthread_t rt, wt;

	memset(&cb, 0, sizeof(cb));
	KASSERT(ksync_init_srcu_struct(&ssp) == 0);
	KASSERT(pthread_create(&rt, NULL, slotless_reader, &r) == 0);
	while (__atomic_load_n(&r.stage, __ATOMIC_ACQUIRE) != 1)
		sched_yield();
	KCHECK(r.fired);         /* the slot allocation failed: the section is in the shared slot */
	KCHECK(r.nested_held);   /* a nested section, with memory back, got a slot */
	KCHECK_EQ(warns(), r.warns_before);
	ksync_call_srcu(&ssp, &cb.head, cb_mark);
	KASSERT(pthread_create(&wt, NULL, gp_waiter_main, &gw) == 0);
	/* The grace period waits for the slotless reader, and so does the callback. */
	for (int i = 0; i < 20; i++) {
		sleep_ms(10);
		KCHECK(!__atomic_load_n(&gw.done, __ATOMIC_ACQUIRE));
		KCHECK(!__atomic_load_n(&cb.ran, __ATOMIC_ACQUIRE));
	}
	__atomic_store_n(&r.stage, 2, __ATOMIC_RELEASE);
	pthread_join(rt, NULL);
	pthread_join(wt, NULL);
	KCHECK(__atomic_load_n(&gw.done, __ATOMIC_ACQUIRE));
	KCHECK_EQ(r.warns_after, r.warns_before); /* the unlock found its section */
	ksync_srcu_barrier(&ssp);
	KCHECK(__atomic_load_n(&cb.ran, __ATOMIC_ACQUIRE));
	/* Nothing is left open: a grace period from here ends. */
	ksync_synchronize_srcu(&ssp);
	ksync_cleanup_srcu_struct(&ssp);
	KCHECK_EQ(warns(), r.warns_before);
	oom_note("ksync_srcu_read_lock (reader slot: shared-slot fallback)", 1, 1);
}

/*
 * ksync_pressure_create(): the monitor's own allocations fail the call
 * (-ENOMEM); a source whose allocation fails is left off, described "out
 * of memory", and the monitor works with the rest. Sources that open on any
 * Linux machine: the test source, meminfo and budget (/proc).
 */
KTEST(pressure_create)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct oom_trial t;
	char desc[2048];

	KCHECK(reg != NULL);
	OOM_EACH(&t) {
		struct ksync_pressure_config cfg = {
			.sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST) |
				   KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_MEMINFO) |
				   KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_BUDGET),
			.reg = reg,
			.budget_bytes = 1ull << 40,
		};
		struct ksync_pressure *p = NULL;
		int r;

		oom_arm(&t);
		r = ksync_pressure_create(&cfg, &p);
		if (oom_fired(&t)) {
			if (r == -ENOMEM) {
				KCHECK(p == NULL);
				continue;
			}
			KCHECK_EQ(r, 0);
			t.fallbacks++;
			ksync_pressure_describe(p, desc, sizeof(desc));
			KCHECK(strstr(desc, "out of memory") != NULL);
			KCHECK(ksync_pressure_sources(p) != cfg.sources);
		} else {
			KCHECK_EQ(r, 0);
			KCHECK_EQ(ksync_pressure_sources(p), cfg.sources);
		}
		/* Whatever opened works: the test source always does (no allocation). */
		if (ksync_pressure_sources(p) & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST)) {
			struct ksync_pressure_stats st;

			KCHECK_EQ(ksync_pressure_inject(p, KSYNC_PRESSURE_LOW), 0);
			KCHECK(ksync_pressure_dispatch(p) >= 1);
			ksync_pressure_get_stats(p, &st);
			KCHECK(st.events[KSYNC_PRESSURE_LOW] >= 1);
		}
		KCHECK_EQ(ksync_pressure_destroy(p), 0);
	}
	oom_done(&t, "ksync_pressure_create");
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
