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
 *  - a hot phase: @hot_len requests for the @hot_keys hot keys, either a
 *    pass over the hot set in order (cyclic, the default: each hot key read
 *    once per pass, the page cache's "file read again and again") or keys
 *    drawn uniformly (every hot key as hot as the next);
 *  - a scan phase: @scan_len keys, each new (a counter that only grows),
 *    read once, in order.
 *
 * With the defaults (a hot set of 0.6 of the cache read once per phase, a
 * scan of 0.5 of the cache between passes), a hot key comes back after 1.1
 * cache's worth of other keys: an LRU, classic or multi-generation, has
 * evicted it every time (it was read once since it came in, so nothing
 * promoted it), and the hot hit rate without shadows is 0. A shadow entry
 * sees the refault distance (about 0.5 of the cache: the scan's evictions
 * since) within the workingset (the cache's LRU size), the item is added
 * active, and the next scan goes past it: the thrashing case of the
 * kernel's mm/workingset.c, a working set a little larger than what the
 * inactive side holds, with one-pass scans in between.
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

void pc_scan_init(struct pc_scan *s, uint32_t hot_keys, uint64_t hot_len, uint64_t scan_len, bool cyclic,
		  uint64_t seed)
{
	s->rng = seed ^ 0x5ca9ULL;
	s->hot_keys = hot_keys ? hot_keys : 1;
	s->hot_len = hot_len ? hot_len : 1;
	s->scan_len = scan_len;
	s->pos = 0;
	s->scanned = 0;
	s->hot_pos = 0;
	s->cyclic = cyclic;
}

uint32_t pc_scan_next(struct pc_scan *s, bool *hot)
{
	uint64_t period = s->hot_len + s->scan_len;
	uint64_t at = s->pos++ % period;

	if (at < s->hot_len) {
		uint32_t i = s->cyclic ? (uint32_t)(s->hot_pos++ % s->hot_keys)
				       : (uint32_t)(ws_rng(&s->rng) % s->hot_keys);

		*hot = true;
		return i * 2654435761u;
	}
	*hot = false;
	return (uint32_t)(s->hot_keys + s->scanned++) * 2654435761u;
}
