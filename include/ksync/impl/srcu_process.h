/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_process.h - SRCU's process-wide objects, helpers, thread exit,
 * fork() and domain setup: the first of the slow-path headers of
 * <ksync/srcu.h>.
 * Private: include <ksync/srcu.h>, which declares and documents every public
 * call. The slow paths are split by job into a chain of headers, each
 * including the one before it: impl/srcu_process.h (process-wide objects,
 * thread exit, fork, domain setup), impl/srcu_read.h (slots and the read
 * side's slow paths), impl/srcu_gp.h (grace periods), impl/srcu_callbacks.h
 * (running callbacks), impl/srcu_helper.h (the helper thread, call_srcu,
 * barrier, polls, cleanup). Their function bodies are compiled where
 * KSYNC__SRCU_BODIES is 1 (impl/srcu_types.h): in every translation unit by
 * default (each carries a static copy, all state lives in the domain, its
 * slots and a few weak process-wide objects), or only in lib/srcu/srcu.c
 * for the compiled form (KSYNC_SRCU_EXTERN).
 */
#ifndef KSYNC_IMPL_SRCU_PROCESS_H
#define KSYNC_IMPL_SRCU_PROCESS_H

#include <ksync/atomic.h>
#include <ksync/bug.h>
#include <ksync/compiler.h>
#include <ksync/impl/srcu_types.h>
#include <ksync/list.h>
#include <ksync/rcupdate.h>

#if KSYNC__SRCU_BODIES
#include <ksync/impl/futex.h>

#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

KSYNC_EXTERN_C_BEGIN

/* Grace-period side on a TSO machine: the readers' stores are seen in order. */
#if defined(CK_MD_TSO) && !defined(KSYNC_ATOMIC_BUILTINS)
#define KSYNC__SRCU_TSO 1
#else
#define KSYNC__SRCU_TSO 0
#endif

/*
 * The srcu_barrier() marker's callback. Weak, not static: the helper, whose
 * code may come from another translation unit than the barrier's, recognises
 * markers (and the fork handler drops them) by this function's address, which must be one per process.
 */
__attribute__((__visibility__("default"))) void ksync__srcu_barrier_cb(struct ksync_rcu_head *h);

/*
 * This thread's direct ctr word for the domain of @key (entry 0, never
 * registered, for a domain without direct words or not yet set up).
 */
static KSYNC_ALWAYS_INLINE unsigned long *ksync__srcu_direct_word(unsigned long key)
{
	return (unsigned long *)((char *)&ksync_srcu_self + key);
}

#if KSYNC__SRCU_BODIES

#if !defined(__cplusplus) && !defined(__USE_POSIX199309)
extern int nanosleep(const struct timespec *req, struct timespec *rem);
#endif

/* ------------------------------------------------------------------------ */
/* Process-wide objects: weak, default visibility: one per process.          */

/* Protects the links between threads and domains, the list of domains, setup. */
KSYNC__SRCU_SHARED pthread_mutex_t ksync_srcu_global_lock = PTHREAD_MUTEX_INITIALIZER;
KSYNC__SRCU_SHARED struct ksync_list_head ksync_srcu_domains = { &ksync_srcu_domains,
							 &ksync_srcu_domains };
KSYNC__SRCU_SHARED unsigned long ksync_srcu_id_counter;
/* enum ksync__srcu_membarrier */
KSYNC__SRCU_SHARED int ksync_srcu_membarrier_state;
KSYNC__SRCU_SHARED int ksync_srcu_proc_ready;
KSYNC__SRCU_SHARED pthread_key_t ksync_srcu_key;
/* Bit k: the direct words k of every thread belong to a domain (bit 0: never). */
KSYNC__SRCU_SHARED unsigned long ksync_srcu_direct_used;
/* Bumped in every fork() child: a thread that sees it change is in a child. */
KSYNC__SRCU_SHARED unsigned long ksync_srcu_fork_gen;

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static KSYNC_ALWAYS_INLINE struct ksync_srcu_slot *ksync__srcu_cached_slot(unsigned long id)
{
	struct ksync_srcu_thread *t = &ksync_srcu_self;

	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++)
		if (t->ent[i].key == ~id)
			return t->ent[i].slot;
	return NULL;
}

