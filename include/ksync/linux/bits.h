/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bits.h> - the kernel's <linux/bits.h> spellings on ksync.
 * BIT(), BIT_ULL(), GENMASK() (bits l..h inclusive), GENMASK_ULL(),
 * BIT_MASK(), BIT_WORD(), BITS_PER_BYTE, BITS_PER_LONG_LONG.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bits.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BITS_H
#define KSYNC_LINUX_BITS_H

#include <ksync/bitops.h>
#include <ksync/math.h>

#define BIT(nr) KSYNC_BIT(nr)
#define BIT_ULL(nr) KSYNC_BIT_ULL(nr)
#define GENMASK(h, l) KSYNC_GENMASK(h, l)
#define GENMASK_ULL(h, l) KSYNC_GENMASK_ULL(h, l)
#define BIT_MASK(nr) KSYNC_BIT_MASK(nr)
#define BIT_WORD(nr) KSYNC_BIT_WORD(nr)
#define BITS_PER_BYTE KSYNC_BITS_PER_BYTE
#define BITS_PER_LONG_LONG KSYNC_BITS_PER_LONG_LONG

#endif /* KSYNC_LINUX_BITS_H */
