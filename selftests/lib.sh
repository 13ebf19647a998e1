# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC3043
# (busybox ash has local)
#
# The selftests' one shell library, installed as /selftests/lib.sh: TAP
# bookkeeping, loading and unloading the module, its counters and
# polling.  registry/lib.sh and perf/lib.sh add what their tests share
# on top of it.

# shellcheck disable=SC2034  # used by the tests that source this
{
KSFT_SKIP=4
dbg=/sys/kernel/debug/sframe_unwind
tracefs=/sys/kernel/tracing
ko=/lib/test-modules/sframe_unwind.ko
}

# ok, not_ok, skip, tap_check and tap_end from the project's TAP helpers
# (installed next to this file).
# shellcheck source=tools/testing/tap.sh
. /selftests/tap.sh

# check DESC COMMAND...: COMMAND is one test.
check() {
	tap_check "$@"
}

# tap_exit: the plan, and the verdict as the exit status.
tap_exit() {
	echo "1..$n"
	[ "$fail" -eq 0 ] || exit 1
	exit 0
}

# skip_all REASON: the whole test is skipped.
skip_all() {
	echo "1..0 # SKIP $1"
	exit "$KSFT_SKIP"
}

loaded() {
	[ -d /sys/module/sframe_unwind ]
}

# debug_build: the module under test has the test and debug interfaces
# (CONFIG_SFRAME_UNWIND_DEBUG, as run.sh builds it); a packaged one not.
debug_build() {
	grep -q 'parmtype=test_hooks:' "$ko"
}

# load_params: insmod's parameters for the tests: the test hook, where
# the build has it.
load_params() {
	if debug_build; then
		echo test_hooks=1
	fi
}

load() {
	# shellcheck disable=SC2046  # none or one word
	loaded || insmod "$ko" $(load_params)
}

# unload: rmmod, retried while something still holds the module.
unload() {
	local i=0

	while loaded; do
		rmmod sframe_unwind 2> /dev/null && return 0
		i=$((i + 1))
		[ "$i" -lt 50 ] || { rmmod sframe_unwind; return 1; }
		sleep 0.2
	done
}

# stat_of NAME: a value of the module's stats file.
stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$dbg/stats"
}

# state PID: the one-letter scheduler state of PID.
state() {
	sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2> /dev/null
}

# wait_until TENTHS COMMAND...: poll until COMMAND succeeds.
wait_until() {
	local i=0 max="$1"

	shift
	while [ "$i" -lt "$max" ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# wait_for FILE REGEX [TENTHS]: wait until a line of FILE matches REGEX.
wait_for() {
	local i=0 max="${3:-100}"

	while [ "$i" -lt "$max" ]; do
		grep -Eq "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "# timed out waiting for \"$2\" in $1:"
	sed 's/^/#   /' "$1"
	return 1
}