/* The domain's callback limit (see ksync_srcu_set_cb_limit()). */
static KSYNC_ALWAYS_INLINE unsigned long ksync__srcu_cb_limit(const struct ksync_srcu_struct *ssp)
{
	unsigned long limit = ksync_ulong_load(&ssp->cb_limit);

	return limit ? limit : KSYNC_SRCU_CB_LIMIT_DEFAULT;
}

static inline KSYNC_UNUSED bool ksync__srcu_seq_ge(unsigned long a, unsigned long b)
{
	return (long)(a - b) >= 0;
}

static KSYNC_UNUSED void ksync__srcu_membarrier_probe(void)
{
	/* Under ksync_srcu_global_lock. */
	if (ksync_srcu_membarrier_state)
		return;
	long r = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
	ksync_srcu_membarrier_state = r == 0 ? KSYNC__SRCU_MEMBARRIER_OK : KSYNC__SRCU_MEMBARRIER_NONE;
}

/*
 * The heavy barrier of membarrier mode: a full barrier on every running thread
 * of the process. Should the syscall fail after a successful registration
 * (it does not, short of a kernel bug), fall back to the global command,
 * which is slower but needs no registration.
 */
static KSYNC_UNUSED void ksync__srcu_heavy_mb(unsigned long id)
{
	/* The updater's own half of M0/M_end: orders its accesses before the scans. */
	ksync_smp_mb();
	if (!(id & 1)) {
		/* The readers' half: a barrier on every running thread, pairs with
		 * the compiler barriers that stand for B and C in membarrier mode. */
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
			(void)syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		ksync_smp_mb(); /* orders the remote barriers before this thread's scans */
	}
}

/* ------------------------------------------------------------------------ */
/* Thread exit, fork                                                        */

/*
 * Under ssp->lock: take the slot of a thread that is gone (or going) off the
 * domain. A ksync_srcu_read_lock() section can only end on its own thread, so
 * a section left open by a vanished thread can never end: its reader is gone
 * and no longer reads anything, and dropping it is safe.
 */
static KSYNC_UNUSED void ksync__srcu_detach_slot(struct ksync_srcu_struct *ssp,
					       struct ksync_srcu_slot *s)
{
	ksync_list_del_init(&s->dnode);
	/* Release: the owner's last unlock precedes an idle grace period's check */
	ksync_smp_store_release(&ssp->nr_slots, ssp->nr_slots - 1);
}

/* pthread key destructor: fold and free every slot of the exiting thread. */
static KSYNC_UNUSED void ksync__srcu_thread_exit(void *arg)
{
	struct ksync_srcu_thread *t = (struct ksync_srcu_thread *)arg;

	ksync__mutex_lock(&ksync_srcu_global_lock);
	struct ksync_srcu_slot *s = t->slots;
	while (s) {
		struct ksync_srcu_slot *next = s->tnext;
		struct ksync_srcu_struct *ssp = s->ssp;
		if (ssp) {
			KSYNC_WARN_ONCE(KSYNC__SRCU_BUSY(s->w[0]) || KSYNC__SRCU_BUSY(s->w[1]),
					"thread exits inside a ksync_srcu_read_lock() "
					"section; the section is dropped");
			ksync__mutex_lock(&ssp->lock);
			ksync__srcu_detach_slot(ssp, s);
			pthread_mutex_unlock(&ssp->lock);
		}
		free(s);
		s = next;
	}
	t->slots = NULL;
	memset(t->ent, 0, sizeof(t->ent));
	/* Unregistered: a later section takes the slow path, to the shared counters */
	memset(t->words, 0, sizeof(t->words));
	t->state = KSYNC__SRCU_THREAD_EXITED;
	pthread_mutex_unlock(&ksync_srcu_global_lock);
}

static KSYNC_UNUSED void ksync__srcu_atfork_prepare(void)
{
	ksync__mutex_lock(&ksync_srcu_global_lock);
	struct ksync_list_head *pos;
	ksync_list_for_each(pos, &ksync_srcu_domains) {
		struct ksync_srcu_struct *ssp =
			ksync_list_entry(pos, struct ksync_srcu_struct, dlink);
		ksync__mutex_lock(&ssp->lock);
		ksync__mutex_lock(&ssp->cb_lock);
	}
}

