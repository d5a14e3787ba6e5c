/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * srcu_torture.c - an rcutorture-style torture test of ksync SRCU.
 *
 * Two domains, A and B, protect three published elements: pa (domain A,
 * replaced by a writer that waits with ksync_synchronize_srcu()), pc (domain
 * A, replaced by a writer that retires through ksync_call_srcu()) and pb
 * (domain B, call_srcu writer). A removed element ages one step per completed
 * grace period that began after its removal: the synchronize writer ages its
 * retired elements after every ksync_synchronize_srcu(); the call_srcu
 * writers' callbacks age the element and queue it again, until it reaches
 * KT_AGE_FREE and is freed (or, in mutant builds, parked).
 *
 * Readers take an element inside a section and check, during and at the end
 * of the section, that its age is still 0: a reader that sees a removed
 * element aged by a completed grace period is an error (the grace period did
 * not wait for it). Reader kinds: plain, nested (unlocking in either order),
 * sections overlapping hand over hand (always inside, grace periods must
 * still end), both domains at once, sleeping, and down_read on one thread
 * with up_read on another.
 *
 * Built with KT_FAST=1 the readers' sections take either form at random
 * (ksync_srcu_read_lock() or ksync_srcu_read_lock_fast()), with KT_FAST=2
 * only the fast form (see kt_lock()).
 *
 * It prints reads, grace periods, callbacks and errors. Built with
 * KSYNC_PLANT_SRCU_SKIP_FIRST_WAIT or _SECOND_WAIT (the mutation check) it
 * expects errors instead.
 */
/*
 * Widen the straggler window: now and then a reader stalls between loading
 * the index and storing its lock word (only in this test's builds).
 */
#include "wait.h"

static __thread unsigned int kt_delay_tick;
static __thread int kt_delay_on; /* set by the readers that stall */
static void kt_reader_delay(void)
{
	if (kt_delay_on && (++kt_delay_tick & 15) == 0)
		kt_sleep_us(200);
}
#define KSYNC_TP_SRCU_READ_LOCK() kt_reader_delay()

#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ktest.h"
#include "rng.h"
#include "srcu_peek.h"

#ifdef KT_MUTANT
#define KT_EXPECT_ERRORS 1
#else
#define KT_EXPECT_ERRORS 0
#endif

#define KT_LIVE 0x4c495645u
#define KT_DEAD 0xdeaddeadu
#define KT_AGE_FREE 3

struct kt_elem {
	unsigned int magic;
	int age; /* completed grace periods since removal; 0 while reachable */
	unsigned long serial;
	struct ksync_srcu_struct *ssp;
	struct ksync_rcu_head rh;
	struct kt_elem *next_retired;
};

static struct ksync_srcu_struct kt_a, kt_b;
static struct kt_elem *KSYNC_RCU kt_pa, *KSYNC_RCU kt_pb, *KSYNC_RCU kt_pc;
static int kt_stop;
static unsigned long kt_reads, kt_errors, kt_sync_gps, kt_callbacks, kt_updates;
/* Lost-callback accounting: every element is disposed of exactly once, and an
 * element retired through call_srcu gets exactly KT_AGE_FREE callbacks. */
static unsigned long kt_allocated, kt_disposed, kt_cb_retired;
static struct kt_elem *kt_graveyard; /* mutant builds: never free */
static pthread_mutex_t kt_grave_lock = PTHREAD_MUTEX_INITIALIZER;

