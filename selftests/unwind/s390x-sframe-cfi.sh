#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# s390x-sframe-cfi.sh IN.s OUT.s: copy the s390x assembly IN.s, as gcc
# writes it (with .cfi_* directives), to OUT.s with an SFrame V2 section
# whose rows follow the CFI at every instruction, for the unwinder
# selftests.
#
# binutils 2.40 has no SFrame producer for s390x, and the registry tests'
# selftests/registry/s390x-sframe.sh writes one row per function (the rule
# at entry), which is enough to look function starts up but not to unwind
# from the middle of a function.  This script replays each function's CFI
# instead: at every point where the CFA rule, the place of the return
# address (r14) or of the frame pointer (r11) changes, it puts a label in
# the text (right before the next instruction, so the code is unchanged)
# and emits a row starting there:
#
#   CFA    r15 (SP) or r11 (FP) plus an offset, stored as (offset - 160) / 8
#   RA     a CFA-relative slot, or "in register N" ((N << 1) | 1), or
#          nothing while it is still in r14 (a 0 word pads it when FP is
#          saved and RA is not)
#   FP     a CFA-relative slot or a register, or nothing while unchanged
#
# The data words take 1, 2 or 4 bytes as the values need; row starts are
# 4-byte offsets (SFRAME_FRE_TYPE_ADDR4).  The header is as in the
# registry script: big-endian, ABI 4, SFRAME_F_FDE_FUNC_START_PCREL, not
# sorted.  Exits 1 on CFI it cannot express (a CFA based on another
# register, .cfi_escape, ...), so a build never gets rows that lie.
#
# Kept beside tools/sframe-gen/sframe-gen (which derives rows from the same CFI) on
# purpose: a producer independent of the code under test, as sframe-gen
# encodes with lib/sframe/, the library whose decoder the module runs;
# unwind_chain_gen tests sframe-gen's sections on every architecture.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: s390x-sframe-cfi.sh IN.s OUT.s" >&2; exit 2; }

awk '
function die(msg) {
	printf "%s:%d: s390x-sframe-cfi: %s\n", FILENAME, FNR, msg > "/dev/stderr"
	failed = 1
	exit 1
}

# The location of r11 or r14 in the current state, as a data word, or ""
# while the register holds its own value.
function loc_word(kind, val) {
	if (kind == "same")
		return ""
	if (kind == "off")
		return val
	return val * 2 + 1	# in register val
}

function state_key() {
	return cfa_reg " " cfa_off " " ra_kind " " ra_val " " fp_kind " " fp_val
}

function word_size(w) {
	if (w >= -128 && w <= 127)
		return 0
	if (w >= -32768 && w <= 32767)
		return 1
	return 2
}

# Emit a row for the current state at this point of the text.
function emit_row(	ra, fp, n, i, sz, s, base, cw, lab) {
	if ((cfa_off - 160) % 8)
		die("CFA offset " cfa_off " is not 160 plus a multiple of 8")
	if (cfa_reg == 15)
		base = 1
	else if (cfa_reg == 11)
		base = 0
	else
		die("CFA based on r" cfa_reg)
	cw = (cfa_off - 160) / 8
	n = 0
	words[n++] = cw
	ra = loc_word(ra_kind, ra_val)
	fp = loc_word(fp_kind, fp_val)
	if (ra != "" || fp != "")
		words[n++] = ra == "" ? 0 : ra
	if (fp != "")
		words[n++] = fp
	sz = 0
	for (i = 0; i < n; i++) {
		s = word_size(words[i])
		if (s > sz)
			sz = s
	}
	lab = sprintf(".Lsfu_r%d_%d", nfde, nrow)
	print lab ":"
	fre[nfre_total] = sprintf("\t.long %s - .Lsfu_fs%d\n\t.byte 0x%02x\n", \
				  lab, nfde, base + n * 2 + sz * 32)
	for (i = 0; i < n; i++)
		fre[nfre_total] = fre[nfre_total] sprintf("\t%s %d\n", \
			sz == 0 ? ".byte" : sz == 1 ? ".short" : ".long", words[i])
	fre_bytes += 4 + 1 + n * (sz == 0 ? 1 : sz == 1 ? 2 : 4)
	nfre_total++
	nrow++
	last_key = state_key()
	dirty = 0
}

function push_state() {
	stk[depth, 0] = cfa_reg; stk[depth, 1] = cfa_off
	stk[depth, 2] = ra_kind; stk[depth, 3] = ra_val
	stk[depth, 4] = fp_kind; stk[depth, 5] = fp_val
	depth++
}

function pop_state() {
	if (!depth)
		die(".cfi_restore_state without .cfi_remember_state")
	depth--
	cfa_reg = stk[depth, 0]; cfa_off = stk[depth, 1]
	ra_kind = stk[depth, 2]; ra_val = stk[depth, 3]
	fp_kind = stk[depth, 4]; fp_val = stk[depth, 5]
}

