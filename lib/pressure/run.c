/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/run.c - running a monitor: its fds, the helper thread, the
 * fd mode, fork (include/ksync/pressure.h).
 *
 * Theory of operation
 * -------------------
 * Each monitor owns one epoll fd holding:
 *   - every fd of every working source (data: (kind << 8) | fd index);
 *   - a timerfd (CLOCK_MONOTONIC, absolute) armed for the earlier of the
 *     polled sources' next sample (period poll_ms[level now]: it shortens
 *     as the pressure rises) and the moment the level now falls by
 *     hysteresis (so the period lengthens again);
 *   - an eventfd, written by ksync_pressure_inject() (the test source) and
 *     by ksync_pressure_stop().
 * A *pass* (pm_pass()) waits on the epoll fd (0 ms in fd mode, forever on
 * the helper thread), drains whatever is ready, asks each ready source what
 * it stands for (ready()), samples the polled sources when they are due,
 * reads the test source's pending injections, and hands the batch to
 * react.c, which runs at most one reclaim round. Sources that died (ready()
 * or sample() < 0) leave the epoll set and are closed at the end of the
 * pass; the monitor goes on with the rest, or none.
 *
 * Runners: the helper thread (ksync_pressure_start(): every signal blocked
 * while it is created, so it inherits a full mask; named "ksync-pressure")
 * or callers of ksync_pressure_dispatch() (fd mode). The two modes exclude
 * each other for the monitor's life in a process (-EBUSY): once the fd has
 * been handed out or a dispatch ran, a helper thread would steal the events
 * the program's loop waits for. Among dispatchers, an atomic flag (@busy)
 * lets one in; another one that comes meanwhile returns 0 at once (the one
 * inside does the work): dispatch never blocks.
 *
 * Stop: ksync_pressure_stop() sets @stop (release), writes the eventfd and
 * joins the thread. The thread checks @stop after every wait, react.c
 * between the priority steps of a round, so a round in flight ends at its
 * next step and no user callback runs after it.
 *
 * fork(): pthread_atfork handlers (registered once, on the first create)
 * take every monitor's lock before fork and release it after, in both
 * processes, so the child never inherits one held (the lock is never held
 * across a round or a callback: fork waits for no round). In the child the
 * helper thread does not exist: the handler clears the run flags. The fds
 * the child inherited share their open file descriptions (the epoll set, the
 * sources' triggers) with the parent, so the first start(), fd() or
 * dispatch() in the child closes them and opens everything again: the child
 * gets triggers and an epoll set of its own (and a new fd from
 * ksync_pressure_fd()).
 *
 * Barrier pairs:
 *   R1  inject: pending[l] += 1 (release), then a write to the eventfd;
 *       the runner drains the eventfd, then exchanges pending[l] with 0
 *       (acquire). An increment the exchange misses comes with a write
 *       after the drain, which makes the epoll fd ready again: no injection
 *       is lost.
 *   R2  stop: @stop stored with release, read with acquire by the thread's
 *       loop and by react.c between steps.
 *   R3  @busy taken with an acquire CAS and given back with a release store:
 *       the next dispatcher sees what the previous one wrote to the sources
 *       and the runner-only fields (@next_poll, @dead).
 */
#define _GNU_SOURCE
#include "monitor.h"

#include "../common/report.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define PM_EVENTS 16

/* ------------------------------------------------------------------------ */
/* Opening and closing sources                                              */

static void src_reset(struct ksync__psrc *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < KSYNC__PSRC_MAX_FDS; i++)
		s->fd[i] = -1;
}

static bool any_polled(struct ksync_pressure *m)
{
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
		if ((m->open & (1u << k)) && m->src[k].polled && m->src[k].ops && m->src[k].ops->sample)
			return true;
	return false;
}

