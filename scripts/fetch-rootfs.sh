#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-rootfs.sh - a Debian root file system of ARCH with Debian's perf
#
# Usage: fetch-rootfs.sh ARCH [SUITE]
#   ARCH   arm64 | s390x
#   SUITE  bookworm (the default) | trixie: Debian 13's root, for the
#          guests of Debian 13's kernels (its bpftrace 0.23 names the
#          frames of 7.x kernels' BPF stacks, where bookworm's 0.17 does
#          not on arm64)
#
# The guests of these architectures have no host root file system to
# borrow perf from (the x86-64 guest shares the host's over 9p).  This
# makes one: debootstrap --foreign resolves and downloads minbase plus
# linux-perf, trace-cmd, bpftrace, python3, binutils and nodejs (and, for
# Debian 13, OpenJDK 21) for ARCH from the Debian mirror apt uses, and
# every package is then unpacked with dpkg -x (nothing runs: no foreign
# binary executes on the host; the links update-alternatives would make
# for java and javac are made by hand).  The result is cached under
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/rootfs/<arch>-<suite>-<key>/
# (key: the package list)
# and reused without network access (a failed attempt is not repeated
# for a day); run.sh shares it read-only over 9p,
# and the guest mounts it at /host as it does the host's root on x86-64.
#
# stdout: the root directory.  Needs root (debootstrap).
set -euo pipefail

prog=${0##*/}
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] && [ $# -le 2 ] ||
	die "usage: $prog ARCH (arm64 | s390x) [SUITE (bookworm | trixie)]"
case $1 in
arm64)	debarch=arm64 ;;
s390x)	debarch=s390x ;;
*)	die "no root file system is made for $1" ;;
esac

suite=${2:-bookworm}
case $suite in
bookworm | trixie) ;;
*)	die "no root file system is made for Debian $suite" ;;
esac
mirror=http://deb.debian.org/debian
include=linux-perf,trace-cmd,bpftrace,python3,binutils,nodejs
[ "$suite" = bookworm ] || include=$include,openjdk-21-jdk-headless
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/rootfs
dest=$cache/$1-$suite-$(echo "$include" | md5sum | cut -c1-8)

if [ -f "$dest/.complete" ]; then
	echo "$dest"
	exit 0
fi
# A mirror whose pool and index disagree fails the same way for hours:
# one attempt a day (remove the mark to try again).
failed=$dest.failed
[ -z "$(find "$failed" -mmin -1440 2> /dev/null)" ] ||
	die "debootstrap of $suite for $1 failed within the last day ($failed)"
command -v debootstrap > /dev/null || apt_install debootstrap
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.tmp-$1.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "debootstrap --foreign $suite for $debarch with $include"
debootstrap --foreign --arch="$debarch" --variant=minbase \
	--include="$include" "$suite" "$tmp/root" "$mirror" > "$tmp/log" 2>&1 ||
	{
		tail "$tmp/log" >&2
		cp "$tmp/log" "$failed"
		die "debootstrap failed"
	}
# The first stage unpacked only the essential packages; the rest are in
# the archive cache.  linux-perf goes last: its /usr/bin/perf is the real
# binary (on an installed system dpkg diverts linux-base's wrapper).
archives=$tmp/root/var/cache/apt/archives
for deb in "$archives"/*.deb; do
	case ${deb##*/} in
	linux-perf_*) continue ;;
	esac
	dpkg -x "$deb" "$tmp/root"
done
perf_deb=$(ls "$archives"/linux-perf_*.deb) || die "linux-perf was not fetched"
dpkg -x "$perf_deb" "$tmp/root"
file -L "$tmp/root/usr/bin/perf" | grep -q ELF || die "usr/bin/perf is not an ELF file"
jdk=usr/lib/jvm/java-21-openjdk-$debarch/bin
for tool in java javac; do
	[ ! -x "$tmp/root/$jdk/$tool" ] || ln -sf "/$jdk/$tool" "$tmp/root/usr/bin/$tool"
done
dpkg-deb -f "$perf_deb" Version > "$tmp/root/.complete"
rm -f "$archives"/*.deb
say "$1 root with linux-perf $(cat "$tmp/root/.complete")"
rm -rf "$dest"
mv "$tmp/root" "$dest"
echo "$dest"
