/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Review 4 of SRCU (issue 23, round 3), written against docs/srcu.md and the
 * kernel-doc of <ksync/srcu.h> before the code was read. The promises tried:
 *
 *  - the read word (key, index, mode): a misused unlock (index 2, 3, -1,
 *    a large index, the index with no section) ends no section of its own
 *    domain nor of the domain whose words sit next to it, and is reported;
 *  - a domain cleaned up and set up again hands its direct entry to the
 *    next domain set up: a thread that read the old domain and lives on
 *    counts its sections of the new one where grace periods look;
 *  - the same for a domain past the direct words at one address;
 *  - a fork() child keeps the forking thread's open sections (direct and
 *    far): a grace period in the child waits for them;
 *  - a statically defined domain whose first readers race its set-up;
 *  - callbacks: once each, in order per producer, never inside a read
 *    section of the domain on the running thread nor from inside another
 *    domain's callback (callers' mode), srcu_barrier waits for every
 *    callback queued before it (default mode with held batches, and the
 *    callers' mode), and the throttle bounds the queued count.
 *
 * Every "a grace period waits" check is a forced schedule: the reader lets
 * go only once a grace period is waiting for it (gp_pending), then checks
 * that the synchronize had not returned.
 */
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"
#include "sanitizer.h"
#include "srcu_peek.h"
#include "wait.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)

static int is_far(const struct ksync_srcu_struct *ssp)
{
	return ssp->key == 0 && ssp->id != 0;
}

/* ------------------------------------------------------------------------ */
/* A grace period of @ssp, on its own thread, that must wait for us         */

struct syncer {
	struct ksync_srcu_struct *ssp;
	pthread_t t;
	int started, done;
};

static void *syncer_fn(void *p)
{
	struct syncer *s = (struct syncer *)p;

	ST(&s->started, 1);
	ksync_synchronize_srcu(s->ssp);
	ST(&s->done, 1);
	return NULL;
}

static void syncer_start(struct syncer *s, struct ksync_srcu_struct *ssp)
{
	memset(s, 0, sizeof(*s));
	s->ssp = ssp;
	pthread_create(&s->t, NULL, syncer_fn, s);
	KT_POLL_UNTIL(LD(&s->started));
	/* Forced: a grace period is waiting for a reader (or it ended: a failure). */
	KT_POLL_UNTIL(ksync_srcu_gp_pending(ssp) || LD(&s->done));
	kt_sleep_us(500); /* room for a grace period that ends too early */
}

/* 1 when the grace period was still waiting; then joins it after @release ran. */
static int syncer_was_waiting(struct syncer *s)
{
	return !LD(&s->done);
}

static void syncer_join(struct syncer *s)
{
	pthread_join(s->t, NULL);
	KCHECK_EQ(LD(&s->done), 1);
}

/* ------------------------------------------------------------------------ */
/* Misused unlocks end nothing (the read word's index is masked nowhere)    */

static int check_reports;

static unsigned long warns(void)
{
	return __atomic_load_n(&ksync_warn_count, __ATOMIC_SEQ_CST);
}

static void bad_unlocks(struct ksync_srcu_struct *ssp, int good_idx)
{
	static const int bad[] = { 2, 3, -1, -2, 4, 8, 9, 16, 17, 1 << 20, INT32_MAX, INT32_MIN };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ksync_srcu_read_unlock(ssp, bad[i]);
	/* The other index, on which this thread has no section. */
	ksync_srcu_read_unlock(ssp, !good_idx);
}

/* Run in a fork() child so that the once-per-site reports are fresh. */
static int bad_index_child(int far)
{
	static struct ksync_srcu_struct fill[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_struct a, b;
	int nfill = 0, fails = 0;

	if (far)
		for (; nfill < KSYNC_SRCU_DIRECT; nfill++)
			ksync_init_srcu_struct(&fill[nfill]);
	ksync_init_srcu_struct(&a);
	ksync_init_srcu_struct(&b);
	if (far && (!is_far(&a) || !is_far(&b)))
		return 10;
	if (!far && (is_far(&a) || is_far(&b)))
		return 11;
	for (int flip = 0; flip < 2; flip++) {
		if (flip) {
			kt_srcu_flip(&a);
			kt_srcu_flip(&b);
		}
		int ia = ksync_srcu_read_lock(&a);
		int ib = ksync_srcu_read_lock(&b);
		unsigned long w0 = warns();
		bad_unlocks(&a, ia);
		bad_unlocks(&b, ib);
		if (check_reports && !flip && warns() == w0) /* once per site: the first round reports */
			fails |= 1;
		if (!ksync_srcu_read_lock_held(&a) || !ksync_srcu_read_lock_held(&b))
			fails |= 2;
		struct syncer sa, sb;
		syncer_start(&sa, &a);
		syncer_start(&sb, &b);
		if (!syncer_was_waiting(&sa) || !syncer_was_waiting(&sb))
			fails |= 4;
		ksync_srcu_read_unlock(&a, ia);
		pthread_join(sa.t, NULL);
		if (!syncer_was_waiting(&sb))
			fails |= 8;
		ksync_srcu_read_unlock(&b, ib);
		pthread_join(sb.t, NULL);
		if (ksync_srcu_read_lock_held(&a) || ksync_srcu_read_lock_held(&b))
			fails |= 16;
	}
	ksync_cleanup_srcu_struct(&a);
	ksync_cleanup_srcu_struct(&b);
	for (int i = 0; i < nfill; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
	return fails;
}

/*
 * Run @fn in a fork() child, so that the once-per-site reports are fresh.
 * Under ThreadSanitizer, in this process instead (the atfork handler
 * re-creates ksync's locks by copying a fresh initialiser over them, which
 * TSan does not see: the child's first lock reads as a double lock), with
 * the report counts unchecked (the other builds check them).
 */

static void run_in_child(int (*fn)(int), int arg)
{
	if (KT_TSAN) {
		KCHECK_EQ(fn(arg), 0);
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	int st = 0;
	KCHECK(waitpid(pid, &st, 0) == pid);
	KCHECK(WIFEXITED(st));
	KCHECK_EQ(WEXITSTATUS(st), 0);
}

KTEST(misused_unlock_indexes_end_no_section_of_any_domain)
{
	run_in_child(bad_index_child, 0);
}

KTEST(misused_unlock_indexes_end_no_section_of_any_far_domain)
{
	run_in_child(bad_index_child, 1);
}

/* ------------------------------------------------------------------------ */
/* A direct entry handed to the next domain set up                          */

struct reinit_job {
	struct ksync_srcu_struct *ssp; /* the domain to read, set by the main thread */
	int go, opened, release, closed, stop;
	int fast;
};

/* A long-lived reader: one round of nested sections per "go". */
static void *reinit_reader(void *p)
{
	struct reinit_job *j = (struct reinit_job *)p;
	int round = 0;

	for (;;) {
		KT_POLL_UNTIL(LD(&j->go) > round || LD(&j->stop));
		if (LD(&j->stop))
			return NULL;
		round++;
		struct ksync_srcu_struct *ssp = j->ssp;
		int i1 = ksync_srcu_read_lock(ssp);
		struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(ssp);
		int i2 = ksync_srcu_read_lock(ssp);
		ST(&j->opened, round);
		KT_POLL_UNTIL(LD(&j->release) >= round);
		if (j->fast) {
			ksync_srcu_read_unlock_fast(ssp, t);
			ksync_srcu_read_unlock(ssp, i2);
			ksync_srcu_read_unlock(ssp, i1);
		} else {
			ksync_srcu_read_unlock(ssp, i1);
			ksync_srcu_read_unlock(ssp, i2);
			ksync_srcu_read_unlock_fast(ssp, t);
		}
		ST(&j->closed, round);
	}
}

/* One round: the reader opens sections of j->ssp; a grace period must wait. */
static void reinit_round(struct reinit_job *j, int round)
{
	struct syncer s;

	ST(&j->go, round);
	KT_POLL_UNTIL(LD(&j->opened) >= round);
	syncer_start(&s, j->ssp);
	KCHECK(syncer_was_waiting(&s));
	ST(&j->release, round);
	syncer_join(&s);
	KT_POLL_UNTIL(LD(&j->closed) >= round);
}

static void reinit_handover(int far, int same_address)
{
	static struct ksync_srcu_struct fill[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_struct d[2];
	struct reinit_job j;
	pthread_t r;
	int nfill = 0, round = 0;

	if (far)
		for (; nfill < KSYNC_SRCU_DIRECT; nfill++)
			ksync_init_srcu_struct(&fill[nfill]);
	memset(&j, 0, sizeof(j));
	pthread_create(&r, NULL, reinit_reader, &j);
	for (int k = 0; k < 6; k++) {
		struct ksync_srcu_struct *ssp = same_address ? &d[0] : &d[k & 1];
		unsigned long old_key = k ? kt_srcu_key(&d[(k - 1) & 1]) : 0;

		(void)old_key;
		ksync_init_srcu_struct(ssp);
		KCHECK_EQ(is_far(ssp), far);
		j.ssp = ssp;
		j.fast = k & 1;
		reinit_round(&j, ++round);
		/* Twice on the same set-up: the reader's word is now registered. */
		reinit_round(&j, ++round);
		ksync_cleanup_srcu_struct(ssp);
		KCHECK_EQ(kt_srcu_id(ssp), 0);
	}
	ST(&j.stop, 1);
	pthread_join(r, NULL);
	for (int i = 0; i < nfill; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
}

KTEST(direct_entry_handed_to_another_domain_counts_a_live_readers_sections)
{
	reinit_handover(0, 0);
}

KTEST(direct_domain_set_up_again_at_one_address_counts_a_live_readers_sections)
{
	reinit_handover(0, 1);
}

KTEST(far_domain_set_up_again_counts_a_live_readers_sections)
{
	reinit_handover(1, 1);
	reinit_handover(1, 0);
}

/* ------------------------------------------------------------------------ */
/* fork(): the forking thread's open sections stay open in the child         */

static int fork_child_check(struct ksync_srcu_struct *ssp, int idx, struct ksync_srcu_ctr *tok)
{
	struct syncer s;
	int fails = 0;

	if (!ksync_srcu_read_lock_held(ssp))
		fails |= 1;
	syncer_start(&s, ssp);
	if (!syncer_was_waiting(&s))
		fails |= 2;
	ksync_srcu_read_unlock_fast(ssp, tok);
	kt_sleep_us(500);
	if (!syncer_was_waiting(&s))
		fails |= 4;
	ksync_srcu_read_unlock(ssp, idx);
	pthread_join(s.t, NULL);
	if (!LD(&s.done))
		fails |= 8;
	if (ksync_srcu_read_lock_held(ssp))
		fails |= 16;
	/* The child reads and synchronizes on after that. */
	int i = ksync_srcu_read_lock(ssp);
	ksync_srcu_read_unlock(ssp, i);
	ksync_synchronize_srcu(ssp);
	return fails;
}

static void fork_keeps_sections(int far)
{
	static struct ksync_srcu_struct fill[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_struct d;
	int nfill = 0;

	/*
	 * ThreadSanitizer: the atfork handler re-creates the domain's locks by
	 * copying a fresh initialiser over them, which TSan does not see (it
	 * reports the child's next lock as a double lock), and threads after a
	 * multi-threaded fork are not supported there. The other builds run it.
	 */
	if (KT_TSAN) {
		printf("  skipped under ThreadSanitizer (threads in a fork() child)\n");
		return;
	}
	if (far)
		for (; nfill < KSYNC_SRCU_DIRECT; nfill++)
			ksync_init_srcu_struct(&fill[nfill]);
	ksync_init_srcu_struct(&d);
	KCHECK_EQ(is_far(&d), far);
	for (int flip = 0; flip < 2; flip++) {
		if (flip)
			kt_srcu_flip(&d);
		int idx = ksync_srcu_read_lock(&d);
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&d);
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			_exit(fork_child_check(&d, idx, tok));
		int st = 0;
		KCHECK(waitpid(pid, &st, 0) == pid);
		KCHECK(WIFEXITED(st));
		KCHECK_EQ(WEXITSTATUS(st), 0);
		ksync_srcu_read_unlock_fast(&d, tok);
		ksync_srcu_read_unlock(&d, idx);
		ksync_synchronize_srcu(&d);
	}
	ksync_cleanup_srcu_struct(&d);
	for (int i = 0; i < nfill; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
}

KTEST(fork_child_grace_period_waits_for_the_forking_threads_sections)
{
	fork_keeps_sections(0);
}

KTEST(fork_child_grace_period_waits_for_the_forking_threads_far_sections)
{
	fork_keeps_sections(1);
}

/* ------------------------------------------------------------------------ */
/* A static domain whose first readers race its set-up                      */

KSYNC_DEFINE_STATIC_SRCU(race_srcu);

#define NRACE 4
static pthread_barrier_t race_start;
static int race_in, race_release, race_bad;

static void *race_reader(void *p)
{
	int fast = (int)(intptr_t)p & 1;
	int idx = 0;
	struct ksync_srcu_ctr *tok = NULL;

	pthread_barrier_wait(&race_start);
	if (fast)
		tok = ksync_srcu_read_lock_fast(&race_srcu);
	else
		idx = ksync_srcu_read_lock(&race_srcu);
	if (!ksync_srcu_read_lock_held(&race_srcu))
		ADD(&race_bad, 1);
	ADD(&race_in, 1);
	KT_POLL_UNTIL(LD(&race_release) > (int)(intptr_t)p);
	if (fast)
		ksync_srcu_read_unlock_fast(&race_srcu, tok);
	else
		ksync_srcu_read_unlock(&race_srcu, idx);
	if (ksync_srcu_read_lock_held(&race_srcu))
		ADD(&race_bad, 1);
	return NULL;
}

KTEST(static_domain_first_readers_racing_its_set_up_hold_off_a_grace_period)
{
	pthread_t t[NRACE];

	KCHECK_EQ(kt_srcu_id(&race_srcu), 0); /* not set up yet: first use below */
	pthread_barrier_init(&race_start, NULL, NRACE);
	for (intptr_t i = 0; i < NRACE; i++)
		pthread_create(&t[i], NULL, race_reader, (void *)i);
	KT_POLL_UNTIL(LD(&race_in) == NRACE);
	struct syncer s;
	syncer_start(&s, &race_srcu);
	for (int i = 0; i < NRACE; i++) {
		KCHECK(syncer_was_waiting(&s));
		ST(&race_release, i + 1);
		pthread_join(t[i], NULL);
	}
	syncer_join(&s);
	KCHECK_EQ(LD(&race_bad), 0);
	pthread_barrier_destroy(&race_start);
}

/* ------------------------------------------------------------------------ */
/* Thread exit inside sections; the next thread (same stack, same TLS)      */

struct exit_job {
	struct ksync_srcu_struct *d, *f;
};

static void *exit_inside(void *p)
{
	struct exit_job *j = (struct exit_job *)p;

	(void)ksync_srcu_read_lock(j->d);
	(void)ksync_srcu_read_lock_fast(j->d);
	(void)ksync_srcu_read_lock_fast(j->f);
	(void)ksync_srcu_read_lock(j->f);
	return NULL; /* exits inside four sections: dropped and reported */
}

struct next_job {
	struct ksync_srcu_struct *d, *f;
	int in, go;
};

static void *next_reader(void *p)
{
	struct next_job *j = (struct next_job *)p;

	int i = ksync_srcu_read_lock(j->d);
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(j->f);
	ST(&j->in, 1);
	KT_POLL_UNTIL(LD(&j->go));
	ksync_srcu_read_unlock(j->d, i);
	ST(&j->go, 2);
	KT_POLL_UNTIL(LD(&j->go) == 3);
	ksync_srcu_read_unlock_fast(j->f, t);
	return NULL;
}

static int exit_child(int unused)
{
	static struct ksync_srcu_struct fill[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_struct d, f;
	int fails = 0;

	(void)unused;
	ksync_init_srcu_struct(&d);
	for (int i = 0; i < KSYNC_SRCU_DIRECT; i++)
		ksync_init_srcu_struct(&fill[i]);
	ksync_init_srcu_struct(&f);
	if (is_far(&d) || !is_far(&f))
		return 64;
	for (int round = 0; round < 4; round++) {
		struct exit_job ej = { &d, &f };
		pthread_t t;
		unsigned long w0 = warns();

		pthread_create(&t, NULL, exit_inside, &ej);
		pthread_join(t, NULL);
		if (check_reports && round == 0 && warns() == w0)
			fails |= 1;
		ksync_synchronize_srcu(&d); /* the dropped sections hold nothing */
		ksync_synchronize_srcu(&f);
		if (kt_srcu_count_slots(&d) != 0 || kt_srcu_count_slots(&f) != 0)
			fails |= 2;
		/* The next thread likely gets the same stack and TLS block. */
		struct next_job nj = { &d, &f, 0, 0 };
		pthread_create(&t, NULL, next_reader, &nj);
		KT_POLL_UNTIL(LD(&nj.in));
		struct syncer sd, sf;
		syncer_start(&sd, &d);
		syncer_start(&sf, &f);
		if (!syncer_was_waiting(&sd) || !syncer_was_waiting(&sf))
			fails |= 4;
		ST(&nj.go, 1);
		KT_POLL_UNTIL(LD(&nj.go) == 2);
		pthread_join(sd.t, NULL);
		kt_sleep_us(500);
		if (!syncer_was_waiting(&sf))
			fails |= 8;
		ST(&nj.go, 3);
		pthread_join(sf.t, NULL);
		pthread_join(t, NULL);
	}
	ksync_cleanup_srcu_struct(&f);
	for (int i = 0; i < KSYNC_SRCU_DIRECT; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
	ksync_cleanup_srcu_struct(&d);
	return fails;
}

KTEST(thread_exit_inside_sections_then_the_next_thread_on_its_tls)
{
	run_in_child(exit_child, 0);
}

/*
 * Sections in a pthread key destructor that runs after ksync's exit hook
 * (its key was created later): the thread's words are gone, so they count
 * in the shared counters, and a grace period (and the try) must see them.
 */
static pthread_key_t late_key;
static struct ksync_srcu_struct *late_dom[2];
static int late_in, late_go, late_bad;

static void late_destructor(void *arg)
{
	(void)arg;
	int i0 = ksync_srcu_read_lock(late_dom[0]);
	struct ksync_srcu_ctr *t1 = ksync_srcu_read_lock_fast(late_dom[1]);
	int i1 = ksync_srcu_read_lock(late_dom[1]);
	if (!ksync_srcu_read_lock_held(late_dom[0]) || !ksync_srcu_read_lock_held(late_dom[1]))
		ADD(&late_bad, 1);
	ST(&late_in, 1);
	KT_POLL_UNTIL(LD(&late_go) >= 1);
	ksync_srcu_read_unlock(late_dom[0], i0);
	ST(&late_in, 2);
	KT_POLL_UNTIL(LD(&late_go) >= 2);
	ksync_srcu_read_unlock_fast(late_dom[1], t1);
	ST(&late_in, 3);
	KT_POLL_UNTIL(LD(&late_go) >= 3);
	ksync_srcu_read_unlock(late_dom[1], i1);
}

static void *late_thread(void *arg)
{
	(void)arg;
	/* A first section on both: ksync's exit hook is armed, its key made. */
	int i = ksync_srcu_read_lock(late_dom[0]);
	ksync_srcu_read_unlock(late_dom[0], i);
	struct ksync_srcu_ctr *t = ksync_srcu_read_lock_fast(late_dom[1]);
	ksync_srcu_read_unlock_fast(late_dom[1], t);
	pthread_setspecific(late_key, (void *)1);
	return NULL;
}

KTEST(sections_in_a_key_destructor_after_the_exit_hook_hold_off_grace_periods)
{
	static struct ksync_srcu_struct fill[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_struct d, f;
	pthread_t t;

	ksync_init_srcu_struct(&d);
	for (int i = 0; i < KSYNC_SRCU_DIRECT; i++)
		ksync_init_srcu_struct(&fill[i]);
	ksync_init_srcu_struct(&f);
	KCHECK(!is_far(&d));
	KCHECK(is_far(&f));
	late_dom[0] = &d;
	late_dom[1] = &f;
	/* ksync's key exists (the domains' first use above made it): ours comes after. */
	int i = ksync_srcu_read_lock(&d);
	ksync_srcu_read_unlock(&d, i);
	KCHECK_EQ(pthread_key_create(&late_key, late_destructor), 0);
	late_in = late_go = late_bad = 0;
	pthread_create(&t, NULL, late_thread, NULL);
	KT_POLL_UNTIL(LD(&late_in) == 1);
	/* The schedule: ksync's exit hook ran first (the thread's slot of f is gone). */
	KCHECK_EQ(kt_srcu_count_slots(&f), 0);
	KCHECK(!ksync_try_synchronize_srcu(&d));
	KCHECK(!ksync_try_synchronize_srcu(&f));
	struct syncer sd, sf;
	syncer_start(&sd, &d);
	syncer_start(&sf, &f);
	KCHECK(syncer_was_waiting(&sd));
	KCHECK(syncer_was_waiting(&sf));
	ST(&late_go, 1);
	KT_POLL_UNTIL(LD(&late_in) == 2);
	syncer_join(&sd);
	kt_sleep_us(500);
	KCHECK(syncer_was_waiting(&sf));
	ST(&late_go, 2);
	KT_POLL_UNTIL(LD(&late_in) == 3);
	kt_sleep_us(500);
	KCHECK(syncer_was_waiting(&sf));
	ST(&late_go, 3);
	syncer_join(&sf);
	pthread_join(t, NULL);
	KCHECK_EQ(LD(&late_bad), 0);
	pthread_key_delete(late_key);
	ksync_synchronize_srcu(&d);
	ksync_synchronize_srcu(&f);
	ksync_cleanup_srcu_struct(&f);
	for (int k = 0; k < KSYNC_SRCU_DIRECT; k++)
		ksync_cleanup_srcu_struct(&fill[k]);
	ksync_cleanup_srcu_struct(&d);
}

#ifdef KSYNC_DEBUG
/* A fast token of another thread: reported and ignored in KSYNC_DEBUG builds. */
struct tok_job {
	struct ksync_srcu_struct *ssp;
	struct ksync_srcu_ctr *tok;
	int in, go;
};

static void *tok_owner(void *p)
{
	struct tok_job *j = (struct tok_job *)p;

	j->tok = ksync_srcu_read_lock_fast(j->ssp);
	ST(&j->in, 1);
	KT_POLL_UNTIL(LD(&j->go));
	ksync_srcu_read_unlock_fast(j->ssp, j->tok);
	return NULL;
}

static int foreign_token_child(int far)
{
	static struct ksync_srcu_struct fill[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_struct d;
	int nfill = 0, fails = 0;

	if (far)
		for (; nfill < KSYNC_SRCU_DIRECT; nfill++)
			ksync_init_srcu_struct(&fill[nfill]);
	ksync_init_srcu_struct(&d);
	if (is_far(&d) != far)
		return 64;
	struct tok_job j = { &d, NULL, 0, 0 };
	pthread_t t;
	pthread_create(&t, NULL, tok_owner, &j);
	KT_POLL_UNTIL(LD(&j.in));
	/* This thread in a section of its own, on the same index. */
	struct ksync_srcu_ctr *mine = ksync_srcu_read_lock_fast(&d);
	unsigned long w0 = warns();
	ksync_srcu_read_unlock_fast(&d, j.tok); /* not this thread's word */
	if (check_reports && warns() == w0)
		fails |= 1;
	if (!ksync_srcu_read_lock_held(&d))
		fails |= 2;
	/* Both sections still hold a grace period off. */
	struct syncer s;
	syncer_start(&s, &d);
	if (!syncer_was_waiting(&s))
		fails |= 4;
	ksync_srcu_read_unlock_fast(&d, mine);
	kt_sleep_us(500);
	if (!syncer_was_waiting(&s))
		fails |= 8; /* the owner's section was ended by the foreign token */
	ST(&j.go, 1);
	pthread_join(t, NULL);
	pthread_join(s.t, NULL);
	ksync_cleanup_srcu_struct(&d);
	for (int i = 0; i < nfill; i++)
		ksync_cleanup_srcu_struct(&fill[i]);
	return fails;
}

KTEST(debug_fast_token_of_another_thread_is_reported_and_ends_nothing)
{
	run_in_child(foreign_token_child, 0);
	run_in_child(foreign_token_child, 1);
}
#endif

/*
 * The same race, many times: a domain cleaned up is back to the state of a
 * static domain never used, so its next first use sets it up again. Readers
 * (classic and fast) and a synchronize race the set-up; once all readers are
 * in, a grace period must wait for them.
 */
static struct ksync_srcu_struct rr_d;
static pthread_barrier_t rr_start;
static int rr_in, rr_release, rr_bad;

static void *rr_reader(void *p)
{
	int fast = (int)(intptr_t)p & 1;
	int idx = 0;
	struct ksync_srcu_ctr *tok = NULL;

	pthread_barrier_wait(&rr_start);
	if (fast)
		tok = ksync_srcu_read_lock_fast(&rr_d);
	else
		idx = ksync_srcu_read_lock(&rr_d);
	if (!ksync_srcu_read_lock_held(&rr_d))
		ADD(&rr_bad, 1);
	ADD(&rr_in, 1);
	KT_POLL_UNTIL(LD(&rr_release));
	if (fast)
		ksync_srcu_read_unlock_fast(&rr_d, tok);
	else
		ksync_srcu_read_unlock(&rr_d, idx);
	return NULL;
}

static void *rr_racing_sync(void *p)
{
	(void)p;
	pthread_barrier_wait(&rr_start);
	ksync_synchronize_srcu(&rr_d);
	return NULL;
}

KTEST(domain_set_up_again_by_racing_first_readers_holds_off_a_grace_period)
{
	const int rounds = 100;

	ksync_init_srcu_struct(&rr_d);
	for (int r = 0; r < rounds; r++) {
		pthread_t t[NRACE], ts;

		ksync_cleanup_srcu_struct(&rr_d); /* as a static domain never used */
		KCHECK_EQ(kt_srcu_id(&rr_d), 0);
		rr_in = rr_release = 0;
		pthread_barrier_init(&rr_start, NULL, NRACE + 1);
		for (intptr_t i = 0; i < NRACE; i++)
			pthread_create(&t[i], NULL, rr_reader, (void *)(i + r));
		pthread_create(&ts, NULL, rr_racing_sync, NULL);
		KT_YIELD_UNTIL(LD(&rr_in) == NRACE);
		/* (The racing synchronize may be waiting for readers that came first.) */
		struct syncer s;
		syncer_start(&s, &rr_d);
		KCHECK(syncer_was_waiting(&s));
		ST(&rr_release, 1);
		for (int i = 0; i < NRACE; i++)
			pthread_join(t[i], NULL);
		syncer_join(&s);
		pthread_join(ts, NULL);
		pthread_barrier_destroy(&rr_start);
	}
	KCHECK_EQ(LD(&rr_bad), 0);
	ksync_cleanup_srcu_struct(&rr_d);
}

/* ------------------------------------------------------------------------ */
/* Callbacks: once each, in order per producer, never where they must not run */

#define NPROD 2
#define PER_PROD 40000

struct node {
	struct ksync_rcu_head rh;
	int prod, seq;
};

static struct ksync_srcu_struct cb_d, cb_e;
static int cb_last[NPROD];
static int cb_ran, cb_order_bad, cb_in_section, cb_in_other_cb, cb_dup;
static int cb_running, cb_overlap, cb_chain_queued, cb_e_barrier_bad, cb_barrier_stop;
static unsigned long cb_max_count;
static __thread int in_e_callback, in_d_section, is_producer;
static int cb_on_producer;
static unsigned char *cb_seen[NPROD];

static void d_cb(struct ksync_rcu_head *h)
{
	struct node *n = (struct node *)h;

	/* Never inside a read section of the domain on this thread. */
	if (ksync_srcu_read_lock_held(&cb_d) || in_d_section)
		ADD(&cb_in_section, 1);
	if (in_e_callback)
		ADD(&cb_in_other_cb, 1);
	if (is_producer)
		ADD(&cb_on_producer, 1);
	/* One at a time, whoever runs them (helper, producer, barrier caller). */
	if (ADD(&cb_running, 1) != 0)
		ADD(&cb_overlap, 1);
	if (n->prod == -2 && n->seq > 0) { /* a chain: queue the next link */
		struct node *m = (struct node *)malloc(sizeof(*m));
		m->prod = -2;
		m->seq = n->seq - 1;
		ADD(&cb_chain_queued, 1);
		ksync_call_srcu(&cb_d, &m->rh, d_cb);
	}
	if (n->prod >= 0) {
		if (n->seq <= LD(&cb_last[n->prod]))
			ADD(&cb_order_bad, 1);
		ST(&cb_last[n->prod], n->seq);
		if (cb_seen[n->prod][n->seq]++)
			ADD(&cb_dup, 1);
	}
	ADD(&cb_ran, 1);
	ADD(&cb_running, -1);
	free(n);
}

struct e_node {
	struct ksync_rcu_head rh;
	struct node *d_node;
	int prod, seq; /* the producer's last head queued on D before this one */
};

/* E's callback queues on D: D's parked batches must not run in here. */
static void e_cb(struct ksync_rcu_head *h)
{
	struct e_node *e = (struct e_node *)h;

	in_e_callback = 1;
	ksync_call_srcu(&cb_d, &e->d_node->rh, d_cb);
	if (e->seq & 1) {
		/* From another domain's callback: waits, runs none itself (the helper does). */
		ksync_srcu_barrier(&cb_d);
		if (LD(&cb_last[e->prod]) < e->seq)
			ADD(&cb_e_barrier_bad, 1);
	}
	in_e_callback = 0;
	free(e);
}

static int cb_e_queued;

static void *producer(void *p)
{
	int me = (int)(intptr_t)p;
	uint32_t x = 12345u + (uint32_t)me;

	is_producer = 1;

	for (int i = 1; i <= PER_PROD; i++) {
		struct node *n = (struct node *)malloc(sizeof(*n));
		n->prod = me;
		n->seq = i;
		x = x * 1103515245u + 12345u;
		int in = (x >> 16) % 8;	/* 0: classic section, 1: fast, 2: nested both */
		int idx = 0;
		struct ksync_srcu_ctr *tok = NULL;
		if (in == 0 || in == 2)
			idx = ksync_srcu_read_lock(&cb_d);
		if (in == 1 || in == 2)
			tok = ksync_srcu_read_lock_fast(&cb_d);
		in_d_section = in <= 2;
		ksync_call_srcu(&cb_d, &n->rh, d_cb);
		in_d_section = 0;
		if (in == 1 || in == 2)
			ksync_srcu_read_unlock_fast(&cb_d, tok);
		if (in == 0 || in == 2)
			ksync_srcu_read_unlock(&cb_d, idx);
		unsigned long c = kt_srcu_cb_count(&cb_d);
		unsigned long m = LD(&cb_max_count);
		while (c > m && !__atomic_compare_exchange_n(&cb_max_count, &m, c, 0, __ATOMIC_SEQ_CST,
							      __ATOMIC_SEQ_CST))
			;
		if ((x >> 20) % 64 == 0) { /* an extra head for D, queued from E's callback */
			struct e_node *e = (struct e_node *)malloc(sizeof(*e));
			e->d_node = (struct node *)malloc(sizeof(*e->d_node));
			e->d_node->prod = -1;
			e->d_node->seq = 0;
			e->prod = me;
			e->seq = i;
			ADD(&cb_e_queued, 1);
			ksync_call_srcu(&cb_e, &e->rh, e_cb);
		}
		if (i % 5000 == 0) { /* a chain of eight, queued from callbacks */
			struct node *c = (struct node *)malloc(sizeof(*c));
			c->prod = -2;
			c->seq = 8;
			ADD(&cb_chain_queued, 1);
			ksync_call_srcu(&cb_d, &c->rh, d_cb);
		}
		if (i % 10000 == 0) {
			/* Every callback this thread queued before the barrier has run. */
			ksync_srcu_barrier(&cb_d);
			if (LD(&cb_last[me]) < i)
				ADD(&cb_order_bad, 1000);
		}
	}
	return NULL;
}

/* Barriers from a third thread while the producers stream (several runners at once). */
static void *barrier_loop(void *p)
{
	(void)p;
	while (!LD(&cb_barrier_stop))
		ksync_srcu_barrier(&cb_d);
	return NULL;
}

static struct ksync_srcu_struct cb_fill[KSYNC_SRCU_DIRECT];

static void callbacks_run(int in_caller, unsigned long limit, int far)
{
	pthread_t t[NPROD], bt;

	if (far)
		for (int i = 0; i < KSYNC_SRCU_DIRECT; i++)
			ksync_init_srcu_struct(&cb_fill[i]);
	ksync_init_srcu_struct(&cb_d);
	KCHECK_EQ(is_far(&cb_d), far);
	ksync_init_srcu_struct(&cb_e);
	ksync_srcu_set_cb_in_caller(&cb_d, in_caller);
	ksync_srcu_set_cb_in_caller(&cb_e, in_caller);
	ksync_srcu_set_cb_limit(&cb_d, limit);
	cb_ran = cb_order_bad = cb_in_section = cb_in_other_cb = cb_dup = cb_e_queued = 0;
	cb_max_count = 0;
	cb_on_producer = 0;
	cb_running = cb_overlap = cb_chain_queued = cb_e_barrier_bad = cb_barrier_stop = 0;
	for (int i = 0; i < NPROD; i++) {
		cb_last[i] = 0;
		cb_seen[i] = (unsigned char *)calloc(PER_PROD + 1, 1);
	}
	for (intptr_t i = 0; i < NPROD; i++)
		pthread_create(&t[i], NULL, producer, (void *)i);
	pthread_create(&bt, NULL, barrier_loop, NULL);
	for (int i = 0; i < NPROD; i++)
		pthread_join(t[i], NULL);
	ST(&cb_barrier_stop, 1);
	pthread_join(bt, NULL);
	ksync_srcu_barrier(&cb_e);
	ksync_srcu_barrier(&cb_d);
	KCHECK_EQ(LD(&cb_ran), NPROD * PER_PROD + LD(&cb_e_queued) + LD(&cb_chain_queued));
	KCHECK_EQ(LD(&cb_overlap), 0);
	printf("  mode %s, limit %lu, %s domain: %d of %d callbacks ran on a producer\n",
	       in_caller ? "callers'" : "default", limit, far ? "far" : "direct", LD(&cb_on_producer),
	       LD(&cb_ran));
	KCHECK_EQ(LD(&cb_e_barrier_bad), 0);
	KCHECK_EQ(kt_srcu_cb_count(&cb_d), 0);
	KCHECK_EQ(LD(&cb_order_bad), 0);
	KCHECK_EQ(LD(&cb_dup), 0);
	KCHECK_EQ(LD(&cb_in_section), 0);
	KCHECK_EQ(LD(&cb_in_other_cb), 0);
	for (int i = 0; i < NPROD; i++) {
		KCHECK_EQ(cb_last[i], PER_PROD);
		free(cb_seen[i]);
	}
	/*
	 * The throttle: producers outside a section block past the limit; those
	 * inside one and E's callbacks do not, and each producer may have pushed
	 * one head past the check. Generous slack, but far below the total.
	 */
	KCHECK(LD(&cb_max_count) <= (limit ? limit : KSYNC_SRCU_CB_LIMIT_DEFAULT) +
					    (unsigned long)NPROD * PER_PROD / 8);
	ksync_cleanup_srcu_struct(&cb_e);
	ksync_cleanup_srcu_struct(&cb_d);
	if (far)
		for (int i = 0; i < KSYNC_SRCU_DIRECT; i++)
			ksync_cleanup_srcu_struct(&cb_fill[i]);
}

KTEST(default_mode_callbacks_once_in_order_and_barrier_waits_for_held_batches)
{
	callbacks_run(0, 0, 0);
	callbacks_run(0, 256, 1);
}

KTEST(callers_mode_callbacks_never_in_a_section_or_another_domains_callback)
{
	callbacks_run(1, 0, 0);
	callbacks_run(1, 256, 0);
	callbacks_run(1, 0, 1);
	callbacks_run(1, 256, 1);
}

/* The throttle alone: producers outside sections, held batches count in the limit. */
#define THR_LIMIT 64
#define THR_PROD 3
static struct ksync_srcu_struct thr_d;
static unsigned long thr_max;
static int thr_ran;

static void thr_cb(struct ksync_rcu_head *h)
{
	ADD(&thr_ran, 1);
	free(h);
}

static void *thr_producer(void *p)
{
	(void)p;
	for (int i = 0; i < 20000; i++) {
		ksync_call_srcu(&thr_d, (struct ksync_rcu_head *)malloc(sizeof(struct ksync_rcu_head)), thr_cb);
		unsigned long c = kt_srcu_cb_count(&thr_d);
		unsigned long m = LD(&thr_max);
		while (c > m && !__atomic_compare_exchange_n(&thr_max, &m, c, 0, __ATOMIC_SEQ_CST,
							      __ATOMIC_SEQ_CST))
			;
	}
	return NULL;
}

KTEST(throttle_bounds_queued_and_held_callbacks)
{
	for (int mode = 0; mode < 2; mode++) {
		pthread_t t[THR_PROD];

		ksync_init_srcu_struct(&thr_d);
		ksync_srcu_set_cb_in_caller(&thr_d, mode);
		ksync_srcu_set_cb_limit(&thr_d, THR_LIMIT);
		thr_max = 0;
		thr_ran = 0;
		for (int i = 0; i < THR_PROD; i++)
			pthread_create(&t[i], NULL, thr_producer, NULL);
		for (int i = 0; i < THR_PROD; i++)
			pthread_join(t[i], NULL);
		ksync_srcu_barrier(&thr_d);
		KCHECK_EQ(LD(&thr_ran), THR_PROD * 20000);
		printf("  mode %s: at most %lu queued (limit %d, %d producers)\n", mode ? "callers'" : "default",
		       LD(&thr_max), THR_LIMIT, THR_PROD);
		/* Each producer's head may be pushed before it finds the count over the limit. */
		KCHECK(LD(&thr_max) <= THR_LIMIT + THR_PROD);
		ksync_cleanup_srcu_struct(&thr_d);
	}
}

/* Cleanup right after a stream: every callback ran, or cleanup reported a leak. */
static int cl_ran;
static void cl_cb(struct ksync_rcu_head *h)
{
	ADD(&cl_ran, 1);
	free(h);
}

KTEST(cleanup_after_a_stream_runs_the_held_batches_or_reports)
{
	for (int mode = 0; mode < 2; mode++) {
		struct ksync_srcu_struct d;
		ksync_init_srcu_struct(&d);
		ksync_srcu_set_cb_in_caller(&d, mode);
		cl_ran = 0;
		for (int i = 0; i < 20000; i++)
			ksync_call_srcu(&d, (struct ksync_rcu_head *)malloc(sizeof(struct ksync_rcu_head)), cl_cb);
		ksync_srcu_barrier(&d);
		KCHECK_EQ(LD(&cl_ran), 20000);
		unsigned long w0 = warns();
		ksync_cleanup_srcu_struct(&d);
		KCHECK_EQ(warns(), w0);
		KCHECK_EQ(LD(&cl_ran), 20000); /* nothing ran twice */
	}
}

int main(int argc, char **argv)
{
	check_reports = !KT_TSAN;
	return ktest_run(argc, argv);
}
