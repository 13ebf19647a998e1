#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb.sh - the Debian packages, and the test that they work when installed
#
#   scripts/deb.sh build   make deb: sframe-unwind-dkms and -tools, with
#                          dpkg-buildpackage from a copy of the tree, into
#                          build/deb/
#   scripts/deb.sh check   make check-deb: build them, run lintian, install
#                          them into a Debian 12 chroot that has dkms and
#                          the headers of the guests' 6.1 and 6.12 kernels,
#                          check what DKMS built there, build the packaged
#                          source for arm64 6.12 and s390x 6.1, boot the
#                          6.12 guest with the module DKMS built and run
#                          the registry and perf selftests on it, then
#                          purge the packages; the same in a Debian 13
#                          chroot with the headers of Debian 13's 6.12 and
#                          of the newest 7.x (trixie-backports), booting
#                          the 7.x guest.
#
# The chroots are made once with debootstrap (from the Debian mirror apt
# uses, no other network) and cached under
# ${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind/chroot/; each check works
# on a copy of it.  Needs root (debootstrap, chroot).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC2034 # lib.sh's messages carry it
prog=deb
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

out=$root/build/deb
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind
mirror=http://deb.debian.org/debian
suite=bookworm
# The x86-64 kernels each suite's chroot gets headers for, as
# fetch-headers.sh names them; the first is the guest's (read through
# ${!name}).
# shellcheck disable=SC2034
{
kvers_bookworm="6.12 6.1"
kvers_trixie="7 6.12-deb13"
}
guest_tests="module_load.sh modinfo.sh registry_exec.sh registry_fork.sh
registry_dlopen perf_callchain.sh"
version=$(sed -n 's/^#define SFU_VERSION[[:space:]]*"\(.*\)"/\1/p' \
	"$root/include/sframe/version.h")

finish() {
	tap_end deb
	exit
}

# The tree's files, as git knows them (or all but build/ without git).
copy_tree() {
	local dst=$1

	mkdir -p "$dst"
	if git -C "$root" rev-parse --git-dir > /dev/null 2>&1; then
		git -C "$root" ls-files -z --cached --others --exclude-standard |
			(cd "$root" && xargs -0 cp --parents -t "$dst")
	else
		(cd "$root" && tar --exclude=./build -cf - .) | tar -C "$dst" -xf -
	fi
}