/* Try source @kind: 0 when it works (its fds in the epoll set), else its errno. */
static int open_one(struct ksync_pressure *m, int kind)
{
	struct ksync__psrc *s = &m->src[kind];
	int r;

	src_reset(s);
	m->tried |= 1u << kind;
	m->died &= ~(1u << kind);
	if (kind == KSYNC_PRESSURE_SRC_TEST) {
		/* The test source: injections counted in m->pending, woken by the eventfd. */
		snprintf(s->desc, sizeof(s->desc), "ksync_pressure_inject(), woken through eventfd %d",
			 m->wakefd);
		__atomic_or_fetch(&m->open, 1u << kind, __ATOMIC_RELEASE);
		return 0;
	}
	s->ops = ksync__psrc_table[kind];
	if (!s->ops) {
		s->status = -ENOSYS;
		snprintf(s->desc, sizeof(s->desc), "not built into this library");
		return s->status;
	}
	r = s->ops->open(s, &m->env);
	for (int i = 0; !r && i < s->nr_fds; i++) {
		struct epoll_event ev = { .events = s->fd_events[i],
					  .data.u64 = ((uint64_t)kind << 8) | (unsigned)i };
		if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, s->fd[i], &ev) < 0) {
			r = -errno;
			snprintf(s->desc, sizeof(s->desc), "cannot watch fd %d: epoll_ctl: error %d", s->fd[i], -r);
		}
	}
	if (!r && !s->nr_fds && !(s->polled && s->ops->sample)) {
		r = -ENODEV;
		snprintf(s->desc + strlen(s->desc), sizeof(s->desc) - strlen(s->desc),
			 "%sneither an fd nor a sample", s->desc[0] ? "; " : "");
	}
	if (r) {
		s->status = r < 0 ? r : -EIO;
		s->ops->close(s);
		return s->status;
	}
	s->status = 0;
	__atomic_or_fetch(&m->open, 1u << kind, __ATOMIC_RELEASE);
	return 0;
}

/* Take source @kind out (it died, or the monitor closes). */
static void close_one(struct ksync_pressure *m, int kind)
{
	struct ksync__psrc *s = &m->src[kind];

	if (!(m->open & (1u << kind)))
		return;
	__atomic_and_fetch(&m->open, ~(1u << kind), __ATOMIC_RELEASE);
	for (int i = 0; i < s->nr_fds; i++)
		if (s->fd[i] >= 0 && m->epfd >= 0)
			epoll_ctl(m->epfd, EPOLL_CTL_DEL, s->fd[i], NULL);
	if (s->ops)
		s->ops->close(s);
}

/* Close the sources that died in this pass; under the lock, for describe(). */
static void close_dead(struct ksync_pressure *m)
{
	if (!m->dead)
		return;
	pthread_mutex_lock(&m->lock);
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
		if (m->dead & (1u << k)) {
			close_one(m, k);
			m->died |= 1u << k;
			if (!m->src[k].status)
				m->src[k].status = -EIO;
		}
	m->dead = 0;
	pthread_mutex_unlock(&m->lock);
}

static void wake(struct ksync_pressure *m)
{
	uint64_t one = 1;
	int fd = __atomic_load_n(&m->wakefd, __ATOMIC_RELAXED);

	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the runner is woken anyway. */
	}
}

/* Arm the timer for the next poll or the level's fall, whichever is first. */
static void arm_timer(struct ksync_pressure *m)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	uint64_t deadline = 0, now = ksync__pm_now();

	if (any_polled(m))
		deadline = m->next_poll;
	pthread_mutex_lock(&m->lock);
	int level = ksync__pm_level_locked(m, now);
	if (level > KSYNC_PRESSURE_NONE) {
		uint64_t fall = m->last_event[level] + (uint64_t)m->env.cfg.hold_ms * 1000000ull;
		if (!deadline || fall < deadline)
			deadline = fall;
	}
	pthread_mutex_unlock(&m->lock);
	if (deadline) {
		if (deadline <= now)
			deadline = now + 1;
		its.it_value.tv_sec = (time_t)(deadline / 1000000000ull);
		its.it_value.tv_nsec = (long)(deadline % 1000000000ull);
	}
	timerfd_settime(m->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/**
 * ksync__pm_open() - make the monitor's fds and open its sources.
 * @m: the monitor, with env, requested filled in and no fd open
 *
 * AUTO: the first event source of KSYNC__PSRC_AUTO_EVENTS that opens, then
 * the first polled one of KSYNC__PSRC_AUTO_POLLED; an explicit mask: each
 * selected source. A source that does not open is described, not an error.
 * Return: 0, or the errno of the monitor's own fds (epoll, timerfd, eventfd).
 */
int ksync__pm_open(struct ksync_pressure *m)
{
	static const int auto_events[] = KSYNC__PSRC_AUTO_EVENTS;
	static const int auto_polled[] = KSYNC__PSRC_AUTO_POLLED;
	struct epoll_event ev = { .events = EPOLLIN };

	m->tried = 0;
	m->died = 0;
	m->dead = 0;
	__atomic_store_n(&m->open, 0, __ATOMIC_RELAXED);
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	m->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	__atomic_store_n(&m->wakefd, eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), __ATOMIC_RELAXED);
	if (m->epfd < 0 || m->timerfd < 0 || m->wakefd < 0)
		goto fail;
	ev.data.u64 = KSYNC__PM_TAG_WAKE;
	if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->wakefd, &ev) < 0)
		goto fail;
	ev.data.u64 = KSYNC__PM_TAG_TIMER;
	if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->timerfd, &ev) < 0)
		goto fail;
	m->pid = getpid();

	if (m->requested == KSYNC_PRESSURE_AUTO) {
		for (size_t i = 0; i < sizeof(auto_events) / sizeof(auto_events[0]); i++)
			if (open_one(m, auto_events[i]) == 0)
				break;
		for (size_t i = 0; i < sizeof(auto_polled) / sizeof(auto_polled[0]); i++)
			if (open_one(m, auto_polled[i]) == 0)
				break;
	} else {
		for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
			if (m->requested & (1u << k))
				open_one(m, k);
	}
	m->next_poll = ksync__pm_now() + (uint64_t)m->env.cfg.poll_ms[KSYNC_PRESSURE_NONE] * 1000000ull;
	arm_timer(m);
	for (int l = KSYNC_PRESSURE_LOW; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		if (__atomic_load_n(&m->pending[l], __ATOMIC_RELAXED))
			wake(m); /* injected before a reopen: the old eventfd's wake is gone */
	return 0;
fail:;
	int err = errno ? -errno : -ENOMEM;
	ksync__pm_close(m);
	return err;
}

