#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# s390x-sframe.sh NM OBJ: print assembly for an SFrame V2 section that
# describes every function of the s390x object OBJ, to be appended to the
# assembly OBJ was built from and assembled again.
#
# binutils 2.40 has no SFrame producer for s390x, but ld gives an allocated
# input section named .sframe a PT_GNU_SFRAME program header (it prints
# "error in ...(.sframe); no .sframe will be created", meaning only that it
# does not merge the section, and copies it unchanged).  The section is
# big-endian with ABI id 4, flag SFRAME_F_FDE_FUNC_START_PCREL (each FDE's
# start is relative to the FDE itself, so ".long func - .Lfde" relocates
# correctly in programs and libraries alike) and not SFRAME_F_FDE_SORTED
# (functions may sit in different text sections).  Every function gets one
# row at offset 0 with the rule at entry, CFA = SP + 160 (stored as
# (160 - 160) / 8 = 0), RA in r14 and FP unchanged: enough for the
# registration tests, which look up function starts, not for unwinding.
#
# Kept beside tools/sframe-gen/sframe-gen on purpose: a producer independent of the
# code under test, as sframe-gen encodes with lib/sframe/, the library
# whose decoder the module runs (unwind_chain_gen tests sframe-gen's
# sections on every architecture); and sframe-gen writes no section of
# one row per function with unsorted FDEs.
#
# Layout (include/sframe/format.h): 28-byte header, 20-byte FDEs, then
# one 3-byte FRE per function (1-byte start, info 0x03 = SP based, one
# 1-byte data word, the word).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: s390x-sframe.sh NM OBJ" >&2; exit 2; }
nm=$1
obj=$2

"$nm" -S --defined-only "$obj" |
awk 'BEGIN { n = 0 }
	NF == 4 && ($3 == "T" || $3 == "t") && $2 !~ /^0+$/ {
		name[n] = $4; size[n] = $2; n++
	}
	END {
		if (!n)
			exit 1
		print "\t.section .sframe,\"a\""
		print "\t.p2align 3"
		print "\t.short 0xdee2\t\t/* magic */"
		print "\t.byte 2\t\t\t/* version */"
		print "\t.byte 0x4\t\t/* SFRAME_F_FDE_FUNC_START_PCREL */"
		print "\t.byte 4\t\t\t/* SFRAME_ABI_S390X_ENDIAN_BIG */"
		print "\t.byte 0\t\t\t/* no fixed FP offset */"
		print "\t.byte 0\t\t\t/* no fixed RA offset */"
		print "\t.byte 0\t\t\t/* no auxiliary header */"
		printf "\t.long %d\t\t/* FDEs */\n", n
		printf "\t.long %d\t\t/* FREs */\n", n
		printf "\t.long %d\t\t/* FRE bytes */\n", 3 * n
		print "\t.long 0\t\t\t/* FDE offset */"
		printf "\t.long %d\t\t/* FRE offset */\n", 20 * n
		for (i = 0; i < n; i++) {
			printf ".Lsfu_sframe_fde%d:\n", i
			printf "\t.long %s - .Lsfu_sframe_fde%d\n", name[i], i
			printf "\t.long 0x%s\n", size[i]
			printf "\t.long %d\n", 3 * i
			print "\t.long 1"
			print "\t.byte 0\t\t\t/* PCINC, 1-byte FRE starts */"
			print "\t.byte 0"
			print "\t.short 0"
		}
		for (i = 0; i < n; i++)
			print "\t.byte 0, 0x03, 0"
	}'
