/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib/srcu/srcu.c - the compiled form of SRCU (ksync::srcu): the one
 * translation unit that compiles the slow paths of <ksync/srcu.h> with
 * external linkage. Programs that link libksync_srcu define
 * KSYNC_SRCU_EXTERN (the ksync::srcu target and pkg-config ksync-srcu do it
 * for them) and get declarations and the inline read side only. The code is
 * the header-only form's, unchanged: see include/ksync/impl/srcu_*.h.
 */
#define KSYNC_SRCU_EXTERN 1
#define KSYNC_SRCU_IMPLEMENTATION 1
#include <ksync/srcu.h>
