#!/usr/bin/env bash
# The whole ksync test suite, from a fresh Debian 12 machine (run as root):
#   1. gcc, Release: every test but the long stress runs, plus header
#      hygiene, the spin models and the benchmark smoke runs;
#   2. clang with AddressSanitizer + UndefinedBehaviorSanitizer, atomics on
#      __atomic builtins (ASan cannot see accesses made through CK's inline
#      assembly; stage 1 keeps the CK back-end tested): every test;
#   3. clang with ThreadSanitizer, atomics on __atomic builtins: the
#      concurrent tests (no suppressions).
# Closes with "N passed, N failed" over all three builds.
# KSYNC_TEST_STAGES="gcc asan tsan" picks stages; build trees go to build/test-*.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test || { echo "missing packages: no stage ran"; echo "0 passed, 1 failed"; exit 1; }

stages=${KSYNC_TEST_STAGES:-gcc asan tsan}
jobs=$(nproc 2>/dev/null || echo 2)
total_pass=0 total_fail=0 broken=0
start=$(date +%s)

run_stage() { # name, ctest args, cmake args...
	local name=$1 ctest_args=$2; shift 2
	local dir=build/test-$name log
	echo "=== [$name] configure + build ($dir)"
	if ! cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1; then
		cat "$dir.configure.log"; broken=1; return
	fi
	if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
		tail -60 "$dir.build.log"; broken=1; return
	fi
	echo "=== [$name] ctest $ctest_args"
	log=$(mktemp)
	# shellcheck disable=SC2086
	ctest --test-dir "$dir" --output-on-failure -j"$jobs" $ctest_args 2>&1 | tee "$log"
	local line p f n
	line=$(grep -E "tests passed, [0-9]+ tests? failed out of" "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "=== [$name] ctest printed no summary"; broken=1
	else
		f=$(sed -E 's/.*, ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
		n=$(sed -E 's/.*failed out of ([0-9]+).*/\1/' <<<"$line")
		p=$((n - f))
		total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
	fi
	rm -f "$log"
}

mkdir -p build
for s in $stages; do
	case $s in
	gcc)
		CC=gcc CXX=g++ run_stage gcc "-LE stress" -DCMAKE_BUILD_TYPE=Release ;;
	asan)
		CC=clang CXX=clang++ run_stage asan "-LE stress|hygiene|model|bench" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSYNC_SANITIZE=address,undefined -DKSYNC_ATOMICS=builtins -DKSYNC_BUILD_BENCH=OFF ;;
	tsan)
		CC=clang CXX=clang++ run_stage tsan "-L concurrent -LE stress" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSYNC_SANITIZE=thread -DKSYNC_BUILD_BENCH=OFF ;;
	*) echo "unknown stage $s"; broken=1 ;;
	esac
done

echo "=== test suite took $(( $(date +%s) - start )) s (stages: $stages)"
# A run that ran no test (KSYNC_TEST_STAGES="  ", every stage broken) is no pass.
[ $((total_pass + total_fail)) -gt 0 ] || { echo "no test ran"; broken=1; }
[ "$broken" -eq 0 ] || { echo "a stage failed to configure, build or report"; total_fail=$((total_fail + 1)); }
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
