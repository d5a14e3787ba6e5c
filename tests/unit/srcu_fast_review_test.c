/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Review tests of SRCU's fast read form (ksync_srcu_read_lock_fast() and
 * friends), written against docs/srcu.md, docs/errors.md and the
 * kernel-doc of <ksync/srcu.h>, not against the code:
 *
 *  - a grace period waits for every fast section begun before it: nested,
 *    mixed with classic sections on one domain, on both indexes, on a
 *    domain past the direct words (with the thread's slot cache evicted
 *    while the sections are open), after cleanup and re-initialisation at
 *    the same address, in a fork() child (forced schedules: the releasing
 *    thread waits until a grace period is waiting for it);
 *  - synchronize_srcu, call_srcu, srcu_barrier and polled cookies with fast
 *    readers; ksync_srcu_read_lock_held() with fast sections;
 *  - srcu_down_read_fast()/srcu_up_read_fast() across threads;
 *  - misuse: an unbalanced fast unlock is reported (every build) and ends
 *    nothing; a token of another domain or thread is reported and ignored
 *    in KSYNC_DEBUG builds; bad up_read_fast tokens; synchronize inside a
 *    fast section. Each misuse runs in a fork() child (the reports are once
 *    per library site, so each child starts with fresh sites);
 *  - a stress loop: readers in both forms on direct and far domains, short
 *    lived reader threads, writers retiring objects by synchronize,
 *    call_srcu and polled cookies; readers check that what they hold was
 *    not retired (poisoned, then freed after a delay: ASan sees the free).
 */
#include <ksync/fuzzing.h>
#include <ksync/kernel.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"
#include "reports.h"
#include "rng.h"
#include "sanitizer.h"
#include "srcu_peek.h"
#include "wait.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)

/* Is @ssp past the direct words (its words in the slot, found through the cache)? */
static int is_far(const struct ksync_srcu_struct *ssp)
{
	return ssp->key == 0 && ssp->id != 0;
}

/* ------------------------------------------------------------------------ */
/* Domains past the direct words                                            */

/*
 * Fillers: enough domains set up to take every direct entry, so that the
 * next domains set up are past them (other live domains of the process
 * only take entries too).
 */
#define NFILL (KSYNC_SRCU_DIRECT - 1)
static struct ksync_srcu_struct fill[NFILL];

static void fill_direct(void)
{
	for (int i = 0; i < NFILL; i++)
		ksync_init_srcu_struct(&fill[i]);
}

static void unfill_direct(void)
{
	for (int i = 0; i < NFILL; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
}

/* ------------------------------------------------------------------------ */
/* A section of either form                                                 */

struct section {
	struct ksync_srcu_struct *ssp;
	int fast;
	int flip_before; /* flip the index (no grace period) before the lock */
	struct ksync_srcu_ctr *tok;
	int idx;
};

static void open_section(struct section *s)
{
	if (s->flip_before)
		kt_srcu_flip(s->ssp);
	if (s->fast)
		s->tok = ksync_srcu_read_lock_fast(s->ssp);
	else
		s->idx = ksync_srcu_read_lock(s->ssp);
}

static void close_section(struct section *s)
{
	if (s->fast)
		ksync_srcu_read_unlock_fast(s->ssp, s->tok);
	else
		ksync_srcu_read_unlock(s->ssp, s->idx);
}

/* ------------------------------------------------------------------------ */
/* Forced schedule: a grace period of the target waits for open sections   */

#define MAXSEC 48

struct hold_job {
	struct ksync_srcu_struct *target;
	struct section sec[MAXSEC];
	int nsec;
	int order[MAXSEC]; /* closing order */
	/* sections of other domains opened after ours, then closed: evicts the cache */
	struct ksync_srcu_struct **churn;
	int nchurn;
	int target_open; /* sections of target still open (decremented before the unlock) */
	int entered, sync_started, sync_done;
	int open_at_return; /* target_open when synchronize returned */
	int early;	    /* synchronize was done while a section of target was open */
	int held_bad;	    /* read_lock_held() said otherwise than the sections */
};

static void *hold_syncer(void *p)
{
	struct hold_job *j = (struct hold_job *)p;

	ST(&j->sync_started, 1);
	ksync_synchronize_srcu(j->target);
	ST(&j->open_at_return, LD(&j->target_open));
	ST(&j->sync_done, 1);
	return NULL;
}

/* The reader's half, on the calling thread. */
static void hold_reader(struct hold_job *j)
{
	int n = 0;
	for (int i = 0; i < j->nsec; i++)
		n += j->sec[i].ssp == j->target;
	ST(&j->target_open, n);
	for (int i = 0; i < j->nsec; i++) {
		open_section(&j->sec[i]);
		if (!ksync_srcu_read_lock_held(j->sec[i].ssp))
			ADD(&j->held_bad, 1);
	}
	/* Other domains' sections, opened and closed: the slot cache turns over. */
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < j->nchurn; i++) {
			struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(j->churn[i]);
			int idx = ksync_srcu_read_lock(j->churn[i]);
			ksync_srcu_read_unlock_fast(j->churn[i], t);
			ksync_srcu_read_unlock(j->churn[i], idx);
		}
	for (int i = 0; i < j->nsec; i++)
		if (!ksync_srcu_read_lock_held(j->sec[i].ssp))
			ADD(&j->held_bad, 1);
	ST(&j->entered, 1);
	/* Release only once a grace period of the target waits for us (or ended early). */
	KT_POLL_UNTIL(LD(&j->sync_started));
	KT_POLL_UNTIL(ksync_srcu_gp_pending(j->target) || LD(&j->sync_done));
	for (int k = 0; k < j->nsec; k++) {
		struct section *s = &j->sec[j->order[k]];
		if (s->ssp == j->target) {
			if (LD(&j->sync_done))
				ADD(&j->early, 1);
			ADD(&j->target_open, -1);
		}
		close_section(s);
		kt_sleep_us(500); /* room for a grace period that ends too early */
	}
	for (int i = 0; i < j->nsec; i++)
		if (ksync_srcu_read_lock_held(j->sec[i].ssp))
			ADD(&j->held_bad, 1);
}

static void *hold_reader_thread(void *p)
{
	hold_reader((struct hold_job *)p);
	return NULL;
}

/* Run @j with its reader on a new thread and check the grace period waited. */
static void hold_check_on(struct hold_job *j, void *(*reader)(void *), void *arg)
{
	pthread_t r, s;

	j->entered = j->sync_started = j->sync_done = 0;
	j->early = j->held_bad = 0;
	j->open_at_return = -1;
	pthread_create(&r, NULL, reader, arg);
	KT_POLL_UNTIL(LD(&j->entered));
	pthread_create(&s, NULL, hold_syncer, j);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	KCHECK_EQ(LD(&j->open_at_return), 0);
	KCHECK_EQ(LD(&j->early), 0);
	KCHECK_EQ(LD(&j->held_bad), 0);
}

