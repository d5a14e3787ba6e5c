/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/objcache_mt_fuzz.c - object caches (<ksync/objcache.h>), concurrent:
 * 2-4 threads run scripts of allocations (unaccounted, charged to their own
 * groups, charged to a group of theirs held past its offline, charged to
 * another thread's group found published and held by a reference, racing
 * its owner's offline), frees of
 * their own objects and of other threads' objects (handed over through a
 * shared slot per thread), group create/offline (with and without an extra
 * reference held), shrinker walks of the cache's registry, shrinks and
 * drains, under the baton scheduler (fuzz/sched.h).
 *
 * Input: byte 0 picks the threads (2-4), the policy (bytes, PCT or free
 * running) and PCT's depth, as in the other concurrent targets; byte 1 is
 * read by ksched_setup_input() as the allocation to fail, but no failure is
 * injected here (not done yet: an out-of-memory child cache changes where an
 * object is accounted); byte 2 the configuration: the design (bits 0-1: A,
 * A with reparent, B with a 1-slot stock, B with a 5-slot stock), the
 * magazine size (bits 2-3: 1, 2, 8, 32 objects) and the object size (bits
 * 4-5: 16, 40, 64, 200 bytes); then per thread a length and that many
 * (op, arg) pairs; the rest is the schedule. KSYNC_FUZZ_TRACE=1 prints the
 * operations and every hand-off.
 *
 * Ownership: a thread owns the groups it creates (children only under its
 * own groups, so its own allocations' accounting is decided by its own
 * operations alone) and the objects it allocated or took from another
 * thread's slot. Objects charged to another thread's group reach this thread
 * through the slots, so their frees race that group's offline (free during
 * offline, deactivation, reparenting); and op 14 allocates for another
 * thread's group (published until its owner offlines it, held by a
 * reference taken inside a read section of the set's domain), racing the
 * offline: where that object lands is not predicted, only checked to be on
 * the group's chain or the root, and the model takes the library's answer
 * (read again if an offline of the model moved objects meanwhile).
 *
 * The model: for every live object, the group it is accounted to (NULL: the
 * root), moved at each offline as the design says:
 *  - A: an allocation for an online group G is G's (its child cache); for a
 *    group that is not online, the root cache's; at G's offline G's objects
 *    stay G's (G stays DEAD, pinned) or, with reparent, go to G's parent
 *    (the root for a top-level group);
 *  - B: an allocation for G is charged to the nearest online group of G's
 *    chain (its handle's); at G's offline its objects go to its parent.
 * Checked:
 *  - every allocation returns an object no live object has (no object handed
 *    out twice), pointer-aligned; its whole memory holds the
 *    pattern written at allocation until it is freed (checked at every
 *    hand-over and at the free);
 *  - after each operation, under the baton, the group each of the thread's
 *    objects is accounted to (ksync_objcache_obj_group()) is the model's,
 *    for objects whose group's chain is the thread's own;
 *  - B: after each allocation charged to one of the thread's groups that
 *    missed its stock (the group's handle not in it, or the group not
 *    online), every handle in the stock is the handle of one of its online
 *    groups: the miss swept out every dying group's handle (moved to the
 *    parent at the offline); never more handles than the configured slots;
 *  - after the threads (each drained its magazines and stock): the live
 *    objects each group and the root are accounted now
 *    (ksync_objcache_group_objects()) equal the model's, for every group
 *    still in memory (online, held, or, design A without reparent, pinned
 *    by a dead child with objects: ksync_objcache_group_pinned() exactly
 *    then); the cache's active objects equal the live objects; design B: the
 *    set's KSYNC_MEMGROUP_STAT_OBJECTS total equals the live objects charged
 *    to a handle (a dying group's charges move to its parent; an object of
 *    op 14 accounted to the root may or may not have been charged: the
 *    total is checked to lie in that range);
 *  - after every object is freed (by the main thread, from wherever it is)
 *    and every reference dropped: no dead child left (each destroyed itself
 *    at its last free), the groups not freed are exactly the online ones,
 *    B's statistics back to 0; then every group offline, the cache's destroy
 *    returns 0 and the set has no group left; ASan/LSan: no leak, no use
 *    after free.
 * Any misuse report fails the input (fuzz/reports.h): every call is legal.
 */
