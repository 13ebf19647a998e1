#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module loads, says which ABI it serves, creates its debugfs
# directory without the test hooks, unloads cleanly and loads again with
# test_hooks=1, which the tests that follow use (left loaded).

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

names_abi() {
	dmesg | grep -q 'sframe_unwind: .*\(amd64\|aarch64\|s390x\)'
}

# hooks_are Y|N: the test hooks' debugfs files are there (Y) or not (N).
hooks_are() {
	if [ "$1" = Y ]; then
		[ -e "$dbg/unwind" ] && [ -e "$dbg/request_at" ]
	else
		[ ! -e "$dbg/unwind" ] && [ ! -e "$dbg/request_at" ]
	fi
}

echo "TAP version 13"
rmmod sframe_unwind 2> /dev/null
check "insmod succeeds" insmod "$ko"
check "module listed in /sys/module" loaded
check "load message names the ABI" names_abi
check "debugfs directory exists" [ -d "$dbg" ]
check "no test hooks by default (unwind, request_at)" hooks_are N
check "rmmod succeeds" rmmod sframe_unwind
check "debugfs directory removed" [ ! -e "$dbg" ]
check "reload with test_hooks=1 succeeds" insmod "$ko" test_hooks=1
check "the test hooks are there" hooks_are Y
tap_exit
