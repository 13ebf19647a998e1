#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Everything at once, for a bounded time (the first argument, or
# STRESS_SECONDS, which tools/testing/qemu/run.sh passes on from the host in
# /selftests/stress.env with STRESS_HZ and STRESS_RMMOD_SECONDS; default
# 45, at least 20): worker processes
# (selftests/stress/stress.c) fork and exec a program with SFrame and one
# without, map and unmap a library with SFrame the way ld.so does
# (forking now and then), dlopen and dlclose libraries with SFrame (two
# of them), and start threads (one asks the test hook for a deferred
# walk of itself, its main thread asks one of another as it exits);
# meanwhile the whole system is sampled with call chains at a high rate
# (sfu_stress sample: perf_event_open() of cpu-clock on every CPU, ring
# buffers drained; and the host's perf record -a -g where /host has one),
# ftrace's userstacktrace is on in a tracefs instance with sched_switch
# and two system call events, and the module is unloaded and loaded again
# for the first STRESS_SECONDS - 10 s and three times at least (each
# rmmod, retried while the module is in use, must be done within 30 s,
# 60 s on arm64 and s390x, STRESS_RMMOD_SECONDS; STRESS_RELOAD_SECONDS
# apart, 1 by default).
# Then the loops are told to stop and must exit 0 within 60 s (perf
# record, which reads its data, within 240 s); the module must be loaded;
# its memory counters (mms, sections, memory_bytes, sidecars,
# sidecar_bytes) and task_work_pending must be back to what a freshly
# loaded module showed before the run (with STRESS_DAEMON=1, which
# soak.sh sets: mms, sections and task_work_pending only, since
# sframectl's daemon registers sidecars for what the loops map, and they
# stay); and the module must have walked
# samples for perf and (where the kernel has stack_trace_save_user())
# user stacks for ftrace.  The figures are printed.  A kernel warning,
# oops or sanitizer report fails the run in the harness.  Leaves the
# module loaded with test_hooks=1.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

if [ -r /selftests/stress.env ]; then
	# shellcheck source=/dev/null
	. /selftests/stress.env
fi
secs=${1:-${STRESS_SECONDS:-45}}
[ "$secs" -ge 20 ] || secs=20
hz=${STRESS_HZ:-4000}
st=/selftests/stress/sfu_stress
tmp=/tmp/stress
tracefs=/sys/kernel/tracing
inst=$tracefs/instances/sfu_stress
# tenths of a second for rmmod, retries included, and for insmod: under
# TCG a foreign architecture takes about twice as long (arm64 once 30 s).
rmmod_secs=30
[ "$(uname -m)" = x86_64 ] || rmmod_secs=60
rmmod_max=$((${STRESS_RMMOD_SECONDS:-$rmmod_secs} * 10))
exit_max=600		# tenths: for the loops to exit when told
perf_max=2400		# tenths: for perf record (reads its data under TCG)
min_cycles=3
counters="mms sections memory_bytes sidecars sidecar_bytes task_work_pending"
settle_max=100		# tenths: for the counters to come back
if [ -n "${STRESS_DAEMON:-}" ]; then
	counters="mms sections task_work_pending"
	settle_max=1200
fi
gap=${STRESS_RELOAD_SECONDS:-1}
# Event counters summed over every module instance of the run.
events="registered unregistered forks scanned_mms deferred_walks perf_walks
ftrace_walks sample_faults"
workers=""
sampler=""
perf_pid=""
cycles=0
busy=0
rmmod_worst=0
insmod_worst=0
hung=""

# tenths: tenths of a second since boot.
tenths() {
	awk '{ printf "%d\n", $1 * 10 }' /proc/uptime
}

# seconds TENTHS: as seconds with one decimal.
seconds() {
	echo "$(($1 / 10)).$(($1 % 10))"
}

