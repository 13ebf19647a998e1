#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A program and its library are registered at exec: sfu_prog (SFrame,
# -fomit-frame-pointer, linked against libsfu_a.so) must be listed with
# both files as elf before it runs, its own lookups through the lookup
# file must give a rule for a function of each and an error for an
# anonymous mapping, and its entries must go when it exits: dropped at
# exit_mmap() by the module's exit hook, not later by the mmu notifier's
# release (which would cost the exit an SRCU grace period).  On 6.1 and
# 6.12 without PREEMPT_RT the registry has no mmu notifier at all (the
# unmap and exit hooks serve); on PREEMPT_RT it has one.  A device mapped
# executable is skipped, not read.
# shellcheck disable=SC2317  # functions run through check()

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

header_ok() {
	header "$pid" | grep -Eq "^pid=$pid comm=sfu_prog sections=[0-9]+\$"
}

need_registry
out=/tmp/registry_exec.out
lookups0=$(stat_of lookups)
exited0=$(stat_of mm_exited)
released0=$(stat_of mm_released)
notified0=$(stat_of mms_notified)

if ! start "$out" "$bin/sfu_prog" lookup; then
	not_ok "sfu_prog lookup starts"
	tap_exit
fi
pid=$started
ok "sfu_prog lookup starts (pid $pid)"
echo "# $(header "$pid")"
entries "$pid" | sed 's/^/# /'
check "header: pid=$pid comm=sfu_prog sections=N" header_ok
check "the program is listed once, as elf" listed_as "$pid" "$bin/sfu_prog" elf
check "libsfu_a.so is listed once, as elf" \
	listed_as "$pid" "$lib/libsfu_a.so" elf
check "lines well formed, counted, sorted, not overlapping" well_formed "$pid"
sed -n 's/^lookup /# lookup /p' "$out"
check "lookup in the program gives a rule" \
	grep -Eq '^lookup self 0x[0-9a-f]+: cfa=' "$out"
check "lookup in libsfu_a.so gives a rule" \
	grep -Eq '^lookup lib 0x[0-9a-f]+: cfa=' "$out"
check "lookup in an anonymous mapping gives an error" \
	grep -Eq '^lookup none 0x[0-9a-f]+: error:' "$out"
lookups1=$(stat_of lookups)
check "the lookups counter grew by 3 or more ($lookups0 -> $lookups1)" \
	[ "$((lookups1 - lookups0))" -ge 3 ]
check "sfu_prog exits 0" stop "$pid"
check "no pid=$pid line once it has exited" wait_until 50 gone "$pid"
exited1=$(stat_of mm_exited)
released1=$(stat_of mm_released)
check "its registry went at exit_mmap (mm_exited $exited0 -> $exited1)" \
	[ "$exited1" -gt "$exited0" ]
check "not through the notifier's release (mm_released $released0 -> $released1)" \
	[ "$released1" -eq "$released0" ]
notified1=$(stat_of mms_notified)
case "$(uname -v)/$(uname -r)" in
*PREEMPT_RT*)
	check "PREEMPT_RT: tied by an mmu notifier (mms_notified $notified0 -> $notified1)" \
		[ "$notified1" -gt "$notified0" ]
	;;
*/6.1.* | */6.1[2-9].* | */7.[23].*)
	check "tied by the hooks, no mmu notifier (mms_notified $notified0 -> $notified1)" \
		[ "$notified1" -eq "$notified0" ]
	;;
*)
	skip "registry tie" "kernel $(uname -r): compat.h knows no unmap hook for it"
	;;
esac

# A character device mapped executable is not read as an ELF file.
special0=$(stat_of not_regular)
check "sfu_prog maps /dev/zero executable" \
	"$bin/sfu_prog" device /dev/zero
special1=$(stat_of not_regular)
check "the module left the device alone (not_regular $special0 -> $special1)" \
	[ "$special1" -gt "$special0" ]
tap_exit