static void hold_check(struct hold_job *j)
{
	hold_check_on(j, hold_reader_thread, j);
}

/* Sections on @ssp: fast and classic nested, on both indexes, closed out of order. */
static void nested_mixed_job(struct hold_job *j, struct ksync_srcu_struct *ssp)
{
	static const int fast[] = { 1, 0, 1, 1, 0, 1 };
	static const int flip[] = { 0, 0, 1, 0, 1, 0 };
	static const int order[] = { 0, 3, 1, 5, 2, 4 };

	memset(j, 0, sizeof(*j));
	j->target = ssp;
	j->nsec = 6;
	for (int i = 0; i < 6; i++) {
		j->sec[i] = (struct section){ ssp, fast[i], flip[i], NULL, 0 };
		j->order[i] = order[i];
	}
}

KTEST(fast_sections_nested_and_mixed_hold_off_a_grace_period)
{
	struct ksync_srcu_struct ss;
	struct hold_job j;

	ksync_init_srcu_struct(&ss);
	KCHECK(!is_far(&ss) || kt_srcu_id(&ss) == 0);
	nested_mixed_job(&j, &ss);
	hold_check(&j);
	/* Each form alone, outermost */
	for (int f = 0; f < 2; f++) {
		memset(&j, 0, sizeof(j));
		j.target = &ss;
		j.nsec = 1;
		j.sec[0] = (struct section){ &ss, f, 0, NULL, 0 };
		hold_check(&j);
	}
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(fast_sections_on_a_static_domain_hold_off_a_grace_period)
{
	static KSYNC_DEFINE_SRCU(st);
	struct hold_job j;

	nested_mixed_job(&j, &st); /* the reader's first lock sets the domain up */
	hold_check(&j);
	ksync_cleanup_srcu_struct(&st);
}

/*
 * Domains past the direct words: the 40th domain and on. Sections on eight
 * far domains at once, the thread's cache turned over by twelve more while
 * they are open; each of the eight in turn is the target.
 */
#define NFAR 20

KTEST(fast_sections_on_far_domains_survive_cache_eviction)
{
	struct ksync_srcu_struct far[NFAR];
	struct ksync_srcu_struct *churn[NFAR];
	struct hold_job j;

	fill_direct();
	for (int i = 0; i < NFAR; i++) {
		ksync_init_srcu_struct(&far[i]);
		KCHECK(is_far(&far[i]));
	}
	for (int i = 0; i < 12; i++)
		churn[i] = &far[8 + i];
	for (int t = 0; t < 8; t++) {
		memset(&j, 0, sizeof(j));
		j.target = &far[t];
		j.churn = churn;
		j.nchurn = 12;
		/* two sections per domain, alternating forms, the target's on both indexes */
		for (int i = 0; i < 8; i++) {
			j.sec[2 * i] = (struct section){ &far[i], (i + t) & 1, 0, NULL, 0 };
			j.sec[2 * i + 1] = (struct section){ &far[i], 1, i == t, NULL, 0 };
		}
		j.nsec = 16;
		for (int k = 0; k < 16; k++)
			j.order[k] = (k * 5 + t) % 16; /* 5 is prime to 16: a permutation */
		hold_check(&j);
	}
	for (int i = 0; i < NFAR; i++)
		ksync_cleanup_srcu_struct(&far[i]);
	unfill_direct();
}

KTEST(fast_sections_on_the_40th_domain_nested_and_mixed)
{
	struct ksync_srcu_struct more[10];
	struct hold_job j;

	fill_direct();
	for (int i = 0; i < 10; i++)
		ksync_init_srcu_struct(&more[i]); /* the 32nd to the 41st */
	KCHECK(is_far(&more[8]));
	nested_mixed_job(&j, &more[8]);
	hold_check(&j);
	for (int i = 0; i < 10; i++)
		ksync_cleanup_srcu_struct(&more[i]);
	unfill_direct();
}

/*
 * One reader thread lives through every cycle (its cache and slot list keep
 * entries of the domain's earlier lives); the domain at one address is
 * cleaned up and set up again, direct and far in turn.
 */
struct worker {
	pthread_t th;
	struct hold_job *job;
	int seq, done, stop;
};

static void *worker_main(void *p)
{
	struct worker *w = (struct worker *)p;
	int seen = 0;

	for (;;) {
		KT_POLL_UNTIL(LD(&w->seq) != seen || LD(&w->stop));
		if (LD(&w->stop))
			return NULL;
		seen = LD(&w->seq);
		hold_reader(w->job);
		ST(&w->done, seen);
	}
}

static void *worker_kick(void *p)
{
	struct worker *w = (struct worker *)p;

	ADD(&w->seq, 1);
	KT_POLL_UNTIL(LD(&w->done) == LD(&w->seq));
	return NULL;
}

KTEST(cleanup_and_reinit_at_one_address_with_a_long_lived_fast_reader)
{
	struct ksync_srcu_struct ss;
	struct ksync_srcu_struct other[4];
	struct ksync_srcu_struct *churn[4];
	struct hold_job j;
	struct worker w;

	memset(&w, 0, sizeof(w));
	w.job = &j;
	pthread_create(&w.th, NULL, worker_main, &w);
	for (int i = 0; i < 4; i++)
		churn[i] = &other[i];
	for (int cycle = 0; cycle < 12; cycle++) {
		int far_cycle = cycle & 1;
		if (far_cycle)
			fill_direct();
		for (int i = 0; i < 4; i++)
			ksync_init_srcu_struct(&other[i]);
		ksync_init_srcu_struct_flags(&ss, (cycle & 2) ? KSYNC_SRCU_FENCED : 0);
		KCHECK_EQ(is_far(&ss), far_cycle);
		nested_mixed_job(&j, &ss);
		j.churn = churn;
		j.nchurn = far_cycle ? 4 : 0;
		hold_check_on(&j, worker_kick, &w);
		ksync_cleanup_srcu_struct(&ss);
		KCHECK_EQ(kt_srcu_id(&ss), 0);
		for (int i = 0; i < 4; i++)
			ksync_cleanup_srcu_struct(&other[i]);
		if (far_cycle)
			unfill_direct();
	}
	ST(&w.stop, 1);
	pthread_join(w.th, NULL);
}

/* ------------------------------------------------------------------------ */
/* read_lock_held                                                           */

static void *held_elsewhere(void *p)
{
	return (void *)(intptr_t)ksync_srcu_read_lock_held((struct ksync_srcu_struct *)p);
}

static void held_checks(struct ksync_srcu_struct *ssp)
{
	KCHECK_EQ(ksync_srcu_read_lock_held(ssp), 0);
	struct ksync_srcu_ctr *a = ksync_srcu_read_lock_fast(ssp);
	KCHECK_EQ(ksync_srcu_read_lock_held(ssp), 1);
	/* another thread is not inside */
	pthread_t t;
	void *r;
	pthread_create(&t, NULL, held_elsewhere, ssp);
	pthread_join(t, &r);
	KCHECK_EQ((int)(intptr_t)r, 0);
	int i = ksync_srcu_read_lock(ssp);
	kt_srcu_flip(ssp);
	struct ksync_srcu_ctr *b = ksync_srcu_read_lock_fast(ssp);
	ksync_srcu_read_unlock_fast(ssp, a);
	KCHECK_EQ(ksync_srcu_read_lock_held(ssp), 1);
	ksync_srcu_read_unlock(ssp, i);
	KCHECK_EQ(ksync_srcu_read_lock_held(ssp), 1);
	ksync_srcu_read_unlock_fast(ssp, b);
	KCHECK_EQ(ksync_srcu_read_lock_held(ssp), 0);
	/* down_read sections belong to no thread (documented) */
	struct ksync_srcu_ctr *d = ksync_srcu_down_read_fast(ssp);
	KCHECK_EQ(ksync_srcu_read_lock_held(ssp), 0);
	ksync_srcu_up_read_fast(ssp, d);
	ksync_synchronize_srcu(ssp);
}

KTEST(read_lock_held_sees_fast_sections_direct_and_far)
{
	struct ksync_srcu_struct d, f[6];

	ksync_init_srcu_struct(&d);
	held_checks(&d);
	fill_direct();
	for (int i = 0; i < 6; i++)
		ksync_init_srcu_struct(&f[i]);
	KCHECK(is_far(&f[0]));
	held_checks(&f[0]);
	/* fast sections on six far domains at once: held on each, past the cache */
	struct ksync_srcu_ctr *t[6];
	for (int i = 0; i < 6; i++)
		t[i] = ksync_srcu_read_lock_fast(&f[i]);
	for (int i = 0; i < 6; i++)
		KCHECK_EQ(ksync_srcu_read_lock_held(&f[i]), 1);
	for (int i = 0; i < 6; i++) {
		ksync_srcu_read_unlock_fast(&f[i], t[i]);
		KCHECK_EQ(ksync_srcu_read_lock_held(&f[i]), 0);
		for (int k = i + 1; k < 6; k++)
			KCHECK_EQ(ksync_srcu_read_lock_held(&f[k]), 1);
	}
	for (int i = 0; i < 6; i++)
		ksync_cleanup_srcu_struct(&f[i]);
	unfill_direct();
	ksync_cleanup_srcu_struct(&d);
}

/* ------------------------------------------------------------------------ */
/* srcu_down_read_fast / srcu_up_read_fast across threads                  */

struct updown {
	struct ksync_srcu_struct *ssp;
	struct ksync_srcu_ctr *tok;
	int have, open, sync_started, sync_done, open_at_return, early;
};

static void *down_thread(void *p)
{
	struct updown *u = (struct updown *)p;

	u->tok = ksync_srcu_down_read_fast(u->ssp);
	ST(&u->open, 1);
	ST(&u->have, 1);
	return NULL; /* the section outlives its thread */
}

static void *updown_syncer(void *p)
{
	struct updown *u = (struct updown *)p;

	ST(&u->sync_started, 1);
	ksync_synchronize_srcu(u->ssp);
	ST(&u->open_at_return, LD(&u->open));
	ST(&u->sync_done, 1);
	return NULL;
}

static void *up_thread(void *p)
{
	struct updown *u = (struct updown *)p;

	KT_POLL_UNTIL(LD(&u->sync_started));
	KT_POLL_UNTIL(ksync_srcu_gp_pending(u->ssp) || LD(&u->sync_done));
	kt_sleep_ms(2);
	if (LD(&u->sync_done))
		ADD(&u->early, 1);
	ST(&u->open, 0);
	ksync_srcu_up_read_fast(u->ssp, u->tok);
	return NULL;
}

static void updown_check(struct ksync_srcu_struct *ssp)
{
	struct updown u;
	pthread_t a, b, c;

	memset(&u, 0, sizeof(u));
	u.ssp = ssp;
	u.open_at_return = -1;
	pthread_create(&a, NULL, down_thread, &u);
	pthread_join(a, NULL); /* the locker is gone */
	KCHECK(LD(&u.have));
	pthread_create(&c, NULL, updown_syncer, &u);
	pthread_create(&b, NULL, up_thread, &u);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	KCHECK_EQ(LD(&u.open_at_return), 0);
	KCHECK_EQ(LD(&u.early), 0);
}

KTEST(down_read_fast_section_ends_on_another_thread)
{
	struct ksync_srcu_struct ss;
	unsigned long w0 = ksync_warn_count;

	ksync_init_srcu_struct(&ss);
	updown_check(&ss);
	kt_srcu_flip(&ss);
	updown_check(&ss); /* on the other index */
	fill_direct();
	struct ksync_srcu_struct f;
	ksync_init_srcu_struct(&f);
	KCHECK(is_far(&f));
	updown_check(&f);
	ksync_cleanup_srcu_struct(&f);
	unfill_direct();
	KCHECK_EQ(ksync_warn_count, w0); /* no misuse reported */
	ksync_cleanup_srcu_struct(&ss);
}

/* ------------------------------------------------------------------------ */
/* call_srcu, srcu_barrier, polled cookies with fast readers                */

struct cb_obj {
	struct ksync_rcu_head rh;
	int *reader_open;
	int *bad;
	int *ran;
};

static void cb_check(struct ksync_rcu_head *h)
{
	struct cb_obj *o = ksync_container_of(h, struct cb_obj, rh);

	if (LD(o->reader_open))
		ADD(o->bad, 1);
	ADD(o->ran, 1);
	free(o);
}

struct poll_reader {
	struct ksync_srcu_struct *ssp;
	int fast_nested;
	int entered, release, open;
};

static void *poll_reader_main(void *p)
{
	struct poll_reader *r = (struct poll_reader *)p;
	struct ksync_srcu_ctr *a = ksync_srcu_read_lock_fast(r->ssp);
	int i = ksync_srcu_read_lock(r->ssp);
	struct ksync_srcu_ctr *b = ksync_srcu_read_lock_fast(r->ssp);

	ST(&r->open, 1);
	ST(&r->entered, 1);
	KT_POLL_UNTIL(LD(&r->release));
	ST(&r->open, 0);
	ksync_srcu_read_unlock(r->ssp, i);
	ksync_srcu_read_unlock_fast(r->ssp, a);
	ksync_srcu_read_unlock_fast(r->ssp, b);
	return NULL;
}

static void callbacks_and_polls_check(struct ksync_srcu_struct *ssp)
{
	struct poll_reader r;
	int bad = 0, ran = 0;
	pthread_t t;

	memset(&r, 0, sizeof(r));
	r.ssp = ssp;
	unsigned long before = ksync_get_state_synchronize_srcu(ssp);
	ksync_synchronize_srcu(ssp);
	KCHECK(ksync_poll_state_synchronize_srcu(ssp, before));
	pthread_create(&t, NULL, poll_reader_main, &r);
	KT_POLL_UNTIL(LD(&r.entered));
	unsigned long c1 = ksync_start_poll_synchronize_srcu(ssp);
	unsigned long c2 = ksync_get_state_synchronize_srcu(ssp);
	for (int i = 0; i < 8; i++) {
		struct cb_obj *o = (struct cb_obj *)malloc(sizeof(*o));
		o->reader_open = &r.open;
		o->bad = &bad;
		o->ran = &ran;
		ksync_call_srcu(ssp, &o->rh, cb_check);
	}
	/* While the reader is inside, neither cookie's grace period can end. */
	for (int i = 0; i < 20; i++) {
		KCHECK(!ksync_poll_state_synchronize_srcu(ssp, c1));
		KCHECK(!ksync_poll_state_synchronize_srcu(ssp, c2));
		kt_sleep_us(500);
	}
	KCHECK_EQ(LD(&ran), 0);
	ST(&r.release, 1);
	pthread_join(t, NULL);
	KT_POLL_UNTIL(ksync_poll_state_synchronize_srcu(ssp, c1));
	ksync_synchronize_srcu(ssp);
	KCHECK(ksync_poll_state_synchronize_srcu(ssp, c2));
	ksync_srcu_barrier(ssp);
	KCHECK_EQ(LD(&ran), 8);
	KCHECK_EQ(LD(&bad), 0);
}

KTEST(call_srcu_barrier_and_polls_wait_for_fast_readers)
{
	struct ksync_srcu_struct ss, f;

	ksync_init_srcu_struct(&ss);
	callbacks_and_polls_check(&ss);
	fill_direct();
	ksync_init_srcu_struct(&f);
	KCHECK(is_far(&f));
	callbacks_and_polls_check(&f);
	ksync_cleanup_srcu_struct(&f);
	unfill_direct();
	ksync_cleanup_srcu_struct(&ss);
}

/* ------------------------------------------------------------------------ */
/* Kernel spellings                                                         */

KTEST(kernel_spellings_of_the_fast_form)
{
	static DEFINE_SRCU(ks);
	struct srcu_ctr __percpu *a = srcu_read_lock_fast(&ks);
	KCHECK(a != NULL);
	KCHECK_EQ(srcu_read_lock_held(&ks), 1);
	struct srcu_ctr __percpu *b = srcu_read_lock_fast(&ks);
	srcu_read_unlock_fast(&ks, a);
	srcu_read_unlock_fast(&ks, b);
	KCHECK_EQ(srcu_read_lock_held(&ks), 0);
	struct srcu_ctr __percpu *d = srcu_down_read_fast(&ks);
	KCHECK(d != NULL);
	srcu_up_read_fast(&ks, d);
	synchronize_srcu(&ks);
	cleanup_srcu_struct(&ks);
}

/* ------------------------------------------------------------------------ */
/* Misuse, each in a fork() child                                           */

/*
 * Run @fn in a child of a process that has no other thread (every test
 * before cleaned its domains up): each child's report sites are fresh.
 * The child exits with the number of failed expectations.
 */
static int child_fails;
#define CEXPECT(c)                                                             \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "child: %s:%d: expected %s\n", __FILE__, __LINE__, #c); \
			child_fails++;                                         \
		}                                                              \
	} while (0)

