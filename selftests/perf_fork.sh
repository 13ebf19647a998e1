#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A forked child's first samples.  sfu_fork (selftests/perf/fork.c, SFrame,
# no frame pointers, static) forks children from main -> fork_mid ->
# fork_leaf with a system call of fork_leaf's own, and each child leaves
# at once with another: every user stack of a child starts in fork_leaf.
# Under perf record -g, with Debian's perf at /host, the samples of the
# children must reach main, also those taken before a child first returns
# to user space (a kernel stack through ret_from_fork), when its own
# registry does not have the parent's regions yet and lookups use the
# parent's snapshot (registry.c, forked children).  Without that, those
# samples had the kernel's frame-pointer walk: fork_leaf and no more.
# Leaves the module loaded.
# shellcheck disable=SC3043  # ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/perf_fork
prog=/tmp/sfu_fork		# in the chroot
# Fewer on arm64 and s390x, whose guests run several times slower here.
case $(uname -m) in
x86_64)	children=${FORK_CHILDREN:-3000} ;;
*)	children=${FORK_CHILDREN:-1000} ;;
esac

# record: perf record -g of sfu_fork; its output in $out.rec.
record() {
	rm -f /host/tmp/perf.fork.data
	if ! in_host perf record -q -g -e cpu-clock -F 4000 \
		-o /tmp/perf.fork.data "$prog" "$children" > "$out.rec" 2>&1 ||
	   ! grep -q '^done' "$out.rec"; then
		sed 's/^/# /' "$out.rec"
		return 1
	fi
}

# tally: "children reaching window window-reaching" over the samples of
# sfu_fork's children whose user stack starts in fork_leaf; "window" are
# those taken before the child's first return to user space.
tally() {
	local parent

	parent=$(sed -n 's/^pid //p' "$out.rec")
	in_host perf script -i /tmp/perf.fork.data -F comm,pid,ip,sym \
		2> /dev/null |
	awk -v parent="$parent" '
		function flush() {
			if (s != "" && comm == "sfu_fork" && pid != parent &&
			    s ~ / fork_leaf( |$)/) {
				all++
				full = s ~ / main( |$)/
				reach += full
				if (!full && bad++ < 3)
					print "incomplete:" s > "/dev/stderr"
				if (s ~ /ret_from_fork/) {
					win++
					wreach += full
				}
			}
			s = ""
		}
		/^[^ \t]/ { flush(); comm = $1; pid = $2; next }
		/^[ \t]*$/ { flush(); next }
		{ s = s " " $2 }
		END { flush(); print all + 0, reach + 0, win + 0, wreach + 0 }'
}

# at_least_pct HAVE OF PCT: HAVE is at least PCT% of OF (and OF is not 0).
at_least_pct() {
	[ "$2" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * $3)) ]
}

echo "TAP version 13"
grep -q ' /host 9p ' /proc/mounts ||
	skip_all "needs perf at /host (not shared into this guest: run.sh --no-hostfs)"
[ -x /host/usr/bin/perf ] || skip_all "the root at /host has no perf"
load || { not_ok "insmod"; tap_end perf_fork; exit 1; }
cp "$dir/sfu_fork" "/host$prog"

check "perf record -g of sfu_fork, $children children" record
tally > "$out.tally" 2> "$out.bad"
sed 's/^/# /' "$out.bad"
read -r all reach win wreach < "$out.tally"
echo "# children's samples from fork_leaf: $all, reaching main: $reach;" \
	"before their first return to user space: $win, reaching main: $wreach"
# s390x (and arm64 CPUs without hardware access flags): words of pages
# the child has not touched since fork(), whose loads fault, read through
# their pages (unwind.c).
echo "# stack words read through their page: $(stat_of page_reads)"
check "at least 50 samples of the children" [ "$all" -ge 50 ]
check "99% of them reach main" at_least_pct "$reach" "$all" 99
if [ "$win" -ge 5 ]; then
	check "99% of those before the first return to user space reach main" \
		at_least_pct "$wreach" "$win" 99
else
	skip "samples before the first return to user space" \
		"only $win of them in this run"
fi
rm -f "/host$prog" /host/tmp/perf.fork.data
tap_end perf_fork
