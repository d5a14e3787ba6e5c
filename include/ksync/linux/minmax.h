/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/minmax.h> - the kernel's <linux/minmax.h> spellings on ksync.
 * min(), max() (C, or C++ with KSYNC_KERNEL_MINMAX defined), min_t(), max_t(), clamp().
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/minmax.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_MINMAX_H
#define KSYNC_LINUX_MINMAX_H

#include <ksync/math.h>

#if !defined(__cplusplus) || defined(KSYNC_KERNEL_MINMAX)
#define min(a, b) ksync_min(a, b)
#define max(a, b) ksync_max(a, b)
#endif
#define min_t(type, a, b) ksync_min_t(type, a, b)
#define max_t(type, a, b) ksync_max_t(type, a, b)
#define clamp(v, lo, hi) ksync_clamp(v, lo, hi)

#endif /* KSYNC_LINUX_MINMAX_H */
