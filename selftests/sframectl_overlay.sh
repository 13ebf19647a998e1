#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A file whose server answers two reads differently (issue 62, item 3).
# uid 1000's FUSE file system (sfu_fuse twoface, mounted allow_other, its
# file said to be root's) serves a copy of Debian's libz whose .eh_frame
# gives its first function another length, until a read reaches the end of
# the file, and libz itself from then on; root lays a read-only overlay
# over it, as over a container's image.  Then, as root, in the chroot
# /host:
#   uncached      sframectl warm of the file through the overlay keeps
#                 nothing in the cache (an overlay is not on the list of
#                 file systems sframectl trusts, tools/sframectl/sframectl-fs.c)
#   libz          sframectl warm of libz itself then makes and stores
#                 libz's own section: nothing made from the other face
#                 serves it.  A sframectl that parses one read of a file
#                 and digests another kept the other face's section under
#                 libz's digest, and answered "cached already".
# Leaves the module as it was: no sidecar is registered.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sframectl_overlay
base=/tmp/sfu-ovl			# in the chroot
cache=$base/cache
ctl=$base/sframectl
libz=$base/libz.so.1
face=$base/face.so.1
user=$user_uid
serve_s=300

# shorter_first_fde SRC DST: DST is SRC whose first FDE in .eh_frame
# covers half the bytes it did (a file of the chroot).
shorter_first_fde() {
	in_host /usr/bin/python3 -c '
import struct, subprocess, sys
src, dst = sys.argv[1:]
data = bytearray(open(src, "rb").read())
order = "<" if data[5] == 1 else ">"
out = subprocess.run(["readelf", "-SW", src], capture_output=True,
                     text=True).stdout
line = [l for l in out.splitlines() if " .eh_frame " in l][0]
off = int(line.split(".eh_frame")[1].split()[2], 16)
cie = struct.unpack_from(order + "I", data, off)[0]
fde = off + 4 + cie
# length, CIE pointer, pc_begin, pc_range (sdata4, as gcc writes them)
pc_range = fde + 12
n = struct.unpack_from(order + "i", data, pc_range)[0]
assert n > 1, "a first FDE to shorten"
struct.pack_into(order + "i", data, pc_range, n // 2)
open(dst, "wb").write(data)' "$1" "$2"
}

# warm PATH: root's sframectl warm of PATH, into $out.warm.
warm() {
	in_host "$ctl" warm --cache "$cache" "$1" > "$out.warm" 2>&1
	sed 's/^/# /' "$out.warm"
}

uncached() {
	warm "$base/merged/lib.so" &&
		grep -q "^warm: 0 sections stored, 0 cached already, .* 1 not kept by the cache" \
			"$out.warm" &&
		[ -z "$(ls "/host$cache")" ]
}

libz_own() {
	warm "$libz" &&
		grep -q "^warm: 1 sections stored, 0 cached already" "$out.warm"
}

if ! grep -q ' /host 9p ' /proc/mounts; then
	skip_all "needs Debian's programs at /host (not shared into this guest: run.sh --no-hostfs)"
fi
[ -x "$dir/../bin/sfu_fuse" ] || skip_all "no sfu_fuse was built for $(uname -m)"
grep -qw overlay /proc/filesystems ||
	skip_all "this kernel has no overlay file system"
rm -rf "/host$base"
mkdir -p "/host$base/fuse" "/host$base/empty" "/host$base/merged"
cp "$dir/../bin/sframectl" "/host$ctl"
in_host sh -c "cp \"\$(readlink -f /usr/lib/*-linux-gnu/libz.so.1)\" $libz"
shorter_first_fde "$libz" "$face" ||
	{ not_ok "the other face of libz"; tap_end sframectl_overlay; exit 1; }
"$dir/../bin/sfu_fuse" "/host$base/fuse" "/host$face" "$user" "$serve_s" \
	twoface "/host$libz" > "$out.fuse" 2>&1 &
fuse_pid=$!
wait_until 100 test -e "/host$base/fuse/lib.so"
mount -t overlay overlay \
	-o "lowerdir=/host$base/fuse:/host$base/empty" "/host$base/merged" ||
	{ not_ok "overlay over FUSE"; kill "$fuse_pid"; tap_end sframectl_overlay; exit 1; }

check "warm through an overlay over FUSE keeps nothing in the cache" uncached
check "libz's own section is made, not the other face's served" libz_own

umount "/host$base/merged"
kill "$fuse_pid" 2> /dev/null
wait "$fuse_pid" 2> /dev/null
umount "/host$base/fuse" 2> /dev/null
sed 's/^/# sfu_fuse: /' "$out.fuse" | tail -3
rm -rf "/host$base"
tap_end sframectl_overlay
