/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/rculist.h - lists and hash lists walked by readers under (S)RCU
 *
 * The updaters of one list are serialised by the caller (a mutex, a spinlock,
 * a single writer thread); readers walk the list concurrently inside an SRCU
 * read section with no lock at all. The guarantees, as in the kernel:
 *
 *  - A reader never sees a half-initialised entry: every insertion fills in
 *    the new entry's links (and the caller its payload) BEFORE publishing it
 *    with ksync_rcu_assign_pointer() (a store-release), and readers follow
 *    links with ksync_rcu_dereference_raw() (dependency-ordered; an acquire
 *    load in KSYNC_ATOMIC_BUILTINS builds, so that TSan sees the edge).
 *  - Deletion (ksync_list_del_rcu(), ksync_hlist_del_rcu()) unlinks the entry
 *    but KEEPS its forward pointer: a reader standing on it walks on into the
 *    live list, and reaches the head. Only the backward pointer (which
 *    readers never use) is poisoned. The entry may be freed only after a
 *    grace period (ksync_synchronize_srcu() or ksync_call_srcu()); readers
 *    that started before the deletion may still be on it until then.
 *  - A walk always terminates and visits an entry at most once, as long as
 *    entries are only added, deleted and replaced (each deleted entry is
 *    freed after a grace period and not re-inserted into the same list before
 *    it: re-inserting an entry that readers may still stand on can send them
 *    round again, or past entries that stayed on the list). Entries added during a walk may or may not be seen; an
 *    entry that stays on the list throughout the walk is seen exactly once.
 *    A walk of ksync_list_replace_rcu() sees the old or the new entry (or,
 *    if it was standing on the old one, walks on from it).
 *
 * Walking macros take an optional condition (ksync_list_for_each_entry_rcu())
 * or a mandatory one (the _srcu variants): the caller's proof that the walk
 * is protected, typically ksync_srcu_read_lock_held(&ss) or "the update lock
 * is held". KSYNC_DEBUG builds check it once per walk with
 * KSYNC_DEBUG_WARN_ON_ONCE, as the kernel's lockdep does; other builds do
 * not evaluate it.
 *
 * Helpers that deliberately do not exist. There is no ksync_list_empty_rcu(),
 * no "last entry" or "previous entry" accessor for readers, and no reverse
 * walk: a reader's answer to "is it empty?" is stale the moment it is
 * computed (an entry may be added or the last one deleted right after), so
 * any check-then-act built on it races with the updaters; instead, fetch the
 * first entry with ksync_list_first_or_null_rcu() and act on what it returns,
 * which stays valid for the rest of the read section. Backward pointers are
 * not maintained for readers at all (deletion poisons them), so a reverse
 * walk cannot be made safe. Updaters, holding the update-side lock, may use
 * every helper of <ksync/list.h> on these lists (ksync_list_empty() included).
 *
 * Hash lists (&struct ksync_hlist_head, one pointer per bucket) follow the
 * same rules; their types and non-RCU operations (initialisers,
 * ksync_hlist_unhashed(), ksync_hlist_empty() for the update side, ...) are
 * in <ksync/list.h>, which this header includes.
 */
#ifndef KSYNC_RCULIST_H
#define KSYNC_RCULIST_H

#include <ksync/atomic.h>
#include <ksync/bug.h>
#include <ksync/compiler.h>
#include <ksync/list.h>
#include <ksync/rcupdate.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/*
 * Optional-condition check of the walking macros: expands to a debug check
 * of the first argument after @dummy, or of the trailing 1 when the caller
 * gave none.
 */
#define ksync__list_check_rcu(dummy, cond, ...) ((void)KSYNC_DEBUG_WARN_ON_ONCE(!(cond)))

/* ======================================================================== */
/* Doubly linked lists                                                      */

/**
 * ksync_init_list_head_rcu() - make @list empty while readers may see it.
 * @list: the list head
 *
 * Both links are single untorn stores; a reader sees either the old or the
 * new value of each.
 */
static inline void ksync_init_list_head_rcu(struct ksync_list_head *list)
{
	KSYNC_WRITE_ONCE(list->next, list);
	KSYNC_WRITE_ONCE(list->prev, list);
}

