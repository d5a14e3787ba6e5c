/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of ksync::objcache (lib/objcache): slab and magazine
 * invariants (objects inside their slabs, aligned, constructed once; the
 * statistics' sums; the empty-slab limit); every misuse case with the
 * caller's line; design A through offline (dead caches pin their group),
 * with reparenting (they pin the parent instead), self-destruction and
 * destroy; design B's charges, the stock never holding a dying group's
 * handle, the stock size setting; out of memory at every allocation; the
 * flush at thread exit; the shrinker under ksync_shrink_slab(); a short
 * concurrent churn of both designs with groups going offline; the kernel
 * spellings. No timed assertion.
 */
#include <ksync/fuzzing.h>
#include <ksync/linux/slab.h>
#include <ksync/memgroup.h>
#include <ksync/memgroup_stat.h>
#include <ksync/objcache.h>
#include <ksync/objcache_testing.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "reports.h"

static unsigned long warns(void)
{
	return __atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED);
}

static struct ksync_objcache_stats stats(struct ksync_objcache *c)
{
	struct ksync_objcache_stats st;

	KASSERT(ksync_objcache_stats(c, &st) == 0);
	return st;
}

static int ctor_calls;
static void ctor(void *obj)
{
	__atomic_fetch_add(&ctor_calls, 1, __ATOMIC_RELAXED);
	memset(obj, 0x5a, 8);
}

static struct ksync_objcache *make(const char *name, size_t size, unsigned flags, enum ksync_objcache_design d,
				   bool reparent, struct ksync_memgroup_set *set, unsigned mag)
{
	struct ksync_objcache_config cfg = { .design = d, .reparent = reparent, .groups = set, .magazine_size = mag };
	struct ksync_objcache *c = ksync_objcache_create_config(name, size, 0, flags, NULL, &cfg);

	KASSERT(c != NULL);
	return c;
}

/* ------------------------------------------------------------------------ */
/* Slabs and magazines                                                      */

KTEST(slab_invariants)
{
	struct ksync_objcache *c;
	struct ksync_objcache_stats st;
	enum { N = 3000 };
	void **objs = calloc(N, sizeof(void *));
	unsigned long w = warns();

	ctor_calls = 0;
	c = ksync_objcache_create("inv", 100, 16, 0, ctor);
	KASSERT(c && objs);
	for (int i = 0; i < N; i++) {
		objs[i] = ksync_objcache_alloc(c);
		KASSERT(objs[i]);
		KCHECK(((uintptr_t)objs[i] & 15) == 0);
		KCHECK(memcmp(objs[i], "\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a", 8) == 0);
		/* Inside its slab (8 KiB for 112-byte strides), past the header. */
		KCHECK((uintptr_t)objs[i] % 8192 >= 64);
		KCHECK((uintptr_t)objs[i] % 8192 + 100 <= 8192);
	}
	for (int i = 1; i < N; i++)
		KCHECK(objs[i] != objs[i - 1]);
	st = stats(c);
	KCHECK_EQ(st.active_objects, (unsigned long)N);
	KCHECK_EQ(st.object_size, (size_t)100);
	KCHECK_EQ(st.stride, (size_t)112);
	/* The smallest power-of-two slab holding 64 objects: 8 KiB. */
	KCHECK_EQ(st.slab_size, 8192UL);
	KCHECK(st.objects_per_slab >= 64 && st.objects_per_slab <= 8192 / 112);
	KCHECK_EQ(st.total_objects, st.slabs * st.objects_per_slab);
	KCHECK_EQ(st.active_objects + st.magazine_objects <= st.total_objects, true);
	KCHECK_EQ((unsigned long)ctor_calls, st.total_objects); /* once per object, at slab creation */
	KCHECK(st.utilisation > 0.0 && st.utilisation < 1.0);
	KCHECK_EQ(st.slab_bytes, st.slabs * st.slab_size);
	for (int i = 0; i < N; i++)
		ksync_objcache_free(c, objs[i]);
	st = stats(c);
	KCHECK_EQ(st.active_objects, 0UL);
	KCHECK(st.magazine_objects > 0); /* this thread's magazine keeps some */
	KCHECK(st.magazine_objects <= 32);
	KCHECK(st.empty_slabs <= 2 + 1); /* the limit (2), plus the slab the magazine pins */
	KCHECK(ksync_objcache_shrink(c) >= 1);
	st = stats(c);
	KCHECK_EQ(st.magazine_objects, 0UL);
	KCHECK_EQ(st.slabs, 0UL);
	KCHECK_EQ(ctor_calls >= N, true);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(warns(), w);
	free(objs);
}

/* Slabs come from 2 MiB arenas and go back to them: a slab reused by
 * another cache starts with a clear header and live bitmap. */
KTEST(slabs_reused_from_arena)
{
	enum { N = 1000 };
	struct ksync_objcache *pin = make("pin", 64, 0, KSYNC_OBJCACHE_CHARGE_HANDLES, false, NULL, 0);
	struct ksync_objcache *c1 = make("reuse1", 64, 0, KSYNC_OBJCACHE_CHARGE_HANDLES, false, NULL, 0);
	struct ksync_objcache *c2;
	static uintptr_t slabs1[N];
	void *keep, *objs[N];
	unsigned long w = warns();
	bool reused = false;

	keep = ksync_objcache_alloc(pin); /* keeps the arena mapped */
	KASSERT(keep);
	for (int i = 0; i < N; i++) {
		KASSERT((objs[i] = ksync_objcache_alloc(c1)));
		memset(objs[i], 0xff, 64);
		slabs1[i] = (uintptr_t)objs[i] & ~(uintptr_t)(stats(c1).slab_size - 1);
	}
	for (int i = 0; i < N; i++)
		ksync_objcache_free(c1, objs[i]);
	KCHECK_EQ(ksync_objcache_destroy(c1), 0);
	c2 = make("reuse2", 64, 0, KSYNC_OBJCACHE_CHARGE_HANDLES, false, NULL, 0);
	for (int i = 0; i < N; i++) {
		uintptr_t s;

		KASSERT((objs[i] = ksync_objcache_alloc(c2)));
		s = (uintptr_t)objs[i] & ~(uintptr_t)(stats(c2).slab_size - 1);
		for (int j = 0; j < N && !reused; j++)
			reused = slabs1[j] == s;
	}
	KCHECK(reused);
	KCHECK_EQ(stats(c2).active_objects, (unsigned long)N);
	for (int i = 0; i < N; i++)
		ksync_objcache_free(c2, objs[i]);
	KCHECK_EQ(stats(c2).active_objects, 0UL);
	KCHECK_EQ(ksync_objcache_destroy(c2), 0);
	ksync_objcache_free(pin, keep);
	KCHECK_EQ(ksync_objcache_destroy(pin), 0);
	KCHECK_EQ(warns(), w);
}

