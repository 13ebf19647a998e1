#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sframectl's trust boundary (issue 31): a user (uid 1000) attacks the
# root daemon's cache of generated sections with files of its own, made in
# the chroot /host from Debian's programs.
#   references    sframectl add (no cache) of Debian's xz and libc: the
#                 sizes of their own sections
#   refused       a section the module refuses (max_section_bytes below
#                 every section) is not cached
#   directory     sync refuses a cache directory that uid 1000 owns, one
#                 of root's with mode 0755, and a symbolic link (in uid
#                 1000's directory) to one of root's: it says why and
#                 writes no entry there
#   build-id      uid 1000 runs a copy of sleep carrying xz's build-id
#                 while the daemon runs; then root's xz: the daemon
#                 registers xz's own section (as add made it), not
#                 sleep's, and keeps the copy's section as uid 1000's
#                 entry, not under root's name
#   libc          with libc's entry gone (as the cache's size bound lets
#                 any user make it go), uid 1000 maps a copy of libz
#                 carrying libc's build-id; after a module reload the
#                 daemon registers every libc from its cache: root's
#                 process has libc's own section, not libz's
# Leaves the module loaded and no sidecar registered.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sframectl_trust
ctl=/tmp/sframectl_trust		# in the chroot
cache=/tmp/sfu-trust-cache		# in the chroot
user=/tmp/sfu-trust-user		# uid 1000's files, in the chroot
uid=$user_uid
param=/sys/module/sframe_unwind/parameters/max_section_bytes

# build_id FILE: FILE's build-id in hex (a file of the chroot).
build_id() {
	in_host readelf -nW "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'
}

# with_build_id SRC DST ID: as uid 1000, DST is a copy of SRC whose
# build-id (its one occurrence in the file) is ID.
with_build_id() {
	as_user /usr/bin/python3 -c '
import sys
src, dst, new, old = sys.argv[1:]
with open(src, "rb") as f:
    data = f.read()
old = bytes.fromhex(old)
new = bytes.fromhex(new)
assert len(old) == len(new) and data.count(old) == 1, "one build-id"
with open(dst, "wb") as f:
    f.write(data.replace(old, new))' "$1" "$2" "$3" "$(build_id "$1")" &&
		chmod 755 "/host$2"
}

# added_bytes FILE: the bytes of the section sframectl add makes for
# FILE, without a cache; the sidecar is dropped again.
added_bytes() {
	in_host "$ctl" add "$1" 2>&1 |
		sed -n 's/.*: registered \([0-9]*\) bytes.*/\1/p'
	in_host "$ctl" del "$1" > /dev/null 2>&1
}

# log_bytes PATH: the bytes the daemon last registered for PATH.
log_bytes() {
	sed -n "s|^$1: registered \([0-9]*\) bytes.*|\1|p" "$out.daemon" |
		tail -1
}

# sidecar_bytes PID FILE: the bytes of PID's sidecar for FILE.
sidecar_bytes() {
	in_host "$ctl" list -p "$1" |
		awk -v f="$2" '$2 == "sidecar" && $NF == f { print $(NF - 2) }'
}

# entries DIR: how many cache entries DIR (of the chroot) holds.
entries() {
	find "/host$1" -name '*.sframe' 2> /dev/null | wc -l
}

# refuses_dir DIR WHY: sync --cache DIR says WHY and writes nothing into
# DIR (or where it leads).
refuses_dir() {
	in_host "$ctl" sync --cache "$1" > "$out.sync" 2>&1
	grep "cache $1" "$out.sync" | sed 's/^/# /'
	grep -q "^sframectl: cache $1: $2; going on without a cache" \
		"$out.sync" && [ "$(entries "$1/")" -eq 0 ]
}

# not_cached_refused: with max_section_bytes below every section, sync
# registers nothing and stores no entry.
not_cached_refused() {
	local max

	max=$(cat "$param")
	echo 64 > "$param"
	in_host "$ctl" sync --cache "$cache.refused" > "$out.refused" 2>&1
	echo "$max" > "$param"
	grep -E "^sync: |max_section_bytes" "$out.refused" | head -3 |
		sed 's/^/# /'
	grep -q "^sync: 0 files registered, .* [1-9][0-9]* failed" \
		"$out.refused" && [ "$(entries "$cache.refused")" -eq 0 ]
}

# stop PID: end PID (a program the test started) and reap it.
stop() {
	kill "$1" 2> /dev/null
	wait "$1" 2> /dev/null
}

# fake_of FILE ID BYTES OWN: FILE has build-id ID and a section of BYTES,
# not OWN.
fake_of() {
	[ "$(build_id "$1")" = "$2" ] && [ "${3:-0}" -gt 0 ] &&
		[ "$3" -ne "${4:-0}" ]
}

# synced N: the daemon's log has N syncs (within a minute); if not, its
# end is shown (a daemon another test left running holds the instance).
synced() {
	wait_log 600 "^sync: " "$1" && return 0
	tail -5 "$out.daemon" | sed 's/^/# daemon: /'
	return 1
}

# same_bytes WHAT GOT WANT
same_bytes() {
	echo "# $1: ${2:-none} bytes, its own section: $3"
	[ -n "$2" ] && [ "$2" -eq "$3" ]
}

