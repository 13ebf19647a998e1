#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: perf record -g on Debian's stock x86-64 6.12 kernel, without
# and then with sframe_unwind.ko.
#
# Builds a workload with -O2 -fomit-frame-pointer and gas's SFrame, boots
# the stock kernel in QEMU with the host's root file system shared
# read-only (for perf), records the workload twice with the unmodified
# perf tool and prints the call stacks of both runs, folded (outermost
# first), with how many samples reach main.  Without the module frame
# pointers stop at the function a sample lands in; with it the stacks are
# complete.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
scripts/setup-host.sh all
work=build/demo
top=${DEMO_TOP:-8}
rm -rf "$work"
mkdir -p "$work/extra"

gcc -O2 -fomit-frame-pointer -Wa,--gsframe -o "$work/extra/workload" \
	scripts/demo/workload.c
make -s scripts/sframectl
cp scripts/sframectl "$work/extra/sframectl"
readelf -lW "$work/extra/workload" | grep -q GNU_SFRAME ||
	die "the workload has no PT_GNU_SFRAME"

say "booting Debian's stock x86-64 6.12 kernel in QEMU; perf records the"
say "workload (-O2 -fomit-frame-pointer) without, then with sframe_unwind.ko"
scripts/qemu/run.sh x86_64 6.12 --tests demo.sh --extra "$work/extra" \
	--out "$root/build/qemu/demo" > "$work/guest.log" 2>&1 || {
	tail -30 "$work/guest.log"
	die "the guest run failed (log: $work/guest.log)"
}
grep -E '^# (qemu-run|guest):' "$work/guest.log" || true
sed -n 's/^# *demo \(.*\)/\1/p' "$work/guest.log" > "$work/stacks"
sed -n 's/^# *demo-summary \(.*\)/\1/p' "$work/guest.log" > "$work/summary"

show() {
	local run=$1 total

	total=$(awk -v r="$run" '$1 == r { print $2 }' "$work/summary")
	if [ -z "$total" ] || [ "$total" -eq 0 ]; then
		die "no samples recorded $run the module"
	fi
	echo
	echo "== perf record -g, $run sframe_unwind.ko: $total samples," \
		"top $top stacks (outermost first)"
	awk -v r="$run" -v t="$total" '$1 == r {
		printf "%6.1f%%  %s\n", 100 * $2 / t, $3 }' "$work/stacks" |
		sort -rn | awk -v n="$top" 'NR <= n'
}

show without
show with
echo
printf '%-40s %10s %10s\n' "" "without" "with"
awk '{ s[$1] = $2; p[$1] = $3; m[$1] = $4 }
	function pct(a, b) { return b ? 100 * a / b : 0 }
	END {
		printf "%-40s %10d %10d\n", "samples", s["without"], s["with"]
		printf "%-40s %10d %10d\n", "  in the workload'"'"'s own code",
			p["without"], p["with"]
		printf "%-40s %9.1f%% %9.1f%%\n",
			"  of those, with a stack up to main",
			pct(m["without"], p["without"]), pct(m["with"], p["with"])
	}' "$work/summary"
sed -n 's/^# *demo-stat /module: /p' "$work/guest.log"

echo
echo "== Debian's own python3 (no SFrame, no frame pointers), pure Python:"
echo "   perf record -g with the module, before and after 'sframectl sync'"
sed -n 's/^# *demo-sframectl /sframectl: /p' "$work/guest.log" | tail -1
sed -n 's/^# *demo-python \(.*\)/\1/p' "$work/guest.log" > "$work/python"
awk '{ printf "%-40s %10d samples, %5.1f%% up to main\n", $1, $2,
	$2 ? 100 * $3 / $2 : 0 }' "$work/python"
with=$(awk '$1 == "with" { print $3 ? int(100 * $4 / $3) : 0 }' "$work/summary")
[ "$with" -ge 95 ] ||
	die "only $with% of the workload's samples reach main with the module"
