// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/objcache/group.c - design A: a child cache per group, deactivation,
 * reparenting, the memory-group client.
 *
 * A root cache of design A has a table from group id to the group's live
 * child (two levels, chunks published with a release store, entries
 * with release stores and acquire loads: C1). An allocation for group G,
 * inside a read section of the set's domain (objcache.c), looks G's id up;
 * a child found is used if it was created for G (the pointer compared,
 * never dereferenced: the caller keeps G in memory) and is not dead.
 * Otherwise the child is created here, off the fast path: under the global
 * mutex, only while G is ONLINE and its client state not yet offline (the
 * offline hook sets that flag under the same mutex first, so a child is
 * either created before the hook takes G's list, and deactivated by it, or
 * not created at all). The child takes a reference on G.
 *
 * The client (one per set, shared by every A cache on it, attached and
 * detached with the caches) keeps in each group the list of the children it
 * owns. Its offline hook, for each child of G: with reparent, hands the
 * child's group reference to the nearest ancestor not yet offline (none
 * past a top-level group) and moves the child to that ancestor's list;
 * then deactivates the child if it is alive:
 *   dead = 1 (seq_cst CAS: D1, pairs with the magazine owners' M2 in
 *   magazine.c), out of the table, every thread's magazine drained, every
 *   empty slab freed; from then on slabs are freed as they empty (slab.c)
 *   and the child ends with its last slab.
 * The hook runs inside a read section of the set's domain: a child it
 * deactivates may end (and be queued for freeing) before the hook is done
 * with it.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ksync__oc_gstate *gstate(struct ksync__oc_client *cl, struct ksync_memgroup *g)
{
	return ksync_memgroup_slot(g, cl->slot);
}

/* ---- the client's hooks ---- */

static int client_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync__oc_gstate *gs = KSYNC__ALLOC(calloc(1, sizeof(*gs)));

	(void)priv;
	if (!gs)
		return -ENOMEM;
	ksync_init_list_head(&gs->children);
	ksync_memgroup_set_slot(g, slot, gs);
	return 0;
}

/* Under ksync__oc_mutex: the nearest ancestor of @g whose offline hook has
 * not run, or NULL. */
static struct ksync_memgroup *live_ancestor(struct ksync__oc_client *cl, struct ksync_memgroup *g)
{
	for (struct ksync_memgroup *p = ksync_memgroup_parent(g); p; p = ksync_memgroup_parent(p)) {
		struct ksync__oc_gstate *ps = gstate(cl, p);

		if (ps && !ps->offline)
			return p;
	}
	return NULL;
}

static void client_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync__oc_client *cl = priv;
	struct ksync__oc_gstate *gs = ksync_memgroup_slot(g, slot);
	struct ksync_srcu_struct *ssp = ksync_memgroup_set_srcu(cl->set);
	struct ksync_list_head mine;
	int idx;

	if (!gs)
		return;
	ksync_init_list_head(&mine);
	idx = ksync_srcu_read_lock(ssp);
	ksync__mutex_lock(&ksync__oc_mutex);
	gs->offline = true;
	ksync_list_splice_init(&gs->children, &mine);
	pthread_mutex_unlock(&ksync__oc_mutex);

	while (!ksync_list_empty(&mine)) {
		struct ksync_objcache *c = ksync_list_first_entry(&mine, struct ksync_objcache, glink);
		struct ksync_memgroup *old = NULL, *to;

		ksync__mutex_lock(&ksync__oc_mutex);
		ksync_list_del_init(&c->glink);
		if (c->root->reparent && c->group == g) {
			to = live_ancestor(cl, g);
			if (to) {
				ksync_memgroup_get(to);
				ksync_list_add(&c->glink, &gstate(cl, to)->children);
			}
			old = c->group;
			c->group = to;
		}
		pthread_mutex_unlock(&ksync__oc_mutex);
		if (old)
			ksync_memgroup_put(old);
		ksync__oc_yield(c, KSYNC_OBJCACHE_YP_OFFLINE_CHILD);
		ksync__oc_deactivate(c);
	}
	ksync_srcu_read_unlock(ssp, idx);
}

static void gstate_free_rcu(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct ksync__oc_gstate, rcu));
}

static void client_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct ksync__oc_gstate *gs = ksync_memgroup_slot(g, slot);

	(void)priv;
	if (gs) /* readers inside the set's domain may still look at it */
		ksync_call_srcu(ksync_memgroup_set_srcu(ksync_memgroup_set_of(g)), &gs->rcu, gstate_free_rcu);
}

