#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The file cache (kernel/filecache.c): a file with its own SFrame is
# indexed at its first mapping and the index lent to later ones.
#   - sfu_prog started twice: the second start finds both its files in the
#     cache (file_cache_hits grows by 2 or more), its lookups give rules;
#   - a copy in /tmp is another file: a new entry;
#   - that copy rewritten in place with a corrupt section (same inode, a new
#     version): the old entry is not used, the section is refused;
#   - a cached library dlopen()ed by a process that has a registry is
#     registered in the mmap hook (registered_at_mmap grows) and listed;
#     rewritten in place, the hook leaves it to the task work, which
#     refuses the new, corrupt section;
#   - file_cache=0 empties the cache; programs still register, uncached;
#   - memory_bytes comes back to where it was once the programs are gone
#     (the cache is counted apart, in file_cache_bytes).
# shellcheck disable=SC2317  # functions run through check()

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

param=/sys/module/sframe_unwind/parameters/file_cache
out=/tmp/registry_filecache.out
copy=/tmp/sfu_prog_copy
libcopy=/tmp/libsfu_copy.so

# run_prog PROG: start PROG lookup, leave its pid in $pid.
run_prog() {
	pid=
	start "$out" "$1" lookup || return 1
	pid=$started
}

stat_is() {
	[ "$(stat_of "$1")" -eq "$2" ]
}

lookups_ok() {
	grep -Eq '^lookup self 0x[0-9a-f]+: cfa=' "$out" &&
		grep -Eq '^lookup lib 0x[0-9a-f]+: cfa=' "$out"
}

need_registry
if [ ! -w "$param" ]; then
	echo "1..0 # SKIP no $param: a module without the file cache"
	exit "$KSFT_SKIP"
fi
keep=$(cat "$param")
# Start from an empty cache.
echo 0 > "$param" && echo "$keep" > "$param"
check "file_cache=0 empties the cache" [ "$(stat_of file_cache)" -eq 0 ]
mem0=$(stat_of memory_bytes)

run_prog "$bin/sfu_prog" || not_ok "sfu_prog starts"
check "first start: listed as elf" listed_as "$pid" "$bin/sfu_prog" elf
check "first start: its lookups give rules" lookups_ok
stop "$pid"
n1=$(stat_of file_cache)
b1=$(stat_of file_cache_bytes)
check "the program and libsfu_a.so are cached (file_cache $n1)" [ "$n1" -ge 2 ]
check "the cache holds memory (file_cache_bytes $b1)" [ "$b1" -gt 0 ]

h0=$(stat_of file_cache_hits)
run_prog "$bin/sfu_prog" || not_ok "sfu_prog starts again"
h1=$(stat_of file_cache_hits)
check "second start: both files from the cache (hits $h0 -> $h1)" \
	[ "$((h1 - h0))" -ge 2 ]
check "second start: listed as elf" listed_as "$pid" "$bin/sfu_prog" elf
check "second start: its lookups give rules" lookups_ok
check "second start: no new entry" [ "$(stat_of file_cache)" -eq "$n1" ]
stop "$pid"

cp "$bin/sfu_prog" "$copy" && chmod 755 "$copy"
run_prog "$copy" || not_ok "a copy starts"
check "a copy is another file: a new entry" \
	[ "$(stat_of file_cache)" -eq "$((n1 + 1))" ]
check "the copy's lookups give rules" lookups_ok
stop "$pid"

# The same inode, a new version with a corrupt section.
r0=$(stat_of refused)
cat "$bin/sfu_bad_nfdes" > "$copy"
run_prog "$copy" || not_ok "the rewritten copy starts"
check "rewritten in place: the old index is not used" \
	[ "$(listed "$pid" "$copy")" -eq 0 ]
check "rewritten in place: the corrupt section is refused" \
	[ "$(stat_of refused)" -gt "$r0" ]
check "rewritten in place: its old entry is gone" \
	[ "$(stat_of file_cache)" -eq "$n1" ]
stop "$pid"
rm -f "$copy"

# dlopen_lib PATH: start sfu_prog dlopen PATH, leave its pid in $pid.
dlopen_lib() {
	pid=
	start "$out" "$bin/sfu_prog" dlopen "$1" || return 1
	pid=$started
}

# The hook also registers libsfu_a.so (cached), which ld.so maps once the
# program is registered: each run is compared with the first, whose
# dlopen()ed library was not cached yet.
cp "$lib/libsfu_b.so" "$libcopy"
m0=$(stat_of registered_at_mmap)
dlopen_lib "$libcopy" || not_ok "sfu_prog dlopens a library"
m1=$(stat_of registered_at_mmap)
check "first dlopen: listed as elf" listed_as "$pid" "$libcopy" elf
stop "$pid"
dlopen_lib "$libcopy" || not_ok "sfu_prog dlopens it again"
m2=$(stat_of registered_at_mmap)
check "second dlopen: one more registered in the mmap hook ($((m1 - m0)), then $((m2 - m1)))" \
	[ "$((m2 - m1))" -eq "$((m1 - m0 + 1))" ]
check "second dlopen: listed as elf" listed_as "$pid" "$libcopy" elf
check "second dlopen: the library called" grep -q '^called ' "$out"
stop "$pid"
r0=$(stat_of refused)
cat "$lib/libsfu_bad_nfdes.so" > "$libcopy"
dlopen_lib "$libcopy" || not_ok "sfu_prog dlopens the rewritten library"
m3=$(stat_of registered_at_mmap)
check "rewritten library: not registered in the hook ($((m3 - m2)))" \
	[ "$((m3 - m2))" -eq "$((m1 - m0))" ]
check "rewritten library: not listed" [ "$(listed "$pid" "$libcopy")" -eq 0 ]
check "rewritten library: its corrupt section is refused" \
	[ "$(stat_of refused)" -gt "$r0" ]
stop "$pid"
rm -f "$libcopy"

echo 0 > "$param"
check "file_cache=0: no entry left" [ "$(stat_of file_cache)" -eq 0 ]
h0=$(stat_of file_cache_hits)
run_prog "$bin/sfu_prog" || not_ok "sfu_prog starts uncached"
check "uncached: listed as elf" listed_as "$pid" "$bin/sfu_prog" elf
check "uncached: its lookups give rules" lookups_ok
check "uncached: no hit" stat_is file_cache_hits "$h0"
check "uncached: no entry" stat_is file_cache 0
stop "$pid"
echo "$keep" > "$param"
check "no pid=$pid line once it has exited" wait_until 50 gone "$pid"
check "file_cache_bytes back to 0 without entries or borrowers" \
	wait_until 50 stat_is file_cache_bytes 0
check "memory_bytes back to $mem0" wait_until 50 stat_is memory_bytes "$mem0"
tap_exit
