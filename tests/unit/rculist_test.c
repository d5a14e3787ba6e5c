/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rculist_test.c - <ksync/rculist.h>:
 *  - model tests: random add/add_tail/del/replace/splice sequences on a list,
 *    and add_head/add_before/add_behind/del/del_init/replace on a hash list,
 *    checked against a plain array after every step with every walker;
 *  - concurrency: a writer adds, deletes, replaces and splices while readers
 *    walk under SRCU. Entries are poisoned when their grace period ends and
 *    freed only after a second one, so a reader that reaches a retired entry
 *    sees the poison (ASan builds also catch any use after the real free).
 *    The list is kept sorted by id, so "ids strictly increase along a walk"
 *    proves that no walk visits an entry twice and every walk terminates; a
 *    sentinel entry that is never deleted must be seen by every walk.
 */
#include <ksync/rculist.h>
#include <ksync/srcu.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "rng.h"

#define ALIVE 0x600DF00DU
#define DEAD 0xDEADBEEFU

struct item {
	unsigned int magic;
	long id;
	struct ksync_list_head link;
	struct ksync_hlist_node hnode;
	struct ksync_rcu_head rcu;
	struct item *qnext; /* quarantine */
};

static uint64_t rng_state = 0x853c49e6748fea9bULL;
static uint64_t rnd(void)
{
	return kt_xorshift64s(&rng_state);
}

static struct item *item_new(long id)
{
	struct item *it = (struct item *)calloc(1, sizeof(*it));
	KASSERT(it);
	it->magic = ALIVE;
	it->id = id;
	return it;
}

/* ------------------------------------------------------------------------ */
/* Model tests                                                              */

#define MODEL_MAX 64
static struct ksync_srcu_struct model_srcu;

static void noop_sync(void)
{
}

static void check_list(struct ksync_list_head *head, struct item **ref, int n)
{
	struct item *pos;
	int i = 0;

	ksync_list_for_each_entry_rcu(pos, head, link) {
		KASSERT(i < n && pos == ref[i]);
		i++;
	}
	KASSERT(i == n);
	i = 0;
	ksync_list_for_each_entry_srcu(pos, head, link, ksync_srcu_read_lock_held(&model_srcu)) {
		KASSERT(pos == ref[i]);
		i++;
	}
	KASSERT(i == n);

	struct item *first = ksync_list_first_or_null_rcu(head, struct item, link);
	KASSERT(n ? first == ref[0] : first == NULL);
	for (int k = 0; k < n; k++) {
		struct item *nx = ksync_list_next_or_null_rcu(head, &ref[k]->link, struct item, link);
		KASSERT(k + 1 < n ? nx == ref[k + 1] : nx == NULL);
	}
	if (n) {
		int start = (int)(rnd() % (uint64_t)n);
		pos = ref[start];
		i = start + 1;
		ksync_list_for_each_entry_continue_rcu(pos, head, link) KASSERT(pos == ref[i++]);
		KASSERT(i == n);
		pos = ref[start];
		i = start;
		ksync_list_for_each_entry_from_rcu(pos, head, link) KASSERT(pos == ref[i++]);
		KASSERT(i == n);
	}
	/* Writers may use <ksync/list.h> on the same list: prev links are consistent. */
	i = n;
	ksync_list_for_each_entry_reverse(pos, head, link) KASSERT(pos == ref[--i]);
	KASSERT(i == 0);
}

