#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every host tool answers --help (usage on stdout, exit 0), --version (the
# version of include/sframe/version.h, which modinfo shows too) and an
# unknown option (usage on stderr, exit 2), and its manual page
# (Documentation/man/) builds and names every option of the usage.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$root" all || exit 1
want=$(sed -n 's/^#define SFU_VERSION[[:space:]]*"\(.*\)"/\1/p' \
	"$root/include/sframe/version.h")
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
# shellcheck source=scripts/tests/tap.sh
. "$root/scripts/tests/tap.sh"

helps() {
	"$root/scripts/$1" --help 2> /dev/null | grep -q "^Usage: $1 "
}

versions() {
	[ "$("$root/scripts/$1" --version 2> /dev/null)" = \
	  "$1 (sframe-unwind) $want" ]
}

# Every option the usage names is in the tool's manual page, and the page
# builds without a docutils warning.
documented() {
	local rst=$root/Documentation/man/$1.rst opt missing=""

	make -s -C "$root" "build/man/$1.$2" || return 1
	for opt in $("$root/scripts/$1" --help |
		     grep -oE -- '(^|[[ |])--?[a-z][a-z0-9-]*' | tr -d '[ |' |
		     sort -u); do
		grep -qE -- "(^|[^a-z-])$opt([^a-z0-9-]|\$)" "$rst" ||
			missing="$missing $opt"
	done
	[ -z "$missing" ] || echo "# $1.rst does not document:$missing"
	[ -z "$missing" ]
}

refuses() {
	"$root/scripts/$1" --no-such-option > /dev/null 2>&1
	[ $? -eq 2 ]
}

echo "TAP version 13"
for t in sframe-dump:1 sframe-gen:1 sframectl:8; do
	sec=${t#*:}
	t=${t%:*}
	tap_check "$t --help prints its usage and exits 0" helps "$t"
	tap_check "$t --version prints $want" versions "$t"
	tap_check "$t with an unknown option exits 2" refuses "$t"
	tap_check "$t($sec) documents every option of its usage" documented "$t" "$sec"
done
tap_end tools-cli
