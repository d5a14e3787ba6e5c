/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <ksync/linux/memcontrol.h> - the kernel's <linux/memcontrol.h> spellings
 * for what lib/memgroup implements: struct mem_cgroup (&struct
 * ksync_memgroup), struct obj_cgroup (&struct ksync_objcg) and their
 * references (link ksync::memgroup). Not part of <ksync/kernel.h>.
 * Includable alone; with -I<prefix>/include/ksync a port keeps its own
 * `#include <linux/memcontrol.h>` line (see docs/porting.md).
 *
 * What a port sees differ:
 *  - groups live in a set (&struct ksync_memgroup_set) that the program
 *    creates; the kernel has one hierarchy. Creation and offline are
 *    ksync_memgroup_create()/ksync_memgroup_offline() (the kernel's are the
 *    cgroup core's, with no memcontrol.h spelling);
 *  - references are counted on the group itself: mem_cgroup_put() drops
 *    one, css_get() has no spelling (&memcg->css does not exist): call
 *    ksync_memgroup_get();
 *  - statistics take a node (ksync_memgroup_stat_add(g, nid, item, delta)),
 *    so mod_memcg_state() and memcg_page_state() have no spelling.
 */
#ifndef KSYNC_LINUX_MEMCONTROL_H
#define KSYNC_LINUX_MEMCONTROL_H

#include <ksync/memgroup.h>
#include <ksync/objcg.h>

#define mem_cgroup ksync_memgroup
#define obj_cgroup ksync_objcg

/* Is @memcg online (not offlined)? Unordered, as the kernel's css check. */
#define mem_cgroup_online(memcg) (ksync_memgroup_state(memcg) == KSYNC_MEMGROUP_ONLINE)
#define mem_cgroup_tryget(memcg) ksync_memgroup_tryget(memcg)
#define mem_cgroup_tryget_online(memcg) ksync_memgroup_tryget_online(memcg)
#define mem_cgroup_put(memcg) ksync_memgroup_put(memcg)
#define parent_mem_cgroup(memcg) ksync_memgroup_parent(memcg)
#define mem_cgroup_id(memcg) ksync_memgroup_id(memcg)

#define obj_cgroup_get(objcg) ksync_objcg_get(objcg)
#define obj_cgroup_put(objcg) ksync_objcg_put(objcg)
#define obj_cgroup_memcg(objcg) ksync_objcg_group(objcg)
#define get_mem_cgroup_from_objcg(objcg) ksync_objcg_get_group(objcg)

#endif /* KSYNC_LINUX_MEMCONTROL_H */
