/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/react.c - the reaction: what the monitor does with the events
 * a runner read (include/ksync/pressure.h).
 *
 * Theory of operation
 * -------------------
 * A runner (run.c) reads every ready source and hands each event to
 * ksync__pm_note(), which counts it and remembers, per level, the first
 * event of the batch (its source, the time it was read, whether the level
 * was already up: an event of that level within @hold_ms before). Then
 * ksync__pm_react() runs at most one *reclaim round*, for the highest level
 * of the batch:
 *
 *  - rate limit: a level's round comes at most once per @min_interval_ms of
 *    that level; the events that find it too recent (and the extra events of
 *    the level coalesced into one round) are counted in @rate_limited. The
 *    timestamps are per level, so a higher level never waits for a lower
 *    one's limit. Events of lower levels in the same batch are absorbed by
 *    the round of the higher one (counted in @events only).
 *  - priority: a round starts at the level's priority, or, for an event
 *    source whose level stayed up since its previous round, one below that
 *    round's start (not below the floor): sustained pressure digs deeper,
 *    as the kernel's reclaim loop lowers its priority while it fails to
 *    make progress. A polled source's rounds always start at the level's
 *    priority: it measures relief inside the round (below).
 *  - one round: ksync_shrink_slab(reg, nid, group, prio) on every node, then,
 *    while the source that raised the level is a polled one whose sample()
 *    still reports the round's level or more, again one priority lower,
 *    down to the floor. An event source counts as relieved after one pass.
 *    The stop flag (ksync_pressure_stop()) is checked between the steps.
 *    What a shrinker could not do is carried by the registry's nr_deferred:
 *    that is ksync_shrink_slab()'s own job.
 *  - after the shrinking, the user's callback of the level (not when the
 *    round was cut short by a stop).
 *  - figures: per level (events, rounds), per source (events, scans =
 *    ksync_shrink_slab() calls, freed), and the latency from reading the
 *    event to the round's first ksync_shrink_slab() call, in a histogram of
 *    power-of-two buckets.
 *
 * The level "now" (hysteresis) is computed, never stored: the highest level
 * with an event less than @hold_ms ago; so it falls back to NONE @hold_ms
 * after the last event even if nobody runs the monitor.
 *
 * Thread-local state: ksync__pm_running names the monitor whose runner this
 * thread is (set by run.c around a pass: rounds and callbacks), so that
 * stop/destroy/dispatch from inside can refuse (-EDEADLK); pm_event_ns is
 * the event of the round in progress (ksync_pressure_event_time()).
 *
 * This file calls nothing of run.c or monitor.c (lib/pressure/monitor.h): a
 * source that dies in sample() is marked in m->dead for run.c to close.
 */
#include "monitor.h"

#include <time.h>

_Thread_local struct ksync_pressure *ksync__pm_running;
static _Thread_local uint64_t pm_event_ns;

uint64_t ksync__pm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t ms_ns(unsigned ms)
{
	return (uint64_t)ms * 1000000ull;
}

/**
 * ksync__pm_level_locked() - the level now, after hysteresis.
 * @m: the monitor, its lock held
 * @now: CLOCK_MONOTONIC ns
 *
 * Return: the highest level with an event less than @hold_ms before @now.
 */
enum ksync_pressure_level ksync__pm_level_locked(struct ksync_pressure *m, uint64_t now)
{
	uint64_t hold = ms_ns(m->env.cfg.hold_ms);

	for (int l = KSYNC_PRESSURE_CRITICAL; l > KSYNC_PRESSURE_NONE; l--)
		if (m->last_event[l] && now - m->last_event[l] < hold)
			return (enum ksync_pressure_level)l;
	return KSYNC_PRESSURE_NONE;
}

/**
 * ksync__pm_note() - count @n events of @level from source @kind into @b.
 * Called by the runner for every event it read (@level LOW..CRITICAL).
 */
void ksync__pm_note(struct ksync_pressure *m, struct ksync__pm_batch *b, int kind, int level, unsigned n)
{
	uint64_t now = ksync__pm_now();

	if (level <= KSYNC_PRESSURE_NONE || level >= KSYNC_PRESSURE_NR_LEVELS || !n)
		return;
	pthread_mutex_lock(&m->lock);
	if (!b->n[level]) {
		uint64_t prev = m->last_event[level];

		b->kind[level] = kind;
		b->t[level] = now;
		b->up[level] = prev && now - prev < ms_ns(m->env.cfg.hold_ms);
	}
	m->last_event[level] = now;
	m->st.events[level] += n;
	m->st.source_events[kind] += n;
	pthread_mutex_unlock(&m->lock);
	b->n[level] += n;
	b->total += n;
}

