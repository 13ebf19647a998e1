#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# modinfo sanity: license, description, author, version and vermagic are
# set, and vermagic names the running kernel.
ko=/lib/test-modules/sframe_unwind.ko
fail=0
n=0

field() {
	modinfo -F "$1" "$ko" 2> /dev/null
}

check() {
	n=$((n + 1))
	if [ -n "$2" ]; then
		echo "ok $n $1: $2"
	else
		echo "not ok $n $1 missing"
		fail=1
	fi
}

# busybox modinfo wants a modules.dep, even for a path; give it an empty one.
mkdir -p "/lib/modules/$(uname -r)"
[ -f "/lib/modules/$(uname -r)/modules.dep" ] ||
	: > "/lib/modules/$(uname -r)/modules.dep"

echo "TAP version 13"
echo "1..6"
check license "$(field license | grep -x GPL)"
check description "$(field description)"
check author "$(field author)"
check version "$(field version)"
check vermagic "$(field vermagic)"
check "vermagic matches $(uname -r)" \
	"$(field vermagic | grep -F "$(uname -r) ")"
exit $fail
