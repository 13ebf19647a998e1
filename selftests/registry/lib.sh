# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC3043
# (busybox ash has local)
#
# Shared by the registry_*.sh selftests (installed as
# /selftests/registry_lib.sh), on top of /selftests/lib.sh: the module's
# debugfs listing, and starting and stopping the helper program sfu_prog.

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

# shellcheck disable=SC2034  # used by the tests that source this
{
bin=/selftests/bin
lib=/selftests/lib
started=
}

# Skip the whole test, with the reason, unless the registry is there.
need_registry() {
	echo "TAP version 13"
	if [ ! -r "$dbg/sections" ]; then
		echo "1..0 # SKIP no $dbg/sections: the module is not loaded"
		exit "$KSFT_SKIP"
	fi
}

# The SFrame ABI name of this machine, as the listing prints it.
machine_abi() {
	case $(uname -m) in
	x86_64)		echo amd64 ;;
	aarch64)	echo aarch64 ;;
	aarch64_be)	echo aarch64-be ;;
	s390x)		echo s390x ;;
	*)		echo unknown ;;
	esac
}

# header PID: the "pid=PID comm=.. sections=N" line, if any.
header() {
	grep "^pid=$1 " "$dbg/sections"
}

# entries PID: the section lines listed for PID.
entries() {
	awk -v head="pid=$1" '
		/^[^ ]/ { on = ($1 == head); next }
		on' "$dbg/sections"
}

# listed PID PATH: how many section lines of PID end in PATH.
listed() {
	entries "$1" | awk -v p="$2" '$NF == p { n++ } END { print n + 0 }'
}

# listed_as PID PATH SOURCE: PATH is listed exactly once, as SOURCE.
listed_as() {
	[ "$(listed "$1" "$2")" -eq 1 ] &&
		entries "$1" | awk -v p="$2" -v s="$3" '
			$NF == p && $2 == s { found = 1 }
			END { exit !found }'
}

# well_formed PID: every section line of PID has the documented format,
# the header's count matches, and the lines are sorted by address without
# overlaps.
well_formed() {
	local pid="$1" abi lines count start end prev_end=0 line

	abi=$(machine_abi)
	lines=$(entries "$pid")
	count=$(header "$pid" | sed -n 's/.* sections=\([0-9]*\)$/\1/p')
	[ -n "$lines" ] || { echo "# no section lines for $pid"; return 1; }
	[ "$count" = "$(echo "$lines" | wc -l)" ] ||
		{ echo "# header says $count sections"; return 1; }
	echo "$lines" | while read -r line; do
		echo "  $line" | grep -Eq "^  0x[0-9a-f]+-0x[0-9a-f]+ (elf|sidecar|jit) v[123] $abi fdes=[0-9]+ sframe=0x[0-9a-f]+\\+0x[0-9a-f]+ (/.*|\\[jit\\])\$" ||
			{ echo "# malformed: $line"; return 1; }
		start=${line%%-*}
		end=${line#*-}
		end=${end%% *}
		if [ $((start)) -lt $((prev_end)) ] ||
		   [ $((end)) -le $((start)) ]; then
			echo "# not sorted or overlapping: $line"
			return 1
		fi
		prev_end=$end
	done
}

# work_pending: some task has a deferred walk or other module work queued.
work_pending() {
	[ "$(stat_of task_work_pending)" -ge 1 ]
}

# gone PID: the listing has no header for PID.
gone() {
	! grep -q "^pid=$1 " "$dbg/sections"
}

# start OUT PROG ARGS...: run PROG in the background with its output in
# OUT and wait for its "ready PID" line; sets $started to its pid.
start() {
	local out="$1"

	shift
	"$@" > "$out" 2>&1 &
	started=$!
	wait_for "$out" "^ready $started\$"
}

# stop PID: SIGTERM and reap; succeeds if the process exited with 0.
stop() {
	kill -TERM "$1" 2> /dev/null
	wait "$1"
}