# make deb: build/deb/sframe-unwind-{dkms,tools}_<version>_<arch>.deb
build() {
	local src=$out/sframe-unwind-$version cv

	cv=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
	[ "$cv" = "$version" ] ||
		die "debian/changelog says $cv, include/sframe/version.h $version"
	chr=$out/chroot
	remove_chroot || die "cannot clean $out"
	rm -rf "$out"
	copy_tree "$src"
	(cd "$src" && dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1 ||
		{ tail -40 "$out/build.log" >&2; die "dpkg-buildpackage failed (build/deb/build.log)"; }
	ls "$out"/*.deb
}

debs_built() {
	[ -f "$out/sframe-unwind-dkms_${version}_all.deb" ] &&
		[ -f "$out/sframe-unwind-tools_${version}_$(dpkg --print-architecture).deb" ]
}

# lintian on the .changes: no error and no warning that debian/*.
# lintian-overrides does not explain.
lintian_clean() {
	lintian --fail-on error,warning --info "$out"/*.changes \
		> "$out/lintian.log" 2>&1
	local rc=$?

	sed 's/^/#   /' "$out/lintian.log"
	return $rc
}

# deb_has DEB PATH...: the package holds every PATH.
deb_has() {
	local deb=$1 list p

	shift
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qx "$p" <<< "$list" || { echo "# $deb: no $p"; return 1; }
	done
}

packed_version_ok() {
	local conf

	conf=$(dpkg-deb --fsys-tarfile "$out/sframe-unwind-dkms_${version}_all.deb" |
	       tar -xOf - "./usr/src/sframe-unwind-$version/dkms.conf")
	grep -qx "PACKAGE_VERSION=\"$version\"" <<< "$conf"
}

# The header versions of the suite's kernels, as fetch-headers.sh cached
# them: "<abi> <package version>" per line.
header_versions() {
	local kv kdir kvers=kvers_$suite

	for kv in ${!kvers}; do
		kdir=$("$root/scripts/fetch-headers.sh" x86_64 "$kv") || return 1
		kdir=${kdir%/usr/src/*}
		echo "$(basename "$kdir" | sed 's/^x86_64-//') $(cat "$kdir/.complete")"
	done
}

# The suite's apt sources: Debian 13's kernels come from its backports.
sources() {
	echo "deb $mirror-security $suite-security main"
	[ "$suite" = bookworm ] || echo "deb $mirror $suite-backports main"
}

# A chroot of the suite with dkms and its kernels' amd64 headers, cached.
base_chroot() {
	local vers key base tmp pkgs=() abi pv

	vers=$(header_versions) || return 1
	key=$(printf '%s\n' "$vers" | md5sum | cut -c1-12)
	base=$cache/chroot/$suite-dkms-$key
	if [ -f "$base/.complete" ]; then
		echo "$base"
		return 0
	fi
	mkdir -p "$cache/chroot"
	tmp=$(mktemp -d "$cache/chroot/.tmp.XXXXXX")
	# A subshell ($(base_chroot)): the trap removes what is left of a
	# failed or interrupted set-up, and nothing once it is moved.  It is
	# expanded now: tmp is local and gone when the subshell exits.
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	say "debootstrap $suite into $tmp"
	debootstrap --variant=minbase "$suite" "$tmp" "$mirror" \
		> "$out/debootstrap.log" 2>&1 ||
		{ tail "$out/debootstrap.log" >&2; return 1; }
	sources >> "$tmp/etc/apt/sources.list"
	cp /etc/resolv.conf "$tmp/etc/resolv.conf"
	while read -r abi pv; do
		pkgs+=("linux-headers-$abi-amd64=$pv")
	done <<< "$vers"
	say "installing dkms ${pkgs[*]}"
	{ chroot "$tmp" apt-get update -qq &&
	  DEBIAN_FRONTEND=noninteractive chroot "$tmp" apt-get install -y -qq \
		--no-install-recommends dkms "${pkgs[@]}" &&
	  chroot "$tmp" apt-get clean; } > "$out/chroot-setup.log" 2>&1 ||
		{ tail "$out/chroot-setup.log" >&2; return 1; }
	printf '%s\n' "$vers" > "$tmp/.complete"
	rm -rf "$base"
	mv "$tmp" "$base"
	echo "$base"
}

# dkms needs /proc (and /dev/fd, a link into it); nothing else is mounted.
mount_chroot() {
	mount -t proc proc "$chr/proc"
}

umount_chroot() {
	[ -n "${chr:-}" ] || return 0
	if mountpoint -q "$chr/proc"; then
		umount "$chr/proc" || umount -l "$chr/proc"
	fi
}

# Remove the chroot copy, never while something is mounted inside it.
remove_chroot() {
	umount_chroot
	if grep -q " $chr/" /proc/mounts; then
		say "error: $chr still has mounts; not removing it"
		return 1
	fi
	rm -rf "$chr"
}

in_chroot() {
	DEBIAN_FRONTEND=noninteractive chroot "$chr" "$@"
}

install_debs() {
	cp "$out"/sframe-unwind-dkms_*.deb "$out"/sframe-unwind-tools_*.deb \
		"$chr/tmp/"
	in_chroot sh -c 'apt-get install -y --no-install-recommends /tmp/*.deb' \
		> "$out/install.log" 2>&1
	local rc=$?

	grep -iE 'dkms|sframe|error' "$out/install.log" | sed 's/^/#   /'
	return $rc
}

# dkms_ko REL: the module DKMS installed for kernel REL (xz-compressed
# where that kernel's own modules are), or nothing.
dkms_ko() {
	local f

	for f in "$chr/lib/modules/$1/updates/dkms/sframe_unwind.ko"{,.xz}; do
		[ -f "$f" ] && echo "$f" && return 0
	done
	return 1
}

# dkms_built ABI: DKMS installed the module for <ABI>-amd64, with the
# package's version and that kernel's vermagic, without compiler warnings.
dkms_built() {
	local rel=$1-amd64 ko info log

	ko=$(dkms_ko "$rel") || { echo "# no module for $rel"; return 1; }
	case $ko in
	*.xz)	xz -dc "$ko" > "$out/$rel.ko" && ko=$out/$rel.ko ;;
	esac
	info=$(modinfo -F version "$ko")
	[ "$info" = "$version" ] ||
		{ echo "# modinfo version is $info, not $version"; return 1; }
	info=$(modinfo -F vermagic "$ko")
	[ "${info%% *}" = "$rel" ] ||
		{ echo "# vermagic is $info, not $rel"; return 1; }
	in_chroot dkms status -m sframe-unwind -v "$version" -k "$rel" |
		grep -q ': installed' ||
		{ echo "# dkms status does not say installed for $rel"; return 1; }
	log=$(ls "$chr/var/lib/dkms/sframe-unwind/$version/$rel"/*/log/make.log) ||
		{ echo "# no DKMS make.log for $rel"; return 1; }
	! grep 'warning:' "$log"
}

