#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every host tool answers --help (usage on stdout, exit 0), --version (the
# version of include/sframe/version.h, which modinfo shows too) and an
# unknown option (usage on stderr, exit 2).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$root" all || exit 1
want=$(sed -n 's/^#define SFU_VERSION[[:space:]]*"\(.*\)"/\1/p' \
	"$root/include/sframe/version.h")
pass=0 fail=0 n=0

check() {
	local desc=$1

	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $desc"
		pass=$((pass + 1))
	else
		echo "not ok $n $desc"
		fail=$((fail + 1))
	fi
}

helps() {
	"$root/scripts/$1" --help 2> /dev/null | grep -q "^Usage: $1 "
}

versions() {
	[ "$("$root/scripts/$1" --version 2> /dev/null)" = \
	  "$1 (sframe-unwind) $want" ]
}

refuses() {
	"$root/scripts/$1" --no-such-option > /dev/null 2>&1
	[ $? -eq 2 ]
}

echo "TAP version 13"
for t in sframe-dump sframe-gen sframectl; do
	check "$t --help prints its usage and exits 0" helps "$t"
	check "$t --version prints $want" versions "$t"
	check "$t with an unknown option exits 2" refuses "$t"
done
echo "1..$n"
echo "# tools-cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
