#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the user stack walk perf makes for each sample, the kernel's
# frame-pointer walk against the module's SFrame walk, side by side in one
# boot, and the module's memory per registered process and library.
#
# walk time   bench/walk.c (-O2 -fno-omit-frame-pointer with
#             SFrame: both walks work on it) spins in the leaf of a
#             recursion through 12 functions with frames of 12 sizes,
#             DEPTH deep (8, 32, 127).  perf record -e cpu-clock
#             --call-graph fp --user-callchains -p PID samples it while
#             the function_graph tracer (max_graph_depth 1) times each
#             call of the walk: perf_callchain_user() with the module
#             unloaded (the kernel's frame-pointer walk),
#             sfu_perf_callchain_user() with it loaded (the SFrame walk;
#             the ftrace redirect that leads there is not in this time).
#             Rounds alternate the module loaded and unloaded
#             (BENCH_ROUNDS, 3); the walks of all rounds are pooled.
#             Frames per walk come from the raw call chains of the same
#             recording (perf report -D): as the program only spins in the
#             leaf, every sample of a run must have the same number of
#             user frames (checked; printed as frames), so walk time /
#             frames is exact per sample.  At depth 127 both walks stop at
#             perf's limit, kernel.perf_event_max_stack (127 frames).
#             function_graph adds a constant time to every traced call
#             (its entry and return hooks and the ring buffer), which
#             weighs most on the short walks; the marginal cost per frame,
#             (median at the deepest - median at the shallowest) / (their
#             frame difference), is printed too: the constant cancels.
# worst case  with the module loaded, the same recording of walk_crafted
#             (x86-64) at the deepest depth: its stack is in
#             crafted_walk (bench/crafted-x86_64.S), 65,400 one-byte rows
#             and 63,000 distinct rules, nearly every entry spilled from
#             the rule table's codes (a wide table), in 256-byte blocks
#             of 256 entries: the most a lookup can cost.  Walk time against the
#             SFrame walk of walk_sframe, per sample and per frame.
# worst walk  the module's walks: max / median and p99 / median; again
#             without the first BENCH_WALK_WARM (5) walks of each run (under
#             TCG the first run of code costs its translation), and where
#             in its run each run's worst walk was.
# bytes       perf.data bytes per sample, the whole file and the sample
#             records alone (perf report -D sizes), of the SFrame runs
#             against the frame-pointer runs, and of --call-graph dwarf
#             (its default 8192-byte stack copies, same program and
#             options) against the SFrame runs.
# memory      the stats file's memory_bytes (and file_cache_bytes: the
#             index and rule table of each file, shared) before and after
#             BENCH_MEM_PROCS (16) processes with SFrame start and stay,
#             and after one process dlopen()s BENCH_MEM_LIBS (8) copies of
#             a library with SFrame: bytes per process and per library.
# Under TCG absolute times are about a hundred times those of hardware:
# only the ratios mean anything.  A benchmark: it fails only if a
# measurement cannot be made.  Leaves the module loaded.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh
# BENCH_* from make bench's environment (tools/testing/qemu/run.sh).
# shellcheck disable=SC1091  # written by run.sh
[ -r /selftests/bench.env ] && . /selftests/bench.env

rounds=${BENCH_ROUNDS:-3}
secs=${BENCH_WALK_SECONDS:-2}
hz=${BENCH_WALK_HZ:-500}
depths=${BENCH_WALK_DEPTHS:-8 32 127}
nproc=${BENCH_MEM_PROCS:-16}
nlib=${BENCH_MEM_LIBS:-8}
warm=${BENCH_WALK_WARM:-5}
walk=/selftests/bench/walk_sframe
crafted=/selftests/bench/walk_crafted
lib=/selftests/lib/libsfu_a.so
data=/tmp/sfu_walk.data		# in the chroot
res=/tmp/bench_walk
pid=""
rm -rf "$res" && mkdir -p "$res" || exit 1

# perf ARGS...: the host's perf, in the chroot.
perf() {
	chroot /host perf "$@"
}

