#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sframectl's one read of a file, under the child's deadline and inside
# a bound of memory (issue 62, item 5).  uid 1000's FUSE file system
# (sfu_fuse stallread, mounted allow_other) serves a copy of Debian's
# libz and answers root's lookups and opens but never root's READs.  As
# root, in the chroot /host:
#   add           sframectl add --child-timeout 3 of the FUSE file returns
#                 at the child's deadline and says so.  A sframectl whose
#                 parent copies the file before the child's deadline
#                 starts waits for as long as the server lives (120 s).
#   daemon        sframectl daemon --child-timeout 4 --copy-max M, where M
#                 is 9/8 of the size of a local file T (a user's copy of
#                 libc): uid 1000 maps the FUSE file, then T.  The FUSE
#                 file's job reserves a worker's share of M (M/4), T's its
#                 size; together more than M, so T's job waits until the
#                 FUSE file's child is stopped at its deadline (not the
#                 worker at its own), and is registered then.  Without
#                 the bound T is registered first.
# Leaves the module as it was: no sidecar is registered.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/sframectl_copy_bound
daemon_log=$out.daemon		# for wait_log
ctl=/tmp/sfu-copy-ctl		# in the chroot, and so are the files below
cache=/tmp/sfu-copy-cache
fuse_src=/tmp/sfu-copy-libz.so
local_file=/tmp/sfu-copy-libc.so
fuse_dir=/tmp/sfu-copy-fuse
user=$user_uid
serve_s=120
add_timeout=3
add_bound=10

# serve: uid 1000's FUSE file system at $fuse_dir, its file mapped.
serve() {
	mkdir -p "/host$fuse_dir"
	"$dir/../bin/sfu_fuse" "/host$fuse_dir" "/host$fuse_src" "$user" \
		"$serve_s" stallread > "$out.fuse" 2>&1 &
	server=$!
	wait_ready "$out.fuse"
}

unserve() {
	pkill -P "$server" 2> /dev/null
	kill "$server" 2> /dev/null
	wait "$server" 2> /dev/null
	sed 's/^/# sfu_fuse: /' "$out.fuse" | tail -2
	umount "/host$fuse_dir" 2> /dev/null || umount -l "/host$fuse_dir"
}

add_at_deadline() {
	local t0 t1

	t0=$(date +%s)
	in_host "$ctl" add --child-timeout "$add_timeout" \
		"$fuse_dir/lib.so" > "$out.add" 2>&1
	t1=$(date +%s)
	sed 's/^/# add: /' "$out.add"
	echo "# sframectl add returned after $((t1 - t0)) s"
	[ $((t1 - t0)) -le "$add_bound" ] &&
		grep -q "reading and parsing took longer than $add_timeout s" \
			"$out.add"
}

# line REGEX: the number of the daemon log's first line matching REGEX.
line() {
	grep -nE "$1" "$daemon_log" | head -1 | cut -d: -f1
}

local_after_fuse() {
	local fuse_end local_reg

	fuse_end=$(line "$fuse_dir/lib.so: reading and parsing took longer than $child_timeout s")
	local_reg=$(line "^$local_file: registered")
	grep -E "$fuse_dir|$local_file" "$daemon_log" | sed 's/^/# daemon: /'
	[ -n "$fuse_end" ] && [ -n "$local_reg" ] &&
		[ "$fuse_end" -lt "$local_reg" ] &&
		! grep -q "its worker was killed" "$daemon_log"
}

if ! grep -q ' /host 9p ' /proc/mounts; then
	skip_all "needs Debian's programs at /host (not shared into this guest: run.sh --no-hostfs)"
fi
for f in sframectl sfu_fuse sfu_mapx; do
	[ -x "$dir/../bin/$f" ] || skip_all "no $f was built for $(uname -m)"
done
[ -c /dev/fuse ] || skip_all "no /dev/fuse (no fuse module for this kernel)"
[ -x /host/usr/bin/setpriv ] || skip_all "the root at /host has no setpriv"
load || { not_ok "insmod"; tap_end sframectl_copy_bound; exit 1; }
cp "$dir/../bin/sframectl" "/host$ctl"
cp "$dir/../bin/sfu_mapx" /host/tmp/sfu-copy-mapx
in_host sh -c "cp \"\$(readlink -f /usr/lib/*-linux-gnu/libz.so.1)\" $fuse_src &&
	cp \"\$(readlink -f /usr/lib/*-linux-gnu/libc.so.6)\" $local_file"
chown "$user:$user" "/host$local_file"
rm -rf "/host$cache"

check "uid 1000 maps a file of its FUSE file system (root's reads unanswered)" serve
check "root's sframectl add of it returns at the child's deadline ($add_timeout s), said" \
	add_at_deadline
unserve

size=$(stat -c %s "/host$local_file")
copy_max=$((size + size / 8))
child_timeout=4
check "the daemon starts with --copy-max $copy_max ($size-byte local file)" \
	start_daemon
check "uid 1000 maps a file of its FUSE file system again" serve
as_user /tmp/sfu-copy-mapx 60 "$local_file" > "$out.mapx" 2>&1 &
mapper=$!
check "... then a local file: registered within 30 s" \
	wait_log 300 "^$local_file: registered"
check "... only once the FUSE file's child was stopped at its deadline (the two copies would pass --copy-max)" \
	local_after_fuse
kill "$mapper" 2> /dev/null
wait "$mapper" 2> /dev/null
unserve
stop_daemon

# Leave no sidecar behind: they go with the module.
unload
load
rm -rf "/host$ctl" "/host$cache" /host/tmp/sfu-copy-mapx "/host$fuse_src" \
	"/host$local_file" "/host$fuse_dir"
tap_end sframectl_copy_bound
