/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/list.h - the kernel's circular doubly linked list and hash list
 *
 * A &struct ksync_list_head is both the list head and the link embedded in
 * each entry. An empty list points at itself. None of these operations is
 * safe against concurrent modification or lockless readers; for lists walked
 * under SRCU use <ksync/rculist.h>. The stores that link and unlink use
 * KSYNC_WRITE_ONCE() where a lockless reader of the same list (an RCU walker,
 * or ksync_list_empty() used as a hint) may observe them, as in the kernel.
 * The few operations meant for a lockless observer say so and give their
 * ordering: ksync_list_del_init_careful() with ksync_list_empty_careful(),
 * ksync_list_add_tail_release() with ksync_list_first_entry_or_null_acquire().
 *
 * Deleted entries are poisoned, as in the kernel: ksync_list_del() leaves
 * next/prev set to KSYNC_LIST_POISON1/2 and ksync_hlist_del() leaves
 * next/pprev set to KSYNC_HLIST_POISON1/2 (the same two addresses, in the
 * first page, which is never mapped), so that a use after deletion faults.
 * The _init forms leave the entry empty (ksync_list_del_init()) or unhashed
 * (ksync_hlist_del_init()) instead, ready for reuse.
 *
 * Hash lists (&struct ksync_hlist_head, one pointer per head; the tail is not
 * reachable in O(1)) are at the end; their RCU forms are in <ksync/rculist.h>.
 *
 * Walkers: a walk with a _safe form may delete (or move away) the entry it
 * stands on; any other change to the list during a walk is the caller's
 * problem, as in the kernel.
 */
#ifndef KSYNC_LIST_H
#define KSYNC_LIST_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/** struct ksync_list_head - list head, and the link embedded in every entry. */
struct ksync_list_head {
	struct ksync_list_head *next, *prev;
};

/*
 * What ksync_list_del() leaves in next and prev: addresses in the first page,
 * which no mapping uses, so that a use after deletion faults at once.
 */
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

/**
 * ksync_list_add_tail_release() - insert @entry right before @head, publishing it.
 * @entry: the entry to add; its links and payload are written before it is published
 * @head: the list head
 *
 * As ksync_list_add_tail(), but the store that makes @entry reachable from
 * the previous entry (its ->next) is a store-release. For a queue whose
 * entries are walked forwards locklessly, the reader fetching ->next with an
 * acquire (ksync_list_first_entry_or_null_acquire(), ksync_smp_load_acquire())
 * sees everything written to @entry before this call. Updaters are still
 * serialised by the caller.
 */
static inline void ksync_list_add_tail_release(struct ksync_list_head *entry,
					       struct ksync_list_head *head)
{
	struct ksync_list_head *prev = head->prev;

