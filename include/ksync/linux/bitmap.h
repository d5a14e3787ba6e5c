/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bitmap.h> - the kernel's <linux/bitmap.h> spellings on ksync.
 * whole-bitmap operations, ranges (bitmap_set(), bitmap_clear()), aligned
 * regions, bitmap_cut(), bitmap_read()/bitmap_write(), the conversions from
 * and to u32/u64 arrays, bitmap_gather()/bitmap_scatter(), the 8-bit
 * clumps (bitmap_get_value8(), for_each_set_clump8()), __bitmap_equal(),
 * bitmap_parselist(), bitmap_parse(), bitmap_print_to_pagebuf(); the
 * searches through <linux/find.h>.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bitmap.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BITMAP_H
#define KSYNC_LINUX_BITMAP_H

#include <ksync/bitmap.h>
#include <ksync/linux/bitops.h>
#include <ksync/linux/find.h>

#define DECLARE_BITMAP(name, bits) KSYNC_DECLARE_BITMAP(name, bits)
#define BITMAP_FIRST_WORD_MASK(start) KSYNC_BITMAP_FIRST_WORD_MASK(start)
#define BITMAP_LAST_WORD_MASK(nbits) KSYNC_BITMAP_LAST_WORD_MASK(nbits)
#define BITMAP_FROM_U64(n) KSYNC_BITMAP_FROM_U64(n)
#define bitmap_zero ksync_bitmap_zero
#define bitmap_fill ksync_bitmap_fill
#define bitmap_copy ksync_bitmap_copy
#define bitmap_and ksync_bitmap_and
#define bitmap_or ksync_bitmap_or
#define bitmap_andnot ksync_bitmap_andnot
#define bitmap_replace ksync_bitmap_replace
#define bitmap_weight ksync_bitmap_weight
#define bitmap_empty ksync_bitmap_empty
#define bitmap_full ksync_bitmap_full
#define bitmap_equal ksync_bitmap_equal
#define bitmap_set(map, start, nbits) ksync_bitmap_set(map, start, nbits)
#define bitmap_clear(map, start, nbits) ksync_bitmap_clear(map, start, nbits)
#define __bitmap_set(map, start, len) ksync___bitmap_set(map, start, len)
#define __bitmap_clear(map, start, len) ksync___bitmap_clear(map, start, len)
#define bitmap_find_free_region ksync_bitmap_find_free_region
#define bitmap_release_region(bitmap, pos, order) ksync_bitmap_release_region(bitmap, pos, order)
#define bitmap_cut ksync_bitmap_cut
#define bitmap_from_arr32(bitmap, buf, nbits) ksync_bitmap_from_arr32(bitmap, buf, nbits)
#define bitmap_to_arr32(buf, bitmap, nbits) ksync_bitmap_to_arr32(buf, bitmap, nbits)
#define bitmap_from_arr64(bitmap, buf, nbits) ksync_bitmap_from_arr64(bitmap, buf, nbits)
#define bitmap_to_arr64(buf, bitmap, nbits) ksync_bitmap_to_arr64(buf, bitmap, nbits)
#define bitmap_read ksync_bitmap_read
#define bitmap_write ksync_bitmap_write
#define bitmap_zalloc(nbits, gfp) ksync_bitmap_zalloc(nbits)
#define bitmap_free ksync_bitmap_free
#define __bitmap_equal ksync_bitmap_equal
#define bitmap_get_value8(map, start) ksync_bitmap_get_value8(map, start)
#define bitmap_set_value8(map, value, start) ksync_bitmap_set_value8(map, value, start)
#define find_next_clump8(clump, addr, size, offset) ksync_find_next_clump8(clump, addr, size, offset)
#define find_first_clump8(clump, bits, size) ksync_find_next_clump8(clump, bits, size, 0)
#define for_each_set_clump8(start, clump, bits, size) ksync_for_each_set_clump8(start, clump, bits, size)
#define bitmap_scatter ksync_bitmap_scatter
#define bitmap_gather ksync_bitmap_gather
#define bitmap_parselist ksync_bitmap_parselist
#define bitmap_parse ksync_bitmap_parse
#define bitmap_print_to_pagebuf(list, buf, maskp, nmaskbits)                   \
	ksync_bitmap_print_to_pagebuf(list, buf, maskp, nmaskbits)

#endif /* KSYNC_LINUX_BITMAP_H */