/* Link @entry between the consecutive @prev and @next, publishing it last. */
static inline void ksync__list_add_rcu(struct ksync_list_head *entry, struct ksync_list_head *prev,
				       struct ksync_list_head *next)
{
	entry->next = next;
	entry->prev = prev;
	/*
	 * A: publish @entry: its links above and its payload (written by the
	 * caller before this call) are ordered before it. Pairs with the
	 * ksync_rcu_dereference_raw() of ->next in every reader (R).
	 */
	ksync_rcu_assign_pointer(prev->next, entry);
	next->prev = entry; /* writers only */
}

/**
 * ksync_list_add_rcu() - insert @entry right after @head, for RCU readers.
 * @entry: the entry to add, fully initialised (payload included)
 * @head: the list head, or an entry to insert after
 *
 * Caller holds the update-side lock. Readers concurrently walking the list
 * see @entry either not at all or fully initialised.
 */
static inline void ksync_list_add_rcu(struct ksync_list_head *entry, struct ksync_list_head *head)
{
	ksync__list_add_rcu(entry, head, head->next);
}

/**
 * ksync_list_add_tail_rcu() - insert @entry right before @head (at the tail).
 * @entry: the entry to add, fully initialised
 * @head: the list head
 *
 * Same contract as ksync_list_add_rcu().
 */
static inline void ksync_list_add_tail_rcu(struct ksync_list_head *entry,
					   struct ksync_list_head *head)
{
	ksync__list_add_rcu(entry, head->prev, head);
}

/**
 * ksync_list_del_rcu() - unlink @entry; readers standing on it walk on.
 * @entry: the entry to delete
 *
 * Caller holds the update-side lock. @entry->next is left pointing into the
 * list, @entry->prev is poisoned (KSYNC_LIST_POISON2). Free @entry (or reuse
 * it on this list) only after a grace period of the readers' SRCU domain;
 * ksync_list_empty() on it is meaningless.
 */
static inline void ksync_list_del_rcu(struct ksync_list_head *entry)
{
	struct ksync_list_head *prev = entry->prev, *next = entry->next;

	next->prev = prev;
	/*
	 * A: store-release, so that a reader that now reaches @next through
	 * @prev sees @next as its inserter (a writer this one synchronised with
	 * through the update lock) initialised it. Pairs with R.
	 */
	ksync_rcu_assign_pointer(prev->next, next);
	entry->prev = KSYNC_LIST_POISON2;
}

/**
 * ksync_list_replace_rcu() - put @new_entry where @old is, atomically for readers.
 * @old: the entry to replace
 * @new_entry: its replacement, fully initialised
 *
 * Caller holds the update-side lock. A reader sees @old or @new_entry, never
 * neither; one standing on @old walks on. @old->prev is poisoned; free @old
 * after a grace period.
 */
static inline void ksync_list_replace_rcu(struct ksync_list_head *old,
					  struct ksync_list_head *new_entry)
{
	new_entry->next = old->next;
	new_entry->prev = old->prev;
	/* A: publish @new_entry; pairs with R. */
	ksync_rcu_assign_pointer(new_entry->prev->next, new_entry);
	new_entry->next->prev = new_entry;
	old->prev = KSYNC_LIST_POISON2;
}

/*
 * Splicing an RCU list into another, in two halves around the caller's wait
 * for a grace period. Readers may be walking @list (it is itself an RCU
 * list): it is emptied first (detach), then a grace period of @list's readers
 * must pass, since a reader still on its old entries would otherwise be led
 * into the destination list, where it would never meet @list's head again;
 * then the entries are linked in (attach). Split so that this header needs
 * no SRCU: the _srcu forms below put ksync_synchronize_srcu() between them.
 */
struct ksync__rcu_splice {
	struct ksync_list_head *first, *last;
};

/* Empty @list for readers; false (nothing to do, no wait needed) if it was empty. */
static inline bool ksync__list_splice_detach(struct ksync_list_head *list,
					     struct ksync__rcu_splice *sp)
{
	sp->first = list->next;
	sp->last = list->prev;
	if (sp->first == list)
		return false;
	ksync_init_list_head_rcu(list);
	return true;
}

