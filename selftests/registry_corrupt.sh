#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Programs and a library whose PT_GNU_SFRAME section is corrupt (patched
# copies of sfu_prog and libsfu_d.so made at build time by corrupt-sframe:
# bad magic, huge FDE count, FDE or FRE sub-section out of bounds, segment
# truncated below the header, and a function whose rows lie outside the
# FRE data, caught by the rule table's build and, for sections without
# one, when validate_fres is set) must still run and exit 0,
# their section must not be listed while the good libsfu_a.so of the same
# process is, and the kernel log must name the file in a
# "sframe_unwind: PATH: refused: REASON" line.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

# Lines the kernel logged about FILE being refused.
log_lines() {
	dmesg | grep -cF "sframe_unwind: $1: refused: "
}

# run_case NAME FILE COMMAND...: COMMAND maps FILE, which is refused.
run_case() {
	local name="$1" file="$2" out=/tmp/registry_corrupt.out pid r0 r1 l0

	shift 2
	r0=$(stat_of refused)
	l0=$(log_lines "$file")
	if ! start "$out" "$@"; then
		not_ok "$name: starts"
		return
	fi
	pid=$started
	ok "$name: starts"
	check "$name: its section is not listed" \
		[ "$(listed "$pid" "$file")" -eq 0 ]
	check "$name: libsfu_a.so of the same process is" \
		listed_as "$pid" "$lib/libsfu_a.so" elf
	check "$name: exits 0" stop "$pid"
	r1=$(stat_of refused)
	check "$name: refused counter grew ($r0 -> $r1)" [ "$r1" -gt "$r0" ]
	if [ "$(log_lines "$file")" -le "$l0" ]; then
		# The log is rate limited: wait out the window, map it again.
		echo "# $name: no log line yet, again after 5s"
		sleep 5
		"$@" > "$out" 2>&1 &
		pid=$!
		wait_for "$out" "^ready $pid\$" > /dev/null
		stop "$pid"
	fi
	dmesg | grep -F "sframe_unwind: $file: refused: " | tail -1 |
		sed 's/^/# /'
	check "$name: the kernel log names $file" \
		[ "$(log_lines "$file")" -gt "$l0" ]
}

need_registry
param=/sys/module/sframe_unwind/parameters/validate_fres
for k in magic nfdes fdeoff freoff trunc; do
	run_case "program, $k" "$bin/sfu_bad_$k" "$bin/sfu_bad_$k" wait
done
run_case "library, nfdes" "$lib/libsfu_bad_nfdes.so" \
	"$bin/sfu_prog" dlopen "$lib/libsfu_bad_nfdes.so"

# Rows outside the FRE data: a file's section is decoded whole into its
# rule table, which finds them; the full validation does too.
run_case "program, frefde (rule table)" "$bin/sfu_bad_frefde" \
	"$bin/sfu_bad_frefde" wait
saved=$(cat "$param" 2> /dev/null)
if [ -n "$saved" ] && echo Y > "$param" 2> /dev/null; then
	run_case "program, frefde (validate_fres=Y)" "$bin/sfu_bad_frefde" \
		"$bin/sfu_bad_frefde" wait
	echo "$saved" > "$param"
else
	skip "program, frefde" "validate_fres cannot be set"
fi
tap_exit
