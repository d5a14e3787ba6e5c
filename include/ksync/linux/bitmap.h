/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bitmap.h> - the kernel's <linux/bitmap.h> spellings on ksync.
 * whole-bitmap operations.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bitmap.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BITMAP_H
#define KSYNC_LINUX_BITMAP_H

#include <ksync/bitmap.h>
#include <ksync/linux/bitops.h>

#define DECLARE_BITMAP(name, bits) KSYNC_DECLARE_BITMAP(name, bits)
#define BITMAP_LAST_WORD_MASK(nbits) KSYNC_BITMAP_LAST_WORD_MASK(nbits)
#define bitmap_zero ksync_bitmap_zero
#define bitmap_fill ksync_bitmap_fill
#define bitmap_copy ksync_bitmap_copy
#define bitmap_and ksync_bitmap_and
#define bitmap_or ksync_bitmap_or
#define bitmap_andnot ksync_bitmap_andnot
#define bitmap_weight ksync_bitmap_weight
#define bitmap_empty ksync_bitmap_empty
#define bitmap_full ksync_bitmap_full
#define bitmap_equal ksync_bitmap_equal
#define bitmap_zalloc(nbits, gfp) ksync_bitmap_zalloc(nbits)
#define bitmap_free ksync_bitmap_free

#endif /* KSYNC_LINUX_BITMAP_H */
