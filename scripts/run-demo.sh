#!/usr/bin/env bash
# ksync's main job, from a fresh Debian 12 machine (run as root): build the
# reclaim-storm demo (the kernel's "make slab shrink lockless" scenario) and
# run it: legacy rwlock registry beside ksync's lockless one, side by side.
# Arguments go to reclaim_storm (try --help); the figures land in
# out/reclaim_storm.json and, when gnuplot is there, out/reclaim_storm.png.
# It runs one reclaim thread per CPU less one for the mount thread, and
# judges its targets per CPU-second of the threads doing the work, so that
# they say the same on a 2-CPU VM as on a 16-core machine.
# Then the pressure demo (issue 20): a cache inside a memory cgroup's limit
# beside a batch job, four variants of $PRESSURE_SECONDS s each (default 12:
# the two demos together take about a minute), its table and whether the
# ksync variant met its targets; out/pressure_cache.json and .png. Then the
# same cache on the scan workload (issue 22): the ksync variant on each LRU
# flavour (classic, mglru) with and without shadow entries, under the same
# limit, $PRESSURE_SCAN_SECONDS s a run (default 5, four runs), a line per
# flavour with the hot-key hit rates; out/pressure_cache_scan.json and .png
# (the whole table in out/pressure_cache_scan.log).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh demo
mkdir -p build out
cmake -S . -B build/demo -G Ninja -DCMAKE_BUILD_TYPE=Release \
	-DKSYNC_BUILD_TESTS=OFF -DKSYNC_BUILD_BENCH=OFF >build/demo.configure.log 2>&1 ||
	{ cat build/demo.configure.log; exit 1; }
cmake --build build/demo -j"$(nproc)" --target reclaim_storm pressure_cache >build/demo.build.log 2>&1 ||
	{ tail -60 build/demo.build.log; exit 1; }

build/demo/examples/reclaim_storm --json out/reclaim_storm.json "$@"
if [ -x scripts/plot_reclaim_storm.sh ] && command -v gnuplot >/dev/null 2>&1; then
	if scripts/plot_reclaim_storm.sh out/reclaim_storm.json out/reclaim_storm.png; then
		echo "chart: out/reclaim_storm.png"
	else
		echo "chart not rendered (the figures are in out/reclaim_storm.json)"
	fi
fi

echo
build/demo/examples/pressure_cache --seconds "${PRESSURE_SECONDS:-12}" --json out/pressure_cache.json
if [ -x scripts/plot_pressure_cache.sh ] && command -v gnuplot >/dev/null 2>&1; then
	if scripts/plot_pressure_cache.sh out/pressure_cache.json out/pressure_cache.png >/dev/null; then
		echo "chart: out/pressure_cache.png"
	else
		echo "chart not rendered (the figures are in out/pressure_cache.json)"
	fi
fi

echo
echo "pressure_cache --workload scan: the ksync variant's hot-key hit rate, with and without shadow entries"
if build/demo/examples/pressure_cache --workload scan --lru both --variants ksync \
	--seconds "${PRESSURE_SCAN_SECONDS:-5}" --json out/pressure_cache_scan.json >out/pressure_cache_scan.log 2>&1; then
	grep -E '^ksync, (classic|mglru):' out/pressure_cache_scan.log
	if [ -x scripts/plot_pressure_cache.sh ] && command -v gnuplot >/dev/null 2>&1 &&
		scripts/plot_pressure_cache.sh out/pressure_cache_scan.json out/pressure_cache_scan.png >/dev/null; then
		echo "chart: out/pressure_cache_scan.png"
	fi
else
	tail -20 out/pressure_cache_scan.log
	exit 1
fi
