/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A review of <ksync/linux/swap.h> against its DOC and kernel-doc, beside
 * tests/conformance/swap_kernel_test.c (which checks the kernel's
 * semantics): what the conformance test leaves out.
 *
 *  - The kernel's three are functions: a port's arguments are evaluated
 *    once each, side effects included, whatever the macro does with them
 *    (workingset_refault()'s item is "type-checked, not read": evaluated,
 *    never dereferenced, so a NULL item is fine).
 *  - "Misuse (a NULL workingset, a bad node, a malformed shadow) is
 *    reported at the caller's line": eviction returns NULL, refault false,
 *    activation nothing, each report naming this file and the call's line.
 *  - A shadow is never NULL and has bit 0 set, for every node and for the
 *    root as well as a group.
 */
#include <ksync/linux/swap.h>
#include <ksync/shrinker.h>

#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "reports.h"

struct fx {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	struct ksync_memgroup *g;
	struct ksync_lru_item item;
};

static void fx_init(struct fx *f, int nodes)
{
	memset(f, 0, sizeof(*f));
	f->reg = ksync_shrinker_registry_create(nodes);
	KASSERT(f->reg);
	f->ws = ksync_workingset_create(f->reg, 0);
	KASSERT(f->ws);
	f->lru = ksync_lru_create(f->ws, KSYNC_LRU_CLASSIC);
	KASSERT(f->lru);
	f->g = ksync_shrinker_group_create(f->reg, NULL);
	KASSERT(f->g);
	ksync_lru_item_init(&f->item);
	KASSERT(ksync_lru_add(f->lru, &f->item, f->g, nodes - 1, false) == 0);
}

static void fx_done(struct fx *f)
{
	ksync_lru_del(f->lru, &f->item);
	KCHECK_EQ(ksync_shrinker_group_destroy(f->g), 0);
	KCHECK_EQ(ksync_lru_destroy(f->lru), 0);
	KCHECK_EQ(ksync_workingset_destroy(f->ws), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
}

static int evaluated;

static struct ksync_lru_item *once(struct ksync_lru_item *item)
{
	evaluated++;
	return item;
}

KTEST(every_argument_is_evaluated_once_as_a_functions_would_be)
{
	struct fx f;

	fx_init(&f, 2);
	evaluated = 0;
	void *shadow = workingset_eviction(f.ws, once(&f.item), f.g);
	KCHECK_EQ(evaluated, 1);
	KCHECK(shadow != NULL);
	evaluated = 0;
	workingset_activation(f.ws, once(&f.item));
	KCHECK_EQ(evaluated, 1);
	evaluated = 0;
	(void)workingset_refault(f.ws, once(&f.item), shadow);
	KCHECK_EQ(evaluated, 1);
	/*
	 * Type-checked, not read: a NULL item is fine. The item is still on the
	 * LRU (a workingset of 1) and one eviction came since: within it.
	 */
	shadow = workingset_eviction(f.ws, &f.item, f.g);
	KCHECK(workingset_refault(f.ws, (struct ksync_lru_item *)NULL, shadow));
	fx_done(&f);
}

KTEST(a_shadow_is_never_null_and_has_bit_0_set)
{
	struct fx f;

	fx_init(&f, 4);
	for (int nid = 0; nid < 4; nid++) {
		f.item.nid = nid;
		for (int i = 0; i < 100; i++) {
			void *a = workingset_eviction(f.ws, &f.item, f.g);
			void *b = workingset_eviction(f.ws, &f.item, NULL);
			KCHECK(a != NULL && ((uintptr_t)a & 1) == 1);
			KCHECK(b != NULL && ((uintptr_t)b & 1) == 1);
		}
	}
	f.item.nid = 3;
	fx_done(&f);
}

KTEST(misuse_is_reported_at_the_callers_line)
{
	struct fx f;
	int line;

	fx_init(&f, 1);
	ksync_warn_hook = kt_record_report;
	reports = 0;

	line = __LINE__ + 1;
	KCHECK(workingset_eviction(NULL, &f.item, f.g) == NULL);
	KCHECK_EQ(reports, 1);
	KCHECK_EQ(report_line, line);
	KCHECK(report_file && strstr(report_file, "swap_review_test.c") != NULL);

	f.item.nid = 5; /* a bad node */
	line = __LINE__ + 1;
	KCHECK(workingset_eviction(f.ws, &f.item, f.g) == NULL);
	KCHECK_EQ(reports, 2);
	KCHECK_EQ(report_line, line);

	line = __LINE__ + 1;
	workingset_activation(f.ws, &f.item);
	KCHECK_EQ(reports, 3);
	KCHECK_EQ(report_line, line);
	f.item.nid = 0;

	line = __LINE__ + 1;
	workingset_activation(NULL, &f.item);
	KCHECK_EQ(reports, 4);
	KCHECK_EQ(report_line, line);

	line = __LINE__ + 1;
	KCHECK(!workingset_refault(f.ws, &f.item, (void *)(uintptr_t)0x1000)); /* bit 0 clear */
	KCHECK_EQ(reports, 5);
	KCHECK_EQ(report_line, line);

	void *shadow = workingset_eviction(f.ws, &f.item, f.g);
	line = __LINE__ + 1;
	KCHECK(!workingset_refault(NULL, &f.item, shadow));
	KCHECK_EQ(reports, 6);
	KCHECK_EQ(report_line, line);

	ksync_warn_hook = NULL;
	fx_done(&f);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
