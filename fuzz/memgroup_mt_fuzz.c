/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/memgroup_mt_fuzz.c - memory groups, concurrent: 2-4 threads run
 * scripts of group create/offline, LRU adds, dels and walks (their own
 * groups', another thread's through a reference, whole nodes, the shrinker's
 * walks), charges through charge handles, statistics updates and reads, and
 * the SRCU callbacks' work, under the baton scheduler (fuzz/sched.h), with
 * one allocation failure injected where the input says.
 *
 * Input: byte 0 picks the threads (2-4), the policy (bytes, PCT, or free
 * running) and PCT's depth, as in fuzz_registry_mt; byte 1 the allocation to
 * fail (0: none); then per thread a length and that many (op, arg) pairs; the
 * rest is the schedule. KSYNC_FUZZ_TRACE=1 prints the scripts and every
 * hand-off; KSYNC_FUZZ_POLICY=free|pct|bytes overrides the policy.
 *
 * One registry (two nodes), its set of groups, one list_lru on it with a
 * memcg- and NUMA-aware shrinker on top (the pattern of <ksync/list_lru.h>).
 * Ownership, as the contract requires:
 *  - a thread owns the groups it creates (up to NG live at once, children
 *    only under its own groups, so its offline's -EBUSY is predicted
 *    exactly), their charge handles (taken at creation, kept to the end) and
 *    its items (adds and dels of an item never race: only its owner calls
 *    them);
 *  - shared: the list_lru, walks of any list (another thread's group is
 *    reached through a published pointer, loaded and tryget inside a read
 *    section of the set's domain; the owner unpublishes before it offlines),
 *    adds of one's own items to another thread's group (with the
 *    reference), statistics updates through such a reference (dying
 *    redirection), reads.
 * A walk that isolates an item marks it taken (before the isolate, under the
 * list's lock): its owner then sees it off its list and may add it again.
 * Checked:
 *  - every owner result: create (NULL only for the injected failure),
 *    offline (0; -EBUSY with online children, and a second offline through
 *    an extra reference), create under a dead parent (NULL), add (true;
 *    false for an item on a list), del (true unless a walk took it), a
 *    walk's isolated count and budget;
 *  - at most one documented out-of-memory result, only when the injected
 *    failure fired;
 *  - after the threads end and the SRCU callbacks ran (the statistics'
 *    final moves): the groups not yet freed are exactly the online ones; for
 *    every node the totals of OBJECTS, BYTES and USER0 (the set's, and the
 *    root plus every online group's own counters) equal what the threads
 *    charged, and LRU's the items found on groups' lists (conservation);
 *  - no object lost: every item added and not taken by a walk is found by
 *    exactly one walk over the global lists and every online group's lists,
 *    on its node, in the nearest online ancestor of the group it was added
 *    to (reparented items in the parent, top-level ones on the global list;
 *    with the injected failure anywhere on that chain, as documented), and
 *    no other item is found; the counts agree;
 *  - no group freed twice, no use after free, no leak (ASan, LSan), and a
 *    clean teardown (list_lru, shrinker, registry destroy return 0).
 * In the fuzzing mode the SRCU helper's work runs on the script threads
 * (op 8, offline's option, the final drive), so the schedule covers it.
 *
 * Groups in every state (issue 18), ops 12-17:
 *  - references held across operations (12): one's own groups (get) or
 *    another thread's (tryget in a read section), past their offline: the
 *    group-taking calls of group_call() on them (13), DEAD included;
 *  - another thread's group found inside a read section of the set's domain
 *    (the published pointer, no reference), the section held across
 *    preemption points while its owner unpublishes it, offlines it, drops
 *    its last reference and runs the callbacks: the same calls (14), FREED
 *    included: get_objcg (the nearest online group's handle, exactly),
 *    statistics, list_lru add/del/walk/count, the shrinker's walk and bit,
 *    tryget (fails exactly once released; get and put refused, reported,
 *    and no resurrection), create under it and a second offline (refused);
 *  - a put without a get on one of our online groups (15): reported at our
 *    line, refused, the group stays online and its offline works later;
 *  - groups churned (16: create, publish, unpublish, offline) while other
 *    threads read the published one in loops (17): their charge handle, and
 *    the registry's and list_lru's lookups; with threads running freely the
 *    churning thread stops the readers at an arbitrary instruction while it
 *    releases the group (fuzz/stall.h), the only way to hit a window with no
 *    preemption point in it (issue 18, case 1).
 * After every operation (no preemption point added): the thread's online
 * groups are online, the groups it holds and their parents are not freed,
 * and (under the baton) each item no walk took is on a list. Every misuse
 * report must come from a call marked as misuse on purpose (reports.h).
 */
#define _GNU_SOURCE /* pthread_kill, sigaction (fuzz/stall.h) */
#include <ksync/fuzzing.h>
#include <ksync/list_lru.h>
#include <ksync/list_lru_testing.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "reports.h"
#include "sched.h"
#include "stall.h"

#define NT KSCHED_MAX_THREADS
#define NNODES 2
#define NG 3	  /* live groups per thread */
#define NI 6	  /* items per thread */
#define MAXOPS 12 /* operations per thread (so at most MAXOPS groups created) */
#define NOPS 18
#define NH 2	  /* references a thread holds across its operations (op 12) */
#define CHURN_MAX 512 /* groups one thread churns in one input (op 16), running freely */

/* A group a thread created: never reused within an input. */
struct mrec {
	struct ksync_memgroup *g; /* valid while online (and while a reference is held) */
	struct mrec *parent;	  /* NULL: top level */
	struct ksync_objcg *h;	  /* its charge handle, kept to the end */
	int online;		  /* atomic: written by the owner */
	int owner, idx;
	int refs;		  /* atomic: references the scripts hold (not the creator's) */
};

struct mitem {
	struct ksync_list_lru_item lru;
	int owner, id;
	int taken;	   /* atomic: a walk isolated it (set before the isolate) */
	int added;	   /* owner: added and not deleted by the owner */
	struct mrec *loc;  /* owner: the group it was added to, NULL: global */
	int nid;	   /* owner */
	int found;	   /* final walks */
	struct mrec *found_at;
	int found_global;
};

struct thread_state {
	struct mrec rec[MAXOPS];
	int nrec;
	struct mrec *slot[NG];	/* the owner's live groups */
	struct mrec *pub[NG];	/* atomic: what other threads may reach */
	struct mitem item[NI];
	struct mrec *held[NH];	/* references held across operations (op 12) */
	struct ksync_memgroup *cpub; /* atomic: the group op 16 churns, published */
	int churned;		/* groups op 16 churned in this input (bounded: CHURN_MAX) */
	uint8_t op[MAXOPS], arg[MAXOPS];
	int nops;
};

static struct {
	struct ksync_shrinker_registry *reg;
	struct ksync_memgroup_set *set;
	struct ksync_list_lru lru;
	struct ksync_shrinker *shrinker;
	struct thread_state t[NT];
	int n;
	long objects[NNODES], bytes[NNODES], user0[NNODES]; /* atomic: what was charged */
	int oom;					    /* documented out-of-memory results */
	bool fired;					    /* the injected failure happened */
	enum ksched_policy policy;
	int churning;					    /* atomic: threads inside op 16 */
} M;

static bool trace;

/* A walk's plan: what the isolate callback does with each item it is offered. */
struct walk {
	unsigned int mode;
	int final;	     /* the final walks: record, skip */
	struct mrec *where;  /* the final walks: the list walked (NULL: global) */
	int nid;
	unsigned long removed, offered;
};

static __thread struct walk *shrinker_walk; /* the plan for this thread's shrinker scans */

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void add_model(long *p, long v)
{
	__atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

/* An owner's call failed: only the documented result, only when the failure fired. */
static void expect_oom(void)
{
	fuzz_injected_failure(&M.oom);
}

static enum ksync_lru_status isolate(struct ksync_list_lru_item *item, struct ksync_list_lru_one *l, void *arg)
{
	struct walk *w = arg;
	struct mitem *it = ksync_container_of(item, struct mitem, lru);

	w->offered++;
	if (w->final) {
		it->found++;
		it->found_at = w->where;
		it->found_global = w->where == NULL;
		CHECK(it->nid == w->nid);
		return KSYNC_LRU_SKIP;
	}
	ksched_point(); /* with the list's lock held: others wanting it yield */
	switch ((w->mode + (unsigned int)it->id * 3U + (unsigned int)it->owner) % 7) {
	case 0:
	case 1:
		st(&it->taken, 1); /* before the isolate: its release orders it for the owner */
		ksync_list_lru_isolate(l, item);
		w->removed++;
		return KSYNC_LRU_REMOVED;
	case 2:
		return KSYNC_LRU_ROTATE;
	case 3: /* isolate, drop the lock: a retirement may run meanwhile */
		st(&it->taken, 1);
		ksync_list_lru_isolate(l, item);
		w->removed++;
		ksync_list_lru_unlock(l);
		ksched_point();
		ksync_list_lru_lock(l);
		return KSYNC_LRU_REMOVED_RETRY;
	case 4:
		ksync_list_lru_unlock(l);
		ksched_point();
		ksync_list_lru_lock(l);
		return KSYNC_LRU_RETRY;
	case 5:
		return (w->mode & 0x80) ? KSYNC_LRU_STOP : KSYNC_LRU_SKIP;
	default:
		return KSYNC_LRU_SKIP;
	}
}

static unsigned long count_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	unsigned long n = ksync_list_lru_shrinker_count(&M.lru, sc);

	(void)s;
	ksched_point();
	return n ? n : KSYNC_SHRINK_EMPTY;
}

static unsigned long scan_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct walk local = { 0, 0, NULL, 0, 0, 0 };
	struct walk *w = shrinker_walk ? shrinker_walk : &local;

	(void)s;
	return ksync_list_lru_shrinker_walk(&M.lru, sc, isolate, w);
}

/* A walk of one list by a script thread: its count and budget checked. */
static void walk_one(int nid, struct ksync_memgroup *g, unsigned int mode, unsigned long budget)
{
	struct walk w = { mode, 0, NULL, nid, 0, 0 };
	unsigned long left = budget, r;

	r = ksync_list_lru_walk_one(&M.lru, nid, g, isolate, &w, &left);
	CHECK(r == w.removed);
	CHECK(left == budget - w.offered);
}

static struct mrec *owned_live(struct thread_state *T, unsigned int a)
{
	return T->slot[a % NG];
}

static bool has_online_child(struct thread_state *T, struct mrec *r)
{
	for (int s = 0; s < NG; s++)
		if (T->slot[s] && T->slot[s]->parent == r)
			return true;
	return false;
}

/* Results predicted exactly only under the baton: nothing runs between two preemption points. */
static bool exact(void)
{
	return M.policy != KSCHED_FREE;
}

static struct ksync_srcu_struct *set_srcu(void)
{
	return ksync_memgroup_set_srcu(M.set);
}

/* Another thread than @tid, picked by @a. */
static int other(int tid, unsigned int a)
{
	return (tid + 1 + (int)(a % (unsigned int)(M.n - 1))) % M.n;
}

/*
 * The references the scripts hold on each group are counted in the model
 * (op 15 predicts an unbalanced put from them): counted after a get or a
 * successful tryget, uncounted before the put (no preemption point between).
 */
static void ref_taken(struct mrec *r)
{
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
}

static void ref_put(struct mrec *r)
{
	CHECK(__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) >= 0);
	ksync_memgroup_put(r->g);
}

/*
 * Another thread's group, with a reference (NULL if none): the pointer is
 * loaded and the reference taken inside a read section of the set's domain,
 * with no preemption point between them; the owner unpublishes first.
 */
static struct mrec *foreign_get(int tid, unsigned int a, bool online_only)
{
	int o = other(tid, a);
	struct ksync_srcu_struct *ss = ksync_memgroup_set_srcu(M.set);
	struct mrec *r;
	bool got = false;
	int idx;

	idx = ksync_srcu_read_lock(ss);
	r = __atomic_load_n(&M.t[o].pub[(a >> 2) % NG], __ATOMIC_ACQUIRE);
	if (r)
		got = online_only ? ksync_memgroup_tryget_online(r->g) : ksync_memgroup_tryget(r->g);
	if (got)
		ref_taken(r);
	ksync_srcu_read_unlock(ss, idx);
	return got ? r : NULL;
}

static void item_add(struct thread_state *T, struct mitem *it, int nid, struct mrec *to)
{
	bool r;

	if (it->added) {
		if (ksync_list_lru_item_on_list(&it->lru)) {
			if (M.policy == KSCHED_FREE)
				return; /* a walk may take it meanwhile: not predicted */
			/* On a list: refused (no preemption point before the test). */
			CHECK(!ksync_list_lru_add(&M.lru, &it->lru, nid, to ? to->g : NULL));
			return;
		}
		CHECK(ld(&it->taken)); /* off its list: a walk took it */
		it->added = 0;
	}
	(void)T;
	st(&it->taken, 0);
	r = ksync_list_lru_add(&M.lru, &it->lru, nid, to ? to->g : NULL);
	CHECK(r);
	it->added = 1;
	it->loc = to;
	it->nid = nid;
}


/*
 * ksync_memgroup_get_objcg() on @g, whatever its state (the caller holds a
 * reference, or is inside a read section of the set's domain): the handle
 * of the nearest online group of @g's chain, exactly, under the baton (no
 * preemption point in the call); on the chain when threads run freely.
 * Charged through, then put.
 */
static void check_get_objcg(struct ksync_memgroup *g, int nid, unsigned int sel)
{
	int idx = ksync_srcu_read_lock(set_srcu());
	struct ksync_memgroup *want = nearest_online_group(g);
	struct ksync_objcg *h = ksync_memgroup_get_objcg(g);
	struct ksync_memgroup *at = h ? ksync_objcg_group(h) : NULL;

	if (exact())
		CHECK(h ? at == want : !want);
	else
		CHECK(!h || on_group_chain(at, g));
	ksync_srcu_read_unlock(set_srcu(), idx);
	if (h) {
		long objs = (long)(sel % 5) - 1;

		CHECK(ksync_objcg_charge(h, nid, objs, objs * 64) == 0);
		add_model(&M.objects[nid], objs);
		add_model(&M.bytes[nid], objs * 64);
		ksync_objcg_put(h);
	}
}

/* Sites of misuse on purpose that must be reported (once per site and process). */
static int site_put_online, site_put_online2;

/*
 * A group-taking call on @r's group, in whatever state it is: held by a
 * reference (@held: ONLINE, DYING or DEAD, never FREED), or found inside a
 * read section of the set's domain without one (any state, FREED included:
 * its memory and every client's state stay until the section ends). The
 * documented result in each state.
 */
static void group_call(int tid, struct mrec *r, unsigned int sel, int nid, bool held)
{
	struct thread_state *T = &M.t[tid];
	struct ksync_memgroup *g = r->g;
	enum ksync_memgroup_state s = ksync_memgroup_state(g);

	if (trace)
		fprintf(stderr, "t%d:   call %u on t%d's group %d (state %d%s)\n", tid, sel % 8, r->owner, r->idx,
			(int)s, held ? ", held" : "");
	if (held)
		CHECK(s != KSYNC_MEMGROUP_FREED);
	switch (sel % 8) {
	case 0: /* its charge handle: the nearest online group's */
		check_get_objcg(g, nid, sel >> 3);
		break;
	case 1: /* statistics: to the nearest online group (or the root); its own counters readable */
		CHECK(ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_USER0, 2) == 0);
		CHECK(ksync_memgroup_stat_add_always_locked(g, nid, KSYNC_MEMGROUP_STAT_USER0, -1) == 0);
		add_model(&M.user0[nid], 1);
		(void)ksync_memgroup_stat_read(g, nid, KSYNC_MEMGROUP_STAT_LRU);
		break;
	case 2: { /* one of our items onto its list: the nearest live list takes it; deleted naming it */
		struct mitem *it = &T->item[(sel >> 3) % NI];

		item_add(T, it, nid, r);
		if (sel & 0x40) {
			bool del = ksync_list_lru_del(&M.lru, &it->lru, it->nid, g);

			CHECK(del == (it->added && !ld(&it->taken))); /* false only when a walk took it */
			it->added = 0;
		}
		break;
	}
	case 3: /* its list: a walk (none once retired) and the count */
		walk_one(nid, g, sel * 0x9e3779b9U, 1 + sel % 5);
		(void)ksync_list_lru_count_one(&M.lru, nid, g);
		break;
	case 4: { /* the shrinker's walk of it (returns at once once it is going offline) */
		struct walk w = { sel, 0, NULL, nid, 0, 0 };

		shrinker_walk = &w;
		(void)ksync_shrink_slab(M.reg, nid, g, (int)(sel % 13));
		shrinker_walk = NULL;
		break;
	}
	case 5: { /* the shrinker's bit: 0 in every state (a dead group's goes to a live ancestor) */
		int max = ksync_shrinker_nr_max(M.reg), rr;

		CHECK(ksync_set_shrinker_bit(g, nid, M.shrinker->id) == 0);
		/* One past the map: refused by the live group that would take it; none: 0. */
		bool live = nearest_online_group(g) != NULL;
		EXPECT_MISUSE(rr = ksync_set_shrinker_bit(g, nid, max));
		if (exact() && live)
			CHECK(rr == -EINVAL);
		else
			CHECK(rr == -EINVAL || rr == 0);
		break;
	}
	case 6: { /* references: tryget succeeds exactly while a reference is left */
		bool got = ksync_memgroup_tryget(g);

		if (got) {
			ref_taken(r);
			CHECK(ksync_memgroup_state(g) != KSYNC_MEMGROUP_FREED);
			ksync_memgroup_get(g); /* legal: we hold one */
			ref_taken(r);
			ref_put(r);
			ref_put(r);
			break;
		}
		CHECK(!held);
		if (s == KSYNC_MEMGROUP_ONLINE || s == KSYNC_MEMGROUP_DYING)
			CHECK(!exact()); /* the creator's reference was there when @s was read */
		if (s != KSYNC_MEMGROUP_FREED)
			break;
		fuzz_released_group_refuses(g, exact());
		break;
	}
	case 7: /* not online (final once seen): no child under it, no second offline */
		if (s == KSYNC_MEMGROUP_ONLINE) {
			struct ksync_memgroup *c;
			int idx = ksync_srcu_read_lock(set_srcu());

			ksync_memgroup_for_each_child(c, g)
				CHECK(ksync_memgroup_parent(c) == g);
			ksync_srcu_read_unlock(set_srcu(), idx);
			break;
		}
		EXPECT_MISUSE(CHECK(!ksync_memgroup_create(M.set, g)));
		EXPECT_MISUSE(CHECK(ksync_memgroup_offline(g) == -EBUSY));
		CHECK(ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE);
		break;
	}
}

static void op(int tid, unsigned int o, unsigned int a)
{
	struct thread_state *T = &M.t[tid];
	int nid = (int)(a >> 3) & 1;

	if (trace)
		fprintf(stderr, "t%d: op %u arg %u\n", tid, o % NOPS, a);
	switch (o % NOPS) {
	case 0: { /* create a group in a free slot, top level or under one of ours */
		int s = (int)(a % NG);
		struct mrec *p = T->slot[(a >> 2) % NG], *r;
		struct ksync_memgroup *g;

		if (T->slot[s] || T->nrec == MAXOPS)
			break;
		if (!(a & 0x20))
			p = NULL;
		g = ksync_memgroup_create(M.set, p ? p->g : NULL);
		if (!g) {
			expect_oom();
			break;
		}
		r = &T->rec[T->nrec];
		r->g = g;
		r->parent = p;
		r->owner = tid;
		r->idx = T->nrec++;
		r->h = ksync_memgroup_get_objcg(g);
		CHECK(r->h);
		st(&r->online, 1);
		T->slot[s] = r;
		__atomic_store_n(&T->pub[s], r, __ATOMIC_RELEASE);
		break;
	}
	case 1: { /* offline one of ours */
		int s = (int)(a % NG);
		struct mrec *r = T->slot[s];
		struct ksync_memgroup *g;

		if (!r)
			break;
		g = r->g;
		if (has_online_child(T, r)) {
			EXPECT_MISUSE(CHECK(ksync_memgroup_offline(g) == -EBUSY));
			break;
		}
		__atomic_store_n(&T->pub[s], NULL, __ATOMIC_RELEASE); /* before the offline */
		T->slot[s] = NULL;
		if (a & 0x20) {
			ksync_memgroup_get(g); /* an extra reference: the group outlives its offline */
			ref_taken(r);
		}
		CHECK(ksync_memgroup_offline(g) == 0);
		st(&r->online, 0);
		if (a & 0x20) {
			EXPECT_MISUSE(CHECK(ksync_memgroup_offline(g) == -EBUSY)); /* twice */
			CHECK(ksync_memgroup_state(g) == KSYNC_MEMGROUP_DEAD);
			EXPECT_MISUSE(CHECK(!ksync_memgroup_create(M.set, g))); /* under a dead parent */
			CHECK(!ksync_memgroup_tryget_online(g));
			/* A late update: redirected to the nearest online ancestor. */
			CHECK(ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_USER0, 3) == 0);
			add_model(&M.user0[nid], 3);
			ref_put(r);
		}
		if (a & 0x40) /* and the frees it queued, at once */
			(void)ksync_srcu_run_all_callbacks();
		break;
	}
	case 2: { /* add one of our items: to one of our groups, or the global list */
		struct mrec *to = (a & 0x40) ? owned_live(T, a >> 4) : NULL;

		item_add(T, &T->item[a % NI], nid, to);
		break;
	}
	case 3: { /* delete one of our items */
		struct mitem *it = &T->item[a % NI];
		bool r = ksync_list_lru_del_obj(&M.lru, &it->lru);

		if (!it->added) {
			CHECK(!r);
			break;
		}
		CHECK(r == !ld(&it->taken)); /* false only when a walk took it */
		it->added = 0;
		break;
	}
	case 4: { /* walk one of our lists, or the global one, or a whole node */
		struct mrec *r = owned_live(T, a >> 4);

		if (a & 0x40) {
			struct walk w = { a * 0x9e3779b9U, 0, NULL, nid, 0, 0 };
			unsigned long left = 1 + a % 9;
			unsigned long got = ksync_list_lru_walk_node(&M.lru, nid, isolate, &w, &left);
			CHECK(got == w.removed);
		} else {
			walk_one(nid, (a & 0x80) && r ? r->g : NULL, a * 0x9e3779b9U, 1 + a % 7);
		}
		break;
	}
	case 5: { /* another thread's group, through a reference */
		struct mrec *r = foreign_get(tid, a, a & 0x80);
		if (!r)
			break;
		switch ((a >> 4) & 3) {
		case 0:
			walk_one(nid, r->g, a * 0x2545f491U, 1 + a % 5);
			break;
		case 1: /* one of our items onto its list (a dying group: its ancestor's) */
			item_add(T, &T->item[(a >> 1) % NI], nid, r);
			break;
		case 2: /* a statistic through the reference: dying redirection */
			CHECK(ksync_memgroup_stat_add(r->g, nid, KSYNC_MEMGROUP_STAT_USER0, 1) == 0);
			add_model(&M.user0[nid], 1);
			(void)ksync_memgroup_stat_read(r->g, nid, KSYNC_MEMGROUP_STAT_LRU);
			break;
		case 3: { /* the shrinker's walk of that group */
			struct walk w = { a, 0, NULL, nid, 0, 0 };
			shrinker_walk = &w;
			(void)ksync_shrink_slab(M.reg, nid, r->g, (int)(a % 13));
			shrinker_walk = NULL;
			break;
		}
		}
		ref_put(r);
		break;
	}
	case 6: { /* charge through one of our handles (its group may be long gone) */
		struct thread_state *U = T;
		long objs = (long)(a % 9) - 2;

		if (!U->nrec)
			break;
		struct mrec *r = &U->rec[(a >> 4) % (unsigned int)U->nrec];
		CHECK(ksync_objcg_charge(r->h, nid, objs, objs * 64) == 0);
		add_model(&M.objects[nid], objs);
		add_model(&M.bytes[nid], objs * 64);
		break;
	}
	case 7: { /* a statistic of one of our online groups, directly */
		struct mrec *r = owned_live(T, a >> 4);

		if (!r)
			break;
		CHECK(ksync_memgroup_stat_add(r->g, nid, KSYNC_MEMGROUP_STAT_OBJECTS, 1) == 0);
		add_model(&M.objects[nid], 1);
		break;
	}
	case 8: /* the SRCU helper's work, on this thread */
		(void)ksync_srcu_run_all_callbacks();
		break;
	case 9: { /* reads (not exact while others run), children, misuse */
		struct mrec *r = owned_live(T, a >> 4);

		(void)ksync_memgroup_stat_total(M.set, nid, (int)(a % KSYNC_MEMGROUP_NR_STATS));
		(void)ksync_list_lru_count(&M.lru);
		(void)ksync_list_lru_count_node(&M.lru, nid);
		(void)ksync_memgroup_nr_groups(M.set);
		if (r) {
			struct ksync_srcu_struct *ss = ksync_memgroup_set_srcu(M.set);
			struct ksync_memgroup *c;
			int idx = ksync_srcu_read_lock(ss);

			ksync_memgroup_for_each_child(c, r->g)
				CHECK(ksync_memgroup_parent(c) == r->g);
			ksync_srcu_read_unlock(ss, idx);
			(void)ksync_list_lru_count_one(&M.lru, nid, r->g);
			/* Misuse: the documented errors, nothing done. */
			EXPECT_MISUSE(CHECK(ksync_memgroup_stat_add(r->g, NNODES, KSYNC_MEMGROUP_STAT_USER0, 1) == -EINVAL));
			EXPECT_MISUSE(CHECK(!ksync_list_lru_add(&M.lru, &T->item[a % NI].lru, NNODES, r->g)));
		}
		break;
	}
	case 10: { /* the shrinker's walks: global, or one of our groups */
		struct mrec *r = owned_live(T, a >> 4);
		struct walk w = { a, 0, NULL, nid, 0, 0 };

		shrinker_walk = &w;
		(void)ksync_shrink_slab(M.reg, nid, (a & 0x40) && r ? r->g : NULL, (int)(a % 13));
		shrinker_walk = NULL;
		break;
	}
	case 11: { /* a charge handle's group: get it with a reference */
		if (!T->nrec)
			break;
		struct mrec *r = &T->rec[(a >> 4) % (unsigned int)T->nrec];
		struct ksync_memgroup *g = ksync_objcg_get_group(r->h);

		if (g) {
			CHECK(ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_USER0, -1) == 0);
			add_model(&M.user0[nid], -1);
			ksync_memgroup_put(g); /* our own group or an ancestor: no op 15 races it */
		}
		break;
	}
	case 12: { /* hold a reference across our next operations, or drop the one held */
		int h = (int)(a % NH);
		struct mrec *r = T->held[h];

		if (r) {
			T->held[h] = NULL;
			ref_put(r);
			break;
		}
		if (a & 0x10) {
			r = foreign_get(tid, a >> 2, a & 0x80); /* found in a read section, tryget */
		} else if ((r = owned_live(T, a >> 2)) != NULL) {
			ksync_memgroup_get(r->g); /* ours: we hold the creator's */
			ref_taken(r);
		}
		T->held[h] = r;
		break;
	}
	case 13: { /* a group-taking call on a group we hold: ONLINE, DYING or DEAD */
		struct mrec *r = T->held[a % NH];

		if (r)
			group_call(tid, r, a >> 1, nid, true);
		break;
	}
	case 14: { /* another thread's group found in a read section of the set's domain, no reference */
		int o = other(tid, a), idx = ksync_srcu_read_lock(set_srcu());
		struct mrec *r = __atomic_load_n(&M.t[o].pub[(a >> 2) % NG], __ATOMIC_ACQUIRE);

		if (r) {
			/* Its owner may unpublish it, offline it, drop the last reference, run the callbacks. */
			ksched_point();
			group_call(tid, r, a >> 4, nid, false);
			ksched_point();
			group_call(tid, r, (a >> 4) + 5, nid, false);
		}
		ksync_srcu_read_unlock(set_srcu(), idx);
		break;
	}
	case 15: { /* a put without a get on one of our online groups: reported, refused */
		struct mrec *r = owned_live(T, a >> 4);
		unsigned long before;

		/*
		 * Exact only with no other reference (a put would drop that one
		 * unreported) and nobody in between. Children hold one on their
		 * parent until their release: an online child, or an offline
		 * one that a reference kept.
		 */
		if (!r || !exact() || __atomic_load_n(&r->refs, __ATOMIC_ACQUIRE))
			break;
		bool children = false;
		for (int i = 0; i < T->nrec; i++)
			children |= T->rec[i].parent == r && (ld(&T->rec[i].online) || ld(&T->rec[i].refs));
		if (children)
			break;
		before = fuzz_reports;
		EXPECT_MISUSE(ksync_memgroup_put(r->g));
		fuzz_must_report(&site_put_online, before, true);
		CHECK(ksync_memgroup_state(r->g) == KSYNC_MEMGROUP_ONLINE);
		if (a & 0x40) { /* a balanced pair, then one put too many again */
			ksync_memgroup_get(r->g);
			ksync_memgroup_put(r->g);
			before = fuzz_reports;
			EXPECT_MISUSE(ksync_memgroup_put(r->g));
			fuzz_must_report(&site_put_online2, before, true);
			CHECK(ksync_memgroup_state(r->g) == KSYNC_MEMGROUP_ONLINE);
		}
		CHECK(ksync_memgroup_tryget_online(r->g));
		ksync_memgroup_put(r->g);
		break;
	}
	case 16: { /* churn: groups created, published, unpublished and offlined in a loop */
		struct mrec *p = (a & 0x40) ? owned_live(T, a >> 4) : NULL;
		int n = exact() ? 1 + (int)(a % 4) : 32 << (a % 4);

		__atomic_add_fetch(&M.churning, 1, __ATOMIC_ACQ_REL);
		for (int i = 0; i < n && T->churned < CHURN_MAX; i++, T->churned++) {
			struct ksync_memgroup *g = ksync_memgroup_create(M.set, p ? p->g : NULL);

			if (!g) {
				expect_oom();
				break;
			}
			__atomic_store_n(&T->cpub, g, __ATOMIC_RELEASE);
			ksched_point();
			if (!exact()) /* readers stopped wherever they are, the group released under them */
				stall_readers(tid);
			__atomic_store_n(&T->cpub, NULL, __ATOMIC_RELEASE);
			CHECK(ksync_memgroup_offline(g) == 0); /* its last reference: released */
			if (!exact())
				stall_resume();
			if (i % 32 == 31)
				(void)ksync_srcu_run_all_callbacks();
		}
		__atomic_sub_fetch(&M.churning, 1, __ATOMIC_ACQ_REL);
		break;
	}
	case 17: { /* readers of another thread's groups in a loop, racing its releases */
		int o = other(tid, a), n = exact() ? 1 + (int)(a % 4) : 256 << (a % 4);

		if (!exact())
			stall_reader_begin(tid);
		for (int i = 0; i < n; i++) {
			int idx = ksync_srcu_read_lock(set_srcu());
			struct ksync_memgroup *g;

			if (a & 0x40) {
				g = __atomic_load_n(&M.t[o].cpub, __ATOMIC_ACQUIRE);
			} else {
				struct mrec *r = __atomic_load_n(&M.t[o].pub[(a >> 2) % NG], __ATOMIC_ACQUIRE);
				g = r ? r->g : NULL;
			}
			/* Its charge handle; or, with 0x20, also the registry's and list_lru's lookups. */
			switch ((a & 0x20) && g ? i % 4 : 0) {
			case 0:
				if (g)
					check_get_objcg(g, nid, (unsigned int)i);
				break;
			case 1:
				CHECK(ksync_set_shrinker_bit(g, nid, M.shrinker->id) == 0);
				break;
			case 2:
				(void)ksync_shrink_slab(M.reg, nid, g, 12);
				break;
			default:
				walk_one(nid, g, (unsigned int)i, 3);
				(void)ksync_list_lru_count_one(&M.lru, nid, g);
				break;
			}
			ksync_srcu_read_unlock(set_srcu(), idx);
			ksched_point();
			/* Running freely: once the churn began and ended, stop. */
			if (!exact() && i >= 256 && !__atomic_load_n(&M.churning, __ATOMIC_ACQUIRE))
				break;
		}
		if (!exact())
			stall_reader_end(tid);
		break;
	}
	}
}

