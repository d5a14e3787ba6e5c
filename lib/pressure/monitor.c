/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/pressure/monitor.c - a pressure monitor's life: create (the config
 * checked and completed, the sources opened), destroy, and what it tells
 * (describe, sources, level, figures, names); the test source's
 * ksync_pressure_inject() (include/ksync/pressure.h).
 *
 * Theory of operation
 * -------------------
 * create checks the config against the header's -EINVAL list (reported at
 * the caller's line), fills in every default (triggers, priorities, floors,
 * per-mille limits, poll periods, rate limits, hold, the systemd variables
 * from the environment, the root "" for the real /proc and /sys), takes a
 * reference on the target group, and has run.c open the monitor's fds and
 * its sources. Nothing in the environment fails it: a source that cannot
 * open is described and left out; a monitor with no source is legal.
 *
 * The test source lives here and in run.c: ksync_pressure_inject() counts
 * the level in m->pending[] and writes the monitor's eventfd (both
 * async-signal-safe: an atomic add and a write(2)); the runner drains the
 * eventfd and takes the counts (barrier pair R1 of run.c).
 *
 * destroy stops the helper thread if it runs (run.c), closes every fd, drops
 * the group's reference and frees. From the monitor's own callback (this
 * thread is its runner) it refuses, -EDEADLK: it would join itself or free
 * the monitor under the round in progress.
 *
 * Calls: this file -> run.c -> react.c, never back (lib/pressure/monitor.h).
 */
#include "monitor.h"

#include "../common/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ksync/impl/switches.h> /* KSYNC__ALLOC */

static const char *const source_names[KSYNC_PRESSURE_NR_SOURCES] = {
	[KSYNC_PRESSURE_SRC_SYSTEMD] = "systemd",
	[KSYNC_PRESSURE_SRC_PSI_CGROUP] = "psi-cgroup",
	[KSYNC_PRESSURE_SRC_PSI_SYSTEM] = "psi-system",
	[KSYNC_PRESSURE_SRC_VMPRESSURE] = "vmpressure",
	[KSYNC_PRESSURE_SRC_LIMIT] = "limit",
	[KSYNC_PRESSURE_SRC_MEMINFO] = "meminfo",
	[KSYNC_PRESSURE_SRC_BUDGET] = "budget",
	[KSYNC_PRESSURE_SRC_TEST] = "test",
};

static const char *const level_names[KSYNC_PRESSURE_NR_LEVELS] = {
	"none", "low", "medium", "critical",
};

const char *ksync_pressure_source_name(enum ksync_pressure_source s)
{
	return (unsigned)s < KSYNC_PRESSURE_NR_SOURCES ? source_names[s] : NULL;
}

const char *ksync_pressure_level_name(enum ksync_pressure_level level)
{
	return (unsigned)level < KSYNC_PRESSURE_NR_LEVELS ? level_names[level] : NULL;
}

/* ------------------------------------------------------------------------ */
/* The config                                                               */

/* Why @cfg is bad (the report's text), or NULL when it is good. */
static const char *config_error(const struct ksync_pressure_config *cfg,
				struct ksync_shrinker_registry *reg)
{
	const unsigned all = (1u << KSYNC_PRESSURE_NR_SOURCES) - 1;

	if (cfg->sources & ~all)
		return "unknown source bits";
	if ((cfg->sources & KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_BUDGET)) && !cfg->budget_bytes)
		return "SRC_BUDGET without budget_bytes";
	for (int l = KSYNC_PRESSURE_LOW; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
		const struct ksync_pressure_trigger *t = &cfg->trigger[l];

		if (cfg->priority[l] < 0 || cfg->priority[l] > KSYNC_DEF_PRIORITY)
			return "a priority outside 0..12";
		if (cfg->floor[l] < 0 || cfg->floor[l] > KSYNC_DEF_PRIORITY)
			return "a floor outside 0..12";
		if ((t->full || t->stall_us || t->window_us) && t->stall_us > t->window_us)
			return "a trigger whose stall is longer than its window";
	}
	if (cfg->direct_permille > 1000)
		return "a direct_permille above 1000";
	if (cfg->group && ksync_memgroup_set_of(cfg->group) != ksync_shrinker_registry_groups(reg))
		return "a group of another set than the registry's";
	return NULL;
}

