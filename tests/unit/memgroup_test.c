/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of ksync::memgroup: the lifecycle and its states, references,
 * the hooks of clients (order, which groups they see, failure rollback),
 * misuse reports, and a concurrent create/offline/tryget churn.
 */
#include <ksync/memgroup.h>
#include <ksync/srcu.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "ktest.h"
#include "wait.h"

/* A client that logs its hooks as "<tag><event><group id>;" */
struct log_client {
	struct ksync_memgroup_client c;
	char tag;
	int slot;
	int fail_online_of; /* group id whose online fails, -1 for none */
	char log[512];
	int live; /* groups holding this client's state */
};

/* Every hook of every client, in the order they ran: tag, then + online, - offline, . release. */
static char order_log[256];

static void log_event(struct log_client *lc, char ev, const struct ksync_memgroup *g)
{
	size_t n = strlen(lc->log);
	snprintf(lc->log + n, sizeof(lc->log) - n, "%c%c%d;", lc->tag, ev, ksync_memgroup_id(g));
	n = strlen(order_log);
	snprintf(order_log + n, sizeof(order_log) - n, "%c%c", lc->tag,
		 ev == 'o' ? '+' : ev == 'x' ? '-' : '.');
}

static int lc_online(struct ksync_memgroup *g, int slot, void *priv)
{
	struct log_client *lc = priv;

	if (ksync_memgroup_id(g) == lc->fail_online_of)
		return -ENOMEM;
	log_event(lc, 'o', g);
	ksync_memgroup_set_slot(g, slot, lc);
	lc->live++;
	return 0;
}

static void lc_offline(struct ksync_memgroup *g, int slot, void *priv)
{
	struct log_client *lc = priv;

	KCHECK_EQ(slot, lc->slot);
	/* Offline runs while the group is dying, its parent still online. */
	KCHECK_EQ(ksync_memgroup_state(g), KSYNC_MEMGROUP_DYING);
	if (ksync_memgroup_parent(g))
		KCHECK_EQ(ksync_memgroup_state(ksync_memgroup_parent(g)), KSYNC_MEMGROUP_ONLINE);
	log_event(lc, 'x', g);
}

static void lc_release(struct ksync_memgroup *g, int slot, void *priv)
{
	struct log_client *lc = priv;

	KCHECK_EQ(slot, lc->slot);
	KCHECK(ksync_memgroup_slot(g, slot) == lc);
	log_event(lc, 'r', g);
	lc->live--;
}

static void lc_init(struct log_client *lc, char tag)
{
	memset(lc, 0, sizeof(*lc));
	lc->c = (struct ksync_memgroup_client){ .name = "log", .online = lc_online, .offline = lc_offline, .release = lc_release };
	lc->tag = tag;
	lc->fail_online_of = -1;
}

