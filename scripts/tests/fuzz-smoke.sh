#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded libFuzzer run on the decoder: seeds from every version and ABI
# plus the .sframe of the corpus binaries; fails on any crash, leak,
# sanitizer report or timeout.
set -eu

seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
seeds=$build/fuzz-seeds
work=$build/fuzz-corpus
mkdir -p "$seeds" "$work"

"$build/fuzz-seed" "$seeds"
# Real sections from gas, if the corpus test has built them.
for bin in "$build"/corpus/corpus-*; do
	case $bin in *.log|*.lookup|*.table) continue ;; esac
	[ -f "$bin" ] || continue
	sec=$seeds/gas-$(basename "$bin")
	if objcopy -O binary --only-section=.sframe "$bin" "$sec.raw" \
			2> /dev/null && [ -s "$sec.raw" ]; then
		# The fuzzer header: section address 0, any ABI.
		{ printf '\0\0\0\0\0\0\0\0'; cat "$sec.raw"; } > "$sec"
	fi
	rm -f "$sec.raw"
done
echo "fuzz-smoke: $(ls "$seeds" | wc -l) seeds, ${seconds}s"
"$build/fuzz-decode" -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 "$work" "$seeds" \
	2>&1 | tail -25
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	echo "fuzz-smoke: FAILED (libFuzzer exit $status)"
	exit 1
fi
echo "fuzz-smoke: no findings"
