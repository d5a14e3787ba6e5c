/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/shrinker.h> - the kernel's <linux/shrinker.h> spellings on ksync.
 * struct shrinker, shrinker_alloc() & co. (the registry of lib/shrinker: link ksync::shrinker). Not part of <ksync/kernel.h>.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/shrinker.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_SHRINKER_H
#define KSYNC_LINUX_SHRINKER_H

#include <ksync/shrinker.h>

#define shrinker ksync_shrinker
#define shrink_control ksync_shrink_control
#define SHRINK_STOP KSYNC_SHRINK_STOP
#define SHRINK_EMPTY KSYNC_SHRINK_EMPTY
#define DEFAULT_SEEKS KSYNC_DEFAULT_SEEKS
#define SHRINK_BATCH KSYNC_SHRINK_BATCH
#define DEF_PRIORITY KSYNC_DEF_PRIORITY
#define SHRINKER_NUMA_AWARE KSYNC_SHRINKER_NUMA_AWARE
#define SHRINKER_MEMCG_AWARE KSYNC_SHRINKER_MEMCG_AWARE
#define SHRINKER_NONSLAB KSYNC_SHRINKER_NONSLAB

/* 6.7 shape */
#define shrinker_alloc(flags, ...) ksync_shrinker_alloc(NULL, (flags), __VA_ARGS__)
#define shrinker_register(s) ((void)ksync_shrinker_register(s))
#define shrinker_free(s) ((void)ksync_shrinker_free(s))

/* classic shape */
#define prealloc_shrinker(s, ...) ksync_prealloc_shrinker(NULL, (s), __VA_ARGS__)
#define register_shrinker_prepared(s) ((void)ksync_register_shrinker_prepared(s))
#define free_prealloced_shrinker(s) ksync_free_prealloced_shrinker(s)
#define register_shrinker(s, ...) ksync_register_shrinker(NULL, (s), __VA_ARGS__)
#define unregister_shrinker(s) ((void)ksync_unregister_shrinker(s))

/* reclaim */
#define shrink_slab(gfp, nid, memcg, priority)                                 \
	((void)(gfp), ksync_shrink_slab(NULL, (nid), (memcg), (priority)))
#define synchronize_shrinkers() ((void)ksync_synchronize_shrinkers(NULL))
#define set_shrinker_bit(memcg, nid, id) ((void)ksync_set_shrinker_bit((memcg), (nid), (id)))

#endif /* KSYNC_LINUX_SHRINKER_H */
