/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rng.h - the tests' pseudo-random generators: deterministic and seedable,
 * so a failing sequence replays. Each takes its state by pointer; a test
 * keeps one state per thread (or one per file for single-threaded models):
 *
 *   static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
 *   static uint64_t rnd(void) { return kt_xorshift64s(&rng_state); }
 */
#ifndef KTEST_RNG_H
#define KTEST_RNG_H

#include <stdint.h>

/* xorshift64* (Vigna): 64-bit state (nonzero), good low bits. */
static inline uint64_t kt_xorshift64s(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/* xorshift64 (Marsaglia, 13/7/17): 64-bit state (nonzero); returns the new state. */
static inline uint64_t kt_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* xorshift32 (Marsaglia, 13/17/5): 32-bit state (nonzero); returns the new state. */
static inline unsigned kt_xorshift32(unsigned *state)
{
	unsigned x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* The C standard's example rand() (an LCG): bits 16..30 of the new state. */
static inline unsigned int kt_lcg(unsigned int *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 16;
}

#endif /* KTEST_RNG_H */
