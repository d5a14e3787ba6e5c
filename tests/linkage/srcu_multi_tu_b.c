/* SPDX-License-Identifier: BSD-2-Clause */
/* The second translation unit of srcu_multi_tu: its own copy of the slow paths. */
#ifdef KSYNC_TEST_B_HEADER_ONLY
/* srcu_multi_tu_mixed: a header-only copy beside libksync_srcu's (the other unit). */
#undef KSYNC_SRCU_EXTERN
#endif
#include "srcu_multi_tu.h"

int tu_b_lock(struct ksync_srcu_struct *ssp) { return ksync_srcu_read_lock(ssp); }
void tu_b_unlock(struct ksync_srcu_struct *ssp, int idx) { ksync_srcu_read_unlock(ssp, idx); }
int tu_b_held(struct ksync_srcu_struct *ssp) { return ksync_srcu_read_lock_held(ssp); }
void tu_b_synchronize(struct ksync_srcu_struct *ssp) { ksync_synchronize_srcu(ssp); }
void tu_b_call(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *h,
	       void (*f)(struct ksync_rcu_head *))
{
	ksync_call_srcu(ssp, h, f);
}
void tu_b_barrier(struct ksync_srcu_struct *ssp) { ksync_srcu_barrier(ssp); }
void *tu_b_self(void) { return &ksync_srcu_self; }
