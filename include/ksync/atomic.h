/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/atomic.h - kernel-style atomics and barriers on Concurrency Kit
 *
 * Types: ksync_atomic_t (int), ksync_atomic_long_t (long) and ksync_atomic64_t
 * (int64_t), initialised with KSYNC_ATOMIC_INIT() (KSYNC_ATOMIC64_INIT()).
 * Every value-returning operation also exists with _acquire, _release and
 * _relaxed suffixes, as in the kernel. Operations follow its ordering rules
 * (Documentation/atomic_t.txt in Linux):
 *
 *  - ksync_atomic_read()/set() are single untorn accesses, unordered;
 *  - void read-modify-write operations (inc, dec, add, sub, and, or, xor) are
 *    atomic but unordered: use ksync_smp_mb__before_atomic()/after_atomic()
 *    around them for ordering;
 *  - value-returning read-modify-write operations (*_return, fetch_*,
 *    *_and_test, inc_not_zero, xchg, cmpxchg, try_cmpxchg) are fully ordered,
 *    as if a ksync_smp_mb() stood before and after them. A failed cmpxchg
 *    orders nothing, as in the kernel.
 *
 * Two back-ends, one API. Every shared access in ksync goes through this layer
 * (and KSYNC_READ_ONCE/KSYNC_WRITE_ONCE of <ksync/compiler.h>):
 *
 *  - default: Concurrency Kit's ck_pr_* (per-architecture inline assembly; no
 *    per-architecture code in ksync). On TSO machines (x86-64) locked
 *    instructions are already full barriers, so no extra fence is emitted; on
 *    weaker machines ksync brackets them with ck_pr_fence_memory().
 *  - KSYNC_ATOMIC_BUILTINS defined (before any ksync header, or -D...): the
 *    compiler's __atomic builtins with explicit memory orders (relaxed for
 *    unordered operations, seq_cst for fully ordered ones, acquire/release for
 *    smp_load_acquire/smp_store_release). ThreadSanitizer understands these;
 *    it understands neither CK's inline assembly nor the volatile accesses of
 *    CK's own builtins back-end. Use it for TSan and model-checking builds.
 *
 * Note for TSan builds: TSan does not model stand-alone fences
 * (ksync_smp_mb() and friends). Code that must be race-free under TSan pairs
 * acquire loads with release stores or uses fully ordered read-modify-writes.
 */
#ifndef KSYNC_ATOMIC_H
#define KSYNC_ATOMIC_H

#include <ksync/compiler.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef KSYNC_ATOMIC_BUILTINS
#include <ck_pr.h>
#endif

KSYNC_EXTERN_C_BEGIN

/** typedef ksync_atomic_t - an int accessed only through ksync_atomic_*(). */
typedef struct {
	int counter;
} ksync_atomic_t;

/** typedef ksync_atomic_long_t - a long accessed only through ksync_atomic_long_*(). */
typedef struct {
	long counter;
} ksync_atomic_long_t;

/**
 * typedef ksync_atomic64_t - a 64-bit integer accessed only through
 * ksync_atomic64_*() (the kernel's atomic64_t; aligned to 8 bytes everywhere).
 */
typedef struct {
	int64_t counter __attribute__((__aligned__(8)));
} ksync_atomic64_t;

/** KSYNC_ATOMIC_INIT() - static initialiser of any atomic type. */
#define KSYNC_ATOMIC_INIT(i) { (i) }
/** KSYNC_ATOMIC64_INIT() - static initialiser of ksync_atomic64_t. */
#define KSYNC_ATOMIC64_INIT(i) { (i) }

/* ------------------------------------------------------------------------ */
/* Barriers                                                                 */

#ifdef KSYNC_ATOMIC_BUILTINS
#define ksync_smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define ksync_smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define ksync_smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define ksync_smp_mb__before_atomic() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define ksync_smp_mb__after_atomic() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define ksync_cpu_relax() ksync_barrier()
#define ksync_smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ksync_smp_store_release(p, v)                                          \
	do {                                                                   \
		__typeof__(*(p)) ksync__sr_v = (v);                            \
		__atomic_store_n((p), ksync__sr_v, __ATOMIC_RELEASE);           \
	} while (0)
