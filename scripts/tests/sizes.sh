#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sizes.sh - SFrame sizes against .eh_frame, printed as an RST table
#
# Usage: sizes.sh [OUTDIR]     (default build/sizes; make sizes)
#
# For each binary: bytes of .eh_frame + .eh_frame_hdr, gas's V1 .sframe
# where this system can build one (the test program, x86-64 and aarch64),
# sframe-gen's V3 without compaction (--no-compact) and compacted (the
# default), and the compacted size over .eh_frame + .eh_frame_hdr.  The
# binaries are those of gen-oracle: the host's libc.so.6, dynamic loader,
# libstdc++.so.6, bash and python3, and Debian's arm64 and s390x packages
# of the same (scripts/fetch-debs.sh).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/sizes}
gen=$root/scripts/sframe-gen
mkdir -p "$out"

prog=sizes
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

# row NAME FILE [V1-FILE]
row() {
	local name=$1 f=$2 v1=${3:-} eh hdr plain packed gas=-

	eh=$(section_size "$f" .eh_frame)
	hdr=$(section_size "$f" .eh_frame_hdr)
	[ -n "$v1" ] && gas=$(section_size "$v1" .sframe)
	plain=$("$gen" --no-compact -o "$out/x.sframe" "$f" 2> /dev/null &&
		stat -c %s "$out/x.sframe")
	packed=$("$gen" -o "$out/x.sframe" "$f" 2> /dev/null &&
		 stat -c %s "$out/x.sframe")
	if [ -z "$plain" ] || [ -z "$packed" ]; then
		echo "sizes: sframe-gen failed on $f" >&2
		return 1
	fi
	printf '   %-30s %9s %9s %9s %9s %9s %6s\n' "$name" "$eh" "$hdr" \
		"$gas" "$plain" "$packed" \
		"$(awk -v p="$packed" -v e="$((eh + hdr))" 'BEGIN { printf "%.2f", p / e }')"
}

rule() {
	printf '   %s %s %s %s %s %s %s\n' "==============================" \
		"=========" "=========" "=========" "=========" "=========" \
		"======"
}

[ -x "$gen" ] || make -s -C "$root" scripts/sframe-gen || exit 1
src=$root/scripts/tests/corpus-src.c
progs=()
for cc in gcc aarch64-linux-gnu-gcc s390x-linux-gnu-gcc; do
	command -v "$cc" > /dev/null || continue
	a=$("$cc" -dumpmachine | cut -d- -f1)
	"$cc" -O2 -fomit-frame-pointer -o "$out/prog-$a" "$src" || exit 1
	v1=
	if [ "$a" != s390x ]; then
		"$cc" -O2 -fomit-frame-pointer -Wa,--gsframe \
			-o "$out/prog-$a-gas" "$src" || exit 1
		v1=$out/prog-$a-gas
	fi
	progs+=("$a test program:$out/prog-$a:$v1")
done

echo "Sizes in bytes; ratio = compacted V3 / (.eh_frame + .eh_frame_hdr)."
echo
echo ".. table::"
echo
rule
printf '   %-30s %9s %9s %9s %9s %9s %6s\n' binary .eh_frame hdr "gas V1" \
	"V3 plain" "V3" ratio
rule
for p in "${progs[@]}"; do
	IFS=: read -r name f v1 <<< "$p"
	row "$name" "$f" "$v1" || exit 1
done
for f in /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 \
	 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /bin/bash /usr/bin/python3; do
	[ -r "$f" ] && { row "x86_64 $(basename "$f")" "$(readlink -f "$f")" || exit 1; }
done
for arch in aarch64 s390x; do
	deb=$arch
	[ "$arch" = aarch64 ] && deb=arm64
	droot=$("$root/scripts/fetch-debs.sh" "$deb" libc6 libstdc++6 bash \
		python3.11-minimal) || { echo "sizes: no $deb packages" >&2; continue; }
	ld="ld-linux-aarch64.so.1"
	[ "$arch" = s390x ] && ld=ld64.so.1
	for f in "lib/$arch-linux-gnu/libc.so.6" "lib/$arch-linux-gnu/$ld" \
		 "usr/lib/$arch-linux-gnu/libstdc++.so.6" bin/bash \
		 usr/bin/python3.11; do
		row "$arch $(basename "$f")" "$(readlink -f "$droot/$f")" || exit 1
	done
done
rule
