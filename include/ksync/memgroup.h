/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/memgroup.h - memory groups: a hierarchy with a lifecycle and clients
 *
 * A memory group is what the kernel calls a memory cgroup, and what a
 * userspace program calls a tenant, a container, a connection or a client's
 * cache: something objects are charged to, that other modules keep
 * per-group state for (the shrinker registry's per-group bitmaps and
 * deferred work; later LRU lists and statistics), and that goes away while
 * objects and walkers may still point at it.
 *
 * Groups live in a &struct ksync_memgroup_set (one hierarchy). The module
 * knows none of the modules that keep per-group state: they register as
 * *clients* of a set (ksync_memgroup_client_register()), get a slot in every
 * group, and are called when a group comes online, goes offline and is
 * released. This is the kernel's relation between memcontrol.c and
 * shrinker.c turned into a registration, so that no include or call cycle
 * can form between the modules.
 *
 * Lifecycle (&enum ksync_memgroup_state):
 *  - ONLINE: ksync_memgroup_create() ran every client's online hook;
 *  - DYING: ksync_memgroup_offline() runs the clients' offline hooks, in
 *    their order (&struct ksync_memgroup_client.order); a client moves the
 *    group's work to the parent there (the shrinker registry moves its
 *    deferred work);
 *  - DEAD: the hooks have run and the creator's reference is dropped; other
 *    references (ksync_memgroup_get()/tryget()) keep the memory;
 *  - FREED: the last reference is gone: the release hooks ran (reverse
 *    order), the group left its parent (dropping its reference on it), and
 *    its memory is freed after a grace period of the set's SRCU domain.
 *
 * Concurrency: create, offline and client (un)registration serialise on
 * the set's mutex (offline runs its hooks outside it, so a hook may wait
 * for readers that themselves create groups). Create and offline may be
 * called inside a read section of the set's domain (no built-in client
 * waits for that domain; the memory of what they release is freed after
 * the section), not inside one that a client's offline hook waits for
 * (the shrinker registry's: refused, see @may_offline). References are atomic. A
 * group's fields are readable by anyone holding a reference, or inside a
 * read section of ksync_memgroup_set_srcu().
 *
 * Errors are negative errno values; misuse (offline twice, offline with
 * online children, a parent that is not online) is reported with file and
 * line through KSYNC_WARN.
 */
#ifndef KSYNC_MEMGROUP_H
#define KSYNC_MEMGROUP_H

#include <ksync/bug.h>
#include <ksync/compiler.h>

#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

struct ksync_memgroup_set;
struct ksync_memgroup;
struct ksync_srcu_struct;

/** KSYNC_MEMGROUP_MAX_CLIENTS - most clients (per-group slots) a set may have. */
#define KSYNC_MEMGROUP_MAX_CLIENTS 8

/**
 * enum ksync_memgroup_state - where a group is in its life.
 * @KSYNC_MEMGROUP_ONLINE: created, every client's online hook succeeded
 * @KSYNC_MEMGROUP_DYING: ksync_memgroup_offline() is running the offline hooks
 * @KSYNC_MEMGROUP_DEAD: offline done; references keep the memory
 * @KSYNC_MEMGROUP_FREED: released; memory queued for freeing (seen only by
 *	a caller that still reads it inside a read section of the set's domain)
 */
enum ksync_memgroup_state {
	KSYNC_MEMGROUP_ONLINE = 1,
	KSYNC_MEMGROUP_DYING,
	KSYNC_MEMGROUP_DEAD,
	KSYNC_MEMGROUP_FREED,
};

/**
 * struct ksync_memgroup_client - a module that keeps per-group state.
 *
 * Fill it with designated initializers: fields may be added at the end.
 *
 * Every hook gets the group, the client's slot (for ksync_memgroup_slot()
 * and ksync_memgroup_set_slot()) and the @priv given at registration.
 *
 * @name: for messages
 * @online: a group came online (or was online when the client registered):
 *	allocate its state, store it with ksync_memgroup_set_slot(); return 0
 *	or a negative errno (the group is then not created, and the clients
 *	already called get their release hook). Called under the set's mutex.
 * @offline: the group is going offline: move its work to the parent
 *	(ksync_memgroup_parent(), still online), stop using it. May sleep and
 *	wait for readers; called without the set's mutex. May be NULL.
 * @release: the last reference is gone: free the group's state. Called
 *	from whichever thread drops the last reference. May be NULL.
 * @order: where the hooks run among the set's clients: online and offline
 *	in ascending order, release in descending order (equal orders: by
 *	slot). See KSYNC_MEMGROUP_ORDER_*.
 * @may_offline: asked, under the set's mutex and before the group leaves
 *	ONLINE, whether ksync_memgroup_offline() may run on this thread now:
 *	return 0, or a negative errno to refuse (the group stays ONLINE and
 *	the caller gets the errno, reported at its line). For a client whose
 *	offline hook would wait for something the calling thread holds (the
 *	shrinker registry refuses from inside a shrinker callback or a read
 *	section of its domain: its hook waits for a grace period of that
 *	domain). Must not sleep. May be NULL.
 *
 * Client state and readers: a group's fields, its slots included, stay
 * readable until its memory is freed, after a grace period of the set's
 * domain. A release hook that frees its state must therefore free it with
 * ksync_call_srcu() on ksync_memgroup_set_srcu() (not free()), and may leave
 * the slot pointing at it: callers inside a read section of the set's
 * domain may still be reading the state of a group they found there.
 */
struct ksync_memgroup_client {
	const char *name;
	int (*online)(struct ksync_memgroup *g, int slot, void *priv);
	void (*offline)(struct ksync_memgroup *g, int slot, void *priv);
	void (*release)(struct ksync_memgroup *g, int slot, void *priv);
	int order;
	int (*may_offline)(struct ksync_memgroup *g, int slot, void *priv);
};

/*
 * Orders of the clients ksync ships (&struct ksync_memgroup_client.order):
 * the order in which going offline must run their hooks, as the kernel
 * learned it: LRU lists are reparented first (objects on them may be
 * charged), then the charge handles, then deferred shrinker work moves,
 * and statistics are flushed last (the steps before may still update them).
 */
#define KSYNC_MEMGROUP_ORDER_LRU 100
#define KSYNC_MEMGROUP_ORDER_OBJCG 200
#define KSYNC_MEMGROUP_ORDER_SHRINKER 300
#define KSYNC_MEMGROUP_ORDER_STATS 400

/** KSYNC_MEMGROUP_MAX_NODES - most nodes a set's statistics may have. */
#define KSYNC_MEMGROUP_MAX_NODES 64

/**
 * ksync_memgroup_set_create_nodes() - an empty hierarchy whose statistics
 * have @nr_nodes nodes (1..%KSYNC_MEMGROUP_MAX_NODES).
 *
 * Every set has two built-in clients: charge handles and statistics
 * (<ksync/objcg.h>). Return: the set, or NULL (bad @nr_nodes, out of memory).
 */
struct ksync_memgroup_set *ksync_memgroup_set_create_nodes(int nr_nodes);

/** ksync_memgroup_set_create() - ksync_memgroup_set_create_nodes(1). */
struct ksync_memgroup_set *ksync_memgroup_set_create(void);

/**
 * ksync_memgroup_set_destroy() - free an empty set.
 * @set: the set
 *
 * Every group must be freed and every client (but the built-in ones)
 * unregistered first; if not,
 * that is reported and the set is leaked rather than freed under its users.
 * Waits for queued frees. Return: 0 or -EBUSY.
 */
int ksync__memgroup_set_destroy(const char *file, int line, struct ksync_memgroup_set *set);
#define ksync_memgroup_set_destroy(...) ksync__memgroup_set_destroy(__FILE__, __LINE__, __VA_ARGS__)

/** ksync_memgroup_set_srcu() - the SRCU domain whose grace periods free @set's groups. */
struct ksync_srcu_struct *ksync_memgroup_set_srcu(struct ksync_memgroup_set *set);

/**
 * ksync_memgroup_client_register() - add a client to @set.
 * @set: the set
 * @client: the hooks (kept by pointer: must outlive the registration)
 * @priv: passed to every hook
 *
 * Calls @client->online for every group already online. Return: the
 * client's slot (0..%KSYNC_MEMGROUP_MAX_CLIENTS-1), -ENOSPC when every slot
 * is taken, -EINVAL without an online hook (reported), -EBUSY when @client
 * is already registered with the same @priv (reported; the same hooks with
 * another @priv take another slot), or the first error of an online hook
 * (the groups already brought online get their release hook).
 */
int ksync__memgroup_client_register(const char *file, int line, struct ksync_memgroup_set *set,
				   const struct ksync_memgroup_client *client, void *priv);
#define ksync_memgroup_client_register(...) ksync__memgroup_client_register(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_client_unregister() - remove the client of @slot.
 * Return: 0; -EBUSY while groups exist (reported); -ENOENT for a free slot
 * (reported); -EINVAL for a slot out of range (reported).
 */
int ksync__memgroup_client_unregister(const char *file, int line, struct ksync_memgroup_set *set, int slot);
#define ksync_memgroup_client_unregister(...) ksync__memgroup_client_unregister(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_client_find() - the slot of @client in @set, or -ENOENT.
 * A scan of at most %KSYNC_MEMGROUP_MAX_CLIENTS pointers, no lock.
 */
int ksync_memgroup_client_find(const struct ksync_memgroup_set *set,
			       const struct ksync_memgroup_client *client);

/**
 * ksync_memgroup_create() - a new online group.
 * @set: the set (ignored when @parent is given)
 * @parent: an online group of the same set, or NULL for a top-level group
 *
 * Runs every client's online hook. The caller holds the creator's
 * reference, dropped by ksync_memgroup_offline(). Return: the group, or NULL
 * (out of memory or a failed online hook; a parent that is not online is
 * reported).
 */
struct ksync_memgroup *ksync__memgroup_create(const char *file, int line, struct ksync_memgroup_set *set,
					     struct ksync_memgroup *parent);
#define ksync_memgroup_create(...) ksync__memgroup_create(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_offline() - take @g offline, then drop the creator's reference.
 * @g: an online group without online children
 *
 * ONLINE -> DYING, the clients' offline hooks in their order, then DEAD and
 * the creator's reference dropped (the group is freed once no other
 * reference remains). Return: 0; -EBUSY if @g has online children or is not
 * online (both reported); the errno of a client's @may_offline that refuses
 * (reported: the shrinker registry's -EDEADLK from inside a shrinker
 * callback or a read section of the registry's domain). Refused, nothing
 * changes.
 */
int ksync__memgroup_offline(const char *file, int line, struct ksync_memgroup *g);
#define ksync_memgroup_offline(...) ksync__memgroup_offline(__FILE__, __LINE__, __VA_ARGS__)

/*
 * References. An online (or dying) group holds the creator's reference, which
 * only ksync_memgroup_offline() drops: no put can release a group before it
 * is offline. Each ksync_memgroup_get() or successful tryget is paired with
 * one ksync_memgroup_put().
 */

/**
 * ksync_memgroup_get() - take a reference on @g (the caller already holds one).
 *
 * On a group already released (seen inside a read section of the set's
 * domain) it is misuse: reported, and no reference is taken (use
 * ksync_memgroup_tryget() there).
 */
void ksync__memgroup_get(const char *file, int line, struct ksync_memgroup *g);
#define ksync_memgroup_get(...) ksync__memgroup_get(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_memgroup_tryget() - take a reference unless @g is being freed.
 * Call inside a read section of the set's domain (or holding a reference).
 * Return: true if a reference was taken.
 */
bool ksync_memgroup_tryget(struct ksync_memgroup *g);

/**
 * ksync_memgroup_tryget_online() - as ksync_memgroup_tryget(), and only while @g is online.
 */
bool ksync_memgroup_tryget_online(struct ksync_memgroup *g);

/**
 * ksync_memgroup_put() - drop a reference; the last one releases @g.
 *
 * A put that is not paired with a get is misuse, reported at the caller's
 * line and refused (nothing changes): one when no reference taken by a get
 * or a tryget is left, whatever else holds the group (the creator's
 * reference of an online or dying group, which only ksync_memgroup_offline()
 * drops; the references its children hold until their release), and one on
 * a group already released (the count stays 0, so no later tryget brings
 * the group back).
 */
void ksync__memgroup_put(const char *file, int line, struct ksync_memgroup *g);
#define ksync_memgroup_put(...) ksync__memgroup_put(__FILE__, __LINE__, __VA_ARGS__)

/*
 * The head of every group: what clients' hot paths read inline (the rest of
 * the group is private to lib/memgroup). Entry i pairs the set's client of
 * slot i, copied into every group (under the set's mutex, when the group is
 * created or the client registers; a slot is never reused while groups
 * exist), with that client's state in the group: a lookup of the first slot
 * reads one cache line of the group and nothing else.
 */
struct ksync__memgroup_head {
	struct {
		const struct ksync_memgroup_client *client;
		void *state;
	} e[KSYNC_MEMGROUP_MAX_CLIENTS];
};

/**
 * ksync_memgroup_client_state() - the state @client stored in @g: the slot
 * lookup and the slot read, inline, for clients' hot paths (a client is
 * usually in slot 0 of its set). NULL when @client is not a client of @g's
 * set, or stored nothing in @g.
 */
static inline void *ksync_memgroup_client_state(const struct ksync_memgroup *g,
						const struct ksync_memgroup_client *client)
{
	const struct ksync__memgroup_head *h = (const struct ksync__memgroup_head *)(const void *)g;

	for (int i = 0; i < KSYNC_MEMGROUP_MAX_CLIENTS; i++)
		if (__atomic_load_n(&h->e[i].client, __ATOMIC_RELAXED) == client)
			return __atomic_load_n(&h->e[i].state, __ATOMIC_RELAXED);
	return NULL;
}

/** ksync_memgroup_slot() - the state client @slot stored in @g (NULL if none). */
void *ksync_memgroup_slot(const struct ksync_memgroup *g, int slot);

/** ksync_memgroup_set_slot() - store client @slot's state in @g (from its online hook). */
void ksync_memgroup_set_slot(struct ksync_memgroup *g, int slot, void *state);

/** ksync_memgroup_id() - a small integer naming @g, unique in its set; -1 for NULL. */
int ksync_memgroup_id(const struct ksync_memgroup *g);

/** ksync_memgroup_parent() - @g's parent, NULL for a top-level group. */
struct ksync_memgroup *ksync_memgroup_parent(const struct ksync_memgroup *g);

/** ksync_memgroup_state() - @g's &enum ksync_memgroup_state (acquire load). */
enum ksync_memgroup_state ksync_memgroup_state(const struct ksync_memgroup *g);

/** ksync_memgroup_set_of() - the set @g belongs to. */
struct ksync_memgroup_set *ksync_memgroup_set_of(const struct ksync_memgroup *g);

/**
 * ksync_memgroup_next_child() - iterate over @parent's children, lockless.
 * @parent: the group
 * @prev: the child returned last, or NULL to start
 *
 * Call inside a read section of the set's domain (ksync_memgroup_set_srcu()),
 * all the way through one iteration. Every child not yet released is seen,
 * whatever its state (check ksync_memgroup_state(), or take a reference with
 * ksync_memgroup_tryget_online()); a child created or released during the
 * walk may or may not be seen. Return: the next child, or NULL.
 */
struct ksync_memgroup *ksync_memgroup_next_child(struct ksync_memgroup *parent,
					       struct ksync_memgroup *prev);

/**
 * ksync_memgroup_for_each_child() - ksync_memgroup_next_child() as a loop.
 * @pos: a struct ksync_memgroup * cursor
 * @parent: the group
 */
#define ksync_memgroup_for_each_child(pos, parent)                             \
	for ((pos) = ksync_memgroup_next_child((parent), NULL); (pos);         \
	     (pos) = ksync_memgroup_next_child((parent), (pos)))

/** ksync_memgroup_nr_groups() - groups of @set not yet freed (under its mutex). */
int ksync_memgroup_nr_groups(struct ksync_memgroup_set *set);

KSYNC_EXTERN_C_END

#endif /* KSYNC_MEMGROUP_H */
