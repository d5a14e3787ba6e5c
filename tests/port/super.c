/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port of fs/super.c's super-block cache shrinker onto ksync, written
 * from the kernel's documented design with its spellings and <linux/...>
 * includes resolved by ksync's spelling headers:
 *
 *  - alloc_super() makes the shrinker with the 6.7 API (shrinker_alloc()
 *    NUMA- and memcg-aware, private_data the super block, batch 1024) and
 *    the two memcg-aware list_lrus bound to it; mount registers it;
 *  - super_cache_count() is the dentry and inode LRUs' counts (plus the
 *    file system's own cache) for the shrink's group and node, scaled by
 *    vfs_cache_pressure, SHRINK_EMPTY when there is nothing;
 *  - super_cache_scan() takes s_umount shared with a trylock (a dying or
 *    unborn super block is not scanned), splits nr_to_scan between the
 *    caches in proportion to their sizes, and prunes the dentries first,
 *    since dentries pin inodes: freeing a dentry drops its inode's last
 *    reference and puts the inode on the inode LRU for the second pass.
 *
 * Stand-ins (docs/porting.md): spinlocks are pthread mutexes, s_umount a
 * pthread rwlock; the lockref is a count under d_lock; DCACHE_LRU_LIST is
 * ksync's item-on-list test; there is no gfp mask to check (ksync's
 * shrink_control has none, and userspace reclaim may always enter the file
 * system); the teardown order follows ksync's list_lru rule (the list_lrus
 * destroyed before the shrinker they set bits of is freed), where the
 * kernel frees the shrinker first.
 */
#include "super.h"

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/container_of.h>

#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Shims for what userspace lacks                                           */

#define spin_lock(l) pthread_mutex_lock(l)
#define spin_unlock(l) pthread_mutex_unlock(l)
#define spin_trylock(l) (pthread_mutex_trylock(l) == 0)
#define list_lru_item_on_list(item) ksync_list_lru_item_on_list(item)
#define list_lru_item_init(item) ksync_list_lru_item_init(item)
/* The DCACHE_SHRINK_LIST / I_FREEING marks of an object on a dispose list. */
#define DCACHE_SHRINK_LIST (1U << 10)
#define I_FREEING (1U << 5)

/* x * n / d without overflowing x * n. */
#define mult_frac(x, n, d) (((x) / (d)) * (n) + (((x) % (d)) * (n)) / (d))

static unsigned long sysctl_vfs_cache_pressure = 100;

static unsigned long vfs_pressure_ratio(unsigned long val)
{
	return mult_frac(val, sysctl_vfs_cache_pressure, 100UL);
}

static bool super_trylock_shared(struct super_block *sb)
{
	if (pthread_rwlock_tryrdlock(&sb->s_umount))
		return false;
	if ((READ_ONCE(sb->s_flags) & (SB_BORN | SB_DYING)) == SB_BORN)
		return true;
	pthread_rwlock_unlock(&sb->s_umount);
	return false;
}

static void super_unlock_shared(struct super_block *sb)
{
	pthread_rwlock_unlock(&sb->s_umount);
}

/* ------------------------------------------------------------------------ */
/* Inodes                                                                   */

struct inode *new_inode(struct super_block *sb, struct mem_cgroup *memcg, int nid)
{
	struct inode *inode = calloc(1, sizeof(*inode));

	if (!inode)
		return NULL;
	inode->i_sb = sb;
	pthread_mutex_init(&inode->i_lock, NULL);
	inode->i_count = 1;
	/*
	 * A reference on the group for the inode's life, as the kernel's
	 * object holds its objcg: after the group goes offline the inode may
	 * still be added to its LRU (which goes to the nearest online
	 * ancestor), and that add reads the group.
	 */
	if (memcg)
		ksync_memgroup_get(memcg);
	inode->memcg = memcg;
	inode->nid = nid;
	list_lru_item_init(&inode->i_lru);
	return inode;
}

static void destroy_inode(struct inode *inode)
{
	pthread_mutex_destroy(&inode->i_lock);
	if (inode->memcg)
		mem_cgroup_put(inode->memcg);
	free(inode);
}

/* The last reference gone: keep the inode cached on the LRU (iput_final()). */
void iput(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	if (!--inode->i_count && !(inode->i_state & I_FREEING)) {
		if (!list_lru_item_on_list(&inode->i_lru))
			list_lru_add(&inode->i_sb->s_inode_lru, &inode->i_lru, inode->nid, inode->memcg);
		else
			inode->i_state |= I_REFERENCED;
	}
	spin_unlock(&inode->i_lock);
}

