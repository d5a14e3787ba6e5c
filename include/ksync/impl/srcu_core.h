/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_core.h - SRCU slow paths: slots, grace periods, callbacks.
 * The middle layer of <ksync/srcu.h>: it includes only impl/srcu_types.h and
 * the foundation headers, and srcu.h includes it. Private: include
 * <ksync/srcu.h>. Every function is static: each translation
 * unit carries a copy, and all state lives in the domain, in the slots reached
 * from it, or in the few weak process-wide objects declared below.
 *
 * THEORY OF OPERATION
 *
 * Slots. Each (thread, domain) pair has a slot with two words, ctr and alt.
 * A word is 0 until the slot is on the domain's list; then it holds
 * REG (1), plus ONE (2) per open ksync_srcu_read_lock() section of the
 * thread counted in it, plus in its top bit the index i they count on; it is
 * "inside index i" while it counts a section and its top bit is i (one
 * signed compare of word ^ IDX(i), see KSYNC__SRCU_INSIDE). Every lock,
 * nested or not, counts on the current index i = ssp->idx & 1 (as the
 * kernel's per-index counters do): in ctr when ctr is free (REG: store
 * IDX(i) | REG + ONE, a value that does not depend on a previous load) or
 * already on i (ctr + ONE); otherwise ctr still counts sections begun before
 * a flip and the lock goes to alt the same way. Should alt be busy on that
 * old index too (ctr drained and refilled on the old index before a second
 * flip), alt's count is first added to ctr, which stays inside the old index
 * throughout, and alt starts afresh on i. An unlock takes ONE off the word
 * that is inside the index it names. Hence sections that overlap hand over
 * hand move to the new index after a flip, and cannot hold off a grace
 * period forever (with one word that stayed on its outermost section's
 * index, they did). Only the owner writes the words, with plain stores.
 * Sections with no owner (srcu_down_read / srcu_up_read, and readers whose
 * slot allocation failed) count in the domain's shared lock[i]/unlock[i]
 * with fully ordered read-modify-writes.
 *
 * Where the words are. The read side finds them with no lookup: a domain
 * set up while one of KSYNC_SRCU_DIRECT - 1 entries is free owns entry k of
 * every thread's TLS words (ksync_srcu_self.words[k]) and its key is that
 * entry's offset; the fast path reads the word at the key and takes the
 * slow path unless it is registered. A thread's first section registers
 * the entry (slot on the list, then the word to REG); thread exit
 * unregisters every entry before the TLS goes away (the exit hook, so the
 * direct words are used only once it is armed); cleanup puts the entry of
 * each thread back to 0 before it is handed to the next domain. Entry 0 is
 * never registered: the key of a domain without direct words (more than
 * KSYNC_SRCU_DIRECT - 1 at once) or not set up yet, whose words live in the
 * slot and are reached by the slow path through the per-thread cache.
 *
 * Scans. Index i has drained (ksync__srcu_drained) when no slot word is
 * inside i and shared unlock[i] == shared lock[i]. The scan runs under ssp->lock, so no
 * slot is added or freed meanwhile (a slot added later belongs to a reader
 * that starts later). It loads shared unlock[i] before lock[i] (A): since
 * each up_read follows its down_read in the counters' global order, every
 * counted unlock has its lock counted, and equality means no counted
 * section is open.
 *
 * Readers the scans do not see. A grace period starts with M0, a full
 * barrier on every thread of the process: membarrier(PRIVATE_EXPEDITED); in
 * fenced mode, the updater's smp_mb against the reader's own smp_mb B. Take
 * a reader R and the point P at which M0's barrier hits R's thread (fenced
 * mode: the store-buffering pattern of B against M0). If R's lock store
 * precedes P, it is visible to every scan after M0, and the scan sees it or
 * a later value of R's word, which shows the word inside i until every
 * section counted in it has ended (a merge moves alt's count into ctr only
 * while ctr is inside the same index): R is waited for. Otherwise R's lock store, and so every access of
 * R's section (after B), follows P, which follows everything the updater
 * did before M0 (the removal): R cannot obtain the removed object. A reader
 * that sees the index flipped by this grace period is in the second case
 * too: the flip is stored after M0, so R's load of it follows P. Hence M0
 * before the scans is the only barrier the grace period needs for readers
 * entering; none is needed around the flip.
 *
 * Two waits. Readers seen by the scans may be on either index: a reader that
 * loaded the index before the previous grace period's flip and stalled before
 * its lock store (a straggler) counts on the index that is now inactive. So
 * the grace period waits until the inactive index drains, flips the index,
 * then waits until the formerly active index drains. New readers go to the
 * new index (nested ones too) and cannot hold off the second wait;
 * stragglers are at most one per thread per flip (a thread has one lock in
 * progress at a time, whichever word it goes to). Without the first wait a straggler that entered
 * before this grace period would be missed (the model's mutant 1 shows it).
 *
 * End. M_end orders the scans, which saw the readers' unlock stores, before
 * what the caller does next (frees): a reader's section accesses precede its
 * unlock store (release C in fenced mode; on TSO a compiler barrier suffices,
 * as no access moves after a later store); elsewhere M_end is a membarrier,
 * which waits for each running reader's earlier accesses.
 *
 * Barrier pairs: B (reader, after the lock store) with M0; C (reader, before
 * the unlock store) with the acquire loads of the scans and M_end; A (between
 * the shared sums) with the full ordering of down_read/up_read's RMWs.
 * ThreadSanitizer builds use fenced mode, where the reader's stores are
 * releases and the scans' loads acquires: the edge it needs (reader's
 * accesses before the updater's free) is then visible to it.
 *
 * The Promela model tests/model/srcu.pml checks this argument on TSO
 * in both modes (store buffers, membarrier as a drain of all of them, scans
 * interleaved with readers, stragglers), with one slot word and with two
 * (ALTW: a nested lock after a flip goes to alt, the outer section may end
 * first), and rejects five mutants: no first wait, no second wait, no M0, a
 * fenced reader without B, and scans that ignore alt.
 *
 * Sharing. gp_seq = 2 * completed + (1 while a grace period runs). A caller
 * takes a cookie (the seq value at which a grace period that starts after its
 * call will have ended), then under gp_mutex runs grace periods until gp_seq
 * reaches the cookie: callers queued on the mutex behind a running grace
 * period are served together by the next one. The odd value is the token of
 * the grace period in progress, taken by a fully ordered cmpxchg; a domain
 * with no slot and balanced shared counters runs its grace period without
 * the mutex, as the token's cmpxchg and a check (ksync__srcu_no_readers()
 * says why no reader is missed), so the mutex holder may wait for the token.
 */
#ifndef KSYNC_IMPL_SRCU_CORE_H
#define KSYNC_IMPL_SRCU_CORE_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>
#include <ksync/impl/srcu_types.h>
#include <ksync/list.h>
#include <ksync/rcupdate.h>

#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

KSYNC_EXTERN_C_BEGIN

#if !defined(__cplusplus) && !defined(__USE_MISC)
/* Strict C11 hides syscall(); it is in every glibc and musl. */
extern long syscall(long sysno, ...);
#endif
#if !defined(__cplusplus) && !defined(__USE_POSIX199309)
extern int nanosleep(const struct timespec *req, struct timespec *rem);
#endif

/* Grace-period side on a TSO machine: the readers' stores are seen in order. */
#if defined(CK_MD_TSO) && !defined(KSYNC_ATOMIC_BUILTINS)
#define KSYNC__SRCU_TSO 1
#else
#define KSYNC__SRCU_TSO 0
#endif

/* ------------------------------------------------------------------------ */
/* Process-wide objects: weak, default visibility: one per process.          */

/* Protects the links between threads and domains, the list of domains, setup. */
KSYNC__SRCU_SHARED pthread_mutex_t ksync_srcu_global_lock = PTHREAD_MUTEX_INITIALIZER;
KSYNC__SRCU_SHARED struct ksync_list_head ksync_srcu_domains = { &ksync_srcu_domains,
							 &ksync_srcu_domains };
KSYNC__SRCU_SHARED unsigned long ksync_srcu_id_counter;
/* 0: not probed; 1: membarrier private expedited works; -1: it does not. */
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

/*
 * This thread's direct ctr word for the domain of @key (entry 0, never
 * registered, for a domain without direct words or not yet set up).
 */
static KSYNC_ALWAYS_INLINE unsigned long *ksync__srcu_direct_word(unsigned long key)
{
	return (unsigned long *)((char *)&ksync_srcu_self + key);
}

/* The domain's callback limit (see ksync_srcu_set_cb_limit()). */
static KSYNC_ALWAYS_INLINE unsigned long ksync__srcu_cb_limit(const struct ksync_srcu_struct *ssp)
{
	unsigned long limit = ksync_ulong_load(&ssp->cb_limit);

	return limit ? limit : KSYNC_SRCU_CB_LIMIT_DEFAULT;
}