#else
/** ksync_smp_mb() - full barrier: orders all earlier accesses before all later ones. */
#define ksync_smp_mb() ck_pr_fence_memory()
/** ksync_smp_rmb() - orders earlier loads before later loads. */
#define ksync_smp_rmb() ck_pr_fence_load()
/** ksync_smp_wmb() - orders earlier stores before later stores. */
#define ksync_smp_wmb() ck_pr_fence_store()
#if defined(CK_MD_TSO)
/* Locked read-modify-writes are full barriers on TSO machines. */
#define KSYNC__RMW_FENCE() ksync_barrier()
#else
#define KSYNC__RMW_FENCE() ck_pr_fence_memory()
#endif
/** ksync_smp_mb__before_atomic() - make the next unordered RMW act as a full barrier before it. */
#define ksync_smp_mb__before_atomic() KSYNC__RMW_FENCE()
/** ksync_smp_mb__after_atomic() - make the previous unordered RMW act as a full barrier after it. */
#define ksync_smp_mb__after_atomic() KSYNC__RMW_FENCE()
/** ksync_cpu_relax() - busy-wait hint (x86 pause). */
#define ksync_cpu_relax() ck_pr_stall()
/**
 * ksync_smp_load_acquire() - load *@p; no later access moves before it.
 * Pairs with ksync_smp_store_release() (or any release) of the same location.
 */
#define ksync_smp_load_acquire(p)                                              \
	__extension__({                                                        \
		__typeof__(*(p)) ksync__la_v = KSYNC_READ_ONCE(*(p));          \
		ck_pr_fence_acquire();                                         \
		ksync__la_v;                                                   \
	})
/**
 * ksync_smp_store_release() - store @v to *@p; no earlier access moves after it.
 * Pairs with ksync_smp_load_acquire() of the same location.
 */
#define ksync_smp_store_release(p, v)                                          \
	do {                                                                   \
		ck_pr_fence_release();                                         \
		KSYNC_WRITE_ONCE(*(p), (v));                                   \
	} while (0)
#endif

/* ------------------------------------------------------------------------ */
/* Typed primitives on plain locations: the one place that picks a back-end. */

/*
 * Every value-returning primitive comes in four orders, named by a suffix:
 * _full (fully ordered: the kernel's plain name), _acq (acquire: no later
 * access moves before it), _rel (release: no earlier access moves after it),
 * _rlx (relaxed: atomic, unordered). A failed cmpxchg orders nothing in any
 * order, as in the kernel.
 */
