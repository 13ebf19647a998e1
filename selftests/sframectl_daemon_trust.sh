#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What a user (uid 1000) can do to the root daemon, sframectl daemon, with
# files of its own (issue 31, items 3 to 5).  Debian's programs from the
# chroot /host, as in sframectl.sh:
#   lease         uid 1000 maps its own ELF file executable while it holds
#                 a write lease on it (sfu_lease, ignoring the break
#                 notice); root then runs a new program: the daemon reports
#                 the leased file and registers root's program within 20 s
#                 (a daemon that opens the file blocking waits for the
#                 lease break, lease-break-time, set to 45 s here)
#   name          uid 1000 runs a program named "LOST EVENTS": the daemon
#                 handles it as the event it is, reports no lost events
#                 and does not sync again
#   child         with SFRAMECTL_TEST_CHILD=spin:FILE (the parsing child
#                 of FILE spins) and --child-timeout 40: while it spins,
#                 a program root runs next is registered within 30 s (by
#                 another worker), and the child runs as nobody with only
#                 stderr and its two pipes open (no trace pipe, device or
#                 signalfd of the daemon), RLIMIT_NPROC and RLIMIT_NOFILE
#                 0 and a seccomp filter; it is killed at the deadline and
#                 reported
#   seccomp       with SFRAMECTL_TEST_CHILD=syscall:FILE (the child of
#                 FILE opens a file): the child is killed by SIGSYS and
#                 the daemon says so
#   fuse          uid 1000 maps a file of its own FUSE file system
#                 (sfu_fuse, mounted allow_other), whose server never
#                 answers root: root's next program is registered within
#                 20 s (a daemon that stats or opens the file itself waits
#                 for ever), and the worker that waits on the file is
#                 killed at its deadline (twice --child-timeout, 5 s here)
#                 and reported
# Leaves the module loaded and no sidecar registered.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sfu_trust
daemon_log=$out.daemon		# for wait_log
ctl=/tmp/sframectl		# in the chroot, and so are the files below
cache=/tmp/sfu-trust-cache
lease_file=/tmp/sfu_lease.so
spin_file=/tmp/sfu_spin
sys_file=/tmp/sfu_sys
fuse_dir=/tmp/sfu_fuse
lost_file="/tmp/LOST EVENTS"
user=$user_uid
lease_break=/proc/sys/fs/lease-break-time
# A lease break the old daemon waited for, and how long root may wait now.
lease_wait=45
lease_bound=20
child_timeout=40
child_bound=30
fuse_bound=20
fuse_timeout=5

# user_file FILE SRC: a copy of SRC (in the chroot) that uid 1000 owns.
user_file() {
	cp "/host$2" "/host$1" && chown "$user:$user" "/host$1" &&
		chmod 755 "/host$1"
}

# root_registered_within SECS NAME: root runs a new copy of Debian's
# sleep, /tmp/NAME; the daemon registers it within SECS seconds.
root_registered_within() {
	local t0 t1 pid ok=0

	cp /host/bin/sleep "/host/tmp/$2"
	t0=$(date +%s)
	chroot /host "/tmp/$2" 60 &
	pid=$!
	wait_log $(($1 * 10)) "^/tmp/$2: registered" && ok=1
	t1=$(date +%s)
	kill "$pid"
	wait "$pid" 2> /dev/null
	echo "# /tmp/$2: $([ "$ok" = 1 ] || echo "not ")registered after $((t1 - t0)) s"
	[ "$ok" = 1 ]
}

# children_of PID...: the children of the PIDs, one a line.
children_of() {
	local s p

	for s in /proc/[0-9]*/status; do
		for p in "$@"; do
			if grep -q "^PPid:[[:space:]]*$p\$" "$s" 2> /dev/null; then
				s=${s%/status}
				echo "${s#/proc/}"
			fi
		done
	done
}