# Record where register r now is: kind "off" (CFA + val), "reg" or "same".
function set_loc(r, kind, val) {
	if (r == 14) {
		ra_kind = kind; ra_val = val
	} else if (r == 11) {
		fp_kind = kind; fp_val = val
	}
}

function regnum(s) {
	gsub(/[%r ,]/, "", s)
	if (s !~ /^[0-9]+$/)
		die("register \"" s "\" not understood")
	return s + 0
}

BEGIN { nfde = 0; nfre_total = 0; fre_bytes = 0; infn = 0 }

{
	line = $0
	if (line ~ /^[ \t]*\.cfi_startproc/) {
		if (infn)
			die("nested .cfi_startproc")
		infn = 1; depth = 0; nrow = 0
		cfa_reg = 15; cfa_off = 160
		ra_kind = "same"; ra_val = 0; fp_kind = "same"; fp_val = 0
		fde_first[nfde] = nfre_total
		fde_fre_off[nfde] = fre_bytes
		print ".Lsfu_fs" nfde ":"
		print line
		dirty = 1; last_key = ""
		next
	}
	if (line ~ /^[ \t]*\.cfi_endproc/) {
		if (!infn)
			die(".cfi_endproc outside a function")
		print ".Lsfu_fe" nfde ":"
		print line
		fde_nfres[nfde] = nfre_total - fde_first[nfde]
		nfde++
		infn = 0
		next
	}
	if (infn && line ~ /^[ \t]*\.cfi_/) {
		d = line
		sub(/^[ \t]*/, "", d)
		op = d
		sub(/[ \t].*$/, "", op)
		args = d
		sub(/^[^ \t]*[ \t]*/, "", args)
		na = split(args, a, /[ \t]*,[ \t]*/)
		if (op == ".cfi_def_cfa_offset") {
			cfa_off = a[1] + 0
		} else if (op == ".cfi_adjust_cfa_offset") {
			cfa_off += a[1] + 0
		} else if (op == ".cfi_def_cfa_register") {
			cfa_reg = regnum(a[1])
		} else if (op == ".cfi_def_cfa") {
			cfa_reg = regnum(a[1]); cfa_off = a[2] + 0
		} else if (op == ".cfi_offset") {
			set_loc(regnum(a[1]), "off", a[2] + 0)
		} else if (op == ".cfi_register") {
			set_loc(regnum(a[1]), "reg", regnum(a[2]))
		} else if (op == ".cfi_restore" || op == ".cfi_same_value") {
			set_loc(regnum(a[1]), "same", 0)
		} else if (op == ".cfi_remember_state") {
			push_state()
		} else if (op == ".cfi_restore_state") {
			pop_state()
		} else if (op != ".cfi_signal_frame" && op != ".cfi_personality" &&
			   op != ".cfi_lsda" && op != ".cfi_sections") {
			die("cannot express " op " in SFrame")
		}
		dirty = 1
		print line
		next
	}
	# An instruction: rows pending for this address go right before it.
	if (infn && dirty && line ~ /^[ \t]+[a-z][a-z0-9]*([ \t]|$)/ &&
	    state_key() != last_key)
		emit_row()
	if (infn && line ~ /^[ \t]+[a-z][a-z0-9]*([ \t]|$)/)
		dirty = 0
	print line
}

END {
	if (failed)
		exit 1
	if (infn)
		die("no .cfi_endproc at the end")
	if (!nfde)
		exit 0
	print "\t.section .sframe,\"a\""
	print "\t.p2align 3"
	print "\t.short 0xdee2\t\t/* magic */"
	print "\t.byte 2\t\t\t/* version */"
	print "\t.byte 0x4\t\t/* SFRAME_F_FDE_FUNC_START_PCREL */"
	print "\t.byte 4\t\t\t/* SFRAME_ABI_S390X_ENDIAN_BIG */"
	print "\t.byte 0\t\t\t/* no fixed FP offset */"
	print "\t.byte 0\t\t\t/* no fixed RA offset */"
	print "\t.byte 0\t\t\t/* no auxiliary header */"
	printf "\t.long %d\t\t/* FDEs */\n", nfde
	printf "\t.long %d\t\t/* FREs */\n", nfre_total
	printf "\t.long %d\t\t/* FRE bytes */\n", fre_bytes
	print "\t.long 0\t\t\t/* FDE offset */"
	printf "\t.long %d\t\t/* FRE offset */\n", 20 * nfde
	for (i = 0; i < nfde; i++) {
		printf ".Lsfu_fde%d:\n", i
		printf "\t.long .Lsfu_fs%d - .Lsfu_fde%d\n", i, i
		printf "\t.long .Lsfu_fe%d - .Lsfu_fs%d\n", i, i
		printf "\t.long %d\n", fde_fre_off[i]
		printf "\t.long %d\n", fde_nfres[i]
		print "\t.byte 0x02\t\t/* PCINC, 4-byte FRE starts */"
		print "\t.byte 0"
		print "\t.short 0"
	}
	for (k = 0; k < nfre_total; k++)
		printf "%s", fre[k]
}
' "$1" > "$2"
