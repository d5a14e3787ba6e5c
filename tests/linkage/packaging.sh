#!/usr/bin/env bash
# Packaging test (label hygiene). Installs ksync with
# `cmake --install <build> --prefix <odd, deep prefix>` (the prefix given at
# install time, not the configured one), then builds a downstream program
# using ksync::ksync and one using ksync::shrinker through each route:
#   - find_package(ksync) (packaging/CMakeLists.txt, next to this script);
#   - pkg-config ksync and ksync-shrinker, whose `prefix` variable (like that
#     of every other ksync*.pc installed) must be the install prefix;
#   - add_subdirectory() (which must not build ksync's own targets, nor need a
#     C++ compiler in a C-only parent).
# Then moves the installed tree and builds through find_package and
# pkg-config again, and stages an install under DESTDIR: the installed files
# are relocatable, so both must point at where the files now lie.
set -u
src=${1:?usage: packaging.sh SOURCE_DIR}
consumer_dir=$(cd "$(dirname "$0")/packaging" && pwd) || exit 1 # the downstream project
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/opt/odd-prefix.1/x
pass=0 fail=0
check() {
	local name=$1; shift
	if "$@" >"$work/log" 2>&1; then pass=$((pass + 1)); echo "ok: $name"
	else fail=$((fail + 1)); echo "FAIL: $name"; tail -30 "$work/log" | sed 's/^/    /'; fi
}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
canon() { (cd "$1" 2>/dev/null && pwd -P); }

# PKG_CONFIG_PATH for an installed tree: the directories holding ksync*.pc.
pc_path() { find "$1" -name 'ksync*.pc' -printf '%h\n' | sort -u | paste -sd:; }

# pkg-config's view of ksync under prefix $1: prefix, includedir and libdir
# resolve into it.
pc_points_into() {
	local p=$1 m mods got lib
	local -x PKG_CONFIG_PATH
	PKG_CONFIG_PATH=$(pc_path "$p")
	[ -n "$PKG_CONFIG_PATH" ] || { echo "no ksync*.pc under $p"; return 1; }
	# Every installed ksync*.pc (ksync, ksync-shrinker and what lib/ adds).
	mods=$(find "$p" -name 'ksync*.pc' -printf '%f\n' | sed 's/\.pc$//' | sort)
	for m in ksync ksync-shrinker; do
		grep -qx "$m" <<<"$mods" || { echo "$m.pc not installed under $p"; return 1; }
	done
	for m in $mods; do
		got=$(pkg-config --variable=prefix "$m") || return 1
		echo "$m: prefix=$got"
		if [ -z "$got" ] || [ "$(canon "$got")" != "$(canon "$p")" ]; then
			echo "$m: prefix $got is not $p"; return 1
		fi
	done
	got=$(pkg-config --variable=includedir ksync)
	[ -f "$got/ksync/kernel.h" ] || { echo "ksync: includedir $got has no ksync/kernel.h"; return 1; }
	got=$(pkg-config --variable=libdir ksync-shrinker)
	lib=$(pkg-config --libs-only-l ksync-shrinker | awk '{ print substr($1, 3) }')
	ls "$got/lib$lib".* >/dev/null || { echo "ksync-shrinker: libdir $got has no lib$lib"; return 1; }
}

# Build and run both consumers with nothing but pkg-config's flags.
pc_consumers() { # prefix, tag
	local p=$1 tag=$2
	local -x PKG_CONFIG_PATH
	PKG_CONFIG_PATH=$(pc_path "$p")
	pc_points_into "$p" || return 1
	# shellcheck disable=SC2046 # pkg-config's flags are words
	cc -std=c11 -Wall -Wextra -Werror "$consumer_dir/consumer.c" -o "$work/pc-$tag" \
		$(pkg-config --cflags --libs ksync) && "$work/pc-$tag" &&
	cc -std=c11 -Wall -Wextra -Werror "$consumer_dir/consumer_shrinker.c" -o "$work/pcs-$tag" \
		$(pkg-config --cflags --libs ksync-shrinker) && "$work/pcs-$tag"
}

# find_package(ksync) from prefix $1: ksync::ksync and ksync::shrinker.
package_consumers() { # prefix, tag
	cmake -S "$consumer_dir" -B "$work/c-$2" "${gen[@]}" -DCMAKE_PREFIX_PATH="$1" \
		-DKSYNC_EXPECT_PREFIX="$1" && cmake --build "$work/c-$2" &&
		"$work/c-$2/consumer" && "$work/c-$2/consumer_shrinker"
}

# add_subdirectory(ksync), with extra environment "$@" (e.g. CXX=...).
subdir_consumers() { # tag, env...
	local tag=$1; shift
	env "$@" cmake -S "$consumer_dir" -B "$work/s-$tag" "${gen[@]}" -DKSYNC_CONSUME=subdir \
		-DKSYNC_SOURCE_DIR="$src" && cmake --build "$work/s-$tag" &&
		"$work/s-$tag/consumer" && "$work/s-$tag/consumer_shrinker"
}

check "configure + build ksync" bash -c "cmake -S '$src' -B '$work/b' ${gen[*]} -DKSYNC_BUILD_TESTS=OFF \
	-DKSYNC_BUILD_EXAMPLES=OFF -DKSYNC_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX='$work/configured' &&
	cmake --build '$work/b'"
check "cmake --install --prefix $prefix" cmake --install "$work/b" --prefix "$prefix"
check "nothing installed into the configured prefix" test ! -e "$work/configured"
check "find_package(ksync) consumers (ksync::ksync, ksync::shrinker)" package_consumers "$prefix" installed
check "pkg-config ksync, ksync-shrinker consumers; prefix=$prefix" pc_consumers "$prefix" installed
check "add_subdirectory(ksync) consumers" subdir_consumers plain
# ksync is C: a C-only parent on a machine without a C++ compiler must configure it.
check "add_subdirectory(ksync) from a C-only project without a C++ compiler" \
	subdir_consumers nocxx CXX=/nonexistent/c++

# Relocation: the installed tree, moved elsewhere, still works.
moved=$work/elsewhere/odd-prefix.2/y
mkdir -p "${moved%/*}" && mv "$prefix" "$moved"
check "find_package(ksync) consumers after moving the prefix to $moved" package_consumers "$moved" moved
check "pkg-config consumers after moving the prefix to $moved" pc_consumers "$moved" moved
# Staging: files installed under DESTDIR point at where they lie there.
check "DESTDIR install" env DESTDIR="$work/stage" cmake --install "$work/b" --prefix /opt/ksync-staged
check "pkg-config under DESTDIR" pc_points_into "$work/stage/opt/ksync-staged"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
