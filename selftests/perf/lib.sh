# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC3043
# (busybox ash has local)
#
# Shared by the profiler selftests (perf_callchain.sh, ftrace_userstack.sh,
# trace_events.sh, sidecar_unwind.sh) and sframectl's (sframectl*.sh);
# installed as /selftests/perf/lib.sh, on top of /selftests/lib.sh:
# running Debian's programs at /host, waiting on sframectl daemon's log,
# and naming the frames of sfu_chain from the symbol table the build
# wrote.

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# shellcheck disable=SC2034  # used by the tests that source this
{
dir=/selftests/perf
# The chain of sfu_chain (selftests/perf/chain.c), innermost first.
chain="chain_leaf chain_d chain_c chain_b chain_a main"
}

# in_host CMD...: CMD in the root at /host (Debian's programs, perf).
in_host() {
	chroot /host "$@"
}

# perf_flamegraph DIR NAME: perf's flame graph report (perf script report
# flamegraph) of DIR/perf.data in the root at /host, with the template at
# /tmp/flamegraph-template.html there, to DIR/NAME.html.  The template's
# option reaches the script in the one form perf 6.1's report wrapper and
# 7.x's (which hands its options to perf script) both take; it runs in
# DIR for the report's header.
perf_flamegraph() {
	in_host sh -c "cd $1 && perf script -s \
		\"\$(perf --exec-path)/scripts/python/flamegraph.py\" -- \
		--template /tmp/flamegraph-template.html -o $2.html"
}

# wait_log TENTHS REGEX [COUNT]: within TENTHS tenths of a second, the
# daemon's log ($daemon_log, by default $out.daemon) has COUNT lines
# matching REGEX (default 1).
wait_log() {
	local i=0 log="${daemon_log:-$out.daemon}"

	while [ "$i" -lt "$1" ]; do
		[ "$(grep -cE "$2" "$log")" -ge "${3:-1}" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# The awk function hex(s): the value of a hexadecimal string, with or
# without 0x (exact below 2^53, which user addresses are).
# shellcheck disable=SC2034  # used by the tests that source this
awk_hex='
function hex(s,   i, c, n) {
	s = tolower(s)
	sub(/^0x/, "", s)
	n = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		if (!c)
			break
		n = n * 16 + c - 1
	}
	return n
}'

# The awk function sym(a): the function of sfu_chain that address a is in,
# "?" outside them; needs the symbol table (nm -S) read first with
# read_syms() into st[], en[], nm[], ns.
# shellcheck disable=SC2034  # used by the tests that source this
awk_sym='
function read_syms(file,   line, f) {
	ns = 0
	while ((getline line < file) > 0) {
		if (split(line, f, " ") < 4)
			continue
		st[ns] = hex(f[1])
		en[ns] = st[ns] + hex(f[2])
		nm[ns] = f[4]
		ns++
	}
	close(file)
}
function sym(a,   i) {
	for (i = 0; i < ns; i++)
		if (a >= st[i] && a < en[i])
			return nm[i]
	return "?"
}'
