#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-headers.sh - get a Debian kernel header tree usable as KDIR
#
# Usage: fetch-headers.sh ARCH KVER
#   ARCH  x86_64 | arm64 | s390x
#   KVER  Debian 12 (bookworm), through the host's apt:
#           6.12 | 6.1     (Debian 12 ships s390x headers for 6.1 only)
#           6.12-rt        (x86_64 only: the PREEMPT_RT flavour, rt-amd64)
#         Debian 13 (trixie) and unstable (sid), from the suites' own
#         indexes:
#           6.12-deb13     Debian 13's 6.12 (trixie, stable)
#           7.3, 7.2, ...  the newest of that series (6.16 and on) in
#                          trixie-backports or sid
#           7              the newest 7.x in trixie-backports or sid
#           any of these with -rt: the PREEMPT_RT flavour
#
# Debian 12's kernels: resolves the newest linux-headers-<ver>-<flavour> the apt lists know,
# downloads it with linux-headers-<ver>-common[-rt] and the host's
# linux-kbuild-<series> (apt-get download, no installation), unpacks all
# three into one prefix.  Debian 13's kernels: the same three packages
# (linux-kbuild-<ver> of amd64), the newest version the suite's signed
# index carries, through scripts/fetch-debs.sh.  Either way into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/headers/<arch>-<ver>[-rt]/
# (with .suite naming the suite, for fetch-image.sh) and rewrites the
# absolute paths Debian's packages carry, so that the tree works as KDIR
# wherever the cache lives:
#   - the flavour Makefile includes /usr/src/linux-headers-<ver>-common/
#     Makefile, and from 6.18 sets KBUILD_OUTPUT to its own directory:
#     both made relative to the Makefile's own directory;
#   - absolute symlinks (lib/modules/<rel>/{build,source}) point into the
#     prefix; scripts/ and tools/ are relative links into
#     usr/lib/linux-kbuild-<series>/ and are checked to resolve.
# A tree that was unpacked completely is reused without any network access.
# The cross compiler the architecture needs, and pahole when the kernel
# builds module BTF, are installed if missing.  Debian 13's kernels are
# built with gcc-14 and their kbuild tools need glibc 2.38: modules for
# them build in scripts/debian-root.sh's root (scripts/kbuild.sh).
#
# stdout: the KDIR (usr/src/linux-headers-<ver>-<flavour>), nothing else.
# stderr: progress and the version used.
#
# Build against it with
#   make -C "$KDIR" M=$PWD                                  (x86_64)
#   make -C "$KDIR" M=$PWD ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
#   make -C "$KDIR" M=$PWD ARCH=s390 CROSS_COMPILE=s390x-linux-gnu-

set -euo pipefail

prog=${0##*/}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	printf 'usage: %s ARCH KVER\n  ARCH: x86_64 | arm64 | s390x\n  KVER: 6.12 | 6.1 | 6.12-rt (x86_64) | 6.12-deb13 | 7 | 7.3 | ... [-rt]\n' \
		"$prog" >&2
	exit 2
}

[ $# -eq 2 ] || usage
arch=$1
kver=$2

case $arch in
x86_64)	debarch=amd64; flavour=amd64; cross= ;;
arm64)	debarch=arm64; flavour=arm64; cross=aarch64-linux-gnu ;;
s390x)	debarch=s390x; flavour=s390x; cross=s390x-linux-gnu ;;
*)	usage ;;
esac

# tag: what tells the flavour's cache directory from the default one's.
# suite: where Debian 13's kernels come from (empty: bookworm, apt).
tag=""
suite=""
case $kver in
6.12-rt)
	[ "$arch" = x86_64 ] || usage
	flavour=rt-amd64 tag=-rt kver=6.12 ;;
*-rt)
	flavour=rt-$flavour tag=-rt kver=${kver%-rt} ;;
esac

case $kver in
6.12)	name_re='^linux-headers-6\.12\.[0-9]+\+deb12-'"$flavour"'$' ;;
6.1)	name_re='^linux-headers-6\.1\.0-[0-9]+-'"$flavour"'$' ;;
6.12-deb13)
	suite=trixie
	name_re='^linux-headers-6\.12\.[0-9]+\+deb13-'"$flavour"'$' ;;
[7-9]|[1-9][0-9])
	suite="trixie-backports sid"
	name_re='^linux-headers-'"$kver"'\.[0-9]+\.[0-9]+\+deb1[34]-'"$flavour"'$' ;;
6.1[6-9]|[7-9].[0-9]*|[1-9][0-9].[0-9]*)
	suite="trixie-backports sid"
	name_re='^linux-headers-'"${kver//./\\.}"'\.[0-9]+\+deb1[34]-'"$flavour"'$' ;;
*)	usage ;;
esac
[ -z "$tag" ] || [ -n "$suite" ] || [ "$kver" = 6.12 ] || usage

hostarch=$(dpkg --print-architecture)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/headers

