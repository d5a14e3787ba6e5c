/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * <linux/list.h>'s doubly linked list under its kernel spellings, against
 * the kernel's documented semantics: what each operation leaves in the list
 * and in the entry it removed (list_del() poisons, list_del_init() re-inits),
 * the edge cases of every cut, rotate, swap and bulk move, the walkers that
 * start mid-list or delete as they go, and the careful/release-acquire pairs
 * across threads. Random operation sequences are cross-checked against an
 * array. Built as C and C++, on both atomics back-ends.
 */
#include <ksync/linux/atomic.h>
#include <ksync/linux/list.h>

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

#define N 16

struct item {
	int id;
	struct list_head node;
};

static struct item items[N];

static void reset_items(void)
{
	for (int i = 0; i < N; i++) {
		items[i].id = i;
		items[i].node.next = NULL;
		items[i].node.prev = NULL;
	}
}

/*
 * Whether @head holds exactly the ids @ids[0..@n-1] in order: walked
 * forwards and backwards, every link's back pointer consistent, and
 * list_count_nodes() agreeing.
 */
static int list_is(struct list_head *head, const int *ids, int n)
{
	struct list_head *p;
	int i = 0;

	if (head->next->prev != head || head->prev->next != head)
		return 0;
	list_for_each(p, head) {
		if (i >= n || list_entry(p, struct item, node)->id != ids[i])
			return 0;
		if (p->next->prev != p || p->prev->next != p)
			return 0;
		i++;
	}
	if (i != n)
		return 0;
	list_for_each_prev(p, head) {
		if (list_entry(p, struct item, node)->id != ids[--i])
			return 0;
	}
	return i == 0 && list_count_nodes(head) == (size_t)n;
}

/* Fill @head with items[@ids[0..@n-1]] in that order. */
static void fill(struct list_head *head, const int *ids, int n)
{
	INIT_LIST_HEAD(head);
	for (int i = 0; i < n; i++)
		list_add_tail(&items[ids[i]].node, head);
}

static const int ID5[] = { 0, 1, 2, 3, 4 };

KTEST(empty_list)
{
	LIST_HEAD(head);
	struct list_head h2;
	struct item *pos;
	int visits = 0;

	reset_items();
	INIT_LIST_HEAD(&h2);
	KCHECK(list_empty(&head) && list_empty(&h2));
	KCHECK(list_empty_careful(&head));
	KCHECK(!list_is_singular(&head));
	KCHECK_EQ(list_count_nodes(&head), 0);
	KCHECK(head.next == &head && head.prev == &head);
	KCHECK(list_first_entry_or_null(&head, struct item, node) == NULL);
	KCHECK(list_last_entry_or_null(&head, struct item, node) == NULL);
	KCHECK(list_first_entry_or_null_acquire(&head, struct item, node) == NULL);
	list_for_each_entry(pos, &head, node) visits++;
	list_for_each_entry_reverse(pos, &head, node) visits++;
	KCHECK_EQ(visits, 0);
	/* the cursor of a finished walk stands on the head's (fake) entry */
	KCHECK(list_entry_is_head(pos, &head, node));
	/* splicing an empty list changes nothing */
	list_splice(&h2, &head);
	list_splice_tail_init(&h2, &head);
	KCHECK(list_empty(&head) && list_empty(&h2));
	/* rotating an empty list leaves it empty */
	list_rotate_left(&head);
	KCHECK(list_is(&head, NULL, 0));
}

