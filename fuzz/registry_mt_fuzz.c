/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/registry_mt_fuzz.c - the shrinker registry, concurrent: 2-4 threads
 * run scripts of register, unregister, alloc/free, walks (global and per
 * group), bits, group create/destroy, synchronize_shrinkers, callback
 * behaviours and the SRCU callbacks' work, under the baton scheduler
 * (fuzz/sched.h), with one allocation failure injected where the input says.
 *
 * Input: byte 0 picks the threads (2-4), the policy (bytes, PCT, or free
 * running) and PCT's depth; byte 1 the allocation to fail (0: none); then
 * per thread a length and that many (op, arg) pairs; the rest is the
 * schedule. KSYNC_FUZZ_TRACE=1 prints the scripts and every hand-off;
 * KSYNC_FUZZ_POLICY=free|pct|bytes overrides the policy byte 0 picks (the
 * TSan stage replays the corpus with free running threads: breadth beside
 * the baton's depth).
 *
 * Each thread owns its shrinkers and its group (the registry's contract:
 * the caller owns a shrinker's and a group's lifetime), so each result of an
 * owner's call is predicted exactly, errors included. Shared by all threads:
 * two "victim" shrinkers that any thread, or any callback, may unregister
 * (exactly one unregister of each returns 0, the others -ENOENT), and the
 * walks. Checked:
 *  - no callback runs on a shrinker once its unregister or free returned,
 *    nor before its register returned;
 *  - every documented error, and at most one -ENOMEM/NULL, only when the
 *    injected failure fired;
 *  - after the threads end: every registered shrinker is reachable by a
 *    global walk; every memcg-aware one with objects and its bit set in a
 *    live group by that group's walk; ids of registered memcg-aware
 *    shrinkers are unique;
 *  - no freed memory is touched, nothing leaks (ASan, LSan), and the
 *    registry destroys cleanly.
 * The SRCU helper's work (freeing retired records) runs in the fuzzing mode
 * on the script threads (op 9, and the final barrier), so the schedule
 * covers it too.
 *
 * Groups in every state, deferred work, ids (issue 18), ops 11-17:
 *  - a child of each thread's group (11), destroyed through either door
 *    (ksync_shrinker_group_destroy() or ksync_memgroup_offline());
 *  - references held across operations (12) on one's own group or child, or
 *    another thread's (tryget inside the set's read section), past their
 *    destroy: the group-taking calls of group_call() on them (13), DEAD
 *    included: get_objcg (exactly the nearest online group's handle),
 *    set_shrinker_bit (0 in every state; the last id of the maps too; one
 *    past them refused by the live group that takes the bit), a group walk,
 *    deferred work added and read through the debug interface (0 while the
 *    group is alive, -ENOENT once dead), the debug count, tryget (fails
 *    exactly once released; get and put refused, reported, no
 *    resurrection), a child created under it and a second offline by
 *    either door (refused);
 *  - another thread's group or child found inside a read section of the
 *    set's domain, no reference, the section held across preemption points
 *    while its owner destroys it, the last reference goes and the callbacks
 *    run: the same calls (14), FREED included;
 *  - a neutral shrinker per thread (15): seeks far above its count, a scan
 *    that frees and scans nothing and is a preemption point, so a walk puts
 *    back exactly the deferred work it took; any thread adds deferred work
 *    to any thread's neutral shrinker, globally or in a group. Checked after
 *    the threads: the registry's ledger (groups + shrinkers + orphaned +
 *    retired) equals what was added, unless a shrinker that is not neutral
 *    was walked with objects (conservation across walks, reparenting,
 *    destroys and unregisters);
 *  - fillers (16): memcg-aware shrinkers allocated, never registered, up to
 *    80 per thread, so ids pass the maps' growths: every id given out is
 *    below the maps' size, set in the thread's groups; the last id of the
 *    maps is settable, the next refused;
 *  - both doors to offline from a read section of the registry's domain
 *    (-EDEADLK, the group stays online) and, once armed, from a shrinker's
 *    scan callback on the walked group (17).
 * After every operation (no preemption point added): the thread's group and
 * child are online, the groups it holds and their parents are not freed,
 * its fillers' ids are below the maps' size. Every misuse report must come
 * from a call marked as misuse on purpose (reports.h).
 */
#include <ksync/fuzzing.h>
#include <ksync/memgroup.h>
#include <ksync/objcg.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_debug.h>
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

#define NT KSCHED_MAX_THREADS
#define NCLASSIC 2 /* caller-owned shrinkers per thread */
#define NVICTIMS 2
#define MAXOPS 12
#define NOPS 18
#define NH 2	  /* references a thread holds across its operations (op 12) */
#define NFILL 80  /* fillers per thread (op 16): 4 threads' reach ids past two growths */
#define NEUTRAL_COUNT (1UL << 20) /* what a neutral shrinker counts (op 15) */

enum behaviour { COUNT, STOP, UNREG_VICTIM0, UNREG_VICTIM1 };

/* What callbacks read about a shrinker; atomics, for the free-running policy. */
struct info {
	int registered;	 /* between register's return and unregister's call */
	int gone;	 /* unregister or free returned: no callback may run */
	int behaviour;	 /* enum behaviour */
	int memcg;
	unsigned long objs; /* global objects */
	unsigned long gobjs[NT]; /* objects in group t */
	int bit[NT];	 /* bit set in group t (by its owner) */
	int counted;	 /* in the final walks */
	int doors;	 /* scan tries to take the walked group offline (op 17): refused */
};

