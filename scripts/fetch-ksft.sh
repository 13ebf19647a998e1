#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-ksft.sh: print a directory holding the kernel's kselftest.h and
# kselftest_harness.h, taken once from Debian's linux-source-6.12 (installed
# if missing) into ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/ksft/.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/ksft
files="kselftest.h kselftest_harness.h"

if [ ! -f "$dest/kselftest_harness.h" ]; then
	need_linux_source
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	members=""
	for f in $files; do
		members="$members $LINUX_SOURCE_PKG/tools/testing/selftests/$f"
	done
	# shellcheck disable=SC2086
	tar -xJf "$LINUX_SOURCE_TARBALL" -C "$tmp" $members
	mkdir -p "$dest"
	for f in $files; do
		cp "$tmp/$LINUX_SOURCE_PKG/tools/testing/selftests/$f" "$dest/"
	done
fi
echo "$dest"
