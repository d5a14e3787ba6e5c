/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/memgroup/objcg.c - charge handles (the kernel's obj_cgroup).
 *
 * Theory of operation
 * -------------------
 * Every online group has one current handle; the group holds a reference on
 * it. Objects are charged to handles, and take references on them, never on
 * groups. A handle points at a group (->group, an RCU pointer of the set's
 * SRCU domain) and sits on that group's list of handles. Both change only
 * under set->objcg_lock.
 *
 * Going offline (this client's hook runs at KSYNC_MEMGROUP_ORDER_OBJCG, after
 * the LRU lists moved and before the statistics are flushed): every handle
 * on the dying group's list is pointed at the parent (O1: rcu_assign_pointer,
 * pairs with the srcu_dereference in ksync_objcg_group()) and moved to the
 * parent's list; then the group drops its reference on its own handle. From
 * then on no handle points at the dying group, and objects no longer pin it:
 * it is freed once its last direct reference goes.
 *
 * A handle whose last reference goes leaves its group's list under the lock
 * and is freed by call_srcu: a reader that found it through a pointer inside
 * a read section may still look at it. So is the group's client state
 * (struct objcg_state) on release: ksync_memgroup_get_objcg() reads it
 * inside a read section of the set's domain, on a group the caller may have
 * found inside its own section and that may be released meanwhile (a plain
 * free() there handed out another group's handle, once the memory was
 * reused). The slot keeps pointing at it, with ->current NULL.
 *
 * ksync_memgroup_get_objcg() takes its reference with inc_not_zero: the
 * group's own reference may be dropped by a concurrent offline; a failed
 * try means the group is no longer online, and the walk moves up.
 * ksync_memgroup_objcg_peek() reads the same ->current with no reference:
 * its caller only compares the pointer with handles it holds references on.
 *
 * objcg_generation counts the offlines that moved handles (process-wide: a
 * caching caller may hold handles of several sets). The offline increments
 * it after its moves (O2, release); ksync_objcg_generation() reads it with
 * acquire, so that a reader that sees the new value sees the moved
 * pointers, and may skip re-checking its cached handles while it is
 * unchanged.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

static unsigned long objcg_generation; /* O2; see the theory */

struct ksync_objcg {
	ksync_atomic_long_t refcount;
	struct ksync_memgroup *KSYNC_RCU group; /* NULL: the set's root; O1 */
	struct ksync_memgroup_set *set;
	struct ksync_list_head link; /* on the group's handles; under set->objcg_lock */
	struct ksync_rcu_head rcu;
};

/* The client state of a group. */
struct objcg_state {
	struct ksync_objcg *current;   /* the group's own handle (its reference) */
	struct ksync_list_head handles; /* handles pointing here; under set->objcg_lock */
	struct ksync_rcu_head rcu;
};

static void free_rcu_state(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct objcg_state, rcu));
}

static int objcg_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_memgroup_set *set = priv;
	struct objcg_state *st = KSYNC__ALLOC(calloc(1, sizeof(*st)));
	struct ksync_objcg *h = KSYNC__ALLOC(calloc(1, sizeof(*h)));

	if (!st || !h) {
		free(st);
		free(h);
		return -ENOMEM;
	}
	ksync_atomic_long_set(&h->refcount, 1); /* the group's */
	KSYNC_RCU_INIT_POINTER(h->group, g);
	h->set = set;
	ksync_init_list_head(&st->handles);
	ksync__mutex_lock(&set->objcg_lock);
	ksync_list_add(&h->link, &st->handles);
	pthread_mutex_unlock(&set->objcg_lock);
	st->current = h;
	ksync_memgroup_set_slot(g, slot, st);
	return 0;
}

static void objcg_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_memgroup_set *set = priv;
	struct objcg_state *st = ksync_memgroup_slot(g, slot);
	struct ksync_memgroup *parent = ksync_memgroup_parent(g);
	struct objcg_state *pst = parent ? ksync_memgroup_slot(parent, slot) : NULL;
	struct ksync_objcg *h, *n;

	ksync__mutex_lock(&set->objcg_lock);
	ksync_list_for_each_entry_safe(h, n, &st->handles, link) {
		/* O1: readers that load the pointer see the parent, online (it has an online child). */
		ksync_rcu_assign_pointer(h->group, parent);
		ksync_list_del_init(&h->link);
		if (pst)
			ksync_list_add(&h->link, &pst->handles);
	}
	pthread_mutex_unlock(&set->objcg_lock);
	/* O2: pairs with the acquire load in ksync_objcg_generation(): the moves above come first. */
	__atomic_fetch_add(&objcg_generation, 1, __ATOMIC_RELEASE);
	h = st->current;
	/* get_objcg() reads it without the lock; it then fails its inc_not_zero, or wins a reference. */
	KSYNC_WRITE_ONCE(st->current, NULL);
	ksync_objcg_put(h); /* the group's reference: objects hold the rest */
}

static void objcg_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync_memgroup_set *set = priv;
	struct objcg_state *st = ksync_memgroup_slot(g, slot);

	if (!st)
		return;
	if (st->current) { /* a group whose creation failed in a later client */
		struct ksync_objcg *h = st->current;

		KSYNC_WRITE_ONCE(st->current, NULL);
		ksync_objcg_put(h);
	}
	if (KSYNC_PLANT(OBJCG_STATE_PLAIN_FREE)) { /* the fuzzers' plant (docs/fuzzing.md) */
		ksync_memgroup_set_slot(g, slot, NULL);
		free(st);
		return;
	}
	/* Readers inside a section of the set's domain may hold @st (see the theory). */
	ksync_call_srcu(&set->srcu, &st->rcu, free_rcu_state);
}