static void kt_count(unsigned long *c, unsigned long n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static bool kt_stopped(void)
{
	return __atomic_load_n(&kt_stop, __ATOMIC_RELAXED);
}

static struct kt_elem *kt_new(struct ksync_srcu_struct *ssp)
{
	static unsigned long serial;
	struct kt_elem *e = (struct kt_elem *)calloc(1, sizeof(*e));
	KASSERT(e);
	e->magic = KT_LIVE;
	e->ssp = ssp;
	e->serial = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
	kt_count(&kt_allocated, 1);
	return e;
}

static void kt_dispose(struct kt_elem *e)
{
	kt_count(&kt_disposed, 1);
	__atomic_store_n(&e->magic, KT_DEAD, __ATOMIC_RELAXED);
	if (KT_EXPECT_ERRORS) {
		pthread_mutex_lock(&kt_grave_lock);
		e->next_retired = kt_graveyard;
		kt_graveyard = e;
		pthread_mutex_unlock(&kt_grave_lock);
	} else {
		free(e);
	}
}

/* The element a reader holds must not have aged. */
static void kt_check(const struct kt_elem *e)
{
	if (!e)
		return;
	if (__atomic_load_n(&e->age, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&e->magic, __ATOMIC_RELAXED) != KT_LIVE)
		kt_count(&kt_errors, 1);
}

/* ---- readers ---- */

/*
 * A read section of either form. Built with KT_FAST=1, each lock picks
 * ksync_srcu_read_lock() or ksync_srcu_read_lock_fast() at random (so both
 * forms mix on one domain, nested in each other and overlapping in every
 * order); with KT_FAST=2 every section is of the fast form; otherwise every
 * section is classic.
 */
#ifndef KT_FAST
#define KT_FAST 0
#endif
struct kt_sec {
	struct ksync_srcu_ctr *tok; /* the fast form's token, or NULL */
	int idx;		     /* the classic form's index */
};
static __thread unsigned int kt_form_seed = 0x2545f491u;

static struct kt_sec kt_lock(struct ksync_srcu_struct *ssp)
{
	struct kt_sec s = { NULL, -1 };

	if (KT_FAST == 2 || (KT_FAST == 1 && (kt_lcg(&kt_form_seed) & 0x100)))
		s.tok = ksync_srcu_read_lock_fast(ssp);
	else
		s.idx = ksync_srcu_read_lock(ssp);
	return s;
}

static void kt_unlock(struct ksync_srcu_struct *ssp, struct kt_sec s)
{
	if (s.tok)
		ksync_srcu_read_unlock_fast(ssp, s.tok);
	else
		ksync_srcu_read_unlock(ssp, s.idx);
}

static void *kt_reader_plain(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned long n = 0;
	kt_delay_on = seed == 1; /* reader 1 stalls now and then, reader 2 never */
	while (!kt_stopped()) {
		struct kt_sec idx = kt_lock(&kt_a);
		struct kt_elem *e = ksync_srcu_dereference(kt_pa, &kt_a);
		struct kt_elem *c = ksync_srcu_dereference(kt_pc, &kt_a);
		kt_check(e);
		for (unsigned int i = kt_lcg(&seed) % 64; i; i--)
			ksync_cpu_relax();
		kt_check(e);
		kt_check(c);
		kt_unlock(&kt_a, idx);
		n++;
	}
	kt_count(&kt_reads, n);
	return NULL;
}

/* A short-lived reader thread: its slot is created, used, folded and freed. */
static void *kt_reader_churn(void *arg)
{
	unsigned long n = 0;
	(void)arg;
	for (int k = 0; k < 2000 && !kt_stopped(); k++) {
		struct kt_sec idx = kt_lock(&kt_a);
		kt_check(ksync_srcu_dereference(kt_pa, &kt_a));
		kt_unlock(&kt_a, idx);
		n++;
	}
	kt_count(&kt_reads, n);
	return NULL;
}

static void *kt_reader_nested(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned long n = 0;
	kt_delay_on = 1;
	while (!kt_stopped()) {
		struct kt_sec i1 = kt_lock(&kt_a);
		struct kt_elem *e = ksync_srcu_dereference(kt_pa, &kt_a);
		struct kt_sec i2 = kt_lock(&kt_a);
		struct kt_elem *c = ksync_srcu_dereference(kt_pc, &kt_a);
		for (unsigned int i = kt_lcg(&seed) % 64; i; i--)
			ksync_cpu_relax();
		if (kt_lcg(&seed) & 1) {
			kt_unlock(&kt_a, i2);
			kt_check(c); /* still protected by the outer section */
			kt_check(e);
			kt_unlock(&kt_a, i1);
		} else { /* overlapping: the outer section ends first */
			kt_check(e);
			kt_unlock(&kt_a, i1);
			kt_check(c); /* still protected by the inner section */
			kt_unlock(&kt_a, i2);
		}
		n++;
	}
	kt_count(&kt_reads, n);
	return NULL;
}

/*
 * Sections overlapping hand over hand: this thread is always inside domain
 * A, yet every section is short, so grace periods must keep ending (each
 * lock counts on the current index); the element of the previous section is
 * checked while only that section protects it.
 */
static void *kt_reader_hand_over_hand(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned long n = 0;
	kt_delay_on = 1;
	struct kt_sec prev = kt_lock(&kt_a);
	struct kt_elem *pe = ksync_srcu_dereference(kt_pa, &kt_a);
	while (!kt_stopped()) {
		struct kt_sec next = kt_lock(&kt_a);
		struct kt_elem *ne = (n & 1) ? ksync_srcu_dereference(kt_pa, &kt_a)
					     : ksync_srcu_dereference(kt_pc, &kt_a);
		for (unsigned int i = kt_lcg(&seed) % 64; i; i--)
			ksync_cpu_relax();
		kt_check(pe);
		kt_unlock(&kt_a, prev);
		kt_check(ne);
		prev = next;
		pe = ne;
		if ((n & 255) == 0)
			kt_sleep_us(20);
		n++;
	}
	kt_check(pe);
	kt_unlock(&kt_a, prev);
	kt_count(&kt_reads, n);
	return NULL;
}

static void *kt_reader_two_domains(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned long n = 0;
	kt_delay_on = 1;
	while (!kt_stopped()) {
		struct kt_sec ib = kt_lock(&kt_b);
		struct kt_sec ia = kt_lock(&kt_a);
		struct kt_elem *b = ksync_srcu_dereference(kt_pb, &kt_b);
		struct kt_elem *a = ksync_srcu_dereference(kt_pa, &kt_a);
		for (unsigned int i = kt_lcg(&seed) % 64; i; i--)
			ksync_cpu_relax();
		kt_check(a);
		kt_unlock(&kt_a, ia);
		kt_check(b); /* domain B still held */
		kt_unlock(&kt_b, ib);
		n++;
	}
	kt_count(&kt_reads, n);
	return NULL;
}

static void *kt_reader_sleeping(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned long n = 0;
	kt_delay_on = 1;
	while (!kt_stopped()) {
		bool use_b = kt_lcg(&seed) & 1;
		struct ksync_srcu_struct *ssp = use_b ? &kt_b : &kt_a;
		struct kt_sec idx = kt_lock(ssp);
		struct kt_elem *e = use_b ? ksync_srcu_dereference(kt_pb, ssp)
					  : ksync_srcu_dereference(kt_pa, ssp);
		kt_sleep_us(50 + kt_lcg(&seed) % 500);
		kt_check(e);
		kt_unlock(ssp, idx);
		n++;
	}
	kt_count(&kt_reads, n);
	return NULL;
}

/* down_read on one thread, up_read on another */
struct kt_handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int full;
	int idx;
	struct kt_elem *e;
};