tools_work() {
	[ "$(in_chroot sframectl --version)" = "sframectl (sframe-unwind) $version" ] &&
		in_chroot sframe-gen --stats -o /tmp/ls.sframe /usr/bin/ls > /dev/null &&
		in_chroot sframe-dump --validate /tmp/ls.sframe
}

installed_files() {
	local f

	for f in /usr/share/man/man8/sframectl.8.gz \
		 /usr/share/man/man1/sframe-gen.1.gz \
		 /usr/share/man/man1/sframe-dump.1.gz \
		 /lib/systemd/system/sframectl.service \
		 /lib/systemd/system/sframectl-warm.service \
		 /usr/lib/modules-load.d/sframe-unwind.conf \
		 /etc/modprobe.d/sframe-unwind.conf; do
		[ -f "$chr$f" ] || { echo "# no $f"; return 1; }
	done
	grep -qx 'ExecStart=/usr/sbin/sframectl daemon' \
		"$chr/lib/systemd/system/sframectl.service" &&
		grep -q '^ExecStart=/usr/sbin/sframectl warm /usr/bin ' \
			"$chr/lib/systemd/system/sframectl-warm.service"
}

# deb_triggers DEB: its control files declare the file triggers.
deb_triggers() {
	local t

	t=$(dpkg-deb --ctrl-tarfile "$1" | tar -xOf - ./triggers) || return 1
	echo "$t" | grep -qx 'interest-noawait /usr/bin' &&
		echo "$t" | grep -qx 'interest-noawait /usr/lib'
}

# A file under /usr/lib changed: dpkg runs the tools package's trigger,
# whose postinst succeeds (without systemd it starts nothing).
trigger_runs() {
	in_chroot dpkg-trigger --no-await /usr/lib &&
		in_chroot dpkg --triggers-only --pending > "$out/trigger.log" 2>&1 ||
		{ sed 's/^/#   /' "$out/trigger.log"; return 1; }
	grep -q 'Processing triggers for sframe-unwind-tools' "$out/trigger.log"
}

# cross_build ARCH KVER: the source the package installed builds for ARCH.
cross_build() {
	local arch=$1 kver=$2 kdir dst=$out/cross-$1 karch cross

	case $arch in
	arm64)	karch=arm64; cross=aarch64-linux-gnu- ;;
	s390x)	karch=s390; cross=s390x-linux-gnu- ;;
	esac
	kdir=$("$root/scripts/fetch-headers.sh" "$arch" "$kver") || return 1
	rm -rf "$dst"
	cp -r "$chr/usr/src/sframe-unwind-$version" "$dst"
	if make -s -C "$kdir" M="$dst" ARCH="$karch" CROSS_COMPILE="$cross" \
		modules > "$dst/build.log" 2>&1 &&
	   ! grep -q 'warning:' "$dst/build.log" &&
	   [ -f "$dst/sframe_unwind.ko" ]; then
		return 0
	fi
	sed 's/^/#   /' "$dst/build.log"
	return 1
}

# guest REL KVER: the module DKMS built for REL passes the selftests in
# the guest of KVER (run.sh's name for that kernel); as in make check, a
# stall report without a frame of the module is only a warning.
guest() {
	local ko

	ko=$(dkms_ko "$1") || return 1
	case $ko in
	*.xz)	xz -dc "$ko" > "$out/sframe_unwind.ko" ;;
	*)	cp "$ko" "$out/sframe_unwind.ko" ;;
	esac
	"$root/tools/testing/qemu/run.sh" x86_64 "$2" --out "$out/qemu-$suite" \
		--module "$out/sframe_unwind.ko" --tests "$guest_tests" \
		--stalls-ok > "$out/guest.log" 2>&1
	local rc=$?

	sed 's/^/#   /' "$out/guest.log" | grep -E '^#   (not )?ok|passed'
	return $rc
}

