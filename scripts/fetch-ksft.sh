#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-ksft.sh: print a directory holding the kernel's kselftest.h and
# kselftest_harness.h, taken once from Debian's linux-source-6.12 (installed
# if missing) into ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/ksft/.
set -euo pipefail

dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/ksft
tarball=/usr/src/linux-source-6.12.tar.xz
files="kselftest.h kselftest_harness.h"

if [ ! -f "$dest/kselftest_harness.h" ]; then
	if [ ! -f "$tarball" ]; then
		sudo=""
		[ "$(id -u)" -eq 0 ] || sudo=sudo
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
			linux-source-6.12 > /dev/null
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	members=""
	for f in $files; do
		members="$members linux-source-6.12/tools/testing/selftests/$f"
	done
	# shellcheck disable=SC2086
	tar -xJf "$tarball" -C "$tmp" $members
	mkdir -p "$dest"
	for f in $files; do
		cp "$tmp/linux-source-6.12/tools/testing/selftests/$f" "$dest/"
	done
fi
echo "$dest"
