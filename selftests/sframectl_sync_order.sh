#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A first run that starts while the daemon's start-up sync still makes
# sections is served before the sync's backlog: the sync's files go to the
# daemon's workers as events' files do, never into the last free worker,
# which the events keep, and the daemon reads events and renews its lease
# while the sync runs.  In the root at /host, with an empty cache, so that
# the sync makes every section from .eh_frame:
#   backlog     python3 with a dozen extension modules, perl and perf hold
#               their files mapped: a sync of seconds to minutes
#   first run   a copy of gzip no process maps (the sync cannot know it),
#               run under a first_map_wait_ms of 10 s as soon as the
#               daemon says it syncs: every wait is answered (none runs
#               out the bound, none is let go by a lease that lapsed), and
#               the run ends before the sync does (a daemon that syncs in
#               its main loop answers the run only after its sync, and
#               renews no lease meanwhile); if the sync ended before the run
#               began there is nothing to show, and the case skips, saying
#               so
#   sync        the sync then ends and has made its files
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sfu_sync_order
daemon_log=$out.daemon		# for wait_log
ctl=/tmp/sframectl		# in the chroot, and so are the files below
cache=/tmp/sfu-sync-order-cache
prog=/tmp/sfu_sync_order_gzip
param=/sys/module/sframe_unwind/parameters/first_map_wait_ms
bound_ms=10000

# The holders' extension modules: each maps a library of its own.
modules="ssl sqlite3 decimal ctypes lzma bz2 zlib hashlib json csv \
	_elementtree pyexpat readline curses"

# holders: python3 and perl holding their files mapped, once ready.
holders() {
	# chroot, not in_host: $! is then the program's own pid.
	# shellcheck disable=SC2016  # Python's and Perl's own text
	chroot /host /usr/bin/python3 -c '
import importlib, sys, time
for m in sys.argv[1].split():
    try:
        importlib.import_module(m)
    except ImportError:
        pass
print("ready", flush=True)
time.sleep(3600)' "$modules" > "$out.python" 2>&1 &
	python=$!
	chroot /host /usr/bin/perl -e '$| = 1; print "ready\n"; sleep 3600' \
		> "$out.perl" 2>&1 &
	perl=$!
	# perf and its libraries (libpython, libperl, libdw, ...): the most.
	chroot /host /usr/bin/perf stat -o /dev/null -- /bin/sh -c \
		'echo ready $$; exec sleep 3600' > "$out.perf" 2>&1 &
	perf=$!
	wait_ready "$out.python" && wait_ready "$out.perl" &&
		wait_ready "$out.perf"
}

syncs() {
	grep -c "^sync: " "$daemon_log"
}

# Every wait answered: none ran out the bound, and none was let go by a
# lease that lapsed while the daemon synced.
served_first() {
	[ "$during" -eq 0 ] && [ "$((timeouts1 - timeouts0))" -eq 0 ] &&
		[ "$((waits1 - waits0))" -ge 1 ] &&
		[ "$((answered1 - answered0))" -eq "$((waits1 - waits0))" ] &&
		[ "$ms" -lt "$bound_ms" ]
}

sync_made_files() {
	wait_log 6000 "^sync: " &&
		grep -q "^sync: [1-9][0-9]* files registered" "$daemon_log"
}

need_host_sframectl
load
check "module loaded" loaded
default_ms=$(cat "$param")
cp "$dir/../bin/sframectl" "/host$ctl"
in_host cp /usr/bin/gzip "$prog"
rm -rf "/host$cache"
mkdir -m 700 "/host$cache"
check "python3 and perl hold their files mapped" holders
echo "# the holders map $(grep -c ' r-xp .* /' "/proc/$python/maps" 2> /dev/null || echo ?) executable mappings (python3)"

echo "$bound_ms" > "$param"
chroot /host "$ctl" daemon --cache "$cache" > "$daemon_log" 2>&1 &
daemon=$!
check "the daemon starts its sync" wait_log 600 "syncing"
sync_start=$(cut -d' ' -f1 /proc/uptime)
before=$(syncs)
waits0=$(stat_of first_map_waits)
answered0=$(stat_of first_map_answered)
timeouts0=$(stat_of first_map_timeouts)
ms=$(exec_ms "$prog" -c /dev/null)
during=$(syncs)
waits1=$(stat_of first_map_waits)
answered1=$(stat_of first_map_answered)
timeouts1=$(stat_of first_map_timeouts)
echo "# first run during the sync: ${ms:-?} ms; waits $((waits1 - waits0)), answered $((answered1 - answered0)), ran out the bound $((timeouts1 - timeouts0)); syncs ended before it began: $before, by its end: $during"
what="a first run during the start-up sync: its waits answered, none ran out the ${bound_ms} ms bound, the run shorter than it and over before the sync"
if [ "$before" -eq 0 ]; then
	check "$what" served_first
else
	skip "$what" "the sync ended before the first run began: no backlog to pass"
fi
check "the sync ends and has made its files" sync_made_files
sync_end=$(cut -d' ' -f1 /proc/uptime)
echo "# the sync took $(awk -v a="$sync_start" -v b="$sync_end" 'BEGIN { printf "%.1f", b - a }') s"
grep -E "^sync: |^cache " "$daemon_log" | sed 's/^/# daemon: /'

kill -TERM "$daemon"
wait "$daemon"
# perf's child first (its pid is on its "ready" line), then the holders.
kill "$(awk '/^ready/ { print $2 }' "$out.perf")" 2> /dev/null
kill "$python" "$perl" "$perf" 2> /dev/null
wait "$python" "$perl" "$perf" 2> /dev/null
echo "$default_ms" > "$param"
unload
load
rm -rf "/host$ctl" "/host$cache" "/host$prog"
tap_end sframectl_sync_order
