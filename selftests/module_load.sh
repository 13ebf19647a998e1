#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module loads, says which ABI it serves, creates its debugfs
# directory, unloads cleanly and loads again, left loaded for the tests
# that follow.  A debug build (CONFIG_SFRAME_UNWIND_DEBUG, the selftests'
# own) has the decoder's files and, only with test_hooks=1, the test
# hook; a product build (DKMS, the packages) has neither, not even when
# loaded with test_hooks=1.

# shellcheck disable=SC3043  # busybox ash has local

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

names_abi() {
	dmesg | grep -q 'sframe_unwind: .*\(amd64\|aarch64\|s390x\)'
}

# present FILE...: every FILE is in the debugfs directory.
present() {
	local f

	for f in "$@"; do
		[ -e "$dbg/$f" ] || { echo "# $dbg/$f is missing"; return 1; }
	done
}

# absent FILE...: no FILE is in the debugfs directory.
absent() {
	local f

	for f in "$@"; do
		[ ! -e "$dbg/$f" ] || { echo "# $dbg/$f is there"; return 1; }
	done
}

# no_test_hooks: the loaded module has neither the parameter nor the hook.
no_test_hooks() {
	[ ! -e /sys/module/sframe_unwind/parameters/test_hooks ] && absent unwind
}

decoder="section vaddr abi decode status"

echo "TAP version 13"
rmmod sframe_unwind 2> /dev/null
check "insmod succeeds" insmod "$ko"
check "module listed in /sys/module" loaded
check "load message names the ABI" names_abi
check "debugfs directory exists" [ -d "$dbg" ]
check "the registries' files and request_at are there" \
	present sections stats lookup request_at
if debug_build; then
	echo "# a debug build (CONFIG_SFRAME_UNWIND_DEBUG)"
	# shellcheck disable=SC2086  # a list of names
	check "the decoder's files are there" present $decoder
	check "no test hook by default" absent unwind
else
	echo "# a product build (no CONFIG_SFRAME_UNWIND_DEBUG)"
	# shellcheck disable=SC2086  # a list of names
	check "no decoder files, no test hook" absent $decoder unwind
fi
check "rmmod succeeds" rmmod sframe_unwind
check "debugfs directory removed" [ ! -e "$dbg" ]
if debug_build; then
	check "reload with test_hooks=1 succeeds" insmod "$ko" test_hooks=1
	check "the test hook is there" present unwind
else
	# The kernel ignores a parameter a module does not have.
	check "reload (test_hooks=1, ignored) succeeds" insmod "$ko" test_hooks=1
	check "no test_hooks parameter, no test hook" no_test_hooks
fi
tap_exit
