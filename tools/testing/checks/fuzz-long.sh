#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fuzz-long.sh - the long libFuzzer run (make fuzz-long)
#
# Runs fuzz-decode and then fuzz-ehframe until FUZZ_RUNS executions in all
# (100000000), FUZZ_EH_PERCENT (10) percent of them on fuzz-ehframe: it
# executes about six times slower than fuzz-decode, so a tenth of the
# executions gives it about two fifths of the time.  Each target starts
# from a fresh copy of its in-tree corpus, tools/testing/fuzz/corpus/TARGET,
# in build/fuzz-long/TARGET-corpus; the tree is only read.
#
# Prints per target the executions, exec/s, seconds and the corpus size
# before and after; the libFuzzer log is build/fuzz-long/TARGET.log.  Fails
# on any crash, leak, sanitizer report, timeout (10 s per input) or an
# input needing more than 2 GB; the input that did it is kept under
# build/fuzz-long/artifacts/ and its path printed.
#
# FUZZ_MERGE=1: after a run without findings, replace each in-tree corpus
# by the libFuzzer -merge=1 of itself and the run's corpus: the smallest
# set of inputs with all the features of both, named by content hash.
#
# The make target runs this with nice -n 19.
set -eu

runs=${FUZZ_RUNS:-100000000}
eh_percent=${FUZZ_EH_PERCENT:-10}
merge=${FUZZ_MERGE:-0}
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$root/build
tree=$root/tools/testing/fuzz/corpus
out=$build/fuzz-long
artifacts=$out/artifacts

case $runs$eh_percent in
*[!0-9]*)
	echo "fuzz-long: FUZZ_RUNS and FUZZ_EH_PERCENT must be numbers" >&2
	exit 2 ;;
esac
if [ "$eh_percent" -gt 100 ] || [ "$runs" -lt 2 ]; then
	echo "fuzz-long: FUZZ_EH_PERCENT above 100 or FUZZ_RUNS below 2" >&2
	exit 2
fi
eh_runs=$((runs * eh_percent / 100))
[ "$eh_runs" -ge 1 ] || eh_runs=1
dec_runs=$((runs - eh_runs))
[ "$dec_runs" -ge 1 ] || dec_runs=1

mkdir -p "$out" "$artifacts"
summary=()

# corpus_size DIR: "FILES files, BYTES bytes".
corpus_size() {
	local files bytes

	files=$(find "$1" -type f | wc -l)
	bytes=$(find "$1" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	echo "$files files, $bytes bytes"
}

# stat_of LOG NAME: a -print_final_stats value.
stat_of() {
	sed -n "s/^stat::$2: *//p" "$1" | tail -1
}

# fuzz TARGET RUNS: run TARGET for RUNS executions, fail on a finding.
fuzz() {
	local target=$1 n=$2 work=$out/$1-corpus log=$out/$1.log
	local before start secs status unit

	rm -rf "$work"
	cp -r "$tree/$target" "$work"
	before=$(corpus_size "$work")
	echo "fuzz-long: $target, $n executions from $before"
	start=$(date +%s)
	status=0
	"$build/fuzz-$target" -runs="$n" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
		"$work" > "$log" 2>&1 || status=$?
	secs=$(($(date +%s) - start))
	if [ "$status" -ne 0 ]; then
		tail -40 "$log"
		unit=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
		echo "fuzz-long: $target FAILED (libFuzzer exit $status) after ${secs}s"
		echo "fuzz-long: log $log"
		echo "fuzz-long: input ${unit:-not written, see the log}"
		exit 1
	fi
	summary+=("$(printf '%-8s %11s %8s %6s  %s -> %s' "$target" \
		"$(stat_of "$log" number_of_executed_units)" \
		"$(stat_of "$log" average_exec_per_sec)" "$secs" "$before" \
		"$(corpus_size "$work")")")
}

# merge_back TARGET: the tree corpus, minimized with the run's inputs.
merge_back() {
	local target=$1 new=$out/$1-merged log=$out/$1-merge.log

	rm -rf "$new"
	mkdir -p "$new"
	if ! "$build/fuzz-$target" -merge=1 -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$artifacts/$target-merge-" "$new" \
			"$tree/$target" "$out/$target-corpus" > "$log" 2>&1; then
		tail -20 "$log"
		echo "fuzz-long: merge of $target FAILED, log $log"
		exit 1
	fi
	find "$tree/$target" -type f -delete
	cp "$new"/* "$tree/$target/"
	echo "fuzz-long: $tree/$target: $(corpus_size "$tree/$target")"
}

fuzz decode "$dec_runs"
fuzz ehframe "$eh_runs"
printf '%-8s %11s %8s %6s  %s\n' target executions exec/s secs corpus
for s in "${summary[@]}"; do
	echo "$s"
done
if [ "$merge" = 1 ]; then
	merge_back decode
	merge_back ehframe
fi
echo "fuzz-long: no findings"
