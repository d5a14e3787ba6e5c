/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Concurrent torture of ksync::shrinker (runs under ASan and TSan too):
 * registrar threads register and free shrinkers, a grower pushes the id
 * space (and every group's maps) to new sizes, walkers run group and global
 * walks, a bit setter sets random bits, a group churner creates and destroys
 * child groups with deferred work in them, a debug reader calls the debug
 * interface. Checked:
 *  - no callback runs on a shrinker after its free/unregister returned;
 *  - no two live shrinkers share an id, and ids are reused (lowest free);
 *  - nr_deferred totals are conserved across growth, reparenting and
 *    unregister (the shrinkers' counts are 0 in groups, so walks never move
 *    group work: every unit added is found at the end);
 *  - freed shrinker info is never read (the sanitizers' job).
 * Duration: KTEST_SECONDS, default 1.5 s.
 */
#define _GNU_SOURCE
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>

#include <ksync/atomic.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktest.h"
#include "rng.h"

#define MAX_TRACKED 1000000
#define NGROUPS 6
#define MAX_IDS 8192

struct tracked {
	ksync_atomic_t state; /* 1 live, 2 freed (free returned) */
	int id;
	ksync_atomic_long_t objects;
};

static struct tracked *pool;
static ksync_atomic_t pool_next;
static ksync_atomic_t violations;
static ksync_atomic_t stop;
static ksync_atomic_long_t added_to_groups;
static ksync_atomic_long_t callbacks;
static ksync_atomic_t reused_ids;
static void *id_owner[MAX_IDS];
static struct ksync_shrinker_registry *reg;
static struct ksync_memgroup *groups[NGROUPS];

static void check_alive(struct ksync_shrinker *s)
{
	struct tracked *t = s->private_data;

	/* Acquire: pairs with the release that marks it freed after free returned. */
	if (ksync_atomic_read_acquire(&t->state) != 1)
		ksync_atomic_inc(&violations);
	if (s->id != t->id)
		ksync_atomic_inc(&violations);
	ksync_atomic_long_inc(&callbacks);
}

static unsigned long t_count(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct tracked *t = s->private_data;

	check_alive(s);
	if (sc->group)
		return 0; /* group work is never moved by walks: conservation stays exact */
	long n = ksync_atomic_long_read(&t->objects);
	return n > 0 ? (unsigned long)n : KSYNC_SHRINK_EMPTY;
}

static unsigned long t_scan(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct tracked *t = s->private_data;
	long have = ksync_atomic_long_read(&t->objects), take;

	check_alive(s);
	do {
		if (have <= 0)
			return 0;
		take = have < (long)sc->nr_to_scan ? have : (long)sc->nr_to_scan;
	} while (!ksync_atomic_long_try_cmpxchg(&t->objects, &have, have - take));
	return (unsigned long)take;
}

static struct ksync_shrinker *new_shrinker(void)
{
	/*
	 * A ring of records: one is reused a million registrations later, and
	 * only once its shrinker was freed (a record still live is skipped).
	 */
	struct tracked *t;
	int i;
	for (;;) {
		i = (int)((unsigned)ksync_atomic_fetch_add(1, &pool_next) % MAX_TRACKED);
		t = &pool[i];
		if (ksync_atomic_read_acquire(&t->state) != 1)
			break;
	}
	struct ksync_shrinker *s = ksync_shrinker_alloc(reg, KSYNC_SHRINKER_MEMCG_AWARE, "t%d", i);
	KASSERT(s != NULL);
	KASSERT(s->id >= 0 && s->id < MAX_IDS);
	/* No live shrinker holds this id. */
	void *expect = NULL;
	if (!ksync_ptr_try_cmpxchg(&id_owner[s->id], &expect, t))
		ksync_atomic_inc(&violations);
	t->id = s->id;
	ksync_atomic_long_set(&t->objects, 1000);
	ksync_atomic_set(&t->state, 1);
	s->count_objects = t_count;
	s->scan_objects = t_scan;
	s->private_data = t;
	KASSERT(ksync_shrinker_register(s) == 0);
	return s;
}

static void free_shrinker(struct ksync_shrinker *s)
{
	struct tracked *t = s->private_data;

	/* Give the id up first: once free returns, another thread may get it. */
	void *expect = t;
	if (!ksync_ptr_try_cmpxchg(&id_owner[t->id], &expect, NULL))
		ksync_atomic_inc(&violations);
	KASSERT(ksync_shrinker_free(s) == 0);
	/* Release: a callback that reads this state after free returned is a violation. */
	ksync_atomic_set_release(&t->state, 2);
}

#define LIVE 48
static void *registrar(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	struct ksync_shrinker *live[LIVE] = { 0 };
	int lowest_reuse = 0;

	while (!ksync_atomic_read_acquire(&stop)) {
		int k = (int)(kt_xorshift32(&seed) % LIVE);
		if (live[k]) {
			int id = live[k]->id;
			free_shrinker(live[k]);
			live[k] = new_shrinker();
			if (live[k] && live[k]->id <= id)
				lowest_reuse++;
		} else {
			live[k] = new_shrinker();
		}
		if (live[k] && kt_xorshift32(&seed) % 4 == 0) {
			struct ksync_memgroup *g = groups[kt_xorshift32(&seed) % NGROUPS];
			long n = 1 + (long)(kt_xorshift32(&seed) % 7);
			if (ksync_shrinker_add_deferred(live[k], g, 0, n) == 0)
				ksync_atomic_long_add(n, &added_to_groups);
			ksync_set_shrinker_bit(g, 0, live[k]->id);
		}
	}
	for (int k = 0; k < LIVE; k++)
		if (live[k])
			free_shrinker(live[k]);
	if (lowest_reuse)
		ksync_atomic_inc(&reused_ids);
	return NULL;
}

/* Pushes nr_max up in rounds: a burst of more shrinkers than ever before. */
static void *grower(void *arg)
{
	(void)arg;
	for (int round = 1; round < 40 && !ksync_atomic_read_acquire(&stop); round++) {
		int n = 64 * round;
		struct ksync_shrinker **burst = calloc((size_t)n, sizeof(*burst));
		int got = 0;
		for (; got < n && !ksync_atomic_read_acquire(&stop); got++) {
			burst[got] = new_shrinker();
			if (!burst[got])
				break;
		}
		for (int i = 0; i < got; i++)
			if (burst[i])
				free_shrinker(burst[i]);
		free(burst);
		if (ksync_shrinker_nr_max(reg) > MAX_IDS - 64 * (round + 2))
			break;
	}
	return NULL;
}

static void *walker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 40503u + 7;
	unsigned long n = 0;

	while (!ksync_atomic_read_acquire(&stop)) {
		ksync_shrink_slab(reg, 0, groups[kt_xorshift32(&seed) % NGROUPS],
				  (int)(kt_xorshift32(&seed) % 13));
		if (++n % 8 == 0)
			ksync_shrink_slab(reg, 0, NULL, (int)(kt_xorshift32(&seed) % 13));
	}
	return NULL;
}

static void *bit_setter(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg + 99;

	while (!ksync_atomic_read_acquire(&stop)) {
		int nr = ksync_shrinker_nr_max(reg);
		ksync_set_shrinker_bit(groups[kt_xorshift32(&seed) % NGROUPS], 0,
				       (int)(kt_xorshift32(&seed) % (unsigned)nr));
	}
	return NULL;
}

/* Child groups come and go with deferred work in them; it must reach the parent. */
static void *group_churner(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg + 5;
	struct ksync_shrinker *perm[4];

	for (int i = 0; i < 4; i++)
		perm[i] = new_shrinker();
	while (!ksync_atomic_read_acquire(&stop)) {
		struct ksync_memgroup *parent =
			kt_xorshift32(&seed) % 4 ? groups[kt_xorshift32(&seed) % NGROUPS] : NULL;
		struct ksync_memgroup *c = ksync_shrinker_group_create(reg, parent);
		KASSERT(c != NULL);
		for (int i = 0; i < 4; i++) {
			if (!perm[i])
				continue;
			long n = 1 + (long)(kt_xorshift32(&seed) % 5);
			KASSERT(ksync_shrinker_add_deferred(perm[i], c, 0, n) == 0);
			ksync_atomic_long_add(n, &added_to_groups);
			ksync_set_shrinker_bit(c, 0, perm[i]->id);
		}
		ksync_shrink_slab(reg, 0, c, 0);
		KASSERT(ksync_shrinker_group_destroy(c) == 0);
	}
	for (int i = 0; i < 4; i++)
		if (perm[i])
			free_shrinker(perm[i]);
	return NULL;
}

/* A shrinker whose name (a simple format: kept, formatted on first read) both debug readers read at once. */
static struct ksync_shrinker *named;

static void *debug_reader(void *arg)
{
	(void)arg;
	FILE *devnull = fopen("/dev/null", "w");
	struct ksync_shrinker *mine = new_shrinker();

	while (!ksync_atomic_read_acquire(&stop) && mine) {
		KASSERT(strcmp(ksync_shrinker_name(named), "named-7") == 0);
		for (int g = 0; g < NGROUPS; g++)
			KASSERT(ksync_shrinker_debug_count(mine, groups[g], 0) >= 0);
		KASSERT(ksync_shrinker_debug_count(mine, NULL, 0) >= 0);
		KASSERT(ksync_shrinker_debug_scan(mine, NULL, 0, 3) >= 0);
		KASSERT(ksync_shrinker_debug_show(mine, devnull) >= 0);
		sched_yield();
	}
	if (mine)
		free_shrinker(mine);
	fclose(devnull);
	return NULL;
}

KTEST(torture)
{
	double secs = ktest_seconds(1.5);
	pthread_t th[16];
	int n = 0;

	pool = calloc(MAX_TRACKED, sizeof(*pool));
	KASSERT(pool != NULL);
	reg = ksync_shrinker_registry_create(1);
	KASSERT(reg != NULL);
	groups[0] = ksync_shrinker_group_create(reg, NULL);
	for (int g = 1; g < NGROUPS; g++)
		groups[g] = ksync_shrinker_group_create(reg, groups[(g - 1) / 2]);

	pthread_create(&th[n++], NULL, registrar, (void *)1);
	pthread_create(&th[n++], NULL, registrar, (void *)2);
	pthread_create(&th[n++], NULL, grower, NULL);
	pthread_create(&th[n++], NULL, walker, (void *)1);
	pthread_create(&th[n++], NULL, walker, (void *)2);
	pthread_create(&th[n++], NULL, bit_setter, (void *)1);
	pthread_create(&th[n++], NULL, group_churner, (void *)1);
	named = ksync_shrinker_alloc(reg, 0, "named-%d", 7);
	KASSERT(named != NULL);
	pthread_create(&th[n++], NULL, debug_reader, NULL);
	pthread_create(&th[n++], NULL, debug_reader, NULL);

	double t0 = ktest_now();
	while (ktest_now() - t0 < secs)
		usleep(10000);
	ksync_atomic_set_release(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	KCHECK_EQ(ksync_shrinker_free(named), 0);

	KCHECK_EQ(ksync_atomic_read(&violations), 0);
	KCHECK(ksync_atomic_long_read(&callbacks) > 0);
	KCHECK(ksync_atomic_read(&reused_ids) > 0);
	KCHECK(ksync_shrinker_nr_max(reg) > 64); /* the maps grew */
	for (int i = 0; i < MAX_IDS; i++)
		KCHECK(id_owner[i] == NULL);

	/* Conservation: every unit added is in a group or orphaned. */
	struct ksync_shrinker_deferred_total t;
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_groups + t.orphaned, ksync_atomic_long_read(&added_to_groups));
	for (int g = NGROUPS - 1; g >= 0; g--)
		KCHECK_EQ(ksync_shrinker_group_destroy(groups[g]), 0);
	ksync_shrinker_deferred_total(reg, &t);
	KCHECK_EQ(t.in_groups, 0);
	KCHECK_EQ(t.orphaned, ksync_atomic_long_read(&added_to_groups));
	printf("  %u shrinkers, %ld callbacks, nr_max %d, %ld deferred units conserved\n",
	       (unsigned)ksync_atomic_read(&pool_next), ksync_atomic_long_read(&callbacks),
	       ksync_shrinker_nr_max(reg), ksync_atomic_long_read(&added_to_groups));
	KCHECK_EQ(ksync_shrinker_registry_destroy(reg), 0);
	free(pool);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