/* After the grace period: link the detached entries between @prev and @next. */
static inline void ksync__list_splice_attach(const struct ksync__rcu_splice *sp,
					     struct ksync_list_head *prev,
					     struct ksync_list_head *next)
{
	/* Not yet visible to readers of the destination: plain stores suffice. */
	sp->last->next = next;
	sp->first->prev = prev;
	/* A: publish the spliced chain; pairs with R. */
	ksync_rcu_assign_pointer(prev->next, sp->first);
	next->prev = sp->last;
}

static inline void ksync__list_splice_init_rcu(struct ksync_list_head *list,
					       struct ksync_list_head *prev,
					       struct ksync_list_head *next, void (*sync)(void))
{
	struct ksync__rcu_splice sp;

	if (!ksync__list_splice_detach(list, &sp))
		return;
	sync();
	ksync__list_splice_attach(&sp, prev, next);
}

/**
 * ksync_list_splice_init_rcu() - move @list's entries right after @head.
 * @list: the source list, itself possibly walked by RCU readers; left empty
 * @head: the destination list
 * @sync: a function that waits for a grace period of @list's readers
 *	(e.g. a wrapper around ksync_synchronize_srcu())
 *
 * Caller holds the update-side lock of both lists and may sleep: @sync is
 * called once, unless @list is empty. Readers of @head see the entries
 * appear at once. Use ksync_list_splice_init_srcu() to pass a domain instead.
 */
static inline void ksync_list_splice_init_rcu(struct ksync_list_head *list,
					      struct ksync_list_head *head, void (*sync)(void))
{
	ksync__list_splice_init_rcu(list, head, head->next, sync);
}

/**
 * ksync_list_splice_tail_init_rcu() - move @list's entries right before @head.
 * @list: the source list; left empty
 * @head: the destination list
 * @sync: waits for a grace period of @list's readers
 *
 * Same contract as ksync_list_splice_init_rcu().
 */
static inline void ksync_list_splice_tail_init_rcu(struct ksync_list_head *list,
						   struct ksync_list_head *head, void (*sync)(void))
{
	ksync__list_splice_init_rcu(list, head->prev, head, sync);
}

/* The _srcu forms: detach, ksync_synchronize_srcu(@ssp), attach. */
#define ksync__list_splice_init_srcu(list, ssp, prev_of, next_of)              \
	do {                                                                   \
		struct ksync__rcu_splice ksync__sp;                            \
		if (ksync__list_splice_detach((list), &ksync__sp)) {           \
			ksync_synchronize_srcu(ssp);                           \
			ksync__list_splice_attach(&ksync__sp, (prev_of),       \
						  (next_of));                  \
		}                                                              \
	} while (0)

/**
 * ksync_list_splice_init_srcu() - ksync_list_splice_init_rcu() whose readers use @ssp.
 * @list: the source list; left empty
 * @head: the destination list
 * @ssp: the SRCU domain of @list's readers; waited for with ksync_synchronize_srcu()
 *
 * A macro, so that this header needs no SRCU: include <ksync/srcu.h> where
 * it is used. Must not be called inside a read section of @ssp.
 */
#define ksync_list_splice_init_srcu(list, head, ssp)                           \
	do {                                                                   \
		struct ksync_list_head *ksync__sp_head = (head);               \
		ksync__list_splice_init_srcu(list, ssp, ksync__sp_head,        \
					     ksync__sp_head->next);            \
	} while (0)

/**
 * ksync_list_splice_tail_init_srcu() - ksync_list_splice_tail_init_rcu() for an SRCU domain.
 * @list: the source list; left empty
 * @head: the destination list
 * @ssp: the SRCU domain of @list's readers (include <ksync/srcu.h>)
 */
#define ksync_list_splice_tail_init_srcu(list, head, ssp)                      \
	do {                                                                   \
		struct ksync_list_head *ksync__sp_head = (head);               \
		ksync__list_splice_init_srcu(list, ssp, ksync__sp_head->prev,  \
					     ksync__sp_head);                  \
	} while (0)

