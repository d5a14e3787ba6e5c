/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_multi_tu.h - what the second translation unit of srcu_multi_tu
 * (srcu_multi_tu_b.c, its own copy of the SRCU slow paths) offers the first.
 */
#ifndef SRCU_MULTI_TU_H
#define SRCU_MULTI_TU_H

#include <ksync/srcu.h>

int tu_b_lock(struct ksync_srcu_struct *ssp);
void tu_b_unlock(struct ksync_srcu_struct *ssp, int idx);
int tu_b_held(struct ksync_srcu_struct *ssp);
void tu_b_synchronize(struct ksync_srcu_struct *ssp);
void tu_b_call(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *h,
	       void (*f)(struct ksync_rcu_head *));
void tu_b_barrier(struct ksync_srcu_struct *ssp);
void *tu_b_self(void);

#endif /* SRCU_MULTI_TU_H */
