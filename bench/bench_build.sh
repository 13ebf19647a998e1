#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench: a parallel build, profiled system-wide.  The project's own
# host tools (bench/build.mk: one object per C file, then the links,
# BENCH_BUILD_COPIES times over in sub-makes) are built with make -j in
# the root at /host, by Debian's make, sh, gcc, cc1, as, collect2 and ld,
# while perf record -a samples the whole machine:
#   cold      module + sframectl daemon, from an empty cache: every
#             program of the build is a first run
#   rounds    BENCH_BUILD_ROUNDS (2) alternating builds: neither module
#             nor daemon, then module + daemon from the warm cache (the
#             module loaded again: its sidecars come from the daemon's
#             sync and events); where the kernel has deferred user
#             stacks, every other warm round records with --call-graph
#             fp,defer instead of -g
# Printed per build: the wall time; per command, the samples counted and
# the share that reach main (root_share.awk: those of a program's start
# are not counted); with the module, the daemon's CPU (its own and its
# parsing children's) against the machine's busy time, the first-map
# waits (the module's counters; their length is the daemon's event to
# registration), and the module's memory and registered sections before
# the build, at their peak and after it.  Then the goals: at least 99%
# for every command with 100 samples or more (warm), wall time with the
# module at most 1.03x without (minimum of the rounds), the daemon's CPU
# at most 2%, and the sections of the build's processes gone after it.
# A benchmark: it prints numbers and fails only if a measurement cannot
# be made.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh
# BENCH_BUILD_* from make bench's environment (run.sh).
# shellcheck disable=SC1091
[ -r /selftests/bench.env ] && . /selftests/bench.env

rounds=${BENCH_BUILD_ROUNDS:-2}
copies=${BENCH_BUILD_COPIES:-1}
hz=${BENCH_BUILD_HZ:-97}
ctl=/tmp/sframectl			# in the chroot
cache=/tmp/sfu-build-cache		# in the chroot
tree=/tmp/sfu-build			# in the chroot: the sources, the objects
out=/tmp/bench_build
daemon_log=$out.daemon			# for wait_log
res=/tmp/bench_build.d
awk_share=/selftests/perf/root_share.awk
# A command counts towards the goal from this many samples on.
goal_samples=100
# The build's commands (Debian's, from /host), and the daemon: the table
# and the goal are theirs.  The guest's own busybox and kernel threads
# have no user stack to reach main.
build_cmds='^(make|sh|dash|cc|gcc|cc1|cc1plus|as|collect2|ld|ld\.bfd|sframectl)$'
goal_cmds='^(make|sh|dash|cc|gcc|cc1|cc1plus|as|collect2|ld|ld\.bfd)$'

fail() {
	echo "# bench_build: $*"
	exit 1
}

grep -q ' /host 9p ' /proc/mounts ||
	{ echo "# SKIP bench_build: needs Debian's programs at /host"; exit 0; }
for p in make gcc perf; do
	[ -x "/host/usr/bin/$p" ] ||
		{ echo "# SKIP bench_build: the root at /host has no $p"; exit 0; }
done
[ -d /extra/src/lib/sframe ] ||
	fail "no sources at /extra/src (run.sh --extra, as make bench gives)"
[ -x "$dir/../bin/sframectl" ] || fail "no sframectl"
rm -rf "$res" "/host$tree" "/host$cache"
mkdir -p "$res" "/host$tree" && mkdir -m 700 "/host$cache" || exit 1
cp -r /extra/src "/host$tree/src" || fail "copying the sources failed"
cp "$dir/../bin/sframectl" "/host$ctl"
jobs=$(($(nproc) + 1))

# busy: the machine's busy time so far, in clock ticks.
busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# cpu_of PID: PID's CPU time and its waited-for children's, in ticks.
cpu_of() {
	awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"
}

# mem_line: the module's memory and registered sections, or "- -".
mem_line() {
	if loaded; then
		echo "$(stat_of memory_bytes) $(stat_of sections)"
	else
		echo "- -"
	fi
}

# sample_mem FILE: the module's memory and sections every second into
# FILE, while FILE.on exists.
sample_mem() {
	while [ -e "$1.on" ]; do
		mem_line >> "$1"
		sleep 1
	done
}

