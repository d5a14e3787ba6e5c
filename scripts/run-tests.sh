#!/usr/bin/env bash
# The whole ksync test suite, from a fresh Debian 12 machine (run as root):
#   1. gcc, Release: every test but the long stress runs, header hygiene, the
#      spin models and the benchmark smoke runs included;
#   2. clang with AddressSanitizer + UndefinedBehaviorSanitizer, atomics on
#      __atomic builtins (ASan cannot see accesses made through CK's inline
#      assembly; stage 1 keeps the CK back-end tested), with the libFuzzer
#      targets: every test but the stress runs and the kinds hygiene, model
#      and bench;
#   3. clang with ThreadSanitizer, atomics on __atomic builtins: the
#      concurrent tests (no suppressions).
# Stages pick tests by CTest label, anchored (a label must match whole): the
# tiers quick/concurrent/stress and the kinds (unit, torture, ..., hygiene,
# model, bench, fuzz), see tests/README.md.
# Closes with "N passed, N failed" over all three builds, counted from the
# JUnit reports ctest writes (build/test-*.junit.xml), not from its text.
# KSYNC_TEST_STAGES="gcc asan tsan" picks stages; build trees go to build/test-*.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/deps.sh test || { echo "missing packages: no stage ran"; echo "0 passed, 1 failed"; exit 1; }

stages=${KSYNC_TEST_STAGES:-gcc asan tsan}
jobs=$(nproc 2>/dev/null || echo 2)
total_pass=0 total_fail=0 total_skip=0 broken=0
start=$(date +%s)

# junit_summary FILE: reads ctest's --output-junit report and prints
# "PASSED FAILED SKIPPED" on one line, then the failed tests' names, one a line.
# Per <testcase status=...>: "run" passed, "fail" failed, "disabled" is not
# counted, "notrun" is skipped when its <skipped message> starts with SKIP_
# (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION) and failed otherwise (missing
# executable, failed fixture...), as ctest's own summary counts it. Exits 2
# when the file is missing, has no <testsuite>, or holds fewer <testcase>s than
# its tests= attribute says (a truncated report).
junit_summary() {
	[ -s "$1" ] || return 2
	awk -v RS='<' '
	function attr(rec, key) {
		if (!match(rec, "[ \t\r\n]" key "=\"[^\"]*\"")) return ""
		return substr(rec, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
	}
	function unescape(v) {
		gsub(/&lt;/, "<", v); gsub(/&gt;/, ">", v); gsub(/&quot;/, "\"", v)
		gsub(/&apos;/, "\047", v); gsub(/&amp;/, "\\&", v)
		return v
	}
	function settle() {
		if (status == "run") pass++
		else if (status == "fail") { fail++; failed = failed "\n" name }
		else if (status == "notrun") {
			if (skip_msg ~ /^SKIP_/) skip++
			else { fail++; failed = failed "\n" name " (not run: " skip_msg ")" }
		} else if (status != "disabled" && status != "") { fail++; failed = failed "\n" name " (" status ")" }
		status = ""; skip_msg = ""
	}
	/^testsuite[ \t\r\n\/>]/ { suites++; declared += attr($0, "tests") }
	/^testcase[ \t\r\n\/>]/ {
		settle(); cases++
		status = attr($0, "status"); name = unescape(attr($0, "name"))
		if (status == "") status = "(no status)"
	}
	/^skipped[ \t\r\n\/>]/ { skip_msg = unescape(attr($0, "message")) }
	/^\/testcase[ \t\r\n>]/ { settle() }
	END {
		settle()
		if (!suites || cases != declared) exit 2
		printf "%d %d %d%s\n", pass, fail, skip, failed
	}' "$1"
}

run_stage() { # name, ctest args, cmake args...
	local name=$1 ctest_args=$2; shift 2
	local dir=build/test-$name junit="$PWD/build/test-$name.junit.xml" summary p f s
	echo "=== [$name] configure + build ($dir)"
	if ! cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1; then
		cat "$dir.configure.log"; broken=1; return
	fi
	# Parts left out for a missing optional dependency (one line each).
	grep -h '^-- ksync: skipping' "$dir.configure.log" | sed "s/^-- /=== [$name] /"
	if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
		tail -60 "$dir.build.log"; broken=1; return
	fi
	echo "=== [$name] ctest $ctest_args"
	rm -f "$junit"
	# The counts come from the JUnit report; ctest's exit status and text are
	# for the reader.
	# shellcheck disable=SC2086
	ctest --test-dir "$dir" --output-on-failure -j"$jobs" --output-junit "$junit" $ctest_args
	if ! summary=$(junit_summary "$junit"); then
		echo "=== [$name] ctest left no usable JUnit report ($junit)"; broken=1; return
	fi
	read -r p f s <<<"${summary%%$'\n'*}"
	echo "=== [$name] $p passed, $f failed, $s skipped (JUnit: ${junit#"$PWD"/})"
	[ "$f" -eq 0 ] || sed -n '2,$s/^/=== ['"$name"'] failed: /p' <<<"$summary"
	if [ $((p + f)) -eq 0 ]; then
		echo "=== [$name] ctest ran no test"; broken=1
	fi
	total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
}

mkdir -p build
for s in $stages; do
	case $s in
	gcc)
		CC=gcc CXX=g++ run_stage gcc "-LE ^stress$" -DCMAKE_BUILD_TYPE=Release ;;
	asan)
		CC=clang CXX=clang++ run_stage asan "-LE ^(stress|hygiene|model|bench)$" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSYNC_SANITIZE=address,undefined -DKSYNC_ATOMICS=builtins -DKSYNC_BUILD_BENCH=OFF \
			-DKSYNC_BUILD_FUZZERS=ON ;;
	tsan)
		CC=clang CXX=clang++ run_stage tsan "-L ^concurrent$ -LE ^stress$" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSYNC_SANITIZE=thread -DKSYNC_BUILD_BENCH=OFF ;;
	*) echo "unknown stage $s"; broken=1 ;;
	esac
done

echo "=== test suite took $(( $(date +%s) - start )) s (stages: $stages)"
[ "$total_skip" -eq 0 ] || echo "($total_skip tests skipped themselves: counted neither way)"
# A run that ran no test (KSYNC_TEST_STAGES="  ", every stage broken) is no pass.
[ $((total_pass + total_fail)) -gt 0 ] || { echo "no test ran"; broken=1; }
[ "$broken" -eq 0 ] || { echo "a stage failed to configure, build or report"; total_fail=$((total_fail + 1)); }
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
