#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-matrix.sh - build the module with W=1 against every kernel of the
# matrix (make check-builds; make check-all runs it)
#
# Usage: tools/testing/checks/build-matrix.sh [ARCH:KVER ...]
#
# Without arguments, every kernel the user guide's table names, by the
# KVER names tools/testing/qemu/run.sh takes: Debian 12's 6.1, 6.12 and
# 6.12-rt, Debian 13's 6.12, unstable's 7.2 and the newest 7.x with its
# PREEMPT_RT flavour on x86-64; Debian 12's and 13's 6.12 and the newest
# 7.x on arm64; 6.1, Debian 13's 6.12 and the newest 7.x on s390x.
# For each, scripts/fetch-headers.sh gets Debian's header tree (cached),
# make module-src copies the module's sources, and scripts/kbuild.sh
# builds them with W=1 (in a Debian 13 or unstable root where the
# kernel's compiler needs one).  A kernel passes if the build succeeds
# and prints no warning; the version built is printed either way, and a
# failing build's log.
set -uo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

matrix=(
	x86_64:6.1 x86_64:6.12 x86_64:6.12-rt x86_64:6.12-deb13
	x86_64:7.2 x86_64:7 x86_64:7-rt
	arm64:6.12 arm64:6.12-deb13 arm64:7
	s390x:6.1 s390x:6.12-deb13 s390x:7
)
[ $# -gt 0 ] && matrix=("$@")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# build ARCH KVER: 0 if the module builds against it without a warning.
build() {
	local arch=$1 kver=$2 kdir src=$work/$1-$2 log=$work/$1-$2.log

	if ! kdir=$("$root/scripts/fetch-headers.sh" "$arch" "$kver" 2> "$log"); then
		sed 's/^/# /' "$log"
		return 1
	fi
	echo "# $arch $kver: $(basename "$kdir")"
	make -s --no-print-directory -C "$root" module-src MODULE_SRC="$src" ||
		return 1
	if ! "$root/scripts/kbuild.sh" --log "$log" "$arch" "$kdir" "$src" \
			-s modules W=1; then
		sed 's/^/# /' "$log"
		return 1
	fi
	[ -f "$src/sframe_unwind.ko" ]
}

for k in "${matrix[@]}"; do
	tap_check "W=1 build, ${k%%:*} ${k#*:}, no warning" build "${k%%:*}" "${k#*:}"
done
tap_end builds
