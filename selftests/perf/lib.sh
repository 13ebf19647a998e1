# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC3043
# (busybox ash has local)
#
# Shared by the profiler selftests (perf_callchain.sh, ftrace_userstack.sh,
# trace_events.sh, sidecar_unwind.sh) and sframectl's (sframectl*.sh);
# installed as /selftests/perf/lib.sh, on top of /selftests/lib.sh:
# running Debian's programs at /host, waiting on sframectl daemon's log,
# the share of a recording's samples that reach main, and naming the
# frames of sfu_chain from the symbol table the build wrote.

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# shellcheck disable=SC2034  # used by the tests that source this
{
dir=/selftests/perf
# The chain of sfu_chain (selftests/perf/chain.c), innermost first.
chain="chain_leaf chain_d chain_c chain_b chain_a main"
# The user whose files and programs attack root's (as_user).
user_uid=1000
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

# share RUN [COMM]: "reaching total" over the samples of RUN whose
# command is COMM (default python3), those of the program's start not
# counted (root_share.awk says which).  Under TCG, with the files read
# over 9p, exec's registration can take half a second of s390x's runs,
# and the module's first-mapping wait lengthens ld.so's part.
share() {
	in_host perf script -i "/tmp/perf.$1.data" -F comm,pid,ip,sym,dso 2> /dev/null |
		awk -v want="^${2:-python3}" -f /selftests/perf/root_share.awk
}

# has_defer LOG: the kernel records deferred user stacks (6.19 and
# later: perf record --call-graph fp,defer) with the root's perf, and the
# module serves them (it redirects unwind_user()); perf's answer in LOG.
has_defer() {
	local rc=1

	[ "$(stat_of unwind_user_redirected)" = 1 ] &&
		in_host perf record -q --call-graph fp,defer -e cpu-clock \
			-o /tmp/perf.probe.data true > "$1" 2>&1 && rc=0
	rm -f /host/tmp/perf.probe.data
	return "$rc"
}

# record_prog RUN COMM CMD...: perf record -g of CMD in the chroot, to
# /tmp/perf.RUN.data there (its output in $out.RUN.log); prints
# "reaching total" over the samples of COMM.
record_prog() {
	local run=$1 comm=$2

	shift 2
	rm -f "/host/tmp/perf.$run.data"
	in_host perf record -q -e cpu-clock -F 499 -g \
		-o "/tmp/perf.$run.data" "$@" > "$out.$run.log" 2>&1 ||
		{ sed 's/^/# /' "$out.$run.log"; return 1; }
	share "$run" "$comm"
}

# openssl_record RUN SECONDS: record_prog of Debian's openssl speed
# sha512, whose libcrypto assembly realigns the stack (the module's SP
# word).
openssl_record() {
	record_prog "$1" openssl /usr/bin/openssl speed -seconds "$2" \
		-bytes 16384 sha512
}

# openssl_ok: the root has Debian's openssl and it is x86-64 code.
openssl_ok() {
	[ -x /host/usr/bin/openssl ] && [ "$(uname -m)" = x86_64 ]
}

# percent GOOD TOTAL: GOOD as a whole percentage of TOTAL.
percent() {
	[ "$2" -gt 0 ] && echo $(($1 * 100 / $2)) || echo 0
}

# at_least GOOD TOTAL P, at_most GOOD TOTAL P: GOOD against P% of TOTAL
# (not 0).
at_least() {
	[ "$2" -gt 0 ] && [ $(($1 * 100)) -ge $(($3 * $2)) ]
}

at_most() {
	[ "$2" -gt 0 ] && [ $(($1 * 100)) -le $(($3 * $2)) ]
}

# main_share_ok WHAT GOOD TOTAL P: print WHAT's share of samples that
# reach main; on x86-64 check that it is at least P%; elsewhere print it
# only, since perf names fewer of the other roots' frames (sframectl.sh).
main_share_ok() {
	echo "# $1: ${2:-0} of ${3:-0} reach main ($(percent "${2:-0}" "${3:-0}")%)"
	if [ "$(uname -m)" = x86_64 ]; then
		check "$1: at least $4% of the samples reach main" \
			at_least "${2:-0}" "${3:-0}" "$4"
	else
		skip "$1: at least $4% of the samples reach main" \
			"asserted on x86-64; here the share is printed (under TCG 87-96% were measured on s390x, short of it by stacks of frames perf cannot name)"
	fi
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

# exec_ms CMD...: wall milliseconds of CMD in the chroot (to 10 ms).
exec_ms() {
	local t0 t1

	t0=$(cut -d' ' -f1 /proc/uptime)
	in_host "$@" > /dev/null 2>&1
	t1=$(cut -d' ' -f1 /proc/uptime)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d\n", (b - a) * 1000 }'
}

# wait_ready FILE: FILE says "ready" within 30 s.
wait_ready() {
	local i=0

	while [ "$i" -lt 300 ] && ! grep -q '^ready' "$1"; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^ready' "$1"
}

# as_user CMD...: CMD in the chroot as uid $user_uid (1000), without
# groups.
as_user() {
	in_host /usr/bin/setpriv --reuid="$user_uid" --regid="$user_uid" \
		--clear-groups "$@"
}

# start_daemon [VAR=VALUE...]: sframectl daemon ($ctl in the chroot, with
# the cache $cache, and --child-timeout $child_timeout and --copy-max
# $copy_max if set), with
# VAR=VALUE in its environment, its log in $daemon_log and its pid in
# $daemon, once its first sync is done.
# shellcheck disable=SC2154  # ctl and cache are the test's
start_daemon() {
	env "$@" chroot /host "$ctl" daemon --cache "$cache" \
		${child_timeout:+--child-timeout "$child_timeout"} \
		${copy_max:+--copy-max "$copy_max"} \
		> "$daemon_log" 2>&1 &
	daemon=$!
	wait_log 600 "^sync: " || {
		sed 's/^/# daemon: /' "$daemon_log" | tail -5
		return 1
	}
}

stop_daemon() {
	kill -TERM "$daemon"
	wait "$daemon"
}

# need_host_sframectl: skip the whole test unless the guest shares a
# Debian root with perf and python3 at /host and sframectl was built.
need_host_sframectl() {
	grep -q ' /host 9p ' /proc/mounts ||
		skip_all "needs Debian's programs at /host (not shared into this guest: run.sh --no-hostfs)"
	[ -x /host/usr/bin/perf ] && [ -x /host/usr/bin/python3 ] ||
		skip_all "the root at /host has no perf or python3"
	[ -x "$dir/../bin/sframectl" ] ||
		skip_all "no sframectl was built for $(uname -m)"
}
