#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Writes the operations of ksync_atomic_t, ksync_atomic_long_t and
# ksync_atomic64_t as plain functions, one header per type, from the tables
# below (the kernel's scripts/atomic/gen-atomics.sh -> include/linux/atomic/):
#
#   include/ksync/impl/atomic_int.h    ksync_atomic_*()       on int
#   include/ksync/impl/atomic_long.h   ksync_atomic_long_*()  on long
#   include/ksync/impl/atomic64.h      ksync_atomic64_*()     on int64_t
#
# so that grep finds every definition by its name. <ksync/atomic.h> includes
# them; the primitives they call (ksync__fetch_add_long_full() & co, the
# choice between Concurrency Kit and the __atomic builtins) are hand-written
# in <ksync/impl/atomic_backend.h>.
#
#   usage: scripts/gen-atomics.sh [DIR]
# writes DIR/impl/atomic_*.h, DIR being include/ksync of this tree unless
# given. Change the tables, run it, commit its output with the change:
# tests/hygiene/gen_atomics_check.sh (CTest gen_atomics_check) runs it into a
# temporary directory and fails on any difference from the checked-in files.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../include/ksync}

# The types: header | public prefix | atomic type | value type | its
# unsigned twin | the primitives' family (ksync__OP_<family>_<order>).
types='
atomic_int.h  | ksync_atomic      | ksync_atomic_t      | int     | unsigned int  | int
atomic_long.h | ksync_atomic_long | ksync_atomic_long_t | long    | unsigned long | long
atomic64.h    | ksync_atomic64    | ksync_atomic64_t    | int64_t | uint64_t      | s64
'

# The kernel's four orders of the value-returning operations: the suffix of
# the public name | the primitives' order | what it means.
orders='
         | full | fully ordered, as if ksync_smp_mb() stood before and after
_acquire | acq  | acquire: no later access moves before it
_release | rel  | release: no earlier access moves after it
_relaxed | rlx  | relaxed: atomic, unordered
'

# The operations. A line at the left margin is a function's return type,
# name and parameters; the tab-indented lines after it are its body (one
# line is written as "{ body }", more as a block); comments and blank lines
# are copied. In both, {P} stands for the public prefix, {V} the atomic
# type, {T} the value type, {UT} its unsigned twin, {N} the primitives'
# family, and in the ordered operations {S} for the suffix and {O} for the
# order. Arithmetic on values is done in {UT} and converted back to {T}, so
# that results wrap as the kernel's do (it builds with -fno-strict-overflow)
# instead of being signed-overflow UB, e.g. inc_return at the largest value.
unordered='
/*
 * {P}_read(v), _set(v, i): untorn load and store, unordered;
 * _read_acquire(v), _set_release(v, i): the same in those orders.
 */
{T} {P}_read(const {V} *v)
	return ksync__ld_{N}(&v->counter);
{T} {P}_read_acquire(const {V} *v)
	return ksync_smp_load_acquire(&v->counter);
void {P}_set({V} *v, {T} i)
	ksync__st_{N}(&v->counter, i);
void {P}_set_release({V} *v, {T} i)
	ksync_smp_store_release(&v->counter, i);

/*
 * {P}_add(i, v), _sub(i, v), _inc(v), _dec(v), _and(i, v), _or(i, v),
 * _xor(i, v), _andnot(i, v): read-modify-writes that return nothing;
 * unordered (ksync_smp_mb__before_atomic()/after_atomic() order them).
 */
void {P}_add({T} i, {V} *v)
	ksync__add_{N}(&v->counter, i);
void {P}_sub({T} i, {V} *v)
	ksync__add_{N}(&v->counter, ({T})(0 - ({UT})i));
void {P}_inc({V} *v)
	ksync__add_{N}(&v->counter, 1);
void {P}_dec({V} *v)
	ksync__add_{N}(&v->counter, -1);
void {P}_and({T} i, {V} *v)
	ksync__and_{N}(&v->counter, i);
void {P}_or({T} i, {V} *v)
	ksync__or_{N}(&v->counter, i);
void {P}_xor({T} i, {V} *v)
	ksync__xor_{N}(&v->counter, i);
void {P}_andnot({T} i, {V} *v)
	ksync__and_{N}(&v->counter, ({T})~({UT})i);
'