# bounded TENTHS COMMAND...: run COMMAND, give up on it after TENTHS
# (its exit status, or 124 with $hung set: it is left where it hangs).
bounded() {
	local max="$1" p i=0

	shift
	"$@" &
	p=$!
	while kill -0 "$p" 2> /dev/null; do
		if [ "$i" -ge "$max" ]; then
			hung="$hung $*"
			echo "# $* did not return within $((max / 10)) s"
			[ -r "/proc/$p/stack" ] && sed 's/^/#   /' "/proc/$p/stack"
			return 124
		fi
		sleep 0.1
		i=$((i + 1))
	done
	wait "$p"
}

# tally: add the event counters of the module loaded now to $tmp.tally.
tally() {
	local e

	[ -r "$dbg/stats" ] || return 0
	for e in $events; do
		echo "$e $(stat_of "$e")"
	done >> "$tmp.tally"
}

# total NAME: NAME summed over the module instances tallied.
total() {
	awk -v k="$1" '$1 == k { n += $2 } END { print n + 0 }' "$tmp.tally"
}

# unload: rmmod, retried while the module is in use (an open debugfs
# file of a worker holds it), all within $rmmod_max.
unload() {
	local end rc

	end=$(($(tenths) + rmmod_max))
	tally
	while loaded; do
		bounded $((end - $(tenths))) rmmod sframe_unwind 2> "$tmp.rmmod"
		rc=$?
		[ "$rc" -eq 0 ] && return 0
		[ "$rc" -eq 124 ] && return 1
		if [ "$(tenths)" -ge "$end" ]; then
			echo "# rmmod kept failing for $((rmmod_max / 10)) s:"
			sed 's/^/#   /' "$tmp.rmmod"
			return 1
		fi
		busy=$((busy + 1))
		sleep 0.1
	done
}

load() {
	loaded || bounded "$rmmod_max" insmod "$ko" test_hooks=1
}

# snapshot FILE: the counters to compare, one "name value" a line.
snapshot() {
	local c

	for c in $counters; do
		echo "$c $(stat_of "$c")"
	done > "$1"
}

at_baseline() {
	snapshot "$tmp.end" && cmp -s "$tmp.base" "$tmp.end"
}

# settle: with STRESS_DAEMON, wait for the daemon's sync after a load:
# the counters unchanged for 5 s (2 minutes at most).
settle() {
	local i=0

	[ -n "${STRESS_DAEMON:-}" ] || return 0
	snapshot "$tmp.s1"
	while [ "$i" -lt 24 ]; do
		sleep 5
		snapshot "$tmp.s2"
		cmp -s "$tmp.s1" "$tmp.s2" && return 0
		mv "$tmp.s2" "$tmp.s1"
		i=$((i + 1))
	done
}

ftrace_on() {
	local e

	mkdir "$inst" || return 1
	echo 512 > "$inst/buffer_size_kb"
	echo 1 > "$inst/options/userstacktrace" || return 1
	for e in sched/sched_switch syscalls/sys_enter_munmap \
		 syscalls/sys_enter_execve; do
		[ -d "$inst/events/$e" ] && echo 1 > "$inst/events/$e/enable"
	done
	echo 1 > "$inst/tracing_on"
}

ftrace_off() {
	[ -d "$inst" ] || return 0
	echo 0 > "$inst/tracing_on"
	grep -c '<user stack trace>' "$inst/trace" > "$tmp.ustacks"
	awk '$1 == "entries:" || $1 == "overrun:" { n += $2 }
	     END { print n + 0 }' "$inst"/per_cpu/cpu*/stats > "$tmp.events"
	echo 0 > "$inst/events/enable"
	echo 0 > "$inst/options/userstacktrace"
	rmdir "$inst"
}

# The host's perf, where /host has one.
host_perf() {
	[ -x /host/usr/bin/perf ] && chroot /host perf --version > /dev/null 2>&1
}

