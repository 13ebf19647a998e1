#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - boot a stock Debian kernel in QEMU and run the selftests in it
#
# Usage: scripts/qemu/run.sh ARCH KVER [options]
#   ARCH     x86_64 | arm64 | s390x
#   KVER     Debian 12: 6.12 | 6.1 | 6.12-rt (PREEMPT_RT, x86_64 only);
#            Debian 13: 6.12-deb13 | 7 (the newest 7.x) | 7.3 | 7.2 | ...
#            and 7-rt, 7.3-rt, ... (PREEMPT_RT), as scripts/fetch-headers.sh
#            takes them; debug (the KUnit debug kernel, x86_64 only)
#   --tests "T1 T2"   selftests to run, in order (default: the standard list)
#   --skip "T1 T2"    leave these out of the list
#   --timeout SEC     outer timeout for the whole guest (default 2400 s,
#                     4800 s for arm64 and s390x)
#   --hang            make the guest hang after its tests (harness test)
#   --out DIR         work and log directory (default build/qemu/ARCH-KVER)
#   --extra DIR       copy DIR's contents to /extra in the guest
#   --no-hostfs       do not share a root file system with perf at /host
#                     (x86-64: the host's own, or for Debian 13's kernels
#                     the Debian 13 root of scripts/debian-root.sh, whose
#                     perf knows deferred call chains; arm64, s390x: a
#                     Debian root of that architecture and of the
#                     kernel's release, scripts/qemu/fetch-rootfs.sh)
#   --module KO       test this sframe_unwind.ko (e.g. the one DKMS built)
#                     instead of building the tree's; its vermagic must
#                     name the guest's kernel
#   --stalls-ok       a soft-lockup or RCU-stall report whose backtrace
#                     has no frame of the module is a warning, not a
#                     failure (make bench: under TCG a busy host stalls
#                     the guest's page faults and timers)
#
# STRESS_SECONDS in the environment sets how long stress.sh's loops run
# (default 45; at least 20 for its three rmmod/insmod cycles),
# STRESS_HZ their sampling rate (4000) and STRESS_RMMOD_SECONDS the
# bound on each rmmod (30); they are passed to the guest, as are the
# benchmarks' BENCH_ROUNDS, BENCH_EXEC, BENCH_DLOPEN, BENCH_WALK_SECONDS
# and BENCH_WALK_HZ (e.g. BENCH_ROUNDS=11 make bench).
#
# The module and the test programs are built for ARCH against the kernel's
# own headers, packed with a static busybox into an initramfs, and run by
# the guest's /init.  The verdict comes from a separate channel (ttyS1 on
# x86-64, a virtio console elsewhere), never from the console.  A run fails
# if a test fails, if the kernel logs a warning, oops, BUG or sanitizer
# report, or if the guest does not finish within the timeout; the console
# log is kept in the output directory and its tail printed.
#
# Prints the guest's TAP and a closing "N passed, N failed" line.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/scripts/qemu
prog=qemu-run

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

[ $# -ge 2 ] || die "usage: run.sh ARCH KVER [options]"
arch=$1
kver=$2
shift 2
tests="module_load.sh modinfo.sh decode_agree registry_exec.sh registry_fork.sh
registry_corrupt.sh registry_dlopen registry_jit registry_failnth
registry_unload.sh registry_filecache.sh ioctl_fuzz
unwind_chain unwind_chain_gen unwind_fp_fallback.sh unwind_async
unwind_deferred unwind_signal unwind_budget unwind_unload_sleeper.sh
unwind_unload_blocked.sh
host_tools.sh
perf_callchain.sh ftrace_userstack.sh trace_events.sh sidecar_unwind.sh
perf_compat.sh sframectl.sh sframectl_trust.sh sframectl_daemon_trust.sh
bpf_ustack.sh qsort_libc.sh security_kernel.sh stress.sh"
skip=""
hostfs=""
[ "$kver" != debug ] && hostfs=1
hostroot=/
# The whole list (bpftrace alone takes minutes to start under TCG); a
# foreign architecture takes about twice as long.
timeout_s=2400
[ "$arch" = x86_64 ] || timeout_s=4800
hang=""
out=$root/build/qemu/$arch-$kver
extra=""
module=""
stalls_ok=""
while [ $# -gt 0 ]; do
	case $1 in
	--tests) tests=$2; shift 2 ;;
	--skip) skip=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--hang) hang=1; shift ;;
	--out) out=$2; shift 2 ;;
	--extra) extra=$2; shift 2 ;;
	--no-hostfs) hostfs=""; shift ;;
	--stalls-ok) stalls_ok=1; shift ;;
	--module) module=$(realpath "$2"); shift 2 ;;
	*) die "unknown option $1" ;;
	esac
done

for t in $skip; do
	tests=$(echo "$tests" | tr -s ' \n' '\n' | grep -vxF "$t" | tr '\n' ' ')
done

case $arch in
x86_64)	cross=""; qemu=qemu-system-x86_64 ;;
arm64)	cross=aarch64-linux-gnu-; qemu=qemu-system-aarch64 ;;
s390x)	cross=s390x-linux-gnu-; qemu=qemu-system-s390x ;;
*)	die "unknown arch $arch" ;;
esac

