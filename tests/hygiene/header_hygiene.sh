#!/usr/bin/env bash
# Header hygiene, run by CTest (label hygiene):
#  1. every public header include/ksync/*.h compiles alone, as C11 and as
#     C++17, with gcc and clang, -Wall -Wextra -Werror, with both atomics
#     back-ends and with KSYNC_DEBUG (and so do the private atomics headers
#     include/ksync/impl/atomic*.h, on both back-ends);
#  2. the canonical headers (all but kernel.h) compile in one translation
#     unit together with liburcu's and Concurrency Kit's headers;
#  3. a program using only <ksync/kernel.h> and kernel spellings builds with
#     nothing but -Iinclude $(pkg-config --cflags --libs ck) -lpthread, and runs.
#  4. KSYNC_BUILD_BUG_ON(true) fails the build;
#  5. the foundation's kernel-spelling macros expand and run as C++17
#     (-pedantic-errors), with both atomics back-ends.
# Prints one line per check and closes with "N passed, N failed".
# Optional tools: without g++/clang++ the C++ checks are skipped, without
# liburcu-memb (pkg-config) the liburcu half of check 2 is; a note says so.
set -u
src=${1:?usage: header_hygiene.sh SOURCE_DIR}
inc="$src/include"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ck_flags=$(pkg-config --cflags ck)

check() { # name, command...
	local name=$1; shift
	if "$@" >"$work/log" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $name"; sed 's/^/    /' "$work/log" | head -30
	fi
}