# graph_off [OUT]: stop function_graph; each traced call's duration (ns)
# to OUT, a "LOST" line for events the ring buffer dropped.
graph_off() {
	echo 0 > "$tracefs/tracing_on"
	[ -z "$1" ] || awk '/LOST/ { print "LOST"; next } /^ *#/ { next }
		/\|/ { for (i = 2; i <= NF; i++) if ($i == "us") {
			printf "%d\n", $(i - 1) * 1000 + 0.5; break } }' \
		"$tracefs/trace" > "$1"
	echo nop > "$tracefs/current_tracer"
	echo > "$tracefs/set_ftrace_filter"
	echo 0 > "$tracefs/max_graph_depth"
	echo > "$tracefs/trace"
}

# graph_on FUNC: function_graph times every call of FUNC and nothing else.
graph_on() {
	graph_off
	grep -qE "^$1( |$)" "$tracefs/available_filter_functions" ||
		{ echo "# $1 cannot be traced"; return 1; }
	echo "$1" > "$tracefs/set_ftrace_filter" &&
		echo 1 > "$tracefs/max_graph_depth" &&
		echo function_graph > "$tracefs/current_tracer" &&
		echo 1 > "$tracefs/tracing_on"
}

# start OUT PROG ARGS...: PROG ARGS in the background, stdout to OUT,
# until it prints "ready"; its pid in $pid.
start() {
	local o="$1" i=0

	shift
	: > "$o"
	"$@" > "$o" 2>&1 &
	pid=$!
	until grep -q '^ready' "$o"; do
		i=$((i + 1))
		if [ "$i" -ge 300 ] || ! kill -0 "$pid" 2> /dev/null; then
			sed 's/^/# walk: /' "$o"
			return 1
		fi
		sleep 0.1
	done
}

# stop PID: kill a walk and reap it.
stop() {
	kill "$1" 2> /dev/null
	wait "$1" 2> /dev/null
	return 0
}

cleanup() {
	graph_off
	[ -z "$pid" ] || stop "$pid"
	rm -f "/host$data" /tmp/sfu_bench_lib*.so
}

fail() {
	echo "# bench_walk: $*"
	cleanup
	load
	exit 1
}

# chains NAME: from the raw dump of $data, "samples sample-bytes
# min-frames max-frames" (user frames per call chain) to $res/NAME.sum.
chains() {
	perf report -D -i "$data" 2> /dev/null | awk "$awk_hex"'
		function flush() {
			if (!in_chain)
				return
			if (nch++ == 0 || nf < fmin)
				fmin = nf
			if (nf > fmax)
				fmax = nf
			in_chain = 0
		}
		/PERF_RECORD_SAMPLE/ {
			flush()
			if (match($0, /\[0x[0-9a-f]+\]/))
				bytes += hex(substr($0, RSTART + 1, RLENGTH - 2))
			n++
			next
		}
		/^\.\.\. FP chain: nr:/ {
			flush()
			in_chain = 1
			user = 0
			nf = 0
			next
		}
		# perf 7.x names a context after its address.
		in_chain && /^\.\.\.\.\. +[0-9]+: [0-9a-f]+( |$)/ {
			if ($3 ~ /^fffffffffffff/)
				user = $3 == "fffffffffffffe00"
			else if (user)
				nf++
			next
		}
		{ flush() }
		END { flush(); print n + 0, bytes + 0, fmin + 0, fmax + 0 }' \
		> "$res/$1.sum"
}

# record NAME DEPTH CALLGRAPH: perf records walk spin DEPTH for $secs s;
# file size to $res/NAME.size, chains() to $res/NAME.sum, the module's
# perf_walks during the recording to $res/NAME.walks.
record() {
	local rc w0 n

