#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The wait at first mapping (first_map_wait_ms) cannot be multiplied: no
# user makes another's program wait out the bound again and again, and no
# process waits out more than one bound.  Copies of sfu_noeh (no .eh_frame,
# so no section can be made) mapped by sfu_mapx:
#   budget      a lease taken by sfu_listen, which never answers, bound
#               1 s: a process that maps four such files waits out the
#               bound once (first_map_waits +1), and the module says the
#               three others were not held (first_map_spent +3); the
#               guest's busybox and sfu_mapx (static) are made known to
#               have no section first, by a wait of their own
#   lapse       a lease of 2 s, bound 10 s: a mapping waits until the
#               lease ends, not the bound (no timeout counted, < 7 s)
#   sync        a file the daemon's start-up sync failed on (which the
#               sync does not tell the module) is mapped by a new process:
#               the daemon answers again, and the bound of 10 s does not
#               run out
#   flood       root's file fails; uid 1000 maps 280 files that fail; root
#               maps its file again: it is not waited for until the bound
#               runs out (the module's memory of failures was a ring of
#               256, and the daemon ignored files it had handled)
#   stalled     four FUSE file systems of uid 1000 whose servers never
#               answer root hold every worker of the daemon; once they
#               have for 10 s, the daemon lets its lease lapse: root's
#               new file is not waited for at all
# Leaves the module loaded and no sidecar registered.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sfu_fmw
daemon_log=$out.daemon		# for wait_log
ctl=/tmp/sframectl		# in the chroot, and so are the files below
cache=/tmp/sfu-fmw-cache
files=/tmp/sfu_fmw		# sfu_noeh's copies
param=/sys/module/sframe_unwind/parameters/first_map_wait_ms
enable=$tracefs/events/sframe_unwind/sframe_unwind_nosframe/enable
user=$user_uid
flood=280
nr_fuse=4
child_timeout=20

# noeh NAME [OWNER]: a new copy of sfu_noeh, $files/NAME in the chroot.
noeh() {
	cp /selftests/bin/sfu_noeh "/host$files/$1" &&
		chown "${2:-0}:${2:-0}" "/host$files/$1"
}

# ms_of CMD...: the wall milliseconds CMD took (to 10 ms).
ms_of() {
	local t0 t1

	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" > /dev/null 2>&1
	t1=$(cut -d' ' -f1 /proc/uptime)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d\n", (b - a) * 1000 }'
}

# mapx NAME...: root maps the copies NAME... in a new process.
mapx() {
	local f args=

	for f in "$@"; do
		args="$args /host$files/$f"
	done
	# shellcheck disable=SC2086  # one file a word
	/selftests/bin/sfu_mapx 0 $args
}

# grew NAME BEFORE BY: the counter NAME is BEFORE + BY.
grew() {
	local now

	now=$(stat_of "$1")
	echo "# $1: $2 -> $now"
	[ "$now" -eq $(($2 + $3)) ]
}

below() {
	[ -n "$1" ] && [ "$1" -lt "$2" ]
}

# answered NAME WHAT: root maps NAME, which failed, in a new process;
# not the bound (10 s) but the daemon ends any wait for it: no timeout,
# and it takes less than 8 s.
answered() {
	local timeouts ms

	timeouts=$(stat_of first_map_timeouts)
	ms=$(ms_of mapx "$1")
	echo "# $2, mapped again, bound 10 s: ${ms:-?} ms"
	grew first_map_timeouts "$timeouts" 0 && below "$ms" 8000
}

need_host_sframectl
for f in sfu_noeh sfu_mapx sfu_listen sfu_fuse; do
	[ -x "$dir/../bin/$f" ] || skip_all "no $f was built for $(uname -m)"
done
[ -x /host/usr/bin/setpriv ] || skip_all "the root at /host has no setpriv"
unload
load
check "module loaded" loaded
default_ms=$(cat "$param")
rm -rf "/host$files" "/host$cache"
mkdir -p "/host$files/user"
mkdir -m 700 "/host$cache"
cp "$dir/../bin/sframectl" "/host$ctl"
cp "$dir/../bin/sfu_mapx" /host/tmp/sfu_mapx

# A listener that never answers: the budget of one process.
for f in b1 b2 b3 b4 lapse; do
	noeh "$f"
