/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/list.h> - the kernel's <linux/list.h> spellings on ksync.
 * struct list_head and its operations.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/list.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_LIST_H
#define KSYNC_LINUX_LIST_H

#include <ksync/list.h>

#define list_head ksync_list_head
#define LIST_HEAD_INIT(name) KSYNC_LIST_HEAD_INIT(name)
#define LIST_HEAD(name) KSYNC_LIST_HEAD(name)
#define LIST_POISON1 KSYNC_LIST_POISON1
#define LIST_POISON2 KSYNC_LIST_POISON2
#define INIT_LIST_HEAD(list) ksync_init_list_head(list)
#define list_add ksync_list_add
#define list_add_tail ksync_list_add_tail
#define list_del ksync_list_del
#define list_del_init ksync_list_del_init
#define list_replace ksync_list_replace
#define list_replace_init ksync_list_replace_init
#define list_move ksync_list_move
#define list_move_tail ksync_list_move_tail
#define list_is_head ksync_list_is_head
#define list_is_last ksync_list_is_last
#define list_empty ksync_list_empty
#define list_is_singular ksync_list_is_singular
#define list_splice ksync_list_splice
#define list_splice_tail ksync_list_splice_tail
#define list_splice_init ksync_list_splice_init
#define list_splice_tail_init ksync_list_splice_tail_init
#define list_entry(ptr, type, member) ksync_list_entry(ptr, type, member)
#define list_first_entry(head, type, member) ksync_list_first_entry(head, type, member)
#define list_last_entry(head, type, member) ksync_list_last_entry(head, type, member)
#define list_first_entry_or_null(head, type, member) ksync_list_first_entry_or_null(head, type, member)
#define list_next_entry(pos, member) ksync_list_next_entry(pos, member)
#define list_prev_entry(pos, member) ksync_list_prev_entry(pos, member)
#define list_entry_is_head(pos, head, member) ksync_list_entry_is_head(pos, head, member)
#define list_for_each(pos, head) ksync_list_for_each(pos, head)
#define list_for_each_safe(pos, n, head) ksync_list_for_each_safe(pos, n, head)
#define list_for_each_entry(pos, head, member) ksync_list_for_each_entry(pos, head, member)
#define list_for_each_entry_reverse(pos, head, member) ksync_list_for_each_entry_reverse(pos, head, member)
#define list_for_each_entry_safe(pos, n, head, member) ksync_list_for_each_entry_safe(pos, n, head, member)
#define list_for_each_entry_continue(pos, head, member) ksync_list_for_each_entry_continue(pos, head, member)

#endif /* KSYNC_LINUX_LIST_H */
