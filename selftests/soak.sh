#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make soak: SOAK_SECONDS (1800) of everything at once, as a busy
# machine that is profiled all the time would see it.  sframectl's daemon
# runs throughout (its cache in the root at /host) and follows every
# module reload; stress.sh's loops run the whole time (fork, exec, mmap,
# munmap, dlopen and dlclose churn, threads, sampling on every CPU, perf
# record -a -g, ftrace's userstacktrace) with the module unloaded and
# loaded again every minute; bpftrace samples user stacks (ustack, what
# bpf_get_stack() gives) where the root has it; sidecars are deleted and
# added again by hand every few seconds.  Every minute the module's
# counters and the kernel's free memory are printed.  Then:
#   stress.sh       every one of its checks passes (its TAP is kept)
#   bpftrace        it exits 0 and printed user stacks of two frames or
#                   more
#   daemon          it is still running and answers: a sync after the
#                   loops registers what is mapped
#   regions         the module's mms, sections and task_work_pending are
#                   back to what they were before the loops, once they
#                   have stopped and the daemon has synced
#   stacks          Python's stacks are still whole: python3 under perf
#                   record -g reaches main in at least 95% of its samples
#                   (x86-64)
# A kernel warning, oops, lockdep or sanitizer report fails the run in
# the harness, and on the debug kernel so does a leak kmemleak finds in
# the module's allocations, those of the instances unloaded during the
# soak included (guest-init's scan as the guest leaves).
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh
if [ -r /selftests/soak.env ]; then
	# shellcheck source=/dev/null
	. /selftests/soak.env
fi
secs=${SOAK_SECONDS:-1800}
out=/tmp/soak
ctl=/tmp/sframectl		# in the chroot
cache=/tmp/sfu-soak-cache	# in the chroot
# shellcheck disable=SC2034  # start_daemon's log
daemon_log=$out.daemon
# The files whose sidecars are deleted and added again.
churn_files="/usr/bin/perl /usr/bin/gzip"
python=/usr/bin/python3

echo "TAP version 13"
need_host_sframectl
rm -rf "$out".* "/host$cache" && mkdir -m 700 "/host$cache" || exit 1
cp "$dir/../bin/sframectl" "/host$ctl"
echo "# $secs s of soak"

# counters: one line of the module's counters and the free memory.
counters() {
	local c

	if loaded; then
		for c in mms sections memory_bytes sidecars file_cache_bytes \
			 task_work_pending perf_walks deferred_walks; do
			printf '%s=%s ' "$c" "$(stat_of "$c")"
		done
	else
		printf '(module unloaded) '
	fi
	awk '$1 == "MemAvailable:" || $1 == "Slab:" { printf "%s%s kB ", $1, $2 }' \
		/proc/meminfo
	echo
}

# minutes: the counters every minute while $out.on exists.
minutes() {
	local m=0

	while [ -e "$out.on" ]; do
		echo "# minute $m: $(counters)"
		sleep 60
		m=$((m + 1))
	done
}

# sidecar_churn: delete the sidecars of $churn_files and add them again,
# every 5 s while $out.on exists; errors while the module is away
# (rmmod) are expected and counted apart.
sidecar_churn() {
	local f n=0 bad=0

	while [ -e "$out.on" ]; do
		for f in $churn_files; do
			[ -x "/host$f" ] || continue
			in_host "$ctl" del "$f" > /dev/null 2>&1
			if in_host "$ctl" add "$f" > /dev/null 2>&1; then
				n=$((n + 1))
			else
				bad=$((bad + 1))
			fi
		done
		sleep 5
	done
	echo "$n $bad" > "$out.churn"
}

# bpftrace's user stacks, 49 a second, printed and cleared every 30 s
# (a map of every stack of a half hour filled up and took minutes to
# print under TCG); started once it says it has attached (minutes under
# TCG).
bpf_start() {
	bpf_pid=
	[ -x /host/usr/bin/bpftrace ] || return 0
	in_host bpftrace -e 'profile:hz:49 /pid > 0/ { @[ustack(4)] = count(); }
		interval:s:30 { print(@); clear(@); }' > "$out.bpf" 2>&1 &
	bpf_pid=$!
	wait_for "$out.bpf" "^Attaching" 6000
}