/**
 * ksync_srcu_set_cb_limit() - how many callbacks may wait in @ssp before
 * ksync_call_srcu() throttles its caller.
 * @ssp: the domain
 * @limit: the limit, at least 1; 0 restores KSYNC_SRCU_CB_LIMIT_DEFAULT
 *
 * A property of the domain, seen alike by every translation unit that
 * queues on it. May be called at any time; a caller already throttled
 * re-reads it when the helper next signals progress.
 */
static inline KSYNC_UNUSED void ksync_srcu_set_cb_limit(struct ksync_srcu_struct *ssp,
							unsigned long limit)
{
	ksync_ulong_store(&ssp->cb_limit, limit);
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
	ksync_srcu_membarrier_state = r == 0 ? 1 : -1;
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

/*
 * The srcu_barrier() marker's callback. Weak, not static: the helper, whose
 * code may come from another translation unit than the barrier's, recognises
 * markers (and the fork handler drops them) by this function's address, which must be one per process.
 */
__attribute__((__visibility__("default"))) void ksync__srcu_barrier_cb(struct ksync_rcu_head *h);

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
	t->state = 2;
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
		ssp->gp_waiting = 0;
		ssp->helper_state = 0;
		ssp->helper_sleeping = 0;
		ssp->driving = 0;
		/*
		 * Callbacks still queued run in the child too (the helper restarts
		 * on demand); a batch the parent's helper had taken is lost here.
		 * srcu_barrier() markers are not callbacks: each lives on the
		 * stack of a thread waiting in the barrier, and no such thread
		 * exists here (the forking thread is in fork()). Their stacks are
		 * handed to the child's next threads, so a marker left queued
		 * would be called through memory that is no longer its own.
		 */
		unsigned long n = 0;
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
	if (ksync_srcu_membarrier_state == 1 &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		ksync_srcu_membarrier_state = -1; /* heavy_mb falls back to GLOBAL */
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
	bool fenced = (ssp->flags & KSYNC_SRCU_FENCED) || ksync_srcu_membarrier_state != 1;
#ifdef KSYNC_ATOMIC_BUILTINS
	fenced = true; /* ThreadSanitizer cannot see membarrier */
#endif
	const char *env = getenv("KSYNC_SRCU_FENCED");
	if (env && env[0] && env[0] != '0')
		fenced = true;
	unsigned long n = ++ksync_srcu_id_counter;
	unsigned long k = 0; /* the direct words, if one is free (see KSYNC_SRCU_DIRECT) */
	/* KSYNC_SRCU_TEST_NO_DIRECT: a test's build with every domain past them */
	for (unsigned long i = 1; !k && i < KSYNC_SRCU_DIRECT && !KSYNC_SRCU_TEST_NO_DIRECT; i++)
		if (!(ksync_srcu_direct_used & (1UL << i)))
			k = i;
	ksync_srcu_direct_used |= 1UL << k;
	/* Once: the fast path of a static domain's first readers loads both meanwhile. */
	KSYNC_WRITE_ONCE(ssp->key, k * sizeof(struct ksync_srcu_words));
	KSYNC_WRITE_ONCE(ssp->idx, fenced ? 2UL : 0UL); /* bit 1: fenced, for the fast path */
	ksync_list_add(&ssp->dlink, &ksync_srcu_domains);
	/* Publishes the initialised domain to ksync__srcu_ensure_init() */
	ksync_smp_store_release(&ssp->id, (n << 1) | (fenced ? 1UL : 0UL));
}

/* The domain's id, setting up a statically defined domain on first use. */
static KSYNC_UNUSED unsigned long ksync__srcu_ensure_init(struct ksync_srcu_struct *ssp)
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

/**
 * ksync_init_srcu_struct_flags() - initialise a domain, choosing its mode.
 * @ssp: the domain (any content)
 * @flags: 0, or KSYNC_SRCU_FENCED to force the fenced read side
 *
 * Return: 0 (nothing here can run out of memory; slots are allocated by
 * readers, callbacks by the caller).
 */
static KSYNC_UNUSED int ksync_init_srcu_struct_flags(struct ksync_srcu_struct *ssp,
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

/**
 * ksync_init_srcu_struct() - initialise a dynamically allocated domain.
 * @ssp: the domain (any content)
 *
 * Not needed for KSYNC_DEFINE_SRCU() domains. Pair with
 * ksync_cleanup_srcu_struct() before freeing the memory.
 * Return: 0 on success, -ENOMEM if resources ran out.
 */
static KSYNC_UNUSED int ksync_init_srcu_struct(struct ksync_srcu_struct *ssp)
{
	return ksync_init_srcu_struct_flags(ssp, 0);
}

/* ------------------------------------------------------------------------ */
/* Slots                                                                    */

/* Store a slot word of this thread (a lock or an unlock), in the domain's mode. */
#define KSYNC__SRCU_STORE_WORD(id, p, v)                                       \
	do {                                                                   \
		if ((id) & 1)                                                  \
			ksync_smp_store_release((p), (v)); /* C on unlocks */ \
		else                                                           \
			KSYNC_WRITE_ONCE(*(p), (v));                           \
	} while (0)

/* Move (or insert) the domain @id to the front of this thread's cache. */
static KSYNC_UNUSED void ksync__srcu_cache_insert(unsigned long id, struct ksync_srcu_slot *s)
{
	struct ksync_srcu_thread *t = &ksync_srcu_self;
	int i;
	for (i = 0; i < KSYNC_SRCU_TCACHE - 1; i++)
		if (t->ent[i].key == ~id)
			break;
	for (; i > 0; i--)
		t->ent[i] = t->ent[i - 1];
	t->ent[0].key = ~id;
	t->ent[0].slot = s;
}

/* Free this thread's slots of domains that were cleaned up (global lock held). */
static KSYNC_UNUSED void ksync__srcu_gc_slots(void)
{
	struct ksync_srcu_thread *t = &ksync_srcu_self;
	struct ksync_srcu_slot **pp = &t->slots;
	while (*pp) {
		struct ksync_srcu_slot *s = *pp;
		if (s->ssp) {
			pp = &s->tnext;
			continue;
		}
		*pp = s->tnext;
		for (int i = 0; i < KSYNC_SRCU_TCACHE; i++)
			if (t->ent[i].slot == s)
				t->ent[i].key = 0, t->ent[i].slot = NULL;
		free(s);
	}
}

/*
 * This thread's slot for @ssp: from the thread's list (refilling the cache),
 * or newly allocated when @alloc. NULL when out of memory or exiting: the
 * caller then counts in the shared slot.
 */
static KSYNC_UNUSED struct ksync_srcu_slot *ksync__srcu_get_slot(struct ksync_srcu_struct *ssp,
								 bool alloc)
{
	unsigned long id = ksync__srcu_ensure_init(ssp);
	struct ksync_srcu_thread *t = &ksync_srcu_self;
	struct ksync_srcu_slot *s = ksync__srcu_cached_slot(id);

	if (s) {
		ksync__srcu_cache_insert(id, s);
		return s;
	}
	for (s = t->slots; s; s = s->tnext) {
		if (s->id == id) {
			ksync__srcu_cache_insert(id, s);
			return s;
		}
	}
	if (!alloc || t->state == 2)
		return NULL;
	s = (struct ksync_srcu_slot *)KSYNC__ALLOC(aligned_alloc(KSYNC_CACHELINE_SIZE, sizeof(*s)));
	if (!s)
		return NULL;
	memset((void *)s, 0, sizeof(*s));
	s->id = id;
	s->ssp = ssp;
	ksync__mutex_lock(&ksync_srcu_global_lock);
	ksync__srcu_gc_slots();
	if (t->state == 0) {
		ksync__srcu_proc_init();
		if (ksync_srcu_proc_ready &&
		    pthread_setspecific(ksync_srcu_key, (void *)t) == 0)
			t->state = 1;
	}
	/*
	 * The direct words need the exit hook: at this thread's exit they
	 * leave the domain's list before its TLS goes away. They are free:
	 * only this domain uses entry k, and cleanup clears it.
	 */
	unsigned long k = ssp->key / sizeof(struct ksync_srcu_words);
	s->w = (k && t->state == 1) ? &t->words[k].ctr : s->own;
	ksync__mutex_lock(&ssp->lock);
	ksync_list_add(&s->dnode, &ssp->slots);
	ksync_ulong_store(&ssp->nr_slots, ssp->nr_slots + 1);
	/* Registered (no section): from now on the read side's fast path takes it. */
	KSYNC__SRCU_STORE_WORD(id, &s->w[0], KSYNC__SRCU_REG);
	KSYNC__SRCU_STORE_WORD(id, &s->w[1], KSYNC__SRCU_REG);
	pthread_mutex_unlock(&ssp->lock);
	/*
	 * R: the slot is counted before this thread's first section of @ssp
	 * reads anything; pairs with the token cmpxchg that precedes the check
	 * of an idle grace period (ksync__srcu_no_readers()).
	 */
	ksync_smp_mb();
	s->tnext = t->slots;
	t->slots = s;
	pthread_mutex_unlock(&ksync_srcu_global_lock);
	ksync__srcu_cache_insert(id, s);
	return s;
}

/*
 * A lock on @idx in this thread's slot @s (see "Slots"): in ctr when it is
 * free or already on @idx; else in alt, merging alt into ctr first if alt is
 * busy on the other index too. The read side's slow path.
 */
static KSYNC_UNUSED int ksync__srcu_slot_lock(struct ksync_srcu_slot *s, unsigned long id, int idx)
{
	const unsigned long fresh = KSYNC__SRCU_IDX(idx) | (KSYNC__SRCU_REG + KSYNC__SRCU_ONE);
	unsigned long *p = &s->w[0], w = *p;
	if (!KSYNC__SRCU_BUSY(w)) {
		w = fresh;
	} else if (KSYNC__SRCU_INSIDE(w, idx)) {
		w += KSYNC__SRCU_ONE;
	} else {
		unsigned long a = s->w[1];
		p = &s->w[1];
		if (!KSYNC__SRCU_BUSY(a)) {
			w = fresh;
		} else if (KSYNC__SRCU_INSIDE(a, idx)) {
			w = a + KSYNC__SRCU_ONE;
		} else {
			/* ctr and alt both inside !idx: ctr takes alt's count, stays inside. */
			KSYNC__SRCU_STORE_WORD(id, &s->w[0], w + KSYNC__SRCU_COUNT(a) - KSYNC__SRCU_REG);
			w = fresh;
		}
	}
	KSYNC__SRCU_STORE_WORD(id, p, w);
	if (id & 1)
		ksync_smp_mb(); /* B: pairs with M0 in ksync__srcu_gp_wait_readers() */
	else
		ksync_barrier(); /* B: promoted by membarrier M0 */
	return idx;
}

/*
 * Waiting for readers (gp_waiting: 0 none, 1 a grace period waits, 2 it
 * sleeps on the futex word gp_waiting). The waiter spins, yields, then
 * sleeps; a sleeper is woken by the reader unlock that may end its wait,
 * instead of sleeping its time out (with more runnable threads than CPUs the
 * sleep got the updater the CPU back only when a reader's time slice ended).
 *
 * W1 (the sleeper): store 2, then a heavy barrier (membarrier, or a full
 * fence in fenced mode), then scan again, then sleep while the word is 2.
 * W2 (every unlock): store its lock word, then load gp_waiting; on 2, move
 * it to 1 (cmpxchg: one waker) and wake. In membarrier mode W1's membarrier
 * puts a full barrier on every running reader between W1's store and scan,
 * so either the scan sees the unlock or the unlock sees 2: no lost wake-up.
 * In fenced mode the unlock's release store may pass its load of the flag,
 * so a wake-up can be missed; the sleep's timeout (the back-off's, 1 us
 * doubling to 1 ms) bounds that, as it bounded every wait before.
 */
static KSYNC_NOINLINE KSYNC_UNUSED void ksync__srcu_wake_gp(struct ksync_srcu_struct *ssp)
{
	int v = 2;

	/* fully ordered; the waiter's futex wait re-reads the word */
	if (ksync__try_cmpxchg_int_full(&ssp->gp_waiting, &v, 1))
		(void)syscall(SYS_futex, &ssp->gp_waiting, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* W2, after an unlock's store (see above). */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__srcu_unlock_wake(struct ksync_srcu_struct *ssp)
{
	if (ksync_unlikely(KSYNC_READ_ONCE(ssp->gp_waiting) == 2))
		ksync__srcu_wake_gp(ssp);
}

/*
 * This thread's sections of domain @id counted in the shared slot: how many
 * (those of domains past the per-thread table count for every domain, so
 * that an unlock still finds them), and counting one more (@delta 1) or
 * one less (-1).
 */
static KSYNC_UNUSED unsigned long ksync__srcu_shared_depth(unsigned long id)
{
	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++)
		if (ksync_srcu_self.shared[i].id == id && ksync_srcu_self.shared[i].depth)
			return ksync_srcu_self.shared[i].depth;
	return ksync_srcu_self.shared_other;
}

static KSYNC_UNUSED void ksync__srcu_shared_count(unsigned long id, int delta)
{
	int free_ent = -1;

	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++) {
		if (ksync_srcu_self.shared[i].depth && ksync_srcu_self.shared[i].id == id) {
			ksync_srcu_self.shared[i].depth += (unsigned long)(long)delta;
			return;
		}
		if (!ksync_srcu_self.shared[i].depth && free_ent < 0)
			free_ent = i;
	}
	if (delta > 0 && free_ent >= 0) {
		ksync_srcu_self.shared[free_ent].id = id;
		ksync_srcu_self.shared[free_ent].depth = 1;
	} else {
		ksync_srcu_self.shared_other += (unsigned long)(long)delta;
	}
}

/*
 * The slot of the domain @id if it is in the first two entries of this
 * thread's cache, else NULL: the slow path's own fast path, for domains
 * past the direct words (a lookup that moves nothing, so two such domains
 * used in turn both stay here; id 0, a domain not set up, matches no entry).
 */
static KSYNC_ALWAYS_INLINE struct ksync_srcu_slot *ksync__srcu_recent_slot(unsigned long id)
{
	const struct ksync_srcu_tcache_ent *e = ksync_srcu_self.ent;

	if (e[0].key == ~id)
		return e[0].slot;
	return e[1].key == ~id ? e[1].slot : NULL;
}

static KSYNC_NOINLINE KSYNC_UNUSED int ksync__srcu_read_lock_slow(struct ksync_srcu_struct *ssp)
{
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	struct ksync_srcu_slot *s = ksync__srcu_recent_slot(id);

	if (!s) {
		s = ksync__srcu_get_slot(ssp, true);
		id = KSYNC_READ_ONCE(ssp->id);
	}
	int idx = (int)(KSYNC_READ_ONCE(ssp->idx) & 1);

	if (!s) {
		/* B: fully ordered RMW, pairs with M0 */
		(void)ksync_ulong_fetch_add(&ssp->shared.lock[idx], 1);
		ksync__srcu_shared_count(id, 1); /* lets this thread's unlocks reach the shared slot */
		return idx;
	}
	return ksync__srcu_slot_lock(s, id, idx);
}

/*
 * Count one unlock of @idx in the shared slot if it has an open section on
 * that index; false (nothing counted) otherwise. The cmpxchg keeps
 * U(shared) <= L(shared) whatever the callers do.
 */
static KSYNC_UNUSED bool ksync__srcu_shared_unlock(struct ksync_srcu_struct *ssp, int idx)
{
	unsigned long u = ksync_ulong_load(&ssp->shared.unlock[idx]);
	for (;;) {
		unsigned long l = ksync_ulong_load(&ssp->shared.lock[idx]);
		if ((long)(l - u) <= 0)
			return false;
		/* C: fully ordered, pairs with the acquire sums and M_end */
		if (ksync_ulong_try_cmpxchg(&ssp->shared.unlock[idx], &u, u + 1))
			return true;
	}
}

static KSYNC_NOINLINE KSYNC_UNUSED void ksync__srcu_read_unlock_slow(struct ksync_srcu_struct *ssp,
								     int idx)
{
	if (KSYNC_WARN_ONCE((unsigned)idx > 1, "ksync_srcu_read_unlock(): index is not 0 or 1"))
		return;
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	struct ksync_srcu_slot *s = ksync__srcu_recent_slot(id);

	if (!s)
		s = ksync__srcu_get_slot(ssp, false);
	for (int k = 0; s && k < 2; k++) {
		unsigned long *p = &s->w[k];
		unsigned long w = *p;
		if (KSYNC__SRCU_INSIDE(w, idx)) {
			if (!(id & 1))
				ksync_barrier(); /* C: promoted by membarrier */
			KSYNC__SRCU_STORE_WORD(id, p, w - KSYNC__SRCU_ONE); /* C: release in fenced mode */
			ksync__srcu_unlock_wake(ssp); /* W2 */
			return;
		}
	}
	/*
	 * A section counted in the shared slot (out of memory at lock time)?
	 * Only a thread that has such sections may take an unlock off the
	 * shared counters: anything else would end another thread's section,
	 * or a srcu_down_read() one, early.
	 */
	if (ksync__srcu_shared_depth(id) && ksync__srcu_shared_unlock(ssp, idx)) {
		ksync__srcu_shared_count(id, -1);
		ksync__srcu_unlock_wake(ssp); /* W2 (the cmpxchg was fully ordered) */
		return;
	}
	KSYNC_WARN_ONCE(1, "ksync_srcu_read_unlock(): index not returned by a "
			   "ksync_srcu_read_lock() of this thread; ignored");
}

/* Is this thread inside a ksync_srcu_read_lock() section of @ssp? */
static KSYNC_UNUSED int ksync__srcu_self_inside(const struct ksync_srcu_struct *ssp)
{
	unsigned long id = KSYNC_READ_ONCE(ssp->id);
	if (!id)
		return 0;
	for (int i = 0; i < KSYNC_SRCU_TCACHE; i++) /* sections in the shared slot */
		if (ksync_srcu_self.shared[i].id == id && ksync_srcu_self.shared[i].depth)
			return 1;
	const struct ksync_srcu_slot *s = ksync__srcu_cached_slot(id);
	if (!s) {
		for (s = ksync_srcu_self.slots; s; s = s->tnext)
			if (s->id == id)
				break;
		if (!s)
			return 0;
	}
	return KSYNC__SRCU_BUSY(s->w[0]) || KSYNC__SRCU_BUSY(s->w[1]);
}

/* ------------------------------------------------------------------------ */
/* Grace periods                                                            */

/* Are the shared counters of index @idx balanced (no section counted there open)? */
static KSYNC_UNUSED bool ksync__srcu_shared_drained(struct ksync_srcu_struct *ssp, int idx)
{
	/* C pairs with this acquire load: the sections' accesses precede it. */
	unsigned long u = ksync_smp_load_acquire(&ssp->shared.unlock[idx]);
	/*
	 * A: every unlock counted above has its lock counted below (the shared
	 * counters change only by fully ordered read-modify-writes).
	 */
	ksync_smp_rmb();
	return ksync_ulong_load(&ssp->shared.lock[idx]) == u;
}

/* Has index @idx drained? See "Scans" in the theory of operation. */
static KSYNC_UNUSED bool ksync__srcu_drained(struct ksync_srcu_struct *ssp, int idx)
{
	bool drained;
	struct ksync_list_head *pos;

	ksync__mutex_lock(&ssp->lock);
	drained = ksync__srcu_shared_drained(ssp, idx);
	ksync_list_for_each(pos, &ssp->slots) {
		struct ksync_srcu_slot *s = ksync_list_entry(pos, struct ksync_srcu_slot, dnode);
		unsigned long w = ksync_smp_load_acquire(&s->w[0]); /* pairs with C */
		unsigned long a = ksync_smp_load_acquire(&s->w[1]); /* pairs with C */
		if (KSYNC__SRCU_INSIDE(w, idx) || KSYNC__SRCU_INSIDE(a, idx))
			drained = false;
	}
	pthread_mutex_unlock(&ssp->lock);
	return drained;
}

static KSYNC_UNUSED void ksync__srcu_backoff(unsigned long n)
{
	if (n < 16) {
		for (int i = 0; i < 32; i++)
			ksync_cpu_relax();
	} else {
		sched_yield();
	}
}

static KSYNC_UNUSED void ksync__srcu_wait_idx(struct ksync_srcu_struct *ssp, unsigned long id,
					      int idx)
{
	for (unsigned long n = 0; !ksync__srcu_drained(ssp, idx); n++) {
		if (n == 0)
			KSYNC_WRITE_ONCE(ssp->gp_waiting, 1);
		if (ksync__sched_yield(&ksync_srcu_id_counter))
			continue; /* a scheduler runs the readers instead (<ksync/fuzzing.h>) */
		if (n < 24) {
			ksync__srcu_backoff(n);
			continue;
		}
		unsigned long us = n < 34 ? 1UL << (n - 24) : 1000UL;
		struct timespec ts = { 0, (long)(us * 1000) };
		KSYNC_WRITE_ONCE(ssp->gp_waiting, 2);
		ksync__srcu_heavy_mb(id); /* W1: pairs with W2 in every unlock */
		if (!ksync__srcu_drained(ssp, idx))
			(void)syscall(SYS_futex, &ssp->gp_waiting, FUTEX_WAIT_PRIVATE, 2, &ts, NULL, 0);
		int v = 2;
		(void)ksync__try_cmpxchg_int_full(&ssp->gp_waiting, &v, 1); /* no reader woke us */
	}
}

#ifndef KSYNC_SRCU_MUTATE_SKIP_WAIT
#define KSYNC_SRCU_MUTATE_SKIP_WAIT 0 /* test hook: 1 skips the first wait, 2 the second */
#endif

/*
 * Does @ssp have no reader at all, now: no thread has a slot for it and the
 * shared counters are balanced? Then a grace period has nothing to wait for,
 * and no membarrier, flip or scan is needed.
 *
 * Called without any lock, by the holder of the grace-period token, after
 * the fully ordered cmpxchg that took it (ksync__srcu_gp_begin()). Why no
 * reader can be missed: a thread's first section of @ssp counts its slot in
 * nr_slots, then runs a full barrier (R, in ksync__srcu_get_slot()), then
 * stores its lock word and reads. If this check does not see the count, R
 * and the token cmpxchg order the reader's reads after everything the
 * updater did before taking the token (store buffering with full barriers
 * on both sides): the reader cannot obtain what was removed. A slot leaves
 * nr_slots only after its owner's last unlock (thread exit, cleanup), with a
 * release that the acquire load here pairs with. The shared counters: each
 * shared reader's fully ordered increment of lock[] (B) pairs with the
 * token cmpxchg the same way; unlock[] before lock[] as in
 * ksync__srcu_drained() (A).
 */
static KSYNC_UNUSED bool ksync__srcu_no_readers(struct ksync_srcu_struct *ssp)
{
	if (ksync_smp_load_acquire(&ssp->nr_slots) != 0) /* pairs with detach's release */
		return false;
	return ksync__srcu_shared_drained(ssp, 0) && ksync__srcu_shared_drained(ssp, 1);
}

/*
 * The grace-period token: gp_seq odd. Whoever moves gp_seq from even to odd
 * (fully ordered cmpxchg) runs the one grace period in progress, and ends it
 * by storing the next even value. Callers of ksync__srcu_gp_until() queue on
 * gp_mutex and take the token under it; an idle domain's grace period takes
 * it without the mutex (ksync__srcu_gp_try_idle()), so a mutex holder may
 * find it taken and waits here (briefly: such a holder only checks, unless
 * a reader registered meanwhile). Returns the odd value taken.
 */
static KSYNC_UNUSED unsigned long ksync__srcu_gp_begin(struct ksync_srcu_struct *ssp)
{
	for (unsigned long n = 0;; n++) {
		unsigned long s = ksync_ulong_load(&ssp->gp_seq);
		/* fully ordered: the caller's removals precede the scans and checks; pairs with R */
		if (!(s & 1) && ksync_ulong_try_cmpxchg(&ssp->gp_seq, &s, s + 1))
			return s + 1;
		if (ksync__sched_yield(&ssp->gp_seq))
			continue; /* a scheduler runs the holder instead (<ksync/fuzzing.h>) */
		if (n < 24) {
			ksync__srcu_backoff(n);
			continue;
		}
		struct timespec ts = { 0, (long)((n < 34 ? 1UL << (n - 24) : 1000UL) * 1000) };
		/*
		 * nanosleep() is a cancellation point, and the caller may hold
		 * gp_mutex: cancelled here, it would leave the mutex held forever.
		 */
		int cancel;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
		nanosleep(&ts, NULL);
		pthread_setcancelstate(cancel, NULL);
	}
}

/*
 * Ending the grace period of token @odd. Release: pairs with the acquire in
 * ksync_poll_state_synchronize_srcu(); the scans' acquire loads and M_end
 * precede it.
 */
static KSYNC_ALWAYS_INLINE KSYNC_UNUSED void ksync__srcu_gp_end(struct ksync_srcu_struct *ssp,
								unsigned long odd)
{
	ksync_smp_store_release(&ssp->gp_seq, odd + 1);
}

/* The waits of a grace period whose domain has readers. Token held. */
static KSYNC_UNUSED void ksync__srcu_gp_wait_readers(struct ksync_srcu_struct *ssp)
{
	unsigned long id = ssp->id;

	/*
	 * The waits below may sleep; a thread cancelled in one would leave
	 * the token held and a grace period half run. (Here, not around the
	 * whole synchronize: the idle path needs no such care.)
	 */
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	ksync__srcu_heavy_mb(id); /* M0: pairs with every reader's B */
	int cur = (int)(KSYNC_READ_ONCE(ssp->idx) & 1);
	if (KSYNC_SRCU_MUTATE_SKIP_WAIT != 1)
		ksync__srcu_wait_idx(ssp, id, cur ^ 1);
	KSYNC_WRITE_ONCE(ssp->idx, ssp->idx ^ 1); /* the flip (bit 1, fenced, stays) */
	if (KSYNC_SRCU_MUTATE_SKIP_WAIT != 2)
		ksync__srcu_wait_idx(ssp, id, cur);
	/* M_end: pairs with the readers' C (see "End") */
	if (!(id & 1) && !KSYNC__SRCU_TSO)
		ksync__srcu_heavy_mb(id);
	else
		ksync_smp_mb();
	KSYNC_WRITE_ONCE(ssp->gp_waiting, 0);
	pthread_setcancelstate(cancel, NULL);
}

/* One full grace period. Under gp_mutex. */
static KSYNC_UNUSED void ksync__srcu_gp_one(struct ksync_srcu_struct *ssp)
{
	unsigned long odd = ksync__srcu_gp_begin(ssp);

	if (!ksync__srcu_no_readers(ssp))
		ksync__srcu_gp_wait_readers(ssp);
	ksync__srcu_gp_end(ssp, odd);
}

/*
 * A grace period of an idle domain (no slot, shared counters balanced),
 * without gp_mutex: one cmpxchg and a few loads. False, having done nothing,
 * when the domain is not idle or a grace period is running; true once a
 * grace period that began after the call has ended (a reader that
 * registered between the first check and the token makes it a full one).
 */
static KSYNC_UNUSED bool ksync__srcu_gp_try_idle(struct ksync_srcu_struct *ssp)
{
	if (!ksync__srcu_no_readers(ssp)) /* a hint; the check that counts is below */
		return false;
	KSYNC_SRCU_TEST_IDLE_DELAY();
	unsigned long s = ksync_ulong_load(&ssp->gp_seq);
	/* fully ordered: the caller's removals precede the check below; pairs with R */
	if ((s & 1) || !ksync_ulong_try_cmpxchg(&ssp->gp_seq, &s, s + 1))
		return false;
	if (!ksync__srcu_no_readers(ssp))
		ksync__srcu_gp_wait_readers(ssp);
	ksync__srcu_gp_end(ssp, s + 1);
	return true;
}

/**
 * ksync_poll_state_synchronize_srcu() - has the grace period of @cookie ended?
 * @ssp: the domain
 * @cookie: from ksync_get_state_synchronize_srcu() or ksync_start_poll_synchronize_srcu()
 *
 * Wrap-safe. When it returns true, everything the caller does next is ordered
 * after the end of every reader that the grace period waited for.
 */
static KSYNC_UNUSED bool ksync_poll_state_synchronize_srcu(struct ksync_srcu_struct *ssp,
							   unsigned long cookie)
{
	/* Acquire: pairs with the fully ordered seq increment ending ksync__srcu_gp_one() */
	unsigned long seq = ksync_smp_load_acquire(&ssp->gp_seq);
	if (!ksync__srcu_seq_ge(seq, cookie))
		return false;
	ksync_smp_mb(); /* the caller's frees follow the check */
	return true;
}

/**
 * ksync_get_state_synchronize_srcu() - a cookie for a future grace period.
 * @ssp: the domain
 *
 * Starts nothing. Return: a cookie that ksync_poll_state_synchronize_srcu()
 * reports as done once a full grace period has elapsed after this call.
 * Everything the caller did before the call is ordered before that grace period.
 */
static KSYNC_UNUSED unsigned long ksync_get_state_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_ensure_init(ssp);
	ksync_smp_mb(); /* the caller's removals precede the read of gp_seq (and M0) */
	unsigned long seq = ksync_ulong_load(&ssp->gp_seq);
	return (seq + 3) & ~1UL;
}

/* Run grace periods until @cookie is reached; shares with concurrent callers. */
static KSYNC_UNUSED void ksync__srcu_gp_until(struct ksync_srcu_struct *ssp, unsigned long cookie)
{
	if (ksync_poll_state_synchronize_srcu(ssp, cookie))
		return;
	/* The cookie was taken before this call: a grace period run here satisfies it. */
	if (ksync__srcu_gp_try_idle(ssp) && ksync_poll_state_synchronize_srcu(ssp, cookie))
		return;
	ksync__mutex_lock(&ssp->gp_mutex);
	while (!ksync_poll_state_synchronize_srcu(ssp, cookie))
		ksync__srcu_gp_one(ssp);
	pthread_mutex_unlock(&ssp->gp_mutex);
}

/**
 * ksync_synchronize_srcu() - wait until every read section of @ssp that began
 * before this call has ended.
 * @ssp: the domain
 *
 * Sleeps (never in scheduler-tick steps while no reader is in the way: a
 * domain no thread reads costs one cmpxchg and a few loads, one whose
 * readers are all outside their sections one membarrier and two scans). Concurrent callers share
 * grace periods. Calling it inside a ksync_srcu_read_lock() section of @ssp on
 * this thread would never return: it is reported (file and line) and returns
 * at once instead, waiting for nothing.
 *
 * Ordering: everything the caller did before is visible to every reader that
 * the grace period does not wait for; everything every waited-for reader did
 * in its section happens before the return.
 */
static KSYNC_UNUSED void ksync_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	ksync__srcu_ensure_init(ssp);
	/* An idle domain: no cookie needed, the grace period begins after this call. */
	if (ksync__srcu_gp_try_idle(ssp))
		return;
	if (KSYNC_WARN_ONCE(ksync__srcu_self_inside(ssp),
			    "ksync_synchronize_srcu() inside a read section of the same domain "
			    "(self-deadlock); not waiting"))
		return;
	ksync__srcu_gp_until(ssp, ksync_get_state_synchronize_srcu(ssp));
}