KTEST(rculist_model_random)
{
	KSYNC_LIST_HEAD(head);
	KSYNC_LIST_HEAD(side);
	struct item *ref[2 * MODEL_MAX], *sref[MODEL_MAX];
	int n = 0, ns = 0;
	long next_id = 1;

	KASSERT(ksync_init_srcu_struct(&model_srcu) == 0);
	int idx = ksync_srcu_read_lock(&model_srcu);
	for (int step = 0; step < 5000; step++) {
		switch (rnd() % 7) {
		case 0: /* add at head */
			if (n < MODEL_MAX) {
				struct item *it = item_new(next_id++);
				ksync_list_add_rcu(&it->link, &head);
				memmove(&ref[1], &ref[0], (size_t)n * sizeof(ref[0]));
				ref[0] = it;
				n++;
			}
			break;
		case 1: /* add at tail, or after a random entry */
			if (n < MODEL_MAX) {
				struct item *it = item_new(next_id++);
				if (n && rnd() % 2) {
					int at = (int)(rnd() % (uint64_t)n);
					ksync_list_add_rcu(&it->link, &ref[at]->link);
					memmove(&ref[at + 2], &ref[at + 1],
						(size_t)(n - at - 1) * sizeof(ref[0]));
					ref[at + 1] = it;
				} else {
					ksync_list_add_tail_rcu(&it->link, &head);
					ref[n] = it;
				}
				n++;
			}
			break;
		case 2: /* delete */
			if (n) {
				int at = (int)(rnd() % (uint64_t)n);
				struct item *it = ref[at];
				struct ksync_list_head *after = it->link.next;
				ksync_list_del_rcu(&it->link);
				KASSERT(it->link.next == after); /* forward pointer kept */
				KASSERT(it->link.prev == KSYNC_LIST_POISON2);
				memmove(&ref[at], &ref[at + 1], (size_t)(n - at - 1) * sizeof(ref[0]));
				n--;
				free(it);
			}
			break;
		case 3: /* replace */
			if (n) {
				int at = (int)(rnd() % (uint64_t)n);
				struct item *it = item_new(next_id++);
				ksync_list_replace_rcu(&ref[at]->link, &it->link);
				free(ref[at]);
				ref[at] = it;
			}
			break;
		case 4: /* build the side list */
			if (ns < MODEL_MAX / 4) {
				struct item *it = item_new(next_id++);
				ksync_list_add_tail_rcu(&it->link, &side);
				sref[ns++] = it;
			}
			break;
		case 5: /* splice the side list at the head or tail */
		case 6:
			if (rnd() % 3 == 0) {
				bool tail = rnd() % 2;
				if (rnd() % 2) {
					/* The srcu variants wait for a grace period: leave the section. */
					ksync_srcu_read_unlock(&model_srcu, idx);
					if (tail)
						ksync_list_splice_tail_init_srcu(&side, &head, &model_srcu);
					else
						ksync_list_splice_init_srcu(&side, &head, &model_srcu);
					idx = ksync_srcu_read_lock(&model_srcu);
				} else if (tail) {
					ksync_list_splice_tail_init_rcu(&side, &head, noop_sync);
				} else {
					ksync_list_splice_init_rcu(&side, &head, noop_sync);
				}
				if (tail) {
					memcpy(&ref[n], sref, (size_t)ns * sizeof(ref[0]));
				} else {
					memmove(&ref[ns], &ref[0], (size_t)n * sizeof(ref[0]));
					memcpy(&ref[0], sref, (size_t)ns * sizeof(ref[0]));
				}
				n += ns;
				ns = 0;
				KASSERT(ksync_list_empty(&side));
				while (n > MODEL_MAX) { /* trim back */
					struct item *it = ref[--n];
					ksync_list_del_rcu(&it->link);
					free(it);
				}
			}
			break;
		}
		check_list(&head, ref, n);
		check_list(&side, sref, ns);
	}
	ksync_srcu_read_unlock(&model_srcu, idx);
	for (int i = 0; i < n; i++)
		free(ref[i]);
	for (int i = 0; i < ns; i++)
		free(sref[i]);
	ksync_cleanup_srcu_struct(&model_srcu);
	KCHECK(1);
}

static void check_hlist(struct ksync_hlist_head *h, struct item **ref, int n)
{
	struct item *pos;
	int i = 0;

	ksync_hlist_for_each_entry_rcu(pos, h, hnode) {
		KASSERT(i < n && pos == ref[i]);
		i++;
	}
	KASSERT(i == n && pos == NULL);
	i = 0;
	ksync_hlist_for_each_entry_srcu(pos, h, hnode, 1) KASSERT(pos == ref[i++]);
	KASSERT(i == n);
	KASSERT(ksync_hlist_empty(h) == (n == 0));
	/* pprev links are consistent. */
	for (int k = 0; k < n; k++)
		KASSERT(*ref[k]->hnode.pprev == &ref[k]->hnode);
}

