/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of ksync_try_synchronize_srcu(): a grace period completed at
 * once when no thread but the caller can be inside a read section, and
 * nothing done (false) otherwise: a section of the caller (its own slot or
 * the shared counters), another thread's section, another thread that has
 * read and is still alive. The last test races it against readers that
 * come and go (new threads: new slots) and checks no reader ever sees an
 * object retired by a successful try.
 */
#include <ksync/srcu.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "ktest.h"
#include "srcu_peek.h"
#include "wait.h"

KTEST(idle_domain_completes_a_grace_period)
{
	struct ksync_srcu_struct ss;

	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
	KCHECK(ksync_try_synchronize_srcu(&ss));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	/* Again and again: each a new grace period. */
	for (int i = 0; i < 3; i++) {
		cookie = ksync_get_state_synchronize_srcu(&ss);
		KCHECK(ksync_try_synchronize_srcu(&ss));
		KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	}
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(the_callers_own_sections)
{
	struct ksync_srcu_struct ss;

	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	/* A slot of this thread, outside any section: still idle. */
	int idx = ksync_srcu_read_lock(&ss);
	unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
	KCHECK(!ksync_try_synchronize_srcu(&ss)); /* inside: refused */
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
	int idx2 = ksync_srcu_read_lock(&ss); /* nested */
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	ksync_srcu_read_unlock(&ss, idx2);
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	ksync_srcu_read_unlock(&ss, idx);
	KCHECK_EQ(kt_srcu_count_slots(&ss), 1);
	KCHECK(ksync_try_synchronize_srcu(&ss));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));

	/* The fast form, and a section in the shared counters (srcu_down_read). */
	struct ksync_srcu_ctr *tok = ksync_srcu_read_lock_fast(&ss);
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	ksync_srcu_read_unlock_fast(&ss, tok);
	KCHECK(ksync_try_synchronize_srcu(&ss));
	idx = ksync_srcu_down_read(&ss);
	cookie = ksync_get_state_synchronize_srcu(&ss);
	KCHECK(!ksync_try_synchronize_srcu(&ss));
	KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
	ksync_srcu_up_read(&ss, idx);
	KCHECK(ksync_try_synchronize_srcu(&ss));
	KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	ksync_cleanup_srcu_struct(&ss);
}

struct holder {
	struct ksync_srcu_struct *ssp;
	int inside;  /* 1: hold a section until told; 0: read once, then wait outside */
	int ready, go;
};

static void *holder_thread(void *p)
{
	struct holder *h = (struct holder *)p;
	int idx = ksync_srcu_read_lock(h->ssp);

	if (!h->inside)
		ksync_srcu_read_unlock(h->ssp, idx);
	__atomic_store_n(&h->ready, 1, __ATOMIC_SEQ_CST);
	KT_POLL_UNTIL(__atomic_load_n(&h->go, __ATOMIC_SEQ_CST));
	if (h->inside)
		ksync_srcu_read_unlock(h->ssp, idx);
	return NULL;
}

static void check_other_thread(int inside)
{
	struct ksync_srcu_struct ss;
	struct holder h = { &ss, inside, 0, 0 };
	pthread_t t;

	KCHECK_EQ(ksync_init_srcu_struct(&ss), 0);
	/* With and without a slot of the caller. */
	for (int round = 0; round < 2; round++) {
		if (round == 1)
			ksync_srcu_read_unlock(&ss, ksync_srcu_read_lock(&ss));
		h.ready = h.go = 0;
		KCHECK_EQ(pthread_create(&t, NULL, holder_thread, &h), 0);
		KT_POLL_UNTIL(__atomic_load_n(&h.ready, __ATOMIC_SEQ_CST));
		unsigned long cookie = ksync_get_state_synchronize_srcu(&ss);
		/* Another thread inside, or one that may enter at any time with no barrier: refused. */
		KCHECK(!ksync_try_synchronize_srcu(&ss));
		KCHECK(!ksync_poll_state_synchronize_srcu(&ss, cookie));
		__atomic_store_n(&h.go, 1, __ATOMIC_SEQ_CST);
		pthread_join(t, NULL);
		/* It exited: its slot is gone, the domain is idle again. */
		KCHECK(ksync_try_synchronize_srcu(&ss));
		KCHECK(ksync_poll_state_synchronize_srcu(&ss, cookie));
	}
	ksync_cleanup_srcu_struct(&ss);
}

KTEST(another_thread_inside)
{
	check_other_thread(1);
}

KTEST(another_thread_that_has_read)
{
	check_other_thread(0);
}

/*
 * Readers come and go on new threads (each registers a new slot, the race
 * with the try's check); the updater retires an object when its try
 * succeeds (else it waits with synchronize). A reader must never see a
 * retired object.
 */
static struct ksync_srcu_struct race_ss;
struct race_obj {
	int alive;
};
static struct race_obj *race_ptr;
static int race_stop, race_bad, race_done;

static void *race_reader(void *arg)
{
	(void)arg;
	int idx = ksync_srcu_read_lock(&race_ss);
	struct race_obj *o = __atomic_load_n(&race_ptr, __ATOMIC_ACQUIRE);
	for (int i = 0; i < 20; i++) {
		if (!__atomic_load_n(&o->alive, __ATOMIC_RELAXED))
			__atomic_store_n(&race_bad, 1, __ATOMIC_RELAXED);
		sched_yield();
	}
	ksync_srcu_read_unlock(&race_ss, idx);
	__atomic_add_fetch(&race_done, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *race_readers(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&race_stop, __ATOMIC_RELAXED)) {
		pthread_t t;
		if (pthread_create(&t, NULL, race_reader, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

KTEST(try_never_misses_a_new_reader)
{
	pthread_t r;
	struct race_obj *pool = calloc(64, sizeof(*pool));
	unsigned long tries_ok = 0;

	KCHECK_EQ(ksync_init_srcu_struct(&race_ss), 0);
	pool[0].alive = 1;
	race_ptr = &pool[0];
	KCHECK_EQ(pthread_create(&r, NULL, race_readers, NULL), 0);
	for (unsigned long i = 1; __atomic_load_n(&race_done, __ATOMIC_RELAXED) < 400 || (tries_ok < 100 && i < 1000000); i++) {
		__atomic_store_n(&pool[i % 64].alive, 1, __ATOMIC_RELAXED);
		struct race_obj *old = __atomic_exchange_n(&race_ptr, &pool[i % 64], __ATOMIC_ACQ_REL);
		if (ksync_try_synchronize_srcu(&race_ss))
			tries_ok++;
		else
			ksync_synchronize_srcu(&race_ss);
		__atomic_store_n(&old->alive, 0, __ATOMIC_RELAXED); /* retired: no reader may see it */
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELAXED);
	pthread_join(r, NULL);
	KCHECK_EQ(race_bad, 0);
	ksync_cleanup_srcu_struct(&race_ss);
	free(pool);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
