#!/usr/bin/env bash
# Installs the Debian 12 packages ksync needs, when they are missing.
#   scripts/deps.sh demo   - what the demos need (reclaim storm, pressure cache)
#   scripts/deps.sh test   - what the whole test suite needs (both compilers,
#                            sanitizer runtimes, liburcu, Google Benchmark, spin)
# Run as root (or with sudo available). When it cannot install, it names the
# missing packages and exits 1.
# Cheap when nothing is missing (run-tests.sh and run-demo.sh call it every
# time): once every package was found installed it leaves a stamp,
# build/.deps-<demo|test>, holding the package list; while the stamp holds
# the same list and is newer than dpkg's database (which every install or
# removal rewrites), nothing is queried. Otherwise one dpkg-query call
# checks them all.
set -euo pipefail

what=${1:-test}
pkgs=(cmake ninja-build pkg-config gcc g++ libc6-dev libck-dev)
case "$what" in
demo) pkgs+=(gnuplot-nox jq) ;;
test) pkgs+=(clang libclang-rt-14-dev liburcu-dev libbenchmark-dev spin gnuplot-nox jq) ;;
*) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

stamp="$(dirname "$0")/../build/.deps-$what"
dpkg_db=/var/lib/dpkg/status
if [ -f "$stamp" ] && [ -f "$dpkg_db" ] && [ "$stamp" -nt "$dpkg_db" ] &&
	[ "$(<"$stamp")" = "${pkgs[*]}" ]; then
	exit 0
fi
write_stamp() { mkdir -p "$(dirname "$stamp")" && echo "${pkgs[*]}" >"$stamp"; } 2>/dev/null

# "ii <name>[:arch]" for each installed one; nothing for an unknown name.
installed=" $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${pkgs[@]}" 2>/dev/null |
	awk '$1 == "ii" { sub(/:.*/, "", $2); printf "%s ", $2 }' || true)"
missing=()
for p in "${pkgs[@]}"; do
	[[ $installed == *" $p "* ]] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	write_stamp || true
	exit 0
fi

echo "ksync: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
	as_root=()
elif command -v sudo >/dev/null 2>&1; then
	as_root=(sudo)
else
	echo "ksync: missing packages: ${missing[*]}" >&2
	echo "ksync: run this script as root, or install them: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! { "${as_root[@]}" apt-get update -qq &&
	"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
	echo "ksync: could not install: ${missing[*]}" >&2
	echo "ksync: check the network/apt sources, then: apt-get install ${missing[*]}" >&2
	exit 1
fi
write_stamp || true
