# SPDX-License-Identifier: GPL-2.0
#
# TAP bookkeeping shared by the shell test drivers: source it, report with
# ok / not_ok / skip (or tap_check DESC CMD..., which runs CMD as one
# test), and end with tap_end NAME, which prints the plan and the
# "NAME: N passed, N failed" line and returns non-zero on a failure.

pass=0
fail=0
n=0

ok() {
	n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"
}

not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"
}

skip() {
	n=$((n + 1)); echo "ok $n $1 # SKIP $2"
}

tap_check() {
	local desc="$1"

	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

tap_end() {
	echo "1..$n"
	echo "# $1: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
