#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Corpus tests: binaries compiled here with gas's SFrame (V1) for x86-64 and
# (cross) aarch64, in several code-generation variants.  For each one:
#   - sframe-dump --format=readelf must equal `readelf --sframe` byte for byte;
#   - the rule found by lookup at every address of every function must equal
#     the rule read off the row table (--all-pcs against --expand);
#   - --validate must accept the section.
# Then V3 flexible FDEs, which binutils 2.40 cannot print: hand-made
# sections whose --format=readelf output must equal binutils 2.46's (taken
# from its gas and libsframe tests), and sframe-gen output for hand-written
# DRAP and register CFI, which must show registers, not control words.
# Prints TAP and a closing "N passed, N failed" line.
set -u

out=${1:-build/corpus}
root=$(cd "$(dirname "$0")/../../.." && pwd)
dump=${DUMP:-$root/tools/sframe-dump/sframe-dump}
gen=${GEN:-$root/tools/sframe-gen/sframe-gen}
src=$root/tools/testing/corpus/corpus-src.c
mkdir -p "$out"

# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

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

# ---- V3 flexible FDEs ----

# Write hex byte pairs (blanks and newlines ignored) to a file.
hex_file() {
	local hex

	hex=$(tr -d ' \n' <<< "$2" | sed 's/../\\x&/g')
	printf '%b' "$hex" > "$1"
}

# Compare readelf output with the expected text; "|" marks line ends so
# that the RA column's trailing blanks are checked too.
check_readelf() {
	local name=$1 sec=$2 expect=$3

	if cmp -s <("$dump" --format=readelf "$sec" 2>&1 | sed 's/$/|/') \
		  <(printf '%s\n' "$expect"); then
		ok "$name: --format=readelf prints flex rows as binutils 2.46"
	else
		not_ok "$name: --format=readelf differs from binutils 2.46"
		diff <(printf '%s\n' "$expect") \
		     <("$dump" --format=readelf "$sec" 2>&1 | sed 's/$/|/') |
			head -20 | sed 's/^/# /'
	fi
}

# AMD64, fixed RA -8.  FDE 0: DRAP, the rows of libsframe's
# findfre-flex-1.c; FDE 1: RA in %rcx (DWARF 2), gas's cfi-sframe-x86_64-6.
hex_file "$out/flex-amd64.sframe" "
e2de 0305 0300 f800 02000000 09000000 3c000000 00000000 20000000
e40f000000000000 5f000000 00000000
4310000000000000 07000000 29000000
0600 00 01 00
0004 3908  0904 5100  180a 5100 0033 00  1a0a 33f8 0033 00
520a 5100 0033 00  5e0a 3908 0033 00
0300 00 01 00
0004 3908  0404 3928  0508 3900 1100"
check_readelf flex-amd64 "$out/flex-amd64.sframe" \
'Contents of the SFrame section .sframe:|
  Header :|
|
    Version: SFRAME_VERSION_3|
    Flags: SFRAME_F_FDE_SORTED,|
           SFRAME_F_FDE_FUNC_START_PCREL|
    CFA fixed RA offset: -8|
    Num FDEs: 2|
    Num FREs: 9|
|
  Function Index :|
|
    func idx [0]: pc = 0x1000, size = 95 bytes, attr = "F"|
    STARTPC         CFA       FP        RA           |
    0000000000001000  sp+8      u         f            |
    0000000000001009  r10+0     u         f            |
    0000000000001018  r10+0     (fp+0)    U            |
    000000000000101a  (fp-8)    (fp+0)    U            |
    0000000000001052  r10+0     (fp+0)    U            |
    000000000000105e  sp+8      (fp+0)    U            |
|
    func idx [1]: pc = 0x106f, size = 7 bytes, attr = "F"|
    STARTPC         CFA       FP        RA           |
    000000000000106f  sp+8      u         f            |
    0000000000001073  sp+40     u         f            |
    0000000000001074  sp+0      u         r2+0         |'

