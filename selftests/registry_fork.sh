#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fork copies a process's registrations, exec replaces them: the child of
# "sfu_prog fork" must list exactly the parent's sections; once it has
# exec'd sfu_prog2 (linked against libsfu_c.so) it must list sfu_prog2 and
# libsfu_c.so and nothing of the old program, while the parent keeps its
# own; both must be gone when they have exited.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

same_as_parent() {
	[ -n "$parent_list" ] && [ "$(entries "$child")" = "$parent_list" ]
}

same_count() {
	local c

	c=$(header "$child" | sed 's/.* sections=//')
	[ -n "$c" ] && [ "$c" = "$(header "$parent" | sed 's/.* sections=//')" ]
}

old_gone() {
	[ "$(listed "$child" "$bin/sfu_prog")" -eq 0 ] &&
		[ "$(listed "$child" "$lib/libsfu_a.so")" -eq 0 ]
}

parent_ok() {
	listed_as "$parent" "$bin/sfu_prog" elf &&
		listed_as "$parent" "$lib/libsfu_a.so" elf
}

parent_kept() {
	[ "$(entries "$parent")" = "$parent_list" ]
}

need_registry
out=/tmp/registry_fork.out

if ! start "$out" "$bin/sfu_prog" fork; then
	not_ok "sfu_prog fork starts"
	tap_exit
fi
parent=$started
child=$(sed -n 's/^child //p' "$out")
ok "sfu_prog fork starts (parent $parent, child $child)"
parent_list=$(entries "$parent")
echo "# parent: $(header "$parent")"
echo "$parent_list" | sed 's/^/# /'
check "the parent lists sfu_prog and libsfu_a.so" parent_ok
check "the child has a header with the parent's count" same_count
check "the child lists exactly the parent's sections" same_as_parent

kill -USR1 "$child"
if wait_for "$out" "^ready $child\$"; then
	ok "the child execs sfu_prog2"
else
	not_ok "the child execs sfu_prog2"
fi
echo "# child: $(header "$child")"
entries "$child" | sed 's/^/# /'
check "after exec: sfu_prog2 listed once, as elf" \
	listed_as "$child" "$bin/sfu_prog2" elf
check "after exec: libsfu_c.so listed once, as elf" \
	listed_as "$child" "$lib/libsfu_c.so" elf
check "after exec: nothing of sfu_prog or libsfu_a.so" old_gone
check "after exec: lines well formed" well_formed "$child"
check "the parent's sections are unchanged" parent_kept
check "the parent stops and reaps the child, exit 0" stop "$parent"
check "no pid=$parent line after exit" wait_until 50 gone "$parent"
check "no pid=$child line after exit" wait_until 50 gone "$child"
tap_exit
