/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bitops.h> - the kernel's <linux/bitops.h> spellings on ksync.
 * atomic and non-atomic bit operations, bit searches.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bitops.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BITOPS_H
#define KSYNC_LINUX_BITOPS_H

#include <ksync/bitops.h>
#include <ksync/linux/bits.h>

/* The kernel's <linux/bitops.h> has these too (identical redefinitions of <linux/math.h>'s). */
#define BITS_PER_LONG KSYNC_BITS_PER_LONG
#define BITS_TO_LONGS(nr) KSYNC_BITS_TO_LONGS(nr)
#define set_bit ksync_set_bit
#define clear_bit ksync_clear_bit
#define change_bit ksync_change_bit
#define test_and_set_bit ksync_test_and_set_bit
#define test_and_clear_bit ksync_test_and_clear_bit
#define test_and_change_bit ksync_test_and_change_bit
#define test_bit ksync_test_bit
#define __set_bit ksync___set_bit
#define __clear_bit ksync___clear_bit
#define __change_bit ksync___change_bit
#define __ffs ksync___ffs
#define __fls ksync___fls
#define hweight_long ksync_hweight_long
#define find_first_bit ksync_find_first_bit
#define find_next_bit ksync_find_next_bit
#define find_next_zero_bit ksync_find_next_zero_bit
#define find_first_zero_bit ksync_find_first_zero_bit
#define find_last_bit ksync_find_last_bit
#define for_each_set_bit(bit, addr, size) ksync_for_each_set_bit(bit, addr, size)
#define for_each_set_bit_from(bit, addr, size) ksync_for_each_set_bit_from(bit, addr, size)
#define for_each_clear_bit(bit, addr, size) ksync_for_each_clear_bit(bit, addr, size)

#endif /* KSYNC_LINUX_BITOPS_H */
