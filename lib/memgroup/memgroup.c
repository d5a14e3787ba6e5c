/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/memgroup/memgroup.c - memory groups: hierarchy, lifecycle, clients.
 *
 * Theory of operation
 * -------------------
 * A set holds its groups on a list and its clients in a small array, both
 * under set->mutex. Every transition of a group's state happens under that
 * mutex except the running of the offline and release hooks, which happens
 * outside it (a hook may wait for readers, and readers may create groups).
 *
 *   create   under the mutex: online hooks in the clients' order (a failure
 *            runs the release hooks of the clients already called, in
 *            reverse, and frees the group after a grace period); the group
 *            takes a reference on its parent and counts as one of its online
 *            children; state ONLINE (release, M1).
 *   offline  under the mutex: ONLINE -> DYING, refused while online children
 *            remain or when a client's may_offline hook says no (the
 *            registry, from inside a shrinker callback: its offline hook
 *            would wait for a grace period of a domain the caller is inside);
 *            the clients to call are those whose online hook ran on this
 *            group (g->onlined: a client registered later never saw it).
 *            Hooks run unlocked, in the clients' order; then, under the
 *            mutex, DEAD and the parent's online-children count drops; then
 *            the creator's reference is dropped.
 *   release  the last put: under the mutex the group leaves the set's list;
 *            release hooks run unlocked in reverse order; the group is
 *            freed after a grace period of set->srcu (readers that found it
 *            inside a read section may still look at it) and its reference
 *            on the parent is dropped, which may release the parent. The
 *            clients free their state on the same domain (memgroup.h), so
 *            everything a caller can reach from a group it found inside a
 *            section of set->srcu outlives that section.
 *
 * References: one 64-bit count in three fields, so that every put can be
 * told apart: the callers' references (get, tryget) count 1 each in the
 * low 32 bits; each child not yet released holds CHILD_REF (bit 32 up) on
 * its parent, dropped by the child's release; the creator's reference is
 * CREATOR_REF (bit 62), dropped only by offline. A put with none of the
 * callers' references left is one without a get, whatever the other fields
 * hold: refused and reported, as the kernel cannot release an online memcg
 * (its base reference goes only with the kill). (With one undivided count,
 * a stray put on a parent took a child's reference instead, and the parent
 * was freed under the child: found by review.) A count of 0 means released:
 * put and get refuse it (a get there would resurrect a group whose memory is
 * queued for freeing); tryget fails on it.
 *
 * Barrier pairs:
 *   M1  the state is stored with release after the slots are filled;
 *       ksync_memgroup_state() loads it with acquire.
 *   M2  references: put is a fully ordered cmpxchg (offline's subtraction of
 *       CREATOR_REF a fully ordered sub_return); the thread that takes the
 *       count to zero sees every access made under the references.
 *   M3  children: a group joins its parent's RCU list of children (release,
 *       list_add_tail_rcu) when it is created and leaves it (list_del_rcu)
 *       when it is released, before its memory goes through a grace period
 *       of set->srcu; ksync_memgroup_next_child() walks the list inside a
 *       read section (dependency-ordered loads).
 */
#define _GNU_SOURCE
#include <ksync/impl/sched.h> /* the blocking wrappers; <ksync/fuzzing.h> */
#include <ksync/memgroup.h>

#include <ksync/atomic.h>
#include <ksync/list.h>
#include <ksync/rculist.h>
#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * The fields of the count (see References above). The plant
 * MEMGROUP_PUT_UNCHECKED (docs/fuzzing.md) makes every reference count 1
 * and put a plain decrement: an extra put releases an online group.
 */
#define CALLER_REFS 0xffffffffL /* the callers' references */
#define CHILD_REF (KSYNC_PLANT(MEMGROUP_PUT_UNCHECKED) ? 1L : (1L << 32))
#define CREATOR_REF (KSYNC_PLANT(MEMGROUP_PUT_UNCHECKED) ? 1L : (1L << 62))

static void group_release(struct ksync_memgroup *g);

/* A child's release drops the reference it held on its parent (M2). */
static void parent_put_child(struct ksync_memgroup *parent)
{
	if (ksync_atomic_long_sub_return(CHILD_REF, &parent->refcount) == 0)
		group_release(parent);
}

/*
 * The hooks a group's transition calls, copied under the mutex and sorted by
 * the clients' order (then slot): @nr entries.
 */
struct hook_batch {
	int nr;
	int slot[KSYNC_MEMGROUP_MAX_CLIENTS];
	const struct ksync_memgroup_client *client[KSYNC_MEMGROUP_MAX_CLIENTS];
	void *priv[KSYNC_MEMGROUP_MAX_CLIENTS];
};

