#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pack-initramfs.sh - the test guest's initramfs (tools/testing/qemu/run.sh)
#
# Usage: pack-initramfs.sh ARCH OUT "TESTS" [options]
#   ARCH      x86_64 | arm64 | s390x
#   OUT       run.sh's output directory: takes OUT/mod/sframe_unwind.ko
#             and OUT/testmod/*.ko, keeps the selftests' build in
#             OUT/selftests, packs OUT/root into OUT/initrd.gz
#   TESTS     the tests to run, in order
#   --image DIR --release REL
#             the kernel's unpacked image and release, for the modules the
#             guest needs (the result channel on s390x, zram, fuse, 9p)
#   --hostfs  the guest mounts a root file system with perf at /host and
#             the host's export directory at /export: take sframectl, the
#             9p modules and perf's flame graph template along
#   --extra DIR
#             copy DIR to /extra
#
# The guest's /init is guest-init, with a static busybox, the programs and
# scripts of selftests/Makefile as /selftests (with the list and timeouts
# the Makefile names, doubled on arm64 and s390x), the test corpus as
# /corpus, the dynamic loader and libc the programs need, and STRESS_*,
# BENCH_* and SOAK_* from the environment in /selftests/stress.env,
# bench.env and soak.env.  A test out of the Makefile's list is taken
# from selftests/ (make soak's), bench/, scripts/demo/ or
# tools/testing/qemu/ (the harness's own tests).
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
here=$root/tools/testing/qemu

die() {
	echo "pack-initramfs: error: $*" >&2
	exit 1
}

[ $# -ge 3 ] || die "usage: pack-initramfs.sh ARCH OUT TESTS [options]"
arch=$1
out=$2
tests=$3
shift 3
img=""
rel=""
hostfs=""
extra=""
while [ $# -gt 0 ]; do
	case $1 in
	--image) img=$2; shift 2 ;;
	--release) rel=$2; shift 2 ;;
	--hostfs) hostfs=1; shift ;;
	--extra) extra=$2; shift 2 ;;
	*) die "unknown option $1" ;;
	esac
done

case $arch in
x86_64)	cross=""; sysroot=/lib/x86_64-linux-gnu ;;
arm64)	cross=aarch64-linux-gnu-; sysroot=/usr/aarch64-linux-gnu/lib ;;
s390x)	cross=s390x-linux-gnu-; sysroot=/usr/s390x-linux-gnu/lib ;;
*)	die "unknown arch $arch" ;;
esac

r=$out/root
rm -rf "$r"
mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,corpus,selftests} \
	 "$r"/lib/test-modules "$r"/lib/guest-modules
install -m 755 "$("$root/scripts/fetch-busybox.sh" "$arch" 2> /dev/null)" \
	"$r/bin/busybox"
for a in sh ash mount umount insmod rmmod lsmod modinfo cat echo grep sed \
	 awk dmesg poweroff sleep tee ls mkdir sync uname wc head tail cut \
	 tr find xargs test [ printf seq expr rm cp chroot timeout kill id \
	 sort uniq diff cmp od true false env basename dirname mknod mv setsid; do
	ln -sf busybox "$r/bin/$a"
done
install -m 755 "$here/guest-init" "$r/init"
cp "$out"/mod/sframe_unwind.ko "$out"/testmod/*.ko "$r/lib/test-modules/"

# The test programs and scripts (kept in OUT/selftests from run to run).
make -s --no-print-directory -C "$root/selftests" CROSS_COMPILE="$cross" \
	OUTPUT="$out/selftests" all bench || die "building the selftests failed"
cp -a "$out/selftests/." "$r/selftests/"
rm -rf "$r/selftests/.obj" "$r/selftests/corpus"
# (An empty directory where the architecture has no producer: s390x.)
if [ -d "$out/selftests/corpus" ]; then
	find "$out/selftests/corpus" -maxdepth 1 -type f \
		-exec cp -t "$r/corpus/" {} +
fi
for t in $tests; do
	for d in "$root/selftests" "$root/bench" "$root/scripts/demo" \
		 "$here"; do
		[ -f "$r/selftests/$t" ] || [ ! -f "$d/$t" ] ||
			install -m 755 "$d/$t" "$r/selftests/$t"
	done
done
[ -z "$extra" ] || cp -r "$extra" "$r/extra"
make -s --no-print-directory -C "$root/selftests" list TESTS="$tests" \
	> "$r/selftests/list"
# Each test's timeout twice as long on arm64 and s390x, whose code TCG
# emulates about half as fast (run.sh doubles the guest's too).
if [ "$arch" != x86_64 ]; then
	awk -v def="$(sed -n 's/^timeout=//p' "$root/selftests/settings")" \
	    '{ print $1, 2 * ($2 ? $2 : def) }' "$r/selftests/list" \
	    > "$r/selftests/list.scaled"
	mv "$r/selftests/list.scaled" "$r/selftests/list"
fi
touch "$r/selftests/stress.env" "$r/selftests/bench.env" \
	"$r/selftests/soak.env"
for v in STRESS_SECONDS STRESS_HZ STRESS_RMMOD_SECONDS BENCH_ROUNDS \
	 BENCH_EXEC BENCH_DLOPEN BENCH_WALK_SECONDS BENCH_WALK_HZ \
	 BENCH_WALK_DEPTHS BENCH_BUILD_ROUNDS BENCH_BUILD_COPIES \
	 BENCH_BUILD_HZ SOAK_SECONDS; do
	f=${v%%_*}
	[ -z "${!v:-}" ] || echo "$v=${!v}" >> "$r/selftests/${f,,}.env"
done

# The dynamic loader where sfu_prog's PT_INTERP says, libc.so.6 in /lib,
# which every loader searches; the Makefile checks that the programs need
# nothing else.
interp=$(readelf -lW "$r/selftests/bin/sfu_prog" |
	 sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] || die "sfu_prog has no PT_INTERP"
mkdir -p "$r$(dirname "$interp")"
cp -L "$sysroot/$(basename "$interp")" "$r$interp"
cp -L "$sysroot/libc.so.6" "$r/lib/libc.so.6"

# sframectl, run in the root at /host: the host's own build on x86-64,
# cross-built for the Debian root elsewhere.
if [ -n "$hostfs" ]; then
	ctl=$root/tools/sframectl/sframectl
	[ "$arch" = x86_64 ] || ctl=$root/build/cross-${cross%-linux-gnu-}/sframectl
	make -s -C "$root" "${ctl#"$root"/}"
	install -m 755 "$ctl" "$r/selftests/bin/sframectl"
	# Without it the flame graph tests skip, and say why.
	template=$("$root/scripts/fetch-flamegraph.sh") &&
		cp "$template" "$r/selftests/perf/flamegraph-template.html" ||
		echo "pack-initramfs: no flame graph template" >&2
fi

# A module of the kernel's image and what it depends on, in load order.
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

: > "$r/etc/guest-modules"
case $arch in
x86_64)	echo /dev/ttyS1 > "$r/etc/result-dev" ;;
*)	echo /dev/hvc0 > "$r/etc/result-dev" ;;
esac
[ "$arch" = s390x ] && guest_module virtio_console
guest_module zram		# swap, for perf_callchain.sh's paged-out stack
guest_module fuse		# a user's file system, sframectl_daemon_trust.sh
guest_module overlay		# over FUSE, sframectl_overlay.sh
if [ -n "$hostfs" ]; then
	guest_module virtio_pci		# a module on 6.1, built in on 6.12
	guest_module 9p
	guest_module 9pnet_virtio
	touch "$r/etc/hostfs" "$r/etc/export"
fi

(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.gz"