/** ksync__pm_close() - close every source and the monitor's own fds. */
void ksync__pm_close(struct ksync_pressure *m)
{
	/*
	 * The epoll fd goes first, so that the sources are closed without
	 * EPOLL_CTL_DEL: in a child of fork() the epoll set is the parent's
	 * too (one open file description), and a DEL there would take the
	 * parent's sources out of it.
	 */
	if (m->epfd >= 0)
		close(m->epfd);
	m->epfd = -1;
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
		close_one(m, k);
	if (m->timerfd >= 0)
		close(m->timerfd);
	if (m->wakefd >= 0)
		close(m->wakefd);
	m->timerfd = -1;
	__atomic_store_n(&m->wakefd, -1, __ATOMIC_RELAXED);
}

/* In a child of fork(): drop the fds shared with the parent and open ours. Runner only. */
static void reopen_if_forked(struct ksync_pressure *m)
{
	if (m->pid == getpid())
		return;
	ksync__pm_close(m);
	ksync__pm_open(m);
}

/* ------------------------------------------------------------------------ */
/* One pass                                                                 */

/* Read what is ready (waiting @timeout ms), react, rearm. Return: events read. */
static int pm_pass(struct ksync_pressure *m, int timeout)
{
	struct epoll_event ev[PM_EVENTS];
	struct ksync__pm_batch b;
	uint64_t v;
	int n;

	memset(&b, 0, sizeof(b));
	n = epoll_wait(m->epfd, ev, PM_EVENTS, timeout);
	if (n < 0)
		n = 0; /* EINTR: nothing read */
	for (int i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;

		if (tag == KSYNC__PM_TAG_WAKE) {
			while (read(m->wakefd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
			}
		} else if (tag == KSYNC__PM_TAG_TIMER) {
			while (read(m->timerfd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
			}
		} else {
			int kind = (int)(tag >> 8), idx = (int)(tag & 0xff);
			struct ksync__psrc *s = &m->src[kind];

			if (kind >= KSYNC_PRESSURE_NR_SOURCES || !(m->open & (1u << kind)) ||
			    (m->dead & (1u << kind)))
				continue;
			int r = s->ops->ready(s, idx, ev[i].events);
			if (r < 0) {
				s->status = r;
				m->dead |= 1u << kind;
			} else {
				ksync__pm_note(m, &b, kind, r, 1);
			}
		}
	}
	/* The test source (R1: after draining the eventfd). */
	if (m->open & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST))
		for (int l = KSYNC_PRESSURE_LOW; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
			unsigned k = __atomic_exchange_n(&m->pending[l], 0, __ATOMIC_ACQUIRE);
			ksync__pm_note(m, &b, KSYNC_PRESSURE_SRC_TEST, l, k);
		}
	/* The polled sources, when due; a poll that finds a level is an event. */
	uint64_t now = ksync__pm_now();
	if (any_polled(m) && now >= m->next_poll) {
		/* Direct reclaim's estimate restarts from these samples (direct.c). */
		uint64_t direct_base = ksync__pm_direct_sampling(m);

		for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
			struct ksync__psrc *s = &m->src[k];

			if (!(m->open & (1u << k)) || !s->polled || !s->ops->sample || (m->dead & (1u << k)))
				continue;
			int r = s->ops->sample(s);
			if (r < 0) {
				s->status = r;
				m->dead |= 1u << k;
			} else {
				ksync__pm_note(m, &b, k, r, 1);
			}
		}
		ksync__pm_direct_sampled(m, direct_base);
		now = ksync__pm_now();
		pthread_mutex_lock(&m->lock);
		int level = ksync__pm_level_locked(m, now);
		pthread_mutex_unlock(&m->lock);
		m->next_poll = now + (uint64_t)m->env.cfg.poll_ms[level] * 1000000ull;
	}
	close_dead(m);
	ksync__pm_react(m, &b);
	close_dead(m);
	arm_timer(m);
	return (int)b.total;
}

