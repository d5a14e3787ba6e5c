/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ported super-block cache shrinker (super.c): counts of both LRUs per
 * group, the scan split between dentries and inodes in proportion to their
 * sizes, dentries pruned first so that their inodes follow, referenced
 * objects rotated once, shrink_slab() walks of one group leaving the others,
 * a child group's objects reparented to its parent by offline, and an
 * unborn or dying super block left alone.
 */
#include "super.h"

#include <stdlib.h>

#include <ksync/srcu.h>

#include "ktest.h"

#define NID 0

static struct super_block *sb;

static struct mem_cgroup *memcg_create(struct mem_cgroup *parent)
{
	return ksync_memgroup_create(ksync_shrinker_registry_groups(NULL), parent);
}

/* @n unused dentries (each pinning its inode) and @unused_inodes unused inodes in @memcg. */
static void populate(struct mem_cgroup *memcg, int n, int unused_inodes)
{
	for (int i = 0; i < unused_inodes; i++)
		iput(new_inode(sb, memcg, NID));
	for (int i = 0; i < n; i++)
		dput(d_alloc(sb, new_inode(sb, memcg, NID), memcg, NID));
}

static unsigned long count(struct mem_cgroup *memcg)
{
	struct shrink_control sc = { .nid = NID, .group = memcg };

	return super_cache_count(sb->s_shrink, &sc);
}

static unsigned long dentries(struct mem_cgroup *memcg)
{
	return list_lru_count_one(&sb->s_dentry_lru, NID, memcg);
}

static unsigned long inodes(struct mem_cgroup *memcg)
{
	return list_lru_count_one(&sb->s_inode_lru, NID, memcg);
}

static void shrink_all(struct mem_cgroup *memcg)
{
	for (int i = 0; i < 1000 && count(memcg) != SHRINK_EMPTY; i++)
		shrink_slab(0, NID, memcg, 0);
}

KTEST(counts_and_the_proportional_split)
{
	struct mem_cgroup *a = memcg_create(NULL);
	struct shrink_control sc = { .nid = NID, .group = a, .nr_to_scan = 20 };
	long d0 = sb->dentries_scanned, i0 = sb->inodes_scanned, df0 = sb->dentries_freed,
	     if0 = sb->inodes_freed;

	populate(a, 30, 5);
	KCHECK_EQ(dentries(a), 30);
	KCHECK_EQ(inodes(a), 5); /* the dentries' inodes are pinned, not on the LRU */
	KCHECK_EQ(count(a), 35);
	KCHECK_EQ(count(NULL), SHRINK_EMPTY);
	/*
	 * 20 to scan over 30 dentries and 5 inodes (+1): 20 * 30 / 36 = 16
	 * dentries and 20 * 5 / 36 = 2 inodes, each pass one more.
	 */
	KCHECK_EQ(super_cache_scan(sb->s_shrink, &sc), 17 + 3);
	KCHECK_EQ(sb->dentries_scanned - d0, 17);
	KCHECK_EQ(sb->inodes_scanned - i0, 3);
	KCHECK_EQ(sb->dentries_freed - df0, 17);
	KCHECK_EQ(sb->inodes_freed - if0, 3);
	/* The 17 dentries' inodes were unpinned onto the inode LRU, behind the 2 left. */
	KCHECK_EQ(dentries(a), 13);
	KCHECK_EQ(inodes(a), 2 + 17);
	KCHECK_EQ(count(a), 13 + 19);
	shrink_all(a);
	KCHECK_EQ(count(a), SHRINK_EMPTY);
	KCHECK_EQ(sb->dentries_freed - df0, 30);
	KCHECK_EQ(sb->inodes_freed - if0, 35);
	KCHECK_EQ(ksync_memgroup_offline(a), 0);
}

KTEST(shrink_slab_walks_one_group)
{
	struct mem_cgroup *a = memcg_create(NULL), *b = memcg_create(NULL);

	populate(a, 300, 0);
	populate(b, 100, 50);
	KCHECK_EQ(count(a), 300);
	KCHECK_EQ(count(b), 150);
	shrink_all(a);
	KCHECK_EQ(count(a), SHRINK_EMPTY);
	KCHECK_EQ(dentries(b), 100);
	KCHECK_EQ(inodes(b), 50);
	/* At the lowest pressure a few passes take a part only. */
	shrink_slab(0, NID, b, DEF_PRIORITY);
	KCHECK(count(b) > 0);
	shrink_all(b);
	KCHECK_EQ(count(b), SHRINK_EMPTY);
	KCHECK_EQ(ksync_memgroup_offline(a), 0);
	KCHECK_EQ(ksync_memgroup_offline(b), 0);
}

