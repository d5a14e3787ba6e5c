/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * walk_and_grow.c - an RCU list, a sized map and a generation counter working
 * together: the skeleton of the kernel's lockless shrinker.
 *
 *  - Handlers (think: shrinkers) live on an RCU list, each with an id.
 *  - A sized map, published in an RCU slot, has a bit per handler id meaning
 *    "this handler has work", and a companion counter per bit: how much.
 *    Producers set bits through whatever map generation they fetched under
 *    SRCU; when a new handler's id does not fit, the registrar grows the map
 *    (ksync_sized_map_grow()), concurrently with producers and the walker.
 *  - The walker (think: shrink_slab) walks the set bits inside an SRCU read
 *    section, hands the work to the handler with that id, and YIELDS when a
 *    writer waits: through the generation counter that unregistering bumps,
 *    or (second half of the run) through ksync_srcu_gp_pending(). It then
 *    resumes where it was in a fresh read section ("unlock, i++, goto again").
 *  - Unregistering a handler: list_del_rcu, bump the generation, wait for a
 *    grace period, free it. Work queued for an id that has no handler any
 *    more is counted as dropped.
 *
 * At the end every unit of work is accounted for: produced == handled +
 * dropped + still pending in the map. The program exits non-zero otherwise.
 *
 *   walk_and_grow [seconds]     (default 1)
 */
#include <ksync/bitmap.h>
#include <ksync/sized_map.h>
#include <ksync/generation.h>
#include <ksync/rculist.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct handler {
	unsigned int id;
	ksync_atomic_long_t handled;
	struct ksync_list_head link;
};

static struct ksync_srcu_struct ss;
static KSYNC_LIST_HEAD(handlers);                    /* RCU list, writers hold reg_lock */
static struct ksync_sized_map *KSYNC_RCU work_map;   /* bit: has work; data: how much */
static struct ksync_generation unreg_gen = KSYNC_GENERATION_INIT;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static ksync_atomic_long_t produced, handled_total, dropped, yields_gen, yields_gp;
static int stop, use_gp_pending;
static unsigned int next_id;

/* xorshift32: a small per-thread random source. */
static unsigned int rnd(unsigned int *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Producer: queue work for a random id the current map can hold. */
static void *producer(void *arg)
{
	unsigned int seed = (unsigned int)(unsigned long)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(&ss);
		struct ksync_sized_map *m = ksync_srcu_dereference(work_map, &ss);
		unsigned int id = (unsigned int)rnd(&seed) % ksync_sized_map_nr_max(m);

		ksync_atomic_long_inc((ksync_atomic_long_t *)ksync_sized_map_data(m, id));
		/* W1: the count before the bit; pairs with W2 in the walker. */
		ksync_smp_mb__before_atomic();
		ksync_sized_map_set_bit(m, id);
		ksync_atomic_long_inc(&produced);
		ksync_srcu_read_unlock(&ss, idx);
	}
	return NULL;
}

static struct handler *find_handler(unsigned int id)
{
	struct handler *h;

	ksync_list_for_each_entry_srcu(h, &handlers, link, ksync_srcu_read_lock_held(&ss))
		if (h->id == id)
			return h;
	return NULL;
}

/* Should the walk give the writer its grace period now? */
static bool writer_waiting(unsigned long snap)
{
	if (__atomic_load_n(&use_gp_pending, __ATOMIC_RELAXED)) {
		if (ksync_srcu_gp_pending(&ss)) {
			ksync_atomic_long_inc(&yields_gp);
			return true;
		}
	} else if (ksync_generation_changed_since(&unreg_gen, snap)) {
		ksync_atomic_long_inc(&yields_gen);
		return true;
	}
	return false;
}