	rm -f "/host$data"
	w0=$(stat_of perf_walks 2> /dev/null)
	perf record -q -e cpu-clock -F "$hz" --call-graph "$3" \
		--user-callchains -o "$data" -p "$pid" -- sleep "$secs" \
		> "$res/$1.log" 2>&1
	rc=$?
	if loaded; then
		echo $(($(stat_of perf_walks) - w0)) > "$res/$1.walks"
	else
		echo 0 > "$res/$1.walks"
	fi
	if [ "$rc" -ne 0 ] || [ ! -s "/host$data" ]; then
		sed 's/^/# perf: /' "$res/$1.log"
		return 1
	fi
	wc -c < "/host$data" > "$res/$1.size"
	chains "$1"
	rm -f "/host$data"
	read -r n _ < "$res/$1.sum"
	[ "$n" -gt 0 ] || { echo "# $1: no samples"; return 1; }
}

# walk_run MODE DEPTH ROUND: one timed recording; MODE fp (module
# unloaded), sframe (loaded) or crafted (loaded, walk_crafted's stack).
# Appends the walk times to $res/MODE.DEPTH.
walk_run() {
	local fn=sfu_perf_callchain_user name="$1.$2.$3"

	[ "$1" = fp ] && fn=perf_callchain_user
	if [ "$1" = crafted ]; then
		start "$res/$name.out" "$crafted" crafted "$2" || return 1
	else
		start "$res/$name.out" "$walk" spin "$2" || return 1
	fi
	graph_on "$fn" || return 1
	record "$name" "$2" fp || return 1
	graph_off "$res/$name.ns"
	stop "$pid"
	pid=""
	if grep -q LOST "$res/$name.ns"; then
		echo "# $name: the trace lost events"
		return 1
	fi
	[ -s "$res/$name.ns" ] || { echo "# $name: no walk traced"; return 1; }
	cat "$res/$name.ns" >> "$res/$1.$2"
	# Without the first $warm walks of the run, and where its worst was.
	awk -v w="$warm" 'NR > w' "$res/$name.ns" >> "$res/$1.$2.warm"
	awk '$1 > m { m = $1; i = NR } END { printf " %d/%d", i, NR }' \
		"$res/$name.ns" >> "$res/$1.$2.maxat"
}

# dwarf_run DEPTH: the same recording with --call-graph dwarf, untimed.
dwarf_run() {
	start "$res/dwarf.$1.out" "$walk" spin "$1" || return 1
	record "dwarf.$1.1" "$1" dwarf
	local rc=$?
	stop "$pid"
	pid=""
	return "$rc"
}

# pct FILE: "min p10 median p99 max count" of the numbers in FILE.
pct() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		printf "%d %d %d %d %d %d\n", v[1], v[int((NR - 1) / 10) + 1],
			v[int((NR + 1) / 2)], v[int((NR - 1) * 99 / 100) + 1],
			v[NR], NR }'
}

# div A B [FORMAT]: A / B.
div() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" \
		'BEGIN { if (b > 0) printf f, a / b; else printf "-" }'
}

# frames MODE DEPTH: the user frames of every sample of every round, or
# a "# " line if they differ.
frames() {
	cat "$res/$1.$2".[0-9]*.sum | awk -v w="$1 depth $2" '
		NR == 1 { lo = $3; hi = $4 }
		$3 < lo { lo = $3 }
		$4 > hi { hi = $4 }
		END {
			if (lo == hi && lo > 0)
				print lo
			else
				print "# " w ": samples have " lo " to " hi \
					" user frames"
		}'
}

# sum MODE-GLOB COLUMN: the sum of COLUMN of the .sum files.
sum() {
	# shellcheck disable=SC2086  # a glob
	cat $1 | awk -v c="$2" '{ s += $c } END { print s + 0 }'
}

