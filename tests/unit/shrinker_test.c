/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of ksync::shrinker: every public function, its error returns
 * and reports, growth, reparenting, the nr_deferred ledger, the debug
 * interface and the yield hook. Each test uses a fresh registry.
 */
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
#include <ksync/shrinker_testing.h>

#include <ksync/atomic.h>
#include <ksync/math.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"

/* A cache with a fixed object count per (group, node); group NULL = global. */
struct cache {
	long objects[8][4]; /* [group id % 8][nid] */
	long global[4];
	int count_calls, scan_calls;
	int last_nid;
	struct ksync_memgroup *last_group;
	int mode; /* 0 normal, 1 absurd count, 2 unregister self, 3 recurse, 4 synchronize */
	struct ksync_shrinker *self;
	struct ksync_shrinker_registry *reg;
	int inner_ret;
	unsigned long inner_freed;
};

static long *slot_of(struct cache *c, struct ksync_shrink_control *sc)
{
	if (!sc->group)
		return &c->global[sc->nid];
	return &c->objects[ksync_shrinker_group_id(sc->group) % 8][sc->nid];
}

static unsigned long cache_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct cache *c = s->private_data;

	c->count_calls++;
	c->last_nid = sc->nid;
	c->last_group = sc->group;
	switch (c->mode) {
	case 1:
		return ~0UL - 5;
	case 2:
		c->inner_ret = c->self->record && ksync_shrinker_name(c->self)[0] == 'o'
				       ? ksync_shrinker_free(c->self)
				       : ksync_unregister_shrinker(c->self);
		break;
	case 3:
		c->inner_freed = ksync_shrink_slab(c->reg, 0, NULL, 0);
		break;
	case 4:
		c->inner_ret = ksync_synchronize_shrinkers(c->reg);
		break;
	}
	long n = *slot_of(c, sc);
	return n ? (unsigned long)n : KSYNC_SHRINK_EMPTY;
}

static unsigned long cache_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct cache *c = s->private_data;
	long *n = slot_of(c, sc);
	unsigned long take = ksync_min((unsigned long)*n, sc->nr_to_scan);

	c->scan_calls++;
	*n -= (long)take;
	return take;
}

static struct ksync_shrinker *mk(struct ksync_shrinker_registry *reg, unsigned flags,
				 struct cache *c, const char *name)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, flags, "%s", name);

	KCHECK(s != NULL);
	s->count_objects = cache_count;
	s->scan_objects = cache_scan;
	s->private_data = c;
	c->self = s;
	c->reg = reg;
	return s;
}

KTEST(registry_create_destroy)
{
	unsigned long w = ksync_warn_count;
	KCHECK(ksync_shrinker_registry_create(0) == NULL);
	KCHECK(ksync_shrinker_registry_create(KSYNC_SHRINKER_MAX_NODES + 1) == NULL);
	KCHECK(ksync_warn_count == w + 2);
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(3);
	KCHECK(reg != NULL);
	KCHECK_EQ(ksync_shrinker_registry_nr_nodes(reg), 3);
	KCHECK(ksync_shrinker_nr_max(reg) >= 1);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(registry_destroy_busy_leaks)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	unsigned long w = ksync_warn_count;
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), -EBUSY);
	KCHECK(ksync_warn_count == w + 1);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(alloc_register_walk_free)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct cache c = { .global = { 1000 } };
	struct ksync_shrinker *s = mk(reg, 0, &c, "plain");

	KCHECK_EQ(s->id, -1);
	KCHECK(strcmp(ksync_shrinker_name(s), "plain") == 0);
	KCHECK_EQ(s->seeks, KSYNC_DEFAULT_SEEKS);
	/* Not registered yet: walks do not see it. */
	KCHECK_EQ(ksync_shrink_slab(reg, 0, NULL, 0), 0);
	KCHECK_EQ(c.count_calls, 0);
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	unsigned long freed = ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK(freed > 0);
	KCHECK_EQ(c.global[0], 1000 - (long)freed);
	KCHECK(c.count_calls >= 1 && c.scan_calls >= 1);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	int calls = c.count_calls;
	ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK_EQ(c.count_calls, calls);
	KCHECK_EQ(ksync_shrinker_free(NULL), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(free_unregistered_alloc)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "never");
	KCHECK_EQ(s->id, 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/* vsnprintf() into a name's 48 bytes (a function: truncation is the point here). */
static void __attribute__((format(printf, 2, 3))) want_name(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, 48, fmt, ap);
	va_end(ap);
}