purged() {
	in_chroot apt-get purge -y sframe-unwind-dkms sframe-unwind-tools \
		> "$out/purge.log" 2>&1 || return 1
	! ls "$chr"/lib/modules/*/updates/dkms/sframe_unwind.ko 2> /dev/null &&
		[ ! -e "$chr/usr/src/sframe-unwind-$version" ] &&
		[ -z "$(in_chroot dkms status -m sframe-unwind)" ]
}

# from_source TARGET REL: the source path without packages.
from_source() {
	local target=$1 rel=$2

	[ -d "$chr/tmp/src" ] || copy_tree "$chr/tmp/src"
	in_chroot make -C /tmp/src "$target" DKMS_KERNELS="$rel" \
		> "$out/$target.log" 2>&1 ||
		{ sed 's/^/#   /' "$out/$target.log"; return 1; }
	case $target in
	dkms-install)	dkms_ko "$rel" > /dev/null ;;
	dkms-remove)	! dkms_ko "$rel" > /dev/null &&
			[ ! -e "$chr/usr/src/sframe-unwind-$version" ] ;;
	esac
}

check_all() {
	local base abi pv

	echo "TAP version 13"
	tap_check "make deb builds both packages" eval '(build > /dev/null) && debs_built'
	if ! debs_built; then
		finish
	fi
	tap_check "lintian: no errors or warnings" lintian_clean
	tap_check "sframe-unwind-tools holds the tools, manual pages and unit" \
		deb_has "$out/sframe-unwind-tools_${version}_$(dpkg --print-architecture).deb" \
		/usr/sbin/sframectl /usr/bin/sframe-gen /usr/bin/sframe-dump \
		/usr/share/man/man8/sframectl.8.gz /lib/systemd/system/sframectl.service \
		/lib/systemd/system/sframectl-warm.service
	tap_check "sframe-unwind-tools has file triggers on /usr/bin and /usr/lib" \
		deb_triggers "$out/sframe-unwind-tools_${version}_$(dpkg --print-architecture).deb"
	tap_check "sframe-unwind-dkms holds the source, dkms.conf and load config" \
		deb_has "$out/sframe-unwind-dkms_${version}_all.deb" \
		"/usr/src/sframe-unwind-$version/Kbuild" \
		"/usr/src/sframe-unwind-$version/dkms.conf" \
		"/usr/src/sframe-unwind-$version/kernel/main.c" \
		"/usr/src/sframe-unwind-$version/lib/sframe/sources.mk" \
		/usr/lib/modules-load.d/sframe-unwind.conf \
		/etc/modprobe.d/sframe-unwind.conf
	tap_check "dkms.conf in the package says version $version" packed_version_ok
	if [ "$(id -u)" -ne 0 ]; then
		echo "# SKIP the chroot, DKMS and guest checks: they need root"
		finish
	fi
	check_suite bookworm
	check_suite trixie
	finish
}

# check_suite SUITE: install, DKMS, guest and purge in a SUITE chroot.
check_suite() {
	local base abi pv kvers=kvers_$1

	suite=$1
	base=$(base_chroot)
	if [ -z "$base" ]; then
		tap_check "a Debian $suite chroot with dkms and headers" false
		return
	fi
	chr=$out/chroot
	remove_chroot || finish
	cp -a "$base" "$chr"
	trap umount_chroot EXIT
	mount_chroot || { tap_check "mount /proc in the chroot" false; finish; }
	tap_check "apt-get install of both packages in a $suite chroot" install_debs
	while read -r abi pv; do
		tap_check "$suite: DKMS built and installed the module for $abi ($pv)" \
			dkms_built "$abi"
	done < "$base/.complete"
	tap_check "$suite: the tools run in the chroot" tools_work
	tap_check "$suite: manual pages, units, modules-load.d and modprobe.d installed" \
		installed_files
	tap_check "$suite: a change under /usr/lib runs sframe-unwind-tools' trigger" \
		trigger_runs
	if [ "$suite" = bookworm ]; then
		tap_check "the packaged source builds for arm64 6.12" \
			cross_build arm64 6.12
		tap_check "the packaged source builds for s390x 6.1" \
			cross_build s390x 6.1
	fi
	abi=$(head -1 "$base/.complete" | cut -d' ' -f1)
	# shellcheck disable=SC2086 # a list
	set -- ${!kvers}
	tap_check "$suite: the module DKMS built passes the selftests in the $1 guest ($abi)" \
		guest "$abi-amd64" "$1"
	tap_check "$suite: apt-get purge removes the module and the source" purged
	if [ "$suite" = bookworm ]; then
		tap_check "make dkms-install from the tree, in the chroot" \
			from_source dkms-install "$abi-amd64"
		tap_check "make dkms-remove from the tree, in the chroot" \
			from_source dkms-remove "$abi-amd64"
	fi
	umount_chroot
	remove_chroot
	trap - EXIT
}

case ${1:-} in
build)	build ;;
check)	check_all ;;
*)	die "usage: deb.sh build|check" ;;
esac
