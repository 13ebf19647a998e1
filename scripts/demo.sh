#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo [ARCH=x86_64|arm64|s390x] [KVER=...]: perf record -g on
# Debian's stock kernel (Debian 13's 6.12 with Debian 13's user space;
# s390x: Debian 12's 6.1; KVER as tools/testing/qemu/run.sh takes it, e.g. 7
# for the newest 7.x), without and then with
# sframe_unwind.ko; on kernels with deferred user stacks (6.19 and later)
# also --call-graph fp,defer.
#
# Builds a workload with -O2 -fomit-frame-pointer and SFrame (gas's
# --gsframe; on s390x, whose gas has none, the section sframe-gen derives
# from .eh_frame, embedded), boots the stock kernel in QEMU with a root
# file system that has Debian's perf shared read-only (the host's on
# x86-64, a Debian root of the architecture elsewhere), records the
# workload twice with the unmodified perf tool and prints the call stacks
# of both runs, folded (outermost first), with how many samples reach
# main.  Without the module frame pointers stop at the function a sample
# lands in (s390x 6.1 gives no user frames at all); with it the stacks are
# complete.
#
# Then Debian's python3 twice: running pure Python (its C frames), and
# with -X perf running a known chain of Python functions (its Python
# frames named py::..., above the interpreter's C frames), where the
# root's python3 has that (3.12 and later, x86-64 and arm64).
#
# It also writes flame graphs of both runs and of each python3 run without
# the module and with it (after sframectl sync), made by perf's own report
# (perf script report flamegraph) with d3-flame-graph's template
# (scripts/fetch-flamegraph.sh), opens them in headless Chromium to check
# what they draw (tools/testing/checks/flamegraph-check.sh) and takes a picture
# of each: build/demo/{workload,python3,python3-xperf}-{without,with}.{html,png}.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
scripts/setup-host.sh all
arch=${1:-x86_64}
case $arch in
x86_64)	kver=6.12-deb13; cc=gcc ;;
arm64)	kver=6.12-deb13; cc=aarch64-linux-gnu-gcc; triple=aarch64 ;;
s390x)	kver=6.1; cc=s390x-linux-gnu-gcc; triple=s390x ;;
*)	die "ARCH must be x86_64, arm64 or s390x" ;;
esac
kver=${2:-$kver}
work=build/demo
top=${DEMO_TOP:-8}
rm -rf "$work"
mkdir -p "$work/extra"

make -s tools/sframe-gen/sframe-gen tools/sframectl/sframectl
if [ "$arch" = s390x ]; then
	"$cc" -O2 -fomit-frame-pointer -o "$work/workload.plain" \
		tools/demo/workload.c
	tools/sframe-gen/sframe-gen --embed "$work/extra/workload" "$work/workload.plain"
else
	"$cc" -O2 -fomit-frame-pointer -Wa,--gsframe \
		-o "$work/extra/workload" tools/demo/workload.c
fi
if [ "$arch" = x86_64 ]; then
	cp tools/sframectl/sframectl "$work/extra/sframectl"
else
	make -s "build/cross-$triple/sframectl"
	cp "build/cross-$triple/sframectl" "$work/extra/sframectl"
fi
readelf -lW "$work/extra/workload" | grep GNU_SFRAME > /dev/null ||
	die "the workload has no PT_GNU_SFRAME"
cp "$(scripts/fetch-flamegraph.sh)" "$work/extra/flamegraph-template.html"

say "booting Debian's stock $arch $kver kernel in QEMU; perf records the"
say "workload (-O2 -fomit-frame-pointer) without, then with sframe_unwind.ko"
tools/testing/qemu/run.sh "$arch" "$kver" --product --tests demo.sh \
	--extra "$work/extra" \
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

# table MODE PREFIX: the without/with table of the runs PREFIXwithout
# and PREFIXwith.
table() {
	echo
	printf '%-40s %10s %10s\n' "perf record $1" "without" "with"
	awk -v a="$2without" -v b="$2with" '
		{ s[$1] = $2; p[$1] = $3; m[$1] = $4 }
		function pct(x, y) { return y ? 100 * x / y : 0 }
		END {
			printf "%-40s %10d %10d\n", "samples", s[a], s[b]
			printf "%-40s %10d %10d\n", "  in the workload'"'"'s own code",
				p[a], p[b]
			printf "%-40s %9.1f%% %9.1f%%\n",
				"  of those, with a stack up to main",
				pct(m[a], p[a]), pct(m[b], p[b])
		}' "$work/summary"
}

