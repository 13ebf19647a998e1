#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench: what sframectl's daemon costs and how fast it serves, with
# Debian's own programs from the host root at /host.
#   cold          the daemon (empty cache) sees a set of real programs for
#                 the first time: sidecars registered, event-to-registration
#                 latency (median, p99, max), the CPU time its parsing
#                 children used, and the kernel memory the sidecars take
#   exec          fork+exec+exit of Debian's /bin/true, alternating rounds
#                 with the module loaded and the daemon running (cache
#                 warm, /bin/true's sidecar registered) and with the module
#                 unloaded; min and median, ratio
# A benchmark: it prints numbers and fails only if a measurement cannot be
# made.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

rounds=${BENCH_ROUNDS:-5}
n_exec=${BENCH_EXEC:-100}
ctl=/tmp/sframectl		# in the chroot
cache=/tmp/sfu-bench-cache	# in the chroot
log=/tmp/bench_daemon.log
daemon_log=$log			# for wait_log
res=/tmp/bench_daemon
rm -rf "$res" "/host$cache" && mkdir -p "$res" || exit 1

fail() {
	echo "# bench_daemon: $*"
	exit 1
}

# quiet: wait until the daemon's log has not grown for two seconds.
quiet() {
	local n=-1 m i=0

	while [ "$i" -lt 60 ]; do
		m=$(wc -c < "$log")
		[ "$m" = "$n" ] && return 0
		n=$m
		sleep 2
		i=$((i + 1))
	done
}

# stats FILE: "min median" of the numbers in FILE.
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		printf "%d %d\n", v[1], v[int((NR + 1) / 2)] }'
}

grep -q ' /host 9p ' /proc/mounts ||
	{ echo "# SKIP bench_daemon: needs Debian's programs at /host"; exit 0; }
[ -x "$dir/../bin/sframectl" ] || fail "no sframectl"
cp "$dir/../bin/sframectl" "/host$ctl"
cp /selftests/bench/exec_plain /host/tmp/sfu_exec_bench
load || fail "insmod failed"
mem0=$(stat_of memory_bytes)

chroot /host "$ctl" daemon --cache "$cache" > "$log" 2>&1 &
daemon=$!
wait_log 100 "^daemon: following" || fail "the daemon did not start"
quiet
# The programs: each run once, as a user would.
for cmd in "/usr/bin/python3 -c pass" "/usr/bin/perl -e 1" \
	   "/bin/gzip --version" "/bin/bash -c :" "/bin/ls /" \
	   "/bin/tar --version" "/usr/bin/git --version" \
	   "/usr/bin/readelf --version" "/usr/bin/perf --version" \
	   "/bin/true"; do
	# shellcheck disable=SC2086  # the command and its arguments
	[ -x "/host${cmd%% *}" ] && chroot /host $cmd > /dev/null 2>&1
done
quiet
kill -TERM "$daemon"
wait "$daemon"
mem1=$(stat_of memory_bytes)
sidecars=$(grep -c ": registered " "$log")
# shellcheck disable=SC2046  # two numbers
set -- $(chroot /host "$ctl" list --sidecars --json |
	 awk -F'"bytes": ' 'NF > 1 { n++; split($2, v, /[,}]/); b += v[1] }
			    END { print n + 0, b + 0 }')
echo "# cold: $sidecars sidecars registered (sync and events): $1 sidecars hold $2 bytes of SFrame; the module's memory grew by $((mem1 - mem0)) bytes"
grep -E "^daemon: ([0-9]+ sidecars registered|parsing)" "$log" | sed 's/^/# /'
grep -q "event to registration" "$log" || fail "no latency measured"

# fork+exec of /bin/true: the daemon running, the module on and off.
chroot /host "$ctl" daemon --cache "$cache" > "$log" 2>&1 &
daemon=$!
wait_log 100 "^daemon: following" || fail "the daemon did not start"
i=0
on=0
while [ "$i" -lt "$rounds" ]; do
	if [ "$i" -gt 0 ]; then
		load || fail "insmod failed"
	fi
	on=$((on + 1))
	wait_log 300 "module present" "$on" || fail "the daemon did not resync"
	quiet
	chroot /host /tmp/sfu_exec_bench run "$n_exec" /bin/true \
		>> "$res/on" || fail "a measurement failed (module loaded)"
	unload || fail "rmmod failed"
	chroot /host /tmp/sfu_exec_bench run "$n_exec" /bin/true \
		>> "$res/off" || fail "a measurement failed (module unloaded)"
	i=$((i + 1))
done
load || fail "insmod failed"
wait_log 300 "module present" $((on + 1))
kill -TERM "$daemon"
wait "$daemon"
grep -c "cache $cache: [1-9]" "$log" > /dev/null ||
	echo "# (the daemon's syncs did not report cache hits)"
grep "^cache " "$log" | tail -1 | sed 's/^/# /'

# shellcheck disable=SC2046  # two numbers each, split on purpose
set -- $(stats "$res/on") $(stats "$res/off")
echo "# fork+exec of /bin/true, $rounds alternating rounds of $n_exec; ns (min / median)"
printf '# %-26s %9d / %7d\n' "module + daemon (warm)" "$1" "$2"
printf '# %-26s %9d / %7d\n' "module unloaded" "$3" "$4"
printf '# %-26s %9s / %7s\n' ratio \
	"$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%.2f", a / b }')" \
	"$(awk -v a="$2" -v b="$4" 'BEGIN { printf "%.2f", a / b }')"
unload
load
rm -rf "/host$ctl" "/host$cache" /host/tmp/sfu_exec_bench
exit 0
