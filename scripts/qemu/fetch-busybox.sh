#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-busybox.sh ARCH: print the path of a static busybox for ARCH, from
# Debian's busybox-static package (the host's own for x86_64), cached under
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
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -q "busybox-static:$debarch" \
		> /dev/null) || {
		echo "fetch-busybox: apt-get download busybox-static:$debarch failed" >&2
		exit 1
	}
	rm -rf "$dest"
	mkdir -p "$dest"
	dpkg -x "$tmp"/*.deb "$dest"
fi
echo "$dest/bin/busybox"
