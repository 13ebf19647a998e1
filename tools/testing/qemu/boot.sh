#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# boot.sh - boot a test guest once (tools/testing/qemu/run.sh)
#
# Usage: boot.sh ARCH KERNEL OUT TIMEOUT [--hang] [--hostroot DIR]
#                [--export DIR]
#   ARCH      x86_64 | arm64 | s390x
#   KERNEL    the kernel image to boot with OUT/initrd.gz
#   OUT       writes the console to OUT/console.log, the guest's result
#             channel (ttyS1 on x86-64, a virtio console elsewhere) to
#             OUT/result.log and QEMU's own output to OUT/qemu.log
#   TIMEOUT   seconds until the guest is stopped
#   --hang    the guest hangs after its tests (the harness's own test)
#   --hostroot DIR
#             share DIR read-only over 9p as the guest's /host
#   --export DIR
#             share DIR writable over 9p as the guest's /export, for files
#             the tests hand to the host (flame graphs)
#
# Exits with QEMU's status, 124 if the guest did not power off in time.
# KVM is used only where a probe boot of this very kernel gets to the end
# of the guest's init; the answer is kept per host kernel, QEMU and guest
# kernel.  Without it the guest runs under TCG.
set -euo pipefail

[ $# -ge 4 ] || { echo "usage: boot.sh ARCH KERNEL OUT TIMEOUT" >&2; exit 2; }
arch=$1
kernel=$2
out=$3
timeout_s=$4
shift 4
hang=""
hostroot=""
export=""
while [ $# -gt 0 ]; do
	case $1 in
	--hang) hang=1; shift ;;
	--hostroot) hostroot=$2; shift 2 ;;
	--export) export=$2; shift 2 ;;
	*) echo "boot.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind
mkdir -p "$cache"

append="panic=-1 panic_on_warn=1 oops=panic rdinit=/init loglevel=7"
[ -z "$hang" ] || append="$append sfu_hang_after"
console=$out/console.log
result=$out/result.log
: > "$result"
common=(-m 1024 -nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$out/initrd.gz")
case $arch in
x86_64)
	qemu="qemu-system-x86_64"
	args=(-M pc -serial "file:$console" -serial "file:$result"
	      -append "console=ttyS0 $append") ;;
arm64)
	qemu="qemu-system-aarch64"
	args=(-M virt -serial "file:$console"
	      -device virtio-serial-pci
	      -chardev "file,id=res,path=$result"
	      -device virtconsole,chardev=res
	      -append "console=ttyAMA0 $append") ;;
s390x)
	qemu="qemu-system-s390x"
	args=(-M s390-ccw-virtio
	      -chardev "file,id=con,path=$console"
	      -device sclpconsole,chardev=con
	      -device virtio-serial-ccw
	      -chardev "file,id=res,path=$result"
	      -device virtconsole,chardev=res
	      -append "console=ttysclp0 $append") ;;
*)	echo "boot.sh: unknown arch $arch" >&2; exit 2 ;;
esac
[ -z "$hostroot" ] || args+=(-virtfs
	"local,path=$hostroot,mount_tag=hostroot,security_model=none,readonly=on")
[ -z "$export" ] || args+=(-virtfs
	"local,path=$export,mount_tag=export,security_model=none")

# The CPU TCG emulates, per architecture.
# x86-64: QEMU 7.2's TCG computes CMPXCHG16B's flags from a stale
# lazy-flags state: when the block before left EFLAGS whole (a POPF, an
# IRET) and a CMP in this one set the flags anew, the CMP's operand
# becomes EFLAGS, ZF aside (ten lines of assembly under Debian 12's
# qemu-x86_64 show it; later QEMU generates the instruction inline).
# SLUB's per-CPU CMPXCHG16B then turns a kernel pointer into RFLAGS, TF,
# DF and VM included: a double fault or a #DB in kernel mode, once in a
# few runs of the 6.12 guest.  Without CX16 the kernel emulates the
# instruction; Debian's x86-64 kernels run without.
# arm64: the kernel signs and checks the return address of most
# functions; TCG's default QARMA5 signing costs about a microsecond per
# call, QEMU's own algorithm (pauth-impdef) tens of nanoseconds, as
# signing costs little on hardware.  Guests run about three times faster
# with it.
case $arch in
x86_64)	cpu=max,-cx16 ;;
arm64)	cpu=max,pauth-impdef=on ;;
*)	cpu=max ;;
esac
accel=(-accel tcg -cpu "$cpu")
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
	echo "# qemu-run: KVM probe boot succeeded, using KVM"
else
	echo "# qemu-run: using TCG (no working KVM)"
fi

start=$(date +%s)
set +e
timeout --foreground "$timeout_s" "$qemu" "${common[@]}" "${accel[@]}" \
	"${args[@]}" < /dev/null > "$out/qemu.log" 2>&1
qrc=$?
set -e
echo "# qemu-run: guest ran $(( $(date +%s) - start ))s (qemu exit $qrc)"
exit "$qrc"