KTEST(add_order_and_position_tests)
{
	LIST_HEAD(head);

	reset_items();
	list_add(&items[1].node, &head);      /* 1 */
	list_add(&items[0].node, &head);      /* 0 1: list_add is a stack */
	list_add_tail(&items[2].node, &head); /* 0 1 2: list_add_tail a queue */
	list_add_tail_release(&items[3].node, &head);
	list_add(&items[4].node, &items[3].node); /* after an entry */
	{
		static const int want[] = { 0, 1, 2, 3, 4 };
		KCHECK(list_is(&head, want, 5));
	}
	KCHECK(list_is_first(&items[0].node, &head));
	KCHECK(!list_is_first(&items[1].node, &head));
	KCHECK(list_is_last(&items[4].node, &head));
	KCHECK(!list_is_last(&items[3].node, &head));
	KCHECK(list_is_head(&head, &head) && !list_is_head(&items[0].node, &head));
	KCHECK(!list_empty(&head) && !list_is_singular(&head));
	KCHECK(list_first_entry(&head, struct item, node) == &items[0]);
	KCHECK(list_last_entry(&head, struct item, node) == &items[4]);
	KCHECK(list_first_entry_or_null(&head, struct item, node) == &items[0]);
	KCHECK(list_first_entry_or_null_acquire(&head, struct item, node) == &items[0]);
	KCHECK(list_last_entry_or_null(&head, struct item, node) == &items[4]);
	KCHECK(list_next_entry(&items[1], node) == &items[2]);
	KCHECK(list_prev_entry(&items[1], node) == &items[0]);
}

KTEST(single_entry)
{
	LIST_HEAD(head);

	reset_items();
	list_add(&items[7].node, &head);
	KCHECK(list_is_singular(&head));
	KCHECK(list_is_first(&items[7].node, &head) && list_is_last(&items[7].node, &head));
	KCHECK(list_first_entry_or_null(&head, struct item, node) == &items[7]);
	KCHECK(list_last_entry_or_null(&head, struct item, node) == &items[7]);
	/* circular neighbours of the only entry are itself */
	KCHECK(list_next_entry_circular(&items[7], &head, node) == &items[7]);
	KCHECK(list_prev_entry_circular(&items[7], &head, node) == &items[7]);
	KCHECK_EQ(list_count_nodes(&head), 1);
	list_rotate_left(&head);
	KCHECK(list_is_singular(&head) && head.next == &items[7].node);
	list_rotate_to_front(&items[7].node, &head);
	KCHECK(list_is_singular(&head) && head.next == &items[7].node);
	KCHECK(!list_empty_careful(&head));
}

KTEST(del_poisons_del_init_reinits)
{
	LIST_HEAD(head);

	reset_items();
	fill(&head, ID5, 5);
	list_del(&items[2].node);
	/* always, not only in debug builds: the kernel's list_del() */
	KCHECK(items[2].node.next == LIST_POISON1);
	KCHECK(items[2].node.prev == LIST_POISON2);
	KCHECK(LIST_POISON1 != LIST_POISON2 && LIST_POISON1 != NULL);
	{
		static const int want[] = { 0, 1, 3, 4 };
		KCHECK(list_is(&head, want, 4));
	}
	list_del_init(&items[0].node);
	KCHECK(list_empty(&items[0].node) && list_empty_careful(&items[0].node));
	list_del_init_careful(&items[4].node);
	KCHECK(list_empty(&items[4].node) && list_empty_careful(&items[4].node));
	{
		static const int want[] = { 1, 3 };
		KCHECK(list_is(&head, want, 2));
	}
	/* del_init of a lone (self-linked) entry is a no-op */
	list_del_init(&items[0].node);
	KCHECK(list_empty(&items[0].node));
	/* delete the last two: the head is empty again */
	list_del(&items[1].node);
	list_del(&items[3].node);
	KCHECK(list_empty(&head) && list_is(&head, NULL, 0));
}

KTEST(empty_careful_sees_half_done_delete)
{
	struct list_head h;

	/* next already points home but prev does not: not (yet) empty */
	INIT_LIST_HEAD(&h);
	reset_items();
	h.prev = &items[0].node;
	KCHECK(list_empty(&h));
	KCHECK(!list_empty_careful(&h));
	h.prev = &h;
	KCHECK(list_empty_careful(&h));
}