/* Every default of include/ksync/pressure.h into @c. */
static void config_defaults(struct ksync_pressure_config *c)
{
	static const struct ksync_pressure_trigger triggers[KSYNC_PRESSURE_NR_LEVELS] = {
		{ 0, 0, 0 }, { 0, 70000, 2000000 }, { 0, 100000, 2000000 }, { 1, 100000, 2000000 },
	};
	static const int prio[] = { 0, 12, 10, 7 }, floor[] = { 0, 10, 6, 0 };
	static const unsigned permille[] = { 0, 800, 900, 950 }, poll[] = { 200, 50, 20, 5 },
			      interval[] = { 0, 1000, 100, 10 };

	for (int l = KSYNC_PRESSURE_LOW; l < KSYNC_PRESSURE_NR_LEVELS; l++) {
		struct ksync_pressure_trigger *t = &c->trigger[l];

		if (!t->full && !t->stall_us && !t->window_us)
			*t = triggers[l];
		if (!c->priority[l]) {
			c->priority[l] = prio[l];
			if (!c->floor[l])
				c->floor[l] = floor[l];
		}
		if (!c->limit_permille[l])
			c->limit_permille[l] = permille[l];
		if (!c->min_interval_ms[l])
			c->min_interval_ms[l] = interval[l];
	}
	for (int l = 0; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		if (!c->poll_ms[l])
			c->poll_ms[l] = poll[l];
	if (!c->hold_ms)
		c->hold_ms = 2000;
	if (!c->direct_permille)
		c->direct_permille = c->limit_permille[KSYNC_PRESSURE_MEDIUM];
	if (!c->direct_max)
		c->direct_max = 2;
	if (!c->charge_batch)
		c->charge_batch = 256 * 1024;
	if (!c->root)
		c->root = "";
	if (!c->systemd_watch)
		c->systemd_watch = getenv("MEMORY_PRESSURE_WATCH");
	if (!c->systemd_write)
		c->systemd_write = getenv("MEMORY_PRESSURE_WRITE");
}

/*
 * Copy the config's strings into one block of the monitor's own: the
 * caller's (and the environment's) may go away after create, and a child
 * of fork() reopens the sources from them. Return: 0 or -ENOMEM.
 */
static int config_own_strings(struct ksync_pressure *m)
{
	struct ksync_pressure_config *c = &m->env.cfg;
	const char **field[] = { &c->root, &c->systemd_watch, &c->systemd_write };
	size_t len = 0;
	char *q;

	for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++)
		if (*field[i])
			len += strlen(*field[i]) + 1;
	if (!len)
		return 0;
	m->strings = q = KSYNC__ALLOC(malloc(len));
	if (!q)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++)
		if (*field[i]) {
			size_t n = strlen(*field[i]) + 1;

			memcpy(q, *field[i], n);
			*field[i] = q;
			q += n;
		}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Create, destroy                                                          */

int ksync__pressure_create(KSYNC_SITE_ARGS, const struct ksync_pressure_config *cfg,
			   struct ksync_pressure **out)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	static const struct ksync_pressure_config zero;
	struct ksync_shrinker_registry *reg;
	struct ksync_pressure *m;
	const char *why;
	int r;

	if (MISUSE(at, !out, "ksync_pressure_create: NULL out"))
		return -EINVAL;
	*out = NULL;
	if (!cfg)
		cfg = &zero;
	reg = cfg->reg ? cfg->reg : ksync_shrinker_registry_default();
	if (!reg)
		return -ENOMEM;
	why = config_error(cfg, reg);
	if (MISUSE(at, why != NULL, "ksync_pressure_create: %s", why))
		return -EINVAL;
	m = KSYNC__ALLOC(calloc(1, sizeof(*m)));
	if (!m)
		return -ENOMEM;
	m->env.cfg = *cfg;
	config_defaults(&m->env.cfg);
	/* The floor is checked with the priority it is the floor of: the default one included. */
	for (int l = KSYNC_PRESSURE_LOW; l < KSYNC_PRESSURE_NR_LEVELS; l++)
		if (MISUSE(at, m->env.cfg.floor[l] > m->env.cfg.priority[l],
			   "ksync_pressure_create: the floor of %s (%d) is above its priority (%d)",
			   level_names[l], m->env.cfg.floor[l], m->env.cfg.priority[l])) {
			free(m);
			return -EINVAL;
		}
	if (config_own_strings(m) < 0) {
		free(m);
		return -ENOMEM;
	}
	m->env.cfg.reg = reg;
	m->requested = cfg->sources;
	m->reg = reg;
	m->group = cfg->group;
	m->nr_nodes = ksync_shrinker_registry_nr_nodes(reg);
	m->epfd = m->timerfd = m->wakefd = -1;
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
		m->src[k].status = -ENOENT;
	r = pthread_mutex_init(&m->lock, NULL);
	if (r) {
		free(m->strings);
		free(m);
		return -r;
	}
	r = ksync__pm_list_add(m);
	if (r) {
		pthread_mutex_destroy(&m->lock);
		free(m->strings);
		free(m);
		return r;
	}
	r = ksync__pm_open(m);
	if (!r) {
		r = ksync__pm_direct_init(m);
		if (r)
			ksync__pm_close(m);
	}
	if (r) {
		ksync__pm_list_del(m);
		pthread_mutex_destroy(&m->lock);
		free(m->strings);
		free(m);
		return r;
	}
	if (m->group)
		ksync_memgroup_get(m->group);
	*out = m;
	return 0;
}

