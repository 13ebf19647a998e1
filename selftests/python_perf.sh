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

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/python_perf
tag=python_perf
script=/tmp/python_perf.py	# in the root at /host (perf/chain.py)
secs=4
run="/usr/bin/python3 -X perf $script $secs"
lang=py
# The chain from the deepest function out, sorted()'s C code below leaf.
chain="fib leaf middle outer <module>"
native=3
roots=_start
# shellcheck source=selftests/perf/runtime.sh
. /selftests/perf/runtime.sh

echo "TAP version 13"
[ -x /selftests/bin/sframectl ] || skip_all "no sframectl was built for $(uname -m)"
chroot /host /usr/bin/python3 -X perf -c \
	'import sys; sys.exit(not sys.is_stack_trampoline_active())' \
	> "$out.xperf" 2>&1 ||
	skip_all "$(chroot /host /usr/bin/python3 -V 2>&1) has no -X perf trampoline on $(uname -m): $(tail -1 "$out.xperf")"
check "the module is loaded" load
cp /selftests/perf/chain.py "/host$script"
rt_checks 98
rm -f "/host$script"
tap_exit