KTEST(hlist_model_random)
{
	struct ksync_hlist_head h;
	struct item *ref[MODEL_MAX + 1];
	int n = 0;
	long next_id = 1;

	ksync_init_hlist_head(&h);
	for (int step = 0; step < 5000; step++) {
		int at = n ? (int)(rnd() % (uint64_t)n) : 0;
		switch (rnd() % 6) {
		case 0:
			if (n < MODEL_MAX) {
				struct item *it = item_new(next_id++);
				ksync_init_hlist_node(&it->hnode);
				KASSERT(ksync_hlist_unhashed(&it->hnode));
				ksync_hlist_add_head_rcu(&it->hnode, &h);
				KASSERT(!ksync_hlist_unhashed(&it->hnode));
				memmove(&ref[1], &ref[0], (size_t)n * sizeof(ref[0]));
				ref[0] = it;
				n++;
			}
			break;
		case 1:
			if (n && n < MODEL_MAX) {
				struct item *it = item_new(next_id++);
				ksync_hlist_add_before_rcu(&it->hnode, &ref[at]->hnode);
				memmove(&ref[at + 1], &ref[at], (size_t)(n - at) * sizeof(ref[0]));
				ref[at] = it;
				n++;
			}
			break;
		case 2:
			if (n && n < MODEL_MAX) {
				struct item *it = item_new(next_id++);
				ksync_hlist_add_behind_rcu(&it->hnode, &ref[at]->hnode);
				memmove(&ref[at + 2], &ref[at + 1], (size_t)(n - at - 1) * sizeof(ref[0]));
				ref[at + 1] = it;
				n++;
			}
			break;
		case 3:
		case 4:
			if (n) {
				struct item *it = ref[at];
				struct ksync_hlist_node *after = it->hnode.next;
				if (rnd() % 2) {
					ksync_hlist_del_rcu(&it->hnode);
					KASSERT(it->hnode.pprev == KSYNC_HLIST_POISON2);
				} else {
					ksync_hlist_del_init_rcu(&it->hnode);
					KASSERT(ksync_hlist_unhashed(&it->hnode));
					ksync_hlist_del_init_rcu(&it->hnode); /* no-op when unhashed */
				}
				KASSERT(it->hnode.next == after); /* forward pointer kept */
				memmove(&ref[at], &ref[at + 1], (size_t)(n - at - 1) * sizeof(ref[0]));
				n--;
				free(it);
			}
			break;
		case 5:
			if (n) {
				struct item *it = item_new(next_id++);
				ksync_hlist_replace_rcu(&ref[at]->hnode, &it->hnode);
				KASSERT(ref[at]->hnode.pprev == KSYNC_HLIST_POISON2);
				free(ref[at]);
				ref[at] = it;
			}
			break;
		}
		check_hlist(&h, ref, n);
	}
	for (int i = 0; i < n; i++)
		free(ref[i]);
	KCHECK(1);
}

/* The traversal condition: checked once per walk in KSYNC_DEBUG builds, never evaluated otherwise. */
KTEST(rculist_debug_condition)
{
	KSYNC_LIST_HEAD(head);
	struct ksync_hlist_head h = KSYNC_HLIST_HEAD_INIT;
	struct item *pos, *it = item_new(1);
	struct ksync_srcu_struct dss;
	int evaluated = 0, visits = 0;
	unsigned long before = __atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED);

	KASSERT(ksync_init_srcu_struct(&dss) == 0);
	ksync_list_add_rcu(&it->link, &head);
	ksync_hlist_add_head_rcu(&it->hnode, &h);
	/* Not inside a read section of dss: the condition is false. */
	ksync_list_for_each_entry_srcu(pos, &head, link,
				       (evaluated++, ksync_srcu_read_lock_held(&dss))) visits++;
	ksync_hlist_for_each_entry_srcu(pos, &h, hnode,
					(evaluated++, ksync_srcu_read_lock_held(&dss))) visits++;
	ksync_list_for_each_entry_rcu(pos, &head, link) visits++; /* no condition: no check */
	ksync_hlist_for_each_entry_rcu(pos, &h, hnode) visits++;
	int idx = ksync_srcu_read_lock(&dss);
	ksync_list_for_each_entry_srcu(pos, &head, link, ksync_srcu_read_lock_held(&dss)) visits++;
	ksync_srcu_read_unlock(&dss, idx);
	KCHECK_EQ(visits, 5);
