#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# modinfo sanity: license, description, author, version and vermagic are
# set, and vermagic names the running kernel.

# shellcheck source=selftests/lib.sh
. /selftests/lib.sh

field() {
	modinfo -F "$1" "$ko" 2> /dev/null
}

# has NAME VALUE: a field that is set, reported with its value.
has() {
	if [ -n "$2" ]; then
		ok "$1: $2"
	else
		not_ok "$1 missing"
	fi
}

# busybox modinfo wants a modules.dep, even for a path; give it an empty one.
mkdir -p "/lib/modules/$(uname -r)"
[ -f "/lib/modules/$(uname -r)/modules.dep" ] ||
	: > "/lib/modules/$(uname -r)/modules.dep"

echo "TAP version 13"
has license "$(field license | grep -x GPL)"
has description "$(field description)"
has author "$(field author)"
has version "$(field version)"
has vermagic "$(field vermagic)"
has "vermagic matches $(uname -r)" \
	"$(field vermagic | grep -F "$(uname -r) ")"
tap_exit