int ksync__oc_client_attach(struct ksync_site at, struct ksync_objcache *root)
{
	struct ksync__oc_client *cl;
	int slot;

	ksync__mutex_lock(&ksync__oc_mutex);
	ksync_list_for_each_entry(cl, &ksync__oc_clients, link) {
		if (cl->set == root->set) {
			cl->users++;
			root->client = cl;
			pthread_mutex_unlock(&ksync__oc_mutex);
			return 0;
		}
	}
	pthread_mutex_unlock(&ksync__oc_mutex);
	cl = KSYNC__ALLOC(calloc(1, sizeof(*cl)));
	if (!cl)
		return -ENOMEM;
	cl->client = (struct ksync_memgroup_client){
		.name = "objcache",
		.online = client_online,
		.offline = client_offline,
		.release = client_release,
		.order = KSYNC_MEMGROUP_ORDER_OBJCG - 50, /* after LRU lists, before handles */
	};
	cl->set = root->set;
	cl->users = 1;
	/* Registration runs the online hook for every online group: outside
	 * our mutex (the hooks do not take it, but the set's mutex is taken
	 * inside, and offline hooks take ours after the set's). */
	slot = ksync__memgroup_client_register(at.file, at.line, root->set, &cl->client, cl);
	if (slot < 0) {
		free(cl);
		return slot;
	}
	cl->slot = slot;
	ksync__mutex_lock(&ksync__oc_mutex);
	{
		struct ksync__oc_client *other;

		ksync_list_for_each_entry(other, &ksync__oc_clients, link) {
			if (other->set == root->set) {
				/* Another A cache of the set attached meanwhile: use its client. */
				other->users++;
				root->client = other;
				pthread_mutex_unlock(&ksync__oc_mutex);
				(void)ksync_memgroup_client_unregister(root->set, slot);
				free(cl);
				return 0;
			}
		}
	}
	ksync_list_add(&cl->link, &ksync__oc_clients);
	root->client = cl;
	pthread_mutex_unlock(&ksync__oc_mutex);
	return 0;
}

int ksync__oc_client_detach(struct ksync_site at, struct ksync_objcache *root)
{
	struct ksync__oc_client *cl = root->client;
	int ret;

	ksync__mutex_lock(&ksync__oc_mutex);
	if (cl->users > 1) {
		cl->users--;
		root->client = NULL;
		pthread_mutex_unlock(&ksync__oc_mutex);
		return 0;
	}
	pthread_mutex_unlock(&ksync__oc_mutex);
	/* The last A cache of the set: the client goes, which needs the set to
	 * have no groups (reported at the caller's line by the memory groups). */
	ret = ksync__memgroup_client_unregister(at.file, at.line, root->set, cl->slot);
	if (ret)
		return ret;
	ksync__mutex_lock(&ksync__oc_mutex);
	ksync_list_del(&cl->link);
	pthread_mutex_unlock(&ksync__oc_mutex);
	root->client = NULL;
	free(cl);
	return 0;
}

/* ---- children ---- */

static struct ksync_objcache **table_slot(struct ksync_objcache *root, int id, bool create)
{
	struct ksync_objcache ***cp = &root->table[id / KSYNC__OC_CHUNK];
	struct ksync_objcache **ch = __atomic_load_n(cp, __ATOMIC_ACQUIRE); /* C1 */

	if (!ch && create) {
		struct ksync_objcache **fresh = KSYNC__ALLOC(calloc(KSYNC__OC_CHUNK, sizeof(*fresh)));

		if (!fresh)
			return NULL;
		if (__atomic_compare_exchange_n(cp, &ch, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) /* C1 */
			ch = fresh;
		else
			free(fresh);
	}
	return ch ? &ch[id % KSYNC__OC_CHUNK] : NULL;
}

static struct ksync_objcache *child_create(struct ksync_objcache *root, struct ksync_memgroup *g, int id)
{
	struct ksync_objcache **slot = table_slot(root, id, true);
	struct ksync_objcache *c, *other;
	struct ksync__oc_gstate *gs;

	if (!slot)
		return NULL;
	c = KSYNC__ALLOC(calloc(1, sizeof(*c)));
	if (!c)
		return NULL;
	/* The root's settings, written once at its creation (not its lists
	 * and counters, which its mutex guards). */
	snprintf(c->name, sizeof(c->name), "%.48s(%d)", root->name, id);
	c->size = root->size;
	c->stride = root->stride;
	c->align = root->align;
	c->flags = root->flags;
	c->ctor = root->ctor;
	c->objs_per_slab = root->objs_per_slab;
	c->recip = root->recip;
	c->obj_off = root->obj_off;
	c->live_off = root->live_off;
	c->free_off = root->free_off;
	c->slab_size = root->slab_size;
	c->accounted = root->accounted;
	c->design = root->design;
	c->reparent = root->reparent;
	c->max_empty = root->max_empty;
	c->mag_size = root->mag_size;
	c->set = root->set;
	c->srcu = root->srcu;
	pthread_mutex_init(&c->lock, NULL);
	ksync_init_list_head(&c->partial);
	ksync_init_list_head(&c->full);
	ksync_init_list_head(&c->empty);
	ksync_init_list_head(&c->children);
	ksync_init_list_head(&c->all);
	ksync_init_list_head(&c->glink);
	ksync_init_list_head(&c->sibling);
	c->root = root;
	c->created_for = g;
	c->group_id = id;
	c->idx = c->mag_size > 1 ? ksync__oc_idx_get(c) : -1;
	if (c->mag_size > 1 && c->idx < 0)
		goto fail;

