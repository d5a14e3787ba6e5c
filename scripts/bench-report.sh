#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench-report.sh - run ksync's benchmark suites and render docs/benchmarks.md.
#
#   scripts/bench-report.sh [--short|--full] [--out DIR] [--build DIR] [--json DIR]
#   scripts/bench-report.sh --render-only --json DIR [--out DIR]
#
# 1. Configures and builds a Release tree (default build/bench-report) when it
#    has no bench_srcu, bench_bare_read or bench_registry yet (and rebuilds them
#    otherwise: ninja does nothing when nothing changed).
# 2. Runs bench_bare_read (--json), bench_srcu and bench_registry
#    (--benchmark_format=json via --benchmark_out), one JSON file each, into
#    the JSON directory (default <build>/bench-report-json).
#      --short  threads up to 2, --benchmark_min_time=0.05 s, one run each:
#               under 2 minutes on a 2-core machine (the committed report);
#      --full   threads up to the number of CPUs (at least 2),
#               --benchmark_min_time=0.5 s, 3 repetitions, medians.
# 3. From those JSON files alone (--render-only re-renders from them), writes
#    <out>/benchmarks.md (default docs/): the machine, the commands, the
#    headline ratios of the performance issue, a table of every ksync/peer
#    time ratio, and gnuplot PNG charts in <out>/benchmarks/. When <out> is
#    this tree's docs/, the headline table in README.md (between the
#    bench-report:begin/end markers) is refreshed too.
# Needs cmake, ninja, a C/C++ compiler, Google Benchmark, liburcu, jq, gnuplot.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=short out="$root/docs" build="$root/build/bench-report" json="" render_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--short) mode=short ;;
	--full) mode=full ;;
	--out) out=$2; shift ;;
	--out=*) out=${1#--out=} ;;
	--build) build=$2; shift ;;
	--build=*) build=${1#--build=} ;;
	--json) json=$2; shift ;;
	--json=*) json=${1#--json=} ;;
	--render-only) render_only=1 ;;
	-h | --help) sed -n '3,22p' "$0"; exit 0 ;;
	*) echo "bench-report.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
for tool in jq gnuplot; do
	command -v $tool >/dev/null || { echo "bench-report.sh: $tool is missing (apt-get install ${tool/gnuplot/gnuplot-nox})" >&2; exit 1; }
done
json=${json:-$build/bench-report-json}
mkdir -p "$out/benchmarks" "$json"
out=$(cd "$out" && pwd) json=$(cd "$json" && pwd)
charts="$out/benchmarks"

# ---- 1-2: build and run -----------------------------------------------------
if [ "$render_only" -eq 0 ]; then
	started=$(date +%s)
	if [ ! -f "$build/CMakeCache.txt" ]; then
		cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKSYNC_BUILD_TESTS=OFF \
			-DKSYNC_BUILD_EXAMPLES=OFF >"$build.configure.log" 2>&1 ||
			{ cat "$build.configure.log"; exit 1; }
	fi
	cmake --build "$build" --target bench_srcu bench_bare_read bench_registry >"$build.build.log" 2>&1 ||
		{ tail -40 "$build.build.log"; exit 1; }
	ncpu=$(nproc)
	if [ "$mode" = short ]; then
		maxthr=2
		gb=(--benchmark_min_time=0.05)
		bare=(--pairs=20 --reps=5 "--threads=1,2" --stat=best)
	else
		maxthr=$((ncpu > 2 ? ncpu : 2))
		gb=(--benchmark_min_time=0.5 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true)
		thr=1; list=1
		while [ $((thr * 2)) -le "$maxthr" ]; do thr=$((thr * 2)); list="$list,$thr"; done
		[ "$thr" -eq "$maxthr" ] || list="$list,$maxthr"
		bare=(--pairs=100 --reps=9 "--threads=$list" --stat=best)
	fi
	{
		echo "mode=$mode"
		echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "nproc=$ncpu"
		echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
		echo "kernel=$(uname -sr)"
		echo "compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt") $(c++ -dumpfullversion 2>/dev/null || true)"
		# KSYNC_BENCH_COMMIT names the commit when the tree is an export (git archive).
		if [ -n "${KSYNC_BENCH_COMMIT:-}" ]; then
			echo "commit=$KSYNC_BENCH_COMMIT"
		else
			echo "commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD -- include lib bench examples 2>/dev/null || echo ' (with uncommitted changes)')"
		fi
		echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
		echo "cmd_bare=bench_bare_read ${bare[*]} --json"
		echo "cmd_srcu=bench_srcu --bench_max_threads=$maxthr ${gb[*]}"
		echo "cmd_registry=bench_registry ${gb[*]}"
	} >"$json/machine.env"
	echo "== bench_bare_read ${bare[*]}"
	"$build/bench/bench_bare_read" "${bare[@]}" --json >"$json/bare_read.json"
	echo "== bench_srcu --bench_max_threads=$maxthr ${gb[*]}"
	"$build/bench/bench_srcu" --bench_max_threads=$maxthr "${gb[@]}" \
		--benchmark_out="$json/srcu.json" --benchmark_out_format=json >/dev/null
	echo "== bench_registry ${gb[*]}"
	"$build/bench/bench_registry" "${gb[@]}" \
		--benchmark_out="$json/registry.json" --benchmark_out_format=json >/dev/null
	echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$json/machine.env"
	echo "seconds=$(($(date +%s) - started))" >>"$json/machine.env"