# --- memory per process and library (needs no perf)
# settle BYTES: wait (5 s at most) until memory_bytes is at most BYTES.
settle() {
	local i=0

	while [ "$(stat_of memory_bytes)" -gt "$1" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# sections_of PID: its lines of the sections file, indented.
sections_of() {
	awk -v p="pid=$1" '$1 == p { on = 1; print "#   " $0; next }
		/^pid=/ { on = 0 } on { print "#   " $0 }' "$dbg/sections"
}

memory() {
	local i pids m0 m1 m2 m3 m4 f0 f1 f3 f4 libs p0

	m0=$(stat_of memory_bytes)
	f0=$(stat_of file_cache_bytes)
	pids=""
	i=0
	while [ "$i" -lt "$nproc" ]; do
		start "$res/hold.$i" "$walk" hold || return 1
		pids="$pids $pid"
		i=$((i + 1))
	done
	m1=$(stat_of memory_bytes)
	f1=$(stat_of file_cache_bytes)
	echo "# memory: $nproc processes of walk_sframe (no libraries), the last:"
	sections_of "$pid"
	for p0 in $pids; do
		stop "$p0"
	done
	pid=""
	settle "$m0"
	libs=""
	i=0
	while [ "$i" -lt "$nlib" ]; do
		cp "$lib" "/tmp/sfu_bench_lib$i.so" || return 1
		libs="$libs /tmp/sfu_bench_lib$i.so"
		i=$((i + 1))
	done
	m2=$(stat_of memory_bytes)
	start "$res/hold.p" "$walk" hold || return 1
	p0=$pid
	m3=$(stat_of memory_bytes)
	f3=$(stat_of file_cache_bytes)
	# shellcheck disable=SC2086  # the libraries, one argument each
	start "$res/hold.l" "$walk" hold $libs || return 1
	m4=$(stat_of memory_bytes)
	f4=$(stat_of file_cache_bytes)
	echo "# memory: one process with $nlib copies of ${lib##*/} dlopen()ed:"
	sections_of "$pid"
	stop "$pid"
	stop "$p0"
	pid=""
	settle "$m2"
	echo "# memory_bytes: $m0 before, $m1 with $nproc processes; $m2 before, $m3 with one process, $m4 with another holding $nlib libraries; $(stat_of memory_bytes) after"
	printf '# %-36s %10s\n' "module memory (memory_bytes)" bytes
	printf '# %-36s %10d\n' "per registered process" \
		$(((m1 - m0) / nproc))
	printf '# %-36s %10d\n' "per dlopen()ed library" \
		$(((m4 - m3 - (m3 - m2)) / nlib))
	echo "# file_cache_bytes: $f0 before, $f1 with $nproc processes; $f3 with one process, $f4 with $nlib libraries"
	printf '# %-36s %10s\n' "file cache, once per file (file_cache_bytes)" bytes
	printf '# %-36s %10d\n' "walk_sframe (16 processes share it)" \
		$((f1 - f0))
	printf '# %-36s %10d\n' "per library file" $(((f4 - f3) / nlib))
	rm -f /tmp/sfu_bench_lib*.so
	if [ "$m1" -le "$m0" ] || [ "$m4" -le "$m3" ]; then
		echo "# memory_bytes did not grow"
		return 1
	fi
}

[ -x "$walk" ] || fail "no $walk"
unload || fail "rmmod failed"
load || fail "insmod failed"
memory || fail "memory: a measurement failed"

if ! grep -q ' /host 9p ' /proc/mounts || [ ! -x /host/usr/bin/perf ]; then
	echo "# SKIP the walk: needs Debian's perf at /host"
	exit 0
fi
grep -qw function_graph "$tracefs/available_tracers" ||
	fail "no function_graph tracer"
echo "# $(perf --version); $rounds rounds of $secs s at $hz Hz per depth"

# --- the walks: rounds alternate the module loaded and unloaded
deepest=$(echo "$depths" | awk '{ print $NF }')
r=1
while [ "$r" -le "$rounds" ]; do
	load || fail "insmod failed"
	# Where the walk lies: under TCG a page boundary in its loop costs.
	[ "$r" -gt 1 ] || awk '$3 == "sfu_unwind_user" {
		print "# sfu_unwind_user at " $1 ", page offset " substr($1, length($1) - 2)
	}' /proc/kallsyms
	for d in $depths; do
		walk_run sframe "$d" "$r" ||
			fail "depth $d, module loaded: a measurement failed"
	done
	if [ -x "$crafted" ]; then
		walk_run crafted "$deepest" "$r" ||
			fail "walk_crafted: a measurement failed"
	fi
	unload || fail "rmmod failed"
	for d in $depths; do
		walk_run fp "$d" "$r" ||
			fail "depth $d, module unloaded: a measurement failed"
	done
	r=$((r + 1))
done
load || fail "insmod failed"
# Not every kernel lets perf copy user stacks for a software event (Debian's
# arm64 6.12 refuses it: "PMU Hardware doesn't support sampling"): then the
# dwarf columns are left out, with the reason, rather than the benchmark.
dwarf_ok=1
for d in $depths; do
	dwarf_run "$d" && continue
	echo "# --call-graph dwarf: no recording at depth $d (perf's message above); no dwarf columns"
	dwarf_ok=0
	break
done
cleanup

# Sanity: the walks traced against the samples recorded, the module's
# walks (perf_walks) against its samples.
for d in $depths; do
	for m in fp sframe; do
		printf '# %-6s depth %3d: %5d walks traced, %5d samples, %5d module walks\n' \
			"$m" "$d" "$(wc -l < "$res/$m.$d")" \
			"$(sum "$res/$m.$d.*.sum" 1)" \
			"$(sum "$res/$m.$d.*.walks" 1)"
	done
done

echo "# walk time per sample, ns (min / p10 / median), $rounds rounds pooled"
printf '# %-5s %-6s %-23s %-23s %s\n' depth frames "frame pointers" \
	"SFrame (module)" "ratio SFrame/FP"
for d in $depths; do
	ffp=$(frames fp "$d")
	fsf=$(frames sframe "$d")
	case "$ffp$fsf" in
	*"#"*) echo "$ffp$fsf"; fail "depth $d: unequal call chains" ;;
	esac
	# shellcheck disable=SC2046  # the statistics, split on purpose
	set -- $(pct "$res/fp.$d") $(pct "$res/sframe.$d")
	printf '# %-5d %-6s %7d %7d %7d %7d %7d %7d   %s %s %s\n' "$d" \
		"$ffp/$fsf" "$1" "$2" "$3" "$7" "$8" "$9" \
		"$(div "$7" "$1")" "$(div "$8" "$2")" "$(div "$9" "$3")"
	echo "$d $ffp $fsf $*" >> "$res/table"