static void in_child(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		child_fails = 0;
		reports = 0;
		report_file = NULL;
		ksync_warn_hook = kt_record_report;
		fn();
		fflush(NULL);
		_exit(child_fails > 100 ? 100 : child_fails);
	}
	int st = 0;
	KCHECK(pid > 0);
	KCHECK_EQ(waitpid(pid, &st, 0), pid);
	KCHECK(WIFEXITED(st));
	KCHECK_EQ(WEXITSTATUS(st), 0);
}

/* As in_child(), in this process (its report sites must not have been hit yet). */
static KSYNC_UNUSED void here(void (*fn)(void))
{
	child_fails = 0;
	reports = 0;
	report_file = NULL;
	ksync_warn_hook = kt_record_report;
	fn();
	ksync_warn_hook = NULL;
	KCHECK_EQ(child_fails, 0);
}

/* A report came, naming one of SRCU's headers and a line. */
static int reported_since(int before)
{
	return reports > before && report_file && strstr(report_file, "srcu") && report_line > 0;
}

/* A grace period of @ssp cannot end while the open section of this thread stays open. */
struct still_job {
	struct ksync_srcu_struct *ssp;
	int started, done, open, open_at_return;
};

static void *still_syncer(void *p)
{
	struct still_job *s = (struct still_job *)p;

	ST(&s->started, 1);
	ksync_synchronize_srcu(s->ssp);
	ST(&s->open_at_return, LD(&s->open));
	ST(&s->done, 1);
	return NULL;
}

