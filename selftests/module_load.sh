#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module loads, says which ABI it serves, creates its debugfs
# directory, unloads cleanly and loads again (left loaded for the tests
# that follow).
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
echo "1..7"
rmmod sframe_unwind 2> /dev/null
check "insmod succeeds" "insmod $ko"
check "module listed in /sys/module" "[ -d /sys/module/sframe_unwind ]"
check "load message names the ABI" \
	"dmesg | grep -q 'sframe_unwind: .*\\(amd64\\|aarch64\\|s390x\\)'"
check "debugfs directory exists" "[ -d /sys/kernel/debug/sframe_unwind ]"
check "rmmod succeeds" "rmmod sframe_unwind"
check "debugfs directory removed" "[ ! -e /sys/kernel/debug/sframe_unwind ]"
check "reload succeeds" "insmod $ko"
exit $fail