KTEST(replace)
{
	LIST_HEAD(head);
	struct list_head e1, e2;

	reset_items();
	fill(&head, ID5, 3);
	list_replace(&items[1].node, &items[9].node);
	{
		static const int want[] = { 0, 9, 2 };
		KCHECK(list_is(&head, want, 3));
	}
	/* plain replace leaves the old entry's links as they were */
	KCHECK(items[1].node.next == &items[2].node && items[1].node.prev == &items[0].node);
	list_replace_init(&items[0].node, &items[8].node);
	KCHECK(list_empty(&items[0].node));
	{
		static const int want[] = { 8, 9, 2 };
		KCHECK(list_is(&head, want, 3));
	}
	/* replacing an empty head: the new one becomes an empty head */
	INIT_LIST_HEAD(&e1);
	list_replace(&e1, &e2);
	KCHECK(e2.next == &e2 && e2.prev == &e2);
}

KTEST(swap)
{
	LIST_HEAD(head);
	LIST_HEAD(other);

	reset_items();
	/* neighbours, either order */
	fill(&head, ID5, 5);
	list_swap(&items[1].node, &items[2].node);
	{
		static const int want[] = { 0, 2, 1, 3, 4 };
		KCHECK(list_is(&head, want, 5));
	}
	list_swap(&items[2].node, &items[1].node);
	KCHECK(list_is(&head, ID5, 5));
	/* entry2 before entry1 (neighbours the other way round) */
	list_swap(&items[4].node, &items[3].node);
	{
		static const int want[] = { 0, 1, 2, 4, 3 };
		KCHECK(list_is(&head, want, 5));
	}
	/* the first and the last */
	fill(&head, ID5, 5);
	list_swap(&items[0].node, &items[4].node);
	{
		static const int want[] = { 4, 1, 2, 3, 0 };
		KCHECK(list_is(&head, want, 5));
	}
	/* the only two entries */
	fill(&head, ID5, 2);
	list_swap(&items[0].node, &items[1].node);
	{
		static const int want[] = { 1, 0 };
		KCHECK(list_is(&head, want, 2));
	}
	/* across two lists */
	fill(&head, ID5, 3);
	list_add(&items[7].node, &other);
	list_swap(&items[1].node, &items[7].node);
	{
		static const int want[] = { 0, 7, 2 }, want_other[] = { 1 };
		KCHECK(list_is(&head, want, 3));
		KCHECK(list_is(&other, want_other, 1));
	}
}

KTEST(move_and_bulk_move_tail)
{
	LIST_HEAD(head);
	LIST_HEAD(other);

	reset_items();
	fill(&head, ID5, 5);
	list_move(&items[3].node, &head);
	list_move_tail(&items[0].node, &head);
	{
		static const int want[] = { 3, 1, 2, 4, 0 };
		KCHECK(list_is(&head, want, 5));
	}
	list_move(&items[2].node, &other);
	list_move_tail(&items[4].node, &other);
	{
		static const int want[] = { 3, 1, 0 }, want_other[] = { 2, 4 };
		KCHECK(list_is(&head, want, 3));
		KCHECK(list_is(&other, want_other, 2));
	}

	/* a sub-range from the middle goes to the tail, in order */
	{
		static const int ids[] = { 0, 1, 2, 3, 4, 5, 6 }, want[] = { 0, 4, 5, 6, 1, 2, 3 };
		fill(&head, ids, 7);
		list_bulk_move_tail(&head, &items[1].node, &items[3].node);
		KCHECK(list_is(&head, want, 7));
	}
	/* first == last: one entry */
	{
		static const int want[] = { 0, 2, 3, 4, 1 };
		fill(&head, ID5, 5);
		list_bulk_move_tail(&head, &items[1].node, &items[1].node);
		KCHECK(list_is(&head, want, 5));
	}
	/* a range already at the tail, and the whole list: no change */
	fill(&head, ID5, 5);
	list_bulk_move_tail(&head, &items[2].node, &items[4].node);
	KCHECK(list_is(&head, ID5, 5));
	list_bulk_move_tail(&head, &items[0].node, &items[4].node);
	KCHECK(list_is(&head, ID5, 5));
	/* the leading range */
	{
		static const int want[] = { 2, 3, 4, 0, 1 };
		list_bulk_move_tail(&head, &items[0].node, &items[1].node);
		KCHECK(list_is(&head, want, 5));
	}
}

