#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module loads, says which ABI it serves, creates its debugfs
# directory without the test hooks, unloads cleanly and loads again with
# test_hooks=1, which the tests that follow use (left loaded).
ko=/lib/test-modules/sframe_unwind.ko
fail=0
n=0

check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..9"
rmmod sframe_unwind 2> /dev/null
check "insmod succeeds" "insmod $ko"
check "module listed in /sys/module" "[ -d /sys/module/sframe_unwind ]"
check "load message names the ABI" \
	"dmesg | grep -q 'sframe_unwind: .*\\(amd64\\|aarch64\\|s390x\\)'"
check "debugfs directory exists" "[ -d /sys/kernel/debug/sframe_unwind ]"
check "no test hooks by default (unwind, request_at)" \
	"[ ! -e /sys/kernel/debug/sframe_unwind/unwind ] &&
	 [ ! -e /sys/kernel/debug/sframe_unwind/request_at ]"
check "rmmod succeeds" "rmmod sframe_unwind"
check "debugfs directory removed" "[ ! -e /sys/kernel/debug/sframe_unwind ]"
check "reload with test_hooks=1 succeeds" "insmod $ko test_hooks=1"
check "the test hooks are there" \
	"[ -e /sys/kernel/debug/sframe_unwind/unwind ] &&
	 [ -e /sys/kernel/debug/sframe_unwind/request_at ]"
exit $fail
