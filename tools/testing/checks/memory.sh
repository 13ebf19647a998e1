#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# memory.sh - kernel memory per file against .eh_frame, as an RST table
#
# Usage: memory.sh [OUTDIR]     (default build/memory; make memory)
#
# The files: those Debian's python3, perl, git, g++'s cc1plus and the
# largest libLLVM installed map (the programs and every library ldd
# names).  For each, sframe-gen makes the sidecar sframectl would register
# (--share-rows --sp-word) and sframe-dump --memory says what the module
# keeps for it, with the module's own code: the decoder's index (only its
# elements once the table is built) and the rule table (entry starts and
# codes, block index, rules, spill list), in bytes asked for and in bytes
# the allocator takes; and the section's size ("sframe"), which the module
# frees once it has the table.  Next to them .eh_frame + .eh_frame_hdr,
# and the ratios; then the sum over the set.  The structures around each
# array (the sidecar's, a region per mapping) are a few hundred bytes per
# file and not in the table; bench_walk.sh measures them in a guest.
set -u

prog=memory
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:-$root/build/memory}
gen=$root/tools/sframe-gen/sframe-gen
dump=$root/tools/sframe-dump/sframe-dump
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

mkdir -p "$out" || exit 1
make -s -C "$root" tools/sframe-gen/sframe-gen tools/sframe-dump/sframe-dump || exit 1
command -v readelf > /dev/null || apt_install binutils

# Debian's programs (not another python3 first in PATH).
for p in python3 perl git g++; do
	[ -x "/usr/bin/$p" ] || apt_install python3 perl git g++
done
progs=(/usr/bin/python3 /usr/bin/perl /usr/bin/git
       "$(/usr/bin/g++ -print-prog-name=cc1plus)")
llvm=$(find /usr/lib -maxdepth 2 -name 'libLLVM*.so.*' -type f \
	-printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2)
[ -n "$llvm" ] || say "no libLLVM installed: the set has none"

# files: every ELF file the programs map, once, by real path.
files() {
	local p

	for p in "${progs[@]}"; do
		realpath "$p"
		ldd "$p" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
			$1 ~ /^\// { print $1 }' | xargs -r realpath
	done
	[ -z "$llvm" ] || realpath "$llvm"
}

# section_size FILE NAME: bytes of section NAME, 0 if none.
section_size() {
	local hex

	hex=$(readelf -SW "$1" | awk -v n="$2" '
		{ sub(/^ *\[ *[0-9]+\] */, "") }
		$1 == n { print $5; exit }')
	echo $((16#${hex:-0}))
}

# ratio A B: A / B with two decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'
}

# row FILE: the file's line; its figures also to $out/rows.
row() {
	local f=$1 eh sec idx tab asked taken

	eh=$(( $(section_size "$f" .eh_frame) +
	       $(section_size "$f" .eh_frame_hdr) ))
	"$gen" --share-rows --sp-word -o "$out/x.sframe" "$f" 2> /dev/null || {
		say "sframe-gen failed on $f: left out"
		return 0
	}
	"$dump" --memory "$out/x.sframe" > "$out/x.mem" || {
		say "sframe-dump --memory failed on $f: left out"
		return 0
	}
	read -r sec idx tab asked taken < <(awk '
		$2 == "section" { sec = $3 }
		$1 ~ /^(elements|fde-|row-)/ { idx += $5 }
		$1 ~ /^table/ { tab += $5 }
		$1 == "total" { asked = $2; taken = $3 }
		END { print sec, idx, tab, asked, taken }' "$out/x.mem")
	echo "$eh $sec $idx $tab $asked $taken" >> "$out/rows"
	line "${f##*/}" "$eh" "$sec" "$idx" "$tab" "$asked" "$taken"
}

line() {
	printf '   %-28s %9s %9s %8s %9s %9s %9s %5s %5s\n' "$1" "$2" "$3" \
		"$4" "$5" "$6" "$7" "$(ratio "$6" "$2")" "$(ratio "$7" "$2")"
}

rule() {
	printf '   %s %s %s %s %s %s %s %s %s\n' "============================" \
		"=========" "=========" "========" "=========" "=========" \
		"=========" "=====" "====="
}

rm -f "$out/rows"
table=$out/table.rst
{
echo "Bytes the module keeps per file for sframectl's sidecar (asked for,"
echo "then taken by the allocator), next to .eh_frame + .eh_frame_hdr (\"eh\")"
echo "and the sidecar's size (\"sframe\", freed once its table is built)."
echo
echo ".. table::"
echo
rule
printf '   %-28s %9s %9s %8s %9s %9s %9s %5s %5s\n' file eh sframe index \
	table kept taken kept/ taken/
rule
for f in $(files | sort -u); do
	row "$f"
done
read -r eh sec idx tab asked taken < <(awk '
	{ for (i = 1; i <= 6; i++) s[i] += $i }
	END { print s[1], s[2], s[3], s[4], s[5], s[6] }' "$out/rows")
line "sum ($(wc -l < "$out/rows") files)" "$eh" "$sec" "$idx" "$tab" \
	"$asked" "$taken"
rule
} | tee "$table"
rm -f "$out/x.sframe" "$out/x.mem"
[ -s "$out/rows" ] || die "no file measured"
