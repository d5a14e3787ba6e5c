/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/kernel.h - the Linux kernel's spellings of ksync's header-only primitives
 *
 * Include this (instead of, or beside, the canonical headers) to port kernel
 * code with a near-zero diff: srcu_read_lock(), list_add_rcu(), set_bit(),
 * atomic_long_t, WARN_ON_ONCE(), ... all map onto their ksync_ / KSYNC_
 * twins. Without it (or a <ksync/linux/...> header) ksync defines no
 * unprefixed name.
 *
 * It is the umbrella of the per-module spelling headers <ksync/linux/NAME.h>,
 * each named after the kernel header it stands for and includable alone.
 * The compiled modules' spellings are NOT included: the shrinker registry's
 * (struct shrinker, shrinker_alloc(), ...) come from <ksync/linux/shrinker.h>
 * only, so kernel code that defines its own shrinker machinery on ksync's
 * primitives can include this header (see docs/porting.md).
 *
 * Known clashes, by design as in the kernel: <stdatomic.h> (atomic_fetch_add
 * and friends) and, in C++, the min()/max() macros, which are defined only
 * when KSYNC_KERNEL_MINMAX is defined there.
 */
#ifndef KSYNC_KERNEL_H
#define KSYNC_KERNEL_H

#include <ksync/linux/atomic.h>
#include <ksync/linux/bitmap.h>
#include <ksync/linux/bitops.h>
#include <ksync/linux/bits.h>
#include <ksync/linux/bug.h>
#include <ksync/linux/build_bug.h>
#include <ksync/linux/compiler.h>
#include <ksync/linux/container_of.h>
#include <ksync/linux/find.h>
#include <ksync/linux/hash.h>
#include <ksync/linux/hashtable.h>
#include <ksync/linux/list.h>
#include <ksync/linux/math.h>
#include <ksync/linux/minmax.h>
#include <ksync/linux/rculist.h>
#include <ksync/linux/rcupdate.h>
#include <ksync/linux/srcu.h>

#endif /* KSYNC_KERNEL_H */
