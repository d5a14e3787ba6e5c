/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pressure_direct.h - what the tests of direct reclaim and of the monitor's
 * sources share (pressure_direct, pressure_direct_review,
 * pressure_fake_sources, error_rule):
 *
 *   struct kt_charger, kt_charge_thread()    a thread that makes one
 *       ksync_pressure_charge() and publishes its return, then @done
 *   struct kt_destroyer, kt_destroy_thread() the same for
 *       ksync_pressure_destroy()
 *   kt_direct_dying(p)        destroy has begun (p->direct.dying, under the
 *                             monitor's lock: the handshake the destroy
 *                             tests wait for)
 *   kt_pressure_stats(p)      ksync_pressure_get_stats() as a value
 *   kt_describe_has_line(p, prefix)  ksync_pressure_describe() has a line
 *                             that begins with @prefix
 *   kt_raise_max(max, v)      *@max = the larger of it and @v, atomically
 *                             (the most scans in flight at once)
 *   kt_polled_ready(), kt_polled_close()  the .ready and .close of a fake
 *                             polled byte source: no fd, no event, nothing
 *                             to close
 *
 * Reads the monitor's internals (lib/pressure/monitor.h). Header-only,
 * static inline: a test uses what it needs.
 */
#ifndef KTEST_PRESSURE_DIRECT_H
#define KTEST_PRESSURE_DIRECT_H

#include "../../lib/pressure/monitor.h"

#include <ksync/pressure.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct kt_charger {
	struct ksync_pressure *p;
	size_t bytes;
	int ret, done;
};

static inline void *kt_charge_thread(void *arg)
{
	struct kt_charger *c = (struct kt_charger *)arg;

	c->ret = ksync_pressure_charge(c->p, c->bytes);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct kt_destroyer {
	struct ksync_pressure *p;
	int ret, done;
};

static inline void *kt_destroy_thread(void *arg)
{
	struct kt_destroyer *d = (struct kt_destroyer *)arg;

	d->ret = ksync_pressure_destroy(d->p);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static inline bool kt_direct_dying(struct ksync_pressure *p)
{
	pthread_mutex_lock(&p->lock);
	bool d = p->direct.dying;
	pthread_mutex_unlock(&p->lock);
	return d;
}

static inline struct ksync_pressure_stats kt_pressure_stats(struct ksync_pressure *p)
{
	struct ksync_pressure_stats st;

	ksync_pressure_get_stats(p, &st);
	return st;
}

static inline bool kt_describe_has_line(struct ksync_pressure *p, const char *prefix)
{
	char buf[4096], *line = buf;

	ksync_pressure_describe(p, buf, sizeof(buf));
	while (line && *line) {
		if (!strncmp(line, prefix, strlen(prefix)))
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

static inline void kt_raise_max(int *max, int v)
{
	int mx = __atomic_load_n(max, __ATOMIC_RELAXED);

	while (v > mx && !__atomic_compare_exchange_n(max, &mx, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
	}
}

static inline int kt_polled_ready(struct ksync__psrc *s, int i, uint32_t revents)
{
	(void)s;
	(void)i;
	(void)revents;
	return KSYNC_PRESSURE_NONE;
}

static inline void kt_polled_close(struct ksync__psrc *s)
{
	(void)s;
}

#endif /* KTEST_PRESSURE_DIRECT_H */