KTEST(lifecycle_states_and_hook_order)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct log_client a, b;

	lc_init(&a, 'A');
	lc_init(&b, 'B');
	a.slot = ksync_memgroup_client_register(set, &a.c, &a);
	b.slot = ksync_memgroup_client_register(set, &b.c, &b);
	/* The last two slots are the built-in clients (charge handles, statistics). */
	KCHECK_EQ(a.slot, 0);
	KCHECK_EQ(b.slot, 1);
	KCHECK_EQ(ksync_memgroup_client_find(set, &b.c), 1);

	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *c = ksync_memgroup_create(NULL, p);
	KCHECK(p && c);
	KCHECK(ksync_memgroup_parent(c) == p);
	KCHECK(ksync_memgroup_set_of(c) == set);
	KCHECK_EQ(ksync_memgroup_state(c), KSYNC_MEMGROUP_ONLINE);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 2);

	/* A parent with an online child cannot go offline. */
	unsigned long w = ksync_warn_count;
	KCHECK_EQ(ksync_memgroup_offline(p), -EBUSY);
	KCHECK_EQ(ksync_warn_count, w + 1);

	/* A reference keeps the offlined child in memory, DEAD. */
	KCHECK(ksync_memgroup_tryget(c));
	KCHECK_EQ(ksync_memgroup_offline(c), 0);
	KCHECK_EQ(ksync_memgroup_state(c), KSYNC_MEMGROUP_DEAD);
	KCHECK(!ksync_memgroup_tryget_online(c));
	KCHECK_EQ(ksync_memgroup_offline(c), -EBUSY); /* twice: reported */
	KCHECK_EQ(ksync_warn_count, w + 2);
	/* A dead child does not hold its parent online; its reference holds its memory. */
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_memgroup_state(p), KSYNC_MEMGROUP_DEAD);
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 2);
	ksync_memgroup_put(c); /* releases c, then p */
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 0);

	/* Online in slot order, offline in slot order, release in reverse. */
	KCHECK(strcmp(a.log, "Ao0;Ao1;Ax1;Ax0;Ar1;Ar0;") == 0);
	KCHECK(strcmp(b.log, "Bo0;Bo1;Bx1;Bx0;Br1;Br0;") == 0);
	KCHECK_EQ(a.live, 0);
	KCHECK_EQ(b.live, 0);

	KCHECK_EQ(ksync_memgroup_set_destroy(set), -EBUSY); /* clients remain */
	KCHECK_EQ(ksync_memgroup_client_unregister(set, a.slot), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, b.slot), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, b.slot), -ENOENT);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(hooks_run_in_client_order)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct log_client late, early;

	lc_init(&late, 'S');
	lc_init(&early, 'L');
	late.c.order = KSYNC_MEMGROUP_ORDER_STATS;  /* registered first, runs last */
	early.c.order = KSYNC_MEMGROUP_ORDER_LRU;
	late.slot = ksync_memgroup_client_register(set, &late.c, &late);
	early.slot = ksync_memgroup_client_register(set, &early.c, &early);
	order_log[0] = '\0';
	struct ksync_memgroup *g = ksync_memgroup_create(set, NULL);
	KCHECK_EQ(ksync_memgroup_offline(g), 0);
	/* Online and offline: L before S; release: S before L. */
	KCHECK(strcmp(early.log, "Lo0;Lx0;Lr0;") == 0);
	KCHECK(strcmp(late.log, "So0;Sx0;Sr0;") == 0);
	KCHECK(strcmp(order_log, "L+S+L-S-S.L.") == 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, late.slot), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, early.slot), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(children_iterate_under_srcu)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct ksync_memgroup *p = ksync_memgroup_create(set, NULL), *c[3], *pos;
	int n = 0, online = 0;

	for (int i = 0; i < 3; i++)
		c[i] = ksync_memgroup_create(NULL, p);
	ksync_memgroup_get(c[1]);
	KCHECK_EQ(ksync_memgroup_offline(c[1]), 0); /* DEAD, referenced: still a child */
	KCHECK_EQ(ksync_memgroup_offline(c[2]), 0); /* released: gone */
	int idx = ksync_srcu_read_lock(ksync_memgroup_set_srcu(set));
	ksync_memgroup_for_each_child(pos, p) {
		KCHECK(pos == c[0] || pos == c[1]);
		n++;
		online += ksync_memgroup_state(pos) == KSYNC_MEMGROUP_ONLINE;
	}
	ksync_srcu_read_unlock(ksync_memgroup_set_srcu(set), idx);
	KCHECK_EQ(n, 2);
	KCHECK_EQ(online, 1);
	KCHECK(ksync_memgroup_next_child(c[0], NULL) == NULL);
	ksync_memgroup_put(c[1]);
	KCHECK_EQ(ksync_memgroup_offline(c[0]), 0);
	KCHECK(ksync_memgroup_next_child(p, NULL) == NULL);
	KCHECK_EQ(ksync_memgroup_offline(p), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* Readers walk a parent's children while a churner creates and releases them. */
struct child_churn {
	struct ksync_memgroup_set *set;
	struct ksync_memgroup *parent;
	int stop;
	long seen;
};

static void *child_reader(void *arg)
{
	struct child_churn *cc = arg;
	struct ksync_srcu_struct *srcu = ksync_memgroup_set_srcu(cc->set);
	struct ksync_memgroup *pos;

	while (!__atomic_load_n(&cc->stop, __ATOMIC_ACQUIRE)) {
		int idx = ksync_srcu_read_lock(srcu);
		ksync_memgroup_for_each_child(pos, cc->parent) {
			KASSERT(ksync_memgroup_parent(pos) == cc->parent);
			cc->seen++;
		}
		ksync_srcu_read_unlock(srcu, idx);
	}
	return NULL;
}

KTEST(children_iterate_during_churn)
{
	struct child_churn cc = { .set = ksync_memgroup_set_create() };
	struct ksync_memgroup *kids[8] = { 0 };
	pthread_t t;
	unsigned seed = 5;

	cc.parent = ksync_memgroup_create(cc.set, NULL);
	pthread_create(&t, NULL, child_reader, &cc);
	double end = ktest_now() + ktest_seconds(0.3);
	while (ktest_now() < end) {
		int i = (int)(rand_r(&seed) % 8);
		if (kids[i]) {
			KASSERT(ksync_memgroup_offline(kids[i]) == 0);
			kids[i] = NULL;
		} else {
			kids[i] = ksync_memgroup_create(NULL, cc.parent);
		}
	}
	__atomic_store_n(&cc.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	for (int i = 0; i < 8; i++)
		if (kids[i])
			KCHECK_EQ(ksync_memgroup_offline(kids[i]), 0);
	KCHECK(cc.seen > 0);
	KCHECK_EQ(ksync_memgroup_offline(cc.parent), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(cc.set), 0);
}

KTEST(late_client_sees_online_groups_only)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct log_client a, late;

	lc_init(&a, 'A');
	lc_init(&late, 'L');
	a.slot = ksync_memgroup_client_register(set, &a.c, &a);
	struct ksync_memgroup *g0 = ksync_memgroup_create(set, NULL);
	struct ksync_memgroup *g1 = ksync_memgroup_create(set, NULL);
	ksync_memgroup_get(g0);
	KCHECK_EQ(ksync_memgroup_offline(g0), 0); /* dead, still referenced */
	late.slot = ksync_memgroup_client_register(set, &late.c, &late);
	KCHECK_EQ(late.slot, a.slot + 1);
	KCHECK(strcmp(late.log, "Lo1;") == 0); /* not the dead g0 */
	KCHECK_EQ(ksync_memgroup_offline(g1), 0);
	ksync_memgroup_put(g0);
	KCHECK(strcmp(late.log, "Lo1;Lx1;Lr1;") == 0); /* never called for g0 */
	KCHECK_EQ(ksync_memgroup_client_unregister(set, a.slot), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, late.slot), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

KTEST(failed_online_rolls_back)
{
	struct ksync_memgroup_set *set = ksync_memgroup_set_create();
	struct log_client a, b;

	lc_init(&a, 'A');
	lc_init(&b, 'B');
	b.fail_online_of = 1;
	a.slot = ksync_memgroup_client_register(set, &a.c, &a);
	b.slot = ksync_memgroup_client_register(set, &b.c, &b);
	struct ksync_memgroup *g0 = ksync_memgroup_create(set, NULL);
	KCHECK(g0 != NULL);
	KCHECK(ksync_memgroup_create(set, NULL) == NULL); /* id 1: B's online fails */
	KCHECK(strcmp(a.log, "Ao0;Ao1;Ar1;") == 0);        /* A released it again */
	KCHECK_EQ(ksync_memgroup_nr_groups(set), 1);
	/* A client whose online fails for an existing group is not registered. */
	struct log_client c;
	lc_init(&c, 'C');
	c.fail_online_of = 0;
	KCHECK_EQ(ksync_memgroup_client_register(set, &c.c, &c), -ENOMEM);
	KCHECK_EQ(ksync_memgroup_client_find(set, &c.c), -ENOENT);
	KCHECK_EQ(ksync_memgroup_offline(g0), 0);
	KCHECK_EQ(a.live, 0);
	KCHECK_EQ(b.live, 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, a.slot), 0);
	KCHECK_EQ(ksync_memgroup_client_unregister(set, b.slot), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(set), 0);
}

/* Threads create children of a root, take and drop references, and offline them. */
struct churn {
	struct ksync_memgroup_set *set;
	struct ksync_memgroup *root;
	struct ksync_memgroup *slots[16];
	int stop;
	long created, offlined;
};

static void *churner(void *arg)
{
	struct churn *ch = arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		int i = (int)(rand_r(&seed) % 16);
		struct ksync_memgroup *g = __atomic_exchange_n(&ch->slots[i], NULL, __ATOMIC_ACQ_REL);

		if (g) {
			KASSERT(ksync_memgroup_offline(g) == 0);
			__atomic_fetch_add(&ch->offlined, 1, __ATOMIC_RELAXED);
		} else {
			g = ksync_memgroup_create(NULL, ch->root);
			KASSERT(g);
			__atomic_fetch_add(&ch->created, 1, __ATOMIC_RELAXED);
			g = __atomic_exchange_n(&ch->slots[i], g, __ATOMIC_ACQ_REL);
			if (g) {
				KASSERT(ksync_memgroup_offline(g) == 0);
				__atomic_fetch_add(&ch->offlined, 1, __ATOMIC_RELAXED);
			}
		}
	}
	return NULL;
}

