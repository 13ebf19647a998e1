#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The daemon's systemd unit passes systemd-analyze verify, with ExecStart
# pointed at the sframectl this tree built and its Documentation= manual
# page found among the pages this tree built.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
unit=$root/scripts/systemd/sframectl.service
if ! command -v systemd-analyze > /dev/null; then
	echo "1..0 # SKIP systemd-analyze is not installed"
	exit 0
fi
make -s -C "$root" scripts/sframectl build/man/sframectl.8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/man/man8"
cp "$root/build/man/sframectl.8" "$tmp/man/man8/"
export MANPATH=$tmp/man
sed "s|/usr/local/sbin/sframectl|$root/scripts/sframectl|" "$unit" \
	> "$tmp/sframectl.service"
echo "1..1"
if systemd-analyze verify "$tmp/sframectl.service"; then
	echo "ok 1 systemd-analyze verify sframectl.service"
	echo "# verify-unit: 1 passed, 0 failed"
else
	echo "not ok 1 systemd-analyze verify sframectl.service"
	echo "# verify-unit: 0 passed, 1 failed"
	exit 1
fi
