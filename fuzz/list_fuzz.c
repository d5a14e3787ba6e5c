/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/list_fuzz.c - lists (plain and RCU) and the hash table against a
 * model, with simulated readers in the middle of their traversals.
 *
 * One list and one hash table of nodes that live on the heap. The input is a
 * stream of operations:
 *  - RCU mutations (list_add_rcu, list_add_tail_rcu, list_del_rcu,
 *    list_replace_rcu) at any time;
 *  - plain mutations (list_move, list_move_tail, list_rotate_left,
 *    list_swap, list_cut_position + list_splice_tail_init) only while no
 *    reader is inside the list, as their contract says;
 *  - up to three simulated readers, each a cursor that starts at the head
 *    and steps one node per operation, through rcu_dereference'd next
 *    pointers, as list_for_each_entry_rcu() does.
 * A deleted node is freed (for real: ASan sees a reader that touches it)
 * only once no reader is inside: the grace period, simulated.
 * Checks, after every operation: the list's order and length equal the
 * model's. When a reader reaches the head again: it saw no node twice, and
 * every node that was on the list for its whole traversal exactly once and
 * in list order (RCU's guarantee; nodes added or deleted meanwhile may or may
 * not be seen). The hash table: add, del (rcu), lookup and a full walk
 * against a set of keys.
 */
#include <ksync/linux/hashtable.h>
#include <ksync/linux/list.h>
#include <ksync/linux/rculist.h>
#include <ksync/linux/rcupdate.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAXN 48    /* nodes on the list at most */
#define NREADERS 3
#define NKEYS 64   /* hash table keys */

struct node {
	struct list_head link;
	int id;            /* unique per input: never reused, so "seen twice" is exact */
};

struct reader {
	bool active;
	struct list_head *pos;
	unsigned char stable[1024 / 8]; /* ids on the list when it started and not deleted since */
	int seen[4 * MAXN + 8];
	int nseen;
};

static struct {
	struct list_head head;
	struct node *order[MAXN]; /* the model: the list in order */
	int len;
	int next_id;
	struct node *retired[1024];
	int nretired;
	struct reader r[NREADERS];
} L;

static bool bit(const unsigned char *set, int id)
{
	return set[id / 8] >> (id % 8) & 1;
}

static void bit_assign(unsigned char *set, int id, bool v)
{
	if (v)
		set[id / 8] |= (unsigned char)(1U << (id % 8));
	else
		set[id / 8] &= (unsigned char)~(1U << (id % 8));
}

static bool readers_inside(void)
{
	for (int k = 0; k < NREADERS; k++)
		if (L.r[k].active)
			return true;
	return false;
}

/* The grace period: with no reader inside, the retired nodes go. */
static void reclaim(void)
{
	if (readers_inside())
		return;
	for (int i = 0; i < L.nretired; i++)
		free(L.retired[i]);
	L.nretired = 0;
}

static void retire(struct node *n)
{
	for (int k = 0; k < NREADERS; k++)
		bit_assign(L.r[k].stable, n->id, false);
	L.retired[L.nretired++] = n;
}

static void model_remove(int at)
{
	memmove(&L.order[at], &L.order[at + 1], (size_t)(L.len - at - 1) * sizeof(L.order[0]));
	L.len--;
}

static void model_insert(int at, struct node *n)
{
	memmove(&L.order[at + 1], &L.order[at], (size_t)(L.len - at) * sizeof(L.order[0]));
	L.order[at] = n;
	L.len++;
}

static void check_list(void)
{
	int i = 0;
	struct node *n;

	list_for_each_entry(n, &L.head, link) {
		CHECK(i < L.len && L.order[i] == n);
		CHECK(n->link.prev->next == &n->link && n->link.next->prev == &n->link);
		i++;
	}
	CHECK(i == L.len);
	CHECK(list_count_nodes(&L.head) == (size_t)L.len);
	CHECK(list_empty(&L.head) == (L.len == 0));
}

static struct node *new_node(void)
{
	struct node *n = malloc(sizeof(*n));

	CHECK(n);
	n->id = L.next_id++;
	return n;
}

/* A reader reached the head: check what it saw. */
static void reader_done(struct reader *r)
{
	int last = -1;

	for (int i = 0; i < r->nseen; i++)
		for (int j = i + 1; j < r->nseen; j++)
			CHECK(r->seen[i] != r->seen[j]);
	/* Every stable node, once, in list order. */
	for (int i = 0; i < L.len; i++) {
		int id = L.order[i]->id, at = -1;

		if (!bit(r->stable, id))
			continue;
		for (int j = 0; j < r->nseen; j++)
			if (r->seen[j] == id)
				at = j;
		CHECK(at > last);
		last = at;
	}
	r->active = false;
}

static void reader_step(struct reader *r)
{
	struct list_head *next = rcu_dereference_raw(r->pos->next);

	if (next == &L.head) {
		reader_done(r);
		return;
	}
	CHECK(r->nseen < (int)(sizeof(r->seen) / sizeof(r->seen[0])));
	r->seen[r->nseen++] = list_entry(next, struct node, link)->id;
	r->pos = next;
}

static void reader_start(struct reader *r)
{
	memset(r, 0, sizeof(*r));
	r->active = true;
	r->pos = &L.head;
	for (int i = 0; i < L.len; i++)
		bit_assign(r->stable, L.order[i]->id, true);
}

