#!/usr/bin/env bash
# The compiled modules' symbols, read with nm (label hygiene):
#  1. every global symbol a static library defines is ksync_<name>, a name
#     of the public API (declared in include/ksync), or ksync__<name>, a
#     private one (the prefix of CK's _ck_ and liburcu's _urcu_); the list of
#     each library's symbols is printed;
#  2. no call circle among lib/'s object files: file A "calls" file B when A
#     needs a symbol that B defines (strong definitions only: the weak
#     process-wide objects of the headers are defined everywhere); tsort
#     reports any loop of that graph.
#   usage: lib_symbols.sh <source dir> <library.a>...
# Closes with "N passed, N failed".
set -u
src=${1:?usage: lib_symbols.sh SOURCE_DIR LIB.a...}
shift
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# 1. Names.
for lib in "$@"; do
	name=$(basename "$lib")
	nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$work/syms"
	n=$(wc -l <"$work/syms")
	echo "$name: $n global symbols: $(grep -c '^ksync__' "$work/syms") private (ksync__), $(grep -vc '^ksync__' "$work/syms") public"
	sed 's/^/    /' "$work/syms"
	stray=$(grep -v '^ksync_' "$work/syms" | tr '\n' ' ')
	if [ -n "$stray" ]; then bad "$name exports names outside ksync_/ksync__: $stray"; else ok "$name: every global symbol is ksync_ or ksync__"; fi
	undeclared=""
	while read -r s; do
		case $s in ksync__*) continue ;; esac
		grep -rqw -- "$s" "$src/include/ksync" || undeclared="$undeclared $s"
	done <"$work/syms"
	if [ -n "$undeclared" ]; then bad "$name: public names no header declares:$undeclared"; else ok "$name: every public name is declared in include/ksync"; fi
done

# 2. Calls between object files (members of every library given).
for lib in "$@"; do
	d="$work/objs/$(basename "$lib" .a)"
	mkdir -p "$d"
	abs=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
	(cd "$d" && ar x "$abs") || bad "cannot unpack $lib"
done
: >"$work/defs"
: >"$work/edges"
for o in "$work"/objs/*/*.o; do
	id=$(basename "$(dirname "$o")")/$(basename "$o" .o)
	nm -g --defined-only "$o" | awk -v id="$id" 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3, id }' >>"$work/defs"
done
sort -u -o "$work/defs" "$work/defs"
for o in "$work"/objs/*/*.o; do
	id=$(basename "$(dirname "$o")")/$(basename "$o" .o)
	nm -u "$o" | awk '{ print $NF }' | sort -u | join - "$work/defs" | awk -v id="$id" '$2 != id { print id, $2 }' >>"$work/edges"
done
sort -u -o "$work/edges" "$work/edges"
echo "calls between object files ($(wc -l <"$work/edges") edges):"
sed 's/^/    /; s/ / -> /' "$work/edges"
if tsort "$work/edges" >/dev/null 2>"$work/tsort"; then
	ok "no call circle among lib/'s object files"
else
	bad "call circle among lib/'s object files:"; sed 's/^/    /' "$work/tsort"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
