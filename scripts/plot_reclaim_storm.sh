#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# plot_reclaim_storm.sh - render reclaim_storm's --json output as a PNG chart.
#
#   examples/reclaim_storm --json storm.json
#   scripts/plot_reclaim_storm.sh storm.json storm.png
#
# Two panels, legacy vs lockless side by side: rates (walks per second and
# per reclaim-thread CPU-second, objects charged/s, mount/umount ops per
# second and per mount-thread CPU-second, under the storm and idle; failed
# trylocks/s is in the table only) and latencies (register/unregister
# p50/p99, storm and idle), both on log scales; the title gives the share of
# the charged objects reclaim scanned. Needs gnuplot, and jq or python3 to
# read the JSON.
set -eu

in=${1:?usage: plot_reclaim_storm.sh FILE.json [OUT.png]}
out=${2:-${in%.json}.png}
dat=$(mktemp)
trap 'rm -f "$dat" "$dat.lat"' EXIT

get() { # get REGISTRY KEY
	if command -v jq >/dev/null 2>&1; then
		jq -r ".$1.$2" "$in"
	else
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]])' "$in" "$1" "$2"
	fi
}

share() { # share REGISTRY: reclaimed_share in per cent, one decimal
	awk -v v="$(get "$1" reclaimed_share)" 'BEGIN { printf "%.1f", 100 * v }'
}

# Rates: label legacy lockless
for k in walks_per_s:"walks/s" walks_per_cpu_s:"walks/reclaim CPU-s" charged_per_s:"charged/s" \
	 mount_ops_per_s:"mount ops/s (storm)" mount_idle_ops_per_s:"mount ops/s (idle)" \
	 mount_ops_per_cpu_s:"mount ops/mount CPU-s (storm)" \
	 mount_idle_ops_per_cpu_s:"mount ops/mount CPU-s (idle)"; do
	key=${k%%:*}
	label=${k#*:}
	printf '"%s" %s %s\n' "$label" "$(get legacy "$key")" "$(get lockless "$key")"
done >"$dat"
for k in register_p50_us:"reg p50" register_p99_us:"reg p99" unregister_p50_us:"unreg p50" \
	 unregister_p99_us:"unreg p99" register_idle_p50_us:"reg p50 idle" \
	 register_idle_p99_us:"reg p99 idle" unregister_idle_p50_us:"unreg p50 idle" \
	 unregister_idle_p99_us:"unreg p99 idle"; do
	key=${k%%:*}
	label=${k#*:}
	printf '"%s" %s %s\n' "$label" "$(get legacy "$key")" "$(get lockless "$key")"
done >"$dat.lat"

gnuplot <<GP
set terminal pngcairo size 1400,600 font ",10"
set output "$out"
set multiplot layout 1,2 title "reclaim\\\\_storm: legacy rwlock registry vs ksync lockless registry (failed trylocks: legacy $(get legacy failed_trylocks), lockless $(get lockless failed_trylocks); charged objects reclaim scanned: legacy $(share legacy) %, lockless $(share lockless) %)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set grid ytics
set xtics rotate by -30
set key top left
set title "rates (per second, higher is better)"
plot "$dat" using 2:xtic(1) title "legacy", "" using 3 title "lockless"
set title "latency (microseconds, lower is better)"
plot "$dat.lat" using (\$2 > 0 ? \$2 : 0.001):xtic(1) title "legacy", "" using (\$3 > 0 ? \$3 : 0.001) title "lockless"
unset multiplot
GP
echo "wrote $out"
