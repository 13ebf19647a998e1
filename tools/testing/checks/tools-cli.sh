#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every host tool answers --help (usage on stdout, exit 0), --version (the
# version of include/sframe/version.h, which modinfo shows too) and an
# unknown option (usage on stderr, exit 2), and its manual page
# (Documentation/man/) builds and names every option of the usage.
# sframe-gen --embed refuses a program whose PT_LOAD fields overflow when
# added or rounded up, with an error and without a crash (also with ASan).
# sframectl warm fills a cache without the module: the sections of the
# ELF files of a directory, once; a file with SFrame of its own counted
# apart; a path that is not there, or a cache that is not root's alone,
# fail.  sframectl symbolize names the frames of sframe_unwind_frames
# lines, as the kernel and as trace-cmd print them, in a program found by
# build-id and in one without a build-id found by device and inode, a
# return address looked up at its call; other lines pass unchanged.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
make -s -C "$root" all || exit 1
want=$(sed -n 's/^#define SFU_VERSION[[:space:]]*"\(.*\)"/\1/p' \
	"$root/include/sframe/version.h")
# shellcheck source=scripts/lib.sh
. "$root/scripts/lib.sh"
# shellcheck source=tools/testing/tap.sh
. "$root/tools/testing/tap.sh"

helps() {
	"$root/tools/$1/$1" --help 2> /dev/null | grep -q "^Usage: $1 "
}

versions() {
	[ "$("$root/tools/$1/$1" --version 2> /dev/null)" = \
	  "$1 (sframe-unwind) $want" ]
}

# Every option the usage names is in the tool's manual page, and the page
# builds without a docutils warning.
documented() {
	local rst=$root/Documentation/man/$1.rst opt missing=""

	make -s -C "$root" "build/man/$1.$2" || return 1
	for opt in $("$root/tools/$1/$1" --help |
		     grep -oE -- '(^|[[ |])--?[a-z][a-z0-9-]*' | tr -d '[ |' |
		     sort -u); do
		grep -qE -- "(^|[^a-z-])$opt([^a-z0-9-]|\$)" "$rst" ||
			missing="$missing $opt"
	done
	[ -z "$missing" ] || echo "# $1.rst does not document:$missing"
	[ -z "$missing" ]
}

refuses() {
	"$root/tools/$1/$1" --no-such-option > /dev/null 2>&1
	[ $? -eq 2 ]
}

