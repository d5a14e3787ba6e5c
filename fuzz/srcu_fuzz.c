/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz/srcu_fuzz.c - SRCU driven by a script: read sections (nested, out of
 * order, srcu_down_read), call_srcu, polled cookies, synchronize and barrier
 * over two domains, against what each promises.
 *
 * The input is a list of operations run by this thread; the callbacks run on
 * the domains' helper threads, as they do for every user. Every section gets
 * an id; closing it sets closed[id] (release) before the unlock. Checks:
 *  - a callback runs only after every section of its domain that was open
 *    when it was queued has closed (the grace period covered them), and
 *    exactly once (counted at srcu_barrier() and at the end);
 *  - a cookie from get_state/start_poll polls true only once every section of
 *    its domain open at the time has closed, and after synchronize_srcu() (or
 *    the expedited one) of its domain it polls true (cookies agree with
 *    synchronize);
 *  - sections of the other domain never hold a grace period up (synchronize
 *    and barrier run while they are open);
 *  - misuse on purpose, where the script's operation would otherwise be
 *    skipped: synchronize or barrier inside a read_lock section of the same
 *    domain, cleanup with a reader inside, an unlock or up_read with no
 *    section to end: each is reported (at most once per call site, as
 *    KSYNC_WARN_ONCE does; the report names the call) and changes nothing:
 *    the open sections stay open and every check above still holds;
 *  - a legal operation is never reported.
 */
#include <ksync/srcu.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define NDOM 2
#define MAXSEC 64   /* section ids per input */
#define MAXOPEN 12  /* sections open at once */
#define MAXCB 64
#define MAXCOOKIE 16

KSYNC_DEFINE_STATIC_SRCU(dom0);
KSYNC_DEFINE_STATIC_SRCU(dom1);
static struct ksync_srcu_struct *const dom[NDOM] = { &dom0, &dom1 };

struct section {
	int id, d, idx;
	bool down; /* srcu_down_read() */
};

struct cb {
	struct ksync_rcu_head rcu;
	uint64_t waits_for; /* ids of the sections open when it was queued */
	int d;
	int ran;            /* atomic: how many times it ran */
};

struct cookie {
	unsigned long c;
	uint64_t waits_for;
	int d;
};

static struct {
	int closed[MAXSEC];  /* atomic: 1 once section id closed */
	struct section open[MAXOPEN];
	int nopen, next_id;
	struct cb *cbs[MAXCB];
	int ncb;
	struct cookie cookies[MAXCOOKIE];
	int ncookies;
} S;