#if KSYNC_DEBUG_ENABLED
	KCHECK_EQ(evaluated, 2);
	KCHECK_EQ(__atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED), before + 2);
#else
	KCHECK_EQ(evaluated, 0);
	KCHECK_EQ(__atomic_load_n(&ksync_warn_count, __ATOMIC_RELAXED), before);
#endif
	free(it);
	ksync_cleanup_srcu_struct(&dss);
}

/* ------------------------------------------------------------------------ */
/* Readers walking while a writer adds, deletes, replaces and splices       */

enum { LIVE_MAX = 200, READERS = 2 };

static struct ksync_srcu_struct cc_srcu;
static KSYNC_LIST_HEAD(cc_list);
static struct ksync_hlist_head cc_hlist;
static int cc_stop;

/* Retired entries: poisoned after one grace period, freed after another. */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct item *q_head;
static unsigned long q_freed;

static void item_poison_cb(struct ksync_rcu_head *head)
{
	struct item *it = ksync_container_of(head, struct item, rcu);

	/* Readers check magic; the grace period orders this after their last look. */
	__atomic_store_n(&it->magic, DEAD, __ATOMIC_RELAXED);
	pthread_mutex_lock(&q_lock);
	it->qnext = q_head;
	q_head = it;
	pthread_mutex_unlock(&q_lock);
}

static void drain_quarantine(void)
{
	pthread_mutex_lock(&q_lock);
	struct item *it = q_head;
	q_head = NULL;
	pthread_mutex_unlock(&q_lock);
	/* A second grace period: a reader that could still see these would have seen poison. */
	ksync_synchronize_srcu(&cc_srcu);
	while (it) {
		struct item *next = it->qnext;
		free(it);
		q_freed++;
		it = next;
	}
}

struct reader_stat {
	unsigned long walks, entries;
};

static void *cc_reader(void *p)
{
	struct reader_stat *st = (struct reader_stat *)p;

	while (!__atomic_load_n(&cc_stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(&cc_srcu);
		struct item *pos;
		long last = LONG_MIN;
		bool sentinel = false;
		unsigned long steps = 0;

		ksync_list_for_each_entry_srcu(pos, &cc_list, link,
					       ksync_srcu_read_lock_held(&cc_srcu)) {
			KASSERT(__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) == ALIVE);
			KASSERT(pos->id > last); /* no entry twice, no cycle */
			last = pos->id;
			sentinel |= pos->id == 0;
			KASSERT(++steps < 10UL * LIVE_MAX * 1000);
		}
		KASSERT(sentinel);
		st->entries += steps;

		long hlast = LONG_MAX;
		sentinel = false;
		ksync_hlist_for_each_entry_srcu(pos, &cc_hlist, hnode,
						ksync_srcu_read_lock_held(&cc_srcu)) {
			KASSERT(__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) == ALIVE);
			KASSERT(pos->id < hlast); /* hash list kept in descending order */
			hlast = pos->id;
			sentinel |= pos->id == 0;
		}
		KASSERT(sentinel);

		/* A resumed walk from the first entry agrees too. */
		pos = ksync_list_first_or_null_rcu(&cc_list, struct item, link);
		KASSERT(pos != NULL);
		last = pos->id;
		ksync_list_for_each_entry_continue_rcu(pos, &cc_list, link) {
			KASSERT(pos->id > last);
			last = pos->id;
		}
		ksync_srcu_read_unlock(&cc_srcu, idx);
		st->walks++;
	}
	return NULL;
}