KTEST(no_magazines_empty_slab_limit)
{
	struct ksync_objcache_config cfg = { .magazine_size = 1, .max_empty_slabs = 1 };
	struct ksync_objcache *c = ksync_objcache_create_config("nomag", 4100, 0, 0, NULL, &cfg);
	void *o[64];
	struct ksync_objcache_stats st;

	KASSERT(c);
	for (int i = 0; i < 64; i++)
		KASSERT((o[i] = ksync_objcache_alloc(c)));
	st = stats(c);
	KCHECK_EQ(st.objects_per_slab, 15UL);
	KCHECK_EQ(st.slabs, 5UL);
	KCHECK_EQ(st.magazine_objects, 0UL);
	for (int i = 0; i < 64; i++)
		ksync_objcache_free(c, o[i]);
	st = stats(c);
	KCHECK_EQ(st.slabs, 1UL); /* empty slabs past the limit went back at once */
	KCHECK_EQ(st.empty_slabs, 1UL);
	/* Reuse: the kept slab serves the next alloc, LIFO. */
	o[0] = ksync_objcache_alloc(c);
	KCHECK_EQ(stats(c).slabs, 1UL);
	ksync_objcache_free(c, o[0]);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
}

KTEST(hwcache_align_and_slabinfo)
{
	struct ksync_objcache *c = ksync_objcache_create("hw", 24, 0, KSYNC_OBJCACHE_HWCACHE_ALIGN, NULL);
	void *o = ksync_objcache_alloc(c);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	KASSERT(c && o && f);
	KCHECK(((uintptr_t)o & 63) == 0);
	KCHECK_EQ(stats(c).stride, (size_t)64);
	KCHECK(ksync_objcache_slabinfo(f) >= 1);
	fclose(f);
	KCHECK(strstr(buf, "slabinfo - version: 2.1") != NULL);
	KCHECK(strstr(buf, "hw ") != NULL);
	free(buf);
	ksync_objcache_free(c, o);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
}

/* ------------------------------------------------------------------------ */
/* Misuse                                                                   */

KTEST(misuse)
{
	struct ksync_objcache *a = ksync_objcache_create("ma", 32, 0, 0, NULL);
	struct ksync_objcache *b = ksync_objcache_create("mb", 32, 0, 0, NULL);
	void *o, *p;
	void *block = aligned_alloc(KSYNC_OBJCACHE_SLAB_SIZE, KSYNC_OBJCACHE_SLAB_SIZE);
	int line;

	KASSERT(a && b && block);
	memset(block, 0, KSYNC_OBJCACHE_SLAB_SIZE);
	ksync_warn_hook = kt_record_report;
	reports = 0;

	line = __LINE__; KCHECK(ksync_objcache_create("z", 0, 0, 0, NULL) == NULL);
	KCHECK_EQ(reports, 1);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK(ksync_objcache_create("z", KSYNC_OBJCACHE_MAX_SIZE + 1, 0, 0, NULL) == NULL);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK(ksync_objcache_create("z", 8, 24, 0, NULL) == NULL);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK(ksync_objcache_create("z", 8, 8192, 0, NULL) == NULL);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK(ksync_objcache_create("z", 8, 0, 1U << 9, NULL) == NULL);
	KCHECK_EQ(report_line, line);
	KCHECK_EQ(reports, 5);

	o = ksync_objcache_alloc(a);
	p = ksync_objcache_alloc(a);
	KASSERT(o && p);
	ksync_objcache_free(a, o);
	line = __LINE__; ksync_objcache_free(a, o); /* double free */
	KCHECK_EQ(reports, 6);
	KCHECK_EQ(report_line, line);
	line = __LINE__; ksync_objcache_free(b, p); /* wrong cache */
	KCHECK_EQ(reports, 7);
	KCHECK_EQ(report_line, line);
	line = __LINE__; ksync_objcache_free(a, (char *)p + 1); /* not an object's start */
	KCHECK_EQ(reports, 8);
	KCHECK_EQ(report_line, line);
	line = __LINE__; ksync_objcache_free(a, (char *)block + 128); /* no cache's */
	KCHECK_EQ(reports, 9);
	KCHECK_EQ(report_line, line);
	/* p is still live and still a's: */
	line = __LINE__; KCHECK_EQ(ksync_objcache_destroy(a), -EBUSY); /* live objects: leaked, kept */
	KCHECK_EQ(reports, 10);
	KCHECK_EQ(report_line, line);
	o = ksync_objcache_alloc(a); /* still usable */
	KCHECK(o != NULL);
	ksync_objcache_free(a, o);
	ksync_objcache_free(a, p);
	KCHECK_EQ(ksync_objcache_destroy(a), 0);
	line = __LINE__; KCHECK(ksync_objcache_alloc(a) == NULL); /* destroyed */
	KCHECK_EQ(reports, 11);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK_EQ(ksync_objcache_destroy(a), -EINVAL);
	KCHECK_EQ(reports, 12);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK_EQ(ksync_objcache_set_stock_slots(0), -EINVAL);
	KCHECK_EQ(report_line, line);
	line = __LINE__; KCHECK_EQ(ksync_objcache_set_stock_slots(KSYNC_OBJCACHE_STOCK_MAX + 1), -EINVAL);
	KCHECK_EQ(report_line, line);
	KCHECK_EQ(reports, 14);
	ksync_warn_hook = NULL;
	KCHECK_EQ(ksync_objcache_destroy(b), 0);
	free(block);
}

/* ------------------------------------------------------------------------ */
/* Design A: a child cache per group                                        */

