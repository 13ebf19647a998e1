#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh - the project's test tiers
#
#   tools/testing/check.sh        make check: host tests, the x86-64
#                                 guests of Debian 12's 6.12 and of the
#                                 newest 7.x (Debian 13's
#                                 trixie-backports), their flame graphs
#                                 in a browser, the Debian packages (DKMS
#                                 in Debian 12 and 13 chroots, booted in
#                                 the 6.12 and 7.x guests), KUnit on
#                                 x86-64
#   tools/testing/check.sh --all  make check-all: also the harness's own
#                                 tests, the module's W=1 build against
#                                 every kernel of the matrix (make
#                                 check-builds), x86-64 6.1, x86-64 6.12
#                                 PREEMPT_RT, arm64 6.12, s390x 6.1,
#                                 Debian 13's 6.12 on all three, the
#                                 newest 7.x on arm64 and s390x and its
#                                 PREEMPT_RT flavour on x86-64, the debug
#                                 kernel and KUnit on arm64 and s390
#
# Every stage prints its own TAP and a "# NAME: N passed, N failed" line
# (or several, which add up); a stage without one counts as one test,
# passed if it exited 0.  The run ends with
# a summary per stage and the total "N passed, N failed".  A guest is one
# TCG thread: the longest runs beside the other stages (background(),
# join()), and make check-all's run two at a time.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
all=""
[ "${1:-}" = --all ] && all=1
log=build/check
mkdir -p "$log"

total_pass=0
total_fail=0
summary=()

# count NAME RC START: add up the stage's log as below; the summary line.
count() {
	local name=$1 rc=$2 start=$3 p f

	# The stage's own summaries ("# NAME: N passed, N failed"), added
	# up; those of the tests inside a guest ("# # ...") are in its own.
	read -r p f < <(sed -n 's/^# [^ #][^:]*: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' \
		"$log/$name.log" | awk '{ p += $1; f += $2; n++ } END { if (n) print p, f }')
	if [ -z "${p:-}" ]; then
		p=0 f=0
		if [ "$rc" -eq 0 ]; then p=1; else f=1; fi
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	summary+=("$(printf '%-22s %5s passed %3s failed  %4ss%s' "$name" "$p" "$f" \
		"$(( $(date +%s) - start ))" "$([ "$rc" -ne 0 ] && echo "  (exit $rc)")")")
}

stage() {
	local name=$1 rc start

	shift
	start=$(date +%s)
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log/$name.log"
	rc=${PIPESTATUS[0]}
	count "$name" "$rc" "$start"
}

# background NAME CMD...: a stage that runs beside the next ones, its
# output kept for join.  Every guest is one TCG thread, so the longest
# guest takes the second core while the rest go on.  In a session of its
# own, so that an interrupted run takes it down too.
declare -A bg_pid bg_start
trap 'for p in "${bg_pid[@]}"; do kill -- "-$p" 2> /dev/null; done' EXIT
background() {
	local name=$1

	shift
	echo "=== $name (in the background): $*"
	bg_start[$name]=$(date +%s)
	setsid "$@" > "$log/$name.log" 2>&1 &
	bg_pid[$name]=$!
}

# join NAME: wait for a background stage, print its output, count it.
join() {
	local name=$1 rc=0

	wait "${bg_pid[$name]}" || rc=$?
	unset "bg_pid[$name]"
	echo "=== $name (from the background)"
	cat "$log/$name.log"
	count "$name" "$rc" "${bg_start[$name]}"
}

# guest ARCH KVER [options]: the selftests in a guest.  A stall report
# with no frame of the module (TCG on a busy host: the CI machine runs
# other work too) is a warning; one with a frame of it fails the run, as
# does every warning, hung task, oops or sanitizer report.
guest() {
	tools/testing/qemu/run.sh "$@" --stalls-ok
}

stage setup scripts/setup-host.sh all
stage build make -s all
# The 6.12 guest, the longest stage, beside all the others, with room
# for a guest that shares the machine (run.sh's own bound is 2400 s).
# bpftrace takes minutes to start under TCG, and so do Node.js and the
# JVM: make check leaves the BPF test to make check-all, which runs it
# in every guest, and the runtimes' tests to the 7.x guest.  The daemon's
# sync of an empty cache (sframectl_sync_order.sh) takes minutes too, and
# the first runs of sframectl_first_run.sh wait on the daemon's check of
# cached files (a SHA-256 of cc1plus's 35 MB), which on a busy host runs
# past the waits' bound under TCG, and the test up to its 1200 s: make
# check-all runs both.
if [ -n "$all" ]; then
	background qemu-x86_64-6.12 tools/testing/qemu/run.sh x86_64 6.12 \
		--stalls-ok --timeout 4800
else
	background qemu-x86_64-6.12 tools/testing/qemu/run.sh x86_64 6.12 \
		--stalls-ok --timeout 4800 \
		--skip "bpf_ustack.sh node_perf.sh java_perf.sh sframectl_sync_order.sh sframectl_first_run.sh"
