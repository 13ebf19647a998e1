#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sframectl gives Debian's own programs (which have neither SFrame nor
# frame pointers) complete user stacks, with no rebuild.  Runs the host's
# unmodified python3 and perf in the chroot /host (the host's root on
# x86-64, a Debian root of the guest's architecture elsewhere):
#   before        perf record -g of CPU-bound pure Python: almost no
#                 sample's stack reaches python3's main (at most 20%; the
#                 test can fail).  Debian's python3 is stripped, so perf
#                 names main only through its callers in libc: a stack
#                 reaches main if it has main, __libc_start_call_main or
#                 (where perf cannot name that one: libc without debug
#                 symbols, as on arm64) __libc_start_main.
#   running       a python3 started before any sidecar exists; "sframectl
#                 sync" registers every executable file it maps, and the
#                 module applies them to the running process (sframectl
#                 list -p shows python3 and libc as sidecars, and so
#                 does list -p --json, read by python3's json)
#   after         the same perf record: at least 95% of the samples reach
#                 main
#   ftrace        python3 calls getppid(): ftrace's userstacktrace (8
#                 frames, FTRACE_STACK_ENTRIES) has libc's wrapper and then
#                 python3's frames; the module's own stack event of the
#                 same calls (request_at on the system call) goes on
#                 through python3's main into libc's start code
#   listing       list --sidecars --json names libc's build-id; del
#                 --build-id drops it
#   errors        without privileges, and without the module, sframectl
#                 says what to do
#   daemon        sframectl daemon follows new mappings: a python3 run it
#                 sees for the first time (cold, reported), then, once
#                 the daemon's workers are done, a second run: at least
#                 95% reach main; rmmod works under it, and
#                 after insmod it turns its event on again, takes the
#                 sections from its cache, and the runs reach main again;
#                 SIGTERM stops it cleanly
#   programs      Debian's perl, gzip and bash, CPU-bound, recorded before
#                 any sidecar (at most 20% reach main) and with the daemon:
#                 a first (cold, reported) and a second run, at least 95%
#                 (asserted on x86-64, printed elsewhere)
#   openssl       x86-64: Debian's openssl speed sha512, whose libcrypto
#                 assembly realigns the stack (CFA = *(rsp+N)+8, the
#                 module's SP word): printed before any sidecar, and with
#                 the daemon a second run reaches main in at least 99%
#   copies        two copies of gzip (one build-id): both get sidecars,
#                 the section is kept once (stats: sidecars_sharing)
#   racing        processes load and unload a library (and one loads it
#                 and keeps it) while add --replace and del run on it again
#                 and again: the holder ends with the sidecar, the module's
#                 memory goes back to where it was, nothing warns; the
#                 daemon restarted finds every file registered already; a
#                 daemon stopped while its ring buffer overflows reports
#                 the lost events when it goes on, and syncs
#   failures      a program without .eh_frame fails once and is not tried
#                 again when it runs again, but is once it changes
#   cache         a read-only cache directory (the root at /host is
#                 read-only) is reported and sync goes on without it; the
#                 daemon's cache holds libc's section under its build-id;
#                 a corrupted entry is found, removed and made again;
#                 --cache-max bounds the directory
# Leaves the module loaded and no sidecar registered.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sframectl
ctl=/tmp/sframectl		# in the chroot
daemon_log=$out.daemon		# for wait_log
script=/tmp/sfu_fib.py		# in the chroot
python=/usr/bin/python3		# Debian's, not a wrapper the PATH may name
secs=3
# Under s390x's emulation python3's start (exec, ld.so, imports: samples
# that cannot reach main yet) takes seconds; a longer run keeps it small.
# perl, gzip and bash: longer runs, so that their start (exec, ld.so,
# files read over 9p under TCG), before main, stays a small share.
psecs=6
[ "$(uname -m)" = s390x ] && secs=12 psecs=8

# record RUN: perf record -g of the Python loop; prints "reaching total".
record() {
	rm -f "/host/tmp/perf.$1.data"
	in_host perf record -q -e cpu-clock -F 499 -g \
		-o "/tmp/perf.$1.data" "$python" "$script" "$secs" \
		> "$out.$1.log" 2>&1 || { sed 's/^/# /' "$out.$1.log"; return 1; }
	share "$1"
}

