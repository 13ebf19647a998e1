#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perf record -g through SFrame, with Debian's unmodified perf (run in the
# guest with chroot /host: the host's root on x86-64, a Debian root of the
# guest's architecture elsewhere; the program is copied to /host/tmp).
# sfu_chain spin (selftests/perf/chain.c: -O2 -fomit-frame-pointer with
# SFrame, CPU work in chain_a, chain_b, chain_d and chain_leaf of
# main -> chain_a -> chain_b -> chain_c -> chain_d -> chain_leaf, no calls
# into the C library there) is recorded with -e cpu-clock:
#   with the module     at least 95% of the samples whose innermost user
#                       frame is in the program carry exactly the chain
#                       from that function up to main;
#   without the module  the kernel walks frame pointers, which these
#                       functions do not keep: fewer than 50% do (the test
#                       can fail);
#   unload and reload   rmmod and insmod while perf records a run that
#                       goes on for a while after the insmod (the program
#                       still runs then): perf exits 0, its perf.data reads
#                       back with samples,
#                       and the reloaded module (which registers the
#                       running program at load) takes perf's call chains.
# On kernels with deferred user stacks (6.19 and later: perf record
# --call-graph fp,defer, the kernel walking in task work on the way back
# to user space with unwind_user()), the same three with fp,defer: at
# least 95% of the samples in the program reach main with the module,
# fewer than 50% without, and the module's walks of unwind_user() are
# counted (kernel_deferred_walks); then rmmod and insmod while perf
# records with fp,defer.  Then the stack paged out: with swap on zram,
# sfu_chain evict has the stack above the chain paged out after every
# leaf (MADV_PAGEOUT), so a walk that may not fault (-g, in the sample)
# stops short of main in most samples (fewer than 50% reach it), and the
# deferred walk, which faults the pages back in, reaches main in at
# least 95%; both shares are printed.
# The -g runs without and with the module (and the fp,defer ones) are
# also drawn as flame graphs by perf's own report (perf script report
# flamegraph, with the template the host packed) into
# /export/flamegraph/perf_callchain-RUN.html, for the host to open in a
# browser (tools/testing/checks/flamegraph-check.sh, make check).
# Leaves the module loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/perf_callchain
prog=/tmp/sfu_chain		# in the chroot
mode=spin			# sfu_chain's mode: spin or evict
secs=3

# perf ARGS...: the host's perf, in the chroot.
perf() {
	chroot /host perf "$@"
}

