#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-image.sh - get the Debian kernel image that matches a header tree
#
# Usage: fetch-image.sh ARCH KVER [KDIR]   (KVER as fetch-headers.sh takes it)
#
# Resolves the kernel version with fetch-headers.sh, or takes it from the
# KDIR that script printed (so the module and the kernel it runs on always
# match, and a caller that has the KDIR does not resolve twice), downloads
# that version's image and unpacks it with dpkg -x into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/images/<arch>-<ver>[-rt]/
# Debian 12's come from apt-get download (linux-image-*); Debian 13's from
# their suite's index (scripts/fetch-debs.sh), where from 7.x the kernel
# is in linux-binary[-unsigned]-*, its modules in linux-modules-* and its
# config in linux-base-* (linux-image-* is a meta package), all under
# usr/lib/modules/<rel>/: the image directory gets boot/vmlinuz-<rel> and
# lib/modules links to them, as the older packages lay them out.
# A complete unpacked image is reused without network access.
#
# stdout: the image directory (boot/vmlinuz-<rel>, lib/modules/<rel>/).
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)

die() {
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit 1
}

[ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: $prog ARCH KVER [KDIR]"
arch=$1
kver=$2
kdir=${3:-$("$here/fetch-headers.sh" "$arch" "$kver")}
flavour_dir=$(basename "$kdir")			# linux-headers-<ver>-<flavour>
case $arch in
x86_64)	debarch=amd64; flavour=amd64; suffix=-unsigned ;;
arm64)	debarch=arm64; flavour=arm64; suffix=-unsigned ;;
s390x)	debarch=s390x; flavour=s390x; suffix= ;;
*)	die "unknown arch $arch" ;;
esac
tag=""
case $kver in
*-rt)	flavour=rt-$flavour tag=-rt ;;
esac
ver=${flavour_dir#linux-headers-}
ver=${ver%-"$flavour"}
# The suite of a Debian 13 kernel, as fetch-headers.sh noted it.
suite=$(cat "${kdir%/usr/src/*}/.suite" 2> /dev/null || true)

dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/images/$arch-$ver$tag
if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi

fetch_debs() {
	FETCH_DEBS_SUITE=$suite "$here/fetch-debs.sh" "$@"
}

# Debian 13: the .deb files of the image, by the layout the suite has.
deb13_image() {
	local rel=$ver-$flavour bin re

	re=$(printf '%s' "$rel" | sed 's/[.+]/\\&/g')
	# Listed into a variable: "| grep -q ." would close the pipe after
	# the first of the two names (pipefail then takes that for none).
	if [ -n "$(fetch_debs -l "$debarch" "^linux-binary(-unsigned)?-$re\$")" ]; then
		bin=linux-binary$suffix-$rel
		[ "$arch" = s390x ] && bin=linux-binary-$rel
		fetch_debs -d "$debarch" "$bin" "linux-modules-$rel" \
			"linux-base-$rel"
	else
		fetch_debs -d "$debarch" "linux-image-$rel$suffix"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$suite" ]; then
	printf '%s: %s kernel %s (Debian %s)\n' "$prog" "$arch" "$ver" \
		"$suite" >&2
	debs=$(deb13_image) || die "no $arch image of $ver in $suite"
else
	pkg=linux-image-$ver-$flavour$suffix
	printf '%s: %s kernel %s (%s)\n' "$prog" "$arch" "$ver" "$pkg" >&2
	(cd "$tmp" && apt-get download -q "$pkg:$debarch" > /dev/null) ||
		die "apt-get download $pkg:$debarch failed"
	debs=$(ls "$tmp"/*.deb)
fi
rm -rf "$dest"
mkdir -p "$dest"
for deb in $debs; do
	dpkg -x "$deb" "$dest"
done
# 7.x: the kernel and its modules only under usr/lib/modules/<rel>/.
if [ ! -d "$dest/lib/modules" ] && [ -d "$dest/usr/lib/modules" ]; then
	mkdir -p "$dest/lib"
	ln -s ../usr/lib/modules "$dest/lib/modules"
fi
if ! ls "$dest"/boot/vmlinu[xz]-* > /dev/null 2>&1; then
	mkdir -p "$dest/boot"
	for k in "$dest"/lib/modules/*/vmlinu[xz]*; do
		[ -f "$k" ] || continue
		rel=$(basename "$(dirname "$k")")
		ln -s "../lib/modules/$rel/$(basename "$k")" \
			"$dest/boot/vmlinuz-$rel"
	done
fi
ls "$dest"/boot/vmlinu[xz]-* > /dev/null 2>&1 || die "no kernel in $debs"
# The package leaves modules.dep to the installer; the guest init needs it.
for d in "$dest"/lib/modules/*/; do
	rel=$(basename "$d")
	depmod -b "$dest" "$rel" || die "depmod failed for $rel"
done
echo "$ver" > "$dest/.complete"
echo "$dest"
