/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/build_bug.h> - the kernel's <linux/build_bug.h> spellings on ksync.
 * BUILD_BUG_ON(), BUILD_BUG_ON_MSG().
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/build_bug.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BUILD_BUG_H
#define KSYNC_LINUX_BUILD_BUG_H

#include <ksync/compiler.h>

#define BUILD_BUG_ON(cond) KSYNC_BUILD_BUG_ON(cond)
#define BUILD_BUG_ON_MSG(cond, msg) KSYNC_BUILD_BUG_ON_MSG(cond, msg)

#endif /* KSYNC_LINUX_BUILD_BUG_H */
