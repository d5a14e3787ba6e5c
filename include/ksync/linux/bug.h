/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/bug.h> - the kernel's <linux/bug.h> spellings on ksync.
 * WARN_ON(), WARN_ON_ONCE(), WARN(), WARN_ONCE() (printf-style), BUG(), BUG_ON().
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/bug.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_BUG_H
#define KSYNC_LINUX_BUG_H

#include <ksync/bug.h>
#include <ksync/compiler.h>

#define WARN_ON(cond) KSYNC_WARN_ON(cond)
#define WARN_ON_ONCE(cond) KSYNC_WARN_ON_ONCE(cond)
#define WARN(cond, ...) KSYNC_WARN(cond, __VA_ARGS__)
#define WARN_ONCE(cond, ...) KSYNC_WARN_ONCE(cond, __VA_ARGS__)
#define BUG() KSYNC_BUG()
#define BUG_ON(cond) KSYNC_BUG_ON(cond)

#endif /* KSYNC_LINUX_BUG_H */
