/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/list.h - the kernel's circular doubly linked list
 *
 * A &struct ksync_list_head is both the list head and the link embedded in
 * each entry. An empty list points at itself. None of these operations is
 * safe against concurrent modification or lockless readers; for lists walked
 * under SRCU use <ksync/rculist.h>. The stores that link and unlink use
 * KSYNC_WRITE_ONCE() where a lockless reader of the same list (an RCU walker,
 * or ksync_list_empty() used as a hint) may observe them, as in the kernel.
 *
 * Deleted entries are poisoned in KSYNC_DEBUG builds (next/prev set to
 * KSYNC_LIST_POISON1/2) so that a use after ksync_list_del() faults.
 */
#ifndef KSYNC_LIST_H
#define KSYNC_LIST_H

#include <ksync/compiler.h>

#include <stdbool.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/** struct ksync_list_head - list head, and the link embedded in every entry. */
struct ksync_list_head {
	struct ksync_list_head *next, *prev;
};

#define KSYNC_LIST_POISON1 ((struct ksync_list_head *)(uintptr_t)0x100)
#define KSYNC_LIST_POISON2 ((struct ksync_list_head *)(uintptr_t)0x122)

/** KSYNC_LIST_HEAD_INIT() - initialiser of an empty list named @name. */
#define KSYNC_LIST_HEAD_INIT(name) { &(name), &(name) }
/** KSYNC_LIST_HEAD() - define @name as an empty list. */
#define KSYNC_LIST_HEAD(name) struct ksync_list_head name = KSYNC_LIST_HEAD_INIT(name)

/** ksync_init_list_head() - make @list empty. Publishes next before prev. */
static inline void ksync_init_list_head(struct ksync_list_head *list)
{
	KSYNC_WRITE_ONCE(list->next, list);
	KSYNC_WRITE_ONCE(list->prev, list);
}

/* Link @entry between two known consecutive entries. */
static inline void ksync__list_add(struct ksync_list_head *entry, struct ksync_list_head *prev,
				   struct ksync_list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	KSYNC_WRITE_ONCE(prev->next, entry);
}

/** ksync_list_add() - insert @entry right after @head (stack order). */
static inline void ksync_list_add(struct ksync_list_head *entry, struct ksync_list_head *head)
{
	ksync__list_add(entry, head, head->next);
}

/** ksync_list_add_tail() - insert @entry right before @head (queue order). */
static inline void ksync_list_add_tail(struct ksync_list_head *entry, struct ksync_list_head *head)
{
	ksync__list_add(entry, head->prev, head);
}

/* Join @prev and @next, dropping whatever was between them. */
static inline void ksync__list_del(struct ksync_list_head *prev, struct ksync_list_head *next)
{
	next->prev = prev;
	KSYNC_WRITE_ONCE(prev->next, next);
}

static inline void ksync__list_del_entry(struct ksync_list_head *entry)
{
	ksync__list_del(entry->prev, entry->next);
}

/**
 * ksync_list_del() - unlink @entry from its list.
 *
 * @entry is left in an undefined state (poisoned in KSYNC_DEBUG builds);
 * ksync_list_empty() on it is not meaningful. Use ksync_list_del_init() to
 * reuse it.
 */
static inline void ksync_list_del(struct ksync_list_head *entry)
{
	ksync__list_del_entry(entry);
#if KSYNC_DEBUG_ENABLED
	entry->next = KSYNC_LIST_POISON1;
	entry->prev = KSYNC_LIST_POISON2;
#endif
}

/** ksync_list_del_init() - unlink @entry and make it an empty list. */
static inline void ksync_list_del_init(struct ksync_list_head *entry)
{
	ksync__list_del_entry(entry);
	ksync_init_list_head(entry);
}

/** ksync_list_replace() - put @new_entry where @old is; @old is left as it was. */
static inline void ksync_list_replace(struct ksync_list_head *old, struct ksync_list_head *new_entry)
{
	new_entry->next = old->next;
	new_entry->next->prev = new_entry;
	new_entry->prev = old->prev;
	KSYNC_WRITE_ONCE(new_entry->prev->next, new_entry);
}

/** ksync_list_replace_init() - ksync_list_replace(), then make @old empty. */
static inline void ksync_list_replace_init(struct ksync_list_head *old,
					   struct ksync_list_head *new_entry)
{
	ksync_list_replace(old, new_entry);
	ksync_init_list_head(old);
}

/** ksync_list_move() - move @entry from its list to right after @head. */
static inline void ksync_list_move(struct ksync_list_head *entry, struct ksync_list_head *head)
{
	ksync__list_del_entry(entry);
	ksync_list_add(entry, head);
}

/** ksync_list_move_tail() - move @entry from its list to right before @head. */
static inline void ksync_list_move_tail(struct ksync_list_head *entry, struct ksync_list_head *head)
{
	ksync__list_del_entry(entry);
	ksync_list_add_tail(entry, head);
}

/** ksync_list_is_head() - whether @entry is the head @head itself. */
static inline bool ksync_list_is_head(const struct ksync_list_head *entry,
				      const struct ksync_list_head *head)
{
	return entry == head;
}

/** ksync_list_is_last() - whether @entry is the last entry of @head. */
static inline bool ksync_list_is_last(const struct ksync_list_head *entry,
				      const struct ksync_list_head *head)
{
	return entry->next == head;
}

/**
 * ksync_list_empty() - whether @head has no entries.
 *
 * Reads head->next once; a lockless caller gets a hint that may be stale by
 * the time it acts on it.
 */