struct thread_state {
	struct ksync_shrinker classic[NCLASSIC];
	struct info cinfo[NCLASSIC];
	int cst[NCLASSIC]; /* 0 none, 1 registered */
	struct ksync_shrinker *dyn;
	struct info dinfo;
	struct ksync_memgroup *group;
	struct ksync_memgroup *child;	/* atomic: a child of @group (op 11) */
	struct ksync_memgroup *held[NH];	/* references held across operations (op 12) */
	struct ksync_shrinker neutral;	/* a walk leaves its deferred work as it was (op 15) */
	struct info ninfo;
	int nst;			/* 0: never registered, 1: registered, 2: unregistered for good */
	int unregistering;		/* atomic: its unregister began */
	struct ksync_shrinker *fill[NFILL]; /* allocated, never registered (op 16) */
	int nfill;
	uint8_t op[MAXOPS], arg[MAXOPS];
	int nops;
};

static struct {
	struct ksync_shrinker_registry *reg;
	struct thread_state t[NT];
	int n;
	struct ksync_shrinker victim[NVICTIMS];
	struct info vinfo[NVICTIMS];
	int victim_unregs[NVICTIMS]; /* unregisters of the victim that returned 0 */
	int announced[NT];	      /* foreign walks of group t not yet inside (op 4) */
	int oom;		      /* documented out-of-memory results seen */
	enum ksched_policy policy;
	int final;		      /* the final walks: callbacks only count */
	long deferred_added;	      /* atomic: work added with ksync_shrinker_add_deferred */
	int deferred_moved;	      /* atomic: a walk could change deferred work (not neutral) */
} M;

static bool trace;
static __thread int announced = -1; /* the group whose walk this thread announced */

static void withdraw(void)
{
	if (announced >= 0)
		__atomic_sub_fetch(&M.announced[announced], 1, __ATOMIC_ACQ_REL);
	announced = -1;
}

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int group_index(const struct ksync_memgroup *g)
{
	for (int t = 0; t < M.n; t++)
		if (g && __atomic_load_n(&M.t[t].group, __ATOMIC_ACQUIRE) == g)
			return t;
	return -1;
}

static void victim_unregister(int v, bool from_callback)
{
	int r;

	EXPECT_MISUSE(r = ksync_unregister_shrinker(&M.victim[v]));

	if (r == -EDEADLK && from_callback)
		return; /* a ring of callbacks unregistering each other: refused, documented */
	/* documented: -ENOENT once it is unregistered, -EBUSY while another thread unregisters it */
	CHECK(r == 0 || r == -ENOENT || r == -EBUSY);
	if (r == 0) {
		st(&M.vinfo[v].gone, 1);
		CHECK(__atomic_add_fetch(&M.victim_unregs[v], 1, __ATOMIC_ACQ_REL) == 1);
	}
}

static unsigned long count_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct info *in = s->private_data;
	int g = group_index(sc->group);

	CHECK(!ld(&in->gone));
	CHECK(ld(&in->registered));
	CHECK(!sc->group || ld(&in->memcg));
	ksched_point();
	CHECK(!ld(&in->gone)); /* still: its unregister waits for this call */
	if (ld(&M.final)) {
		st(&in->counted, 1);
		return 1 + (g < 0 ? __atomic_load_n(&in->objs, __ATOMIC_RELAXED) : 0);
	}
	unsigned long n = g >= 0 ? __atomic_load_n(&in->gobjs[g], __ATOMIC_RELAXED)
				 : __atomic_load_n(&in->objs, __ATOMIC_RELAXED);
	if (n)
		st(&M.deferred_moved, 1); /* the walk goes on to change deferred work */
	return n;
}

static unsigned long scan_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct info *in = s->private_data;

	CHECK(!ld(&in->gone));
	CHECK(sc->nr_to_scan > 0);
	if (ld(&M.final))
		return 0;
	if (ld(&in->doors) && sc->group) {
		/*
		 * Both doors to offline are refused from a callback (the
		 * registry's offline hook would wait for this walk's section):
		 * -EDEADLK, or -EBUSY first when the group is not online or has
		 * online children. Nothing changes.
		 */
		int r1, r2;

		EXPECT_MISUSE(r1 = ksync_shrinker_group_destroy(sc->group));
		EXPECT_MISUSE(r2 = ksync_memgroup_offline(sc->group));
		if (trace)
			fprintf(stderr, "  from a callback: destroy %d, offline %d\n", r1, r2);
		CHECK(r1 == -EDEADLK || r1 == -EBUSY);
		CHECK(r2 == -EDEADLK || r2 == -EBUSY);
	}
	switch (ld(&in->behaviour)) {
	case STOP:
		return KSYNC_SHRINK_STOP;
	case UNREG_VICTIM0:
	case UNREG_VICTIM1:
		if (in != &M.vinfo[0] && in != &M.vinfo[1])
			victim_unregister(ld(&in->behaviour) - UNREG_VICTIM0, true);
		break;
	}
	CHECK(!ld(&in->gone));
	return 0; /* the objects stay: the final walks look for them */
}