/* ------------------------------------------------------------------------ */
/* The helper thread                                                        */

static void *pm_thread(void *arg)
{
	struct ksync_pressure *m = arg;

	ksync__pm_running = m;
	/* R2: pairs with the release store of ksync_pressure_stop(). */
	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
		pm_pass(m, -1);
	ksync__pm_running = NULL;
	return NULL;
}

int ksync__pressure_start(KSYNC_SITE_ARGS, struct ksync_pressure *p)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	sigset_t all, old;
	int r;

	pthread_mutex_lock(&p->lock);
	bool taken = p->thread_running || p->fd_mode;
	if (!taken) {
		/* Claimed; stop() refuses (as if not running) until the thread exists. */
		p->thread_running = true;
		p->stopping = true;
		__atomic_store_n(&p->stop, 0, __ATOMIC_RELAXED);
		/* R3: the thread is the runner from now until stop() gives @busy back. */
		__atomic_store_n(&p->busy, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&p->lock);
	if (MISUSE(at, taken, "ksync_pressure_start: the monitor runs already (its helper thread, or the fd mode)"))
		return -EBUSY;

	reopen_if_forked(p);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&p->thread, NULL, pm_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!r)
		pthread_setname_np(p->thread, "ksync-pressure");
	pthread_mutex_lock(&p->lock);
	p->stopping = false;
	if (r) {
		p->thread_running = false;
		__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&p->lock);
	return r ? -EAGAIN : 0;
}

/**
 * ksync__pm_stop_thread() - stop and join the helper thread if it runs.
 * Return: 0 when it was stopped here, -EINVAL when it did not run (or
 * another stop is joining it).
 */