/* The clients of @set in hook order; those of @mask only (a bit per slot). */
static void batch_take_locked(const struct ksync_memgroup_set *set, unsigned int mask,
			      struct hook_batch *b)
{
	b->nr = 0;
	for (int i = 0; i < KSYNC_MEMGROUP_MAX_CLIENTS; i++) {
		const struct ksync_memgroup_client *c = set->clients[i];
		int k;

		if (!c || !(mask & (1U << i)))
			continue;
		/* Insertion sort by order; equal orders keep slot order. */
		for (k = b->nr; k > 0 && b->client[k - 1]->order > c->order; k--) {
			b->slot[k] = b->slot[k - 1];
			b->client[k] = b->client[k - 1];
			b->priv[k] = b->priv[k - 1];
		}
		b->slot[k] = i;
		b->client[k] = c;
		b->priv[k] = set->priv[i];
		b->nr++;
	}
}

static void set_state(struct ksync_memgroup *g, enum ksync_memgroup_state st)
{
	ksync_smp_store_release(&g->state, (int)st); /* M1 */
}

struct ksync_srcu_struct *ksync_memgroup_set_srcu(struct ksync_memgroup_set *set)
{
	return &set->srcu;
}

int ksync_memgroup_client_find(const struct ksync_memgroup_set *set,
			       const struct ksync_memgroup_client *client)
{
	for (int i = 0; i < KSYNC_MEMGROUP_MAX_CLIENTS; i++)
		if (KSYNC_READ_ONCE(set->clients[i]) == client)
			return i;
	return -ENOENT;
}

int ksync__memgroup_client_register(KSYNC_SITE_ARGS, struct ksync_memgroup_set *set,
				   const struct ksync_memgroup_client *client, void *priv)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_memgroup *g;
	int slot = -1, ret = 0;

	if (MISUSE(at, !set || !client || !client->online,
		       "ksync_memgroup_client_register: a client needs an online hook"))
		return -EINVAL;
	ksync__mutex_lock(&set->mutex);
	for (int i = 0; i < KSYNC_MEMGROUP_MAX_CLIENTS; i++) {
		/* The same hooks with the same state twice: every group would run them twice. */
		if (MISUSE(at, set->clients[i] == client && set->priv[i] == priv,
			   "ksync_memgroup_client_register: client already registered with this priv")) {
			pthread_mutex_unlock(&set->mutex);
			return -EBUSY;
		}
		if (!set->clients[i] && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		pthread_mutex_unlock(&set->mutex);
		return -ENOSPC;
	}
	set->priv[slot] = priv;
	KSYNC_WRITE_ONCE(set->clients[slot], client);
	/* Bring the groups that are online now online for this client too. */
	ksync_list_for_each_entry(g, &set->groups, link) {
		if (KSYNC_READ_ONCE(g->state) != KSYNC_MEMGROUP_ONLINE)
			continue;
		ret = client->online(g, slot, priv);
		if (ret)
			break;
		g->onlined |= 1U << slot;
		KSYNC_WRITE_ONCE(g->head.e[slot].client, client);
	}
	if (ret) {
		ksync_list_for_each_entry(g, &set->groups, link) {
			if (!(g->onlined & (1U << slot)))
				continue;
			g->onlined &= ~(1U << slot);
			KSYNC_WRITE_ONCE(g->head.e[slot].client, NULL);
			if (client->release)
				client->release(g, slot, priv);
			g->head.e[slot].state = NULL;
		}
		KSYNC_WRITE_ONCE(set->clients[slot], NULL);
		set->priv[slot] = NULL;
	}
	pthread_mutex_unlock(&set->mutex);
	return ret ? ret : slot;
}

int ksync__memgroup_client_unregister(KSYNC_SITE_ARGS, struct ksync_memgroup_set *set, int slot)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	int ret = 0;

	if (MISUSE(at, !set || slot < 0 || slot >= KSYNC_MEMGROUP_MAX_CLIENTS,
		       "ksync_memgroup_client_unregister: bad slot"))
		return -EINVAL;
	ksync__mutex_lock(&set->mutex);
	if (MISUSE(at, !set->clients[slot], "ksync_memgroup_client_unregister: slot not registered"))
		ret = -ENOENT;
	else if (MISUSE(at, set->nr_groups, "ksync_memgroup_client_unregister: groups remain"))
		ret = -EBUSY;
	else {
		KSYNC_WRITE_ONCE(set->clients[slot], NULL);
		set->priv[slot] = NULL;
	}
	pthread_mutex_unlock(&set->mutex);
	return ret;
}

static void free_rcu_group(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct ksync_memgroup, rcu));
}