	ksync__mutex_lock(&ksync__oc_mutex);
	gs = gstate(root->client, g);
	other = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (other && other->created_for == g && !__atomic_load_n(&other->dead, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&ksync__oc_mutex); /* another thread created it */
		ksync__oc_idx_put(c->idx);
		pthread_mutex_destroy(&c->lock);
		free(c);
		return other;
	}
	if (!gs || gs->offline || !ksync_memgroup_tryget_online(g)) {
		pthread_mutex_unlock(&ksync__oc_mutex);
		goto fail;
	}
	c->group = g; /* the reference just taken */
	ksync_list_add(&c->glink, &gs->children);
	ksync__mutex_lock(&root->lock);
	ksync_list_add(&c->sibling, &root->children);
	root->children_alive++;
	__atomic_store_n(slot, c, __ATOMIC_RELEASE); /* C1: the child's fields before its pointer */
	pthread_mutex_unlock(&root->lock);
	pthread_mutex_unlock(&ksync__oc_mutex);
	return c;
fail:
	ksync__oc_idx_put(c->idx);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

struct ksync_objcache *ksync__oc_child_get(struct ksync_objcache *root, struct ksync_memgroup *g)
{
	int id = ksync_memgroup_id(g);
	struct ksync_objcache **slot, *c;

	if (id < 0 || id >= KSYNC__OC_MAX_IDX)
		return NULL;
	slot = table_slot(root, id, false);
	c = slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : NULL; /* C1 */
	if (ksync_likely(c && c->created_for == g && !__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE)))
		return c;
	if (ksync_memgroup_state(g) != KSYNC_MEMGROUP_ONLINE)
		return NULL;
	return child_create(root, g, id);
}

void ksync__oc_deactivate(struct ksync_objcache *c)
{
	struct ksync_objcache *root = c->root, **slot;
	int zero = 0;
	bool end1, end2;

	if (!__atomic_compare_exchange_n(&c->dead, &zero, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) /* D1 */
		return;
	ksync__oc_yield(c, KSYNC_OBJCACHE_YP_DEACTIVATE_MARKED);
	ksync__mutex_lock(&root->lock);
	slot = table_slot(root, c->group_id, false);
	if (slot && __atomic_load_n(slot, __ATOMIC_RELAXED) == c)
		__atomic_store_n(slot, NULL, __ATOMIC_RELEASE);
	root->children_alive--;
	root->children_dead++;
	pthread_mutex_unlock(&root->lock);
	(void)ksync__oc_drain_cache(c, &end1); /* D1 then the exchanges: M2's other half */
	(void)ksync__oc_free_empty(c, true, &end2);
	if (end1 || end2)
		ksync__oc_child_end(c);
}

void ksync__oc_deactivate_all(struct ksync_objcache *root)
{
	struct ksync_srcu_struct *ssp = root->srcu;
	int idx = ksync_srcu_read_lock(ssp);

	for (;;) {
		struct ksync_objcache *c, *found = NULL;

		ksync__mutex_lock(&root->lock);
		ksync_list_for_each_entry(c, &root->children, sibling) {
			if (!__atomic_load_n(&c->dead, __ATOMIC_RELAXED)) {
				found = c;
				break;
			}
		}
		pthread_mutex_unlock(&root->lock);
		if (!found)
			break;
		ksync__oc_deactivate(found);
	}
	ksync_srcu_read_unlock(ssp, idx);
}

bool ksync__oc_group_pinned(struct ksync_objcache *root, struct ksync_memgroup *g)
{
	struct ksync_objcache *c;
	bool pinned = false;

	ksync__mutex_lock(&ksync__oc_mutex);
	ksync__mutex_lock(&root->lock);
	ksync_list_for_each_entry(c, &root->children, sibling)
		if (c->group == g)
			pinned = true;
	pthread_mutex_unlock(&root->lock);
	pthread_mutex_unlock(&ksync__oc_mutex);
	return pinned;
}

unsigned long ksync__oc_group_objects_a(struct ksync_objcache *root, struct ksync_memgroup *g)
{
	struct ksync_objcache *c;
	unsigned long n = 0;

	if (!g)
		n = ksync__oc_count_live(root, NULL, NULL, NULL, NULL);
	ksync__mutex_lock(&ksync__oc_mutex);
	ksync__mutex_lock(&root->lock);
	ksync_list_for_each_entry(c, &root->children, sibling)
		if (c->group == g)
			n += ksync__oc_count_live(c, NULL, NULL, NULL, NULL);
	pthread_mutex_unlock(&root->lock);
	pthread_mutex_unlock(&ksync__oc_mutex);
	return n;
}
