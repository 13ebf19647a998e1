#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-debs.sh - get Debian binary packages of any architecture and suite
#
# Usage: fetch-debs.sh [-u] ARCH PKG...
#        fetch-debs.sh [-u] -d ARCH PKG...
#        fetch-debs.sh [-u] -l ARCH REGEX
#   ARCH  amd64 (or x86_64) | arm64 | s390x
#   PKG   binary package names, e.g. libc6 libstdc++6 bash python3.11-minimal
#   -u    refresh the Packages indexes and look for newer versions of
#         packages already in the cache
#   -d    download only: print the path of each chosen .deb in the cache,
#         unpack nothing
#   -l    list "package version" of the packages whose names match the
#         extended regular expression REGEX, the newest version of each
#
# Takes the newest version of each PKG that the suites of FETCH_DEBS_SUITE
# on deb.debian.org carry for ARCH, straight from the mirror (no apt
# lists, no dpkg architecture needed), and unpacks them all with dpkg -x
# into one tree.  FETCH_DEBS_SUITE:
#   bookworm          (default) bookworm, -updates and -security: Debian 12
#   trixie            trixie, -updates and -security: Debian 13
#   trixie-backports  Debian 13's backports (the 6.16 to 7.x kernels)
#   sid               Debian's unstable
# The cache, per architecture (and suite, other than bookworm), is
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/debs/<arch>/
#     index/<suite>.{InRelease,Packages.xz}   the suites' signed indexes
#     pkgs/<pkg>                              the .deb file chosen for <pkg>
#     dl/<pkg>                                the same, for -d (not unpacked)
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
# suite and archive it lives in, for each FETCH_DEBS_SUITE.
release=${FETCH_DEBS_SUITE:-bookworm}
case $release in
bookworm|trixie)
	suites="$release:debian $release-updates:debian"
	suites="$suites $release-security:debian-security" ;;
trixie-backports|sid)
	suites="$release:debian" ;;
*)	die "unknown FETCH_DEBS_SUITE '$release'" ;;
esac

usage() {
	printf 'usage: %s [-u] [-d | -l] ARCH PKG...|REGEX\n  ARCH: amd64 | arm64 | s390x\n' \
		"$prog" >&2
	exit 2
}

update='' list='' download_only=''
while [ $# -gt 0 ]; do
	case $1 in
	-u)	update=1; shift ;;
	-l)	list=1; shift ;;
	-d)	download_only=1; shift ;;
	*)	break ;;
	esac
done
[ $# -ge 2 ] || usage
case $1 in
amd64|x86_64)	debarch=amd64 ;;
arm64|s390x)	debarch=$1 ;;
*)		usage ;;
esac
shift
[ -z "$list" ] || [ $# -eq 1 ] || usage
for pkg in "$@"; do
	[ -n "$list" ] && break
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
		# By hash, as apt does: the plain name may be a newer or
		# older upload than the InRelease just read.
		curl -fsSL --retry 3 -o "$tmp/Packages.xz" \
			"$url/main/binary-$debarch/by-hash/SHA256/$sha" \
			2> /dev/null ||
			fetch_url "$url/main/binary-$debarch/Packages.xz" \
				"$tmp/Packages.xz"
		if [ "$(sha256sum < "$tmp/Packages.xz")" = "$sha  -" ]; then
			mv "$tmp/Packages.xz" "$ix.Packages.xz"
		elif [ "$suite" != "$release" ]; then
			# A mirror caught between two uploads of a side
			# suite (-updates, -security): do without it now.
			say "warning: $suite $debarch index does not match its InRelease; skipped"
			rm -f "$ix.Packages.xz" "$tmp/InRelease"
			return 0
		else
			die "SHA256 mismatch for $url/main/binary-$debarch/Packages.xz"
		fi
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

# Print "package version" for the newest version of every package whose
# name matches the regular expression $1.
list_matching() {
	local s

	for s in $suites; do
		fetch_index "${s%%:*}" "${s#*:}"
	done
	for s in $suites; do
		[ -f "$adir/index/${s%%:*}.Packages.xz" ] || continue
		xzcat "$adir/index/${s%%:*}.Packages.xz" |
		awk -v re="$1" 'BEGIN { RS = ""; FS = "\n" }
			substr($1, 10) ~ re {
				for (i = 2; i <= NF; i++)
					if ($i ~ /^Version: /)
						print substr($1, 10), substr($i, 10)
			}'
	done | sort -k1,1 | {
		local pkg ver last="" lver=""

		while read -r pkg ver; do
			if [ "$pkg" = "$last" ]; then
				dpkg --compare-versions "$ver" le "$lver" ||
					lver=$ver
				continue
			fi
			[ -z "$last" ] || echo "$last $lver"
			last=$pkg lver=$ver
		done
		[ -z "$last" ] || echo "$last $lver"
	}
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
		old=$(cat "$pkgdir/$pkg" 2> /dev/null || true)
		[ -z "$old" ] || [ "$old" = "$deb" ] || rm -f "$adir/$old"
		echo "$deb" > "$pkgdir/$pkg"
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

# Packages to unpack into root/, or (-d) only to download.
pkgdir=$adir/pkgs
[ -z "$download_only" ] || pkgdir=$adir/dl
mkdir -p "$adir/index" "$pkgdir"
exec 9> "$adir/.lock"
flock 9

missing=()
for pkg in "$@"; do
	deb=$(cat "$pkgdir/$pkg" 2> /dev/null || true)
	if [ -n "$update" ] || [ -z "$deb" ] || [ ! -f "$adir/$deb" ]; then
		missing+=("$pkg")
	fi
done

tmp=$(mktemp -d "$adir/.tmp.XXXXXX")
trap cleanup EXIT
if [ -n "$list" ]; then
	command -v curl > /dev/null 2>&1 || apt_install curl
	list_matching "$1"
	exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
	command -v curl > /dev/null 2>&1 || apt_install curl
	command -v gpgv > /dev/null 2>&1 || apt_install gpgv
	[ -f "$keyring" ] || apt_install debian-archive-keyring
	resolve "${missing[@]}"
fi
if [ -n "$download_only" ]; then
	for pkg in "$@"; do
		echo "$adir/$(cat "$pkgdir/$pkg")"
	done
	exit 0
fi
unpack
echo "$adir/root"
