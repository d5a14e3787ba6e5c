/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/srcu_types.h - SRCU's types and process-wide objects: the
 * bottom layer of <ksync/srcu.h> (types, then the slow paths in the chain
 * impl/srcu_process.h -> srcu_read.h -> srcu_gp.h -> srcu_callbacks.h ->
 * srcu_helper.h, then the API and inline read side in srcu.h; each includes
 * only what is below it). Private: include <ksync/srcu.h>.
 */
#ifndef KSYNC_IMPL_SRCU_TYPES_H
#define KSYNC_IMPL_SRCU_TYPES_H

#include <ksync/atomic.h>
#include <ksync/compiler.h>
#include <ksync/impl/seams.h>
#include <ksync/impl/sched.h> /* the blocking wrappers; <ksync/fuzzing.h> */
#include <ksync/list.h>
#include <ksync/rcupdate.h>

#include <pthread.h>
#include <stdbool.h>

KSYNC_EXTERN_C_BEGIN

/*
 * Linkage of SRCU's functions.
 *
 * Header-only (the default): every function is static, and each translation
 * unit that includes <ksync/srcu.h> carries a copy of the slow paths (they
 * cooperate through the domain and a few weak process-wide objects).
 *
 * Compiled (KSYNC_SRCU_EXTERN defined, as linking ksync::srcu or
 * pkg-config ksync-srcu does): one copy in libksync_srcu, compiled by
 * lib/srcu/srcu.c, which also defines KSYNC_SRCU_IMPLEMENTATION. Includers
 * get declarations and the inline read side only; none of the slow paths'
 * system headers (<linux/futex.h>, <linux/membarrier.h>, syscall()).
 *
 * The two forms mix in one program: a header-only copy and the library work
 * on the same domains, as two header-only copies do.
 */
#if defined(KSYNC_SRCU_EXTERN) && !defined(KSYNC_SRCU_IMPLEMENTATION)
#define KSYNC__SRCU_BODIES 0
#define KSYNC_SRCU_API extern
#elif defined(KSYNC_SRCU_EXTERN)
#define KSYNC__SRCU_BODIES 1
#define KSYNC_SRCU_API __attribute__((__visibility__("default")))
#else
#define KSYNC__SRCU_BODIES 1
#define KSYNC_SRCU_API static KSYNC_UNUSED
#endif

/*
 * States (internal). Fields that hold them stay int: some are futex words,
 * all are read without a lock.
 */
/* struct ksync_srcu_thread.state */
enum ksync__srcu_thread_state {
	KSYNC__SRCU_THREAD_FRESH = 0,  /* no exit hook yet */
	KSYNC__SRCU_THREAD_ARMED = 1,  /* the exit hook will fold its slots */
	KSYNC__SRCU_THREAD_EXITED = 2, /* the exit hook ran: no slot any more */
};
/* struct ksync_srcu_struct.helper_state */
enum ksync__srcu_helper_state {
	KSYNC__SRCU_HELPER_NONE = 0,     /* no helper thread */
	KSYNC__SRCU_HELPER_RUNNING = 1,  /* ssp->helper runs (published with release) */
	KSYNC__SRCU_HELPER_STOPPING = 2, /* cleanup asked it to end */
};
/* struct ksync_srcu_struct.gp_waiting (a futex word) */
enum ksync__srcu_gp_waiting {
	KSYNC__SRCU_GP_NOT_WAITING = 0, /* no grace period waits for readers */
	KSYNC__SRCU_GP_WAITING = 1,     /* one waits, spinning or yielding */
	KSYNC__SRCU_GP_SLEEPING = 2,    /* one sleeps on the word: an unlock wakes it */
};
/* ksync_srcu_membarrier_state */
enum ksync__srcu_membarrier {
	KSYNC__SRCU_MEMBARRIER_UNPROBED = 0,
	KSYNC__SRCU_MEMBARRIER_OK = 1,    /* private expedited registered */
	KSYNC__SRCU_MEMBARRIER_NONE = -1, /* unavailable: domains are fenced */
};

