/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * workload.c - the scan workload of pressure_cache (--workload scan).
 *
 * Theory of operation. The default request stream (child.c) is a Zipf law
 * over every key. The scan workload is the case that workingset detection
 * (shadow entries, <ksync/workingset.h>) protects against: a hot working set
 * that fits in the cache, read again and again, alternating with a large
 * one-pass scan of keys that are never read twice.
 *
 *  - a hot phase: @hot_len requests, each a key drawn uniformly from the
 *    @hot_keys hot keys (a uniform law: every hot key is as hot as the
 *    next, so "the hot set" has a size the cache either holds or not);
 *  - a scan phase: @scan_len keys, each new (a counter that only grows),
 *    read once, in order.
 *
 * A cache that inserts each scanned key as it would a hot one sees the scan
 * push the hot set out; an LRU that remembers what it evicted (a shadow
 * entry: when it left, in the group's eviction clock) recognises a hot key
 * coming back within the working set's size, and activates it at once.
 * The stream depends on the seed only: every run of a study (each LRU
 * flavour, with and without shadows) sees the same one.
 *
 * Keys: hot key i is i * 2654435761 (mod 2^32, a bijection: an odd
 * multiplier), the n-th scanned key is (hot_keys + n) * 2654435761, so the
 * two sets never meet (until 2^32 - hot_keys scanned keys).
 */
#include "pc.h"

static uint64_t ws_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

void pc_scan_init(struct pc_scan *s, uint32_t hot_keys, uint64_t hot_len, uint64_t scan_len, uint64_t seed)
{
	s->rng = seed ^ 0x5ca9ULL;
	s->hot_keys = hot_keys ? hot_keys : 1;
	s->hot_len = hot_len ? hot_len : 1;
	s->scan_len = scan_len;
	s->pos = 0;
	s->scanned = 0;
}

uint32_t pc_scan_next(struct pc_scan *s, bool *hot)
{
	uint64_t period = s->hot_len + s->scan_len;
	uint64_t at = s->pos++ % period;

	if (at < s->hot_len) {
		uint32_t i = (uint32_t)(ws_rng(&s->rng) % s->hot_keys);

		*hot = true;
		return i * 2654435761u;
	}
	*hot = false;
	return (uint32_t)(s->hot_keys + s->scanned++) * 2654435761u;
}