# parse_child: a parsing child (a child of one of the daemon's workers)
# that lasts, the spinning one, not one that parses some other file;
# waited for up to 30 s.
parse_child() {
	local i=0 c

	while [ "$i" -lt 300 ]; do
		# shellcheck disable=SC2046  # one pid a word
		c=$(children_of $(children_of "$daemon") | head -1)
		[ -n "$c" ] && sleep 1 && [ -d "/proc/$c" ] &&
			{ echo "$c"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# spinning PID: PID, a parsing child, is still there.
spinning() {
	[ -n "$1" ] && [ -d "/proc/$1" ]
}

# only_own_fds PID: PID has stderr and two pipes open, nothing else.
only_own_fds() {
	ls -l "/proc/$1/fd" > "$out.fds" 2>&1
	sed 's/^/# fd: /' "$out.fds"
	[ "$(grep -c -- ' -> ' "$out.fds")" -eq 3 ] &&
		[ "$(grep -c -- ' -> pipe:' "$out.fds")" -eq 2 ] &&
		! grep -Eq 'trace_pipe|sframe_unwind|anon_inode|signalfd' "$out.fds"
}

# confined PID: nobody, no processes, no descriptors, a seccomp filter.
confined() {
	grep -E "^(Uid|Seccomp):" "/proc/$1/status" | sed 's/^/# /'
	grep -E "^Max (processes|open files)" "/proc/$1/limits" | sed 's/^/# /'
	grep -Eq "^Uid:[[:space:]]+65534[[:space:]]" "/proc/$1/status" &&
		grep -Eq "^Seccomp:[[:space:]]+2$" "/proc/$1/status" &&
		grep -Eq "^Max processes +0 +0 " "/proc/$1/limits" &&
		grep -Eq "^Max open files +0 +0 " "/proc/$1/limits"
}

# no_sync_for_name: the name was an event; no loss, no second sync.
no_sync_for_name() {
	grep "LOST\|lost\|^sync: " "$daemon_log" | sed 's/^/# daemon: /'
	! grep -q "^daemon: events lost" "$daemon_log" &&
		[ "$(grep -c "^sync: " "$daemon_log")" -eq 1 ]
}

if ! grep -q ' /host 9p ' /proc/mounts; then
	skip_all "needs Debian's programs at /host (not shared into this guest: run.sh --no-hostfs)"
fi
for f in sframectl sfu_lease sfu_noeh sfu_fuse; do
	[ -x "$dir/../bin/$f" ] || skip_all "no $f was built for $(uname -m)"
done
[ -x /host/usr/bin/setpriv ] || skip_all "the root at /host has no setpriv"
load || { not_ok "insmod"; tap_end sframectl_daemon_trust; exit 1; }
cp "$dir/../bin/sframectl" "/host$ctl"
cp "$dir/../bin/sfu_lease" /host/tmp/sfu_lease
in_host sh -c "cp \"\$(readlink -f /usr/lib/*-linux-gnu/libz.so.1)\" $lease_file"
chown "$user:$user" "/host$lease_file"
cp "$dir/../bin/sfu_noeh" /host/tmp/sfu_noeh
user_file "$lost_file" /tmp/sfu_noeh
user_file "$spin_file" /tmp/sfu_noeh
user_file "$sys_file" /tmp/sfu_noeh
rm -rf "/host$cache"
old_break=$(cat "$lease_break")
echo "$lease_wait" > "$lease_break"

check "the daemon starts and syncs" start_daemon

# A lease on a user's file does not hold root's registrations.
as_user /tmp/sfu_lease "$lease_file" 120 > "$out.lease" 2>&1 &
holder=$!
i=0
while [ "$i" -lt 300 ] && ! grep -q '^ready' "$out.lease"; do
	sleep 0.1
	i=$((i + 1))
done
sed 's/^/# sfu_lease: /' "$out.lease"
check "uid 1000 maps its file with a write lease on it" grep -q '^ready' "$out.lease"
check "root's next program is registered within $lease_bound s (lease-break-time $lease_wait s)" \
	root_registered_within "$lease_bound" sfu_trust_root1
check "... and the leased file is reported, not waited for" \
	grep -q "^sframectl: $lease_file: its owner holds a lease on it; skipped for now" "$daemon_log"
kill "$holder" 2> /dev/null
wait "$holder" 2> /dev/null

# A task named like trace_pipe's report of lost events.
as_user "$lost_file"
check "a program named \"LOST EVENTS\" is handled as an event" \
	wait_log 300 "^sframectl: $lost_file: no section made"
check "... and causes no report of lost events and no sync" no_sync_for_name
stop_daemon

# A child that spins: confined while it does, killed at the deadline.
start_daemon SFRAMECTL_TEST_CHILD="spin:$spin_file"
as_user "$spin_file" &
user_pid=$!
child=$(parse_child)
echo "# parsing child: ${child:-none found}"
check "while a parsing child spins, root's next program is registered within $child_bound s" \
	root_registered_within "$child_bound" sfu_trust_root2
check "... the child spinning still" spinning "$child"
check "the parsing child keeps only stderr and its two pipes" only_own_fds "$child"
check "... runs as nobody with RLIMIT_NPROC and RLIMIT_NOFILE 0 and a seccomp filter" \
	confined "$child"
check "... and is killed at its deadline ($child_timeout s), reported" \
	wait_log 600 "^sframectl: $spin_file: reading and parsing took longer than $child_timeout s"
wait "$user_pid"
stop_daemon

# A forbidden system call kills the child.
start_daemon SFRAMECTL_TEST_CHILD="syscall:$sys_file"
as_user "$sys_file"
check "a parsing child's forbidden system call kills it (SIGSYS), reported" \
	wait_log 300 "^sframectl: $sys_file: the parsing child made a forbidden system call"
stop_daemon
grep -v "registered" "$daemon_log" | sed 's/^/# daemon: /' | tail -5

# A user's FUSE file system that never answers root.
if [ -c /dev/fuse ]; then
	child_timeout=$fuse_timeout
	start_daemon
	mkdir -p "/host$fuse_dir"
	"$dir/../bin/sfu_fuse" "/host$fuse_dir" "/host$lease_file" "$user" 120 \
		> "$out.fuse" 2>&1 &
	server=$!
	check "uid 1000 maps a file of its FUSE file system" wait_ready "$out.fuse"
	check "root's next program is registered within $fuse_bound s (the FUSE server answers root never)" \
		root_registered_within "$fuse_bound" sfu_trust_root3
	check "... and the worker waiting on the FUSE file is killed at its deadline, reported" \
		wait_log 300 "^sframectl: /proc/[0-9]+/map_files/[0-9a-f-]+: not registered within $((2 * fuse_timeout)) s; its worker was killed"
	# The server's child maps the file; the server's end fails what
	# root's worker waits for.
	# shellcheck disable=SC2046  # one pid a word
	kill $(children_of "$server") "$server" 2> /dev/null
	wait "$server" 2> /dev/null
	sed 's/^/# sfu_fuse: /' "$out.fuse" | tail -3
	umount "/host$fuse_dir" 2> /dev/null || umount -l "/host$fuse_dir"
	stop_daemon
	child_timeout=40
else
	skip "a FUSE file system of uid 1000" "no /dev/fuse (no fuse module for this kernel)"
fi

echo "$old_break" > "$lease_break"
# Leave no sidecar behind: they go with the module.
unload
load
rm -rf "/host$ctl" "/host$cache" /host/tmp/sfu_lease /host/tmp/sfu_noeh \
	"/host$lease_file" "/host$lost_file" "/host$spin_file" \
	"/host$sys_file" /host/tmp/sfu_trust_root1 /host/tmp/sfu_trust_root2
tap_end sframectl_daemon_trust
