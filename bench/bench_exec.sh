#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench: what the module costs a process, measured side by side in
# one boot.  Alternating rounds with the module loaded and unloaded:
#   exec sframe   fork+exec+exit of a program with SFrame (registered at
#                 exec, dropped at exit)
#   exec plain    the same program built without SFrame
#   dlopen        dlopen+dlclose of a library with SFrame
# Prints min and median of each (ns per operation) and the ratios loaded /
# unloaded.  A benchmark: it fails only if a measurement cannot be made.
#
# Loading and unloading the module patches the kernel's text (ftrace's
# call sites) and loads or frees the module's, which QEMU's TCG must
# translate again: the first runs after a change were 5-8% slower, on
# whichever side came first.  So each state begins with a short warm-up
# pass that is not counted, and the rounds alternate which state goes
# first.
# BENCH_ROUNDS, BENCH_EXEC and BENCH_DLOPEN come from make bench's
# environment through /selftests/bench.env (tools/testing/qemu/run.sh).
# shellcheck disable=SC1091  # written by run.sh
[ -r /selftests/bench.env ] && . /selftests/bench.env
rounds=${BENCH_ROUNDS:-5}
n_exec=${BENCH_EXEC:-100}
n_dl=${BENCH_DLOPEN:-300}
ko=/lib/test-modules/sframe_unwind.ko
bin=/selftests/bench
lib=/selftests/lib/libsfu_a.so
res=/tmp/bench_exec
rm -rf "$res" && mkdir -p "$res" || exit 1

fail() {
	echo "# bench_exec: $*"
	exit 1
}

# Warm-up pass: a tenth of each measurement.
warm_exec=$(((n_exec + 9) / 10))
warm_dl=$(((n_dl + 9) / 10))

# measure STATE: one round of every measurement, module STATE (on|off),
# after a warm-up pass.
measure() {
	"$bin/exec_sframe" exec "$warm_exec" > /dev/null &&
		"$bin/exec_plain" exec "$warm_exec" > /dev/null &&
		"$bin/exec_plain" dlopen "$warm_dl" "$lib" > /dev/null &&
		"$bin/exec_sframe" exec "$n_exec" >> "$res/exec_sframe.$1" &&
		"$bin/exec_plain" exec "$n_exec" >> "$res/exec_plain.$1" &&
		"$bin/exec_plain" dlopen "$n_dl" "$lib" >> "$res/dlopen.$1"
}

measure_on() {
	insmod "$ko" test_hooks=1 || fail "insmod failed"
	measure on || fail "a measurement failed (module loaded)"
	rmmod sframe_unwind || fail "rmmod failed"
}

measure_off() {
	measure off || fail "a measurement failed (module unloaded)"
}

# stats FILE: "min median" of the numbers in FILE.
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		printf "%d %d\n", v[1], v[int((NR + 1) / 2)] }'
}

rmmod sframe_unwind 2> /dev/null
i=0
while [ "$i" -lt "$rounds" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		measure_on
		measure_off
	else
		measure_off
		measure_on
	fi
	i=$((i + 1))
done
insmod "$ko" test_hooks=1 || fail "insmod failed"

echo "# $rounds alternating rounds, each state after a warm-up pass; ns per operation (min / median)"
printf '# %-14s %19s %19s %15s\n' what loaded unloaded "ratio min/med"
for w in exec_sframe exec_plain dlopen; do
	# shellcheck disable=SC2046  # two numbers each, split on purpose
	set -- $(stats "$res/$w.on") $(stats "$res/$w.off")
	printf '# %-14s %9d / %7d %9d / %7d %7s / %5s\n' "$w" "$1" "$2" \
		"$3" "$4" "$(awk -v a="$1" -v b="$3" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$2" -v b="$4" 'BEGIN { printf "%.2f", a / b }')"
done
exit 0