static KSYNC_UNUSED void ksync__srcu_atfork_parent(void)
{
	struct ksync_list_head *pos;
	ksync_list_for_each(pos, &ksync_srcu_domains) {
		struct ksync_srcu_struct *ssp =
			ksync_list_entry(pos, struct ksync_srcu_struct, dlink);
		pthread_mutex_unlock(&ssp->cb_lock);
		pthread_mutex_unlock(&ssp->lock);
	}
	pthread_mutex_unlock(&ksync_srcu_global_lock);
}

static KSYNC_UNUSED bool ksync__srcu_slot_is_mine(const struct ksync_srcu_slot *s)
{
	for (const struct ksync_srcu_slot *m = ksync_srcu_self.slots; m; m = m->tnext)
		if (m == s)
			return true;
	return false;
}

/*
 * In the child only the forking thread exists. Locks are re-created (they
 * were held by this thread in prepare, or by threads that are gone: gp_mutex),
 * the slots of vanished threads are dropped (their sections died with them), the
 * helper thread is forgotten (restarted by the next call_srcu, srcu_barrier
 * or start_poll; callbacks still queued then run in the child), an interrupted grace
 * period is forgotten (gp_seq back to even: it will be run again), and
 * membarrier is registered again (registration is per memory map).
 */
static KSYNC_UNUSED void ksync__srcu_atfork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
	struct ksync_list_head *pos;

	ksync_list_for_each(pos, &ksync_srcu_domains) {
		struct ksync_srcu_struct *ssp =
			ksync_list_entry(pos, struct ksync_srcu_struct, dlink);
		struct ksync_list_head *sp, *sn;
		ksync_list_for_each_safe(sp, sn, &ssp->slots) {
			struct ksync_srcu_slot *s = ksync_list_entry(sp, struct ksync_srcu_slot, dnode);
			if (!ksync__srcu_slot_is_mine(s)) {
				ksync__srcu_detach_slot(ssp, s);
				free(s);
			}
		}
		memcpy(&ssp->lock, &fresh, sizeof(fresh));
		memcpy(&ssp->cb_lock, &fresh, sizeof(fresh));
		memcpy(&ssp->gp_mutex, &fresh, sizeof(fresh));
		memcpy(&ssp->cb_wake, &fresh_cond, sizeof(fresh_cond));
		memcpy(&ssp->cb_done, &fresh_cond, sizeof(fresh_cond));
		if (ssp->gp_seq & 1)
			ssp->gp_seq--;
		ssp->gp_waiting = KSYNC__SRCU_GP_NOT_WAITING;
		ssp->helper_state = KSYNC__SRCU_HELPER_NONE;
		ssp->helper_sleeping = 0;
		ssp->driving = 0;
		/*
		 * Callbacks still queued run in the child too (the helper restarts
		 * on demand); a batch the parent's helper had taken is lost here,
		 * a batch it parked for a caller (cb_ready) with it.
		 * srcu_barrier() markers are not callbacks: each lives on the
		 * stack of a thread waiting in the barrier, and no such thread
		 * exists here (the forking thread is in fork()). Their stacks are
		 * handed to the child's next threads, so a marker left queued
		 * would be called through memory that is no longer its own.
		 */
		unsigned long n = 0;
		ssp->cb_ready = NULL;
		struct ksync_rcu_head **hp = (struct ksync_rcu_head **)&ssp->cb_stack;
		while (*hp) {
			if ((*hp)->func == ksync__srcu_barrier_cb) {
				*hp = (*hp)->next; /* unlink without touching it again */
				continue;
			}
			n++;
			hp = &(*hp)->next;
		}
		ssp->cb_count = n;
	}
	memcpy(&ksync_srcu_global_lock, &fresh, sizeof(fresh));
	ksync_srcu_fork_gen++; /* see ksync__srcu_invoke(): fork() from a callback */
	if (ksync_srcu_membarrier_state == KSYNC__SRCU_MEMBARRIER_OK &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		ksync_srcu_membarrier_state = KSYNC__SRCU_MEMBARRIER_NONE; /* heavy_mb falls back to GLOBAL */
}

