/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/hashtable.h - the kernel's statically sized hash table
 *
 * A table is an array of 2^bits &struct ksync_hlist_head buckets, defined
 * with KSYNC_DEFINE_HASHTABLE() or declared with KSYNC_DECLARE_HASHTABLE()
 * (then ksync_hash_init() it). Every macro that takes the table needs the
 * array itself, not a pointer to it: the size is sizeof(table) (a pointer
 * fails the build in C).
 *
 * An entry embeds a &struct ksync_hlist_node and is filed under an integer
 * key: ksync_hash_add() puts it in bucket ksync_hash_min(key, bits), which
 * hashes with ksync_hash_32() when the key's TYPE is at most 4 bytes wide and
 * with ksync_hash_long() otherwise, as the kernel does: the same value as an
 * int and as a long may land in different buckets (small values tend to
 * agree, large ones do not), so use one key type per table. The table does not compare keys: ksync_hash_for_each_possible()
 * walks the key's bucket, and the caller tests each entry's key.
 *
 * Locking is the caller's, as for the lists: the plain operations need the
 * table's lock; the _rcu ones let readers walk (ksync_hash_for_each_rcu(),
 * ksync_hash_for_each_possible_rcu()) inside an SRCU read section while
 * updaters, serialised by the caller, use ksync_hash_add_rcu() and
 * ksync_hash_del_rcu() and free deleted entries after a grace period (see
 * <ksync/rculist.h> for the guarantees).
 */
#ifndef KSYNC_HASHTABLE_H
#define KSYNC_HASHTABLE_H

#include <ksync/compiler.h>
#include <ksync/hash.h>
#include <ksync/list.h>
#include <ksync/rculist.h>

#include <stdbool.h>
#include <stddef.h>

KSYNC_EXTERN_C_BEGIN

/**
 * KSYNC_DEFINE_HASHTABLE() - define @name as an empty table of 2^@bits buckets.
 * @name: the table's name
 * @bits: log2 of the number of buckets, a constant (0 gives one bucket)
 *
 * Every bucket starts empty (KSYNC_HLIST_HEAD_INIT, which is all zeroes).
 * Prefix it with static as needed.
 */
#define KSYNC_DEFINE_HASHTABLE(name, bits)                                     \
	struct ksync_hlist_head name[1 << (bits)] = { KSYNC_HLIST_HEAD_INIT }

/**
 * KSYNC_DEFINE_READ_MOSTLY_HASHTABLE() - KSYNC_DEFINE_HASHTABLE().
 *
 * The kernel puts such a table in its read-mostly section; ksync has none,
 * so this is the plain definition.
 */
#define KSYNC_DEFINE_READ_MOSTLY_HASHTABLE(name, bits) KSYNC_DEFINE_HASHTABLE(name, bits)

/**
 * KSYNC_DECLARE_HASHTABLE() - declare @name as a table of 2^@bits buckets
 * (a struct member, say); ksync_hash_init() it before use.
 */
#define KSYNC_DECLARE_HASHTABLE(name, bits) struct ksync_hlist_head name[1 << (bits)]

/* 0, or a build failure when @a is a pointer rather than an array (C only). */
#ifndef __cplusplus
#define ksync__hash_must_be_array(a)                                           \
	(0 * sizeof(struct {                                                   \
		int ksync__not_an_array : __builtin_types_compatible_p(        \
			__typeof__(a), __typeof__(&(a)[0])) ? -1 : 1;          \
	}))
#else
#define ksync__hash_must_be_array(a) 0
#endif

/** KSYNC_HASH_SIZE() - the number of buckets of the table @name (a size_t constant). */
#define KSYNC_HASH_SIZE(name) (sizeof(name) / sizeof((name)[0]) + ksync__hash_must_be_array(name))

/** KSYNC_HASH_BITS() - log2 of the number of buckets of @name (an unsigned int constant). */
#define KSYNC_HASH_BITS(name)                                                  \
	((unsigned int)(sizeof(unsigned long long) * 8 - 1 -                   \
			(size_t)__builtin_clzll((unsigned long long)KSYNC_HASH_SIZE(name))))

