/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/slab.h> - the kernel's <linux/slab.h> spellings on ksync.
 * struct kmem_cache, kmem_cache_create() & co. (lib/objcache: link
 * ksync::objcache). Not part of <ksync/kernel.h>. Includable alone; with
 * -I<prefix>/include/ksync on the compiler's path a port keeps its own
 * `#include <linux/slab.h>` line (see docs/porting.md).
 *
 * Differences a port sees: the gfp argument of kmem_cache_alloc() is
 * evaluated and ignored (allocation never sleeps for memory, and never
 * reclaims); an accounted allocation names its group with
 * kmem_cache_alloc_memcg() (the kernel takes the current task's) and
 * SLAB_ACCOUNT caches use the charge-handle design on the default shrinker
 * registry's groups (ksync_objcache_create_config() chooses otherwise).
 */
#ifndef KSYNC_LINUX_SLAB_H
#define KSYNC_LINUX_SLAB_H

#include <ksync/objcache.h>

#define kmem_cache ksync_objcache
#define SLAB_HWCACHE_ALIGN KSYNC_OBJCACHE_HWCACHE_ALIGN
#define SLAB_ACCOUNT KSYNC_OBJCACHE_ACCOUNT

#define kmem_cache_create(name, size, align, flags, ctor)                      \
	ksync_objcache_create((name), (size), (align), (flags), (ctor))
/* KMEM_CACHE(struct_name, flags): a cache of struct struct_name, named after it. */
#define KMEM_CACHE(__struct, __flags)                                          \
	ksync_objcache_create(#__struct, sizeof(struct __struct),              \
			      __alignof__(struct __struct), (__flags), NULL)
#define kmem_cache_alloc(cache, gfp) ((void)(gfp), ksync_objcache_alloc(cache))
#define kmem_cache_zalloc(cache, gfp) ksync__objcache_zalloc(ksync_objcache_alloc(cache), (cache))
#define kmem_cache_alloc_memcg(cache, gfp, memcg)                              \
	((void)(gfp), ksync_objcache_alloc_group((cache), (memcg)))
#define kmem_cache_free(cache, obj) ksync_objcache_free((cache), (obj))
#define kmem_cache_destroy(cache) ((void)ksync_objcache_destroy(cache))
#define kmem_cache_shrink(cache) ((int)ksync_objcache_shrink(cache))
#define kmem_cache_size(cache) ((unsigned int)ksync_objcache_size(cache))

/* kmem_cache_zalloc()'s zeroing, once the object is known. */
static inline KSYNC_UNUSED void *ksync__objcache_zalloc(void *obj, struct ksync_objcache *cache)
{
	if (obj)
		__builtin_memset(obj, 0, ksync_objcache_size(cache));
	return obj;
}

#endif /* KSYNC_LINUX_SLAB_H */
