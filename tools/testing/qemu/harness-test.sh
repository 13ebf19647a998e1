#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The QEMU harness's own tests: a harness that cannot fail proves nothing.
# Each case boots the x86-64 6.12 guest with something wrong in it and
# requires run.sh to fail with the right message:
#   - a selftest that fails,
#   - a test module whose init hits WARN_ON(1) (panic_on_warn=1), with
#     the warning's backtrace printed,
#   - a guest that never powers off (short outer timeout);
# and, on the host, that --stalls-ok's filter (stall-filter.awk) leaves
# out a stall report without a frame of the module and keeps one with.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
run=$here/run.sh
out=$root/build/qemu/harness
# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

# expect_failure NAME PATTERN ALSO RUN.SH-OPTIONS...: run.sh fails and
# prints PATTERN, and ALSO unless it is empty.
expect_failure() {
	local name=$1 pattern=$2 also=${3:-$2} log dir=$out-$((n + 1))
	shift 3
	log=$dir.log
	if "$run" x86_64 6.12 --out "$dir" "$@" > "$log" 2>&1; then
		not_ok "$name: run.sh passed"
	elif ! grep -q -- "$also" "$log"; then
		not_ok "$name: run.sh failed without \"$also\""
	elif grep -q -- "$pattern" "$log"; then
		ok "$name: run.sh failed with \"$(grep -m1 -o -- "$pattern.*" "$log" | cut -c1-70)\""
	else
		not_ok "$name: run.sh failed without \"$pattern\""
		tail -5 "$log" | sed 's/^/# /'
	fi
}

# stall_report FRAME: a console log with a soft lockup whose task was in
# FRAME.
stall_report() {
	printf '%s\n' "[ 9.0] sframe_unwind: loaded" \
		"[ 99.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [a:1]" \
		"[ 99.0] Modules linked in: sframe_unwind(OE)" \
		"[ 99.0] Call Trace:" "[ 99.0]  <TASK>" "[ 99.0]  $1" \
		"[ 99.0]  </TASK>" "[ 99.1] after"
}

# stall_case NAME FRAME KEPT: the filter keeps the report (KEPT 1) or
# leaves it out with a warning (0), and keeps the lines around it.
stall_case() {
	local got warn

	got=$(stall_report "$2" | awk -f "$here/stall-filter.awk" \
		2> "$out-stall.err")
	warn=$(grep -c '^# warning: guest stall outside the module' \
		"$out-stall.err")
	if [ "$(echo "$got" | grep -c 'soft lockup')" = "$3" ] &&
	   [ "$warn" = $((1 - $3)) ] && echo "$got" | grep -q after; then
		ok "stall filter: $1"
	else
		not_ok "stall filter: $1"
	fi
}

echo "TAP version 13"
mkdir -p "$(dirname "$out")"
stall_case "a stall in page zeroing is left out" \
	"clear_page_erms+0xb/0x20" 0
stall_case "a stall in the module is kept" \
	"sfu_unwind_user+0x10/0x200 [sframe_unwind]" 1
expect_failure "failing selftest" "not ok 1 selftests: sframe: harness_fail.sh" \
	"" --tests harness_fail.sh
expect_failure "WARN_ON in a module" "kernel reported a problem: .*WARNING" \
	"^#   .*Call Trace:" --tests harness_warn.sh
expect_failure "hung guest" "guest hung" "" --tests module_load.sh \
	--hang --timeout 60
tap_end harness