KTEST(rotate)
{
	LIST_HEAD(head);

	reset_items();
	fill(&head, ID5, 5);
	list_rotate_left(&head);
	{
		static const int want[] = { 1, 2, 3, 4, 0 };
		KCHECK(list_is(&head, want, 5));
	}
	fill(&head, ID5, 5);
	list_rotate_to_front(&items[3].node, &head);
	{
		static const int want[] = { 3, 4, 0, 1, 2 };
		KCHECK(list_is(&head, want, 5));
	}
	/* to the current first: no change; to the last: a rotate right */
	fill(&head, ID5, 5);
	list_rotate_to_front(&items[0].node, &head);
	KCHECK(list_is(&head, ID5, 5));
	list_rotate_to_front(&items[4].node, &head);
	{
		static const int want[] = { 4, 0, 1, 2, 3 };
		KCHECK(list_is(&head, want, 5));
	}
}

KTEST(cut_position)
{
	LIST_HEAD(head);
	LIST_HEAD(cut);

	reset_items();
	/* empty @head: nothing happens, @list is not even touched */
	list_add(&items[9].node, &cut);
	list_cut_position(&cut, &head, &head);
	{
		static const int want[] = { 9 };
		KCHECK(list_is(&cut, want, 1));
	}
	/* @entry == @head: nothing moves, @list is made empty */
	fill(&head, ID5, 5);
	list_cut_position(&cut, &head, &head);
	KCHECK(list_empty(&cut));
	KCHECK(list_is(&head, ID5, 5));
	/* at the first entry */
	list_cut_position(&cut, &head, &items[0].node);
	{
		static const int want_cut[] = { 0 }, want[] = { 1, 2, 3, 4 };
		KCHECK(list_is(&cut, want_cut, 1));
		KCHECK(list_is(&head, want, 4));
	}
	/* in the middle */
	fill(&head, ID5, 5);
	list_cut_position(&cut, &head, &items[2].node);
	{
		static const int want_cut[] = { 0, 1, 2 }, want[] = { 3, 4 };
		KCHECK(list_is(&cut, want_cut, 3));
		KCHECK(list_is(&head, want, 2));
	}
	/* at the last entry: everything moves */
	fill(&head, ID5, 5);
	list_cut_position(&cut, &head, &items[4].node);
	KCHECK(list_is(&cut, ID5, 5));
	KCHECK(list_empty(&head) && list_is(&head, NULL, 0));
	/* singular @head, @entry its entry: it moves */
	fill(&head, ID5, 1);
	list_cut_position(&cut, &head, &items[0].node);
	KCHECK(list_is(&cut, ID5, 1) && list_empty(&head));
	/* singular @head, @entry something else: nothing happens */
	fill(&head, ID5, 1);
	INIT_LIST_HEAD(&cut);
	list_cut_position(&cut, &head, &items[5].node);
	KCHECK(list_is(&head, ID5, 1) && list_empty(&cut));
}

KTEST(cut_before)
{
	LIST_HEAD(head);
	LIST_HEAD(cut);

	reset_items();
	/* empty @head, @entry == @head: @list made empty */
	list_add(&items[9].node, &cut);
	list_cut_before(&cut, &head, &head);
	KCHECK(list_empty(&cut) && list_empty(&head));
	/* @entry the first entry: nothing moves */
	fill(&head, ID5, 5);
	list_cut_before(&cut, &head, &items[0].node);
	KCHECK(list_empty(&cut) && list_is(&head, ID5, 5));
	/* in the middle */
	list_cut_before(&cut, &head, &items[2].node);
	{
		static const int want_cut[] = { 0, 1 }, want[] = { 2, 3, 4 };
		KCHECK(list_is(&cut, want_cut, 2));
		KCHECK(list_is(&head, want, 3));
	}
	/* the last entry: all but it move */
	fill(&head, ID5, 5);
	list_cut_before(&cut, &head, &items[4].node);
	{
		static const int want[] = { 4 };
		KCHECK(list_is(&cut, ID5, 4));
		KCHECK(list_is(&head, want, 1));
	}
	/* @entry == @head: everything moves (unlike list_cut_position) */
	fill(&head, ID5, 5);
	list_cut_before(&cut, &head, &head);
	KCHECK(list_is(&cut, ID5, 5));
	KCHECK(list_empty(&head) && list_is(&head, NULL, 0));
}

