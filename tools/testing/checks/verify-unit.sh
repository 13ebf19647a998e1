#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The systemd units (the daemon, sframectl warm) pass systemd-analyze
# verify, with ExecStart pointed at the sframectl this tree built and
# their Documentation= manual page found among the pages this tree built.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
units="sframectl.service sframectl-warm.service"
if ! command -v systemd-analyze > /dev/null; then
	echo "1..0 # SKIP systemd-analyze is not installed"
	exit 0
fi
make -s -C "$root" tools/sframectl/sframectl build/man/sframectl.8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/man/man8"
cp "$root/build/man/sframectl.8" "$tmp/man/man8/"
export MANPATH=$tmp/man
echo "1..2"
n=0 pass=0
for u in $units; do
	n=$((n + 1))
	sed "s|/usr/local/sbin/sframectl|$root/tools/sframectl/sframectl|" \
		"$root/scripts/systemd/$u" > "$tmp/$u"
	if systemd-analyze verify "$tmp/$u"; then
		echo "ok $n systemd-analyze verify $u"
		pass=$((pass + 1))
	else
		echo "not ok $n systemd-analyze verify $u"
	fi
done
echo "# verify-unit: $pass passed, $((n - pass)) failed"
[ "$pass" -eq "$n" ]