/* The last reference is gone. */
static void group_release(struct ksync_memgroup *g)
{
	struct ksync_memgroup_set *set = g->set;
	struct ksync_memgroup *parent = g->parent;
	struct hook_batch b;

	if (KSYNC_PLANT(PARENT_PUT_EARLY) && parent) { /* the fuzzers' plant (docs/fuzzing.md) */
		parent_put_child(parent); /* dropped before the hooks that still read the parent */
		parent = NULL;
	}
	ksync__mutex_lock(&set->mutex);
	batch_take_locked(set, g->onlined, &b);
	set_state(g, KSYNC_MEMGROUP_FREED);
	pthread_mutex_unlock(&set->mutex);
	for (int k = b.nr - 1; k >= 0; k--)
		if (b.client[k]->release)
			b.client[k]->release(g, b.slot[k], b.priv[k]);
	ksync__mutex_lock(&set->mutex);
	ksync_list_del(&g->link);
	if (g->parent)
		ksync_list_del_rcu(&g->sibling); /* readers inside a section may still step past it (M3) */
	set->nr_groups--;
	pthread_mutex_unlock(&set->mutex);
	ksync_call_srcu(&set->srcu, &g->rcu, free_rcu_group);
	if (parent)
		parent_put_child(parent);
}

struct ksync_memgroup *ksync__memgroup_create(KSYNC_SITE_ARGS, struct ksync_memgroup_set *set,
					     struct ksync_memgroup *parent)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_memgroup *g;
	struct hook_batch b;
	int ret = 0, i;

	if (parent)
		set = parent->set;
	if (MISUSE(at, !set, "ksync_memgroup_create: no set"))
		return NULL;
	g = KSYNC__ALLOC(calloc(1, sizeof(*g)));
	if (!g)
		return NULL;
	g->set = set;
	g->parent = parent;
	ksync_init_list_head(&g->children);
	ksync_atomic_long_set(&g->refcount, CREATOR_REF);
	ksync__mutex_lock(&set->mutex);
	if (MISUSE(at, parent && KSYNC_READ_ONCE(parent->state) != KSYNC_MEMGROUP_ONLINE,
		       "ksync_memgroup_create: the parent is not online")) {
		pthread_mutex_unlock(&set->mutex);
		free(g);
		return NULL;
	}
	g->id = set->next_id++;
	batch_take_locked(set, ~0U, &b);
	for (i = 0; i < b.nr; i++) {
		ret = b.client[i]->online(g, b.slot[i], b.priv[i]);
		if (ret)
			break;
		g->onlined |= 1U << b.slot[i];
		KSYNC_WRITE_ONCE(g->head.e[b.slot[i]].client, b.client[i]);
	}
	if (ret) {
		while (--i >= 0)
			if (b.client[i]->release)
				b.client[i]->release(g, b.slot[i], b.priv[i]);
		pthread_mutex_unlock(&set->mutex);
		/*
		 * Not free(g): a release hook may have queued an SRCU callback
		 * that still reads @g (the statistics' final move reads its
		 * parent), as it does for a group that lived. Callbacks run in
		 * the order they were queued, so the group's free runs after
		 * them, as in group_release(). (Out of memory in a client
		 * ordered after the statistics was a use after free.)
		 */
		ksync_call_srcu(&set->srcu, &g->rcu, free_rcu_group);
		return NULL;
	}
	if (parent) {
		parent->nr_online_children++;
		ksync_atomic_long_add(CHILD_REF, &parent->refcount); /* online: holds the creator's */
	}
	ksync_list_add_tail(&g->link, &set->groups);
	if (parent) /* M3: publishes the group to ksync_memgroup_next_child(); the state store below follows */
		ksync_list_add_tail_rcu(&g->sibling, &parent->children);
	set->nr_groups++;
	set_state(g, KSYNC_MEMGROUP_ONLINE);
	pthread_mutex_unlock(&set->mutex);
	return g;
}

int ksync__memgroup_offline(KSYNC_SITE_ARGS, struct ksync_memgroup *g)
{
	struct ksync_site at = KSYNC_SITE_INIT;

	struct ksync_memgroup_set *set;
	struct hook_batch b;
	int ret = 0;

	if (MISUSE(at, !g, "ksync_memgroup_offline: NULL group"))
		return -EINVAL;
	set = g->set;
	ksync__mutex_lock(&set->mutex);
	if (MISUSE(at, g->state != KSYNC_MEMGROUP_ONLINE,
		       "ksync_memgroup_offline: group is not online (offline twice?)") ||
	    MISUSE(at, g->nr_online_children, "ksync_memgroup_offline: group has online children")) {
		pthread_mutex_unlock(&set->mutex);
		return -EBUSY;
	}
	batch_take_locked(set, g->onlined, &b);
	/* Every client may refuse, before anything changes. */
	for (int k = 0; k < b.nr && !ret; k++) {
		if (!b.client[k]->may_offline)
			continue;
		ret = b.client[k]->may_offline(g, b.slot[k], b.priv[k]);
		MISUSE(at, ret, "group offline (ksync_memgroup_offline, ksync_shrinker_group_destroy): "
				"refused by client %s (errno %d)", b.client[k]->name, -ret);
	}
	if (ret) {
		pthread_mutex_unlock(&set->mutex);
		return ret;
	}
	set_state(g, KSYNC_MEMGROUP_DYING);
	pthread_mutex_unlock(&set->mutex);

	for (int k = 0; k < b.nr; k++)
		if (b.client[k]->offline)
			b.client[k]->offline(g, b.slot[k], b.priv[k]);

	ksync__mutex_lock(&set->mutex);
	set_state(g, KSYNC_MEMGROUP_DEAD);
	if (g->parent)
		g->parent->nr_online_children--;
	pthread_mutex_unlock(&set->mutex);
	/* The creator's reference (M2). */
	if (ksync_atomic_long_sub_return(CREATOR_REF, &g->refcount) == 0)
		group_release(g);
	return 0;
}

