/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel-shaped shrinker code compiled through <ksync/kernel.h> and
 * <ksync/linux/shrinker.h> alone: the
 * 6.7 shape (shrinker_alloc/shrinker_register/shrinker_free) and the classic
 * one (register_shrinker/unregister_shrinker, prealloc_shrinker/
 * register_shrinker_prepared/free_prealloced_shrinker), shrink_slab(),
 * set_shrinker_bit(), synchronize_shrinkers(), on the default registry.
 */
#include <ksync/kernel.h>
#include <ksync/linux/shrinker.h> /* the registry's spellings are not in kernel.h */

#include "ktest.h"

static atomic_long_t nr_objects = ATOMIC_LONG_INIT(0);

static unsigned long demo_count(struct shrinker *s, struct shrink_control *sc)
{
	(void)s;
	(void)sc;
	long n = atomic_long_read(&nr_objects);
	return n > 0 ? (unsigned long)n : SHRINK_EMPTY;
}

static unsigned long demo_scan(struct shrinker *s, struct shrink_control *sc)
{
	(void)s;
	long n = atomic_long_read(&nr_objects);
	unsigned long take = min_t(unsigned long, (unsigned long)(n > 0 ? n : 0), sc->nr_to_scan);

	if (!take)
		return SHRINK_STOP;
	atomic_long_sub((long)take, &nr_objects);
	return take;
}

KTEST(shape_6_7)
{
	struct shrinker *s = shrinker_alloc(SHRINKER_MEMCG_AWARE | SHRINKER_NUMA_AWARE, "demo-%d", 67);
	struct ksync_memgroup *memcg = ksync_shrinker_group_create(NULL, NULL);

	KCHECK(s != NULL);
	s->count_objects = demo_count;
	s->scan_objects = demo_scan;
	s->seeks = DEFAULT_SEEKS;
	shrinker_register(s);
	atomic_long_set(&nr_objects, 300);
	set_shrinker_bit(memcg, 0, s->id);
	KCHECK_EQ(shrink_slab(0, 0, memcg, 0), 300);
	atomic_long_set(&nr_objects, 100);
	KCHECK(shrink_slab(0, 0, NULL, DEF_PRIORITY - 12) > 0);
	synchronize_shrinkers();
	shrinker_free(s);
	KCHECK_EQ(ksync_shrinker_group_destroy(memcg), 0);
}

KTEST(shape_classic)
{
	static struct shrinker demo = { .count_objects = demo_count, .scan_objects = demo_scan,
					.seeks = DEFAULT_SEEKS, .batch = 16 };

	KCHECK_EQ(register_shrinker(&demo, "classic"), 0);
	atomic_long_set(&nr_objects, 64);
	KCHECK_EQ(shrink_slab(0, 0, NULL, 0), 64);
	unregister_shrinker(&demo);
	KCHECK(demo.record == NULL);

	KCHECK_EQ(prealloc_shrinker(&demo, "prepared"), 0);
	register_shrinker_prepared(&demo);
	unregister_shrinker(&demo);
	KCHECK_EQ(prealloc_shrinker(&demo, "never"), 0);
	free_prealloced_shrinker(&demo);
	KCHECK(demo.record == NULL);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