done

echo "# walk time per frame, ns (min / p10 / median): walk time / frames"
printf '# %-5s %-23s %-23s %s\n' depth "frame pointers" "SFrame (module)" \
	"ratio SFrame/FP"
while read -r d ffp fsf a1 a2 a3 _ _ _ b1 b2 b3 _; do
	printf '# %-5d %7s %7s %7s %7s %7s %7s   %s %s %s\n' "$d" \
		"$(div "$a1" "$ffp" %.0f)" "$(div "$a2" "$ffp" %.0f)" \
		"$(div "$a3" "$ffp" %.0f)" "$(div "$b1" "$fsf" %.0f)" \
		"$(div "$b2" "$fsf" %.0f)" "$(div "$b3" "$fsf" %.0f)" \
		"$(div "$((b1 * ffp))" "$((a1 * fsf))")" \
		"$(div "$((b2 * ffp))" "$((a2 * fsf))")" \
		"$(div "$((b3 * ffp))" "$((a3 * fsf))")"
done < "$res/table"
# The marginal cost, from the shallowest and the deepest depth's medians.
# shellcheck disable=SC2046  # two lines of numbers
set -- $(head -1 "$res/table") $(tail -1 "$res/table")
if [ "${17}" -gt "$2" ] && [ "${18}" -gt "$3" ]; then
	a=$(div "$((${21} - $6))" "$((${17} - $2))" %.0f)
	b=$(div "$((${27} - ${12}))" "$((${18} - $3))" %.0f)
	printf '# marginal ns per frame (depth %d to %d medians): frame pointers %s, SFrame %s, ratio %s\n' \
		"$1" "${16}" "$a" "$b" "$(div "$b" "$a")"
fi