/**
 * ksync_synchronize_srcu_expedited() - ksync_synchronize_srcu(); already as
 * fast as the machine allows.
 * @ssp: the domain
 */
static KSYNC_UNUSED void ksync_synchronize_srcu_expedited(struct ksync_srcu_struct *ssp)
{
	ksync_synchronize_srcu(ssp);
}

/* ------------------------------------------------------------------------ */
/* Callbacks                                                                */

#if KSYNC_DEBUG_ENABLED
/* Debug set of queued heads (double call_srcu detection); under cb_lock. */
#define KSYNC__SRCU_DBG_BUCKETS 1024
struct ksync__srcu_dbg_node {
	struct ksync_rcu_head *head;
	struct ksync__srcu_dbg_node *next;
};

static KSYNC_UNUSED size_t ksync__srcu_dbg_hash(const struct ksync_rcu_head *h)
{
	return ((size_t)(uintptr_t)h >> 4) % KSYNC__SRCU_DBG_BUCKETS;
}

/* true if @h was not queued (and is now recorded), false if it already was */
static KSYNC_UNUSED bool ksync__srcu_dbg_add(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *h)
{
	bool ok = true;
	ksync__mutex_lock(&ssp->cb_lock);
	if (!ssp->dbg_set)
		ssp->dbg_set = KSYNC__ALLOC(calloc(KSYNC__SRCU_DBG_BUCKETS, sizeof(void *)));
	struct ksync__srcu_dbg_node **b = (struct ksync__srcu_dbg_node **)ssp->dbg_set;
	if (b) {
		struct ksync__srcu_dbg_node **bp = &b[ksync__srcu_dbg_hash(h)];
		for (struct ksync__srcu_dbg_node *n = *bp; n; n = n->next)
			if (n->head == h)
				ok = false;
		if (ok) {
			struct ksync__srcu_dbg_node *n =
				(struct ksync__srcu_dbg_node *)KSYNC__ALLOC(malloc(sizeof(*n)));
			if (n) {
				n->head = h;
				n->next = *bp;
				*bp = n;
			}
		}
	}
	pthread_mutex_unlock(&ssp->cb_lock);
	return ok;
}

