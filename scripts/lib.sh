# SPDX-License-Identifier: GPL-2.0
#
# Helpers the project's shell scripts share.  Source it after setting
# "prog" (the name messages carry); "die_status" sets die's exit code.

LINUX_SOURCE_PKG=linux-source-6.12
LINUX_SOURCE_TARBALL=/usr/src/$LINUX_SOURCE_PKG.tar.xz

say() {
	printf '%s: %s\n' "${prog:-${0##*/}}" "$*" >&2
}

die() {
	say "error: $*"
	exit "${die_status:-1}"
}

# Run a command as root (directly, or through sudo when available).
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo > /dev/null 2>&1; then
		sudo "$@"
	else
		die "need root for: $*"
	fi
}

# apt-get install, refreshing the package lists only if that fails.
apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get install -y -qq --no-install-recommends "$@" \
		> /dev/null 2>&1 && return 0
	as_root apt-get update -qq > /dev/null || die "apt-get update failed"
	as_root apt-get install -y -qq --no-install-recommends "$@" > /dev/null ||
		die "cannot install $*"
}

# Debian's kernel source tarball, for checkpatch, kselftest headers, KUnit.
need_linux_source() {
	[ -f "$LINUX_SOURCE_TARBALL" ] && return 0
	say "installing $LINUX_SOURCE_PKG"
	apt_install "$LINUX_SOURCE_PKG"
}

# section_size FILE NAME: sh_size of section NAME of ELF FILE, 0 if none.
section_size() {
	local hex

	hex=$(readelf -SW "$1" 2> /dev/null |
	      sed 's/^ *\[ *[0-9]*\] *//' |
	      awk -v n="$2" '$1 == n { print $5; exit }')
	echo $((16#${hex:-0}))
}

# real_sframe_files: real Debian files of the three architectures whose
# sidecars the rule table is checked on (make check-table, KUnit): libc,
# python3, libcrypto and libstdc++ of each, the x86-64 ones installed if
# missing, the arm64 and s390x ones from Debian 12's packages
# (scripts/fetch-debs.sh, cached); one per line, or none at all (and a
# message) if a package cannot be had.
real_sframe_files() {
	local a t droot here files=()

	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	[ -x /usr/bin/python3 ] || apt_install python3
	[ -f /usr/lib/x86_64-linux-gnu/libcrypto.so.3 ] || apt_install libssl3
	files=(/lib/x86_64-linux-gnu/libc.so.6 "$(readlink -f /usr/bin/python3)"
	       /usr/lib/x86_64-linux-gnu/libcrypto.so.3
	       /usr/lib/x86_64-linux-gnu/libstdc++.so.6)
	for a in arm64:aarch64 s390x:s390x; do
		t=${a#*:}
		if ! droot=$("$here/fetch-debs.sh" "${a%:*}" libc6 libstdc++6 \
			     python3.11-minimal libssl3); then
			say "no ${a%:*} packages for the real sections"
			return 1
		fi
		files+=("$droot/lib/$t-linux-gnu/libc.so.6"
			"$droot/usr/bin/python3.11"
			"$droot/usr/lib/$t-linux-gnu/libcrypto.so.3"
			"$droot/usr/lib/$t-linux-gnu/libstdc++.so.6")
	done
	printf '%s\n' "${files[@]}"
}
