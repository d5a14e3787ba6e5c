/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's hash list (struct hlist_head/hlist_node, in <linux/list.h>)
 * under its kernel spellings, against the kernel's documented semantics:
 * hlist_del() poisons and leaves the node hashed, hlist_del_init() leaves it
 * unhashed (and does nothing to an unhashed node), add_before/add_behind at
 * the first and the last node keep every pprev right, fake lists, moves and
 * splices, and the walkers (including the _safe ones deleting as they go and
 * the continue/from ones starting mid-list, plain and RCU). Random
 * sequences are cross-checked against an array. Built as C and C++, on both
 * atomics back-ends.
 */
#include <ksync/linux/list.h>
#include <ksync/linux/rculist.h>

#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

#define N 16

struct obj {
	int id;
	struct hlist_node hn;
};

static struct obj objs[N];

static void reset_objs(void)
{
	for (int i = 0; i < N; i++) {
		objs[i].id = i;
		INIT_HLIST_NODE(&objs[i].hn);
	}
}

/*
 * Whether @h holds exactly objs[@ids[0..@n-1]] in order, every pprev
 * pointing at the link that points at its node, and hlist_count_nodes()
 * agreeing.
 */
static int hlist_is(struct hlist_head *h, const int *ids, int n)
{
	struct hlist_node *p, **link = &h->first;
	int i = 0;

	hlist_for_each(p, h) {
		if (i >= n || hlist_entry(p, struct obj, hn)->id != ids[i])
			return 0;
		if (p->pprev != link || *p->pprev != p || hlist_unhashed(p))
			return 0;
		link = &p->next;
		i++;
	}
	return i == n && *link == NULL && hlist_count_nodes(h) == (size_t)n &&
	       hlist_empty(h) == (n == 0);
}

static void fill(struct hlist_head *h, const int *ids, int n)
{
	INIT_HLIST_HEAD(h);
	for (int i = n - 1; i >= 0; i--)
		hlist_add_head(&objs[ids[i]].hn, h);
}

static const int ID5[] = { 0, 1, 2, 3, 4 };

KTEST(init_and_empty)
{
	HLIST_HEAD(h);
	struct hlist_head h2 = HLIST_HEAD_INIT;
	struct hlist_head h3;
	struct obj *pos = &objs[0];
	struct hlist_node *p;
	int visits = 0;

	reset_objs();
	INIT_HLIST_HEAD(&h3);
	KCHECK(hlist_empty(&h) && hlist_empty(&h2) && hlist_empty(&h3));
	KCHECK(h.first == NULL);
	KCHECK_EQ(hlist_count_nodes(&h), 0);
	KCHECK(hlist_unhashed(&objs[0].hn) && hlist_unhashed_lockless(&objs[0].hn));
	KCHECK(objs[0].hn.next == NULL && objs[0].hn.pprev == NULL);
	KCHECK(!hlist_fake(&objs[0].hn));
	hlist_for_each(p, &h) visits++;
	hlist_for_each_entry(pos, &h, hn) visits++;
	KCHECK_EQ(visits, 0);
	KCHECK(pos == NULL); /* the cursor of a finished walk is NULL */
	KCHECK(hlist_entry_safe((struct hlist_node *)NULL, struct obj, hn) == NULL);
	KCHECK(hlist_entry_safe(&objs[3].hn, struct obj, hn) == &objs[3]);
}

KTEST(add_head_order_and_links)
{
	HLIST_HEAD(h);

	reset_objs();
	hlist_add_head(&objs[2].hn, &h);
	KCHECK(objs[2].hn.pprev == &h.first && objs[2].hn.next == NULL);
	KCHECK(hlist_is_singular_node(&objs[2].hn, &h));
	hlist_add_head(&objs[1].hn, &h);
	hlist_add_head(&objs[0].hn, &h); /* a stack: the last added is first */
	KCHECK(hlist_is(&h, ID5, 3));
	KCHECK(!hlist_unhashed(&objs[0].hn) && !hlist_unhashed_lockless(&objs[1].hn));
	KCHECK(!hlist_empty(&h));
	KCHECK(hlist_entry(h.first, struct obj, hn) == &objs[0]);
}

