/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A shared library built with -fvisibility=hidden that carries its own copy
 * of ksync SRCU (srcu_dso_test): the process-wide objects must still be one
 * per process, or ids collide between the copies and a reader uses another
 * domain's slot.
 */
#include "srcu_dso.h"

int dso_init(struct ksync_srcu_struct *ssp) { return ksync_init_srcu_struct(ssp); }
int dso_lock(struct ksync_srcu_struct *ssp) { return ksync_srcu_read_lock(ssp); }
void dso_unlock(struct ksync_srcu_struct *ssp, int idx) { ksync_srcu_read_unlock(ssp, idx); }
int dso_held(struct ksync_srcu_struct *ssp) { return ksync_srcu_read_lock_held(ssp); }
void dso_synchronize(struct ksync_srcu_struct *ssp) { ksync_synchronize_srcu(ssp); }
void dso_cleanup(struct ksync_srcu_struct *ssp) { ksync_cleanup_srcu_struct(ssp); }
void *dso_self(void) { return &ksync_srcu_self; }