fi

# ---- 3: render, from the JSON files alone ----------------------------------
for f in machine.env bare_read.json srcu.json registry.json; do
	[ -s "$json/$f" ] || { echo "bench-report.sh: $json/$f is missing" >&2; exit 1; }
done
env_get() { sed -n "s/^$1=//p" "$json/machine.env" | tail -1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One flat table, tab-separated: module op params ns items_per_s reads_per_s
# peak_outstanding latency_ns cpu_ns (CPU time of all threads per item). ns is real time per item (per iteration; per
# pair for the batched read loops); params is the run name less module, op and
# "real_time" ("threads:2", "readers:1", "mounts:64", or "-"). A full-mode
# run keeps only the medians.
jq -r '
	def ns: if .time_unit == "ms" then .real_time * 1e6 elif .time_unit == "us" then .real_time * 1e3
		elif .time_unit == "s" then .real_time * 1e9 else .real_time end;
	.benchmarks[]
	| select(.run_type == "iteration" or .aggregate_name == "median")
	| (.run_name | split("/")) as $p
	| [$p[0], $p[1], ([$p[2:][] | select(. != "real_time" and . != "process_time")] | if length == 0 then "-" else join("/") end),
	   ns, (.items_per_second // ""), (.reads_per_s // ""), (.peak_outstanding // ""), (.latency_ns // ""),
	   (.cpu_time / .real_time * ns)]
	| @tsv' "$json/srcu.json" "$json/registry.json" >"$tmp/all.tsv"
jq -r '.results[] | [.module, "bare_read", "threads:\(.threads)", .ns_per_pair, "", "", "", "", ""] | @tsv' \
	"$json/bare_read.json" >>"$tmp/all.tsv"

# get MODULE OP PARAMS [COLUMN]: one figure (column 4 = ns by default), or "".
get() {
	awk -F'\t' -v m="$1" -v o="$2" -v p="$3" -v c="${4:-4}" \
		'$1 == m && $2 == o && $3 == p { print $c; exit }' "$tmp/all.tsv"
}
# fmt_ns NS: a duration with its unit.
fmt_ns() {
	awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else if (v < 10) printf "%.2f ns\n", v;
		else if (v < 1000) printf "%.0f ns\n", v; else if (v < 1e6) printf "%.2f µs\n", v / 1e3;
		else printf "%.2f ms\n", v / 1e6 }'
}
fmt_rate() {
	awk -v v="$1" 'BEGIN { if (v == "") print "n/a"; else if (v >= 1e9) printf "%.2f G/s\n", v / 1e9;
		else if (v >= 1e6) printf "%.2f M/s\n", v / 1e6; else if (v >= 1e3) printf "%.1f k/s\n", v / 1e3;
		else printf "%.0f /s\n", v }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2fx\n", a / b }'; }
# A rate from a Google Benchmark time: with N threads, its real time per item
# is the wall time over the items of all threads (1 / the total rate).
rate_of() { awk -v ns="$1" 'BEGIN { if (ns == "" || ns == 0) print ""; else printf "%.6g\n", 1e9 / ns }'; }

# ---- headline rows (the performance issue's table) --------------------------
k=ksync_srcu u=urcu_memb
head_rows=""
row() { head_rows+="| $1 | $2 | $3 | $4 | ${6:-–} | $5 |"$'\n'; }
# cpu OP PARAMS [PEER]: ksync's CPU time per item over the peer's.
cpu() { ratio "$(get "${K:-$k}" "$1" "$2" 9)" "$(get "${3:-$u}" "$1" "$2" 9)"; }
f=ksync_srcu_fast
for t in 1 2; do
	a=$(get $k bare_read threads:$t) b=$(get $u bare_read threads:$t)
	row "read lock+unlock pair, bare C loop (\`bench_bare_read\`), classic form, $t thread$([ $t = 1 ] || echo s), ns/pair" \
		"$(fmt_ns "$a")" "$(fmt_ns "$b")" "$(ratio "$a" "$b") the cost" "≤ 1.05x"
	a=$(get $f bare_read threads:$t)
	row "read lock+unlock pair, bare C loop, fast form (\`ksync_srcu_read_lock_fast\`), $t thread$([ $t = 1 ] || echo s), ns/pair" \
		"$(fmt_ns "$a")" "$(fmt_ns "$b")" "$(ratio "$a" "$b") the cost" "≤ 0.95x"
done
for t in 1 2; do
	a=$(get ksync_srcu_far bare_read threads:$t) b=$(get $k bare_read threads:$t)
	c=$(get ksync_srcu_far_fast bare_read threads:$t) d=$(get $f bare_read threads:$t)
	row "read pair on the 40th domain (past the 31 direct ones) vs a direct domain, bare C loop, $t thread$([ $t = 1 ] || echo s): classic; fast" \
		"$(fmt_ns "$a"); $(fmt_ns "$c")" "$(fmt_ns "$b"); $(fmt_ns "$d") (direct)" "$(ratio "$a" "$b"); $(ratio "$c" "$d") the cost" "≤ 1.5x"
done
for t in 1 2; do
	a=$(get $k read threads:$t) b=$(get $u read threads:$t) c=$(get $f read threads:$t)
	row "read lock+unlock pair, \`bench_srcu\` (read, batched), $t thread$([ $t = 1 ] || echo s): classic; fast" \
		"$(fmt_ns "$a"); $(fmt_ns "$c")" "$(fmt_ns "$b")" "$(ratio "$a" "$b"); $(ratio "$c" "$b") the cost" "≤ 1.05x; ≤ 0.95x" \
		"$(cpu read threads:$t); $(K=$f cpu read threads:$t)"
done
a=$(rate_of "$(get $k deref_read threads:2)") b=$(rate_of "$(get $u deref_read threads:2)") c=$(rate_of "$(get $f deref_read threads:2)")
row "reads/s, 2 readers (lock, dereference, load, unlock; \`deref_read/threads:2\`, both threads together): classic; fast" \
	"$(fmt_rate "$a"); $(fmt_rate "$c")" "$(fmt_rate "$b")" "$(ratio "$a" "$b"); $(ratio "$c" "$b")" "≥ 1.0x" \
	"$(cpu deref_read threads:2); $(K=$f cpu deref_read threads:2)"
a=$(rate_of "$(get $k sync_never_read -)") b=$(rate_of "$(get $u sync_never_read -)")
row "updates/s with no reader ever (\`sync_never_read\`: synchronize_srcu vs urcu_memb_synchronize_rcu)" \
	"$(fmt_rate "$a")" "$(fmt_rate "$b")" "$(ratio "$a" "$b")" "≥ 1.0x" "$(cpu sync_never_read -)"
a=$(get $k update_readers readers:2 5) b=$(get $u update_readers readers:2 5)
row "updates/s, 2 readers + 1 updater (\`update_readers/readers:2\`: publish, synchronize, free)" \
	"$(fmt_rate "$a")" "$(fmt_rate "$b")" "$(ratio "$a" "$b")" "≥ 1.0x" "$(cpu update_readers readers:2)"
a=$(get $k update_readers readers:2 6) b=$(get $u update_readers readers:2 6)
row "reads/s of those 2 readers meanwhile" "$(fmt_rate "$a")" "$(fmt_rate "$b")" "$(ratio "$a" "$b")" "≥ 1.0x"
for t in 1 2; do
	a=$(get $k call threads:$t 5) b=$(get $u call threads:$t 5)
	c=$(get ksync_srcu_in_caller call threads:$t 5)
	row "\`call_srcu\` vs \`call_rcu\` throughput, malloc'd nodes freed in the callback, $t producer$([ $t = 1 ] || echo s) (\`call/threads:$t\`; CPU: every thread of the process): default; callbacks in the callers (\`ksync_srcu_set_cb_in_caller\`)" \
		"$(fmt_rate "$a"); $(fmt_rate "$c")" "$(fmt_rate "$b")" "$(ratio "$a" "$b"); $(ratio "$c" "$b")" "≥ 2x; CPU ≤ 0.8x" \
		"$(cpu call threads:$t); $(K=ksync_srcu_in_caller cpu call threads:$t)"
done
for pm in 1 10 100; do
	pct=$(awk -v p=$pm 'BEGIN { printf "%g", p / 10 }')
	a=$(rate_of "$(get $k hash_lookup update_permille:$pm/threads:2)")
	b=$(rate_of "$(get $u hash_lookup update_permille:$pm/threads:2)")
	c=$(rate_of "$(get pthread_rwlock hash_lookup update_permille:$pm/threads:2)")
	row "hash table operations/s, $pct% updates, 2 threads (\`hash_lookup\`), vs cds_lfht; vs a pthread_rwlock twin" \
		"$(fmt_rate "$a")" "$(fmt_rate "$b"); $(fmt_rate "$c")" "$(ratio "$a" "$b"); $(ratio "$a" "$c")" "≥ 1.0x" \
		"$(cpu hash_lookup update_permille:$pm/threads:2); $(cpu hash_lookup update_permille:$pm/threads:2 pthread_rwlock)"
done
a=$(get ksync_shrinker register_unregister mounts:64) b=$(get legacy_rwlock register_unregister mounts:64)
row "registry register+unregister at idle, 64 mounts (\`bench_registry\`), vs the demo's rwlock registry" \
	"$(fmt_ns "$a")" "$(fmt_ns "$b")" "$(ratio "$a" "$b") the cost" "≤ 1.3x" \
	"$(K=ksync_shrinker cpu register_unregister mounts:64 legacy_rwlock)"
a=$(get ksync_shrinker register_unregister_after_walk mounts:64) b=$(get legacy_rwlock register_unregister_after_walk mounts:64)
row "the same after another thread walked the registry once and stays alive (\`register_unregister_after_walk\`: records come back after a polled grace period)" \
	"$(fmt_ns "$a")" "$(fmt_ns "$b")" "$(ratio "$a" "$b") the cost" "≤ 1.3x" \
	"$(K=ksync_shrinker cpu register_unregister_after_walk mounts:64 legacy_rwlock)"

# ---- every ksync/peer time ratio --------------------------------------------
# For each op and parameter where ksync (ksync_srcu, ksync_shrinker) has a
# figure: ksync's time per item over each peer's (< 1: ksync is faster).
peers="ksync_srcu_fenced urcu_memb urcu_qsbr urcu_bp ck_epoch ck_rwlock ck_brlock pthread_rwlock legacy_rwlock"
awk -F'\t' -v peers="$peers" '
	BEGIN { np = split(peers, P, " ") }
	{ t[$1 SUBSEP $2 SUBSEP $3] = $4 }
	($1 == "ksync_srcu" || $1 == "ksync_shrinker") && !seen[$2 SUBSEP $3]++ { km[++n] = $1; ko[n] = $2; kp[n] = $3 }
	END {
		printf "| op | params | ksync |"; for (i = 1; i <= np; i++) printf " %s |", P[i]; print ""
		printf "|---|---|---|"; for (i = 1; i <= np; i++) printf "---|"; print ""
		for (r = 1; r <= n; r++) {
			kv = t[km[r] SUBSEP ko[r] SUBSEP kp[r]]
			line = sprintf("| %s | %s | %s |", ko[r], kp[r], fmt(kv)); any = 0
			for (i = 1; i <= np; i++) {
				key = P[i] SUBSEP ko[r] SUBSEP kp[r]
				if ((key in t) && t[key] > 0) { line = line sprintf(" %.2fx |", kv / t[key]); any = 1 }
				else line = line " |"
			}
			if (any) print line
		}
	}
	function fmt(v) {
		if (v < 10) return sprintf("%.2f ns", v)
		if (v < 1000) return sprintf("%.0f ns", v)
		if (v < 1e6) return sprintf("%.2f µs", v / 1e3)
		return sprintf("%.2f ms", v / 1e6)
	}' "$tmp/all.tsv" >"$tmp/ratios.md"

# ---- charts -----------------------------------------------------------------
# table OP MODULES PARAMS...: rows = modules, columns = params, cells = ns
# (RATE=1: millions of items per second, all threads together).
table() {
	local op=$1 mods=$2; shift 2
	for m in $mods; do
		printf '%s' "$m"
		for p in "$@"; do
			v=$(get "$m" "$op" "$p")
			[ -z "$v" ] || [ "${RATE:-0}" = 0 ] || v=$(awk -v ns="$v" 'BEGIN { printf "%.6g", 1e3 / ns }')
			printf '\t%s' "${v:-NaN}"
		done
		echo
	done
}
# chart FILE TITLE YLABEL DATA COLUMN-TITLES... : clustered bars, log y.
chart() {
	local file=$1 title=$2 ylabel=$3 data=$4; shift 4
	local plot="" i=2
	for ct in "$@"; do
		plot+="${plot:+, }'$data' using $i:xtic(1) title '$ct'"
		i=$((i + 1))
	done
	gnuplot <<-EOF
		set terminal pngcairo noenhanced size 1000,520 font 'sans,10'
		set output '$file'
		set title "$title"
		set ylabel "$ylabel"
		set logscale y
		set grid ytics
		set style data histograms
		set style histogram clustered gap 1
		set style fill solid 0.85 border -1
		set boxwidth 0.9
		set xtics rotate by -25
		set key top left
		set datafile separator '\t'
		set datafile missing 'NaN'
		plot $plot
	EOF
}
readmods="ksync_srcu ksync_srcu_fast ksync_srcu_fenced urcu_memb urcu_qsbr urcu_bp ck_epoch ck_rwlock ck_brlock pthread_rwlock"
gpmods="ksync_srcu ksync_srcu_fenced urcu_memb urcu_qsbr urcu_bp ck_epoch"
thr_params=$(awk -F'\t' '$1 == "ksync_srcu" && $2 == "read" { print $3 }' "$tmp/all.tsv" | sort -t: -k2 -n | tr '\n' ' ')
rdr_params=$(awk -F'\t' '$1 == "ksync_srcu" && $2 == "update_readers" { print $3 }' "$tmp/all.tsv" | sort -t: -k2 -n | tr '\n' ' ')
bare_params=$(awk -F'\t' '$1 == "ksync_srcu" && $2 == "bare_read" { print $3 }' "$tmp/all.tsv" | sort -t: -k2 -n | tr '\n' ' ')
# shellcheck disable=SC2086
{
	RATE=1 table read "$readmods" $thr_params >"$tmp/read.dat"
	chart "$charts/read_side.png" "Read-side lock+unlock pairs (bench_srcu, batched C loop), all threads together: higher is better" \
		"million pairs per second" "$tmp/read.dat" $thr_params
	RATE=1 table deref_read "$readmods" $thr_params >"$tmp/deref.dat"
	chart "$charts/deref_read.png" "Lock, dereference, load, unlock, all threads together: higher is better" \
		"million reads per second" "$tmp/deref.dat" $thr_params
	table bare_read "ksync_srcu ksync_srcu_fast ksync_srcu_far ksync_srcu_far_fast urcu_memb" $bare_params >"$tmp/bare.dat"
	chart "$charts/bare_read.png" "Read-side pair in a bare C loop (bench_bare_read): ns per pair in each thread, lower is better" \
		"ns per pair" "$tmp/bare.dat" $bare_params
	for m in $gpmods; do
		printf '%s' "$m"
		for o in sync_never_read sync_idle sync_busy; do v=$(get "$m" $o -); printf '\t%s' "${v:-NaN}"; done
		echo
	done >"$tmp/gp.dat"
	chart "$charts/grace_periods.png" "synchronize: one grace period, lower is better" "ns" "$tmp/gp.dat" \
		"no reader ever" "a reader thread sleeps" "a thread spins outside sections"
	table sync_updaters "$gpmods" $thr_params >"$tmp/updaters.dat"
	chart "$charts/sync_updaters.png" "synchronize from N threads at once: wall ns per call, all threads together, lower is better" \
		"ns" "$tmp/updaters.dat" $thr_params
	table update_readers "$readmods" $rdr_params >"$tmp/upd.dat"
	chart "$charts/update_readers.png" "Publish + wait + free while readers read: time per update, lower is better" \
		"ns per update" "$tmp/upd.dat" $rdr_params
	table call "ksync_srcu urcu_memb urcu_qsbr urcu_bp ck_epoch" $thr_params >"$tmp/call.dat"
	chart "$charts/callbacks.png" "call_srcu / call_rcu / ck_epoch_call, enqueue to invocation: wall ns per callback, all producers together, lower is better" \
		"ns per callback" "$tmp/call.dat" $thr_params
	hash_params=$(awk -F'\t' '$1 == "ksync_srcu" && $2 == "hash_lookup" { print $3 }' "$tmp/all.tsv" | tr '\n' ' ')
	RATE=1 table hash_lookup "ksync_srcu urcu_memb pthread_rwlock" $hash_params >"$tmp/hash.dat"
	chart "$charts/hash_lookup.png" "Read-mostly hash table (1024 keys): operations per second, all threads together, higher is better" \
		"million operations per second" "$tmp/hash.dat" $hash_params
	for m in ksync_shrinker legacy_rwlock; do
		printf '%s' "$m"
		for p in mounts:64 mounts:1000; do v=$(get $m register_unregister $p); printf '\t%s' "${v:-NaN}"; done
		v=$(get $m register_unregister_walking -); printf '\t%s\n' "${v:-NaN}"
	done >"$tmp/reg.dat"
	chart "$charts/registry.png" "Shrinker register + unregister: ns per pair, lower is better" "ns" "$tmp/reg.dat" \
		"idle, 64 mounts" "idle, 1000 mounts" "while a thread walks"
}

# A busy machine moves wall-clock figures more than CPU times: say so.
busy=$(awk -v l="$(env_get load_before | cut -d' ' -f1)" -v n="$(env_get nproc)" \
	'BEGIN { if (l != "" && n > 0 && l > n / 2) printf "yes" }')
busy_note=""
[ -z "$busy" ] || busy_note="Other jobs shared the machine during this run (load average $(env_get load_before | cut -d' ' -f1) on $(env_get nproc) CPUs): wall-clock ratios of one run move from run to run, the CPU-time column much less."

# ---- the page ---------------------------------------------------------------
peak_k=$(get $k call threads:1 7) peak_u=$(get $u call threads:1 7)
lat_k=$(get $k call_latency - 8) lat_u=$(get $u call_latency - 8) lat_e=$(get ck_epoch call_latency - 8)
page="$out/benchmarks.md"
{
	cat <<-EOF
	# Benchmarks

	Generated by \`scripts/bench-report.sh --$(env_get mode)\` from the JSON of one run of each
	suite (${json/#$root\//}); do not edit by hand. Every figure is real (wall-clock) time; a
	ratio is ksync over the peer, measured in the same run of the same binary.

	| machine | |
	|---|---|
	| CPUs (nproc) | $(env_get nproc) |
	| CPU model | $(env_get cpu) |
	| kernel | $(env_get kernel) |
	| compiler | $(env_get compiler) |
	| date | $(env_get date) |
	| ksync commit | $(env_get commit) |
	| load average before / after | $(env_get load_before) / $(env_get load_after) |
	| wall time of the run | $(env_get seconds) s |

	Commands (in the build tree, \`bench/\`):

	\`\`\`
	$(env_get cmd_bare)
	$(env_get cmd_srcu)
	$(env_get cmd_registry)
	\`\`\`

	## Headline

	![read side](benchmarks/read_side.png)

	| figure | ksync | peer | ksync / peer | CPU time per item, ksync / peer | goal |
	|---|---|---|---|---|---|
	EOF
	printf '%s' "$head_rows"
	[ -z "$busy_note" ] || printf '\n%s\n' "$busy_note"
	cat <<-EOF

	The peer is liburcu's urcu-memb flavour unless the row says otherwise; "the cost" rows compare
	times (lower is better for ksync), the others rates (higher is better), all from wall-clock
	time. The CPU column is the CPU time Google Benchmark's timed threads spent per item (not the
	helper or reader threads: for \`update_readers\` it is the updater's), except for \`call\`,
	where it is the CPU time of the whole process (\`MeasureProcessCPUTime\`: the producers, ksync's
	helper thread, liburcu's call_rcu thread), ksync over the peer, lower is better: on a machine other processes share it
	moves less than wall time, and where it is well below the wall-clock ratio ksync's thread was
	waiting, not working. Google Benchmark's
	per-iteration bookkeeping costs about as much as a read pair, so \`bench_srcu\` runs its read
	loops in C, batched 1024 pairs per iteration; \`bench_bare_read\` has no framework at all and is
	the figure to quote. It reports each thread's fastest chunk of 20,000 pairs (\`--stat=best\`),
	from 64-byte-aligned loops: the pair's cost when nothing interrupted it, which two runs on a
	machine shared with other work agree on within a few percent (the median of whole runs did not).

	Callbacks: at most $(awk -v v="$peak_k" 'BEGIN { printf "%.0f", v }') ksync callbacks were queued and not yet run
	while one producer outran invocation (ksync bounds the queue: the producer blocks at the
	domain's limit, 65536 by default), against $(awk -v v="$peak_u" 'BEGIN { printf "%.0f", v }') for urcu-memb
	(unbounded); each is a 40-byte malloc'd node. Enqueue to invocation of a lone callback:
	ksync $(fmt_ns "$lat_k"), urcu-memb $(fmt_ns "$lat_u") (its call_rcu thread batches), ck_epoch
	$(fmt_ns "$lat_e") (the caller polls; no helper thread).

	## Every ksync / peer ratio

	ksync's real time per item over each peer's, same op and parameters, same run: below 1.00x
	ksync is faster. The ksync column is ksync's own time per item; with N threads, Google
	Benchmark's real time per item is the wall time over the items of all N threads (1 / the total
	rate), so ratios at equal N compare throughputs.

	EOF
	cat "$tmp/ratios.md"
	cat <<-EOF

	## Charts

	![bare loop](benchmarks/bare_read.png)
	![dereferencing reads](benchmarks/deref_read.png)
	![grace periods](benchmarks/grace_periods.png)
	![concurrent updaters](benchmarks/sync_updaters.png)
	![updates with readers](benchmarks/update_readers.png)
	![read-mostly hash table](benchmarks/hash_lookup.png)
	![callbacks](benchmarks/callbacks.png)
	![registry](benchmarks/registry.png)

	## What each benchmark does

	\`bench/bench_srcu.cc\` registers every operation once per module (\`Module/Op\`, Google
	Benchmark appends \`/real_time\` and \`/threads:N\` or the argument); the C fixtures are
	\`bench/fx_*.c\`.

	| op | one item |
	|---|---|
	| \`read\` | an empty read-side lock+unlock pair, per thread (\`ThreadRange(1, N)->UseRealTime()\`) |
	| \`deref_read\` | lock, dereference the published node, load a word, unlock |
	| \`sync_never_read\` | a grace period where no thread ever read (ksync: a domain nobody read; liburcu: no registered thread) |
	| \`sync_idle\` / \`sync_busy\` | a grace period while another thread that has read sleeps / spins outside any section |
	| \`sync_updaters\` | grace periods from N threads at once |
	| \`update_readers/readers:R\` | publish a new node, wait for a grace period (locks: take the write lock), free the old one, while R threads run \`deref_read\` |
	| \`call\` | one malloc'd node queued and freed by its callback; batches of 100 000 then a barrier |
	| \`call_latency\` | one callback queued, wait until it ran |
	| \`hash_lookup/update_permille:P\` | a lookup of a random key among 1024 or, P per mille of the time, the replacement of its entry (a new malloc'd one; the old one retired with call_srcu / call_rcu, or freed under the write lock); ksync_srcu: \`ksync/hashtable.h\` under SRCU, urcu_memb: liburcu's \`cds_lfht\`, pthread_rwlock: the same ksync table under the lock |
	| \`poll_gp\` | (ksync) \`start_poll_synchronize_srcu\` + \`poll_state_synchronize_srcu\` until done (liburcu 0.13 has no polled API) |

	Modules: \`ksync_srcu\` (default, membarrier read side, the classic form: \`ksync_srcu_read_lock\`
	returns 0/1), \`ksync_srcu_fast\` (the same domain read with \`ksync_srcu_read_lock_fast\`, whose
	token is the counter's address), \`ksync_srcu_far\` / \`ksync_srcu_far_fast\` (the 40th domain set
	up, past the 31 with a direct per-thread word), \`ksync_srcu_in_caller\` (\`call\` rows only: a domain with
	\`ksync_srcu_set_cb_in_caller()\`, whose finished batches the next \`call_srcu\` runs on its own thread), \`ksync_srcu_fenced\`
	(\`KSYNC_SRCU_FENCED\`), \`urcu_memb\`, \`urcu_qsbr\` (one \`urcu_qsbr_quiescent_state()\` per 256
	reads, counted in the read figure), \`urcu_bp\` (liburcu's inline fast paths, \`_LGPL_SOURCE\`),
	\`ck_epoch\` (\`ck_epoch_begin/end\`, \`ck_epoch_synchronize\`, \`ck_epoch_call\` + \`ck_epoch_poll\`
	every 64 calls), \`ck_rwlock\`, \`ck_brlock\`, \`pthread_rwlock\` (writer-preferring).
	\`bench_registry\` drives the reclaim-storm demo's two registries (\`examples/reclaim_storm/\`:
	\`legacy_rwlock\`, the kernel's pre-6.7 \`shrinker_rwsem\` design, and \`ksync_shrinker\`) through
	the demo's own interface.

	Reproduce: \`scripts/bench-report.sh --short\` (under 2 minutes on 2 cores) or \`--full\`;
	\`scripts/bench-report.sh --render-only --json DIR\` renders this page again from a run's JSON.
	EOF
	# Sections measured by hand, one file each, kept verbatim (each names its
	# own command, machine and date): this script does not run them.
	for part in "$root"/docs/benchmarks/*.md; do
		[ -f "$part" ] || continue
		printf '\n'
		cat "$part"
	done
} >"$page"
echo "== wrote $page and the charts in $charts/"

# The README's Benchmarks section carries the headline table between two
# markers; refresh it when the page went to this tree's docs/.
readme="$root/README.md"
if [ "$out" = "$root/docs" ] && grep -q '^<!-- bench-report:begin -->$' "$readme" 2>/dev/null; then
	{
		echo "Measured by \`scripts/bench-report.sh --$(env_get mode)\` on $(env_get nproc) CPUs ($(env_get cpu)),"
		echo "$(env_get kernel), $(env_get date), load average $(env_get load_before); ksync / liburcu urcu-memb"
		echo "unless the row says otherwise:"
		echo
		echo "| figure | ksync | peer | ksync / peer | CPU time per item, ksync / peer | goal |"
		echo "|---|---|---|---|---|---|"
		printf '%s' "$head_rows"
		[ -z "$busy_note" ] || printf '\n%s\n' "$busy_note"
	} >"$tmp/readme_part.md"
	awk -v part="$tmp/readme_part.md" '
		/^<!-- bench-report:begin -->$/ { print; while ((getline l < part) > 0) print l; skip = 1; next }
		/^<!-- bench-report:end -->$/ { skip = 0 }
		!skip' "$readme" >"$tmp/README.md"
	cat "$tmp/README.md" >"$readme"
	echo "== refreshed the headline table in README.md"
fi