static enum lru_status inode_lru_isolate(struct list_lru_item *item, struct list_lru_one *lru,
					 void *arg)
{
	struct inode *inode = container_of(item, struct inode, i_lru);
	struct list_head *freeable = arg;

	inode->i_sb->inodes_scanned++;
	/* The LRU's lock is held: the inode's lock in the other order, so only try. */
	if (!spin_trylock(&inode->i_lock))
		return LRU_SKIP;
	/* In use again: it leaves the LRU lazily, here. */
	if (inode->i_count) {
		list_lru_isolate(lru, item);
		spin_unlock(&inode->i_lock);
		return LRU_REMOVED;
	}
	/* Used since it was last seen: one more round. */
	if (inode->i_state & I_REFERENCED) {
		inode->i_state &= ~I_REFERENCED;
		spin_unlock(&inode->i_lock);
		return LRU_ROTATE;
	}
	inode->i_state |= I_FREEING;
	list_lru_isolate_move(lru, item, freeable);
	spin_unlock(&inode->i_lock);
	return LRU_REMOVED;
}

static void dispose_list(struct list_head *head)
{
	while (!list_empty(head)) {
		struct inode *inode = list_first_entry(head, struct inode, i_lru.link);

		list_del_init(&inode->i_lru.link);
		inode->i_sb->inodes_freed++;
		destroy_inode(inode);
	}
}

static long prune_icache_sb(struct super_block *sb, struct shrink_control *sc)
{
	LIST_HEAD(freeable);
	long freed = (long)list_lru_shrink_walk(&sb->s_inode_lru, sc, inode_lru_isolate, &freeable);

	dispose_list(&freeable);
	return freed;
}

/* ------------------------------------------------------------------------ */
/* Dentries                                                                 */

struct dentry *d_alloc(struct super_block *sb, struct inode *inode, struct mem_cgroup *memcg, int nid)
{
	struct dentry *dentry = calloc(1, sizeof(*dentry));

	if (!dentry)
		return NULL;
	dentry->d_sb = sb;
	pthread_mutex_init(&dentry->d_lock, NULL);
	dentry->d_count = 1;
	dentry->d_inode = inode; /* takes over the caller's reference */
	if (memcg)
		ksync_memgroup_get(memcg); /* as new_inode() */
	dentry->memcg = memcg;
	dentry->nid = nid;
	list_lru_item_init(&dentry->d_lru);
	return dentry;
}

struct dentry *dget(struct dentry *dentry)
{
	spin_lock(&dentry->d_lock);
	dentry->d_count++;
	spin_unlock(&dentry->d_lock);
	return dentry;
}

/* The last reference gone: keep the dentry cached on the LRU (retain_dentry()). */
void dput(struct dentry *dentry)
{
	spin_lock(&dentry->d_lock);
	if (!--dentry->d_count && !(dentry->d_flags & DCACHE_SHRINK_LIST)) {
		if (!list_lru_item_on_list(&dentry->d_lru))
			list_lru_add(&dentry->d_sb->s_dentry_lru, &dentry->d_lru, dentry->nid, dentry->memcg);
		else
			dentry->d_flags |= DCACHE_REFERENCED;
	}
	spin_unlock(&dentry->d_lock);
}

static enum lru_status dentry_lru_isolate(struct list_lru_item *item, struct list_lru_one *lru,
					  void *arg)
{
	struct dentry *dentry = container_of(item, struct dentry, d_lru);
	struct list_head *freeable = arg;

	dentry->d_sb->dentries_scanned++;
	if (!spin_trylock(&dentry->d_lock))
		return LRU_SKIP;
	if (dentry->d_count) {
		list_lru_isolate(lru, item);
		spin_unlock(&dentry->d_lock);
		return LRU_REMOVED;
	}
	if (dentry->d_flags & DCACHE_REFERENCED) {
		dentry->d_flags &= ~DCACHE_REFERENCED;
		spin_unlock(&dentry->d_lock);
		return LRU_ROTATE;
	}
	dentry->d_flags |= DCACHE_SHRINK_LIST;
	list_lru_isolate_move(lru, item, freeable);
	spin_unlock(&dentry->d_lock);
	return LRU_REMOVED;
}

/* Free what is still unused; a dentry taken again meanwhile stays, off the LRU. */
static void shrink_dentry_list(struct list_head *list)
{
	while (!list_empty(list)) {
		struct dentry *dentry = list_first_entry(list, struct dentry, d_lru.link);
		struct inode *inode;

		list_del_init(&dentry->d_lru.link);
		spin_lock(&dentry->d_lock);
		dentry->d_flags &= ~DCACHE_SHRINK_LIST;
		if (dentry->d_count) {
			spin_unlock(&dentry->d_lock);
			continue;
		}
		inode = dentry->d_inode;
		spin_unlock(&dentry->d_lock);
		dentry->d_sb->dentries_freed++;
		pthread_mutex_destroy(&dentry->d_lock);
		if (dentry->memcg)
			mem_cgroup_put(dentry->memcg);
		free(dentry);
		if (inode)
			iput(inode); /* its last reference: onto the inode LRU */
	}
}

static long prune_dcache_sb(struct super_block *sb, struct shrink_control *sc)
{
	LIST_HEAD(dispose);
	long freed = (long)list_lru_shrink_walk(&sb->s_dentry_lru, sc, dentry_lru_isolate, &dispose);

	shrink_dentry_list(&dispose);
	return freed;
}