/**
 * KSYNC_SRCU_CB_LIMIT_DEFAULT - callbacks that may wait in one domain before
 * ksync_call_srcu() throttles its caller, unless ksync_srcu_set_cb_limit()
 * set another limit for that domain.
 */
#define KSYNC_SRCU_CB_LIMIT_DEFAULT 65536UL

/* Flags of ksync_init_srcu_struct_flags(). */
/** KSYNC_SRCU_FENCED - use the fenced read side even where membarrier works. */
#define KSYNC_SRCU_FENCED 0x1u

/*
 * Slot words (internal). A (thread, domain) pair has one word per index: word
 * i counts the thread's open sections on index i. A word is 0 while no
 * domain's list holds it (the read side then takes its slow path, which
 * registers it); once registered it is KSYNC__SRCU_REG plus KSYNC__SRCU_ONE
 * per open section counted in it. Only the owning thread writes it; the
 * grace period reads it. "Registered, no section" is one compare, so that
 * an outermost lock stores a constant (a value that does not depend on the
 * word's previous load); a ksync_srcu_read_lock_fast() token is the word's
 * address.
 */
#define KSYNC__SRCU_REG 1UL
#define KSYNC__SRCU_ONE 2UL

/* Does the word @w count an open section? */
#define KSYNC__SRCU_BUSY(w) ((w) > KSYNC__SRCU_REG)

/*
 * struct ksync_srcu_words - a (thread, domain) pair's words.
 * @ctr: ctr[i] counts the thread's sections of the domain on index i.
 */
struct ksync_srcu_words {
	unsigned long ctr[2];
};

/*
 * The domain's read word (ssp->idx), the one word the read side loads. Bit 0
 * is the index new readers count on, and so is the bit of value
 * KSYNC__SRCU_IDX_BIT (a word's size: bit 3 on LP64): the flip toggles both
 * (KSYNC__SRCU_FLIP). Bit 1 (KSYNC__SRCU_FENCED_BIT) is the fenced mode (no
 * membarrier). The bits above KSYNC__SRCU_IDX_BIT are the domain's key, the
 * offset of its direct words in ksync_srcu_self (0: none).
 *
 * A key is a multiple of sizeof(struct ksync_srcu_words) (two words) and a
 * word of index i lies i words past its key, so v & KSYNC__SRCU_WORD_MASK
 * (the key plus the index's word) is the offset of this thread's word of
 * the current index, and v & 1 is the index: the fast path finds the word
 * with one load, one mask and one add, and the index with one more mask.
 * Setup writes the key and the mode once (index 0); cleanup writes 0
 * (entry 0, never registered: every section takes the slow path).
 */
#define KSYNC__SRCU_FENCED_BIT 2UL
#define KSYNC__SRCU_IDX_BIT ((unsigned long)sizeof(unsigned long))
#define KSYNC__SRCU_FLIP (KSYNC__SRCU_IDX_BIT | 1UL)
#define KSYNC__SRCU_WORD_MASK (~(KSYNC__SRCU_IDX_BIT - 1))
#define KSYNC__SRCU_KEY_MASK (~(2 * KSYNC__SRCU_IDX_BIT - 1))

/* The index (0 or 1) of the read word @v. */
#define KSYNC__SRCU_IDX_OF(v) ((int)((v) & 1))

/*
 * KSYNC_SRCU_DIRECT - per-thread words for this many domains at once (minus
 * one: entry 0 is never registered), in the thread's TLS, reached by the
 * read side from the domain's key with no lookup. Domains beyond them keep
 * their words in the slot and take the read side's slow path.
 */
#define KSYNC_SRCU_DIRECT 32

/*
 * struct ksync_srcu_slot - one thread's registration with one domain
 * (internal): its place on the domain's list, and where its words are.
 * @own: the words of a domain without direct words; first, so that the
 * read side's inline path for such domains (ksync__srcu_far_ent()) finds
 * them at the slot's own address.
 * @w: the words, index 0 then 1: the owner's direct TLS entry of the
 * domain (ksync_srcu_thread.words), or @own.
 */