if ! grep -q ' /host 9p ' /proc/mounts; then
	skip_all "needs Debian's programs at /host (not shared into this guest: run.sh --no-hostfs)"
fi
for f in python3 setpriv readelf xz sleep; do
	[ -x "/host/usr/bin/$f" ] || skip_all "the root at /host has no $f"
done
[ -x "$dir/../bin/sframectl" ] || skip_all "no sframectl was built for $(uname -m)"
unload
load || { not_ok "insmod"; tap_end sframectl_trust; exit 1; }
cp "$dir/../bin/sframectl" "/host$ctl"
rm -rf "/host$cache" "/host$cache".* "/host$user"
mkdir -p "/host$user"
chown "$uid:$uid" "/host$user"
libc=$(in_host sh -c 'readlink -f /usr/lib/*-linux-gnu/libc.so.6')
libz=$(in_host sh -c 'readlink -f /usr/lib/*-linux-gnu/libz.so.1')

# References: each file's own section.
xz_bytes=$(added_bytes /usr/bin/xz)
libc_bytes=$(added_bytes "$libc")
echo "# own sections: xz $xz_bytes bytes, libc $libc_bytes bytes"

# uid 1000's files: a copy of sleep carrying xz's build-id, a copy of
# libz carrying libc's.
xz_id=$(build_id /usr/bin/xz)
libc_id=$(build_id "$libc")
with_build_id /usr/bin/sleep "$user/xz" "$xz_id"
with_build_id "$libz" "$user/libc.so.6" "$libc_id"
fake_bytes=$(added_bytes "$user/xz")
echo "# uid $uid's sleep with xz's build-id $xz_id: $fake_bytes bytes"
check "the copy of sleep carries xz's build-id, its section is not xz's" \
	fake_of "$user/xz" "$xz_id" "$fake_bytes" "$xz_bytes"
check "the copy of libz carries libc's build-id" \
	[ "$(build_id "$user/libc.so.6")" = "$libc_id" ]

check "a section the module refuses is not cached" not_cached_refused

# The cache directory: root's alone, or not used.
as_user mkdir -m 700 "$cache.user"
check "a cache directory of uid 1000 is refused and not written" \
	refuses_dir "$cache.user" "owned by uid $uid, not root"
mkdir -m 755 "/host$cache.open"
check "a cache directory of mode 0755 is refused and not written" \
	refuses_dir "$cache.open" "mode 0755 lets others in (chmod 700 it)"
# The link in uid 1000's own directory, where fs.protected_symlinks
# (sticky directories only) does not stop root from following it.
mkdir -m 700 "/host$cache.target"
as_user ln -s "$cache.target" "$user/cache.link"
check "a symbolic link as the cache directory is refused, its target not written" \
	refuses_dir "$user/cache.link" "a symbolic link"

# Start afresh: no sidecar, the daemon's sync makes them.
unload
load
chroot /host "$ctl" daemon --cache "$cache" > "$out.daemon" 2>&1 &
daemon=$!
check "sframectl daemon starts and syncs" synced 1

# uid 1000's copy of sleep with xz's build-id runs, then root's xz.
as_user "$user/xz" 60 &
pid=$!
check "the daemon registers uid $uid's copy" \
	wait_log 600 "^$user/xz: registered"
stop "$pid"
sleep 60 | in_host /usr/bin/xz -c > /dev/null &
pid=$!
wait_log 600 "^/usr/bin/xz: registered"
check "root's xz then gets its own section, not the copy's" \
	same_bytes "root's xz" "$(log_bytes /usr/bin/xz)" "$xz_bytes"
stop "$pid"
find "/host$cache" -name '*.sframe' | sed 's|.*/|# cache entry: |'
check "the copy's section is uid $uid's entry, not root's" \
	[ -s "/host$cache/$xz_id.u$uid.sframe" ]

# A fake libc: libc's entry gone, uid 1000 maps a copy of libz carrying
# libc's build-id; after a reload every libc comes from the cache.
echo "# libc's entry: $(entries "$cache/$libc_id.sframe"), removed"
rm -f "/host$cache/$libc_id.sframe"
as_user /usr/bin/python3 -c '
import ctypes, sys, time
ctypes.CDLL(sys.argv[1])
time.sleep(60)' "$user/libc.so.6" &
pid=$!
check "the daemon registers uid $uid's fake libc" \
	wait_log 600 "^$user/libc.so.6: registered"
stop "$pid"
# chroot execs sleep: the pid is sleep's.
chroot /host /usr/bin/sleep 120 &
sleeper=$!
sleep 1
check "rmmod while the daemon runs" unload
load
check "after insmod the daemon syncs again" synced 2
check "root's process then has libc's own section, not the fake's" \
	same_bytes "root's libc" "$(sidecar_bytes "$sleeper" "$libc")" \
	"$libc_bytes"
stop "$sleeper"
kill -TERM "$daemon"
wait "$daemon"
grep -E "^(cache|sframectl: cache)" "$out.daemon" | sed 's/^/# daemon: /'

# Leave no sidecar behind: they go with the module.
unload
load
rm -rf "/host$ctl" "/host$cache" "/host$cache".* "/host$user"
tap_end sframectl_trust
