/*
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * srcu.pml - Promela model of ksync SRCU (include/ksync/impl/srcu_read.h, srcu_gp.h):
 * the membarrier-mode read side and the grace period, on a TSO machine.
 *
 * Readers: load the index i, store depth 1 to their slot word of index i,
 * load the protected pointer (a version number), maybe nest a second
 * section (depth 2, then 1), use the version, store depth 0. A slot has one
 * word per index (ksync_srcu_words.ctr[i]), and ksync_srcu_read_lock_fast()
 * sections count in the same words as ksync_srcu_read_lock() ones (its
 * token is the word's address), so one model covers both forms.
 * Reader stores go through a FIFO store buffer that a flusher drains at any
 * time (TSO: a reader's data load may pass its own buffered lock store). The
 * reader has no barrier at all; membarrier() drains every buffer at once
 * (the barrier it forces on every running thread).
 *
 * Updater: publish a new version (removing the old one), then a grace period:
 * M0 = membarrier; wait until the inactive index drains; flip the index (a
 * buffered store of its own, committed at any later time); wait until the
 * old index drains; M_end (drain its buffer); then free the old version. A
 * scan reads the slot words of index i one per step while readers run;
 * index i has drained when none shows depth > 0. (The shared counters of
 * srcu_down_read are not modelled: fully ordered RMWs, the kernel's scheme.)
 * The safety property: no reader uses a version after it was freed.
 *
 * Fenced mode (spin -DFENCED=1): the reader waits for its own buffer to drain
 * after the lock store (its smp_mb B), and M0 only drains the updater's own
 * buffer (smp_mb instead of membarrier).
 *
 * The updater's stores (the removal, the flip) are buffered too; its full
 * barriers (M0, M_end) drain them.
 *
 * Nested locks on the current index (spin -DALTW=1, run with -DNSEC=1 to
 * keep it small): a nested lock loads the index again and, when it was
 * flipped since the outermost lock, counts in the word of the new index;
 * the outer section may then end first (sections overlapping hand over
 * hand).
 *
 * Mutants (spin -DMUTANT=n): 1 skips the first wait, 2 the second wait, 3 M0,
 * 4 (with -DFENCED=1) the reader's barrier B, 5 scans that read the word of
 * the other index. Each must produce an assertion violation; the model
 * without MUTANT must not, in either mode, with one or two slot words.
 * tests/model/srcu_model.sh checks all of this.
 */

#define NR 2		/* readers */
#ifndef NSEC
#define NSEC 2		/* sections of reader 0 (reader 1 has one) */
#endif
#define NGP 2		/* grace periods (versions 1..NGP published) */
#define NONE 255

#ifndef MUTANT
#define MUTANT 0
#endif
#ifndef FENCED
#define FENCED 0
#endif
#ifndef ALTW
#define ALTW 0
#endif
#define W1 8		/* store-buffer tag: the value goes to the word of index 1 */

byte idx = 0;		/* committed index */
byte pend_idx = NONE;	/* updater's buffered flip */
byte pend_ver = NONE;	/* updater's buffered removal (publication of a version) */
byte w0[NR];		/* slot words of index 0: the depth on it */
byte w1[NR];		/* slot words of index 1 */
byte ver = 0;		/* the published version */
bool freed[NGP + 1];
chan sb[NR] = [2] of { byte };	/* reader store buffers: W1 * index + depth */

inline commit(r) {
	sb[r]?c;
	if
	:: c >= W1 -> w1[r] = c - W1
	:: else -> w0[r] = c
	fi
}

/* The reader's store of depth @d to its word of index @k (buffered). */
#define STORE(r, k, d) sb[r]!(W1 * (k) + (d))

/* The updater's own full barrier: drain its buffer (removal before flip). */
inline updater_mb() {
	if
	:: pend_ver != NONE -> ver = pend_ver; pend_ver = NONE
	:: else -> skip
	fi;
	if
	:: pend_idx != NONE -> idx = pend_idx; pend_idx = NONE
	:: else -> skip
	fi
}