static bool all_closed(uint64_t mask)
{
	for (int id = 0; id < MAXSEC; id++)
		if ((mask >> id & 1) && !__atomic_load_n(&S.closed[id], __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static uint64_t open_mask(int d)
{
	uint64_t m = 0;

	for (int k = 0; k < S.nopen; k++)
		if (S.open[k].d == d)
			m |= 1ULL << S.open[k].id;
	return m;
}

static void cb_func(struct ksync_rcu_head *head)
{
	struct cb *c = ksync_container_of(head, struct cb, rcu);

	/* Runs on the helper thread: the grace period must have covered these. */
	CHECK(all_closed(c->waits_for));
	__atomic_fetch_add(&c->ran, 1, __ATOMIC_RELEASE);
}

static void close_section(int k)
{
	struct section s = S.open[k];

	S.open[k] = S.open[--S.nopen];
	/* Pairs with the acquire in all_closed(): set before the unlock ends the section. */
	__atomic_store_n(&S.closed[s.id], 1, __ATOMIC_RELEASE);
	if (s.down)
		ksync_srcu_up_read(dom[s.d], s.idx);
	else
		ksync_srcu_read_unlock(dom[s.d], s.idx);
}

/* Does this thread hold a read_lock (not a down_read) section of domain @d? */
static bool own_section_open(int d)
{
	for (int k = 0; k < S.nopen; k++)
		if (S.open[k].d == d && !S.open[k].down)
			return true;
	return false;
}

/* The last report's text (copied: it may live on the reporter's stack), for the misuse checks. */
static char report_text[256];
static const char *last_report;

static void record_report(const char *file, int line, const char *what)
{
	(void)file, (void)line;
	snprintf(report_text, sizeof(report_text), "%s", what);
	last_report = report_text;
}

static void check_cookies_after_gp(int d)
{
	for (int k = 0; k < S.ncookies; k++)
		if (S.cookies[k].d == d)
			CHECK(ksync_poll_state_synchronize_srcu(dom[d], S.cookies[k].c));
}

static void barrier_checks(int d)
{
	ksync_srcu_barrier(dom[d]);
	for (int k = 0; k < S.ncb; k++)
		if (S.cbs[k]->d == d)
			CHECK(__atomic_load_n(&S.cbs[k]->ran, __ATOMIC_ACQUIRE) == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memset(&S, 0, sizeof(S));
	ksync_warn_hook = record_report;
	for (size_t i = 0; i + 1 < size && i < 400; i += 2) {
		unsigned int op = data[i] % 10, arg = data[i + 1];
		int d = (int)(arg & 1);
		unsigned long warns = ksync_warn_count;
		const char *misuse = NULL; /* what the report must name, if any */

		last_report = NULL;
		switch (op) {
		case 0: /* open a section */
		case 1:
			if (S.nopen < MAXOPEN && S.next_id < MAXSEC) {
				struct section *s = &S.open[S.nopen++];

				s->id = S.next_id++;
				s->d = d;
				s->down = op == 1;
				s->idx = s->down ? ksync_srcu_down_read(dom[d]) : ksync_srcu_read_lock(dom[d]);
			}
			break;
		case 2: /* close any open section: not necessarily the innermost */
			if (S.nopen) {
				close_section((int)(arg >> 1) % S.nopen);
			} else if (arg & 2) { /* misuse: no section to end */
				misuse = "up_read";
				ksync_srcu_up_read(dom[d], (int)(arg >> 2) & 1);
			} else {
				misuse = "unlock";
				ksync_srcu_read_unlock(dom[d], (int)(arg >> 2) % 3); /* 2: not an index */
			}
			break;
		case 3:
			if (S.ncb < MAXCB) {
				struct cb *c = calloc(1, sizeof(*c));

				CHECK(c);
				c->waits_for = open_mask(d);
				c->d = d;
				S.cbs[S.ncb++] = c;
				ksync_call_srcu(dom[d], &c->rcu, cb_func);
			}
			break;
		case 4: /* a cookie */
		case 5:
			if (S.ncookies < MAXCOOKIE) {
				struct cookie *k = &S.cookies[S.ncookies++];

				k->waits_for = open_mask(d);
				k->d = d;
				k->c = op == 4 ? ksync_get_state_synchronize_srcu(dom[d])
					       : ksync_start_poll_synchronize_srcu(dom[d]);
			}
			break;
		case 6: /* poll one */
			if (S.ncookies) {
				struct cookie *k = &S.cookies[(arg >> 1) % (unsigned int)S.ncookies];

				if (ksync_poll_state_synchronize_srcu(dom[k->d], k->c))
					CHECK(all_closed(k->waits_for));
			}
			break;
		case 7: /* synchronize: legal only with no section of this domain open here */
		case 8:
			if (!open_mask(d)) {
				if (op == 7)
					ksync_synchronize_srcu(dom[d]);
				else
					ksync_synchronize_srcu_expedited(dom[d]);
				check_cookies_after_gp(d);
			} else if (own_section_open(d)) { /* misuse: it would wait for itself */
				misuse = "synchronize";
				ksync_synchronize_srcu(dom[d]); /* reported, returns at once */
			}
			break;
		case 9:
			if (!open_mask(d)) {
				barrier_checks(d);
			} else if (own_section_open(d)) {
				if (arg & 2) {
					misuse = "barrier";
					ksync_srcu_barrier(dom[d]); /* reported, returns at once */
				} else {
					misuse = "cleanup";
					ksync_cleanup_srcu_struct(dom[d]); /* reported, the domain stays */
				}
			}
			break;
		}
		if (!misuse) {
			CHECK(ksync_warn_count == warns);
		} else {
			CHECK(ksync_warn_count - warns <= 1); /* once per call site */
			CHECK(!last_report || strstr(last_report, misuse));
		}
	}
	while (S.nopen)
		close_section(S.nopen - 1);
	for (int d = 0; d < NDOM; d++) {
		barrier_checks(d);
		ksync_synchronize_srcu(dom[d]);
		check_cookies_after_gp(d);
	}
	for (int k = 0; k < S.ncb; k++)
		free(S.cbs[k]);
	ksync_warn_hook = NULL;
	return 0;
}
