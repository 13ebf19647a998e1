#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# JavaScript frames under unmodified perf: Debian's Node.js (the root at
# /host) runs with --perf-basic-prof --interpreted-frames-native-stack a
# known chain, fib <- leaf <- Array.prototype.sort (V8's builtins,
# native code of libnode) <- middle <- outer, and perf record -g (and
# --call-graph fp,defer where the kernel has deferred user stacks)
# samples it (with --no-turbo-inlining, so that each of the chain's
# functions keeps a frame of its own).  V8 names its code in
# /tmp/perf-PID.map (JS:~fib, JS:*fib by tier) and keeps frame records
# in it; Debian's node and libnode have neither frame pointers nor
# SFrame, so sframectl daemon gives them sidecars, and the walk steps
# V8's frames by their records.  Of the samples whose innermost
# JavaScript frame is fib, the share whose stack holds the whole chain
# in order down to the C library's start of main must be at least 98%
# with the module, and is printed without it.
# Leaves the module loaded.

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/node_perf
tag=node_perf
script=/tmp/node_perf.js	# in the root at /host
secs=4
run="/usr/bin/node --perf-basic-prof --interpreted-frames-native-stack"
# Each of the chain's functions its own frame: V8's optimising compiler
# would inline middle into outer.
run="$run --no-turbo-inlining $script"
lang=js
# The chain from the deepest function out, the sort's builtins below leaf.
chain="fib leaf middle outer"
native=3
roots="_start|__libc_start_call_main|__libc_start_main"
# shellcheck source=selftests/perf/runtime.sh
. /selftests/perf/runtime.sh

write_script() {
	cat > "/host$script" << EOF
'use strict';

function fib(n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function leaf(a, b) {
	return (fib(12) & 0) + a - b;
}

function middle(xs) {
	return xs.sort(leaf);
}

function outer(secs) {
	const end = Date.now() + secs * 1000;

	while (Date.now() < end)
		middle([5, 3, 7, 1, 6, 2, 8, 4]);
}

outer($secs);
EOF
}

echo "TAP version 13"
[ -x /selftests/bin/sframectl ] || skip_all "no sframectl was built for $(uname -m)"
[ -x /host/usr/bin/node ] || skip_all "the root at /host has no node"
check "the module is loaded" load
echo "# $(chroot /host /usr/bin/node --version 2>&1) ($(chroot /host \
	dpkg-query -W -f='${Package} ${Version}' nodejs 2> /dev/null))"
write_script
rt_checks 98
rm -f "/host$script" /host/tmp/perf-*.map
tap_exit