static KSYNC_UNUSED void ksync__srcu_dbg_del(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *h)
{
	ksync__mutex_lock(&ssp->cb_lock);
	struct ksync__srcu_dbg_node **b = (struct ksync__srcu_dbg_node **)ssp->dbg_set;
	if (b) {
		for (struct ksync__srcu_dbg_node **pp = &b[ksync__srcu_dbg_hash(h)]; *pp;
		     pp = &(*pp)->next) {
			if ((*pp)->head == h) {
				struct ksync__srcu_dbg_node *n = *pp;
				*pp = n->next;
				free(n);
				break;
			}
		}
	}
	pthread_mutex_unlock(&ssp->cb_lock);
}
#endif

static KSYNC_UNUSED bool ksync__srcu_am_helper(struct ksync_srcu_struct *ssp)
{
	/* Acquire: pairs with the release that publishes ssp->helper. */
	return (ksync_smp_load_acquire(&ssp->helper_state) == 1 &&
		pthread_equal(ssp->helper, pthread_self())) ||
	       ksync_srcu_self.running == (const void *)ssp;
}


/*
 * A srcu_barrier() marker: a head queued like a callback, on the stack of the
 * thread waiting in the barrier. @pos is written by the helper that took it:
 * how many callbacks of its batch run before it.
 */
