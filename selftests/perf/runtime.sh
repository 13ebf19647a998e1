# SPDX-License-Identifier: GPL-2.0
#
# runtime.sh - what the tests of interpreters and JITs share
# (python_perf.sh, node_perf.sh): a runtime runs a program whose chain of
# functions is known, under unmodified perf record, without the module
# and with it and sframectl daemon; of the samples taken in the chain's
# deepest function, the share whose stack holds the whole chain in order
# and reaches the native root (chain_share.awk).
#
# Sourced after perf/lib.sh; the test sets
#   out     the prefix of its files in the guest
#   tag     the prefix of its files in the root at /host (/tmp/TAG.*)
#   run     the runtime's command line, run in the root at /host
#   lang    py, js or java: how perf names the runtime's functions
#   chain   the chain's functions, deepest first
#   native  the chain's position with a native frame below it (0: none)
#   roots   the names of the native root, a regex alternation
# shellcheck shell=sh disable=SC2154,SC3043  # the test's variables; ash has local

rt_ctl=/tmp/sframectl_runtime	# in the root at /host
rt_cache=/tmp/sframectl_runtime.cache
rt_child_timeout=900
rt_dwarf_secs=240
daemon_log=$out.daemon
rt_daemon=""

rt_perf() {
	chroot /host perf "$@"
}

# rt_record RUN [CALL-GRAPH [HZ [SECS]]]: perf record of $run; its
# samples as perf script prints them, innermost frame first, in
# $out.RUN.txt; with SECS, perf script has that long at most (2: it took
# longer).
rt_record() {
	local rc=0

	# shellcheck disable=SC2086  # $run is a command line
	if ! rt_perf record -q -e cpu-clock -F "${3:-499}" --call-graph "${2:-fp}" \
		-o "/tmp/$tag.$1.data" $run > "$out.$1.log" 2>&1; then
		sed 's/^/# /' "$out.$1.log" | tail -20
		return 1
	fi
	# busybox's timeout: 143 when it ran out (0 would mean at once).
	${4:+timeout "$4"} chroot /host perf script -i "/tmp/$tag.$1.data" \
		-F ip,sym,dso 2> /dev/null > "$out.$1.txt" || rc=$?
	rm -f "/host/tmp/$tag.$1.data"
	[ "$rc" -ne 143 ] || return 2
	[ -s "$out.$1.txt" ]
}

# rt_report RUN: the share, printed; "whole counted" in $out.RUN.share,
# and the first sample in the deepest function that is not whole.
rt_report() {
	local whole counted all deepest=${chain%% *}

	rm -f "$out.$1.miss"
	awk -v lang="$lang" -v chain="$chain" -v native="$native" \
		-v roots="$roots" -v miss="$out.$1.miss" \
		-f /selftests/perf/chain_share.awk "$out.$1.txt" \
		> "$out.$1.share"
	read -r whole counted < "$out.$1.share"
	all=$(awk 'BEGIN { RS = "" } END { print NR }' "$out.$1.txt")
	echo "# $1: $whole of $counted samples in $deepest hold the whole chain to the root ($all in all)"
	[ ! -s "$out.$1.miss" ] || [ "$whole" -eq 0 ] || {
		echo "# $1: the first sample in $deepest without it:"
		sed 's/^/#   /' "$out.$1.miss"
	}
	[ "$counted" -gt 0 ] || {
		echo "# $1: none in $deepest; the first sample:"
		awk 'BEGIN { RS = "" } NR == 1 { print; exit }' "$out.$1.txt" |
			head -12 | sed 's/^/#   /'
	}
}

# rt_enough RUN MIN: at least 50 samples in the deepest function, MIN%
# of them whole.
rt_enough() {
	local whole counted

	rt_report "$1"
	read -r whole counted < "$out.$1.share"
	[ "$counted" -ge 50 ] && [ $((whole * 100)) -ge $((counted * $2)) ] &&
		return 0
	[ -s "$out.$1.miss" ] || head -40 "$out.$1.txt" | sed 's/^/# /'
	rt_export "$1"
	return 1
}

# rt_export RUN: the samples of RUN, and the daemon's log, to
# /export/runtime/ for the host
# (tools/testing/qemu/run.sh --out DIR: DIR/export/), where the guest has it.
rt_export() {
	[ -d /export ] || return 0
	mkdir -p /export/runtime
	cp "$out.$1.txt" "/export/runtime/$tag-$1.txt"
	cp "$daemon_log" "/export/runtime/$tag-daemon.log" 2> /dev/null
	echo "# $1: its samples are in export/runtime/$tag-$1.txt"
}

