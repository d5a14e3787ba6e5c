/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The port of fs/super.c's per-super-block cache shrinker (super.c): a
 * super block with a dentry LRU and an inode LRU (memcg-aware list_lrus),
 * one 6.7-shape shrinker (shrinker_alloc / shrinker_register /
 * shrinker_free) whose count is both LRUs and whose scan splits
 * nr_to_scan between them in proportion to their sizes. Dentries pin their
 * inodes: a dentry freed drops its inode's count, and an unused inode goes
 * on the inode LRU, as iput() does.
 */
#ifndef SUPER_PORT_H
#define SUPER_PORT_H

#include <linux/list.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/shrinker.h>

#include <pthread.h>
#include <stdbool.h>

#define SB_BORN (1U << 29)
#define SB_DYING (1U << 24)
#define DCACHE_REFERENCED (1U << 6)
#define I_REFERENCED (1U << 8)

struct super_block;

struct inode {
	struct super_block *i_sb;
	pthread_mutex_t i_lock;
	int i_count;
	unsigned i_state;
	struct mem_cgroup *memcg;
	int nid;
	struct list_lru_item i_lru;
};

struct dentry {
	struct super_block *d_sb;
	pthread_mutex_t d_lock;
	int d_count; /* the lockref's count */
	unsigned d_flags;
	struct inode *d_inode;
	struct mem_cgroup *memcg;
	int nid;
	struct list_lru_item d_lru;
};

struct super_operations {
	long (*nr_cached_objects)(struct super_block *sb, struct shrink_control *sc);
	long (*free_cached_objects)(struct super_block *sb, struct shrink_control *sc);
};

struct super_block {
	unsigned s_flags;
	pthread_rwlock_t s_umount;
	const struct super_operations *s_op;
	struct shrinker *s_shrink;
	struct list_lru s_dentry_lru;
	struct list_lru s_inode_lru;
	/* What the port counts for its checks. */
	long dentries_freed, inodes_freed, dentries_scanned, inodes_scanned;
};

struct super_block *alloc_super(const struct super_operations *ops, const char *name);
void super_born(struct super_block *sb); /* what mount does: SB_BORN, shrinker_register() */
/* shrinker_free(), then every cached object freed: a super block without users. */
void kill_super(struct super_block *sb);

struct inode *new_inode(struct super_block *sb, struct mem_cgroup *memcg, int nid);
struct dentry *d_alloc(struct super_block *sb, struct inode *inode, struct mem_cgroup *memcg, int nid);
void dput(struct dentry *dentry);   /* last reference: onto the dentry LRU */
struct dentry *dget(struct dentry *dentry);
void iput(struct inode *inode);     /* last reference: onto the inode LRU */

unsigned long super_cache_count(struct shrinker *shrink, struct shrink_control *sc);
unsigned long super_cache_scan(struct shrinker *shrink, struct shrink_control *sc);

#endif /* SUPER_PORT_H */
