#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of "make demo": record the workload in /extra with the host's
# perf (the host file system is at /host), first without sframe_unwind.ko,
# then with it, and print each run's call stacks folded, one line per
# distinct stack with its sample count:
#   demo <run> <count> <outermost>;...;<innermost>
# and per run: all samples, the samples taken in the workload's own code
# (its innermost user frame is in the program), and how many of those
# have a stack that reaches main:
#   demo-summary <run> <samples> <in-program> <in-program-with-main>
# On kernels with deferred user stacks (6.19 and later, with a perf that
# knows --call-graph fp,defer) the same two runs again with fp,defer, as
# runs "defer-without" and "defer-with".
# Then Debian's own python3 (no SFrame, no frame pointers) with the module
# loaded, before and after "sframectl sync" gave its files sidecars:
#   demo-python <run> <python3-samples> <reaching-main>
# (python3 is stripped: perf names main through __libc_start_call_main,
# or __libc_start_main where it cannot name that), and once without the
# module, as run "without".
# Where the root's python3 has CPython's perf trampolines (-X perf: 3.12
# and later, on x86-64 and arm64), it runs a known chain of Python
# functions (/selftests/perf/chain.py) without the module and then with
# it after that sync:
#   demo-xperf <run> <holding-the-chain-to-_start> <samples-in-fib>
# Each run is also drawn as a flame graph by perf's own report (perf
# script report flamegraph, with the template in /extra) to
# /export/flamegraph/: workload-without.html, workload-with.html (and
# workload-defer-*.html), python3-without.html, python3-with.html (after
# sframectl sync), python3-xperf-without.html, python3-xperf-with.html.
set -e
# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh
# About three seconds under TCG, so that the dynamic loader's start-up
# (a tenth of a second there) is a small part of the flame graph.
rounds=5000
cp /extra/workload /host/tmp/workload
cp /extra/sframectl /host/tmp/sframectl
cp /extra/flamegraph-template.html /host/tmp/
mkdir -p /export/flamegraph
cat > /host/tmp/fib.py << 'EOF'
import sys, time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

end = time.time() + 3
while time.time() < end:
    fib(18)
EOF

fold() {
	awk -v run="$1" '
		/^[^ \t]/ { n = 0; user = ""; next }
		/^[ \t]*$/ { if (n) emit(); n = 0; user = ""; next }
		{
			sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); f[n++] = sym
			if (user == "" && $NF !~ /kernel/)
				user = $NF
		}
		function emit(  s, i) {
			s = f[n - 1]
			for (i = n - 2; i >= 0; i--)
				s = s ";" f[i]
			count[s]++
			total++
			if (user ~ /workload/) {
				prog++
				if (s ~ /(^|;)main(;|$)/)
					main++
			}
		}
		END {
			if (n) emit()
			for (s in count)
				print "demo", run, count[s], s
			print "demo-summary", run, total + 0, prog + 0, main + 0
		}'
}

# flamegraph NAME: /tmp/perf.data drawn to /export/flamegraph/NAME.html
# by perf's flame graph report (perf_flamegraph, selftests/perf/lib.sh).
flamegraph() {
	mkdir -p "/host/tmp/fg.$1"
	mv /host/tmp/perf.data "/host/tmp/fg.$1/perf.data"
	perf_flamegraph "/tmp/fg.$1" "$1" > /dev/null 2>&1 || true
	cp "/host/tmp/fg.$1/$1.html" /export/flamegraph/ 2> /dev/null ||
		echo "demo-warning no flame graph for $1"
	rm -rf "/host/tmp/fg.$1"
}

# record RUN [CALL-GRAPH]: with -g, or --call-graph CALL-GRAPH.
record() {
	cg="-g"
	[ -z "${2:-}" ] || cg="--call-graph $2"
	# shellcheck disable=SC2086
	chroot /host perf record -q $cg -e cpu-clock -F 2000 \
		-o /tmp/perf.data /tmp/workload "$rounds" > /dev/null 2>&1
	chroot /host perf script -i /tmp/perf.data -F comm,ip,sym,dso 2> /dev/null |
		fold "$1"
	flamegraph "workload-$1"
}

rmmod sframe_unwind 2> /dev/null || true
record without
insmod "$ko"
grep -E '^perf_redirected ' /sys/kernel/debug/sframe_unwind/stats |
	sed 's/^/demo-stat /'
record with
grep -E '^(perf_walks|sample_faults) ' /sys/kernel/debug/sframe_unwind/stats |
	sed 's/^/demo-stat /'
if grep -q '^unwind_user_redirected 1' /sys/kernel/debug/sframe_unwind/stats &&
   chroot /host perf record -q --call-graph fp,defer -e cpu-clock \
	-o /tmp/perf.data true > /dev/null 2>&1; then
	record defer-with fp,defer
	grep -E '^kernel_deferred_walks ' /sys/kernel/debug/sframe_unwind/stats |
		sed 's/^/demo-stat /'
	rmmod sframe_unwind
	record defer-without fp,defer
	insmod "$ko"
fi

# python RUN NAME: perf record -g of Debian's python3; one demo-python
# line, and the flame graph python3-NAME.
python() {
	chroot /host perf record -q -g -e cpu-clock -F 999 \
		-o /tmp/perf.data /usr/bin/python3 /tmp/fib.py > /dev/null 2>&1
	chroot /host perf script -i /tmp/perf.data -F comm,ip,sym,dso 2> /dev/null |
	awk -v run="$1" '
		/^[^ \t]/ { if (n) done(); n = 0; comm = $1; reach = 0; next }
		/^[ \t]*$/ { if (n) done(); n = 0; next }
		{ n++; if ($2 ~ /^(main|__libc_start_call_main|__libc_start_main)$/) reach = 1 }
		function done() {
			if (comm !~ /^python3/)
				return
			total++
			good += reach
		}
		END { if (n) done(); print "demo-python", run, total + 0, good + 0 }'
	flamegraph "python3-$2"
}

# xperf RUN: perf record -g of python3 -X perf running the chain; one
# demo-xperf line (chain_share.awk), and the flame graph
# python3-xperf-RUN.
xperf() {
	[ -n "$xperf" ] || return 0
	chroot /host perf record -q -g -e cpu-clock -F 999 -o /tmp/perf.data \
		/usr/bin/python3 -X perf /tmp/chain.py 3 > /dev/null 2>&1
	chroot /host perf script -i /tmp/perf.data -F ip,sym,dso 2> /dev/null |
		awk -v lang=py -v chain="fib leaf middle outer <module>" \
			-v native=3 -v roots=_start -v miss=/dev/null \
			-f /selftests/perf/chain_share.awk |
		sed "s/^/demo-xperf $1 /"
	flamegraph "python3-xperf-$1"
}

cp /selftests/perf/chain.py /host/tmp/chain.py
xperf=""
if chroot /host /usr/bin/python3 -X perf -c \
	'import sys; sys.exit(not sys.is_stack_trampoline_active())' \
	> /dev/null 2>&1; then
	xperf=1
else
	echo "demo-warning $(chroot /host /usr/bin/python3 -V 2>&1) has no -X perf on $(uname -m)"
fi
rmmod sframe_unwind
python without without
xperf without
insmod "$ko"
python module-only module-only
chroot /host /usr/bin/python3 -c 'import time; time.sleep(30)' &
sleeper=$!
sleep 1
chroot /host /tmp/sframectl sync | sed 's/^/demo-sframectl /'
kill "$sleeper"
python with-sframectl with
xperf with
rm -f /host/tmp/perf-*.map
