#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-native: the module's user stack walk on the host's CPU
# against a frame-pointer walk (bench/native.c).  bench/walk.c recurses
# DEPTH frames deep (8, 32, 127) and its leaf replays walks over a copy of
# its stack: the step of <sframe/step.h> with rules from the program's
# rule table, as the module walks a file (callers' rules through the
# table's memo); the same with every rule searched, and with the rules
# known beforehand (the step alone); and the frame-record step.
# WALK is built with frame pointers and SFrame, so that both walks unwind
# the same stack; NOFP without frame pointers, as the programs SFrame
# serves are built, where the SFrame walk runs alone.  Per depth: the CPU
# time per frame of each walk and the ratios to the frame-pointer walk,
# and the instructions per frame of each (callgrind: the same on every
# run); then the marginal time per frame, (deepest - shallowest) / (their
# frame difference), where what a walk costs once cancels.  The programs
# fail, and this with them, if a walk does not find the frames it must
# (both the same); the times are printed, not gated.
#
# Then real programs' stacks (bench/replay.c: perf_event_open() samples
# with register and stack copies, as perf record --call-graph dwarf
# takes them, replayed with the tables the module holds for the files):
# sframe-gen making the SFrame of Debian's cc1, built with frame pointers
# (both walks over the same stacks) and without (the SFrame walk alone,
# against the frame-record walk of the first), and Debian's own python3
# and cc1, which have no frame pointers.  Per program: samples, frames a
# sample, and ns per frame of each walk with the walks cut at 8, 32 and
# 127 frames (REPLAY_SAMPLES samples at most, 2000, each walked
# REPLAY_REPS times a batch, 30).
set -eu

walk=${1:-build/walk-native}
nofp=${2:-build/walk-native-nofp}
replay=${3:-build/replay-native}
gen_fp=${4:-build/gen-fp}
gen_nofp=${5:-build/gen-nofp}
reps=${NATIVE_REPS:-100000}
counted=200

if [ "$(uname -m)" != x86_64 ]; then
	echo "bench-native: SKIP: the replay is x86-64 code, this host is $(uname -m)"
	exit 0
fi
if ! command -v valgrind > /dev/null; then
	echo "bench-native: valgrind is required (apt-get install valgrind)"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field NAME LINE: the value of NAME= in LINE.
field() {
	echo "$2" | sed -n "s/.*\b$1=\([0-9.]*\).*/\1/p"
}

# insn PROG WALK DEPTH: instructions per frame of PROG's native_walk_WALK.
insn() {
	local line ir

	line=$(valgrind --tool=callgrind --toggle-collect="native_walk_$2" \
		--callgrind-out-file="$tmp/cg" "$1" native "$counted" "$3" \
		2> "$tmp/vg")
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$tmp/cg")
	awk -v i="$ir" -v w="$(field walks "$line")" \
		-v f="$(field frames "$line")" \
		'BEGIN { printf "%.1f", i / (w * f) }'
}

# row LABEL FILE KEY [PROG WALK]: one walk's ns per frame at each depth
# (FILE's KEY_ns), its ratio to the frame-pointer walk at the deepest,
# and its instructions per frame there (PROG's native_walk_WALK).
row() {
	local label=$1 file=$2 key=$3 ns ratio ir=-

	ns=$(awk -v k="$key" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf " %8.2f", v[k "_ns"] / v["frames"]
	}' "$file")
	ratio=$(awk -v x="$(field "${key}_ns" "$(tail -1 "$file")")" \
		-v fp="$(field fp_ns "$(tail -1 "$tmp/fp")")" \
		'BEGIN { printf "%.2fx", x / fp }')
	[ $# -gt 3 ] && ir=$(insn "$4" "$5" "$deepest")
	printf '%-34s%s %8s %10s\n' "$label" "$ns" "$ratio" "$ir"
}

"$walk" native "$reps" > "$tmp/fp"
"$nofp" native "$reps" > "$tmp/nofp"
deepest=$(tail -1 "$tmp/fp" | sed 's/.*depth=\([0-9]*\).*/\1/')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "the module's walk on this CPU (${cpu:-unknown}), ns per frame:"
printf '%-34s' "walk, build"
awk '{ sub(/.*depth=/, ""); sub(/ .*/, ""); printf " %8s", "depth " $0 }' "$tmp/fp"
printf ' %8s %10s\n' "/fp" "insn/frame"
row "frame records, -fno-omit-fp" "$tmp/fp" fp "$walk" fp
row "sframe, -fno-omit-fp" "$tmp/fp" sframe "$walk" sframe
row "  every rule searched (no memo)" "$tmp/fp" search "$walk" search
row "  the step alone (rules known)" "$tmp/fp" known "$walk" known
row "sframe, -fomit-fp" "$tmp/nofp" sframe "$nofp" sframe
row "  every rule searched (no memo)" "$tmp/nofp" search "$nofp" search
row "  the step alone (rules known)" "$tmp/nofp" known "$nofp" known
# The marginal time per frame, shallowest to deepest, of each walk.
paste -d' ' "$tmp/fp" "$tmp/nofp" | awk '{
	split("", v)
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		k = kv[1] in v ? kv[1] "_nofp" : kv[1]
		v[k] = kv[2]
	}
	if (NR == 1) {
		f0 = v["frames"]; a0 = v["fp_ns"]; b0 = v["sframe_ns"]
		c0 = v["sframe_ns_nofp"]
	}
	f1 = v["frames"]; a1 = v["fp_ns"]; b1 = v["sframe_ns"]
	c1 = v["sframe_ns_nofp"]
} END {
	if (NR < 2 || f1 == f0)
		exit
	a = (a1 - a0) / (f1 - f0); b = (b1 - b0) / (f1 - f0)
	c = (c1 - c0) / (f1 - f0)
	printf "bench-native: marginal ns/frame: frame records %.2f, sframe %.2f (%.2fx), sframe without frame pointers %.2f (%.2fx)\n",
		a, b, b / a, c, c / a
}'