static struct kt_handoff kt_ho = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, NULL };

static void *kt_reader_down(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	while (!kt_stopped()) {
		int idx = ksync_srcu_down_read(&kt_a);
		struct kt_elem *e = ksync_srcu_dereference_check(kt_pc, &kt_a, 1);
		for (unsigned int i = kt_lcg(&seed) % 64; i; i--)
			ksync_cpu_relax();
		pthread_mutex_lock(&kt_ho.lock);
		while (kt_ho.full && !kt_stopped())
			pthread_cond_wait(&kt_ho.cond, &kt_ho.lock);
		if (kt_ho.full) { /* stopping: end our own section */
			pthread_mutex_unlock(&kt_ho.lock);
			ksync_srcu_up_read(&kt_a, idx);
			break;
		}
		kt_ho.full = 1;
		kt_ho.idx = idx;
		kt_ho.e = e;
		pthread_cond_broadcast(&kt_ho.cond);
		pthread_mutex_unlock(&kt_ho.lock);
	}
	return NULL;
}

static void *kt_reader_up(void *arg)
{
	unsigned long n = 0;
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&kt_ho.lock);
		while (!kt_ho.full && !kt_stopped())
			pthread_cond_wait(&kt_ho.cond, &kt_ho.lock);
		if (!kt_ho.full) {
			pthread_mutex_unlock(&kt_ho.lock);
			break;
		}
		int idx = kt_ho.idx;
		struct kt_elem *e = kt_ho.e;
		kt_ho.full = 0;
		pthread_cond_broadcast(&kt_ho.cond);
		pthread_mutex_unlock(&kt_ho.lock);
		if ((n & 7) == 0)
			kt_sleep_us(100);
		kt_check(e);
		ksync_srcu_up_read(&kt_a, idx);
		n++;
	}
	kt_count(&kt_reads, n);
	return NULL;
}

