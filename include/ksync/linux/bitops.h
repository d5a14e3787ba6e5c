/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bitops.h> - the kernel's <linux/bitops.h> spellings on ksync.
 * atomic and non-atomic bit operations (assign_bit(), __assign_bit() too),
 * the word helpers (__ffs(), __fls(), fns(), hweight_long(),
 * get_count_order(), get_count_order_long()), and, through <linux/find.h>,
 * the bit searches, as the kernel's includes them.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bitops.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BITOPS_H
#define KSYNC_LINUX_BITOPS_H

#include <ksync/bitops.h>
#include <ksync/linux/bits.h>
#include <ksync/linux/find.h>

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
#define assign_bit(nr, addr, value) ksync_assign_bit(nr, addr, value)
#define __assign_bit(nr, addr, value) ksync___assign_bit(nr, addr, value)
#define __ffs ksync___ffs
#define __fls ksync___fls
#define fns ksync_fns
#define hweight_long ksync_hweight_long
#define get_count_order ksync_get_count_order
#define get_count_order_long ksync_get_count_order_long

#endif /* KSYNC_LINUX_BITOPS_H */
