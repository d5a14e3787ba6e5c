/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/compiler.h> - the kernel's <linux/compiler.h> spellings on ksync.
 * READ_ONCE(), WRITE_ONCE(), barrier(), likely(), unlikely().
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/compiler.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_COMPILER_H
#define KSYNC_LINUX_COMPILER_H

#include <ksync/compiler.h>

#define READ_ONCE(x) KSYNC_READ_ONCE(x)
#define WRITE_ONCE(x, v) KSYNC_WRITE_ONCE(x, v)
#define barrier() ksync_barrier()
#define likely(x) ksync_likely(x)
#define unlikely(x) ksync_unlikely(x)

#endif /* KSYNC_LINUX_COMPILER_H */
