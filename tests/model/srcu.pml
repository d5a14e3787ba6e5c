/*
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * srcu.pml - Promela model of ksync SRCU (include/ksync/impl/srcu_read.h, srcu_gp.h):
 * the membarrier-mode read side and the grace period, on a TSO machine.
 *
 * Readers: load the index i, store 2|i to their slot word (depth 1 on
 * index i), load the protected pointer (a version number), maybe nest a
 * second section (store 4|i, then 2|i), use the version, store i (depth 0).
 * Reader stores go through a FIFO store buffer that a flusher drains at any
 * time (TSO: a reader's data load may pass its own buffered lock store). The
 * reader has no barrier at all; membarrier() drains every buffer at once
 * (the barrier it forces on every running thread).
 *
 * Updater: publish a new version (removing the old one), then a grace period:
 * M0 = membarrier; wait until the inactive index drains; flip the index (a
 * buffered store of its own, committed at any later time); wait until the
 * old index drains; M_end (drain its buffer); then free the old version. A
 * scan reads the slot words one per step while readers run; index i has
 * drained when no word shows depth > 0 on i. (The shared counters of
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
 * Two slot words (spin -DALTW=1, run with -DNSEC=1 to keep it small): a
 * nested lock loads the index again and, when it was flipped since the
 * outermost lock, counts in the slot's second word (alt) on the new index;
 * the outer section may then end first (sections overlapping hand over
 * hand). Scans check both words.
 *
 * Mutants (spin -DMUTANT=n): 1 skips the first wait, 2 the second wait, 3 M0,
 * 4 (with -DFENCED=1) the reader's barrier B, 5 (with -DALTW=1) scans that
 * ignore the alt word. Each must produce an assertion violation; the model
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
#define ALT 8		/* store-buffer tag: the value goes to the slot's second word */

byte idx = 0;		/* committed index */
byte pend_idx = NONE;	/* updater's buffered flip */
byte pend_ver = NONE;	/* updater's buffered removal (publication of a version) */
byte w[NR];		/* slot words: 2 * depth + index */
byte a[NR];		/* second slot words (alt), same encoding */
byte ver = 0;		/* the published version */
bool freed[NGP + 1];
chan sb[NR] = [2] of { byte };	/* reader store buffers: values for w[r] */

inline commit(r) {
	sb[r]?c;
	if
	:: c >= ALT -> a[r] = c - ALT
	:: else -> w[r] = c
	fi
}

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

/* ok = index i has drained: one slot word per step */
inline scan(i) {
	ok = true;
	if :: w[0] >= 2 && (w[0] & 1) == i -> ok = false :: else -> skip fi;
	if :: w[1] >= 2 && (w[1] & 1) == i -> ok = false :: else -> skip fi
#if ALTW
	;
	if :: MUTANT != 5 && a[0] >= 2 && (a[0] & 1) == i -> ok = false :: else -> skip fi;
	if :: MUTANT != 5 && a[1] >= 2 && (a[1] & 1) == i -> ok = false :: else -> skip fi
#endif
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
		sb[r]!(2 | i);		/* outermost lock (buffered) */
		if
		:: FENCED && MUTANT != 4 -> empty(sb[r])	/* B: smp_mb */
		:: else -> skip
		fi;
		v = ver;		/* may pass the buffered lock store */
#if !ALTW
		if
		:: sb[r]!(4 | i);	/* nested lock and unlock */
		   assert(!freed[ver]);
		   sb[r]!(2 | i)
		:: skip
		fi;
		assert(!freed[v]);	/* the section uses version v */
		sb[r]!i;		/* outermost unlock: depth 0 (buffered) */
#else
		outer = true;
		if
		:: j = idx;		/* a nested lock counts on the current index */
		   if
		   :: j == i ->
			sb[r]!(4 | i);
			assert(!freed[ver]);
			sb[r]!(2 | i)
		   :: else ->		/* flipped since the outer lock: the alt word */
			sb[r]!(ALT + (2 | j));
			if
			:: FENCED && MUTANT != 4 -> empty(sb[r])	/* B */
			:: else -> skip
			fi;
			v2 = ver;	/* the inner section's load */
			if		/* hand over hand: the outer section may end first */
			:: assert(!freed[v]); sb[r]!i; outer = false
			:: skip
			fi;
			assert(!freed[v2]);
			sb[r]!(ALT + j)
		   fi
		:: skip
		fi;
		if
		:: outer ->
			assert(!freed[v]);
			sb[r]!i
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
	byte g = 1, cur, c;
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