fi
stage tools-cli tools/testing/checks/tools-cli.sh
stage host-kunit make -s check-host
stage corpus make -s check-corpus
stage table-real make -s check-table
stage gen-oracle make -s check-gen
stage fuzz-smoke make -s fuzz-smoke FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
stage bench-host make -s bench-host
stage style scripts/checkpatch.sh
stage systemd-unit tools/testing/checks/verify-unit.sh
# The 7.x guest in make check leaves out what does not depend on the
# kernel's version (the decoder, the ioctl fuzzer, fault injection, the
# walk budget, the stress loops, the daemon's trust boundary) and the
# longest user-space tests (sframectl with Debian 13's programs, its first
# runs, bpftrace), to keep make check within CI's time; make check-all
# runs its whole list.  Python's, Node.js's and Java's chains are run
# here, in the one guest with Debian 13's runtimes.
# The whole list on 7.x takes about twice the time it takes on 6.12
# (Debian 13's perf 7.3 under TCG), past run.sh's 2400 s for x86-64.
if [ -n "$all" ]; then
	stage qemu-x86_64-7 guest x86_64 7 --timeout 4800
else
	stage qemu-x86_64-7 guest x86_64 7 --timeout 3600 --skip \
		"decode_agree ioctl_fuzz registry_failnth unwind_budget stress.sh sframectl.sh sframectl_trust.sh sframectl_first_run.sh sframectl_sync_order.sh bpf_ustack.sh"
fi
# The flame graph perf_callchain.sh drew in the 7.x guest with
# --call-graph fp,defer (and, after the join below, the 6.12 guest's with
# -g), opened in headless Chromium.  The program's width holds its
# start-up and exit too (the kernel's exec, the dynamic loader: about
# 3%), so main spans at least 90% of it with the module (the selftest
# itself wants 95% of the samples in the program).
fg=build/qemu/x86_64-7/export/flamegraph/perf_callchain
stage flamegraph-7-defer tools/testing/checks/flamegraph-check.sh --with 90 \
	sfu_chain "$fg-defer_without.html" "$fg-defer_with.html"
# The harness's own tests boot three guests that must fail; they test
# the tools, not the module, and make check-all runs them (below).
[ -z "$all" ] || stage harness tools/testing/qemu/harness-test.sh
stage deb scripts/deb.sh check
stage kunit-x86_64 tools/testing/kunit/kunit.sh x86_64
join qemu-x86_64-6.12
fg=build/qemu/x86_64-6.12/export/flamegraph/perf_callchain
stage flamegraph-6.12 tools/testing/checks/flamegraph-check.sh --with 90 \
	sfu_chain "$fg-without.html" "$fg-with.html"
# pair ARCH KVER ARCH KVER: two guests at once, one per core, each with
# room for the other beside it.
pair() {
	background "qemu-$1-$2" tools/testing/qemu/run.sh "$1" "$2" \
		--stalls-ok --timeout 4800
	stage "qemu-$3-$4" guest "$3" "$4" --timeout 4800
	join "qemu-$1-$2"
}

# make check-all's other guests in pairs of similar length.  Nothing else
# runs beside them (see the 6.12 guest above): the builds come after.
if [ -n "$all" ]; then
	pair x86_64 6.1 x86_64 6.12-rt
	pair arm64 6.12 s390x 6.1
	pair x86_64 6.12-deb13 x86_64 7-rt
	pair arm64 6.12-deb13 arm64 7
	pair s390x 6.12-deb13 s390x 7
	stage qemu-x86_64-debug guest x86_64 debug
	stage builds tools/testing/checks/build-matrix.sh
	stage kunit-arm64 tools/testing/kunit/kunit.sh arm64
	stage kunit-s390 tools/testing/kunit/kunit.sh s390
fi

# record: what ran, where, on which commit, and what it gave, kept as
# build/check/results.txt (Documentation/testing.rst, Test records).
record() {
	local commit tier=check

	[ -z "$all" ] || tier=check-all
	commit=$(git -C "$root" rev-parse HEAD 2> /dev/null || echo unknown)
	git -C "$root" diff --quiet HEAD 2> /dev/null ||
		commit="$commit (with changes not committed)"
	echo "commit $commit"
	echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "tier make $tier"
	echo "host $(uname -srm), $(nproc) CPUs"
	grep -h '^# qemu-run: .* kernel ' "$log"/*.log 2> /dev/null |
		sed 's/^# qemu-run: /guest /' | sort -u
	printf '%s\n' "${summary[@]}"
	echo "check: $total_pass passed, $total_fail failed"
}

echo
echo "=== summary"
for s in "${summary[@]}"; do
	echo "$s"
done
echo "check: $total_pass passed, $total_fail failed"
record > "$log/results.txt"
echo "check: the record of this run is $log/results.txt"
[ "$total_fail" -eq 0 ]
