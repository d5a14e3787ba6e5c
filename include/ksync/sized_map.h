/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/sized_map.h - size-checked bitmaps that grow by publishing a copy
 *
 * The shrinker_info pattern made reusable. A sized map is a bitmap that
 *
 *  - carries its own bit count, ksync_sized_map_nr_max(): every access
 *    checks the bit number against it, warns once per call site (with the
 *    CALLER's file and line) when it is out of range, and then writes
 *    nothing; iteration is bounded by it, never by a global;
 *  - carries, per bit, a companion element of data_size bytes (zeroed on
 *    allocation), e.g. the shrinker's per-memcg nr_deferred counter;
 *  - is published through an RCU pointer ("slot") and read under SRCU, and
 *    grows by publishing a larger map in that slot (ksync_sized_map_grow()).
 *
 * Theory of operation of growth (the design of the kernel's 6.7
 * shrinker_info_unit, re-derived here). The naive way to grow, copy the bits
 * into a new map and free the old one after a grace period, loses updates:
 * a thread that fetched the OLD map under srcu_read_lock() before the new one
 * was published may set a bit (or add to a companion counter) in the old map
 * AFTER the copy was taken, and that update dies with the old map. Instead,
 * a sized map is a small header plus an array of pointers to fixed-size
 * UNITS, each holding one word of bits (KSYNC_BITS_PER_LONG bits) and the
 * companion elements of those bits:
 *
 *     map gen 1:  [hdr nr_max=70 | u0 u1]          u0: bits 0..63 + data
 *                                    \  \          u1: bits 64..127 + data
 *     map gen 2:  [hdr nr_max=200| u0 u1 u2 u3]    u2, u3: new, zeroed
 *
 * Growth allocates a new header with a longer pointer array that REUSES the
 * old units and appends new zeroed ones, publishes it, and hands only the
 * old header (with its pointer array) to call_srcu(). Units are never copied,
 * moved or freed by growth, so every bit or companion update made through
 * the old map lands in a unit that the new map references as well: nothing
 * can be lost, whenever it happens. A unit's pointer is written before the
 * header that holds it is published (release, P in ksync_sized_map_grow())
 * and never changes afterwards, so readers that reached the header through
 * ksync_srcu_dereference() (acquire/dependency, pairs with P) see every unit
 * pointer initialised, and the unit's zeroed contents with it.
 *
 * Ownership: the units belong to the NEWEST generation. Every unit of an older
 * generation is also referenced by every newer one (growth only appends), so
 * freeing the newest map with its units frees everything ever allocated,
 * while each superseded header is freed, alone, by the call_srcu() callback
 * that ksync_sized_map_grow() queued for it. Hence:
 *
 *  - ksync_sized_map_free() / ksync_sized_map_free_all() (the same operation,
 *    two names): free a map header AND all its units, immediately. Only for
 *    the newest generation, once no reader of ANY generation of that slot
 *    can remain (unpublish, then ksync_synchronize_srcu()), since readers of
 *    older headers use the same units. Never call either on a map that was
 *    passed to ksync_sized_map_grow() successfully: its header is already
 *    queued for freeing, and its units belong to the new map.
 *  - ksync_sized_map_free_srcu(): the same, deferred by call_srcu().
 *
 * A sized map shrinks never; bits of a unit past nr_max stay unused until a
 * growth raises nr_max over them.
 */
#ifndef KSYNC_SIZED_MAP_H
#define KSYNC_SIZED_MAP_H

#include <ksync/atomic.h>
#include <ksync/bitops.h>
#include <ksync/bug.h>
#include <ksync/compiler.h>
#include <ksync/impl/seams.h>
#include <ksync/impl/switches.h> /* KSYNC__ALLOC */
#include <ksync/math.h>
#include <ksync/rcupdate.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

KSYNC_EXTERN_C_BEGIN

/* One unit: a word of bits, then KSYNC_BITS_PER_LONG companion elements. */
struct ksync__sized_map_unit {
	unsigned long bits;
};

/* Offset of the companion elements in a unit: aligned like malloc(). */
#define KSYNC__SMAP_DATA_OFF                                                   \
	((sizeof(struct ksync__sized_map_unit) + __alignof__(max_align_t) - 1) & \
	 ~(__alignof__(max_align_t) - 1))

/**
 * struct ksync_sized_map - a size-checked bitmap with per-bit companion data.
 *
 * Published in an RCU slot (``struct ksync_sized_map *KSYNC_RCU slot``) and
 * read under SRCU. Every field is private: use the ksync_sized_map_*()
 * accessors. All fields are written before the map is published and never
 * change afterwards, only the units they point to do.
 */
struct ksync_sized_map {
	/* private: */
	unsigned int nr_max;   /* bits usable through this generation */
	unsigned int nr_units; /* KSYNC_BITS_TO_LONGS(nr_max) */
	size_t data_size;      /* bytes of companion data per bit */
	struct ksync__sized_map_unit **unit; /* points into this allocation */
	struct ksync_rcu_head rcu;           /* queued by ksync_sized_map_grow() */
};

/* Allocate one zeroed unit. */
static inline struct ksync__sized_map_unit *ksync__sized_map_unit_alloc(size_t data_size)
{
	return (struct ksync__sized_map_unit *)KSYNC__ALLOC(calloc(
		1, KSYNC__SMAP_DATA_OFF + data_size * KSYNC__BPL));
}

/* Allocate a header with room for the unit pointers of @nr_bits bits, no units yet. */
static inline struct ksync_sized_map *ksync__sized_map_alloc_hdr(unsigned int nr_bits,
								 size_t data_size)
{
	unsigned int nr_units = (unsigned int)KSYNC_BITS_TO_LONGS(nr_bits);
	struct ksync_sized_map *map;

	if (data_size > (SIZE_MAX - KSYNC__SMAP_DATA_OFF) / KSYNC__BPL)
		return NULL;
	map = (struct ksync_sized_map *)KSYNC__ALLOC(calloc(
		1, sizeof(*map) + (size_t)nr_units * sizeof(map->unit[0])));
	if (!map)
		return NULL;
	map->nr_max = nr_bits;
	map->nr_units = nr_units;
	map->data_size = data_size;
	map->unit = (struct ksync__sized_map_unit **)(void *)(map + 1);
	return map;
}

/* Free the units @first..nr_units-1 of @map. */
static inline void ksync__sized_map_free_units(struct ksync_sized_map *map, unsigned int first)
{
	for (unsigned int i = first; i < map->nr_units; i++)
		free(map->unit[i]);
}

/**
 * ksync_sized_map_alloc() - allocate a sized map of @nr_bits bits, all clear.
 * @nr_bits: the map's own bit count, ksync_sized_map_nr_max() (may be 0)
 * @data_size: bytes of companion data per bit (0 for none), zeroed; every
 *	element is aligned like malloc() memory when @data_size is a multiple of
 *	the alignment of its type (as sizeof() always is)
 *
 * Return: the map, not yet published, or NULL on ENOMEM.
 */
static inline struct ksync_sized_map *ksync_sized_map_alloc(unsigned int nr_bits,
							    size_t data_size)
{
	struct ksync_sized_map *map = ksync__sized_map_alloc_hdr(nr_bits, data_size);

	if (!map)
		return NULL;
	for (unsigned int i = 0; i < map->nr_units; i++) {
		map->unit[i] = ksync__sized_map_unit_alloc(data_size);
		if (!map->unit[i]) {
			map->nr_units = i;
			ksync__sized_map_free_units(map, 0);
			free(map);
			return NULL;
		}
	}
	return map;
}

/**
 * ksync_sized_map_free_all() - free @map's header and ALL its units, now.
 * @map: the newest generation of a sized map, or NULL (ignored)
 *
 * The units are shared by every generation of the slot and owned by the
 * newest (see the DOC above), so this frees everything the slot ever
 * allocated except the superseded headers, which their call_srcu()
 * callbacks free. Contract: no reader of any generation may remain (unpublish
 * the map, then ksync_synchronize_srcu()), and @map must not have been
 * superseded by ksync_sized_map_grow().
 */
static inline void ksync_sized_map_free_all(struct ksync_sized_map *map)
{
	if (!map)
		return;
	ksync__sized_map_free_units(map, 0);
	free(map);
}

/**
 * ksync_sized_map_free() - free @map and its units, immediately.
 * @map: the newest generation of a sized map, or NULL (ignored)
 *
 * The same operation as ksync_sized_map_free_all(), under the name the
 * shrinker code uses; the same contract: no reader may remain.
 */
static inline void ksync_sized_map_free(struct ksync_sized_map *map)
{
	ksync_sized_map_free_all(map);
}

/* call_srcu() callbacks: a superseded header alone, or a whole map. */
static inline void ksync__sized_map_free_hdr_cb(struct ksync_rcu_head *head)
{
	free(ksync_container_of(head, struct ksync_sized_map, rcu));
}

#if KSYNC_PLANT(SIZED_MAP_GROW_BY_COPY)
/* The planted bug's superseded map owns its (copied) units: free them with it. */
static inline void ksync__sized_map_plant_free_cb(struct ksync_rcu_head *head)
{
	struct ksync_sized_map *map = ksync_container_of(head, struct ksync_sized_map, rcu);
	ksync__sized_map_free_units(map, 0);
	free(map);
}
#endif

static inline void ksync__sized_map_free_all_cb(struct ksync_rcu_head *head)
{
	ksync_sized_map_free_all(ksync_container_of(head, struct ksync_sized_map, rcu));
}

/**
 * ksync_sized_map_free_srcu() - free @map and its units after an SRCU grace period.
 * @map: the newest generation, already unpublished from its slot
 * @ssp: the SRCU domain its readers use
 *
 * For teardown while readers may still hold @map (or an older generation).
 * Do not grow @map afterwards; wait with ksync_srcu_barrier() before
 * cleaning up @ssp.
 */
static inline void ksync_sized_map_free_srcu(struct ksync_sized_map *map,
					     struct ksync_srcu_struct *ssp)
{
	if (map)
		ksync_call_srcu(ssp, &map->rcu, ksync__sized_map_free_all_cb);
}

/**
 * ksync_sized_map_nr_max() - the map's own bit count: valid bit numbers are below it.
 * @map: a sized map
 */
static KSYNC_ALWAYS_INLINE unsigned int ksync_sized_map_nr_max(const struct ksync_sized_map *map)
{
	return map->nr_max;
}

/* The word that holds bit @nr, which must be below nr_max. */
static KSYNC_ALWAYS_INLINE unsigned long *ksync__sized_map_word(const struct ksync_sized_map *map,
								unsigned int nr)
{
	return &map->unit[nr / KSYNC__BPL]->bits;
}

/* The out-of-range report: names the caller's file and line, the bit and the bound. */
static inline KSYNC_COLD KSYNC_UNUSED void
ksync__sized_map_warn_range(const char *file, int line, const char *op, unsigned long nr,
			    unsigned int nr_max)
{
	char what[160];

	snprintf(what, sizeof(what), "%s: bit %lu out of range (map_nr_max %u); nothing written",
		 op, nr, nr_max);
	ksync_warn_report(file, line, what);
}

/*
 * Range check at the caller's site: evaluates to true (and warns the first
 * time at this call site) when @nr is at or past the map's nr_max.
 */
#define KSYNC__SMAP_OUT_OF_RANGE(m, nr, op)                                    \
	__extension__({                                                        \
		static int ksync__smr_once;                                    \
		unsigned int ksync__smr_max = ksync_sized_map_nr_max(m);       \
		bool ksync__smr_bad = (nr) >= ksync__smr_max;                  \
		if (ksync_unlikely(ksync__smr_bad) &&                          \
		    ksync_warn_claim_once(&ksync__smr_once))                   \
			ksync__sized_map_warn_range(__FILE__, __LINE__, op,    \
						    (unsigned long)(nr),       \
						    ksync__smr_max);           \
		ksync__smr_bad;                                                \
	})

/**
 * ksync_sized_map_set_bit() - set bit @nr of @map if it is in range.
 * @map: a sized map (any generation the caller reached under SRCU)
 * @nr: the bit number (evaluated once)
 *
 * When @nr >= ksync_sized_map_nr_max(@map): warns once per call site, with
 * the caller's file and line, writes nothing and returns -EINVAL. Otherwise
 * sets the bit atomically, unordered (like ksync_set_bit()), and returns 0.
 * A bit set through a superseded generation is seen by every newer one.
 */
#define ksync_sized_map_set_bit(map, nr)                                       \
	__extension__({                                                        \
		const struct ksync_sized_map *ksync__sm_m = (map);             \
		unsigned long ksync__sm_nr = (nr);                             \
		int ksync__sm_ret = -EINVAL;                                   \
		if (!KSYNC__SMAP_OUT_OF_RANGE(ksync__sm_m, ksync__sm_nr,       \
					      "ksync_sized_map_set_bit")) {    \
			ksync_set_bit(ksync__sm_nr % KSYNC__BPL,               \
				      ksync__sized_map_word(ksync__sm_m,       \
							    (unsigned int)ksync__sm_nr)); \
			ksync__sm_ret = 0;                                     \
		}                                                              \
		ksync__sm_ret;                                                 \
	})

/**
 * ksync_sized_map_test_bit() - read bit @nr of @map.
 * @map: a sized map
 * @nr: the bit number (evaluated once)
 *
 * Unordered load. Out of range: warns once per call site and returns false.
 */
#define ksync_sized_map_test_bit(map, nr)                                      \
	__extension__({                                                        \
		const struct ksync_sized_map *ksync__sm_m = (map);             \
		unsigned long ksync__sm_nr = (nr);                             \
		!KSYNC__SMAP_OUT_OF_RANGE(ksync__sm_m, ksync__sm_nr,           \
					  "ksync_sized_map_test_bit") &&       \
			ksync_test_bit(ksync__sm_nr % KSYNC__BPL,              \
				       ksync__sized_map_word(ksync__sm_m,      \
							     (unsigned int)ksync__sm_nr)); \
	})

/**
 * ksync_sized_map_clear_bit() - clear bit @nr of @map.
 * @map: a sized map
 * @nr: the bit number (evaluated once)
 *
 * Atomic, unordered. Out of range: warns once per call site, writes nothing.
 */
#define ksync_sized_map_clear_bit(map, nr)                                     \
	do {                                                                   \
		const struct ksync_sized_map *ksync__sm_m = (map);             \
		unsigned long ksync__sm_nr = (nr);                             \
		if (!KSYNC__SMAP_OUT_OF_RANGE(ksync__sm_m, ksync__sm_nr,       \
					      "ksync_sized_map_clear_bit"))    \
			ksync_clear_bit(ksync__sm_nr % KSYNC__BPL,             \
					ksync__sized_map_word(ksync__sm_m,     \
							      (unsigned int)ksync__sm_nr)); \
	} while (0)

/**
 * ksync_sized_map_test_and_clear_bit() - clear bit @nr of @map; return its old value.
 * @map: a sized map
 * @nr: the bit number (evaluated once)
 *
 * Fully ordered (as ksync_test_and_clear_bit()). Out of range: warns once per
 * call site, writes nothing, returns false.
 */
#define ksync_sized_map_test_and_clear_bit(map, nr)                            \
	__extension__({                                                        \
		const struct ksync_sized_map *ksync__sm_m = (map);             \
		unsigned long ksync__sm_nr = (nr);                             \
		!KSYNC__SMAP_OUT_OF_RANGE(ksync__sm_m, ksync__sm_nr,           \
					  "ksync_sized_map_test_and_clear_bit") && \
			ksync_test_and_clear_bit(                              \
				ksync__sm_nr % KSYNC__BPL,                     \
				ksync__sized_map_word(ksync__sm_m,             \
						      (unsigned int)ksync__sm_nr)); \
	})

/* The companion element of bit @nr, which must be below nr_max. */
static KSYNC_ALWAYS_INLINE void *ksync__sized_map_data(const struct ksync_sized_map *map,
						       unsigned int nr)
{
	return (char *)map->unit[nr / KSYNC__BPL] + KSYNC__SMAP_DATA_OFF +
	       (size_t)(nr % KSYNC__BPL) * map->data_size;
}

/**
 * ksync_sized_map_data() - the companion element of bit @nr.
 * @map: a sized map
 * @nr: the bit number (evaluated once)
 *
 * The element is shared by every generation of the map (an update through a
 * superseded generation is seen by the newer ones) and lives as long as the
 * units do; access it with atomics when several threads may. Out of range:
 * warns once per call site and returns NULL.
 */
#define ksync_sized_map_data(map, nr)                                          \
	__extension__({                                                        \
		const struct ksync_sized_map *ksync__sm_m = (map);             \
		unsigned long ksync__sm_nr = (nr);                             \
		KSYNC__SMAP_OUT_OF_RANGE(ksync__sm_m, ksync__sm_nr,            \
					 "ksync_sized_map_data")               \
			? (void *)NULL                                         \
			: ksync__sized_map_data(ksync__sm_m, (unsigned int)ksync__sm_nr); \
	})

/**
 * ksync_sized_map_find_next_bit() - the first set bit of @map at or after @start.
 * @map: a sized map
 * @start: where to start
 *
 * Bounded by @map's own nr_max: a bit at or past it, which a newer generation
 * may have set in a shared unit, is never reported. Each word is loaded once,
 * unordered.
 *
 * Return: the bit number, or ksync_sized_map_nr_max(@map) when there is none.
 */
static inline unsigned int ksync_sized_map_find_next_bit(const struct ksync_sized_map *map,
							 unsigned int start)
{
	unsigned int max = map->nr_max;

	if (start >= max)
		return max;

	unsigned int u = (unsigned int)(start / KSYNC__BPL);
	unsigned long word = ksync_ulong_load(&map->unit[u]->bits) &
			     (~0UL << (start % KSYNC__BPL));

	for (;;) {
		if (word) {
			unsigned long bit = u * KSYNC__BPL + ksync___ffs(word);
			return bit < max ? (unsigned int)bit : max;
		}
		if (++u >= map->nr_units)
			return max;
		word = ksync_ulong_load(&map->unit[u]->bits);
	}
}

/**
 * ksync_sized_map_find_next_bit_in() - the first set bit of @map in [@start, @end).
 * @map: a sized map
 * @start: first bit considered
 * @end: the bound: no bit at or past it is read; it may exceed the map's
 *	nr_max, the search then stops at nr_max
 *
 * The bounded form of ksync_sized_map_find_next_bit(): it loads only the
 * words (units) that hold bits of [@start, min(@end, nr_max)), so a caller
 * that works one unit at a time (``end = start + KSYNC_BITS_PER_LONG``,
 * start aligned) touches exactly one unit, never the separately allocated
 * units that follow. Each word is loaded once, unordered (like
 * ksync_test_bit()); pair it with a barrier of the caller's where the result
 * must be ordered against other accesses. Sized maps have no kernel
 * counterpart, so there is no kernel spelling; the kernel's bounded search
 * on a plain bitmap is find_next_bit(addr, size, offset).
 *
 * Return: the bit number, or @end when there is none (also when @start >=
 * @end or @start >= nr_max).
 */
static inline unsigned int ksync_sized_map_find_next_bit_in(const struct ksync_sized_map *map,
							    unsigned int start, unsigned int end)
{
	unsigned int lim = end < map->nr_max ? end : map->nr_max;

	if (start >= lim)
		return end;

	unsigned int u = (unsigned int)(start / KSYNC__BPL);
	unsigned int last = (unsigned int)((lim - 1) / KSYNC__BPL);
	unsigned long word = ksync_ulong_load(&map->unit[u]->bits) &
			     (~0UL << (start % KSYNC__BPL));

	for (;;) {
		if (word) {
			unsigned long bit = (unsigned long)u * KSYNC__BPL + ksync___ffs(word);
			return bit < lim ? (unsigned int)bit : end;
		}
		if (++u > last)
			return end;
		word = ksync_ulong_load(&map->unit[u]->bits);
	}
}

/**
 * ksync_sized_map_for_each_set_bit() - loop over the set bits of @map, ascending.
 * @bit: an unsigned int cursor
 * @map: a sized map (evaluated on every step: pass a local, not a slot)
 *
 * Bounded by @map's own nr_max.
 */
#define ksync_sized_map_for_each_set_bit(bit, map)                             \
	for ((bit) = ksync_sized_map_find_next_bit((map), 0);                  \
	     (bit) < ksync_sized_map_nr_max(map);                              \
	     (bit) = ksync_sized_map_find_next_bit((map), (bit) + 1))

/**
 * ksync_sized_map_for_each_set_bit_from() - as ksync_sized_map_for_each_set_bit(), from @bit.
 * @bit: cursor; its value on entry is the first bit considered
 * @map: a sized map
 *
 * Resumes a walk that dropped its read section (see <ksync/generation.h>).
 */
#define ksync_sized_map_for_each_set_bit_from(bit, map)                        \
	for ((bit) = ksync_sized_map_find_next_bit((map), (bit));              \
	     (bit) < ksync_sized_map_nr_max(map);                              \
	     (bit) = ksync_sized_map_find_next_bit((map), (bit) + 1))

/**
 * ksync_sized_map_grow() - publish a larger generation of the map in @slot.
 * @slot: the RCU pointer readers fetch the map from; must hold a map
 * @new_nr_bits: the wanted bit count; nothing happens if it is not larger
 * @ssp: the SRCU domain the readers of @slot use
 *
 * Writer side: the caller serialises all growers (and freers) of one slot,
 * e.g. with a mutex; readers and bit setters may run concurrently, under
 * ksync_srcu_read_lock(@ssp). The new map reuses the old units (bits and
 * companion data) and appends zeroed ones; it is published with
 * ksync_rcu_assign_pointer(), and the old header alone goes to
 * ksync_call_srcu(). No bit and no companion update can be lost, even one
 * made through the old map after the publication (see the DOC above).
 * Readers that fetched the old map keep using it, bounded by its old
 * nr_max, until they leave their read section.
 *
 * Return: 0 (also when no growth was needed), -ENOMEM (the old map stays
 * published, untouched), or -EINVAL with a warning when @slot is empty.
 */
static inline int ksync_sized_map_grow(struct ksync_sized_map *KSYNC_RCU *slot,
				       unsigned int new_nr_bits, struct ksync_srcu_struct *ssp)
{
	/* Growers are serialised by the caller, which keeps the old map alive. */
	struct ksync_sized_map *old = ksync_rcu_dereference_raw(*slot);
	struct ksync_sized_map *map;

	if (KSYNC_WARN_ON_ONCE(!old))
		return -EINVAL;
	if (new_nr_bits <= old->nr_max)
		return 0;

	map = ksync__sized_map_alloc_hdr(new_nr_bits, old->data_size);
	if (!map)
		return -ENOMEM;
	for (unsigned int i = 0; i < map->nr_units; i++) {
#if KSYNC_PLANT(SIZED_MAP_GROW_BY_COPY) /* the fuzzers' plant (docs/fuzzing.md) */
		if (i < old->nr_units && (map->unit[i] = ksync__sized_map_unit_alloc(old->data_size))) {
			memcpy((void *)map->unit[i], (void *)old->unit[i],
			       KSYNC__SMAP_DATA_OFF + old->data_size * KSYNC__BPL);
			continue;
		}
#else
		if (i < old->nr_units) {
			map->unit[i] = old->unit[i];
			continue;
		}
#endif
		map->unit[i] = ksync__sized_map_unit_alloc(old->data_size);
		if (!map->unit[i]) {
			map->nr_units = i;
			ksync__sized_map_free_units(map, old->nr_units);
			free(map);
			return -ENOMEM;
		}
	}

	/*
	 * P: publish. The release orders the header, the unit pointers and the
	 * zeroing of the new units before the pointer; pairs with the
	 * ksync_srcu_dereference() (acquire/dependency) by which readers fetch
	 * the map from @slot.
	 */
	ksync_rcu_assign_pointer(*slot, map);

	/*
	 * The old header may still be in use by readers that fetched it before
	 * P; its units are now the new map's and are not freed here.
	 */
#if KSYNC_PLANT(SIZED_MAP_GROW_BY_COPY)
	ksync_call_srcu(ssp, &old->rcu, ksync__sized_map_plant_free_cb);
	return 0;
#endif
	ksync_call_srcu(ssp, &old->rcu, ksync__sized_map_free_hdr_cb);
	return 0;
}

KSYNC_EXTERN_C_END

#endif /* KSYNC_SIZED_MAP_H */