KTEST(splice_forms)
{
	LIST_HEAD(head);
	LIST_HEAD(side);

	reset_items();
	fill(&head, ID5, 2);
	list_add_tail(&items[5].node, &side);
	list_add_tail(&items[6].node, &side);
	list_splice_init(&side, &head);
	{
		static const int want[] = { 5, 6, 0, 1 };
		KCHECK(list_is(&head, want, 4));
		KCHECK(list_empty(&side));
	}
	list_add_tail(&items[7].node, &side);
	list_splice_tail_init(&side, &head);
	{
		static const int want[] = { 5, 6, 0, 1, 7 };
		KCHECK(list_is(&head, want, 5));
		KCHECK(list_empty(&side));
	}
}

KTEST(circular_neighbours)
{
	LIST_HEAD(head);

	reset_items();
	fill(&head, ID5, 3);
	KCHECK(list_next_entry_circular(&items[0], &head, node) == &items[1]);
	KCHECK(list_next_entry_circular(&items[2], &head, node) == &items[0]);
	KCHECK(list_prev_entry_circular(&items[0], &head, node) == &items[2]);
	KCHECK(list_prev_entry_circular(&items[2], &head, node) == &items[1]);
}

/* Collect the ids a walk visits into @out, for comparison. */
#define COLLECT(out, n, id) ((out)[(n)++] = (id))

KTEST(link_walkers)
{
	LIST_HEAD(head);
	struct list_head *p, *n;
	int seen[N], k;

	reset_items();
	fill(&head, ID5, 5);
	/* continue from a mid-list link */
	p = &items[1].node;
	k = 0;
	list_for_each_continue(p, &head) COLLECT(seen, k, list_entry(p, struct item, node)->id);
	{
		static const int want[] = { 2, 3, 4 };
		KCHECK(k == 3 && memcmp(seen, want, sizeof(want)) == 0);
	}
	KCHECK(p == &head);
	/* continue from the head: the whole list */
	k = 0;
	list_for_each_continue(p, &head) k++;
	KCHECK_EQ(k, 5);
	/* backwards, deleting every entry as we go */
	k = 0;
	list_for_each_prev_safe(p, n, &head) {
		COLLECT(seen, k, list_entry(p, struct item, node)->id);
		list_del(p);
	}
	{
		static const int want[] = { 4, 3, 2, 1, 0 };
		KCHECK(k == 5 && memcmp(seen, want, sizeof(want)) == 0);
	}
	KCHECK(list_empty(&head));
	/* forwards, deleting every other entry */
	fill(&head, ID5, 5);
	list_for_each_safe(p, n, &head) {
		if (list_entry(p, struct item, node)->id % 2)
			list_del_init(p);
	}
	{
		static const int want[] = { 0, 2, 4 };
		KCHECK(list_is(&head, want, 3));
	}
}