/*
 * After each operation of a thread (no preemption point: the schedule stays
 * as it was): its online groups are online (no put released one), the
 * groups it holds are not freed, nor their parents (a group holds a
 * reference on its parent until its release), and, under the baton, each
 * of its items that no walk took is on a list.
 */
static void after_op(int tid)
{
	struct thread_state *T = &M.t[tid];

	for (int s = 0; s < NG; s++)
		if (T->slot[s])
			CHECK(ksync_memgroup_state(T->slot[s]->g) == KSYNC_MEMGROUP_ONLINE);
	for (int h = 0; h < NH; h++) {
		struct mrec *r = T->held[h];
		struct ksync_memgroup *p;

		if (!r)
			continue;
		CHECK(ksync_memgroup_state(r->g) != KSYNC_MEMGROUP_FREED);
		p = ksync_memgroup_parent(r->g);
		CHECK(!p || ksync_memgroup_state(p) != KSYNC_MEMGROUP_FREED);
	}
	if (!exact())
		return;
	for (int i = 0; i < NI; i++) {
		struct mitem *it = &T->item[i];

		if (it->added && !ld(&it->taken))
			CHECK(ksync_list_lru_item_on_list(&it->lru));
	}
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
	for (int h = 0; h < NH; h++) {
		struct mrec *r = T->held[h];

		if (r) {
			T->held[h] = NULL;
			ref_put(r);
		}
	}
}

