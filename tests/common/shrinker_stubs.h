/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shrinker_stubs.h - the trivial shrinker callbacks several tests register
 * when only the registry's behaviour matters: a cache that always holds one
 * object and a scan that frees nothing.
 */
#ifndef KTEST_SHRINKER_STUBS_H
#define KTEST_SHRINKER_STUBS_H

#include <ksync/shrinker.h>

#include "ktest.h"
#include "wait.h"

static inline unsigned long kt_count_one(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return 1;
}

static inline unsigned long kt_scan_none(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	(void)s;
	(void)sc;
	return 0;
}

/*
 * A shrinker with @flags, named @name (a printf format of @i), counting with @count,
 * scanning nothing, @priv as its private data: allocated and registered
 * on @reg.
 */
static inline struct ksync_shrinker *kt_stub_shrinker(struct ksync_shrinker_registry *reg, unsigned int flags,
						      const char *name, int i,
						      unsigned long (*count)(struct ksync_shrinker *,
									     struct ksync_shrink_control *),
						      void *priv)
{
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, flags, name, i);

	KASSERT(s);
	s->count_objects = count;
	s->scan_objects = kt_scan_none;
	s->private_data = priv;
	KCHECK_EQ(ksync_shrinker_register(s), 0);
	return s;
}

/*
 * A thread that walks @reg once (so that it has a slot of the registry's
 * domain and ksync_try_synchronize_srcu() refuses from then on), says so
 * in @walked, then waits outside any read section until @go.
 */
struct kt_walked_once {
	struct ksync_shrinker_registry *reg;
	int walked, go;
};

static inline void *kt_walk_once_then_wait(void *arg)
{
	struct kt_walked_once *p = (struct kt_walked_once *)arg;

	ksync_shrink_slab(p->reg, 0, NULL, 0);
	__atomic_store_n(&p->walked, 1, __ATOMIC_SEQ_CST);
	KT_YIELD_UNTIL(__atomic_load_n(&p->go, __ATOMIC_SEQ_CST));
	return NULL;
}

#endif /* KTEST_SHRINKER_STUBS_H */
