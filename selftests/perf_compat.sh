#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A 32-bit task with a registry keeps the kernel's own call chains.  The
# walker serves 64-bit tasks only; sfu_compat (selftests/perf/compat.c,
# -m32, frame pointers) registers a section through the compat ioctl and
# spins in main -> compat_a -> compat_b -> compat_leaf.  With the module
# loaded, perf record -g must still give at least 80% of its samples in
# those functions a chain up to main (the kernel's 32-bit frame-pointer
# walk); sending the task to the walker gave none.
# shellcheck disable=SC2317,SC3043  # functions run through check(); ash has local

# shellcheck source=selftests/perf/lib.sh
. /selftests/perf/lib.sh

out=/tmp/perf_compat
prog=/tmp/sfu_compat		# in the chroot

[ -x "$dir/sfu_compat" ] || skip_all "no 32-bit test program (x86-64 only)"
grep -q ' /host 9p ' /proc/mounts || skip_all "needs the host's perf (x86-64 stock guests)"
[ -x /host/usr/bin/perf ] || skip_all "the host has no perf"
cp "$dir/sfu_compat" "/host$prog"
if ! chroot /host "$prog" 0 > "$out.probe" 2>&1; then
	skip_all "this kernel does not run 32-bit programs (no IA32 emulation)"
fi

# chained: samples in compat_* and those with the chain up to main.
chained() {
	chroot /host perf script -i /tmp/perf.compat.data -F comm,ip,sym \
		2> /dev/null |
	awk '
		/^[^ \t]/ { if (n) done(); n = 0; comm = $1; next }
		/^[ \t]*$/ { if (n) done(); n = 0; next }
		{ sym[n++] = $2 }
		function done(   i, u) {
			if (comm != "sfu_compat")
				return
			for (u = 0; u < n && sym[u] !~ /^(compat_|main$)/; u++)
				;
			if (u == n)
				return
			in_prog++
			for (i = u; i < n; i++)
				if (sym[i] == "main") {
					full++
					return
				}
		}
		END { if (n) done(); printf "%d %d\n", in_prog, full }'
}

at_least_80() {
	[ "$1" -ge 50 ] && [ $(($2 * 100)) -ge $(($1 * 80)) ]
}

load || skip_all "insmod failed"
rm -f /host/tmp/perf.compat.data
chroot /host perf record -q -g -e cpu-clock -F 999 \
	-o /tmp/perf.compat.data "$prog" 3 > "$out.log" 2>&1
sed 's/^/# /' "$out.log"
check "the 32-bit program registered its section (compat ioctl)" \
	grep -q '^registered 0$' "$out.log"
# shellcheck disable=SC2046
set -- $(chained)
echo "# $1 samples in the program, $2 with the chain up to main"
check "at least 80% keep the kernel's 32-bit call chain" \
	at_least_80 "${1:-0}" "${2:-0}"
rm -f "/host$prog" /host/tmp/perf.compat.data
tap_end perf_compat
