#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side runner, in the manner of kselftest's run_kselftest.sh: runs the
# tests named in /selftests/list in order and prints TAP 13.  A test exits
# 0 (pass), 4 (skip: it printed why) or anything else (fail); its own output
# is indented with "# ".  Each test gets at most $SFU_TEST_TIMEOUT seconds
# (default: settings' timeout=), or the seconds its list line names after
# it ("NAME SECONDS", from selftests/Makefile's timeouts).  Each runs in a
# session of its own: when one runs out of time, whatever it started
# (a daemon, a perf record) is killed with it, and cannot hold the
# module or the files of the tests after it.
KSFT_SKIP=4
cd /selftests || exit 1
timeout_s=${SFU_TEST_TIMEOUT:-$(sed -n 's/^timeout=//p' settings)}
timeout_s=${timeout_s:-120}

n=$(grep -c . list)
echo "TAP version 13"
echo "1..$n"
i=0
while read -r t secs; do
	[ -n "$t" ] || continue
	i=$((i + 1))
	limit=${secs:-$timeout_s}
	echo "# selftests: sframe: $t"
	# shellcheck disable=SC2016  # the inner shell's $$
	timeout "$limit" setsid sh -c 'echo $$ > "$0"; exec "$1"' \
		"/tmp/sid.$i" "./$t" > /tmp/out.$i 2>&1
	rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 143 ]; then
		kill -KILL -- "-$(cat "/tmp/sid.$i")" 2> /dev/null
		sleep 1
	fi
	sed 's/^/# /' /tmp/out.$i
	if [ "$rc" -eq 0 ]; then
		echo "ok $i selftests: sframe: $t"
	elif [ "$rc" -eq "$KSFT_SKIP" ]; then
		echo "ok $i selftests: sframe: $t # SKIP"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 143 ]; then
		echo "not ok $i selftests: sframe: $t # TIMEOUT ${limit}s"
	else
		echo "not ok $i selftests: sframe: $t # exit=$rc"
	fi
done < list
