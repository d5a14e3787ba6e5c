/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/hashtable.h> - the kernel's <linux/hashtable.h> spellings on ksync.
 * DEFINE_HASHTABLE(), hash_add(), hash_for_each_possible() and friends.
 * Like the kernel's header it brings <linux/list.h>, <linux/hash.h> and
 * <linux/rculist.h> along.
 * Includable alone; with -I<prefix>/include/ksync on the compiler's path a
 * port keeps its own `#include <linux/hashtable.h>` line (see docs/porting.md).
 */
#ifndef KSYNC_LINUX_HASHTABLE_H
#define KSYNC_LINUX_HASHTABLE_H

#include <ksync/hashtable.h>
#include <ksync/linux/hash.h>
#include <ksync/linux/list.h>
#include <ksync/linux/rculist.h>

#define DEFINE_HASHTABLE(name, bits) KSYNC_DEFINE_HASHTABLE(name, bits)
#define DEFINE_READ_MOSTLY_HASHTABLE(name, bits) KSYNC_DEFINE_READ_MOSTLY_HASHTABLE(name, bits)
#define DECLARE_HASHTABLE(name, bits) KSYNC_DECLARE_HASHTABLE(name, bits)
#define HASH_SIZE(name) KSYNC_HASH_SIZE(name)
#define HASH_BITS(name) KSYNC_HASH_BITS(name)
#define hash_min(val, bits) ksync_hash_min(val, bits)
#define hash_init(hashtable) ksync_hash_init(hashtable)
#define hash_add(hashtable, node, key) ksync_hash_add(hashtable, node, key)
#define hash_add_rcu(hashtable, node, key) ksync_hash_add_rcu(hashtable, node, key)
#define hash_hashed ksync_hash_hashed
#define hash_empty(hashtable) ksync_hash_empty(hashtable)
#define hash_del ksync_hash_del
#define hash_del_rcu ksync_hash_del_rcu
#define hash_for_each(name, bkt, obj, member) ksync_hash_for_each(name, bkt, obj, member)
#define hash_for_each_rcu(name, bkt, obj, member) ksync_hash_for_each_rcu(name, bkt, obj, member)
#define hash_for_each_safe(name, bkt, tmp, obj, member)                        \
	ksync_hash_for_each_safe(name, bkt, tmp, obj, member)
#define hash_for_each_possible(name, obj, member, key)                         \
	ksync_hash_for_each_possible(name, obj, member, key)
#define hash_for_each_possible_rcu(name, obj, member, key, ...)                \
	ksync_hash_for_each_possible_rcu(name, obj, member, key, ##__VA_ARGS__)
#define hash_for_each_possible_rcu_notrace(name, obj, member, key)             \
	ksync_hash_for_each_possible_rcu_notrace(name, obj, member, key)
#define hash_for_each_possible_safe(name, obj, tmp, member, key)               \
	ksync_hash_for_each_possible_safe(name, obj, tmp, member, key)

#endif /* KSYNC_LINUX_HASHTABLE_H */