# The kbuild package of an ABI version: one per upload for 6.12, a single
# package name for the whole 6.1 series.
kbuild_pkg() {
	case $kver in
	6.1)	echo linux-kbuild-6.1 ;;
	*)	echo "linux-kbuild-$1" ;;
	esac
}

# Candidate version of package $1, or nothing.
candidate() {
	apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2; exit }'
}

# Print "<ver> <pkgversion>" of the newest header package apt can fetch
# for this architecture, with its -common and kbuild packages, or fail.
resolve() {
	local pkg ver pv

	for pkg in $(apt-cache search --names-only "$name_re" 2>/dev/null |
		     awk '{ print $1 }' | sort -rV); do
		ver=${pkg#linux-headers-}
		ver=${ver%-"$flavour"}
		pv=$(candidate "$pkg:$debarch")
		[ -n "$pv" ] || continue
		[ -n "$(candidate "linux-headers-$ver-common$tag")" ] || continue
		[ -n "$(candidate "$(kbuild_pkg "$ver"):$hostarch")" ] || continue
		echo "$ver $pv"
		return 0
	done
	return 1
}

# Debian 13 and later: print "<ver> <pkgversion> <suite>" of every header
# package the suites' indexes carry, newest first (a suite whose index
# cannot be read or verified is passed over), or fail.
resolve_deb13() {
	local s

	for s in $suite; do
		FETCH_DEBS_SUITE=$s "$(dirname "$0")/fetch-debs.sh" -l \
			"$debarch" "$name_re" | sed "s/\$/ $s/" || true
	done | awk '{ v = $1; sub(/^linux-headers-/, "", v);
		      sub(/-'"$flavour"'$/, "", v); print v, $2, $3 }' |
		sort -k1,1rV | grep .
}

# Debian 13: download version $1 into $3 from the suite's index.
download_deb13() {
	local ver=$1 dir=$3 common deb debs kb

	common=linux-headers-$ver-common
	FETCH_DEBS_SUITE=$suite "$(dirname "$0")/fetch-debs.sh" -l "$debarch" \
		"^$(printf '%s' "$common$tag" | sed 's/[.+]/\\&/g')\$" |
		grep -q . && common=$common$tag
	debs=$(FETCH_DEBS_SUITE=$suite "$(dirname "$0")/fetch-debs.sh" \
		-d "$debarch" "linux-headers-$ver-$flavour" "$common") &&
	kb=$(FETCH_DEBS_SUITE=$suite "$(dirname "$0")/fetch-debs.sh" \
		-d amd64 "linux-kbuild-$ver") || {
		say "cannot download the $ver headers from $suite"
		return 1
	}
	for deb in $debs $kb; do
		cp "$deb" "$dir/"
	done
}

# Newest complete tree already in the cache for this ARCH/KVER, if any.
cached() {
	local d

	for d in $(find "$cache" -mindepth 1 -maxdepth 1 \
		   -name "$arch-${kver%-deb13}[.-]*" -printf '%f\n' 2>/dev/null |
		   sort -rV); do
		case $d in
		*-rt)	[ -n "$tag" ] || continue ;;
		*)	[ -z "$tag" ] || continue ;;
		esac
		case $d in
		*+deb1[34]*) [ -n "$suite" ] || continue ;;
		*)	  [ -z "$suite" ] || continue ;;
		esac
		if [ -f "$cache/$d/.complete" ]; then
			d=${d#"$arch"-}
			echo "${d%"$tag"}"
			return 0
		fi
	done
	return 1
}

ensure_foreign_arch() {
	[ "$debarch" = "$hostarch" ] && return 0
	dpkg --print-foreign-architectures | grep -qx "$debarch" && return 0
	say "adding dpkg architecture $debarch"
	as_root dpkg --add-architecture "$debarch"
}

ensure_cross() {
	[ -n "$cross" ] || return 0
	command -v "$cross-gcc" >/dev/null 2>&1 && return 0
	say "installing gcc-$cross"
	apt_install "gcc-$cross"
}

# Debian kernels build module BTF (CONFIG_DEBUG_INFO_BTF_MODULES), which
# needs pahole; without it the final link of every module fails.
ensure_pahole() {
	grep -q '^CONFIG_DEBUG_INFO_BTF_MODULES=y' "$1/.config" || return 0
	command -v pahole >/dev/null 2>&1 && return 0
	say "installing dwarves (pahole, for module BTF)"
	apt_install dwarves
}

# Download version $1 (package version $2) into $3.
download() {
	local ver=$1 pv=$2 dir=$3 kb kbv opt=()

	# As root apt hands the download to user _apt, who cannot write here.
	[ "$(id -u)" -ne 0 ] || opt=(-o APT::Sandbox::User=root)
	kb=$(kbuild_pkg "$ver")
	# Prefer the kbuild upload that matches the headers, else the newest.
	kbv=$(apt-cache madison "$kb" 2>/dev/null |
	      awk -v v="$pv" '$3 == v { print "=" v; exit }')
	(cd "$dir" &&
	 apt-get download -q "${opt[@]}" \
		"linux-headers-$ver-$flavour:$debarch=$pv" \
		"linux-headers-$ver-common$tag=$pv" \
		"$kb:$hostarch$kbv") >&2
}

