#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-ksft.sh: print a directory holding the kernel's kselftest.h,
# kselftest_harness.h, lib.mk and the runner lib.mk's run_tests sources
# (kselftest/runner.sh, which runs kselftest/prefix.pl), in their layout under tools/testing/selftests/,
# taken once from Debian's linux-source-6.12 (installed if missing) into
# ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/ksft/.  6.12's lib.mk
# includes nothing else; selftests/Makefile includes it from there.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/ksft
files="kselftest.h kselftest_harness.h lib.mk kselftest/runner.sh
kselftest/prefix.pl"

missing=""
for f in $files; do
	[ -f "$dest/$f" ] || missing=1
done
if [ -n "$missing" ]; then
	need_linux_source
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	members=""
	for f in $files; do
		members="$members $LINUX_SOURCE_PKG/tools/testing/selftests/$f"
	done
	# shellcheck disable=SC2086
	tar -xJf "$LINUX_SOURCE_TARBALL" -C "$tmp" $members
	for f in $files; do
		mkdir -p "$dest/$(dirname "$f")"
		cp -p "$tmp/$LINUX_SOURCE_PKG/tools/testing/selftests/$f" "$dest/$f"
	done
fi
echo "$dest"
