#!/usr/bin/env bash
# A production configuration compiles the test seams out (label hygiene):
# configure ksync with -DKSYNC_SEAMS=OFF, build the compiled modules, and
# check with nm that no seam symbol is left in them (the yield hooks of
# <ksync/*_testing.h>, the pressure sources' trigger hook); also that a plant
# switch given on the command line changes nothing there (KSYNC_PLANT() reads
# 0 without seams).
#   usage: no_seams.sh <source dir> <scratch build dir>
set -u
src=${1:?usage: no_seams.sh SOURCE_DIR BUILD_DIR}
bld=${2:?usage: no_seams.sh SOURCE_DIR BUILD_DIR}
pass=0 fail=0
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
seam_re='yield_hook|yield_arg|set_yield_hook|pressure_write_hook|pressure_write_arg|set_write_hook'
build() { # dir, extra cmake args...
	local d=$1; shift
	cmake -S "$src" -B "$d" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DKSYNC_SEAMS=OFF -DKSYNC_BUILD_TESTS=OFF \
		-DKSYNC_BUILD_EXAMPLES=OFF -DKSYNC_BUILD_BENCH=OFF -DKSYNC_BUILD_FUZZERS=OFF "$@" >"$d.log" 2>&1 &&
		cmake --build "$d" >>"$d.log" 2>&1
}
mkdir -p "$bld"
if build "$bld/plain"; then
	pass=$((pass + 1)); echo "ok: the modules build with -DKSYNC_SEAMS=OFF"
else
	fail=$((fail + 1)); echo "FAIL: the modules do not build with -DKSYNC_SEAMS=OFF"; tail -30 "$bld/plain.log"
fi
libs=$(find "$bld/plain/lib" -name 'libksync_*.a' | sort)
[ -n "$libs" ] || { fail=$((fail + 1)); echo "FAIL: no library built"; }
for lib in $libs; do
	left=$(nm "$lib" 2>/dev/null | awk '{ print $NF }' | grep -E "$seam_re" | sort -u | tr '\n' ' ')
	if [ -n "$left" ]; then
		fail=$((fail + 1)); echo "FAIL: $(basename "$lib") keeps seam symbols: $left"
	else
		pass=$((pass + 1)); echo "ok: $(basename "$lib"): no seam symbol"
	fi
done
# A plant asked for in a production build is ignored: same code as without.
if build "$bld/planted" -DCMAKE_C_FLAGS=-DKSYNC_PLANT_UNREG_NO_WAIT; then
	a=$(objdump -d --no-show-raw-insn "$bld/plain/lib/shrinker/libksync_shrinker.a" | grep -v 'file format\|^In archive' | md5sum)
	b=$(objdump -d --no-show-raw-insn "$bld/planted/lib/shrinker/libksync_shrinker.a" | grep -v 'file format\|^In archive' | md5sum)
	if [ "$a" = "$b" ]; then pass=$((pass + 1)); echo "ok: a plant switch changes nothing without seams"
	else fail=$((fail + 1)); echo "FAIL: -DKSYNC_PLANT_UNREG_NO_WAIT changed the production registry"; fi
else
	fail=$((fail + 1)); echo "FAIL: the planted production build failed"; tail -30 "$bld/planted.log"
fi
# Every seam goes through impl/seams.h: no switch of its own in a header or a
# lib/ source (an #if on a KSYNC_PLANT_ or mutant name, a test-point macro
# defined elsewhere).
stray=$(grep -rnE '^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif|define)[[:space:]].*(KSYNC_PLANT_|_MUTATE_|KSYNC_SRCU_TEST_|KSYNC_TP_)' \
	"$src/include/ksync" "$src/lib" | grep -v '/include/ksync/impl/seams.h:')
if [ -n "$stray" ]; then
	fail=$((fail + 1)); echo "FAIL: seam switches outside impl/seams.h:"; sed 's/^/    /' <<<"$stray"
else
	pass=$((pass + 1)); echo "ok: every seam switch is in impl/seams.h"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