KTEST(design_a_dead_cache_pins_group)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("a", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_PER_GROUP, false, set, 0);
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	void *keep, *tmp[100];
	struct ksync_objcache_stats st;
	unsigned long w = warns();

	KASSERT(g);
	keep = ksync_objcache_alloc_group(c, g);
	for (int i = 0; i < 100; i++)
		KASSERT((tmp[i] = ksync_objcache_alloc_group(c, g)));
	KASSERT(keep);
	st = stats(c);
	KCHECK_EQ(st.children_alive, 1UL);
	KCHECK_EQ(st.active_objects, 101UL);
	KCHECK_EQ(ksync_objcache_group_objects(c, g), 101UL);
	KCHECK_EQ(ksync_objcache_group_objects(c, NULL), 0UL);
	KCHECK(ksync_objcache_group_pinned(c, g));
	KCHECK(ksync_objcache_obj_group(c, keep) == g);
	for (int i = 0; i < 100; i++)
		ksync_objcache_free(c, tmp[i]);
	KCHECK(stats(c).magazine_objects > 0); /* the child's magazine */

	ksync_memgroup_get(g); /* to look at it after offline */
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	st = stats(c);
	KCHECK_EQ(st.children_alive, 0UL);
	KCHECK_EQ(st.children_dead, 1UL);
	KCHECK_EQ(st.magazine_objects, 0UL); /* deactivated: no magazines */
	KCHECK_EQ(st.empty_slabs, 0UL);      /* and no empty slabs */
	KCHECK(ksync_objcache_group_pinned(c, g)); /* the kernel's problem */
	KCHECK_EQ(ksync_objcache_group_objects(c, g), 1UL);
	KCHECK_EQ(ksync_memgroup_state(g), KSYNC_MEMGROUP_DEAD);
	ksync_memgroup_put(g);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 1); /* pinned by the dead cache */

	ksync_objcache_free(c, keep); /* the last object: self-destruction */
	st = stats(c);
	KCHECK_EQ(st.children_dead, 0UL);
	KCHECK_EQ(st.children_destroyed, 1UL);
	KCHECK_EQ(st.slabs, 0UL);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0); /* the group went with it */
	/* An unaccounted alloc comes from the root. */
	tmp[0] = ksync_objcache_alloc(c);
	KCHECK_EQ(ksync_objcache_group_objects(c, NULL), 1UL);
	ksync_objcache_free(c, tmp[0]);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	KCHECK_EQ(warns(), w);
}

KTEST(design_a_reparent)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("ar", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_PER_GROUP, true, set, 0);
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *g = ksync_memgroup_create(set, p);
	void *keep = ksync_objcache_alloc_group(c, g);
	void *pk = ksync_objcache_alloc_group(c, p);
	unsigned long w = warns();

	KASSERT(keep && pk);
	KCHECK_EQ(stats(c).children_alive, 2UL);
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	/* g's dead cache pins p now, not g: g is freed. */
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 1);
	KCHECK(ksync_objcache_group_pinned(c, p));
	KCHECK_EQ(ksync_objcache_group_objects(c, p), 2UL);
	KCHECK_EQ(stats(c).children_dead, 1UL);
	/* p goes offline: its own child deactivated, both move past the top. */
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);
	KCHECK_EQ(stats(c).children_dead, 2UL);
	KCHECK_EQ(ksync_objcache_group_objects(c, NULL), 2UL);
	ksync_objcache_free(c, keep);
	ksync_objcache_free(c, pk);
	KCHECK_EQ(stats(c).children_dead, 0UL);
	KCHECK_EQ(stats(c).children_destroyed, 2UL);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	KCHECK_EQ(warns(), w);
}

KTEST(design_a_destroy_waits_for_children)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c1 = make("a1", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_PER_GROUP, false, set, 0);
	struct ksync_objcache *c2 = make("a2", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_PER_GROUP, true, set, 0);
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	void *o1 = ksync_objcache_alloc_group(c1, g), *o2 = ksync_objcache_alloc_group(c2, g);

	KASSERT(o1 && o2);
	ksync_objcache_free(c1, o1);
	/* c1 has a live empty child and other A caches share the client:
	 * destroy deactivates the child and waits for its end. */
	KCHECK_EQ(ksync_objcache_destroy(c1), 0);
	/* c2 has a live object in g's child: -EBUSY, kept. */
	ksync_warn_hook = kt_record_report;
	reports = 0;
	KCHECK_EQ(ksync_objcache_destroy(c2), -EBUSY);
	KCHECK_EQ(reports, 1);
	ksync_warn_hook = NULL;
	ksync_objcache_free(c2, o2);
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	KCHECK_EQ(ksync_objcache_destroy(c2), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* Forced schedules through the yield hook: the group goes offline at the
 * point named, on the same thread (offline may run inside the set's read
 * section, where the points are). */
struct offline_at {
	int point;
	struct ksync_memgroup *g;
	int fired;
};

static void offline_hook(struct ksync_objcache *cache, int point, void *arg)
{
	struct offline_at *o = arg;

	(void)cache;
	if (point != o->point || o->fired)
		return;
	o->fired = 1;
	KCHECK_EQ(ksync_memgroup_offline(o->g), 0);
}

static void forced_schedule(bool reparent, int point)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("fs", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_PER_GROUP, reparent, set, 0);
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	struct offline_at o = { point, g, 0 };
	void *first, *second;

	ksync_memgroup_get(g);
	first = ksync_objcache_alloc_group(c, g); /* creates the child */
	KASSERT(first);
	ksync_objcache_set_yield_hook(offline_hook, &o);
	if (point == KSYNC_OBJCACHE_YP_ALLOC_CHILD_FOUND) {
		/* alloc-during-deactivate: the child dies between lookup and use */
		second = ksync_objcache_alloc_group(c, g);
		KASSERT(second);
		ksync_objcache_set_yield_hook(NULL, NULL);
		KCHECK_EQ(o.fired, 1);
		KCHECK_EQ(stats(c).children_dead, 1UL);
		ksync_objcache_free(c, second);
		ksync_objcache_free(c, first);
	} else {
		/* free-during-offline: the last object's free races the offline */
		ksync_objcache_free(c, first);
		ksync_objcache_set_yield_hook(NULL, NULL);
		KCHECK_EQ(o.fired, 1);
	}
	/* Either way the dead child ended with its last object. */
	KCHECK_EQ(stats(c).children_dead, 0UL);
	KCHECK_EQ(stats(c).children_destroyed, 1UL);
	KCHECK_EQ(stats(c).active_objects, 0UL);
	ksync_memgroup_put(g);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(design_a_alloc_during_deactivate)
{
	forced_schedule(false, KSYNC_OBJCACHE_YP_ALLOC_CHILD_FOUND);
	forced_schedule(true, KSYNC_OBJCACHE_YP_ALLOC_CHILD_FOUND);
}

KTEST(design_a_free_during_offline)
{
	forced_schedule(false, KSYNC_OBJCACHE_YP_FREE_CHILD_FOUND);
	forced_schedule(true, KSYNC_OBJCACHE_YP_FREE_CHILD_FOUND);
}

/* ------------------------------------------------------------------------ */
/* Design B: charge handles                                                 */

static long stat_of(struct ksync_memgroup *g, int item)
{
	return ksync_memgroup_stat_read(g, 0, item);
}

KTEST(design_b_charges_and_offline)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("b", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *g = ksync_memgroup_create(set, p);
	void *o[10];
	unsigned long w = warns();

	for (int i = 0; i < 10; i++)
		KASSERT((o[i] = ksync_objcache_alloc_group(c, g)));
	ksync_objcache_drain_thread(); /* flush the stock's pending charges */
	KCHECK_EQ(stat_of(g, KSYNC_MEMGROUP_STAT_OBJECTS), 10L);
	KCHECK_EQ(stat_of(g, KSYNC_MEMGROUP_STAT_BYTES), 640L);
	KCHECK_EQ(ksync_objcache_group_objects(c, g), 10UL);
	KCHECK(!ksync_objcache_group_pinned(c, g));
	KCHECK_EQ(stats(c).children_alive, 0UL);
	for (int i = 0; i < 5; i++)
		ksync_objcache_free(c, o[i]);
	ksync_objcache_drain_thread();
	KCHECK_EQ(stat_of(g, KSYNC_MEMGROUP_STAT_OBJECTS), 5L);
	/* Offline: the handle moves to p; objects do not pin g. */
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 1);
	KCHECK_EQ(ksync_objcache_group_objects(c, p), 5UL);
	for (int i = 5; i < 10; i++)
		ksync_objcache_free(c, o[i]);
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_objcache_group_objects(c, p), 0UL);
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	KCHECK_EQ(warns(), w);
}

