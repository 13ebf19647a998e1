#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The module's trace events: sframe_unwind_request and sframe_unwind_stack
# carry the cookie that ties a deferred request to the user stack its walk
# found.  Their format files name the documented fields; with both events
# enabled, sfu_hook (selftests/perf/hook.c) asks the test hook for a
# deferred walk and prints what the hook returned: the trace must have a
# request event and a stack event with that cookie, the stack event's nr
# and pcs must be the hook's frames, in order.  With two consumers asking
# in the same system call there are two request events and one stack
# event, all with one cookie.  The walk's sframe_unwind_frames event has
# the same cookie and nr, and sframectl symbolize, run on the trace after
# the hook has exited with a copy of it elsewhere, names hook_inner,
# hook_outer and main in that copy: the file was found by its build-id
# and the addresses are the file's own.  The same for a walk whose file
# has no region (max_sections 0): its frames come from the mapping.
# Then, where the host's trace-cmd is in the guest (/host), trace-cmd
# record and report of the same must show the stack event with the
# hook's frames, and symbolize must read the report.  Leaves the module
# loaded.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/trace_events
evs=$tracefs/events/sframe_unwind
params=/sys/module/sframe_unwind/parameters
ctl=/tmp/sfu_sframectl		# in the chroot
sym_dir=/tmp/sfu_sym		# in the chroot: a copy of sfu_hook

# trace-cmd may leave tracing off.
cleanup() {
	echo 0 > "$evs/enable"
	echo > "$tracefs/trace"
	echo 1 > "$tracefs/tracing_on"
}

# has_field EVENT DECLARATION: the event's format file declares it.
has_field() {
	grep -q "field:$2;" "$evs/$1/format"
}

# The hook run by hook(): sfu_hook, or the command in $hook_cmd.
hook_cmd=""

# hook RUN [N]: sfu_hook with N consumers; its output in $out.RUN, its
# cookie in $out.RUN.cookie, its first walk's frames, comma separated,
# in $out.RUN.pcs.
hook() {
	local run="$1"

	shift
	# shellcheck disable=SC2086  # a command and its arguments
	${hook_cmd:-"$dir/sfu_hook"} "$@" > "$out.$run" 2>&1 ||
		{ sed 's/^/# /' "$out.$run"; return 1; }
	sed 's/^/# hook: /' "$out.$run"
	sed -n '1s/^cookie=\([0-9]*\) .*/\1/p' "$out.$run" > "$out.$run.cookie"
	awk '/^cookie=/ { w++; next } w == 1 { s = s (s == "" ? "" : ",") $1 }
	     END { print s }' "$out.$run" > "$out.$run.pcs"
	[ -s "$out.$run.cookie" ] && [ -n "$(cat "$out.$run.pcs")" ]
}

# events FILE TYPE COOKIE: the TYPE events of FILE with that cookie.
events() {
	grep -E "$2: +cookie=$3( |\$)" "$1"
}

# hexlist: the numbers on stdin, hexadecimal (0x..) or decimal, apart by
# spaces, commas or braces, as one comma-separated list of 0x.. (the
# kernel prints the pcs array as {0x..,0x..}, libtraceevent in decimal).
hexlist() {
	local v s=""

	for v in $(tr '{},' '   '); do
		s="$s${s:+,}$(printf '0x%x' "$v")"
	done
	echo "$s"
}

# stack_ok FILE RUN: FILE has one stack event for RUN's cookie, its nr
# is the number of frames and its pcs are the frames.
stack_ok() {
	local c pcs nr lines got

	c=$(cat "$out.$2.cookie")
	pcs=$(hexlist < "$out.$2.pcs")
	lines=$(events "$1" sframe_unwind_stack "$c")
	[ "$(echo "$lines" | grep -c .)" -eq 1 ] ||
		{ echo "# stack events for cookie $c: $lines"; return 1; }
	nr=$(echo "$pcs" | tr ',' '\n' | grep -c .)
	echo "$lines" | grep -q " nr=$nr " ||
		{ echo "# want nr=$nr: $lines"; return 1; }
	got=$(echo "$lines" | sed 's/.* pcs=//' | hexlist)
	[ "$got" = "$pcs" ] ||
		{ echo "# want pcs $pcs, got $got: $lines"; return 1; }
}

# frames_fields: the frames event's format declares its arrays.
frames_fields() {
	local f

	for f in "unsigned long\\[\\] addrs" "u8\\[\\] file_of" \
		"u8\\[\\] build_ids" "u8\\[\\] build_id_lens" \
		"unsigned int\\[\\] majors" "unsigned int\\[\\] minors" \
		"unsigned long\\[\\] inos"; do
		has_field sframe_unwind_frames "__data_loc $f" ||
			{ echo "# no field __data_loc $f"; return 1; }
	done
}

# frames_ok FILE RUN: FILE has one frames event for RUN's cookie, with the
# number of the hook's frames.
frames_ok() {
	local c nr lines

	c=$(cat "$out.$2.cookie")
	nr=$(tr ',' '\n' < "$out.$2.pcs" | grep -c .)
	lines=$(events "$1" sframe_unwind_frames "$c")
	[ "$(echo "$lines" | grep -c .)" -eq 1 ] ||
		{ echo "# frames events for cookie $c: $lines"; return 1; }
	echo "$lines" | grep -q " nr=$nr " ||
		{ echo "# want nr=$nr: $lines"; return 1; }
}

