/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/rculist.h> - the kernel's <linux/rculist.h> spellings on ksync.
 * list_*_rcu() and hlist_*_rcu(), and list_for_each_rcu() (which the kernel
 * keeps in <linux/list.h>; here it needs ksync's RCU layer).
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/rculist.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_RCULIST_H
#define KSYNC_LINUX_RCULIST_H

#include <ksync/rculist.h>
#include <ksync/linux/list.h>
#include <ksync/linux/rcupdate.h>

/* lists */
#define INIT_LIST_HEAD_RCU(list) ksync_init_list_head_rcu(list)
#define list_add_rcu ksync_list_add_rcu
#define list_add_tail_rcu ksync_list_add_tail_rcu
#define list_del_rcu ksync_list_del_rcu
#define list_replace_rcu ksync_list_replace_rcu
#define list_splice_init_rcu ksync_list_splice_init_rcu
#define list_splice_tail_init_rcu ksync_list_splice_tail_init_rcu
#define list_for_each_rcu(pos, head) ksync_list_for_each_rcu(pos, head)
#define list_entry_rcu(ptr, type, member) ksync_list_entry_rcu(ptr, type, member)
#define list_first_or_null_rcu(ptr, type, member) ksync_list_first_or_null_rcu(ptr, type, member)
#define list_next_or_null_rcu(head, ptr, type, member)                         \
	ksync_list_next_or_null_rcu(head, ptr, type, member)
#define list_for_each_entry_rcu(pos, head, member, ...)                        \
	ksync_list_for_each_entry_rcu(pos, head, member, ##__VA_ARGS__)
#define list_for_each_entry_srcu(pos, head, member, cond)                      \
	ksync_list_for_each_entry_srcu(pos, head, member, cond)
#define list_for_each_entry_continue_rcu(pos, head, member)                    \
	ksync_list_for_each_entry_continue_rcu(pos, head, member)
#define list_for_each_entry_from_rcu(pos, head, member)                        \
	ksync_list_for_each_entry_from_rcu(pos, head, member)

/* hash lists (the types and plain operations: <ksync/linux/list.h>) */
#define hlist_add_head_rcu ksync_hlist_add_head_rcu
#define hlist_add_before_rcu ksync_hlist_add_before_rcu
#define hlist_add_behind_rcu ksync_hlist_add_behind_rcu
#define hlist_del_rcu ksync_hlist_del_rcu
#define hlist_del_init_rcu ksync_hlist_del_init_rcu
#define hlist_replace_rcu ksync_hlist_replace_rcu
#define hlist_for_each_entry_rcu(pos, head, member, ...)                       \
	ksync_hlist_for_each_entry_rcu(pos, head, member, ##__VA_ARGS__)
#define hlist_for_each_entry_srcu(pos, head, member, cond)                     \
	ksync_hlist_for_each_entry_srcu(pos, head, member, cond)
#define hlist_for_each_entry_continue_rcu(pos, member)                         \
	ksync_hlist_for_each_entry_continue_rcu(pos, member)
#define hlist_for_each_entry_from_rcu(pos, member) ksync_hlist_for_each_entry_from_rcu(pos, member)

#endif /* KSYNC_LINUX_RCULIST_H */