KTEST(add_before_and_behind_at_the_ends)
{
	HLIST_HEAD(h);

	reset_objs();
	fill(&h, ID5, 3); /* 0 1 2 */
	/* before the first node: becomes the first, the head's pointer follows */
	hlist_add_before(&objs[5].hn, &objs[0].hn);
	KCHECK(h.first == &objs[5].hn && objs[5].hn.pprev == &h.first);
	{
		static const int want[] = { 5, 0, 1, 2 };
		KCHECK(hlist_is(&h, want, 4));
	}
	/* behind the last node: its next is NULL */
	hlist_add_behind(&objs[6].hn, &objs[2].hn);
	KCHECK(objs[6].hn.next == NULL && objs[6].hn.pprev == &objs[2].hn.next);
	{
		static const int want[] = { 5, 0, 1, 2, 6 };
		KCHECK(hlist_is(&h, want, 5));
	}
	/* before the last and behind the first: mid-list */
	hlist_add_before(&objs[7].hn, &objs[6].hn);
	hlist_add_behind(&objs[8].hn, &objs[5].hn);
	{
		static const int want[] = { 5, 8, 0, 1, 2, 7, 6 };
		KCHECK(hlist_is(&h, want, 7));
	}
	/* on a one-node list, both ways */
	fill(&h, ID5, 1);
	hlist_add_behind(&objs[9].hn, &objs[0].hn);
	hlist_add_before(&objs[10].hn, &objs[0].hn);
	{
		static const int want[] = { 10, 0, 9 };
		KCHECK(hlist_is(&h, want, 3));
	}
}

KTEST(del_poisons_and_stays_hashed)
{
	HLIST_HEAD(h);

	reset_objs();
	fill(&h, ID5, 5);
	/* the middle */
	hlist_del(&objs[2].hn);
	KCHECK(objs[2].hn.next == LIST_POISON1);
	KCHECK(objs[2].hn.pprev == LIST_POISON2);
	KCHECK(!hlist_unhashed(&objs[2].hn)); /* the kernel: hlist_del leaves it hashed */
	{
		static const int want[] = { 0, 1, 3, 4 };
		KCHECK(hlist_is(&h, want, 4));
	}
	/* the first: the head's pointer moves on */
	hlist_del(&objs[0].hn);
	KCHECK(h.first == &objs[1].hn && objs[1].hn.pprev == &h.first);
	/* the last */
	hlist_del(&objs[4].hn);
	{
		static const int want[] = { 1, 3 };
		KCHECK(hlist_is(&h, want, 2));
	}
	hlist_del(&objs[1].hn);
	hlist_del(&objs[3].hn);
	KCHECK(hlist_empty(&h) && hlist_is(&h, NULL, 0));
}

KTEST(del_init_leaves_unhashed)
{
	HLIST_HEAD(h);

	reset_objs();
	fill(&h, ID5, 3);
	hlist_del_init(&objs[1].hn);
	KCHECK(hlist_unhashed(&objs[1].hn));
	KCHECK(objs[1].hn.next == NULL && objs[1].hn.pprev == NULL);
	{
		static const int want[] = { 0, 2 };
		KCHECK(hlist_is(&h, want, 2));
	}
	/* on an unhashed node: nothing happens */
	hlist_del_init(&objs[1].hn);
	hlist_del_init(&objs[9].hn);
	KCHECK(hlist_unhashed(&objs[1].hn) && hlist_unhashed(&objs[9].hn));
	{
		static const int want[] = { 0, 2 };
		KCHECK(hlist_is(&h, want, 2));
	}
	/* the only node */
	hlist_del_init(&objs[0].hn);
	hlist_del_init(&objs[2].hn);
	KCHECK(hlist_empty(&h));
	/* a deleted node can be added again */
	hlist_add_head(&objs[2].hn, &h);
	{
		static const int want[] = { 2 };
		KCHECK(hlist_is(&h, want, 1));
	}
}

