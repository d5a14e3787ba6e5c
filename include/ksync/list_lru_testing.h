/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * DOC: ksync/list_lru_testing.h - the test seam of ksync::list_lru
 *
 * Not for production code (and absent from a build configured with
 * -DKSYNC_SEAMS=OFF): a hook called at the points where a forced schedule
 * shows the ordering of retirement (tests/torture/list_lru_torture.c).
 * With no hook set, a point costs one acquire load.
 */
#ifndef KSYNC_LIST_LRU_TESTING_H
#define KSYNC_LIST_LRU_TESTING_H

#include <ksync/list_lru.h>

KSYNC_EXTERN_C_BEGIN

/* Where the hook is called. */
enum ksync_list_lru_yield_point {
	/* add: the list to add to was looked up; its lock is not taken yet */
	KSYNC_LIST_LRU_YP_ADD_LOOKED_UP = 1,
	/* del: the item's list was read; its lock is not taken yet */
	KSYNC_LIST_LRU_YP_DEL_LOOKED_UP,
	/*
	 * offline: between the two steps of retiring a list (marked dead /
	 * emptied and unpublished); in the shipped order the child's lock is
	 * held here.
	 */
	KSYNC_LIST_LRU_YP_OFFLINE_BETWEEN,
};

/** ksync_list_lru_set_yield_hook() - call @hook(@lru, point, @arg) at every yield point (NULL: none). */
void ksync_list_lru_set_yield_hook(struct ksync_list_lru *lru,
				   void (*hook)(struct ksync_list_lru *lru, int point, void *arg),
				   void *arg);

KSYNC_EXTERN_C_END

#endif /* KSYNC_LIST_LRU_TESTING_H */
