/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port keeps its `#include <linux/...>` lines: built with
 * -I<include>/ksync beside -I<include>, the kernel's header names find
 * ksync's spelling headers, while the system's uapi headers (<linux/futex.h>,
 * <linux/membarrier.h>, <linux/kernel.h>, <linux/types.h>), which ksync itself
 * and the program need, are still the system's: ksync/linux/ has no file
 * named like one of them (tests/hygiene/include_direction.sh checks that
 * against /usr/include/linux).
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/list.h>
#include <linux/rculist.h>
#include <linux/srcu.h>

#include <linux/futex.h>      /* uapi */
#include <linux/kernel.h>     /* uapi */
#include <linux/membarrier.h> /* uapi */
#include <linux/types.h>      /* uapi */

#include "ktest.h"

struct item {
	struct list_head node;
	int v;
};

DEFINE_STATIC_SRCU(path_srcu);

KTEST(kernel_include_lines_find_ksync_and_uapi)
{
	LIST_HEAD(head);
	struct item a = { .v = 1 }, b = { .v = 2 }, *pos;
	unsigned long map[1] = { 0 };
	atomic_t n = ATOMIC_INIT(0);
	__u32 uapi_type = FUTEX_WAIT + MEMBARRIER_CMD_QUERY; /* uapi names */

	list_add_tail_rcu(&a.node, &head);
	list_add_tail_rcu(&b.node, &head);
	int idx = srcu_read_lock(&path_srcu);
	list_for_each_entry_rcu(pos, &head, node)
		atomic_add(pos->v, &n);
	srcu_read_unlock(&path_srcu, idx);
	set_bit(3, map);
	KCHECK_EQ(atomic_read(&n), 3);
	KCHECK(test_bit(3, map));
	KCHECK_EQ(WARN_ON(0), 0);
	KCHECK_EQ(uapi_type, FUTEX_WAIT + MEMBARRIER_CMD_QUERY);
	synchronize_srcu(&path_srcu);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
