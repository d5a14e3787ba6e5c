/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/rcupdate.h> - the kernel's <linux/rcupdate.h> spellings on ksync.
 * __rcu, rcu_head, rcu_assign_pointer() & co.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/rcupdate.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_RCUPDATE_H
#define KSYNC_LINUX_RCUPDATE_H

#include <ksync/rcupdate.h>

#define __rcu KSYNC_RCU
#define rcu_head ksync_rcu_head
#define rcu_assign_pointer(p, v) ksync_rcu_assign_pointer(p, v)
#define rcu_access_pointer(p) ksync_rcu_access_pointer(p)
#define rcu_dereference_raw(p) ksync_rcu_dereference_raw(p)
#define RCU_INIT_POINTER(p, v) KSYNC_RCU_INIT_POINTER(p, v)
#define rcu_replace_pointer(p, v, cond) ksync_rcu_replace_pointer(p, v, cond)

#endif /* KSYNC_LINUX_RCUPDATE_H */
