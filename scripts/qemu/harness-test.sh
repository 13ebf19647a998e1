#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The QEMU harness's own tests: a harness that cannot fail proves nothing.
# Each case boots the x86-64 6.12 guest with something wrong in it and
# requires run.sh to fail with the right message:
#   - a selftest that fails,
#   - a test module whose init hits WARN_ON(1) (panic_on_warn=1),
#   - a guest that never powers off (short outer timeout).
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
run=$root/scripts/qemu/run.sh
out=$root/build/qemu/harness
# shellcheck source=scripts/tests/tap.sh
. "$root/scripts/tests/tap.sh"

expect_failure() {
	local name=$1 pattern=$2 log dir=$out-$((n + 1))
	shift 2
	log=$dir.log
	if "$run" x86_64 6.12 --out "$dir" "$@" > "$log" 2>&1; then
		not_ok "$name: run.sh passed"
	elif grep -q -- "$pattern" "$log"; then
		ok "$name: run.sh failed with \"$(grep -m1 -o -- "$pattern.*" "$log" | cut -c1-70)\""
	else
		not_ok "$name: run.sh failed without \"$pattern\""
		tail -5 "$log" | sed 's/^/# /'
	fi
}

echo "TAP version 13"
expect_failure "failing selftest" "not ok 1 selftests: sframe: harness_fail.sh" \
	--tests harness_fail.sh
expect_failure "WARN_ON in a module" "kernel reported a problem: .*WARNING" \
	--tests harness_warn.sh
expect_failure "hung guest" "guest hung" --tests module_load.sh --hang \
	--timeout 60
tap_end harness