# all_exited TENTHS PID...: every PID exited 0, at most TENTHS after the
# loops were told to stop.
all_exited() {
	local p bad=0 end=$((stopped + $1))

	shift
	for p in "$@"; do
		while kill -0 "$p" 2> /dev/null && [ "$(tenths)" -lt "$end" ]; do
			sleep 0.1
		done
		if kill -0 "$p" 2> /dev/null; then
			echo "# $p ($(cat "/proc/$p/comm")) did not exit:"
			sed 's/^/#   /' "/proc/$p/stack" 2> /dev/null
			hung="$hung $p"
			kill -KILL "$p"
			bad=1
		elif ! wait "$p"; then
			echo "# $p exited non-zero:"
			sed 's/^/#   /' "$tmp.$p" 2> /dev/null
			bad=1
		fi
	done
	return "$bad"
}

# spawn COMMAND...: run COMMAND in the background (its pid in $!), its
# output in $tmp.PID.
spawn() {
	sh -c 'exec "$@" > "$0.$$" 2>&1' "$tmp" "$@" &
}

# figure MODE KEY: the sum of KEY=N over the output of MODE's loops.
figure() {
	cat "$tmp".[0-9]* 2> /dev/null |
		awk -v m="$1" -v k="$2" '$1 == m {
			for (i = 2; i <= NF; i++)
				if (split($i, kv, "=") == 2 && kv[1] == k)
					n += kv[2]
		} END { print n + 0 }'
}

echo "TAP version 13"
[ -x "$st" ] || { echo "1..0 # SKIP no $st"; exit "$KSFT_SKIP"; }
rm -f "$tmp".*
echo "# $secs s of stress, sampling at $hz Hz"

# The baseline of a freshly loaded module, nothing else running.
check "a fresh module: rmmod and insmod test_hooks=1" eval "unload && load"
check "the stats file is there" [ -r "$dbg/stats" ]
settle
snapshot "$tmp.base"
sed 's/^/# baseline: /' "$tmp.base"

ustack=""
if [ -d "$tracefs/instances" ] &&
   grep -Eq ' [Tt] stack_trace_save_user$' /proc/kallsyms; then
	ustack=1
	check "ftrace: userstacktrace on in instance sfu_stress" ftrace_on
else
	skip "ftrace: userstacktrace on" "no tracefs instances or no stack_trace_save_user"
fi

began=$(tenths)
# Stopped by SIGTERM (or, should this script die, after $limit).
limit=$((secs * 4 + 600))
spawn "$st" sample "$limit" "$hz"
sampler=$!
if host_perf; then
	# For $secs, the loops' shortest time.
	chroot /host perf record -a -g -F "$hz" -N \
		-o /tmp/sfu_stress.perf.data -- sleep "$secs" \
		> "$tmp.perf" 2>&1 &
	perf_pid=$!
else
	echo "# no perf at /host: sfu_stress sample only"
fi
for m in exec mmap dlopen dlopen threads; do
	spawn "$st" "$m" "$limit"
	workers="$workers $!"
done

# rmmod and insmod for the first $secs - 10 s, and $min_cycles times at
# least; the loops go on 5 s after the last insmod and to $secs at least.
: > "$tmp.tally"
ok_cycles=1
t3=$began
while [ $(($(tenths) - began)) -lt $(((secs - 10) * 10)) ] ||
      [ "$cycles" -lt "$min_cycles" ]; do
	sleep "$gap"
	t0=$(tenths)
	if ! unload; then
		ok_cycles=0
		break
	fi
	t1=$(tenths)
	sleep 0.5
	t2=$(tenths)
	if ! load; then
		ok_cycles=0
		break
	fi
	t3=$(tenths)
	echo "# cycle $((cycles + 1)): rmmod $(seconds $((t1 - t0))) s, insmod $(seconds $((t3 - t2))) s"
	[ $((t1 - t0)) -gt "$rmmod_worst" ] && rmmod_worst=$((t1 - t0))
	[ $((t3 - t2)) -gt "$insmod_worst" ] && insmod_worst=$((t3 - t2))
	cycles=$((cycles + 1))
done
cycles_end=$(tenths)
check "rmmod and insmod $cycles times under the loops (rmmod busy $busy times)" \
	[ "$ok_cycles" -eq 1 ]
