#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-image.sh - get the Debian kernel image that matches a header tree
#
# Usage: fetch-image.sh ARCH KVER [KDIR]   (KVER as fetch-headers.sh takes it)
#
# Resolves the kernel version with fetch-headers.sh, or takes it from the
# KDIR that script printed (so the module and the kernel it runs on always
# match, and a caller that has the KDIR does not resolve twice), downloads that version's image package
# with apt-get download and unpacks it with dpkg -x into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/images/<arch>-<ver>/
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
kdir=${3:-$("$here/../fetch-headers.sh" "$arch" "$kver")}
flavour_dir=$(basename "$kdir")			# linux-headers-<ver>-<flavour>
case $arch in
x86_64)	debarch=amd64; flavour=amd64; suffix=-unsigned ;;
arm64)	debarch=arm64; flavour=arm64; suffix=-unsigned ;;
s390x)	debarch=s390x; flavour=s390x; suffix= ;;
*)	die "unknown arch $arch" ;;
esac
ver=${flavour_dir#linux-headers-}
ver=${ver%-"$flavour"}

dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/images/$arch-$ver
if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi

pkg=linux-image-$ver-$flavour$suffix
printf '%s: %s kernel %s (%s)\n' "$prog" "$arch" "$ver" "$pkg" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -q "$pkg:$debarch" > /dev/null) ||
	die "apt-get download $pkg:$debarch failed"
rm -rf "$dest"
mkdir -p "$dest"
dpkg -x "$tmp"/*.deb "$dest"
ls "$dest"/boot/vmlinu[xz]-* > /dev/null 2>&1 || die "no kernel in $pkg"
# The package leaves modules.dep to the installer; the guest init needs it.
for rel in $(ls "$dest/lib/modules"); do
	depmod -b "$dest" "$rel" || die "depmod failed for $rel"
done
echo "$ver" > "$dest/.complete"
echo "$dest"