static int bit_length(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static bool pm_polled(const struct ksync__psrc *s)
{
	return s->polled && s->ops && s->ops->sample;
}

/* One reclaim round of @level raised by source @kind (see the theory above). */
static void pm_round(struct ksync_pressure *m, int level, int kind, uint64_t t_event, int prio)
{
	struct ksync__psrc *s = &m->src[kind];
	int floor = m->env.cfg.floor[level];
	bool polled = pm_polled(s);
	bool first = true;
	uint64_t scans = 0, freed = 0;

	pm_event_ns = t_event;
	for (;;) {
		for (int nid = 0; nid < m->nr_nodes; nid++) {
			if (first) {
				uint64_t lat = ksync__pm_now() - t_event;

				first = false;
				pthread_mutex_lock(&m->lock);
				m->hist[bit_length(lat)]++;
				m->st.latency_samples++;
				if (lat > m->st.latency_ns_max)
					m->st.latency_ns_max = lat;
				pthread_mutex_unlock(&m->lock);
			}
			freed += ksync_shrink_slab(m->reg, nid, m->group, prio);
			scans++;
		}
		if (prio <= floor)
			break;
		/* Pairs with the release store of ksync_pressure_stop() (run.c). */
		if (__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
			break;
		if (!polled)
			break; /* an event source counts as relieved after one pass */
		int now_level = s->ops->sample(s);
		if (now_level < 0) {
			/* The source died: run.c closes it after this pass. */
			s->status = now_level;
			m->dead |= 1u << kind;
			break;
		}
		if (now_level < level)
			break; /* relieved */
		prio--;
	}
	pm_event_ns = 0;
	pthread_mutex_lock(&m->lock);
	m->st.source_scans[kind] += scans;
	m->st.source_freed[kind] += freed;
	pthread_mutex_unlock(&m->lock);
}

/**
 * ksync__pm_react() - at most one reclaim round for the highest level of @b,
 * then that level's user callback. Called by the runner with
 * ksync__pm_running set to @m.
 */
void ksync__pm_react(struct ksync_pressure *m, struct ksync__pm_batch *b)
{
	const struct ksync_pressure_config *cfg = &m->env.cfg;
	int level = KSYNC_PRESSURE_NONE, start;
	ksync_pressure_fn fn;
	void *arg;

	for (int l = KSYNC_PRESSURE_CRITICAL; l > KSYNC_PRESSURE_NONE; l--)
		if (b->n[l]) {
			level = l;
			break;
		}
	if (level == KSYNC_PRESSURE_NONE)
		return;

	uint64_t now = ksync__pm_now();
	pthread_mutex_lock(&m->lock);
	if (m->last_round[level] && now - m->last_round[level] < ms_ns(cfg->min_interval_ms[level])) {
		m->st.rate_limited += b->n[level];
		pthread_mutex_unlock(&m->lock);
		return;
	}
	m->st.rate_limited += b->n[level] - 1; /* coalesced into this round */
	/*
	 * Digging across rounds is for event sources only: they cannot say
	 * whether a round helped, so a level that stays up is the sign it did
	 * not. A polled source measures relief inside the round (pm_round
	 * steps down while it still reads the level), so each of its rounds
	 * starts at the level's priority again, as the kernel's reclaim loop
	 * starts each reclaim at DEF_PRIORITY: a cache held near its limit is
	 * trimmed by what the limit needs, not emptied.
	 */
	if (b->up[level] && m->last_round[level] && !pm_polled(&m->src[b->kind[level]])) {
		start = m->last_start[level] - 1;
		if (start < cfg->floor[level])
			start = cfg->floor[level];
	} else {
		start = cfg->priority[level];
	}
	m->last_start[level] = start;
	m->last_round[level] = now;
	m->st.rounds[level]++;
	pthread_mutex_unlock(&m->lock);

	pm_round(m, level, b->kind[level], b->t[level], start);

	/* Pairs with the release store of ksync_pressure_stop() (run.c). */
	if (__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&m->lock);
	fn = m->cb[level].fn;
	arg = m->cb[level].arg;
	pthread_mutex_unlock(&m->lock);
	if (fn)
		fn(m, (enum ksync_pressure_level)level, arg);
}

uint64_t ksync_pressure_event_time(void)
{
	return pm_event_ns;
}
