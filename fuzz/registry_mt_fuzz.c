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
 */
#include <ksync/fuzzing.h>
#include <ksync/memgroup.h>
#include <ksync/shrinker.h>
#include <ksync/shrinker_testing.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sched.h"

#define NT KSCHED_MAX_THREADS
#define NCLASSIC 2 /* caller-owned shrinkers per thread */
#define NVICTIMS 2
#define MAXOPS 12

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
};

struct thread_state {
	struct ksync_shrinker classic[NCLASSIC];
	struct info cinfo[NCLASSIC];
	int cst[NCLASSIC]; /* 0 none, 1 registered */
	struct ksync_shrinker *dyn;
	struct info dinfo;
	struct ksync_memgroup *group;
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
	int r = ksync_unregister_shrinker(&M.victim[v]);

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
	if (g >= 0)
		return __atomic_load_n(&in->gobjs[g], __ATOMIC_RELAXED);
	return __atomic_load_n(&in->objs, __ATOMIC_RELAXED);
}

static unsigned long scan_cb(struct ksync_shrinker *s, struct ksync_shrink_control *sc)
{
	struct info *in = s->private_data;

	CHECK(!ld(&in->gone));
	CHECK(sc->nr_to_scan > 0);
	if (ld(&M.final))
		return 0;
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

static void op(int tid, unsigned int o, unsigned int a)
{
	struct thread_state *T = &M.t[tid];
	int k = (int)(a & 1), r;

	if (trace)
		fprintf(stderr, "t%d: op %u arg %u\n", tid, o, a);
	switch (o % 11) {
	case 0: /* register a caller-owned shrinker */
		if (T->cst[k]) {
			CHECK(ksync_register_shrinker(M.reg, &T->classic[k], "again") == -EBUSY);
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
			CHECK(ksync_unregister_shrinker(&T->classic[k]) == -ENOENT);
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
	}
}

static void body(int tid, void *arg)
{
	(void)arg;
	ksched_run_ops(tid, M.t[tid].nops, M.t[tid].op, M.t[tid].arg, op);
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
	M.final = 1;
	for (int t = 0; t < M.n; t++) {
		for (int k = 0; k < NCLASSIC; k++)
			M.t[t].cinfo[k].counted = 0;
		M.t[t].dinfo.counted = 0;
	}
	(void)ksync_shrink_slab(M.reg, 0, NULL, 0);
	for (int t = 0; t < M.n; t++) {
		for (int k = 0; k < NCLASSIC; k++)
			CHECK(!M.t[t].cst[k] || M.t[t].cinfo[k].counted);
		CHECK(!M.t[t].dyn || M.t[t].dinfo.counted);
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

	/* Unique ids among the registered memcg-aware shrinkers. */
	int ids[NT * (NCLASSIC + 1)], nids = 0;
	for (int t = 0; t < M.n; t++) {
		for (int k = 0; k < NCLASSIC; k++)
			if (M.t[t].cst[k] && (M.t[t].classic[k].flags & KSYNC_SHRINKER_MEMCG_AWARE))
				ids[nids++] = M.t[t].classic[k].id;
		if (M.t[t].dyn && (M.t[t].dyn->flags & KSYNC_SHRINKER_MEMCG_AWARE))
			ids[nids++] = M.t[t].dyn->id;
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