KTEST(entry_walkers_from_and_continue)
{
	LIST_HEAD(head);
	struct item *pos;
	int seen[N], k;

	reset_items();
	fill(&head, ID5, 5);

	pos = &items[2];
	k = 0;
	list_for_each_entry_from(pos, &head, node) COLLECT(seen, k, pos->id);
	{
		static const int want[] = { 2, 3, 4 };
		KCHECK(k == 3 && memcmp(seen, want, sizeof(want)) == 0);
	}
	KCHECK(list_entry_is_head(pos, &head, node));
	/* from the head's fake entry: nothing at all */
	k = 0;
	list_for_each_entry_from(pos, &head, node) k++;
	KCHECK_EQ(k, 0);

	pos = &items[2];
	k = 0;
	list_for_each_entry_from_reverse(pos, &head, node) COLLECT(seen, k, pos->id);
	{
		static const int want[] = { 2, 1, 0 };
		KCHECK(k == 3 && memcmp(seen, want, sizeof(want)) == 0);
	}

	pos = &items[2];
	k = 0;
	list_for_each_entry_continue(pos, &head, node) COLLECT(seen, k, pos->id);
	{
		static const int want[] = { 3, 4 };
		KCHECK(k == 2 && memcmp(seen, want, sizeof(want)) == 0);
	}

	pos = &items[2];
	k = 0;
	list_for_each_entry_continue_reverse(pos, &head, node) COLLECT(seen, k, pos->id);
	{
		static const int want[] = { 1, 0 };
		KCHECK(k == 2 && memcmp(seen, want, sizeof(want)) == 0);
	}
	/* continuing from the last entry visits nothing */
	pos = &items[4];
	k = 0;
	list_for_each_entry_continue(pos, &head, node) k++;
	KCHECK_EQ(k, 0);

	/*
	 * list_prepare_entry(): NULL continues from the start, an entry after
	 * itself. (Hidden from the optimiser: with a NULL it can see, gcc -O3
	 * warns, -Warray-bounds, about the head's fake entry, as it would in
	 * the kernel.)
	 */
	pos = NULL;
	__asm__("" : "+r"(pos));
	pos = list_prepare_entry(pos, &head, node);
	k = 0;
	list_for_each_entry_continue(pos, &head, node) k++;
	KCHECK_EQ(k, 5);
	pos = &items[3];
	pos = list_prepare_entry(pos, &head, node);
	KCHECK(pos == &items[3]);
	k = 0;
	list_for_each_entry_continue(pos, &head, node) COLLECT(seen, k, pos->id);
	KCHECK(k == 1 && seen[0] == 4);
}

KTEST(entry_walkers_safe)
{
	LIST_HEAD(head);
	struct item *pos, *n;
	int seen[N], k;

	reset_items();
	/* reverse, deleting everything */
	fill(&head, ID5, 5);
	k = 0;
	list_for_each_entry_safe_reverse(pos, n, &head, node) {
		COLLECT(seen, k, pos->id);
		list_del(&pos->node);
	}
	{
		static const int want[] = { 4, 3, 2, 1, 0 };
		KCHECK(k == 5 && memcmp(seen, want, sizeof(want)) == 0);
		KCHECK(list_empty(&head));
	}
	/* forward, deleting everything */
	fill(&head, ID5, 5);
	k = 0;
	list_for_each_entry_safe(pos, n, &head, node) {
		COLLECT(seen, k, pos->id);
		list_del(&pos->node);
	}
	KCHECK(k == 5 && memcmp(seen, ID5, sizeof(ID5)) == 0 && list_empty(&head));
	/* safe_continue: from after a mid-list entry, deleting as it goes */
	fill(&head, ID5, 5);
	pos = &items[1];
	k = 0;
	list_for_each_entry_safe_continue(pos, n, &head, node) {
		COLLECT(seen, k, pos->id);
		list_del(&pos->node);
	}
	{
		static const int want_seen[] = { 2, 3, 4 }, want[] = { 0, 1 };
		KCHECK(k == 3 && memcmp(seen, want_seen, sizeof(want_seen)) == 0);
		KCHECK(list_is(&head, want, 2));
	}
	/* safe_from: from a mid-list entry itself, deleting as it goes */
	fill(&head, ID5, 5);
	pos = &items[3];
	k = 0;
	list_for_each_entry_safe_from(pos, n, &head, node) {
		COLLECT(seen, k, pos->id);
		list_del_init(&pos->node);
	}
	{
		static const int want_seen[] = { 3, 4 }, want[] = { 0, 1, 2 };
		KCHECK(k == 2 && memcmp(seen, want_seen, sizeof(want_seen)) == 0);
		KCHECK(list_is(&head, want, 3));
	}
	/*
	 * list_safe_reset_next(): the body deletes the lookahead too (as a
	 * concurrent deleter would while the lock was dropped); reloading @n
	 * from the cursor keeps the walk on the list.
	 */
	fill(&head, ID5, 5);
	k = 0;
	list_for_each_entry_safe(pos, n, &head, node) {
		COLLECT(seen, k, pos->id);
		if (pos->id == 1) {
			list_del(&n->node); /* deletes 2, the lookahead */
			list_safe_reset_next(pos, n, node);
		}
	}
	{
		static const int want_seen[] = { 0, 1, 3, 4 };
		KCHECK(k == 4 && memcmp(seen, want_seen, sizeof(want_seen)) == 0);
	}
}