ordered_doc='
/*
 * The value-returning read-modify-writes, in the kernel'"'"'s four orders:
 * {P}_OP() fully ordered, _OP_acquire(), _OP_release(), _OP_relaxed():
 *   fetch_add, fetch_sub, fetch_inc, fetch_dec, fetch_and, fetch_or,
 *   fetch_xor, fetch_andnot  - apply, return the OLD value;
 *   add_return, sub_return, inc_return, dec_return - apply, return the NEW value;
 *   xchg(v, new)             - store, return the old value;
 *   cmpxchg(v, old, new)     - store @new if @v holds @old; return the value seen;
 *   try_cmpxchg(v, &old, new) - the same, true on success; on failure the value
 *                              seen is written to old, and nothing is ordered.
 */'

# Written once per order.
ordered='
{T} {P}_fetch_add{S}({T} i, {V} *v)
	return ksync__fetch_add_{N}_{O}(&v->counter, i);
{T} {P}_fetch_sub{S}({T} i, {V} *v)
	return ksync__fetch_add_{N}_{O}(&v->counter, ({T})(0 - ({UT})i));
{T} {P}_fetch_inc{S}({V} *v)
	return ksync__fetch_add_{N}_{O}(&v->counter, 1);
{T} {P}_fetch_dec{S}({V} *v)
	return ksync__fetch_add_{N}_{O}(&v->counter, -1);
{T} {P}_add_return{S}({T} i, {V} *v)
	return ({T})(({UT})ksync__fetch_add_{N}_{O}(&v->counter, i) + ({UT})i);
{T} {P}_sub_return{S}({T} i, {V} *v)
	return ({T})(({UT})ksync__fetch_add_{N}_{O}(&v->counter, ({T})(0 - ({UT})i)) - ({UT})i);
{T} {P}_inc_return{S}({V} *v)
	return ({T})(({UT})ksync__fetch_add_{N}_{O}(&v->counter, 1) + 1);
{T} {P}_dec_return{S}({V} *v)
	return ({T})(({UT})ksync__fetch_add_{N}_{O}(&v->counter, -1) - 1);
{T} {P}_fetch_and{S}({T} i, {V} *v)
	return ksync__fetch_and_{N}_{O}(&v->counter, i);
{T} {P}_fetch_or{S}({T} i, {V} *v)
	return ksync__fetch_or_{N}_{O}(&v->counter, i);
{T} {P}_fetch_xor{S}({T} i, {V} *v)
	return ksync__fetch_xor_{N}_{O}(&v->counter, i);
{T} {P}_fetch_andnot{S}({T} i, {V} *v)
	return ksync__fetch_and_{N}_{O}(&v->counter, ({T})~({UT})i);
{T} {P}_xchg{S}({V} *v, {T} n)
	return ksync__xchg_{N}_{O}(&v->counter, n);
bool {P}_try_cmpxchg{S}({V} *v, {T} *old, {T} n)
	return ksync__try_cmpxchg_{N}_{O}(&v->counter, old, n);
{T} {P}_cmpxchg{S}({V} *v, {T} old, {T} n)
	ksync__try_cmpxchg_{N}_{O}(&v->counter, &old, n); return old;
'

conditional='
/*
 * The tests and the conditional operations, fully ordered when they change @v:
 *   dec_and_test(v), inc_and_test(v), sub_and_test(i, v), add_negative(i, v)
 *                                 - test the NEW value;
 *   fetch_add_unless(v, a, u)     - add @a unless @v holds @u; return the old value;
 *   add_unless(v, a, u)           - the same, true if it added;
 *   inc_not_zero(v)               - increment unless 0; true if it did;
 *   inc_unless_negative(v), dec_unless_positive(v) - true if it changed @v;
 *   dec_if_positive(v)            - decrement if the result stays >= 0;
 *                                   returns old - 1 either way.
 */
bool {P}_dec_and_test({V} *v)
	return ksync__fetch_add_{N}_full(&v->counter, -1) == 1;
bool {P}_inc_and_test({V} *v)
	return ksync__fetch_add_{N}_full(&v->counter, 1) == -1;
bool {P}_sub_and_test({T} i, {V} *v)
	return ksync__fetch_add_{N}_full(&v->counter, ({T})(0 - ({UT})i)) == i;
bool {P}_add_negative({T} i, {V} *v)
	return {P}_add_return(i, v) < 0;
{T} {P}_fetch_add_unless({V} *v, {T} a, {T} u)
	{T} c = ksync__ld_{N}(&v->counter);
	do {
		if (c == u)
			return c;
	} while (!ksync__try_cmpxchg_{N}_full(&v->counter, &c, ({T})(({UT})c + ({UT})a)));
	return c;
bool {P}_add_unless({V} *v, {T} a, {T} u)
	return {P}_fetch_add_unless(v, a, u) != u;
