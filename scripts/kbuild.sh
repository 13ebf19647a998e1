#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kbuild.sh - build an out-of-tree module against a Debian header tree
#
# Usage: scripts/kbuild.sh [--log FILE] ARCH KDIR MODDIR [MAKE-ARGUMENTS...]
#   --log   write make's output to FILE, and fail on a compiler warning
#           as on an error (the caller prints FILE as it likes)
#   ARCH    x86_64 | arm64 | s390x
#   KDIR    a tree scripts/fetch-headers.sh printed
#   MODDIR  the module's directory (M=)
#
# Runs make -C KDIR M=MODDIR modules (or the make arguments given) with
# the cross compiler ARCH needs.  A kernel built by a newer compiler than
# the host's is built for in a root of scripts/debian-root.sh, with the
# header tree and MODDIR bound at their own paths: Debian 13's (gcc-14,
# whose kbuild tools need glibc 2.38) in the trixie root, Debian
# unstable's (gcc-15 and later) in the sid root; every other kernel on
# the host.  Prints where it builds on stderr.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

log=
if [ "${1:-}" = --log ]; then
	[ $# -ge 2 ] || die "--log needs a file"
	log=$2
	shift 2
fi
[ $# -ge 3 ] ||
	die "usage: $prog [--log FILE] ARCH KDIR MODDIR [MAKE-ARGUMENTS...]"
arch=$1
kdir=$(realpath "$2")
moddir=$(realpath "$3")
shift 3
[ $# -gt 0 ] || set -- modules

case $arch in
x86_64)	karch=x86_64; cross="" ;;
arm64)	karch=arm64; cross=aarch64-linux-gnu- ;;
s390x)	karch=s390; cross=s390x-linux-gnu- ;;
*)	die "unknown arch $arch" ;;
esac

# The major version of the gcc that built the kernel, and of the host's.
kernel_gcc=$(sed -n 's/^CONFIG_GCC_VERSION=\([0-9]*\)/\1/p' "$kdir/.config")
kernel_gcc=$((${kernel_gcc:-0} / 10000))
host_gcc=$("${cross}gcc" -dumpversion 2> /dev/null | cut -d. -f1)

# make, on the host or in the root the kernel's compiler needs.
kmake() {
	local prefix suite troot

	if [ "$kernel_gcc" -le "${host_gcc:-0}" ]; then
		make -C "$kdir" M="$moddir" ARCH="$karch" CROSS_COMPILE="$cross" "$@"
		return
	fi
	# The header tree's prefix: usr/src/<tree> and the
	# usr/lib/linux-kbuild-* its scripts and tools links point into.
	prefix=${kdir%/usr/src/*}
	[ "$prefix" != "$kdir" ] || die "$kdir is not in a fetch-headers.sh prefix"
	suite=trixie
	[ "$kernel_gcc" -le 14 ] || suite=sid
	troot=$("$here/debian-root.sh" "$suite") || die "no $suite build root"
	say "gcc-$kernel_gcc kernel: building in the $suite root $troot"
	"$here/debian-root.sh" run "$troot" --bind "$prefix" --bind "$moddir" -- \
		make -C "$kdir" M="$moddir" ARCH="$karch" CROSS_COMPILE="$cross" "$@"
}

if [ -z "$log" ]; then
	kmake "$@"
	exit
fi
kmake "$@" > "$log" 2>&1
# The whole log is read: grep -q would close the pipe at the first match,
# and under pipefail the writer's SIGPIPE would make a warning a pass.
if grep -v "^$prog: " "$log" | grep 'warning:' > /dev/null; then
	say "the build has warnings (see $log)"
	exit 1
fi
