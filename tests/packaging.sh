#!/usr/bin/env bash
# Packaging test (label hygiene): install ksync into a scratch prefix, then
# build a downstream program three ways: find_package(ksync), pkg-config
# ksync, and add_subdirectory() (which must not build ksync's own targets, nor
# need a C++ compiler in a C-only parent).
set -u
src=${1:?usage: packaging.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() {
	local name=$1; shift
	if "$@" >"$work/log" 2>&1; then pass=$((pass + 1)); echo "ok: $name"
	else fail=$((fail + 1)); echo "FAIL: $name"; tail -30 "$work/log" | sed 's/^/    /'; fi
}
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
check "configure + install ksync" bash -c "cmake -S '$src' -B '$work/b' ${gen[*]} -DKSYNC_BUILD_TESTS=OFF \
	-DKSYNC_BUILD_EXAMPLES=OFF -DKSYNC_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX='$work/prefix' &&
	cmake --build '$work/b' && cmake --install '$work/b'"
check "find_package(ksync) consumer" bash -c "cmake -S '$src/tests/packaging' -B '$work/c1' ${gen[*]} \
	-DCMAKE_PREFIX_PATH='$work/prefix' && cmake --build '$work/c1' && '$work/c1/consumer'"
check "pkg-config ksync consumer" bash -c "PKG_CONFIG_PATH='$work/prefix/share/pkgconfig' &&
	export PKG_CONFIG_PATH && cc -std=c11 -Wall -Wextra -Werror '$src/tests/packaging/consumer.c' \
	-o '$work/pc' \$(pkg-config --cflags --libs ksync) && '$work/pc'"
check "add_subdirectory(ksync) consumer" bash -c "cmake -S '$src/tests/packaging' -B '$work/c2' ${gen[*]} \
	-DKSYNC_CONSUME=subdir -DKSYNC_SOURCE_DIR='$src' && cmake --build '$work/c2' && '$work/c2/consumer'"
# ksync is C: a C-only parent on a machine without a C++ compiler must configure it.
check "add_subdirectory(ksync) from a C-only project without a C++ compiler" bash -c "CXX=/nonexistent/c++ \
	cmake -S '$src/tests/packaging' -B '$work/c3' ${gen[*]} -DKSYNC_CONSUME=subdir -DKSYNC_SOURCE_DIR='$src' &&
	cmake --build '$work/c3' && '$work/c3/consumer'"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
