#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sizes.sh - SFrame sizes against .eh_frame, printed as an RST table
#
# Usage: sizes.sh [OUTDIR]     (default build/sizes; make sizes)
#
# For each binary: bytes of .eh_frame + .eh_frame_hdr, gas's V1 .sframe
# where this system can build one (the test program, x86-64 and aarch64),
# sframe-gen's V3 without compaction (--no-compact), compacted (the
# default, a standard section) and with shared rows (--share-rows, what
# sframectl registers), and the ratios of the last two over .eh_frame +
# .eh_frame_hdr.  The binaries: 16 of Debian 12, the host's own on x86-64
# and the same packages' arm64 and s390x builds (scripts/fetch-debs.sh).
# Then, per architecture, the median and largest ratio.
set -u

root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:-$root/build/sizes}
gen=$root/tools/sframe-gen/sframe-gen
mkdir -p "$out"

prog=sizes
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"

# The Debian binaries of the table: package, then path in the package,
# with @ for the architecture's triplet directory name and the x86-64 host
# path taken as the same file.
corpus=(
	"libc6 lib/@/libc.so.6"
	"libc6 LD"
	"libstdc++6 usr/lib/@/libstdc++.so.6"
	"bash bin/bash"
	"python3.11-minimal usr/bin/python3.11"
	"perl-base usr/bin/perl"
	"libperl5.36 usr/lib/@/libperl.so.5.36"
	"libxml2 usr/lib/@/libxml2.so.2"
	"libsqlite3-0 usr/lib/@/libsqlite3.so.0"
	"gzip bin/gzip"
	"zlib1g lib/@/libz.so.1"
	"libssl3 usr/lib/@/libcrypto.so.3"
	"libexpat1 lib/@/libexpat.so.1"
	"coreutils bin/ls"
	"tar bin/tar"
	"git usr/bin/git"
)

# ld_name ARCH: the dynamic loader's file name.
ld_name() {
	case $1 in
	x86_64)		echo ld-linux-x86-64.so.2 ;;
	aarch64)	echo ld-linux-aarch64.so.1 ;;
	s390x)		echo ld64.so.1 ;;
	esac
}

# row NAME FILE [V1-FILE]
row() {
	local name=$1 f=$2 v1=${3:-} eh hdr plain std shared gas=-

	eh=$(section_size "$f" .eh_frame)
	hdr=$(section_size "$f" .eh_frame_hdr)
	[ -n "$v1" ] && gas=$(section_size "$v1" .sframe)
	plain=$("$gen" --no-compact -o "$out/x.sframe" "$f" 2> /dev/null &&
		stat -c %s "$out/x.sframe")
	std=$("$gen" -o "$out/x.sframe" "$f" 2> /dev/null &&
	      stat -c %s "$out/x.sframe")
	shared=$("$gen" --share-rows -o "$out/x.sframe" "$f" 2> /dev/null &&
		 stat -c %s "$out/x.sframe")
	if [ -z "$plain" ] || [ -z "$std" ] || [ -z "$shared" ]; then
		echo "sizes: sframe-gen failed on $f" >&2
		return 1
	fi
	printf '   %-30s %9s %7s %6s %8s %8s %8s %5s %5s\n' "$name" "$eh" \
		"$hdr" "$gas" "$plain" "$std" "$shared" \
		"$(ratio "$std" $((eh + hdr)))" "$(ratio "$shared" $((eh + hdr)))"
}

# ratio A B: A / B with two decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'
}

rule() {
	printf '   %s %s %s %s %s %s %s %s %s\n' "==============================" \
		"=========" "=======" "======" "========" "========" "========" \
		"=====" "====="
}

# summary: per architecture, over the Debian binaries (not the test
# programs), the median and largest ratio of sframectl's form, and how
# many are within the goals (0.8 each, 0.7 median).
summary() {
	awk '$1 ~ /^(x86_64|aarch64|s390x)$/ && $2 != "test" {
		n[$1]++; r[$1, n[$1]] = $NF; if ($NF > max[$1]) max[$1] = $NF
		if ($NF <= 0.8) within[$1]++
	}
	END {
		for (a in n) {
			for (i = 1; i <= n[a]; i++) v[i] = r[a, i]
			for (i = 1; i <= n[a]; i++)
				for (j = i + 1; j <= n[a]; j++)
					if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = n[a] % 2 ? v[(n[a] + 1) / 2] : (v[n[a] / 2] + v[n[a] / 2 + 1]) / 2
			printf "%s: %d binaries, sframectl form / (.eh_frame + hdr): median %.2f, largest %.2f, %d of %d at most 0.80\n",
				a, n[a], m, max[a], within[a], n[a]
		}
	}' "$1" | sort
}

[ -x "$gen" ] || make -s -C "$root" tools/sframe-gen/sframe-gen || exit 1
src=$root/tools/testing/corpus/corpus-src.c
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

table=$out/table.rst
{
echo "Sizes in bytes.  \"V3\" is sframe-gen's default (a standard section),"
echo "\"shared\" sframectl's form (--share-rows), which the module keeps in"
echo "memory; the ratios are those over .eh_frame + .eh_frame_hdr."
echo
echo ".. table::"
echo
rule
printf '   %-30s %9s %7s %6s %8s %8s %8s %5s %5s\n' binary .eh_frame hdr \
	"gas V1" "V3 plain" V3 shared "V3/eh" "sh/eh"
rule
for p in "${progs[@]}"; do
	IFS=: read -r name f v1 <<< "$p"
	row "$name" "$f" "$v1" || exit 1
done
for arch in x86_64 aarch64 s390x; do
	deb=$arch
	[ "$arch" = aarch64 ] && deb=arm64
	droot=/
	if [ "$arch" != x86_64 ]; then
		# shellcheck disable=SC2046
		droot=$("$root/scripts/fetch-debs.sh" "$deb" \
			$(printf '%s\n' "${corpus[@]}" | cut -d' ' -f1 | sort -u)) ||
			{ echo "sizes: no $deb packages" >&2; continue; }
	fi
	for c in "${corpus[@]}"; do
		f=${c#* }
		[ "$f" = LD ] && f=lib/@/$(ld_name "$arch")
		f=$droot/${f//@/$arch-linux-gnu}
		if [ ! -r "$f" ]; then
			echo "sizes: $arch: no $f" >&2
			exit 1
		fi
		row "$arch $(basename "$f")" "$(readlink -f "$f")" || exit 1
	done
done
rule
} > "$table"
cat "$table"
echo
summary "$table"
