#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC3043
# (busybox ash has local)
#
# The module's side of the trust boundary (issue 31), as an unprivileged
# user (uid 1000) would attack it; the device side is
# selftests/registry/security.c (sfu_security):
#   - debugfs sections and stats are 0400;
#   - QUERY: the owner of a user namespace does not see the layout of a
#     non-dumpable process in it (ptrace's read check), but of a dumpable
#     one;
#   - sidecars: a file written in place (same bytes, same build-id) no
#     longer gets its sidecar, which leaves LIST_FILES, and ADD_FILE of the
#     file as it is now succeeds without REPLACE; a sidecar leaves the
#     table when its file is unlinked or renamed over, counted in
#     sidecars_gone;
#   - memory: uid 1000 registering JIT sections until refused (in a pool
#     made small for the test) leaves room for an ELF program's regions
#     and for uid 1001's JIT section; the refusal is counted in
#     refused_user_jit.

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

sec=$bin/sfu_security
out=/tmp/security_kernel
param=/sys/module/sframe_unwind/parameters
sclib=/selftests/perf/libsfu_sc_plain.so
user=1000
other=1001
# Room above what is used when the pool is made small (bytes).
headroom=4194304
# Enough sections for one process to fill the pool with small ones.
max_sections=16500
# Tenths of a second the JIT fill may take under TCG.
fill_tenths=1800

need_registry

# mode_is FILE MODE: ls's mode string of FILE is MODE.
mode_is() {
	local got

	got=$(ls -l "$1" | cut -c1-10)
	[ "$got" = "$2" ] || { echo "# $1: $got"; return 1; }
}

# grew BEFORE AFTER: a counter exists and went up.
grew() {
	[ -n "$2" ] && [ "$2" -gt "${1:-0}" ]
}

# run_helper NAME ARGS...: sfu_security ARGS with its output shown; its
# exit code.
run_helper() {
	local name="$1" rc

	shift
	"$sec" "$@" > "$out.$name" 2>&1
	rc=$?
	sed 's/^\([^#]\)/# \1/' "$out.$name"
	return "$rc"
}

check "debugfs sections is 0400" mode_is "$dbg/sections" "-r--------"
check "debugfs stats is 0400" mode_is "$dbg/stats" "-r--------"

run_helper query query-userns "$user"
case $? in
0) ok "QUERY in a user namespace: a dumpable child yes, a non-dumpable one EACCES" ;;
"$KSFT_SKIP") skip "QUERY in a user namespace" "no user namespaces for uid $user" ;;
*) not_ok "QUERY in a user namespace: a dumpable child yes, a non-dumpable one EACCES" ;;
esac

if [ -r "$sclib.sframe3" ]; then
	check "a sidecar is not applied once its file is written in place, and is dropped" \
		run_helper sidecar sidecar-stale "$sclib" "$sclib.sframe3" \
		"$sclib.vaddr" /tmp/sfu_security_copy.so
	gone0=$(stat_of sidecars_gone)
	check "a sidecar leaves the table when its file is unlinked, and when renamed over" \
		run_helper gone sidecar-gone "$sclib" "$sclib.sframe3" \
		"$sclib.vaddr" /tmp/sfu_security_gone.so
	gone1=$(stat_of sidecars_gone)
	check "sidecars_gone counted both (${gone0:-none} -> ${gone1:-none})" \
		grew "$((${gone0:-0} + 1))" "$gone1"
else
	skip "a stale sidecar" "no $sclib.sframe3 on $(uname -m)"
fi

# The pool: twice what is used now and $headroom, so that the JIT part
# of it (all but the reserve) is above what is used.
saved=$(cat "$param/max_total_bytes")
saved_sections=$(cat "$param/max_sections")
used=$(($(stat_of memory_bytes) + $(stat_of file_cache_bytes)))
refused0=$(stat_of refused_user_jit)
echo "$((2 * used + headroom))" > "$param/max_total_bytes"
echo "$max_sections" > "$param/max_sections"
echo "# memory_bytes + file_cache_bytes $used, max_total_bytes $(cat "$param/max_total_bytes") (was $saved)"
"$sec" jit-fill "$user" > "$out.fill" 2>&1 &
holder=$!
if wait_for "$out.fill" "^ready $holder\$" "$fill_tenths"; then
	grep '^#' "$out.fill"
	echo "# memory_bytes $(stat_of memory_bytes) with uid $user's JIT sections"
	if start "$out.prog" "$bin/sfu_prog" wait; then
		check "an ELF program registers while uid $user holds all the JIT memory it may" \
			listed_as "$started" "$bin/sfu_prog" elf
		stop "$started"
	else
		not_ok "an ELF program registers while uid $user holds all the JIT memory it may"
	fi
	check "uid $other registers a JIT section of its own" \
		run_helper one jit-one "$other"
	refused1=$(stat_of refused_user_jit)
	check "refused_user_jit counted uid $user's refusal (${refused0:-none} -> ${refused1:-none})" \
		grew "$refused0" "$refused1"
	check "uid $user's refusals were EDQUOT" stop "$holder"
else
	kill "$holder" 2> /dev/null
	wait "$holder"
	not_ok "uid $user's JIT fill got to its end"
fi
echo "$saved" > "$param/max_total_bytes"
echo "$saved_sections" > "$param/max_sections"

tap_exit