echo "TAP version 13"
for t in sframe-dump:1 sframe-gen:1 sframectl:8; do
	sec=${t#*:}
	t=${t%:*}
	tap_check "$t --help prints its usage and exits 0" helps "$t"
	tap_check "$t --version prints $want" versions "$t"
	tap_check "$t with an unknown option exits 2" refuses "$t"
	tap_check "$t($sec) documents every option of its usage" documented "$t" "$sec"
done

# dump_memory SECTION: sframe-dump --memory lists the arrays the module
# keeps (its own check: they are what the module charges), each taken as
# at least what it asks, and a total that is their sum.
dump_memory() {
	"$root/tools/sframe-dump/sframe-dump" --memory "$1" > "$1.mem" || return 1
	sed 's/^/# /' "$1.mem"
	awk '/^#/ { next }
		$1 == "total" { total = $2; seen = 1; next }
		{ sum += $5; if ($6 < $5 || $5 != $2 * $4) bad = 1 }
		$1 == "table-starts" && $2 > 0 { rows = 1 }
		END { exit !(seen && !bad && rows && sum == total) }' "$1.mem"
}

# set_phdr ELF first|last FIELD VALUE: set a field of the first or the last
# PT_LOAD of a 64-bit ELF file; VALUE "top" makes the segment end at the
# last byte of the address space.
set_phdr() {
	python3 - "$@" << 'EOF'
import struct
import sys

path, which, field, value = sys.argv[1:5]
d = bytearray(open(path, 'rb').read())
en = '>' if d[5] == 2 else '<'
phoff, = struct.unpack_from(en + 'Q', d, 32)
size, num = struct.unpack_from(en + 'HH', d, 54)
loads = [phoff + i * size for i in range(num)
	 if struct.unpack_from(en + 'I', d, phoff + i * size)[0] == 1]
ph = loads[0 if which == 'first' else -1]
at = {'p_offset': 8, 'p_vaddr': 16, 'p_filesz': 32, 'p_memsz': 40,
      'p_align': 48}[field]
vaddr, = struct.unpack_from(en + 'Q', d, ph + 16)
v = (1 << 64) - 1 - vaddr if value == 'top' else int(value, 0)
struct.pack_into(en + 'Q', d, ph + at, v)
open(path, 'wb').write(d)
EOF
}

# embed_refuses GEN ELF: sframe-gen --embed exits 1..127 with its error
# message, no sanitizer report, and no copy.
embed_refuses() {
	local rc

	"$1" --embed "$2.emb" "$2" > "$2.out" 2>&1
	rc=$?
	sed 's/^/# /' "$2.out" | head -5
	[ "$rc" -gt 0 ] && [ "$rc" -lt 128 ] && [ ! -e "$2.emb" ] &&
		grep -q '^sframe-gen: ' "$2.out" &&
		! grep -qE 'AddressSanitizer|runtime error' "$2.out"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if "$root/tools/sframe-gen/sframe-gen" --share-rows -o "$tmp/own.sframe" \
	"$root/tools/sframe-gen/sframe-gen" 2> /dev/null; then
	tap_check "sframe-dump --memory lists what the module keeps" \
		dump_memory "$tmp/own.sframe"
else
	tap_check "sframe-gen makes a sidecar of itself" false
fi
asan=$root/build/sframe-gen-asan
i=0
if ! command -v python3 > /dev/null ||
   ! printf 'int main(void) { return 0; }\n' |
     cc -O1 -x c -o "$tmp/prog" - 2> /dev/null ||
   ! make -s -C "$root" build/sframe-gen-asan; then
	skip "sframe-gen --embed refuses overflowing PT_LOAD fields" \
		"needs cc, python3 and build/sframe-gen-asan"
else
	for t in "last p_memsz 0xfffffffffffff000:p_vaddr + p_memsz wraps" \
		 "first p_memsz top:the image's end rounded up to a page wraps" \
		 "last p_offset 0xfffffffffffff000:p_offset + p_filesz wraps" \
		 "last p_align 0x8000000000000000:p_align is 2^63"; do
		i=$((i + 1))
		cp "$tmp/prog" "$tmp/bad$i"
		# shellcheck disable=SC2086  # ELF, which, field, value
		set_phdr "$tmp/bad$i" ${t%%:*}
		cp "$tmp/bad$i" "$tmp/asan$i"
		tap_check "sframe-gen --embed refuses a PT_LOAD where ${t#*:}" \
			embed_refuses "$root/tools/sframe-gen/sframe-gen" "$tmp/bad$i"
		tap_check "sframe-gen --embed (ASan) refuses a PT_LOAD where ${t#*:}" \
			embed_refuses "$asan" "$tmp/asan$i"
	done
fi
# warm_says DIR PATTERN PATH...: sframectl warm into the cache DIR exits
# 0 and prints a summary that matches PATTERN.
warm_says() {
	local cache=$1 want=$2

	shift 2
	"$root/tools/sframectl/sframectl" warm --cache "$cache" "$@" > "$tmp/warm.out" 2>&1 ||
		{ sed 's/^/# /' "$tmp/warm.out"; return 1; }
	sed 's/^/# /' "$tmp/warm.out"
	grep -q "^warm: $want" "$tmp/warm.out"
}

# warm_fails ARGS...: sframectl warm exits 1 with a message.
warm_fails() {
	"$root/tools/sframectl/sframectl" warm "$@" > "$tmp/warm.out" 2>&1
	[ $? -eq 1 ] && grep -q '^sframectl: ' "$tmp/warm.out"
}

if [ "$(id -u)" -ne 0 ]; then
	skip "sframectl warm fills a cache" \
		"the cache must be root's: run as root"
else
	mkdir -p "$tmp/tree/sub" && mkdir -m 700 "$tmp/cache"
	cp "$root/tools/sframe-dump/sframe-dump" "$tmp/tree/"
	cp "$root/tools/sframe-gen/sframe-gen" "$tmp/tree/sub/"
	"$root/tools/sframe-gen/sframe-gen" --embed "$tmp/tree/own" \
		"$root/tools/sframe-dump/sframe-dump" > /dev/null
	echo text > "$tmp/tree/notes.txt"
	ln -s "$tmp/tree/sub" "$tmp/tree/link"
	tap_check "sframectl warm stores the sections of a tree's ELF files, the embedded copy apart" \
		warm_says "$tmp/cache" "2 sections stored, 0 cached already, 1 files with SFrame of their own" \
		"$tmp/tree"
	tap_check "... which the cache then holds" \
		[ "$(find "$tmp/cache" -name '*.sframe' | wc -l)" -eq 2 ]
	tap_check "... and a second warm finds them cached" \
		warm_says "$tmp/cache" "0 sections stored, 2 cached already" \
		"$tmp/tree"
	tap_check "sframectl warm of a path that is not there exits 1" \
		warm_fails --cache "$tmp/cache" "$tmp/none"
	mkdir -m 755 "$tmp/open"
	tap_check "sframectl warm with a cache others can read exits 1" \
		warm_fails --cache "$tmp/open" "$tmp/tree"
fi

# frames_line FMT ARGS...: one sframe_unwind_frames line, a trace's prefix
# first.
frames_line() {
	local fmt=$1

	shift
	# shellcheck disable=SC2059  # the format is the caller's
	printf "          prog-42      [001] .....   12.5: sframe_unwind_frames: $fmt\n" "$@"
}

# sym_of PROG FN: the address of PROG's function FN.
sym_of() {
	printf '%d' "0x$(nm "$1" | awk -v f="$2" '$3 == f { print $1 }')"
}

# symbolized WANT...: the lines of $tmp/sym.out after the event are WANT,
# each an extended regular expression.
symbolized() {
	local i=2 w line

	sed 's/^/# /' "$tmp/sym.out"
	for w in "$@"; do
		line=$(sed -n "${i}p" "$tmp/sym.out")
		echo "$line" | grep -Eq -- "$w" ||
			{ echo "# line $i: want $w: $line"; return 1; }
		i=$((i + 1))
	done
}

cat > "$tmp/symt.c" << 'EOF2'
__attribute__((noipa)) int leaf(int x) { return x * 3; }
__attribute__((noipa)) int mid(int x) { return leaf(x) + 1; }
int main(int argc, char **argv) { (void)argv; return mid(argc); }
EOF2
mkdir -p "$tmp/sym"
if gcc -O2 -o "$tmp/sym/symt" "$tmp/symt.c" &&
   gcc -O2 -Wl,--build-id=none -o "$tmp/sym/symt-noid" "$tmp/symt.c"; then
	id=$(readelf -n "$tmp/sym/symt" | sed -n 's/.*Build ID: //p')
	leaf=$(sym_of "$tmp/sym/symt" leaf)
	mid=$(sym_of "$tmp/sym/symt" mid)
	main=$(sym_of "$tmp/sym/symt-noid" main)
	st=$(stat -c '%d %i' "$tmp/sym/symt-noid")
	dev=${st% *}
	ino=${st#* }
	# leaf's first byte; mid + 1, a return address right after a call at
	# mid's start, so the byte before is mid's; main, in the file without
	# a build-id; a frame in no file.
	{
		echo "          prog-42      [001] .....   12.4: sys_enter: NR 1"
		frames_line "cookie=7 nr=4 addrs={0x%x,0x%x,0x%x,0x7fff0000} file_of=000001ff build_ids=%s%040d build_id_lens=1400 majors={0x0,0x%x} minors={0x0,0x%x} inos={0x1,0x%x}" \
			"$leaf" $((mid + 1)) $((main + 4)) "$id" 0 \
			$((dev >> 8)) $((dev & 255)) "$ino"
	} > "$tmp/trace.k"
	# libtraceevent 1.7 (Debian 12's trace-cmd report): decimal, apart
	# by spaces, no braces.
	frames_line "cookie=7 nr=2 addrs=%d %d file_of=0000 build_ids=%s build_id_lens=14 majors=0 minors=0 inos=1" \
		"$leaf" $((mid + 1)) "$id" > "$tmp/trace.tc"
	tap_check "sframectl symbolize, as the kernel prints: leaf, mid, main by device and inode, [anon]" \
		sh -c "'$root/tools/sframectl/sframectl' symbolize --path '$tmp/sym' '$tmp/trace.k' > '$tmp/sym.out.all' &&
		       tail -n +2 '$tmp/sym.out.all' > '$tmp/sym.out'"
	tap_check "... the frames, innermost first" symbolized \
		" leaf\+0x0 \($tmp/sym/symt\)\$" " mid\+0x1 \($tmp/sym/symt\)\$" \
		" main\+0x4 \($tmp/sym/symt-noid\)\$" " 7fff0000 \[unknown\] \(\[anon\]\)\$"
	tap_check "... the other line unchanged" \
		grep -q "sys_enter: NR 1\$" "$tmp/sym.out.all"
	tap_check "sframectl symbolize, as trace-cmd report prints (decimal), from stdin" \
		sh -c "'$root/tools/sframectl/sframectl' symbolize --path '$tmp/sym' < '$tmp/trace.tc' > '$tmp/sym.out'"
	tap_check "... leaf, mid" symbolized \
		" leaf\+0x0 \($tmp/sym/symt\)\$" " mid\+0x1 \($tmp/sym/symt\)\$"
	tap_check "sframectl symbolize of a trace without the event exits 1" \
		sh -c "! echo none | '$root/tools/sframectl/sframectl' symbolize --path '$tmp/sym' > /dev/null 2>&1"
else
	skip "sframectl symbolize" "gcc cannot build a test program"
fi
tap_end tools-cli