const struct ksync_memgroup_client ksync__objcg_client = {
	.name = "objcg",
	.online = objcg_online,
	.offline = objcg_offline,
	.release = objcg_release,
	.order = KSYNC_MEMGROUP_ORDER_OBJCG,
};

static void free_rcu_objcg(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct ksync_objcg, rcu));
}

void ksync_objcg_get(struct ksync_objcg *objcg)
{
	ksync_atomic_long_inc(&objcg->refcount);
}

void ksync_objcg_get_many(struct ksync_objcg *objcg, long n)
{
	if (n > 0)
		ksync_atomic_long_add(n, &objcg->refcount);
}

void ksync_objcg_put(struct ksync_objcg *objcg)
{
	ksync_objcg_put_many(objcg, 1);
}

void ksync_objcg_put_many(struct ksync_objcg *objcg, long n)
{
	struct ksync_memgroup_set *set;

	if (!objcg || n <= 0 || !ksync_atomic_long_sub_and_test(n, &objcg->refcount))
		return;
	set = objcg->set;
	ksync__mutex_lock(&set->objcg_lock);
	if (!ksync_list_empty(&objcg->link))
		ksync_list_del_init(&objcg->link);
	pthread_mutex_unlock(&set->objcg_lock);
	ksync_call_srcu(&set->srcu, &objcg->rcu, free_rcu_objcg);
}

struct ksync_objcg *ksync_memgroup_get_objcg(struct ksync_memgroup *g)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_of(g);
	struct ksync_objcg *h = NULL;
	int idx = ksync_srcu_read_lock(&set->srcu);

	for (; g; g = ksync_memgroup_parent(g)) {
		struct objcg_state *st;

		if (ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
			continue;
		st = ksync_memgroup_slot(g, set->objcg_slot);
		memgroup_yield_point(KSYNC_MEMGROUP_YP_OBJCG_STATE_FOUND);
		h = st ? KSYNC_READ_ONCE(st->current) : NULL;
		/* The group's reference may be going: then the group is no longer online. */
		if (h && ksync_atomic_long_inc_not_zero(&h->refcount))
			break;
		h = NULL;
	}
	ksync_srcu_read_unlock(&set->srcu, idx);
	return h;
}

struct ksync_objcg *ksync_memgroup_objcg_peek(struct ksync_memgroup *g)
{
	struct objcg_state *st;

	/* ksync_memgroup_state() and _slot() inlined (a miss of a stock calls this): M1's acquire. */
	if (ksync_smp_load_acquire(&g->state) != KSYNC_MEMGROUP_ONLINE)
		return NULL;
	/* @g is kept in memory by the caller, and so is its client state (freed after release). */
	st = KSYNC_READ_ONCE(g->head.e[g->set->objcg_slot].state);
	return st ? KSYNC_READ_ONCE(st->current) : NULL;
}

unsigned long ksync_objcg_generation(void)
{
	return __atomic_load_n(&objcg_generation, __ATOMIC_ACQUIRE); /* O2: pairs with the offline's increment */
}

struct ksync_memgroup *ksync_objcg_group(struct ksync_objcg *objcg)
{
	return ksync_srcu_dereference(objcg->group, &objcg->set->srcu); /* O1 */
}

struct ksync_memgroup *ksync_objcg_get_group(struct ksync_objcg *objcg)
{
	struct ksync_memgroup *g;

	for (;;) {
		int idx = ksync_srcu_read_lock(&objcg->set->srcu);

		g = ksync_objcg_group(objcg);
		/* A failed try: the group is being released; its handles moved at offline. */
		bool ok = !g || ksync_memgroup_tryget(g);
		ksync_srcu_read_unlock(&objcg->set->srcu, idx);
		if (ok)
			return g;
	}
}

int ksync__objcg_charge(KSYNC_SITE_ARGS, struct ksync_objcg *objcg, int nid, long nr_objects, long bytes)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	struct ksync_memgroup_set *set;
	struct ksync_memgroup *g;
	int idx;

	if (MISUSE(at, !objcg, "ksync_objcg_charge: NULL handle"))
		return -EINVAL;
	set = objcg->set;
	if (KSYNC_WARN_AT(at.file, at.line, nid < 0 || nid >= set->nr_nodes,
			  "ksync_objcg_charge: nid %d out of range (%d nodes)", nid, set->nr_nodes))
		return -EINVAL;
	idx = ksync_srcu_read_lock(&set->srcu);
	g = ksync_objcg_group(objcg);
	if (g) {
		ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_OBJECTS, nr_objects);
		ksync_memgroup_stat_add(g, nid, KSYNC_MEMGROUP_STAT_BYTES, bytes);
	} else {
		ksync__memgroup_stat_root_add(set, nid, KSYNC_MEMGROUP_STAT_OBJECTS, nr_objects);
		ksync__memgroup_stat_root_add(set, nid, KSYNC_MEMGROUP_STAT_BYTES, bytes);
	}
	ksync_srcu_read_unlock(&set->srcu, idx);
	return 0;
}
