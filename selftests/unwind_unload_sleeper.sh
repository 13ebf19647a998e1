#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Unload while a task sleeps with a deferred walk pending: a kprobe at
# hrtimer_nanosleep() (debugfs request_at) asks for the stack of a process
# that then sleeps for minutes, so the walk, queued for its return to user
# space, stays pending.  rmmod must nudge the sleeper rather than wait for
# it: it returns within seconds, the sleeper is still there and asleep (its
# nanosleep restarted), and a second sleeper without the module is left
# alone.  Leaves the module loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

# The longest rmmod may take, in tenths of a second; the sleepers sleep
# far longer than that.
rmmod_tenths=100
nap=600
sleeper=""
rmmod_pid=""

asleep() {
	[ "$(state "$1")" = S ]
}

# arm: sleep with a request pending, then take the probe away again.
arm() {
	echo hrtimer_nanosleep > "$dbg/request_at" || return 1
	sleep "$nap" &
	sleeper=$!
	wait_until 50 asleep "$sleeper"
	local rc=$?

	echo none > "$dbg/request_at"
	return "$rc"
}

rmmod_done() {
	! kill -0 "$rmmod_pid" 2> /dev/null
}

# unload: rmmod in the background; on a hang, end the sleeper to free it.
unload() {
	rmmod sframe_unwind &
	rmmod_pid=$!
	if wait_until "$rmmod_tenths" rmmod_done; then
		wait "$rmmod_pid"
		return
	fi
	echo "# rmmod still waiting after $((rmmod_tenths / 10)) s; ending the sleeper"
	kill "$sleeper"
	wait "$rmmod_pid"
	return 1
}

need_registry
[ -w "$dbg/request_at" ] || {
	echo "1..0 # SKIP no $dbg/request_at"
	exit "$KSFT_SKIP"
}
check "a sleeper with a walk requested at hrtimer_nanosleep" arm
check "its walk is pending ($(stat_of task_work_pending) task work(s))" work_pending
check "rmmod returns within $((rmmod_tenths / 10)) s" unload
check "the module is gone" sh -c "! grep -q '^sframe_unwind ' /proc/modules"
check "the sleeper is alive" kill -0 "$sleeper"
check "and asleep again (state $(state "$sleeper"))" wait_until 50 asleep "$sleeper"
check "insmod again" insmod "$ko" test_hooks=1
kill "$sleeper" 2> /dev/null
wait "$sleeper" 2> /dev/null
tap_exit
