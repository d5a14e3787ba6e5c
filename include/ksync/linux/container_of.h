/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/container_of.h> - the kernel's <linux/container_of.h> spellings on ksync.
 * container_of().
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/container_of.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_CONTAINER_OF_H
#define KSYNC_LINUX_CONTAINER_OF_H

#include <ksync/compiler.h>

#define container_of(ptr, type, member) ksync_container_of(ptr, type, member)

#endif /* KSYNC_LINUX_CONTAINER_OF_H */