#ifdef KSYNC_ATOMIC_BUILTINS
#define KSYNC__MO_full __ATOMIC_SEQ_CST
#define KSYNC__MO_acq __ATOMIC_ACQUIRE
#define KSYNC__MO_rel __ATOMIC_RELEASE
#define KSYNC__MO_rlx __ATOMIC_RELAXED
#define KSYNC__PRIMS_ORD(N, T, CKS, CKT, O)                                    \
	static KSYNC_ALWAYS_INLINE T ksync__fetch_add_##N##_##O(T *p, T v)    \
	{ return __atomic_fetch_add(p, v, KSYNC__MO_##O); }                    \
	static KSYNC_ALWAYS_INLINE T ksync__fetch_and_##N##_##O(T *p, T v)    \
	{ return __atomic_fetch_and(p, v, KSYNC__MO_##O); }                    \
	static KSYNC_ALWAYS_INLINE T ksync__fetch_or_##N##_##O(T *p, T v)     \
	{ return __atomic_fetch_or(p, v, KSYNC__MO_##O); }                     \
	static KSYNC_ALWAYS_INLINE T ksync__fetch_xor_##N##_##O(T *p, T v)    \
	{ return __atomic_fetch_xor(p, v, KSYNC__MO_##O); }                    \
	static KSYNC_ALWAYS_INLINE T ksync__xchg_##N##_##O(T *p, T v)         \
	{ return __atomic_exchange_n(p, v, KSYNC__MO_##O); }                   \
	static KSYNC_ALWAYS_INLINE bool ksync__try_cmpxchg_##N##_##O(T *p, T *old, T v) \
	{ return __atomic_compare_exchange_n(p, old, v, 0, KSYNC__MO_##O,       \
					     __ATOMIC_RELAXED); }
#define KSYNC__PRIMS(N, T, CKS, CKT)                                           \
	static KSYNC_ALWAYS_INLINE T ksync__ld_##N(const T *p)                 \
	{ return __atomic_load_n(p, __ATOMIC_RELAXED); }                       \
	static KSYNC_ALWAYS_INLINE void ksync__st_##N(T *p, T v)               \
	{ __atomic_store_n(p, v, __ATOMIC_RELAXED); }                          \
	static KSYNC_ALWAYS_INLINE void ksync__add_##N(T *p, T v)              \
	{ (void)__atomic_fetch_add(p, v, __ATOMIC_RELAXED); }                  \
	static KSYNC_ALWAYS_INLINE void ksync__and_##N(T *p, T v)              \
	{ (void)__atomic_fetch_and(p, v, __ATOMIC_RELAXED); }                  \
	static KSYNC_ALWAYS_INLINE void ksync__or_##N(T *p, T v)               \
	{ (void)__atomic_fetch_or(p, v, __ATOMIC_RELAXED); }                   \
	static KSYNC_ALWAYS_INLINE void ksync__xor_##N(T *p, T v)              \
	{ (void)__atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }                  \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, full)                                 \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, acq)                                  \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, rel)                                  \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, rlx)
#else
/*
 * KSYNC__CK_OPERAND() - the value operand of a CK add/and/or/xor on @T.
 * CK's x86-64 assembly offers 64-bit operands to `addq`/`orq`/... under the
 * "Z" constraint (any unsigned 32-bit constant), but those instructions only
 * encode a sign-extended 32-bit immediate: a constant in 0x80000000..
 * 0xffffffff (set_bit(31, ...), or(0x80000000L)) does not assemble at -O1
 * and above. Such a value is handed over in a register instead; constants
 * that fit, and run-time values, are unchanged.
 */
#if defined(__x86_64__)
#define KSYNC__CK_OPERAND(T, v)                                                \
	__extension__({                                                        \
		T ksync__op = (v);                                             \
		if (sizeof(T) == 8 &&                                          \
		    !(__builtin_constant_p(ksync__op) &&                       \
		      (int64_t)ksync__op == (int64_t)(int32_t)ksync__op))      \
			__asm__("" : "+r"(ksync__op));                         \
		ksync__op;                                                     \
	})
#else
#define KSYNC__CK_OPERAND(T, v) ((T)(v))
#endif
/*
 * CK's read-modify-writes are fully ordered on TSO machines (a locked
 * instruction) and unordered elsewhere: the orders add fences around them
 * where the machine needs them (KSYNC__RMW_FENCE() is a compiler barrier on
 * TSO). Acquire fences after, release before, full on both sides.
 */
#define KSYNC__FB_full() KSYNC__RMW_FENCE()
#define KSYNC__FA_full() KSYNC__RMW_FENCE()
#define KSYNC__FB_acq() do { } while (0)
#define KSYNC__FA_acq() KSYNC__RMW_FENCE()
#define KSYNC__FB_rel() KSYNC__RMW_FENCE()
#define KSYNC__FA_rel() do { } while (0)
#define KSYNC__FB_rlx() do { } while (0)
#define KSYNC__FA_rlx() do { } while (0)
/* CK has no fetch_and/or/xor: a cmpxchg loop in the requested order. */
#define KSYNC__CK_FETCH_OP(N, T, O, NAME, EXPR)                                \
	static KSYNC_ALWAYS_INLINE T ksync__fetch_##NAME##_##N##_##O(T *p, T v) \
	{ T old = ksync__ld_##N(p);                                            \
	  while (!ksync__try_cmpxchg_##N##_##O(p, &old, (T)(EXPR)))            \
		;                                                              \
	  return old; }
#define KSYNC__PRIMS_ORD(N, T, CKS, CKT, O)                                    \
	static KSYNC_ALWAYS_INLINE T ksync__fetch_add_##N##_##O(T *p, T v)    \
	{ KSYNC__FB_##O();                                                     \
	  T r = (T)ck_pr_faa_##CKS((CKT *)p, (CKT)v);                          \
	  KSYNC__FA_##O(); return r; }                                         \
	static KSYNC_ALWAYS_INLINE T ksync__xchg_##N##_##O(T *p, T v)         \
	{ KSYNC__FB_##O();                                                     \
	  T r = (T)ck_pr_fas_##CKS((CKT *)p, (CKT)v);                          \
	  KSYNC__FA_##O(); return r; }                                         \
	static KSYNC_ALWAYS_INLINE bool ksync__try_cmpxchg_##N##_##O(T *p, T *old, T v) \
	{ CKT seen; KSYNC__FB_##O();                                           \
	  bool ok = ck_pr_cas_##CKS##_value((CKT *)p, (CKT)*old, (CKT)v, &seen); \
	  if (ok) KSYNC__FA_##O(); else *old = (T)seen;                        \
	  return ok; }                                                         \
	KSYNC__CK_FETCH_OP(N, T, O, and, old & v)                              \
	KSYNC__CK_FETCH_OP(N, T, O, or, old | v)                               \
	KSYNC__CK_FETCH_OP(N, T, O, xor, old ^ v)
#define KSYNC__PRIMS(N, T, CKS, CKT)                                           \
	static KSYNC_ALWAYS_INLINE T ksync__ld_##N(const T *p)                 \
	{ return (T)ck_pr_load_##CKS((const CKT *)p); }                        \
	static KSYNC_ALWAYS_INLINE void ksync__st_##N(T *p, T v)               \
	{ ck_pr_store_##CKS((CKT *)p, (CKT)v); }                               \
	static KSYNC_ALWAYS_INLINE void ksync__add_##N(T *p, T v)              \
	{ ck_pr_add_##CKS((CKT *)p, KSYNC__CK_OPERAND(CKT, v)); }              \
	static KSYNC_ALWAYS_INLINE void ksync__and_##N(T *p, T v)              \
	{ ck_pr_and_##CKS((CKT *)p, KSYNC__CK_OPERAND(CKT, v)); }              \
	static KSYNC_ALWAYS_INLINE void ksync__or_##N(T *p, T v)               \
	{ ck_pr_or_##CKS((CKT *)p, KSYNC__CK_OPERAND(CKT, v)); }               \
	static KSYNC_ALWAYS_INLINE void ksync__xor_##N(T *p, T v)              \
	{ ck_pr_xor_##CKS((CKT *)p, KSYNC__CK_OPERAND(CKT, v)); }              \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, full)                                 \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, acq)                                  \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, rel)                                  \
	KSYNC__PRIMS_ORD(N, T, CKS, CKT, rlx)
#endif

#if LONG_MAX == INT64_MAX
KSYNC__PRIMS(int, int, int, int)
KSYNC__PRIMS(long, long, 64, uint64_t)
KSYNC__PRIMS(ulong, unsigned long, 64, uint64_t)
#define KSYNC__CK_LONG_BITS 64
#elif LONG_MAX == INT32_MAX
KSYNC__PRIMS(int, int, int, int)
KSYNC__PRIMS(long, long, 32, uint32_t)
KSYNC__PRIMS(ulong, unsigned long, 32, uint32_t)
#define KSYNC__CK_LONG_BITS 32
#else
#error "ksync: unsupported size of long"
#endif
KSYNC__PRIMS(u64, uint64_t, 64, uint64_t)
KSYNC__PRIMS(s64, int64_t, 64, uint64_t)
#undef KSYNC__PRIMS
#undef KSYNC__PRIMS_ORD

/* The fully ordered primitives under their short names (the layer's users). */
#define ksync__fetch_add_ulong ksync__fetch_add_ulong_full
#define ksync__xchg_ulong ksync__xchg_ulong_full
#define ksync__try_cmpxchg_ulong ksync__try_cmpxchg_ulong_full
#define ksync__fetch_add_u64 ksync__fetch_add_u64_full
#define ksync__try_cmpxchg_u64 ksync__try_cmpxchg_u64_full

/* ------------------------------------------------------------------------ */
/* ksync_atomic_t, ksync_atomic_long_t, ksync_atomic64_t                    */

/*
 * One generator for the three types, so the families cannot drift apart.
 * PFX is the public prefix, N the primitive family, T the value type, UT its
 * unsigned twin: every arithmetic on values is done in UT, so that results
 * wrap as the kernel's atomics do (the kernel builds with
 * -fno-strict-overflow) instead of being signed-overflow UB, e.g. inc_return
 * at INT_MAX or sub(INT_MIN).
 *
 * The value-returning operations (KSYNC__ATOMIC_ORDERED) exist in the
 * kernel's four orders: PFX_op() fully ordered, PFX_op_acquire(),
 * PFX_op_release(), PFX_op_relaxed():
 *   fetch_add, fetch_sub, fetch_inc, fetch_dec, fetch_and, fetch_or,
 *   fetch_xor, fetch_andnot  - apply, return the OLD value;
 *   add_return, sub_return, inc_return, dec_return - apply, return the NEW value;
 *   xchg(v, new)             - store, return the old value;
 *   cmpxchg(v, old, new)     - store @new if @v holds @old; return the value seen;
 *   try_cmpxchg(v, &old, new) - the same, true on success; on failure the value
 *                              seen is written to old, and nothing is ordered.
 */
#define KSYNC__WRAP(T, UT, a, op, b) ((T)((UT)(a) op (UT)(b)))
#define KSYNC__ATOMIC_ORDERED(PFX, N, T, UT, SFX, O)                           \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_add##SFX(T i, PFX##_t *v)    \
	{ return ksync__fetch_add_##N##_##O(&v->counter, i); }                 \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_sub##SFX(T i, PFX##_t *v)    \
	{ return ksync__fetch_add_##N##_##O(&v->counter, KSYNC__WRAP(T, UT, 0, -, i)); } \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_inc##SFX(PFX##_t *v)         \
	{ return ksync__fetch_add_##N##_##O(&v->counter, 1); }                 \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_dec##SFX(PFX##_t *v)         \
	{ return ksync__fetch_add_##N##_##O(&v->counter, -1); }                \
	static KSYNC_ALWAYS_INLINE T PFX##_add_return##SFX(T i, PFX##_t *v)   \
	{ return KSYNC__WRAP(T, UT, ksync__fetch_add_##N##_##O(&v->counter, i), +, i); } \
	static KSYNC_ALWAYS_INLINE T PFX##_sub_return##SFX(T i, PFX##_t *v)   \
	{ return KSYNC__WRAP(T, UT, ksync__fetch_add_##N##_##O(&v->counter,   \
			KSYNC__WRAP(T, UT, 0, -, i)), -, i); }                 \
	static KSYNC_ALWAYS_INLINE T PFX##_inc_return##SFX(PFX##_t *v)        \
	{ return KSYNC__WRAP(T, UT, ksync__fetch_add_##N##_##O(&v->counter, 1), +, 1); } \
	static KSYNC_ALWAYS_INLINE T PFX##_dec_return##SFX(PFX##_t *v)        \
	{ return KSYNC__WRAP(T, UT, ksync__fetch_add_##N##_##O(&v->counter, -1), -, 1); } \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_and##SFX(T i, PFX##_t *v)    \
	{ return ksync__fetch_and_##N##_##O(&v->counter, i); }                 \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_or##SFX(T i, PFX##_t *v)     \
	{ return ksync__fetch_or_##N##_##O(&v->counter, i); }                  \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_xor##SFX(T i, PFX##_t *v)    \
	{ return ksync__fetch_xor_##N##_##O(&v->counter, i); }                 \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_andnot##SFX(T i, PFX##_t *v) \
	{ return ksync__fetch_and_##N##_##O(&v->counter, (T)~(UT)i); }         \
	static KSYNC_ALWAYS_INLINE T PFX##_xchg##SFX(PFX##_t *v, T n)         \
	{ return ksync__xchg_##N##_##O(&v->counter, n); }                      \
	static KSYNC_ALWAYS_INLINE bool PFX##_try_cmpxchg##SFX(PFX##_t *v, T *old, T n) \
	{ return ksync__try_cmpxchg_##N##_##O(&v->counter, old, n); }          \
	static KSYNC_ALWAYS_INLINE T PFX##_cmpxchg##SFX(PFX##_t *v, T old, T n) \
	{ ksync__try_cmpxchg_##N##_##O(&v->counter, &old, n); return old; }

/*
 * The rest of a family:
 *   read(v), set(v, i)            - untorn, unordered;
 *   read_acquire(v), set_release(v, i) - with those orders;
 *   add, sub, inc, dec, and, or, xor, andnot - unordered, return nothing;
 *   dec_and_test, inc_and_test, sub_and_test(i, v), add_negative(i, v)
 *                                 - fully ordered, test the NEW value;
 *   add_unless(v, a, u)           - add @a unless @v holds @u; true if it added;
 *   fetch_add_unless(v, a, u)     - the same, returning the old value;
 *   inc_not_zero(v)               - increment unless 0; true if it did;
 *   inc_unless_negative(v), dec_unless_positive(v) - true if it changed @v;
 *   dec_if_positive(v)            - decrement if the result stays >= 0;
 *                                   returns old - 1 either way.
 * The conditional ones are fully ordered when they change @v.
 */
#define KSYNC__ATOMIC_API(PFX, N, T, UT)                                       \
	static KSYNC_ALWAYS_INLINE T PFX##_read(const PFX##_t *v)             \
	{ return ksync__ld_##N(&v->counter); }                                 \
	static KSYNC_ALWAYS_INLINE T PFX##_read_acquire(const PFX##_t *v)     \
	{ return ksync_smp_load_acquire(&v->counter); }                        \
	static KSYNC_ALWAYS_INLINE void PFX##_set(PFX##_t *v, T i)            \
	{ ksync__st_##N(&v->counter, i); }                                     \
	static KSYNC_ALWAYS_INLINE void PFX##_set_release(PFX##_t *v, T i)    \
	{ ksync_smp_store_release(&v->counter, i); }                           \
	static KSYNC_ALWAYS_INLINE void PFX##_add(T i, PFX##_t *v)            \
	{ ksync__add_##N(&v->counter, i); }                                    \
	static KSYNC_ALWAYS_INLINE void PFX##_sub(T i, PFX##_t *v)            \
	{ ksync__add_##N(&v->counter, KSYNC__WRAP(T, UT, 0, -, i)); }           \
	static KSYNC_ALWAYS_INLINE void PFX##_inc(PFX##_t *v)                 \
	{ ksync__add_##N(&v->counter, 1); }                                    \
	static KSYNC_ALWAYS_INLINE void PFX##_dec(PFX##_t *v)                 \
	{ ksync__add_##N(&v->counter, -1); }                                   \
	static KSYNC_ALWAYS_INLINE void PFX##_and(T i, PFX##_t *v)            \
	{ ksync__and_##N(&v->counter, i); }                                    \
	static KSYNC_ALWAYS_INLINE void PFX##_or(T i, PFX##_t *v)             \
	{ ksync__or_##N(&v->counter, i); }                                     \
	static KSYNC_ALWAYS_INLINE void PFX##_xor(T i, PFX##_t *v)            \
	{ ksync__xor_##N(&v->counter, i); }                                    \
	static KSYNC_ALWAYS_INLINE void PFX##_andnot(T i, PFX##_t *v)         \
	{ ksync__and_##N(&v->counter, (T)~(UT)i); }                            \
	KSYNC__ATOMIC_ORDERED(PFX, N, T, UT, , full)                           \
	KSYNC__ATOMIC_ORDERED(PFX, N, T, UT, _acquire, acq)                    \
	KSYNC__ATOMIC_ORDERED(PFX, N, T, UT, _release, rel)                    \
	KSYNC__ATOMIC_ORDERED(PFX, N, T, UT, _relaxed, rlx)                    \
	static KSYNC_ALWAYS_INLINE bool PFX##_dec_and_test(PFX##_t *v)        \
	{ return ksync__fetch_add_##N##_full(&v->counter, -1) == 1; }          \
	static KSYNC_ALWAYS_INLINE bool PFX##_inc_and_test(PFX##_t *v)        \
	{ return ksync__fetch_add_##N##_full(&v->counter, 1) == -1; }          \
	static KSYNC_ALWAYS_INLINE bool PFX##_sub_and_test(T i, PFX##_t *v)   \
	{ return ksync__fetch_add_##N##_full(&v->counter, KSYNC__WRAP(T, UT, 0, -, i)) == i; } \
	static KSYNC_ALWAYS_INLINE bool PFX##_add_negative(T i, PFX##_t *v)   \
	{ return PFX##_add_return(i, v) < 0; }                                 \
	static KSYNC_ALWAYS_INLINE T PFX##_fetch_add_unless(PFX##_t *v, T a, T u) \
	{ T c = ksync__ld_##N(&v->counter);                                    \
	  do { if (c == u) return c; }                                         \
	  while (!ksync__try_cmpxchg_##N##_full(&v->counter, &c, KSYNC__WRAP(T, UT, c, +, a))); \
	  return c; }                                                          \
	static KSYNC_ALWAYS_INLINE bool PFX##_add_unless(PFX##_t *v, T a, T u) \
	{ return PFX##_fetch_add_unless(v, a, u) != u; }                       \
	static KSYNC_ALWAYS_INLINE bool PFX##_inc_not_zero(PFX##_t *v)        \
	{ return PFX##_add_unless(v, 1, 0); }                                  \
	static KSYNC_ALWAYS_INLINE bool PFX##_inc_unless_negative(PFX##_t *v) \
	{ T c = ksync__ld_##N(&v->counter);                                    \
	  do { if (c < 0) return false; }                                      \
	  while (!ksync__try_cmpxchg_##N##_full(&v->counter, &c, KSYNC__WRAP(T, UT, c, +, 1))); \
	  return true; }                                                       \
	static KSYNC_ALWAYS_INLINE bool PFX##_dec_unless_positive(PFX##_t *v) \
	{ T c = ksync__ld_##N(&v->counter);                                    \
	  do { if (c > 0) return false; }                                      \
	  while (!ksync__try_cmpxchg_##N##_full(&v->counter, &c, KSYNC__WRAP(T, UT, c, -, 1))); \
	  return true; }                                                       \
	static KSYNC_ALWAYS_INLINE T PFX##_dec_if_positive(PFX##_t *v)        \
	{ T c = ksync__ld_##N(&v->counter), d;                                 \
	  do { d = KSYNC__WRAP(T, UT, c, -, 1); if (d < 0) break; }            \
	  while (!ksync__try_cmpxchg_##N##_full(&v->counter, &c, d));          \
	  return d; }

KSYNC__ATOMIC_API(ksync_atomic, int, int, unsigned int)
KSYNC__ATOMIC_API(ksync_atomic_long, long, long, unsigned long)
KSYNC__ATOMIC_API(ksync_atomic64, s64, int64_t, uint64_t)
#undef KSYNC__ATOMIC_API
#undef KSYNC__ATOMIC_ORDERED
#undef KSYNC__WRAP

/* ------------------------------------------------------------------------ */
/* Words and pointers: the layer other ksync modules build on.              */

/** ksync_ulong_or() - atomically OR @mask into *@p; unordered. */
static KSYNC_ALWAYS_INLINE void ksync_ulong_or(unsigned long *p, unsigned long mask)
{ ksync__or_ulong(p, mask); }
/** ksync_ulong_andnot() - atomically clear @mask in *@p; unordered. */
static KSYNC_ALWAYS_INLINE void ksync_ulong_andnot(unsigned long *p, unsigned long mask)
{ ksync__and_ulong(p, ~mask); }
/** ksync_ulong_xor() - atomically flip @mask in *@p; unordered. */
static KSYNC_ALWAYS_INLINE void ksync_ulong_xor(unsigned long *p, unsigned long mask)
{ ksync__xor_ulong(p, mask); }

/*
 * ksync_ulong_fetch_{or,andnot,xor}() - atomic RMW returning the old word;
 * fully ordered. On CK a cmpxchg loop; with KSYNC_ATOMIC_BUILTINS the seq_cst
 * __atomic_fetch_* builtins. (The single-bit locked bts/btr/btc are used by
 * ksync_ulong_test_and_*_bit() below.)
 */
#define KSYNC__ULONG_FETCH_OP(NAME, EXPR)                                      \
	static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_##NAME(     \
		unsigned long *p, unsigned long mask)                          \
	{                                                                      \
		unsigned long old = ksync__ld_ulong(p);                        \
		while (!ksync__try_cmpxchg_ulong(p, &old, (EXPR)))             \
			;                                                      \
		return old;                                                    \
	}
#ifdef KSYNC_ATOMIC_BUILTINS
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_or(unsigned long *p, unsigned long m)
{ return __atomic_fetch_or(p, m, __ATOMIC_SEQ_CST); }
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_andnot(unsigned long *p, unsigned long m)
{ return __atomic_fetch_and(p, ~m, __ATOMIC_SEQ_CST); }
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_xor(unsigned long *p, unsigned long m)
{ return __atomic_fetch_xor(p, m, __ATOMIC_SEQ_CST); }
#else
KSYNC__ULONG_FETCH_OP(or, old | mask)
KSYNC__ULONG_FETCH_OP(andnot, old & ~mask)
KSYNC__ULONG_FETCH_OP(xor, old ^ mask)
#endif
#undef KSYNC__ULONG_FETCH_OP

/*
 * ksync_ulong_test_and_{set,clear,change}_bit() - set, clear or flip bit @nr
 * (< BITS_PER_LONG) of *@p and return its old value. Fully ordered. On CK with
 * 64-bit longs they are the locked bts/btr/btc instructions.
 */
#if !defined(KSYNC_ATOMIC_BUILTINS) && KSYNC__CK_LONG_BITS == 64 && defined(CK_F_PR_BTS_64) && \
	defined(CK_F_PR_BTR_64) && defined(CK_F_PR_BTC_64)
#define KSYNC__ULONG_TEST_AND_OP(NAME, CKOP, FETCH)                            \
	static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_##NAME##_bit(     \
		unsigned long *p, unsigned nr)                                 \
	{                                                                      \
		KSYNC__RMW_FENCE();                                            \
		bool r = ck_pr_##CKOP##_64((uint64_t *)p, nr);                 \
		KSYNC__RMW_FENCE();                                            \
		return r;                                                      \
	}
#else
#define KSYNC__ULONG_TEST_AND_OP(NAME, CKOP, FETCH)                            \
	static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_##NAME##_bit(     \
		unsigned long *p, unsigned nr)                                 \
	{                                                                      \
		return (FETCH(p, 1UL << nr) >> nr) & 1;                        \
	}
#endif
KSYNC__ULONG_TEST_AND_OP(set, bts, ksync_ulong_fetch_or)
KSYNC__ULONG_TEST_AND_OP(clear, btr, ksync_ulong_fetch_andnot)
KSYNC__ULONG_TEST_AND_OP(change, btc, ksync_ulong_fetch_xor)
#undef KSYNC__ULONG_TEST_AND_OP

/** ksync_ulong_load()/ksync_ulong_store() - untorn, unordered word access. */
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_load(const unsigned long *p)
{ return ksync__ld_ulong(p); }
static KSYNC_ALWAYS_INLINE void ksync_ulong_store(unsigned long *p, unsigned long v)
{ ksync__st_ulong(p, v); }
/** ksync_ulong_try_cmpxchg() - as ksync_atomic_try_cmpxchg(), on a plain word. */
static KSYNC_ALWAYS_INLINE bool ksync_ulong_try_cmpxchg(unsigned long *p, unsigned long *old,
							 unsigned long n)
{ return ksync__try_cmpxchg_ulong(p, old, n); }
/** ksync_ulong_fetch_add() - add @v to *@p, return the old value; fully ordered. */
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_add(unsigned long *p, unsigned long v)
{ return ksync__fetch_add_ulong(p, v); }
/** ksync_ulong_add() - add @v to *@p; unordered. */
static KSYNC_ALWAYS_INLINE void ksync_ulong_add(unsigned long *p, unsigned long v)
{ ksync__add_ulong(p, v); }

/** ksync_u64_*() - the same family on uint64_t (generation numbers, cookies). */
static KSYNC_ALWAYS_INLINE uint64_t ksync_u64_load(const uint64_t *p) { return ksync__ld_u64(p); }
static KSYNC_ALWAYS_INLINE void ksync_u64_store(uint64_t *p, uint64_t v) { ksync__st_u64(p, v); }
static KSYNC_ALWAYS_INLINE uint64_t ksync_u64_fetch_add(uint64_t *p, uint64_t v)
{ return ksync__fetch_add_u64(p, v); }
static KSYNC_ALWAYS_INLINE bool ksync_u64_try_cmpxchg(uint64_t *p, uint64_t *old, uint64_t n)
{ return ksync__try_cmpxchg_u64(p, old, n); }

/** ksync_ptr_load() - untorn, unordered load of a pointer. */
static KSYNC_ALWAYS_INLINE void *ksync_ptr_load(void *const *p)
{
#ifdef KSYNC_ATOMIC_BUILTINS
	return __atomic_load_n(p, __ATOMIC_RELAXED);
#else
	return ck_pr_load_ptr(p);
#endif
}
/** ksync_ptr_xchg() - store @v to *@p and return the old pointer; fully ordered. */
static KSYNC_ALWAYS_INLINE void *ksync_ptr_xchg(void **p, void *v)
{
#ifdef KSYNC_ATOMIC_BUILTINS
	return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
#else
	KSYNC__RMW_FENCE();
	void *r = ck_pr_fas_ptr(p, v);
	KSYNC__RMW_FENCE();
	return r;
#endif
}
/**
 * ksync_ptr_try_cmpxchg() - if *@p == *@old store @n (fully ordered, true);
 * else write the pointer seen to *@old and return false.
 */
static KSYNC_ALWAYS_INLINE bool ksync_ptr_try_cmpxchg(void **p, void **old, void *n)
{
#ifdef KSYNC_ATOMIC_BUILTINS
	return __atomic_compare_exchange_n(p, old, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
#else
	KSYNC__RMW_FENCE();
	bool ok = ck_pr_cas_ptr_value(p, *old, n, old);
	if (ok)
		KSYNC__RMW_FENCE();
	return ok;
#endif
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_ATOMIC_H */
