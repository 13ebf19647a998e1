#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded libFuzzer runs, the time split between two targets:
#   fuzz-decode   the decoder; seeds from every version and ABI plus the
#                 .sframe of the corpus binaries;
#   fuzz-ehframe  the .eh_frame reader of sframe-gen; seeds are .eh_frame
#                 sections of host binaries, a small ELF program (with and
#                 without section headers) and, where cross compilers are
#                 installed, arm64 and s390x objects.
# Both also start from the corpus kept in the tree,
# tools/testing/fuzz/corpus/{decode,ehframe} (see fuzz-long.sh), which they
# only read: new inputs go to build/.
# Fails on any crash, leak, sanitizer report or timeout; the input that did
# it is kept in build/fuzz-artifacts/.
set -eu

seconds=${1:-60}
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$root/build
seeds=$build/fuzz-seeds
work=$build/fuzz-corpus
eh_seeds=$build/fuzz-ehframe-seeds
eh_work=$build/fuzz-ehframe-corpus
tree=$root/tools/testing/fuzz/corpus
artifacts=$build/fuzz-artifacts
# Each target gets half of the time, at least a second.
eh_seconds=$((seconds / 2))
[ "$eh_seconds" -ge 1 ] || eh_seconds=1
dec_seconds=$((seconds - eh_seconds))
[ "$dec_seconds" -ge 1 ] || dec_seconds=1
# Host sections bigger than this would slow every run down.
eh_seed_max=16384
mkdir -p "$seeds" "$work" "$eh_seeds" "$eh_work" "$artifacts"

# files DIR: how many files DIR holds.
files() {
	find "$1" -maxdepth 1 -type f | wc -l
}

# fuzz TARGET SECONDS DIR...: run a target, report and fail on a finding.
# The whole output goes to build/fuzz-artifacts/TARGET.log; on a finding
# the report itself (what the target printed, the top of the stack) is
# printed, not only the statistics at the end.
fuzz() {
	local target=$1 secs=$2 status log=$artifacts/$1.log

	shift 2
	status=0
	"$build/$target" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$artifacts/$target-" "$@" > "$log" 2>&1 ||
		status=$?
	if [ "$status" -ne 0 ]; then
		grep -v '^INFO:\|^#[0-9]' "$log" | grep -m 1 -A 40 \
			'^fuzz-\|ERROR\|runtime error\|deadly signal'
		tail -12 "$log"
		echo "fuzz-smoke: $target FAILED (libFuzzer exit $status)," \
			"whole output in $log"
		exit 1
	fi
	tail -25 "$log"
}

# eh_seed OUT SELECTOR OBJCOPY ELF: ELF's .eh_frame as a raw-section input
# of fuzz-ehframe, behind its selector byte (0 x86-64, 1 arm64, 2 s390x).
eh_seed() {
	local out=$1 sel=$2 objcopy=$3 elf=$4

	if "$objcopy" -O binary --only-section=.eh_frame "$elf" "$out.raw" \
			2> /dev/null && [ -s "$out.raw" ] &&
			[ "$(stat -c %s "$out.raw")" -le "$eh_seed_max" ]; then
		{ printf '%b' "\\0$sel"; cat "$out.raw"; } > "$out"
	fi
	rm -f "$out.raw"
}

# eh_cross ARCH SELECTOR: a cross-compiled object, raw and as an ELF file.
eh_cross() {
	local arch=$1 sel=$2 obj=$eh_seeds/obj-$1.o
	local src=$root/tools/testing/corpus/corpus-src.c

	command -v "$arch-linux-gnu-gcc" > /dev/null || return 0
	"$arch-linux-gnu-gcc" -O2 -c -o "$obj" "$src" || return 0
	eh_seed "$eh_seeds/obj-$arch" "$sel" "$arch-linux-gnu-objcopy" "$obj"
}

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

for bin in /bin/true /usr/bin/env /bin/ls; do
	if [ -f "$bin" ]; then
		eh_seed "$eh_seeds/host-$(basename "$bin")" 0 objcopy "$bin"
	fi
done
tiny=$eh_seeds/elf-tiny
if cc -Os -s -Wl,-z,noseparate-code -o "$tiny" \
		"$root/tools/testing/corpus/corpus-src.c" 2> /dev/null; then
	eh_seed "$eh_seeds/host-tiny" 0 objcopy "$tiny"
	# No section headers (e_shoff = 0): found through PT_GNU_EH_FRAME.
	cp "$tiny" "$tiny-phdr"
	printf '\0\0\0\0\0\0\0\0' | dd of="$tiny-phdr" bs=1 seek=40 \
		conv=notrunc status=none
fi
eh_cross x86_64 0
eh_cross aarch64 1
eh_cross s390x 2

echo "fuzz-smoke: fuzz-decode $(files "$seeds") seeds," \
	"$(files "$tree/decode") in the tree, ${dec_seconds}s"
fuzz fuzz-decode "$dec_seconds" "$work" "$seeds" "$tree/decode"
echo "fuzz-smoke: fuzz-ehframe $(files "$eh_seeds") seeds," \
	"$(files "$tree/ehframe") in the tree, ${eh_seconds}s"
fuzz fuzz-ehframe "$eh_seconds" "$eh_work" "$eh_seeds" "$tree/ehframe"
echo "fuzz-smoke: no findings"