while [ "$(tenths)" -lt $((began + secs * 10)) ] ||
      [ "$(tenths)" -lt $((t3 + 50)) ]; do
	sleep 0.5
done
stopped=$(tenths)
# shellcheck disable=SC2086
kill -TERM $workers $sampler

# shellcheck disable=SC2086
check "every worker and sampler exits 0 on its own" \
	all_exited "$exit_max" $workers $sampler
exited=$(tenths)
if [ -n "$perf_pid" ]; then
	check "perf record exits 0" all_exited "$perf_max" "$perf_pid"
	perf_exited=$(tenths)
fi
check "no rmmod, insmod or worker hung" [ -z "$hung" ]
[ -n "$ustack" ] && check "ftrace: the instance goes" ftrace_off
check "the module is loaded" eval "load && [ -r '$dbg/stats' ]"
# (With the daemon, after its sync of the last load.)
check "memory counters back to the baseline" wait_until "$settle_max" at_baseline
if ! at_baseline; then
	diff "$tmp.base" "$tmp.end" | sed 's/^/# /'
fi

tally
samples=$(figure sample iterations)
check "sfu_stress sample: samples were taken ($samples)" [ "$samples" -gt 0 ]
check "sfu_stress sample: some with user frames ($(figure sample user))" \
	[ "$(figure sample user)" -gt 0 ]
if [ -n "$perf_pid" ]; then
	sed 's/^/# perf: /' "$tmp.perf"
	psamples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$tmp.perf")
	# perf 7.x no longer counts them when it writes: ask the file.
	[ -n "$psamples" ] || psamples=$(chroot /host perf report --stats \
		-i /tmp/sfu_stress.perf.data 2> /dev/null |
		awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
	check "perf record -a -g: samples were taken (${psamples:-none})" \
		[ "${psamples:-0}" -gt 0 ]
	rm -f /host/tmp/sfu_stress.perf.data
fi
if [ "$(stat_of perf_redirected)" = 1 ]; then
	check "the module walked perf's samples ($(total perf_walks) perf_walks)" \
		[ "$(total perf_walks)" -gt 0 ]
else
	skip "the module walked perf's samples" "perf_callchain_user() is not redirected here"
fi
if [ -n "$ustack" ] && [ "$(stat_of userstack_redirected)" = 1 ]; then
	check "the module walked ftrace's user stacks ($(total ftrace_walks) ftrace_walks)" \
		[ "$(total ftrace_walks)" -gt 0 ]
elif [ -n "$ustack" ]; then
	skip "the module walked ftrace's user stacks" "stack_trace_save_user() is not redirected here"
fi

echo "# figures: loops ran $(seconds $((stopped - began))) s; $cycles rmmod/insmod cycles in the first $(seconds $((cycles_end - began))) s (rmmod busy $busy times; worst rmmod $(seconds "$rmmod_worst") s, insmod $(seconds "$insmod_worst") s); all exited $(seconds $((exited - stopped))) s after being told to stop"
[ -n "$perf_pid" ] &&
	echo "# perf record ended $(seconds $((perf_exited - stopped))) s after the loops"
for m in exec mmap dlopen threads; do
	echo "# $m: $(figure "$m" iterations) iterations, $(figure "$m" errors) errors"
done
echo "# threads: $(figure threads walked) walked by the hook, $(figure threads asked) asked by the main thread"
echo "# sample: $samples samples, $(figure sample user) with user frames, $(figure sample frames) user frames, $(figure sample deep) with 3 or more, $(figure sample lost) lost"
grep '^sample cpus' "$tmp.$sampler" | sed 's/^/# /'
[ -n "$ustack" ] &&
	echo "# ftrace: $(cat "$tmp.events") events written, $(cat "$tmp.ustacks") user stack traces in the last 512 KiB"
printf '# module, all instances:'
for e in $events; do
	printf ' %s=%s' "$e" "$(total "$e")"
done
echo
sed 's/^/# stats: /' "$dbg/stats"
rm -f "$tmp".*
tap_exit
