#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the build and the tests need on a Debian 12 host.
# Idempotent: does nothing when everything is present.  Needs root (or
# sudo) only when something is missing.
#
#   scripts/setup-host.sh [basic|browser|all]
#     basic    host tools, host tests, fuzzer, benchmark, module build
#     browser  headless Chromium, for the flame graphs' check and pictures
#     all      all of these, cross compilers, QEMU and guest user space
#              (default)
set -eu

level=${1:-all}

# libmd-dev: sframectl's SHA-256 (the arm64 and s390x builds take
# Debian's libmd-dev of their architecture with scripts/fetch-debs.sh).
basic_pkgs="build-essential clang libclang-rt-14-dev valgrind binutils
	    bc bison flex libelf-dev libssl-dev kmod cpio xz-utils perl python3
	    file dwarves gzip libmd-dev"
cross_pkgs="gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	    gcc-s390x-linux-gnu libc6-dev-s390x-cross"
# linux-perf, trace-cmd and bpftrace run in the x86-64 guests from the
# host's root file system (the demo, the perf, BPF and trace event
# selftests);
# gcc-12-multilib builds perf_compat's 32-bit program (not gcc-multilib,
# which the cross compilers conflict with).
qemu_pkgs="qemu-system-x86 qemu-system-arm qemu-system-misc busybox-static
	   linux-perf trace-cmd bpftrace gcc-12-multilib"

# make man, make deb and its test (scripts/deb.sh).
deb_pkgs="python3-docutils debhelper dh-dkms fakeroot lintian debootstrap"

# Headless Chromium renders perf's flame graphs
# (tools/testing/checks/flamegraph-check.sh); curl fetches their template.
browser_pkgs="chromium curl"

case $level in
basic)	pkgs=$basic_pkgs ;;
browser) pkgs=$browser_pkgs ;;
all)	pkgs="$basic_pkgs $cross_pkgs $qemu_pkgs $deb_pkgs $browser_pkgs" ;;
*)	echo "setup-host.sh: unknown level $level" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2> /dev/null |
		grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
say "installing:$missing"
# shellcheck disable=SC2086
apt_install $missing