# Make the unpacked tree under $1 independent of /usr/src.
fix_tree() {
	local root=$1 ver=$2 kdir link target rel

	kdir=$root/usr/src/linux-headers-$ver-$flavour
	# Kbuild finds srctree from the included Makefile's own location.
	# shellcheck disable=SC2016 # make syntax, expanded by make
	local here='$(dir $(realpath $(lastword $(MAKEFILE_LIST))))'

	sed -i -e "s|^include /usr/src/\\(.*\\)\$|include $here../\\1|" \
		-e "s|^KBUILD_OUTPUT=/usr/src/.*|KBUILD_OUTPUT := \$(patsubst %/,%,$here)|" \
		"$kdir/Makefile"
	grep -qE '^(include |KBUILD_OUTPUT ?:?= ?)/' "$kdir/Makefile" &&
		die "unexpected absolute path left in $kdir/Makefile"
	while IFS= read -r -d '' link; do
		target=$(readlink "$link")
		rel=$(realpath -m --relative-to="$(dirname "$link")" \
		      "$root$target")
		ln -sfn "$rel" "$link"
	done < <(find "$root" -type l -lname '/*' -print0)
	for link in scripts tools; do
		[ -e "$kdir/$link" ] ||
			die "$kdir/$link does not resolve (kbuild package missing?)"
	done
	[ -f "$kdir/scripts/Makefile.build" ] ||
		die "$kdir/scripts/Makefile.build missing"
	[ -f "$kdir/.config" ] || die "$kdir/.config missing"
}

# Download and unpack version $1 into $cache/$arch-$1.
fetch() {
	local ver=$1 pv=$2 dest tmp deb

	dest=$cache/$arch-$ver$tag
	tmp=$(mktemp -d "$cache/.tmp-$arch-$ver$tag.XXXXXX")
	# Expanded now: tmp is local, and gone when the trap runs.
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	mkdir "$tmp/debs" "$tmp/root"
	if [ -n "$suite" ]; then
		download_deb13 "$ver" "$pv" "$tmp/debs" || {
			rm -rf "$tmp"
			trap - EXIT
			return 1
		}
		echo "$suite" > "$tmp/root/.suite"
	else
		download "$ver" "$pv" "$tmp/debs"
	fi
	for deb in "$tmp"/debs/*.deb; do
		dpkg -x "$deb" "$tmp/root"
	done
	fix_tree "$tmp/root" "$ver"
	printf '%s\n' "$pv" > "$tmp/root/.complete"
	rm -rf "$dest"
	mv "$tmp/root" "$dest"
	rm -rf "$tmp"
	trap - EXIT
}

mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9

ensure_cross

# Debian 13: the newest version whose packages the mirror serves (an
# index may name an upload whose files its pool no longer or not yet
# has: then the next older one), or the newest cached tree.
fetch_deb13() {
	local suites=$suite cands v p s

	cands=$(resolve_deb13) || cands=""
	while read -r v p s; do
		[ -n "$v" ] || continue
		suite=$s
		if [ -f "$cache/$arch-$v$tag/.complete" ] ||
		   { say "fetching $arch linux-headers-$v-$flavour ($p, $s)" &&
		     fetch "$v" "$p" >&2; }; then
			echo "$v $p"
			return 0
		fi
	done <<< "$cands"
	suite=$suites
	v=$(cached) || die "no linux-headers for $arch $kver in $suite"
	echo "$v cached"
}

if [ -n "$suite" ]; then
	res=$(fetch_deb13) || exit 1
elif ! res=$(resolve); then
	if ver=$(cached); then
		res="$ver cached"
		say "apt knows no $arch $kver headers; using cached $ver"
	else
		ensure_foreign_arch
		say "no $arch $kver headers in the apt lists; running apt-get update"
		as_root apt-get update -q >&2 || die "apt-get update failed"
		res=$(resolve) ||
			die "no linux-headers for $arch $kver in the archive" \
			    "(Debian 12 has s390x headers for 6.1 only)"
	fi
fi
read -r ver pv _ <<< "$res"

dest=$cache/$arch-$ver$tag
if [ -f "$dest/.complete" ]; then
	say "using $arch linux-headers-$ver-$flavour ($(cat "$dest/.complete"), cached)"
else
	say "fetching $arch linux-headers-$ver-$flavour ($pv)"
	fetch "$ver" "$pv"
	say "using $arch linux-headers-$ver-$flavour ($pv)"
fi

kdir=$dest/usr/src/linux-headers-$ver-$flavour
ensure_pahole "$kdir"
echo "$kdir"
