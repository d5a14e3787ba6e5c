/* SPDX-License-Identifier: BSD-2-Clause */
/* Kernel spellings of rcupdate.h and srcu.h. Include <ksync/kernel.h>. */
#ifndef KSYNC_KERNEL_H_INSIDE
#error "include <ksync/kernel.h>, not ksync/kernel/srcu.h"
#endif
#ifndef KSYNC_IMPL_KERNEL_SRCU_H
#define KSYNC_IMPL_KERNEL_SRCU_H

#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

/* rcupdate.h */
#define __rcu KSYNC_RCU
#define rcu_head ksync_rcu_head
#define rcu_assign_pointer(p, v) ksync_rcu_assign_pointer(p, v)
#define rcu_access_pointer(p) ksync_rcu_access_pointer(p)
#define rcu_dereference_raw(p) ksync_rcu_dereference_raw(p)
#define RCU_INIT_POINTER(p, v) KSYNC_RCU_INIT_POINTER(p, v)
#define rcu_replace_pointer(p, v, cond) ksync_rcu_replace_pointer(p, v, cond)

/* srcu.h */
#define srcu_struct ksync_srcu_struct
#define DEFINE_SRCU(name) KSYNC_DEFINE_SRCU(name)
#define DEFINE_STATIC_SRCU(name) KSYNC_DEFINE_STATIC_SRCU(name)
#define init_srcu_struct ksync_init_srcu_struct
#define cleanup_srcu_struct ksync_cleanup_srcu_struct
#define srcu_read_lock ksync_srcu_read_lock
#define srcu_read_unlock ksync_srcu_read_unlock
#define srcu_down_read ksync_srcu_down_read
#define srcu_up_read ksync_srcu_up_read
#define srcu_dereference(p, ssp) ksync_srcu_dereference(p, ssp)
#define srcu_dereference_check(p, ssp, c) ksync_srcu_dereference_check(p, ssp, c)
#define srcu_read_lock_held ksync_srcu_read_lock_held
#define synchronize_srcu ksync_synchronize_srcu
#define synchronize_srcu_expedited ksync_synchronize_srcu_expedited
#define call_srcu ksync_call_srcu
#define srcu_barrier ksync_srcu_barrier
#define get_state_synchronize_srcu ksync_get_state_synchronize_srcu
#define start_poll_synchronize_srcu ksync_start_poll_synchronize_srcu
#define poll_state_synchronize_srcu ksync_poll_state_synchronize_srcu
#define srcu_gp_pending ksync_srcu_gp_pending

/*
 * guard(srcu)(ssp) and scoped_guard(srcu, ssp): dispatch on the guard's class
 * name, so other classes can be added as ksync__kguard_<class> and
 * ksync__kscoped_guard_<class>.
 */
#define ksync__kguard_srcu(ssp) KSYNC_SRCU_GUARD(ssp)
#define ksync__kscoped_guard_srcu(ssp) ksync_scoped_guard_srcu(ssp)
#ifndef guard
#define guard(_class) KSYNC_CONCAT(ksync__kguard_, _class)
#endif
#ifndef scoped_guard
#define scoped_guard(_class, ...) KSYNC_CONCAT(ksync__kscoped_guard_, _class)(__VA_ARGS__)
#endif

#endif /* KSYNC_IMPL_KERNEL_SRCU_H */