# has_workers: the daemon has a worker (a child) registering a file.
has_workers() {
	grep -qs "^[0-9]* ([^)]*) . $daemon " /proc/[0-9]*/stat
}

# daemon_idle: wait (up to 120 s) until the daemon has had no worker for
# three seconds in a row, that is has registered what the run before
# mapped.  A second run is meant to find the sidecars of the first; a
# loaded TCG host (two other guests beside) once had python3's second
# run start while the first one's libraries were still being made.
daemon_idle() {
	local i quiet=0

	for i in $(seq 120); do
		if has_workers; then
			quiet=0
		else
			quiet=$((quiet + 1))
			[ "$quiet" -lt 3 ] || return 0
		fi
		sleep 1
	done
	echo "# the daemon still had workers after 120 s"
	return 1
}

# Debian's perl, gzip and bash, each busy in its own code for $secs.
perl_run() {
	record_prog "$1" perl /usr/bin/perl -e \
		'sub f { my $n = shift; $n < 2 ? $n : f($n - 1) + f($n - 2) }
		 my $end = time + $ARGV[0]; f(16) while time < $end' "$psecs"
}

gzip_run() {
	# One long gzip: its start (exec, ld.so), which no stack that reaches
	# main can cover, stays a small share.
	record_prog "$1" gzip /bin/sh -c \
		'timeout "$1" /bin/gzip -9 -c /tmp/sfu_data > /dev/null; exit 0' \
		sh "$psecs"
}

# OpenSSL's SHA-512, in libcrypto's own assembly: its CFA is the entry
# stack pointer the function saved in its realigned frame, plus 8 (the
# module's SP word).
openssl_run() {
	openssl_record "$1" "$psecs"
}

bash_run() {
	# shellcheck disable=SC2016  # for the recorded bash
	record_prog "$1" bash /bin/bash -c \
		'end=$((SECONDS + $1)); i=0; while [ "$SECONDS" -lt "$end" ]; do
			i=$((i + 1)); done' bash "$psecs"
}

# ftrace_python: python3 calls getppid() 20 times under ftrace, with
# userstacktrace on and the module's request_at on the system call; then
# every stack is written as one letter per frame, L in libc, P in python3,
# O elsewhere mapped, ? not mapped (from python3's own maps), to
# $out.ustack (userstacktrace) and $out.ustack.ev (the module's event).
ftrace_python() {
	local fn pid

	fn=$(awk '$3 ~ /^(__x64_sys_getppid|__arm64_sys_getppid|__s390x_sys_getppid|__se_sys_getppid)$/ { print $3; exit }' /proc/kallsyms)
	[ -n "$fn" ] || { echo "# no getppid system call function"; return 1; }
	echo > "$tracefs/trace"
	echo 1 > "$tracefs/options/userstacktrace"
	echo "$fn" > "$dbg/request_at" || return 1
	echo 1 > "$tracefs/events/sframe_unwind/sframe_unwind_stack/enable"
	echo 1 > "$tracefs/events/sframe_unwind/sframe_unwind_request/enable"
	in_host "$python" -c '
import os, sys
print(os.getpid(), flush=True)
for i in range(20):
    os.getppid()
sys.stdout.write(open("/proc/self/maps").read())' > "$out.ftrace.run"
	echo none > "$dbg/request_at"
	echo 0 > "$tracefs/events/sframe_unwind/enable"
	echo 0 > "$tracefs/options/userstacktrace"
	pid=$(head -1 "$out.ftrace.run")
	awk -v pid="$pid" "$awk_hex"'
		function cls(a,   i) {
			for (i = 0; i < n; i++)
				if (a >= lo[i] && a < hi[i])
					return what[i]
			return "?"
		}
		function flush() {
			if (on && k)
				print s > ustack
			on = k = 0
			s = ""
		}
		BEGIN { n = 0; ustack = ARGV[3] ".ustack"; ev = ARGV[3] ".ustack.ev"; ARGV[3] = "" }
		FNR == NR {
			if (FNR == 1 || NF < 6)
				next
			split($1, r, "-")
			lo[n] = hex(r[1]); hi[n] = hex(r[2])
			what[n] = $6 ~ /\/libc\.so\.6$/ ? "L" : $6 ~ /\/python3[.0-9]*$/ ? "P" : "O"
			n++
			next
		}
		/<user stack trace>/ { flush(); on = ($1 ~ ("-" pid "$")); next }
		/^ => / {
			v = $0
			if (on && sub(/.*</, "", v) && sub(/>.*/, "", v)) {
				s = s cls(hex(v)); k++
			}
			next
		}
		{ flush() }
		/sframe_unwind_stack: / && $1 ~ ("-" pid "$") {
			v = $0
			sub(/.* pcs=\{/, "", v); sub(/\}.*/, "", v)
			t = ""
			m = split(v, p, ",")
			for (i = 1; i <= m; i++)
				t = t cls(hex(p[i]))
			print t > ev
		}
		END { flush() }' "$out.ftrace.run" "$tracefs/trace" "$out"
	touch "$out.ustack" "$out.ustack.ev"
	sort "$out.ustack" | uniq -c | sed 's/^ */# userstacktrace: /'
	sort "$out.ustack.ev" | uniq -c | sed 's/^ */# module event: /'
	# What the letters were made from, when python3's frames went unnamed.
	if grep -q '^L?' "$out.ustack.ev"; then
		grep -E 'python3|libc' "$out.ftrace.run" | sed 's/^/# maps: /'
		grep -m1 "sframe_unwind_stack: " "$tracefs/trace" | sed 's/^/# event: /'
	fi
}