KTEST(referenced_and_in_use_objects)
{
	struct mem_cgroup *a = memcg_create(NULL);
	struct shrink_control sc = { .nid = NID, .group = a, .nr_to_scan = 3 };
	struct dentry *d[3];
	long df0 = sb->dentries_freed;

	for (int i = 0; i < 3; i++) {
		d[i] = d_alloc(sb, new_inode(sb, a, NID), a, NID);
		dput(d[i]);
	}
	/* d[0] used again since: referenced, rotated once. d[1] in use: off the LRU. */
	dput(dget(d[0]));
	dget(d[1]);
	/*
	 * 3 * 3 / 4 = 2 dentries + 1: d[0] rotated, d[1] taken off (counted, as
	 * the kernel's list_lru counts it), d[2] freed; then 0 inodes + 1: d[2]'s
	 * inode, unpinned a moment ago.
	 */
	KCHECK_EQ(super_cache_scan(sb->s_shrink, &sc), 3);
	KCHECK_EQ(sb->dentries_freed - df0, 1); /* d[2] */
	KCHECK_EQ(dentries(a), 1);              /* d[0], rotated */
	dput(d[1]);                             /* back onto the LRU */
	KCHECK_EQ(dentries(a), 2);
	shrink_all(a);
	KCHECK_EQ(sb->dentries_freed - df0, 3);
	KCHECK_EQ(ksync_memgroup_offline(a), 0);
}

KTEST(offline_reparents_to_the_parent)
{
	struct mem_cgroup *parent = memcg_create(NULL), *child = memcg_create(parent);

	populate(parent, 10, 0);
	populate(child, 20, 7);
	KCHECK_EQ(count(child), 27);
	KCHECK_EQ(ksync_memgroup_offline(child), 0);
	/*
	 * Forced schedule: had the offline freed the child, its memory would be
	 * gone after this barrier, and the inodes the shrink below puts back on
	 * their LRU read it (an ASan use-after-free, intermittent before the
	 * inodes and dentries held a reference on their group).
	 */
	ksync_srcu_barrier(ksync_memgroup_set_srcu(ksync_shrinker_registry_groups(NULL)));
	KCHECK_EQ(dentries(parent), 30);
	KCHECK_EQ(inodes(parent), 7);
	KCHECK_EQ(count(parent), 37);
	shrink_all(parent);
	KCHECK_EQ(count(parent), SHRINK_EMPTY);
	KCHECK_EQ(ksync_memgroup_offline(parent), 0);
}

KTEST(unborn_and_dying_super_blocks)
{
	struct super_block *s = alloc_super(NULL, "unborn");
	struct mem_cgroup *a = memcg_create(NULL);
	struct shrink_control sc = { .nid = NID, .group = a, .nr_to_scan = 10 };

	KCHECK(s != NULL);
	KCHECK_EQ(super_cache_count(s->s_shrink, &sc), 0);
	KCHECK_EQ(super_cache_scan(s->s_shrink, &sc), SHRINK_STOP);
	populate(a, 5, 0);
	/* An unmount in progress holds s_umount: the scan does not wait for it. */
	pthread_rwlock_wrlock(&sb->s_umount);
	KCHECK_EQ(super_cache_scan(sb->s_shrink, &sc), SHRINK_STOP);
	pthread_rwlock_unlock(&sb->s_umount);
	KCHECK_EQ(count(a), 5);
	shrink_all(a);
	KCHECK_EQ(ksync_memgroup_offline(a), 0);
	kill_super(s); /* every group is offline: its list_lrus can leave the set */
}

int main(int argc, char **argv)
{
	int ret;

	sb = alloc_super(NULL, "ksyncfs");
	KCHECK(sb != NULL);
	super_born(sb);
	ret = ktest_run(argc, argv);
	kill_super(sb);
	return ret;
}