/**
 * ksync_list_entry_rcu() - the entry whose link is the RCU pointer @ptr.
 * @ptr: a link field read by readers (an lvalue such as @head->next)
 * @type: the entry type
 * @member: the name of the &struct ksync_list_head within @type
 *
 * R: loads @ptr with ksync_rcu_dereference_raw(); pairs with A.
 */
#define ksync_list_entry_rcu(ptr, type, member)                                \
	ksync_container_of(ksync_rcu_dereference_raw(ptr), type, member)

/**
 * ksync_list_first_or_null_rcu() - the first entry of @ptr, or NULL if it is empty.
 * @ptr: the list head
 * @type: the entry type
 * @member: the name of the link within @type
 *
 * The reader's replacement for an emptiness test: act on what it returns.
 */
#define ksync_list_first_or_null_rcu(ptr, type, member)                        \
	__extension__({                                                        \
		struct ksync_list_head *ksync__lf_h = (ptr);                   \
		struct ksync_list_head *ksync__lf_n =                          \
			ksync_rcu_dereference_raw(ksync__lf_h->next);          \
		ksync_likely(ksync__lf_n != ksync__lf_h)                       \
			? ksync_list_entry(ksync__lf_n, type, member)          \
			: (type *)NULL;                                        \
	})

/**
 * ksync_list_next_or_null_rcu() - the entry after @ptr, or NULL if @ptr is the last.
 * @head: the list head
 * @ptr: the link of the current entry (a &struct ksync_list_head pointer)
 * @type: the entry type
 * @member: the name of the link within @type
 */
#define ksync_list_next_or_null_rcu(head, ptr, type, member)                   \
	__extension__({                                                        \
		struct ksync_list_head *ksync__ln_h = (head);                  \
		struct ksync_list_head *ksync__ln_n =                          \
			ksync_rcu_dereference_raw((ptr)->next);                \
		ksync_likely(ksync__ln_n != ksync__ln_h)                       \
			? ksync_list_entry(ksync__ln_n, type, member)          \
			: (type *)NULL;                                        \
	})

/**
 * ksync_list_for_each_entry_rcu() - walk an RCU list.
 * @pos: the typed cursor
 * @head: the list head
 * @member: the name of the link within the entry type
 * @...: optional condition proving protection (checked in KSYNC_DEBUG builds)
 *
 * Run inside a read section (or with the update lock held, passing that as
 * the condition). Terminates; visits an entry at most once (see the DOC).
 */
#define ksync_list_for_each_entry_rcu(pos, head, member, ...)                  \
	for (ksync__list_check_rcu(0, ##__VA_ARGS__, 1),                       \
	     (pos) = ksync_list_entry_rcu((head)->next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                         \
	     (pos) = ksync_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))

/**
 * ksync_list_for_each_entry_srcu() - walk an RCU list under SRCU.
 * @pos: the typed cursor
 * @head: the list head
 * @member: the name of the link within the entry type
 * @cond: the protection proof, e.g. ksync_srcu_read_lock_held(&ss), checked
 *	once per walk in KSYNC_DEBUG builds
 */
#define ksync_list_for_each_entry_srcu(pos, head, member, cond)                \
	for (ksync__list_check_rcu(0, cond, 1),                                \
	     (pos) = ksync_list_entry_rcu((head)->next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                         \
	     (pos) = ksync_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))

/**
 * ksync_list_for_each_entry_continue_rcu() - walk on from the entry after @pos.
 * @pos: the typed cursor, standing on an entry (or at the head) of the same
 *	read section
 * @head: the list head
 * @member: the name of the link within the entry type
 */
#define ksync_list_for_each_entry_continue_rcu(pos, head, member)              \
	for ((pos) = ksync_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                         \
	     (pos) = ksync_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))

/**
 * ksync_list_for_each_entry_from_rcu() - walk on from @pos itself.
 * @pos: the typed cursor, standing on an entry (or at the head) of the same
 *	read section
 * @head: the list head
 * @member: the name of the link within the entry type
 */
#define ksync_list_for_each_entry_from_rcu(pos, head, member)                  \
	for (; &(pos)->member != (head);                                       \
	     (pos) = ksync_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))