/**
 * ksync_hash_min() - the bucket of key @val in a table of 2^@bits buckets.
 * @val: the key, an integer; its type's width picks the hash
 * @bits: the table's KSYNC_HASH_BITS()
 *
 * ksync_hash_32(@val, @bits) when sizeof(@val) <= 4, else
 * ksync_hash_long(@val, @bits).
 */
#define ksync_hash_min(val, bits)                                              \
	(sizeof(val) <= 4 ? ksync_hash_32(val, bits) : ksync_hash_long(val, bits))

static inline void ksync__hash_init(struct ksync_hlist_head *ht, size_t sz)
{
	for (size_t i = 0; i < sz; i++)
		ksync_init_hlist_head(&ht[i]);
}

/** ksync_hash_init() - make every bucket of the table @hashtable empty. */
#define ksync_hash_init(hashtable) ksync__hash_init(hashtable, KSYNC_HASH_SIZE(hashtable))

/**
 * ksync_hash_add() - file @node under @key in @hashtable.
 * @hashtable: the table (the array)
 * @node: the &struct ksync_hlist_node of the entry, unhashed
 * @key: the entry's key, an integer
 *
 * At the front of the key's bucket (ksync_hlist_add_head()). Caller holds
 * the table's lock. Nothing stops two entries with one key.
 */
#define ksync_hash_add(hashtable, node, key)                                   \
	ksync_hlist_add_head(node, &(hashtable)[ksync_hash_min(key, KSYNC_HASH_BITS(hashtable))])

/**
 * ksync_hash_add_rcu() - file @node under @key, for RCU readers.
 * @hashtable: the table
 * @node: the node of a fully initialised entry (its key included)
 * @key: the entry's key
 *
 * ksync_hlist_add_head_rcu(): a reader walking the bucket sees the entry
 * either not at all or initialised. Caller holds the update-side lock.
 */
#define ksync_hash_add_rcu(hashtable, node, key)                               \
	ksync_hlist_add_head_rcu(node,                                         \
				 &(hashtable)[ksync_hash_min(key, KSYNC_HASH_BITS(hashtable))])

/**
 * ksync_hash_hashed() - whether @node is in a table (or any hash list).
 * @node: the node; must be initialised (ksync_init_hlist_node()) or added
 *
 * False after ksync_hash_del() and ksync_hash_del_rcu().
 */
static inline bool ksync_hash_hashed(const struct ksync_hlist_node *node)
{
	return !ksync_hlist_unhashed(node);
}

static inline bool ksync__hash_empty(const struct ksync_hlist_head *ht, size_t sz)
{
	for (size_t i = 0; i < sz; i++)
		if (!ksync_hlist_empty(&ht[i]))
			return false;
	return true;
}

/**
 * ksync_hash_empty() - whether no bucket of @hashtable has an entry.
 *
 * Reads every bucket once (O(buckets)); without the lock, a hint.
 */
#define ksync_hash_empty(hashtable) ksync__hash_empty(hashtable, KSYNC_HASH_SIZE(hashtable))

/**
 * ksync_hash_del() - take @node out of its table.
 * @node: a node in a table, or unhashed (then nothing happens)
 *
 * ksync_hlist_del_init(): @node is left unhashed, ksync_hash_hashed() false.
 * Caller holds the table's lock.
 */
static inline void ksync_hash_del(struct ksync_hlist_node *node)
{
	ksync_hlist_del_init(node);
}

/**
 * ksync_hash_del_rcu() - take @node out of its table; readers on it walk on.
 * @node: a node in a table, or unhashed
 *
 * ksync_hlist_del_init_rcu(): @node keeps its ->next for readers standing on
 * it and is left unhashed. Free the entry after a grace period. Caller holds
 * the update-side lock.
 */
static inline void ksync_hash_del_rcu(struct ksync_hlist_node *node)
{
	ksync_hlist_del_init_rcu(node);
}

/**
 * ksync_hash_for_each() - walk every entry of @name, bucket by bucket.
 * @name: the table
 * @bkt: an integer variable, the bucket cursor
 * @obj: the typed entry cursor
 * @member: the name of the node within the entry type
 *
 * Visits the buckets in index order. A break in the body ends the whole walk
 * with @obj on the entry (the outer loop stops because @obj is not NULL;
 * @bkt is then one past @obj's bucket, as in the kernel); after a complete
 * walk @obj is NULL.
 */
