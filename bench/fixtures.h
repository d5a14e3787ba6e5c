/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fixtures.h - the C side of bench_srcu: one table of operations per
 * synchronisation "module" (ksync SRCU, the three liburcu flavours, ck_epoch,
 * ck_rwlock, ck_brlock, pthread_rwlock), so that the C++ Google Benchmark file
 * registers every benchmark once per module and names it Module/Op.
 *
 * Every read-side loop lives here, in C, around the libraries' inline fast
 * paths: a benchmark iteration is a batch of pairs (KeepRunningBatch), so
 * Google Benchmark's per-iteration overhead is paid once per batch and the
 * figures approach bare_read.c's tight loop.
 */
#ifndef KSYNC_BENCH_FIXTURES_H
#define KSYNC_BENCH_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * urcu-qsbr readers announce a quiescent state once every this many
 * lock+unlock pairs (its read_lock/read_unlock are empty: the quiescent state
 * is the whole read-side cost, amortised over the period).
 */
#define BENCH_QSBR_PERIOD 256

/* The payload of every queued or published node (after the module's head). */
struct bench_payload {
	uint64_t t_enq;    /* CLOCK_MONOTONIC ns at enqueue (latency runs) */
	int *done;         /* set to 1 (release) by the callback, or NULL */
	long v;            /* what readers load through the published pointer */
};

struct bench_ops {
	const char *name;       /* Module: ksync_srcu, urcu_memb, ... */
	int is_lock;            /* a reader-writer lock: no grace period, no callbacks */
	void (*init)(void);     /* once, from main(): publish the first node */
	/* A reading thread's set-up and tear-down (liburcu register, ck record). */
	void (*thread_begin)(void);
	void (*thread_end)(void);
	/* urcu-qsbr only (NULL elsewhere): a registered thread that will not read
	 * for a while goes offline, so that it holds no grace period off. */
	void (*offline)(void);
	void (*online)(void);
	/* n empty lock+unlock pairs. */
	void (*reads)(unsigned long n);
	/* n sections that each dereference the module's published node and load
	 * its value; returns the sum (kept alive by the caller). */
	long (*deref_reads)(unsigned long n);
	/* Publish a new malloc'd node, wait (grace period or write lock), free the old. */
	void (*update)(void);
	/* Grace period on the readers' domain; NULL for the locks. */
	void (*synchronize)(void);
	/* Grace period where no thread ever read (see bench_srcu.cc); NULL: none. */
	void (*sync_never_read)(void);
	/* A thread that queues callbacks: set-up, tear-down. */
	void (*caller_begin)(void);
	void (*caller_end)(void);
	/* Queue one malloc'd node, freed by its callback (which also counts it
	 * in bench_cb_invoked and honours p->done). */
	void (*call)(uint64_t t_enq, int *done);
	/* Make progress on queued callbacks from the calling thread (ck_epoch_poll);
	 * NULL where a helper thread does it. */
	void (*poll)(void);
	/* Wait until every callback queued so far has run. */
	void (*barrier)(void);
};

extern const struct bench_ops bench_ksync_srcu, bench_ksync_srcu_fenced, bench_ksync_srcu_in_caller;
extern const struct bench_ops bench_urcu_memb, bench_urcu_qsbr, bench_urcu_bp;
extern const struct bench_ops bench_ck_epoch, bench_ck_rwlock, bench_ck_brlock;
extern const struct bench_ops bench_pthread_rwlock;

/* ksync only: one polled grace period (start_poll + poll until done), and a
 * poll of a cookie whose grace period has long completed. */
void bench_ksync_poll_gp(void);
int bench_ksync_poll_done(void);

/* fx_hash.c: read-mostly lookups in a hash table of 1024 keys. */
struct bench_hash_ops {
	const char *name;
	void (*init)(void);
	void (*thread_begin)(void);
	void (*thread_end)(void);
	/* n operations on random keys; @permille of them replace the key's entry. */
	long (*run)(unsigned long n, unsigned permille, uint64_t *rng);
	/* Wait until retired entries are freed. */
	void (*barrier)(void);
};
extern const struct bench_hash_ops bench_hash_ksync, bench_hash_urcu, bench_hash_rwlock;

/* fx_common.c */
extern unsigned long bench_cb_invoked;  /* callbacks run so far (relaxed atomic) */
extern uint64_t bench_cb_latency_sum;   /* sum of enqueue-to-invoke ns of latency runs */
uint64_t bench_now_ns(void);
/* What every callback does with its node's payload before freeing the node. */
void bench_invoked(struct bench_payload *p);
/* Wait for *flag to become nonzero: spin, then yield. */
void bench_wait_flag(int *flag);
/* The @i-th pause (from 0) of a wait loop: spin at first, then yield. */
void bench_backoff(unsigned i);
/* malloc() that aborts on failure: a benchmark has no way out. */
void *bench_xmalloc(size_t size);
/*
 * The modules' nodes (a struct with its module's head and a struct
 * bench_payload p): BENCH_NODE_NEW(type) is a zeroed node to publish (p.v =
 * 1), BENCH_CB_NODE_NEW(type, t_enq, done) a node to queue as a callback
 * (p.t_enq and p.done set, the rest left as malloc() has it).
 */
void *bench_node_new(size_t size, size_t payload_off);
void *bench_cb_node_new(size_t size, size_t payload_off, uint64_t t_enq, int *done);
#define BENCH_NODE_NEW(type) ((type *)bench_node_new(sizeof(type), offsetof(type, p)))
#define BENCH_CB_NODE_NEW(type, t_enq, done)                                   \
	((type *)bench_cb_node_new(sizeof(type), offsetof(type, p), (t_enq), (done)))
/* An empty thread_begin / thread_end / caller_begin / ... operation. */
void bench_nothing(void);
/* Set up @lock writer-preferring (glibc's PREFER_WRITER_NONRECURSIVE_NP, as
 * the reclaim-storm demo's rwsem): with the default reader preference an
 * updater would starve behind readers that relock back to back. @lock is a
 * pthread_rwlock_t (void here, so that this header needs no <pthread.h>). */
void bench_rwlock_init_writer_pref(void *lock);

#ifdef __cplusplus
}
#endif

#endif
