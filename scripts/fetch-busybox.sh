#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-busybox.sh ARCH: print the path of a static busybox for ARCH, from
# Debian 12's busybox-static package (the host's own for x86_64; others
# through scripts/fetch-debs.sh), cached under
# ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/busybox/.
set -euo pipefail

arch=${1:?usage: fetch-busybox.sh ARCH}
case $arch in
x86_64)	debarch=amd64 ;;
arm64)	debarch=arm64 ;;
s390x)	debarch=s390x ;;
*)	echo "fetch-busybox: unknown arch $arch" >&2; exit 1 ;;
esac

if [ "$debarch" = "$(dpkg --print-architecture)" ] &&
   file -L /bin/busybox 2> /dev/null | grep -q 'statically linked'; then
	echo /bin/busybox
	exit 0
fi
dest=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/busybox/$arch
if [ ! -x "$dest/bin/busybox" ]; then
	# From bookworm's index, with no dpkg architecture to add.
	deb=$("$(dirname "$0")/fetch-debs.sh" -d "$debarch" busybox-static) || {
		echo "fetch-busybox: no busybox-static for $debarch" >&2
		exit 1
	}
	rm -rf "$dest"
	mkdir -p "$dest"
	dpkg -x "$deb" "$dest"
fi
echo "$dest/bin/busybox"