/* ------------------------------------------------------------------------ */
/* Random sequences against an array                                        */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static unsigned rnd(unsigned n)
{
	return (unsigned)(kt_xorshift64s(&rng_state) % n);
}

struct model {
	int ids[N];
	int n;
};

static void model_insert(struct model *m, int at, int id)
{
	memmove(&m->ids[at + 1], &m->ids[at], (size_t)(m->n - at) * sizeof(int));
	m->ids[at] = id;
	m->n++;
}

static int model_remove(struct model *m, int at)
{
	int id = m->ids[at];

	memmove(&m->ids[at], &m->ids[at + 1], (size_t)(m->n - at - 1) * sizeof(int));
	m->n--;
	return id;
}

static int model_find(const struct model *m, int id)
{
	for (int i = 0; i < m->n; i++)
		if (m->ids[i] == id)
			return i;
	return -1;
}

KTEST(random_sequences_match_array)
{
	LIST_HEAD(head);
	struct model m;
	int on[N];

	reset_items();
	m.n = 0;
	memset(on, 0, sizeof(on));
	for (int step = 0; step < 20000; step++) {
		int op = (int)rnd(12);
		int id = (int)rnd(N);

		if (!on[id]) { /* insert it somewhere */
			if (m.n == 0 || op % 3 == 0) {
				list_add(&items[id].node, &head);
				model_insert(&m, 0, id);
			} else if (op % 3 == 1) {
				list_add_tail(&items[id].node, &head);
				model_insert(&m, m.n, id);
			} else { /* after a random entry */
				int at = (int)rnd((unsigned)m.n);
				list_add(&items[id].node, &items[m.ids[at]].node);
				model_insert(&m, at + 1, id);
			}
			on[id] = 1;
		} else {
			int at = model_find(&m, id);
			switch (op) {
			case 0:
				list_del(&items[id].node);
				model_remove(&m, at);
				on[id] = 0;
				break;
			case 1:
				list_del_init(&items[id].node);
				KCHECK(list_empty(&items[id].node));
				model_remove(&m, at);
				on[id] = 0;
				break;
			case 2:
				list_move(&items[id].node, &head);
				model_remove(&m, at);
				model_insert(&m, 0, id);
				break;
			case 3:
				list_move_tail(&items[id].node, &head);
				model_remove(&m, at);
				model_insert(&m, m.n, id);
				break;
			case 4: {
				int first = m.ids[0];
				list_rotate_left(&head);
				model_remove(&m, 0);
				model_insert(&m, m.n, first);
				break;
			}
			case 5: { /* rotate to front */
				int tmp[N];
				list_rotate_to_front(&items[id].node, &head);
				for (int i = 0; i < m.n; i++)
					tmp[i] = m.ids[(at + i) % m.n];
				memcpy(m.ids, tmp, (size_t)m.n * sizeof(int));
				break;
			}
			case 6: { /* swap with another entry */
				int at2 = (int)rnd((unsigned)m.n);
				if (at2 == at)
					break;
				list_swap(&items[id].node, &items[m.ids[at2]].node);
				m.ids[at] = m.ids[at2];
				m.ids[at2] = id;
				break;
			}
			case 7: { /* bulk move of the run at..last to the tail */
				int last = at + (int)rnd((unsigned)(m.n - at));
				int tmp[N], k = 0;
				list_bulk_move_tail(&head, &items[id].node, &items[m.ids[last]].node);
				for (int i = 0; i < m.n; i++)
					if (i < at || i > last)
						tmp[k++] = m.ids[i];
				for (int i = at; i <= last; i++)
					tmp[k++] = m.ids[i];
				memcpy(m.ids, tmp, (size_t)m.n * sizeof(int));
				break;
			}
			case 8: { /* cut up to and including it, splice back at the tail */
				LIST_HEAD(cut);
				int tmp[N], k = 0;
				list_cut_position(&cut, &head, &items[id].node);
				KCHECK(list_is(&cut, m.ids, at + 1));
				list_splice_tail(&cut, &head);
				for (int i = at + 1; i < m.n; i++)
					tmp[k++] = m.ids[i];
				for (int i = 0; i <= at; i++)
					tmp[k++] = m.ids[i];
				memcpy(m.ids, tmp, (size_t)m.n * sizeof(int));
				break;
			}
			case 9: { /* cut before it, splice back at the tail */
				LIST_HEAD(cut);
				int tmp[N], k = 0;
				list_cut_before(&cut, &head, &items[id].node);
				KCHECK(list_is(&cut, m.ids, at));
				list_splice_tail_init(&cut, &head);
				KCHECK(list_empty(&cut));
				for (int i = at; i < m.n; i++)
					tmp[k++] = m.ids[i];
				for (int i = 0; i < at; i++)
					tmp[k++] = m.ids[i];
				memcpy(m.ids, tmp, (size_t)m.n * sizeof(int));
				break;
			}
			case 10: { /* replace it with a free item */
				int free_id = -1;
				for (int i = 0; i < N; i++)
					if (!on[i])
						free_id = i;
				if (free_id < 0)
					break;
				list_replace_init(&items[id].node, &items[free_id].node);
				KCHECK(list_empty(&items[id].node));
				m.ids[at] = free_id;
				on[id] = 0;
				on[free_id] = 1;
				break;
			}
			default: /* position checks only */
				KCHECK(list_is_first(&items[id].node, &head) == (at == 0));
				KCHECK(list_is_last(&items[id].node, &head) == (at == m.n - 1));
				break;
			}
		}
		if (!list_is(&head, m.ids, m.n)) {
			KCHECK(!"list and array model differ");
			break;
		}
		KCHECK(list_empty(&head) == (m.n == 0));
		KCHECK(list_is_singular(&head) == (m.n == 1));
	}
}

