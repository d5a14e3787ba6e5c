/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fx_registry.c - bench_registry's C side: the reclaim-storm demo's two
 * registries, compiled from examples/reclaim_storm/{legacy,lockless}.c as
 * they are (legacy: the pre-6.7 kernel's registry, one writer-preferring
 * rwlock; lockless: ksync::shrinker), driven through the demo's own
 * struct storm_registry_ops. This file supplies what the demo's main.c
 * would: the shrinker callbacks (nothing to free here) and the per-thread
 * tallies the walkers bump.
 */
#include "storm.h"

#include <ksync/shrinker_testing.h>

#include <stdlib.h>

_Thread_local struct storm_thread_stats *storm_tls;

unsigned long storm_count_objects(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return 0;
}

unsigned long storm_scan_objects(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return KSYNC_SHRINK_STOP;
}

/* A registry, @ng groups, @nm mounts registered: the state the benchmark's
 * one extra mount registers into and unregisters from. */
struct bench_reg {
	const struct storm_registry_ops *ops;
	void *reg;
	int ng, nm;
	void **groups;
	struct storm_mount *mounts; /* nm + 1: the last is the benchmark's */
};

static struct storm_thread_stats main_stats;

void *bench_reg_create(int legacy, int ng, int nm);
void bench_reg_destroy(void *b);
void bench_reg_cycle(void *b);
void bench_reg_walk(void *b, unsigned i);
void bench_reg_thread_stats(void);

void bench_reg_thread_stats(void)
{
	if (!storm_tls)
		storm_tls = calloc(1, sizeof(*storm_tls));
}

void *bench_reg_create(int legacy, int ng, int nm)
{
	struct bench_reg *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	if (!storm_tls)
		storm_tls = &main_stats;
	b->ops = legacy ? &storm_legacy_ops : &storm_lockless_ops;
	b->reg = b->ops->create(1, 4096);
	b->ng = ng;
	b->nm = nm;
	b->groups = calloc((size_t)ng, sizeof(void *));
	b->mounts = calloc((size_t)nm + 1, sizeof(*b->mounts));
	if (!b->reg || !b->groups || !b->mounts)
		abort();
	for (int g = 0; g < ng; g++)
		b->groups[g] = b->ops->group_create(b->reg);
	for (int m = 0; m <= nm; m++) {
		b->mounts[m].idx = m;
		b->mounts[m].home_group = m % ng;
		b->mounts[m].home = b->groups[m % ng];
		ksync_atomic_set(&b->mounts[m].id, -1);
	}
	for (int m = 0; m < nm; m++) {
		if (b->ops->mount(b->reg, &b->mounts[m]))
			abort();
		b->ops->set_bit(b->reg, b->mounts[m].home, 0, ksync_atomic_read(&b->mounts[m].id));
	}
	if (!legacy) {
		/*
		 * Idle means nothing pending: the set-up's queued frees (grown
		 * maps, records) run now, not on the helper thread while the
		 * cycles are measured (a grace period in progress there makes
		 * a release take the batch path; under valgrind, whose threads
		 * take turns, for thousands of cycles in a row).
		 */
		ksync_synchronize_shrinkers(b->reg);
		ksync_srcu_barrier(ksync_shrinker_registry_srcu(b->reg));
	}
	return b;
}

void bench_reg_destroy(void *p)
{
	struct bench_reg *b = p;

	for (int m = 0; m < b->nm; m++)
		b->ops->umount(b->reg, &b->mounts[m]);
	for (int g = 0; g < b->ng; g++)
		b->ops->group_destroy(b->reg, b->groups[g]);
	b->ops->destroy(b->reg);
	free(b->groups);
	free(b->mounts);
	free(b);
}

/* One register + unregister: the demo's mount and umount of one filesystem. */
void bench_reg_cycle(void *p)
{
	struct bench_reg *b = p;
	struct storm_mount *m = &b->mounts[b->nm];

	if (b->ops->mount(b->reg, m))
		abort();
	b->ops->umount(b->reg, m);
}

/* One group walk (a reclaim thread's shrink_slab), on group @i mod ng. */
void bench_reg_walk(void *p, unsigned i)
{
	struct bench_reg *b = p;

	b->ops->shrink(b->reg, 0, b->groups[i % (unsigned)b->ng], 0);
}
