#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One user's files cannot take the memory pool from everyone (issue 62,
# item 5).  uid 1000 owns copies of libsfu_big.so (an SFrame section of
# about 80 KiB), each a file whose index the module keeps apart.  The
# pool is made small for the test: what is used now, room for eight
# copies' indexes, and twice the file, as the section is read whole
# before its index is made (a rule table can be far smaller than its
# section: on arm64 about 2 KB of 80); the user's share
# (file_user_percent) is set to about four copies.  Then:
#   share   uid 1000 maps 32 copies (sfu_mapx -u 1000): those past its
#           share of the pool (file_user_percent) are refused, counted
#           in refused_user_files
#   root    a copy of root's is registered beside them: the user's files
#           could not fill the pool (without the share they did, and
#           root's copy was refused for max_total_bytes)
#   again   once uid 1000's copies are unmapped (and their regions freed,
#           a grace period later), it maps another, which is registered:
#           the file cache's idle entries of its files give way to it
#           instead of holding its share
# Leaves the module's parameters as they were.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/registry/lib.sh
. /selftests/registry_lib.sh

out=/tmp/registry_user_share
base=/tmp/sfu-share
param=/sys/module/sframe_unwind/parameters
user=1000
room=8
share=4
copies=32

# pool_used: what the pool holds now, in bytes.
pool_used() {
	echo $(($(stat_of memory_bytes) + $(stat_of file_cache_bytes)))
}

# user_maps OUT N FILE...: uid $user maps FILE... (N of them) and holds
# them; its pid in $mapper.
user_maps() {
	local log="$1" n="$2"

	shift 2
	"$bin/sfu_mapx" -u "$user" 600 "$@" > "$log" 2>&1 &
	mapper=$!
	wait_for "$log" "^mapped $n\$" 600
}

# end PID: kill PID and reap it.
end() {
	kill "$1" 2> /dev/null
	wait "$1" 2> /dev/null
}

# regions_freed: the memory of regions is back where it was before any
# copy was mapped.
regions_freed() {
	[ "$(stat_of memory_bytes)" -le "$mem0" ]
}

# grew BEFORE AFTER: a counter exists and went up.
grew() {
	[ -n "$2" ] && [ "$2" -gt "${1:-0}" ]
}

need_registry
rm -rf "$base"
mkdir -p "$base"
i=0
while [ "$i" -le "$copies" ]; do
	cp "$lib/libsfu_big.so" "$base/u$i.so"
	i=$((i + 1))
done
chown -R "$user:$user" "$base"
cp "$lib/libsfu_big.so" "$base/root.so"
chown 0:0 "$base/root.so"

# What one copy takes: its index stays in the file cache once unmapped.
used0=$(pool_used)
mem0=$(stat_of memory_bytes)
user_maps "$out.one" 1 "$base/u0.so" || { end "$mapper"; sed 's/^/# /' "$out.one"; }
copy=$(($(pool_used) - used0))
end "$mapper"
used=$(pool_used)
file=$(wc -c < "$lib/libsfu_big.so")
saved=$(cat "$param/max_total_bytes")
saved_pct=$(cat "$param/file_user_percent")
max=$((used + room * copy + 2 * file))
echo "$max" > "$param/max_total_bytes"
# The user's share: about $share copies, whatever one copy's size.
echo "$((share * copy * 100 / max + 1))" > "$param/file_user_percent"
echo "# one copy $copy bytes, the file $file; pool $used used, max_total_bytes $(cat "$param/max_total_bytes") (was $saved), file_user_percent $(cat "$param/file_user_percent" 2> /dev/null)"
check "one copy of libsfu_big.so takes memory" [ "$copy" -gt 0 ]

refused0=$(stat_of refused_user_files)
global0=$(stat_of refused_global_limit)
files=
i=1
while [ "$i" -le "$copies" ]; do
	files="$files $base/u$i.so"
	i=$((i + 1))
done
# shellcheck disable=SC2086  # one word per file
user_maps "$out.user" "$copies" $files
user_pid=$mapper
echo "# uid $user mapped $copies copies: pool $(pool_used), refused_user_files ${refused0:-none} -> $(stat_of refused_user_files), refused_global_limit $global0 -> $(stat_of refused_global_limit)"
check "uid $user's copies past its share are refused, in refused_user_files" \
	grew "$refused0" "$(stat_of refused_user_files)"

"$bin/sfu_mapx" 600 "$base/root.so" > "$out.root" 2>&1 &
root=$!
wait_for "$out.root" "^mapped 1\$" 600
check "a copy of root's is registered beside them" \
	listed_as "$root" "$base/root.so" elf
end "$root"
end "$user_pid"
# Their regions go after a grace period, and only then are the cache's
# entries of those files idle.
wait_until 300 regions_freed

# The copies it mapped are kept in the file cache, idle, on its share.
user_maps "$out.again" 1 "$base/u9.so"
check "once its copies are unmapped, uid $user maps another: idle cache entries give way" \
	listed_as "$mapper" "$base/u9.so" elf
end "$mapper"
echo "$saved" > "$param/max_total_bytes"
echo "$saved_pct" > "$param/file_user_percent"
rm -rf "$base"
tap_exit