# symbolize FILE RUN: sframectl symbolize of the trace FILE in the root at
# /host, with the copy of sfu_hook to look in; the stack it printed for
# RUN's cookie in $out.RUN.sym, a frame a line.
symbolize() {
	local c

	c=$(cat "$out.$2.cookie")
	cp "$1" /host/tmp/sfu_sym.trace
	if ! chroot /host "$ctl" symbolize --path "$sym_dir" \
		/tmp/sfu_sym.trace > "$out.$2.symall" 2>&1; then
		sed 's/^/# /' "$out.$2.symall"
		return 1
	fi
	awk -v c="cookie=$c " '/sframe_unwind_frames: / { on = index($0, c); next }
	     on && /^\t/ { print; next } { on = 0 }' "$out.$2.symall" \
		> "$out.$2.sym"
	sed 's/^/# sym: /' "$out.$2.sym"
	[ -s "$out.$2.sym" ]
}

# named RUN PROG FN...: RUN's symbolized stack starts with FN..., each in
# the copy of PROG.
named() {
	local run="$1" prog="$sym_dir/$2" i=1 fn line

	shift 2
	for fn in "$@"; do
		line=$(sed -n "${i}p" "$out.$run.sym")
		echo "$line" | grep -Eq " $fn\+0x[0-9a-f]+ \($prog\)\$" ||
			{ echo "# frame $i: want $fn in $prog: $line"
			  return 1; }
		i=$((i + 1))
	done
}

# can_symbolize: sframectl and the root at /host to run it in are here.
can_symbolize() {
	grep -q ' /host 9p ' /proc/mounts && [ -x "$dir/../bin/sframectl" ]
}

# requests FILE RUN N: FILE has N request events for RUN's cookie.
requests() {
	[ "$(events "$1" sframe_unwind_request "$(cat "$out.$2.cookie")" |
	     grep -c .)" -eq "$3" ]
}

# same_cookie RUN: both walks the hook returned have one cookie.
same_cookie() {
	[ "$(grep -c "^cookie=$(cat "$out.$1.cookie") " "$out.$1")" -eq 2 ]
}

# tc_run: trace-cmd record of the hook, its output parsed, and report;
# non-zero (having said why) if a step failed.
tc_run() {
	# Through Debian's sh and true, which have no SFrame: the recording
	# has sframe_unwind_nosframe events too, which report must parse.
	if ! chroot /host trace-cmd record -q -e sframe_unwind \
		-o /tmp/sfu_trace.dat /bin/sh -c '/tmp/sfu_hook && /bin/true' \
		> "$out.tc.rec" 2>&1; then
		sed 's/^/# /' "$out.tc.rec"
		return 1
	fi
	# The hook's output, without trace-cmd's own lines.
	grep -E '^(cookie=|0x)' "$out.tc.rec" > "$out.tc"
	sed 's/^/# hook: /' "$out.tc"
	sed -n '1s/^cookie=\([0-9]*\) .*/\1/p' "$out.tc" > "$out.tc.cookie"
	awk '/^cookie=/ { w++; next } w == 1 { s = s (s == "" ? "" : ",") $1 }
	     END { print s }' "$out.tc" > "$out.tc.pcs"
	if ! chroot /host trace-cmd report -i /tmp/sfu_trace.dat \
		> "$out.tc.report" 2>&1; then
		sed 's/^/# /' "$out.tc.report"
		return 1
	fi
	grep sframe_unwind "$out.tc.report" | sed 's/^/# report: /'
}

trace_cmd() {
	local hc=/host/usr/bin/trace-cmd ran

	if ! grep -q ' /host 9p ' /proc/mounts; then
		skip "trace-cmd record and report" \
			"no root file system at /host in this guest (run.sh --no-hostfs)"
		return
	fi
	if [ ! -x "$hc" ]; then
		skip "trace-cmd record and report" \
			"no trace-cmd on the host ($hc; Debian package trace-cmd)"
		return
	fi
	cp "$dir/sfu_hook" /host/tmp/sfu_hook
	tc_run
	ran=$?
	# Once in about ten runs trace-cmd has recorded none of the events of
	# a command that lives milliseconds (the tracefs checks above saw
	# them): one more recording, said so, before judging.
	if [ "$ran" -eq 0 ] && ! requests "$out.tc.report" tc 1; then
		echo "# trace-cmd recorded no request of the hook; recording again"
		tc_run
		ran=$?
	fi
	check "trace-cmd record and report of the hook" [ "$ran" -eq 0 ]
	check "trace-cmd report: a request event with the hook's cookie" \
		requests "$out.tc.report" tc 1
	check "trace-cmd report: the stack event has the hook's frames" \
		stack_ok "$out.tc.report" tc
	if can_symbolize; then
		check "trace-cmd report: sframectl symbolize names the hook's frames" \
			symbolize "$out.tc.report" tc
		check "trace-cmd report: hook_inner, hook_outer, main" \
			named tc sfu_hook hook_inner hook_outer main
	fi
	check "trace-cmd report: sframe_unwind_nosframe for sh and true, parsed" \
		grep -Eq 'sframe_unwind_nosframe: +pid=[0-9]+ start=0x[0-9a-f]+ end=0x[0-9a-f]+ dev=[0-9]+:[0-9]+ ino=[0-9]+ fs=0x[0-9a-f]+' \
		"$out.tc.report"
	rm -f /host/tmp/sfu_hook /host/tmp/sfu_trace.dat /host/tmp/sfu_sym.trace
}