struct ksync_srcu_slot {
	unsigned long own[2];
	unsigned long *w;
	unsigned long id;		  /* the domain's id when created; immutable */
	struct ksync_srcu_struct *ssp;	  /* NULL once the domain is gone (global lock) */
	struct ksync_list_head dnode;	  /* on ssp->slots, under ssp->lock */
	struct ksync_srcu_slot *tnext;	  /* the owner's list of slots */
} KSYNC_CACHELINE_ALIGNED;

/*
 * struct ksync_srcu_ctr - what a ksync_srcu_read_lock_fast() token points at
 * (never defined: tokens are opaque). A token is the address of the slot
 * word its section is counted in (the word of its index);
 * ksync_srcu_down_read_fast()'s is the address of the domain's shared lock
 * counter of its index.
 */
struct ksync_srcu_ctr;

/* Entries of the per-thread slot cache. */
#define KSYNC_SRCU_TCACHE 4

struct ksync_srcu_tcache_ent {
	unsigned long key; /* ~id of the domain: an empty entry (0) matches no id */
	struct ksync_srcu_slot *slot;
};

/*
 * Per-thread state (internal): the direct words (first, so that a domain's
 * key is their offset from the object), the cache, this thread's slots.
 */
struct ksync_srcu_thread {
	struct ksync_srcu_words words[KSYNC_SRCU_DIRECT];
	struct ksync_srcu_tcache_ent ent[KSYNC_SRCU_TCACHE];
	struct ksync_srcu_slot *slots;
	/*
	 * Sections of this thread counted in a domain's shared slot (its slot
	 * could not be allocated): per domain id and index, so that the thread
	 * knows it is inside (ksync_srcu_read_lock_held(), the self-deadlock
	 * checks) and an unlock of index i reaches the shared counters only
	 * while the thread has a section there on i (else an unbalanced unlock
	 * could take a srcu_down_read() section's count of i); @shared_other
	 * counts, per index, those of domains past the table.
	 */
	struct {
		unsigned long id, depth[2];
	} shared[KSYNC_SRCU_TCACHE];
	unsigned long shared_other[2];
	int state; /* enum ksync__srcu_thread_state */
	int in_helper; /* this thread is a domain's helper: ksync_call_srcu() never blocks it */
	const void *running; /* the domain whose callbacks this thread runs in place of its helper */
};

/*
 * KSYNC__SRCU_SHARED - how SRCU's process-wide objects are defined: weak, so
 * every translation unit's copy folds into one, and with default visibility,
 * so that shared libraries built with -fvisibility=hidden fold into the same
 * one too (else each library had its own id counter, and ids of domains set
 * up by different copies collided in the per-thread cache: a reader used
 * another domain's slot).
 */
#define KSYNC__SRCU_SHARED KSYNC_PROCESS_WIDE

/*
 * The one per-thread object, shared by every translation unit (weak). Zero
 * initialised: an empty cache entry has key 0, the key of no domain (keys are
 * ~id, and a domain that is not set up yet has id 0, key ~0).
 */
KSYNC__SRCU_SHARED __thread struct ksync_srcu_thread ksync_srcu_self;

/**
 * struct ksync_srcu_struct - an SRCU domain.
 *
 * Everything a domain needs lives here (or in slots reached from here), so any
 * number of translation units, each with its own copy of the slow paths,
 * cooperate on it. Initialise with KSYNC_DEFINE_SRCU()/KSYNC_DEFINE_STATIC_SRCU()
 * or ksync_init_srcu_struct(); fields are private.
 */
struct ksync_srcu_struct {
	/* Read mostly: what readers load. */
	unsigned long key;	/* offset of the direct words in ksync_srcu_self (0: none) */
	unsigned long id;	/* unique, nonzero once set up; bit 0: fenced mode */
	unsigned long idx;	/* the read word: key, index, fenced mode (KSYNC__SRCU_IDX_BIT) */
	int gp_waiting;		/* enum ksync__srcu_gp_waiting */
	unsigned int flags;	/* KSYNC_SRCU_* given at init */