KTEST(singular_node)
{
	HLIST_HEAD(h);
	HLIST_HEAD(other);

	reset_objs();
	hlist_add_head(&objs[0].hn, &h);
	KCHECK(hlist_is_singular_node(&objs[0].hn, &h));
	KCHECK(!hlist_is_singular_node(&objs[0].hn, &other));
	hlist_add_head(&objs[1].hn, &h);
	KCHECK(!hlist_is_singular_node(&objs[0].hn, &h)); /* last, not first */
	KCHECK(!hlist_is_singular_node(&objs[1].hn, &h)); /* first, not last */
	KCHECK(!hlist_is_singular_node(&objs[5].hn, &h)); /* unhashed */
}

KTEST(fake_lists)
{
	reset_objs();
	KCHECK(!hlist_fake(&objs[0].hn));
	hlist_add_fake(&objs[0].hn);
	KCHECK(hlist_fake(&objs[0].hn));
	KCHECK(!hlist_unhashed(&objs[0].hn)); /* counts as hashed */
	/* deleting it touches nothing but the node itself */
	hlist_del_init(&objs[0].hn);
	KCHECK(hlist_unhashed(&objs[0].hn) && !hlist_fake(&objs[0].hn));
	hlist_add_fake(&objs[1].hn);
	hlist_del(&objs[1].hn);
	KCHECK(objs[1].hn.next == LIST_POISON1 && objs[1].hn.pprev == LIST_POISON2);
}

KTEST(move_list_and_splice)
{
	HLIST_HEAD(a);
	HLIST_HEAD(b);

	reset_objs();
	fill(&a, ID5, 3);
	hlist_move_list(&a, &b);
	KCHECK(hlist_empty(&a));
	KCHECK(hlist_is(&b, ID5, 3)); /* the first node's pprev now points into b */
	/* moving an empty list empties the destination's pointer */
	hlist_move_list(&a, &b);
	KCHECK(hlist_empty(&b) && hlist_empty(&a));

	/* splice into an empty list */
	fill(&a, ID5, 3);
	hlist_splice_init(&a, &objs[2].hn, &b);
	KCHECK(hlist_empty(&a) && hlist_is(&b, ID5, 3));
	/* splice in front of existing nodes */
	{
		static const int src[] = { 7, 8 }, want[] = { 7, 8, 0, 1, 2 };
		fill(&a, src, 2);
		hlist_splice_init(&a, &objs[8].hn, &b);
		KCHECK(hlist_empty(&a) && hlist_is(&b, want, 5));
	}
}

#define COLLECT(out, n, id) ((out)[(n)++] = (id))

KTEST(walkers)
{
	HLIST_HEAD(h);
	struct hlist_node *p, *n;
	struct obj *pos;
	int seen[N], k;

	reset_objs();
	fill(&h, ID5, 5);
	k = 0;
	hlist_for_each_entry(pos, &h, hn) COLLECT(seen, k, pos->id);
	KCHECK(k == 5 && memcmp(seen, ID5, sizeof(ID5)) == 0 && pos == NULL);

	/* continue: after a mid-list entry; from: that entry itself */
	pos = &objs[2];
	k = 0;
	hlist_for_each_entry_continue(pos, hn) COLLECT(seen, k, pos->id);
	KCHECK(k == 2 && seen[0] == 3 && seen[1] == 4 && pos == NULL);
	pos = &objs[4];
	k = 0;
	hlist_for_each_entry_continue(pos, hn) k++;
	KCHECK_EQ(k, 0);
	pos = &objs[2];
	k = 0;
	hlist_for_each_entry_from(pos, hn) COLLECT(seen, k, pos->id);
	KCHECK(k == 3 && seen[0] == 2 && seen[2] == 4);
	pos = NULL;
	k = 0;
	hlist_for_each_entry_from(pos, hn) k++;
	KCHECK_EQ(k, 0);

	/* _safe on nodes: delete every other one */
	hlist_for_each_safe(p, n, &h) {
		if (hlist_entry(p, struct obj, hn)->id % 2)
			hlist_del(p);
	}
	{
		static const int want[] = { 0, 2, 4 };
		KCHECK(hlist_is(&h, want, 3));
	}
	/* _safe on entries: delete all of them */
	k = 0;
	hlist_for_each_entry_safe(pos, n, &h, hn) {
		COLLECT(seen, k, pos->id);
		hlist_del_init(&pos->hn);
	}
	KCHECK(k == 3 && seen[0] == 0 && seen[1] == 2 && seen[2] == 4);
	KCHECK(hlist_empty(&h) && pos == NULL);
}