KTEST(rculist_concurrent_readers)
{
	pthread_t rd[READERS];
	struct reader_stat st[READERS];
	struct item *live[LIVE_MAX], *hlive[LIVE_MAX];
	int n = 0, hn = 0;
	long head_id = -1, tail_id = 1, hid = 1;
	unsigned long ops = 0;
	double deadline = ktest_now() + ktest_seconds(1.5);

	KASSERT(ksync_init_srcu_struct(&cc_srcu) == 0);
	ksync_init_hlist_head(&cc_hlist);
	/* Sentinels (id 0), never deleted. */
	struct item *s = item_new(0), *hs = item_new(0);
	ksync_list_add_rcu(&s->link, &cc_list);
	ksync_hlist_add_head_rcu(&hs->hnode, &cc_hlist);

	memset(st, 0, sizeof(st));
	for (int i = 0; i < READERS; i++)
		KASSERT(pthread_create(&rd[i], NULL, cc_reader, &st[i]) == 0);

	/* The single writer: the update-side "lock" is being the only writer. */
	while (ktest_now() < deadline) {
		for (int k = 0; k < 200; k++, ops++) {
			unsigned int op = (unsigned int)(rnd() % 8);
			if ((op <= 1 && n < LIVE_MAX) || n == 0) {
				struct item *it;
				if (rnd() % 2) {
					it = item_new(tail_id++);
					ksync_list_add_tail_rcu(&it->link, &cc_list);
				} else {
					it = item_new(head_id--);
					ksync_list_add_rcu(&it->link, &cc_list);
				}
				live[n++] = it;
			} else if (op == 2 || op == 3) {
				int at = (int)(rnd() % (uint64_t)n);
				struct item *it = live[at];
				ksync_list_del_rcu(&it->link);
				live[at] = live[--n];
				ksync_call_srcu(&cc_srcu, &it->rcu, item_poison_cb);
			} else if (op == 4) {
				/* Replace, keeping the id: the order stays strict. */
				int at = (int)(rnd() % (uint64_t)n);
				struct item *it = item_new(live[at]->id);
				ksync_list_replace_rcu(&live[at]->link, &it->link);
				ksync_call_srcu(&cc_srcu, &live[at]->rcu, item_poison_cb);
				live[at] = it;
			} else if (op == 5 && n + 8 <= LIVE_MAX && rnd() % 16 == 0) {
				/* A batch built privately, spliced at the tail. */
				KSYNC_LIST_HEAD(batch);
				for (int b = 0; b < 8; b++) {
					struct item *it = item_new(tail_id++);
					ksync_list_add_tail(&it->link, &batch);
					live[n++] = it;
				}
				ksync_list_splice_tail_init_srcu(&batch, &cc_list, &cc_srcu);
			} else if (op == 6) {
				/* Hash list: add at head (ids increase, so the list descends)... */
				if (hn < LIVE_MAX) {
					struct item *it = item_new(hid++);
					ksync_hlist_add_head_rcu(&it->hnode, &cc_hlist);
					hlive[hn++] = it;
				}
			} else if (hn) {
				/* ...delete or replace (same id). */
				int at = (int)(rnd() % (uint64_t)hn);
				struct item *it = hlive[at];
				if (rnd() % 2) {
					ksync_hlist_del_rcu(&it->hnode);
					hlive[at] = hlive[--hn];
				} else {
					struct item *nw = item_new(it->id);
					ksync_hlist_replace_rcu(&it->hnode, &nw->hnode);
					hlive[at] = nw;
				}
				ksync_call_srcu(&cc_srcu, &it->rcu, item_poison_cb);
			}
		}
		if (ops % 2000 == 0)
			drain_quarantine();
	}
	__atomic_store_n(&cc_stop, 1, __ATOMIC_RELEASE);
	unsigned long walks = 0, entries = 0;
	for (int i = 0; i < READERS; i++) {
		pthread_join(rd[i], NULL);
		walks += st[i].walks;
		entries += st[i].entries;
	}
	ksync_srcu_barrier(&cc_srcu);
	drain_quarantine();
	for (int i = 0; i < n; i++)
		free(live[i]);
	for (int i = 0; i < hn; i++)
		free(hlive[i]);
	free(s);
	free(hs);
	ksync_cleanup_srcu_struct(&cc_srcu);
	printf("  %lu writer ops, %lu walks (%lu entries), %lu retired and freed\n", ops, walks,
	       entries, q_freed);
	KCHECK(walks > 0 && q_freed > 0);
}

