/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/hash.h - the kernel's multiplicative hash of integers and pointers
 *
 * ksync_hash_32(), ksync_hash_64() and ksync_hash_long() multiply the value
 * by a constant close to 2^w/phi (phi the golden ratio, w the word width;
 * Knuth's multiplicative hashing) and keep the top @bits bits of the product:
 * multiplication carries changes towards the high bits only, so those are
 * the well-mixed ones. The results are the kernel's, bit for bit, for the
 * same value and @bits (the generic versions; no architecture overrides), so
 * a table hashed by ported code lays out as in the kernel.
 *
 * @bits is the table's log2 size: 1..32 in the kernel. ksync also defines
 * @bits == 0 (the result is 0: a one-bucket table), which the kernel leaves
 * undefined (a shift by the full width). Larger values are not allowed.
 *
 * None of these is a cryptographic or a keyed hash: keys chosen by an
 * adversary can all land in one bucket.
 */
#ifndef KSYNC_HASH_H
#define KSYNC_HASH_H

#include <ksync/compiler.h>
#include <ksync/math.h>

#include <stdint.h>

KSYNC_EXTERN_C_BEGIN

/*
 * The multipliers: 2^32 and 2^64 times 1/phi^2 = (3 - sqrt(5)) / 2, rounded
 * to an odd number. Unsigned literals, so that a multiplication by them wraps
 * with no undefined behaviour even when the other operand is a signed int.
 */
/** KSYNC_GOLDEN_RATIO_32 - the 32-bit multiplier of ksync_hash_32(). */
#define KSYNC_GOLDEN_RATIO_32 0x61C88647u
/** KSYNC_GOLDEN_RATIO_64 - the 64-bit multiplier of ksync_hash_64(). */
#define KSYNC_GOLDEN_RATIO_64 0x61C8864680B583EBull

#if KSYNC_BITS_PER_LONG == 64
/** KSYNC_GOLDEN_RATIO_PRIME - the multiplier of ksync_hash_long() (not a prime any more). */
#define KSYNC_GOLDEN_RATIO_PRIME KSYNC_GOLDEN_RATIO_64
#elif KSYNC_BITS_PER_LONG == 32
#define KSYNC_GOLDEN_RATIO_PRIME KSYNC_GOLDEN_RATIO_32
#else
#error "ksync/hash.h: long is neither 32 nor 64 bits wide"
#endif

/**
 * ksync___hash_32() - @val multiplied by KSYNC_GOLDEN_RATIO_32 (mod 2^32), all 32 bits.
 * @val: the value
 *
 * The full product, before ksync_hash_32() keeps its top bits; its low bits
 * are poorly mixed.
 */
static inline uint32_t ksync___hash_32(uint32_t val)
{
	return val * KSYNC_GOLDEN_RATIO_32;
}

/**
 * ksync_hash_32() - hash @val into @bits bits.
 * @val: the value
 * @bits: the width of the result, 0..32
 *
 * Return: the top @bits bits of @val * KSYNC_GOLDEN_RATIO_32 (mod 2^32), a
 * value below 2^@bits (0 when @bits is 0).
 */
static inline uint32_t ksync_hash_32(uint32_t val, unsigned int bits)
{
	/* Shifted as 64 bits, so that @bits == 0 shifts by 32 and gives 0. */
	return (uint32_t)((uint64_t)ksync___hash_32(val) >> (32 - bits));
}

/**
 * ksync_hash_64() - hash the 64-bit @val into @bits bits.
 * @val: the value
 * @bits: the width of the result, 0..32 (the result is 32 bits wide, as in
 *	the kernel)
 *
 * Return: on 64-bit machines the top @bits bits of @val *
 * KSYNC_GOLDEN_RATIO_64 (mod 2^64); where long is 32 bits, the kernel's
 * 32-bit fold: ksync_hash_32(low ^ ksync___hash_32(high), @bits).
 */
static KSYNC_ALWAYS_INLINE uint32_t ksync_hash_64(uint64_t val, unsigned int bits)
{
#if KSYNC_BITS_PER_LONG == 64
	/* Two shifts, so that @bits == 0 shifts by 64 in all and gives 0. */
	return (uint32_t)(((val * KSYNC_GOLDEN_RATIO_64) >> 1) >> (63 - bits));
#else
	return ksync_hash_32((uint32_t)val ^ ksync___hash_32((uint32_t)(val >> 32)), bits);
#endif
}

/**
 * ksync_hash_long() - hash the unsigned long @val into @bits bits.
 * @val: the value
 * @bits: the width of the result, 0..32
 *
 * ksync_hash_64() where long is 64 bits wide, ksync_hash_32() where it is 32.
 */
#if KSYNC_BITS_PER_LONG == 64
#define ksync_hash_long(val, bits) ksync_hash_64(val, bits)
#else
#define ksync_hash_long(val, bits) ksync_hash_32(val, bits)
#endif

/**
 * ksync_hash_ptr() - hash the address @ptr into @bits bits.
 * @ptr: the pointer (only its value is used)
 * @bits: the width of the result, 0..32
 *
 * Return: ksync_hash_long() of the address.
 */
static inline uint32_t ksync_hash_ptr(const void *ptr, unsigned int bits)
{
	return ksync_hash_long((unsigned long)(uintptr_t)ptr, bits);
}

/**
 * ksync_hash32_ptr() - fold the address @ptr into 32 bits (no mixing to speak of).
 * @ptr: the pointer
 *
 * Return: the address's low half XOR its high half (on 64-bit machines), or
 * the address itself. A seed or a cheap key, not a hash.
 */
static inline uint32_t ksync_hash32_ptr(const void *ptr)
{
	unsigned long val = (unsigned long)(uintptr_t)ptr;

#if KSYNC_BITS_PER_LONG == 64
	val ^= val >> 32;
#endif
	return (uint32_t)val;
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_HASH_H */