KTEST(rcu_walkers_single_threaded)
{
	HLIST_HEAD(h);
	LIST_HEAD(lh);
	struct list_head links[3];
	struct list_head *lp;
	struct obj *pos;
	int seen[N], k;

	reset_objs();
	for (int i = 4; i >= 0; i--)
		hlist_add_head_rcu(&objs[i].hn, &h);
	KCHECK(hlist_is(&h, ID5, 5));
	k = 0;
	hlist_for_each_entry_rcu(pos, &h, hn, true) COLLECT(seen, k, pos->id);
	KCHECK(k == 5 && memcmp(seen, ID5, sizeof(ID5)) == 0);
	pos = &objs[1];
	k = 0;
	hlist_for_each_entry_continue_rcu(pos, hn) COLLECT(seen, k, pos->id);
	KCHECK(k == 3 && seen[0] == 2 && seen[2] == 4 && pos == NULL);
	pos = &objs[3];
	k = 0;
	hlist_for_each_entry_from_rcu(pos, hn) COLLECT(seen, k, pos->id);
	KCHECK(k == 2 && seen[0] == 3 && seen[1] == 4);
	/* hlist_del_rcu keeps ->next for a reader standing on the node */
	hlist_del_rcu(&objs[2].hn);
	KCHECK(objs[2].hn.next == &objs[3].hn && objs[2].hn.pprev == LIST_POISON2);
	pos = &objs[2];
	k = 0;
	hlist_for_each_entry_continue_rcu(pos, hn) k++;
	KCHECK_EQ(k, 2);

	/* list_for_each_rcu (the kernel spells it in <linux/list.h>) */
	for (int i = 0; i < 3; i++)
		list_add_tail_rcu(&links[i], &lh);
	k = 0;
	list_for_each_rcu(lp, &lh) {
		KCHECK(lp == &links[k]);
		k++;
	}
	KCHECK_EQ(k, 3);
}

/* ------------------------------------------------------------------------ */
/* Random sequences against an array                                        */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static unsigned rnd(unsigned n)
{
	return (unsigned)(kt_xorshift64s(&rng_state) % n);
}

KTEST(random_sequences_match_array)
{
	HLIST_HEAD(h);
	int ids[N], n = 0, on[N];

	reset_objs();
	memset(on, 0, sizeof(on));
	for (int step = 0; step < 20000; step++) {
		int id = (int)rnd(N), op = (int)rnd(6);

		if (!on[id]) {
			int at = n ? (int)rnd((unsigned)n) : 0;
			if (n == 0 || op < 2) {
				hlist_add_head(&objs[id].hn, &h);
				at = 0;
			} else if (op < 4) {
				hlist_add_before(&objs[id].hn, &objs[ids[at]].hn);
			} else {
				hlist_add_behind(&objs[id].hn, &objs[ids[at]].hn);
				at++;
			}
			memmove(&ids[at + 1], &ids[at], (size_t)(n - at) * sizeof(int));
			ids[at] = id;
			n++;
			on[id] = 1;
			KCHECK(!hlist_unhashed(&objs[id].hn));
		} else {
			int at = 0;
			while (ids[at] != id)
				at++;
			KCHECK(hlist_is_singular_node(&objs[id].hn, &h) == (n == 1));
			if (op < 3) {
				hlist_del(&objs[id].hn);
				KCHECK(!hlist_unhashed(&objs[id].hn));
				INIT_HLIST_NODE(&objs[id].hn);
			} else {
				hlist_del_init(&objs[id].hn);
				KCHECK(hlist_unhashed(&objs[id].hn));
			}
			memmove(&ids[at], &ids[at + 1], (size_t)(n - at - 1) * sizeof(int));
			n--;
			on[id] = 0;
		}
		if (!hlist_is(&h, ids, n)) {
			KCHECK(!"hash list and array model differ");
			break;
		}
	}
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
