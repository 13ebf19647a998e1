#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module unloads and loads again under programs with registered
# sections: rmmod while three waiting programs and two dlopen/dlclose
# loops run, and twice more insmod/rmmod while the loops go on; the
# programs keep working (map and unmap a library, fork) without the module,
# the debugfs directory and the device go and come back, a program started
# after the reload is registered, so are the ones that were already
# running (insmod scans them), and once every program has exited the
# stats show no process, section or byte left.  Leaves the module loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

waiters=""
churners=""
tmp=/tmp/registry_unload

all_alive() {
	local p

	for p in $waiters $churners; do
		kill -0 "$p" 2> /dev/null || { echo "# $p is gone"; return 1; }
	done
}

# work: every waiter maps and unmaps a library and forks once more.
work() {
	local p

	for p in $waiters; do
		grep -c '^work [0-9]* ok$' "$tmp.$p" > "$tmp.$p.n"
		kill -USR2 "$p"
	done
	for p in $waiters; do
		wait_until 100 did_work "$p" ||
			{ echo "# $p did no work:"; sed 's/^/#   /' "$tmp.$p"; return 1; }
	done
}

# did_work PID: PID reported one more "work K ok" than before.
did_work() {
	[ "$(grep -c '^work [0-9]* ok$' "$tmp.$1")" -gt "$(cat "$tmp.$1.n")" ]
}

registered() {
	listed_as "$1" "$bin/sfu_prog" elf &&
		listed_as "$1" "$lib/libsfu_a.so" elf
}

all_registered() {
	local p

	for p in $waiters; do
		registered "$p" || { echo "# $p is not registered"; return 1; }
	done
}

# cycle N: N times insmod, let the loops run, rmmod.
cycle() {
	local i=0

	while [ "$i" -lt "$1" ]; do
		insmod "$ko" test_hooks=1 && sleep 0.5 && rmmod sframe_unwind || return 1
		i=$((i + 1))
	done
}

empty() {
	[ "$(stat_of mms)" = 0 ] && [ "$(stat_of sections)" = 0 ] &&
		[ "$(stat_of memory_bytes)" = 0 ]
}

need_registry
for i in 1 2 3; do
	if start "$tmp.out" "$bin/sfu_prog" wait; then
		mv "$tmp.out" "$tmp.$started"
		waiters="$waiters $started"
	fi
done
for i in 1 2; do
	if start "$tmp.out" "$bin/sfu_prog" churn; then
		mv "$tmp.out" "$tmp.$started"
		churners="$churners $started"
	fi
done
check "3 waiting programs and 2 dlopen loops start" \
	[ "$(echo "$waiters" "$churners" | wc -w)" -eq 5 ]
check "the waiting programs are registered" all_registered

check "rmmod while they run" rmmod sframe_unwind
check "the debugfs directory is gone" [ ! -e "$dbg" ]
check "the device is gone" [ ! -e /dev/sframe_unwind ]
check "the programs still run" all_alive
check "without the module they map, unmap and fork" work
check "insmod and rmmod twice more while the loops run" cycle 2
check "the programs still run" all_alive

check "insmod again" insmod "$ko" test_hooks=1
check "the debugfs directory is back" [ -r "$dbg/sections" ]
check "the device is back" wait_until 50 [ -c /dev/sframe_unwind ]
check "the programs that were running are registered again" all_registered
if start "$tmp.out" "$bin/sfu_prog" wait; then
	new=$started
	mv "$tmp.out" "$tmp.$new"
	ok "a new program starts"
	check "the new program is registered" registered "$new"
	waiters="$waiters $new"
else
	not_ok "a new program starts"
fi
check "with the module back they map, unmap and fork" work

stopped=0
for p in $waiters $churners; do
	stop "$p" && stopped=$((stopped + 1))
done
check "every program exits 0" \
	[ "$stopped" -eq "$(echo "$waiters" "$churners" | wc -w)" ]
for p in $churners; do
	echo "# $p: $(grep churned "$tmp.$p")"
done
check "stats: no process, section or byte left" wait_until 50 empty
sed 's/^/# /' "$dbg/stats"
rm -f "$tmp".*
tap_exit