static bool stock_has(struct ksync_objcg *h)
{
	struct ksync_objcg *s[KSYNC_OBJCACHE_STOCK_MAX];
	int n = ksync_objcache_thread_stock(s, KSYNC_OBJCACHE_STOCK_MAX);

	for (int i = 0; i < n; i++)
		if (s[i] == h)
			return true;
	return false;
}

KTEST(design_b_stock_never_holds_dying_handle)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bs", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *h = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *d = ksync_memgroup_create(set, NULL);
	struct ksync_objcg *gh = ksync_memgroup_get_objcg(g), *dh = ksync_memgroup_get_objcg(d);
	void *og, *oh, *od;

	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), 0);
	og = ksync_objcache_alloc_group(c, g);
	KCHECK(stock_has(gh));
	/* g goes offline: the next miss sweeps its slot. */
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	oh = ksync_objcache_alloc_group(c, h);
	KCHECK(!stock_has(gh));
	/* A dying group (held, offline) is charged but never cached. */
	ksync_memgroup_get(d);
	KCHECK_EQ(ksync_memgroup_offline(d), 0);
	od = ksync_objcache_alloc_group(c, d);
	KASSERT(og && oh && od);
	KCHECK(!stock_has(dh));
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), 1); /* h's only */
	ksync_objcache_free(c, og);
	ksync_objcache_free(c, oh);
	ksync_objcache_free(c, od);
	ksync_memgroup_put(d);
	ksync_objcg_put(gh);
	ksync_objcg_put(dh);
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_memgroup_offline(h), 0);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* A thread cycling among 8 groups with 5 slots: LRU evicted the group
 * needed soonest at every charge; the bimodal insertion keeps most slots. */
KTEST(design_b_stock_survives_a_cycle)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bc", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *g[8];
	struct ksync_objcg *before[KSYNC_OBJCACHE_STOCK_MAX], *after[KSYNC_OBJCACHE_STOCK_MAX];
	int n, kept = 0;

	for (int i = 0; i < 8; i++)
		KASSERT((g[i] = ksync_memgroup_create(set, NULL)));
	for (int r = 0; r < 10; r++)
		for (int i = 0; i < 8; i++)
			ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[i]));
	n = ksync_objcache_thread_stock(before, KSYNC_OBJCACHE_STOCK_MAX);
	KCHECK_EQ(n, KSYNC_OBJCACHE_STOCK_MAX);
	for (int i = 0; i < 8; i++)
		ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[i]));
	KCHECK_EQ(ksync_objcache_thread_stock(after, KSYNC_OBJCACHE_STOCK_MAX), KSYNC_OBJCACHE_STOCK_MAX);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < KSYNC_OBJCACHE_STOCK_MAX; j++)
			kept += before[i] == after[j];
	KCHECK(kept >= 3);
	ksync_objcache_drain_thread();
	for (int i = 0; i < 8; i++) {
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(design_b_stock_slots)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bk", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *g[8];
	void *o[8][4];

	for (int i = 0; i < 8; i++)
		KASSERT((g[i] = ksync_memgroup_create(set, NULL)));
	KCHECK_EQ(ksync_objcache_stock_slots(), KSYNC_OBJCACHE_STOCK_MAX);
	for (int r = 0; r < 4; r++)
		for (int i = 0; i < 8; i++)
			o[i][r] = ksync_objcache_alloc_group(c, g[i]);
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), 5);
	KCHECK_EQ(ksync_objcache_set_stock_slots(1), KSYNC_OBJCACHE_STOCK_MAX);
	ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[0]));
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), 1);
	for (int i = 0; i < 8; i++)
		for (int r = 0; r < 4; r++)
			ksync_objcache_free(c, o[i][r]);
	ksync_objcache_drain_thread();
	/* Every charge reached its group whatever the evictions. */
	for (int i = 0; i < 8; i++) {
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_BYTES), 0L);
		KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_set_stock_slots(KSYNC_OBJCACHE_STOCK_MAX), 1);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* ---- the park: the stock's entries, slots or parked, in hashed sets ---- */

static bool parked_has(struct ksync_objcg *h)
{
	struct ksync_objcg *p[64];
	int n = ksync_objcache_thread_parked(p, 64);

	KASSERT(n <= 64);
	for (int i = 0; i < n; i++)
		if (p[i] == h)
			return true;
	return false;
}

/* @g's handle, compared only (the group holds it while online). */
static struct ksync_objcg *handle_of(struct ksync_memgroup *g)
{
	struct ksync_objcg *h = ksync_memgroup_get_objcg(g);

