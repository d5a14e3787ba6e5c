/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel spellings of compiler.h, atomic.h, list.h and math.h. Include <ksync/kernel.h>. */
#ifndef KSYNC_KERNEL_H_INSIDE
#error "include <ksync/kernel.h>, not ksync/kernel/base.h"
#endif
#ifndef KSYNC_IMPL_KERNEL_BASE_H
#define KSYNC_IMPL_KERNEL_BASE_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>
#include <ksync/list.h>
#include <ksync/math.h>

/* compiler.h */
#define READ_ONCE(x) KSYNC_READ_ONCE(x)
#define WRITE_ONCE(x, v) KSYNC_WRITE_ONCE(x, v)
#define barrier() ksync_barrier()
#define likely(x) ksync_likely(x)
#define unlikely(x) ksync_unlikely(x)
#define container_of(ptr, type, member) ksync_container_of(ptr, type, member)
#define BUILD_BUG_ON(cond) KSYNC_BUILD_BUG_ON(cond)
#define WARN_ON(cond) KSYNC_WARN_ON(cond)
#define WARN_ON_ONCE(cond) KSYNC_WARN_ON_ONCE(cond)
#define WARN(cond, what) KSYNC_WARN(cond, what)
#define WARN_ONCE(cond, what) KSYNC_WARN_ONCE(cond, what)

/* math.h */
#define BITS_PER_BYTE KSYNC_BITS_PER_BYTE
#define BITS_PER_LONG KSYNC_BITS_PER_LONG
#define BITS_TO_LONGS(nr) KSYNC_BITS_TO_LONGS(nr)
#define DIV_ROUND_UP(n, d) KSYNC_DIV_ROUND_UP(n, d)
#define round_up(x, y) ksync_round_up(x, y)
#define round_down(x, y) ksync_round_down(x, y)
#if !defined(__cplusplus) || defined(KSYNC_KERNEL_MINMAX)
#define min(a, b) ksync_min(a, b)
#define max(a, b) ksync_max(a, b)
#endif
#define min_t(type, a, b) ksync_min_t(type, a, b)
#define max_t(type, a, b) ksync_max_t(type, a, b)
#define clamp(v, lo, hi) ksync_clamp(v, lo, hi)

/* atomic.h: barriers */
#define smp_mb() ksync_smp_mb()
#define smp_rmb() ksync_smp_rmb()
#define smp_wmb() ksync_smp_wmb()
#define smp_mb__before_atomic() ksync_smp_mb__before_atomic()
#define smp_mb__after_atomic() ksync_smp_mb__after_atomic()
#define smp_load_acquire(p) ksync_smp_load_acquire(p)
#define smp_store_release(p, v) ksync_smp_store_release(p, v)
#define cpu_relax() ksync_cpu_relax()

/* atomic.h: atomic_t and atomic_long_t */
typedef ksync_atomic_t atomic_t;
typedef ksync_atomic_long_t atomic_long_t;
#define ATOMIC_INIT(i) KSYNC_ATOMIC_INIT(i)
#define ATOMIC_LONG_INIT(i) KSYNC_ATOMIC_INIT(i)
#define atomic_read ksync_atomic_read
#define atomic_read_acquire ksync_atomic_read_acquire
#define atomic_set ksync_atomic_set
#define atomic_set_release ksync_atomic_set_release
#define atomic_add ksync_atomic_add
#define atomic_sub ksync_atomic_sub
#define atomic_inc ksync_atomic_inc
#define atomic_dec ksync_atomic_dec
#define atomic_and ksync_atomic_and
#define atomic_or ksync_atomic_or
#define atomic_xor ksync_atomic_xor
#define atomic_fetch_add ksync_atomic_fetch_add
#define atomic_fetch_sub ksync_atomic_fetch_sub
#define atomic_add_return ksync_atomic_add_return
#define atomic_sub_return ksync_atomic_sub_return
#define atomic_inc_return ksync_atomic_inc_return
#define atomic_dec_return ksync_atomic_dec_return
#define atomic_dec_and_test ksync_atomic_dec_and_test
#define atomic_inc_and_test ksync_atomic_inc_and_test
#define atomic_sub_and_test ksync_atomic_sub_and_test
#define atomic_xchg ksync_atomic_xchg
#define atomic_cmpxchg ksync_atomic_cmpxchg
#define atomic_try_cmpxchg ksync_atomic_try_cmpxchg
#define atomic_add_unless ksync_atomic_add_unless
#define atomic_inc_not_zero ksync_atomic_inc_not_zero
#define atomic_long_read ksync_atomic_long_read
#define atomic_long_read_acquire ksync_atomic_long_read_acquire
#define atomic_long_set ksync_atomic_long_set
#define atomic_long_set_release ksync_atomic_long_set_release
#define atomic_long_add ksync_atomic_long_add
#define atomic_long_sub ksync_atomic_long_sub
#define atomic_long_inc ksync_atomic_long_inc
#define atomic_long_dec ksync_atomic_long_dec
#define atomic_long_and ksync_atomic_long_and
#define atomic_long_or ksync_atomic_long_or
#define atomic_long_xor ksync_atomic_long_xor
#define atomic_long_fetch_add ksync_atomic_long_fetch_add
#define atomic_long_fetch_sub ksync_atomic_long_fetch_sub
#define atomic_long_add_return ksync_atomic_long_add_return
#define atomic_long_sub_return ksync_atomic_long_sub_return
#define atomic_long_inc_return ksync_atomic_long_inc_return
#define atomic_long_dec_return ksync_atomic_long_dec_return
#define atomic_long_dec_and_test ksync_atomic_long_dec_and_test
#define atomic_long_inc_and_test ksync_atomic_long_inc_and_test
#define atomic_long_sub_and_test ksync_atomic_long_sub_and_test
#define atomic_long_xchg ksync_atomic_long_xchg
#define atomic_long_cmpxchg ksync_atomic_long_cmpxchg
#define atomic_long_try_cmpxchg ksync_atomic_long_try_cmpxchg
#define atomic_long_add_unless ksync_atomic_long_add_unless
#define atomic_long_inc_not_zero ksync_atomic_long_inc_not_zero

/* list.h */
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

#endif /* KSYNC_IMPL_KERNEL_BASE_H */