/* ---- writers ---- */

static pthread_mutex_t kt_a_update_lock = PTHREAD_MUTEX_INITIALIZER;

static void *kt_writer_sync(void *arg)
{
	struct kt_elem *retired = NULL;
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	while (!kt_stopped()) {
		struct kt_elem *n = kt_new(&kt_a);
		pthread_mutex_lock(&kt_a_update_lock);
		struct kt_elem *old = ksync_rcu_replace_pointer(kt_pa, n, 1);
		pthread_mutex_unlock(&kt_a_update_lock);
		kt_count(&kt_updates, 1);
		if (old) {
			old->next_retired = retired;
			retired = old;
		}
		ksync_synchronize_srcu(&kt_a);
		kt_count(&kt_sync_gps, 1);
		/* One step per completed grace period. */
		struct kt_elem **pp = &retired;
		while (*pp) {
			struct kt_elem *e = *pp;
			int age = __atomic_add_fetch(&e->age, 1, __ATOMIC_RELAXED);
			if (age >= KT_AGE_FREE) {
				*pp = e->next_retired;
				kt_dispose(e);
			} else {
				pp = &e->next_retired;
			}
		}
		if ((kt_lcg(&seed) & 15) == 0)
			kt_sleep_us(20);
	}
	ksync_synchronize_srcu(&kt_a);
	ksync_synchronize_srcu(&kt_a);
	ksync_synchronize_srcu(&kt_a);
	while (retired) {
		struct kt_elem *e = retired;
		retired = e->next_retired;
		kt_dispose(e);
	}
	return NULL;
}

static void kt_age_cb(struct ksync_rcu_head *h)
{
	struct kt_elem *e = ksync_container_of(h, struct kt_elem, rh);
	kt_count(&kt_callbacks, 1);
	int age = __atomic_add_fetch(&e->age, 1, __ATOMIC_RELAXED);
	if (age >= KT_AGE_FREE)
		kt_dispose(e);
	else
		ksync_call_srcu(e->ssp, &e->rh, kt_age_cb); /* next grace period */
}

struct kt_cb_writer {
	struct ksync_srcu_struct *ssp;
	struct kt_elem **pp;
	pthread_mutex_t *lock;
};

static void *kt_writer_cb(void *arg)
{
	struct kt_cb_writer *w = (struct kt_cb_writer *)arg;
	unsigned long n = 0;
	while (!kt_stopped()) {
		struct kt_elem *e = kt_new(w->ssp);
		if (w->lock)
			pthread_mutex_lock(w->lock);
		struct kt_elem *old = ksync_rcu_replace_pointer(*w->pp, e, 1);
		if (w->lock)
			pthread_mutex_unlock(w->lock);
		kt_count(&kt_updates, 1);
		if (old) {
			kt_count(&kt_cb_retired, 1);
			ksync_call_srcu(w->ssp, &old->rh, kt_age_cb);
		}
		if ((++n & 63) == 0)
			kt_sleep_us(10);
	}
	return NULL;
}

