#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Unload while a walk of the module sleeps in a page fault: on kernels
# with deferred user stacks (6.19 and later) perf's --call-graph fp,defer
# has the kernel walk in task work with unwind_user(), which the module
# redirects to its faulting walker.  unwind_park spins in a frame whose
# CFA is its frame pointer, which points into a page registered with
# userfaultfd; the walk's read there waits until the program answers.
# RCU tasks counts a task asleep in a fault as quiescent: rmmod must
# still wait for the walk (and say so in the kernel log), finish once the
# fault is answered, and the kernel must be well after it.  Leaves the
# module loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

out=/tmp/unwind_parked
parked=$out.parked
release=$out.release
# How long the walk may take to park and rmmod to end once it is
# released, in tenths of a second (TCG); how long rmmod must keep waiting
# while it is parked, in seconds.
park_tenths=600
end_tenths=300
hold=3
parker=""
perf_pid=""
mark=0

# perf ARGS...: the host's perf, in the chroot (its files in its /tmp).
perf() {
	chroot /host perf "$@"
}
rmmod_pid=""

is_parked() {
	[ -e "$parked" ]
}

# park: the program spinning under perf's deferred stacks, its walk parked.
park() {
	rm -f "$parked" "$release"
	/selftests/unwind_park "$parked" "$release" > "$out.log" 2>&1 &
	parker=$!
	perf record -q --call-graph fp,defer -e cpu-clock -F 1000 \
		-o /tmp/unwind_parked.data -p "$parker" > "$out.perf.log" 2>&1 &
	perf_pid=$!
	wait_until "$park_tenths" is_parked && return 0
	sed 's/^/# /' "$out.log" "$out.perf.log"
	return 1
}

rmmod_running() {
	kill -0 "$rmmod_pid" 2> /dev/null
}

rmmod_done() {
	! rmmod_running
}

# unload_waits: rmmod in the background is still waiting $hold s later.
unload_waits() {
	mark=$(dmesg | wc -l)
	rmmod sframe_unwind &
	rmmod_pid=$!
	sleep "$hold"
	rmmod_running
}

# since_mark: the kernel log since unload_waits().
since_mark() {
	dmesg | tail -n "+$((mark + 1))"
}

named() {
	since_mark | grep -q "unload waits for 1 deferred walk(s) asleep in a page fault"
}

unload_ends() {
	touch "$release"
	wait_until "$end_tenths" rmmod_done || return 1
	wait "$rmmod_pid"
}

parker_ok() {
	wait "$parker" || { sed 's/^/# /' "$out.log"; return 1; }
}

kernel_well() {
	! since_mark | grep -E 'Oops|BUG:|WARNING:|general protection|panic'
}

# cleanup: whatever a failed check left running.
cleanup() {
	touch "$release"
	[ -z "$perf_pid" ] || kill -INT "$perf_pid" 2> /dev/null
	[ -z "$rmmod_pid" ] || wait "$rmmod_pid" 2> /dev/null
	[ -z "$perf_pid" ] || wait "$perf_pid" 2> /dev/null
}

need_registry
[ "$(stat_of unwind_user_redirected)" = 1 ] ||
	skip_all "unwind_user() is not redirected on $(uname -r): no faulting walks in module code"
perf record -q --call-graph fp,defer -e cpu-clock -o /tmp/unwind_parked.probe true \
	> "$out.probe.log" 2>&1 ||
	skip_all "perf has no --call-graph fp,defer here: $(tail -1 "$out.probe.log")"
/selftests/unwind_park > /dev/null 2>&1
[ $? -ne "$KSFT_SKIP" ] || skip_all "$(/selftests/unwind_park)"

check "a deferred walk parked in a userfaultfd fault" park
sed 's/^/# /' "$out.log"
check "rmmod is still waiting ${hold} s later" unload_waits
check "and names the walk in the kernel log" named
check "rmmod returns once the fault is answered" unload_ends
check "the module is gone" sh -c "! grep -q '^sframe_unwind ' /proc/modules"
check "the program ended well" parker_ok
cleanup
check "no oops, BUG or warning in the kernel log" kernel_well
check "insmod again" load
tap_exit
