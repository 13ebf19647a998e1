#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.sh - run the kernel's checkpatch.pl on this repository's files
#
# Usage: checkpatch.sh [FILE...]
#   Without arguments: every *.c and *.h under kernel/ lib/ include/ kunit/
#   tools/ selftests/ bench/.
#
# checkpatch.pl, spelling.txt and const_structs.checkpatch are taken once
# from Debian's linux-source-6.12 tarball (installed if missing) into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/checkpatch/
# and run as "checkpatch.pl --no-tree --strict --file" on each file.
# Exits 1 if any file has an ERROR or a WARNING (CHECKs are reported and
# counted but do not fail), 2 on usage or set-up errors.

set -euo pipefail

prog=${0##*/}
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/checkpatch
files_wanted="checkpatch.pl spelling.txt const_structs.checkpatch"

# Checks ignored for every file, because they make no sense out of tree:
#   FILE_PATH_CHANGES  asks for a MAINTAINERS update when files are added
#                      or moved; there is no MAINTAINERS file here.
common_ignore=FILE_PATH_CHANGES

# Checks ignored for some files only, with the reason:
#   tools/include/sframe/env-host.h  gives host builds of the shared code
#                         what the kernel headers provide:
#     NEW_TYPEDEFS, PREFER_KERNEL_TYPES  it re-creates the kernel's own
#                         u8..s64 from <stdint.h> types;
#     PREFER_DEFINED_ATTRIBUTE_MACRO  it defines __packed itself.
#   tools/, selftests/, bench/  user-space C: libc has neither the
#                         kernel's u8..s64 nor its attribute macros
#                         (__packed, __printf, noinline), so
#                         PREFER_KERNEL_TYPES and
#                         PREFER_DEFINED_ATTRIBUTE_MACRO do not apply.
#   kernel/compat.h       the module is built out of tree for several
#                         kernels, and this is the one file that tells
#                         them apart where no feature macro does:
#     LINUX_VERSION_CODE, CONSTANT_COMPARISON  (the latter flags the same
#                         version tests).
host_ignore=PREFER_KERNEL_TYPES,PREFER_DEFINED_ATTRIBUTE_MACRO

file_ignore() {
	case $1 in
	tools/include/sframe/env-host.h)	echo "$host_ignore,NEW_TYPEDEFS" ;;
	tools/*|selftests/*|bench/*)	echo "$host_ignore" ;;
	kernel/compat.h)	echo "LINUX_VERSION_CODE,CONSTANT_COMPARISON" ;;
	esac
}

die_status=2
# shellcheck source=scripts/lib.sh
. "$repo/scripts/lib.sh"

# Extract the three files once per source package version.
setup() {
	local ver tmp f members=()

	ver=$(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PKG" 2>/dev/null || true)
	if [ -f "$cache/.version" ] && [ "$(cat "$cache/.version")" = "$ver" ]; then
		return 0
	fi
	need_linux_source
	ver=$(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PKG")
	say "extracting checkpatch.pl from $LINUX_SOURCE_TARBALL ($ver)"
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
	for f in $files_wanted; do
		members+=("$LINUX_SOURCE_PKG/scripts/$f")
	done
	tar -xJf "$LINUX_SOURCE_TARBALL" -C "$tmp" "${members[@]}" ||
		{ rm -rf "$tmp"; die "cannot extract from $LINUX_SOURCE_TARBALL"; }
	for f in $files_wanted; do
		mv -f "$tmp/$LINUX_SOURCE_PKG/scripts/$f" "$cache/$f"
	done
	rm -rf "$tmp"
	printf '%s\n' "$ver" > "$cache/.version"
}

default_files() {
	local d

	for d in kernel lib include kunit tools selftests bench; do
		[ -d "$repo/$d" ] || continue
		(cd "$repo" && find "$d" -type f \( -name '*.c' -o -name '*.h' \) \
			-not -name '*.mod.c' -print)
	done | sort
}

# "E W C" from checkpatch's last "total:" line, or "0 0 0" if clean.
totals() {
	awk '$1 == "total:" { e = $2; w = $4; c = $6 }
	     END { print e + 0, w + 0, c + 0 }'
}

# $1 relative to the repository if it is inside it, else absolute.
repo_path() {
	local p

	p=$(realpath -m -- "$1")
	case $p in
	"$repo"/*)	echo "${p#"$repo"/}" ;;
	*)		echo "$p" ;;
	esac
}

setup

if [ $# -eq 0 ]; then
	mapfile -t files < <(default_files)
else
	files=()
	for f in "$@"; do
		[ -f "$f" ] || die "$f: no such file"
		files+=("$(repo_path "$f")")
	done
fi
[ ${#files[@]} -gt 0 ] || die "no files to check"

# checkpatch runs from the top of the repository, as from the top of a
# kernel tree; with --strict it caches the include/ identifiers it knows
# in .checkpatch-camelcase.* there, which is removed again.
cd "$repo"
trap 'rm -f .checkpatch-camelcase.*' EXIT

errors=0
warnings=0
checks=0
bad=0
for f in "${files[@]}"; do
	ignore=$common_ignore
	extra=$(file_ignore "$f")
	[ -z "$extra" ] || ignore=$ignore,$extra
	out=$(perl "$cache/checkpatch.pl" --no-tree --strict --file --quiet \
	      --show-types --color=never --ignore "$ignore" "$f" 2>&1) || true
	[ -z "$out" ] || printf '%s\n\n' "$out"
	read -r e w c < <(printf '%s\n' "$out" | totals)
	errors=$((errors + e))
	warnings=$((warnings + w))
	checks=$((checks + c))
	[ $((e + w)) -eq 0 ] || bad=$((bad + 1))
done

printf 'checkpatch: %d files, %d errors, %d warnings, %d checks (%d files failing)\n' \
	"${#files[@]}" "$errors" "$warnings" "$checks" "$bad"
[ $((errors + warnings)) -eq 0 ]