# matching FILE REGEX: "matching total" over the lines of FILE.
matching() {
	echo "$(grep -cE "$2" "$1") $(grep -c . "$1")"
}

# race_maps SECS: python3 loads /tmp/sfu_target.so (a copy of libz) and
# unloads it again (dlopen, dlclose) and again for SECS.
race_maps() {
	in_host "$python" -c '
import ctypes, _ctypes, sys, time
end = time.time() + float(sys.argv[1])
while time.time() < end:
    _ctypes.dlclose(ctypes.CDLL("/tmp/sfu_target.so")._handle)' "$1"
}

# race_add N: add --replace and del of /tmp/sfu_target.so, N times each.
race_add() {
	local i=0

	while [ "$i" -lt "$1" ]; do
		in_host "$ctl" add --replace /tmp/sfu_target.so > /dev/null 2>&1
		in_host "$ctl" del /tmp/sfu_target.so > /dev/null 2>&1
		i=$((i + 1))
	done
}

# mapped PID FILE: wait (up to 60 s) until PID maps FILE.
mapped() {
	local i=0

	while [ "$i" -lt 600 ]; do
		grep -q "$2\$" "/proc/$1/maps" 2> /dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# holder_has_sidecar PID: PID's mapping of /tmp/sfu_target.so is a
# sidecar.
holder_has_sidecar() {
	in_host "$ctl" list -p "$1" > "$out.holder" 2>&1
	grep -Eq ' sidecar .*/sfu_target\.so$' "$out.holder" && return 0
	sed 's/^/# holder: /' "$out.holder"
	return 1
}

# shared_once: two sidecars, one using the other's bytes, counted once.
shared_once() {
	local bytes

	bytes=$(sed -n 's/.*registered \([0-9]*\) bytes.*/\1/p' "$out.copies" | head -1)
	grep -E "^(sidecars|sidecar_bytes|sidecars_sharing) " "$dbg/stats" | sed 's/^/# /'
	[ "$(stat_of sidecars)" -eq 2 ] &&
		[ "$(stat_of sidecars_sharing)" -eq 1 ] &&
		[ "$(stat_of sidecar_bytes)" -eq "${bytes:-0}" ]
}

# mem_back BYTES: within 5 seconds the module's memory is back to BYTES,
# give or take a map array that another process's registry reallocated
# meanwhile (at most 1 KiB); a sidecar (6 KiB and up) or a region per
# mapping of the race left behind would be more.
mem_back() {
	local i=0 m

	while [ "$i" -lt 50 ]; do
		m=$(stat_of memory_bytes)
		[ "$m" -le $(($1 + 1024)) ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "# module memory: $1 bytes before the race, $m after"
	grep -E "^(mms|sections|sidecars|sidecar_bytes) " "$dbg/stats" | sed 's/^/# /'
	return 1
}

# lost_and_synced: the daemon reported lost events and synced.
lost_and_synced() {
	wait_log 300 "^daemon: events lost; syncing" &&
		wait_log 300 "^sync: " 2
}

daemon_resumed() {
	wait_log 300 "module present" 2 && return 0
	sed 's/^/# daemon: /' "$out.daemon" | grep -v "registered" | tail -8
	return 1
}

eval_stopped() {
	[ "$1" -eq 0 ] && [ ! -d /host/sys/kernel/tracing/instances/sframectl ]
}

listed_json() {
	[ -n "$1" ] && in_host "$ctl" list --sidecars --json > "$out.json" &&
		grep -q "\"build_id\": \"$1\"" "$out.json"
}

# listed_pid_json PID: list -p PID --json parses and has libc's sidecar.
listed_pid_json() {
	in_host "$ctl" list -p "$1" --json | in_host /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(not any(e["source"] == "sidecar" and "/libc.so" in e["path"] and
		 e["end"] > e["start"] and e["fdes"] > 0 for e in d))'
}

not_listed() {
	in_host "$ctl" list --sidecars > "$out.sidecars" &&
		! grep -q "build-id $1\$" "$out.sidecars"
}

synced() {
	in_host "$ctl" sync --cache /var/cache/sframe-unwind > "$out.sync" 2>&1
}

# failed_times N: the daemon said N times that sfu_noeh has no section.
failed_times() {
	wait_log 50 "sfu_noeh: no section made" "$1" &&
		[ "$(grep -c "sfu_noeh: no section made" "$out.daemon")" -eq "$1" ]
}

# run_noeh: run the program without .eh_frame; wait until it is gone.
run_noeh() {
	in_host /tmp/sfu_noeh
}

cache_loaded() {
	wait_log 300 "^cache /tmp/sfu-cache: [1-9][0-9]* sections loaded"
}

# cache_bounded DIR BYTES: DIR holds entries, and at most BYTES of them.
cache_bounded() {
	local n total

	n=$(find "$1" -name '*.sframe' | wc -l)
	total=$(find "$1" -name '*.sframe' -exec cat {} + | wc -c)
	echo "# $1: $n entries, $total bytes"
	[ "$n" -ge 1 ] && [ "$total" -le "$2" ]
}

resync_finds_all() {
	in_host "$ctl" sync | grep -q "^sync: 0 files registered, [1-9]"
}

refused_as_nobody() {
	in_host /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$ctl" add "$python" > "$out.nobody" 2>&1
	sed 's/^/# /' "$out.nobody"
	grep -q "run as root" "$out.nobody"
}

need_host_sframectl
load || { not_ok "insmod"; tap_end sframectl; exit 1; }
cp "$dir/../bin/sframectl" "/host$ctl"
cat > "/host$script" << 'EOF'
import sys, time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def main():
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        fib(18)

if __name__ == "__main__":
    main()
EOF

# shellcheck disable=SC2046
set -- $(record before)
before_good=${1:-0} before_total=${2:-0}
echo "# before: $before_good of $before_total python3 samples reach main ($(percent "$before_good" "$before_total")%)"
# Debian's arm64 code keeps frame records, so the kernel's frame-pointer
# walk already gets there: no difference for the sidecars to show.
if [ "$(uname -m)" = aarch64 ]; then
	skip "before sframectl: at most 20% of python3's samples reach main" \
		"Debian's arm64 python3 and libc keep frame records: frame pointers alone reach main"
else
	check "before sframectl: python3 is recorded, at most 20% of its samples reach main" \
		at_most "$before_good" "$before_total" 20
fi

# Debian's perl, gzip and bash before any sidecar.
seq 1 3000000 > /host/tmp/sfu_data
for prog in perl gzip bash; do
	# shellcheck disable=SC2046
	set -- $("${prog}_run" "before-$prog")
	echo "# $prog before: ${1:-0} of ${2:-0} samples reach main ($(percent "${1:-0}" "${2:-0}")%)"
	if [ "$(uname -m)" = aarch64 ]; then
		skip "$prog before sframectl: at most 20% reach main" \
			"Debian's arm64 code keeps frame records"
	else
		check "$prog before sframectl: recorded, at most 20% of its samples reach main" \
			at_most "${1:-0}" "${2:-0}" 20
	fi
done

if openssl_ok; then
	# shellcheck disable=SC2046
	set -- $(openssl_run before-openssl)
	echo "# openssl before: ${1:-0} of ${2:-0} samples reach main ($(percent "${1:-0}" "${2:-0}")%)"
fi

# chroot execs python3: the sleeper's pid is python3's.
chroot /host "$python" -c 'import time; time.sleep(60)' &
sleeper=$!
sleep 1
check "sframectl sync exits 0" synced
sed 's/^/# /' "$out.sync"
check "a cache on a read-only /var: sync says so and goes on without it" \
	grep -q "^sframectl: cache /var/cache/sframe-unwind: Read-only file system; going on without a cache" "$out.sync"
check "sframectl sync registers files" \
	grep -q "^sync: [1-9][0-9]* files registered" "$out.sync"
in_host "$ctl" list -p "$sleeper" > "$out.list" 2>&1
sed 's/^/# /' "$out.list"
check "the python3 started before: its python3 mapping is a sidecar now" \
	grep -Eq ' sidecar .*/python3[.0-9]*$' "$out.list"
check "... and so is its libc" grep -Eq ' sidecar .*/libc\.so\.6$' "$out.list"
check "list -p --json: valid JSON naming libc as a sidecar (Debian's python3 parses it)" \
	listed_pid_json "$sleeper"
kill "$sleeper" 2> /dev/null

# shellcheck disable=SC2046
set -- $(record after)
good=${1:-0} total=${2:-0}
grep -E "^(perf_walks|sample_faults|lookups|lookup_hits) " "$dbg/stats" | sed 's/^/# /'
echo "# after: $good of $total python3 samples reach main ($(percent "$good" "$total")%)"
check "after sframectl sync: at least 95% of python3's samples reach main" \
	at_least "$good" "$total" 95

ftrace_python
if grep -Eq ' [Tt] stack_trace_save_user$' /proc/kallsyms; then
	# shellcheck disable=SC2046
	set -- $(matching "$out.ustack" '^LP{7}$')
	echo "# userstacktrace: $1 of $2 stacks are libc's getppid() then 7 python3 frames"
	check "ftrace userstacktrace of python3's getppid(): libc's wrapper, then python3 (at least 18 of 20)" \
		[ "$1" -ge 18 ]
else
	skip "ftrace userstacktrace of python3's getppid()" \
		"this kernel lacks CONFIG_USER_STACKTRACE_SUPPORT (no stack_trace_save_user)"
fi
# shellcheck disable=SC2046
set -- $(matching "$out.ustack.ev" '^LP+L+P?$')
echo "# module event: $1 of $2 stacks go from libc's getppid() through python3 to main and libc's start code"
check "the module's stack event of the same calls reaches main (at least 18 of 20)" \
	[ "$1" -ge 18 ]

check "sframectl sync again: every file already registered" resync_finds_all

# The sidecar listing, and dropping one by build-id (as for a file that
# was deleted or renamed over, which no path names).
libc_id=$(in_host sh -c 'readelf -nW /usr/lib/*-linux-gnu/libc.so.6' |
	sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
echo "# libc build-id: $libc_id"
check "list --sidecars --json names libc's build-id" \
	listed_json "$libc_id"
check "del --build-id drops it" in_host "$ctl" del --build-id "$libc_id"
check "... and it is no longer listed" not_listed "$libc_id"
check "as nobody: add is refused with a hint to run as root" refused_as_nobody

# Leave no sidecar behind: drop what sync added.
awk '/ sidecar / { print $NF }' "$out.list" | sort -u |
	while read -r f; do in_host "$ctl" del "$f" > /dev/null 2>&1; done
unload
in_host "$ctl" list > "$out.nomod" 2>&1
check "without the module: sframectl says to load it" \
	grep -q "load the module" "$out.nomod"
load
check "module loaded again" loaded

# Two copies of one file (one build-id, the same section): kept once.
cp /host/bin/gzip /host/tmp/sfu_gzip_copy
in_host "$ctl" add /bin/gzip /tmp/sfu_gzip_copy > "$out.copies" 2>&1
sed 's/^/# /' "$out.copies"
check "two copies of gzip: both registered, the section kept once" shared_once
in_host "$ctl" del /bin/gzip /tmp/sfu_gzip_copy > /dev/null 2>&1
check "... and both dropped" [ "$(stat_of sidecars)" -eq 0 ]
rm -f /host/tmp/sfu_gzip_copy

# The daemon: it follows new mappings without SFrame from now on.
# chroot execs sframectl: the pid is the daemon's.
chroot /host "$ctl" daemon --cache /tmp/sfu-cache > "$out.daemon" 2>&1 &
daemon=$!
check "sframectl daemon starts" wait_log 50 "^daemon: following"

# shellcheck disable=SC2046
set -- $(record cold)
echo "# cold (the daemon sees python3 for the first time): $1 of $2 reach main ($(percent "$1" "$2")%)"
daemon_idle
# shellcheck disable=SC2046
set -- $(record warm)
good=${1:-0} total=${2:-0}
echo "# warm: $good of $total reach main ($(percent "$good" "$total")%)"
check "with the daemon, a second run: at least 95% of the samples reach main" \
	at_least "$good" "$total" 95
for prog in perl gzip bash; do
	# shellcheck disable=SC2046
	set -- $("${prog}_run" "cold-$prog")
	echo "# $prog cold (the daemon sees it for the first time): ${1:-0} of ${2:-0} reach main ($(percent "${1:-0}" "${2:-0}")%)"
	daemon_idle
	# shellcheck disable=SC2046
	main_share_ok "$prog with the daemon, a second run" \
		$("${prog}_run" "warm-$prog") 95
done
if openssl_ok; then
	# shellcheck disable=SC2046
	set -- $(openssl_run cold-openssl)
	echo "# openssl cold (the daemon sees it for the first time): ${1:-0} of ${2:-0} reach main ($(percent "${1:-0}" "${2:-0}")%)"
	daemon_idle
	# shellcheck disable=SC2046
	set -- $(openssl_run warm-openssl)
	echo "# openssl warm: ${1:-0} of ${2:-0} reach main ($(percent "${1:-0}" "${2:-0}")%)"
	check "openssl speed sha512 with the daemon, a second run: at least 99% of the samples reach main" \
		at_least "${1:-0}" "${2:-0}" 99
else
	skip "openssl speed sha512 with the daemon: at least 99% reach main" \
		"OpenSSL's CFA expressions are in its x86-64 assembly, and this root has no openssl or is not x86-64"
fi
check "the cache holds libc's section under its build-id" \
	test -s "/host/tmp/sfu-cache/$libc_id.sframe"

cp "$dir/../bin/sfu_noeh" /host/tmp/sfu_noeh
run_noeh
check "a program without .eh_frame: the daemon fails on it once" \
	failed_times 1
run_noeh
check "... and does not try it again when it runs again" failed_times 1
touch /host/tmp/sfu_noeh
run_noeh
check "... but does once it has changed" failed_times 2

check "rmmod while the daemon runs" unload
load
check "the daemon turns its event on again after insmod" daemon_resumed
check "... and takes the sections from its cache" cache_loaded
grep "^cache " "$out.daemon" | tail -1 | sed 's/^/# /'
record rewarm > /dev/null
# shellcheck disable=SC2046
set -- $(record reload)
good=${1:-0} total=${2:-0}
echo "# after the reload: $good of $total reach main ($(percent "$good" "$total")%)"
check "after the reload: at least 95% of the samples reach main" \
	at_least "$good" "$total" 95
kill -TERM "$daemon"
wait "$daemon"
rc=$?
sed 's/^/# daemon: /' "$out.daemon" | grep -v "registered" | tail -5
check "SIGTERM stops the daemon (exit $rc) and removes its trace instance" \
	eval_stopped "$rc"

# Restarted, the daemon finds every file registered already.
chroot /host "$ctl" daemon --cache /tmp/sfu-cache > "$out.daemon" 2>&1 &
daemon=$!
check "the daemon restarted: its sync finds every file registered already" \
	wait_log 300 "^sync: 0 files registered, [1-9][0-9]* already"

# Overflow: stopped, with a one-page ring buffer, while hundreds of
# mappings without SFrame are made; when it goes on it says so and syncs.
kill -STOP "$daemon"
echo 4 > "$tracefs/instances/sframectl/buffer_size_kb"
i=0
while [ "$i" -lt 200 ]; do
	in_host /tmp/sfu_noeh &
	i=$((i + 1))
done
sleep 1
kill -CONT "$daemon"
check "a ring buffer overflow: the daemon reports lost events and syncs" \
	lost_and_synced
kill -TERM "$daemon"
wait "$daemon"
sleep 3		# the programs of the overflow are gone

# Racing: mappings made and removed while the sidecar comes and goes.
in_host sh -c 'cp "$(readlink -f /usr/lib/*-linux-gnu/libz.so.1)" /tmp/sfu_target.so'
mem0=$(stat_of memory_bytes)
race_maps 8 &
r1=$!
race_maps 8 &
r2=$!
race_add 15
# chroot execs python3: the holder's pid is python3's.
chroot /host "$python" -c '
import ctypes, time
ctypes.CDLL("/tmp/sfu_target.so")
time.sleep(30)' &
holder=$!
mapped "$holder" /tmp/sfu_target.so
in_host "$ctl" add --replace /tmp/sfu_target.so > "$out.race" 2>&1
check "racing add/del and dlopen/dlclose, then add: the library a process holds has the sidecar" \
	holder_has_sidecar "$holder"
wait "$r1" "$r2"
kill "$holder" 2> /dev/null
wait "$holder" 2> /dev/null
in_host "$ctl" del /tmp/sfu_target.so > /dev/null 2>&1
check "... and the module's memory is back to where it was (within 1 KiB)" mem_back "$mem0"
rm -f /host/tmp/sfu_target.so

# A damaged entry: found on load, removed, made again.
entry=/host/tmp/sfu-cache/$libc_id.sframe
size=$(wc -c < "$entry")
printf 'XXXXXXXXXXXXXXXX' | dd of="$entry" bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
unload
load
chroot /host "$ctl" daemon --cache /tmp/sfu-cache > "$out.daemon" 2>&1 &
daemon=$!
check "a damaged cache entry is found and removed" \
	wait_log 300 "cache /tmp/sfu-cache/$libc_id.sframe: not a valid entry; removed"
check "... and made again" wait_log 300 "^cache /tmp/sfu-cache: .* [1-9][0-9]* stored"
kill -TERM "$daemon"
wait "$daemon"
check "the daemon's sync registered libc again" \
	grep -Eq "libc\.so\.6: registered" "$out.daemon"

# Only sections the module accepts are cached: a sync that finds every
# file registered already stores nothing, so the sidecars go first.
unload
load
in_host "$ctl" sync --cache /tmp/sfu-small --cache-max 200K > "$out.small" 2>&1
check "--cache-max 200K: the cache holds entries, at most 200 KiB" \
	cache_bounded /host/tmp/sfu-small 204800

# Leave no sidecar behind: they go with the module.
unload
load
rm -rf "/host$ctl" "/host$script" /host/tmp/perf.*.data /host/tmp/sfu-cache \
	/host/tmp/sfu-small /host/tmp/sfu_noeh /host/tmp/sfu_data
tap_end sframectl