compilers=()
for c in gcc clang; do command -v $c >/dev/null && compilers+=("$c"); done
[ ${#compilers[@]} -gt 0 ] || compilers=(cc)
cxxs=()
for c in g++ clang++; do command -v $c >/dev/null && cxxs+=("$c"); done
[ ${#cxxs[@]} -gt 0 ] || echo "note: no C++ compiler (g++, clang++): skipping the C++17 checks"
have_urcu=0
if pkg-config --exists liburcu-memb 2>/dev/null; then
	have_urcu=1
else
	echo "note: liburcu-memb not found by pkg-config: checking coexistence with CK only"
fi

# The canonical headers in every mode; the kernel-spelling headers of
# ksync/linux/ (thin tables of #defines) in the default mode; the private
# atomics headers (the back-end and the generated operations, which
# <ksync/atomic.h> includes) on both back-ends.
for h in "$inc"/ksync/*.h "$inc"/ksync/linux/*.h "$inc"/ksync/impl/atomic*.h; do
	name=${h#"$inc"/}
	printf '#include <%s>\n#include <%s>\n' "$name" "$name" >"$work/one.c"
	cp "$work/one.c" "$work/one.cc"
	modes=("" "-DKSYNC_ATOMIC_BUILTINS" "-DKSYNC_DEBUG" "-DKSYNC_SRCU_EXTERN")
	case $name in
	ksync/linux/*) modes=("") ;;
	ksync/impl/*) modes=("" "-DKSYNC_ATOMIC_BUILTINS") ;;
	esac
	for mode in "${modes[@]}"; do
		for c in "${compilers[@]}"; do
			check "$name as C11 with $c $mode" \
				$c -std=c11 -Wall -Wextra -Werror $mode -I"$inc" $ck_flags -c "$work/one.c" -o "$work/one.o"
		done
		for c in "${cxxs[@]}"; do
			check "$name as C++17 with $c $mode" \
				$c -std=c++17 -Wall -Wextra -Werror $mode -I"$inc" $ck_flags -c "$work/one.cc" -o "$work/one.o"
		done
	done
done
echo "single-header checks: $pass passed so far"

# 1b. The compiled form of SRCU (KSYNC_SRCU_EXTERN): an includer of srcu.h
#     sees declarations and the inline read side, none of the slow paths'
#     system headers (futex, membarrier, the syscall() prototype).
srcu_clean() { # compiler
	local out
	out=$(printf '#include <ksync/srcu.h>\n' | $1 -std=c11 -E -DKSYNC_SRCU_EXTERN -I"$inc" $ck_flags -x c -) || return 1
	if grep -E '^# [0-9]+ "[^"]*/linux/(futex|membarrier)\.h"' <<<"$out"; then
		echo "linux/futex.h or linux/membarrier.h reached the includer"; return 1
	fi
	if grep -E '\bsyscall *\(' <<<"$out"; then echo "syscall() reached the includer"; return 1; fi
	# A definition: the name and its parameters, no ';' (the brace follows).
	if grep -E '\bksync_synchronize_srcu *\([^;]*\) *\{? *$' <<<"$out"; then
		echo "a slow-path body reached the includer"; return 1
	fi
}
for c in "${compilers[@]}"; do
	check "srcu.h with KSYNC_SRCU_EXTERN: no slow-path system header or body ($c)" srcu_clean "$c"
done

# 2. Coexistence with liburcu and CK in one translation unit (CK alone
#    without liburcu).
urcu_pc=""
[ "$have_urcu" -eq 1 ] && urcu_pc=liburcu-memb
{
	if [ "$have_urcu" -eq 1 ]; then
		echo '#define _LGPL_SOURCE 1'
		echo '#include <urcu/urcu-memb.h>'
		echo '#include <urcu/rculist.h>'
		echo '#include <urcu/rculfhash.h>'
		echo '#include <urcu/call-rcu.h>'
	fi
	echo '#include <ck_pr.h>'
	echo '#include <ck_epoch.h>'
	echo '#include <ck_bitmap.h>'
	for h in "$inc"/ksync/*.h; do
		[ "$(basename "$h")" = kernel.h ] || echo "#include <ksync/$(basename "$h")>"
	done
	echo 'int main(void) { ksync_atomic_long_t a = KSYNC_ATOMIC_INIT(1); ck_epoch_t e; ck_epoch_init(&e);'
	[ "$have_urcu" -eq 1 ] &&
		echo '  urcu_memb_register_thread(); urcu_memb_read_lock(); urcu_memb_read_unlock(); urcu_memb_unregister_thread();'
	echo '  return (int)ksync_atomic_long_dec_return(&a); }'
} >"$work/coexist.c"
# CK's ck_epoch.h/ck_stack.h themselves do not compile as C++ (void * conversions
# in CK's own code), so the C++ variant pairs ksync with liburcu and ck_pr.h only.
sed -e '/#include <ck_epoch.h>/d' -e '/#include <ck_bitmap.h>/d' -e 's/ck_epoch_t e; ck_epoch_init(&e);//' \
	"$work/coexist.c" >"$work/coexist.cc"
with="liburcu and CK"
[ "$have_urcu" -eq 1 ] || with="CK"
for c in "${compilers[@]}"; do
	# shellcheck disable=SC2046,SC2086
	check "coexistence with $with ($c)" \
		$c -std=gnu11 -Wall -Wextra -Werror -I"$inc" "$work/coexist.c" -o "$work/coexist" \
		$(pkg-config --cflags --libs ck $urcu_pc) -lpthread
	check "coexistence program runs ($c)" "$work/coexist"
done
for c in "${cxxs[@]}"; do
	# shellcheck disable=SC2046,SC2086
	check "coexistence with $with as C++ ($c)" \
		$c -std=c++17 -Wall -Wextra -Werror -I"$inc" -c "$work/coexist.cc" -o "$work/coexist.o" $(pkg-config --cflags ck $urcu_pc)
done

# 3. The kernel-spelling program, with nothing but the documented flags.
cat >"$work/kernel_spellings.c" <<'PROG'
#include <ksync/kernel.h>
#include <stdio.h>

struct item {
	long value;
	struct list_head node;
};

int main(void)
{
	atomic_long_t total = ATOMIC_LONG_INIT(0);
	LIST_HEAD(items);
	struct item a = { .value = 40 }, b = { .value = 2 };
	struct item *pos;

	list_add_tail(&a.node, &items);
	list_add_tail(&b.node, &items);
	list_for_each_entry(pos, &items, node)
		atomic_long_add(pos->value, &total);
	if (WARN_ON_ONCE(container_of(items.next, struct item, node) != &a))
		return 1;
	printf("total=%ld\n", atomic_long_read(&total));
	return atomic_long_read(&total) == 42 ? 0 : 1;
}
PROG
check "kernel-spelling program builds with -Iinclude \$(pkg-config --cflags --libs ck) -lpthread" \
	bash -c "cd '$src' && cc '$work/kernel_spellings.c' -o '$work/kernel_spellings' -Iinclude $(pkg-config --cflags --libs ck) -lpthread"
check "kernel-spelling program runs" "$work/kernel_spellings"

# 4. KSYNC_BUILD_BUG_ON must really fail the build when its condition holds.
printf '#include <ksync/compiler.h>\nint main(void) { KSYNC_BUILD_BUG_ON(sizeof(int) > 0); return 0; }\n' >"$work/bbo.c"
check "KSYNC_BUILD_BUG_ON(true) fails to compile" \
	bash -c "! cc -std=c11 -I'$inc' -c '$work/bbo.c' -o '$work/bbo.o'"
#    As the kernel's, it takes what is constant only after optimisation (a
#    local variable's known value) and still refuses it when it is true;
#    C and C++, every compiler at hand.
printf '#include <ksync/compiler.h>\nint main(void) { unsigned n = 64; KSYNC_BUILD_BUG_ON(n * 2 > 128); KSYNC_BUILD_BUG_ON(!__builtin_constant_p(n * 2)); KSYNC_BUILD_BUG_ON_MSG(n != 64, "n"); return 0; }\n' >"$work/bbo_opt.c"
printf '#include <ksync/compiler.h>\nint main(void) { unsigned n = 64; KSYNC_BUILD_BUG_ON(n > 8); return 0; }\n' >"$work/bbo_opt_bad.c"
cp "$work/bbo_opt.c" "$work/bbo_opt.cc"
cp "$work/bbo_opt_bad.c" "$work/bbo_opt_bad.cc"
cp "$work/bbo.c" "$work/bbo.cc"
for c in "${compilers[@]}"; do
	check "KSYNC_BUILD_BUG_ON of a constant after optimisation compiles at -O2 ($c)" \
		$c -std=c11 -O2 -Wall -Wextra -Werror -I"$inc" -c "$work/bbo_opt.c" -o "$work/bbo_opt.o"
	check "KSYNC_BUILD_BUG_ON of a true constant after optimisation fails at -O2 ($c)" \
		bash -c "! $c -std=c11 -O2 -I'$inc' -c '$work/bbo_opt_bad.c' -o '$work/bbo_opt_bad.o' 2>/dev/null"
done
for c in "${cxxs[@]}"; do
	check "KSYNC_BUILD_BUG_ON of a constant after optimisation compiles at -O2 as C++ ($c)" \
		$c -std=c++17 -O2 -Wall -Wextra -Werror -I"$inc" -c "$work/bbo_opt.cc" -o "$work/bbo_opt.o"
	check "KSYNC_BUILD_BUG_ON of a true constant after optimisation fails at -O2 as C++ ($c)" \
		bash -c "! $c -std=c++17 -O2 -I'$inc' -c '$work/bbo_opt_bad.cc' -o '$work/bbo_opt_bad.o' 2>/dev/null"
	check "KSYNC_BUILD_BUG_ON(true) fails to compile as C++ ($c)" \
		bash -c "! $c -std=c++17 -I'$inc' -c '$work/bbo.cc' -o '$work/bbo.o' 2>/dev/null"
done

# 5. Every kernel-spelling macro of the foundation, instantiated as C++17
#    (header compilation alone does not expand macros), both back-ends.
cat >"$work/kernel_macros.cc" <<'PROG'
#include <ksync/kernel.h>
struct item { long v; struct list_head node; };
int main()
{
	atomic_t a = ATOMIC_INIT(1);
	atomic_long_t l = ATOMIC_LONG_INIT(2);
	int x = 0, o = 1, n = 0, *np = nullptr;
	WRITE_ONCE(x, READ_ONCE(x) + 1);
	WRITE_ONCE(np, nullptr);
	smp_store_release(&x, 3);
	x = smp_load_acquire(&x);
	smp_store_release(&np, nullptr);
	smp_mb(); smp_rmb(); smp_wmb(); smp_mb__before_atomic(); smp_mb__after_atomic();
	barrier(); cpu_relax();
	atomic_inc(&a); atomic_long_add(3, &l);
	(void)atomic_try_cmpxchg(&a, &o, 2); (void)atomic_long_fetch_add(1, &l);
	BUILD_BUG_ON(sizeof(int) == 0);
	if (WARN_ON_ONCE(x == 99) || WARN_ON(x == 98) || WARN(x == 97, "x") || WARN_ONCE(x == 96, "x"))
		return 1;
	KSYNC_DEBUG_WARN_ON_ONCE(x == 95);
	if (likely(x) || unlikely(!x))
		n++;
	LIST_HEAD(h);
	struct list_head h2, *p, *q;
	INIT_LIST_HEAD(&h2);
	struct item i1 = { 1, { nullptr, nullptr } }, i2 = { 2, { nullptr, nullptr } }, *pos, *nx;
	list_add(&i1.node, &h); list_add_tail(&i2.node, &h);
	list_for_each(p, &h) n++;
	list_for_each_safe(p, q, &h) n++;
	list_for_each_entry(pos, &h, node) n += (int)pos->v;
	list_for_each_entry_reverse(pos, &h, node) n += (int)pos->v;
	list_for_each_entry_safe(pos, nx, &h, node) n += (int)pos->v;
	pos = list_first_entry(&h, struct item, node);
	list_for_each_entry_continue(pos, &h, node) n++;
	pos = list_last_entry(&h, struct item, node);
	pos = list_first_entry_or_null(&h, struct item, node);
	pos = list_prev_entry(list_next_entry(pos, node), node);
	pos = container_of(&i1.node, struct item, node);
	list_move(&i1.node, &h2); list_splice_init(&h2, &h);
	(void)list_is_singular(&h); (void)list_entry_is_head(pos, &h, node);
	long m = min_t(long, 1, 2L) + max_t(long, 1, 2) + clamp(5L, 1L, 3L) +
		 (long)(BITS_TO_LONGS(100) + DIV_ROUND_UP(7, 2) + round_up(5ul, 4) + round_down(5ul, 4));
#if BITS_PER_LONG == 64 || BITS_PER_LONG == 32
	m += BITS_PER_LONG;
#endif
	return n > 0 && m > 0 ? 0 : 1;
}
PROG
for c in "${cxxs[@]}"; do
	for mode in "" "-DKSYNC_ATOMIC_BUILTINS"; do
		check "kernel-spelling macros instantiated as C++17 with $c $mode" \
			$c -std=c++17 -Wall -Wextra -Werror -pedantic-errors $mode -I"$inc" $ck_flags \
			"$work/kernel_macros.cc" -o "$work/kernel_macros" $(pkg-config --libs ck) -lpthread
		check "kernel-spelling C++ program runs ($c $mode)" "$work/kernel_macros"
	done
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
