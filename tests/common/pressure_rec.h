/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pressure_rec.h - what the pressure monitor's tests share: a shrinker that
 * records each call it gets (what it was asked to scan, the group, the
 * event time it saw), the priority read back from that with
 * ksync_shrink_budget(), and a fixture (a registry of its own, one recording
 * shrinker, a monitor config on the test source) run in fd mode.
 */
#ifndef KTEST_PRESSURE_REC_H
#define KTEST_PRESSURE_REC_H

#include <ksync/pressure.h>
#include <ksync/shrinker.h>

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "ktest.h"
#include "wait.h"

#define FREEABLE 4096UL /* what every recording shrinker holds */
#define SEEKS KSYNC_DEFAULT_SEEKS
#define MAX_CALLS 64

/* ------------------------------------------------------------------------ */
/* A shrinker that records each call                                        */

struct call {
	unsigned long asked;          /* sum of nr_to_scan over the call */
	struct ksync_memgroup *group; /* sc->group */
	uint64_t event_time;          /* ksync_pressure_event_time() inside it */
};

struct rec {
	pthread_mutex_t mu;
	struct call calls[MAX_CALLS];
	int n;
	unsigned long freed;
	int stop_next;   /* the next scan returns KSYNC_SHRINK_STOP */
	int block;       /* scans wait for @release (atomics below) */
	int in_scan, release, returned;
};

static inline unsigned long rec_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct rec *r = s->private_data;

	pthread_mutex_lock(&r->mu);
	if (r->n < MAX_CALLS)
		r->calls[r->n++] = (struct call){ 0, sc->group, ksync_pressure_event_time() };
	pthread_mutex_unlock(&r->mu);
	return FREEABLE;
}

static inline unsigned long rec_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct rec *r = s->private_data;
	bool stop;

	pthread_mutex_lock(&r->mu);
	stop = r->stop_next;
	r->stop_next = 0;
	if (!stop) {
		if (r->n)
			r->calls[r->n - 1].asked += sc->nr_to_scan;
		r->freed += sc->nr_to_scan;
	}
	pthread_mutex_unlock(&r->mu);
	if (__atomic_load_n(&r->block, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&r->in_scan, 1, __ATOMIC_RELEASE);
		KT_POLL_UNTIL(__atomic_load_n(&r->release, __ATOMIC_ACQUIRE));
		__atomic_store_n(&r->returned, 1, __ATOMIC_RELEASE);
	}
	return stop ? KSYNC_SHRINK_STOP : sc->nr_to_scan;
}

static inline int rec_calls(struct rec *r)
{
	pthread_mutex_lock(&r->mu);
	int n = r->n;
	pthread_mutex_unlock(&r->mu);
	return n;
}

static inline struct call rec_call(struct rec *r, int i)
{
	pthread_mutex_lock(&r->mu);
	struct call c = r->calls[i];
	pthread_mutex_unlock(&r->mu);
	return c;
}

/* The priority a call of a shrinker carrying @deferred was made at (-1: none fits). */
static inline int prio_of(unsigned long asked, long deferred)
{
	for (int p = 0; p <= KSYNC_DEF_PRIORITY; p++) {
		struct ksync_shrink_budget b;

		ksync_shrink_budget(FREEABLE, deferred, p, SEEKS, 1, &b);
		if (b.total_scan == asked)
			return p;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Fixture: a registry, one recording shrinker, a monitor on the test source */

struct fx {
	struct ksync_shrinker_registry *reg;
	struct ksync_shrinker *s;
	struct rec r;
	struct ksync_pressure *p;
	struct ksync_pressure_config cfg;
};

static inline void fx_init(struct fx *f, unsigned flags)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->r.mu, NULL);
	f->reg = ksync_shrinker_registry_create(1);
	KASSERT(f->reg);
	f->s = ksync_shrinker_alloc(f->reg, flags, "rec");
	KASSERT(f->s);
	f->s->count_objects = rec_count;
	f->s->scan_objects = rec_scan;
	f->s->batch = 1;
	f->s->seeks = SEEKS;
	f->s->private_data = &f->r;
	KASSERT(ksync_shrinker_register(f->s) == 0);
	f->cfg.sources = KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST);
	f->cfg.reg = f->reg;
}

static inline void fx_create(struct fx *f)
{
	KASSERT(ksync_pressure_create(&f->cfg, &f->p) == 0);
	KASSERT(ksync_pressure_sources(f->p) == KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST));
}

static inline void fx_done(struct fx *f)
{
	KCHECK_EQ(ksync_pressure_destroy(f->p), 0);
	KCHECK_EQ(ksync_shrinker_free(f->s), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
	pthread_mutex_destroy(&f->r.mu);
}

/* Inject @level and run the monitor once (fd mode); the round is done on return. */
static inline int inject_dispatch(struct fx *f, enum ksync_pressure_level level)
{
	KCHECK_EQ(ksync_pressure_inject(f->p, level), 0);
	return ksync_pressure_dispatch(f->p);
}

static inline struct ksync_pressure_stats stats(struct ksync_pressure *p)
{
	struct ksync_pressure_stats st;

	ksync_pressure_get_stats(p, &st);
	return st;
}

static inline uint64_t test_scans(struct ksync_pressure *p)
{
	return stats(p).source_scans[KSYNC_PRESSURE_SRC_TEST];
}

#endif /* KTEST_PRESSURE_REC_H */
