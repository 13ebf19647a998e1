#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian's programs run in the guest: a root file system (the host's on
# x86-64, a Debian root of the guest's architecture on arm64 and s390x) is
# mounted read-only over 9p at /host and chrooted into, so later tests can
# use the real perf from Debian's linux-perf package.
KSFT_SKIP=4
if ! grep -q ' /host 9p ' /proc/mounts; then
	echo "# SKIP: no root file system at /host in this guest (not shared into this guest: run.sh --no-hostfs)"
	exit $KSFT_SKIP
fi
fail=0
echo "TAP version 13"
echo "1..3"
if chroot /host /bin/sh -c 'exit 0'; then
	echo "ok 1 chroot into the host file system"
else
	echo "not ok 1 chroot into the host file system"
	fail=1
fi
v=$(chroot /host readelf --version 2>&1 | head -1)
case $v in
*readelf*) echo "ok 2 host readelf runs: $v" ;;
*) echo "not ok 2 host readelf: $v"; fail=1 ;;
esac
if [ -x /host/usr/bin/perf ]; then
	v=$(chroot /host perf --version 2>&1 | head -1)
	case $v in
	"perf version"*) echo "ok 3 host perf runs: $v" ;;
	*) echo "not ok 3 host perf: $v"; fail=1 ;;
	esac
else
	echo "ok 3 host perf # SKIP linux-perf is not installed on the host"
fi
exit $fail
