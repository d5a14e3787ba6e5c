/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/swap.h>'s workingset calls under their kernel spellings
 * (<ksync/linux/swap.h>), in the kernel's shape: a page is isolated from
 * its LRU and removed from its mapping, leaving workingset_eviction()'s
 * shadow in its slot; when the page is read again, workingset_refault()
 * judges the shadow and the page goes back on the LRU active or not;
 * workingset_activation() on a promotion ages the clock that later
 * refaults are measured on.
 *
 * Checked against the kernel's documented semantics (mm/workingset.c's
 * header comment): a shadow is an xarray value entry (bit 0 set); a page
 * refaulting at a distance within the workingset size (the group's pages
 * on the LRU) is activated; activations count in the distance, so a page
 * whose shadow saw more activations than the workingset size refaults
 * inactive; an eviction and an activation each age the clock by one page.
 * Built as C and C++, on both atomics back-ends.
 */
#include <ksync/linux/swap.h>
#include <ksync/shrinker.h>

#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "reports.h"

#define NR_PAGES 8

/* A page of a mapping, as a cache using ksync::workingset has it. */
struct page {
	unsigned long index;
	struct ksync_lru_item lru; /* stands for the folio in <ksync/linux/swap.h> */
};

struct fixture {
	struct ksync_shrinker_registry *reg;
	struct ksync_workingset *ws;
	struct ksync_lru *lru;
	struct ksync_memgroup *memcg;
	struct page pages[NR_PAGES];
	void *slots[NR_PAGES]; /* the mapping: a page's slot holds its shadow while it is out */
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->reg = ksync_shrinker_registry_create(1);
	KASSERT(f->reg);
	f->ws = ksync_workingset_create(f->reg, 0);
	KASSERT(f->ws);
	f->lru = ksync_lru_create(f->ws, KSYNC_LRU_CLASSIC);
	KASSERT(f->lru);
	f->memcg = ksync_shrinker_group_create(f->reg, NULL);
	KASSERT(f->memcg);
	for (int i = 0; i < NR_PAGES; i++) {
		f->pages[i].index = (unsigned long)i;
		ksync_lru_item_init(&f->pages[i].lru);
		KASSERT(ksync_lru_add(f->lru, &f->pages[i].lru, f->memcg, 0, false) == 0);
	}
}

static void teardown(struct fixture *f)
{
	for (int i = 0; i < NR_PAGES; i++)
		ksync_lru_del(f->lru, &f->pages[i].lru);
	KCHECK_EQ(ksync_shrinker_group_destroy(f->memcg), 0);
	KCHECK_EQ(ksync_lru_destroy(f->lru), 0);
	KCHECK_EQ(ksync_workingset_destroy(f->ws), 0);
	KCHECK_EQ(ksync_shrinker_registry_destroy(f->reg), 0);
}

/* Reclaim @page the kernel's way: isolate it, then leave its shadow in its slot. */
static void reclaim(struct fixture *f, struct page *page)
{
	KASSERT(ksync_lru_del(f->lru, &page->lru));
	f->slots[page->index] = workingset_eviction(f->ws, &page->lru, f->memcg);
}

/* Read @page back: judge its shadow, put it on the LRU; whether it came back active. */
static bool refault(struct fixture *f, struct page *page)
{
	void *shadow = f->slots[page->index];
	bool workingset;

	f->slots[page->index] = NULL;
	workingset = workingset_refault(f->ws, &page->lru, shadow);
	KASSERT(ksync_lru_add(f->lru, &page->lru, f->memcg, 0, workingset) == 0);
	return workingset;
}

KTEST(a_shadow_is_an_xarray_value_entry)
{
	struct fixture f;

	setup(&f);
	reclaim(&f, &f.pages[0]);
	KCHECK(f.slots[0] != NULL);
	KCHECK(((uintptr_t)f.slots[0] & 1) == 1); /* xa_is_value() */
	teardown(&f);
}

KTEST(a_refault_within_the_workingset_size_is_activated)
{
	struct fixture f;

	setup(&f);
	reclaim(&f, &f.pages[0]);
	/* Distance 0 (nothing happened since), size 7: activated. */
	KCHECK(refault(&f, &f.pages[0]));
	teardown(&f);
}

KTEST(activations_count_in_the_distance)
{
	struct fixture f;

	setup(&f);
	reclaim(&f, &f.pages[1]);
	/* More promotions than the 7 pages on the LRU: the page would not have stayed. */
	for (int i = 0; i < 2 * NR_PAGES; i++)
		workingset_activation(f.ws, &f.pages[2 + i % (NR_PAGES - 2)].lru);
	KCHECK(!refault(&f, &f.pages[1]));
	teardown(&f);
}

KTEST(an_eviction_and_an_activation_each_age_the_clock_by_one)
{
	struct fixture f;
	struct ksync_workingset_refault_info info;

	setup(&f);
	reclaim(&f, &f.pages[3]);                     /* the shadow names the clock before its own eviction */
	reclaim(&f, &f.pages[4]);                     /* one eviction more */
	workingset_activation(f.ws, &f.pages[5].lru); /* one activation */
	memset(&info, 0, sizeof(info));
	KCHECK(ksync_workingset_refault(f.ws, (unsigned long)(uintptr_t)f.slots[3], &info));
	KCHECK_EQ(info.distance, 3ul);
	f.slots[3] = NULL;
	KASSERT(ksync_lru_add(f.lru, &f.pages[3].lru, f.memcg, 0, true) == 0);
	teardown(&f);
}

KTEST(a_malformed_shadow_is_reported_at_the_callers_line)
{
	struct fixture f;
	int line;

	setup(&f);
	ksync_warn_hook = kt_record_report;
	reports = 0;
	line = __LINE__ + 1;
	KCHECK(!workingset_refault(f.ws, &f.pages[0].lru, (void *)(uintptr_t)2)); /* bit 0 clear */
	KCHECK_EQ(reports, 1);
	KCHECK_EQ(report_line, line);
	KCHECK(report_file && strstr(report_file, __FILE__) != NULL);
	ksync_warn_hook = NULL;
	teardown(&f);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