static void run_list(struct input *in)
{
	while (in->p < in->end && L.next_id < 1000) {
		unsigned int op = take(in), a = take(in), b = take(in);
		int i = L.len ? (int)(a % (unsigned int)L.len) : 0;
		int j = L.len ? (int)(b % (unsigned int)L.len) : 0;

		switch (op % 12) {
		case 0: /* list_add_rcu at the head, or after a node */
		case 1:
			if (L.len < MAXN) {
				struct node *n = new_node();

				if (op % 12 == 0 || !L.len) {
					list_add_rcu(&n->link, &L.head);
					model_insert(0, n);
				} else {
					list_add_rcu(&n->link, &L.order[i]->link);
					model_insert(i + 1, n);
				}
			}
			break;
		case 2:
			if (L.len < MAXN) {
				struct node *n = new_node();

				list_add_tail_rcu(&n->link, &L.head);
				model_insert(L.len, n);
			}
			break;
		case 3:
			if (L.len) {
				struct node *n = L.order[i];

				list_del_rcu(&n->link);
				model_remove(i);
				retire(n);
			}
			break;
		case 4:
			if (L.len) {
				struct node *old = L.order[i], *n = new_node();

				list_replace_rcu(&old->link, &n->link);
				L.order[i] = n;
				retire(old);
			}
			break;
		case 5: /* start a reader, or step one */
		case 6:
		case 7: {
			struct reader *r = &L.r[a % NREADERS];

			if (!r->active)
				reader_start(r);
			else
				reader_step(r);
			break;
		}
		case 8: /* finish every reader */
			for (int k = 0; k < NREADERS; k++)
				while (L.r[k].active)
					reader_step(&L.r[k]);
			break;
		default: /* plain mutations: no reader may be inside */
			if (readers_inside() || !L.len)
				break;
			if (op % 12 == 9) {
				struct node *n = L.order[i];

				if (b & 1) {
					list_move(&n->link, &L.head);
					model_remove(i);
					model_insert(0, n);
				} else {
					list_move_tail(&n->link, &L.head);
					model_remove(i);
					model_insert(L.len, n);
				}
			} else if (op % 12 == 10) {
				if (b & 1) {
					struct node *first = L.order[0];

					list_rotate_left(&L.head);
					model_remove(0);
					model_insert(L.len, first);
				} else if (i != j) {
					struct node *t = L.order[i];

					list_swap(&L.order[i]->link, &L.order[j]->link);
					L.order[i] = L.order[j];
					L.order[j] = t;
				}
			} else {
				/* Cut the first i+1 nodes off, then splice them back at the tail. */
				LIST_HEAD(cut);
				struct node *tmp[MAXN];
				int k = i + 1;

				list_cut_position(&cut, &L.head, &L.order[i]->link);
				CHECK(list_count_nodes(&cut) == (size_t)k);
				list_splice_tail_init(&cut, &L.head);
				CHECK(list_empty(&cut));
				memcpy(tmp, L.order, (size_t)k * sizeof(tmp[0]));
				memmove(L.order, &L.order[k], (size_t)(L.len - k) * sizeof(L.order[0]));
				memcpy(&L.order[L.len - k], tmp, (size_t)k * sizeof(tmp[0]));
			}
			break;
		}
		reclaim();
		check_list();
	}
	for (int k = 0; k < NREADERS; k++)
		while (L.r[k].active)
			reader_step(&L.r[k]);
	reclaim();
	while (L.len) {
		struct node *n = L.order[0];

		list_del(&n->link);
		model_remove(0);
		free(n);
	}
	check_list();
}

/* ------------------------------------------------------------------------ */
/* The hash table                                                            */

struct hnode {
	struct hlist_node h;
	int key;
};

static DEFINE_HASHTABLE(ht, 3);

static void run_hash(struct input *in)
{
	struct hnode *by_key[NKEYS] = { NULL };

	hash_init(ht);
	while (in->p < in->end) {
		unsigned int op = take(in);
		int key = (int)(take(in) % NKEYS);
		struct hnode *e;
		int found = 0, total = 0, bkt;

		switch (op % 3) {
		case 0:
			if (!by_key[key]) {
				e = malloc(sizeof(*e));
				CHECK(e);
				e->key = key;
				if (op & 8)
					hash_add_rcu(ht, &e->h, key);
				else
					hash_add(ht, &e->h, key);
				by_key[key] = e;
			}
			break;
		case 1:
			if (by_key[key]) {
				CHECK(hash_hashed(&by_key[key]->h));
				if (op & 8)
					hash_del_rcu(&by_key[key]->h);
				else
					hash_del(&by_key[key]->h);
				free(by_key[key]); /* no reader: the grace period is over at once */
				by_key[key] = NULL;
			}
			break;
		default:
			break;
		}
		/* Lookup of this key, both ways. */
		hash_for_each_possible(ht, e, h, key)
			found += e->key == key;
		CHECK(found == (by_key[key] != NULL));
		found = 0;
		hash_for_each_possible_rcu(ht, e, h, key)
			found += e->key == key;
		CHECK(found == (by_key[key] != NULL));
		/* A full walk meets every key of the set once. */
		hash_for_each(ht, bkt, e, h) {
			CHECK(by_key[e->key] == e);
			total++;
		}
		for (int k = 0; k < NKEYS; k++)
			total -= by_key[k] != NULL;
		CHECK(total == 0);
		{
			bool none = true;

			for (int k = 0; k < NKEYS; k++)
				none &= !by_key[k];
			CHECK(hash_empty(ht) == none);
		}
	}
	for (int k = 0; k < NKEYS; k++)
		if (by_key[k]) {
			hash_del(&by_key[k]->h);
			free(by_key[k]);
		}
	CHECK(hash_empty(ht));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, data + size };

	memset(&L, 0, sizeof(L));
	INIT_LIST_HEAD(&L.head);
	if (size && (data[0] & 1)) {
		in.p++;
		run_hash(&in);
	} else {
		if (size)
			in.p++;
		run_list(&in);
	}
	return 0;
}
