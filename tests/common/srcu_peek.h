/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_peek.h - the tests' access to the PRIVATE fields of an SRCU domain
 * (struct ksync_srcu_struct, include/ksync/impl/srcu_types.h), on purpose:
 * to force a schedule (wait until the helper took a batch, until a barrier's
 * marker is queued), to check what the API does not show (a thread's slot
 * freed at exit, the callback count after a barrier, how many grace periods
 * ran), or to set a state up (the grace-period counter just below its wrap,
 * an index flip without a grace period). Nothing outside the tests reads
 * these fields; the tests read them here only, so that a change of the
 * domain's layout is a change of this file.
 */
#ifndef KTEST_SRCU_PEEK_H
#define KTEST_SRCU_PEEK_H

#include <ksync/srcu.h>

#include <pthread.h>
#include <stdbool.h>

/* The domain's id: nonzero once set up, 0 after cleanup; bit 0 is fenced mode. */
static inline unsigned long kt_srcu_id(const struct ksync_srcu_struct *ssp)
{
	return ssp->id;
}

/* The per-thread slots the domain holds (a thread's slot goes at its exit). */
static inline int kt_srcu_count_slots(struct ksync_srcu_struct *ssp)
{
	int n = 0;
	struct ksync_list_head *pos;

	pthread_mutex_lock(&ssp->lock);
	ksync_list_for_each(pos, &ssp->slots)
		n++;
	pthread_mutex_unlock(&ssp->lock);
	return n;
}

/* Callbacks queued and not yet invoked. */
static inline unsigned long kt_srcu_cb_count(struct ksync_srcu_struct *ssp)
{
	return ksync_ulong_load(&ssp->cb_count);
}

/* The helper's enum ksync__srcu_helper_sleep (impl/srcu_helper.h): idle, in a batching delay, hurried. */
static inline int kt_srcu_helper_sleep(struct ksync_srcu_struct *ssp)
{
	pthread_mutex_lock(&ssp->cb_lock);
	int v = ssp->helper_sleeping;
	pthread_mutex_unlock(&ssp->cb_lock);
	return v;
}

/* No head is queued for the helper (it took the last batch, or none came). */
static inline bool kt_srcu_cb_stack_empty(struct ksync_srcu_struct *ssp)
{
	return ksync_ptr_load(&ssp->cb_stack) == NULL;
}

/* srcu_barrier() markers queued for the helper, not yet taken. */
static inline int kt_srcu_queued_barrier_markers(struct ksync_srcu_struct *ssp)
{
	int n = 0;
	/* Acquire: pairs with the fully ordered push of ksync_call_srcu()/barrier. */
	for (struct ksync_rcu_head *h = __atomic_load_n((struct ksync_rcu_head **)&ssp->cb_stack,
							__ATOMIC_ACQUIRE);
	     h; h = h->next)
		n += h->func == ksync__srcu_barrier_cb;
	return n;
}

/* 2 * completed grace periods + (1 while one runs). */
static inline unsigned long kt_srcu_gp_seq(struct ksync_srcu_struct *ssp)
{
	return ksync_ulong_load(&ssp->gp_seq);
}

/* Set the grace-period counter (e.g. just below its wrap), between grace periods. */
static inline void kt_srcu_set_gp_seq(struct ksync_srcu_struct *ssp, unsigned long seq)
{
	pthread_mutex_lock(&ssp->gp_mutex);
	ssp->gp_seq = seq;
	pthread_mutex_unlock(&ssp->gp_mutex);
}

/*
 * The domain's read word (key, index, mode: KSYNC__SRCU_IDX_BIT in
 * impl/srcu_types.h) and the key field the slow paths use.
 */
static inline unsigned long kt_srcu_read_word(const struct ksync_srcu_struct *ssp)
{
	return KSYNC_READ_ONCE(ssp->idx);
}

static inline unsigned long kt_srcu_key(const struct ksync_srcu_struct *ssp)
{
	return KSYNC_READ_ONCE(ssp->key);
}

/* What a grace period does to the index, without its waits. */
static inline void kt_srcu_flip(struct ksync_srcu_struct *ssp)
{
	pthread_mutex_lock(&ssp->gp_mutex);
	KSYNC_WRITE_ONCE(ssp->idx, ssp->idx ^ KSYNC__SRCU_FLIP);
	pthread_mutex_unlock(&ssp->gp_mutex);
}

/* Nonzero (pthread_mutex_trylock's error) when someone holds the callback lock. */
static inline int kt_srcu_cb_lock_busy(struct ksync_srcu_struct *ssp)
{
	int busy = pthread_mutex_trylock(&ssp->cb_lock);

	if (!busy)
		pthread_mutex_unlock(&ssp->cb_lock);
	return busy;
}

#endif /* KTEST_SRCU_PEEK_H */