/**
 * ksync_list_for_each_rcu() - walk the links of an RCU list.
 * @pos: the &struct ksync_list_head cursor
 * @head: the list head
 *
 * Inside a read section (or under the update lock). R: each link is loaded
 * with ksync_rcu_dereference_raw(); pairs with A. The kernel has it in
 * <linux/list.h>; it is here because it needs <ksync/rcupdate.h>.
 */
#define ksync_list_for_each_rcu(pos, head)                                     \
	for ((pos) = ksync_rcu_dereference_raw((head)->next); (pos) != (head); \
	     (pos) = ksync_rcu_dereference_raw((pos)->next))

/* ======================================================================== */
/* Hash lists                                                               */

/* The types and their non-RCU operations are in <ksync/list.h>. */

/**
 * ksync_hlist_add_head_rcu() - insert @n at the front of @h, for RCU readers.
 * @n: the node, in a fully initialised entry
 * @h: the hash list
 *
 * Caller holds the update-side lock.
 */
static inline void ksync_hlist_add_head_rcu(struct ksync_hlist_node *n, struct ksync_hlist_head *h)
{
	struct ksync_hlist_node *first = h->first;

	/*
	 * ->next with an untorn store: after ksync_hlist_del_init_rcu() the
	 * node may be re-added before a grace period, while readers standing
	 * on it still load its ->next.
	 */
	KSYNC_WRITE_ONCE(n->next, first);
	KSYNC_WRITE_ONCE(n->pprev, &h->first);
	/* A: publish @n; pairs with R in the hlist walks. */
	ksync_rcu_assign_pointer(h->first, n);
	if (first)
		KSYNC_WRITE_ONCE(first->pprev, &n->next);
}

/**
 * ksync_hlist_add_before_rcu() - insert @n right before @next.
 * @n: the node to add, in a fully initialised entry
 * @next: a node on the list
 *
 * Caller holds the update-side lock.
 */
static inline void ksync_hlist_add_before_rcu(struct ksync_hlist_node *n,
					      struct ksync_hlist_node *next)
{
	KSYNC_WRITE_ONCE(n->pprev, next->pprev);
	KSYNC_WRITE_ONCE(n->next, next); /* untorn: see ksync_hlist_add_head_rcu() */
	/* A: publish @n; pairs with R. */
	ksync_rcu_assign_pointer(*n->pprev, n);
	KSYNC_WRITE_ONCE(next->pprev, &n->next);
}

/**
 * ksync_hlist_add_behind_rcu() - insert @n right after @prev.
 * @n: the node to add, in a fully initialised entry
 * @prev: a node on the list
 *
 * Caller holds the update-side lock.
 */
static inline void ksync_hlist_add_behind_rcu(struct ksync_hlist_node *n,
					      struct ksync_hlist_node *prev)
{
	KSYNC_WRITE_ONCE(n->next, prev->next); /* untorn: see ksync_hlist_add_head_rcu() */
	KSYNC_WRITE_ONCE(n->pprev, &prev->next);
	/* A: publish @n; pairs with R. */
	ksync_rcu_assign_pointer(prev->next, n);
	if (n->next)
		KSYNC_WRITE_ONCE(n->next->pprev, &n->next);
}

/* Unlink @n, keeping its ->next for readers standing on it. */
static inline void ksync__hlist_del_rcu(struct ksync_hlist_node *n)
{
	struct ksync_hlist_node *next = n->next;
	struct ksync_hlist_node **pprev = n->pprev;

	/* A: release, as in ksync_list_del_rcu(); pairs with R. */
	ksync_rcu_assign_pointer(*pprev, next);
	if (next)
		KSYNC_WRITE_ONCE(next->pprev, pprev);
}

/**
 * ksync_hlist_del_rcu() - unlink @n; readers standing on it walk on.
 * @n: a node on a list
 *
 * Caller holds the update-side lock. @n->pprev is poisoned, ksync_hlist_unhashed()
 * on it is meaningless; free the entry after a grace period.
 */
static inline void ksync_hlist_del_rcu(struct ksync_hlist_node *n)
{
	ksync__hlist_del_rcu(n);
	KSYNC_WRITE_ONCE(n->pprev, KSYNC_HLIST_POISON2);
}

