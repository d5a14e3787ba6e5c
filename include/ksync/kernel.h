/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/kernel.h - the Linux kernel's spellings of every ksync name
 *
 * Include this (instead of, or beside, the canonical headers) to port kernel
 * code with a near-zero diff: srcu_read_lock(), list_add_rcu(), set_bit(),
 * atomic_long_t, WARN_ON_ONCE(), ... all map onto their ksync_ / KSYNC_
 * twins. Without this header ksync defines no unprefixed name.
 *
 * The spellings of each module live in include/ksync/kernel/<module>.h
 * and are included only from here. Known clashes, by design as in the kernel:
 * <stdatomic.h> (atomic_fetch_add and friends) and, in C++, the min()/max()
 * macros, which are defined only when KSYNC_KERNEL_MINMAX is defined there.
 */
#ifndef KSYNC_KERNEL_H
#define KSYNC_KERNEL_H

#define KSYNC_KERNEL_H_INSIDE 1
#include <ksync/kernel/base.h>
#include <ksync/kernel/shrinker.h>
#include <ksync/kernel/srcu.h>
#include <ksync/kernel/ds.h>
#undef KSYNC_KERNEL_H_INSIDE

#endif /* KSYNC_KERNEL_H */