	/* Update side, away from the readers' line. */
	pthread_mutex_t lock KSYNC_CACHELINE_ALIGNED; /* slots, shared */
	struct ksync_list_head slots;
	unsigned long nr_slots;	/* on @slots; written under @lock, read without */
	/*
	 * Sections with no owner slot: srcu_down_read/up_read, and readers whose
	 * slot could not be allocated. Lock and unlock counts per index,
	 * atomic read-modify-writes.
	 */
	struct {
		unsigned long lock[2];
		unsigned long unlock[2];
	} shared;
	pthread_mutex_t gp_mutex;	/* queues the callers of grace periods */
	unsigned long gp_seq;		/* 2 * completed + (1 while one runs): odd is the token */

	/* Callbacks. */
	void *cb_stack KSYNC_CACHELINE_ALIGNED; /* lock-free LIFO of queued heads */
	unsigned long cb_count;		/* queued, not yet invoked */
	unsigned long cb_limit;		/* throttle above this; 0: KSYNC_SRCU_CB_LIMIT_DEFAULT */
	unsigned long cb_by_helper;	/* heads queued by callbacks (srcu_barrier) */
	pthread_mutex_t cb_lock;
	pthread_cond_t cb_wake;		/* the helper sleeps here */
	pthread_cond_t cb_done;		/* producers over the limit, barriers */
	unsigned long poll_req;		/* cookie the helper must reach */
	int poll_req_valid;
	int helper_state;		/* enum ksync__srcu_helper_state */
	int helper_sleeping;
	int driving;			/* a caller runs a batch in place of the helper */
	int cb_in_caller;		/* ksync_srcu_set_cb_in_caller() */
	void *cb_ready;			/* a batch past its grace period, parked for a caller (LIFO) */
	pthread_t helper;
	void *dbg_set;			/* KSYNC_DEBUG: heads queued (double call_srcu) */
	struct ksync_list_head dlink;	/* on the process-wide list of domains */
};

/**
 * KSYNC_SRCU_INITIALIZER() - static initialiser of the domain @name.
 *
 * The domain is usable at once; its process-wide registration happens on
 * first use. Used by KSYNC_DEFINE_SRCU().
 */
#define KSYNC_SRCU_INITIALIZER(name)                                           \
	{                                                                      \
		/* positional, in declaration order (C++17 has no designators) */ \
		0, 0, 0, 0, 0,     /* key, id, idx, gp_waiting, flags */       \
		PTHREAD_MUTEX_INITIALIZER,   /* lock */                        \
		KSYNC_LIST_HEAD_INIT((name).slots), 0, /* slots, nr_slots */   \
		{ { 0, 0 }, { 0, 0 } },      /* shared */                      \
		PTHREAD_MUTEX_INITIALIZER, 0, /* gp_mutex, gp_seq */           \
		0, 0, 0, 0,        /* cb_stack, cb_count, cb_limit, cb_by_helper */ \
		PTHREAD_MUTEX_INITIALIZER,   /* cb_lock */                     \
		PTHREAD_COND_INITIALIZER,    /* cb_wake */                     \
		PTHREAD_COND_INITIALIZER,    /* cb_done */                     \
		0, 0, 0, 0, 0, /* poll_req, poll_req_valid, helper_state, helper_sleeping, driving */ \
		0, 0,          /* cb_in_caller, cb_ready */                    \
		0, 0,                        /* helper, dbg_set */             \
		KSYNC_LIST_HEAD_INIT((name).dlink),                            \
	}

/**
 * KSYNC_DEFINE_SRCU() - define an SRCU domain @name, usable with no init call.
 * @name: the variable's name
 */
#define KSYNC_DEFINE_SRCU(name) struct ksync_srcu_struct name = KSYNC_SRCU_INITIALIZER(name)

/**
 * KSYNC_DEFINE_STATIC_SRCU() - as KSYNC_DEFINE_SRCU(), with internal linkage.
 * @name: the variable's name
 */
#define KSYNC_DEFINE_STATIC_SRCU(name)                                         \
	static struct ksync_srcu_struct name = KSYNC_SRCU_INITIALIZER(name)

KSYNC_EXTERN_C_END

#endif /* KSYNC_IMPL_SRCU_TYPES_H */
