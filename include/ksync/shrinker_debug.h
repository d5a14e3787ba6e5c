/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/shrinker_debug.h - the shrinker registry's debug interface and
 * nr_deferred ledger
 *
 * The kernel's debugfs count/scan files as calls, and the accounting of
 * deferred work, apart from the API of <ksync/shrinker.h>.
 */
#ifndef KSYNC_SHRINKER_DEBUG_H
#define KSYNC_SHRINKER_DEBUG_H

#include <ksync/shrinker.h>

#include <stdio.h>

KSYNC_EXTERN_C_BEGIN

/* ------------------------------------------------------------------------ */
/* Debug interface (the kernel's debugfs count/scan files), lock-free        */
/*
 * Each call finds @s's record inside a read section of @s's registry, so it
 * races safely with the unregistering (and re-registering) of a caller-owned
 * @s: it sees @s either registered, and calls it holding a reference, or not,
 * and returns -ENOENT; never another shrinker's record. A shrinker from
 * ksync_shrinker_alloc() is the record itself: the caller must not race these
 * calls with ksync_shrinker_free() of it.
 */

/**
 * ksync_shrinker_debug_count() - count_objects() of @s on @nid in @group.
 * @s: a registered shrinker
 * @group: NULL for the global view
 * @nid: node
 *
 * Return: the count (%KSYNC_SHRINK_EMPTY read as 0), or a negative errno
 * (-ENOENT when @s is not, or no longer, registered, or when @group's offline
 * has reached the registry: its walks are over, and the callback is not
 * called; not reported, as the kernel's debugfs answers for an offline memcg).
 */
long ksync__shrinker_debug_count(const char *file, int line, struct ksync_shrinker *s, struct ksync_memgroup *group,
				int nid);
#define ksync_shrinker_debug_count(...) ksync__shrinker_debug_count(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_debug_scan() - one scan_objects() call of @nr_to_scan on @s.
 * Return: objects freed, or a negative errno as ksync_shrinker_debug_count().
 */
long ksync__shrinker_debug_scan(const char *file, int line, struct ksync_shrinker *s, struct ksync_memgroup *group,
			       int nid, unsigned long nr_to_scan);
#define ksync_shrinker_debug_scan(...) ksync__shrinker_debug_scan(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_debug_show() - print "<name> <id>" then one line per group
 * with a non-zero count: "<group> <count on node 0> <node 1> ...".
 * @s: a registered shrinker
 * @out: the stream
 *
 * Return: lines written (0 or more), or a negative errno.
 */
int ksync__shrinker_debug_show(const char *file, int line, struct ksync_shrinker *s, FILE *out);
#define ksync_shrinker_debug_show(...) ksync__shrinker_debug_show(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_name() - the name given at allocation ("" if none, or if @s
 * is not prepared or registered). The string lives in the registry's record
 * of @s: valid until @s is unregistered or freed.
 */
const char *ksync__shrinker_name(const char *file, int line, const struct ksync_shrinker *s);
#define ksync_shrinker_name(...) ksync__shrinker_name(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_deferred() - nr_deferred of @s for @group (NULL: global) on @nid.
 * Return: the value, or a negative errno.
 */
long ksync__shrinker_deferred(const char *file, int line, struct ksync_shrinker *s, struct ksync_memgroup *group, int nid);
#define ksync_shrinker_deferred(...) ksync__shrinker_deferred(__FILE__, __LINE__, __VA_ARGS__)

/**
 * ksync_shrinker_add_deferred() - add @nr to that counter (tests, owners that
 * account work they refused elsewhere). The global counter takes the
 * registry's writers' mutex: an add that races the shrinker's unregister
 * either lands before the counter is retired (and is retired with it, so
 * the ledger of ksync_shrinker_deferred_total() keeps it) or returns
 * -ENOENT. Return: 0 or a negative errno.
 */
int ksync__shrinker_add_deferred(const char *file, int line, struct ksync_shrinker *s, struct ksync_memgroup *group,
				int nid, long nr);
#define ksync_shrinker_add_deferred(...) ksync__shrinker_add_deferred(__FILE__, __LINE__, __VA_ARGS__)

/**
 * struct ksync_shrinker_deferred_total - the nr_deferred ledger of a registry.
 * @in_groups: sum of the counters (all ids, all nodes) of every group not yet
 *	reparented: live ones and those a ksync_shrinker_group_destroy() is waiting on
 * @in_shrinkers: sum of the global counters of registered shrinkers
 * @orphaned: work moved out of top-level groups that went away
 * @retired: work dropped because its shrinker was unregistered
 */
struct ksync_shrinker_deferred_total {
	long in_groups;
	long in_shrinkers;
	long orphaned;
	long retired;
};

/**
 * ksync_shrinker_deferred_total() - read the ledger (takes the writers' mutex,
 * so the figures are consistent with respect to growth, reparenting and
 * unregister, though walks may still move work).
 */
void ksync_shrinker_deferred_total(struct ksync_shrinker_registry *reg,
				   struct ksync_shrinker_deferred_total *out);

KSYNC_EXTERN_C_END

#endif /* KSYNC_SHRINKER_DEBUG_H */
