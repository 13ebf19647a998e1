#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ftrace's user stacks through SFrame: with options/userstacktrace on and
# the getppid system call event enabled (sys_enter_getppid, or a kprobe on
# the getppid system call where the kernel has no system call events),
# sfu_chain (selftests/perf/chain.c: -O2 -fomit-frame-pointer with
# SFrame) calls getppid 20 times from its own chain_leaf with a system
# call instruction of its own, at the end of main -> chain_a -> chain_b ->
# chain_c -> chain_d -> chain_leaf.  The <user stack trace> of its events,
# named with the program's symbol table, must start with exactly
# chain_leaf .. main in at least 90% of them (the first walks may stop
# where a page of .sframe is not mapped in yet), and the module's
# ftrace_walks counter must grow.  Without the module the kernel walks
# frame pointers, which these functions do not keep: no stack may then
# have the chain (the test can fail).  Leaves the module loaded.
#
# Skipped where the kernel has no CONFIG_USER_STACKTRACE_SUPPORT (s390x
# 6.1), without which the userstacktrace option, listed all the same,
# records nothing.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

calls=20
probe=""
ev=""
out=/tmp/ftrace_userstack

cleanup() {
	[ -n "$ev" ] && echo 0 > "$ev/enable"
	echo 0 > "$tracefs/options/userstacktrace"
	[ -n "$probe" ] && echo "-:$probe" >> "$tracefs/kprobe_events"
	echo > "$tracefs/trace"
}

# The getppid entry event: the system call event, else a kprobe.
pick_event() {
	local s

	if [ -d "$tracefs/events/syscalls/sys_enter_getppid" ]; then
		ev=$tracefs/events/syscalls/sys_enter_getppid
		return 0
	fi
	for s in __x64_sys_getppid __arm64_sys_getppid __s390x_sys_getppid \
		 sys_getppid; do
		grep -qE " [Tt] $s\$" /proc/kallsyms || continue
		echo "p:sfu_probe $s" >> "$tracefs/kprobe_events" || return 1
		probe=sfu_probe
		ev=$tracefs/events/kprobes/sfu_probe
		return 0
	done
	return 1
}

# record NAME: run sfu_chain under the event; its user stacks, named,
# one per line ("stack NAME0 NAME1 .."), go to $out.NAME.
record() {
	local pid

	echo > "$tracefs/trace"
	"$dir/sfu_chain" syscall "$calls" > "$out.run" 2>&1
	pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' "$out.run")
	[ -n "$pid" ] || { sed 's/^/# /' "$out.run"; return 1; }
	awk -v pid="$pid" -v syms="$dir/sfu_chain.syms" "$awk_hex $awk_sym"'
		function flush(   i, s) {
			if (on && k) {
				s = "stack"
				for (i = 0; i < k; i++)
					s = s " " sym(i ? a[i] - 1 : a[i])
				print s
			}
			on = 0
			k = 0
		}
		BEGIN { read_syms(syms) }
		/<user stack trace>/ {
			flush()
			on = ($1 ~ ("-" pid "$"))
			next
		}
		/^ => / {
			v = $0
			if (sub(/.*</, "", v) && sub(/>.*/, "", v))
				a[k++] = hex(v)
			next
		}
		{ flush() }
		END { flush() }' "$tracefs/trace" > "$out.$1"
	sort "$out.$1" | uniq -c | sed "s/^ */# $1: /"
}

# stacks NAME: user stacks recorded; full NAME: those with the chain.
stacks() {
	wc -l < "$out.$1"
}

# leaf_first NAME: every stack starts in chain_leaf.
leaf_first() {
	! grep -qv '^stack chain_leaf' "$out.$1"
}

full() {
	awk -v want="stack $chain" 'index($0 " ", want " ") == 1 { n++ }
		END { print n + 0 }' "$out.$1"
}

echo "TAP version 13"
[ -r "$tracefs/trace_options" ] || skip_all "no tracefs at $tracefs"
grep -Eq '^(no)?userstacktrace$' "$tracefs/trace_options" ||
	skip_all "no userstacktrace in $tracefs/trace_options"
# The option is listed everywhere but records nothing without
# CONFIG_USER_STACKTRACE_SUPPORT, which gives stack_trace_save_user().
grep -Eq ' [Tt] stack_trace_save_user$' /proc/kallsyms ||
	skip_all "this kernel lacks CONFIG_USER_STACKTRACE_SUPPORT (no stack_trace_save_user): userstacktrace records nothing"
load || skip_all "the module does not load"
pick_event || skip_all "neither events/syscalls/sys_enter_getppid nor a getppid system call function for a kprobe"
trap cleanup EXIT
echo "# event: ${ev#"$tracefs"/events/}"
echo 1 > "$tracefs/options/userstacktrace"
echo 1 > "$ev/enable"
echo 1 > "$tracefs/tracing_on"

check "the module redirects stack_trace_save_user()" \
	[ "$(stat_of userstack_redirected)" = 1 ]
walks0=$(stat_of ftrace_walks)
check "sfu_chain syscall $calls runs with the module" record with
walks1=$(stat_of ftrace_walks)
got=$(stacks with)
good=$(full with)
echo "# with the module: $got user stacks, $good with chain_leaf .. main"
check "with the module: $calls user stacks of sfu_chain" \
	[ "$got" -eq "$calls" ]
check "with the module: $good of $got start with exactly $chain" \
	at_least "$good" "$got" 90
check "ftrace_walks grew by $calls or more ($walks0 -> $walks1)" \
	[ $((walks1 - walks0)) -ge "$calls" ]

check "rmmod" unload
check "sfu_chain syscall $calls runs without the module" record without
got=$(stacks without)
good=$(full without)
echo "# without the module: $got user stacks, $good with chain_leaf .. main"
check "without the module: $calls user stacks of sfu_chain" \
	[ "$got" -eq "$calls" ]
check "without the module: every stack starts in chain_leaf" \
	leaf_first without
check "without the module: none has the chain (frame pointers only)" \
	[ "$good" -eq 0 ]
check "insmod again" load
tap_end ftrace_userstack
