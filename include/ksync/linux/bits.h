/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bits.h> - the kernel's <linux/bits.h> spellings on ksync.
 * BIT_MASK(), BIT_WORD(), BITS_PER_BYTE.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bits.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BITS_H
#define KSYNC_LINUX_BITS_H

#include <ksync/bitops.h>
#include <ksync/math.h>

#define BIT_MASK(nr) KSYNC_BIT_MASK(nr)
#define BIT_WORD(nr) KSYNC_BIT_WORD(nr)
#define BITS_PER_BYTE KSYNC_BITS_PER_BYTE

#endif /* KSYNC_LINUX_BITS_H */
