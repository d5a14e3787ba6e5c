/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * list.h: a model-based test. Random operation sequences run on a ksync list
 * and on a plain array holding the expected order; after every step the list
 * is walked forwards and backwards and compared with the array.
 */
#include <ksync/list.h>

#include <stdlib.h>

#include "ktest.h"

#define N 64

struct node {
	int id;
	int on_list;
	struct ksync_list_head link;
};

static struct node nodes[N];
static int model[N * 2];
static int model_len;

static void model_insert(int pos, int id)
{
	memmove(&model[pos + 1], &model[pos], (size_t)(model_len - pos) * sizeof(int));
	model[pos] = id;
	model_len++;
}

static int model_find(int id)
{
	for (int i = 0; i < model_len; i++)
		if (model[i] == id)
			return i;
	return -1;
}

static void model_remove(int pos)
{
	memmove(&model[pos], &model[pos + 1], (size_t)(model_len - pos - 1) * sizeof(int));
	model_len--;
}

static int same_as_model(struct ksync_list_head *head)
{
	struct node *pos;
	int i = 0;

	ksync_list_for_each_entry(pos, head, link) {
		if (i >= model_len || model[i] != pos->id)
			return 0;
		i++;
	}
	if (i != model_len)
		return 0;
	ksync_list_for_each_entry_reverse(pos, head, link) {
		if (model[--i] != pos->id)
			return 0;
	}
	if (ksync_list_empty(head) != (model_len == 0))
		return 0;
	if (ksync_list_is_singular(head) != (model_len == 1))
		return 0;
	return 1;
}

KTEST(random_operations_match_model)
{
	KSYNC_LIST_HEAD(head);
	KSYNC_LIST_HEAD(other);
	unsigned seed = 12345;
	int failures = 0;

	for (int i = 0; i < N; i++)
		nodes[i].id = i;
	for (int step = 0; step < 20000; step++) {
		int id = rand_r(&seed) % N;
		struct node *n = &nodes[id];
		int op = rand_r(&seed) % 7;

		if (!n->on_list) {
			if (op & 1) {
				ksync_list_add(&n->link, &head);
				model_insert(0, id);
			} else {
				ksync_list_add_tail(&n->link, &head);
				model_insert(model_len, id);
			}
			n->on_list = 1;
		} else if (op == 0) {
			ksync_list_del(&n->link);
			model_remove(model_find(id));
			n->on_list = 0;
		} else if (op == 1) {
			ksync_list_del_init(&n->link);
			KCHECK(ksync_list_empty(&n->link));
			model_remove(model_find(id));
			n->on_list = 0;
		} else if (op == 2) {
			ksync_list_move(&n->link, &head);
			model_remove(model_find(id));
			model_insert(0, id);
		} else if (op == 3) {
			ksync_list_move_tail(&n->link, &head);
			model_remove(model_find(id));
			model_insert(model_len, id);
		} else if (op == 4) {
			/* replace n by a free node, if any */
			int j = rand_r(&seed) % N;
			if (!nodes[j].on_list) {
				ksync_list_replace(&n->link, &nodes[j].link);
				model[model_find(id)] = j;
				nodes[j].on_list = 1;
				n->on_list = 0;
			}
		} else if (op == 5 && model_len > 2) {
			/* Move the first half to `other`, then splice it back at the tail or head. */
			int half = model_len / 2, moved[N];
			for (int k = 0; k < half; k++) {
				struct node *f = ksync_list_first_entry(&head, struct node, link);
				moved[k] = f->id;
				ksync_list_move_tail(&f->link, &other);
			}
			memmove(model, model + half, (size_t)(model_len - half) * sizeof(int));
			model_len -= half;
			if (rand_r(&seed) & 1) {
				ksync_list_splice_tail_init(&other, &head);
				for (int k = 0; k < half; k++)
					model_insert(model_len, moved[k]);
			} else {
				ksync_list_splice_init(&other, &head);
				for (int k = half - 1; k >= 0; k--)
					model_insert(0, moved[k]);
			}
			KCHECK(ksync_list_empty(&other));
		}
		if (!same_as_model(&head) && failures++ < 5)
			KCHECK(!"list differs from the model");
	}
	KCHECK_EQ(failures, 0);
}

/* The kernel's edge cases: splicing an empty list, splice without init, replace_init. */
KTEST(splice_and_replace_edges)
{
	KSYNC_LIST_HEAD(head);
	KSYNC_LIST_HEAD(empty);
	KSYNC_LIST_HEAD(src);
	struct node a = { .id = 1 }, b = { .id = 2 }, c = { .id = 3 }, *pos;
	int ids[4], k = 0;

	ksync_list_add_tail(&a.link, &head);
	ksync_list_splice(&empty, &head);	/* no-op: head untouched */
	ksync_list_splice_tail(&empty, &head);
	KCHECK(head.next == &a.link && head.prev == &a.link);
	KCHECK(ksync_list_is_singular(&head));
	KCHECK(ksync_list_empty(&empty));
	ksync_list_add_tail(&b.link, &src);
	ksync_list_splice(&src, &head);		/* b a */
	KCHECK(!ksync_list_is_singular(&head));
	ksync_list_replace_init(&b.link, &c.link); /* c a */
	KCHECK(ksync_list_empty(&b.link));
	ksync_list_for_each_entry_reverse(pos, &head, link)
		ids[k++] = pos->id;
	KCHECK_EQ(k, 2);
	KCHECK(ids[0] == 1 && ids[1] == 3);
	KCHECK(ksync_list_first_entry_or_null(&head, struct node, link) == &c);
	ksync_list_del_init(&c.link);
	ksync_list_del_init(&a.link);
	KCHECK(ksync_list_first_entry_or_null(&head, struct node, link) == NULL);
}

KTEST(safe_iteration_deletes)
{
	KSYNC_LIST_HEAD(head);
	struct node *pos, *tmp;
	int count = 0;

	for (int i = 0; i < N; i++) {
		nodes[i].id = i;
		ksync_list_add_tail(&nodes[i].link, &head);
	}
	ksync_list_for_each_entry_safe(pos, tmp, &head, link) {
		if (pos->id % 2)
			ksync_list_del(&pos->link);
	}
	ksync_list_for_each_entry(pos, &head, link) {
		KCHECK(pos->id % 2 == 0);
		count++;
	}
	KCHECK_EQ(count, N / 2);
	struct ksync_list_head *p, *n;
	ksync_list_for_each_safe(p, n, &head)
		ksync_list_del_init(p);
	KCHECK(ksync_list_empty(&head));
	KCHECK(ksync_list_first_entry_or_null(&head, struct node, link) == NULL);
	ksync_list_add(&nodes[3].link, &head);
	KCHECK(ksync_list_first_entry_or_null(&head, struct node, link) == &nodes[3]);
	KCHECK(ksync_list_last_entry(&head, struct node, link) == &nodes[3]);
	KCHECK(ksync_list_is_last(&nodes[3].link, &head));
}

#if KSYNC_DEBUG_ENABLED
KTEST(debug_build_poisons_deleted_entries)
{
	KSYNC_LIST_HEAD(head);
	ksync_list_add(&nodes[0].link, &head);
	ksync_list_del(&nodes[0].link);
	KCHECK(nodes[0].link.next == KSYNC_LIST_POISON1);
	KCHECK(nodes[0].link.prev == KSYNC_LIST_POISON2);
}
#endif

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
