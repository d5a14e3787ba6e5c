// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/magazine.c - threads: their magazines (the fast path), remote
 * drains, thread exit.
 *
 * Each thread that used a cache has a struct ksync__oc_thread (allocated on
 * first use, linked on the threads' list, freed by the pthread key's
 * destructor at exit): its charge stock (stock.c) and a two-level table of
 * magazine pointers indexed by cache index (slab.c). A slot holds the
 * thread's magazine for that cache, or NULL.
 *
 * The owner takes its magazine out of the slot with an exchange, pops or
 * pushes, and stores it back; a drainer (shrinker, shrink, deactivation,
 * destroy) exchanges the slot with NULL and, if it got a magazine, flushes
 * it to the depot and frees it. Whoever's exchange returns the magazine owns
 * it: a drainer never touches a magazine in use, and an idle thread's
 * magazine is drained without its help. Both exchanges touch only the
 * owner's cache line; the owner's cost is two atomic operations on a line
 * no one else writes in the common case.
 *
 * Barrier pairs:
 *  M1  the owner's store back (release for a root, seq_cst for a child: M2)
 *      pairs with the exchange that next takes the magazine, the owner's own
 *      (acq_rel) or a drainer's (seq_cst): whoever takes it sees its count
 *      and objects as the last holder left them.
 *  M2  the owner's store back is seq_cst and is followed by a seq_cst load
 *      of the cache's dead flag; the deactivation's seq_cst CAS of dead
 *      (group.c) is followed by its seq_cst exchanges of the slots here.
 *      Dekker: either the drain finds the magazine, or the owner sees dead
 *      and flushes it itself, so no magazine survives on a dead child.
 *  M3  a chunk of the table is published with a release store, read by
 *      drainers with an acquire load (its zeroed slots are visible).
 *
 * Lifetimes: drainers and thread exit run under the threads' mutex, which
 * destroy and deactivation also hold while draining, so the cache an index
 * names is alive while a magazine for it is being flushed. A child's index
 * is reused only a grace period after its end (slab.c).
 */
#include "internal.h"

#include <stdlib.h>

struct ksync__oc_thread {
	struct ksync_list_head link;      /* on threads, under threads_mutex */
	struct ksync__oc_stock stock;     /* owner only */
	uint32_t id;                      /* never 0: the slabs it refills from (slab.c) */
	struct ksync__oc_mag **chunk[KSYNC__OC_CHUNKS]; /* M3; slots: atomic */
};

static pthread_mutex_t threads_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct ksync_list_head threads = { &threads, &threads };
static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static __thread struct ksync__oc_thread *self;
static uint32_t thread_ids; /* under threads_mutex */

static void thread_exit(void *arg);

static void key_init(void)
{
	(void)pthread_key_create(&thread_key, thread_exit);
}

static inline struct ksync__oc_thread *get_self(void)
{
	struct ksync__oc_thread *t = self;

	if (ksync_likely(t != NULL))
		return t;
	pthread_once(&thread_once, key_init);
	t = KSYNC__ALLOC(calloc(1, sizeof(*t)));
	if (!t)
		return NULL;
	if (pthread_setspecific(thread_key, t)) {
		free(t);
		return NULL;
	}
	ksync__mutex_lock(&threads_mutex);
	ksync_list_add(&t->link, &threads);
	t->id = ++thread_ids ? thread_ids : ++thread_ids; /* wraps past 0 after 2^32 threads */
	pthread_mutex_unlock(&threads_mutex);
	self = t;
	return t;
}

struct ksync__oc_stock *ksync__oc_thread_stock(void)
{
	struct ksync__oc_thread *t = get_self();

	return t ? &t->stock : NULL;
}

static inline struct ksync__oc_mag **slot_of(struct ksync__oc_thread *t, int idx, bool create)
{
	struct ksync__oc_mag ***cp = &t->chunk[idx / KSYNC__OC_CHUNK];
	struct ksync__oc_mag **ch = __atomic_load_n(cp, __ATOMIC_ACQUIRE); /* M3 */

	if (!ch) {
		if (!create)
			return NULL;
		ch = KSYNC__ALLOC(calloc(KSYNC__OC_CHUNK, sizeof(*ch)));
		if (!ch)
			return NULL;
		__atomic_store_n(cp, ch, __ATOMIC_RELEASE); /* M3 */
	}
	return &ch[idx % KSYNC__OC_CHUNK];
}

/* Flush a magazine that the caller owns (took out of a slot) and free it. */
static bool flush_mag(struct ksync_objcache *c, struct ksync__oc_mag *m, unsigned long *n)
{
	bool end = m->n ? ksync__oc_put(c, m->obj, m->n) : false;

	if (n)
		*n += m->n;
	free(m);
	return end;
}

/* M2: store the magazine back; a dead child's is flushed by its owner. */
static void publish(struct ksync_objcache *c, struct ksync__oc_mag **slot, struct ksync__oc_mag *m)
{
	if (c->root == c) {
		/* A root never dies under its users: M1's release is enough. */
		__atomic_store_n(slot, m, __ATOMIC_RELEASE); /* M1 */
		return;
	}
	__atomic_store_n(slot, m, __ATOMIC_SEQ_CST); /* M1, M2 */
	if (__atomic_load_n(&c->dead, __ATOMIC_SEQ_CST)) { /* M2 */
		m = __atomic_exchange_n(slot, NULL, __ATOMIC_SEQ_CST);
		if (m && flush_mag(c, m, NULL))
			ksync__oc_child_end(c);
	}
}

