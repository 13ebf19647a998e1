#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One user's mmap lock stops nobody else: uid 1000 holds its own mm's
# mmap lock for good (sfu_fuse's wedge: a read of its own memory waits on
# a FUSE page its server never answers, with an mmap() queued behind it
# as a writer).  While it holds, root's sidecar for another program's
# file registers at once for the process already running it (the scan
# that ADD_FILE makes looks only at the mms that map the file, from its
# i_mmap tree, and never tries the wedged one), and rmmod and insmod
# (whose load scan visits every mm, and skips and counts the wedged one)
# finish.  Then the server ends
# and the wedge with it.  Leaves the module loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

out=/tmp/registry_scan_wedge
fuse_dir=/tmp/sfu_wedge
ctl=/tmp/sframectl_wedge	# in the root at /host
victim=/tmp/wedge_sleep		# in the root at /host, a copy of sleep
user=1000
# The wedge's life in seconds, longer than the test; how long the wedge
# may take to set up, and the sidecar, rmmod and insmod to finish, in
# tenths of a second (under TCG).
hold=600
setup_tenths=300
done_tenths=600
fuse_pid=""
victim_pid=""
job=""
contended=0

wedged() {
	grep -q '^wedged' "$out.fuse"
}

# wedge_tasks DIR: the /proc entries under DIR (/proc or a task list)
# of uid $user's sfu_fuse.
wedge_tasks() {
	local t

	for t in "$1"/[0-9]*; do
		[ "$(cat "$t/comm" 2> /dev/null)" = sfu_fuse ] || continue
		awk -v u="$user" '$1 == "Uid:" && $2 == u { f = 1 }
			END { exit !f }' "$t/status" 2> /dev/null && echo "$t"
	done
}

# blocked: a thread of the wedge in D (the queued writer).
blocked() {
	local p t

	for p in $(wedge_tasks /proc); do
		for t in $(wedge_tasks "$p/task"); do
			[ "$(state "${t##*/}")" = D ] && return 0
		done
	done
	return 1
}

not_blocked() {
	! blocked
}

start_wedge() {
	mkdir -p "$fuse_dir"
	/selftests/bin/sfu_fuse "$fuse_dir" /selftests/bin/sfu_prog "$user" \
		"$hold" wedge > "$out.fuse" 2>&1 &
	fuse_pid=$!
	wait_until "$setup_tenths" wedged && wait_until "$setup_tenths" blocked &&
		return 0
	sed 's/^/# sfu_fuse: /' "$out.fuse"
	return 1
}

start_victim() {
	cp /host/bin/sleep "/host$victim" || return 1
	chroot /host "$victim" "$hold" &
	victim_pid=$!
	sleep 1
	kill -0 "$victim_pid"
}

job_done() {
	! kill -0 "$job" 2> /dev/null
}

# finishes CMD...: CMD in the background ends within $done_tenths; if it
# hangs, end the wedge (the server's end frees it) and fail.
finishes() {
	"$@" &
	job=$!
	if wait_until "$done_tenths" job_done; then
		wait "$job"
		return
	fi
	echo "# '$*' still waits after $((done_tenths / 10)) s; ending the wedge"
	kill "$fuse_pid"
	wait "$job"
	return 1
}

sidecar_added() {
	contended=$(stat_of scan_contended)
	finishes chroot /host "$ctl" add "$victim" > "$out.add" 2>&1 ||
		{ sed 's/^/# add: /' "$out.add"; return 1; }
}

# has_sidecar: the victim runs with the sidecar of its file.
has_sidecar() {
	entries "$victim_pid" | awk '$2 == "sidecar" && $NF ~ /wedge_sleep$/ { f = 1 }
		END { exit !f }'
}

same_contended() {
	echo "# scan_contended $(stat_of scan_contended) (was $contended)"
	[ "$(stat_of scan_contended)" -eq "$contended" ]
}

reloaded() {
	finishes rmmod sframe_unwind || return 1
	finishes insmod "$ko" test_hooks=1
}

load_contended() {
	echo "# scan_contended after load: $(stat_of scan_contended)"
	[ "$(stat_of scan_contended)" -ge 1 ]
}

# unwedge: the server's end fails the pending read; the wedge goes.
unwedge() {
	local p

	kill "$fuse_pid" 2> /dev/null
	wait "$fuse_pid"
	wait_until "$setup_tenths" not_blocked || return 1
	for p in $(wedge_tasks /proc); do
		kill "${p##*/}"
	done
	umount "$fuse_dir" 2> /dev/null
	kill "$victim_pid" 2> /dev/null
	wait "$victim_pid" 2> /dev/null
	rm -f "/host$victim" "/host$ctl"
}

need_registry
[ -x /selftests/bin/sframectl ] || skip_all "no sframectl was built for $(uname -m)"
[ -e /dev/fuse ] || modprobe fuse 2> /dev/null
[ -e /dev/fuse ] || skip_all "no /dev/fuse in $(uname -r)"
cp /selftests/bin/sframectl "/host$ctl" || skip_all "no room for sframectl in /host"

check "uid $user holds its own mmap lock (a writer queued in D)" start_wedge
check "root runs a program without SFrame" start_victim
check "root's sidecar for it is added while the wedge holds" sidecar_added
check "the running program has the sidecar at once" has_sidecar
check "the sidecar's scan never tried the wedged mm, which maps no such file" \
	same_contended
check "rmmod and insmod finish while the wedge holds" reloaded
check "the load scan skipped the wedged mm" load_contended
check "the wedge ends with its server" unwedge
tap_exit