# The table's worst case against the same depth's ordinary SFrame walk.
if [ -s "$res/crafted.$deepest" ]; then
	fc=$(frames crafted "$deepest")
	fs=$(frames sframe "$deepest")
	case "$fc$fs" in
	*"#"*) echo "$fc$fs"; fail "walk_crafted: unequal call chains" ;;
	esac
	echo "# the rule table's worst case (walk_crafted), depth $deepest, $fc/$fs frames: walk per sample, ns (min / p10 / median)"
	# shellcheck disable=SC2046  # the statistics, split on purpose
	set -- $(pct "$res/sframe.$deepest") $(pct "$res/crafted.$deepest")
	printf '# SFrame %d %d %d, worst case %d %d %d: worst case / SFrame per sample %s %s %s, per frame %s %s %s\n' \
		"$1" "$2" "$3" "$7" "$8" "$9" \
		"$(div "$7" "$1")" "$(div "$8" "$2")" "$(div "$9" "$3")" \
		"$(div "$(($7 * fs))" "$(($1 * fc))")" \
		"$(div "$(($8 * fs))" "$(($2 * fc))")" \
		"$(div "$(($9 * fs))" "$(($3 * fc))")"
fi

echo "# worst walk against the median (ns), SFrame (module) and frame pointers"
printf '# %-5s %-8s %-8s %-9s %-8s %-8s %s\n' depth median p99 max \
	p99/med max/med "FP p99/med / max/med"
while read -r d _ _ _ _ a3 a4 a5 _ _ _ b3 b4 b5 _; do
	printf '# %-5d %-8d %-8d %-9d %-8s %-8s %s\n' "$d" "$b3" \
		"$b4" "$b5" "$(div "$b4" "$b3")" "$(div "$b5" "$b3")" \
		"$(div "$a4" "$a3") / $(div "$a5" "$a3")"
done < "$res/table"
echo "# the same without the first $warm walks of each run"
for d in $depths; do
	# shellcheck disable=SC2046  # the statistics, split on purpose
	set -- $(pct "$res/fp.$d.warm") $(pct "$res/sframe.$d.warm")
	printf '# %-5d %-8d %-8d %-9d %-8s %-8s %s\n' "$d" "$9" "${10}" \
		"${11}" "$(div "${10}" "$9")" "$(div "${11}" "$9")" \
		"$(div "$4" "$3") / $(div "$5" "$3")"
done
for d in $depths; do
	echo "# where each run's worst walk was (walk/walks): FP$(cat "$res/fp.$d.maxat"), SFrame$(cat "$res/sframe.$d.maxat"), depth $d"
done

echo "# perf.data bytes per sample: whole file / sample records alone"
modes="fp sframe dwarf"
[ "$dwarf_ok" = 1 ] || modes="fp sframe"
printf '# %-5s %-15s %-15s %-13s %-15s %s\n' depth "frame pointers" \
	"SFrame" "SFrame/FP" "dwarf" "dwarf/SFrame"
for d in $depths; do
	set --
	for m in $modes; do
		s=$(sum "$res/$m.$d.*.sum" 1)
		set -- "$@" "$(div "$(sum "$res/$m.$d.*.size" 1)" "$s" %.0f)" \
			"$(div "$(sum "$res/$m.$d.*.sum" 2)" "$s" %.0f)"
	done
	if [ "$dwarf_ok" = 1 ]; then
		printf '# %-5d %6s / %-6s %6s / %-6s %5s / %-5s %6s / %-6s %s / %s\n' \
			"$d" "$1" "$2" "$3" "$4" "$(div "$3" "$1")" \
			"$(div "$4" "$2")" "$5" "$6" "$(div "$5" "$3" %.1f)" \
			"$(div "$6" "$4" %.1f)"
	else
		printf '# %-5d %6s / %-6s %6s / %-6s %5s / %-5s (none)\n' \
			"$d" "$1" "$2" "$3" "$4" "$(div "$3" "$1")" \
			"$(div "$4" "$2")"
	fi
done
exit 0