int ksync__pressure_destroy(KSYNC_SITE_ARGS, struct ksync_pressure *p)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (!p)
		return 0;
	if (MISUSE(at, ksync__pm_running == p, "ksync_pressure_destroy: from the monitor's own callback"))
		return -EDEADLK;
	/* A shrinker of the monitor's direct round: fini would wait for this very round. */
	if (MISUSE(at, ksync__pm_direct_inside(p), "ksync_pressure_destroy: from inside its direct round"))
		return -EDEADLK;
	ksync__pm_stop_thread(p);
	ksync__pm_wait_runner(p); /* a dispatcher of another thread in its round */
	ksync__pm_direct_fini(p);  /* charging threads in their slow path */
	ksync__pm_list_del(p);
	ksync__pm_close(p);
	if (p->group)
		ksync_memgroup_put(p->group);
	pthread_mutex_destroy(&p->lock);
	free(p->strings);
	free(p);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Callbacks, the test source                                               */

int ksync__pressure_on_level(KSYNC_SITE_ARGS, struct ksync_pressure *p, enum ksync_pressure_level level,
			     ksync_pressure_fn fn, void *arg)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	if (MISUSE(at, level <= KSYNC_PRESSURE_NONE || level >= KSYNC_PRESSURE_NR_LEVELS,
		   "ksync_pressure_on_level: level %d outside LOW..CRITICAL", (int)level))
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	p->cb[level].fn = fn;
	p->cb[level].arg = arg;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int ksync__pressure_inject(KSYNC_SITE_ARGS, struct ksync_pressure *p, enum ksync_pressure_level level)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	uint64_t one = 1;

	if (MISUSE(at, level <= KSYNC_PRESSURE_NONE || level >= KSYNC_PRESSURE_NR_LEVELS,
		   "ksync_pressure_inject: level %d outside LOW..CRITICAL", (int)level))
		return -EINVAL;
	if (MISUSE(at, !(__atomic_load_n(&p->open, __ATOMIC_ACQUIRE) &
			 KSYNC_PRESSURE_SRC(KSYNC_PRESSURE_SRC_TEST)),
		   "ksync_pressure_inject: the monitor has no test source"))
		return -EINVAL;
	/* R1 (run.c): count, then wake; the runner drains, then takes the count. */
	__atomic_fetch_add(&p->pending[level], 1, __ATOMIC_RELEASE);
	int fd = __atomic_load_n(&p->wakefd, __ATOMIC_RELAXED);
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated; the runner is woken anyway. */
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* What the monitor tells                                                   */

/* The "direct:" line of describe (snprintf's contract; @p's lock held). */
static size_t describe_direct(struct ksync_pressure *p, char *buf, size_t len)
{
	const struct ksync_pressure_config *c = &p->env.cfg;
	char names[64] = "";
	int n;

	unsigned live = p->direct.kinds & __atomic_load_n(&p->open, __ATOMIC_ACQUIRE);

	if (!p->direct.kinds)
		n = snprintf(buf, len, "direct: off: no byte source (limit, budget or meminfo) to estimate "
				       "against; ksync_pressure_charge() only counts\n");
	else if (!live)
		n = snprintf(buf, len, "direct: off: its byte sources died; ksync_pressure_charge() only counts\n");
	else {
		for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++)
			if (live & (1u << k))
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 names[0] ? ", " : "", source_names[k]);
		n = snprintf(buf, len,
			     "direct: ok: ksync_pressure_charge() reclaims above %u per mille of the bound of: %s; "
			     "batch %zu bytes, at most %u threads reclaiming at once\n",
			     c->direct_permille, names, c->charge_batch, c->direct_max);
	}
	return n < 0 ? 0 : (size_t)n;
}