/*
 * A neutral shrinker (op 15): with its seeks far above its count, a walk's
 * new work (delta) is 0, and its scan frees nothing and reports nothing
 * scanned, so a walk puts back exactly the deferred work it took: the
 * registry's ledger total then moves only by what the scripts add. Its scan
 * runs between the walk's take and its put-back, and is a preemption point.
 */
static unsigned long count_neutral(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct info *in = s->private_data;

	(void)sc;
	CHECK(!ld(&in->gone));
	CHECK(ld(&in->registered));
	if (ld(&M.final))
		st(&in->counted, 1);
	return NEUTRAL_COUNT;
}

static unsigned long scan_neutral(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct info *in = s->private_data;

	CHECK(!ld(&in->gone));
	ksched_point(); /* the work this walk took is out of its counter now */
	CHECK(!ld(&in->gone));
	sc->nr_scanned = 0;
	return 0;
}

static void setup_info(struct ksync_shrinker *s, struct info *in, int memcg, int behaviour)
{
	memset(in, 0, sizeof(*in));
	in->memcg = memcg;
	in->behaviour = behaviour;
	s->count_objects = count_cb;
	s->scan_objects = scan_cb;
	s->private_data = in;
	s->seeks = 0;
}

/* An owner's call failed: only the documented error, only when the failure fired. */
static void expect_oom(void)
{
	fuzz_injected_failure(&M.oom);
}

/* Results predicted exactly only under the baton: nothing runs between two preemption points. */
static bool exact(void)
{
	return M.policy != KSCHED_FREE;
}

static struct ksync_srcu_struct *set_srcu(void)
{
	return ksync_memgroup_set_srcu(ksync_shrinker_registry_groups(M.reg));
}

/* Another thread than @tid, picked by @a. */
static int other(int tid, unsigned int a)
{
	return (tid + 1 + (int)(a % (unsigned int)(M.n - 1))) % M.n;
}

/* Thread @o's group (@child: its child), as published. */
static struct ksync_memgroup *published(int o, bool child)
{
	return __atomic_load_n(child ? &M.t[o].child : &M.t[o].group, __ATOMIC_ACQUIRE);
}

/* A memcg-aware id a thread may name: its neutral shrinker's, a filler's, or any below the maps' size. */
static int some_id(unsigned int sel)
{
	int max = ksync_shrinker_nr_max(M.reg);

	return (int)(sel * 7U % (unsigned int)max);
}

/* Sites of misuse on purpose that must be reported (once per site and process). */

/*
 * A group-taking call on @g, in whatever state it is: held by a reference
 * (@held: ONLINE, DYING or DEAD, never FREED), or found inside a read
 * section of the set's domain without one (any state, FREED included: the
 * group and every client's state, the registry's too, stay in memory until
 * the section ends). The documented result in each state.
 */
