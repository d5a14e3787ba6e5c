/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/srcu.h> - the kernel's <linux/srcu.h> spellings on ksync.
 * struct srcu_struct, srcu_read_lock() & co., srcu_read_lock_fast() & co.,
 * guard(srcu).
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/srcu.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_SRCU_H
#define KSYNC_LINUX_SRCU_H

#include <ksync/srcu.h>
#include <ksync/linux/rcupdate.h>

#define srcu_struct ksync_srcu_struct
#define DEFINE_SRCU(name) KSYNC_DEFINE_SRCU(name)
#define DEFINE_STATIC_SRCU(name) KSYNC_DEFINE_STATIC_SRCU(name)
#define init_srcu_struct ksync_init_srcu_struct
#define cleanup_srcu_struct ksync_cleanup_srcu_struct
#define srcu_read_lock ksync_srcu_read_lock
#define srcu_read_unlock ksync_srcu_read_unlock
#define srcu_down_read ksync_srcu_down_read
#define srcu_up_read ksync_srcu_up_read
/*
 * The fast form (v6.15): the token is a struct srcu_ctr pointer, as in the
 * kernel (there __percpu; here the thread's counter word). The *_fast_updown
 * names of later kernels are not provided.
 */
#define srcu_ctr ksync_srcu_ctr
#ifndef __percpu
#define __percpu /* the kernel's address-space marker: nothing in userspace */
#endif
#define srcu_read_lock_fast ksync_srcu_read_lock_fast
#define srcu_read_unlock_fast ksync_srcu_read_unlock_fast
#define srcu_down_read_fast ksync_srcu_down_read_fast
#define srcu_up_read_fast ksync_srcu_up_read_fast
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
 * ksync's own, no kernel counterpart (the kernel's grace periods need no
 * try, and its callbacks run in its own contexts): a grace period now if no
 * other thread can be reading, the callback bound, callbacks in the callers.
 */
#define try_synchronize_srcu ksync_try_synchronize_srcu
#define srcu_set_cb_limit ksync_srcu_set_cb_limit
#define srcu_set_cb_in_caller ksync_srcu_set_cb_in_caller
/* ksync's own, for the fuzzing mode (<ksync/fuzzing.h>): no kernel counterpart. */
#define srcu_run_callbacks ksync_srcu_run_callbacks
#define srcu_run_all_callbacks ksync_srcu_run_all_callbacks

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

#endif /* KSYNC_LINUX_SRCU_H */