struct ksync__srcu_barrier_mark {
	struct ksync_rcu_head head;
	struct ksync_srcu_struct *ssp;
	unsigned long pos;
	int done;
};

/*
 * Invoke a batch (LIFO order as taken from the stack): reverse it, and set
 * the srcu_barrier() markers apart, each with its position; call the
 * callbacks in order, each marker once the callbacks queued before it have
 * run, and take the invoked callbacks off cb_count. The count is settled
 * before each marker is called, so that when a barrier returns the count
 * holds nothing it waited for (ksync_cleanup_srcu_struct() checks it).
 *
 * A callback may call fork(). In the child this thread (the only one there)
 * comes back here with the rest of a batch the fork handler could not see.
 * Its markers live on the stacks of threads that do not exist in the child,
 * stacks glibc hands to the child's next threads, so they must not even be
 * read again: that is why they were set apart, with their positions, before
 * any callback ran. Once ksync_srcu_fork_gen has changed, the markers are
 * forgotten and no count is settled (the child's cb_count was recounted from
 * cb_stack and never held this batch); the remaining callbacks still run
 * (their grace period has passed), as queued callbacks do in both processes.
 */
static KSYNC_UNUSED unsigned long ksync__srcu_invoke(struct ksync_srcu_struct *ssp,
						     struct ksync_rcu_head *list)
{
	unsigned long invoked = 0;
	struct ksync_rcu_head *fifo = NULL, *cbs = NULL, **cb_tail = &cbs;
	struct ksync_rcu_head *marks = NULL, **mark_tail = &marks;
	unsigned long n = 0, pos = 0, gen = ksync_srcu_fork_gen;

