/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/list_lru.h> - the kernel's <linux/list_lru.h> spellings on ksync.
 * struct list_lru, list_lru_add() & co. (lib/list_lru: link ksync::list_lru).
 * Not part of <ksync/kernel.h>. Includable alone; with -I<prefix>/include/ksync
 * on the compiler's path a port keeps its own `#include <linux/list_lru.h>`
 * line (see docs/porting.md).
 *
 * One difference a port sees: objects embed a struct list_lru_item
 * (&struct ksync_list_lru_item: the link and the list the item is on) where
 * the kernel's embed a struct list_head, and isolate callbacks get that item.
 * list_lru_init_memcg() uses the default shrinker registry's groups and
 * nodes, as <ksync/linux/shrinker.h> does; the lock of a list is dropped in
 * a callback with ksync_list_lru_unlock()/ksync_list_lru_lock().
 */
#ifndef KSYNC_LINUX_LIST_LRU_H
#define KSYNC_LINUX_LIST_LRU_H

#include <ksync/list_lru.h>
#include <ksync/shrinker.h>

#define list_lru ksync_list_lru
#define list_lru_one ksync_list_lru_one
#define list_lru_item ksync_list_lru_item
#define list_lru_walk_cb ksync_list_lru_walk_cb
#define lru_status ksync_lru_status
#define LRU_REMOVED KSYNC_LRU_REMOVED
#define LRU_REMOVED_RETRY KSYNC_LRU_REMOVED_RETRY
#define LRU_ROTATE KSYNC_LRU_ROTATE
#define LRU_SKIP KSYNC_LRU_SKIP
#define LRU_RETRY KSYNC_LRU_RETRY
#define LRU_STOP KSYNC_LRU_STOP

#define list_lru_init(lru) ksync_list_lru_init((lru), NULL, 1, NULL)
#define list_lru_init_memcg(lru, shrinker)                                     \
	ksync_list_lru_init((lru), ksync_shrinker_registry_groups(NULL),       \
			    ksync_shrinker_registry_nr_nodes(NULL), (shrinker))
#define list_lru_destroy(lru) ((void)ksync_list_lru_destroy(lru))

#define list_lru_add(lru, item, nid, memcg) ksync_list_lru_add((lru), (item), (nid), (memcg))
#define list_lru_del(lru, item, nid, memcg) ksync_list_lru_del((lru), (item), (nid), (memcg))
#define list_lru_del_obj(lru, item) ksync_list_lru_del_obj((lru), (item))
#define list_lru_isolate(list, item) ksync_list_lru_isolate((list), (item))
#define list_lru_isolate_move(list, item, head) ksync_list_lru_isolate_move((list), (item), (head))

#define list_lru_count_one(lru, nid, memcg) ksync_list_lru_count_one((lru), (nid), (memcg))
#define list_lru_count_node(lru, nid) ksync_list_lru_count_node((lru), (nid))
#define list_lru_count(lru) ksync_list_lru_count(lru)
#define list_lru_shrink_count(lru, sc) ksync_list_lru_shrinker_count((lru), (sc))

#define list_lru_walk_one(lru, nid, memcg, isolate, cb_arg, nr_to_walk)        \
	ksync_list_lru_walk_one((lru), (nid), (memcg), (isolate), (cb_arg), (nr_to_walk))
#define list_lru_walk_node(lru, nid, isolate, cb_arg, nr_to_walk)              \
	ksync_list_lru_walk_node((lru), (nid), (isolate), (cb_arg), (nr_to_walk))
#define list_lru_walk(lru, isolate, cb_arg, nr_to_walk)                        \
	ksync_list_lru_walk((lru), (isolate), (cb_arg), (nr_to_walk))
#define list_lru_shrink_walk(lru, sc, isolate, cb_arg)                         \
	ksync_list_lru_shrinker_walk((lru), (sc), (isolate), (cb_arg))

#endif /* KSYNC_LINUX_LIST_LRU_H */