# summarize RUN: from perf script's output for RUN, print the samples
# whose innermost user frame is in the program, how many of those have
# the full chain, then per innermost function the samples and the full
# ones, and a few incomplete stacks; the two counts go to $out.RUN.sum.
summarize() {
	perf script -i "/tmp/perf.$1.data" -F comm,ip,sym,dso 2> /dev/null |
	awk -v chain="$chain" -v prog="($prog)" -v sum="$out.$1.sum" \
	    -v mainsum="$out.$1.main" '
		BEGIN { nc = split(chain, want, " ") }
		# Kernel frames: perf names the kernel or a module as the
		# DSO (s390x kernel addresses are small numbers).
		function kernel(i,   d) {
			d = dso[i]
			if (d ~ /^\(\[/)
				return d !~ /^\(\[(unknown|vdso|stack|heap)/
			return length(ip[i]) == 16 && ip[i] ~ /^ffff/
		}
		function sample(   i, u, p, j, ok, s) {
			for (u = 0; u < n && kernel(u); u++)
				;
			if (u == n || dso[u] != prog)
				return
			inprog++
			at[sym[u]]++
			for (i = u; i < n && sym[i] != "main"; i++)
				;
			reach += i < n
			for (p = 1; p <= nc && want[p] != sym[u]; p++)
				;
			ok = p <= nc
			for (j = 0; ok && p + j <= nc; j++)
				ok = u + j < n && sym[u + j] == want[p + j]
			if (ok) {
				full++
				fullat[sym[u]]++
				return
			}
			if (shown++ >= 5)
				return
			s = ""
			for (i = u; i < n; i++)
				s = s " " sym[i]
			print "incomplete:" s
		}
		/^[^ \t]/ { if (n) sample(); n = 0; next }
		/^[ \t]*$/ { if (n) sample(); n = 0; next }
		{ ip[n] = $1; sym[n] = $2; dso[n] = $NF; n++ }
		END {
			if (n)
				sample()
			for (s in at)
				print "innermost " s ": " at[s] " samples, " \
					fullat[s] + 0 " with the chain"
			print "in the program: " inprog + 0 \
				", with the chain up to main: " full + 0
			print inprog + 0, full + 0 > sum
			print inprog + 0, reach + 0 > mainsum
		}'
}

# raw RUN: the same count from the call chains as the kernel gave them
# (perf report -D), before the perf tool edits them: on arm64 it adds
# the leaf function's caller from the sampled LR register (perf 5.17 and
# later), which frame-pointer chains lack and ours already have, so its
# output shows that caller twice.  Frames are named with the program's
# symbol table, return addresses by the byte before them.  Counts go to
# $out.RUN.raw.
raw() {
	perf report -D -i "/tmp/perf.$1.data" 2> /dev/null |
	awk -v chain="$chain" -v syms="$dir/${prog##*/}.syms" \
	    -v sum="$out.$1.raw" "$awk_hex $awk_sym"'
		BEGIN { nc = split(chain, want, " "); read_syms(syms) }
		function flush(   p, j, ok, f) {
			if (!n || sym(u[0]) == "?") {
				n = 0
				return
			}
			inprog++
			for (p = 1; p <= nc && want[p] != sym(u[0]); p++)
				;
			ok = p <= nc
			for (j = 1; ok && p + j <= nc; j++)
				ok = j < n && sym(u[j] - 1) == want[p + j]
			full += ok
			if (!ok && shown++ < 3) {
				f = ""
				for (j = 0; j < n; j++)
					f = f " " (j ? sym(u[j] - 1) : sym(u[j]))
				print "incomplete:" f
			}
			n = 0
		}
		/^\.\.\. FP chain: nr:/ { flush(); in_chain = 1; user = 0; next }
		# perf 7.x may name a context after its address.
		in_chain && /^\.\.\.\.\. +[0-9]+: [0-9a-f]+( |$)/ {
			if ($3 == "fffffffffffffe00")
				user = 1
			else if ($3 ~ /^fffffffffffff/)
				user = 0
			else if (user)
				u[n++] = hex($3)
			next
		}
		{ if (in_chain) flush(); in_chain = 0 }
		END {
			flush()
			print "raw chains in the program: " inprog + 0 \
				", with the chain up to main: " full + 0
			print inprog + 0, full + 0 > sum
		}'
}

# record RUN SECONDS [CALL-GRAPH]: perf record the program with call
# chains (-g, or --call-graph CALL-GRAPH); summary in $out.RUN.sum (and,
# for -g, the kernel's chains in $out.RUN.raw).
record() {
	local cg="-g"

	[ -z "${3:-}" ] || cg="--call-graph $3"
	rm -f "/host/tmp/perf.$1.data"
	# shellcheck disable=SC2086
	if ! perf record -q $cg -e cpu-clock -F 1000 -o "/tmp/perf.$1.data" \
		"$prog" "$mode" "$2" > "$out.$1.log" 2>&1; then
		sed 's/^/# /' "$out.$1.log"
		return 1
	fi
	summarize "$1" | sed "s/^/# $1: /"
	[ -n "${3:-}" ] && { [ -s "$out.$1.sum" ]; return; }
	raw "$1" | sed "s/^/# $1: /"
	[ -s "$out.$1.sum" ] && [ -s "$out.$1.raw" ]
}

# ratio RUN MIN MAX [SUM]: enough samples in the program (50), and
# between MIN% (inclusive) and MAX% (exclusive) of them have the chain
# (SUM: sum, what perf script shows, or raw, the kernel's chains).
ratio() {
	local inprog full

	read -r inprog full < "$out.$1.${4:-sum}"
	[ "$inprog" -ge 50 ] || { echo "# only $inprog samples"; return 1; }
	[ $((full * 100)) -ge $((inprog * $2)) ] &&
		[ $((full * 100)) -lt $((inprog * $3)) ]
}

# started FILE: the program has printed its pid line.
started() {
	grep -q '^pid ' "$1" 2> /dev/null
}

# reload [CALL-GRAPH]: rmmod and insmod while perf records a run (with
# -g, or --call-graph CALL-GRAPH) that goes on for secs after the insmod,
# however long the module took to go and come back: SIGUSR1 ends the
# program's spin (its own bound only caps a stuck run).
reload() {
	local pid rc cg="-g"

	[ -z "${1:-}" ] || cg="--call-graph $1"
	rm -f /host/tmp/perf.reload.data
	# shellcheck disable=SC2086
	perf record -q $cg -e cpu-clock -F 500 -o /tmp/perf.reload.data \
		"$prog" spin $((100 * secs)) > "$out.reload.log" 2>&1 &
	pid=$!
	check "perf record -g starts the program" \
		wait_until 300 started "$out.reload.log"
	sleep 1
	check "rmmod while perf records" unload
	sleep 2
	check "insmod while perf records" load
	sleep "$secs"
	check "the program still runs after the insmod" \
		kill -USR1 "$(sed -n 's/^pid //p' "$out.reload.log")"
	wait "$pid"
	rc=$?
	sed 's/^/# reload: /' "$out.reload.log"
	check "perf record exits 0 ($rc)" [ "$rc" -eq 0 ]
	perf report -i /tmp/perf.reload.data --stdio --no-children \
		> "$out.reload.report" 2> /dev/null
	rc=$?
	grep -E '^# (Samples|Event count)' "$out.reload.report" |
		sed 's/^/# reload: /'
	check "perf report reads its perf.data ($rc)" [ "$rc" -eq 0 ]
	check "it has samples" \
		grep -q '^# Samples: [1-9]' "$out.reload.report"
	summarize reload | sed 's/^/# reload: /'
	if [ -n "${1:-}" ]; then
		echo "# reload: kernel_deferred_walks since the reload: $(stat_of kernel_deferred_walks)"
		check "the reloaded module takes the deferred call chains" \
			[ "$(stat_of kernel_deferred_walks)" -gt 0 ]
		return
	fi
	echo "# reload: perf_walks since the reload: $(stat_of perf_walks)"
	check "the reloaded module takes perf's call chains (perf_walks > 0)" \
		[ "$(stat_of perf_walks)" -gt 0 ]
}

# The deferred call chains of 6.19 and later (perf --call-graph fp,defer).
deferred() {
	if ! has_defer "$out.probe.log"; then
		echo "# no deferred user stacks here ($(uname -r)," \
			"unwind_user_redirected $(stat_of unwind_user_redirected)):" \
			"$(tail -1 "$out.probe.log" 2> /dev/null)"
		return 0
	fi
	check "perf record --call-graph fp,defer, with the module" \
		record defer_with "$secs" fp,defer
	echo "# kernel_deferred_walks: $(stat_of kernel_deferred_walks)"
	check "fp,defer: the module walks the kernel's deferred stacks" \
		[ "$(stat_of kernel_deferred_walks)" -gt 0 ]
	check "fp,defer with the module: >= 95% of the stacks reach main" \
		ratio defer_with 95 101 main
	check "rmmod" unload
	check "perf record --call-graph fp,defer, without the module" \
		record defer_without "$secs" fp,defer
	check "fp,defer without the module: < 50% reach main" \
		ratio defer_without 0 50 main
	check "insmod" load
	reload fp,defer
	evicted
}

# swap_on: swap on zram (the guest loads the module where the kernel has
# one), for pages to be paged out to.
swap_on() {
	grep -q '^/dev/zram0 ' /proc/swaps && return 0
	[ -e /sys/block/zram0/disksize ] || return 1
	echo 256M > /sys/block/zram0/disksize &&
		mkswap /dev/zram0 > /dev/null && swapon /dev/zram0
}

# main_share RUN: "N of M" samples in the program that reach main.
main_share() {
	local inprog reach

	read -r inprog reach < "$out.$1.main"
	echo "$reach of $inprog"
}

# pswpout: pages written to swap so far.
pswpout() {
	awk '$1 == "pswpout" { print $2 }' /proc/vmstat
}

# The deferred walk where the sample's own walk cannot go: the stack's
# pages above the chain paged out again and again.
evicted() {
	local before

	if ! swap_on; then
		echo "# paged-out stack: not run: no swap (no zram device" \
			"in this guest)"
		return 0
	fi
	mode=evict
	chain="chain_leaf chain_d chain_c chain_b chain_a chain_pad main"
	before=$(pswpout)
	check "paged-out stack: perf record -g" record evict_g "$secs"
	check "paged-out stack: perf record --call-graph fp,defer" \
		record evict_defer "$secs" fp,defer
	echo "# paged-out stack: $(($(pswpout) - before)) pages swapped out;" \
		"reach main: -g $(main_share evict_g), fp,defer" \
		"$(main_share evict_defer); sample_faults $(stat_of sample_faults)"
	check "paged-out stack: the program's stack was paged out" \
		[ "$(pswpout)" -gt "$before" ]
	check "paged-out stack, -g (no faults in the sample): < 50% reach main" \
		ratio evict_g 0 50 main
	check "paged-out stack, fp,defer: >= 95% reach main" \
		ratio evict_defer 95 101 main
	swapoff /dev/zram0
	mode=spin
	chain="chain_leaf chain_d chain_c chain_b chain_a main"
}

# flamegraph RUN: perf's flame graph of RUN's perf.data, to
# /export/flamegraph/perf_callchain-RUN.html.
flamegraph() {
	local d=/tmp/flamegraph.$1

	mkdir -p "/host$d" /export/flamegraph
	ln -f "/host/tmp/perf.$1.data" "/host$d/perf.data" || return 1
	perf_flamegraph "$d" "$1" > "$out.$1.flamegraph" 2>&1 &&
		grep -q '"n": *"sfu_chain' "/host$d/$1.html" &&
		cp "/host$d/$1.html" "/export/flamegraph/perf_callchain-$1.html" ||
		{ sed 's/^/# /' "$out.$1.flamegraph"; return 1; }
}

# flamegraphs RUN...: a flame graph of each run, where the guest has
# somewhere to put them and the template.
flamegraphs() {
	local run

	if [ ! -d /export ] || [ ! -f "$dir/flamegraph-template.html" ]; then
		echo "# flame graphs: not drawn: no /export in this guest, or" \
			"no template (scripts/fetch-flamegraph.sh failed)"
		return 0
	fi
	cp "$dir/flamegraph-template.html" /host/tmp/
	for run in "$@"; do
		[ -f "/host/tmp/perf.$run.data" ] &&
			check "flame graph of the $run run (perf script report flamegraph)" \
				flamegraph "$run"
	done
	rm -rf /host/tmp/flamegraph.* /host/tmp/flamegraph-template.html
}

# without: fewer than 50% of the samples have the chain, or (s390x 6.1,
# whose perf_callchain_user() is the kernel's empty default) perf got no
# user frames at all.
without() {
	local inprog full

	read -r inprog full < "$out.without.sum"
	if [ "$inprog" -eq 0 ] && [ "$(uname -m)" = s390x ]; then
		echo "# no user frames at all without the module"
		return 0
	fi
	ratio without 0 50
}

echo "TAP version 13"
grep -q ' /host 9p ' /proc/mounts ||
	skip_all "no perf in this guest: no host or Debian root file system at /host"
[ -x /host/usr/bin/perf ] ||
	skip_all "no perf in the guest: linux-perf is not installed at /host"
echo "# $(chroot /host perf --version) on $(uname -m) $(uname -r)"
cp "$dir/sfu_chain" "/host$prog"

check "the module is loaded" load
check "perf record -g -e cpu-clock, with the module" record with "$secs"
check "with the module: >= 95% of the kernel's chains are exact" \
	ratio with 95 101 raw
echo "# table_frames: $(stat_of table_frames)"
check "with the module: walks step frames by rule tables (table_frames > 0)" \
	[ "$(stat_of table_frames)" -gt 0 ]
if [ "$(uname -m)" = aarch64 ]; then
	check "with the module: >= 95% of perf script's stacks reach main" \
		ratio with 95 101 main
else
	check "with the module: >= 95% of perf script's stacks are exact" \
		ratio with 95 101
fi
# arm64: the same program with return addresses signed by pointer
# authentication, which the walker strips.
if [ -f "$dir/sfu_chain_pac" ]; then
	prog=/tmp/sfu_chain_pac
	cp "$dir/sfu_chain_pac" "/host$prog"
	check "perf record -g, -mbranch-protection=standard build" \
		record pac "$secs"
	check "PAC build: >= 95% of the kernel's chains are exact" \
		ratio pac 95 101 raw
	check "PAC build: >= 95% of perf script's stacks reach main" \
		ratio pac 95 101 main
	rm -f "/host$prog"
	prog=/tmp/sfu_chain
fi
check "rmmod" unload
check "perf record -g -e cpu-clock, without the module" \
	record without "$secs"
check "without the module: < 50% have the chain" without
check "insmod" load
reload
deferred
flamegraphs without with defer_without defer_with
rm -f "/host$prog" /host/tmp/perf.*.data
tap_end perf_callchain