	while (list) {
		struct ksync_rcu_head *next = list->next;
		list->next = fifo;
		fifo = list;
		list = next;
	}
	for (struct ksync_rcu_head *h = fifo; h; h = h->next) {
		if (h->func == ksync__srcu_barrier_cb) {
			ksync_container_of(h, struct ksync__srcu_barrier_mark, head)->pos = pos;
			*mark_tail = h;
			mark_tail = &h->next;
		} else {
			*cb_tail = h;
			cb_tail = &h->next;
			pos++;
		}
	}
	*cb_tail = NULL;
	*mark_tail = NULL;

	pos = 0;
	for (struct ksync_rcu_head *h = cbs;;) {
		if (ksync_srcu_fork_gen != gen)
			return invoked; /* in a child: see above */
		while (marks &&
		       ksync_container_of(marks, struct ksync__srcu_barrier_mark, head)->pos == pos) {
			struct ksync_rcu_head *m = marks;
			marks = m->next; /* before the call: its waiter may return at once */
			/* fully ordered: producers read cb_count without a lock */
			(void)ksync_ulong_fetch_add(&ssp->cb_count, (unsigned long)0 - (n + 1));
			n = 0;
			m->func(m);
		}
		if (!h)
			break;
		struct ksync_rcu_head *next = h->next; /* before func frees the head */
#if KSYNC_DEBUG_ENABLED
		ksync__srcu_dbg_del(ssp, h);
#endif
		n++;
		pos++;
		invoked++;
		h->func(h);
		h = next;
	}
	if (n)
		(void)ksync_ulong_fetch_add(&ssp->cb_count, (unsigned long)0 - n);
	if (ksync_ulong_load(&ssp->cb_count) < ksync__srcu_cb_limit(ssp)) {
		ksync__mutex_lock(&ssp->cb_lock);
		pthread_cond_broadcast(&ssp->cb_done);
		pthread_mutex_unlock(&ssp->cb_lock);
	}
	return invoked;
}

/*
 * Run one batch on the calling thread in place of the helper: the grace
 * period that covers every head of @list (and the pending poll request),
 * then the callbacks, with this thread marked as running them (so that a
 * callback's ksync_call_srcu() never blocks and counts as a helper's, and
 * its ksync_srcu_barrier() is reported). Returns the callbacks invoked.
 */
static KSYNC_UNUSED unsigned long ksync__srcu_run_batch(struct ksync_srcu_struct *ssp,
							struct ksync_rcu_head *list)
{
	const void *was_running = ksync_srcu_self.running;
	int was_in_helper = ksync_srcu_self.in_helper;
	unsigned long cookie = ksync_get_state_synchronize_srcu(ssp), invoked;

	ksync__mutex_lock(&ssp->cb_lock);
	if (ssp->poll_req_valid && ksync__srcu_seq_ge(ssp->poll_req, cookie))
		cookie = ssp->poll_req;
	pthread_mutex_unlock(&ssp->cb_lock);
#ifndef KSYNC_PLANT_SRCU_EARLY_CALLBACK /* a planted bug for the fuzzers (docs/fuzzing.md) */
	ksync__srcu_gp_until(ssp, cookie);
#endif
	ksync__mutex_lock(&ssp->cb_lock);
	if (ssp->poll_req_valid &&
	    ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))
		ssp->poll_req_valid = 0;
	pthread_mutex_unlock(&ssp->cb_lock);
	ksync_srcu_self.running = ssp;
	ksync_srcu_self.in_helper = 1;
	invoked = ksync__srcu_invoke(ssp, list);
	ksync_srcu_self.running = was_running;
	ksync_srcu_self.in_helper = was_in_helper;
	return invoked;
}

/* Does the caller drive @ssp's callbacks (fuzzing mode, no helper running)? */
static inline KSYNC_UNUSED bool ksync__srcu_caller_drives(const struct ksync_srcu_struct *ssp)
{
	return ksync_fuzzing_enabled() && KSYNC_READ_ONCE(ssp->helper_state) != 1;
}

/*
 * Take what is queued on @ssp and run it here (see ksync__srcu_run_batch()).
 * One caller drives a domain at a time (ssp->driving, under cb_lock), as one
 * helper would: callbacks run in queueing order across batches, which
 * callers rely on (a memory group's statistics make their final move into
 * the parent before the parent's own callback frees it). Two threads each
 * running the batch it took, the later batch could run first.
 * Returns 1 when it ran a batch, 0 when nothing was queued and no poll
 * request pending, -1 when another thread drives (its end broadcasts cb_done).
 */
static KSYNC_UNUSED int ksync__srcu_drive_once(struct ksync_srcu_struct *ssp, unsigned long *invoked)
{
	struct ksync_rcu_head *list;

	ksync__mutex_lock(&ssp->cb_lock);
	if (ssp->driving) {
		pthread_mutex_unlock(&ssp->cb_lock);
		return -1;
	}
	list = (struct ksync_rcu_head *)ksync_ptr_xchg(&ssp->cb_stack, NULL);
	if (!list && !ssp->poll_req_valid) {
		pthread_mutex_unlock(&ssp->cb_lock);
		return 0;
	}
	ssp->driving = 1;
	pthread_mutex_unlock(&ssp->cb_lock);

	*invoked += ksync__srcu_run_batch(ssp, list);

	ksync__mutex_lock(&ssp->cb_lock);
	ssp->driving = 0;
	pthread_cond_broadcast(&ssp->cb_done); /* callers that found it busy */
	pthread_mutex_unlock(&ssp->cb_lock);
	return 1;
}

/*
 * Drive @ssp until nothing is queued and nobody drives it: what was queued
 * before the call has run when it returns.
 */
static KSYNC_UNUSED void ksync__srcu_drive_all(struct ksync_srcu_struct *ssp, unsigned long *invoked)
{
	for (;;) {
		int r = ksync__srcu_drive_once(ssp, invoked);

		if (r == 0)
			return;
		if (r < 0) { /* another thread drives: wait for its end, then look again */
			ksync__mutex_lock(&ssp->cb_lock);
			if (ssp->driving)
				ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
			pthread_mutex_unlock(&ssp->cb_lock);
		}
	}
}

/**
 * ksync_srcu_run_callbacks() - run @ssp's queued callbacks on this thread.
 * @ssp: the domain
 *
 * For the fuzzing mode (<ksync/fuzzing.h>), where no helper thread runs
 * them: waits for the grace period of every callback queued (and every
 * pending ksync_start_poll_synchronize_srcu() cookie), runs them in queueing
 * order, then those they queued, until none is left. Also legal with a
 * helper running, but then callbacks the helper took already may still run
 * after it returns (ksync_srcu_barrier() waits for those). Must not be called
 * inside a read section of @ssp nor from one of its callbacks: reported
 * (file and line), and it returns 0 at once.
 *
 * Return: the number of callbacks it invoked.
 */