/**
 * ksync_hlist_del_init_rcu() - unlink @n if it is on a list, and mark it unhashed.
 * @n: a node, on a list or unhashed
 *
 * Caller holds the update-side lock. Keeps @n->next for readers standing on
 * it; afterwards ksync_hlist_unhashed(@n) is true. @n may be re-added before
 * a grace period, but a reader standing on it then follows its NEW ->next:
 * it may visit entries twice or skip entries that never left the list.
 */
static inline void ksync_hlist_del_init_rcu(struct ksync_hlist_node *n)
{
	if (!ksync_hlist_unhashed(n)) {
		ksync__hlist_del_rcu(n);
		KSYNC_WRITE_ONCE(n->pprev, (struct ksync_hlist_node **)NULL);
	}
}

/**
 * ksync_hlist_replace_rcu() - put @new_node where @old is.
 * @old: a node on a list
 * @new_node: its replacement, in a fully initialised entry
 *
 * Caller holds the update-side lock. Readers see @old or @new_node.
 */
static inline void ksync_hlist_replace_rcu(struct ksync_hlist_node *old,
					   struct ksync_hlist_node *new_node)
{
	struct ksync_hlist_node *next = old->next;

	KSYNC_WRITE_ONCE(new_node->next, next); /* untorn: see ksync_hlist_add_head_rcu() */
	KSYNC_WRITE_ONCE(new_node->pprev, old->pprev);
	/* A: publish @new_node; pairs with R. */
	ksync_rcu_assign_pointer(*new_node->pprev, new_node);
	if (next)
		KSYNC_WRITE_ONCE(next->pprev, &new_node->next);
	KSYNC_WRITE_ONCE(old->pprev, KSYNC_HLIST_POISON2);
}

/**
 * ksync_hlist_for_each_entry_rcu() - walk an RCU hash list.
 * @pos: the typed cursor (NULL after a complete walk)
 * @head: the hash list
 * @member: the name of the &struct ksync_hlist_node within the entry type
 * @...: optional protection condition, checked in KSYNC_DEBUG builds
 *
 * R: each link is loaded with ksync_rcu_dereference_raw(); pairs with A.
 */
#define ksync_hlist_for_each_entry_rcu(pos, head, member, ...)                 \
	for (ksync__list_check_rcu(0, ##__VA_ARGS__, 1),                       \
	     (pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((head)->first), \
					    __typeof__(*(pos)), member);       \
	     (pos);                                                            \
	     (pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((pos)->member.next), \
					    __typeof__(*(pos)), member))

/**
 * ksync_hlist_for_each_entry_srcu() - walk an RCU hash list under SRCU.
 * @pos: the typed cursor
 * @head: the hash list
 * @member: the name of the node within the entry type
 * @cond: the protection proof, checked once per walk in KSYNC_DEBUG builds
 */
#define ksync_hlist_for_each_entry_srcu(pos, head, member, cond)               \
	for (ksync__list_check_rcu(0, cond, 1),                                \
	     (pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((head)->first), \
					    __typeof__(*(pos)), member);       \
	     (pos);                                                            \
	     (pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((pos)->member.next), \
					    __typeof__(*(pos)), member))

/**
 * ksync_hlist_for_each_entry_continue_rcu() - walk an RCU hash list on from the entry after @pos.
 * @pos: the typed cursor, standing on an entry met in the same read section
 * @member: the name of the node within the entry type
 */
#define ksync_hlist_for_each_entry_continue_rcu(pos, member)                   \
	for ((pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((pos)->member.next), \
					    __typeof__(*(pos)), member);       \
	     (pos);                                                            \
	     (pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((pos)->member.next), \
					    __typeof__(*(pos)), member))

/**
 * ksync_hlist_for_each_entry_from_rcu() - walk an RCU hash list on from @pos itself.
 * @pos: the typed cursor, standing on an entry met in the same read section (or NULL)
 * @member: the name of the node within the entry type
 */
#define ksync_hlist_for_each_entry_from_rcu(pos, member)                       \
	for (; (pos);                                                          \
	     (pos) = ksync_hlist_entry_safe(ksync_rcu_dereference_raw((pos)->member.next), \
					    __typeof__(*(pos)), member))

KSYNC_EXTERN_C_END

#endif /* KSYNC_RCULIST_H */