# s390x, big-endian, CFA offsets stored as (off - 160) / 8.  FDE 0: FP in
# f2 (DWARF 17), RA in f0 (16), gas's cfi-sframe-s390x-fpra-register-2;
# FDE 1: CFA in %r10, FP and RA on the stack, cfi-sframe-s390x-non-spfp-cfa-1.
hex_file "$out/flex-s390x.sframe" "
dee2 0305 0400 0000 00000002 0000000b 00000050 00000000 00000020
0000000000000fe4 0000001a 00000000
0000000000000ff4 00000028 00000023
0005 00 01 00
0004 7900  040a 7900 0089 00  080c 7900 8100 8900  140a 7900 0089 00
1804 7900
0006 00 01 00
0004 7900  060c 7900 02d0 02b8  0c0c 7914 02d0 02b8  100c 5114 02d0 02b8
1c04 7900  1e0c 5114 02d0 02b8"
check_readelf flex-s390x "$out/flex-s390x.sframe" \
'Contents of the SFrame section .sframe:|
  Header :|
|
    Version: SFRAME_VERSION_3|
    Flags: SFRAME_F_FDE_SORTED,|
           SFRAME_F_FDE_FUNC_START_PCREL|
    Num FDEs: 2|
    Num FREs: 11|
|
  Function Index :|
|
    func idx [0]: pc = 0x1000, size = 26 bytes, attr = "F"|
    STARTPC         CFA       FP        RA           |
    0000000000001000  sp+160    u         u            |
    0000000000001004  sp+160    r17+0     U            |
    0000000000001008  sp+160    r17+0     r16+0        |
    0000000000001014  sp+160    r17+0     U            |
    0000000000001018  sp+160    u         u            |
|
    func idx [1]: pc = 0x1020, size = 40 bytes, attr = "F"|
    STARTPC         CFA       FP        RA           |
    0000000000001020  sp+160    u         u            |
    0000000000001026  sp+160    c-72      c-48         |
    000000000000102c  sp+320    c-72      c-48         |
    0000000000001030  r10+320   c-72      c-48         |
    000000000000103c  sp+160    u         u            |
    000000000000103e  r10+320   c-72      c-48         |'


# Each basic regular expression must match a line of FILE.
expect_lines() {
	local name=$1 file=$2 re

	shift 2
	for re in "$@"; do
		if grep -q -- "$re" "$file"; then
			ok "$name: a readelf line matches '$re'"
		else
			not_ok "$name: no readelf line matches '$re'"
		fi
	done
}

if [ ! -x "$gen" ]; then
	skip flex-gen "$gen not built"
elif ! gcc -shared -nostdlib -o "$out/flex-gen.so" \
	"$root/tools/testing/corpus/cfi-asm.s" 2> "$out/flex-gen.log"; then
	not_ok "flex-gen: assemble"
	sed 's/^/# /' "$out/flex-gen.log"
elif ! "$gen" --version=3 -o "$out/flex-gen.sframe" "$out/flex-gen.so" \
	2> "$out/flex-gen.log"; then
	not_ok "flex-gen: sframe-gen --version=3 failed"
	sed 's/^/# /' "$out/flex-gen.log"
else
	"$dump" --format=readelf "$out/flex-gen.sframe" \
		> "$out/flex-gen.readelf" 2>&1
	# The rows without their address and trailing blanks.
	sed -n 's/^    [0-9a-f]\{16\}  //p' "$out/flex-gen.readelf" |
		sed 's/ *$//' > "$out/flex-gen.rows"
	expect_lines flex-gen "$out/flex-gen.readelf" 'attr = "F"$'
	# DRAP: CFA in %r10, then loaded from %rbp - 8, FP saved at %rbp;
	# RA in %rdx (DWARF 1) and FP in %r9; CFA in %r12.
	expect_lines flex-gen "$out/flex-gen.rows" \
		'^r10+0     u         f$' \
		'^(fp-8)    (fp+0)    [^ ]' \
		'^sp+0      r9+0      r1+0$' \
		'^r12+16    u         f$'
fi
tap_end corpus