static KSYNC_UNUSED unsigned long ksync_srcu_run_callbacks(struct ksync_srcu_struct *ssp)
{
	unsigned long invoked = 0;

	if (!ksync_smp_load_acquire(&ssp->id))
		return 0; /* never used: nothing queued */
	if (KSYNC_WARN_ONCE(ksync__srcu_am_helper(ssp),
			    "ksync_srcu_run_callbacks() called from a callback of the same domain"))
		return 0;
	if (KSYNC_WARN_ONCE(ksync__srcu_self_inside(ssp),
			    "ksync_srcu_run_callbacks() inside a read section of the same domain"))
		return 0;
	ksync__srcu_drive_all(ssp, &invoked);
	return invoked;
}

/**
 * ksync_srcu_run_all_callbacks() - ksync_srcu_run_callbacks() of every domain.
 *
 * For the fuzzing mode: also drives the domains a program cannot name (a
 * library's internal ones, such as a shrinker registry's). Domains whose
 * read section the caller is inside, or whose callbacks it is running, are
 * skipped. Must not run concurrently with a ksync_cleanup_srcu_struct().
 *
 * Return: the number of callbacks it invoked.
 */
static KSYNC_UNUSED unsigned long ksync_srcu_run_all_callbacks(void)
{
	unsigned long invoked = 0;

	for (;;) {
		struct ksync_srcu_struct *next = NULL;
		struct ksync_list_head *pos;

		ksync__mutex_lock(&ksync_srcu_global_lock);
		ksync_list_for_each(pos, &ksync_srcu_domains) {
			struct ksync_srcu_struct *ssp =
				ksync_list_entry(pos, struct ksync_srcu_struct, dlink);
			if ((ksync_ptr_load(&ssp->cb_stack) || KSYNC_READ_ONCE(ssp->poll_req_valid)) &&
			    !ksync__srcu_am_helper(ssp) && !ksync__srcu_self_inside(ssp)) {
				next = ssp;
				break;
			}
		}
		pthread_mutex_unlock(&ksync_srcu_global_lock);
		if (!next)
			return invoked;
		/* Queued callbacks count in cb_count: a cleanup leaks @next rather than free it. */
		ksync__srcu_drive_all(next, &invoked);
	}
}

static KSYNC_UNUSED void *ksync__srcu_helper_main(void *arg)
{
	struct ksync_srcu_struct *ssp = (struct ksync_srcu_struct *)arg;
	unsigned long gen = ksync_srcu_fork_gen;

	ksync_srcu_self.in_helper = 1;
	/* Cancelling the helper would leave cb_lock or gp_mutex held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	ksync__mutex_lock(&ssp->cb_lock);
	for (;;) {
		while (ssp->helper_state == 1 && !ksync_ptr_load(&ssp->cb_stack) &&
		       !(ssp->poll_req_valid &&
			 !ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))) {
			ssp->helper_sleeping = 1;
			ksync__cond_wait(&ssp->cb_wake, &ssp->cb_lock);
			ssp->helper_sleeping = 0;
		}
		if (ssp->helper_state != 1 && !ksync_ptr_load(&ssp->cb_stack))
			break;
		unsigned long req = ssp->poll_req;
		bool req_valid = ssp->poll_req_valid;
		pthread_mutex_unlock(&ssp->cb_lock);

		struct ksync_rcu_head *list =
			(struct ksync_rcu_head *)ksync_ptr_xchg(&ssp->cb_stack, NULL);
		/* Every head in @list was queued before this cookie was taken. */
		unsigned long cookie = ksync_get_state_synchronize_srcu(ssp);
		if (req_valid && ksync__srcu_seq_ge(req, cookie))
			cookie = req;
#ifndef KSYNC_PLANT_SRCU_EARLY_CALLBACK /* a planted bug for the fuzzers (docs/fuzzing.md) */
		ksync__srcu_gp_until(ssp, cookie);
#endif
		ksync__srcu_invoke(ssp, list);
		/*
		 * A callback forked and this is the child: the domain has no
		 * helper here (the next call_srcu starts one). This thread, the
		 * child's only one, ends, and with it the child (status 0),
		 * unless the callback ended the child itself (exec, _exit).
		 */
		if (ksync_srcu_fork_gen != gen)
			return NULL;

		ksync__mutex_lock(&ssp->cb_lock);
		if (ssp->poll_req_valid &&
		    ksync__srcu_seq_ge(ksync_ulong_load(&ssp->gp_seq), ssp->poll_req))
			ssp->poll_req_valid = 0;
	}
	pthread_mutex_unlock(&ssp->cb_lock);
	return NULL;
}

/* Under cb_lock: start the helper if it is not running. false if it cannot. */
static KSYNC_UNUSED bool ksync__srcu_helper_start_locked(struct ksync_srcu_struct *ssp)
{
	if (ssp->helper_state == 1)
		return true;
	if (ssp->helper_state == 2 || ksync_fuzzing_enabled())
		return false; /* stopping; or the fuzzing mode, where callers drive */
	if (pthread_create(&ssp->helper, NULL, ksync__srcu_helper_main, ssp) != 0)
		return false;
	ksync_smp_store_release(&ssp->helper_state, 1); /* publishes ssp->helper */
	return true;
}

static KSYNC_UNUSED void ksync__srcu_kick(struct ksync_srcu_struct *ssp)
{
	ksync__mutex_lock(&ssp->cb_lock);
	bool ok = ksync__srcu_helper_start_locked(ssp);
	if (ssp->helper_sleeping)
		pthread_cond_signal(&ssp->cb_wake);
	pthread_mutex_unlock(&ssp->cb_lock);
	if (!ok && !ksync_fuzzing_enabled() && !ksync__srcu_self_inside(ssp) &&
	    !ksync__srcu_am_helper(ssp)) {
		/* No helper thread (pthread_create failed): do its work here, unless another thread does. */
		unsigned long invoked = 0;
		(void)ksync__srcu_drive_once(ssp, &invoked);
	}
}

static KSYNC_UNUSED void ksync__srcu_push(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *head)
{
	void *old = ksync_ptr_load(&ssp->cb_stack);
	do {
		head->next = (struct ksync_rcu_head *)old;
		/* fully ordered: the caller's removal and the head precede the push */
	} while (!ksync_ptr_try_cmpxchg(&ssp->cb_stack, &old, (void *)head));
	if (!old || KSYNC_READ_ONCE(ssp->helper_state) != 1)
		ksync__srcu_kick(ssp);
}

/**
 * ksync_call_srcu() - call @func(@head) after a grace period of @ssp.
 * @ssp: the domain
 * @head: a head embedded in the object; untouched by the caller until @func runs
 * @func: the callback; runs on the domain's helper thread, outside any lock,
 *        and may call ksync_call_srcu() again
 *
 * Never waits for a grace period. When more than the domain's limit
 * (ksync_srcu_set_cb_limit(), default KSYNC_SRCU_CB_LIMIT_DEFAULT)
 * callbacks wait, the caller blocks until the helper catches up, unless it is
 * a callback (of any domain) or inside a ksync_srcu_read_lock() section of
 * @ssp. Queueing a
 * head that is already queued is reported (file and line) and ignored in
 * KSYNC_DEBUG builds.
 *
 * Ordering: everything the caller did before the call happens before the
 * grace period, and everything every reader it waited for did happens
 * before @func runs.
 */
static KSYNC_UNUSED void ksync_call_srcu(struct ksync_srcu_struct *ssp, struct ksync_rcu_head *head,
					 void (*func)(struct ksync_rcu_head *head))
{
	ksync__srcu_ensure_init(ssp);
#if KSYNC_DEBUG_ENABLED
	if (KSYNC_WARN_ONCE(!ksync__srcu_dbg_add(ssp, head),
			    "ksync_call_srcu() of a head that is already queued; ignored"))
		return;
#endif
	head->func = func;
	bool helper = ksync__srcu_am_helper(ssp);
	unsigned long n = ksync_ulong_fetch_add(&ssp->cb_count, 1) + 1;
	KSYNC_SRCU_TEST_CALL_DELAY();
	ksync__srcu_push(ssp, head);
	/*
	 * After the push (fully ordered, both): a srcu_barrier() whose snapshot
	 * of cb_by_helper counts this head pushes its marker after the head, so
	 * the head runs first; one whose snapshot does not sees the count change
	 * once its marker has run, and goes round again.
	 */
	if (helper)
		(void)ksync_ulong_fetch_add(&ssp->cb_by_helper, 1);
	/*
	 * A callback (of any domain's helper) never blocks here: the helper it
	 * would wait for may itself wait, through a reader or a barrier, on
	 * this helper's progress (cross-domain deadlock).
	 */
	if (ksync_unlikely(n > ksync__srcu_cb_limit(ssp)) && !ksync_srcu_self.in_helper &&
	    !ksync__srcu_self_inside(ssp) && ksync__srcu_caller_drives(ssp)) {
		/* Fuzzing mode: no helper to wait for; work the queue down here. */
		(void)ksync_srcu_run_callbacks(ssp);
	} else if (ksync_unlikely(n > ksync__srcu_cb_limit(ssp)) && !ksync_srcu_self.in_helper &&
		   !ksync__srcu_self_inside(ssp)) {
		/* Bounded memory: wait for the helper to work the queue down. */
		int cancel;
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel); /* cb_lock held in the wait */
		ksync__mutex_lock(&ssp->cb_lock);
		while (ksync_ulong_load(&ssp->cb_count) > ksync__srcu_cb_limit(ssp) &&
		       ssp->helper_state == 1)
			ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
		pthread_mutex_unlock(&ssp->cb_lock);
		pthread_setcancelstate(cancel, NULL);
	}
}

