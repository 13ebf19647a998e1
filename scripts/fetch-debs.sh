#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-debs.sh - get Debian 12 binary packages of another architecture
#
# Usage: fetch-debs.sh [-u] ARCH PKG...
#   ARCH  amd64 (or x86_64) | arm64 | s390x
#   PKG   binary package names, e.g. libc6 libstdc++6 bash python3.11-minimal
#   -u    refresh the Packages indexes and look for newer versions of
#         packages already in the cache
#
# Takes the newest version of each PKG that bookworm, bookworm-updates and
# bookworm-security on deb.debian.org carry for ARCH, straight from the
# mirror (no apt lists, no dpkg architecture needed), and unpacks them all
# with dpkg -x into one tree.  The cache, per architecture, is
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/debs/<arch>/
#     index/<suite>.{InRelease,Packages.xz}   the suites' signed indexes
#     pkgs/<pkg>                              the .deb file chosen for <pkg>
#     <pkg>_<version>_<arch>.deb
#     root/                                   all chosen .debs unpacked
# Each InRelease is checked with gpgv against debian-archive-keyring, each
# Packages.xz against the SHA256 InRelease gives, each .deb against the
# SHA256 of its Packages entry.  Packages already in the cache are used
# without any network access; the indexes are fetched again only when a
# package must be resolved and they are older than a day (or with -u).
# Symlinks in the tree are used as the packages ship them; an absolute one
# (none in libc6, libstdc++6, bash, python3.11-minimal) would point out of
# the tree, and is warned about.
#
# stdout: the root of the unpacked tree, nothing else.
# stderr: progress.

set -euo pipefail

