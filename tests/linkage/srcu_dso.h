/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_dso.h - what the shared library of srcu_dso_test (srcu_dso_b.c,
 * built with -fvisibility=hidden and its own copy of ksync SRCU) exports.
 */
#ifndef SRCU_DSO_H
#define SRCU_DSO_H

#include <ksync/srcu.h>

#define DSO_API __attribute__((__visibility__("default")))

DSO_API int dso_init(struct ksync_srcu_struct *ssp);
DSO_API int dso_lock(struct ksync_srcu_struct *ssp);
DSO_API void dso_unlock(struct ksync_srcu_struct *ssp, int idx);
DSO_API int dso_held(struct ksync_srcu_struct *ssp);
DSO_API void dso_synchronize(struct ksync_srcu_struct *ssp);
DSO_API void dso_cleanup(struct ksync_srcu_struct *ssp);
DSO_API void *dso_self(void);

#endif /* SRCU_DSO_H */