# build NAME CALLGRAPH: one build under perf record -a; its wall time
# in milliseconds to $res/NAME.ms, the shares per command to
# $res/NAME.share ("COMM reaching total start").
build() {
	local data="/tmp/perf.build-$1.data" t0 t1

	rm -rf "/host$tree/out" "/host$data"
	t0=$(cut -d' ' -f1 /proc/uptime)
	# shellcheck disable=SC2086  # the call graph's options
	in_host perf record -q -a $2 -e cpu-clock -F "$hz" -o "$data" -- \
		make -s -C "$tree/src" -f bench/build.mk -j "$jobs" \
		BUILD_OUT="$tree/out" COPIES="$copies" > "$res/$1.log" 2>&1 ||
		{ sed 's/^/# /' "$res/$1.log" | tail -20; return 1; }
	t1=$(cut -d' ' -f1 /proc/uptime)
	[ -x "/host$tree/out/1/sframe-gen" ] ||
		{ echo "# $1: the build made no sframe-gen"; return 1; }
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d\n", (b - a) * 1000 }' \
		> "$res/$1.ms"
	in_host perf script -i "$data" -F comm,pid,ip,sym,dso 2> /dev/null |
		awk -v want="$build_cmds" -v by_comm=1 -f "$awk_share" \
		2> "$res/$1.miss" | sort -k3,3nr > "$res/$1.share"
	rm -f "/host$data"
	[ -s "$res/$1.share" ]
}

# with NAME CALLGRAPH: a build with the module loaded again and the
# daemon started (its sync done), and what they did during it.
with() {
	local b0 b1 d0 d1 sampler

	load || fail "insmod failed"
	# shellcheck disable=SC2119  # no variables for the daemon
	start_daemon || fail "the daemon did not start"
	mem_line > "$res/$1.before"
	: > "$res/$1.mem" && touch "$res/$1.mem.on"
	sample_mem "$res/$1.mem" &
	sampler=$!
	b0=$(busy)
	d0=$(cpu_of "$daemon")
	build "$1" "$2" || fail "the build ($1) failed"
	b1=$(busy)
	d1=$(cpu_of "$daemon")
	rm -f "$res/$1.mem.on"
	wait "$sampler"
	# The build's processes are gone: their sections must be too.
	sleep 2
	mem_line > "$res/$1.after"
	echo "$(stat_of first_map_waits) $(stat_of first_map_answered) $(stat_of first_map_timeouts)" \
		> "$res/$1.waits"
	echo "$((d1 - d0)) $((b1 - b0))" > "$res/$1.cpu"
	stop_daemon
	grep -E "^daemon: [0-9]+ sidecars registered for events" \
		"$daemon_log" > "$res/$1.latency"
	unload || fail "rmmod failed"
}

without() {
	unload || fail "rmmod failed"
	build "$1" "$2" || fail "the build ($1) failed"
}

defer=
load && has_defer "$out.probe" && defer="--call-graph fp,defer"
unload

echo "# the project's tools, $copies time(s) over: $(in_host make -s -C "$tree/src" -f bench/build.mk -n BUILD_OUT="$tree/out" COPIES="$copies" | grep -c -- ' -c -o ') compilations, make -j $jobs on $(nproc) CPU(s); perf record -a -F $hz"
with cold -g
runs="cold"
i=1
while [ "$i" -le "$rounds" ]; do
	without "without$i" -g
	cg=-g
	[ -n "$defer" ] && [ $((i % 2)) -eq 0 ] && cg=$defer
	with "with$i" "$cg"
	echo "$cg" > "$res/with$i.cg"
	runs="$runs without$i with$i"
	i=$((i + 1))
done
rm -rf "/host$tree" "/host$cache" "/host$ctl"
load

# peak COLUMN FILE: the largest number in COLUMN of FILE.
peak() {
	awk -v c="$1" '$c > m { m = $c } END { print m + 0 }' "$2"
}

# Per build: wall time, the module's and the daemon's part.
echo "# build         wall s  daemon CPU  first-map waits (answered, ran out)  memory: before, peak, after; sections: the same"
for r in $runs; do
	wall=$(awk '{ printf "%.1f", $1 / 1000 }' "$res/$r.ms")
	if [ -e "$res/$r.cpu" ]; then
		# shellcheck disable=SC2046  # numbers, split on purpose
		set -- $(cat "$res/$r.cpu") $(cat "$res/$r.waits") \
			$(cat "$res/$r.before") $(cat "$res/$r.after")
		printf '# %-12s %7s  %9s  %5d (%d, %d)  %s, %s, %s; %s, %s, %s\n' \
			"$r" "$wall" \
			"$(awk -v d="$1" -v b="$2" 'BEGIN { printf "%.2f%%", b ? 100 * d / b : 0 }')" \
			"$3" "$4" "$5" "$6" "$(peak 1 "$res/$r.mem")" "$8" \
			"$7" "$(peak 2 "$res/$r.mem")" "$9"
		sed 's/^daemon: /#   daemon: /' "$res/$r.latency"
	else
		printf '# %-12s %7s  (module unloaded, no daemon)\n' "$r" "$wall"
	fi