#include <ksync/fuzzing.h>
#include <ksync/memgroup.h>
#include <ksync/objcache.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "reports.h"
#include "sched.h"

#define NT KSCHED_MAX_THREADS
#define NNODES 1
#define NG 3	  /* live groups per thread */
#define NO 6	  /* objects a thread holds */
#define MAXOPS 16 /* operations per thread */
#define NOPS 15
#define NH 2	  /* references a thread holds on its offline groups */
#define NOBJ (NT * MAXOPS * 2)

enum design { D_A, D_A_REPARENT, D_B1, D_B5 };

/* A group a thread created: never reused within an input. */
struct grec {
	struct ksync_memgroup *g;
	struct grec *parent; /* NULL: top level */
	int online;	     /* atomic: written by the owner */
	int owner;
	unsigned long seq; /* creation order among all threads' groups */
};

/* An object, from its allocation to its free. */
struct orec {
	void *p;
	struct grec *acct; /* atomic: the group it is accounted to (NULL: the root) */
	int owner;	   /* atomic: the thread that may free it (-1: in a slot) */
	int live;	   /* atomic */
	int charged;	   /* B: charged to a handle at its allocation (counted in the statistics); 2: maybe */
	uint8_t seed;
};

struct thread_state {
	struct grec rec[MAXOPS];
	int nrec;		  /* atomic for other threads: records filled before it counts them */
	struct grec *slot[NG];	  /* the owner's online groups */
	struct grec *pub[NG];	  /* atomic: the same, for other threads (unpublished before the offline) */
	struct grec *held[NH];	  /* offline groups held by a reference */
	struct orec *obj[NO];	  /* objects this thread holds */
	struct orec *handoff;	  /* atomic: an object given to whoever takes it */
	uint8_t op[MAXOPS], arg[MAXOPS];
	int nops;
};

static struct {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_objcache *cache;
	enum design design;
	size_t size;
	unsigned magazine;
	struct thread_state t[NT];
	int n;
	struct orec pool[NOBJ];
	int npool; /* atomic */
	unsigned long offlines; /* atomic: model_offline() calls done (their moves made) */
	unsigned long created;	/* atomic: groups created */
	enum ksched_policy policy;
	pthread_mutex_t live_mu; /* the model's set of live pointers */
} M = { .live_mu = PTHREAD_MUTEX_INITIALIZER };

static bool trace;

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static struct grec *ld_acct(struct orec *o)
{
	return __atomic_load_n(&o->acct, __ATOMIC_ACQUIRE);
}

static bool design_a(void)
{
	return M.design == D_A || M.design == D_A_REPARENT;
}

static bool exact(void)
{
	return M.policy != KSCHED_FREE;
}

static struct ksync_srcu_struct *set_srcu(void)
{
	return ksync_memgroup_set_srcu(M.set);
}

static struct grec *nearest_online(struct grec *r)
{
	while (r && !ld(&r->online))
		r = r->parent;
	return r;
}

/* ------------------------------------------------------------------------ */
/* Objects: the pattern, the set of live pointers                           */

static uint8_t pattern_byte(const struct orec *o, size_t i)
{
	return (uint8_t)(o->seed + i * 7);
}

static void fill(struct orec *o)
{
	uint8_t *b = o->p;

	for (size_t i = 0; i < M.size; i++)
		b[i] = pattern_byte(o, i);
}

static void check_intact(const struct orec *o)
{
	const uint8_t *b = o->p;

	for (size_t i = 0; i < M.size; i++)
		if (b[i] != pattern_byte(o, i)) {
			fprintf(stderr, "object %p byte %zu: %u, written %u\n", o->p, i, b[i], pattern_byte(o, i));
			CHECK(!"an object's memory changed while it was live");
		}
}

/* A new object @p: no live object has it (handed out twice otherwise). */
static struct orec *obj_new(int tid, void *p, struct grec *acct, int charged)
{
	int i = __atomic_fetch_add(&M.npool, 1, __ATOMIC_ACQ_REL);
	struct orec *o;