	entry->next = head;
	entry->prev = prev;
	head->prev = entry;
	ksync_smp_store_release(&prev->next, entry);
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
 * @entry: an entry on a list
 *
 * @entry is left poisoned (next = KSYNC_LIST_POISON1, prev =
 * KSYNC_LIST_POISON2): it is on no list, ksync_list_empty() on it is not
 * meaningful and following its links faults. Use ksync_list_del_init() to
 * reuse it.
 */
static inline void ksync_list_del(struct ksync_list_head *entry)
{
	ksync__list_del_entry(entry);
	entry->next = KSYNC_LIST_POISON1;
	entry->prev = KSYNC_LIST_POISON2;
}

/** ksync_list_del_init() - unlink @entry and make it an empty list. */
static inline void ksync_list_del_init(struct ksync_list_head *entry)
{
	ksync__list_del_entry(entry);
	ksync_init_list_head(entry);
}

/**
 * ksync_list_del_init_careful() - ksync_list_del_init() for a lockless observer.
 * @entry: an entry on a list
 *
 * Unlinks @entry and makes it empty, storing ->prev first and then ->next
 * with a store-release. Pairs with ksync_list_empty_careful(): an observer
 * that finds @entry empty with it also sees every memory access the deleting
 * thread made before this call.
 */
static inline void ksync_list_del_init_careful(struct ksync_list_head *entry)
{
	ksync__list_del_entry(entry);
	KSYNC_WRITE_ONCE(entry->prev, entry);
	ksync_smp_store_release(&entry->next, entry);
}

/**
 * ksync_list_replace() - put @new_entry where @old is; @old is left as it was.
 * @old: the entry to replace (if it is an empty list head, @new_entry becomes one)
 * @new_entry: its replacement, on no list
 */
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

/**
 * ksync_list_swap() - exchange the places of @entry1 and @entry2.
 * @entry1: an entry; @entry2 takes its place
 * @entry2: another entry (of the same list or another one); @entry1 takes its place
 *
 * Neighbours are swapped correctly. The two must be distinct, and neither
 * may be the head of the other's list.
 */
static inline void ksync_list_swap(struct ksync_list_head *entry1, struct ksync_list_head *entry2)
{
	struct ksync_list_head *pos = entry2->prev;

	ksync_list_del(entry2);
	ksync_list_replace(entry1, entry2);
	if (pos == entry1)
		pos = entry2;
	ksync_list_add(entry1, pos);
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

/**
 * ksync_list_bulk_move_tail() - move the run @first..@last to right before @head.
 * @head: the list head the run goes in front of (its new tail)
 * @first: the first entry of the run
 * @last: the last entry of the run; may be @first
 *
 * @first through @last (inclusive, in list order) keep their order. The
 * kernel's contract: all three belong to the same list, and @head is not
 * inside the run.
 */
static inline void ksync_list_bulk_move_tail(struct ksync_list_head *head,
					     struct ksync_list_head *first,
					     struct ksync_list_head *last)
{
	first->prev->next = last->next;
	last->next->prev = first->prev;

	head->prev->next = first;
	first->prev = head->prev;

	last->next = head;
	head->prev = last;
}

/** ksync_list_is_first() - whether @entry is the first entry of @head. */
static inline bool ksync_list_is_first(const struct ksync_list_head *entry,
				       const struct ksync_list_head *head)
{
	return entry->prev == head;
}

/** ksync_list_is_last() - whether @entry is the last entry of @head. */
static inline bool ksync_list_is_last(const struct ksync_list_head *entry,
				      const struct ksync_list_head *head)
{
	return entry->next == head;
}

/** ksync_list_is_head() - whether @entry is the head @head itself. */
static inline bool ksync_list_is_head(const struct ksync_list_head *entry,
				      const struct ksync_list_head *head)
{
	return entry == head;
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

/**
 * ksync_list_empty_careful() - whether @head is empty and not being changed.
 * @head: the list (or entry) to test
 *
 * True only when both ->next and ->prev point at @head, so that a half-done
 * ksync_list_del_init() on another thread is not taken for empty. ->next is
 * loaded with an acquire: pairs with ksync_list_del_init_careful(). Without
 * a lock this is only safe when the one concurrent change is @head being
 * deleted with ksync_list_del_init()/_careful() (an entry that another thread
 * may re-add must not be tested this way).
 */
static inline bool ksync_list_empty_careful(const struct ksync_list_head *head)
{
	struct ksync_list_head *next = ksync_smp_load_acquire(&head->next);

	return next == head && next == KSYNC_READ_ONCE(head->prev);
}

/**
 * ksync_list_rotate_left() - move the first entry of @head to its tail.
 * @head: the list; an empty list is left as it is
 */
static inline void ksync_list_rotate_left(struct ksync_list_head *head)
{
	if (!ksync_list_empty(head))
		ksync_list_move_tail(head->next, head);
}

/**
 * ksync_list_rotate_to_front() - rotate @head so that @entry becomes its first entry.
 * @entry: an entry of @head (the entries before it go to the tail, in order)
 * @head: the list
 *
 * Done by moving the head itself to just before @entry.
 */
static inline void ksync_list_rotate_to_front(struct ksync_list_head *entry,
					      struct ksync_list_head *head)
{
	ksync_list_move_tail(head, entry);
}

/** ksync_list_is_singular() - whether @head has exactly one entry. */
static inline bool ksync_list_is_singular(const struct ksync_list_head *head)
{
	return !ksync_list_empty(head) && head->next == head->prev;
}

/* Move @head's entries up to and including @entry (not the head) to @list. */
static inline void ksync__list_cut_position(struct ksync_list_head *list,
					    struct ksync_list_head *head,
					    struct ksync_list_head *entry)
{
	struct ksync_list_head *new_first = entry->next;

	list->next = head->next;
	list->next->prev = list;
	list->prev = entry;
	entry->next = list;
	head->next = new_first;
	new_first->prev = head;
}

/**
 * ksync_list_cut_position() - move the front of @head, up to and including @entry, to @list.
 * @list: receives the entries; its old contents are overwritten (not freed)
 * @head: the list to cut
 * @entry: an entry of @head, or @head itself
 *
 * The kernel's edge cases: when @head is empty nothing happens (and @list is
 * left untouched); when @entry is @head, nothing is moved and @list is made
 * empty; when @head has one entry and @entry is neither it nor @head, nothing
 * happens. Otherwise @list receives the cut part and @head keeps the rest.
 */
static inline void ksync_list_cut_position(struct ksync_list_head *list,
					   struct ksync_list_head *head,
					   struct ksync_list_head *entry)
{
	if (ksync_list_empty(head))
		return;
	if (ksync_list_is_singular(head) && !ksync_list_is_head(entry, head) && entry != head->next)
		return;
	if (ksync_list_is_head(entry, head))
		ksync_init_list_head(list);
	else
		ksync__list_cut_position(list, head, entry);
}

/**
 * ksync_list_cut_before() - move the front of @head, up to but excluding @entry, to @list.
 * @list: receives the entries; its old contents are overwritten (not freed)
 * @head: the list to cut
 * @entry: an entry of @head, or @head itself
 *
 * When @entry is the first entry (or @head of an empty list), nothing is
 * moved and @list is made empty; when @entry is @head, every entry moves to
 * @list and @head is left empty (unlike ksync_list_cut_position(), where
 * @entry == @head moves nothing).
 */
static inline void ksync_list_cut_before(struct ksync_list_head *list,
					 struct ksync_list_head *head,
					 struct ksync_list_head *entry)
{
	if (head->next == entry) {
		ksync_init_list_head(list);
		return;
	}
	list->next = head->next;
	list->next->prev = list;
	list->prev = entry->prev;
	list->prev->next = list;
	head->next = entry;
	entry->prev = head;
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

/** ksync_list_count_nodes() - the number of entries of @head (a full walk: O(n)). */
static inline size_t ksync_list_count_nodes(const struct ksync_list_head *head)
{
	const struct ksync_list_head *pos;
	size_t count = 0;

	for (pos = head->next; pos != head; pos = pos->next)
		count++;
	return count;
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
/**
 * ksync_list_first_entry_or_null_acquire() - first entry or NULL, loading ->next with an acquire.
 *
 * Pairs with ksync_list_add_tail_release() (or any store-release of the
 * link): the entry returned is seen as it was when it was published.
 */
#define ksync_list_first_entry_or_null_acquire(head, type, member)             \
	__extension__({                                                        \
		struct ksync_list_head *ksync__fa_h = (head);                  \
		struct ksync_list_head *ksync__fa_n = ksync_smp_load_acquire(&ksync__fa_h->next); \
		ksync__fa_n != ksync__fa_h ? ksync_list_entry(ksync__fa_n, type, member) : NULL; \
	})
/** ksync_list_last_entry_or_null() - last entry, or NULL when the list is empty. */
#define ksync_list_last_entry_or_null(head, type, member)                      \
	__extension__({                                                        \
		struct ksync_list_head *ksync__le_h = (head);                  \
		struct ksync_list_head *ksync__le_p = KSYNC_READ_ONCE(ksync__le_h->prev); \
		ksync__le_p != ksync__le_h ? ksync_list_entry(ksync__le_p, type, member) : NULL; \
	})
/** ksync_list_next_entry() - the entry after @pos (of @pos's type). */
#define ksync_list_next_entry(pos, member)                                     \
	ksync_list_entry((pos)->member.next, __typeof__(*(pos)), member)
/** ksync_list_prev_entry() - the entry before @pos. */
#define ksync_list_prev_entry(pos, member)                                     \
	ksync_list_entry((pos)->member.prev, __typeof__(*(pos)), member)
/**
 * ksync_list_next_entry_circular() - the entry after @pos, wrapping from the last to the first.
 * @pos: an entry of @head (which is therefore not empty)
 * @head: the list head
 * @member: the name of the link within @pos's type
 */
#define ksync_list_next_entry_circular(pos, head, member)                      \
	(ksync_list_is_last(&(pos)->member, head)                              \
		 ? ksync_list_first_entry(head, __typeof__(*(pos)), member)    \
		 : ksync_list_next_entry(pos, member))
/** ksync_list_prev_entry_circular() - the entry before @pos, wrapping from the first to the last. */
#define ksync_list_prev_entry_circular(pos, head, member)                      \
	(ksync_list_is_first(&(pos)->member, head)                             \
		 ? ksync_list_last_entry(head, __typeof__(*(pos)), member)     \
		 : ksync_list_prev_entry(pos, member))
/** ksync_list_entry_is_head() - whether entry cursor @pos stands on @head. */
#define ksync_list_entry_is_head(pos, head, member) (&(pos)->member == (head))
/**
 * ksync_list_prepare_entry() - a start point for ksync_list_for_each_entry_continue().
 *
 * @pos itself when it is not NULL, else the (fake) entry of @head, so that
 * the walk continues from the first entry. Evaluates @pos once.
 */
#define ksync_list_prepare_entry(pos, head, member)                            \
	__extension__((pos) ?: ksync_list_entry(head, __typeof__(*(pos)), member))

/** ksync_list_for_each() - walk the links of @head with cursor @pos. */
#define ksync_list_for_each(pos, head)                                         \
	for ((pos) = (head)->next; !ksync_list_is_head((pos), (head)); (pos) = (pos)->next)
/** ksync_list_for_each_continue() - walk on from the link after @pos. */
#define ksync_list_for_each_continue(pos, head)                                \
	for ((pos) = (pos)->next; !ksync_list_is_head((pos), (head)); (pos) = (pos)->next)
/** ksync_list_for_each_prev() - walk the links of @head backwards. */
#define ksync_list_for_each_prev(pos, head)                                    \
	for ((pos) = (head)->prev; !ksync_list_is_head((pos), (head)); (pos) = (pos)->prev)
/** ksync_list_for_each_safe() - as ksync_list_for_each(); @pos may be deleted. */
#define ksync_list_for_each_safe(pos, n, head)                                 \
	for ((pos) = (head)->next, (n) = (pos)->next; !ksync_list_is_head((pos), (head)); \
	     (pos) = (n), (n) = (pos)->next)
/** ksync_list_for_each_prev_safe() - as ksync_list_for_each_prev(); @pos may be deleted. */
#define ksync_list_for_each_prev_safe(pos, n, head)                            \
	for ((pos) = (head)->prev, (n) = (pos)->prev; !ksync_list_is_head((pos), (head)); \
	     (pos) = (n), (n) = (pos)->prev)
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
/** ksync_list_for_each_entry_continue() - walk on from the entry after @pos. */
#define ksync_list_for_each_entry_continue(pos, head, member)                  \
	for ((pos) = ksync_list_next_entry(pos, member);                       \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = ksync_list_next_entry(pos, member))
/** ksync_list_for_each_entry_continue_reverse() - walk backwards from the entry before @pos. */
#define ksync_list_for_each_entry_continue_reverse(pos, head, member)          \
	for ((pos) = ksync_list_prev_entry(pos, member);                       \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = ksync_list_prev_entry(pos, member))
/** ksync_list_for_each_entry_from() - walk on from @pos itself (none if @pos is the head). */
#define ksync_list_for_each_entry_from(pos, head, member)                      \
	for (; !ksync_list_entry_is_head(pos, head, member);                   \
	     (pos) = ksync_list_next_entry(pos, member))
/** ksync_list_for_each_entry_from_reverse() - walk backwards from @pos itself. */
#define ksync_list_for_each_entry_from_reverse(pos, head, member)              \
	for (; !ksync_list_entry_is_head(pos, head, member);                   \
	     (pos) = ksync_list_prev_entry(pos, member))
/** ksync_list_for_each_entry_safe() - walk entries; @pos may be deleted (@n is the lookahead). */
#define ksync_list_for_each_entry_safe(pos, n, head, member)                   \
	for ((pos) = ksync_list_first_entry(head, __typeof__(*(pos)), member), \
	    (n) = ksync_list_next_entry(pos, member);                          \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = (n), (n) = ksync_list_next_entry(n, member))
/** ksync_list_for_each_entry_safe_continue() - as _continue; @pos may be deleted. */
#define ksync_list_for_each_entry_safe_continue(pos, n, head, member)          \
	for ((pos) = ksync_list_next_entry(pos, member),                       \
	    (n) = ksync_list_next_entry(pos, member);                          \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = (n), (n) = ksync_list_next_entry(n, member))
/** ksync_list_for_each_entry_safe_from() - as _from; @pos may be deleted. */
#define ksync_list_for_each_entry_safe_from(pos, n, head, member)              \
	for ((n) = ksync_list_next_entry(pos, member);                         \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = (n), (n) = ksync_list_next_entry(n, member))
/** ksync_list_for_each_entry_safe_reverse() - walk backwards; @pos may be deleted. */
#define ksync_list_for_each_entry_safe_reverse(pos, n, head, member)           \
	for ((pos) = ksync_list_last_entry(head, __typeof__(*(pos)), member),  \
	    (n) = ksync_list_prev_entry(pos, member);                          \
	     !ksync_list_entry_is_head(pos, head, member);                     \
	     (pos) = (n), (n) = ksync_list_prev_entry(n, member))
/**
 * ksync_list_safe_reset_next() - refresh the lookahead @n of a _safe walk from @pos.
 *
 * For a _safe walk whose body let go of the list's lock: once it is retaken,
 * and provided @pos itself stayed on the list (pinned), reload @n before the
 * iteration ends, since the old lookahead may have been deleted meanwhile.
 */
#define ksync_list_safe_reset_next(pos, n, member) ((n) = ksync_list_next_entry(pos, member))

/* ======================================================================== */
/* Hash lists                                                               */

struct ksync_hlist_node;

/** struct ksync_hlist_head - head of a hash list (one pointer; NULL when empty). */
struct ksync_hlist_head {
	struct ksync_hlist_node *first;
};

/**
 * struct ksync_hlist_node - link of a hash-list entry.
 * @next: the next node, or NULL
 * @pprev: the pointer that points at this node (the head's @first or the
 *	previous node's @next); NULL while the node is unhashed (on no list)
 */
struct ksync_hlist_node {
	struct ksync_hlist_node *next, **pprev;
};

/* What ksync_hlist_del() leaves in next and pprev: KSYNC_LIST_POISON1/2's addresses. */
#define KSYNC_HLIST_POISON1 ((struct ksync_hlist_node *)(uintptr_t)0x100)
#define KSYNC_HLIST_POISON2 ((struct ksync_hlist_node **)(uintptr_t)0x122)

/** KSYNC_HLIST_HEAD_INIT - initialiser of an empty hash list. */
#define KSYNC_HLIST_HEAD_INIT { NULL }
/** KSYNC_HLIST_HEAD() - define @name as an empty hash list. */
#define KSYNC_HLIST_HEAD(name) struct ksync_hlist_head name = KSYNC_HLIST_HEAD_INIT

/** ksync_init_hlist_head() - make @h empty. */
static inline void ksync_init_hlist_head(struct ksync_hlist_head *h)
{
	KSYNC_WRITE_ONCE(h->first, (struct ksync_hlist_node *)NULL);
}

/** ksync_init_hlist_node() - mark @n as unhashed (on no list). */
static inline void ksync_init_hlist_node(struct ksync_hlist_node *n)
{
	n->next = NULL;
	n->pprev = NULL;
}

/**
 * ksync_hlist_unhashed() - whether @n is on no list.
 * @n: the node
 *
 * True after ksync_init_hlist_node(), ksync_hlist_del_init() and
 * ksync_hlist_del_init_rcu(); NOT after ksync_hlist_del() or
 * ksync_hlist_del_rcu(), which leave @n poisoned (and this test false).
 */
static inline bool ksync_hlist_unhashed(const struct ksync_hlist_node *n)
{
	return !KSYNC_READ_ONCE(n->pprev);
}

/**
 * ksync_hlist_unhashed_lockless() - ksync_hlist_unhashed() for a caller without the lock.
 * @n: the node
 *
 * Loads ->pprev once, untorn; pairs with the KSYNC_WRITE_ONCE() stores of
 * ->pprev in the add and delete operations. The answer may be stale at once.
 */
static inline bool ksync_hlist_unhashed_lockless(const struct ksync_hlist_node *n)
{
	return !KSYNC_READ_ONCE(n->pprev);
}

/**
 * ksync_hlist_empty() - whether @h has no node.
 * @h: the hash list
 *
 * Loads ->first once; for a lockless caller (an RCU reader, say) a hint
 * that may be stale at once.
 */
static inline bool ksync_hlist_empty(const struct ksync_hlist_head *h)
{
	return !KSYNC_READ_ONCE(h->first);
}

/* Unlink @n, leaving its own links as they were. */
static inline void ksync__hlist_del(struct ksync_hlist_node *n)
{
	struct ksync_hlist_node *next = n->next;
	struct ksync_hlist_node **pprev = n->pprev;

	KSYNC_WRITE_ONCE(*pprev, next);
	if (next)
		KSYNC_WRITE_ONCE(next->pprev, pprev);
}

/**
 * ksync_hlist_del() - unlink @n from its hash list.
 * @n: a node on a list (not an unhashed one: that faults)
 *
 * @n is left poisoned (next = KSYNC_HLIST_POISON1, pprev =
 * KSYNC_HLIST_POISON2) and therefore NOT unhashed: ksync_hlist_unhashed()
 * on it is false. Use ksync_hlist_del_init() to reuse it.
 */
static inline void ksync_hlist_del(struct ksync_hlist_node *n)
{
	ksync__hlist_del(n);
	n->next = KSYNC_HLIST_POISON1;
	n->pprev = KSYNC_HLIST_POISON2;
}

/**
 * ksync_hlist_del_init() - unlink @n if it is on a list, and leave it unhashed.
 * @n: a node, on a list or unhashed (then nothing happens)
 *
 * Afterwards ksync_hlist_unhashed(@n) is true and @n->next is NULL.
 */
static inline void ksync_hlist_del_init(struct ksync_hlist_node *n)
{
	if (!ksync_hlist_unhashed(n)) {
		ksync__hlist_del(n);
		ksync_init_hlist_node(n);
	}
}

/**
 * ksync_hlist_add_head() - insert @n at the front of @h.
 * @n: the node, unhashed
 * @h: the hash list
 *
 * Every link is written with KSYNC_WRITE_ONCE(), for lockless
 * ksync_hlist_empty()/ksync_hlist_unhashed_lockless() callers; readers that
 * walk the list need ksync_hlist_add_head_rcu() instead.
 */
static inline void ksync_hlist_add_head(struct ksync_hlist_node *n, struct ksync_hlist_head *h)
{
	struct ksync_hlist_node *first = h->first;

	KSYNC_WRITE_ONCE(n->next, first);
	if (first)
		KSYNC_WRITE_ONCE(first->pprev, &n->next);
	KSYNC_WRITE_ONCE(h->first, n);
	KSYNC_WRITE_ONCE(n->pprev, &h->first);
}

/**
 * ksync_hlist_add_before() - insert @n right before @next.
 * @n: the node to add, unhashed
 * @next: a node on a list (not NULL); may be the first one
 */
static inline void ksync_hlist_add_before(struct ksync_hlist_node *n,
					  struct ksync_hlist_node *next)
{
	KSYNC_WRITE_ONCE(n->pprev, next->pprev);
	KSYNC_WRITE_ONCE(n->next, next);
	KSYNC_WRITE_ONCE(next->pprev, &n->next);
	KSYNC_WRITE_ONCE(*n->pprev, n);
}

/**
 * ksync_hlist_add_behind() - insert @n right after @prev.
 * @n: the node to add, unhashed
 * @prev: a node on a list (not NULL); may be the last one
 */
static inline void ksync_hlist_add_behind(struct ksync_hlist_node *n,
					  struct ksync_hlist_node *prev)
{
	KSYNC_WRITE_ONCE(n->next, prev->next);
	KSYNC_WRITE_ONCE(prev->next, n);
	KSYNC_WRITE_ONCE(n->pprev, &prev->next);
	if (n->next)
		KSYNC_WRITE_ONCE(n->next->pprev, &n->next);
}

/**
 * ksync_hlist_add_fake() - make @n a headless list of its own.
 * @n: the node
 *
 * @n becomes its own predecessor (->pprev = &@n->next), so that it counts as
 * hashed and ksync_hlist_del()/ksync_hlist_del_init() on it work (and change
 * nothing but @n) although it is on no list. ->next is not touched.
 */
static inline void ksync_hlist_add_fake(struct ksync_hlist_node *n)
{
	n->pprev = &n->next;
}

/** ksync_hlist_fake() - whether @n was made a headless list by ksync_hlist_add_fake(). */
static inline bool ksync_hlist_fake(const struct ksync_hlist_node *n)
{
	return n->pprev == &n->next;
}

/**
 * ksync_hlist_is_singular_node() - whether @n is the one node of @h.
 * @n: a node
 * @h: a hash list
 *
 * Looks at @n only (whether it is the last node and @h's first), not at @h.
 */
static inline bool ksync_hlist_is_singular_node(const struct ksync_hlist_node *n,
						const struct ksync_hlist_head *h)
{
	return !n->next && n->pprev == &h->first;
}

/**
 * ksync_hlist_move_list() - move every node of @old to @new_head.
 * @old: the source; left empty
 * @new_head: the destination; its old nodes are dropped (not freed), so it
 *	should be empty
 */
static inline void ksync_hlist_move_list(struct ksync_hlist_head *old,
					 struct ksync_hlist_head *new_head)
{
	new_head->first = old->first;
	if (new_head->first)
		new_head->first->pprev = &new_head->first;
	old->first = NULL;
}

/**
 * ksync_hlist_splice_init() - move every node of @from to the front of @to.
 * @from: the source, with at least one node; left empty
 * @last: the last node of @from
 * @to: the destination, possibly empty; its nodes follow @last
 */
static inline void ksync_hlist_splice_init(struct ksync_hlist_head *from,
					   struct ksync_hlist_node *last,
					   struct ksync_hlist_head *to)
{
	if (to->first)
		to->first->pprev = &last->next;
	last->next = to->first;
	to->first = from->first;
	from->first->pprev = &to->first;
	from->first = NULL;
}

/** ksync_hlist_count_nodes() - the number of nodes of @head (a full walk). */
static inline size_t ksync_hlist_count_nodes(const struct ksync_hlist_head *head)
{
	const struct ksync_hlist_node *pos;
	size_t count = 0;

	for (pos = head->first; pos; pos = pos->next)
		count++;
	return count;
}

/** ksync_hlist_entry() - the entry of type @type embedding node @ptr as @member. */
#define ksync_hlist_entry(ptr, type, member) ksync_container_of(ptr, type, member)

/** ksync_hlist_entry_safe() - ksync_hlist_entry(), or NULL when @ptr is NULL. */
#define ksync_hlist_entry_safe(ptr, type, member)                              \
	__extension__({                                                        \
		struct ksync_hlist_node *ksync__he_p = (ptr);                  \
		ksync__he_p ? ksync_hlist_entry(ksync__he_p, type, member) : (type *)NULL; \
	})

/** ksync_hlist_for_each() - walk the nodes of @head with cursor @pos (NULL at the end). */
#define ksync_hlist_for_each(pos, head) for ((pos) = (head)->first; (pos); (pos) = (pos)->next)

/** ksync_hlist_for_each_safe() - as ksync_hlist_for_each(); @pos may be deleted (@n: lookahead). */
#define ksync_hlist_for_each_safe(pos, n, head)                                \
	for ((pos) = (head)->first; (pos) && ((n) = (pos)->next, 1); (pos) = (n))

/**
 * ksync_hlist_for_each_entry() - walk the entries of @head with typed cursor @pos.
 * @pos: the typed cursor; NULL after a complete walk
 * @head: the hash list
 * @member: the name of the &struct ksync_hlist_node within the entry type
 */
#define ksync_hlist_for_each_entry(pos, head, member)                          \
	for ((pos) = ksync_hlist_entry_safe((head)->first, __typeof__(*(pos)), member); \
	     (pos);                                                            \
	     (pos) = ksync_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))

/** ksync_hlist_for_each_entry_continue() - walk on from the entry after @pos. */
#define ksync_hlist_for_each_entry_continue(pos, member)                       \
	for ((pos) = ksync_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member); \
	     (pos);                                                            \
	     (pos) = ksync_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))

/** ksync_hlist_for_each_entry_from() - walk on from @pos itself (none if @pos is NULL). */
#define ksync_hlist_for_each_entry_from(pos, member)                           \
	for (; (pos);                                                          \
	     (pos) = ksync_hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))

/**
 * ksync_hlist_for_each_entry_safe() - walk entries; @pos may be deleted.
 * @pos: the typed cursor
 * @n: a &struct ksync_hlist_node pointer (not a typed one), the lookahead
 * @head: the hash list
 * @member: the name of the node within the entry type
 */
#define ksync_hlist_for_each_entry_safe(pos, n, head, member)                  \
	for ((pos) = ksync_hlist_entry_safe((head)->first, __typeof__(*(pos)), member); \
	     (pos) && ((n) = (pos)->member.next, 1);                           \
	     (pos) = ksync_hlist_entry_safe(n, __typeof__(*(pos)), member))

KSYNC_EXTERN_C_END

#endif /* KSYNC_LIST_H */