inline membarrier() {
	atomic {
		do
		:: nempty(sb[0]) -> commit(0)
		:: nempty(sb[1]) -> commit(1)
		:: empty(sb[0]) && empty(sb[1]) -> break
		od;
		updater_mb()
	}
}

/* ok = index i has drained: one slot word per step (mutant 5: the wrong word) */
inline scan(i) {
	ok = true;
	k = (MUTANT == 5 -> 1 - i : i);
	if :: (k == 0 && w0[0] > 0) || (k == 1 && w1[0] > 0) -> ok = false :: else -> skip fi;
	if :: (k == 0 && w0[1] > 0) || (k == 1 && w1[1] > 0) -> ok = false :: else -> skip fi
}

inline wait_idx(i) {
	do
	:: scan(i); if :: ok -> break :: else -> skip fi
	od
}

proctype reader(byte r; byte nsec) {
	byte i, v, n = 0;
#if ALTW
	byte j, v2;
	bool outer;
#endif
	do
	:: n < nsec ->
		i = idx;		/* the reader's own load; may stall here */
		STORE(r, i, 1);		/* outermost lock (buffered) */
		if
		:: FENCED && MUTANT != 4 -> empty(sb[r])	/* B: smp_mb */
		:: else -> skip
		fi;
		v = ver;		/* may pass the buffered lock store */
#if !ALTW
		if
		:: STORE(r, i, 2);	/* nested lock and unlock */
		   assert(!freed[ver]);
		   STORE(r, i, 1)
		:: skip
		fi;
		assert(!freed[v]);	/* the section uses version v */
		STORE(r, i, 0);		/* outermost unlock: depth 0 (buffered) */
#else
		outer = true;
		if
		:: j = idx;		/* a nested lock counts on the current index */
		   if
		   :: j == i ->
			STORE(r, i, 2);
			assert(!freed[ver]);
			STORE(r, i, 1)
		   :: else ->		/* flipped since the outer lock: the word of j */
			STORE(r, j, 1);
			if
			:: FENCED && MUTANT != 4 -> empty(sb[r])	/* B */
			:: else -> skip
			fi;
			v2 = ver;	/* the inner section's load */
			if		/* hand over hand: the outer section may end first */
			:: assert(!freed[v]); STORE(r, i, 0); outer = false
			:: skip
			fi;
			assert(!freed[v2]);
			STORE(r, j, 0)
		   fi
		:: skip
		fi;
		if
		:: outer ->
			assert(!freed[v]);
			STORE(r, i, 0)
		:: else -> skip
		fi;
#endif
		n++
	:: else -> break
	od
}

proctype flusher() {
	byte c;
end:	do
	:: atomic { nempty(sb[0]) -> commit(0) }
	:: atomic { nempty(sb[1]) -> commit(1) }
	:: atomic { pend_ver != NONE -> ver = pend_ver; pend_ver = NONE }
	:: atomic { pend_ver == NONE && pend_idx != NONE -> idx = pend_idx; pend_idx = NONE }
	od
}

proctype updater() {
	byte g = 1, cur, c, k;
	bool ok;
	do
	:: g <= NGP ->
		pend_ver = g;		/* remove version g-1 (buffered) */
		if
		:: MUTANT != 3 && !FENCED -> membarrier()		/* M0 */
		:: MUTANT != 3 && FENCED -> atomic { updater_mb() }	/* M0: smp_mb */
		:: MUTANT == 3 -> skip
		fi;
		cur = idx;		/* pend_idx is NONE here: committed by M_end */
		if
		:: MUTANT != 1 -> wait_idx(1 - cur)
		:: else -> skip
		fi;
		pend_idx = 1 - cur;	/* the flip (buffered) */
		if
		:: MUTANT != 2 -> wait_idx(cur)
		:: else -> skip
		fi;
		atomic { updater_mb() };	/* M_end: smp_mb drains the updater's buffer */
		freed[g - 1] = true;
		g++
	:: else -> break
	od
}

init {
	atomic {
		run flusher();
		run reader(0, NSEC);
		run reader(1, 1);
		run updater()
	}
}