int ksync__pm_stop_thread(struct ksync_pressure *m)
{
	pthread_mutex_lock(&m->lock);
	bool run = m->thread_running && !m->stopping;
	if (run)
		m->stopping = true;
	pthread_mutex_unlock(&m->lock);
	if (!run)
		return -EINVAL;
	/* R2: pairs with the acquire loads in pm_thread() and react.c. */
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	wake(m);
	pthread_join(m->thread, NULL);
	pthread_mutex_lock(&m->lock);
	m->thread_running = false;
	m->stopping = false;
	__atomic_store_n(&m->stop, 0, __ATOMIC_RELAXED);
	/* R3: the next runner sees what the thread wrote. */
	__atomic_store_n(&m->busy, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/**
 * ksync__pm_wait_runner() - wait until no dispatcher is inside, and keep it so.
 * For destroy (after the thread was stopped): a dispatcher of another thread
 * may be in its round (fd mode); freeing the monitor under it would be a use
 * after free. Takes @busy for good: a dispatch that comes later returns 0.
 */
void ksync__pm_wait_runner(struct ksync_pressure *m)
{
	int expected = 0;

	/* R3: acquire, so that what the last runner wrote is seen before the close. */
	while (!__atomic_compare_exchange_n(&m->busy, &expected, 1, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		struct timespec ts = { 0, 1000000 };

		expected = 0;
		nanosleep(&ts, NULL);
	}
	/* A stop() that gave @busy back may still be unlocking: wait for it too. */
	pthread_mutex_lock(&m->lock);
	pthread_mutex_unlock(&m->lock);
}

int ksync__pressure_stop(KSYNC_SITE_ARGS, struct ksync_pressure *p)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, ksync__pm_running == p, "ksync_pressure_stop: from the monitor's own callback"))
		return -EDEADLK;
	if (MISUSE(at, ksync__pm_stop_thread(p) < 0, "ksync_pressure_stop: the helper thread does not run"))
		return -EINVAL;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The fd mode                                                              */

int ksync__pressure_fd(KSYNC_SITE_ARGS, struct ksync_pressure *p)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	int expected = 0;

	pthread_mutex_lock(&p->lock);
	bool thread = p->thread_running;
	if (!thread)
		p->fd_mode = true;
	pthread_mutex_unlock(&p->lock);
	if (MISUSE(at, thread, "ksync_pressure_fd: the helper thread runs the monitor"))
		return -EBUSY;
	/* R3: as a dispatcher, to reopen in a child of fork(). */
	if (__atomic_compare_exchange_n(&p->busy, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		reopen_if_forked(p);
		int fd = p->epfd; /* read while we are the runner: destroy waits for it */

		__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
		return fd;
	}
	return p->epfd;
}

int ksync__pressure_dispatch(KSYNC_SITE_ARGS, struct ksync_pressure *p)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_pressure *prev;
	int expected = 0, n;

	if (MISUSE(at, ksync__pm_running == p, "ksync_pressure_dispatch: from the monitor's own callback"))
		return -EDEADLK;
	pthread_mutex_lock(&p->lock);
	bool thread = p->thread_running;
	if (!thread)
		p->fd_mode = true;
	pthread_mutex_unlock(&p->lock);
	if (MISUSE(at, thread, "ksync_pressure_dispatch: the helper thread runs the monitor"))
		return -EBUSY;
	/* R3: one dispatcher at a time; the others return at once. */
	if (!__atomic_compare_exchange_n(&p->busy, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	reopen_if_forked(p);
	prev = ksync__pm_running;
	ksync__pm_running = p;
	n = pm_pass(p, 0);
	ksync__pm_running = prev;
	__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
	return n;
}

/* ------------------------------------------------------------------------ */
/* Every monitor of the process, and fork                                   */

static pthread_mutex_t pm_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_pressure *pm_list;
static pthread_once_t pm_atfork_once = PTHREAD_ONCE_INIT;
static int pm_atfork_err;

/* Before fork(): no monitor's lock may be held by another thread across it. */
static void pm_prepare(void)
{
	pthread_mutex_lock(&pm_list_lock);
	for (struct ksync_pressure *m = pm_list; m; m = m->list_next)
		pthread_mutex_lock(&m->lock);
}

static void pm_parent(void)
{
	for (struct ksync_pressure *m = pm_list; m; m = m->list_next)
		pthread_mutex_unlock(&m->lock);
	pthread_mutex_unlock(&pm_list_lock);
}

/* In the child: only the forking thread exists; no helper thread runs. */
static void pm_child(void)
{
	for (struct ksync_pressure *m = pm_list; m; m = m->list_next) {
		m->thread_running = false;
		m->stopping = false;
		__atomic_store_n(&m->stop, 0, __ATOMIC_RELAXED);
		/* A runner that is not this thread did not come along. */
		__atomic_store_n(&m->busy, ksync__pm_running == m, __ATOMIC_RELAXED);
		ksync__pm_direct_child(m);
		pthread_mutex_unlock(&m->lock);
	}
	pthread_mutex_unlock(&pm_list_lock);
}

static void pm_register_atfork(void)
{
	pm_atfork_err = pthread_atfork(pm_prepare, pm_parent, pm_child);
}

/*
 * Registered when the program loads, ahead of the handlers that SRCU
 * registers on its first domain: prepare handlers run in the reverse order
 * of registration, so ours take the monitors' locks after SRCU took its
 * own, the same order as in the child (where SRCU re-creates its locks
 * instead of releasing them, so ThreadSanitizer sees them held there).
 * No monitor's lock is ever held while an SRCU lock is taken, so either
 * order is free of deadlock; this one keeps the lock-order graph acyclic.
 */
__attribute__((constructor)) static void pm_register_atfork_early(void)
{
	pthread_once(&pm_atfork_once, pm_register_atfork);
}

/** ksync__pm_list_add() - list @m for the fork handlers (registered on the first call). */
int ksync__pm_list_add(struct ksync_pressure *m)
{
	pthread_once(&pm_atfork_once, pm_register_atfork);
	if (pm_atfork_err)
		return -pm_atfork_err;
	pthread_mutex_lock(&pm_list_lock);
	m->list_prev = NULL;
	m->list_next = pm_list;
	if (pm_list)
		pm_list->list_prev = m;
	pm_list = m;
	pthread_mutex_unlock(&pm_list_lock);
	return 0;
}

/** ksync__pm_list_del() - take @m off the list. */
void ksync__pm_list_del(struct ksync_pressure *m)
{
	pthread_mutex_lock(&pm_list_lock);
	if (m->list_prev)
		m->list_prev->list_next = m->list_next;
	else
		pm_list = m->list_next;
	if (m->list_next)
		m->list_next->list_prev = m->list_prev;
	pthread_mutex_unlock(&pm_list_lock);
}
