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
#   listing       list --sidecars --json names libc's build-id; del
#                 --build-id drops it
#   errors        without privileges, and without the module, sframectl
#                 says what to do
#   daemon        sframectl daemon follows new mappings: a python3 run it
#                 sees for the first time (cold, reported), then a second
#                 run: at least 95% reach main; rmmod works under it, and
#                 after insmod it turns its event on again and the runs
#                 reach main again; SIGTERM stops it cleanly
# Leaves the module loaded and no sidecar registered.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sframectl
ctl=/tmp/sframectl		# in the chroot
script=/tmp/sfu_fib.py		# in the chroot
python=/usr/bin/python3		# Debian's, not a wrapper the PATH may name
secs=3
# Under s390x's emulation python3's start (exec, ld.so, imports: samples
# that cannot reach main yet) takes seconds; a longer run keeps it small.
[ "$(uname -m)" = s390x ] && secs=8

in_host() {
	chroot /host "$@"
}

# share RUN: "reaching total" over the python3 samples of RUN.
share() {
	in_host perf script -i "/tmp/perf.$1.data" -F comm,ip,sym,dso 2> /dev/null |
	awk '
		/^[^ \t]/ { if (n) done(); n = 0; s = ""; comm = $1; reach = 0; next }
		/^[ \t]*$/ { if (n) done(); n = 0; next }
		{ n++; if ($2 ~ /^(main|__libc_start_call_main|__libc_start_main)$/) reach = 1; s = s " " $2 }
		function done() {
			if (comm !~ /^python3/)
				return
			total++
			good += reach
			if (!reach && shown++ < 2)
				print "# incomplete:" s > "/dev/stderr"
			s = ""
		}
		END { if (n) done(); printf "%d %d\n", good, total }'
}

# record RUN: perf record -g of the Python loop; prints "reaching total".
record() {
	rm -f "/host/tmp/perf.$1.data"
	in_host perf record -q -e cpu-clock -F 499 -g \
		-o "/tmp/perf.$1.data" "$python" "$script" "$secs" \
		> "$out.$1.log" 2>&1 || { sed 's/^/# /' "$out.$1.log"; return 1; }
	share "$1"
}

# percent GOOD TOTAL
percent() {
	[ "$2" -gt 0 ] && echo $(($1 * 100 / $2)) || echo 0
}

at_least() {
	[ "$2" -gt 0 ] && [ $(($1 * 100)) -ge $(($3 * $2)) ]
}

at_most() {
	[ "$2" -gt 0 ] && [ $(($1 * 100)) -le $(($3 * $2)) ]
}

# wait_log TENTHS REGEX [COUNT]: the daemon's log has COUNT lines
# matching REGEX (default 1).
wait_log() {
	local i=0

	while [ "$i" -lt "$1" ]; do
		[ "$(grep -cE "$2" "$out.daemon")" -ge "${3:-1}" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
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
	in_host "$ctl" sync > "$out.sync" 2>&1
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

if ! grep -q ' /host 9p ' /proc/mounts; then
	skip_all "needs Debian's programs at /host (not shared into debug kernels)"
fi
if [ ! -x /host/usr/bin/perf ] || [ ! -x /host/usr/bin/python3 ]; then
	skip_all "the root at /host has no perf or python3"
fi
[ -x "$dir/../bin/sframectl" ] || skip_all "no sframectl was built for $(uname -m)"
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

# chroot execs python3: the sleeper's pid is python3's.
chroot /host "$python" -c 'import time; time.sleep(60)' &
sleeper=$!
sleep 1
check "sframectl sync exits 0" synced
sed 's/^/# /' "$out.sync"
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

# The daemon: it follows new mappings without SFrame from now on.
# chroot execs sframectl: the pid is the daemon's.
chroot /host "$ctl" daemon > "$out.daemon" 2>&1 &
daemon=$!
check "sframectl daemon starts" wait_log 50 "^daemon: following"

# shellcheck disable=SC2046
set -- $(record cold)
echo "# cold (the daemon sees python3 for the first time): $1 of $2 reach main ($(percent "$1" "$2")%)"
# shellcheck disable=SC2046
set -- $(record warm)
good=${1:-0} total=${2:-0}
echo "# warm: $good of $total reach main ($(percent "$good" "$total")%)"
check "with the daemon, a second run: at least 95% of the samples reach main" \
	at_least "$good" "$total" 95

check "rmmod while the daemon runs" unload
load
check "the daemon turns its event on again after insmod" daemon_resumed
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

# Leave no sidecar behind: they go with the module.
unload
load
rm -f "/host$ctl" "/host$script" /host/tmp/perf.*.data
tap_end sframectl
