/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dead_caches.h - what the dead_caches demo asks of an object cache.
 *
 * main.c runs the kernel's scenarios against four caches of 64-byte objects
 * that differ only in how they account to memory groups; designs.c maps
 * this small interface onto <ksync/objcache.h>, so that the scenarios read
 * the same for every design and no scenario can favour one:
 *
 *   DC_A             per-group child caches, deactivated on offline, each
 *                    destroying itself with its last object (Linux 3.x-5.2);
 *   DC_A_REPARENT    the same, dead caches handed to the parent group on
 *                    offline (Linux 5.3-5.8);
 *   DC_B             one cache, a charge handle per object, bytes charged
 *                    through a per-thread stock of 1..5 handles (5.9+);
 *   DC_UNACCOUNTED   one cache, no group ever charged (the baseline).
 *
 * Every figure main.c prints comes from these calls and from the memory
 * groups' own lifecycle (a memgroup client counts offlines and releases):
 * nothing here computes a result, it only reads the library's counters.
 */
#ifndef DEAD_CACHES_H
#define DEAD_CACHES_H

#include <ksync/memgroup.h>

#include <stddef.h>

#define DC_OBJ_SIZE 64

enum dc_design { DC_A, DC_A_REPARENT, DC_B, DC_UNACCOUNTED, DC_NR_DESIGNS };

struct dc_cache;

/* The usage of a cache and of every child cache it has (design A). */
struct dc_usage {
	unsigned long objects;    /* live objects */
	unsigned long slabs;      /* slabs held */
	unsigned long slab_bytes; /* bytes of those slabs */
	unsigned long caches;     /* child caches not yet destroyed (A), dead ones included */
	unsigned long dead;       /* of those, dead (their group went offline) */
};

/* A cache of @design for groups of @set. */
struct dc_cache *dc_create(struct ksync_memgroup_set *set, enum dc_design design);

/* Handles in every thread's charge stock (design B), 1..5: process-wide. */
void dc_set_stock_slots(int slots);

/* One object charged to @g (NULL: to nobody); NULL when out of memory. */
void *dc_alloc(struct dc_cache *c, struct ksync_memgroup *g);

void dc_free(struct dc_cache *c, void *obj);

/*
 * Let the cache's deferred work finish: the calling thread's magazines and
 * stock flushed (so the statistics are exact), and the grace periods after
 * which dead child caches drop their memory and group references passed.
 */
void dc_settle(struct dc_cache *c);

void dc_usage(struct dc_cache *c, struct dc_usage *u);

/*
 * Destroy the cache (every object freed; for design A, every group of the
 * set freed too, as the last A cache of a set unregisters its memgroup
 * client); waits for the children. 0 or -errno.
 */
int dc_destroy(struct dc_cache *c);

const char *dc_design_name(enum dc_design d);

#endif