	CHECK(i < NOBJ);
	o = &M.pool[i];
	CHECK(((uintptr_t)p & (sizeof(void *) - 1)) == 0);
	pthread_mutex_lock(&M.live_mu);
	for (int k = 0; k < i; k++)
		if (ld(&M.pool[k].live) && M.pool[k].p == p) {
			fprintf(stderr, "object %p handed out twice\n", p);
			CHECK(!"an object handed out twice");
		}
	o->p = p;
	__atomic_store_n(&o->acct, acct, __ATOMIC_RELEASE); /* model_offline() of another thread may scan it */
	o->owner = tid;
	o->charged = charged;
	o->seed = (uint8_t)(i * 37 + tid);
	st(&o->live, 1);
	pthread_mutex_unlock(&M.live_mu);
	fill(o);
	return o;
}

/* Free @o: out of the live set before the free, so a concurrent alloc may reuse it. */
static void obj_free(struct orec *o)
{
	check_intact(o);
	pthread_mutex_lock(&M.live_mu);
	st(&o->live, 0);
	pthread_mutex_unlock(&M.live_mu);
	ksync_objcache_free(M.cache, o->p);
}

static int free_obj_slot(struct thread_state *T)
{
	for (int i = 0; i < NO; i++)
		if (!T->obj[i])
			return i;
	return -1;
}

/* ------------------------------------------------------------------------ */
/* The model's accounting                                                   */

/* Where an allocation for @r (NULL: unaccounted) is accounted. */
static struct grec *alloc_target(struct grec *r)
{
	if (!r)
		return NULL;
	if (design_a())
		return ld(&r->online) ? r : NULL;
	return nearest_online(r);
}

/*
 * @r went offline (its owner, after the offline returned): its objects move
 * as the design says. Objects of @r freed meanwhile by other threads only
 * leave the live set; none is allocated for @r by another thread.
 */
