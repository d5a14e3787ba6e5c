/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Review of ksync_try_synchronize_srcu() against its kernel-doc: "true when
 * a grace period began after the call and ended before it returned", false
 * having done nothing when a reader may be inside.
 *
 *  - a_reader_registers_in_the_window / a_down_read_in_the_window: the test
 *    point SRCU_IDLE_GP (between the try's first check and its token
 *    cmpxchg) runs another thread that registers its first slot and enters
 *    a section, or opens a srcu_down_read() section, and loads the object.
 *    The try must see it in its re-check: false, gp_seq handed back even,
 *    no cookie satisfied. Without the re-check (or with the hint only), the
 *    try would say true while that reader holds the object.
 *  - a_reader_exits_in_the_window: the only slot is another thread's, which
 *    exits in the window: the re-check sees it gone and completes.
 *  - fork_while_another_thread_reads: the child (where that reader does
 *    not exist) completes, the parent refuses.
 *  - down_read_holder_is_waited_for: a srcu_down_read() section open before
 *    the call (invisible to the nr_slots hint) makes it refuse.
 *  - far_domain_and_fast_form: a domain past the direct words, the fast
 *    form and nested sections on both indexes, and a section of another
 *    domain (which must not count).
 *  - cookies_and_wrap: cookies taken before a successful try are done,
 *    after it not; a refused try changes nothing; across gp_seq's wrap;
 *    start_poll cookies taken before a try.
 *  - freed_objects_stress: srcu_down_read() readers on long-lived threads
 *    (no slot: the try can succeed while they run, the shared counters'
 *    pairing) and short-lived slot readers; the updater frees (ASan) or
 *    poisons the retired object as soon as a try succeeds.
 *
 * Forced schedules by the test point and flags, never by sleeps.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* The test point of the try's window: runs window_hook() when armed. */
static void window_hook(void);
#define KSYNC_TP_SRCU_IDLE_GP() window_hook()

#include <ksync/srcu.h>

#include "ktest.h"
#include "wait.h"

struct obj {
	unsigned long magic;
};
#define OBJ_LIVE 0x600dUL
#define OBJ_DEAD 0xdeadUL

static struct ksync_srcu_struct *win_ssp;
static struct obj *win_ptr;
static int win_armed;	 /* 1: the hook runs the window reader once */
static int win_mode;	 /* 0: slot section (new thread), 1: srcu_down_read() */
static int win_inside, win_release, win_seen_live;
static int win_down_idx;

static void *window_reader(void *arg)
{
	(void)arg;
	int idx = win_mode ? ksync_srcu_down_read(win_ssp) : ksync_srcu_read_lock(win_ssp);
	struct obj *o = __atomic_load_n(&win_ptr, __ATOMIC_ACQUIRE);

	if (o && o->magic == OBJ_LIVE)
		__atomic_store_n(&win_seen_live, 1, __ATOMIC_SEQ_CST);
	win_down_idx = idx;
	__atomic_store_n(&win_inside, 1, __ATOMIC_SEQ_CST);
	KT_YIELD_UNTIL(__atomic_load_n(&win_release, __ATOMIC_SEQ_CST));
	if (o)
		KCHECK_EQ(o->magic, OBJ_LIVE); /* still ours: the updater must wait */
	if (win_mode)
		ksync_srcu_up_read(win_ssp, idx);
	else
		ksync_srcu_read_unlock(win_ssp, idx);
	return NULL;
}

static pthread_t win_thread;

static int win_exit_go;	   /* exit mode: the other thread may exit */
static pthread_t win_exit_thread; /* exit mode: joined in the window */

static void window_hook(void)
{
	if (!__atomic_exchange_n(&win_armed, 0, __ATOMIC_SEQ_CST))
		return;
	if (win_mode == 2) {
		__atomic_store_n(&win_exit_go, 1, __ATOMIC_SEQ_CST);
		pthread_join(win_exit_thread, NULL);
		return;
	}
	KCHECK_EQ(pthread_create(&win_thread, NULL, window_reader, NULL), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&win_inside, __ATOMIC_SEQ_CST));
}

