#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# plot_pressure_cache.sh - render pressure_cache's --json output as a PNG chart.
#
#   examples/pressure_cache --json cache.json
#   scripts/plot_pressure_cache.sh cache.json cache.png
#
# One panel per variant (fixed-high, fixed-low, trim, ksync; those that ran):
# the memory cgroup's usage and its limit over time, with the cache's and the
# batch job's shares stacked below it (timeline_fine, every 100 ms, else the
# per-second timeline). The panel's
# title has the variant's figures (OOM kill, hit rate, ops/s, limit hits).
# A run with --lru (the JSON has "runs") gets one panel per run instead:
# variant, LRU flavour, shadows on or off, and the hot-key hit rate too.
# Needs gnuplot, and jq or python3 to read the JSON.
set -eu

in=${1:?usage: plot_pressure_cache.sh FILE.json [OUT.png]}
out=${2:-${in%.json}.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

py() {
	python3 - "$in" "$tmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if "runs" in d:
    panels = [(f"p{i}", r, f'{r["variant"]} ({r["lru"]}, shadows {"on" if r["shadows"] else "off"})')
              for i, r in enumerate(d["runs"])]
else:
    panels = [(n, d["variants"][n], n) for n in ("fixed-high", "fixed-low", "trim", "ksync") if n in d["variants"]]
for name, v, label in panels:
    with open(f"{sys.argv[2]}/{name}.dat", "w") as f:
        for s in v.get("timeline_fine") or v["timeline"]:
            f.write(f'{s["t_s"]} {s["cache_bytes"]/1048576:.2f} {s["batch_bytes"]/1048576:.2f} {s["usage_bytes"]/1048576:.2f}\n')
    with open(f"{sys.argv[2]}/{name}.title", "w") as f:
        hot = f', hot-key hit rate {v["hot_hit_rate"]*100:.1f} %' if "hot_hit_rate" in v else ""
        f.write(f'{label}: {"OOM-killed" if v["oom_killed"] else "alive"}, hit rate {v["hit_rate"]*100:.1f} %{hot}, '
                f'{v["ops_per_s"]/1000:.1f} k ops/s, {v["limit_hits"]} limit hits, peak {v["peak_usage_bytes"]/1048576:.1f} MiB')
print(d["limit_bytes"] / 1048576)
print(" ".join(p[0] for p in panels))
PY
}

if command -v jq >/dev/null 2>&1 && jq -e '.runs' "$in" >/dev/null 2>&1; then
	limit=$(jq -r '.limit_bytes / 1048576' "$in")
	names=$(jq -r '[range(0; .runs | length) | "p\(.)"] | join(" ")' "$in")
	for n in $names; do
		i=${n#p}
		jq -r --argjson i "$i" '.runs[$i] | (.timeline_fine // .timeline)[] |
			"\(.t_s) \(.cache_bytes/1048576) \(.batch_bytes/1048576) \(.usage_bytes/1048576)"' "$in" >"$tmp/$n.dat"
		jq -r --argjson i "$i" '.runs[$i] |
			"\(.variant) (\(.lru), shadows \(if .shadows then "on" else "off" end)): \(if .oom_killed then "OOM-killed" else "alive" end), hit rate \(.hit_rate*1000|round/10) %\(if .hot_hit_rate then ", hot-key hit rate \(.hot_hit_rate*1000|round/10) %" else "" end), \(.ops_per_s/100|round/10) k ops/s, \(.limit_hits) limit hits, peak \(.peak_usage_bytes/104857.6|round/10) MiB"' \
			"$in" >"$tmp/$n.title"
	done
elif command -v jq >/dev/null 2>&1; then
	limit=$(jq -r '.limit_bytes / 1048576' "$in")
	names=$(jq -r '[("fixed-high","fixed-low","trim","ksync") as $n | select(.variants[$n]) | $n] | join(" ")' "$in")
	for n in $names; do
		jq -r --arg n "$n" '.variants[$n] | (.timeline_fine // .timeline)[] |
			"\(.t_s) \(.cache_bytes/1048576) \(.batch_bytes/1048576) \(.usage_bytes/1048576)"' "$in" >"$tmp/$n.dat"
		jq -r --arg n "$n" '.variants[$n] |
			"\($n): \(if .oom_killed then "OOM-killed" else "alive" end), hit rate \(.hit_rate*1000|round/10) %, \(.ops_per_s/100|round/10) k ops/s, \(.limit_hits) limit hits, peak \(.peak_usage_bytes/104857.6|round/10) MiB"' \
			"$in" >"$tmp/$n.title"
	done
else
	py >"$tmp/meta"
	limit=$(sed -n 1p "$tmp/meta")
	names=$(sed -n 2p "$tmp/meta")
fi
set -- $names
n=$#
seconds=$(if command -v jq >/dev/null 2>&1; then jq -r '.seconds' "$in"; else
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$in"; fi)

{
	printf 'set terminal pngcairo size 1200,%d font ",10"\n' $((260 * n + 40))
	printf 'set output "%s"\n' "$out"
	printf 'set multiplot layout %d,1 title "pressure\\\\_cache: a cache inside a %s MiB memory limit, beside a batch job"\n' "$n" "$limit"
	printf 'set xrange [0:%s]\nset yrange [0:%s]\n' "$seconds" "$(echo "$limit * 1.15" | bc 2>/dev/null || echo 150)"
	printf 'set ylabel "MiB"\nset grid\nset key outside right top\nset style fill solid 0.5 noborder\n'
	for v in "$@"; do
		printf 'set title "%s"\n' "$(cat "$tmp/$v.title")"
		[ "$v" = "$(eval echo \${$n})" ] && printf 'set xlabel "seconds"\n'
		printf 'plot "%s" using 1:3:($2+$3) with filledcurves title "cache" lc rgb "#9ecae1", ' "$tmp/$v.dat"
		printf '"" using 1:3:(0) with filledcurves title "batch job" lc rgb "#fdae6b", '
		printf '"" using 1:4 with lines lw 2 lc rgb "#08519c" title "cgroup usage", '
		printf '%s with lines lw 2 dt 2 lc rgb "#cb181d" title "limit"\n' "$limit"
	done
	printf 'unset multiplot\n'
} >"$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "wrote $out"