/* ------------------------------------------------------------------------ */
/* The ordering pairs, across threads                                       */

struct pub {
	long payload;
	struct list_head node;
};

#define NPUB 2000
static struct pub pubs[NPUB];
static struct list_head pub_head;

static void *publisher(void *arg)
{
	(void)arg;
	for (int i = 0; i < NPUB; i++) {
		pubs[i].payload = 1000 + i; /* before publication */
		list_add_tail_release(&pubs[i].node, &pub_head);
	}
	return NULL;
}

KTEST(add_tail_release_pairs_with_first_entry_acquire)
{
	pthread_t t;
	struct pub *first;
	struct list_head *p;
	int seen = 0;

	INIT_LIST_HEAD(&pub_head);
	KASSERT(pthread_create(&t, NULL, publisher, NULL) == 0);
	/* wait for the first, then walk forwards with acquire loads of ->next */
	while (!(first = list_first_entry_or_null_acquire(&pub_head, struct pub, node)))
		;
	KCHECK_EQ(first->payload, 1000);
	p = &first->node;
	while (seen < NPUB) {
		struct pub *e = list_entry(p, struct pub, node);
		struct list_head *next;

		KCHECK_EQ(e->payload, 1000 + seen);
		seen++;
		if (seen == NPUB)
			break;
		while ((next = smp_load_acquire(&p->next)) == &pub_head)
			;
		p = next;
	}
	pthread_join(t, NULL);
	KCHECK_EQ(list_count_nodes(&pub_head), NPUB);
}

static struct item careful_item;
static long careful_data;

static void *careful_deleter(void *arg)
{
	(void)arg;
	careful_data = 42; /* before the delete */
	list_del_init_careful(&careful_item.node);
	return NULL;
}

KTEST(del_init_careful_pairs_with_empty_careful)
{
	LIST_HEAD(head);
	pthread_t t;

	for (int round = 0; round < 200; round++) {
		careful_data = 0;
		list_add(&careful_item.node, &head);
		KASSERT(pthread_create(&t, NULL, careful_deleter, NULL) == 0);
		while (!list_empty_careful(&careful_item.node))
			;
		/* the store before the delete is visible once it looks empty */
		KCHECK_EQ(careful_data, 42);
		pthread_join(t, NULL);
		KCHECK(list_empty(&head));
	}
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
