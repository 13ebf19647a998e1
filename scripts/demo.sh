#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: what the module can do today, on a stock Debian 6.12 kernel.
#
# Builds a program with -O2 -fomit-frame-pointer and gas's SFrame, boots
# Debian's own x86-64 6.12 kernel in QEMU, loads sframe_unwind.ko, and has
# the in-kernel decoder answer "how do I unwind from here?" for addresses
# in the program's functions.  Each answer is printed next to the host's
# sframe-dump and to the row readelf --sframe prints for it.
# (The perf call-graph demo replaces this once the unwinder exists.)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-host.sh all
make -s scripts/sframe-dump
work=build/demo
rm -rf "$work"
mkdir -p "$work/extra"

gcc -O2 -fomit-frame-pointer -Wa,--gsframe -o "$work/demo-prog" \
	scripts/tests/corpus-src.c
bin=$work/demo-prog
objcopy -O binary --only-section=.sframe "$bin" "$work/extra/sframe"
vaddr=$(readelf -SW "$bin" | awk '$2 == ".sframe" { print "0x" $4 }')
echo "$vaddr" > "$work/extra/vaddr"

# Two addresses in each of a few functions: entry, and 4 bytes in.
: > "$work/extra/pcs"
declare -A names
for fn in main dispatch recurse dynamic_frame; do
	a=$(nm "$bin" | awk -v f="$fn" '$3 == f { print $1 }' | head -1)
	[ -n "$a" ] || continue
	for off in 0 4; do
		pc=$(printf '0x%x' $((0x$a + off)))
		echo "$pc" >> "$work/extra/pcs"
		names[$pc]="$fn+$off"
	done
done

echo "== demo: booting Debian's stock x86-64 6.12 kernel in QEMU (TCG)"
scripts/qemu/run.sh x86_64 6.12 --tests demo.sh --extra "$work/extra" \
	--out "$root/build/qemu/demo" > "$work/guest.log" 2>&1 || {
	tail -30 "$work/guest.log"
	exit 1
}
grep -E '^# (qemu-run|guest):' "$work/guest.log"
grep -E '^# +sframe_unwind|^# +\[.*sframe_unwind' "$work/guest.log" | head -1 |
	sed 's/^# */   module: /'
echo
printf '%-18s %-44s %s\n' "address" "kernel (sframe_unwind.ko in the guest)" "host sframe-dump"
for pc in $(cat "$work/extra/pcs"); do
	k=$(grep -E "^# +kernel $pc:" "$work/guest.log" | sed "s/^# *kernel $pc: //")
	h=$(scripts/sframe-dump --pc "$pc" "$bin" | sed "s/^$pc: //")
	printf '%-18s %-44s %s\n' "${names[$pc]}" "$k" "$h"
	[ "$k" = "$h" ] || { echo "demo: kernel and host disagree at $pc"; exit 1; }
done
echo
echo "readelf --sframe rows for 'recurse' (binutils' own decoder):"
rpc=$(nm "$bin" | awk '$3 == "recurse" { print $1 }' | head -1)
readelf --sframe "$bin" | awk -v pc="pc = 0x${rpc#"${rpc%%[!0]*}"}," '
	index($0, pc) { show = 1 } show && /^$/ { exit } show { print }'