"$root/scripts/setup-host.sh" all
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sframe-unwind
if [ "$kver" = debug ]; then
	[ "$arch" = x86_64 ] || die "the debug kernel is booted on x86_64 only"
	kdir=$cache/kunit/build-x86_64
	kernel=$kdir/arch/x86/boot/bzImage
	[ -f "$kernel" ] || "$root/scripts/kunit.sh" x86_64 > /dev/null ||
		[ -f "$kernel" ] || die "no debug kernel: scripts/kunit.sh x86_64 failed"
	img=""
	rel=$(make -s -C "$kdir" kernelrelease 2> /dev/null)
	echo "# $prog: $arch debug kernel $rel (KUnit, KASAN, lockdep)"
else
	kdir=$("$root/scripts/fetch-headers.sh" "$arch" "$kver")
	img=$("$here/fetch-image.sh" "$arch" "$kver" "$kdir")
	kernel=$(ls "$img"/boot/vmlinu[xz]-* | head -1)
	rel=${kernel##*/vmlinu?-}
	suite=$(cat "${kdir%/usr/src/*}/.suite" 2> /dev/null || echo bookworm)
	echo "# $prog: $arch kernel $rel ($(cat "${kdir%/usr/src/*}/.complete"), Debian $suite)"
	if [ "$suite" != bookworm ] && [ "$arch" = x86_64 ] && [ -n "$hostfs" ]; then
		hostroot=$("$root/scripts/debian-root.sh") ||
			die "no Debian 13 root for the guest"
		echo "# $prog: /host is the Debian 13 root ($(sed -n 's/^linux-perf /perf /p' "$hostroot/.complete"))"
	fi
fi
busybox=$("$here/fetch-busybox.sh" "$arch" 2> /dev/null)
if [ -n "$hostfs" ] && [ "$arch" != x86_64 ]; then
	rootsuite=bookworm
	if [ "${suite:-bookworm}" != bookworm ]; then
		rootsuite=trixie
		hostroot=$("$here/fetch-rootfs.sh" "$arch" trixie) || {
			echo "# $prog: no Debian 13 $arch root (the mirror's"
			echo "# $prog: pool and index disagree?): Debian 12's"
			rootsuite=bookworm
		}
	fi
	[ "$rootsuite" = trixie ] ||
		hostroot=$("$here/fetch-rootfs.sh" "$arch" bookworm) || {
		echo "# $prog: no $arch root file system: the perf tests will skip"
		hostfs=""
	}
	[ -z "$hostfs" ] ||
		echo "# $prog: /host is a Debian $rootsuite root ($(sed 's/^/perf /' "$hostroot/.complete"))"
fi
ksft=$("$root/scripts/fetch-ksft.sh")

rm -rf "$out"
mkdir -p "$out/mod" "$out/testmod" "$out/root"

# --- the module and the test modules, built against the kernel's headers
build_module() {
	local src=$1 dst=$2

	cp -r "$src"/. "$dst"/
	"$root/scripts/kbuild.sh" "$arch" "$kdir" "$dst" -s modules \
		> "$dst/build.log" 2>&1 ||
		{ cat "$dst/build.log" >&2; die "module build failed"; }
	if grep -v '^kbuild.sh: ' "$dst/build.log" | grep -q 'warning:'; then
		cat "$dst/build.log" >&2
		die "module build has warnings"
	fi
}
if [ -n "$module" ]; then
	[ "$(modinfo -F vermagic "$module" | cut -d' ' -f1)" = "$rel" ] ||
		die "$module was not built for $rel"
	cp "$module" "$out/mod/sframe_unwind.ko"
	echo "# $prog: module $module"
else
	rm -rf "$out/mod/src"
	make -s --no-print-directory -C "$root" module-src \
		MODULE_SRC="$out/mod/src" || die "cannot copy the module's source"
	build_module "$out/mod/src" "$out/mod"
fi
build_module "$root/selftests/modules" "$out/testmod"

# --- guest user space
r=$out/root
mkdir -p "$r"/{bin,sbin,etc,proc,sys,dev,tmp,corpus,selftests} \
	 "$r"/lib/test-modules "$r"/lib/guest-modules
cp "$busybox" "$r/bin/busybox"
for a in sh ash mount umount insmod rmmod lsmod modinfo cat echo grep sed \
	 awk dmesg poweroff sleep tee ls mkdir sync uname wc head tail cut \
	 tr find xargs test [ printf seq expr rm cp chroot timeout kill id \
	 sort uniq diff cmp od true false env basename dirname mknod mv; do
	ln -sf busybox "$r/bin/$a"
done
install -m 755 "$here/guest-init" "$r/init"
cp "$out"/mod/sframe_unwind.ko "$out"/testmod/*.ko "$r/lib/test-modules/"

cc=${cross}gcc
cflags="-O2 -static -Wall -Werror -I$ksft"
# The SFrame library (lib/sframe/sources.mk), decoder and encoder.
decoder_srcs=$(make -s --no-print-directory -C "$root" sframe-srcs) ||
	die "cannot list the SFrame library's sources"
decoder_srcs=$(printf '%s\n' $decoder_srcs | sed "s|^|$root/|")

# Compile $1 to the object $2 (further arguments: flags) with an SFrame
# section: gas's --gsframe where gas has it, else (s390x) a section written
# by selftests/registry/s390x-sframe.sh into the compiler's assembly.
sframe_cc() {
	local src=$1 obj=$2

	shift 2
	if [ "$arch" != s390x ]; then
		"$cc" "$@" -Wa,--gsframe -c -o "$obj" "$src"
		return
	fi
	"$cc" "$@" -S -o "$obj.s" "$src"
	"$cc" -c -o "$obj" "$obj.s"
	"$root/selftests/registry/s390x-sframe.sh" "${cross}nm" "$obj" \
		>> "$obj.s"
	"$cc" -c -o "$obj" "$obj.s"
}

# Link with $cc; ld 2.40 reports every s390x .sframe input it does not
# merge ("error in X(.sframe); no .sframe will be created") yet copies it
# as it is, so that line is dropped.  The output must have PT_GNU_SFRAME
# unless its name says "plain".
sframe_link() {
	local outf=$1 log=$out/registry/ld.log

	shift
	"$cc" -o "$outf" "$@" 2> "$log" ||
		{ cat "$log" >&2; die "linking $outf failed"; }
	grep -v 'no \.sframe will be created' "$log" >&2 || true
	case $outf in
	*plain*) ! readelf -lW "$outf" | grep -q GNU_SFRAME ||
		die "$outf has PT_GNU_SFRAME" ;;
	*)	readelf -lW "$outf" | grep -q GNU_SFRAME ||
		die "$outf has no PT_GNU_SFRAME" ;;
	esac
}

# The registry selftests' programs (selftests/registry/): dynamic programs
# and libraries with SFrame in /selftests/bin and /selftests/lib, copies
# with corrupt sections, and the C library they run on.
build_registry_tests() {
	local reg=$root/selftests/registry b=$out/registry
	local gbin=$r/selftests/bin glib=$r/selftests/lib
	local rflags="-O2 -fomit-frame-pointer -Wall -Werror -I$reg"
	local cflags_ioc="-I$ksft -I$root/include/uapi"
	local l k interp sysroot f

	mkdir -p "$b" "$gbin" "$glib"
	install -m 644 "$reg/lib.sh" "$r/selftests/registry_lib.sh"
	install -m 644 "$root/scripts/tests/tap.sh" "$r/selftests/tap.sh"
	install -m 644 "$root/selftests/lib.sh" "$r/selftests/lib.sh"
	# shellcheck disable=SC2086
	{
	sframe_cc "$reg/lib.c" "$b/lib.o" $rflags -fPIC
	for l in a b c d; do
		sframe_link "$glib/libsfu_$l.so" -shared -Wl,-Bsymbolic \
			-Wl,-soname,"libsfu_$l.so" "$b/lib.o"
	done
	sframe_link "$glib/libsfu_plain.so" $rflags -fPIC -shared \
		-Wl,-soname,libsfu_plain.so "$reg/lib.c"
	"$cc" $rflags -c -o "$b/util.o" "$reg/util.c"
	sframe_cc "$reg/prog.c" "$b/prog.o" $rflags
	sframe_link "$gbin/sfu_prog" "$b/prog.o" "$b/util.o" -L"$glib" \
		-lsfu_a -Wl,-rpath,/selftests/lib
	sframe_link "$gbin/sfu_prog2" "$b/prog.o" "$b/util.o" -L"$glib" \
		-lsfu_c -Wl,-rpath,/selftests/lib
	sframe_cc "$root/selftests/registry_dlopen.c" "$b/dlopen.o" \
		$rflags $cflags_ioc
	sframe_link "$r/selftests/registry_dlopen" "$b/dlopen.o" \
		$rflags $cflags_ioc -pthread "$reg/util.c" "$reg/enc.c" \
		$decoder_srcs
	sframe_cc "$root/selftests/registry_jit.c" "$b/jit.o" \
		$rflags $cflags_ioc
	sframe_link "$r/selftests/registry_jit" "$b/jit.o" -static \
		$rflags $cflags_ioc "$reg/util.c" "$reg/enc.c" $decoder_srcs
	"$cc" $rflags $cflags_ioc -static -o "$r/selftests/registry_failnth" \
		"$root/selftests/registry_failnth.c" "$reg/util.c" \
		"$reg/enc.c" $decoder_srcs
	# The device side of security_kernel.sh: dynamic, as it dlopens.
	"$cc" $rflags $cflags_ioc -o "$gbin/sfu_security" "$reg/security.c" \
		"$reg/util.c" "$reg/enc.c" $decoder_srcs
	# The ioctl fuzzer: without SFrame of its own, so that nothing of
	# its main process is registered and the counters it compares stay
	# its baseline.
	"$cc" $rflags $cflags_ioc -static -pthread \
		-o "$r/selftests/ioctl_fuzz" "$root/selftests/ioctl_fuzz.c" \
		"$reg/util.c" "$reg/enc.c" $decoder_srcs
	}

	# Corrupt copies, made by a host tool.
	gcc -O2 -Wall -Werror -o "$b/corrupt-sframe" "$reg/corrupt.c"
	for k in magic nfdes fdeoff freoff frefde trunc; do
		"$b/corrupt-sframe" "$k" "$gbin/sfu_prog" "$gbin/sfu_bad_$k"
	done
	"$b/corrupt-sframe" nfdes "$glib/libsfu_d.so" \
		"$glib/libsfu_bad_nfdes.so"

	# The dynamic loader where PT_INTERP says, libc.so.6 in /lib, which
	# every loader searches; nothing else may be needed.
	interp=$(readelf -lW "$gbin/sfu_prog" |
		 sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
	[ -n "$interp" ] || die "sfu_prog has no PT_INTERP"
	case $arch in
	x86_64)	sysroot=/lib/x86_64-linux-gnu ;;
	*)	sysroot=/usr/${cross%-}/lib ;;
	esac
	mkdir -p "$r$(dirname "$interp")"
	cp -L "$sysroot/$(basename "$interp")" "$r$interp"
	cp -L "$sysroot/libc.so.6" "$r/lib/libc.so.6"
	for f in "$gbin"/sfu_prog* "$gbin/sfu_security" "$glib"/*.so \
		 "$r/selftests/registry_dlopen"; do
		readelf -dW "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' |
			grep -vxE 'libc\.so\.6|libsfu_[a-z]+\.so|ld-linux.*' |
			sed "s|^|$f needs |" | grep . >&2 &&
			die "a registry test program needs a library the guest lacks"
	done
	return 0
}
# Compile $1 to the object $2 (further arguments: flags) with SFrame rows
# for every instruction, as the unwinder tests need: gas's --gsframe, or on
# s390x the compiler's CFI turned into rows by
# selftests/unwind/s390x-sframe-cfi.sh (the registry tests' section has
# one row per function, the rule at entry, which cannot unwind a frame
# stopped anywhere else).
unwind_cc() {
	local src=$1 obj=$2

	shift 2
	if [ "$arch" != s390x ]; then
		"$cc" "$@" -Wa,--gsframe -c -o "$obj" "$src"
		return
	fi
	"$cc" "$@" -S -o "$obj.s" "$src"
	"$root/selftests/unwind/s390x-sframe-cfi.sh" "$obj.s" "$obj.sframe.s"
	"$cc" -c -o "$obj" "$obj.sframe.s"
}

# Copy the ELF file $1 to $2 with the V3 .sframe that scripts/sframe-gen
# derives from its .eh_frame, in a new PT_LOAD covered by PT_GNU_SFRAME;
# the segment must start with the section, whose header says version 3.
gen_embed() {
	local in=$1 outf=$2 sfaddr hdr

	"$root/scripts/sframe-gen" --embed "$outf" "$in" ||
		die "sframe-gen --embed $in failed"
	sfaddr=$(readelf -lW "$outf" | awk '$1 == "GNU_SFRAME" { print $3 }')
	[ -n "$sfaddr" ] || die "$outf has no PT_GNU_SFRAME"
	hdr=$(readelf -x .sframe "$outf" | awk '$1 ~ /^0x/ && !n++ {
		print $1, substr($2, 1, 6) }')
	case $hdr in
	"$(printf '0x%08x' "$sfaddr") "e2de03|\
	"$(printf '0x%08x' "$sfaddr") "dee203) ;;
	*) die "$outf: .sframe at $sfaddr starts \"$hdr\", not a V3 header" ;;
	esac
}

# The unwinder selftests' programs (selftests/unwind/): dynamic, -rdynamic
# so that they can name their own frames with dladdr(), -O2
# -fomit-frame-pointer with SFrame, the call chain through libsfu_uw.so;
# the chain again without SFrame, with frame pointers (s390x: the back
# chain, its fallback) and with neither, programs and library alike; and
# once more built without SFrame (the DRAP function as it is), then given
# V3 sections by scripts/sframe-gen --embed: unwind_chain_gen on
# libsfu_uw_gen.so, built with -DUW_SFRAME_GEN.
build_unwind_tests() {
	local src=$root/selftests/unwind b=$out/unwind
	local gbin=$r/selftests/unwind glib=$r/selftests/lib
	local wflags="-Wall -Werror -I$src -I$ksft"
	local uflags="-O2 -fomit-frame-pointer $wflags"
	local fpflags="-O2 -fno-omit-frame-pointer $wflags"
	local gen=$b/gen-plain
	local t v vflags f

	[ "$arch" = s390x ] && fpflags="-O2 -mbackchain $wflags"
	make -s -C "$root" scripts/sframe-gen
	mkdir -p "$b" "$gbin" "$glib"
	# shellcheck disable=SC2086
	{
	unwind_cc "$src/lib.c" "$b/lib.o" $uflags -fPIC
	sframe_link "$glib/libsfu_uw.so" -shared -Wl,-soname,libsfu_uw.so \
		"$b/lib.o"
	for t in util chain async signal deferred qsort; do
		unwind_cc "$src/$t.c" "$b/$t.o" $uflags
	done
	# Through the system's C library (selftests/qsort_libc.sh).
	sframe_link "$r/selftests/unwind_qsort" -rdynamic "$b/qsort.o" \
		"$b/util.o"
	sframe_link "$r/selftests/unwind_chain" -rdynamic "$b/chain.o" \
		"$b/util.o" -L"$glib" -lsfu_uw -Wl,-rpath,/selftests/lib
	for t in async signal deferred; do
		sframe_link "$r/selftests/unwind_$t" -rdynamic -pthread \
			"$b/$t.o" "$b/util.o"
	done
	for v in fp nofp; do
		vflags=$fpflags
		[ "$v" = nofp ] && vflags=$uflags
		sframe_link "$glib/libsfu_uw_plain_$v.so" $vflags -fPIC -shared \
			-Wl,-soname,"libsfu_uw_plain_$v.so" "$src/lib.c"
		sframe_link "$gbin/chain_plain_$v" $vflags -rdynamic \
			"$src/chain.c" "$src/util.c" -L"$glib" \
			-lsfu_uw_plain_"$v" -Wl,-rpath,/selftests/lib
	done
	# A parent held in vfork (selftests/unwind_unload_blocked.sh).
	"$cc" $uflags -o "$r/selftests/unwind_vfork_hold" "$src/vfork_hold.c"
	# Walk cost: a plain program, its sections are made at run time.
	"$cc" $uflags -o "$r/selftests/unwind_budget" "$src/budget.c" \
		"$src/util.c" "$root/kunit/sframe_test_sections.c" \
		$decoder_srcs
	mkdir -p "$gen"
	"$cc" $uflags -fPIC -c -o "$gen/lib.o" "$src/lib.c"
	for t in chain util; do
		"$cc" $uflags -DUW_SFRAME_GEN -c -o "$gen/$t.o" "$src/$t.c"
	done
	sframe_link "$gen/libsfu_uw_gen.so" -shared \
		-Wl,-soname,libsfu_uw_gen.so "$gen/lib.o"
	sframe_link "$gen/unwind_chain_gen" -rdynamic "$gen/chain.o" \
		"$gen/util.o" -L"$gen" -lsfu_uw_gen -Wl,-rpath,/selftests/lib
	}
	gen_embed "$gen/libsfu_uw_gen.so" "$glib/libsfu_uw_gen.so"
	gen_embed "$gen/unwind_chain_gen" "$r/selftests/unwind_chain_gen"
	for f in "$r"/selftests/unwind_* "$gbin"/* "$glib"/libsfu_uw*.so; do
		if [ ! -x "$f" ] || [ "${f%.sh}" != "$f" ]; then
			continue
		fi
		readelf -dW "$f" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' |
			grep -vxE 'libc\.so\.6|libsfu_uw[a-z_]*\.so|ld-linux.*' |
			sed "s|^|$f needs |" | grep . >&2 &&
			die "an unwinder test program needs a library the guest lacks"
	done
	return 0
}
# The profiler selftests' programs (selftests/perf/): sfu_chain, -O2
# -fomit-frame-pointer with SFrame and not position independent, with its
# symbol table (nm -S) for the guest to name frames by; sfu_hook, static,
# for the trace events; and sidecar_unwind with three copies of a library
# built without SFrame, the V3 and V2 sections sframe-gen derives from its .eh_frame,
# and the address they are generated for: the page after its segments.
# sidecar_sections LIB VERSION...: LIB.sframeN for the page after LIB's
# segments, and that address in LIB.vaddr.
sidecar_sections() {
	local lib=$1 vaddr=0 va memsz v

	shift
	while read -r va memsz; do
		if [ $((va + memsz)) -gt "$vaddr" ]; then
			vaddr=$((va + memsz))
		fi
	done < <(readelf -lW "$lib" | awk '$1 == "LOAD" { print $3, $6 }')
	vaddr=$(printf '0x%x' $(((vaddr + 4095) & ~4095)))
	echo "$vaddr" > "$lib.vaddr"
	for v in "$@"; do
		"$root/scripts/sframe-gen" --version="$v" --vaddr "$vaddr" \
			-o "$lib.sframe$v" "$lib" || die "sframe-gen $lib failed"
	done
}

# sframectl, run in the root at /host: the host's own build on x86-64,
# cross-built for the Debian root elsewhere.
install_sframectl() {
	local ctl=$root/scripts/sframectl

	[ -n "$hostfs" ] || return 0
	case $arch in
	x86_64)	make -s -C "$root" scripts/sframectl ;;
	*)	ctl=$root/build/cross-${cross%-linux-gnu-}/sframectl
		make -s -C "$root" "${ctl#"$root"/}" ;;
	esac
	mkdir -p "$r/selftests/bin"
	install -m 755 "$ctl" "$r/selftests/bin/sframectl"
	# No .eh_frame at all (x86-64's ld adds one for the PLT unless told).
	local noeh=()
	[ "$arch" = x86_64 ] && noeh=(-Wl,--no-ld-generated-unwind-info)
	"$cc" -O2 -Wall -Werror -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -nostartfiles "${noeh[@]}" \
		-o "$r/selftests/bin/sfu_noeh" "$root/selftests/sframectl/noeh.c"
	# A user's write lease on a file it maps (sframectl_daemon_trust.sh).
	"$cc" -O2 -Wall -Werror -o "$r/selftests/bin/sfu_lease" \
		"$root/selftests/sframectl/lease.c"
	# A user's FUSE file system that never answers root (the same).
	"$cc" -O2 -Wall -Werror -o "$r/selftests/bin/sfu_fuse" \
		"$root/selftests/sframectl/fuse.c"
}

# make bench's programs: exec, the same one with SFrame and without;
# walk_sframe (selftests/bench_walk.sh), with frame pointers and SFrame,
# so that the kernel's frame-pointer walk and the module's SFrame walk
# unwind the same stack.
build_bench() {
	local b=$out/bench g=$r/selftests/bench
	local bflags="-O2 -fomit-frame-pointer -Wall -Werror"
	local wflags="-O2 -fno-omit-frame-pointer -Wall -Werror"

	mkdir -p "$b" "$g"
	# shellcheck disable=SC2086
	{
	sframe_cc "$root/selftests/bench/exec.c" "$b/exec.o" $bflags
	sframe_link "$g/exec_sframe" "$b/exec.o" -ldl
	sframe_link "$g/exec_plain" $bflags "$root/selftests/bench/exec.c" -ldl
	sframe_cc "$root/selftests/bench/walk.c" "$b/walk.o" $wflags
	sframe_link "$g/walk_sframe" "$b/walk.o" -ldl
	}
}

# The stress test's loops (selftests/stress/): sfu_stress with SFrame,
# dynamic (it dlopens the registry tests' libraries), and the same
# program without SFrame, one of the programs it execs.
build_stress() {
	local b=$out/stress g=$r/selftests/stress
	local sflags="-O2 -fomit-frame-pointer -Wall -Werror -I$root/selftests/registry"

	mkdir -p "$b" "$g"
	# shellcheck disable=SC2086
	{
	sframe_cc "$root/selftests/stress/stress.c" "$b/stress.o" $sflags
	"$cc" $sflags -c -o "$b/util.o" "$root/selftests/registry/util.c"
	sframe_link "$g/sfu_stress" "$b/stress.o" "$b/util.o" -pthread -ldl
	sframe_link "$g/sfu_stress_plain" $sflags -pthread \
		"$root/selftests/stress/stress.c" "$b/util.o" -ldl
	}
}

# A 32-bit program with a registry, where the toolchain has -m32.
build_compat_test() {
	local g=$r/selftests/perf

	[ "$arch" = x86_64 ] || return 0
	# The asm/ headers are shared with x86-64 (gcc-multilib, which would
	# link them, conflicts with the cross compilers).
	# shellcheck disable=SC2086
	gcc -m32 -static -idirafter /usr/include/x86_64-linux-gnu -O1 -fno-omit-frame-pointer -Wall -Werror \
		-o "$g/sfu_compat" "$root/selftests/perf/compat.c" \
		$decoder_srcs 2> "$out/perf/compat.log" ||
		echo "$prog: no -m32 toolchain: perf_compat will skip" >&2
	# The ioctl fuzzer's 32-bit run (compat_ioctl).
	# shellcheck disable=SC2086
	gcc -m32 -static -idirafter /usr/include/x86_64-linux-gnu -O2 -Wall \
		-Werror -pthread -I"$ksft" -I"$root/include/uapi" \
		-o "$r/selftests/ioctl_fuzz32" "$root/selftests/ioctl_fuzz.c" \
		"$root/selftests/registry/util.c" \
		"$root/selftests/registry/enc.c" $decoder_srcs \
		2> "$out/registry/fuzz32.log" ||
		echo "$prog: no -m32 toolchain: ioctl_fuzz will skip its 32-bit run" >&2
}

build_perf_tests() {
	local src=$root/selftests/perf b=$out/perf g=$r/selftests/perf
	local pflags="-O2 -fomit-frame-pointer -Wall -Werror -I$src -I$ksft"
	local lib

	mkdir -p "$b" "$g"
	install -m 644 "$src/lib.sh" "$g/lib.sh"
	# shellcheck disable=SC2086
	{
	unwind_cc "$src/chain.c" "$b/chain.o" $pflags
	sframe_link "$g/sfu_chain" -no-pie "$b/chain.o"
	"${cross}nm" -S --defined-only "$g/sfu_chain" | awk 'NF == 4' \
		> "$g/sfu_chain.syms"
	if [ "$arch" = arm64 ]; then
		unwind_cc "$src/chain.c" "$b/chain_pac.o" $pflags \
			-mbranch-protection=standard
		sframe_link "$g/sfu_chain_pac" -no-pie "$b/chain_pac.o"
		"${cross}nm" -S --defined-only "$g/sfu_chain_pac" |
			awk 'NF == 4' > "$g/sfu_chain_pac.syms"
	fi
	sframe_cc "$src/hook.c" "$b/hook.o" $pflags
	sframe_link "$g/sfu_hook" -static "$b/hook.o"
	make -s -C "$root" scripts/sframe-gen
	lib=$g/libsfu_sc_plain.so
	sframe_link "$lib" $pflags -fPIC -shared \
		-Wl,-soname,libsfu_sc_plain.so "$src/sclib.c"
	cp "$lib" "$g/libsfu_sc_plain_v2.so"
	cp "$lib" "$g/libsfu_sc_plain_none.so"
	sidecar_sections "$lib" 3 2
	sframe_link "$g/libsfu_sc_plain_noid.so" $pflags -fPIC -shared \
		-Wl,--build-id=none -Wl,-soname,libsfu_sc_plain_noid.so \
		"$src/sclib.c"
	! readelf -nW "$g/libsfu_sc_plain_noid.so" | grep -q NT_GNU_BUILD_ID ||
		die "libsfu_sc_plain_noid.so has a build-id"
	sidecar_sections "$g/libsfu_sc_plain_noid.so" 3
	# Exact rules on every architecture (s390x: from the CFI), as the
	# walks must get from the callback through the library to main.
	unwind_cc "$src/sidecar.c" "$b/sidecar.o" $pflags \
		-I"$root/include/uapi"
	sframe_link "$g/sidecar_unwind" -rdynamic "$b/sidecar.o"
	}
}
"$cc" $cflags -o "$r/selftests/decode_agree" "$root/selftests/decode_agree.c" \
	"$root/scripts/elf-sframe.c" "$root/kunit/sframe_test_sections.c" \
	$decoder_srcs
build_registry_tests
build_unwind_tests
build_perf_tests
build_compat_test
build_bench
build_stress
install_sframectl
install -m 755 "$root/selftests/run.sh" "$r/selftests/run.sh"
[ -n "$extra" ] && cp -r "$extra" "$r/extra"
for t in $tests; do
	case $t in
	*.sh) install -m 755 "$root/selftests/$t" "$r/selftests/$t" ;;
	esac
	case $t in
	# Perf runs of Debian's python3, perl, gzip and bash, sidecars made
	# under TCG.
	sframectl.sh) echo "$t 900" ;;
	# Four daemon starts (each syncs) and waits of up to 40 s, under TCG.
	sframectl_daemon_trust.sh) echo "$t 600" ;;
	# Ten of Debian's programs parsed cold, then five rounds of module
	# loads, each followed by the daemon's sync (Debian 13's larger
	# programs on 7.x took more than the default 120 s).
	bench_daemon.sh) echo "$t 600" ;;
	# Four syncs and a daemon's, sections of xz and libc made under TCG.
	sframectl_trust.sh) echo "$t 900" ;;
	# Up to eight perf runs and a dump of each, under TCG elsewhere.
	perf_callchain.sh) echo "$t 600" ;;
	# Four bpftrace runs of a few seconds, each of which takes one to
	# two minutes to start under TCG, and a sframectl sync.
	bpf_ustack.sh) echo "$t 1500" ;;
	# Hundreds of module loads under fault injection, debug kernel.
	registry_failnth) echo "$t 600" ;;
	demo.sh) echo "$t 600" ;;
	# Twenty-seven timed perf recordings and three with dwarf stacks,
	# each dumped raw, under TCG: 12 minutes on 6.12 with Debian 12's
	# perf, 45 s a recording (about 25 minutes) on 7.3 with Debian 13's.
	bench_walk.sh) echo "$t 3600" ;;
	# Per round about 10 s of exec and dlopen loops in each state.
	bench_exec.sh) echo "$t $((${BENCH_ROUNDS:-5} * 30 + 60))" ;;
	# STRESS_SECONDS of load, then the wait for every loop.
	stress.sh) echo "$t $((${STRESS_SECONDS:-45} * 2 + 330))" ;;
	*) echo "$t" ;;
	esac
done > "$r/selftests/list"
for v in STRESS_SECONDS STRESS_HZ STRESS_RMMOD_SECONDS; do
	[ -z "${!v:-}" ] || echo "$v=${!v}"
done > "$r/selftests/stress.env"
for v in BENCH_ROUNDS BENCH_EXEC BENCH_DLOPEN BENCH_WALK_SECONDS \
	BENCH_WALK_HZ; do
	[ -z "${!v:-}" ] || echo "$v=${!v}"
done > "$r/selftests/bench.env"

# Corpus programs with gas's SFrame, where this architecture has a producer.
if [ "$arch" != s390x ]; then
	for opt in "-O2 -fomit-frame-pointer" "-O2 -fno-omit-frame-pointer"; do
		# shellcheck disable=SC2086
		"$cc" $opt -static -Wa,--gsframe \
			-o "$r/corpus/corpus$(echo "$opt" | tr -d ' =')" \
			"$root/scripts/tests/corpus-src.c"
	done
fi

# Modules the guest itself needs (the result channel on s390x, swap).
: > "$r/etc/guest-modules"
guest_module() {
	local name=$1 dep f
	local dir=$img/lib/modules/$rel

	[ -n "$img" ] || return 0
	dep=$(grep -E "(^|/)$name\.ko(\.xz)?:" "$dir/modules.dep" || true)
	[ -n "$dep" ] || return 0
	for f in $(echo "${dep#*:}" | tr ' ' '\n' | tac) "${dep%%:*}"; do
		[ -n "$f" ] || continue
		grep -qx "$(basename "${f%.xz}")" "$r/etc/guest-modules" &&
			continue
		xz -dc "$dir/$f" > "$r/lib/guest-modules/$(basename "${f%.xz}")" \
			2> /dev/null ||
			cp "$dir/$f" "$r/lib/guest-modules/$(basename "$f")"
		basename "${f%.xz}" >> "$r/etc/guest-modules"
	done
}

case $arch in
x86_64)	echo /dev/ttyS1 > "$r/etc/result-dev" ;;
*)	echo /dev/hvc0 > "$r/etc/result-dev" ;;
esac
[ "$arch" = s390x ] && guest_module virtio_console
guest_module zram		# swap, for perf_callchain.sh's paged-out stack
guest_module fuse		# a user's file system, sframectl_daemon_trust.sh
if [ -n "$hostfs" ]; then
	guest_module virtio_pci		# a module on 6.1, built in on 6.12
	guest_module 9p
	guest_module 9pnet_virtio
	touch "$r/etc/hostfs"
fi

(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.gz"

# --- boot
append="panic=-1 panic_on_warn=1 oops=panic rdinit=/init loglevel=7"
[ -n "$hang" ] && append="$append sfu_hang_after"
console=$out/console.log
result=$out/result.log
: > "$result"
common=(-m 1024 -nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$out/initrd.gz")
case $arch in
x86_64)
	args=(-M pc -serial "file:$console" -serial "file:$result"
	      -append "console=ttyS0 $append")
	;;
arm64)
	args=(-M virt -serial "file:$console"
	      -device virtio-serial-pci
	      -chardev "file,id=res,path=$result"
	      -device virtconsole,chardev=res
	      -append "console=ttyAMA0 $append") ;;
s390x)
	args=(-M s390-ccw-virtio
	      -chardev "file,id=con,path=$console"
	      -device sclpconsole,chardev=con
	      -device virtio-serial-ccw
	      -chardev "file,id=res,path=$result"
	      -device virtconsole,chardev=res
	      -append "console=ttysclp0 $append") ;;
esac
[ -n "$hostfs" ] && args+=(-virtfs
	"local,path=$hostroot,mount_tag=hostroot,security_model=none,readonly=on")

# KVM only where a probe boot of this very kernel gets to the end of init;
# the result is remembered per host kernel, QEMU and guest kernel.
accel=(-accel tcg -cpu max)
# arm64 kernels sign and check the return address of most functions; TCG's
# default QARMA5 signing costs about a microsecond per call, QEMU's own
# algorithm (pauth-impdef) tens of nanoseconds, as signing costs little on
# hardware.  Guests run about three times faster with it.
[ "$arch" = arm64 ] && accel=(-accel tcg -cpu max,pauth-impdef=on)
kvm_probe() {
	local key stamp probe_res=$out/probe.log

	[ "$arch" = x86_64 ] && [ -w /dev/kvm ] || return 1
	key=$(echo "$(uname -r) $($qemu --version | head -1) $kernel" | md5sum)
	stamp=$cache/kvm-probe-${key%% *}
	if [ ! -f "$stamp" ]; then
		: > "$probe_res"
		(timeout 60 "$qemu" "${common[@]}" -accel kvm -cpu host \
			-serial null -serial "file:$probe_res" \
			-append "console=ttyS0 $append sfu_probe" \
			< /dev/null > /dev/null 2>&1) 2> /dev/null
		if grep -q '^# sframe-guest: done' "$probe_res"; then
			echo yes > "$stamp"
		else
			echo no > "$stamp"
		fi
	fi
	[ "$(cat "$stamp")" = yes ]
}
if kvm_probe; then
	accel=(-accel kvm -cpu host)
	echo "# $prog: KVM probe boot succeeded, using KVM"
else
	echo "# $prog: using TCG (no working KVM)"
fi

start=$(date +%s)
set +e
timeout --foreground "$timeout_s" "$qemu" "${common[@]}" "${accel[@]}" \
	"${args[@]}" \
	< /dev/null > "$out/qemu.log" 2>&1
qrc=$?
set -e
echo "# $prog: guest ran $(( $(date +%s) - start ))s (qemu exit $qrc)"

# --- verdict
cat "$result" | tr -d '\r' > "$out/tap.log"
grep -v '^# sframe-guest: done' "$out/tap.log" || true
pass=$(grep -cE '^ok [0-9]+' "$out/tap.log" || true)
fail=$(grep -cE '^not ok [0-9]+' "$out/tap.log" || true)
reason=""
if [ "$qrc" -eq 124 ]; then
	reason="guest hung: no power-off within ${timeout_s}s"
elif ! grep -q '^# sframe-guest: done' "$out/tap.log"; then
	reason="guest did not finish its tests (qemu exit $qrc)"
fi
kmsg_from=$console
if [ -n "$stalls_ok" ]; then
	kmsg_from=$out/console.nostalls
	awk -f "$root/scripts/qemu/stall-filter.awk" "$console" > "$kmsg_from"
fi
kmsg=$(grep -aE 'WARNING:|BUG:|Oops|Kernel panic|general protection|UBSAN:|KASAN:|new suspected memory leaks|Call Trace:' \
	"$kmsg_from" | head -3 || true)
if [ -n "$kmsg" ]; then
	reason="kernel reported a problem: $(echo "$kmsg" | head -1)"
fi
if [ -n "$reason" ]; then
	fail=$((fail + 1))
	echo "not ok $prog $arch $rel: $reason"
	echo "# console log: $console (last lines follow)"
	tail -25 "$console" | sed 's/^/#   /'
fi
echo "# $prog-$arch-$kver: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