# rt_without: the module unloaded, frame pointers only; the share printed.
rt_without() {
	unload || return 1
	rt_record without fp || return 1
	rt_report without
	load
}

# rt_dwarf: perf's own unwinder, the one users would otherwise pick:
# --call-graph dwarf copies each sample's stack for perf script to unwind
# by the files' .eh_frame, which has no rows for a runtime's generated
# code.  The share is printed beside the module's; it is a reference, not
# a check.  A fifth of the others' rate: each sample copies 8 KiB, and
# perf script unwinds them all, which under TCG, beside another guest,
# took Debian 12's perf past the test's whole time with Node.js: it has
# $rt_dwarf_secs (2: it took longer).
rt_dwarf() {
	rt_record dwarf dwarf 99 "$rt_dwarf_secs" || return
	rt_report dwarf
}

# rt_has_dwarf: perf record --call-graph dwarf works here (in the arm64
# 7.x guest Debian 13's perf cannot open the event: EOPNOTSUPP); why
# not, in $out.dwarf.probe.
rt_has_dwarf() {
	rt_perf record -q --call-graph dwarf -e cpu-clock \
		-o "/tmp/$tag.probe" true > "$out.dwarf.probe" 2>&1
}

# rt_start_daemon: sframectl daemon with a cache of its own, synced.  A
# runtime's library is large (Debian's libnode: 50 MB, 400,000 rows):
# under TCG its section may take minutes to make, longer than the
# daemon's default deadline for it.
rt_start_daemon() {
	cp /selftests/bin/sframectl "/host$rt_ctl" || return 1
	rm -rf "/host$rt_cache"
	chroot /host "$rt_ctl" daemon --cache "$rt_cache" \
		--child-timeout "$rt_child_timeout" > "$daemon_log" 2>&1 &
	rt_daemon=$!
	wait_log 600 "^sync: "
}

rt_stop_daemon() {
	kill "$rt_daemon" 2> /dev/null
	wait "$rt_daemon"
	rm -rf "/host$rt_cache" "/host$rt_ctl"
}

# rt_warm CMD...: one run of CMD in the root, so that every file the
# runtime maps has its sidecar; then until neither the sidecars nor the
# daemon's log changed for 10 s (its workers are done).  What the daemon
# could not make is printed.
rt_warm() {
	local before=-1 log=""

	chroot /host "$@" > "$out.warm" 2>&1 || {
		sed 's/^/# /' "$out.warm" | tail -5
		return 1
	}
	while [ "$before" != "$(stat_of sidecars)" ] ||
	      [ "$log" != "$(wc -c < "$daemon_log")" ]; do
		before=$(stat_of sidecars)
		log=$(wc -c < "$daemon_log")
		sleep 10
	done
	echo "# sidecars: $before"
	grep "^sframectl: " "$daemon_log" | sed 's/^/# daemon: /' | tail -5
	[ "$before" -gt 0 ]
}

# rt_checks MIN: the runs and their checks, with and without the module.
rt_checks() {
	local rc
	check "perf record -g, without the module" rt_without
	check "sframectl daemon starts and syncs" rt_start_daemon
	# shellcheck disable=SC2086  # $run is a command line
	check "a first run gives the runtime's files their sidecars" rt_warm $run
	check "perf record -g with the module" rt_record with
	check "-g with the module: >= $1% of the samples in ${chain%% *} hold the chain" \
		rt_enough with "$1"
	if rt_has_dwarf; then
		rc=0
		rt_dwarf || rc=$?
		if [ "$rc" -eq 2 ]; then
			skip "perf record --call-graph dwarf, for reference" \
				"perf script took longer than $rt_dwarf_secs s to unwind"
		else
			check "perf record --call-graph dwarf, for reference" \
				[ "$rc" -eq 0 ]
		fi
	else
		skip "perf record --call-graph dwarf, for reference" \
			"$(grep -v '^ *$' "$out.dwarf.probe" | tail -1)"
	fi
	if has_defer "$out.probe"; then
		check "perf record --call-graph fp,defer with the module" \
			rt_record defer fp,defer
		check "fp,defer: >= $1% of the samples in ${chain%% *} hold the chain" \
			rt_enough defer "$1"
	else
		echo "# no deferred user stacks here ($(uname -r))"
	fi
	rt_stop_daemon
	rm -f "/host/tmp/$tag.probe"
}