static void check_window(int mode, int caller_has_slot)
{
	struct ksync_srcu_struct ss;
	struct obj *o = malloc(sizeof(*o));

	KASSERT(o);
	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	if (caller_has_slot)
		ksync_srcu_read_unlock(&ss, ksync_srcu_read_lock(&ss));
	o->magic = OBJ_LIVE;
	win_ssp = &ss;
	win_mode = mode;
	win_inside = win_release = win_seen_live = 0;
	/* Published; the reader in the window loads it (the removal comes later). */
	__atomic_store_n(&win_ptr, o, __ATOMIC_RELEASE);
	unsigned long seq = ss.gp_seq;
	unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
	__atomic_store_n(&win_armed, 1, __ATOMIC_SEQ_CST);
	KCHECK(!ksync_try_synchronize_srcu(&ss)); /* a reader entered before the token */
	KCHECK_EQ(__atomic_load_n(&win_armed, __ATOMIC_SEQ_CST), 0); /* the window was reached */
	KCHECK_EQ(win_seen_live, 1);
	KCHECK_EQ(ss.gp_seq, seq); /* handed back, even, nothing completed */
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
	/* A second try (no window reader now) must refuse too: the reader is inside. */
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	__atomic_store_n(&win_release, 1, __ATOMIC_SEQ_CST);
	pthread_join(win_thread, NULL);
	__atomic_store_n(&win_ptr, NULL, __ATOMIC_RELEASE);
	/* The slot reader exited, the down_read one ended: idle again. */
	KCHECK(ksync_try_synchronize_srcu(&ss));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	o->magic = OBJ_DEAD;
	free(o);
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(a_reader_registers_in_the_window)
{
	check_window(0, 0);
	check_window(0, 1);
}

KTEST(a_down_read_in_the_window)
{
	check_window(1, 0);
	check_window(1, 1);
}

/* Read the object once (a section), then wait outside any section, then exit. */
static void *exit_reader(void *arg)
{
	struct obj *o;
	int idx = ksync_srcu_read_lock(win_ssp);

	(void)arg;
	o = __atomic_load_n(&win_ptr, __ATOMIC_ACQUIRE);
	if (o && o->magic == OBJ_LIVE)
		__atomic_store_n(&win_seen_live, 1, __ATOMIC_SEQ_CST);
	ksync_srcu_read_unlock(win_ssp, idx);
	__atomic_store_n(&win_inside, 1, __ATOMIC_SEQ_CST);
	KT_YIELD_UNTIL(__atomic_load_n(&win_exit_go, __ATOMIC_SEQ_CST));
	return NULL; /* the exit hook takes the slot off the domain (release) */
}

/*
 * The only slot is another thread's (the caller has none): the first check
 * passes, and that thread exits in the window. The re-check must see the
 * slot gone (acquire, against the exit's release) and complete the grace
 * period; the object the thread read may then be freed (ASan, TSan).
 */
KTEST(a_reader_exits_in_the_window)
{
	struct ksync_srcu_struct ss;
	struct obj *o = malloc(sizeof(*o));

	KASSERT(o);
	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	o->magic = OBJ_LIVE;
	win_ssp = &ss;
	win_mode = 2;
	win_inside = win_exit_go = win_seen_live = 0;
	__atomic_store_n(&win_ptr, o, __ATOMIC_RELEASE);
	KCHECK_EQ(pthread_create(&win_exit_thread, NULL, exit_reader, NULL), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&win_inside, __ATOMIC_SEQ_CST));
	KCHECK_EQ(win_seen_live, 1);
	/* Alive, outside its section: a possible reader, refused. */
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	__atomic_store_n(&win_ptr, NULL, __ATOMIC_RELEASE);
	unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
	__atomic_store_n(&win_armed, 1, __ATOMIC_SEQ_CST);
	KCHECK(ksync_try_synchronize_srcu(&ss)); /* it exited before the re-check */
	KCHECK_EQ(__atomic_load_n(&win_armed, __ATOMIC_SEQ_CST), 0);
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	o->magic = OBJ_DEAD;
	free(o);
	ksync_cleanup_srcu_struct(&ss);
}

/*
 * fork() while another thread is inside a section: in the child that thread
 * does not exist (its slot is dropped), so the try completes there; in the
 * parent it must still refuse, and a cookie is satisfied in neither until
 * its grace period.
 */
