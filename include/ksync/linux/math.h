/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/math.h> - the kernel's <linux/math.h> spellings on ksync.
 * DIV_ROUND_UP(), round_up(), round_down(), BITS_PER_LONG and friends.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/math.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_MATH_H
#define KSYNC_LINUX_MATH_H

#include <ksync/math.h>

#define BITS_PER_LONG KSYNC_BITS_PER_LONG
#define BITS_TO_LONGS(nr) KSYNC_BITS_TO_LONGS(nr)
#define DIV_ROUND_UP(n, d) KSYNC_DIV_ROUND_UP(n, d)
#define round_up(x, y) ksync_round_up(x, y)
#define round_down(x, y) ksync_round_down(x, y)

#endif /* KSYNC_LINUX_MATH_H */
