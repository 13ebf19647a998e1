#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Python's own frames under unmodified perf: Debian's python3 (3.12 or
# later, the root at /host) runs with -X perf a known chain, fib <- leaf
# <- sorted() (C) <- middle <- outer <- <module>, and perf record -g (and
# --call-graph fp,defer where the kernel has deferred user stacks)
# samples it.  Each Python call runs through a trampoline in anonymous
# memory that perf names py::FUNCTION from /tmp/perf-PID.map; Debian's
# python3 has neither frame pointers nor SFrame, so sframectl daemon gives
# it sidecars.  Of the samples whose innermost Python frame is fib, the
# share whose stack holds the whole chain in order down to _start must be
# at least 98% with the module (a sample at any of a trampoline's
# instructions is stepped exactly), and is printed without it (where
# frame pointers give almost nothing on x86-64).  Leaves the module
# loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/python_perf
ctl=/tmp/sframectl_python	# in the root at /host
script=/tmp/python_perf.py	# likewise
cache=/tmp/python_perf.cache
python=/usr/bin/python3
secs=4
daemon_log=$out.daemon
daemon_pid=""
# The chain from the deepest function out, as perf names the trampolines.
pychain="py::fib py::leaf py::middle py::outer py::<module>"

perf() {
	chroot /host perf "$@"
}

write_script() {
	cat > "/host$script" << EOF
import time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def leaf(x):
    return fib(12) + x

def middle(xs):
    return sorted(xs, key=leaf)

def outer(secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        middle(list(range(8)))

outer($secs)
EOF
}

# record RUN [CALL-GRAPH]: perf record of the script; its samples as
# perf script prints them, innermost frame first, in $out.RUN.txt.
record() {
	if ! perf record -q -e cpu-clock -F 499 --call-graph "${2:-fp}" \
		-o "/tmp/python_perf.$1.data" "$python" -X perf "$script" \
		> "$out.$1.log" 2>&1; then
		sed 's/^/# /' "$out.$1.log"
		return 1
	fi
	perf script -i "/tmp/python_perf.$1.data" -F ip,sym,dso 2> /dev/null \
		> "$out.$1.txt"
	[ -s "$out.$1.txt" ]
}

# share RUN: "whole in_fib" over the samples whose innermost py:: frame
# is fib: whole ones hold the chain's py:: frames in order, a frame of
# C code between leaf and middle (sorted()), and _start after them.  The
# first sample in fib that is not whole goes to $out.RUN.miss.
chain_share() {
	rm -f "$out.$1.miss"
	awk -v chain="$pychain" -v miss="$out.$1.miss" '
		BEGIN { RS = ""; nc = split(chain, want, " ") }
		# perf names a trampoline py::FUNCTION:FILE.
		function is(sym, fn) {
			return index(sym, fn ":") == 1
		}
		function missed(sample) {
			if (!nmiss++)
				print sample > miss
		}
		{
			n = split($0, line, "\n")
			for (i = 1; i <= n; i++) {
				split(line[i], f, " ")
				sym[i] = f[2]
			}
			i = 1
			while (i <= n && sym[i] !~ /^py::/)
				i++
			if (i > n || !is(sym[i], want[1]))
				next
			infib++
			k = 1
			native = 0
			for (; i <= n && k <= nc; i++) {
				if (is(sym[i], want[k])) {
					if (k == 3 && !native)
						break
					k++
				} else if (k == 3 && sym[i] !~ /^py::/) {
					native = 1
				}
			}
			if (k <= nc) {
				missed($0)
				next
			}
			for (; i <= n; i++)
				if (sym[i] == "_start") {
					whole++
					next
				}
			missed($0)
		}
		END { print whole + 0, infib + 0 }' "$out.$1.txt"
}

# report RUN: the share, printed; "whole in_fib" into $out.RUN.share.
report() {
	local whole infib

	chain_share "$1" > "$out.$1.share"
	read -r whole infib < "$out.$1.share"
	echo "# $1: $whole of $infib samples in fib hold the whole chain to _start"
	[ ! -s "$out.$1.miss" ] || [ "$whole" -eq 0 ] || {
		echo "# $1: the first sample in fib without it:"
		sed 's/^/#   /' "$out.$1.miss"
	}
}

# enough RUN MIN: at least 50 samples in fib, MIN% of them whole.
enough() {
	local whole infib

	report "$1"
	read -r whole infib < "$out.$1.share"
	[ "$infib" -ge 50 ] && [ $((whole * 100)) -ge $((infib * $2)) ] && return 0
	awk 'BEGIN { RS = "" } /py::fib/ && n++ < 2' "$out.$1.txt" | sed 's/^/# /'
	return 1
}

# without: the module unloaded, frame pointers only; the share printed.
without() {
	unload || return 1
	record without fp || return 1
	report without
	load
}

start_daemon() {
	cp /selftests/bin/sframectl "/host$ctl" || return 1
	rm -rf "/host$cache"
	chroot /host "$ctl" daemon --cache "$cache" > "$daemon_log" 2>&1 &
	daemon_pid=$!
	wait_log 600 "^sync: "
}

# warm: one run, so that every file python3 maps has its sidecar; then
# until no new sidecar came for a few seconds.
warm() {
	local before

	chroot /host "$python" -X perf -c pass || return 1
	before=-1
	while [ "$before" != "$(stat_of sidecars)" ]; do
		before=$(stat_of sidecars)
		sleep 3
	done
	echo "# sidecars: $before"
	[ "$before" -gt 0 ]
}

has_defer() {
	[ "$(stat_of unwind_user_redirected)" = 1 ] &&
		perf record -q --call-graph fp,defer -e cpu-clock \
			-o /tmp/python_perf.probe true > "$out.probe" 2>&1
}

echo "TAP version 13"
[ -r "$dbg/stats" ] || skip_all "no $dbg/stats: the module is not loaded"
[ -x /selftests/bin/sframectl ] || skip_all "no sframectl was built for $(uname -m)"
chroot /host "$python" -X perf -c \
	'import sys; sys.exit(not sys.is_stack_trampoline_active())' \
	> "$out.xperf" 2>&1 ||
	skip_all "$(chroot /host "$python" -V 2>&1) has no -X perf trampoline on $(uname -m): $(tail -1 "$out.xperf")"
write_script

check "perf record -g of python3 -X perf, without the module" without
check "sframectl daemon starts and syncs" start_daemon
check "a first run gives python3's files their sidecars" warm
check "perf record -g with the module" record with
check "-g with the module: >= 98% of fib's samples hold the chain" enough with 98
if has_defer; then
	check "perf record --call-graph fp,defer with the module" record defer fp,defer
	check "fp,defer: >= 98% of fib's samples hold the chain" enough defer 98
else
	echo "# no deferred user stacks here ($(uname -r)): $(tail -1 "$out.probe")"
fi
kill "$daemon_pid" 2> /dev/null
wait "$daemon_pid"
rm -rf "/host$cache" "/host$ctl" "/host$script"
tap_exit