echo "TAP version 13"
[ -r "$tracefs/trace" ] || skip_all "no tracefs at $tracefs"
load || skip_all "the module does not load"
[ -d "$evs" ] || skip_all "no $evs: the module has no trace events here"
trap cleanup EXIT

sed 's/^/# /' "$evs/sframe_unwind_stack/format"
sed 's/^/# /' "$evs/sframe_unwind_frames/format"
check "request format: u64 cookie" has_field sframe_unwind_request "u64 cookie"
check "request format: int consumer" has_field sframe_unwind_request \
	"int consumer"
check "stack format: u64 cookie" has_field sframe_unwind_stack "u64 cookie"
check "stack format: unsigned int nr" has_field sframe_unwind_stack \
	"unsigned int nr"
check "stack format: u8 stop" has_field sframe_unwind_stack "u8 stop"
check "stack format: unsigned long[] pcs" has_field sframe_unwind_stack \
	"__data_loc unsigned long\\[\\] pcs"
check "frames format: the arrays addrs, file_of, build_ids, build_id_lens, majors, minors, inos" \
	frames_fields

echo > "$tracefs/trace"
echo 1 > "$evs/enable"
echo 1 > "$tracefs/tracing_on"
check "sfu_hook: a deferred walk with frames" hook one
cp "$tracefs/trace" "$out.trace.one"
grep sframe_unwind "$out.trace.one" | sed 's/^/# trace: /'
check "a request event with the hook's cookie" requests "$out.trace.one" one 1
check "one stack event with that cookie, nr and pcs the hook's frames" \
	stack_ok "$out.trace.one" one
check "one frames event with that cookie and nr" frames_ok "$out.trace.one" one
if can_symbolize; then
	cp "$dir/../bin/sframectl" "/host$ctl"
	mkdir -p "/host$sym_dir"
	cp "$dir/sfu_hook" "/host$sym_dir/sfu_hook"
	check "sframectl symbolize, the hook gone, names its frames" \
		symbolize "$out.trace.one" one
	check "symbolized: hook_inner, hook_outer, main in the copy" \
		named one sfu_hook hook_inner hook_outer main
	# No region for the hook's text: frame_id.c goes by its mapping.
	max=$(cat "$params/max_sections")
	echo 0 > "$params/max_sections"
	echo > "$tracefs/trace"
	check "sfu_hook without a region: a deferred walk" hook vma
	echo "$max" > "$params/max_sections"
	cp "$tracefs/trace" "$out.trace.vma"
	check "without a region: one frames event" \
		frames_ok "$out.trace.vma" vma
	check "without a region: sframectl symbolize names its frames" \
		symbolize "$out.trace.vma" vma
	check "without a region: the first frame is hook_inner in the copy" \
		named vma sfu_hook hook_inner
	# Position independent, with the C library: the addresses are the
	# pcs less the load bias, else no symbol would hold them.
	cp "$dir/sfu_hook_pie" /host/tmp/sfu_hook_pie
	cp "$dir/sfu_hook_pie" "/host$sym_dir/sfu_hook_pie"
	echo > "$tracefs/trace"
	hook_cmd="chroot /host /tmp/sfu_hook_pie"
	check "sfu_hook_pie (PIE, in the root at /host): a deferred walk" \
		hook pie
	hook_cmd=""
	cp "$tracefs/trace" "$out.trace.pie"
	check "PIE: one frames event" frames_ok "$out.trace.pie" pie
	check "PIE: sframectl symbolize names its frames" \
		symbolize "$out.trace.pie" pie
	check "PIE: hook_inner, hook_outer, main in the copy" \
		named pie sfu_hook_pie hook_inner hook_outer main
	rm -f /host/tmp/sfu_hook_pie
else
	skip "sframectl symbolize" "no sframectl for $(uname -m) or no root at /host"
fi

echo > "$tracefs/trace"
check "sfu_hook 2: two consumers, one deferred walk" hook two 2
cp "$tracefs/trace" "$out.trace.two"
grep sframe_unwind "$out.trace.two" | sed 's/^/# trace: /'
check "both consumers got the same cookie" same_cookie two
check "two request events with that cookie" requests "$out.trace.two" two 2
check "one stack event with that cookie, nr and pcs the hook's frames" \
	stack_ok "$out.trace.two" two
echo 0 > "$evs/enable"

trace_cmd
rm -rf "/host$sym_dir" "/host$ctl" /host/tmp/sfu_sym.trace
tap_end trace_events