done

# shares FILES...: per command, the samples of FILES added up, as
# "COMM reaching total", most samples first.
shares() {
	cat "$@" | awk '{ g[$1] += $2; t[$1] += $3 }
		END { for (c in t) print c, g[c], t[c] }' | sort -k3,3nr
}

# Per command: warm with the module (-g, and fp,defer where recorded),
# cold, and without the module.
warm_g=$(for i in $(seq "$rounds"); do
	[ "$(cat "$res/with$i.cg")" = -g ] && echo "$res/with$i.share"; done)
warm_d=$(for i in $(seq "$rounds"); do
	[ "$(cat "$res/with$i.cg")" != -g ] && echo "$res/with$i.share"; done)
# shellcheck disable=SC2086  # lists of files
shares $warm_g $warm_d > "$res/warm"
echo "# per command: samples reaching main / counted (share)"
printf '# %-16s %-22s %-22s %-22s %-22s\n' command "warm, -g" \
	"${defer:+warm, fp,defer}" cold "without the module"
# shellcheck disable=SC2086  # lists of files
shares $warm_g > "$res/warm_g"
# shellcheck disable=SC2086
[ -z "$warm_d" ] || shares $warm_d > "$res/warm_d"
shares "$res/cold.share" > "$res/cold"
# shellcheck disable=SC2046
shares $(for i in $(seq "$rounds"); do echo "$res/without$i.share"; done) \
	> "$res/without"
cell() {
	awk -v c="$1" '$1 == c { printf "%d/%d (%.1f%%)", $2, $3,
		$3 ? 100 * $2 / $3 : 0; f = 1 }
		END { if (!f) printf "-" }' "$2" 2> /dev/null || printf -- "-"
}
head -12 "$res/warm" | while read -r c _ _; do
	printf '# %-16s %-22s %-22s %-22s %-22s\n' "$c" "$(cell "$c" "$res/warm_g")" \
		"$([ -n "$warm_d" ] && cell "$c" "$res/warm_d")" \
		"$(cell "$c" "$res/cold")" "$(cell "$c" "$res/without")"
done
# Why some stacks were not whole: the first two of each command.
for i in $(seq "$rounds"); do
	sed "s/^# incomplete /# with$i, incomplete /" "$res/with$i.miss"
done

# The goals.
short=$(awk -v n="$goal_samples" -v want="$goal_cmds" \
	'$1 ~ want && $3 >= n && $2 * 100 < $3 * 99 { printf " %s", $1 }' "$res/warm")
echo "# goal: >= 99% of samples reach main for every command of the build with >= $goal_samples (warm):" \
	"$([ -z "$short" ] && echo met || echo "not met:$short")"
with_ms=$(for i in $(seq "$rounds"); do cat "$res/with$i.ms"; done | sort -n | head -1)
without_ms=$(for i in $(seq "$rounds"); do cat "$res/without$i.ms"; done | sort -n | head -1)
echo "# goal: wall time with module + daemon <= 1.03x without (the rounds' minimum, TCG):" \
	"$(awk -v a="$with_ms" -v b="$without_ms" 'BEGIN { printf "%.3fx (%s)", a / b, a <= 1.03 * b ? "met" : "not met" }')"
echo "# goal: the daemon's CPU <= 2% of the machine's busy time during a warm build:" \
	"$(for i in $(seq "$rounds"); do cat "$res/with$i.cpu"; done |
	   awk '{ d += $1; b += $2 } END { printf "%.2f%% (%s)", b ? 100 * d / b : 0, d * 50 <= b ? "met" : "not met" }')"
gone=met
for i in $(seq "$rounds"); do
	# shellcheck disable=SC2046  # numbers
	set -- $(cat "$res/with$i.before") $(cat "$res/with$i.after")
	[ "$2" = "$4" ] || gone="not met (with$i: $2 sections before, $4 after)"
done
echo "# goal: the build's sections gone after it (warm): $gone"
exit 0
