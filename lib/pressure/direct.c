/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/direct.c - direct reclaim: the allocating thread makes room
 * (ksync_pressure_charge(), include/ksync/pressure.h).
 *
 * Theory of operation
 * -------------------
 * The monitor's polled sources sample every 5-200 ms; a cache that grows by
 * 1 GB/s crosses from the LOW level to its limit between two samples. The
 * kernel's answer is direct reclaim: a task that allocates while memory is
 * short reclaims before it gets its page. Here the allocating thread calls
 * ksync_pressure_charge() with what it allocated.
 *
 * The estimate. The byte sources (limit, budget, meminfo: those whose ops
 * have a probe) give a figure and a limit each; their watermark is
 * @direct_permille of the limit. @room is the least distance, over the
 * sources, from a figure to its watermark at the last read; @base is the
 * value of @published (every byte charged since create) at that read. The
 * estimate crosses a watermark when @published - @base reaches @room.
 *
 * Fast path: a thread's charges add up in its own counter (@tl.pending,
 * thread-local, naming the monitor by address and serial so that a monitor
 * made at a freed one's address is not confused with it). Only every
 * @charge_batch bytes does the thread publish them (one atomic add) and
 * compare. So under the watermark there is no syscall and no shared write
 * between batches; the price is an estimate short of at most one batch per
 * thread (the kernel's memcg charges in the same batches, per CPU).
 *
 * A thread that charges another monitor hands its remainder to the one it
 * leaves, as the kernel's drain_stock() gives a CPU's stock back to its
 * old memcg: the old monitor may have been destroyed (and its memory
 * reused) meanwhile, so the remainder is added only if the monitor is
 * still on @live (found by address and serial, under @live_lock; destroy
 * takes it off under the same lock before it frees it). And when the
 * monitor it leaves lives, the charge that moves is published and compared
 * at once. Without both, a thread that charges two monitors in turn, under
 * a batch each time, would publish nothing and never compare. A thread's
 * first charge, or its first after the monitor it charged was destroyed,
 * stays on the thread as any charge under a batch.
 *
 * Slow path, over the estimate: the thread reads the sources through their
 * probes (a read of memory.current or statm: a copy of the source's paths
 * made at create, so the runner may sample, close or reopen the source
 * meanwhile). Reset before read: @base takes @published *before* the files
 * are read, so bytes charged during the read count twice (in the figure
 * and after @base), never zero times; the estimate errs high. If no figure
 * is over its watermark, that read was all (the estimate was pessimistic:
 * frees are not charged back). Otherwise the thread runs a round: if fewer
 * than @direct_max threads reclaim, it takes a slot and calls
 * ksync_shrink_slab() on every node from the priority of the level the
 * figure reads (LOW at least), re-reads, and steps one priority lower while
 * a figure stays over, down to that level's floor, as the monitor's rounds
 * do (react.c). If @direct_max threads reclaim already, it waits for one of
 * their rounds to end (the kernel throttles reclaimers the same way rather
 * than let them pile up) and returns THROTTLED: that round read the figures
 * again.
 *
 * The runner (helper thread or dispatcher) also samples the byte sources:
 * around its samples run.c calls ksync__pm_direct_sampling() (the reset
 * before read) and ksync__pm_direct_sampled() (the new room), so a charge
 * compares against the freshest figure whoever read it.
 *
 * Recursion: a charge made by a thread that is inside a round (its own
 * direct round, or the runner's round: a shrinker that allocates) only
 * counts, as the kernel's PF_MEMALLOC keeps reclaim from recursing. The
 * guard is the thread's, whatever the monitor: a shrinker that charges
 * another monitor (of the same registry, often) must not start a round of
 * it inside this one (ksync_shrink_slab() refuses to recurse; a shrinker's
 * own lock would deadlock).
 *
 * Destroy: sets @dying under the lock and waits until no thread is in the
 * slow path (@inflight); a thread that enters the slow path after that is
 * misuse (-ESHUTDOWN, reported). A thread on the fast path touches only
 * fields that are read-only after create: a call that races with destroy
 * there is the caller's use after free, as for every other call.
 *
 * fork(): run.c's handlers hold @lock across fork; in the child no other
 * thread exists, so the counters of threads in the slow path keep only the
 * forking thread (inside a direct round when a shrinker forked) and the
 * condition variable is made anew (ksync__pm_direct_child()).
 *
 * Barrier pairs:
 *   D1  @base and @room are stored (release) by whoever read the figures,
 *       after the read; the charging thread loads them (acquire) after its
 *       add to @published. The pair only keeps the two figures of one read
 *       together as far as it can: a charge may compare a new @base with
 *       an older @room, which errs by one read's worth, never corrupts.
 *   D2  @published is a relaxed counter: its value is all that matters.
 */
#define _GNU_SOURCE
#include "monitor.h"

#include "../common/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ksync/pressure_testing.h> /* ksync_pressure_level_of() */

/*
 * The thread's unpublished charges, and which monitor they are for: one
 * struct, so that the fast path computes the thread-local address once, in
 * the static TLS block (initial-exec, as lib/shrinker's per-thread state):
 * an %fs-relative access with no call, so no registers to save either.
 */
static _Thread_local __attribute__((__tls_model__("initial-exec"))) struct {
	const struct ksync_pressure *monitor;
	uint64_t serial;
	size_t pending;
} tl;
/* The monitor whose direct round this thread runs (recursion guard: any monitor). */
static _Thread_local const struct ksync_pressure *tl_reclaiming;

static uint64_t direct_serials;

/*
 * The monitors with a byte source, for a thread's remainder (see the
 * theory). @live_lock is taken alone, never with a monitor's @lock or
 * run.c's locks, and held across fork() (its own handlers).
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_pressure *live;
static pthread_once_t live_atfork_once = PTHREAD_ONCE_INIT;
static int live_atfork_err;

static void live_prepare(void)
{
	pthread_mutex_lock(&live_lock);
}

static void live_release(void)
{
	pthread_mutex_unlock(&live_lock);
}

static void live_register_atfork(void)
{
	live_atfork_err = pthread_atfork(live_prepare, live_release, live_release);
}

/*
 * Registered when the program loads, as run.c's handlers are and for the
 * same reason: ahead of SRCU's, so that prepare takes @live_lock after
 * SRCU's locks, the order ThreadSanitizer also sees in the child (where
 * SRCU re-creates its locks instead of releasing them).
 */
__attribute__((constructor)) static void live_register_atfork_early(void)
{
	pthread_once(&live_atfork_once, live_register_atfork);
}

static void live_add(struct ksync_pressure *m)
{
	pthread_mutex_lock(&live_lock);
	m->direct.live_prev = NULL;
	m->direct.live_next = live;
	if (live)
		live->direct.live_prev = m;
	live = m;
	pthread_mutex_unlock(&live_lock);
}

static void live_del(struct ksync_pressure *m)
{
	pthread_mutex_lock(&live_lock);
	if (m->direct.live_prev)
		m->direct.live_prev->direct.live_next = m->direct.live_next;
	else
		live = m->direct.live_next;
	if (m->direct.live_next)
		m->direct.live_next->direct.live_prev = m->direct.live_prev;
	pthread_mutex_unlock(&live_lock);
}

/*
 * Give this thread's remainder to the monitor it names, if that one still
 * lives. Return: whether it lives (the thread moves between live monitors).
 */
static bool tl_drain(void)
{
	bool found = false;

	if (!tl.monitor)
		return false;
	pthread_mutex_lock(&live_lock);
	for (struct ksync_pressure *m = live; m; m = m->direct.live_next)
		if (m == tl.monitor && m->direct.serial == tl.serial) {
			__atomic_add_fetch(&m->direct.published, tl.pending, __ATOMIC_RELAXED); /* D2 */
			found = true;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	return found;
}

static int bit_length(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

/* @permille of @limit, without overflow (@permille <= 1000). */
static uint64_t watermark(uint64_t limit, unsigned permille)
{
	return limit / 1000 * permille + limit % 1000 * permille / 1000;
}

static void free_probes(struct ksync_pressure *m)
{
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		free(m->direct.probe[k]);
		m->direct.probe[k] = NULL;
	}
}

/**
 * ksync__pm_direct_init() - fill in direct reclaim's state after the sources opened.
 * @m: the monitor, not yet shared
 * Return: 0; -ENOMEM (a probe), or the condition variable's error; nothing
 * to undo then.
 */
int ksync__pm_direct_init(struct ksync_pressure *m)
{
	uint64_t room = UINT64_MAX;
	int r;

	m->direct.serial = __atomic_add_fetch(&direct_serials, 1, __ATOMIC_RELAXED);
	m->direct.batch = m->env.cfg.charge_batch;
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		const struct ksync__psrc *s = &m->src[k];

		if (!(m->open & (1u << k)) || !s->ops || !s->ops->probe_new || !s->ops->probe_read)
			continue;
		m->direct.probe[k] = s->ops->probe_new(s);
		if (!m->direct.probe[k]) {
			free_probes(m);
			return -ENOMEM;
		}
		m->direct.probe_ops[k] = s->ops;
		m->direct.limit0[k] = s->limit;
		m->direct.kinds |= 1u << k;
		/* open() sampled once: the first room comes from that sample. */
		uint64_t wm = watermark(s->limit, m->env.cfg.direct_permille);
		uint64_t rk = s->figure >= wm ? 0 : wm - s->figure;
		if (rk < room)
			room = rk;
	}
	m->direct.room = room;
	pthread_once(&live_atfork_once, live_register_atfork);
	r = live_atfork_err ? live_atfork_err : pthread_cond_init(&m->direct.cv, NULL);
	if (r) {
		free_probes(m);
		return -r;
	}
	if (m->direct.kinds)
		live_add(m);
	return 0;
}

/**
 * ksync__pm_direct_fini() - wait for the threads in the slow path, free the probes.
 * After it, a charge that reaches the slow path is refused (-ESHUTDOWN).
 */
void ksync__pm_direct_fini(struct ksync_pressure *m)
{
	pthread_mutex_lock(&m->lock);
	m->direct.dying = true;
	while (m->direct.inflight)
		pthread_cond_wait(&m->direct.cv, &m->lock);
	pthread_mutex_unlock(&m->lock);
	if (m->direct.kinds)
		live_del(m); /* no thread's remainder reaches it after this */
	free_probes(m);
	pthread_cond_destroy(&m->direct.cv);
}

/**
 * ksync__pm_direct_inside() - whether the calling thread runs a direct round of @m.
 * Destroy refuses then (-EDEADLK): it would wait for the round it is called from.
 */
bool ksync__pm_direct_inside(const struct ksync_pressure *m)
{
	return tl_reclaiming == m;
}

/**
 * ksync__pm_direct_sampling() - the runner is about to sample its sources.
 * Return: the @base it replaced, for ksync__pm_direct_sampled().
 */
uint64_t ksync__pm_direct_sampling(struct ksync_pressure *m)
{
	if (!m->direct.kinds)
		return 0;
	/* Reset before read (see the theory): D1. */
	uint64_t now = __atomic_load_n(&m->direct.published, __ATOMIC_RELAXED);
	return __atomic_exchange_n(&m->direct.base, now, __ATOMIC_RELEASE);
}

/**
 * ksync__pm_direct_sampled() - the runner sampled: the room from its figures.
 * @old_base: what ksync__pm_direct_sampling() returned, put back when no
 *            byte source could be read (the estimate keeps its bytes)
 */
void ksync__pm_direct_sampled(struct ksync_pressure *m, uint64_t old_base)
{
	uint64_t room = UINT64_MAX;
	bool any = false;

	if (!m->direct.kinds)
		return;
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		const struct ksync__psrc *s = &m->src[k];

		if (!(m->direct.kinds & (1u << k)) || !(m->open & (1u << k)) || (m->dead & (1u << k)))
			continue;
		uint64_t wm = watermark(s->limit, m->env.cfg.direct_permille);
		uint64_t rk = s->figure >= wm ? 0 : wm - s->figure;
		if (rk < room)
			room = rk;
		any = true;
	}
	if (!any) {
		__atomic_store_n(&m->direct.base, old_base, __ATOMIC_RELEASE); /* D1: the base put back */
		return;
	}
	__atomic_store_n(&m->direct.room, room, __ATOMIC_RELEASE); /* D1 */
}

/**
 * ksync__pm_direct_child() - in the child of fork(), under @lock: no other thread came along.
 * The forking thread did: when it forked from inside a direct round of @m
 * (a shrinker that runs a program), it is in the slow path and holds a
 * reclaim slot, and gives both back when the round ends.
 */
void ksync__pm_direct_child(struct ksync_pressure *m)
{
	int self = tl_reclaiming == m;

	m->direct.inflight = self;
	m->direct.reclaiming = self;
	pthread_cond_init(&m->direct.cv, NULL);
}

/*
 * Read every byte source through its probe (reset before read: @base first).
 * Return: the highest level a figure reads (NONE..CRITICAL) when at least
 * one figure is at or over its watermark, else -1 (also when none could be
 * read).
 */
static int direct_read(struct ksync_pressure *m)
{
	const struct ksync_pressure_config *c = &m->env.cfg;
	uint64_t room = UINT64_MAX;
	int over = -1;
	bool any = false;

	/* The sources the runner closed (died) are left out, as describe leaves them. */
	unsigned live = m->direct.kinds & __atomic_load_n(&m->open, __ATOMIC_ACQUIRE); /* pairs with the runner's release or (run.c) */
	uint64_t now = __atomic_load_n(&m->direct.published, __ATOMIC_RELAXED);
	uint64_t old = __atomic_exchange_n(&m->direct.base, now, __ATOMIC_RELEASE); /* D1 */
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		uint64_t figure, limit = m->direct.limit0[k];

		if (!(live & (1u << k)))
			continue;
		if (m->direct.probe_ops[k]->probe_read(m->direct.probe[k], &figure, &limit) < 0)
			continue; /* vanished: the runner describes it; left out here */
		any = true;
		uint64_t wm = watermark(limit, c->direct_permille);
		if (figure >= wm) {
			int level = (int)ksync_pressure_level_of(figure, limit, c->limit_permille);

			room = 0;
			if (level > over)
				over = level;
		} else if (wm - figure < room) {
			room = wm - figure;
		}
	}
	pthread_mutex_lock(&m->lock);
	m->st.direct_reads++;
	pthread_mutex_unlock(&m->lock);
	if (!any) {
		__atomic_store_n(&m->direct.base, old, __ATOMIC_RELEASE); /* D1: the base put back */
		return -1;
	}
	__atomic_store_n(&m->direct.room, room, __ATOMIC_RELEASE); /* D1 */
	return over;
}