static void model_offline(struct grec *r)
{
	struct grec *to;
	int n = ld(&M.npool);

	if (M.design != D_A) { /* A: the dead child stays @r's, @r pinned while it holds objects */
		to = r->parent; /* online: a group with an online child cannot go offline */
		for (int k = 0; k < n; k++)
			if (ld_acct(&M.pool[k]) == r)
				__atomic_store_n(&M.pool[k].acct, to, __ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(&M.offlines, 1, __ATOMIC_SEQ_CST);
}

/* The record of group @g (NULL: the root). */
static struct grec *rec_of(struct ksync_memgroup *g)
{
	if (!g)
		return NULL;
	struct grec *best = NULL;

	/* The latest one: a freed group's address may have been reused since. */
	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < ld(&M.t[t].nrec); i++)
			if (M.t[t].rec[i].g == g && (!best || M.t[t].rec[i].seq > best->seq))
				best = &M.t[t].rec[i];
	CHECK(best); /* an object accounted to a group no thread created otherwise */
	return best;
}

static bool rec_on_chain(const struct grec *a, const struct grec *r)
{
	for (; r; r = r->parent)
		if (r == a)
			return true;
	return a == NULL;
}

/* Is @r's chain (and so the accounting of its objects) decided by @tid alone? */
static bool own_chain(int tid, struct grec *r)
{
	return !r || r->owner == tid;
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */

/* Returns whether it allocated (not when the thread holds NO objects already). */
static bool do_alloc(int tid, struct grec *r)
{
	struct thread_state *T = &M.t[tid];
	int s = free_obj_slot(T);
	struct grec *want;
	void *p;

	if (s < 0)
		return false;
	want = alloc_target(r);
	p = r ? ksync_objcache_alloc_group(M.cache, r->g) : ksync_objcache_alloc(M.cache);
	CHECK(p);
	T->obj[s] = obj_new(tid, p, want, !design_a() && want != NULL);
	if (trace)
		fprintf(stderr, "  t%d alloc %p for %p -> accounted %p\n", tid, p, r ? (void *)r->g : NULL,
			want ? (void *)want->g : NULL);
	return true;
}

static int stock_of(struct ksync_objcg **h)
{
	int n = ksync_objcache_thread_stock(h, KSYNC_OBJCACHE_STOCK_MAX + 1);

	CHECK(n >= 0 && n <= (M.design == D_B1 ? 1 : KSYNC_OBJCACHE_STOCK_MAX));
	return n;
}

/* Is @r online with its handle in the calling thread's stock (a charge to it hits)? */
static bool stock_hit(struct grec *r)
{
	struct ksync_objcg *h[KSYNC_OBJCACHE_STOCK_MAX + 1], *gh;
	int n = stock_of(h);
	bool hit = false;

	if (!ld(&r->online))
		return false;
	gh = ksync_memgroup_get_objcg(r->g);
	for (int i = 0; i < n; i++)
		hit |= h[i] == gh;
	ksync_objcg_put(gh);
	return hit;
}

/*
 * B, after a charge to one of our groups that missed the stock (or found a
 * dying group's slot): the miss swept the stock, so every handle in it is
 * the handle of one of our online groups, never a dying group's (whose
 * handle was moved to its parent), and there are at most the configured
 * slots. After a hit, a dying group's slot may stay until the next miss.
 */
static void check_stock(int tid)
{
	struct ksync_objcg *h[KSYNC_OBJCACHE_STOCK_MAX + 1];
	int n = stock_of(h);

	for (int i = 0; i < n; i++) {
		bool found = false;

		for (int t = 0; t < M.n && !found; t++)
			for (int k = 0; k < ld(&M.t[t].nrec) && !found; k++) {
				struct grec *r = &M.t[t].rec[k];
				struct ksync_objcg *gh;

				if (!ld(&r->online))
					continue;
				gh = ksync_memgroup_get_objcg(r->g);
				found = gh == h[i];
				ksync_objcg_put(gh);
			}
		if (!found)
			fprintf(stderr, "stock slot %d after a miss: handle %p of no online group (thread %d)\n", i,
				(void *)h[i], tid);
		CHECK(found);
	}
}

/* An object charged to @r (ours), and the stock checked (B, under the baton). */
static void alloc_charged(int tid, struct grec *r)
{
	bool check = r && !design_a() && exact(), hit = check && stock_hit(r);

	if (do_alloc(tid, r) && check && !hit)
		check_stock(tid);
}

/*
 * An object charged to another thread's group, found by its published
 * pointer and held by a reference taken inside a read section of the set's
 * domain: the allocation may race the owner's offline (deactivation,
 * reparenting, the handle's move), so where it lands is not predicted, only
 * checked to be on the group's chain (or the root); the model then takes
 * the library's answer. A model_offline() that ran between the answer and
 * its store would have missed it: the answer is read again until no offline
 * of the model happened meanwhile.
 */
static void foreign_alloc(int tid, unsigned int a)
{
	struct thread_state *T = &M.t[tid];
	int o = (tid + 1 + (int)(a % (unsigned int)(M.n - 1))) % M.n, s = free_obj_slot(T), idx;
	struct ksync_srcu_struct *ss = set_srcu();
	struct grec *r, *at;
	struct orec *ob;
	unsigned long gen;
	bool got = false;
	void *p;

	if (s < 0)
		return;
	idx = ksync_srcu_read_lock(ss);
	r = __atomic_load_n(&M.t[o].pub[(a >> 2) % NG], __ATOMIC_ACQUIRE);
	if (r)
		got = ksync_memgroup_tryget(r->g);
	ksync_srcu_read_unlock(ss, idx);
	if (!got)
		return;
	p = ksync_objcache_alloc_group(M.cache, r->g);
	CHECK(p);
	ob = obj_new(tid, p, NULL, 0);
	do {
		gen = __atomic_load_n(&M.offlines, __ATOMIC_SEQ_CST);
		idx = ksync_srcu_read_lock(ss);
		at = rec_of(ksync_objcache_obj_group(M.cache, p));
		ksync_srcu_read_unlock(ss, idx);
		__atomic_store_n(&ob->acct, at, __ATOMIC_SEQ_CST);
	} while (__atomic_load_n(&M.offlines, __ATOMIC_SEQ_CST) != gen);
	if (!rec_on_chain(at, r)) {
		fprintf(stderr, "t%d object %p for %p accounted to %p, off its chain\n", tid, p, (void *)r->g,
			at ? (void *)at->g : NULL);
		CHECK(!"an object accounted off its group's chain");
	}
	/*
	 * B: charged when its handle pointed at a group. Accounted to a group
	 * now: charged. To the root: charged to a top-level group's handle
	 * moved to no group, or not charged (its whole chain offline): maybe.
	 */
	ob->charged = design_a() ? 0 : at ? 1 : 2;
	T->obj[s] = ob;
	ksync_memgroup_put(r->g);
	if (trace)
		fprintf(stderr, "  t%d foreign alloc %p for %p -> accounted %p\n", tid, p, (void *)r->g,
			at ? (void *)at->g : NULL);
}

static void op(int tid, unsigned int o, unsigned int a)
{
	struct thread_state *T = &M.t[tid];

	o %= NOPS;
	if (trace)
		fprintf(stderr, "t%d op %u arg %u\n", tid, o, a);
	switch (o) {
	case 0: /* an unaccounted object */
		do_alloc(tid, NULL);
		break;
	case 1:
	case 2: { /* an object charged to one of our online groups */
		alloc_charged(tid, T->slot[a % NG]);
		break;
	}
	case 3: /* an object charged to a group held past its offline */
		if (T->held[a % NH])
			alloc_charged(tid, T->held[a % NH]);
		break;
	case 4:
	case 5: { /* free one of ours */
		int i = (int)(a % NO);

		if (T->obj[i]) {
			obj_free(T->obj[i]);
			T->obj[i] = NULL;
		}
		break;
	}
	case 6: { /* give one of ours to whoever takes it */
		int i = (int)(a % NO);
		struct orec *ob = T->obj[i];

		if (!ob || __atomic_load_n(&T->handoff, __ATOMIC_ACQUIRE))
			break;
		check_intact(ob);
		st(&ob->owner, -1);
		T->obj[i] = NULL;
		__atomic_store_n(&T->handoff, ob, __ATOMIC_RELEASE);
		break;
	}
	case 7: { /* take another thread's object: keep it, or free it at once */
		int ot = (tid + 1 + (int)(a % (unsigned int)(M.n - 1))) % M.n;
		struct orec *ob = __atomic_exchange_n(&M.t[ot].handoff, NULL, __ATOMIC_ACQ_REL);
		int s = free_obj_slot(T);

		if (!ob)
			break;
		check_intact(ob);
		st(&ob->owner, tid);
		if ((a & 0x80) || s < 0)
			obj_free(ob);
		else
			T->obj[s] = ob;
		break;
	}
	case 8:
	case 9: { /* create a group: top level, or a child of one of ours */
		int s;
		struct grec *parent = (a & 0x10) ? T->slot[(a >> 5) % NG] : NULL;
		struct grec *r;

		for (s = 0; s < NG && T->slot[s]; s++)
			;
		if (s == NG || T->nrec == MAXOPS)
			break;
		r = &T->rec[T->nrec];
		r->g = ksync_memgroup_create(M.set, parent ? parent->g : NULL);
		CHECK(r->g);
		r->parent = parent;
		r->owner = tid;
		r->seq = __atomic_add_fetch(&M.created, 1, __ATOMIC_RELAXED);
		st(&r->online, 1);
		st(&T->nrec, T->nrec + 1); /* the record complete before others look it up */
		T->slot[s] = r;
		__atomic_store_n(&T->pub[s], r, __ATOMIC_RELEASE);
		break;
	}
	case 10: { /* offline one of ours (none of its children online), maybe holding it */
		struct grec *r = T->slot[a % NG];
		int h = (int)((a >> 2) % NH);
		bool hold = (a & 0x40) && !T->held[h];

		if (!r)
			break;
		for (int s = 0; s < NG; s++)
			if (T->slot[s] && T->slot[s]->parent == r)
				return;
		if (hold)
			ksync_memgroup_get(r->g);
		__atomic_store_n(&T->pub[a % NG], NULL, __ATOMIC_RELEASE);
		if (a & 0x80)
			ksched_point(); /* another thread may hold it, found before it was unpublished */
		CHECK(ksync_memgroup_offline(r->g) == 0);
		st(&r->online, 0);
		model_offline(r);
		T->slot[a % NG] = NULL;
		if (hold)
			T->held[h] = r;
		if (a & 0x20)
			(void)ksync_srcu_run_all_callbacks();
		break;
	}
	case 11: { /* drop a reference held on an offline group */
		int h = (int)(a % NH);

		if (T->held[h]) {
			ksync_memgroup_put(T->held[h]->g);
			T->held[h] = NULL;
		}
		if (a & 0x10)
			(void)ksync_srcu_run_all_callbacks();
		break;
	}
	case 12: { /* a shrinker walk of the cache's registry: global, or one of our groups */
		struct grec *r = (a & 0x10) ? T->slot[(a >> 5) % NG] : NULL;

		(void)ksync_shrink_slab(M.reg, 0, r ? r->g : NULL, (int)(a % 13));
		break;
	}
	case 14: /* an object charged to another thread's group: may race its offline */
		foreign_alloc(tid, a);
		break;
	default: /* shrink the cache, or drain this thread's magazines and stock */
		if (a & 1)
			(void)ksync_objcache_shrink(M.cache);
		else
			ksync_objcache_drain_thread();
		break;
	}
}

/* After each operation, under the baton: our objects are where the model says. */
static void after_op(int tid)
{
	struct thread_state *T = &M.t[tid];
	int idx;

	if (!exact())
		return;
	idx = ksync_srcu_read_lock(set_srcu());
	for (int i = 0; i < NO; i++) {
		struct orec *o = T->obj[i];
		struct grec *want;
		struct ksync_memgroup *at;

		if (!o)
			continue;
		want = ld_acct(o);
		if (!own_chain(tid, want))
			continue;
		at = ksync_objcache_obj_group(M.cache, o->p);
		if (at != (want ? want->g : NULL)) {
			fprintf(stderr, "t%d object %p accounted to %p, the model says %p\n", tid, o->p, (void *)at,
				want ? (void *)want->g : NULL);
			CHECK(!"an object accounted to the wrong group");
		}
	}
	ksync_srcu_read_unlock(set_srcu(), idx);
}

static void body(int tid, void *arg)
{
	struct thread_state *T = &M.t[tid];

	(void)arg;
	for (int i = 0; i < T->nops; i++) {
		op(tid, T->op[i], T->arg[i]);
		after_op(tid);
		ksched_point();
	}
	/* The statistics are exact once every thread's stock is flushed. */
	ksync_objcache_drain_thread();
}

static void shrinker_seam(int point, void *arg)
{
	(void)arg;
	ksched_seam("shrinker", point);
}

/* ------------------------------------------------------------------------ */
/* After the threads                                                        */

static long model_objects(struct grec *r)
{
	long n = 0;

	for (int k = 0; k < M.npool; k++)
		n += M.pool[k].live && M.pool[k].acct == r;
	return n;
}

static void check_group(struct grec *r)
{
	long want = model_objects(r);
	unsigned long got = ksync_objcache_group_objects(M.cache, r ? r->g : NULL);

	if ((long)got != want) {
		fprintf(stderr, "group %p (%s): %lu objects accounted, the model says %ld\n", r ? (void *)r->g : NULL,
			r ? (r->online ? "online" : "offline") : "root", got, want);
		CHECK(!"a group's objects differ from the model's");
	}
	if (r && M.design == D_A && !r->online)
		CHECK(ksync_objcache_group_pinned(M.cache, r->g) == (want > 0));
}

static void final_checks(void)
{
	struct ksync_objcache_stats s;
	long live = 0, charged = 0, maybe = 0, total;

	for (int k = 0; k < M.npool; k++) {
		live += M.pool[k].live;
		charged += M.pool[k].live && M.pool[k].charged == 1;
		maybe += M.pool[k].live && M.pool[k].charged == 2;
	}
	CHECK(ksync_objcache_stats(M.cache, &s) == 0);
	CHECK((long)s.active_objects == live);
	check_group(NULL);
	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < M.t[t].nrec; i++) {
			struct grec *r = &M.t[t].rec[i];
			bool held = false;

			for (int h = 0; h < NH; h++)
				held |= M.t[t].held[h] == r;
			/* In memory: online, held, or pinned by a dead child with objects (A). */
			if (r->online || held || (M.design == D_A && model_objects(r) > 0))
				check_group(r);
		}
	/* B: every charge is in the statistics once the stocks are flushed (a dying group's redirected). */
	total = ksync_memgroup_stat_total(M.set, 0, KSYNC_MEMGROUP_STAT_OBJECTS);
	if (!design_a() && (total < charged || total > charged + maybe)) {
		fprintf(stderr, "STAT_OBJECTS total %ld, the model says %ld (+ up to %ld)\n", total, charged, maybe);
		CHECK(!"the statistics differ from the model's");
	}
}

static void teardown(void)
{
	struct ksync_objcache_stats s;
	int online = 0;

	/* Every object freed, on this thread, from wherever it is. */
	for (int k = 0; k < M.npool; k++)
		if (M.pool[k].live)
			obj_free(&M.pool[k]);
	for (int t = 0; t < M.n; t++) {
		for (int h = 0; h < NH; h++)
			if (M.t[t].held[h]) {
				ksync_memgroup_put(M.t[t].held[h]->g);
				M.t[t].held[h] = NULL;
			}
		for (int i = 0; i < M.t[t].nrec; i++)
			online += M.t[t].rec[i].online;
	}
	ksync_objcache_drain_thread();
	(void)ksync_srcu_run_all_callbacks();
	CHECK(ksync_objcache_stats(M.cache, &s) == 0);
	CHECK(s.active_objects == 0);
	CHECK(s.children_dead == 0); /* each dead child destroyed itself at its last free */
	CHECK(ksync_memgroup_nr_groups(M.set) == online); /* nothing pins an offline group */
	if (!design_a()) /* B: every charge went back */
		CHECK(ksync_memgroup_stat_total(M.set, 0, KSYNC_MEMGROUP_STAT_OBJECTS) == 0);
	/* Leaves first: a thread's children were created after their parents. */
	for (int t = 0; t < M.n; t++)
		for (int i = M.t[t].nrec - 1; i >= 0; i--)
			if (M.t[t].rec[i].online) {
				CHECK(ksync_memgroup_offline(M.t[t].rec[i].g) == 0);
				M.t[t].rec[i].online = 0;
			}
	(void)ksync_srcu_run_all_callbacks();
	CHECK(ksync_memgroup_nr_groups(M.set) == 0);
	CHECK(ksync_objcache_destroy(M.cache) == 0);
	CHECK(ksync_shrinker_registry_destroy(M.reg) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned magazines[] = { 1, 2, 8, 32 };
	static const size_t sizes[] = { 16, 40, 64, 200 };
	struct input in = { data, data + (size > 600 ? 600 : size) };
	struct ksched_setup set = ksched_setup_input(&in);
	struct ksync_objcache_config cfg;
	struct ksync_objcache_stats s;
	unsigned int c = take(&in);

	trace = set.trace;
	ksync_warn_hook = fuzz_report_hook; /* every call is legal: any report fails */
	pthread_mutex_t mu = M.live_mu;
	memset(&M, 0, sizeof(M));
	M.live_mu = mu;
	M.policy = set.policy;
	M.n = set.nthreads;
	M.design = (enum design)(c % 4);
	M.magazine = magazines[(c >> 2) % 4];
	M.size = sizes[(c >> 4) % 4];
	M.reg = ksync_shrinker_registry_create(NNODES);
	CHECK(M.reg);
	M.set = ksync_shrinker_registry_groups(M.reg);
	memset(&cfg, 0, sizeof(cfg));
	cfg.design = design_a() ? KSYNC_OBJCACHE_PER_GROUP : KSYNC_OBJCACHE_CHARGE_HANDLES;
	cfg.reparent = M.design == D_A_REPARENT;
	cfg.shrinkers = M.reg;
	cfg.magazine_size = M.magazine;
	CHECK(ksync_objcache_set_stock_slots(M.design == D_B1 ? 1 : KSYNC_OBJCACHE_STOCK_MAX) > 0);
	M.cache = ksync_objcache_create_config("fuzz", M.size, 0, KSYNC_OBJCACHE_ACCOUNT, NULL, &cfg);
	CHECK(M.cache);
	CHECK(ksync_objcache_stats(M.cache, &s) == 0);
	CHECK(s.object_size == M.size && s.stride >= M.size && s.active_objects == 0);
	if (trace)
		fprintf(stderr, "design %d magazine %u size %zu\n", (int)M.design, M.magazine, M.size);
	for (int t = 0; t < M.n; t++)
		M.t[t].nops = ksched_read_script(&in, M.t[t].op, M.t[t].arg, MAXOPS);
	if (set.policy != KSCHED_FREE)
		ksync_shrinker_set_yield_hook(shrinker_seam, NULL);
	ksched_run(M.n, body, NULL, in.p, (size_t)(in.end - in.p), set.policy, set.depth);
	ksync_shrinker_set_yield_hook(NULL, NULL);

	final_checks();
	teardown();
	return 0;
}
