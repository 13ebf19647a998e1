#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lookup cost against section size: instructions per lookup (callgrind,
# repeatable) and nanoseconds per lookup (CPU time, noisy) for synthetic
# sections of 1k, 10k, 100k and 1M FDEs, measured side by side in one run,
# for lookups that read the section (JIT sections) and for lookups through
# the rule table (files and sidecars), whose rows all functions share or
# (as in most real programs) each function has its own.
# Gate: a lookup in 1M FDEs takes at most 1.5 times the instructions of one
# in 1k.  Then a crafted section at the table's worst case (bench-lookup's
# "crafted": 256 entries per block, most of them spilled) against the
# table with rows shared at 1k FDEs, in instructions and time per lookup,
# printed, not gated.  The time ratio 1M/1k is printed, not gated: at 1M
# the section no longer fits in the caches, every lookup waits for DRAM (see
# Documentation/performance.rst), and on a shared machine that wait varies
# by a factor of 1.5 from run to run.
set -eu

bench=${1:-build/bench-lookup}
sizes="1000 10000 100000 1000000"
timed=2000000
counted=20000
max_ratio=1.5

if ! command -v valgrind > /dev/null; then
	echo "bench-host: valgrind is required (apt-get install valgrind)"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure N MODE...: one size's line; sets $line (bench-lookup's, timed)
# and $insn_n (instructions per lookup, callgrind).
measure() {
	local n=$1 ir

	shift
	line=$("$bench" "$n" "$timed" "$@")
	valgrind --tool=callgrind --toggle-collect=bench_lookups \
		--callgrind-out-file="$tmp/cg" "$bench" "$n" "$counted" "$@" \
		> /dev/null 2> "$tmp/vg"
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg")
	insn_n=$((ir / counted))
}

# field NAME: the value of NAME= in $line.
field() {
	echo "$line" | sed "s/.* $1=\([0-9.]*\).*/\1/"
}

# run MODE: the table for one mode ("read": lookups read the section,
# "table": lookups use the rule table, "distinct": the same with rows of
# its own for every function); leaves its ratios in $ratio and $ns_ratio.
run() {
	local mode=$1 n bytes index
	local -a extra=()

	[ "$mode" != read ] && extra=("$mode")
	case $mode in
	read) echo "lookups that read the section:" ;;
	table) echo "lookups that use the rule table (rows shared):" ;;
	*) echo "lookups that use the rule table (rows of their own):" ;;
	esac
	printf '%10s %14s %12s %14s %12s\n' FDEs section_B index_B \
		insn/lookup ns/lookup
	declare -A insn ns
	for n in $sizes; do
		measure "$n" "${extra[@]}"
		ns[$n]=$(field ns_per_lookup)
		bytes=$(field bytes)
		index=$(field index_bytes)
		insn[$n]=$insn_n
		printf '%10s %14s %12s %14s %12s\n' "$n" "$bytes" "$index" \
			"${insn[$n]}" "${ns[$n]}"
	done
	ratio=$(awk -v a="${insn[1000000]}" -v b="${insn[1000]}" \
		'BEGIN { printf "%.2f", a / b }')
	ns_ratio=$(awk -v a="${ns[1000000]}" -v b="${ns[1000]}" \
		'BEGIN { printf "%.2f", a / b }')
	echo "bench-host: $mode: insn/lookup ratio 1M/1k = $ratio (target <= $max_ratio)"
	echo "bench-host: $mode: ns/lookup ratio 1M/1k = $ns_ratio (not gated)"
}

# crafted: the worst case against the table with rows shared at 1k FDEs.
crafted() {
	local mode
	declare -A insn ns

	for mode in table crafted; do
		measure 1000 "$mode"
		insn[$mode]=$insn_n
		ns[$mode]=$(field ns_per_lookup)
		echo "bench-host: $mode: ${insn[$mode]} insn/lookup, ${ns[$mode]} ns/lookup"
	done
	awk -v a="${insn[crafted]}" -v b="${insn[table]}" \
		-v c="${ns[crafted]}" -v d="${ns[table]}" 'BEGIN {
		printf "bench-host: crafted / table: insn/lookup %.2f, ns/lookup %.2f (not gated)\n", a / b, c / d }'
}

failed=0
for mode in read table distinct; do
	run "$mode"
	awk -v r="$ratio" -v m="$max_ratio" 'BEGIN { exit !(r <= m) }' || {
		echo "bench-host: FAILED: $mode lookup cost grows with section size"
		failed=1
	}
done
crafted
exit "$failed"