void ksync__memgroup_get(KSYNC_SITE_ARGS, struct ksync_memgroup *g)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	long v = ksync_atomic_long_read(&g->refcount);

	do {
		if (MISUSE(at, v <= 0, "ksync_memgroup_get: the group is already released "
				       "(use ksync_memgroup_tryget inside a read section); no reference taken"))
			return;
	} while (!ksync_atomic_long_try_cmpxchg(&g->refcount, &v, v + 1));
}

bool ksync_memgroup_tryget(struct ksync_memgroup *g)
{
	return ksync_atomic_long_inc_not_zero(&g->refcount);
}

bool ksync_memgroup_tryget_online(struct ksync_memgroup *g)
{
	if (ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
		return false;
	return ksync_memgroup_tryget(g);
}

void ksync__memgroup_put(KSYNC_SITE_ARGS, struct ksync_memgroup *g)
{
	struct ksync_site at = KSYNC_SITE_INIT;
	long v;

	if (KSYNC_PLANT(MEMGROUP_PUT_UNCHECKED)) {
		if (ksync_atomic_long_dec_and_test(&g->refcount))
			group_release(g);
		return;
	}
	v = ksync_atomic_long_read(&g->refcount);
	do {
		if (MISUSE(at, v <= 0, "ksync_memgroup_put: the group is already released "
				       "(a put without a get?); refused") ||
		    MISUSE(at, !(v & CALLER_REFS),
			   "ksync_memgroup_put: no reference of a caller left (the creator's goes "
			   "with ksync_memgroup_offline, the children's with their release: a put "
			   "without a get?); refused"))
			return;
	} while (!ksync_atomic_long_try_cmpxchg(&g->refcount, &v, v - 1)); /* M2 */
	if (v == 1)
		group_release(g);
}

#if KSYNC_SEAMS /* the test seam of <ksync/memgroup_testing.h>; none in a production build */
void (*ksync__memgroup_yield_hook)(int, void *);
void *ksync__memgroup_yield_arg;

void ksync_memgroup_set_yield_hook(void (*hook)(int point, void *arg), void *arg)
{
	KSYNC_WRITE_ONCE(ksync__memgroup_yield_arg, arg);
	/* Y1: the argument before the hook; pairs with Y2 in memgroup_yield_point(). */
	ksync_smp_store_release(&ksync__memgroup_yield_hook, hook);
}
#endif

void *ksync_memgroup_slot(const struct ksync_memgroup *g, int slot)
{
	return KSYNC_READ_ONCE(g->head.e[slot].state);
}

void ksync_memgroup_set_slot(struct ksync_memgroup *g, int slot, void *state)
{
	KSYNC_WRITE_ONCE(g->head.e[slot].state, state);
}

int ksync_memgroup_id(const struct ksync_memgroup *g)
{
	return g ? g->id : -1;
}

struct ksync_memgroup *ksync_memgroup_parent(const struct ksync_memgroup *g)
{
	return g->parent;
}

enum ksync_memgroup_state ksync_memgroup_state(const struct ksync_memgroup *g)
{
	return (enum ksync_memgroup_state)ksync_smp_load_acquire(&g->state); /* M1 */
}

struct ksync_memgroup_set *ksync_memgroup_set_of(const struct ksync_memgroup *g)
{
	return g->set;
}

int ksync_memgroup_nr_groups(struct ksync_memgroup_set *set)
{
	int n;

	ksync__mutex_lock(&set->mutex);
	n = set->nr_groups;
	pthread_mutex_unlock(&set->mutex);
	return n;
}

struct ksync_memgroup *ksync_memgroup_next_child(struct ksync_memgroup *parent,
					       struct ksync_memgroup *prev)
{
	struct ksync_list_head *next = prev ? ksync_rcu_dereference_raw(prev->sibling.next)
					    : ksync_rcu_dereference_raw(parent->children.next); /* M3 */

	return next == &parent->children ? NULL
					  : ksync_container_of(next, struct ksync_memgroup, sibling);
}