/* A direct round of this thread, from the priority of @level (see the theory). */
static int direct_round(struct ksync_pressure *m, int level)
{
	const struct ksync_pressure_config *c = &m->env.cfg;
	uint64_t t0 = ksync__pm_now(), scans = 0, freed = 0;
	int prio, floor;

	if (level < KSYNC_PRESSURE_LOW)
		level = KSYNC_PRESSURE_LOW; /* a watermark below LOW's share */
	prio = c->priority[level];
	floor = c->floor[level];
	tl_reclaiming = m;
	for (;;) {
		for (int nid = 0; nid < m->nr_nodes; nid++) {
			freed += ksync_shrink_slab(m->reg, nid, m->group, prio);
			scans++;
		}
		level = direct_read(m);
		if (level < 0 || prio <= floor)
			break;
		if (level < KSYNC_PRESSURE_LOW)
			level = KSYNC_PRESSURE_LOW;
		if (c->floor[level] < floor)
			floor = c->floor[level]; /* it got worse: the deeper floor */
		prio--;
	}
	tl_reclaiming = NULL;
	uint64_t stall = ksync__pm_now() - t0;
	pthread_mutex_lock(&m->lock);
	m->direct.reclaiming--;
	m->direct.rounds_done++;
	m->direct.hist[bit_length(stall)]++;
	if (stall > m->st.direct_ns_max)
		m->st.direct_ns_max = stall;
	m->st.direct_scans += scans;
	m->st.direct_freed += freed;
	pthread_cond_broadcast(&m->direct.cv);
	pthread_mutex_unlock(&m->lock);
	return KSYNC_PRESSURE_CHARGE_RECLAIMED | (level >= 0 ? KSYNC_PRESSURE_CHARGE_OVER : 0);
}

