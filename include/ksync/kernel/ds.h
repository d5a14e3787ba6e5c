/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel spellings of bitops.h, bitmap.h and rculist.h. Include <ksync/kernel.h>.
 * The sized maps and generation counters are ksync's own and have no kernel
 * spelling.
 */
#ifndef KSYNC_KERNEL_H_INSIDE
#error "include <ksync/kernel.h>, not ksync/kernel/ds.h"
#endif
#ifndef KSYNC_IMPL_KERNEL_DS_H
#define KSYNC_IMPL_KERNEL_DS_H

#include <ksync/bitmap.h>
#include <ksync/bitops.h>
#include <ksync/generation.h>
#include <ksync/rculist.h>

/* bitops.h */
#define BIT_MASK(nr) KSYNC_BIT_MASK(nr)
#define BIT_WORD(nr) KSYNC_BIT_WORD(nr)
#define set_bit ksync_set_bit
#define clear_bit ksync_clear_bit
#define change_bit ksync_change_bit
#define test_and_set_bit ksync_test_and_set_bit
#define test_and_clear_bit ksync_test_and_clear_bit
#define test_and_change_bit ksync_test_and_change_bit
#define test_bit ksync_test_bit
#define __set_bit ksync___set_bit
#define __clear_bit ksync___clear_bit
#define __change_bit ksync___change_bit
#define __ffs ksync___ffs
#define __fls ksync___fls
#define hweight_long ksync_hweight_long
#define find_first_bit ksync_find_first_bit
#define find_next_bit ksync_find_next_bit
#define find_next_zero_bit ksync_find_next_zero_bit
#define find_first_zero_bit ksync_find_first_zero_bit
#define find_last_bit ksync_find_last_bit
#define for_each_set_bit(bit, addr, size) ksync_for_each_set_bit(bit, addr, size)
#define for_each_set_bit_from(bit, addr, size) ksync_for_each_set_bit_from(bit, addr, size)
#define for_each_clear_bit(bit, addr, size) ksync_for_each_clear_bit(bit, addr, size)

/* bitmap.h */
#define DECLARE_BITMAP(name, bits) KSYNC_DECLARE_BITMAP(name, bits)
#define BITMAP_LAST_WORD_MASK(nbits) KSYNC_BITMAP_LAST_WORD_MASK(nbits)
#define bitmap_zero ksync_bitmap_zero
#define bitmap_fill ksync_bitmap_fill
#define bitmap_copy ksync_bitmap_copy
#define bitmap_and ksync_bitmap_and
#define bitmap_or ksync_bitmap_or
#define bitmap_andnot ksync_bitmap_andnot
#define bitmap_weight ksync_bitmap_weight
#define bitmap_empty ksync_bitmap_empty
#define bitmap_full ksync_bitmap_full
#define bitmap_equal ksync_bitmap_equal
#define bitmap_zalloc(nbits, gfp) ksync_bitmap_zalloc(nbits)
#define bitmap_free ksync_bitmap_free

/* rculist.h: lists */
#define INIT_LIST_HEAD_RCU(list) ksync_init_list_head_rcu(list)
#define list_add_rcu ksync_list_add_rcu
#define list_add_tail_rcu ksync_list_add_tail_rcu
#define list_del_rcu ksync_list_del_rcu
#define list_replace_rcu ksync_list_replace_rcu
#define list_splice_init_rcu ksync_list_splice_init_rcu
#define list_splice_tail_init_rcu ksync_list_splice_tail_init_rcu
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

/* rculist.h: hash lists */
#define hlist_head ksync_hlist_head
#define hlist_node ksync_hlist_node
#define HLIST_HEAD_INIT KSYNC_HLIST_HEAD_INIT
#define HLIST_HEAD(name) KSYNC_HLIST_HEAD(name)
#define INIT_HLIST_HEAD(h) ksync_init_hlist_head(h)
#define INIT_HLIST_NODE(n) ksync_init_hlist_node(n)
#define hlist_unhashed ksync_hlist_unhashed
#define hlist_empty ksync_hlist_empty
#define hlist_entry(ptr, type, member) ksync_hlist_entry(ptr, type, member)
#define hlist_entry_safe(ptr, type, member) ksync_hlist_entry_safe(ptr, type, member)
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

#endif /* KSYNC_IMPL_KERNEL_DS_H */