KSYNC__SRCU_SHARED void ksync__srcu_barrier_cb(struct ksync_rcu_head *h)
{
	struct ksync__srcu_barrier_mark *m = ksync_container_of(h, struct ksync__srcu_barrier_mark, head);
	struct ksync_srcu_struct *ssp = m->ssp;
	ksync__mutex_lock(&ssp->cb_lock);
	m->done = 1;
	pthread_cond_broadcast(&ssp->cb_done);
	pthread_mutex_unlock(&ssp->cb_lock);
}

/**
 * ksync_srcu_barrier() - wait until every callback queued on @ssp before this
 * call has run.
 * @ssp: the domain
 *
 * Also waits for callbacks that those callbacks queue, and so on, until a
 * round of callbacks queues none (the kernel does not promise this; a chain
 * of callbacks that re-queue themselves forever makes it wait forever).
 * Must not be called by a callback of @ssp (reported, returns at once) nor
 * inside a read section of @ssp.
 */
static KSYNC_UNUSED void ksync_srcu_barrier(struct ksync_srcu_struct *ssp)
{
	if (!ksync_smp_load_acquire(&ssp->id))
		return; /* never used: nothing queued */
	if (KSYNC_WARN_ONCE(ksync__srcu_am_helper(ssp),
			    "ksync_srcu_barrier() called from a callback of the same domain"))
		return;
	if (KSYNC_WARN_ONCE(ksync__srcu_self_inside(ssp),
			    "ksync_srcu_barrier() inside a read section of the same domain"))
		return;
	unsigned long by_helper;
	int cancel;
	/*
	 * Not cancellable: the marker lives on this stack and the wait holds
	 * cb_lock; a thread cancelled in the wait left both behind (the marker
	 * queued, every later user of cb_lock blocked).
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	do {
		struct ksync__srcu_barrier_mark m;
		by_helper = ksync_ulong_load(&ssp->cb_by_helper);
		m.ssp = ssp;
		m.done = 0;
		m.head.func = ksync__srcu_barrier_cb;
		(void)ksync_ulong_fetch_add(&ssp->cb_count, 1);
		ksync__srcu_push(ssp, &m.head);
		for (;;) {
			unsigned long invoked = 0;
			/*
			 * Fuzzing mode: run the queue here until the marker has
			 * run; when the queue is empty another thread has taken
			 * the batch holding the marker, and its broadcast ends
			 * the wait below.
			 */
			if (ksync__srcu_caller_drives(ssp) && ksync__srcu_drive_once(ssp, &invoked) > 0)
				continue;
			ksync__mutex_lock(&ssp->cb_lock);
			bool done = m.done;
			if (!done)
				ksync__cond_wait(&ssp->cb_done, &ssp->cb_lock);
			pthread_mutex_unlock(&ssp->cb_lock);
			if (done)
				break;
		}
	} while (ksync_ulong_load(&ssp->cb_by_helper) != by_helper);
	pthread_setcancelstate(cancel, NULL);
}

/**
 * ksync_start_poll_synchronize_srcu() - a cookie, and make sure a grace
 * period that satisfies it will run.
 * @ssp: the domain
 *
 * Does not wait: the helper thread runs the grace period.
 * Return: the cookie for ksync_poll_state_synchronize_srcu().
 */
static KSYNC_UNUSED unsigned long ksync_start_poll_synchronize_srcu(struct ksync_srcu_struct *ssp)
{
	unsigned long cookie = ksync_get_state_synchronize_srcu(ssp);
	bool ok;

	ksync__mutex_lock(&ssp->cb_lock);
	if (!ssp->poll_req_valid || ksync__srcu_seq_ge(cookie, ssp->poll_req)) {
		ssp->poll_req = cookie;
		ssp->poll_req_valid = 1;
	}
	ok = ksync__srcu_helper_start_locked(ssp);
	if (ssp->helper_sleeping)
		pthread_cond_signal(&ssp->cb_wake);
	pthread_mutex_unlock(&ssp->cb_lock);
	if (!ok && !ksync__srcu_self_inside(ssp))
		ksync__srcu_gp_until(ssp, cookie);
	return cookie;
}

/**
 * ksync_cleanup_srcu_struct() - tear down a domain before its memory is freed.
 * @ssp: the domain
 *
 * Stops the helper thread and detaches every thread's slot. With readers
 * still inside, callbacks still queued, or from a callback of @ssp, it reports
 * the misuse (file and line) and leaks the domain instead: the memory must
 * then not be freed. Afterwards the domain may be initialised again.
 */
static KSYNC_UNUSED void ksync_cleanup_srcu_struct(struct ksync_srcu_struct *ssp)
{
	unsigned long id = ksync_smp_load_acquire(&ssp->id);
	if (!id)
		return;
	if (KSYNC_WARN_ONCE(ksync__srcu_am_helper(ssp),
			    "ksync_cleanup_srcu_struct() from a callback of the same domain; leaked"))
		return;
	if (KSYNC_WARN_ONCE(ksync_ulong_load(&ssp->cb_count) != 0,
			    "ksync_cleanup_srcu_struct() with callbacks pending; leaked"))
		return;
	if (KSYNC_WARN_ONCE(!ksync__srcu_drained(ssp, 0) || !ksync__srcu_drained(ssp, 1),
			    "ksync_cleanup_srcu_struct() with readers inside; leaked"))
		return;

	ksync__mutex_lock(&ssp->cb_lock);
	int running = ssp->helper_state == 1;
	KSYNC_WRITE_ONCE(ssp->helper_state, 2);
	pthread_cond_signal(&ssp->cb_wake);
	pthread_mutex_unlock(&ssp->cb_lock);
	if (running)
		pthread_join(ssp->helper, NULL);

	ksync__mutex_lock(&ksync_srcu_global_lock);
	ksync__mutex_lock(&ssp->lock);
	struct ksync_list_head *pos, *n;
	ksync_list_for_each_safe(pos, n, &ssp->slots) {
		struct ksync_srcu_slot *s = ksync_list_entry(pos, struct ksync_srcu_slot, dnode);
		s->ssp = NULL; /* the owner frees it (ksync__srcu_gc_slots, thread exit) */
		ksync__srcu_detach_slot(ssp, s);
		/*
		 * Unregistered: the owner's direct words go back to 0 for the
		 * next domain given entry k (no section is open: checked above;
		 * a later use of this domain is a use after cleanup).
		 */
		if (s->w != s->own) {
			ksync_ulong_store(&s->w[0], 0);
			ksync_ulong_store(&s->w[1], 0);
		}
	}
	pthread_mutex_unlock(&ssp->lock);
	ksync_srcu_direct_used &= ~((1UL << (ssp->key / sizeof(struct ksync_srcu_words))) & ~1UL);
	ksync_list_del_init(&ssp->dlink);
#if KSYNC_DEBUG_ENABLED
	if (ssp->dbg_set) {
		free(ssp->dbg_set); /* empty: no callback pending */
		ssp->dbg_set = NULL;
	}
#endif
	/* Back to the state of a static domain never used: a later use sets it up again. */
	memset(&ssp->shared, 0, sizeof(ssp->shared));
	KSYNC_WRITE_ONCE(ssp->idx, 0);
	KSYNC_WRITE_ONCE(ssp->helper_state, 0);
	ssp->poll_req_valid = 0;
	ssp->cb_by_helper = 0;
	KSYNC_WRITE_ONCE(ssp->key, 0);
	KSYNC_WRITE_ONCE(ssp->id, 0);
	pthread_mutex_unlock(&ksync_srcu_global_lock);
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_CORE_H */