static void *referencer(void *arg)
{
	struct churn *ch = arg;
	struct ksync_srcu_struct *srcu = ksync_memgroup_set_srcu(ch->set);

	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 16; i++) {
			int idx = ksync_srcu_read_lock(srcu);
			struct ksync_memgroup *g = __atomic_load_n(&ch->slots[i], __ATOMIC_ACQUIRE);
			/* Inside the set's section a group found is in memory; tryget says if it lives. */
			if (g && ksync_memgroup_tryget(g)) {
				KASSERT(ksync_memgroup_parent(g) == ch->root);
				ksync_memgroup_put(g);
			}
			ksync_srcu_read_unlock(srcu, idx);
		}
	}
	return NULL;
}

KTEST(concurrent_create_offline_tryget)
{
	struct churn ch = { .set = ksync_memgroup_set_create() };
	pthread_t t[3];

	ch.root = ksync_memgroup_create(ch.set, NULL);
	pthread_create(&t[0], NULL, churner, &ch);
	pthread_create(&t[1], NULL, churner, &ch);
	pthread_create(&t[2], NULL, referencer, &ch);
	kt_yield_for(ktest_seconds(0.5));
	__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 16; i++)
		if (ch.slots[i]) {
			KCHECK_EQ(ksync_memgroup_offline(ch.slots[i]), 0);
			ch.offlined++;
		}
	printf("  %ld created, %ld offlined\n", ch.created, ch.offlined);
	KCHECK_EQ(ch.created, ch.offlined);
	KCHECK_EQ(ksync_memgroup_offline(ch.root), 0);
	KCHECK_EQ(ksync_memgroup_nr_groups(ch.set), 0);
	KCHECK_EQ(ksync_memgroup_set_destroy(ch.set), 0);
}

int main(int argc, char **argv)
{
	return ktest_run(argc, argv);
}