/* Walker: hand queued work to handlers, yielding to waiting writers. */
static void *walker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		unsigned int bit = 0;
again:;
		unsigned long snap = ksync_generation_snapshot(&unreg_gen);
		int idx = ksync_srcu_read_lock(&ss);
		struct ksync_sized_map *m = ksync_srcu_dereference(work_map, &ss);

		ksync_sized_map_for_each_set_bit_from(bit, m) {
			/* W2: fully ordered; the count read below includes W1's increment. */
			if (!ksync_sized_map_test_and_clear_bit(m, bit))
				continue;
			long n = ksync_atomic_long_xchg((ksync_atomic_long_t *)ksync_sized_map_data(m, bit), 0);
			struct handler *h = find_handler(bit);
			if (h) {
				ksync_atomic_long_add(n, &h->handled);
				ksync_atomic_long_add(n, &handled_total);
			} else {
				ksync_atomic_long_add(n, &dropped);
			}
			if (writer_waiting(snap)) {
				bit++; /* resume after this one, in a fresh section */
				ksync_srcu_read_unlock(&ss, idx);
				goto again;
			}
		}
		ksync_srcu_read_unlock(&ss, idx);
	}
	return NULL;
}

static void register_handler(void)
{
	struct handler *h = calloc(1, sizeof(*h));
	if (!h)
		abort();
	pthread_mutex_lock(&reg_lock);
	h->id = next_id++;
	struct ksync_sized_map *m = ksync_rcu_dereference_raw(work_map); /* reg_lock held */
	if (h->id >= ksync_sized_map_nr_max(m) &&
	    ksync_sized_map_grow(&work_map, h->id + 16, &ss) != 0)
		abort();
	ksync_list_add_tail_rcu(&h->link, &handlers);
	pthread_mutex_unlock(&reg_lock);
}

static void unregister_one(unsigned int pick)
{
	struct handler *h, *victim = NULL;

	pthread_mutex_lock(&reg_lock);
	ksync_list_for_each_entry(h, &handlers, link)
		if (pick-- == 0) {
			victim = h;
			break;
		}
	if (victim)
		ksync_list_del_rcu(&victim->link);
	pthread_mutex_unlock(&reg_lock);
	if (!victim)
		return;
	ksync_generation_bump(&unreg_gen); /* tell long walks to yield ... */
	ksync_synchronize_srcu(&ss);       /* ... so that this returns soon */
	free(victim);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	pthread_t prod[2], walk;
	unsigned int seed = 42;

	if (ksync_init_srcu_struct(&ss) != 0)
		return 1;
	KSYNC_RCU_INIT_POINTER(work_map, ksync_sized_map_alloc(16, sizeof(ksync_atomic_long_t)));
	if (!ksync_rcu_access_pointer(work_map))
		return 1;
	for (int i = 0; i < 8; i++)
		register_handler();

	for (unsigned long i = 0; i < 2; i++)
		pthread_create(&prod[i], NULL, producer, (void *)(i + 1));
	pthread_create(&walk, NULL, walker, NULL);

	double t0 = now();
	while (now() - t0 < seconds) {
		if (now() - t0 > seconds / 2)
			__atomic_store_n(&use_gp_pending, 1, __ATOMIC_RELAXED);
		register_handler();
		if (rnd(&seed) % 3)
			unregister_one((unsigned int)rnd(&seed) % 16);
		struct timespec pause = { 0, 200000 };
		nanosleep(&pause, NULL);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(prod[i], NULL);
	pthread_join(walk, NULL);

	/* Account for every unit of work. */
	struct ksync_sized_map *m = ksync_rcu_dereference_raw(work_map);
	long pending = 0;
	for (unsigned int id = 0; id < ksync_sized_map_nr_max(m); id++)
		pending += ksync_atomic_long_read((ksync_atomic_long_t *)ksync_sized_map_data(m, id));
	long p = ksync_atomic_long_read(&produced), h = ksync_atomic_long_read(&handled_total);
	long d = ksync_atomic_long_read(&dropped);

	printf("handlers registered %u, map grew to %u bits\n", next_id, ksync_sized_map_nr_max(m));
	printf("work: produced %ld = handled %ld + dropped %ld + pending %ld\n", p, h, d, pending);
	printf("walker yields: %ld on a generation change, %ld on srcu_gp_pending\n",
	       ksync_atomic_long_read(&yields_gen), ksync_atomic_long_read(&yields_gp));

	struct handler *hd, *tmp;
	ksync_list_for_each_entry_safe(hd, tmp, &handlers, link)
		free(hd);
	ksync_srcu_barrier(&ss); /* superseded map headers are freed */
	ksync_sized_map_free_all(m);
	ksync_cleanup_srcu_struct(&ss);
	if (p != h + d + pending) {
		fprintf(stderr, "walk_and_grow: work was lost\n");
		return 1;
	}
	return 0;
}