static void shrinker_seam(int point, void *arg)
{
	(void)arg;
	ksched_seam("shrinker", point);
}

static void lru_seam(struct ksync_list_lru *lru, int point, void *arg)
{
	(void)lru, (void)arg;
	ksched_seam("list_lru", point);
}

static bool on_chain(const struct mrec *found, const struct mrec *from)
{
	for (const struct mrec *r = from; r; r = r->parent)
		if (r == found)
			return true;
	return found == NULL;
}

static struct mrec *nearest_online(struct mrec *r)
{
	while (r && !r->online)
		r = r->parent;
	return r;
}

/* After the threads: conservation, no object lost, the groups left. */
static void final_checks(void)
{
	int online = 0;
	long on_groups[NNODES] = { 0 };
	unsigned long found_total = 0;

	(void)ksync_srcu_run_all_callbacks(); /* the statistics' final moves, the frees */
	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < M.t[t].nrec; i++)
			online += M.t[t].rec[i].online;
	CHECK(ksync_memgroup_nr_groups(M.set) == online); /* every offlined group freed, once */

	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < NI; i++)
			M.t[t].item[i].found = 0;
	for (int nid = 0; nid < NNODES; nid++) {
		struct walk w = { 0, 1, NULL, nid, 0, 0 };
		unsigned long left = ~0UL >> 1;

		(void)ksync_list_lru_walk_one(&M.lru, nid, NULL, isolate, &w, &left);
		CHECK(ksync_list_lru_count_one(&M.lru, nid, NULL) == w.offered);
		found_total += w.offered;
		for (int t = 0; t < M.n; t++)
			for (int i = 0; i < M.t[t].nrec; i++) {
				struct mrec *r = &M.t[t].rec[i];

				if (!r->online)
					continue;
				w.where = r;
				w.offered = 0;
				left = ~0UL >> 1;
				(void)ksync_list_lru_walk_one(&M.lru, nid, r->g, isolate, &w, &left);
				CHECK(ksync_list_lru_count_one(&M.lru, nid, r->g) == w.offered);
				on_groups[nid] += (long)w.offered;
				found_total += w.offered;
			}
	}
	CHECK(ksync_list_lru_count(&M.lru) == found_total);
	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < NI; i++) {
			struct mitem *it = &M.t[t].item[i];
			bool there = it->added && !it->taken;

			CHECK(ksync_list_lru_item_on_list(&it->lru) == there);
			CHECK(it->found == (there ? 1 : 0));
			if (!there)
				continue;
			struct mrec *want = nearest_online(it->loc);
			struct mrec *at = it->found_global ? NULL : it->found_at;
			if (M.fired)
				CHECK(on_chain(at, it->loc)); /* the nearest ancestor with a list */
			else
				CHECK(at == want);
		}

	for (int nid = 0; nid < NNODES; nid++) {
		static const int item[] = { KSYNC_MEMGROUP_STAT_OBJECTS, KSYNC_MEMGROUP_STAT_BYTES,
					    KSYNC_MEMGROUP_STAT_USER0, KSYNC_MEMGROUP_STAT_LRU };
		long want[] = { M.objects[nid], M.bytes[nid], M.user0[nid], on_groups[nid] };

		for (int k = 0; k < 4; k++) {
			long sum = ksync_memgroup_stat_root(M.set, nid, item[k]);

			for (int t = 0; t < M.n; t++)
				for (int i = 0; i < M.t[t].nrec; i++)
					if (M.t[t].rec[i].online)
						sum += ksync_memgroup_stat_read(M.t[t].rec[i].g, nid, item[k]);
			CHECK(sum == want[k]);
			CHECK(ksync_memgroup_stat_total(M.set, nid, item[k]) == want[k]);
		}
	}
}