# replay LABEL PROGRAM ARG...: the replay's table row of PROGRAM's stacks.
replay() {
	local label=$1 out=$tmp/replay

	shift
	"$replay" -n "${REPLAY_SAMPLES:-2000}" -r "${REPLAY_REPS:-30}" -- "$@" \
		> "$out" 2> "$tmp/replay.err" ||
		{ sed 's/^/bench-native: /' "$tmp/replay.err"; return 1; }
	awk -v label="$label" '
		function kv(   i, p) {
			split("", v)
			for (i = 1; i <= NF; i++) {
				split($i, p, "=")
				v[p[1]] = p[2]
			}
		}
		/^program=/ { kv(); samples = v["samples"] }
		/^cut=/ {
			kv()
			n++
			sf[n] = v["sframe_ns_frame"]; fp[n] = v["fp_ns_frame"]
			frames = v["sframe_frames"]; fpf = v["fp_frames"]
		}
		/^ends/ { ends = $0; sub(/^ends /, "", ends) }
		END {
			printf "%-30s %7d %6.1f %6.1f", label, samples,
				frames / samples, fpf / samples
			for (i = 1; i <= n; i++)
				printf " %6.2f", sf[i]
			for (i = 1; i <= n; i++)
				printf " %6.2f", fp[i]
			printf "   %s\n", ends
		}' "$out"
	awk '/^cut=127/ { for (i = 1; i <= NF; i++) { split($i, p, "="); if (p[1] == "sframe_ns_frame") print p[2] } }' \
		"$out" > "$tmp/replay.$label.sf"
	awk '/^cut=127/ { for (i = 1; i <= NF; i++) { split($i, p, "="); if (p[1] == "fp_ns_frame") print p[2] } }' \
		"$out" > "$tmp/replay.$label.fp"
}

# The replay samples with perf_event_open(): where this host refuses it
# (perf_event_paranoid, a container), say so and stop here.
if ! "$replay" -n 1 -r 1 -- true > /dev/null 2> "$tmp/replay.err" &&
   grep -q perf_event_open "$tmp/replay.err"; then
	echo "bench-native: SKIP real programs' stacks: $(cat "$tmp/replay.err")"
	exit 0
fi
cc1=$(gcc -print-prog-name=cc1)
[ -x "$cc1" ] || { echo "bench-native: no cc1 (gcc) to replay"; exit 1; }
# A C file for cc1 to compile: the generator's largest, preprocessed.
gcc -E -Iinclude -Itools/include -Itools/lib -Itools/sframe-gen \
	tools/sframe-gen/gen.c -o "$tmp/gen.i"
echo "real programs' stacks (samples of perf_event_open() copies), ns per frame, walks cut at 8, 32 and 127 frames:"
printf '%-30s %7s %6s %6s %20s %20s   %s\n' program samples frames fp_fr \
	"sframe: 8 32 127" "fp: 8 32 127" "how the sframe walks end"
replay gen-fp "$gen_fp" -o /dev/null "$cc1"
replay gen-nofp "$gen_nofp" -o /dev/null "$cc1"
replay python3 /usr/bin/python3 -c '
import re
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
for i in range(3):
    fib(24)
    [re.compile("a%db+c[%d-9]" % (j, j % 10)) for j in range(2000)]'
replay cc1 "$cc1" -quiet -O2 -fpreprocessed "$tmp/gen.i" -o /dev/null
awk -v a="$(cat "$tmp/replay.gen-nofp.sf")" -v b="$(cat "$tmp/replay.gen-fp.sf")" \
	-v f="$(cat "$tmp/replay.gen-fp.fp")" 'BEGIN {
	printf "bench-native: real stacks, sframe-gen: sframe %.2f ns/frame without frame pointers (%.2fx frame records), %.2f with them (%.2fx), frame records %.2f\n",
		a, a / f, b, b / f, f
}'