/* One name of ksync_shrinker_alloc(), against vsnprintf() of the same format and arguments. */
#define CHECK_NAME(reg, ...)                                                                    \
	do {                                                                                    \
		char want_[64];                                                                 \
		struct ksync_shrinker *s_ = ksync_shrinker_alloc(reg, 0, __VA_ARGS__);         \
		KCHECK(s_ != NULL);                                                             \
		want_name(want_, __VA_ARGS__);                                                  \
		KCHECK(strcmp(ksync_shrinker_name(s_), want_) == 0);                            \
		KCHECK(strcmp(ksync_shrinker_name(s_), want_) == 0); /* the second read too */ \
		KCHECK_EQ(ksync_shrinker_free(s_), 0);                                          \
	} while (0)

/*
 * Names: a simple format is kept with its arguments and formatted on the
 * first read (records.c), others at allocation; both must read as snprintf()
 * into the name's 48 bytes would write them.
 */
KTEST(names_lazy_and_eager)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	char local[16];

	/* Kept lazily: integer conversions, %%, literal text. */
	CHECK_NAME(reg, "mnt-%d", 42);
	CHECK_NAME(reg, "mnt-%d", -2147483647 - 1);
	CHECK_NAME(reg, "%i/%u/%x", -7, 4000000000u, 0xbeefu);
	CHECK_NAME(reg, "%ld %lu %lx %li", -9000000000L, ~0UL, 0xfeedfaceUL, 3L);
	CHECK_NAME(reg, "100%% of %d", 5);
	CHECK_NAME(reg, "plain text");
	/* Formatted short of its digits: truncated like snprintf() into 48 bytes. */
	CHECK_NAME(reg, "a-rather-long-prefix-of-thirty-bytes-%lu-%lu", ~0UL, ~0UL);
	/* Formatted at once: %s (its string need not outlive the call), a width, five arguments. */
	snprintf(local, sizeof(local), "tmp%d", 9);
	CHECK_NAME(reg, "sb-%s", local);
	memset(local, 'x', sizeof(local) - 1); /* the name was formatted before this */
	CHECK_NAME(reg, "%5d|%-3u", 7, 8u);
	CHECK_NAME(reg, "%d.%d.%d.%d.%d", 1, 2, 3, 4, 5);
	CHECK_NAME(reg, "%c%d", 'q', 1);
	/* A format longer than the name: formatted (and truncated) at once. */
	CHECK_NAME(reg, "%d-0123456789012345678901234567890123456789012345678", 1);
	/* A lazy name read by the debug interface's show as well. */
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, 0, "show-%u", 77u);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	KCHECK(s != NULL && f != NULL);
	s->count_objects = cache_count;
	s->scan_objects = cache_scan;
	struct cache c = { 0 };
	s->private_data = &c;
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	KCHECK(ksync_shrinker_debug_show(s, f) >= 0);
	fclose(f);
	KCHECK(strncmp(buf, "show-77 -1\n", 11) == 0);
	free(buf);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(classic_shape)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct cache c = { .global = { 500 } };
	struct ksync_shrinker s = { .count_objects = cache_count, .scan_objects = cache_scan,
				    .seeks = KSYNC_DEFAULT_SEEKS, .private_data = &c };

	c.reg = reg;
	c.self = &s;
	KCHECK_EQ(ksync_prealloc_shrinker(reg, &s, "classic-%d", 1), 0);
	KCHECK(strcmp(ksync_shrinker_name(&s), "classic-1") == 0);
	KCHECK_EQ(ksync_register_shrinker_prepared(&s), 0);
	KCHECK(ksync_shrink_slab(reg, 0, NULL, 0) > 0);
	KCHECK_EQ(ksync_unregister_shrinker(&s), 0);
	KCHECK(s.record == NULL);
	/* The struct is ours again: register it in one call this time. */
	KCHECK_EQ(ksync_register_shrinker(reg, &s, "again"), 0);
	KCHECK_EQ(ksync_unregister_shrinker(&s), 0);
	/* Prealloc then free without registering. */
	KCHECK_EQ(ksync_prealloc_shrinker(reg, &s, "pre"), 0);
	ksync_free_prealloced_shrinker(&s);
	KCHECK(s.record == NULL);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(bad_input_reported)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, 0, &c, "owned");
	struct ksync_shrinker cl = { .count_objects = cache_count, .scan_objects = cache_scan,
				     .private_data = &c };
	unsigned long w;

	KCHECK_EQ(ksync_shrinker_register(s), 0);
	w = ksync_warn_count;
	KCHECK_EQ(ksync_shrinker_register(s), -EBUSY); /* double register */
	KCHECK_EQ(ksync_warn_count, w + 1);

	w = ksync_warn_count;
	KCHECK_EQ(ksync_unregister_shrinker(&cl), -ENOENT); /* never registered */
	KCHECK_EQ(ksync_warn_count, w + 1);

	/* Foreign: a struct that claims another shrinker's record. */
	struct ksync_shrinker fake = cl;
	fake.record = s->record;
	w = ksync_warn_count;
	KCHECK_EQ(ksync_unregister_shrinker(&fake), -EINVAL);
	KCHECK_EQ(ksync_shrinker_free(&fake), -EINVAL);
	KCHECK_EQ(ksync_shrinker_register(&fake), -EINVAL);
	KCHECK_EQ(ksync_warn_count, w + 3);

	/* An allocated shrinker is not unregistered with the classic call. */
	w = ksync_warn_count;
	KCHECK_EQ(ksync_unregister_shrinker(s), -EINVAL);
	KCHECK_EQ(ksync_warn_count, w + 1);

	/* Missing callbacks, unknown flags, double prealloc. */
	struct ksync_shrinker nocb = { 0 };
	w = ksync_warn_count;
	KCHECK_EQ(ksync_register_shrinker(reg, &nocb, "x"), -EINVAL);
	struct ksync_shrinker badflags = cl;
	badflags.flags = 1U << 20;
	KCHECK_EQ(ksync_register_shrinker(reg, &badflags, "x"), -EINVAL);
	KCHECK(ksync_shrinker_alloc(reg, 1U << 20, "x") == NULL);
	KCHECK_EQ(ksync_prealloc_shrinker(reg, &cl, "x"), 0);
	KCHECK_EQ(ksync_prealloc_shrinker(reg, &cl, "x"), -EBUSY);
	KCHECK_EQ(ksync_warn_count, w + 4);
	ksync_free_prealloced_shrinker(&cl);

	/* Bad nid. */
	w = ksync_warn_count;
	KCHECK_EQ(ksync_shrink_slab(reg, 5, NULL, 0), 0);
	KCHECK_EQ(ksync_warn_count, w + 1);

	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(absurd_count_reported)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct cache c = { .global = { 10 }, .mode = 1 };
	struct ksync_shrinker *s = mk(reg, 0, &c, "absurd");
	unsigned long w = ksync_warn_count;

	KCHECK_EQ(ksync_shrinker_register(s), 0);
	KCHECK_EQ(ksync_shrink_slab(reg, 0, NULL, 0), 0);
	KCHECK_EQ(c.scan_calls, 0);
	KCHECK(ksync_warn_count >= w); /* once per call site, maybe already claimed */
	KCHECK_EQ(ksync_shrinker_deferred(s, NULL, 0), 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(callback_misuse_no_deadlock)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct cache c = { .global = { 10 }, .mode = 2 };
	struct ksync_shrinker *s = mk(reg, 0, &c, "owned-self");
	unsigned long w = ksync_warn_count;

	KCHECK_EQ(ksync_shrinker_register(s), 0);
	ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK_EQ(c.inner_ret, -EDEADLK);
	KCHECK(ksync_warn_count > w);

	c.mode = 3;
	w = ksync_warn_count;
	c.inner_freed = 99;
	ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK_EQ(c.inner_freed, 0);
	KCHECK(ksync_warn_count > w);

	c.mode = 4;
	w = ksync_warn_count;
	ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK_EQ(c.inner_ret, -EDEADLK);
	KCHECK(ksync_warn_count > w);

	/* Classic shape: the callback unregisters its own caller-owned struct. */
	struct cache c2 = { .global = { 10 }, .mode = 2 };
	struct ksync_shrinker cl = { .count_objects = cache_count, .scan_objects = cache_scan,
				     .private_data = &c2 };
	c2.self = &cl;
	c2.reg = reg;
	KCHECK_EQ(ksync_register_shrinker(reg, &cl, "classic-self"), 0);
	ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK_EQ(c2.inner_ret, -EDEADLK);
	c.mode = 0;
	c2.mode = 0;
	KCHECK_EQ(ksync_unregister_shrinker(&cl), 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_synchronize_shrinkers(reg), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(group_walk_bits_and_empty)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, &c, "m");
	int gid = ksync_shrinker_group_id(g) % 8;

	KCHECK_EQ(ksync_shrinker_register(s), 0);
	/* No bit: not called. */
	c.objects[gid][1] = 100;
	KCHECK_EQ(ksync_shrink_slab(reg, 1, g, 0), 0);
	KCHECK_EQ(c.count_calls, 0);
	KCHECK_EQ(ksync_set_shrinker_bit(g, 1, s->id), 0);
	KCHECK_EQ(ksync_shrink_slab(reg, 1, g, 0), 100);
	KCHECK(c.last_group == g);
	KCHECK_EQ(c.last_nid, 1);
	KCHECK_EQ(c.objects[gid][1], 0);
	/* Empty now: the walk clears the bit, so the next walk does not call. */
	ksync_shrink_slab(reg, 1, g, 0);
	int calls = c.count_calls;
	ksync_shrink_slab(reg, 1, g, 0);
	KCHECK_EQ(c.count_calls, calls);
	/* Node 0's map is separate. */
	KCHECK_EQ(ksync_shrink_slab(reg, 0, g, 0), 0);
	KCHECK_EQ(c.count_calls, calls);
	/* NULL group: no-op. */
	KCHECK_EQ(ksync_set_shrinker_bit(NULL, 0, s->id), 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/*
 * Regression (found by fuzz_registry): objects added and the bit set between
 * alloc and register. A group walk in that window finds a shrinker it
 * cannot call yet; it used to clear the bit, and after the register nothing
 * set it again: the objects were never reclaimed in that group. Now the
 * bit of a shrinker that is not registered yet survives the walk.
 */
KTEST(bit_set_before_register_survives_a_walk)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "early");
	int gid = ksync_shrinker_group_id(g) % 8;

	c.objects[gid][0] = 40;
	KCHECK_EQ(ksync_set_shrinker_bit(g, 0, s->id), 0);
	KCHECK_EQ(ksync_shrink_slab(reg, 0, g, 0), 0); /* not registered: not called */
	KCHECK_EQ(c.count_calls, 0);
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	KCHECK_EQ(ksync_shrink_slab(reg, 0, g, 0), 40);
	KCHECK_EQ(c.objects[gid][0], 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(non_numa_aware_gets_nid0)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(3);
	struct cache c = { .global = { 50 } };
	struct ksync_shrinker *s = mk(reg, 0, &c, "flat");

	KCHECK_EQ(ksync_shrinker_register(s), 0);
	c.last_nid = -1;
	ksync_shrink_slab(reg, 2, NULL, 0);
	KCHECK_EQ(c.last_nid, 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(set_bit_past_map_reported)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	unsigned long w = ksync_warn_count;
	int nr = ksync_shrinker_nr_max(reg);

	KCHECK_EQ(ksync_set_shrinker_bit(g, 0, nr), -EINVAL);
	KCHECK_EQ(ksync_set_shrinker_bit(g, 0, -1), -EINVAL);
	KCHECK_EQ(ksync_set_shrinker_bit(g, 1, 0), -EINVAL);
	KCHECK_EQ(ksync_warn_count, w + 3);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(ids_lowest_free_and_growth_keeps_state)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	struct cache c = { 0 };
	enum { N = 200 };
	struct ksync_shrinker *s[N];
	int nr0 = ksync_shrinker_nr_max(reg);

	for (int i = 0; i < N; i++) {
		s[i] = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "g");
		KCHECK_EQ(s[i]->id, i);
		KCHECK_EQ(ksync_shrinker_register(s[i]), 0);
		if (i == 3) {
			/* State set before growth must survive it. */
			KCHECK_EQ(ksync_set_shrinker_bit(g, 0, 3), 0);
			KCHECK_EQ(ksync_shrinker_add_deferred(s[3], g, 0, 77), 0);
		}
	}
	KCHECK(ksync_shrinker_nr_max(reg) >= N);
	KCHECK(ksync_shrinker_nr_max(reg) > nr0);
	KCHECK_EQ(ksync_shrinker_deferred(s[3], g, 0), 77);
	KCHECK_EQ(ksync_set_shrinker_bit(g, 0, N - 1), 0);
	/* Lowest free id is reused. */
	KCHECK_EQ(ksync_shrinker_free(s[5]), 0);
	KCHECK_EQ(ksync_shrinker_free(s[2]), 0);
	s[2] = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "re");
	KCHECK_EQ(s[2]->id, 2);
	s[5] = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "re");
	KCHECK_EQ(s[5]->id, 5);
	/* The walk visits bit 3 (count is EMPTY: bit cleared, deferred untouched). */
	ksync_shrink_slab(reg, 0, g, 0);
	KCHECK_EQ(ksync_shrinker_deferred(s[3], g, 0), 77);
	struct ksync_shrinker_deferred_total t;
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_groups, 77);
	for (int i = 0; i < N; i++)
		KCHECK_EQ(ksync_shrinker_free(s[i]), 0);
	/* Unregister leaves group counters in place (an id's later owner inherits them). */
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_groups, 77);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_groups, 0);
	KCHECK_EQ(t.orphaned, 77);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(deferred_work_and_reparenting)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *parent = ksync_shrinker_group_create(reg, NULL);
	struct ksync_memgroup *child = ksync_shrinker_group_create(reg, parent);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "d");
	int cid = ksync_shrinker_group_id(child) % 8;

	s->batch = 1000; /* batches larger than the work: the work is deferred */
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	c.objects[cid][0] = 400;
	KCHECK_EQ(ksync_set_shrinker_bit(child, 0, s->id), 0);
	/* priority 4: delta = (400 >> 4) * 4 / 2 = 50 < batch and < freeable: deferred. */
	KCHECK_EQ(ksync_shrink_slab(reg, 0, child, 4), 0);
	KCHECK_EQ(ksync_shrinker_deferred(s, child, 0), 50);
	KCHECK_EQ(ksync_shrink_slab(reg, 0, child, 4), 0);
	long d = ksync_shrinker_deferred(s, child, 0);
	KCHECK(d > 50);
	/* The parent has a child: refused. */
	unsigned long w = ksync_warn_count;
	KCHECK_EQ(ksync_shrinker_group_destroy(parent), -EBUSY);
	KCHECK_EQ(ksync_warn_count, w + 1);
	/* Destroying the child moves its deferred work to the parent. */
	KCHECK_EQ(ksync_shrinker_group_destroy(child), 0);
	KCHECK_EQ(ksync_shrinker_deferred(s, parent, 0), d);
	struct ksync_shrinker_deferred_total t;
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_groups, d);
	/* Global counters: add, read, retired on unregister. */
	KCHECK_EQ(ksync_shrinker_add_deferred(s, NULL, 0, 9), 0);
	KCHECK_EQ(ksync_shrinker_deferred(s, NULL, 0), 9);
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_shrinkers, 9);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.retired, 9);
	KCHECK_EQ(t.in_shrinkers, 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(parent), 0);
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.orphaned, d);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/*
 * Regression: the ledger is consistent while a group destroy waits for its
 * grace period. The group used to be unlinked from reg->groups before that
 * wait and reparented after it, so a ksync_shrinker_deferred_total() in
 * between counted its work nowhere.
 */
