/*
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * srcu.pml - Promela model of ksync SRCU (include/ksync/impl/srcu_core.h):
 * the membarrier-mode read side and the grace period, on a TSO machine.
 *
 * Readers: load the index, store lock[i]+1 of their own slot, load the
 * protected pointer (a version number), use it, store unlock[i]+1. Reader
 * stores go through a FIFO store buffer that a flusher drains at any time
 * (TSO: a reader's data load may pass its own buffered lock store). The
 * reader has no barrier at all; membarrier() drains every buffer at once
 * (the barrier it forces on every running thread).
 *
 * Updater: publish a new version (removing the old one), then a grace period:
 * M0 = membarrier; wait until the inactive index drains; flip the index (a
 * buffered store of its own, committed at any later time); wait until the
 * old index drains; M_end (drain its buffer); then free the old version. A
 * scan sums unlock counts, then lock counts, one slot per step, while readers
 * run. The safety property: no reader uses a version after it was freed.
 *
 * Mutants (spin -DMUTANT=n): 1 skips the first wait, 2 the second wait, 3 M0.
 * Each must produce an assertion violation; the model without MUTANT must not.
 * tests/srcu_model.sh checks all of this.
 */

#define NR 2		/* readers */
#define NSEC 2		/* sections per reader */
#define NGP 2		/* grace periods (versions 1..NGP published) */
#define NONE 255

#ifndef MUTANT
#define MUTANT 0
#endif

byte idx = 0;		/* committed index */
byte pend_idx = NONE;	/* updater's buffered flip */
byte lockc[4];		/* lockc[r*2+i] */
byte unlockc[4];
byte ver = 0;		/* the published version */
bool freed[NGP + 1];
chan sb[NR] = [2] of { byte };	/* reader store buffers: 0,1 lock i; 2,3 unlock i */

inline commit(r) {
	sb[r]?c;
	if
	:: c < 2 -> lockc[r * 2 + c]++
	:: else -> unlockc[r * 2 + c - 2]++
	fi
}

inline membarrier() {
	atomic {
		do
		:: nempty(sb[0]) -> commit(0)
		:: nempty(sb[1]) -> commit(1)
		:: empty(sb[0]) && empty(sb[1]) -> break
		od;
		if
		:: pend_idx != NONE -> idx = pend_idx; pend_idx = NONE
		:: else -> skip
		fi
	}
}

/* ok = index i has drained: unlock sum, then lock sum, a slot per step */
inline scan(i) {
	u = 0; l = 0;
	u = u + unlockc[0 * 2 + i];
	u = u + unlockc[1 * 2 + i];
	l = l + lockc[0 * 2 + i];
	l = l + lockc[1 * 2 + i];
	ok = (l == u)
}

inline wait_idx(i) {
	do
	:: scan(i); if :: ok -> break :: else -> skip fi
	od
}

proctype reader(byte r) {
	byte i, v, n = 0;
	do
	:: n < NSEC ->
		i = idx;		/* the reader's own load; may stall here */
		sb[r]!i;		/* lock[i]++ (buffered) */
		v = ver;		/* may pass the buffered lock store */
		assert(!freed[v]);	/* the section uses version v */
		sb[r]!(2 + i);		/* unlock[i]++ (buffered) */
		n++
	:: else -> break
	od
}

proctype flusher() {
	byte c;
end:	do
	:: atomic { nempty(sb[0]) -> commit(0) }
	:: atomic { nempty(sb[1]) -> commit(1) }
	:: atomic { pend_idx != NONE -> idx = pend_idx; pend_idx = NONE }
	od
}

proctype updater() {
	byte g = 1, cur, u, l, c;
	bool ok;
	do
	:: g <= NGP ->
		ver = g;		/* remove version g-1 */
		if
		:: MUTANT != 3 -> membarrier()	/* M0 */
		:: else -> skip
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
		atomic {		/* M_end: smp_mb drains the updater's buffer */
			if
			:: pend_idx != NONE -> idx = pend_idx; pend_idx = NONE
			:: else -> skip
			fi
		};
		freed[g - 1] = true;
		g++
	:: else -> break
	od
}

init {
	atomic {
		run flusher();
		run reader(0);
		run reader(1);
		run updater()
	}
}