KTEST(torture)
{
	double secs = ktest_seconds(2.0);
	ksync_init_srcu_struct(&kt_a);
	ksync_init_srcu_struct(&kt_b);
	ksync_rcu_assign_pointer(kt_pa, kt_new(&kt_a));
	ksync_rcu_assign_pointer(kt_pc, kt_new(&kt_a));
	ksync_rcu_assign_pointer(kt_pb, kt_new(&kt_b));

	struct kt_cb_writer wc = { &kt_a, &kt_pc, &kt_a_update_lock };
	struct kt_cb_writer wb = { &kt_b, &kt_pb, NULL };
	pthread_t th[16];
	int nt = 0;
	pthread_create(&th[nt++], NULL, kt_reader_plain, (void *)1);
	pthread_create(&th[nt++], NULL, kt_reader_plain, (void *)2);
	pthread_create(&th[nt++], NULL, kt_reader_nested, (void *)3);
	pthread_create(&th[nt++], NULL, kt_reader_two_domains, (void *)4);
	pthread_create(&th[nt++], NULL, kt_reader_sleeping, (void *)5);
	pthread_create(&th[nt++], NULL, kt_reader_down, (void *)6);
	pthread_create(&th[nt++], NULL, kt_reader_up, (void *)7);
	pthread_create(&th[nt++], NULL, kt_reader_hand_over_hand, (void *)11);
	int nreaders = nt;
	pthread_create(&th[nt++], NULL, kt_writer_sync, (void *)8);
	pthread_create(&th[nt++], NULL, kt_writer_cb, &wc);
	pthread_create(&th[nt++], NULL, kt_writer_cb, &wb);

	/* Short-lived reader threads come and go meanwhile (slot fold/free). */
	double t0 = ktest_now();
	unsigned long churn = 0;
	while (ktest_now() - t0 < secs) {
		pthread_t t;
		pthread_create(&t, NULL, kt_reader_churn, NULL);
		kt_sleep_us(20000);
		pthread_join(t, NULL);
		churn++;
		if (KT_EXPECT_ERRORS && __atomic_load_n(&kt_errors, __ATOMIC_RELAXED))
			break; /* caught: stop early */
	}
	__atomic_store_n(&kt_stop, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&kt_ho.lock);
	pthread_cond_broadcast(&kt_ho.cond);
	pthread_mutex_unlock(&kt_ho.lock);
	for (int i = 0; i < nreaders; i++)
		pthread_join(th[i], NULL);
	/* A section handed over as the up_read thread stopped: end it here. */
	if (kt_ho.full) {
		kt_check(kt_ho.e);
		ksync_srcu_up_read(&kt_a, kt_ho.idx);
		kt_ho.full = 0;
	}
	for (int i = nreaders; i < nt; i++)
		pthread_join(th[i], NULL);

	ksync_srcu_barrier(&kt_a);
	ksync_srcu_barrier(&kt_b);
	unsigned long gps = kt_srcu_gp_seq(&kt_a) / 2 + kt_srcu_gp_seq(&kt_b) / 2;
	printf("srcu torture: %.1f s, %s mode: %lu reads, %lu updates, %lu grace periods "
	       "(%lu by synchronize_srcu), %lu callbacks, %lu churned threads, %lu errors\n",
	       secs, (kt_srcu_id(&kt_a) & 1) ? "fenced" : "membarrier", kt_reads, kt_updates, gps,
	       kt_sync_gps, kt_callbacks, churn, kt_errors);
	KCHECK(kt_reads > 0);
	KCHECK(kt_sync_gps > 0);
	if (KT_EXPECT_ERRORS) {
		KCHECK(kt_errors > 0); /* the mutation must be caught */
	} else {
		KCHECK_EQ(kt_errors, 0);
		KCHECK(kt_callbacks > 0);
		/* After the barriers nothing is in flight: a lost or doubled
		 * callback, or an element never freed, shows here. */
		KCHECK_EQ(kt_callbacks, KT_AGE_FREE * kt_cb_retired);
		KCHECK_EQ(kt_allocated - kt_disposed, 3); /* the three still published */
	}
	free(ksync_rcu_dereference_raw(kt_pa));
	free(ksync_rcu_dereference_raw(kt_pb));
	free(ksync_rcu_dereference_raw(kt_pc));
	while (kt_graveyard) {
		struct kt_elem *e = kt_graveyard;
		kt_graveyard = e->next_retired;
		free(e);
	}
	ksync_cleanup_srcu_struct(&kt_a);
	ksync_cleanup_srcu_struct(&kt_b);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
