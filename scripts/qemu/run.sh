#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - boot a stock Debian kernel in QEMU and run the selftests in it
#
# Usage: scripts/qemu/run.sh ARCH KVER [options]
#   ARCH     x86_64 | arm64 | s390x
#   KVER     Debian 12: 6.12 | 6.1 | 6.12-rt (PREEMPT_RT, x86_64 only);
#            Debian 13: 6.12-deb13 | 7 (the newest 7.x) | 7.3 | 7.2 | ...
#            and 7-rt, 7.3-rt, ... (PREEMPT_RT), as scripts/fetch-headers.sh
#            takes them; debug (the KUnit debug kernel, x86_64 only)
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
#                     kernel's release, scripts/qemu/fetch-rootfs.sh)
#   --module KO       test this sframe_unwind.ko (e.g. the one DKMS built)
#                     instead of building the tree's; its vermagic must
#                     name the guest's kernel
#   --stalls-ok       a soft-lockup or RCU-stall report whose backtrace
#                     has no frame of the module is a warning, not a
#                     failure (make bench: under TCG a busy host stalls
#                     the guest's page faults and timers)
#
# STRESS_SECONDS in the environment sets how long stress.sh's loops run
# (default 45; at least 20 for its three rmmod/insmod cycles),
# STRESS_HZ their sampling rate (4000) and STRESS_RMMOD_SECONDS the
# bound on each rmmod (30); they are passed to the guest, as are the
# benchmarks' BENCH_ROUNDS, BENCH_EXEC, BENCH_DLOPEN, BENCH_WALK_SECONDS
# and BENCH_WALK_HZ (e.g. BENCH_ROUNDS=11 make bench).
#
# The module is built for ARCH against the kernel's own headers, the test
# programs by selftests/Makefile (make -C selftests CROSS_COMPILE=...
# OUTPUT=DIR/selftests, which also gives the default list and the tests'
# timeouts), packed with a static busybox into an initramfs, and run by the
# guest's /init.  A --tests script not in selftests/ is taken from bench/,
# scripts/demo/ or scripts/qemu/ (the harness's own tests).  The verdict
# comes from a separate channel (ttyS1 on x86-64, a virtio console
# elsewhere), never from the console.  A run fails if a test fails, if the
# kernel logs a warning, oops, BUG or sanitizer report, or if the guest
# does not finish within the timeout; the console log is kept in the
# output directory and its tail printed.
#
# Prints the guest's TAP and a closing "N passed, N failed" line.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/scripts/qemu
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
hostfs=""
[ "$kver" != debug ] && hostfs=1
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
while [ $# -gt 0 ]; do
	case $1 in
	--tests) tests=$2; shift 2 ;;
	--skip) skip=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--hang) hang=1; shift ;;
	--out) out=$2; shift 2 ;;
	--extra) extra=$2; shift 2 ;;
	--no-hostfs) hostfs=""; shift ;;
	--stalls-ok) stalls_ok=1; shift ;;
	--module) module=$(realpath "$2"); shift 2 ;;
	*) die "unknown option $1" ;;
	esac
done

for t in $skip; do
	tests=$(echo "$tests" | tr -s ' \n' '\n' | grep -vxF "$t" | tr '\n' ' ')
done

case $arch in
x86_64)	cross=""; qemu=qemu-system-x86_64 ;;
arm64)	cross=aarch64-linux-gnu-; qemu=qemu-system-aarch64 ;;
s390x)	cross=s390x-linux-gnu-; qemu=qemu-system-s390x ;;
*)	die "unknown arch $arch" ;;
esac

"$root/scripts/setup-host.sh" all
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind
if [ "$kver" = debug ]; then
	[ "$arch" = x86_64 ] || die "the debug kernel is booted on x86_64 only"
	kdir=$cache/kunit/build-x86_64
	kernel=$kdir/arch/x86/boot/bzImage
	[ -f "$kernel" ] || "$root/scripts/kunit.sh" x86_64 > /dev/null ||
		[ -f "$kernel" ] || die "no debug kernel: scripts/kunit.sh x86_64 failed"
	img=""
	rel=$(make -s -C "$kdir" kernelrelease 2> /dev/null)
	echo "# $prog: $arch debug kernel $rel (KUnit, KASAN, lockdep)"