/* ------------------------------------------------------------------------ */
/* The super block's shrinker                                               */

unsigned long super_cache_scan(struct shrinker *shrink, struct shrink_control *sc)
{
	struct super_block *sb = shrink->private_data;
	unsigned long total_objects, dentries, inodes, fs_objects = 0, nr = sc->nr_to_scan;
	long freed;

	/*
	 * A trylock: an unmount in progress holds s_umount for writing, and
	 * reclaim must not wait for it (nor scan a dying super block).
	 */
	if (!super_trylock_shared(sb))
		return SHRINK_STOP;

	if (sb->s_op && sb->s_op->nr_cached_objects)
		fs_objects = (unsigned long)sb->s_op->nr_cached_objects(sb, sc);
	inodes = list_lru_shrink_count(&sb->s_inode_lru, sc);
	dentries = list_lru_shrink_count(&sb->s_dentry_lru, sc);
	total_objects = dentries + inodes + fs_objects + 1;

	/* The scan, shared out in proportion to the caches' sizes. */
	dentries = mult_frac(nr, dentries, total_objects);
	inodes = mult_frac(nr, inodes, total_objects);
	fs_objects = mult_frac(nr, fs_objects, total_objects);

	/* Dentries first: they pin inodes, whose pass then finds them unused. */
	sc->nr_to_scan = dentries + 1;
	freed = prune_dcache_sb(sb, sc);
	sc->nr_to_scan = inodes + 1;
	freed += prune_icache_sb(sb, sc);
	if (fs_objects) {
		sc->nr_to_scan = fs_objects + 1;
		freed += sb->s_op->free_cached_objects(sb, sc);
	}
	super_unlock_shared(sb);
	return (unsigned long)freed;
}

unsigned long super_cache_count(struct shrinker *shrink, struct shrink_control *sc)
{
	struct super_block *sb = shrink->private_data;
	unsigned long total_objects = 0;

	/*
	 * No lock: the counts are racy anyway. A super block not born yet has
	 * LRUs that may not be set up; the acquire pairs with super_born().
	 */
	if (!(smp_load_acquire(&sb->s_flags) & SB_BORN))
		return 0;
	if (sb->s_op && sb->s_op->nr_cached_objects)
		total_objects = (unsigned long)sb->s_op->nr_cached_objects(sb, sc);
	total_objects += list_lru_shrink_count(&sb->s_dentry_lru, sc);
	total_objects += list_lru_shrink_count(&sb->s_inode_lru, sc);
	if (!total_objects)
		return SHRINK_EMPTY;
	return vfs_pressure_ratio(total_objects);
}

struct super_block *alloc_super(const struct super_operations *ops, const char *name)
{
	struct super_block *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_rwlock_init(&s->s_umount, NULL);
	s->s_op = ops;
	s->s_shrink = shrinker_alloc(SHRINKER_NUMA_AWARE | SHRINKER_MEMCG_AWARE, "sb-%s", name);
	if (!s->s_shrink)
		goto fail;
	s->s_shrink->scan_objects = super_cache_scan;
	s->s_shrink->count_objects = super_cache_count;
	s->s_shrink->batch = 1024;
	s->s_shrink->private_data = s;
	if (list_lru_init_memcg(&s->s_dentry_lru, s->s_shrink))
		goto fail_shrinker;
	if (list_lru_init_memcg(&s->s_inode_lru, s->s_shrink))
		goto fail_dentry;
	return s;
fail_dentry:
	list_lru_destroy(&s->s_dentry_lru);
fail_shrinker:
	shrinker_free(s->s_shrink);
fail:
	pthread_rwlock_destroy(&s->s_umount);
	free(s);
	return NULL;
}

void super_born(struct super_block *sb)
{
	shrinker_register(sb->s_shrink);
	smp_store_release(&sb->s_flags, sb->s_flags | SB_BORN);
}

static enum lru_status isolate_all(struct list_lru_item *item, struct list_lru_one *lru, void *arg)
{
	list_lru_isolate_move(lru, item, arg);
	return LRU_REMOVED;
}

void kill_super(struct super_block *sb)
{
	LIST_HEAD(dentries);
	LIST_HEAD(inodes);

	/* s_umount for writing: a scan's trylock fails from here on. */
	pthread_rwlock_wrlock(&sb->s_umount);
	WRITE_ONCE(sb->s_flags, sb->s_flags | SB_DYING);
	list_lru_walk(&sb->s_dentry_lru, isolate_all, &dentries, ~0UL);
	shrink_dentry_list(&dentries);
	list_lru_walk(&sb->s_inode_lru, isolate_all, &inodes, ~0UL);
	dispose_list(&inodes);
	pthread_rwlock_unlock(&sb->s_umount);
	list_lru_destroy(&sb->s_dentry_lru);
	list_lru_destroy(&sb->s_inode_lru);
	shrinker_free(sb->s_shrink);
	pthread_rwlock_destroy(&sb->s_umount);
	free(sb);
}