struct ledger_probe {
	struct ksync_shrinker_registry *reg;
	long sum;
	int hits;
};

static long ledger_sum(struct ksync_shrinker_registry *reg)
{
	struct ksync_shrinker_deferred_total t;

	ksync_shrinker_deferred_total(reg, &t);
	return t.in_groups + t.in_shrinkers + t.orphaned + t.retired;
}

static void ledger_hook(int point, void *arg)
{
	struct ledger_probe *p = arg;

	if (point == KSYNC_SHRINKER_YP_GROUP_BEFORE_WAIT) {
		p->sum = ledger_sum(p->reg);
		p->hits++;
	}
}

KTEST(ledger_consistent_during_group_destroy)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
	struct ksync_memgroup *parent = ksync_shrinker_group_create(reg, NULL);
	struct ksync_memgroup *child = ksync_shrinker_group_create(reg, parent);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "l");
	struct ledger_probe probe = { .reg = reg };

	KCHECK_EQ(ksync_shrinker_register(s), 0);
	KCHECK_EQ(ksync_shrinker_add_deferred(s, child, 0, 30), 0);
	KCHECK_EQ(ksync_shrinker_add_deferred(s, child, 1, 12), 0);
	KCHECK_EQ(ksync_shrinker_add_deferred(s, parent, 1, 5), 0);
	KCHECK_EQ(ledger_sum(reg), 47);
	ksync_shrinker_set_yield_hook(ledger_hook, &probe);
	KCHECK_EQ(ksync_shrinker_group_destroy(child), 0); /* reparented */
	KCHECK_EQ(probe.hits, 1);
	KCHECK_EQ(probe.sum, 47);
	KCHECK_EQ(ledger_sum(reg), 47);
	KCHECK_EQ(ksync_shrinker_deferred(s, parent, 0), 30);
	KCHECK_EQ(ksync_shrinker_deferred(s, parent, 1), 17);
	KCHECK_EQ(ksync_shrinker_group_destroy(parent), 0); /* orphaned */
	KCHECK_EQ(probe.hits, 2);
	KCHECK_EQ(probe.sum, 47);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	KCHECK_EQ(ledger_sum(reg), 47);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