KTEST(fork_while_another_thread_reads)
{
	struct ksync_srcu_struct ss;
	pthread_t t;

	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	win_ssp = &ss;
	win_mode = 0;
	win_inside = win_release = win_seen_live = 0;
	__atomic_store_n(&win_ptr, NULL, __ATOMIC_RELEASE);
	KCHECK_EQ(pthread_create(&t, NULL, window_reader, NULL), 0);
	KT_YIELD_UNTIL(__atomic_load_n(&win_inside, __ATOMIC_SEQ_CST));
	ksync_srcu_read_unlock(&ss, ksync_srcu_read_lock(&ss)); /* the forking thread's own slot */
	unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		bad += ss.gp_seq & 1;
		bad += ksync_try_synchronize_srcu(&ss) != true;
		bad += !ksync_poll_state_synchronize_srcu(&ss, cookie);
		_exit(bad);
	}
	int st = 0;
	KCHECK(pid > 0);
	KCHECK_EQ(waitpid(pid, &st, 0), pid);
	KCHECK(WIFEXITED(st));
	KCHECK_EQ(WEXITSTATUS(st), 0);
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
	__atomic_store_n(&win_release, 1, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	KCHECK(ksync_try_synchronize_srcu(&ss));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	ksync_cleanup_srcu_struct(&ss);
}

static void *down_read_other(void *arg)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)arg;
	return (void *)(long)ksync_srcu_down_read(ssp);
}

KTEST(down_read_holder_is_waited_for)
{
	struct ksync_srcu_struct ss;
	pthread_t t;
	void *ret;

	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	/* Opened by a thread that then exits: no slot anywhere, nr_slots 0. */
	KCHECK_EQ(pthread_create(&t, NULL, down_read_other, &ss), 0);
	pthread_join(t, &ret);
	unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
	ksync_srcu_up_read(&ss, (int)(long)ret); /* ended on another thread */
	KCHECK(ksync_try_synchronize_srcu(&ss));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	ksync_cleanup_srcu_struct(&ss);
}

#define NDOM (KSYNC_SRCU_DIRECT + 2)

KTEST(far_domain_and_fast_form)
{
	static struct ksync_srcu_struct dom[NDOM];

	for (int i = 0; i < NDOM; i++)
		KCHECK_EQ(ksync_init_srcu_struct(&dom[i]), 0);
	for (int i = 0; i < NDOM; i++) {
		struct ksync_srcu_struct *a = &dom[i], *b = &dom[(i + 1) % NDOM];
		/* A section of another domain does not count. */
		int ib = ksync_srcu_read_lock(b);
		KCHECK(ksync_try_synchronize_srcu(a));
		int ia = ksync_srcu_read_lock(a);
		KCHECK(!ksync_try_synchronize_srcu(a));
		KCHECK(ksync_try_synchronize_srcu(&dom[(i + 2) % NDOM]));
		ksync_srcu_read_unlock(a, ia);
		ksync_srcu_read_unlock(b, ib);
		/* The fast form; then sections on both indexes (a flip between). */
		struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(a);
		KCHECK(!ksync_try_synchronize_srcu(a));
		ksync_srcu_read_unlock_fast(a, tok);
		KCHECK(ksync_try_synchronize_srcu(a));
		ia = ksync_srcu_read_lock(a);
		a->idx ^= KSYNC__SRCU_FLIP; /* as a flip would (this thread is the only one here) */
		int ia2 = ksync_srcu_read_lock(a);
		KCHECK(ia != ia2);
		ksync_srcu_read_unlock(a, ia);
		KCHECK(!ksync_try_synchronize_srcu(a)); /* still inside on the other index */
		ksync_srcu_read_unlock(a, ia2);
		KCHECK(ksync_try_synchronize_srcu(a));
	}
	for (int i = 0; i < NDOM; i++)
		ksync_cleanup_srcu_struct(&dom[i]);
}

KTEST(cookies_and_wrap)
{
	struct ksync_srcu_struct ss;

	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	KCHECK(ksync_try_synchronize_srcu(&ss));
	for (int round = 0; round < 2; round++) {
		if (round)
			ss.gp_seq = ~0UL - 3; /* even; the next two grace periods wrap */
		for (int i = 0; i < 4; i++) {
			unsigned long before = ksync_get_state_synchronize_srcu(&ss);
			KCHECK(ksync_try_synchronize_srcu(&ss));
			KCHECK(ksync_poll_state_synchronize_srcu(&ss, before));
			unsigned long after = ksync_get_state_synchronize_srcu(&ss);
			KCHECK(!ksync_poll_state_synchronize_srcu(&ss, after));
			ksync_synchronize_srcu(&ss);
			KCHECK(ksync_poll_state_synchronize_srcu(&ss, after));
			/* A refused try: nothing moves. */
			int idx = ksync_srcu_read_lock(&ss);
			unsigned long seq = ss.gp_seq, c = ksync_get_state_synchronize_srcu(&ss);
			KCHECK(!ksync_try_synchronize_srcu(&ss));
			KCHECK_EQ(ss.gp_seq, seq);
			KCHECK(!ksync_poll_state_synchronize_srcu(&ss, c));
			ksync_srcu_read_unlock(&ss, idx);
		}
	}
	/*
	 * A cookie of ksync_start_poll_synchronize_srcu() taken before a try
	 * that succeeds is done (the helper's own grace period may hold the
	 * token meanwhile: then the try refuses and synchronize waits).
	 */
	for (int i = 0; i < 8; i++) {
		unsigned long polled = ksync_start_poll_synchronize_srcu(&ss);
		if (ksync_try_synchronize_srcu(&ss))
			KCHECK(ksync_poll_state_synchronize_srcu(&ss, polled));
		else
			ksync_synchronize_srcu(&ss);
		KCHECK(ksync_poll_state_synchronize_srcu(&ss, polled));
	}
	ksync_srcu_barrier(&ss);
	ksync_cleanup_srcu_struct(&ss);
}

