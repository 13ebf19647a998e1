#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - boot a stock Debian kernel in QEMU and run the selftests in it
#
# Usage: tools/testing/qemu/run.sh ARCH KVER [options]
#   ARCH     x86_64 | arm64 | s390x
#   KVER     Debian 12: 6.12 | 6.1 | 6.12-rt (PREEMPT_RT, x86_64 only);
#            Debian 13: 6.12-deb13 | 7 (the newest 7.x) | 7.3 | 7.2 | ...
#            and 7-rt, 7.3-rt, ... (PREEMPT_RT), as scripts/fetch-headers.sh
#            takes them; debug (the KUnit debug kernel with
#            kunit/guest.config, x86_64 only, Debian 13's user space)
#   --tests "T1 T2"   selftests to run, in order (default: the standard list)
#   --skip "T1 T2"    leave these out of the list
#   --timeout SEC     outer timeout for the whole guest (default 2400 s,
#                     4800 s for arm64 and s390x)
#   --hang            make the guest hang after its tests (harness test)
#   --out DIR         work and log directory (default build/qemu/ARCH-KVER)
#   --extra DIR       copy DIR's contents to /extra in the guest
#   --no-hostfs       do not share a root file system with perf at /host
#                     (x86-64: the host's own, or for Debian 13's kernels
#                     the Debian 13 root of scripts/debian-root.sh, whose
#                     perf knows deferred call chains; arm64, s390x: a
#                     Debian root of that architecture and of the
#                     kernel's release, scripts/fetch-rootfs.sh),
#                     nor OUT/export, writable, at /export
#   --module KO       test this sframe_unwind.ko (e.g. the one DKMS built)
#                     instead of building the tree's; its vermagic must
#                     name the guest's kernel
#   --product         build the tree's module as DKMS does, without the
#                     test and debug interfaces (CONFIG_SFRAME_UNWIND_DEBUG)
#                     that the selftests use; the default builds them in
#   --stalls-ok       a soft-lockup or RCU-stall report whose backtrace
#                     has no frame of the module is a warning, not a
#                     failure (make bench: under TCG a busy host stalls
#                     the guest's page faults and timers)
#
# STRESS_SECONDS in the environment sets how long stress.sh's loops run
# (default 45; at least 20 for its three rmmod/insmod cycles),
# STRESS_HZ their sampling rate (4000) and STRESS_RMMOD_SECONDS the
# bound on each rmmod (30); they are passed to the guest, as are the
# benchmarks' BENCH_ROUNDS, BENCH_EXEC, BENCH_DLOPEN, BENCH_WALK_SECONDS,
# BENCH_WALK_HZ, BENCH_WALK_DEPTHS, BENCH_BUILD_ROUNDS, BENCH_BUILD_COPIES
# and BENCH_BUILD_HZ (e.g. BENCH_ROUNDS=11 make bench).
#
# The module and the test modules are built for ARCH against the kernel's
# own headers; pack-initramfs.sh packs them, the programs and scripts of
# selftests/Makefile (which also gives the default list and the tests'
# timeouts) and a static busybox into an initramfs whose /init runs them;
# boot.sh boots it once.  The verdict comes from a separate channel (ttyS1
# on x86-64, a virtio console elsewhere), never from the console.  A run
# fails if a test fails, if the kernel logs a warning, oops, BUG or
# sanitizer report, or if the guest does not finish within the timeout;
# the console log is kept in the output directory, and the report (or
# the console's last lines) printed.
#
# Prints the guest's TAP and a closing "N passed, N failed" line.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$root/tools/testing/qemu
prog=qemu-run

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

[ $# -ge 2 ] || die "usage: run.sh ARCH KVER [options]"
arch=$1
kver=$2
shift 2
# The default list, written once: selftests/Makefile's.
tests=$(make -s --no-print-directory -C "$root/selftests" list | cut -d' ' -f1)
skip=""
hostfs=1
hostroot=/
# The whole list (bpftrace alone takes minutes to start under TCG); a
# foreign architecture takes about twice as long.
timeout_s=2400
[ "$arch" = x86_64 ] || timeout_s=4800
hang=""
out=$root/build/qemu/$arch-$kver
extra=""
module=""
stalls_ok=""
buildvars=(CONFIG_SFRAME_UNWIND_DEBUG=y)
while [ $# -gt 0 ]; do
	case $1 in
	--tests) tests=$2; shift 2 ;;
	--skip) skip=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--hang) hang=1; shift ;;
	--out) out=$(realpath -m "$2"); shift 2 ;;
	--extra) extra=$(realpath -m "$2"); shift 2 ;;
	--no-hostfs) hostfs=""; shift ;;
	--stalls-ok) stalls_ok=1; shift ;;
	--module) module=$(realpath "$2"); shift 2 ;;
	--product) buildvars=(); shift ;;
	*) die "unknown option $1" ;;
	esac
done

for t in $skip; do
	tests=$(echo "$tests" | tr -s ' \n' '\n' | grep -vxF "$t" | tr '\n' ' ')
done

case $arch in
x86_64|arm64|s390x) ;;
*)	die "unknown arch $arch" ;;
esac

"$root/scripts/setup-host.sh" all
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind
if [ "$kver" = debug ]; then
	[ "$arch" = x86_64 ] || die "the debug kernel is booted on x86_64 only"
	kdir=$cache/kunit/build-x86_64-guest
	kernel=$kdir/arch/x86/boot/bzImage
	kunit=$root/tools/testing/kunit/kunit.sh
	[ -f "$kernel" ] || "$kunit" x86_64 --guest > /dev/null ||
		[ -f "$kernel" ] || die "no debug kernel: $kunit x86_64 --guest failed"
	img=""
	rel=$(make -s -C "$kdir" kernelrelease 2> /dev/null)
	# Built from Debian 13's linux-source-6.12: Debian 13's user space.
	suite=trixie
	echo "# $prog: $arch debug kernel $rel (KUnit, KASAN, lockdep)"