/*
 * Regression: the ledger is consistent across unregister. The global
 * counters used to be retired in a later critical section than the unlink,
 * so a ksync_shrinker_deferred_total() in between missed them. A checker
 * thread reads the ledger while the main thread registers, adds global
 * deferred work and frees, over and over; the sum may never fall below the
 * work added before the read.
 */
struct unreg_probe {
	struct ksync_shrinker_registry *reg;
	long added; /* atomic: work added so far */
	int stop;
	long reads, dips;
};

static void *ledger_checker(void *arg)
{
	struct unreg_probe *p = arg;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		long before = __atomic_load_n(&p->added, __ATOMIC_ACQUIRE);
		long sum = ledger_sum(p->reg);

		if (sum < before)
			__atomic_fetch_add(&p->dips, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&p->reads, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

KTEST(ledger_consistent_during_unregister)
{
	struct unreg_probe p = { .reg = ksync_shrinker_registry_create(1) };
	struct cache c = { 0 };
	pthread_t th;
	unsigned long rounds = 0;

	KCHECK_EQ(pthread_create(&th, NULL, ledger_checker, &p), 0);
	for (int i = 0; i < 20000 || __atomic_load_n(&p.reads, __ATOMIC_RELAXED) < 2000; i++) {
		struct ksync_shrinker *s = mk(p.reg, 0, &c, "u");

		KCHECK_EQ(ksync_shrinker_register(s), 0);
		KCHECK_EQ(ksync_shrinker_add_deferred(s, NULL, 0, 3), 0);
		__atomic_fetch_add(&p.added, 3, __ATOMIC_RELEASE);
		KCHECK_EQ(ksync_shrinker_free(s), 0);
		rounds++;
		if (i > 2000000)
			break;
	}
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("  %lu rounds, %ld ledger reads, %ld dips\n", rounds, p.reads, p.dips);
	KCHECK_EQ(p.dips, 0);
	KCHECK_EQ(ledger_sum(p.reg), p.added);
	KCHECK_EQ(ksync_shrinker_registry_destroy(p.reg), 0);
}

KTEST(debug_interface)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	struct cache c = { 0 };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, &c, "dbg");
	int gid = ksync_shrinker_group_id(g) % 8;

	KCHECK_EQ(ksync_shrinker_debug_count(s, g, 0), -ENOENT); /* not registered */
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	c.objects[gid][1] = 42;
	c.global[0] = 7;
	KCHECK_EQ(ksync_shrinker_debug_count(s, g, 1), 42);
	KCHECK_EQ(ksync_shrinker_debug_count(s, g, 0), 0);
	KCHECK_EQ(ksync_shrinker_debug_count(s, NULL, 0), 7);
	KCHECK_EQ(ksync_shrinker_debug_scan(s, g, 1, 10), 10);
	KCHECK_EQ(c.objects[gid][1], 32);
	FILE *f = tmpfile();
	KCHECK(f != NULL);
	KCHECK_EQ(ksync_shrinker_debug_show(s, f), 1);
	rewind(f);
	char line[128] = "";
	KCHECK(fgets(line, sizeof(line), f) != NULL);
	KCHECK(strncmp(line, "dbg 0", 5) == 0);
	KCHECK(fgets(line, sizeof(line), f) != NULL);
	char want[64];
	snprintf(want, sizeof(want), "%d 0 32\n", ksync_shrinker_group_id(g));
	KCHECK(strcmp(line, want) == 0);
	fclose(f);
	unsigned long w = ksync_warn_count;
	KCHECK_EQ(ksync_shrinker_debug_count(s, g, 9), -EINVAL);
	KCHECK_EQ(ksync_warn_count, w + 1);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

static int hook_hits[KSYNC_SHRINKER_YP_NR];
static void hook(int point, void *arg)
{
	KCHECK(arg == (void *)hook_hits);
	if (point >= 0 && point < KSYNC_SHRINKER_YP_NR)
		hook_hits[point]++;
}

KTEST(yield_hook_points)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(1);
	struct ksync_memgroup *g = ksync_shrinker_group_create(reg, NULL);
	struct cache c = { .global = { 10 } };
	struct ksync_shrinker *s = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "y");

	memset(hook_hits, 0, sizeof(hook_hits));
	ksync_shrinker_set_yield_hook(hook, hook_hits);
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	ksync_shrink_slab(reg, 0, NULL, 0);
	KCHECK_EQ(ksync_set_shrinker_bit(g, 0, s->id), 0);
	ksync_shrink_slab(reg, 0, g, 0); /* EMPTY: cleared + recount */
	KCHECK(ksync_shrinker_debug_count(s, NULL, 0) >= 0);
	/* Growth: enough ids to pass the first map size. */
	struct ksync_shrinker *more[70];
	for (int i = 0; i < 70; i++)
		more[i] = mk(reg, KSYNC_SHRINKER_MEMCG_AWARE, &c, "more");
	for (int i = 0; i < 70; i++)
		ksync_shrinker_free(more[i]);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
	KCHECK_EQ(ksync_shrinker_group_destroy(g), 0);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	for (int p = 0; p < KSYNC_SHRINKER_YP_NR; p++) {
		/* These need two threads: shrinker_schedule_test forces them. */
		if (p == KSYNC_SHRINKER_YP_SECTION_DROPPED || p == KSYNC_SHRINKER_YP_UNREG_WAIT_CHECKED)
			continue;
		if (!hook_hits[p])
			fprintf(stderr, "yield point %d never hit\n", p);
		KCHECK(hook_hits[p] > 0);
	}
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
}

KTEST(default_registry)
{
	KCHECK_EQ(ksync_shrinker_set_default_nr_nodes(0), -EINVAL);
	KCHECK_EQ(ksync_shrinker_set_default_nr_nodes(2), 0);
	struct cache c = { .global = { 5 } };
	struct ksync_shrinker *s = mk(NULL, 0, &c, "dflt");
	KCHECK_EQ(ksync_shrinker_registry_nr_nodes(NULL), 2);
	KCHECK_EQ(ksync_shrinker_set_default_nr_nodes(1), -EBUSY);
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	KCHECK_EQ(ksync_shrink_slab(NULL, 0, NULL, 0), 5);
	KCHECK_EQ(ksync_synchronize_shrinkers(NULL), 0);
	KCHECK_EQ(ksync_shrinker_free(s), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