/* ------------------------------------------------------------------------ */

static struct ksync_srcu_struct st_ss;
static struct obj *st_ptr;
static int st_stop, st_bad;
static unsigned long st_reads, st_spawned;

static void st_read_once(int down)
{
	int idx = down ? ksync_srcu_down_read(&st_ss) : ksync_srcu_read_lock(&st_ss);
	struct obj *o = __atomic_load_n(&st_ptr, __ATOMIC_ACQUIRE);

	for (int i = 0; i < 4; i++) {
		if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) != OBJ_LIVE)
			__atomic_store_n(&st_bad, 1, __ATOMIC_RELAXED);
		if (i == 1)
			sched_yield();
	}
	__atomic_add_fetch(down ? &st_reads : &st_spawned, 1, __ATOMIC_RELAXED);
	if (down)
		ksync_srcu_up_read(&st_ss, idx);
	else
		ksync_srcu_read_unlock(&st_ss, idx);
}

static void *st_down_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&st_stop, __ATOMIC_RELAXED))
		st_read_once(1);
	return NULL;
}

static void *st_slot_reader(void *arg)
{
	(void)arg;
	st_read_once(0);
	return NULL;
}

static void *st_spawner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&st_stop, __ATOMIC_RELAXED)) {
		pthread_t t;
		if (pthread_create(&t, NULL, st_slot_reader, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

KTEST(freed_objects_stress)
{
	pthread_t r[3];
	unsigned long ok = 0, i;

	KCHECK_EQ(ksync_init_srcu_struct(&st_ss), 0);
	struct obj *cur = malloc(sizeof(*cur));
	KASSERT(cur);
	cur->magic = OBJ_LIVE;
	st_ptr = cur;
	KCHECK_EQ(pthread_create(&r[0], NULL, st_down_reader, NULL), 0);
	KCHECK_EQ(pthread_create(&r[1], NULL, st_down_reader, NULL), 0);
	KCHECK_EQ(pthread_create(&r[2], NULL, st_spawner, NULL), 0);
	/* Until both kinds of readers ran a while (and enough tries succeeded, if they can). */
	for (i = 0; i < 2000 || (i < 200000 && (ok < 200 || __atomic_load_n(&st_reads, __ATOMIC_RELAXED) < 2000 ||
					       __atomic_load_n(&st_spawned, __ATOMIC_RELAXED) < 100));
	     i++) {
		struct obj *n = malloc(sizeof(*n));
		KASSERT(n);
		n->magic = OBJ_LIVE;
		struct obj *old = __atomic_exchange_n(&st_ptr, n, __ATOMIC_ACQ_REL);
		if (ksync_try_synchronize_srcu(&st_ss))
			ok++;
		else
			ksync_synchronize_srcu(&st_ss);
		__atomic_store_n(&old->magic, OBJ_DEAD, __ATOMIC_RELAXED);
		free(old); /* ASan: a reader still holding it reads freed memory */
	}
	__atomic_store_n(&st_stop, 1, __ATOMIC_RELAXED);
	for (int k = 0; k < 3; k++)
		pthread_join(r[k], NULL);
	KCHECK_EQ(st_bad, 0);
	printf("# %lu updates, %lu by a successful try; %lu down_read and %lu new-thread sections\n", i, ok,
	       st_reads, st_spawned);
	ksync_synchronize_srcu(&st_ss);
	free(st_ptr);
	ksync_cleanup_srcu_struct(&st_ss);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