else
	kdir=$("$root/scripts/fetch-headers.sh" "$arch" "$kver")
	img=$("$root/scripts/fetch-image.sh" "$arch" "$kver" "$kdir")
	kernel=$(ls "$img"/boot/vmlinu[xz]-* | head -1)
	rel=${kernel##*/vmlinu?-}
	suite=$(cat "${kdir%/usr/src/*}/.suite" 2> /dev/null || echo bookworm)
	echo "# $prog: $arch kernel $rel ($(cat "${kdir%/usr/src/*}/.complete"), Debian $suite)"
fi
if [ "$suite" != bookworm ] && [ "$arch" = x86_64 ] && [ -n "$hostfs" ]; then
	hostroot=$("$root/scripts/debian-root.sh") ||
		die "no Debian 13 root for the guest"
	echo "# $prog: /host is the Debian 13 root ($(sed -n 's/^linux-perf /perf /p' "$hostroot/.complete"))"
fi
if [ -n "$hostfs" ] && [ "$arch" != x86_64 ]; then
	rootsuite=bookworm
	if [ "${suite:-bookworm}" != bookworm ]; then
		rootsuite=trixie
		hostroot=$("$root/scripts/fetch-rootfs.sh" "$arch" trixie) || {
			echo "# $prog: no Debian 13 $arch root (the mirror's"
			echo "# $prog: pool and index disagree?): Debian 12's"
			rootsuite=bookworm
		}
	fi
	[ "$rootsuite" = trixie ] ||
		hostroot=$("$root/scripts/fetch-rootfs.sh" "$arch" bookworm) || {
		echo "# $prog: no $arch root file system: the perf tests will skip"
		hostfs=""
	}
	[ -z "$hostfs" ] ||
		echo "# $prog: /host is a Debian $rootsuite root ($(sed 's/^/perf /' "$hostroot/.complete"))"
fi

# Everything but the selftests' build, which make keeps up to date.
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 ! -name selftests -exec rm -rf {} +
mkdir -p "$out/mod" "$out/testmod"

# --- the module and the test modules, built against the kernel's headers
build_module() {
	local src=$1 dst=$2

	shift 2
	cp -r "$src"/. "$dst"/
	"$root/scripts/kbuild.sh" --log "$dst/build.log" "$arch" "$kdir" \
		"$dst" -s "$@" modules ||
		{ cat "$dst/build.log" >&2; die "module build failed or warned"; }
}
if [ -n "$module" ]; then
	[ "$(modinfo -F vermagic "$module" | cut -d' ' -f1)" = "$rel" ] ||
		die "$module was not built for $rel"
	cp "$module" "$out/mod/sframe_unwind.ko"
	echo "# $prog: module $module"
else
	rm -rf "$out/mod/src"
	make -s --no-print-directory -C "$root" module-src \
		MODULE_SRC="$out/mod/src" || die "cannot copy the module's source"
	build_module "$out/mod/src" "$out/mod" "${buildvars[@]}"
fi
build_module "$root/selftests/modules" "$out/testmod"

# --- guest user space, then one boot
packopts=()
[ -z "$img" ] || packopts+=(--image "$img" --release "$rel")
[ -z "$hostfs" ] || packopts+=(--hostfs)
[ -z "$extra" ] || packopts+=(--extra "$extra")
"$here/pack-initramfs.sh" "$arch" "$out" "$tests" "${packopts[@]}"
bootopts=()
[ -z "$hang" ] || bootopts+=(--hang)
[ -z "$hostfs" ] || bootopts+=(--hostroot "$hostroot" --export "$out/export")
mkdir -p "$out/export"
console=$out/console.log
result=$out/result.log
qrc=0
"$here/boot.sh" "$arch" "$kernel" "$out" "$timeout_s" "${bootopts[@]}" ||
	qrc=$?

# --- verdict
tr -d '\r' < "$result" > "$out/tap.log"
grep -v '^# sframe-guest: done' "$out/tap.log" || true
pass=$(grep -cE '^ok [0-9]+' "$out/tap.log" || true)
fail=$(grep -cE '^not ok [0-9]+' "$out/tap.log" || true)
reason=""
if [ "$qrc" -eq 124 ]; then
	reason="guest hung: no power-off within ${timeout_s}s"
elif ! grep -q '^# sframe-guest: done' "$out/tap.log"; then
	reason="guest did not finish its tests (qemu exit $qrc)"
fi
kmsg_from=$console
if [ -n "$stalls_ok" ]; then
	kmsg_from=$out/console.nostalls
	awk -f "$here/stall-filter.awk" "$console" > "$kmsg_from"
fi
problem='WARNING:|BUG:|Oops|Kernel panic|general protection|UBSAN:|KASAN:|new suspected memory leaks|Call Trace:'
kmsg=$(grep -anE "$problem" "$kmsg_from" | head -1 || true)
if [ -n "$kmsg" ]; then
	reason="kernel reported a problem: ${kmsg#*:}"
fi
if [ -n "$reason" ]; then
	fail=$((fail + 1))
	echo "not ok $prog $arch $rel: $reason"
	echo "# console log: $console"
	# The report itself (from a little before its first line), or the
	# console's last lines.
	if [ -n "$kmsg" ]; then
		line=${kmsg%%:*}
		sed -n "$((line > 8 ? line - 8 : 1)),$((line + 60))p" "$kmsg_from"
	else
		tail -25 "$console"
	fi | sed 's/^/#   /'
fi
echo "# $prog-$arch-$kver: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
