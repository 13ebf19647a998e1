#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A walk through the system's own C library, with the daemon's sidecar
# and without.  unwind_qsort (SFrame of its own, selftests/unwind/qsort.c)
# runs in the root at /host, so it is linked at run time against that
# root's libc.so.6 (Debian's of this architecture), which has no SFrame;
# its comparator, called by qsort() in libc, asks the test hook for a walk.
#   without       no sidecar for libc: the walk does not reach main() by
#                 SFrame alone (it stops in libc, or, where libc keeps
#                 frame records as Debian's arm64 one does, the
#                 frame-pointer fallback steps through it)
#   daemon        sframectl daemon registers libc (its sync covers its
#                 own mappings): the same run reaches main() with every
#                 step by SFrame, through at least one frame of libc
# Leaves the module loaded, with no sidecar.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/qsort_libc
ctl=/tmp/sframectl		# in the chroot
prog=/tmp/sfu_qsort		# in the chroot

# run RUN: unwind_qsort in the chroot; its result line's fields in
# $out.RUN.result ("nr=.. main=.. ...").
run() {
	chroot /host "$prog" > "$out.$1" 2>&1 ||
		{ sed 's/^/# /' "$out.$1"; return 1; }
	grep -v '^result:' "$out.$1" | sed 's/^#* */# /'
	sed -n 's/^result: //p' "$out.$1" > "$out.$1.result"
	echo "# $1: $(cat "$out.$1.result")"
	[ -s "$out.$1.result" ]
}

# field RUN NAME: a field of RUN's result.
field() {
	tr ' ' '\n' < "$out.$1.result" | sed -n "s/^$2=//p"
}

not_by_sframe() {
	[ "$(field "$1" reached_main)" != 1 ] || [ "$(field "$1" fallback)" != 0 ]
}

by_sframe() {
	[ "$(field "$1" reached_main)" = 1 ] && [ "$(field "$1" fallback)" = 0 ] &&
		[ "$(field "$1" libc)" -ge 1 ]
}

wait_daemon() {
	local i=0

	while [ "$i" -lt 300 ]; do
		grep -q "^sync: " "$out.daemon" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	sed 's/^/# daemon: /' "$out.daemon"
	return 1
}

echo "TAP version 13"
grep -q ' /host 9p ' /proc/mounts ||
	skip_all "needs the root at /host (not shared into this guest: run.sh --no-hostfs)"
[ -x "$dir/../bin/sframectl" ] || skip_all "no sframectl was built for $(uname -m)"
[ -x /selftests/unwind_qsort ] || skip_all "no unwind_qsort"
load || { not_ok "insmod"; tap_end qsort_libc; exit 1; }
cp "$dir/../bin/sframectl" "/host$ctl"
cp /selftests/unwind_qsort "/host$prog"

check "without libc's sidecar: unwind_qsort's walk is made" run without
check "... and does not reach main() by SFrame alone" not_by_sframe without

chroot /host "$ctl" daemon --no-cache > "$out.daemon" 2>&1 &
daemon=$!
check "sframectl daemon starts and syncs" wait_daemon
grep -E "libc\.so\.6: registered" "$out.daemon" | sed 's/^/# daemon: /'
check "with the daemon's sidecar: the walk is made" run with
check "... and reaches main() through libc, every step by SFrame" \
	by_sframe with
kill -TERM "$daemon"
wait "$daemon"

unload
load
rm -f "/host$ctl" "/host$prog"
tap_end qsort_libc