show without
show with
table -g ""
if grep -q '^defer-with ' "$work/summary"; then
	table "--call-graph fp,defer" defer-
fi
sed -n 's/^# *demo-stat /module: /p' "$work/guest.log"

echo
if [ "$arch" = arm64 ]; then
	# Debian's arm64 code keeps frame records: the kernel gets there too.
	echo "== Debian's own python3 (no SFrame, but frame records), pure Python:"
else
	echo "== Debian's own python3 (no SFrame, no frame pointers), pure Python:"
fi
echo "   perf record -g without the module, then with it before and after 'sframectl sync'"
sed -n 's/^# *demo-sframectl /sframectl: /p' "$work/guest.log" | tail -1
sed -n 's/^# *demo-python \(.*\)/\1/p' "$work/guest.log" > "$work/python"
awk '{ printf "%-40s %10d samples, %5.1f%% up to main\n", $1, $2,
	$2 ? 100 * $3 / $2 : 0 }' "$work/python"
sed -n 's/^# *demo-xperf \(.*\)/\1/p' "$work/guest.log" > "$work/xperf"
if [ -s "$work/xperf" ]; then
	echo
	echo "== Debian's python3 -X perf: fib <- leaf <- sorted() <- middle <- outer <- <module>"
	echo "   perf record -g without the module, then with it after 'sframectl sync'"
	awk '{ printf "%-40s %6d samples in fib, %5.1f%% with the chain to _start\n",
		$1, $3, $3 ? 100 * $2 / $3 : 0 }' "$work/xperf"
fi
sed -n 's/^# *demo-warning /warning: /p' "$work/guest.log"
with=$(awk '$1 == "with" { print $3 ? int(100 * $4 / $3) : 0 }' "$work/summary")
[ "$with" -ge 95 ] ||
	die "only $with% of the workload's samples reach main with the module"
if grep -q '^defer-with ' "$work/summary"; then
	with=$(awk '$1 == "defer-with" { print $3 ? int(100 * $4 / $3) : 0 }' \
		"$work/summary")
	[ "$with" -ge 95 ] ||
		die "only $with% of the workload's fp,defer samples reach main with the module"
fi

# The flame graphs, checked in a browser, with their pictures.
cp build/qemu/demo/export/flamegraph/*.html "$work/"
echo
echo "== flame graphs (perf script report flamegraph), without and with the module"
pictures() {
	local name=$1

	shift
	tools/testing/checks/flamegraph-check.sh --png "$work/$name" "$@" \
		"$work/$name-without.html" "$work/$name-with.html" \
		> "$work/$name.check" 2>&1 ||
		{ cat "$work/$name.check"; die "the $name flame graphs are not right"; }
	sed -n 's/^# \(with.*\)/\1/p' "$work/$name.check"
	printf '   %s\n' "$work/$name-without.html" "$work/$name-with.html" \
		"$work/$name-without.png" "$work/$name-with.png"
}
# The program's width holds its start-up and exit too (the kernel's exec,
# the dynamic loader), so main spans at least 90% of it with the module.
# python3 reaches main through the C library's start (stripped: perf
# names main __libc_start_call_main).  Debian's arm64 code keeps frame
# records, so frame pointers get there without the module too.
python_reach='^(main|__libc_start_call_main|__libc_start_main)$'
python_without=5
[ "$arch" != arm64 ] || python_without=100
# The 90% share of python3 with sidecars is the one measured on x86-64;
# elsewhere the demo draws and reports it without a bound.
python_with=90
[ "$arch" = x86_64 ] || python_with=0
echo "the workload:"
pictures workload --with 90 workload
echo "Debian's python3 (with: after sframectl sync):"
pictures python3 --reach "$python_reach" --with "$python_with" \
	--without "$python_without" python3
# Of fib's width, the share under the C library's start: the Python
# chain and the interpreter's frames below it, whole.
if [ -s "$work/xperf" ]; then
	echo "Debian's python3 -X perf (with: after sframectl sync):"
	pictures python3-xperf --of '^py::fib:' --reach "$python_reach" \
		--with 95 --without "$python_without" python3
fi
