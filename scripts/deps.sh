#!/usr/bin/env bash
# Installs the Debian 12 packages ksync needs, when they are missing.
#   scripts/deps.sh demo   - what the reclaim-storm demo needs
#   scripts/deps.sh test   - what the whole test suite needs (both compilers,
#                            sanitizer runtimes, liburcu, Google Benchmark, spin)
# Run as root (or with sudo available). When it cannot install, it names the
# missing packages and exits 1.
set -euo pipefail

what=${1:-test}
pkgs=(cmake ninja-build pkg-config gcc g++ libc6-dev libck-dev)
case "$what" in
demo) pkgs+=(gnuplot-nox jq) ;;
test) pkgs+=(clang libclang-rt-14-dev liburcu-dev libbenchmark-dev spin gnuplot-nox jq) ;;
*) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