bool {P}_inc_not_zero({V} *v)
	return {P}_add_unless(v, 1, 0);
bool {P}_inc_unless_negative({V} *v)
	{T} c = ksync__ld_{N}(&v->counter);
	do {
		if (c < 0)
			return false;
	} while (!ksync__try_cmpxchg_{N}_full(&v->counter, &c, ({T})(({UT})c + 1)));
	return true;
bool {P}_dec_unless_positive({V} *v)
	{T} c = ksync__ld_{N}(&v->counter);
	do {
		if (c > 0)
			return false;
	} while (!ksync__try_cmpxchg_{N}_full(&v->counter, &c, ({T})(({UT})c - 1)));
	return true;
{T} {P}_dec_if_positive({V} *v)
	{T} c = ksync__ld_{N}(&v->counter), d;
	do {
		d = ({T})(({UT})c - 1);
		if (d < 0)
			break;
	} while (!ksync__try_cmpxchg_{N}_full(&v->counter, &c, d));
	return d;
'

trim() { local s=${1#"${1%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# subst TEXT: TEXT with the placeholders of the current type (and order).
subst() {
	local s=$1
	s=${s//'{P}'/$P}; s=${s//'{V}'/$V}; s=${s//'{UT}'/$UT}; s=${s//'{T}'/$T}
	s=${s//'{N}'/$N}; s=${s//'{S}'/${S-}}; s=${s//'{O}'/${O-}}
	printf '%s\n' "$s"
}

# functions TEXT: the C of a table of operations (placeholders replaced).
functions() {
	local line sig='' body=()
	flush() {
		[ -n "$sig" ] || return 0
		printf 'static KSYNC_ALWAYS_INLINE %s\n' "$sig"
		if [ ${#body[@]} -eq 1 ]; then
			printf '{ %s }\n' "${body[0]}"
		else
			printf '{\n'
			printf '\t%s\n' "${body[@]}"
			printf '}\n'
		fi
		sig='' body=()
	}
	while IFS= read -r line; do
		case $line in
		$'\t'*) body+=("${line#$'\t'}") ;;
		'' | '/*'* | ' *'*) flush; printf '%s\n' "$line" ;;
		*) flush; sig=$line ;;
		esac
	done < <(subst "$1" | sed '1{/^$/d}; ${/^$/d}')
	flush
}

header() { # FILE: the header of the current type
	local guard
	guard=KSYNC_IMPL_$(tr '[:lower:]' '[:upper:]' <<<"${1%.h}")_H
	cat <<EOF
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ksync/impl/$1 - every operation of $V, on $T.
 * Private: include <ksync/atomic.h>, whose comment gives the ordering rules
 * (<ksync/linux/atomic.h> has the kernel's names for them).
 *
 * Generated by scripts/gen-atomics.sh from its tables of operations, orders
 * and types: do not edit. Change the script, run it and commit its output;
 * the hygiene test gen_atomics_hygiene fails when they differ.
 *
 * Arithmetic on values is done in $UT and converted back, so that
 * results wrap as the kernel's do (it builds with -fno-strict-overflow)
 * instead of being signed-overflow UB, e.g. inc_return at the largest $T.
 */
#ifndef $guard
#define $guard

#include <ksync/impl/atomic_backend.h>

KSYNC_EXTERN_C_BEGIN

EOF
	functions "$unordered"
	echo
	functions "$ordered_doc"
	while IFS='|' read -r S O what; do
		[ -n "$O" ] || continue
		S=$(trim "$S") O=$(trim "$O") what=$(trim "$what")
		echo
		echo "/* ${P}_OP$S(): $what. */"
		functions "$ordered"
	done <<<"$orders"
	echo
	functions "$conditional"
	cat <<EOF

KSYNC_EXTERN_C_END

#endif /* $guard */
EOF
}

mkdir -p "$out/impl"
while IFS='|' read -r file P V T UT N; do
	[ -n "$N" ] || continue
	file=$(trim "$file") P=$(trim "$P") V=$(trim "$V") T=$(trim "$T") UT=$(trim "$UT") N=$(trim "$N")
	S='' O=''
	header "$file" >"$out/impl/$file.tmp"
	# Unchanged files keep their time stamps (nothing to rebuild).
	if cmp -s "$out/impl/$file.tmp" "$out/impl/$file"; then
		rm "$out/impl/$file.tmp"
	else
		mv "$out/impl/$file.tmp" "$out/impl/$file"
	fi
done <<<"$types"