static pthread_t still_start(struct still_job *s, struct ksync_srcu_struct *ssp)
{
	pthread_t t;

	memset(s, 0, sizeof(*s));
	s->ssp = ssp;
	s->open = 1;
	s->open_at_return = -1;
	pthread_create(&t, NULL, still_syncer, s);
	KT_POLL_UNTIL(LD(&s->started));
	KT_POLL_UNTIL(ksync_srcu_gp_pending(ssp) || LD(&s->done));
	kt_sleep_ms(2);
	return t;
}

/* Just before the section ends: the grace period still waits for it. */
static void still_waiting(struct still_job *s)
{
	CEXPECT(!LD(&s->done));
	ST(&s->open, 0);
}

static void still_end(struct still_job *s, pthread_t t)
{
	pthread_join(t, NULL);
	CEXPECT(LD(&s->open_at_return) == 0);
}

static void unbalanced_fast_unlock_child(struct ksync_srcu_struct *ssp)
{
	struct ksync_srcu_ctr *keep = ksync_srcu_read_lock_fast(ssp); /* stays open */
	kt_srcu_flip(ssp);
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(ssp);
	CEXPECT(t != keep);
	ksync_srcu_read_unlock_fast(ssp, t);
	int r0 = reports;
	ksync_srcu_read_unlock_fast(ssp, t); /* unbalanced */
	CEXPECT(reported_since(r0));
	CEXPECT(ksync_srcu_read_lock_held(ssp));
	/* ...and ignored: the section still open still holds a grace period off */
	struct still_job s;
	pthread_t th = still_start(&s, ssp);
	still_waiting(&s);
	ksync_srcu_read_unlock_fast(ssp, keep);
	still_end(&s, th);
	CEXPECT(!ksync_srcu_read_lock_held(ssp));

	/* An unbalanced fast unlock does not end a srcu_down_read() section. */
	int d = ksync_srcu_down_read(ssp);
	t = ksync_srcu_read_lock_fast(ssp);
	ksync_srcu_read_unlock_fast(ssp, t);
	ksync_srcu_read_unlock_fast(ssp, t); /* unbalanced again (site already reported) */
	th = still_start(&s, ssp);
	still_waiting(&s);
	ksync_srcu_up_read(ssp, d);
	still_end(&s, th);
}