/*
 * Regression: ksync_hlist_del_init_rcu() allows re-adding the node before a
 * grace period (a reader standing on it may then visit entries twice). The
 * re-add writes the node's ->next while readers standing on the node load
 * it, so that store must be an atomic (untorn, TSan-visible) one; it was a
 * plain store, a data race that TSan reports. Here one writer keeps moving
 * a node with del_init + add_head / add_before / add_behind (no grace period
 * in between) while readers walk the list.
 */
static struct ksync_hlist_head mv_hlist;
static int mv_stop;

static void *mv_reader(void *p)
{
	unsigned long *walks = (unsigned long *)p;

	while (!__atomic_load_n(&mv_stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(&cc_srcu);
		struct item *pos;
		unsigned long steps = 0;

		/*
		 * No "saw every fixed entry" check: a reader standing on the
		 * mover when it is re-added elsewhere follows its new ->next,
		 * so it may skip entries as well as see some twice.
		 */
		ksync_hlist_for_each_entry_srcu(pos, &mv_hlist, hnode,
						ksync_srcu_read_lock_held(&cc_srcu)) {
			KASSERT(__atomic_load_n(&pos->magic, __ATOMIC_RELAXED) == ALIVE);
			KASSERT(++steps < 1000000UL);
		}
		ksync_srcu_read_unlock(&cc_srcu, idx);
		(*walks)++;
	}
	return NULL;
}

KTEST(hlist_readd_before_grace_period)
{
	enum { FIXED = 6 };
	struct item *fixed[FIXED], *mover = item_new(100);

	pthread_t rd[READERS];
	unsigned long walks[READERS] = { 0 }, moves = 0, total = 0;
	double deadline = ktest_now() + ktest_seconds(0.5);

	KASSERT(ksync_init_srcu_struct(&cc_srcu) == 0);
	ksync_init_hlist_head(&mv_hlist);
	for (int i = 0; i < FIXED; i++) {
		fixed[i] = item_new(i);
		ksync_hlist_add_head_rcu(&fixed[i]->hnode, &mv_hlist);
	}
	ksync_hlist_add_head_rcu(&mover->hnode, &mv_hlist);
	for (int i = 0; i < READERS; i++)
		KASSERT(pthread_create(&rd[i], NULL, mv_reader, &walks[i]) == 0);
	while (ktest_now() < deadline) {
		for (int k = 0; k < 100; k++, moves++) {
			struct item *at = fixed[rnd() % FIXED];

			ksync_hlist_del_init_rcu(&mover->hnode);
			KASSERT(ksync_hlist_unhashed(&mover->hnode));
			switch (rnd() % 3) {
			case 0:
				ksync_hlist_add_head_rcu(&mover->hnode, &mv_hlist);
				break;
			case 1:
				ksync_hlist_add_before_rcu(&mover->hnode, &at->hnode);
				break;
			default:
				ksync_hlist_add_behind_rcu(&mover->hnode, &at->hnode);
				break;
			}
		}
	}
	__atomic_store_n(&mv_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < READERS; i++) {
		pthread_join(rd[i], NULL);
		total += walks[i];
	}
	/* Still a well-formed list holding every node exactly once. */
	int count = 0;
	struct item *pos;
	ksync_hlist_for_each_entry_rcu(pos, &mv_hlist, hnode) count++;
	KCHECK_EQ(count, FIXED + 1);
	for (int i = 0; i < FIXED; i++)
		free(fixed[i]);
	free(mover);
	ksync_cleanup_srcu_struct(&cc_srcu);
	printf("  %lu moves, %lu walks\n", moves, total);
	KCHECK(total > 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
