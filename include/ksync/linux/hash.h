/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/hash.h> - the kernel's <linux/hash.h> spellings on ksync.
 * hash_32(), hash_64(), hash_long(), hash_ptr() and the golden-ratio
 * multipliers; the same results as the kernel's generic versions.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/hash.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_HASH_H
#define KSYNC_LINUX_HASH_H

#include <ksync/hash.h>

#define GOLDEN_RATIO_32 KSYNC_GOLDEN_RATIO_32
#define GOLDEN_RATIO_64 KSYNC_GOLDEN_RATIO_64
#define GOLDEN_RATIO_PRIME KSYNC_GOLDEN_RATIO_PRIME
#define __hash_32 ksync___hash_32
#define hash_32 ksync_hash_32
#define hash_64 ksync_hash_64
#define hash_long(val, bits) ksync_hash_long(val, bits)
#define hash_ptr ksync_hash_ptr
#define hash32_ptr ksync_hash32_ptr

#endif /* KSYNC_LINUX_HASH_H */