#define ksync_hash_for_each(name, bkt, obj, member)                            \
	for ((bkt) = 0, (obj) = NULL;                                          \
	     (obj) == NULL && (bkt) < (__typeof__(bkt))KSYNC_HASH_SIZE(name); (bkt)++) \
		ksync_hlist_for_each_entry(obj, &(name)[bkt], member)

/**
 * ksync_hash_for_each_rcu() - ksync_hash_for_each() for an RCU reader.
 * @name: the table
 * @bkt: the bucket cursor
 * @obj: the typed entry cursor
 * @member: the name of the node within the entry type
 *
 * Inside a read section; each bucket is walked with
 * ksync_hlist_for_each_entry_rcu() (no condition: the kernel's takes none).
 */
#define ksync_hash_for_each_rcu(name, bkt, obj, member)                        \
	for ((bkt) = 0, (obj) = NULL;                                          \
	     (obj) == NULL && (bkt) < (__typeof__(bkt))KSYNC_HASH_SIZE(name); (bkt)++) \
		ksync_hlist_for_each_entry_rcu(obj, &(name)[bkt], member)

/**
 * ksync_hash_for_each_safe() - ksync_hash_for_each(); @obj may be deleted.
 * @name: the table
 * @bkt: the bucket cursor
 * @tmp: a &struct ksync_hlist_node pointer, the lookahead
 * @obj: the typed entry cursor
 * @member: the name of the node within the entry type
 */
#define ksync_hash_for_each_safe(name, bkt, tmp, obj, member)                  \
	for ((bkt) = 0, (obj) = NULL;                                          \
	     (obj) == NULL && (bkt) < (__typeof__(bkt))KSYNC_HASH_SIZE(name); (bkt)++) \
		ksync_hlist_for_each_entry_safe(obj, tmp, &(name)[bkt], member)

/**
 * ksync_hash_for_each_possible() - walk the entries that @key could be filed under.
 * @name: the table
 * @obj: the typed entry cursor
 * @member: the name of the node within the entry type
 * @key: the key (of the type it was added with)
 *
 * Walks the key's bucket only: entries of other keys that share it are met
 * too, so the body compares keys.
 */
#define ksync_hash_for_each_possible(name, obj, member, key)                   \
	ksync_hlist_for_each_entry(obj, &(name)[ksync_hash_min(key, KSYNC_HASH_BITS(name))], member)

/**
 * ksync_hash_for_each_possible_rcu() - ksync_hash_for_each_possible() for an RCU reader.
 * @name: the table
 * @obj: the typed entry cursor
 * @member: the name of the node within the entry type
 * @key: the key
 * @...: optional condition proving protection (checked in KSYNC_DEBUG
 *	builds, as in ksync_hlist_for_each_entry_rcu())
 */
#define ksync_hash_for_each_possible_rcu(name, obj, member, key, ...)          \
	ksync_hlist_for_each_entry_rcu(obj,                                    \
				       &(name)[ksync_hash_min(key, KSYNC_HASH_BITS(name))], \
				       member, ##__VA_ARGS__)

/**
 * ksync_hash_for_each_possible_rcu_notrace() - ksync_hash_for_each_possible_rcu()
 * without a condition (the kernel's skips its RCU debugging here).
 */
#define ksync_hash_for_each_possible_rcu_notrace(name, obj, member, key)       \
	ksync_hlist_for_each_entry_rcu(obj,                                    \
				       &(name)[ksync_hash_min(key, KSYNC_HASH_BITS(name))], member)

/**
 * ksync_hash_for_each_possible_safe() - ksync_hash_for_each_possible(); @obj may be deleted.
 * @name: the table
 * @obj: the typed entry cursor
 * @tmp: a &struct ksync_hlist_node pointer, the lookahead
 * @member: the name of the node within the entry type
 * @key: the key
 */
#define ksync_hash_for_each_possible_safe(name, obj, tmp, member, key)         \
	ksync_hlist_for_each_entry_safe(obj, tmp,                              \
					&(name)[ksync_hash_min(key, KSYNC_HASH_BITS(name))], member)

KSYNC_EXTERN_C_END

#endif /* KSYNC_HASHTABLE_H */
