#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-root.sh - a Debian 13 (or unstable) root: build root for the
#                  kernels Debian 12's compiler cannot build for, and
#                  user space for their guests
#
# Usage: scripts/debian-root.sh [SUITE]  prints the root directory
#        scripts/debian-root.sh run ROOT [--bind DIR]... -- CMD...
#                                        runs CMD chrooted in ROOT, with
#                                        each DIR bound at its own path
#   SUITE  trixie (default): Debian 13, gcc-14, and for the guests perf
#          7.x (from trixie-backports), trace-cmd, bpftrace, python3, perl,
#          Node.js and OpenJDK 21
#          sid: Debian's unstable, gcc-16, for building only
#
# Debian 13's kernels (6.12+deb13 and trixie-backports' 6.16 to 7.x) are
# built with gcc-14, unstable's (7.x+deb14) with gcc-16, and their kbuild
# tools (objtool, modpost, resolve_btfids) need glibc 2.38 or later:
# modules for them build only in such a user space (scripts/kbuild.sh).
# The x86-64 guests of those kernels run Debian 13's perf, trace-cmd,
# bpftrace, python3 and perl from the trixie root (perf from
# trixie-backports: the only one that knows the kernels' deferred user
# stacks, --call-graph fp,defer).
#
# A root is made once with debootstrap from the Debian mirror apt uses and
# cached under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/rootfs/amd64-<suite>-<key>/
# keyed by its package list; it is used read-only afterwards (the guests
# share it over 9p, builds bind their own directories into a private
# mount namespace).  Needs root.
set -euo pipefail

prog=${0##*/}
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

mirror=http://deb.debian.org/debian
# The build: compilers for the three architectures, make, pahole for
# module BTF, the libraries the kbuild tools link.  The guests (trixie
# only): perf and the programs the selftests profile.
build_pkgs="make libc6-dev bc kmod xz-utils dwarves libelf1t64 libssl3t64"

# run ROOT [--bind DIR]... -- CMD...: CMD chrooted in ROOT with /proc,
# /dev and the DIRs bound, in a mount namespace of its own, so that
# nothing stays mounted whatever happens to CMD.
run_in() {
	local root=$1 binds=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		[ "$1" = --bind ] || die "run: unknown option $1"
		binds+=("$(realpath "$2")")
		shift 2
	done
	[ "${1:-}" = -- ] || die "run: no command"
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec unshare -m --propagation private sh -ec '
		root=$1; n=$2; shift 2
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		while [ "$n" -gt 0 ]; do
			mkdir -p "$root$1"
			mount --bind "$1" "$root$1"
			shift; n=$((n - 1))
		done
		exec chroot "$root" "$@"' sh "$root" "${#binds[@]}" \
		"${binds[@]}" "$@"
}

if [ "${1:-}" = run ]; then
	shift
	[ $# -ge 1 ] || die "usage: $prog run ROOT [--bind DIR]... -- CMD..."
	run_in "$@"
fi
[ $# -le 1 ] || die "usage: $prog [SUITE | run ROOT [--bind DIR]... -- CMD...]"
suite=${1:-trixie}
case $suite in
trixie)
	pkgs="gcc $build_pkgs gcc-aarch64-linux-gnu gcc-s390x-linux-gnu"
	pkgs="$pkgs trace-cmd bpftrace python3 perl binutils gzip procps"
	# The runtimes whose JIT frames the selftests follow (issue 63).
	pkgs="$pkgs nodejs openjdk-21-jdk-headless"
	bpo_pkgs="linux-perf" ;;
sid)
	pkgs="gcc-16 $build_pkgs gcc-16-aarch64-linux-gnu gcc-16-s390x-linux-gnu"
	bpo_pkgs="" ;;
*)	die "no root is made for suite $suite" ;;
esac

cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/rootfs
key=$(echo "$suite $pkgs $bpo_pkgs" | md5sum | cut -c1-12)
dest=$cache/amd64-$suite-$key
if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi
[ "$(dpkg --print-architecture)" = amd64 ] ||
	die "the Debian 13 root is made on amd64 hosts only"
[ "$(id -u)" -eq 0 ] || die "debootstrap and chroot need root"
command -v debootstrap > /dev/null || apt_install debootstrap

mkdir -p "$cache"
exec 9> "$cache/.lock-$suite"
flock 9
if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi
tmp=$(mktemp -d "$cache/.tmp-$suite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "debootstrap $suite (minbase) into $tmp"
debootstrap --variant=minbase "$suite" "$tmp/root" "$mirror" \
	> "$tmp/debootstrap.log" 2>&1 ||
	{ tail "$tmp/debootstrap.log" >&2; die "debootstrap $suite failed"; }
if [ "$suite" = sid ]; then
	echo "deb $mirror $suite main" > "$tmp/root/etc/apt/sources.list"
else
	cat > "$tmp/root/etc/apt/sources.list" << EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $mirror $suite-backports main
deb ${mirror}-security $suite-security main
EOF
fi
cp /etc/resolv.conf "$tmp/root/etc/resolv.conf"
say "installing $pkgs${bpo_pkgs:+ and, from $suite-backports, $bpo_pkgs}"
# shellcheck disable=SC2086
( run_in "$tmp/root" -- sh -ec '
	export DEBIAN_FRONTEND=noninteractive
	# The mirror may serve an index past its Valid-Until (sid).
	apt-get update -qq -o Acquire::Check-Valid-Until=false
	apt-get install -y -qq --no-install-recommends '"$pkgs"'
	[ -z "'"$bpo_pkgs"'" ] ||
		apt-get install -y -qq --no-install-recommends \
			-t '"$suite"'-backports '"$bpo_pkgs"'
	apt-get clean' ) > "$tmp/setup.log" 2>&1 ||
	{ tail -20 "$tmp/setup.log" >&2; die "installing into the $suite root failed"; }
# Debian's /usr/bin/perf is linux-base's wrapper, which looks for
# perf_<running kernel's series>: point it at the one installed.
perf=$(cd "$tmp/root/usr/bin" && ls perf_[0-9]* 2> /dev/null | sort -V |
       tail -1) || true
if [ -n "$perf" ]; then
	ln -sfn "$perf" "$tmp/root/usr/bin/perf"
fi
[ -z "$bpo_pkgs" ] || [ -e "$tmp/root/usr/bin/perf" ] ||
	die "no perf in the $suite root"
{
	echo "$suite $key"
	# shellcheck disable=SC2016 # dpkg-query's format
	chroot "$tmp/root" dpkg-query -W -f='${Package} ${Version}\n' \
		gcc-14 gcc-16 linux-perf trace-cmd bpftrace python3 nodejs \
		openjdk-21-jdk-headless libc6 \
		2> /dev/null || true
} > "$tmp/root/.complete"
rm -f "$tmp/root/etc/resolv.conf"
rm -rf "$dest"
mv "$tmp/root" "$dest"
say "$suite root: $(tr '\n' ';' < "$dest/.complete")"
echo "$dest"