static void unbalanced_direct(void)
{
	struct ksync_srcu_struct ss;

	ksync_init_srcu_struct(&ss);
	unbalanced_fast_unlock_child(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

static void unbalanced_far(void)
{
	struct ksync_srcu_struct ss;

	fill_direct();
	ksync_init_srcu_struct(&ss);
	CEXPECT(is_far(&ss));
	unbalanced_fast_unlock_child(&ss);
}

KTEST(unbalanced_fast_unlock_is_reported_and_ends_nothing)
{
	in_child(unbalanced_direct);
	in_child(unbalanced_far);
}

/* A thread inside a fast section until released (a foreign token's owner; a reader at fork). */
struct foreign {
	struct ksync_srcu_struct *ssp;
	struct ksync_srcu_ctr *tok;
	int entered, release, open;
};

static void *foreign_owner(void *p)
{
	struct foreign *f = (struct foreign *)p;

	f->tok = ksync_srcu_read_lock_fast(f->ssp);
	ST(&f->open, 1);
	ST(&f->entered, 1);
	KT_POLL_UNTIL(LD(&f->release));
	ksync_srcu_read_unlock_fast(f->ssp, f->tok);
	return NULL;
}

#if KSYNC_DEBUG_ENABLED
/* A token of another domain: reported, ignored (KSYNC_DEBUG builds). */
static void foreign_domain_token(void)
{
	struct ksync_srcu_struct a, b;

	ksync_init_srcu_struct(&a);
	ksync_init_srcu_struct(&b);
	struct ksync_srcu_ctr *ta = ksync_srcu_read_lock_fast(&a);
	struct ksync_srcu_ctr *tb = ksync_srcu_read_lock_fast(&b);
	int r0 = reports;
	ksync_srcu_read_unlock_fast(&b, ta); /* a's token given to b */
	CEXPECT(reported_since(r0));
	CEXPECT(ksync_srcu_read_lock_held(&a));
	CEXPECT(ksync_srcu_read_lock_held(&b));
	struct still_job s;
	pthread_t th = still_start(&s, &a); /* a's section is still open */
	still_waiting(&s);
	ksync_srcu_read_unlock_fast(&a, ta);
	still_end(&s, th);
	th = still_start(&s, &b);
	still_waiting(&s);
	ksync_srcu_read_unlock_fast(&b, tb);
	still_end(&s, th);
	ksync_cleanup_srcu_struct(&a);
	ksync_cleanup_srcu_struct(&b);
}

static void foreign_thread_token_on(struct ksync_srcu_struct *ssp)
{
	struct foreign f;
	pthread_t o;

	memset(&f, 0, sizeof(f));
	f.ssp = ssp;
	pthread_create(&o, NULL, foreign_owner, &f);
	KT_POLL_UNTIL(LD(&f.entered));
	/* this thread has a section of its own on the same index */
	struct ksync_srcu_ctr *mine = ksync_srcu_read_lock_fast(ssp);
	int r0 = reports;
	ksync_srcu_read_unlock_fast(ssp, f.tok);
	CEXPECT(reported_since(r0));
	CEXPECT(ksync_srcu_read_lock_held(ssp)); /* mine is still open */
	ksync_srcu_read_unlock_fast(ssp, mine);
	/* the owner's section still holds a grace period off */
	struct still_job s;
	pthread_t th = still_start(&s, ssp);
	still_waiting(&s);
	ST(&f.release, 1);
	pthread_join(o, NULL);
	still_end(&s, th);
}

static void foreign_thread_token(void)
{
	struct ksync_srcu_struct ss;

	ksync_init_srcu_struct(&ss);
	foreign_thread_token_on(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

static KSYNC_UNUSED void foreign_thread_token_far(void)
{
	struct ksync_srcu_struct ss;

	fill_direct();
	ksync_init_srcu_struct(&ss);
	CEXPECT(is_far(&ss));
	foreign_thread_token_on(&ss);
}

KTEST(foreign_fast_tokens_are_reported_and_ignored_in_debug_builds)
{
	in_child(foreign_domain_token);
#if KT_TSAN
	/*
	 * TSan takes the SRCU locks that the fork() child re-creates for locks
	 * still held by the parent: a new thread of the child that takes one
	 * is reported as a double lock. Here instead: this process has not hit
	 * the report's site yet (the domain case ran in a child).
	 */
	here(foreign_thread_token);
#else
	in_child(foreign_thread_token);
	in_child(foreign_thread_token_far);
#endif
}
#endif

static void bad_up_read_fast(void)
{
	struct ksync_srcu_struct a, b;

	ksync_init_srcu_struct(&a);
	ksync_init_srcu_struct(&b);
	struct ksync_srcu_ctr *d = ksync_srcu_down_read_fast(&a);
	int r0 = reports;
	ksync_srcu_up_read_fast(&b, d); /* a token of another domain */
	CEXPECT(reported_since(r0));
	int r1 = reports;
	struct ksync_srcu_ctr *fast = ksync_srcu_read_lock_fast(&a);
	ksync_srcu_up_read_fast(&a, fast); /* a read_lock_fast token is not a down_read_fast one */
	CEXPECT(reports == r1 + 0 || reported_since(r1)); /* the same site: once */
	CEXPECT(ksync_srcu_read_lock_held(&a));
	ksync_srcu_read_unlock_fast(&a, fast);
	/* d's section is still open */
	struct still_job s;
	pthread_t th = still_start(&s, &a);
	still_waiting(&s);
	ksync_srcu_up_read_fast(&a, d);
	still_end(&s, th);
	int r2 = reports;
	ksync_srcu_up_read_fast(&a, d); /* twice */
	CEXPECT(reported_since(r2));
	ksync_synchronize_srcu(&a);
	ksync_cleanup_srcu_struct(&a);
	ksync_cleanup_srcu_struct(&b);
}

KTEST(bad_up_read_fast_tokens_are_reported_and_ignored)
{
	in_child(bad_up_read_fast);
}

static void synchronize_inside_fast(void)
{
	struct ksync_srcu_struct f[8];

	fill_direct();
	for (int i = 0; i < 8; i++)
		ksync_init_srcu_struct(&f[i]);
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(&f[0]);
	for (int i = 1; i < 8; i++) { /* f[0] leaves the cache */
		struct ksync_srcu_ctr *u = ksync_srcu_read_lock_fast(&f[i]);
		ksync_srcu_read_unlock_fast(&f[i], u);
	}
	int r0 = reports;
	ksync_synchronize_srcu(&f[0]); /* returns instead of deadlocking */
	CEXPECT(reported_since(r0));
	int r1 = reports;
	ksync_srcu_barrier(&f[0]);
	CEXPECT(reported_since(r1));
	ksync_srcu_read_unlock_fast(&f[0], t);
	ksync_synchronize_srcu(&f[0]);
}

KTEST(synchronize_inside_a_fast_section_of_a_far_domain_is_reported)
{
	in_child(synchronize_inside_fast);
}

/* ------------------------------------------------------------------------ */
/* Sections in the shared counters (the slot could not be allocated)        */

/*
 * docs/srcu.md: a fast section whose slot could not be allocated counts in
 * the shared counters, with a token naming entry 0; it is this thread's
 * (read_lock_held), grace periods wait for it, its unlock ends it.
 */
struct shared_job {
	struct ksync_srcu_struct *ssp;
	int entered, open, sync_started, sync_done, open_at_return, early, fired;
};

/*
 * The reader's side, inside its section: say so, wait until the syncer has
 * begun and its grace period is pending (or it returned: too early), give it
 * a moment to return wrongly, then mark the section closed; the caller ends
 * it. A synchronize that returned while the section was open counts in
 * @early.
 */
static void hold_open_section(struct shared_job *j)
{
	ST(&j->open, 1);
	ST(&j->entered, 1);
	KT_POLL_UNTIL(LD(&j->sync_started));
	KT_POLL_UNTIL(ksync_srcu_gp_pending(j->ssp) || LD(&j->sync_done));
	kt_sleep_ms(2);
	if (LD(&j->sync_done))
		ADD(&j->early, 1);
	ST(&j->open, 0);
}

static void *shared_reader(void *p)
{
	struct shared_job *j = (struct shared_job *)p;

	ksync_fail_nth_alloc(1); /* this thread's slot of the domain */
	struct ksync_srcu_ctr *a = ksync_srcu_read_lock_fast(j->ssp);
	ST(&j->fired, (int)ksync_fail_nth_alloc_fired());
	ksync_fail_nth_alloc(0);
	struct ksync_srcu_ctr *b = ksync_srcu_read_lock_fast(j->ssp); /* a slot now */
	if (!ksync_srcu_read_lock_held(j->ssp))
		ADD(&j->early, 100);
	ksync_srcu_read_unlock_fast(j->ssp, b);
	if (!ksync_srcu_read_lock_held(j->ssp)) /* a is still open */
		ADD(&j->early, 100);
	hold_open_section(j);
	ksync_srcu_read_unlock_fast(j->ssp, a);
	if (ksync_srcu_read_lock_held(j->ssp))
		ADD(&j->early, 100);
	return NULL;
}

static void *shared_syncer(void *p)
{
	struct shared_job *j = (struct shared_job *)p;

	ST(&j->sync_started, 1);
	ksync_synchronize_srcu(j->ssp);
	ST(&j->open_at_return, LD(&j->open));
	ST(&j->sync_done, 1);
	return NULL;
}

KTEST(a_fast_section_in_the_shared_counters_holds_off_a_grace_period)
{
	struct ksync_srcu_struct ss;
	struct shared_job j;
	pthread_t r, s;
	unsigned long w0 = ksync_warn_count;

	ksync_init_srcu_struct(&ss);
	memset(&j, 0, sizeof(j));
	j.ssp = &ss;
	j.open_at_return = -1;
	pthread_create(&r, NULL, shared_reader, &j);
	KT_POLL_UNTIL(LD(&j.entered));
	pthread_create(&s, NULL, shared_syncer, &j);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	KCHECK_EQ(LD(&j.fired), 1);
	KCHECK_EQ(LD(&j.open_at_return), 0);
	KCHECK_EQ(LD(&j.early), 0);
	KCHECK_EQ(ksync_warn_count, w0);
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * A fast section begun in a pthread key destructor that runs after ksync's
 * exit hook (its key is older): the thread has no slot any more, so the
 * section counts in the shared counters; grace periods still wait for it.
 */
static pthread_key_t late_key;
static struct shared_job late_job;

static void late_destructor(void *arg)
{
	struct shared_job *j = (struct shared_job *)arg;
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(j->ssp);

	if (!ksync_srcu_read_lock_held(j->ssp))
		ADD(&j->early, 100);
	hold_open_section(j);
	ksync_srcu_read_unlock_fast(j->ssp, t);
}

static void *late_thread(void *p)
{
	struct shared_job *j = (struct shared_job *)p;
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(j->ssp); /* arms the exit hook */

	ksync_srcu_read_unlock_fast(j->ssp, t);
	pthread_setspecific(late_key, j);
	return NULL;
}

KTEST(a_fast_section_in_a_late_key_destructor_holds_off_a_grace_period)
{
	struct ksync_srcu_struct ss;
	pthread_t r, s;
	unsigned long w0 = ksync_warn_count;

	ksync_init_srcu_struct(&ss);
	int t0 = ksync_srcu_read_lock(&ss); /* ksync's key exists before ours */
	ksync_srcu_read_unlock(&ss, t0);
	KCHECK_EQ(pthread_key_create(&late_key, late_destructor), 0);
	memset(&late_job, 0, sizeof(late_job));
	late_job.ssp = &ss;
	late_job.open_at_return = -1;
	pthread_create(&r, NULL, late_thread, &late_job);
	KT_POLL_UNTIL(LD(&late_job.entered));
	pthread_create(&s, NULL, shared_syncer, &late_job);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	KCHECK_EQ(LD(&late_job.open_at_return), 0);
	KCHECK_EQ(LD(&late_job.early), 0);
	KCHECK_EQ(ksync_warn_count, w0);
	pthread_key_delete(late_key);
	ksync_synchronize_srcu(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * docs/srcu.md, Misuse: an unlock with an index (a token) that no open
 * section of this thread holds is reported and ignored; "it reaches the
 * shared counters only on a thread that has sections counted there, so it
 * cannot end a down_read section or another thread's section early". Here
 * the thread has a section in the shared counters on the other index only:
 * the unbalanced unlock must not take the down_read section of its index.
 */
static struct ksync_srcu_struct ub_ss;
static int ub_classic;

static void unbalanced_beside_a_shared_section(void)
{
	struct ksync_srcu_struct *ssp = &ub_ss;

	ksync_init_srcu_struct(ssp);
	ksync_fail_nth_alloc(1); /* this thread's slot: the section goes to the shared counters */
	struct ksync_srcu_ctr *sh = ksync_srcu_read_lock_fast(ssp); /* index 0 */
	CEXPECT(ksync_fail_nth_alloc_fired());
	ksync_fail_nth_alloc(0);
	kt_srcu_flip(ssp);
	int d = ksync_srcu_down_read(ssp); /* index 1, no owner */
	CEXPECT(d == 1);
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(ssp); /* index 1, in a slot now */
	int i = ksync_srcu_read_lock(ssp);
	CEXPECT(i == 1);
	ksync_srcu_read_unlock(ssp, i);
	ksync_srcu_read_unlock_fast(ssp, t);
	int r0 = reports;
	if (ub_classic)
		ksync_srcu_read_unlock(ssp, 1); /* unbalanced: no section of this thread on 1 */
	else
		ksync_srcu_read_unlock_fast(ssp, t); /* unbalanced */
	CEXPECT(reported_since(r0));
	ksync_srcu_read_unlock_fast(ssp, sh); /* this thread has no section left */
	CEXPECT(!ksync_srcu_read_lock_held(ssp));
	/* The down_read section is still open: a grace period waits for it. */
	struct still_job s;
	pthread_t th = still_start(&s, ssp);
	still_waiting(&s);
	int r1 = reports;
	ksync_srcu_up_read(ssp, d);
	CEXPECT(reports == r1); /* its up_read is no misuse */
	still_end(&s, th);
}

static void unbalanced_beside_a_shared_section_fast(void)
{
	ub_classic = 0;
	unbalanced_beside_a_shared_section();
}

static void unbalanced_beside_a_shared_section_classic(void)
{
	ub_classic = 1;
	unbalanced_beside_a_shared_section();
}

KTEST(unbalanced_unlock_beside_a_shared_section_does_not_end_a_down_read_section)
{
	in_child(unbalanced_beside_a_shared_section_fast);
	in_child(unbalanced_beside_a_shared_section_classic);
}

/* cleanup_srcu_struct with a fast reader inside: reported, leaked, still usable. */
static void cleanup_with_fast_reader_on(struct ksync_srcu_struct *ssp)
{
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(ssp);
	int r0 = reports;
	ksync_cleanup_srcu_struct(ssp);
	CEXPECT(reports == r0 + 1 || reports == r0); /* once per site */
	CEXPECT(kt_srcu_id(ssp) != 0);
	CEXPECT(ksync_srcu_read_lock_held(ssp));
	struct still_job s;
	pthread_t th = still_start(&s, ssp);
	still_waiting(&s);
	ksync_srcu_read_unlock_fast(ssp, t);
	still_end(&s, th);
	ksync_cleanup_srcu_struct(ssp);
	CEXPECT(kt_srcu_id(ssp) == 0);
}

static void cleanup_with_fast_reader(void)
{
	struct ksync_srcu_struct d, f;

	ksync_init_srcu_struct(&d);
	int r0 = reports;
	cleanup_with_fast_reader_on(&d);
	CEXPECT(reported_since(r0));
	fill_direct();
	ksync_init_srcu_struct(&f);
	CEXPECT(is_far(&f));
	cleanup_with_fast_reader_on(&f);
}

KTEST(cleanup_with_a_fast_reader_inside_is_reported_and_leaks)
{
	in_child(cleanup_with_fast_reader);
}

/* ------------------------------------------------------------------------ */
/* fork() with fast sections                                                */

static struct ksync_srcu_struct fk_direct, fk_far;
static struct ksync_srcu_ctr *fk_tok_direct, *fk_tok_far;
static struct foreign fk_other; /* a parent thread inside a fast section at fork */

static void fork_child(void)
{
	/* The forking thread's sections are still open in the child. */
	CEXPECT(ksync_srcu_read_lock_held(&fk_direct));
	CEXPECT(ksync_srcu_read_lock_held(&fk_far));
	if (!KT_TSAN) { /* TSan: no threads in the child of a threaded fork */
		struct still_job s;
		pthread_t th = still_start(&s, &fk_far);
		still_waiting(&s);
		ksync_srcu_read_unlock_fast(&fk_far, fk_tok_far);
		still_end(&s, th);
		th = still_start(&s, &fk_direct);
		still_waiting(&s);
		ksync_srcu_read_unlock_fast(&fk_direct, fk_tok_direct);
		still_end(&s, th);
	} else {
		ksync_srcu_read_unlock_fast(&fk_far, fk_tok_far);
		ksync_srcu_read_unlock_fast(&fk_direct, fk_tok_direct);
	}
	CEXPECT(!ksync_srcu_read_lock_held(&fk_direct));
	CEXPECT(!ksync_srcu_read_lock_held(&fk_far));
	/* The parent's other reader is gone: its section does not hold the child up. */
	ksync_synchronize_srcu(&fk_direct);
	ksync_synchronize_srcu(&fk_far);
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(&fk_far);
	ksync_srcu_read_unlock_fast(&fk_far, t);
	ksync_synchronize_srcu(&fk_far);
}

KTEST(fork_with_fast_sections_open)
{
	fill_direct();
	ksync_init_srcu_struct(&fk_far);
	unfill_direct();
	ksync_init_srcu_struct(&fk_direct); /* takes a direct entry */
	KCHECK(is_far(&fk_far));
	KCHECK(!is_far(&fk_direct));
	fk_tok_direct = ksync_srcu_read_lock_fast(&fk_direct);
	fk_tok_far = ksync_srcu_read_lock_fast(&fk_far);
	memset(&fk_other, 0, sizeof(fk_other));
	fk_other.ssp = &fk_far;
	pthread_t o;
	pthread_create(&o, NULL, foreign_owner, &fk_other);
	KT_POLL_UNTIL(LD(&fk_other.entered));
	in_child(fork_child);
	/* In the parent everything is as before. */
	KCHECK(ksync_srcu_read_lock_held(&fk_direct));
	ST(&fk_other.release, 1);
	pthread_join(o, NULL);
	ksync_srcu_read_unlock_fast(&fk_far, fk_tok_far);
	ksync_srcu_read_unlock_fast(&fk_direct, fk_tok_direct);
	ksync_synchronize_srcu(&fk_far);
	ksync_cleanup_srcu_struct(&fk_far);
	ksync_cleanup_srcu_struct(&fk_direct);
}

/* ------------------------------------------------------------------------ */
/* Stress: a use-after-free detector                                        */

/*
 * SDOM domains, the last ones past the direct words (the fillers take the
 * rest); each holds one published object. Readers (long-lived and short-lived
 * threads) nest sections of both forms over several domains at once and check,
 * before and after sleeping or yielding inside, that the objects they hold
 * are still live. Writers replace an object, wait by synchronize_srcu, a
 * polled cookie or call_srcu, then retire the old one: poisoned, then freed
 * only after the next retirement of that writer (the poison stays readable a
 * while in the plain build; ASan sees the freed one).
 */
#define SDOM 12
#define LIVE 0x11fe11feUL
#define DEAD 0xdeadbeefUL

struct sobj {
	unsigned long magic;
	struct ksync_rcu_head rh;
};

static struct ksync_srcu_struct sdom[SDOM];
static struct sobj *__rcu sptr[SDOM];
static int s_stop, s_bad, s_reads;

static struct sobj *sobj_new(void)
{
	struct sobj *o = (struct sobj *)malloc(sizeof(*o));
	ST(&o->magic, LIVE);
	return o;
}

static void sobj_poison_free(struct sobj *o)
{
	if (o) {
		ST(&o->magic, DEAD);
		free(o);
	}
}

static void sobj_cb(struct ksync_rcu_head *h)
{
	sobj_poison_free(ksync_container_of(h, struct sobj, rh));
}

static void check_live(const struct sobj *o)
{
	if (LD(&o->magic) != LIVE)
		ADD(&s_bad, 1);
}

static void stress_read_once(unsigned *rng)
{
	struct section sec[4];
	const struct sobj *held[4];
	int n = 1 + (int)(kt_xorshift32(rng) % 4);

	for (int i = 0; i < n; i++) {
		/* the far domains come up more often */
		int d = (int)(kt_xorshift32(rng) % (SDOM + 6));
		d = d >= SDOM ? SDOM - 1 - (d - SDOM) : d;
		sec[i] = (struct section){ &sdom[d], (int)(kt_xorshift32(rng) & 1), 0, NULL, 0 };
		open_section(&sec[i]);
		held[i] = ksync_srcu_dereference(sptr[d], &sdom[d]);
		check_live(held[i]);
	}
	if (!(kt_xorshift32(rng) & 7))
		sched_yield();
	for (int i = 0; i < n; i++)
		check_live(held[i]);
	/* close in a random order, re-checking those still held */
	int left = n;
	while (left) {
		int k = (int)(kt_xorshift32(rng) % (unsigned)left);
		close_section(&sec[k]);
		sec[k] = sec[left - 1];
		held[k] = held[left - 1];
		left--;
		for (int i = 0; i < left; i++)
			check_live(held[i]);
	}
	ADD(&s_reads, 1);
}

static void *stress_reader(void *p)
{
	unsigned rng = (unsigned)(uintptr_t)p * 2654435761u + 1;

	while (!LD(&s_stop))
		stress_read_once(&rng);
	return NULL;
}

/* Short-lived readers: a thread's slots go at its exit while others read. */
static void *stress_short_reader(void *p)
{
	unsigned rng = (unsigned)(uintptr_t)p * 40503u + 7;

	for (int i = 0; i < 20; i++)
		stress_read_once(&rng);
	return NULL;
}

static void *stress_spawner(void *p)
{
	(void)p;
	for (uintptr_t i = 1; !LD(&s_stop); i++) {
		pthread_t t;
		pthread_create(&t, NULL, stress_short_reader, (void *)i);
		pthread_join(t, NULL);
	}
	return NULL;
}

struct swriter {
	int first, step, rounds;
};

static void *stress_writer(void *p)
{
	struct swriter *w = (struct swriter *)p;
	struct sobj *delayed = NULL;
	unsigned rng = (unsigned)w->first + 99;

	for (int r = 0; r < w->rounds; r++) {
		int d = w->first + w->step * (int)(kt_xorshift32(&rng) % (unsigned)(SDOM / w->step));
		struct sobj *o = sobj_new();
		struct sobj *old = ksync_rcu_replace_pointer(sptr[d], o, 1);
		switch (r % 3) {
		case 0:
			ksync_synchronize_srcu(&sdom[d]);
			sobj_poison_free(delayed);
			ST(&old->magic, DEAD); /* poisoned now, freed next round */
			delayed = old;
			break;
		case 1: {
			unsigned long c = ksync_start_poll_synchronize_srcu(&sdom[d]);
			while (!ksync_poll_state_synchronize_srcu(&sdom[d], c))
				sched_yield();
			sobj_poison_free(old);
			break;
		}
		default:
			ksync_call_srcu(&sdom[d], &old->rh, sobj_cb);
			break;
		}
	}
	sobj_poison_free(delayed);
	return NULL;
}

KTEST(stress_fast_and_classic_readers_never_see_a_retired_object)
{
	enum { NREAD = 3, NWRITE = 2 };
	pthread_t rd[NREAD], wr[NWRITE], sp;
	struct swriter w[NWRITE] = { { 0, 2, 0 }, { 1, 2, 0 } };
	int rounds = KT_SANITIZED ? 300 : 2000;

	fill_direct();
	/* free some direct entries back: the first domains are direct, the rest far */
	for (int i = 0; i < 6; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
	for (int d = 0; d < SDOM; d++) {
		ksync_init_srcu_struct(&sdom[d]);
		KCHECK_EQ(is_far(&sdom[d]), d >= 6);
		ksync_rcu_assign_pointer(sptr[d], sobj_new());
	}
	s_stop = s_bad = s_reads = 0;
	for (int i = 0; i < NREAD; i++)
		pthread_create(&rd[i], NULL, stress_reader, (void *)(uintptr_t)(i + 1));
	pthread_create(&sp, NULL, stress_spawner, NULL);
	for (int i = 0; i < NWRITE; i++) {
		w[i].rounds = rounds;
		pthread_create(&wr[i], NULL, stress_writer, &w[i]);
	}
	for (int i = 0; i < NWRITE; i++)
		pthread_join(wr[i], NULL);
	ST(&s_stop, 1);
	for (int i = 0; i < NREAD; i++)
		pthread_join(rd[i], NULL);
	pthread_join(sp, NULL);
	KCHECK_EQ(LD(&s_bad), 0);
	KCHECK(LD(&s_reads) > 0);
	for (int d = 0; d < SDOM; d++) {
		ksync_srcu_barrier(&sdom[d]);
		sobj_poison_free(ksync_rcu_replace_pointer(sptr[d], NULL, 1));
		ksync_cleanup_srcu_struct(&sdom[d]);
	}
	for (int i = 6; i < NFILL; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
