/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/find.h> - the kernel's <linux/find.h> spellings on ksync.
 * the bit searches (find_*_bit(), find_nth_bit(), find_next_bit_wrap()) and
 * the iterators (for_each_*_bit(), the bit ranges, the wrapping walk).
 * Includable alone (the kernel's may only come through <linux/bitmap.h>);
 * <ksync/linux/bitops.h> and <ksync/linux/bitmap.h> include it. With
 * -I<prefix>/include/ksync on the compiler's path a port keeps its own
 * `#include <linux/find.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_FIND_H
#define KSYNC_LINUX_FIND_H

#include <ksync/bitops.h>
#include <ksync/linux/bits.h>

#define find_first_bit ksync_find_first_bit
#define find_next_bit ksync_find_next_bit
#define find_first_zero_bit ksync_find_first_zero_bit
#define find_next_zero_bit ksync_find_next_zero_bit
#define find_last_bit ksync_find_last_bit
#define find_nth_bit ksync_find_nth_bit
#define find_first_and_bit(addr1, addr2, size) ksync_find_first_and_bit(addr1, addr2, size)
#define find_next_and_bit ksync_find_next_and_bit
#define find_next_bit_wrap(addr, size, offset) ksync_find_next_bit_wrap(addr, size, offset)
#define for_each_set_bit(bit, addr, size) ksync_for_each_set_bit(bit, addr, size)
#define for_each_set_bit_from(bit, addr, size) ksync_for_each_set_bit_from(bit, addr, size)
#define for_each_clear_bit(bit, addr, size) ksync_for_each_clear_bit(bit, addr, size)
#define for_each_clear_bit_from(bit, addr, size) ksync_for_each_clear_bit_from(bit, addr, size)
#define for_each_and_bit(bit, addr1, addr2, size) ksync_for_each_and_bit(bit, addr1, addr2, size)
#define for_each_set_bitrange(b, e, addr, size) ksync_for_each_set_bitrange(b, e, addr, size)
#define for_each_set_bitrange_from(b, e, addr, size)                           \
	ksync_for_each_set_bitrange_from(b, e, addr, size)
#define for_each_clear_bitrange(b, e, addr, size) ksync_for_each_clear_bitrange(b, e, addr, size)
#define for_each_clear_bitrange_from(b, e, addr, size)                         \
	ksync_for_each_clear_bitrange_from(b, e, addr, size)
#define for_each_set_bit_wrap(bit, addr, size, start)                          \
	ksync_for_each_set_bit_wrap(bit, addr, size, start)

#endif /* KSYNC_LINUX_FIND_H */