static struct ksync__oc_mag *new_mag(struct ksync_objcache *c)
{
	struct ksync__oc_mag *m = KSYNC__ALLOC(malloc(sizeof(*m) + c->mag_size * sizeof(void *)));

	if (m) {
		m->n = 0;
		m->cap = c->mag_size;
	}
	return m;
}

void *ksync__oc_mag_alloc(struct ksync_objcache *c)
{
	struct ksync__oc_thread *t = c->mag_size > 1 ? get_self() : NULL;
	struct ksync__oc_mag **slot = t ? slot_of(t, c->idx, true) : NULL;
	struct ksync__oc_mag *m;
	void *obj = NULL;

	if (!slot)
		goto direct;
	m = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL); /* M1 */
	if (ksync_likely(m && m->n)) {
		obj = m->obj[--m->n];
		publish(c, slot, m);
		return obj;
	}
	if (!m && !(m = new_mag(c)))
		goto direct;
	m->n = ksync__oc_take(c, m->obj, (m->cap + 1) / 2, t->id);
	if (m->n)
		obj = m->obj[--m->n];
	publish(c, slot, m);
	return obj;
direct:
	return ksync__oc_take(c, &obj, 1, 0) ? obj : NULL;
}

void ksync__oc_mag_free(struct ksync_objcache *c, void *obj)
{
	struct ksync__oc_thread *t = c->mag_size > 1 ? get_self() : NULL;
	struct ksync__oc_mag **slot = t ? slot_of(t, c->idx, true) : NULL;
	struct ksync__oc_mag *m;
	bool end = false;

	if (!slot)
		goto direct;
	m = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL); /* M1 */
	if (ksync_unlikely(!m) && !(m = new_mag(c)))
		goto direct;
	if (ksync_unlikely(m->n == m->cap)) {
		unsigned half = m->cap / 2;

		end = ksync__oc_put(c, m->obj + m->n - half, half);
		m->n -= half;
	}
	m->obj[m->n++] = obj;
	publish(c, slot, m);
	if (end)
		ksync__oc_child_end(c);
	return;
direct:
	if (ksync__oc_put(c, &obj, 1))
		ksync__oc_child_end(c);
}

unsigned long ksync__oc_drain_cache(struct ksync_objcache *c, bool *end)
{
	struct ksync__oc_thread *t;
	unsigned long n = 0;

	*end = false;
	if (c->idx < 0)
		return 0;
	ksync__mutex_lock(&threads_mutex);
	ksync_list_for_each_entry(t, &threads, link) {
		struct ksync__oc_mag **slot = slot_of(t, c->idx, false);
		struct ksync__oc_mag *m = slot ? __atomic_exchange_n(slot, NULL, __ATOMIC_SEQ_CST) : NULL; /* M2 */

		if (m && flush_mag(c, m, &n))
			*end = true;
	}
	pthread_mutex_unlock(&threads_mutex);
	return n;
}

/* Flush every magazine of @t; under threads_mutex. Dead children have none
 * (drained at deactivation, M2), so no flush here ends one; if one did, the
 * end waits for the mutex to be dropped. */
static void flush_thread(struct ksync__oc_thread *t, bool free_chunks, struct ksync_list_head *ends)
{
	for (int ci = 0; ci < KSYNC__OC_CHUNKS; ci++) {
		struct ksync__oc_mag **ch = __atomic_load_n(&t->chunk[ci], __ATOMIC_ACQUIRE);

		if (!ch)
			continue;
		for (int k = 0; k < KSYNC__OC_CHUNK; k++) {
			struct ksync__oc_mag *m = __atomic_exchange_n(&ch[k], NULL, __ATOMIC_SEQ_CST);
			struct ksync_objcache *c;

			if (!m)
				continue;
			c = ksync__oc_idx_cache(ci * KSYNC__OC_CHUNK + k);
			if (c && free_chunks)
				ksync__oc_unclaim(c, t->id); /* the thread is leaving */
			if (c && flush_mag(c, m, NULL))
				ksync_list_add(&c->endlink, ends);
			else if (!c)
				free(m);
		}
		if (free_chunks) {
			__atomic_store_n(&t->chunk[ci], NULL, __ATOMIC_RELAXED);
			free(ch);
		}
	}
}

static void run_ends(struct ksync_list_head *ends)
{
	while (!ksync_list_empty(ends)) {
		struct ksync_objcache *c = ksync_list_first_entry(ends, struct ksync_objcache, endlink);

		ksync_list_del(&c->endlink);
		ksync__oc_child_end(c);
	}
}

void ksync__oc_drain_thread(void)
{
	struct ksync__oc_thread *t = self;
	struct ksync_list_head ends;

	if (!t)
		return;
	ksync_init_list_head(&ends);
	ksync__mutex_lock(&threads_mutex);
	flush_thread(t, false, &ends);
	pthread_mutex_unlock(&threads_mutex);
	run_ends(&ends);
	ksync__oc_stock_drain(&t->stock);
}

static void thread_exit(void *arg)
{
	struct ksync__oc_thread *t = arg;
	struct ksync_list_head ends;

	ksync_init_list_head(&ends);
	ksync__mutex_lock(&threads_mutex);
	flush_thread(t, true, &ends);
	ksync_list_del(&t->link);
	pthread_mutex_unlock(&threads_mutex);
	run_ends(&ends);
	ksync__oc_stock_drain(&t->stock);
	self = NULL;
	free(t);
}
