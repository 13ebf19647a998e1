#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# BPF user stacks through SFrame: bpftrace's ustack, from a profile probe,
# with Debian's unmodified bpftrace (run in the guest with chroot /host,
# as perf_callchain.sh runs perf).  BPF takes a user stack with
# bpf_get_stackid()/bpf_get_stack(), which build it as perf's samples do,
# with perf_callchain_user(): the function the module redirects.
#   sfu_chain spin  with the module at least 95% of the stacks whose
#                   innermost frame is in the program reach main; without
#                   it fewer than 50% (frame pointers, which it lacks);
#   python3         Debian's own (no SFrame, no frame pointers), after
#                   "sframectl sync" gave its files sidecars: at least 90%
#                   of its stacks reach the C library's start of main
#                   (python3 is stripped: __libc_start_call_main), fewer
#                   than 50% before the sync (not on arm64, where
#                   Debian's code keeps frame records).
# Leaves the module loaded, without sidecars.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/bpf_ustack
prog=/tmp/sfu_chain		# in the chroot
ctl=/tmp/sframectl		# in the chroot
secs=4

# profile RUN PID: bpftrace counts the user stacks of PID for $secs
# seconds; each stack's count, then its frames, on one line in $out.RUN
# (a count alone for samples without a user frame: "@[]: N").
profile() {
	chroot /host timeout -s KILL 420 bpftrace -q -e \
		"profile:hz:499 /pid == $2/ { @[ustack] = count(); }
		interval:s:$secs { exit(); }" > "$out.$1.raw" 2> "$out.$1.err" || {
		sed 's/^/# bpftrace: /' "$out.$1.err" | head -5
		return 1
	}
	awk '/^@\[\]: [0-9]+/ { print $2; next }
	     /^@\[/ { s = ""; next }
	     /^\]: [0-9]+/ { print $2, s; next }
	     NF { f = $1; sub(/\+[0-9]+$/, "", f); s = s " " f }' \
		"$out.$1.raw" > "$out.$1"
	[ -s "$out.$1" ] && return 0
	echo "# $1: no stacks; bpftrace printed:"
	head -5 "$out.$1.err" "$out.$1.raw" | sed 's/^/#   /'
	return 1
}

# share RUN FIRST ROOT MIN MAX: of the samples whose innermost frame is
# FIRST (a regular expression), or that have no user frame at all (none
# reaches ROOT: s390x's kernel walks no user stack without the module),
# between MIN% (inclusive) and MAX% (exclusive) have a frame ROOT
# (another), and there are at least 50.
share() {
	local n k

	[ -s "$out.$1" ] || { echo "# $1: no stacks"; return 1; }
	read -r n k << EOF
$(awk -v first="$2" -v root="$3" '
	NF == 1 { n += $1; next }
	$2 !~ first { next }
	{ n += $1; for (i = 2; i <= NF; i++) if ($i ~ root) { k += $1; break } }
	END { print n + 0, k + 0 }' "$out.$1")
EOF
	echo "# $1: $n samples, $k reach ${3#^}"
	awk '{ print "# " $0 }' "$out.$1" | sort -t' ' -k2 -rn | head -3
	[ "$n" -ge 50 ] || return 1
	[ $((k * 100)) -ge $((n * $4)) ] && [ $((k * 100)) -lt $((n * $5)) ]
}

# The programs run until bpftrace is done (it may take minutes to start,
# and bpftrace 0.17 minutes to name the frames, under emulation), then are
# stopped; bpftrace names their frames before that.
long=600

# chain RUN: profile sfu_chain spinning.
chain() {
	local pid rc

	chroot /host "$prog" spin "$long" > "$out.$1.log" 2>&1 &
	pid=$!
	sleep 1
	profile "$1" "$pid"
	rc=$?
	kill "$pid"
	wait "$pid"
	return $rc
}

# python RUN [sync]: profile Debian's python3 computing, after "sframectl
# sync" when asked.
python() {
	local pid rc

	chroot /host /usr/bin/python3 -c "
import time
end = time.time() + $long
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
while time.time() < end:
    fib(15)" &
	pid=$!
	sleep 2
	if [ "${2:-}" = sync ]; then
		chroot /host "$ctl" sync > "$out.$1.sync" 2>&1 ||
			{ sed 's/^/# sframectl: /' "$out.$1.sync"; kill "$pid"; return 1; }
	fi
	profile "$1" "$pid"
	rc=$?
	kill "$pid"
	wait "$pid"
	return $rc
}

libc_main='^(main|__libc_start_call_main|__libc_start_main)$'

echo "TAP version 13"
grep -q ' /host 9p ' /proc/mounts ||
	skip_all "no bpftrace in this guest: no root file system at /host"
[ -x /host/usr/bin/bpftrace ] ||
	skip_all "bpftrace is not installed at /host"
echo "# $(chroot /host bpftrace --version) on $(uname -m) $(uname -r)"
cp "$dir/sfu_chain" "/host$prog"
cp /selftests/bin/sframectl "/host$ctl"

check "the module is loaded" load
check "bpftrace ustack of sfu_chain, with the module" chain with
check "with the module: >= 95% of the stacks reach main" \
	share with '^chain_' '^main$' 95 101
check "rmmod" unload
check "bpftrace ustack of sfu_chain, without the module" chain without
check "without the module: < 50% reach main" \
	share without '^chain_' '^main$' 0 50
check "bpftrace ustack of python3, without the module" python py_without
# Debian's arm64 code keeps frame records: frame pointers reach main.
if [ "$(uname -m)" = aarch64 ]; then
	share py_without . "$libc_main" 0 101
	skip "python3 without the module: < 50% reach main" \
		"Debian's arm64 python3 and libc keep frame records: frame pointers alone reach main"
else
	check "python3 without the module: < 50% reach main" \
		share py_without . "$libc_main" 0 50
fi
check "insmod" load
check "bpftrace ustack of python3 after sframectl sync" python py_sync sync
check "python3 after sync: >= 90% reach main" \
	share py_sync . "$libc_main" 90 101
# Unloading drops the sidecars, which later tests must not find.
check "rmmod (drops the sidecars)" unload
check "insmod" load
rm -f "/host$prog" "/host$ctl"
tap_end bpf_ustack
