#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Check the Promela model of ksync SRCU exhaustively with spin, in membarrier
# and fenced mode, and check that each mutant (grace period without its first
# wait, without its second wait, without M0; fenced reader without its barrier;
# scans that read the other index's word) is rejected. The -DALTW=1 runs
# (nested locks on the current index, sections overlapping hand over hand)
# use one section per reader to stay small. Exits non-zero if the model fails or a mutant passes.
#   usage: srcu_model.sh path/to/srcu.pml [workdir]
set -u
pml=${1:?usage: srcu_model.sh srcu.pml [workdir]}
work=${2:-$(mktemp -d)}
CC=${CC:-cc}
mkdir -p "$work" && cp "$pml" "$work/srcu.pml" && cd "$work" || exit 2

check() { # $1 = mutant number, $2 = fenced (0/1), $3 = 1 for two slot words; returns pan's error count
	rm -f pan pan.* _spin_nvr.tmp srcu.pml.trail
	alt=""
	[ "${3:-0}" = 1 ] && alt="-DALTW=1 -DNSEC=1"
	spin -DMUTANT="$1" -DFENCED="$2" $alt -a srcu.pml >spin.log 2>&1 || { cat spin.log; return 255; }
	$CC -O2 -DSAFETY -DCOLLAPSE -o pan pan.c >cc.log 2>&1 || { cat cc.log; return 255; }
	./pan -m100000 >pan.log 2>&1
	if grep -q "max search depth too small" pan.log; then
		echo "model $1: search depth too small"; return 255
	fi
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log)
	states=$(sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' pan.log)
	echo "model MUTANT=$1 FENCED=$2 ALTW=${3:-0}: errors=$errs states=$states"
	return "${errs:-255}"
}

status=0
for fa in "0 0" "1 0" "0 1" "1 1"; do
	set -- $fa
	check 0 "$1" "$2"; r=$?
	[ "$r" -eq 0 ] || { echo "FAIL: the model (FENCED=$1 ALTW=$2) has errors"; cat pan.log; status=1; }
done
for mf in "1 0 0" "2 0 0" "3 0 0" "4 1 0" "5 0 1"; do
	set -- $mf
	check "$1" "$2" "$3"; r=$?
	if [ "$r" -eq 0 ] || [ "$r" -eq 255 ]; then
		echo "FAIL: mutant $1 (FENCED=$2) was not rejected"; status=1
	else
		echo "ok: mutant $1 (FENCED=$2) rejected"
	fi
done
exit $status