static void teardown(void)
{
	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < NI; i++) {
			struct mitem *it = &M.t[t].item[i];
			CHECK(ksync_list_lru_del_obj(&M.lru, &it->lru) == (it->added && !it->taken));
		}
	/* Leaves first: a thread's children were created after their parents. */
	for (int t = 0; t < M.n; t++)
		for (int i = M.t[t].nrec - 1; i >= 0; i--)
			if (M.t[t].rec[i].online) {
				CHECK(ksync_memgroup_offline(M.t[t].rec[i].g) == 0);
				M.t[t].rec[i].online = 0;
			}
	for (int t = 0; t < M.n; t++)
		for (int i = 0; i < M.t[t].nrec; i++)
			ksync_objcg_put(M.t[t].rec[i].h);
	(void)ksync_srcu_run_all_callbacks();
	CHECK(ksync_memgroup_nr_groups(M.set) == 0);
	for (int nid = 0; nid < NNODES; nid++) {
		CHECK(ksync_memgroup_stat_total(M.set, nid, KSYNC_MEMGROUP_STAT_LRU) == 0);
		CHECK(ksync_memgroup_stat_root(M.set, nid, KSYNC_MEMGROUP_STAT_OBJECTS) == M.objects[nid]);
		CHECK(ksync_memgroup_stat_root(M.set, nid, KSYNC_MEMGROUP_STAT_BYTES) == M.bytes[nid]);
		CHECK(ksync_memgroup_stat_root(M.set, nid, KSYNC_MEMGROUP_STAT_USER0) == M.user0[nid]);
	}
	CHECK(ksync_list_lru_destroy(&M.lru) == 0);
	CHECK(ksync_shrinker_free(M.shrinker) == 0);
	CHECK(ksync_shrinker_registry_destroy(M.reg) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + (size > 600 ? 600 : size) };
	struct ksched_setup set = ksched_setup_input(&in);

	trace = set.trace;
	ksync_warn_hook = fuzz_report_hook; /* misuse on purpose is marked: any other report fails */
	stall_install();
	memset(&M, 0, sizeof(M));
	M.policy = set.policy;
	M.n = set.nthreads;
	M.reg = ksync_shrinker_registry_create(NNODES);
	CHECK(M.reg);
	M.set = ksync_shrinker_registry_groups(M.reg);
	CHECK(ksync_memgroup_set_nr_nodes(M.set) == NNODES);
	M.shrinker = ksync_shrinker_alloc(M.reg, KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE, "lru");
	CHECK(M.shrinker);
	M.shrinker->count_objects = count_cb;
	M.shrinker->scan_objects = scan_cb;
	CHECK(ksync_list_lru_init(&M.lru, M.set, NNODES, M.shrinker) == 0);
	CHECK(ksync_shrinker_register(M.shrinker) == 0);
	for (int t = 0; t < M.n; t++) {
		struct thread_state *T = &M.t[t];

		for (int i = 0; i < NI; i++) {
			ksync_list_lru_item_init(&T->item[i].lru);
			T->item[i].owner = t;
			T->item[i].id = i;
		}
		T->nops = ksched_read_script(&in, T->op, T->arg, MAXOPS);
	}
	if (set.policy != KSCHED_FREE) {
		ksync_shrinker_set_yield_hook(shrinker_seam, NULL);
		ksync_list_lru_set_yield_hook(&M.lru, lru_seam, NULL);
	}
	ksync_fail_nth_alloc(set.fail);
	ksched_run(M.n, body, NULL, in.p, (size_t)(in.end - in.p), set.policy, set.depth);
	M.fired = ksync_fail_nth_alloc_fired();
	ksync_fail_nth_alloc(0);
	ksync_shrinker_set_yield_hook(NULL, NULL);
	ksync_list_lru_set_yield_hook(&M.lru, NULL, NULL);

	final_checks();
	teardown();
	return 0;
}
