#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# table-real.sh - the rule table against the section's lookup, at every
# address of real Debian files, for the three architectures
#
# Usage: table-real.sh [OUTDIR]     (default build/table-real;
#                                    make check-table)
#
# The module walks files and sidecars through a rule table built from
# their section (lib/sframe/table.c) and JIT sections through the
# section's lookup; both are the same library code on the host.  For
# Debian's libc, python3, libcrypto and libstdc++ of x86-64, arm64 and
# s390x (real_sframe_files in scripts/lib.sh), sframe-gen
# makes the sidecar sframectl would register (--share-rows --sp-word) and
# sframe-dump --check-table compares the table's rule with the lookup's
# at every address of the text.  A file whose table has more distinct
# rules than one-byte codes (a spill list) is among them, or the test
# says so.  Prints TAP and a closing "N passed, N failed" line.
set -u

prog=table-real
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:-$root/build/table-real}
gen=$root/tools/sframe-gen/sframe-gen
dump=$root/tools/sframe-dump/sframe-dump
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

mkdir -p "$out" || exit 1
make -s -C "$root" tools/sframe-gen/sframe-gen tools/sframe-dump/sframe-dump || exit 1
mapfile -t files < <(real_sframe_files)
[ "${#files[@]}" -gt 0 ] || die "no files to check"

spilled=0
for f in "${files[@]}"; do
	name=$f
	if ! "$gen" --share-rows --sp-word -o "$out/x.sframe" "$f" 2> "$out/gen.err"; then
		not_ok "$name: sframe-gen made no sidecar"
		sed 's/^/# /' "$out/gen.err"
		continue
	fi
	if "$dump" --check-table "$out/x.sframe" > "$out/check" \
			2> "$out/check.err"; then
		ok "$name: the table agrees with the lookup: $(cat "$out/check")"
	else
		not_ok "$name: the table and the lookup differ: $(cat "$out/check")"
		head -5 "$out/check.err" | sed 's/^/# /'
	fi
	# "... (N entries, N rules, N spilled)"
	nr=$(sed -n 's/.* \([0-9]*\) spilled)$/\1/p' "$out/check")
	[ "${nr:-0}" -eq 0 ] || spilled=$((spilled + 1))
done
if [ "$spilled" -gt 0 ]; then
	ok "$spilled of ${#files[@]} tables have rules in a spill list"
else
	not_ok "no table has rules in a spill list: that path went untested"
fi
tap_end "$prog"
