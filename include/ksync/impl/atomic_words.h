/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/atomic_words.h - atomics on plain words and pointers, the layer
 * other ksync modules build on: ksync_ulong_*() (unsigned long: the words of
 * bitmaps and bitops), ksync_u64_*() (generation numbers, cookies),
 * ksync_ptr_*(). Private: include <ksync/atomic.h>, whose comment gives the
 * ordering rules. <ksync/bitops.h> and <ksync/bitmap.h> include this header
 * alone, without the 246 operations of the atomic types.
 */
#ifndef KSYNC_IMPL_ATOMIC_WORDS_H
#define KSYNC_IMPL_ATOMIC_WORDS_H

#include <ksync/impl/atomic_backend.h>

#include <stdbool.h>
#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

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
#ifdef KSYNC_ATOMIC_BUILTINS
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_or(unsigned long *p, unsigned long m)
{ return __atomic_fetch_or(p, m, __ATOMIC_SEQ_CST); }
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_andnot(unsigned long *p, unsigned long m)
{ return __atomic_fetch_and(p, ~m, __ATOMIC_SEQ_CST); }
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_xor(unsigned long *p, unsigned long m)
{ return __atomic_fetch_xor(p, m, __ATOMIC_SEQ_CST); }
#else
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_or(unsigned long *p, unsigned long m)
{
	unsigned long old = ksync__ld_ulong(p);
	while (!ksync__try_cmpxchg_ulong(p, &old, old | m))
		;
	return old;
}
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_andnot(unsigned long *p, unsigned long m)
{
	unsigned long old = ksync__ld_ulong(p);
	while (!ksync__try_cmpxchg_ulong(p, &old, old & ~m))
		;
	return old;
}
static KSYNC_ALWAYS_INLINE unsigned long ksync_ulong_fetch_xor(unsigned long *p, unsigned long m)
{
	unsigned long old = ksync__ld_ulong(p);
	while (!ksync__try_cmpxchg_ulong(p, &old, old ^ m))
		;
	return old;
}
#endif

/*
 * ksync_ulong_test_and_{set,clear,change}_bit() - set, clear or flip bit @nr
 * (< BITS_PER_LONG) of *@p and return its old value. Fully ordered. On CK with
 * 64-bit longs they are the locked bts/btr/btc instructions.
 */
#if !defined(KSYNC_ATOMIC_BUILTINS) && KSYNC__CK_LONG_BITS == 64 && defined(CK_F_PR_BTS_64) && \
	defined(CK_F_PR_BTR_64) && defined(CK_F_PR_BTC_64)
static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_set_bit(unsigned long *p, unsigned nr)
{
	KSYNC__RMW_FENCE();
	bool r = ck_pr_bts_64((uint64_t *)p, nr);
	KSYNC__RMW_FENCE();
	return r;
}
static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_clear_bit(unsigned long *p, unsigned nr)
{
	KSYNC__RMW_FENCE();
	bool r = ck_pr_btr_64((uint64_t *)p, nr);
	KSYNC__RMW_FENCE();
	return r;
}
static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_change_bit(unsigned long *p, unsigned nr)
{
	KSYNC__RMW_FENCE();
	bool r = ck_pr_btc_64((uint64_t *)p, nr);
	KSYNC__RMW_FENCE();
	return r;
}
#else
static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_set_bit(unsigned long *p, unsigned nr)
{ return (ksync_ulong_fetch_or(p, 1UL << nr) >> nr) & 1; }
static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_clear_bit(unsigned long *p, unsigned nr)
{ return (ksync_ulong_fetch_andnot(p, 1UL << nr) >> nr) & 1; }
static KSYNC_ALWAYS_INLINE bool ksync_ulong_test_and_change_bit(unsigned long *p, unsigned nr)
{ return (ksync_ulong_fetch_xor(p, 1UL << nr) >> nr) & 1; }
#endif

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

#endif /* KSYNC_IMPL_ATOMIC_WORDS_H */