	KASSERT(h != NULL);
	ksync_objcg_put(h);
	return h;
}

/* More groups than the slots and the park hold (in one park set): the park
 * stays bounded (a parked entry is dropped, flushed, its references put, to
 * make room), no group has two entries, and every charge lands. */
KTEST(design_b_park_overflow)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bp", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *pool[512], *g[32];
	void *o[32][3];
	int ways = 0, want, n = 0, made = 0;

	(void)ksync_objcache_park_set(NULL, &ways);
	want = KSYNC_OBJCACHE_STOCK_MAX + ways + 1;
	KASSERT(want <= 32);
	/* Make groups until want of them share the first one's set. */
	while (n < want && made < 512) {
		struct ksync_memgroup *x = ksync_memgroup_create(set, NULL);

		KASSERT(x != NULL);
		pool[made++] = x;
		if (!n || ksync_objcache_park_set(x, NULL) == ksync_objcache_park_set(g[0], NULL))
			g[n++] = x;
	}
	KASSERT(n == want);
	ksync_objcache_drain_thread();
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < n; i++) {
			KASSERT((o[i][r] = ksync_objcache_alloc_group(c, g[i])));
			KCHECK(ksync_objcache_thread_parked(NULL, 0) <= ways);
		}
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), KSYNC_OBJCACHE_STOCK_MAX);
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), ways);
	/* No group twice: the slots' and the parked handles are distinct. */
	{
		struct ksync_objcg *h[64];
		int k = ksync_objcache_thread_stock(h, 32);

		k += ksync_objcache_thread_parked(h + k, 32);
		for (int i = 0; i < k; i++)
			for (int j = i + 1; j < k; j++)
				KCHECK(h[i] != h[j]);
	}
	ksync_objcache_drain_thread();
	for (int i = 0; i < n; i++) {
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_OBJECTS), 3L);
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_BYTES), 3L * 64);
	}
	for (int i = 0; i < n; i++)
		for (int r = 0; r < 3; r++)
			ksync_objcache_free(c, o[i][r]);
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 0);
	for (int i = 0; i < made; i++) {
		KCHECK_EQ(stat_of(pool[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(ksync_memgroup_offline(pool[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* A thread cycling among 8 groups: the 3 evicted ones are parked, with
 * their references; a charge of a parked group makes it a slot again. */
KTEST(design_b_parked_entries_return)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("br", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *g[8];
	int ways = 0, per[64] = { 0 }, p = -1;

	(void)ksync_objcache_park_set(NULL, &ways);
	for (int i = 0; i < 8; i++) {
		KASSERT((g[i] = ksync_memgroup_create(set, NULL)));
		per[ksync_objcache_park_set(g[i], NULL)]++;
	}
	for (int i = 0; i < 64; i++)
		KASSERT(per[i] <= ways); /* no set overflows: nothing is pushed out */
	ksync_objcache_drain_thread();
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 8; i++)
			ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[i]));
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), KSYNC_OBJCACHE_STOCK_MAX);
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 8 - KSYNC_OBJCACHE_STOCK_MAX);
	for (int i = 0; i < 8 && p < 0; i++)
		if (parked_has(handle_of(g[i])))
			p = i;
	KASSERT(p >= 0);
	KCHECK(!stock_has(handle_of(g[p])));
	ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[p]));
	KCHECK(stock_has(handle_of(g[p])));
	KCHECK(!parked_has(handle_of(g[p])));
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 8 - KSYNC_OBJCACHE_STOCK_MAX);
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 0);
	for (int i = 0; i < 8; i++) {
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* A group goes offline while its entry is parked: the next miss sweeps the
 * entry (its charges land on the parent, where the handle went), and a
 * charge of the dying group itself, before any miss, drops the entry and
 * charges its parent without caching anything for it. */
enum after_offline { THEN_MISS, THEN_CHARGED, THEN_SWAPPED };

static void offline_while_parked(enum after_offline then)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bo", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *parent = ksync_memgroup_create(set, NULL), *g[7], *x = NULL;
	struct ksync_objcg *xh;
	void *live, *o;

	KASSERT(parent != NULL);
	for (int i = 0; i < 7; i++)
		KASSERT((g[i] = ksync_memgroup_create(set, parent)));
	ksync_objcache_drain_thread();
	x = g[0];
	xh = handle_of(x);
	live = ksync_objcache_alloc_group(c, x); /* x's slot holds its charge, pending */
	KASSERT(live != NULL);
	/* The others, in turn, until x's entry is rotated out (bimodal
	 * insertion keeps some slots through cycles: a few rounds). */
	for (int r = 0; r < 64 && !parked_has(xh); r++)
		for (int i = 1; i < 7; i++)
			ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[i]));
	KASSERT(parked_has(xh)); /* with the live object's charge */
	ksync_memgroup_get(x); /* kept in memory across its offline */
	KCHECK_EQ(ksync_memgroup_offline(x), 0);
	if (then == THEN_SWAPPED) {
		/* Not a miss: another parked group comes back as a slot (its
		 * entry swapped with a slot's, nothing looked up); the charge
		 * still sweeps first. */
		struct ksync_memgroup *y = NULL;

		for (int i = 1; i < 7 && !y; i++)
			if (parked_has(handle_of(g[i])))
				y = g[i];
		KASSERT(y != NULL);
		ksync_objcache_free(c, ksync_objcache_alloc_group(c, y));
		KCHECK(stock_has(handle_of(y)));
		KCHECK(!parked_has(xh));
		KCHECK(!stock_has(xh));
	} else if (then == THEN_CHARGED) {
		o = ksync_objcache_alloc_group(c, x);
		KASSERT(o != NULL);
		KCHECK(ksync_objcache_obj_group(c, o) == parent);
		KCHECK(!parked_has(xh));
		KCHECK(!stock_has(xh));
		ksync_objcache_free(c, o);
	} else {
		/* A miss: a group of the thread not in its stock. */
		struct ksync_memgroup *y = ksync_memgroup_create(set, parent);

		KASSERT(y != NULL);
		ksync_objcache_free(c, ksync_objcache_alloc_group(c, y));
		KCHECK(!parked_has(xh));
		KCHECK(!stock_has(xh));
		ksync_objcache_drain_thread();
		KCHECK_EQ(ksync_memgroup_offline(y), 0);
	}
	ksync_objcache_drain_thread();
	/* The live object's charge followed its handle to the parent. */
	KCHECK_EQ(stat_of(parent, KSYNC_MEMGROUP_STAT_OBJECTS), 1L);
	ksync_objcache_free(c, live);
	ksync_objcache_drain_thread();
	KCHECK_EQ(stat_of(parent, KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
	ksync_memgroup_put(x);
	for (int i = 0; i < 7; i++)
		if (g[i] != x)
			KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	KCHECK_EQ(ksync_memgroup_offline(parent), 0);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(design_b_offline_while_parked_then_miss)
{
	offline_while_parked(THEN_MISS);
}

KTEST(design_b_offline_while_parked_then_charged)
{
	offline_while_parked(THEN_CHARGED);
}

KTEST(design_b_offline_while_parked_then_swapped)
{
	offline_while_parked(THEN_SWAPPED);
}

/* Frees in another order than the charges: a free tries the entry last
 * charged first, then looks its handle up among all the entries, slots or
 * parked; every charge and reference comes back to its own group. */
KTEST(design_b_frees_out_of_order)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bf", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *g[8];
	void *o[8][5];

	for (int i = 0; i < 8; i++)
		KASSERT((g[i] = ksync_memgroup_create(set, NULL)));
	ksync_objcache_drain_thread();
	for (int r = 0; r < 5; r++)
		for (int i = 0; i < 8; i++)
			KASSERT((o[i][r] = ksync_objcache_alloc_group(c, g[i])));
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), KSYNC_OBJCACHE_STOCK_MAX);
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 8 - KSYNC_OBJCACHE_STOCK_MAX);
	/* Group by group from the last, each group's objects newest first:
	 * no free but the first finds its handle in the entry last charged. */
	for (int i = 7; i >= 0; i--) {
		for (int r = 4; r >= 0; r--)
			ksync_objcache_free(c, o[i][r]);
		ksync_objcache_drain_thread();
		for (int j = 0; j < 8; j++)
			KCHECK_EQ(stat_of(g[j], KSYNC_MEMGROUP_STAT_OBJECTS), j < i ? 5L : 0L);
		/* The stock was drained: charge the remaining groups again. */
		for (int j = 0; j < i; j++)
			ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[j]));
	}
	ksync_objcache_drain_thread();
	for (int i = 0; i < 8; i++) {
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_BYTES), 0L);
		KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* Two groups whose charges try the same bucket of the stock's hints: each
 * charge finds the other group's entry there and looks its own up; nothing
 * is charged to the wrong group and no group gets two entries. */