prog=${0##*/}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

mirror=http://deb.debian.org
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# suite and archive it lives in; FETCH_DEBS_SUITE=sid takes Debian's
# unstable instead (for a reader newer than bookworm's, e.g. libsframe3),
# cached apart from bookworm's packages.
suites="bookworm:debian bookworm-updates:debian bookworm-security:debian-security"
release=bookworm
if [ "${FETCH_DEBS_SUITE:-}" = sid ]; then
	suites="sid:debian"
	release=sid
fi

usage() {
	printf 'usage: %s [-u] ARCH PKG...\n  ARCH: amd64 | arm64 | s390x\n' \
		"$prog" >&2
	exit 2
}

update=
if [ "${1:-}" = -u ]; then
	update=1
	shift
fi
[ $# -ge 2 ] || usage
case $1 in
amd64|x86_64)	debarch=amd64 ;;
arm64|s390x)	debarch=$1 ;;
*)		usage ;;
esac
shift
for pkg in "$@"; do
	[[ $pkg =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || die "bad package name '$pkg'"
done

adir=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/debs/$debarch
[ "$release" = bookworm ] || adir=$adir-$release
tmp=

cleanup() {
	[ -z "$tmp" ] || rm -rf "$tmp"
}

fetch_url() {
	curl -fsSL --retry 3 -o "$2" "$1" || die "cannot download $1"
}

# Check that file $1 has SHA256 $2.
check_sha() {
	[ "$(sha256sum < "$1")" = "$2  -" ] ||
		die "SHA256 mismatch for $(basename "$1")"
}

# Fetch the signed main/binary-$debarch/Packages.xz of suite $1 in archive
# $2, unless the cached one is fresh enough.  A suite that has dropped the
# architecture (bookworm-security has no s390x since LTS) leaves none.
fetch_index() {
	local suite=$1 archive=$2 ix url sha

	ix=$adir/index/$suite
	[ -z "$update" ] && [ -n "$(find "$ix.InRelease" -mmin -1440 \
				    2> /dev/null)" ] && return 0
	say "fetching the $suite $debarch index"
	url=$mirror/$archive/dists/$suite
	fetch_url "$url/InRelease" "$tmp/InRelease"
	gpgv -q --keyring "$keyring" --output "$tmp/Release" \
		"$tmp/InRelease" 2> /dev/null ||
		die "bad signature on $url/InRelease"
	if ! grep -Eq "^Architectures:.* $debarch( |$)" "$tmp/Release"; then
		say "$suite has no $debarch packages"
		rm -f "$ix.Packages.xz"
	else
		sha=$(awk -v f="main/binary-$debarch/Packages.xz" '
			/^[^ ]/ { sect = $1 }
			sect == "SHA256:" && $3 == f { print $1; exit }' \
			"$tmp/Release")
		[ -n "$sha" ] ||
			die "$url/InRelease lists no main/binary-$debarch"
		fetch_url "$url/main/binary-$debarch/Packages.xz" \
			"$tmp/Packages.xz"
		check_sha "$tmp/Packages.xz" "$sha"
		mv "$tmp/Packages.xz" "$ix.Packages.xz"
	fi
	mv "$tmp/InRelease" "$ix.InRelease"
}

# Print "pkg version url sha256 size" for every entry of the packages $@
# in the cached indexes.
entries() {
	local s suite archive

	for s in $suites; do
		suite=${s%%:*}
		archive=${s#*:}
		[ -f "$adir/index/$suite.Packages.xz" ] || continue
		xzcat "$adir/index/$suite.Packages.xz" |
		awk -v want=" $* " -v base="$mirror/$archive/" '
			BEGIN { RS = ""; FS = "\n" }
			!index(want, " " substr($1, 10) " ") { next }
			{
				for (i = 2; i <= NF; i++) {
					split($i, kv, ": ")
					e[kv[1]] = kv[2]
				}
				print substr($1, 10), e["Version"],
				      base e["Filename"], e["SHA256"], e["Size"]
				delete e
			}'
	done
}

# Choose the newest version of each of the packages $@ and download it.
resolve() {
	local s pkg ver url sha size best bver bsha bsize deb old

	for s in $suites; do
		fetch_index "${s%%:*}" "${s#*:}"
	done
	entries "$@" > "$tmp/entries"
	for pkg in "$@"; do
		best='' bver='' bsha='' bsize=''
		while read -r _ ver url sha size; do
			if [ -z "$best" ] ||
			   dpkg --compare-versions "$ver" gt "$bver"; then
				best=$url bver=$ver bsha=$sha bsize=$size
			fi
		done < <(awk -v p="$pkg" '$1 == p' "$tmp/entries")
		[ -n "$best" ] || die "no package $pkg for $debarch in $release"
		deb=${best##*/}
		if [ ! -f "$adir/$deb" ] ||
		   [ "$(sha256sum < "$adir/$deb")" != "$bsha  -" ]; then
			say "downloading $deb ($bsize bytes)"
			fetch_url "$best" "$tmp/$deb"
			check_sha "$tmp/$deb" "$bsha"
			mv "$tmp/$deb" "$adir/$deb"
		fi
		old=$(cat "$adir/pkgs/$pkg" 2> /dev/null || true)
		[ -z "$old" ] || [ "$old" = "$deb" ] || rm -f "$adir/$old"
		echo "$deb" > "$adir/pkgs/$pkg"
	done
}

# Unpack every chosen .deb into a new root, unless root/ has them already.
unpack() {
	local want deb

	want=$(cat "$adir"/pkgs/* | sort)
	[ "$want" = "$(cat "$adir/root/.debs" 2> /dev/null)" ] && return 0
	say "unpacking $(echo "$want" | wc -l) packages"
	mkdir "$tmp/root"
	for deb in $want; do
		dpkg -x "$adir/$deb" "$tmp/root"
	done
	# None of libc6, libstdc++6, bash, python3.11-minimal has any.
	[ -z "$(find "$tmp/root" -type l -lname '/*' -print -quit)" ] ||
		say "warning: absolute symlinks in the tree point out of it"
	echo "$want" > "$tmp/root/.debs"
	rm -rf "$adir/root.old"
	[ ! -d "$adir/root" ] || mv "$adir/root" "$adir/root.old"
	mv "$tmp/root" "$adir/root"
	rm -rf "$adir/root.old"
}

mkdir -p "$adir/index" "$adir/pkgs"
exec 9> "$adir/.lock"
flock 9

missing=()
for pkg in "$@"; do
	deb=$(cat "$adir/pkgs/$pkg" 2> /dev/null || true)
	if [ -n "$update" ] || [ -z "$deb" ] || [ ! -f "$adir/$deb" ]; then
		missing+=("$pkg")
	fi
done

tmp=$(mktemp -d "$adir/.tmp.XXXXXX")
trap cleanup EXIT
if [ ${#missing[@]} -gt 0 ]; then
	command -v curl > /dev/null 2>&1 || apt_install curl
	command -v gpgv > /dev/null 2>&1 || apt_install gpgv
	[ -f "$keyring" ] || apt_install debian-archive-keyring
	resolve "${missing[@]}"
fi
unpack
echo "$adir/root"
