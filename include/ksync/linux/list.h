/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/list.h> - the kernel's <linux/list.h> spellings on ksync.
 * struct list_head and its operations; struct hlist_head/hlist_node and the
 * plain (non-RCU) hash-list operations, which the kernel keeps here too.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/list.h>` line (see docs/porting.md).
 * list_for_each_rcu() is spelled in <ksync/linux/rculist.h>.
 */
#ifndef KSYNC_LINUX_LIST_H
#define KSYNC_LINUX_LIST_H

#include <ksync/list.h>

/* lists */
#define list_head ksync_list_head
#define LIST_HEAD_INIT(name) KSYNC_LIST_HEAD_INIT(name)
#define LIST_HEAD(name) KSYNC_LIST_HEAD(name)
/* void *, as in the kernel: comparable with list and hash-list links alike */
#define LIST_POISON1 ((void *)KSYNC_LIST_POISON1)
#define LIST_POISON2 ((void *)KSYNC_LIST_POISON2)
#define INIT_LIST_HEAD(list) ksync_init_list_head(list)
#define list_add ksync_list_add
#define list_add_tail ksync_list_add_tail
#define list_add_tail_release ksync_list_add_tail_release
#define list_del ksync_list_del
#define list_del_init ksync_list_del_init
#define list_del_init_careful ksync_list_del_init_careful
#define list_replace ksync_list_replace
#define list_replace_init ksync_list_replace_init
#define list_swap ksync_list_swap
#define list_move ksync_list_move
#define list_move_tail ksync_list_move_tail
#define list_bulk_move_tail ksync_list_bulk_move_tail
#define list_is_first ksync_list_is_first
#define list_is_last ksync_list_is_last
#define list_is_head ksync_list_is_head
#define list_empty ksync_list_empty
#define list_empty_careful ksync_list_empty_careful
#define list_rotate_left ksync_list_rotate_left
#define list_rotate_to_front ksync_list_rotate_to_front
#define list_is_singular ksync_list_is_singular
#define list_cut_position ksync_list_cut_position
#define list_cut_before ksync_list_cut_before
#define list_splice ksync_list_splice
#define list_splice_tail ksync_list_splice_tail
#define list_splice_init ksync_list_splice_init
#define list_splice_tail_init ksync_list_splice_tail_init
#define list_count_nodes ksync_list_count_nodes
#define list_entry(ptr, type, member) ksync_list_entry(ptr, type, member)
#define list_first_entry(head, type, member) ksync_list_first_entry(head, type, member)
#define list_last_entry(head, type, member) ksync_list_last_entry(head, type, member)
#define list_first_entry_or_null(head, type, member) ksync_list_first_entry_or_null(head, type, member)
#define list_first_entry_or_null_acquire(head, type, member)                   \
	ksync_list_first_entry_or_null_acquire(head, type, member)
#define list_last_entry_or_null(head, type, member) ksync_list_last_entry_or_null(head, type, member)
#define list_next_entry(pos, member) ksync_list_next_entry(pos, member)
#define list_prev_entry(pos, member) ksync_list_prev_entry(pos, member)
#define list_next_entry_circular(pos, head, member) ksync_list_next_entry_circular(pos, head, member)
#define list_prev_entry_circular(pos, head, member) ksync_list_prev_entry_circular(pos, head, member)
#define list_entry_is_head(pos, head, member) ksync_list_entry_is_head(pos, head, member)
#define list_prepare_entry(pos, head, member) ksync_list_prepare_entry(pos, head, member)
#define list_for_each(pos, head) ksync_list_for_each(pos, head)
#define list_for_each_continue(pos, head) ksync_list_for_each_continue(pos, head)
#define list_for_each_prev(pos, head) ksync_list_for_each_prev(pos, head)
#define list_for_each_safe(pos, n, head) ksync_list_for_each_safe(pos, n, head)
#define list_for_each_prev_safe(pos, n, head) ksync_list_for_each_prev_safe(pos, n, head)
#define list_for_each_entry(pos, head, member) ksync_list_for_each_entry(pos, head, member)
#define list_for_each_entry_reverse(pos, head, member) ksync_list_for_each_entry_reverse(pos, head, member)
#define list_for_each_entry_continue(pos, head, member) ksync_list_for_each_entry_continue(pos, head, member)
#define list_for_each_entry_continue_reverse(pos, head, member)               \
	ksync_list_for_each_entry_continue_reverse(pos, head, member)
#define list_for_each_entry_from(pos, head, member) ksync_list_for_each_entry_from(pos, head, member)
#define list_for_each_entry_from_reverse(pos, head, member)                    \
	ksync_list_for_each_entry_from_reverse(pos, head, member)
#define list_for_each_entry_safe(pos, n, head, member) ksync_list_for_each_entry_safe(pos, n, head, member)
#define list_for_each_entry_safe_continue(pos, n, head, member)               \
	ksync_list_for_each_entry_safe_continue(pos, n, head, member)
#define list_for_each_entry_safe_from(pos, n, head, member)                   \
	ksync_list_for_each_entry_safe_from(pos, n, head, member)
#define list_for_each_entry_safe_reverse(pos, n, head, member)                \
	ksync_list_for_each_entry_safe_reverse(pos, n, head, member)
#define list_safe_reset_next(pos, n, member) ksync_list_safe_reset_next(pos, n, member)

/* hash lists */
#define hlist_head ksync_hlist_head
#define hlist_node ksync_hlist_node
#define HLIST_HEAD_INIT KSYNC_HLIST_HEAD_INIT
#define HLIST_HEAD(name) KSYNC_HLIST_HEAD(name)
#define INIT_HLIST_HEAD(h) ksync_init_hlist_head(h)
#define INIT_HLIST_NODE(n) ksync_init_hlist_node(n)
#define hlist_unhashed ksync_hlist_unhashed
#define hlist_unhashed_lockless ksync_hlist_unhashed_lockless
#define hlist_empty ksync_hlist_empty
#define hlist_del ksync_hlist_del
#define hlist_del_init ksync_hlist_del_init
#define hlist_add_head ksync_hlist_add_head
#define hlist_add_before ksync_hlist_add_before
#define hlist_add_behind ksync_hlist_add_behind
#define hlist_add_fake ksync_hlist_add_fake
#define hlist_fake ksync_hlist_fake
#define hlist_is_singular_node ksync_hlist_is_singular_node
#define hlist_move_list ksync_hlist_move_list
#define hlist_splice_init ksync_hlist_splice_init
#define hlist_count_nodes ksync_hlist_count_nodes
#define hlist_entry(ptr, type, member) ksync_hlist_entry(ptr, type, member)
#define hlist_entry_safe(ptr, type, member) ksync_hlist_entry_safe(ptr, type, member)
#define hlist_for_each(pos, head) ksync_hlist_for_each(pos, head)
#define hlist_for_each_safe(pos, n, head) ksync_hlist_for_each_safe(pos, n, head)
#define hlist_for_each_entry(pos, head, member) ksync_hlist_for_each_entry(pos, head, member)
#define hlist_for_each_entry_continue(pos, member) ksync_hlist_for_each_entry_continue(pos, member)
#define hlist_for_each_entry_from(pos, member) ksync_hlist_for_each_entry_from(pos, member)
#define hlist_for_each_entry_safe(pos, n, head, member) ksync_hlist_for_each_entry_safe(pos, n, head, member)

#endif /* KSYNC_LINUX_LIST_H */