/* Over the estimate: read, and reclaim or wait when a figure is over. */
static int direct_over(struct ksync_pressure *m)
{
	int level = direct_read(m);

	if (level < 0)
		return 0;
	pthread_mutex_lock(&m->lock);
	if (m->direct.reclaiming >= (int)m->env.cfg.direct_max) {
		uint64_t seen = m->direct.rounds_done;

		m->st.direct_throttled++;
		while (m->direct.rounds_done == seen)
			pthread_cond_wait(&m->direct.cv, &m->lock);
		pthread_mutex_unlock(&m->lock);
		/* That round read the figures: over still when it left no room. */
		bool over = __atomic_load_n(&m->direct.room, __ATOMIC_ACQUIRE) == 0; /* D1 */
		return KSYNC_PRESSURE_CHARGE_THROTTLED | (over ? KSYNC_PRESSURE_CHARGE_OVER : 0);
	}
	m->direct.reclaiming++;
	m->st.direct_rounds++;
	pthread_mutex_unlock(&m->lock);
	return direct_round(m, level);
}

/* Out of line: the fast path of ksync__pressure_charge() stays a few instructions. */
__attribute__((noinline)) static int charge_slow(struct ksync_site at, struct ksync_pressure *p, size_t bytes)
{
	uint64_t n, published;
	int r;

	if (MISUSE(at, !p, "ksync_pressure_charge: NULL monitor"))
		return -EINVAL;
	if (tl.monitor != p || tl.serial != p->direct.serial) {
		/*
		 * Another monitor's remainder (under one batch) goes back to it.
		 * Moving between live monitors, the charge is published and
		 * compared at once: a thread that charges two in turn would
		 * otherwise never fill a batch of either, nor compare.
		 */
		bool moving = tl_drain();

		tl.monitor = p;
		tl.serial = p->direct.serial;
		tl.pending = 0;
		if (!moving && bytes < p->direct.batch) {
			tl.pending = bytes;
			return 0;
		}
	}
	n = (uint64_t)tl.pending + bytes;
	if (n < tl.pending)
		n = UINT64_MAX;
	tl.pending = 0;
	if (!p->direct.kinds)
		return 0; /* nothing to estimate against: counting is all */
	published = __atomic_add_fetch(&p->direct.published, n, __ATOMIC_RELAXED); /* D2 */
	__atomic_add_fetch(&p->direct.checks, 1, __ATOMIC_RELAXED);
	uint64_t base = __atomic_load_n(&p->direct.base, __ATOMIC_ACQUIRE); /* D1 */
	uint64_t room = __atomic_load_n(&p->direct.room, __ATOMIC_ACQUIRE); /* D1 */
	if (published - base < room)
		return 0;
	if (tl_reclaiming || ksync__pm_running)
		return 0; /* inside a round of any monitor: reclaim does not recurse */

	pthread_mutex_lock(&p->lock);
	bool dying = p->direct.dying;
	if (!dying)
		p->direct.inflight++;
	pthread_mutex_unlock(&p->lock);
	if (MISUSE(at, dying, "ksync_pressure_charge: the monitor is being destroyed"))
		return -ESHUTDOWN;
	r = direct_over(p);
	pthread_mutex_lock(&p->lock);
	if (!--p->direct.inflight && p->direct.dying)
		pthread_cond_broadcast(&p->direct.cv);
	pthread_mutex_unlock(&p->lock);
	return r;
}

int ksync__pressure_charge(KSYNC_SITE_ARGS, struct ksync_pressure *p, size_t bytes)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	/* The fast path: this thread's counter only (see the theory). */
	if (ksync_likely(p && tl.monitor == p && tl.serial == p->direct.serial &&
			 bytes < p->direct.batch - tl.pending)) {
		tl.pending += bytes;
		return 0;
	}
	return charge_slow(at, p, bytes);
}
