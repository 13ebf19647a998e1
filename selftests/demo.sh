#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of "make demo": load the module, hand it the .sframe section
# the host extracted to /extra, and print the kernel's rule at each address
# listed in /extra/pcs.
set -e
insmod /lib/test-modules/sframe_unwind.ko 2> /dev/null || true
dmesg | grep 'sframe_unwind:' | tail -1
d=/sys/kernel/debug/sframe_unwind
cat /extra/vaddr > $d/vaddr
cat /extra/sframe > $d/section
cat $d/status
cat /extra/pcs > $d/decode
sed 's/^/kernel /' $d/decode