static inline bool ksync_list_empty(const struct ksync_list_head *head)
{
	return KSYNC_READ_ONCE(head->next) == head;
}

/** ksync_list_is_singular() - whether @head has exactly one entry. */
static inline bool ksync_list_is_singular(const struct ksync_list_head *head)
{
	return !ksync_list_empty(head) && head->next == head->prev;
}

static inline void ksync__list_splice(const struct ksync_list_head *list,
				      struct ksync_list_head *prev, struct ksync_list_head *next)
{
	struct ksync_list_head *first = list->next;
	struct ksync_list_head *last = list->prev;

	first->prev = prev;
	last->next = next;
	next->prev = last;
	KSYNC_WRITE_ONCE(prev->next, first);
}

/**
 * ksync_list_splice() - join @list's entries right after @head.
 * @list itself is left pointing at the moved entries; reinitialise it (or use
 * ksync_list_splice_init()) before reuse.
 */
static inline void ksync_list_splice(const struct ksync_list_head *list, struct ksync_list_head *head)
{
	if (!ksync_list_empty(list))
		ksync__list_splice(list, head, head->next);
}

/** ksync_list_splice_tail() - join @list's entries right before @head. */
static inline void ksync_list_splice_tail(const struct ksync_list_head *list,
					  struct ksync_list_head *head)
{
	if (!ksync_list_empty(list))
		ksync__list_splice(list, head->prev, head);
}

/** ksync_list_splice_init() - ksync_list_splice(), then make @list empty. */
static inline void ksync_list_splice_init(struct ksync_list_head *list, struct ksync_list_head *head)
{
	if (!ksync_list_empty(list)) {
		ksync__list_splice(list, head, head->next);
		ksync_init_list_head(list);
	}
}

/** ksync_list_splice_tail_init() - ksync_list_splice_tail(), then make @list empty. */
static inline void ksync_list_splice_tail_init(struct ksync_list_head *list,
					       struct ksync_list_head *head)
{
	if (!ksync_list_empty(list)) {
		ksync__list_splice(list, head->prev, head);
		ksync_init_list_head(list);
	}
}

/** ksync_list_entry() - the structure of type @type embedding @ptr as @member. */
#define ksync_list_entry(ptr, type, member) ksync_container_of(ptr, type, member)
/** ksync_list_first_entry() - first entry of a list that must not be empty. */
#define ksync_list_first_entry(head, type, member) ksync_list_entry((head)->next, type, member)
/** ksync_list_last_entry() - last entry of a list that must not be empty. */
#define ksync_list_last_entry(head, type, member) ksync_list_entry((head)->prev, type, member)
/** ksync_list_first_entry_or_null() - first entry, or NULL when the list is empty. */
#define ksync_list_first_entry_or_null(head, type, member)                     \
	__extension__({                                                        \
		struct ksync_list_head *ksync__fe_h = (head);                  \
		struct ksync_list_head *ksync__fe_n = KSYNC_READ_ONCE(ksync__fe_h->next); \
		ksync__fe_n != ksync__fe_h ? ksync_list_entry(ksync__fe_n, type, member) : NULL; \
	})
/** ksync_list_next_entry() - the entry after @pos (of @pos's type). */
#define ksync_list_next_entry(pos, member)                                     \
	ksync_list_entry((pos)->member.next, __typeof__(*(pos)), member)
/** ksync_list_prev_entry() - the entry before @pos. */
#define ksync_list_prev_entry(pos, member)                                     \
	ksync_list_entry((pos)->member.prev, __typeof__(*(pos)), member)
/** ksync_list_entry_is_head() - whether entry cursor @pos stands on @head. */
#define ksync_list_entry_is_head(pos, head, member) (&(pos)->member == (head))

/** ksync_list_for_each() - walk the links of @head with cursor @pos. */
#define ksync_list_for_each(pos, head)                                         \
	for ((pos) = (head)->next; !ksync_list_is_head((pos), (head)); (pos) = (pos)->next)
/** ksync_list_for_each_safe() - as ksync_list_for_each(); @pos may be deleted. */
#define ksync_list_for_each_safe(pos, n, head)                                 \
	for ((pos) = (head)->next, (n) = (pos)->next; !ksync_list_is_head((pos), (head)); \
	     (pos) = (n), (n) = (pos)->next)
/** ksync_list_for_each_entry() - walk the entries of @head with typed cursor @pos. */
#define ksync_list_for_each_entry(pos, head, member)                           \
	for ((pos) = ksync_list_first_entry(head, __typeof__(*(pos)), member); \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = ksync_list_next_entry(pos, member))
/** ksync_list_for_each_entry_reverse() - walk the entries backwards. */
#define ksync_list_for_each_entry_reverse(pos, head, member)                   \
	for ((pos) = ksync_list_last_entry(head, __typeof__(*(pos)), member);  \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = ksync_list_prev_entry(pos, member))
/** ksync_list_for_each_entry_safe() - walk entries; @pos may be deleted (@n is the lookahead). */
#define ksync_list_for_each_entry_safe(pos, n, head, member)                   \
	for ((pos) = ksync_list_first_entry(head, __typeof__(*(pos)), member), \
	    (n) = ksync_list_next_entry(pos, member);                          \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = (n), (n) = ksync_list_next_entry(n, member))
/** ksync_list_for_each_entry_continue() - walk on from the entry after @pos. */
#define ksync_list_for_each_entry_continue(pos, head, member)                  \
	for ((pos) = ksync_list_next_entry(pos, member);                       \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = ksync_list_next_entry(pos, member))

KSYNC_EXTERN_C_END

#endif /* KSYNC_LIST_H */
