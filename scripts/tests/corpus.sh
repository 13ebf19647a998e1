#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Corpus tests: binaries compiled here with gas's SFrame (V1) for x86-64 and
# (cross) aarch64, in several code-generation variants.  For each one:
#   - sframe-dump --format=readelf must equal `readelf --sframe` byte for byte;
#   - the rule found by lookup at every address of every function must equal
#     the rule read off the row table (--all-pcs against --expand);
#   - --validate must accept the section.
# Prints TAP and a closing "N passed, N failed" line.
set -u

out=${1:-build/corpus}
root=$(cd "$(dirname "$0")/../.." && pwd)
dump=$root/scripts/sframe-dump
src=$root/scripts/tests/corpus-src.c
mkdir -p "$out"

# shellcheck source=scripts/tests/tap.sh
. "$root/scripts/tests/tap.sh"

check_binary() {
	local bin=$1 name
	name=$(basename "$bin")

	if cmp -s <(readelf --sframe "$bin" 2>&1) \
		  <("$dump" --format=readelf "$bin" 2>&1); then
		ok "$name: sframe-dump --format=readelf equals readelf --sframe"
	else
		not_ok "$name: sframe-dump --format=readelf differs from readelf"
		diff <(readelf --sframe "$bin" 2>&1) \
		     <("$dump" --format=readelf "$bin" 2>&1) | head -20 |
			sed 's/^/# /'
	fi
	if "$dump" --validate "$bin"; then
		ok "$name: section validates"
	else
		not_ok "$name: section does not validate"
	fi
	"$dump" --all-pcs "$bin" > "$out/$name.lookup"
	"$dump" --expand "$bin" > "$out/$name.table"
	if [ -s "$out/$name.table" ] &&
	   cmp -s "$out/$name.lookup" "$out/$name.table"; then
		ok "$name: lookups agree with the table at $(wc -l < "$out/$name.table") addresses"
	else
		not_ok "$name: lookups disagree with the table"
		diff "$out/$name.lookup" "$out/$name.table" | head -10 |
			sed 's/^/# /'
	fi
}

build_and_check() {
	local cc=$1 tag=$2
	shift 2
	local bin=$out/corpus-$tag

	if ! command -v "$cc" > /dev/null; then
		skip "$tag" "$cc not installed"
		return
	fi
	if ! "$cc" "$@" -Wa,--gsframe -o "$bin" "$src" 2> "$bin.log"; then
		not_ok "$tag: build failed"
		sed 's/^/# /' "$bin.log"
		return
	fi
	check_binary "$bin"
}

echo "TAP version 13"
for opt in "-O2 -fomit-frame-pointer" "-O2 -fno-omit-frame-pointer" \
	   "-O0" "-Os -fomit-frame-pointer" "-O3 -fomit-frame-pointer -fPIE -pie"; do
	tag=$(echo "$opt" | tr -d ' ' | tr -c 'A-Za-z0-9\n' '_')
	# shellcheck disable=SC2086
	build_and_check gcc "x86_64$tag" $opt
	# shellcheck disable=SC2086
	build_and_check aarch64-linux-gnu-gcc "aarch64$tag" $opt
done
build_and_check aarch64-linux-gnu-gcc aarch64-pac-ret \
	-O2 -mbranch-protection=pac-ret
build_and_check aarch64-linux-gnu-gcc aarch64-pac-ret-b \
	-O2 -mbranch-protection=pac-ret+b-key
build_and_check gcc x86_64-static -O2 -static
tap_end corpus