/* Under the global lock: the key and the fork handlers, once per process. */
static KSYNC_UNUSED void ksync__srcu_proc_init(void)
{
	if (ksync_srcu_proc_ready)
		return;
	if (pthread_key_create(&ksync_srcu_key, ksync__srcu_thread_exit) != 0)
		return; /* retried next time; slots of this thread then leak at exit */
	pthread_atfork(ksync__srcu_atfork_prepare, ksync__srcu_atfork_parent,
		       ksync__srcu_atfork_child);
	ksync__srcu_membarrier_probe();
	ksync_srcu_proc_ready = 1;
}

/* ------------------------------------------------------------------------ */
/* Domain setup                                                             */

/* Under the global lock: pick the mode, give the domain its id, list it. */
static KSYNC_UNUSED void ksync__srcu_setup(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_proc_init();
	bool fenced = (ssp->flags & KSYNC_SRCU_FENCED) || ksync_srcu_membarrier_state != KSYNC__SRCU_MEMBARRIER_OK;
#ifdef KSYNC_ATOMIC_BUILTINS
	fenced = true; /* ThreadSanitizer cannot see membarrier */
#endif
	const char *env = getenv("KSYNC_SRCU_FENCED");
	if (env && env[0] && env[0] != '0')
		fenced = true;
	unsigned long n = ++ksync_srcu_id_counter;
	unsigned long k = 0; /* the direct words, if one is free (see KSYNC_SRCU_DIRECT) */
	/* The plant SRCU_NO_DIRECT: a test's build with every domain past them */
	for (unsigned long i = 1; !k && i < KSYNC_SRCU_DIRECT && !KSYNC_PLANT(SRCU_NO_DIRECT); i++)
		if (!(ksync_srcu_direct_used & (1UL << i)))
			k = i;
	ksync_srcu_direct_used |= 1UL << k;
	/* Once: the fast path of a static domain's first readers loads both meanwhile. */
	KSYNC_WRITE_ONCE(ssp->key, k * sizeof(struct ksync_srcu_words));
	/* The read word: the key, index 0, the mode (see KSYNC__SRCU_IDX_BIT) */
	KSYNC_WRITE_ONCE(ssp->idx, k * sizeof(struct ksync_srcu_words) | (fenced ? KSYNC__SRCU_FENCED_BIT : 0UL));
	ksync_list_add(&ssp->dlink, &ksync_srcu_domains);
	/* Publishes the initialised domain to ksync__srcu_ensure_init() */
	ksync_smp_store_release(&ssp->id, (n << 1) | (fenced ? 1UL : 0UL));
}

/* The domain's id, setting up a statically defined domain on first use. */
KSYNC_SRCU_API unsigned long ksync__srcu_ensure_init(struct ksync_srcu_struct *ssp)
{
	unsigned long id = ksync_smp_load_acquire(&ssp->id); /* pairs with ksync__srcu_setup() */
	if (ksync_likely(id))
		return id;
	ksync__mutex_lock(&ksync_srcu_global_lock);
	if (!ssp->id)
		ksync__srcu_setup(ssp);
	id = ssp->id;
	pthread_mutex_unlock(&ksync_srcu_global_lock);
	return id;
}

/* ksync_init_srcu_struct_flags(): see <ksync/srcu.h>. */
KSYNC_SRCU_API int ksync_init_srcu_struct_flags(struct ksync_srcu_struct *ssp,
						     unsigned int flags)
{
	memset((void *)ssp, 0, sizeof(*ssp));
	pthread_mutex_init(&ssp->lock, NULL);
	pthread_mutex_init(&ssp->gp_mutex, NULL);
	pthread_mutex_init(&ssp->cb_lock, NULL);
	pthread_cond_init(&ssp->cb_wake, NULL);
	pthread_cond_init(&ssp->cb_done, NULL);
	ksync_init_list_head(&ssp->slots);
	ksync_init_list_head(&ssp->dlink);
	ssp->flags = flags;
	ksync__mutex_lock(&ksync_srcu_global_lock);
	ksync__srcu_setup(ssp);
	pthread_mutex_unlock(&ksync_srcu_global_lock);
	return 0;
}

/* ksync_init_srcu_struct(): see <ksync/srcu.h>. */
KSYNC_SRCU_API int ksync_init_srcu_struct(struct ksync_srcu_struct *ssp)
{
	return ksync_init_srcu_struct_flags(ssp, 0);
}


#endif /* KSYNC__SRCU_BODIES */

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_PROCESS_H */