KTEST(design_b_shared_hint)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("bh", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *pool[256], *a = NULL, *b = NULL;
	int buckets = 0, made = 0, owner[256];
	void *o[2][8];

	(void)ksync_objcache_stock_hint(NULL, &buckets);
	KASSERT(buckets > 0 && buckets <= 256);
	for (int i = 0; i < buckets; i++)
		owner[i] = -1;
	/* More groups than buckets: two of them share one. */
	while (!b && made < 256) {
		struct ksync_memgroup *x = ksync_memgroup_create(set, NULL);
		int h;

		KASSERT(x != NULL);
		h = ksync_objcache_stock_hint(x, NULL);
		KASSERT(h >= 0 && h < buckets);
		pool[made] = x;
		if (owner[h] >= 0) {
			a = pool[owner[h]];
			b = x;
		}
		owner[h] = made++;
	}
	KASSERT(a && b);
	ksync_objcache_drain_thread();
	for (int r = 0; r < 8; r++) {
		KASSERT((o[0][r] = ksync_objcache_alloc_group(c, a)));
		KASSERT((o[1][r] = ksync_objcache_alloc_group(c, b)));
	}
	KCHECK(stock_has(handle_of(a)));
	KCHECK(stock_has(handle_of(b)));
	KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), 2);
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 0);
	ksync_objcache_drain_thread();
	KCHECK_EQ(stat_of(a, KSYNC_MEMGROUP_STAT_OBJECTS), 8L);
	KCHECK_EQ(stat_of(b, KSYNC_MEMGROUP_STAT_OBJECTS), 8L);
	for (int r = 0; r < 8; r++) {
		ksync_objcache_free(c, o[0][r]);
		ksync_objcache_free(c, o[1][r]);
	}
	ksync_objcache_drain_thread();
	for (int i = 0; i < made; i++) {
		KCHECK_EQ(stat_of(pool[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(ksync_memgroup_offline(pool[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* The one-slot stock is the kernel's: going from five slots to one drops
 * the park, and a thread cycling among groups then parks nothing. */
KTEST(design_b_one_slot_parks_nothing)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c = make("b1", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0);
	struct ksync_memgroup *g[8];
	void *live;

	for (int i = 0; i < 8; i++)
		KASSERT((g[i] = ksync_memgroup_create(set, NULL)));
	ksync_objcache_drain_thread();
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 8; i++)
			ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[i]));
	KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 8 - KSYNC_OBJCACHE_STOCK_MAX);
	live = ksync_objcache_alloc_group(c, g[0]); /* pending in a slot, then parked */
	KASSERT(live != NULL);
	KCHECK_EQ(ksync_objcache_set_stock_slots(1), KSYNC_OBJCACHE_STOCK_MAX);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 8; i++) {
			ksync_objcache_free(c, ksync_objcache_alloc_group(c, g[i]));
			KCHECK_EQ(ksync_objcache_thread_parked(NULL, 0), 0);
			KCHECK_EQ(ksync_objcache_thread_stock(NULL, 0), 1);
			KCHECK(stock_has(handle_of(g[i])));
		}
	ksync_objcache_free(c, live);
	ksync_objcache_drain_thread();
	for (int i = 0; i < 8; i++) {
		KCHECK_EQ(stat_of(g[i], KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
		KCHECK_EQ(ksync_memgroup_offline(g[i]), 0);
	}
	KCHECK_EQ(ksync_objcache_set_stock_slots(KSYNC_OBJCACHE_STOCK_MAX), 1);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* ------------------------------------------------------------------------ */
/* Out of memory at every allocation                                        */

/* One scenario of both designs; returns whether it completed (every step
 * either worked or failed cleanly). */
static void scenario(enum ksync_objcache_design d, bool reparent)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_objcache *c;
	struct ksync_memgroup *g;
	void *o[40];
	int n = 0;

	if (!set)
		return;
	g = ksync_memgroup_create(set, NULL);
	c = ksync_objcache_create_config("oom", 64, 0, KSYNC_OBJCACHE_ACCOUNT, NULL,
					 &(struct ksync_objcache_config){ .design = d, .reparent = reparent,
									  .groups = set, .magazine_size = 4 });
	if (c) {
		for (int i = 0; i < 40; i++) {
			void *p = i % 2 && g ? ksync_objcache_alloc_group(c, g) : ksync_objcache_alloc(c);

			if (p)
				o[n++] = p;
		}
		for (int i = 0; i < n; i += 2)
			ksync_objcache_free(c, o[i]);
		ksync_objcache_drain_thread();
	}
	if (g)
		KCHECK_EQ(ksync_memgroup_offline(g), 0);
	if (c) {
		for (int i = 1; i < n; i += 2)
			ksync_objcache_free(c, o[i]);
		KCHECK_EQ(ksync_objcache_destroy(c), 0);
	}
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(out_of_memory_everywhere)
{
	for (int d = 0; d < 3; d++) {
		unsigned long n, failures = 0;

		for (n = 1; n < 2000; n++) {
			unsigned long w = warns();
			bool fired;

			ksync_fail_nth_alloc(n);
			scenario(d == 2 ? KSYNC_OBJCACHE_CHARGE_HANDLES : KSYNC_OBJCACHE_PER_GROUP, d == 1);
			fired = ksync_fail_nth_alloc_fired();
			ksync_fail_nth_alloc(0);
			if (warns() != w)
				printf("  oom: design %d, allocation %lu: reported\n", d, n);
			KCHECK_EQ(warns(), w);
			if (!fired)
				break;
			failures++;
		}
		KCHECK(n < 2000);
		KCHECK(failures > 5);
		printf("  oom: design %s: %lu injected failures\n", d == 2 ? "B" : d == 1 ? "A-reparent" : "A", failures);
	}
}

/* ------------------------------------------------------------------------ */
/* Thread exit, the shrinker                                                */

struct exit_arg {
	struct ksync_objcache *c;
};

static void *exit_thread(void *p)
{
	struct exit_arg *a = p;
	void *o[20];

	for (int i = 0; i < 20; i++)
		o[i] = ksync_objcache_alloc(a->c);
	for (int i = 0; i < 20; i++)
		ksync_objcache_free(a->c, o[i]);
	return NULL;
}

KTEST(thread_exit_flushes_magazines)
{
	struct exit_arg a = { ksync_objcache_create("exit", 48, 0, 0, NULL) };
	pthread_t t;

	KASSERT(a.c);
	KASSERT(pthread_create(&t, NULL, exit_thread, &a) == 0);
	KASSERT(pthread_join(t, NULL) == 0);
	KCHECK_EQ(stats(a.c).magazine_objects, 0UL);
	KCHECK_EQ(stats(a.c).active_objects, 0UL);
	KCHECK_EQ(ksync_objcache_destroy(a.c), 0);
}

/* ---- each thread's magazines refill from a slab of their own ---- */

struct slab_arg {
	struct ksync_objcache *c;
	void *obj;      /* allocated by the thread, kept */
	bool free_it;   /* free it before the thread exits */
};

static void *slab_thread(void *p)
{
	struct slab_arg *a = p;

	a->obj = ksync_objcache_alloc(a->c);
	if (a->free_it)
		ksync_objcache_free(a->c, a->obj);
	return NULL;
}

static uintptr_t slab_of(struct ksync_objcache *c, void *obj)
{
	return (uintptr_t)obj & ~(uintptr_t)(stats(c).slab_size - 1);
}

/* Two threads whose magazines shared a slab shared its live bitmap's words
 * (an atomic RMW per alloc and per free): at every pair each pulled the
 * other's cache line. A refill now takes a slab no other thread refills
 * from while there is one (a new slab rather than another thread's), and a
 * thread's exit gives its slab to the next comer. */
KTEST(threads_refill_from_their_own_slabs)
{
	struct ksync_objcache *c = ksync_objcache_create("own", 64, 0, 0, NULL);
	struct slab_arg b = { .c = NULL }, d = { .c = NULL };
	pthread_t t;
	void *mine;

	KASSERT(c);
	b.c = d.c = c;
	mine = ksync_objcache_alloc(c); /* this thread's magazine: half a magazine from slab 1 */
	KASSERT(mine);
	KCHECK_EQ(stats(c).slabs, 1UL);
	KASSERT(pthread_create(&t, NULL, slab_thread, &b) == 0);
	KASSERT(pthread_join(t, NULL) == 0);
	KASSERT(b.obj);
	/* Slab 1 had free objects, but this thread refills from it. */
	KCHECK(slab_of(c, b.obj) != slab_of(c, mine));
	KCHECK_EQ(stats(c).slabs, 2UL);
	/* b exited holding its object: its slab is nobody's now. */
	KASSERT(pthread_create(&t, NULL, slab_thread, &d) == 0);
	KASSERT(pthread_join(t, NULL) == 0);
	KASSERT(d.obj);
	KCHECK(slab_of(c, d.obj) == slab_of(c, b.obj));
	KCHECK_EQ(stats(c).slabs, 2UL);
	ksync_objcache_free(c, b.obj);
	ksync_objcache_free(c, d.obj);
	ksync_objcache_free(c, mine);
	ksync_objcache_drain_thread();
	KCHECK_EQ(stats(c).active_objects, 0UL);
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
}

struct stock_exit_arg {
	struct ksync_objcache *c;
	struct ksync_memgroup *g;
	void *keep[7];
};

static void *stock_exit_thread(void *p)
{
	struct stock_exit_arg *a = p;

	for (int i = 0; i < 7; i++)
		a->keep[i] = ksync_objcache_alloc_group(a->c, a->g);
	for (int i = 0; i < 3; i++)
		ksync_objcache_free(a->c, ksync_objcache_alloc_group(a->c, a->g));
	return NULL; /* the stock holds g's pending charges: exit flushes them */
}

KTEST(thread_exit_flushes_stock)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct stock_exit_arg a = { make("sx", 64, KSYNC_OBJCACHE_ACCOUNT, KSYNC_OBJCACHE_CHARGE_HANDLES, false, set, 0),
				    ksync_memgroup_create(set, NULL), { 0 } };
	pthread_t t;

	KASSERT(pthread_create(&t, NULL, stock_exit_thread, &a) == 0);
	KASSERT(pthread_join(t, NULL) == 0);
	KCHECK_EQ(stat_of(a.g, KSYNC_MEMGROUP_STAT_OBJECTS), 7L);
	KCHECK_EQ(stat_of(a.g, KSYNC_MEMGROUP_STAT_BYTES), 7L * 64);
	for (int i = 0; i < 7; i++)
		ksync_objcache_free(a.c, a.keep[i]);
	ksync_objcache_drain_thread();
	KCHECK_EQ(stat_of(a.g, KSYNC_MEMGROUP_STAT_OBJECTS), 0L);
	KCHECK_EQ(ksync_memgroup_offline(a.g), 0);
	KCHECK_EQ(ksync_objcache_destroy(a.c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(shrinker_frees_empty_slabs)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_objcache_config cfg = { .shrinkers = reg, .max_empty_slabs = 8 };
	struct ksync_objcache *c;
	enum { N = 2000 };
	void **o = calloc(N, sizeof(void *));
	struct ksync_objcache_stats st;
	unsigned long freed;

	KASSERT(reg && o);
	c = ksync_objcache_create_config("shr", 200, 0, 0, NULL, &cfg);
	KASSERT(c);
	for (int i = 0; i < N; i++)
		KASSERT((o[i] = ksync_objcache_alloc(c)));
	for (int i = 0; i < N; i++)
		ksync_objcache_free(c, o[i]);
	st = stats(c);
	KCHECK(st.empty_slabs >= 2);
	KCHECK(st.magazine_objects > 0);
	freed = 0;
	for (int prio = KSYNC_DEF_PRIORITY; prio >= 0 && stats(c).slabs; prio--)
		freed += ksync_shrink_slab(reg, 0, NULL, prio);
	KCHECK(freed > 0);
	st = stats(c);
	KCHECK_EQ(st.slabs, 0UL);
	KCHECK_EQ(st.magazine_objects, 0UL); /* this (idle) thread's magazine was drained */
	KCHECK_EQ(ksync_objcache_destroy(c), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	free(o);
}

/* ------------------------------------------------------------------------ */
/* Concurrency: cross-thread frees, offline racing allocations              */

enum { CT = 4, CN = 400 };

struct churn {
	struct ksync_objcache *c;
	struct ksync_memgroup *g[CT];
	void *handoff[CT][CN];
	pthread_barrier_t bar;
	int id;
};

static void *churn_thread(void *p)
{
	struct churn *ch = p;
	int me = __atomic_fetch_add(&ch->id, 1, __ATOMIC_RELAXED);
	void *mine[CN];

	for (int i = 0; i < CN; i++)
		mine[i] = ksync_objcache_alloc_group(ch->c, ch->g[me]);
	for (int i = 0; i < CN; i++) {
		void *t = ksync_objcache_alloc_group(ch->c, ch->g[me]);

		ksync_objcache_free(ch->c, t);
		ch->handoff[me][i] = mine[i];
	}
	pthread_barrier_wait(&ch->bar); /* hand-off: each frees the next thread's */
	for (int i = 0; i < CN; i++)
		ksync_objcache_free(ch->c, ch->handoff[(me + 1) % CT][i]);
	ksync_objcache_drain_thread();
	return NULL;
}

static void churn(enum ksync_objcache_design d, bool reparent)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct churn *ch = calloc(1, sizeof(*ch));
	pthread_t t[CT];

	KASSERT(set && ch);
	ch->c = make("churn", 40, KSYNC_OBJCACHE_ACCOUNT, d, reparent, set, 16);
	for (int i = 0; i < CT; i++) {
		ch->g[i] = ksync_memgroup_create(set, NULL);
		ksync_memgroup_get(ch->g[i]); /* threads use them after offline */
	}
	pthread_barrier_init(&ch->bar, NULL, CT + 1);
	for (int i = 0; i < CT; i++)
		KASSERT(pthread_create(&t[i], NULL, churn_thread, ch) == 0);
	/* Groups go offline while the threads allocate and free. */
	for (int i = 0; i < CT; i += 2)
		KCHECK_EQ(ksync_memgroup_offline(ch->g[i]), 0);
	(void)ksync_objcache_shrink(ch->c);
	pthread_barrier_wait(&ch->bar);
	for (int i = 0; i < CT; i++)
		KASSERT(pthread_join(t[i], NULL) == 0);
	KCHECK_EQ(stats(ch->c).active_objects, 0UL);
	KCHECK_EQ(stats(ch->c).children_dead, 0UL);
	for (int i = 1; i < CT; i += 2)
		KCHECK_EQ(ksync_memgroup_offline(ch->g[i]), 0);
	for (int i = 0; i < CT; i++)
		ksync_memgroup_put(ch->g[i]);
	ksync_objcache_drain_thread();
	KCHECK_EQ(ksync_objcache_destroy(ch->c), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
	pthread_barrier_destroy(&ch->bar);
	free(ch);
}

KTEST(concurrent_churn_a)
{
	churn(KSYNC_OBJCACHE_PER_GROUP, false);
}

KTEST(concurrent_churn_a_reparent)
{
	churn(KSYNC_OBJCACHE_PER_GROUP, true);
}

KTEST(concurrent_churn_b)
{
	churn(KSYNC_OBJCACHE_CHARGE_HANDLES, false);
}

/* ------------------------------------------------------------------------ */
/* Kernel spellings                                                         */

struct dentry_like {
	long a;
	char name[40];
};

KTEST(kernel_spellings)
{
	struct kmem_cache *k = KMEM_CACHE(dentry_like, SLAB_HWCACHE_ALIGN);
	struct kmem_cache *k2 = kmem_cache_create("k2", 32, 8, SLAB_ACCOUNT, NULL);
	struct dentry_like *d;
	char *z;

	KASSERT(k && k2);
	d = kmem_cache_alloc(k, 0);
	z = kmem_cache_zalloc(k2, 0);
	KASSERT(d && z);
	for (int i = 0; i < 32; i++)
		KCHECK_EQ(z[i], 0);
	KCHECK_EQ(kmem_cache_size(k), (unsigned)sizeof(struct dentry_like));
	KCHECK(strcmp(ksync_objcache_name(k), "dentry_like") == 0);
	kmem_cache_free(k, d);
	kmem_cache_free(k2, z);
	KCHECK(kmem_cache_shrink(k) >= 0);
	kmem_cache_destroy(k);
	kmem_cache_destroy(k2);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