# bpf_stop: SIGINT, on which bpftrace prints its maps and exits 0,
# within two minutes; else it is killed.
bpf_stop() {
	kill -INT "$bpf_pid"
	if wait_until 1200 eval '! kill -0 "$bpf_pid" 2> /dev/null'; then
		wait "$bpf_pid"
		return
	fi
	echo "# bpftrace did not exit on SIGINT"
	kill -KILL "$bpf_pid"
	wait "$bpf_pid"
	return 1
}

# bpf_stacks: the stacks bpftrace printed with two frames or more.
bpf_stacks() {
	awk '/^@\[$/ { n = 0; next } /^ +[0-9a-zA-Z_]/ { n++ }
	     /^\]: / { if (n >= 2) deep++ } END { print deep + 0 }' "$out.bpf"
}

# snapshot: the module's process counters.
snapshot() {
	echo "$(stat_of mms) $(stat_of sections) $(stat_of task_work_pending)"
}

# synced_snapshot FILE: a sync by hand, once the daemon is idle, then
# the counters into FILE.
synced_snapshot() {
	in_host "$ctl" sync --cache "$cache" > "$out.sync" 2>&1 &&
		snapshot > "$1"
}

back_to_base() {
	synced_snapshot "$out.end" && cmp -s "$out.base" "$out.end"
}

python_whole() {
	local r

	r=$(record_prog py python3 "$python" -c '
import time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.time() + 4
while time.time() < end:
    fib(18)')
	main_share_ok "python3 after the soak" "${r% *}" "${r#* }" 95
}

load
check "the module loads" loaded
check "sframectl daemon starts and syncs" start_daemon
check "a sync by hand, before the loops" synced_snapshot "$out.base"
echo "# before: mms sections task_work_pending: $(cat "$out.base")"
if [ -x /host/usr/bin/bpftrace ]; then
	check "bpftrace attaches" bpf_start
else
	bpf_pid=
fi
touch "$out.on"
minutes &
mins=$!
sidecar_churn &
churn=$!
# rmmod waits for a moment when no registration of the daemon holds
# the module's device open: under TCG, with the daemon syncing after
# each load, that took stress.sh's 30 s and more.
STRESS_DAEMON=1 STRESS_RELOAD_SECONDS=60 STRESS_SECONDS=$secs \
	STRESS_RMMOD_SECONDS=${SOAK_RMMOD_SECONDS:-120} \
	/selftests/stress.sh "$secs" > "$out.stress" 2>&1
stress_rc=$?
rm -f "$out.on"
sed 's/^/# stress: /' "$out.stress"
check "stress.sh passes ($(grep -c '^ok' "$out.stress") ok, $(grep -c '^not ok' "$out.stress") not ok)" \
	[ "$stress_rc" -eq 0 ]
wait "$churn"
kill "$mins" 2> /dev/null
echo "# sidecars deleted and added again: $(cut -d' ' -f1 "$out.churn") added, $(cut -d' ' -f2 "$out.churn") refused (the module away)"

if [ -n "$bpf_pid" ]; then
	check "bpftrace ustack exits 0 on SIGINT" bpf_stop
	check "bpftrace printed user stacks ($(bpf_stacks) of two frames or more)" \
		[ "$(bpf_stacks)" -gt 0 ]
else
	skip "bpftrace ustack" "the root at /host has no bpftrace"
fi

check "the module is loaded" eval "load && loaded"
check "the daemon is still running" kill -0 "$daemon"
check "a sync by hand after the loops" synced_snapshot "$out.end"
echo "# after: mms sections task_work_pending: $(cat "$out.end")"
check "mms, sections and task_work_pending back to before the loops" \
	wait_until 60 back_to_base
python_whole
stop_daemon
echo "# end: $(counters)"
rm -rf "/host$cache" "/host$ctl"
tap_exit
