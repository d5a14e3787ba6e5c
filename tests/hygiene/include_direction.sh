#!/usr/bin/env bash
# The include-direction test: every #include <ksync/...> of a public or
# private header must point to a lower layer, as docs/architecture.md's
# table of layers says; lib/memgroup must include nothing of lib/shrinker.
#   usage: include_direction.sh <source dir>
set -uo pipefail
src=${1:?usage: include_direction.sh <source dir>}
doc=$src/docs/architecture.md
inc=$src/include/ksync
declare -A layer
# "| 3 | `rcupdate.h` `bitops.h` `generation.h` |"
while IFS= read -r line; do
	if [[ $line =~ ^\|\ ([0-9]+)\ \|\ (.*)\|$ ]]; then
		n=${BASH_REMATCH[1]}
		for h in $(grep -o '`[^`]*`' <<<"${BASH_REMATCH[2]}" | tr -d '`'); do
			layer[$h]=$n
		done
	fi
done < <(sed -n '/^## The layers/,/^\*\*The rule/p' "$doc")
[ ${#layer[@]} -gt 10 ] || { echo "could not read the layer table of $doc"; exit 1; }

bad=0 checked=0
while IFS= read -r -d '' file; do
	h=${file#"$inc"/}
	if [ -z "${layer[$h]:-}" ]; then
		echo "FAIL: $h has no layer in docs/architecture.md"
		bad=$((bad + 1))
		continue
	fi
	while IFS= read -r dep; do
		checked=$((checked + 1))
		if [ -z "${layer[$dep]:-}" ]; then
			echo "FAIL: $h includes <ksync/$dep>, which has no layer"
			bad=$((bad + 1))
		elif [ "${layer[$dep]}" -ge "${layer[$h]}" ]; then
			echo "FAIL: $h (layer ${layer[$h]}) includes <ksync/$dep> (layer ${layer[$dep]}): not below it"
			bad=$((bad + 1))
		fi
	done < <(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*<ksync/\([^>]*\)>.*|\1|p' "$file")
done < <(find "$inc" -name '*.h' -print0)

# Compiled modules: memory groups know none of their clients.
if grep -rnE '#[[:space:]]*include.*(shrinker|\.\./shrinker)' "$src/lib/memgroup"; then
	echo "FAIL: lib/memgroup includes the shrinker registry (a module above it)"
	bad=$((bad + 1))
fi
# The kernel-spelling headers must not shadow a system uapi header of the
# same name (a port puts <include>/ksync on its include path, see
# docs/porting.md): none may be named like a file of /usr/include/linux.
if [ -d /usr/include/linux ]; then
	for f in "$inc"/linux/*.h; do
		if [ -e "/usr/include/linux/$(basename "$f")" ]; then
			echo "FAIL: ksync/linux/$(basename "$f") would shadow the uapi <linux/$(basename "$f")>"
			bad=$((bad + 1))
		fi
	done
fi
echo "include direction: $checked includes checked, $bad violations"
[ "$bad" -eq 0 ]
