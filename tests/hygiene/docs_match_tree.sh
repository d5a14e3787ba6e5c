#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2016 # backquotes in patterns are Markdown, not expansions
# The docs against the tree, run by CTest (docs_hygiene):
#  1. README.md's header table names every public header include/ksync/*.h
#     (as `ksync/NAME.h`) and the kernel spellings (`ksync/linux/*.h`);
#  2. the picture of docs/architecture.md agrees with its table of layers
#     (the table is what include_direction.sh enforces): a picture line for
#     one layer names exactly that layer's headers; a line for layers A-B
#     names only headers of those layers, and a pattern on it (linux/*.h)
#     matches every header of those layers;
#  3. every repository path that README.md or docs/*.md quotes in backticks
#     (outside code blocks) or links to exists: `include/...`, `lib/...`,
#     `tests/...`, `scripts/...`, `examples/...`, `bench/...`, `fuzz/...`,
#     `docs/...`, `cmake/...` (a path with <placeholders> or * is skipped).
# Prints one line per problem and closes with a count.
#   usage: docs_match_tree.sh <source dir>
set -uo pipefail
src=${1:?usage: docs_match_tree.sh <source dir>}
bad=0
fail() { echo "FAIL: $*"; bad=$((bad + 1)); }

# 1. The README's header table.
readme=$src/README.md
for f in "$src"/include/ksync/*.h; do
	h=ksync/$(basename "$f")
	grep -q "^| .*\`$h\`" "$readme" || fail "README.md's header table does not list \`$h\`"
done
if [ -d "$src/include/ksync/linux" ]; then
	grep -q '^| .*`ksync/linux/\*\.h`' "$readme" || fail "README.md's header table does not list \`ksync/linux/*.h\`"
fi

# 2. docs/architecture.md: the picture against the table.
doc=$src/docs/architecture.md
declare -A layer
while IFS= read -r line; do
	if [[ $line =~ ^\|\ ([0-9]+)\ \|\ (.*)\|$ ]]; then
		for h in $(grep -o '`[^`]*`' <<<"${BASH_REMATCH[2]}" | tr -d '`'); do
			layer[$h]=${BASH_REMATCH[1]}
		done
	fi
done < <(sed -n '/^## The layers/,/^\*\*The rule/p' "$doc")
[ ${#layer[@]} -gt 10 ] || fail "could not read the layer table of docs/architecture.md"
pictured=0
# The picture: the first code block, lines " N  headers...  what" or " A-B  ...".
while IFS= read -r line; do
	[[ $line =~ ^\ *([0-9]+)(-([0-9]+))?\ +(.*)$ ]] || continue
	lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}
	at=$lo
	[ "$hi" = "$lo" ] || at=$lo-$hi
	named=$(grep -oE '[A-Za-z0-9_/*]+\.h' <<<"${BASH_REMATCH[4]}")
	pictured=$((pictured + 1))
	for h in $named; do
		if [[ $h == *'*'* ]]; then
			for t in "${!layer[@]}"; do
				# shellcheck disable=SC2053 # $h is a pattern
				if [ "${layer[$t]}" -ge "$lo" ] && [ "${layer[$t]}" -le "$hi" ] && [[ $t != $h ]]; then
					fail "architecture.md's picture shows $h at $at, but $t (layer ${layer[$t]}) is not one"
				fi
			done
		elif [ -z "${layer[$h]:-}" ]; then
			fail "architecture.md's picture shows $h, which the table of layers does not list"
		elif [ "${layer[$h]}" -lt "$lo" ] || [ "${layer[$h]}" -gt "$hi" ]; then
			fail "architecture.md's picture shows $h at $at, the table at layer ${layer[$h]}"
		fi
	done
	if [ "$lo" = "$hi" ]; then
		for t in "${!layer[@]}"; do
			[ "${layer[$t]}" = "$lo" ] || continue
			grep -qxF "$t" <<<"$named" || fail "architecture.md's picture leaves $t out of layer $lo"
		done
	fi
done < <(awk '/^```/ { n++; next } n == 1' "$doc")
[ "$pictured" -gt 5 ] || fail "could not read the picture of docs/architecture.md"

# 3. Paths quoted by the docs.
paths=0
for md in "$readme" "$src"/docs/*.md; do
	dir=$(dirname "$md")
	while IFS= read -r p; do
		paths=$((paths + 1))
		p=${p%%#*}
		p=${p%/}
		p=${p%:}
		[ -e "$src/$p" ] || [ -e "$dir/$p" ] || fail "${md#"$src"/} quotes $p, which the tree does not have"
	done < <(awk '/^```/ { code = !code; next } !code' "$md" |
		grep -oE '`[^` ]+`|\]\([^)]+\)' |
		sed -E 's/^`//; s/`$//; s/^\]\(//; s/\)$//' |
		grep -E '^(\.\./)?(include|lib|tests|scripts|examples|bench|fuzz|docs|cmake|\.ci)/|^[A-Za-z0-9_.-]+\.md(#.*)?$' |
		grep -v '[<>*{}]')
done
echo "docs against the tree: ${#layer[@]} headers in the layer table, $pictured picture lines, $paths paths; $bad problems"
[ "$bad" -eq 0 ]
