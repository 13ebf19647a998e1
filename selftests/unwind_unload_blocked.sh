#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Unload while a task that cannot be nudged has a deferred walk pending:
# a kprobe at kernel_clone() (debugfs request_at) asks for the stack of
# unwind_vfork_hold, whose vfork() then keeps it in a killable sleep until
# its child exits.  The nudge rmmod sends (TWA_SIGNAL) does not wake such
# a sleep, and the walk runs module code, so rmmod has to wait: it must
# name the blocking task (pid, comm, state) in the kernel log while it
# waits, and finish once the child has exited and the walk has run.
# Leaves the module loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

# The vfork child's sleep, in seconds: rmmod names its waits every 10 s.
hold=25
# How long rmmod may take beyond that, in tenths of a second.
slack_tenths=200
holder=""
rmmod_pid=""

held() {
	[ "$(state "$1")" = D ]
}

# arm: a walk requested as the holder vforks, then the probe taken away.
arm() {
	echo kernel_clone > "$dbg/request_at" || return 1
	/selftests/unwind_vfork_hold "$hold" &
	holder=$!
	wait_until 100 held "$holder"
	local rc=$?

	echo none > "$dbg/request_at"
	return "$rc"
}

rmmod_running() {
	kill -0 "$rmmod_pid" 2> /dev/null
}

rmmod_done() {
	! rmmod_running
}

named() {
	dmesg | grep -q "pid $holder (unwind_vfork_ho), state .*blocks unload"
}

unload_waits() {
	rmmod sframe_unwind &
	rmmod_pid=$!
	wait_until 150 named && rmmod_running && held "$holder"
}

unload_ends() {
	wait_until $((hold * 10 + slack_tenths)) rmmod_done || return 1
	wait "$rmmod_pid"
}

holder_ok() {
	wait "$holder"
}

need_registry
[ -w "$dbg/request_at" ] || {
	echo "1..0 # SKIP no $dbg/request_at"
	exit "$KSFT_SKIP"
}
grep -qw kernel_clone /proc/kallsyms || {
	echo "1..0 # SKIP no kernel_clone() to put the request at"
	exit "$KSFT_SKIP"
}
check "a task held in vfork with a walk requested at kernel_clone" arm
check "its walk is pending ($(stat_of task_work_pending) task work(s))" work_pending
check "rmmod waits and names it in the kernel log" unload_waits
dmesg | grep -A1 'unload waits for' | head -2 | sed 's/^/# /'
check "rmmod returns once the vfork child has exited" unload_ends
check "the module is gone" sh -c "! grep -q '^sframe_unwind ' /proc/modules"
check "the holder ended well" holder_ok
if rmmod_running; then
	kill "$holder" 2> /dev/null
	wait "$rmmod_pid"
fi
check "insmod again" insmod "$ko" test_hooks=1
tap_exit