static void group_call(int tid, struct ksync_memgroup *g, unsigned int sel, int nid, bool held)
{
	struct thread_state *T = &M.t[tid];
	enum ksync_memgroup_state s = ksync_memgroup_state(g);
	/* Our own group stays as it is during the call; another's may go offline at its seams. */
	bool own_online = s == KSYNC_MEMGROUP_ONLINE && (g == T->group || g == T->child);
	bool gone = s == KSYNC_MEMGROUP_DEAD || s == KSYNC_MEMGROUP_FREED; /* final */
	int r;

	if (trace)
		fprintf(stderr, "t%d:   call %u on group %d (state %d%s)\n", tid, sel % 8, ksync_memgroup_id(g), (int)s,
			held ? ", held" : "");
	if (held)
		CHECK(s != KSYNC_MEMGROUP_FREED);
	switch (sel % 8) {
	case 0: { /* its charge handle: the nearest online group's */
		int idx = ksync_srcu_read_lock(set_srcu());
		struct ksync_memgroup *want = nearest_online_group(g);
		struct ksync_objcg *h = ksync_memgroup_get_objcg(g);
		struct ksync_memgroup *at = h ? ksync_objcg_group(h) : NULL;

		if (exact())
			CHECK(h ? at == want : !want);
		else
			CHECK(!h || on_group_chain(at, g));
		ksync_srcu_read_unlock(set_srcu(), idx);
		ksync_objcg_put(h);
		CHECK(ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_USER0, 1) == 0);
		break;
	}
	case 1: { /* a shrinker's bit: 0 in every state (a dead group's goes to a live ancestor, or nowhere) */
		int max = ksync_shrinker_nr_max(M.reg);

		CHECK(ksync_set_shrinker_bit(g, nid, some_id(sel >> 3)) == 0);
		CHECK(ksync_set_shrinker_bit(g, nid, max - 1) == 0);
		bool live = nearest_online_group(g) != NULL;
		EXPECT_MISUSE(r = ksync_set_shrinker_bit(g, nid, max)); /* refused by the live group that would take it */
		/*
		 * Unless the maps grew meanwhile: even under the baton, a call may
		 * switch threads (this thread's first read section of a domain
		 * takes SRCU's global mutex, a preemption point), and another
		 * thread's new ids make @max legal (seed regress-maps-grew-under-a-stale-max).
		 */
		bool grown = ksync_shrinker_nr_max(M.reg) > max;
		CHECK(r == -EINVAL || ((!exact() || !live || grown) && r == 0));
		break;
	}
	case 2: /* a group walk: returns at once once the group is going offline */
		(void)ksync_shrink_slab(M.reg, nid, g, (int)(sel >> 3) % 13);
		break;
	case 3: { /* deferred work of our neutral shrinker there: only while the group is alive */
		long x = 1 + (long)(sel >> 3) % 5;

		if (T->nst != 1)
			break;
		r = ksync_shrinker_add_deferred(&T->neutral, g, nid, x);
		CHECK(r == 0 || r == -ENOENT);
		if (exact() && own_online)
			CHECK(r == 0);
		if (gone)
			CHECK(r == -ENOENT);
		if (r == 0) {
			__atomic_add_fetch(&M.deferred_added, x, __ATOMIC_RELAXED);
			CHECK(ksync_set_shrinker_bit(g, nid, T->neutral.id) == 0);
		}
		long v = ksync_shrinker_deferred(&T->neutral, g, nid);
		CHECK(v >= 0 || v == -ENOENT);
		break;
	}
	case 4: { /* references: tryget succeeds exactly while a reference is left */
		bool got = ksync_memgroup_tryget(g);

		if (got) {
			CHECK(ksync_memgroup_state(g) != KSYNC_MEMGROUP_FREED);
			ksync_memgroup_get(g); /* legal: we hold one */
			ksync_memgroup_put(g);
			ksync_memgroup_put(g);
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
	case 5: /* not online (final once seen): no child under it, no second offline by either door */
		if (s == KSYNC_MEMGROUP_ONLINE) {
			struct ksync_memgroup *c;
			int idx = ksync_srcu_read_lock(set_srcu());

			ksync_memgroup_for_each_child(c, g)
				CHECK(ksync_memgroup_parent(c) == g);
			ksync_srcu_read_unlock(set_srcu(), idx);
			break;
		}
		EXPECT_MISUSE(CHECK(!ksync_shrinker_group_create(M.reg, g)));
		EXPECT_MISUSE(CHECK(ksync_shrinker_group_destroy(g) == -EBUSY));
		EXPECT_MISUSE(CHECK(ksync_memgroup_offline(g) == -EBUSY));
		CHECK(ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE);
		break;
	case 6: /* the debug view of it through our neutral shrinker: counted while alive, -ENOENT once dead */
		if (T->nst == 1) {
			long c = ksync_shrinker_debug_count(&T->neutral, g, nid);
			long sc = ksync_shrinker_debug_scan(&T->neutral, g, nid, 1);

			CHECK(c == (long)NEUTRAL_COUNT || c == -ENOENT);
			CHECK(sc == 0 || sc == -ENOENT);
			if (exact() && own_online)
				CHECK(c == (long)NEUTRAL_COUNT && sc == 0);
			if (gone)
				CHECK(c == -ENOENT && sc == -ENOENT);
		}
		CHECK(ksync_shrinker_group_id(g) == ksync_memgroup_id(g));
		break;
	default: /* its id, parent and set: plain reads */
		CHECK(ksync_memgroup_set_of(g) == ksync_shrinker_registry_groups(M.reg));
		CHECK(!ksync_memgroup_parent(g) || ksync_memgroup_set_of(ksync_memgroup_parent(g)) == ksync_memgroup_set_of(g));
		break;
	}
}

/* Register this thread's neutral shrinker (op 15). */
static void neutral_register(int tid)
{
	struct thread_state *T = &M.t[tid];
	int r;

	/* Zero since the input began (never memset: other threads' debug calls read it). */
	setup_info(&T->neutral, &T->ninfo, 1, COUNT);
	T->neutral.count_objects = count_neutral;
	T->neutral.scan_objects = scan_neutral;
	T->neutral.seeks = 1 << 30; /* delta = (count >> priority) * 4 / seeks = 0 */
	T->neutral.batch = 1;
	T->neutral.flags = KSYNC_SHRINKER_MEMCG_AWARE | KSYNC_SHRINKER_NUMA_AWARE;
	st(&T->ninfo.registered, 1);
	r = ksync_register_shrinker(M.reg, &T->neutral, "neutral-%d", tid);
	if (r == -ENOMEM) {
		expect_oom();
		st(&T->ninfo.registered, 0);
		return;
	}
	CHECK(r == 0);
	T->nst = 1;
}

static void op(int tid, unsigned int o, unsigned int a)
{
	struct thread_state *T = &M.t[tid];
	int k = (int)(a & 1), r;

	if (trace)
		fprintf(stderr, "t%d: op %u arg %u\n", tid, o % NOPS, a);
	switch (o % NOPS) {
	case 0: /* register a caller-owned shrinker */
		if (T->cst[k]) {
			EXPECT_MISUSE(CHECK(ksync_register_shrinker(M.reg, &T->classic[k], "again") == -EBUSY));
			break;
		}
		memset(&T->classic[k], 0, sizeof(T->classic[k]));
		setup_info(&T->classic[k], &T->cinfo[k], (a >> 1) & 1, (int)(a >> 2) % 4);
		T->classic[k].flags = (a & 2) ? KSYNC_SHRINKER_MEMCG_AWARE : 0;
		st(&T->cinfo[k].registered, 1); /* callbacks may run from inside the call */
		r = ksync_register_shrinker(M.reg, &T->classic[k], "t%d-%d", tid, k);
		if (r == -ENOMEM) {
			expect_oom();
			st(&T->cinfo[k].registered, 0);
			break;
		}
		CHECK(r == 0);
		T->cst[k] = 1;
		break;
	case 1: /* unregister it */
		if (!T->cst[k]) {
			memset(&T->classic[k], 0, sizeof(T->classic[k]));
			EXPECT_MISUSE(CHECK(ksync_unregister_shrinker(&T->classic[k]) == -ENOENT));
			break;
		}
		CHECK(ksync_unregister_shrinker(&T->classic[k]) == 0);
		st(&T->cinfo[k].gone, 1);
		T->cst[k] = 0;
		break;
	case 2: /* the 6.7 shape: alloc + register, or free */
		if (T->dyn) {
			CHECK(ksync_shrinker_free(T->dyn) == 0);
			st(&T->dinfo.gone, 1);
			T->dyn = NULL;
			break;
		}
		T->dyn = ksync_shrinker_alloc(M.reg, (a & 2) ? KSYNC_SHRINKER_MEMCG_AWARE : 0, "t%d", tid);
		if (!T->dyn) {
			expect_oom();
			break;
		}
		setup_info(T->dyn, &T->dinfo, (a >> 1) & 1, (int)(a >> 2) % 4);
		st(&T->dinfo.registered, 1);
		CHECK(ksync_shrinker_register(T->dyn) == 0);
		break;
	case 3: /* global walk */
		(void)ksync_shrink_slab(M.reg, (int)(a % 2), NULL, (int)(a >> 1) % 13);
		break;
	case 4: /* walk this thread's group, or (arg >= 128) another thread's */
		if (a < 128) {
			if (T->group)
				(void)ksync_shrink_slab(M.reg, 0, T->group, (int)(a >> 1) % 13);
		} else if (M.policy != KSCHED_FREE) {
			/*
			 * Group walks take no reference: the contract is that
			 * the group is there when the walk begins, and destroy
			 * waits for the walks running in it. So the owner
			 * (op 6) destroys only once no foreign walk is
			 * announced but not yet inside its read section (the
			 * first yield seam of the walk withdraws the
			 * announcement; so does its return). The owner stores
			 * NULL before it destroys, and the load and the
			 * announcement have no preemption point between them.
			 */
			int o = (tid + 1 + (int)(a >> 1) % (M.n - 1)) % M.n;
			struct ksync_memgroup *g = __atomic_load_n(&M.t[o].group, __ATOMIC_ACQUIRE);
			if (g) {
				__atomic_add_fetch(&M.announced[o], 1, __ATOMIC_ACQ_REL);
				announced = o;
				(void)ksync_shrink_slab(M.reg, 0, g, (int)(a >> 1) % 13);
				withdraw();
			}
		}
		break;
	case 5: { /* objects of a memcg-aware shrinker in this thread's group, then its bit */
		struct ksync_shrinker *s = k == 0 && T->dyn ? T->dyn : T->cst[k] ? &T->classic[k] : NULL;
		if (!T->group || !s || !(s->flags & KSYNC_SHRINKER_MEMCG_AWARE))
			break;
		struct info *in = s->private_data;
		__atomic_add_fetch(&in->gobjs[tid], 1 + a % 50, __ATOMIC_RELAXED);
		r = ksync_set_shrinker_bit(T->group, 0, s->id);
		CHECK(r == 0);
		st(&in->bit[tid], 1);
		break;
	}
	case 6: /* create or destroy this thread's group */
		if (T->group && T->child) { /* its child first */
			EXPECT_MISUSE(CHECK(ksync_shrinker_group_destroy(T->group) == -EBUSY));
			break;
		}
		if (T->group) {
			struct ksync_memgroup *g = T->group;
			__atomic_store_n(&T->group, NULL, __ATOMIC_RELEASE);
			while (ld(&M.announced[tid])) /* foreign walks not inside yet (op 4) */
				ksync_sched_hook(KSYNC_SCHED_BLOCKED, &M.announced[tid]);
			CHECK(ksync_shrinker_group_destroy(g) == 0);
			for (int j = 0; j < NCLASSIC; j++)
				st(&T->cinfo[j].bit[tid], 0);
			st(&T->dinfo.bit[tid], 0);
			if (a & 1) /* and the frees it queued, at once */
				(void)ksync_srcu_run_all_callbacks();
			break;
		}
		{
			struct ksync_memgroup *g = ksync_shrinker_group_create(M.reg, NULL);
			if (!g) {
				expect_oom();
				break;
			}
			for (int j = 0; j < NCLASSIC; j++)
				__atomic_store_n(&T->cinfo[j].gobjs[tid], 0UL, __ATOMIC_RELAXED);
			__atomic_store_n(&T->dinfo.gobjs[tid], 0UL, __ATOMIC_RELAXED);
			__atomic_store_n(&T->group, g, __ATOMIC_RELEASE);
		}
		break;
	case 7:
		CHECK(ksync_synchronize_shrinkers(M.reg) == 0);
		break;
	case 8: /* change a callback's behaviour */
		if (T->cst[k])
			st(&T->cinfo[k].behaviour, (int)(a >> 1) % 4);
		break;
	case 9: /* the SRCU helper's work, on this thread */
		(void)ksync_srcu_run_all_callbacks();
		break;
	case 10: /* unregister a victim directly */
		victim_unregister(k, false);
		break;
	case 11: /* create or destroy a child of this thread's group; either door to offline */
		if (T->child) {
			struct ksync_memgroup *g = T->child;

			__atomic_store_n(&T->child, NULL, __ATOMIC_RELEASE);
			CHECK(((a & 2) ? ksync_memgroup_offline(g) : ksync_shrinker_group_destroy(g)) == 0);
			if (a & 1)
				(void)ksync_srcu_run_all_callbacks();
		} else if (T->group) {
			struct ksync_memgroup *g = ksync_shrinker_group_create(M.reg, T->group);

			if (!g) {
				expect_oom();
				break;
			}
			__atomic_store_n(&T->child, g, __ATOMIC_RELEASE);
		}
		break;
	case 12: { /* hold a reference across our next operations, or drop the one held */
		int h = (int)(a % NH);
		struct ksync_memgroup *g = T->held[h];

		if (g) {
			T->held[h] = NULL;
			ksync_memgroup_put(g);
			break;
		}
		if (a & 0x10) { /* another thread's, found in a read section: tryget */
			int idx = ksync_srcu_read_lock(set_srcu());

			g = published(other(tid, a >> 2), a & 0x20);
			if (g && !ksync_memgroup_tryget(g))
				g = NULL;
			ksync_srcu_read_unlock(set_srcu(), idx);
		} else if ((g = (a & 0x20) && T->child ? T->child : T->group) != NULL) {
			ksync_memgroup_get(g); /* ours: we hold the creator's */
		}
		T->held[h] = g;
		break;
	}
	case 13: /* a group-taking call on a group we hold: ONLINE, DYING or DEAD */
		if (T->held[a % NH])
			group_call(tid, T->held[a % NH], a >> 1, (int)(a >> 7), true);
		break;
	case 14: { /* another thread's group found in a read section of the set's domain, no reference */
		int idx = ksync_srcu_read_lock(set_srcu());
		struct ksync_memgroup *g = published(other(tid, a), a & 0x80);

		if (trace)
			fprintf(stderr, "t%d:   found t%d's %s: group %d\n", tid, other(tid, a), (a & 0x80) ? "child" : "group",
				ksync_memgroup_id(g));
		if (g) {
			/* Its owner may destroy it, drop the last reference, run the callbacks. */
			ksched_point();
			group_call(tid, g, a >> 2, (int)(a >> 6) & 1, false);
			ksched_point();
			group_call(tid, g, (a >> 2) + 3, (int)(a >> 6) & 1, false);
		}
		ksync_srcu_read_unlock(set_srcu(), idx);
		break;
	}
	case 15: { /* the neutral shrinker: register; add deferred work; unregister for good */
		if (T->nst == 0) {
			neutral_register(tid);
			break;
		}
		if ((a & 0xc0) == 0xc0 && T->nst == 1) {
			st(&T->unregistering, 1);
			CHECK(ksync_unregister_shrinker(&T->neutral) == 0);
			st(&T->ninfo.gone, 1);
			T->nst = 2;
			break;
		}
		/* Ours or another thread's, in its group, its child or globally, found in a read section. */
		int o = (a & 0x20) ? other(tid, a >> 1) : tid, nid = (int)(a >> 6) & 1;
		struct thread_state *U = &M.t[o];
		long x = 1 + (long)(a % 5);
		int idx = ksync_srcu_read_lock(set_srcu());
		struct ksync_memgroup *g = (a & 0x10) ? published(o, a & 0x08) : NULL;
		int r = ksync_shrinker_add_deferred(&U->neutral, g, nid, x);

		if (trace)
			fprintf(stderr, "t%d:   add_deferred(t%d's neutral, group %d, node %d, %ld): %d\n", tid, o,
				ksync_memgroup_id(g), nid, x, r);

		/* -ENOENT: not registered (yet, or any more), or the group is going offline. */
		CHECK(r == 0 || r == -ENOENT);
		if (o == tid && exact() && T->nst == 1 && (!g || ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE))
			CHECK(r == 0);
		/*
		 * Every add that returned 0 is in the ledger, even one that
		 * another thread's unregister overlaps: it lands before the
		 * counter is retired, or returns -ENOENT (a real bug found here:
		 * it used to land after the retirement, seed
		 * bug-add-deferred-racing-unregister-lost; fixed in debug.c).
		 */
		if (r == 0)
			__atomic_add_fetch(&M.deferred_added, x, __ATOMIC_RELAXED);
		if (r == 0 && g && o == tid) /* its id: our own shrinker's, read by us only */
			CHECK(ksync_set_shrinker_bit(g, nid, T->neutral.id) == 0);
		ksync_srcu_read_unlock(set_srcu(), idx);
		break;
	}
	case 16: { /* fillers: memcg-aware shrinkers, never registered, up to ids past the maps' growth */
		int want = 8 * (1 + (int)(a % 10)), nid = (int)(a >> 7), max;

		if (T->nfill >= want) {
			while (T->nfill > want / 2)
				CHECK(ksync_shrinker_free(T->fill[--T->nfill]) == 0);
			break;
		}
		while (T->nfill < want) {
			struct ksync_shrinker *f = ksync_shrinker_alloc(M.reg, KSYNC_SHRINKER_MEMCG_AWARE, "fill-%d", tid);

			if (!f) {
				expect_oom();
				break;
			}
			T->fill[T->nfill++] = f;
			/* The maps hold every id given out: growth happened before the id did. */
			CHECK(f->id >= 0 && f->id < ksync_shrinker_nr_max(M.reg));
			if (T->group)
				CHECK(ksync_set_shrinker_bit(T->group, nid, f->id) == 0);
			if (a & 0x40)
				ksched_point();
		}
		/* Every id below the maps' size is settable in every live group, none past it. */
		max = ksync_shrinker_nr_max(M.reg);
		for (int c = 0; c < 2; c++) {
			struct ksync_memgroup *g = c ? T->child : T->group;

			if (!g)
				continue;
			CHECK(ksync_set_shrinker_bit(g, nid, max - 1) == 0);
			EXPECT_MISUSE(r = ksync_set_shrinker_bit(g, nid, max));
			/* As in group_call(): 0 is right if the maps grew meanwhile. */
			CHECK(r == -EINVAL || ((!exact() || ksync_shrinker_nr_max(M.reg) > max) && r == 0));
		}
		break;
	}
	case 17: { /* both doors to offline refused where they would wait for this thread */
		struct ksync_memgroup *g = T->child ? T->child : T->group;
		struct ksync_srcu_struct *rs = ksync_shrinker_registry_srcu(M.reg);

		if (a & 1) { /* from a callback: the walked group (see scan_cb) */
			int c = (int)(a >> 2) & 1;

			if (T->cst[c])
				st(&T->cinfo[c].doors, (int)(a >> 1) & 1);
			break;
		}
		if (!g)
			break;
		int idx = ksync_srcu_read_lock(rs);

		EXPECT_MISUSE(CHECK(ksync_shrinker_group_destroy(g) == -EDEADLK));
		EXPECT_MISUSE(CHECK(ksync_memgroup_offline(g) == -EDEADLK));
		ksync_srcu_read_unlock(rs, idx);
		CHECK(ksync_memgroup_state(g) == KSYNC_MEMGROUP_ONLINE);
		break;
	}
	}
}

/*
 * After each operation of a thread (no preemption point: the schedule stays
 * as it was): its groups are online, the groups it holds are not freed, nor
 * their parents (a group holds a reference on its parent until its
 * release), and its fillers' ids are below the maps' size.
 */
static void after_op(int tid)
{
	struct thread_state *T = &M.t[tid];
	int max = ksync_shrinker_nr_max(M.reg);

	if (T->group)
		CHECK(ksync_memgroup_state(T->group) == KSYNC_MEMGROUP_ONLINE);
	if (T->child)
		CHECK(ksync_memgroup_state(T->child) == KSYNC_MEMGROUP_ONLINE);
	for (int h = 0; h < NH; h++) {
		struct ksync_memgroup *g = T->held[h], *p;

		if (!g)
			continue;
		CHECK(ksync_memgroup_state(g) != KSYNC_MEMGROUP_FREED);
		p = ksync_memgroup_parent(g);
		CHECK(!p || ksync_memgroup_state(p) != KSYNC_MEMGROUP_FREED);
	}
	for (int i = 0; i < T->nfill; i++)
		CHECK(T->fill[i]->id < max);
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
	for (int h = 0; h < NH; h++)
		if (T->held[h]) {
			struct ksync_memgroup *g = T->held[h];

			T->held[h] = NULL;
			ksync_memgroup_put(g);
		}
}

static void yield_seam(int point, void *arg)
{
	(void)arg;
	withdraw(); /* a walk at its first seam is inside its read section */
	ksched_seam("shrinker", point);
}

/* After the threads: every registered shrinker is reachable, every bit with objects found. */
static void final_walks(void)
{
	/*
	 * The ledger of deferred work: conserved by every group destroy,
	 * unregister and neutral walk, so, once no walk holds work it took,
	 * exactly what the scripts added, unless a shrinker that is not
	 * neutral was walked with objects (its walks add and scan work).
	 */
	struct ksync_shrinker_deferred_total tot;

	ksync_shrinker_deferred_total(M.reg, &tot);
	if (trace)
		fprintf(stderr, "ledger: groups %ld shrinkers %ld orphaned %ld retired %ld; added %ld%s\n",
			tot.in_groups, tot.in_shrinkers, tot.orphaned, tot.retired, M.deferred_added,
			M.deferred_moved ? " (walks moved work)" : "");
	if (!M.deferred_moved) {
		long sum = tot.in_groups + tot.in_shrinkers + tot.orphaned + tot.retired;

		CHECK(sum == M.deferred_added);
	}

	M.final = 1;
	for (int t = 0; t < M.n; t++) {
		for (int k = 0; k < NCLASSIC; k++)
			M.t[t].cinfo[k].counted = 0;
		M.t[t].dinfo.counted = 0;
		M.t[t].ninfo.counted = 0;
	}
	(void)ksync_shrink_slab(M.reg, 0, NULL, 0);
	for (int t = 0; t < M.n; t++) {
		for (int k = 0; k < NCLASSIC; k++)
			CHECK(!M.t[t].cst[k] || M.t[t].cinfo[k].counted);
		CHECK(!M.t[t].dyn || M.t[t].dinfo.counted);
		CHECK(M.t[t].nst != 1 || M.t[t].ninfo.counted);
	}
	for (int v = 0; v < NVICTIMS; v++)
		CHECK(M.vinfo[v].gone || M.vinfo[v].counted);

	for (int g = 0; g < M.n; g++) {
		if (!M.t[g].group)
			continue;
		for (int t = 0; t < M.n; t++) {
			for (int k = 0; k < NCLASSIC; k++)
				M.t[t].cinfo[k].counted = 0;
			M.t[t].dinfo.counted = 0;
		}
		(void)ksync_shrink_slab(M.reg, 0, M.t[g].group, 0);
		struct thread_state *T = &M.t[g];
		for (int k = 0; k < NCLASSIC; k++)
			if (T->cst[k] && T->cinfo[k].bit[g] && T->cinfo[k].gobjs[g])
				CHECK(T->cinfo[k].counted);
		if (T->dyn && T->dinfo.bit[g] && T->dinfo.gobjs[g])
			CHECK(T->dinfo.counted);
	}

	/* Unique ids among the memcg-aware shrinkers registered or prepared (the fillers). */
	int ids[NT * (NCLASSIC + 2 + NFILL)], nids = 0;
	for (int t = 0; t < M.n; t++) {
		for (int k = 0; k < NCLASSIC; k++)
			if (M.t[t].cst[k] && (M.t[t].classic[k].flags & KSYNC_SHRINKER_MEMCG_AWARE))
				ids[nids++] = M.t[t].classic[k].id;
		if (M.t[t].dyn && (M.t[t].dyn->flags & KSYNC_SHRINKER_MEMCG_AWARE))
			ids[nids++] = M.t[t].dyn->id;
		if (M.t[t].nst == 1)
			ids[nids++] = M.t[t].neutral.id;
		for (int i = 0; i < M.t[t].nfill; i++)
			ids[nids++] = M.t[t].fill[i]->id;
	}
	for (int i = 0; i < nids; i++)
		for (int j = i + 1; j < nids; j++)
			CHECK(ids[i] != ids[j]);

	/* And the lowest free id goes to the next one, once the retired records are freed. */
	(void)ksync_srcu_run_all_callbacks();
	struct ksync_shrinker *probe = ksync_shrinker_alloc(M.reg, KSYNC_SHRINKER_MEMCG_AWARE, "probe");
	CHECK(probe);
	int lowest = 0;
	for (bool used = true; used; lowest += used) {
		used = false;
		for (int i = 0; i < nids; i++)
			used |= ids[i] == lowest;
	}
	CHECK(probe->id == lowest);
	CHECK(ksync_shrinker_free(probe) == 0);
	M.final = 0;
}

static void teardown(void)
{
	for (int t = 0; t < M.n; t++) {
		struct thread_state *T = &M.t[t];
		for (int k = 0; k < NCLASSIC; k++)
			if (T->cst[k])
				CHECK(ksync_unregister_shrinker(&T->classic[k]) == 0);
		if (T->dyn)
			CHECK(ksync_shrinker_free(T->dyn) == 0);
		if (T->nst == 1)
			CHECK(ksync_unregister_shrinker(&T->neutral) == 0);
		while (T->nfill)
			CHECK(ksync_shrinker_free(T->fill[--T->nfill]) == 0);
		if (T->child)
			CHECK(ksync_shrinker_group_destroy(T->child) == 0);
		if (T->group)
			CHECK(ksync_shrinker_group_destroy(T->group) == 0);
	}
	for (int v = 0; v < NVICTIMS; v++)
		if (!M.vinfo[v].gone)
			CHECK(ksync_unregister_shrinker(&M.victim[v]) == 0);
	CHECK(ksync_shrinker_registry_destroy(M.reg) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + (size > 512 ? 512 : size) };
	struct ksched_setup set = ksched_setup_input(&in);

	trace = set.trace;
	ksync_warn_hook = fuzz_report_hook; /* misuse on purpose is marked: any other report fails */
	memset(&M, 0, sizeof(M));
	M.policy = set.policy;
	M.n = set.nthreads;
	M.reg = ksync_shrinker_registry_create(2);
	CHECK(M.reg);
	for (int v = 0; v < NVICTIMS; v++) {
		setup_info(&M.victim[v], &M.vinfo[v], 0, COUNT);
		M.vinfo[v].registered = 1;
		CHECK(ksync_register_shrinker(M.reg, &M.victim[v], "victim-%d", v) == 0);
	}
	for (int t = 0; t < M.n; t++)
		M.t[t].nops = ksched_read_script(&in, M.t[t].op, M.t[t].arg, MAXOPS);
	ksync_shrinker_set_yield_hook(set.policy == KSCHED_FREE ? NULL : yield_seam, NULL);
	ksync_fail_nth_alloc(set.fail);
	ksched_run(M.n, body, NULL, in.p, (size_t)(in.end - in.p), set.policy, set.depth);
	ksync_fail_nth_alloc(0);
	ksync_shrinker_set_yield_hook(NULL, NULL);

	final_walks();
	teardown();
	return 0;
}