else
	kdir=$("$root/scripts/fetch-headers.sh" "$arch" "$kver")
	img=$("$here/fetch-image.sh" "$arch" "$kver" "$kdir")
	kernel=$(ls "$img"/boot/vmlinu[xz]-* | head -1)
	rel=${kernel##*/vmlinu?-}
	suite=$(cat "${kdir%/usr/src/*}/.suite" 2> /dev/null || echo bookworm)
	echo "# $prog: $arch kernel $rel ($(cat "${kdir%/usr/src/*}/.complete"), Debian $suite)"
	if [ "$suite" != bookworm ] && [ "$arch" = x86_64 ] && [ -n "$hostfs" ]; then
		hostroot=$("$root/scripts/debian-root.sh") ||
			die "no Debian 13 root for the guest"
		echo "# $prog: /host is the Debian 13 root ($(sed -n 's/^linux-perf /perf /p' "$hostroot/.complete"))"
	fi
fi
busybox=$("$here/fetch-busybox.sh" "$arch" 2> /dev/null)
if [ -n "$hostfs" ] && [ "$arch" != x86_64 ]; then
	rootsuite=bookworm
	if [ "${suite:-bookworm}" != bookworm ]; then
		rootsuite=trixie
		hostroot=$("$here/fetch-rootfs.sh" "$arch" trixie) || {
			echo "# $prog: no Debian 13 $arch root (the mirror's"
			echo "# $prog: pool and index disagree?): Debian 12's"
			rootsuite=bookworm
		}
	fi
	[ "$rootsuite" = trixie ] ||
		hostroot=$("$here/fetch-rootfs.sh" "$arch" bookworm) || {
		echo "# $prog: no $arch root file system: the perf tests will skip"
		hostfs=""
	}
	[ -z "$hostfs" ] ||
		echo "# $prog: /host is a Debian $rootsuite root ($(sed 's/^/perf /' "$hostroot/.complete"))"
fi

# Everything but the selftests' build, which make keeps up to date.
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 ! -name selftests -exec rm -rf {} +
mkdir -p "$out/mod" "$out/testmod" "$out/root"

# --- the module and the test modules, built against the kernel's headers
build_module() {
	local src=$1 dst=$2

	cp -r "$src"/. "$dst"/
	"$root/scripts/kbuild.sh" "$arch" "$kdir" "$dst" -s modules \
		> "$dst/build.log" 2>&1 ||
		{ cat "$dst/build.log" >&2; die "module build failed"; }
	if grep -v '^kbuild.sh: ' "$dst/build.log" | grep -q 'warning:'; then
		cat "$dst/build.log" >&2
		die "module build has warnings"
	fi
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
	build_module "$out/mod/src" "$out/mod"
fi
build_module "$root/selftests/modules" "$out/testmod"

# --- guest user space
r=$out/root
mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,corpus,selftests} \
	 "$r"/lib/test-modules "$r"/lib/guest-modules
cp "$busybox" "$r/bin/busybox"
for a in sh ash mount umount insmod rmmod lsmod modinfo cat echo grep sed \
	 awk dmesg poweroff sleep tee ls mkdir sync uname wc head tail cut \
	 tr find xargs test [ printf seq expr rm cp chroot timeout kill id \
	 sort uniq diff cmp od true false env basename dirname mknod mv; do
	ln -sf busybox "$r/bin/$a"
done
install -m 755 "$here/guest-init" "$r/init"
cp "$out"/mod/sframe_unwind.ko "$out"/testmod/*.ko "$r/lib/test-modules/"

# The test programs and scripts (selftests/Makefile, kept in $out/selftests
# from run to run), laid out as /selftests, and the corpus as /corpus.
make -s --no-print-directory -C "$root/selftests" CROSS_COMPILE="$cross" \
	OUTPUT="$out/selftests" all bench || die "building the selftests failed"
cp -a "$out/selftests/." "$r/selftests/"
rm -rf "$r/selftests/.obj" "$r/selftests/corpus"
[ ! -d "$out/selftests/corpus" ] || cp "$out/selftests/corpus"/* "$r/corpus/"
# Tests outside selftests/: the benchmarks, the demo, the harness's own.
for t in $tests; do
	for d in "$root/bench" "$root/scripts/demo" "$here"; do
		[ -f "$r/selftests/$t" ] || [ ! -f "$d/$t" ] ||
			install -m 755 "$d/$t" "$r/selftests/$t"
	done
done
[ -n "$extra" ] && cp -r "$extra" "$r/extra"
# The list with the timeouts the Makefile names, and the environment
# (STRESS_* to stress.env, BENCH_* to bench.env).
make -s --no-print-directory -C "$root/selftests" list TESTS="$tests" \
	> "$r/selftests/list"
touch "$r/selftests/stress.env" "$r/selftests/bench.env"
for v in STRESS_SECONDS STRESS_HZ STRESS_RMMOD_SECONDS BENCH_ROUNDS \
	 BENCH_EXEC BENCH_DLOPEN BENCH_WALK_SECONDS BENCH_WALK_HZ; do
	f=${v%%_*}
	[ -z "${!v:-}" ] || echo "$v=${!v}" >> "$r/selftests/${f,,}.env"
done

# The dynamic loader where sfu_prog's PT_INTERP says, libc.so.6 in /lib,
# which every loader searches; the Makefile checks that the programs need
# nothing else.
interp=$(readelf -lW "$r/selftests/bin/sfu_prog" |
	 sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] || die "sfu_prog has no PT_INTERP"
case $arch in
x86_64)	sysroot=/lib/x86_64-linux-gnu ;;
*)	sysroot=/usr/${cross%-}/lib ;;
esac
mkdir -p "$r$(dirname "$interp")"
cp -L "$sysroot/$(basename "$interp")" "$r$interp"
cp -L "$sysroot/libc.so.6" "$r/lib/libc.so.6"

# sframectl, run in the root at /host: the host's own build on x86-64,
# cross-built for the Debian root elsewhere.
if [ -n "$hostfs" ]; then
	ctl=$root/scripts/sframectl
	[ "$arch" = x86_64 ] || ctl=$root/build/cross-${cross%-linux-gnu-}/sframectl
	make -s -C "$root" "${ctl#"$root"/}"
	install -m 755 "$ctl" "$r/selftests/bin/sframectl"
fi

# Modules the guest itself needs (the result channel on s390x, swap).
: > "$r/etc/guest-modules"
guest_module() {
	local name=$1 dep f
	local dir=$img/lib/modules/$rel

	[ -n "$img" ] || return 0
	dep=$(grep -E "(^|/)$name\.ko(\.xz)?:" "$dir/modules.dep" || true)
	[ -n "$dep" ] || return 0
	for f in $(echo "${dep#*:}" | tr ' ' '\n' | tac) "${dep%%:*}"; do
		[ -n "$f" ] || continue
		grep -qx "$(basename "${f%.xz}")" "$r/etc/guest-modules" &&
			continue
		xz -dc "$dir/$f" > "$r/lib/guest-modules/$(basename "${f%.xz}")" \
			2> /dev/null ||
			cp "$dir/$f" "$r/lib/guest-modules/$(basename "$f")"
		basename "${f%.xz}" >> "$r/etc/guest-modules"
	done
}

case $arch in
x86_64)	echo /dev/ttyS1 > "$r/etc/result-dev" ;;
*)	echo /dev/hvc0 > "$r/etc/result-dev" ;;
esac
[ "$arch" = s390x ] && guest_module virtio_console
guest_module zram		# swap, for perf_callchain.sh's paged-out stack
guest_module fuse		# a user's file system, sframectl_daemon_trust.sh
if [ -n "$hostfs" ]; then
	guest_module virtio_pci		# a module on 6.1, built in on 6.12
	guest_module 9p
	guest_module 9pnet_virtio
	touch "$r/etc/hostfs"
fi

(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.gz"

# --- boot
append="panic=-1 panic_on_warn=1 oops=panic rdinit=/init loglevel=7"
[ -n "$hang" ] && append="$append sfu_hang_after"
console=$out/console.log
result=$out/result.log
: > "$result"
common=(-m 1024 -nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$out/initrd.gz")
case $arch in
x86_64)
	args=(-M pc -serial "file:$console" -serial "file:$result"
	      -append "console=ttyS0 $append")
	;;
arm64)
	args=(-M virt -serial "file:$console"
	      -device virtio-serial-pci
	      -chardev "file,id=res,path=$result"
	      -device virtconsole,chardev=res
	      -append "console=ttyAMA0 $append") ;;
s390x)
	args=(-M s390-ccw-virtio
	      -chardev "file,id=con,path=$console"
	      -device sclpconsole,chardev=con
	      -device virtio-serial-ccw
	      -chardev "file,id=res,path=$result"
	      -device virtconsole,chardev=res
	      -append "console=ttysclp0 $append") ;;
esac
[ -n "$hostfs" ] && args+=(-virtfs
	"local,path=$hostroot,mount_tag=hostroot,security_model=none,readonly=on")

# KVM only where a probe boot of this very kernel gets to the end of init;
# the result is remembered per host kernel, QEMU and guest kernel.
accel=(-accel tcg -cpu max)
# arm64 kernels sign and check the return address of most functions; TCG's
# default QARMA5 signing costs about a microsecond per call, QEMU's own
# algorithm (pauth-impdef) tens of nanoseconds, as signing costs little on
# hardware.  Guests run about three times faster with it.
[ "$arch" = arm64 ] && accel=(-accel tcg -cpu max,pauth-impdef=on)
kvm_probe() {
	local key stamp probe_res=$out/probe.log

	[ "$arch" = x86_64 ] && [ -w /dev/kvm ] || return 1
	key=$(echo "$(uname -r) $($qemu --version | head -1) $kernel" | md5sum)
	stamp=$cache/kvm-probe-${key%% *}
	if [ ! -f "$stamp" ]; then
		: > "$probe_res"
		(timeout 60 "$qemu" "${common[@]}" -accel kvm -cpu host \
			-serial null -serial "file:$probe_res" \
			-append "console=ttyS0 $append sfu_probe" \
			< /dev/null > /dev/null 2>&1) 2> /dev/null
		if grep -q '^# sframe-guest: done' "$probe_res"; then
			echo yes > "$stamp"
		else
			echo no > "$stamp"
		fi
	fi
	[ "$(cat "$stamp")" = yes ]
}
if kvm_probe; then
	accel=(-accel kvm -cpu host)
	echo "# $prog: KVM probe boot succeeded, using KVM"
else
	echo "# $prog: using TCG (no working KVM)"
fi

start=$(date +%s)
set +e
timeout --foreground "$timeout_s" "$qemu" "${common[@]}" "${accel[@]}" \
	"${args[@]}" \
	< /dev/null > "$out/qemu.log" 2>&1
qrc=$?
set -e
echo "# $prog: guest ran $(( $(date +%s) - start ))s (qemu exit $qrc)"

# --- verdict
cat "$result" | tr -d '\r' > "$out/tap.log"
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
	awk -f "$root/scripts/qemu/stall-filter.awk" "$console" > "$kmsg_from"
fi
kmsg=$(grep -aE 'WARNING:|BUG:|Oops|Kernel panic|general protection|UBSAN:|KASAN:|new suspected memory leaks|Call Trace:' \
	"$kmsg_from" | head -3 || true)
if [ -n "$kmsg" ]; then
	reason="kernel reported a problem: $(echo "$kmsg" | head -1)"
fi
if [ -n "$reason" ]; then
	fail=$((fail + 1))
	echo "not ok $prog $arch $rel: $reason"
	echo "# console log: $console (last lines follow)"
	tail -25 "$console" | sed 's/^/#   /'
fi
echo "# $prog-$arch-$kver: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