size_t ksync_pressure_describe(struct ksync_pressure *p, char *buf, size_t len)
{
	size_t need = 0;
	char dummy[1];

	if (!buf || !len) {
		buf = dummy;
		len = sizeof(dummy);
	}
	buf[0] = '\0';
	pthread_mutex_lock(&p->lock);
	for (int k = 0; k < KSYNC_PRESSURE_NR_SOURCES; k++) {
		const struct ksync__psrc *s = &p->src[k];
		char line[KSYNC__PSRC_DESC + 160];
		int n;

		if (!(p->tried & (1u << k)))
			continue;
		if (__atomic_load_n(&p->open, __ATOMIC_ACQUIRE) & (1u << k)) {
			n = snprintf(line, sizeof(line), "%s: ok: %s", source_names[k], s->desc);
			if (s->polled && s->ops && s->ops->sample)
				n = snprintf(line, sizeof(line), "%s: ok: %s; polled every %u/%u/%u/%u ms (none/low/medium/critical)",
					     source_names[k], s->desc, p->env.cfg.poll_ms[0], p->env.cfg.poll_ms[1],
					     p->env.cfg.poll_ms[2], p->env.cfg.poll_ms[3]);
		} else if (p->died & (1u << k)) {
			n = snprintf(line, sizeof(line), "%s: off: died (error %d): %s", source_names[k],
				     -s->status, s->desc);
		} else if (!s->ops && k != KSYNC_PRESSURE_SRC_TEST) {
			n = snprintf(line, sizeof(line), "%s: off: %s", source_names[k], s->desc);
		} else {
			n = snprintf(line, sizeof(line), "%s: off: %s (error %d)", source_names[k],
				     s->desc[0] ? s->desc : "did not open", -s->status);
		}
		if (n < 0)
			continue;
		if ((size_t)n >= sizeof(line))
			n = (int)sizeof(line) - 1;
		if (need < len)
			snprintf(buf + need, len - need, "%s\n", line);
		need += (size_t)n + 1;
	}
	if (!p->tried) {
		const char *none = "no source tried\n";
		if (need < len)
			snprintf(buf + need, len - need, "%s", none);
		need += strlen(none);
	}
	need += describe_direct(p, need < len ? buf + need : dummy, need < len ? len - need : sizeof(dummy));
	pthread_mutex_unlock(&p->lock);
	return need;
}

unsigned ksync_pressure_sources(struct ksync_pressure *p)
{
	return __atomic_load_n(&p->open, __ATOMIC_ACQUIRE);
}

enum ksync_pressure_level ksync_pressure_level(struct ksync_pressure *p)
{
	enum ksync_pressure_level l;

	pthread_mutex_lock(&p->lock);
	l = ksync__pm_level_locked(p, ksync__pm_now());
	pthread_mutex_unlock(&p->lock);
	return l;
}

/* The upper bound of the bucket holding the @q-th sample (1-based). */
static uint64_t percentile(const uint64_t *hist, uint64_t q)
{
	uint64_t seen = 0;

	for (int b = 0; b < KSYNC__PM_HIST; b++) {
		seen += hist[b];
		if (seen >= q)
			return b == 0 ? 0 : b >= 64 ? UINT64_MAX : (1ull << b) - 1;
	}
	return 0;
}

void ksync_pressure_get_stats(struct ksync_pressure *p, struct ksync_pressure_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	if (out->latency_samples) {
		uint64_t n = out->latency_samples;

		out->latency_ns_p50 = percentile(p->hist, (n + 1) / 2);
		out->latency_ns_p99 = percentile(p->hist, n - n / 100);
		if (out->latency_ns_p50 > out->latency_ns_max)
			out->latency_ns_p50 = out->latency_ns_max;
		if (out->latency_ns_p99 > out->latency_ns_max)
			out->latency_ns_p99 = out->latency_ns_max;
	}
	uint64_t stalls = 0;
	for (int b = 0; b < KSYNC__PM_HIST; b++)
		stalls += p->direct.hist[b];
	if (stalls) {
		out->direct_ns_p50 = percentile(p->direct.hist, (stalls + 1) / 2);
		out->direct_ns_p99 = percentile(p->direct.hist, stalls - stalls / 100);
		if (out->direct_ns_p50 > out->direct_ns_max)
			out->direct_ns_p50 = out->direct_ns_max;
		if (out->direct_ns_p99 > out->direct_ns_max)
			out->direct_ns_p99 = out->direct_ns_max;
	}
	out->direct_checks = __atomic_load_n(&p->direct.checks, __ATOMIC_RELAXED);
	out->direct_bytes = __atomic_load_n(&p->direct.published, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
}