done
echo 1 > "$enable"
echo 1000 > "$param"
/selftests/bin/sfu_listen 30000
# The guest's busybox and sfu_mapx (static), which have no section
# either: each waits out the bound once and is not waited for again.
/selftests/bin/sfu_mapx 0 > /dev/null 2>&1
/bin/true
waits=$(stat_of first_map_waits)
spent=$(stat_of first_map_spent)
ms=$(ms_of mapx b1 b2 b3 b4)
echo "# four files, no answer, bound 1 s: mapped in ${ms:-?} ms"
check "a process waits out the bound once, not for each file" \
	grew first_map_waits "$waits" 1
check "... and the module says it held the three others not" \
	grew first_map_spent "$spent" 3

# A lease that lapses ends the wait.
echo 10000 > "$param"
/selftests/bin/sfu_listen 2000
timeouts=$(stat_of first_map_timeouts)
ms=$(ms_of mapx lapse)
echo "# a lease of 2 s, bound 10 s: mapped in ${ms:-?} ms"
check "a wait ends when the lease lapses, not at the bound" below "$ms" 7000
check "... and is not counted as a timeout" \
	grew first_map_timeouts "$timeouts" 0
/selftests/bin/sfu_listen 0
echo 0 > "$enable"

# A file that the daemon's start-up sync failed on.
noeh sync
/selftests/bin/sfu_mapx 600 "/host$files/sync" > "$out.sync" 2>&1 &
holder=$!
wait_for "$out.sync" '^mapped'
check "sframectl daemon starts" start_daemon
check "a file the sync failed on: the daemon answers its next mapping" \
	answered sync "a file the sync failed on"
kill "$holder"
wait "$holder" 2> /dev/null

# One user's failures do not push out another's.
noeh root
mapx root
i=0
while [ "$i" -lt "$flood" ]; do
	noeh "user/f$i" "$user"
	i=$((i + 1))
done
waits=$(stat_of first_map_waits)
# shellcheck disable=SC2046  # one file a word
ms=$(ms_of as_user /tmp/sfu_mapx 0 $(ls "/host$files/user" |
	sed "s|^|$files/user/|"))
echo "# uid 1000 mapped $flood files that fail in ${ms:-?} ms; waits $(stat_of first_map_waits) (was $waits)"
check "root's failed file is not waited out again after uid 1000's $flood failures" \
	answered root "root's failed file, after the flood"

# Workers stalled on FUSE: the lease lapses.
if [ -e /dev/fuse ] || modprobe fuse 2> /dev/null; then
	echo 1000 > "$param"
	servers=
	i=0
	while [ "$i" -lt "$nr_fuse" ]; do
		mkdir -p "/host$files/fuse$i"
		"$dir/../bin/sfu_fuse" "/host$files/fuse$i" \
			/selftests/bin/sfu_noeh "$user" 120 > "$out.fuse$i" 2>&1 &
		servers="$servers $!"
		i=$((i + 1))
	done
	ready=0
	for i in $(seq 0 $((nr_fuse - 1))); do
		wait_for "$out.fuse$i" '^ready' 300 > /dev/null &&
			ready=$((ready + 1))
	done
	check "uid 1000 maps a file of each of its $nr_fuse FUSE file systems" \
		[ "$ready" -eq "$nr_fuse" ]
	check "... the daemon says its workers are stalled" \
		wait_log 300 "^daemon: every worker busy"
	sleep 4		# the lease it did not renew runs out
	echo 10000 > "$param"
	noeh stalled
	waits=$(stat_of first_map_waits)
	ms=$(ms_of mapx stalled)
	echo "# a new file while the workers are stalled, bound 10 s: ${ms:-?} ms"
	check "while the workers are stalled, a new file is not waited for" \
		grew first_map_waits "$waits" 0
	# shellcheck disable=SC2086  # one pid a word
	kill $servers 2> /dev/null
	# shellcheck disable=SC2086
	wait $servers 2> /dev/null
	for i in $(seq 0 $((nr_fuse - 1))); do
		umount "/host$files/fuse$i" 2> /dev/null ||
			umount -l "/host$files/fuse$i"
	done
	check "... and once the stall ends, the daemon says so" \
		wait_log 900 "^daemon: workers answer again"
else
	skip "workers stalled on FUSE: the lease lapses" "no /dev/fuse in $(uname -r)"
fi

stop_daemon
grep -E "^daemon: (every|workers)|registered for events" "$daemon_log" |
	sed 's/^/# daemon: /'
echo "$default_ms" > "$param"
unload
load
rm -rf "/host$ctl" "/host$cache" "/host$files" /host/tmp/sfu_mapx
tap_end firstmap_waits
