/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rule table's worst case under perf -g (bench/bench_walk.sh): a
 * function whose SFrame has a row at nearly every byte, most rows with a
 * rule of their own, so that a lookup there searches a block of 256
 * one-byte entries whose codes all spill (lib/sframe/table.c: the table
 * is wide), and a stack of 127 frames in it.
 *
 * crafted_walk(depth) calls itself depth - 1 times, then crafted_leaf()
 * (bench/walk.c), which spins.  Its code is a few instructions; around
 * them lie rows of bytes never run (one-byte nops), each with a rule
 * that differs from every other (a CFA offset and a saved-FP offset no
 * other row has), but for WILD_COMMON rules used WILD_COMMON_USES times
 * each, more than the rule of the code itself: that rule, at every
 * return address of the walk, is past the table's one-byte codes and
 * spills too.  crafted_far, 4 MiB away, stretches the text so that the
 * table's blocks are 256 bytes (about 8 rows per block on average).
 * About 65,400 rows and 63,000 distinct rules in all.
 */

#define WILD_CFA	40		/* CFA offsets from here, up by 8 */
#define WILD_PER_FP	256		/* rules per saved-FP offset */
#define WILD_BEFORE	128		/* runs of WILD_PER_FP rows before the code */
#define WILD_AFTER	118		/* ... and after it */
#define WILD_COMMON	300
#define WILD_COMMON_USES 8
#define WILD_COMMON_FP	(-2000)
#define CRAFTED_GAP	(4 << 20)

/* RUNS runs of WILD_PER_FP rows, a rule each, from saved-FP offset fpo. */
.macro wild runs
	.rept	\runs
	.set	cfa, WILD_CFA
	.rept	WILD_PER_FP
	nop
	.cfi_def_cfa_offset cfa
	.cfi_offset %rbp, fpo
	.set	cfa, cfa + 8
	.endr
	.set	fpo, fpo - 8
	.endr
.endm

	.text
	.globl	crafted_walk
	.type	crafted_walk, @function
crafted_walk:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	subq	$16, %rsp
	.cfi_def_cfa_offset 32
	jmp	.Lbody
	.set	fpo, -16
	wild	WILD_BEFORE
.Lbody:
	.cfi_def_cfa_offset 32
	.cfi_offset %rbp, -16
	cmpq	$1, %rdi
	jbe	.Lleaf
	decq	%rdi
	call	crafted_walk
	addq	$16, %rsp
	.cfi_remember_state
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa_offset 8
	.cfi_restore %rbp
	ret
	.cfi_restore_state
.Lleaf:
	call	crafted_leaf
	ud2
	wild	WILD_AFTER
	/* The common rules, WILD_COMMON_USES times over. */
	.rept	WILD_COMMON_USES
	.set	cfa, WILD_CFA
	.rept	WILD_COMMON
	nop
	.cfi_def_cfa_offset cfa
	.cfi_offset %rbp, WILD_COMMON_FP
	.set	cfa, cfa + 8
	.endr
	.endr
	ud2
	.cfi_endproc
	.size	crafted_walk, . - crafted_walk

	.skip	CRAFTED_GAP, 0xcc

	.globl	crafted_far
	.type	crafted_far, @function
crafted_far:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	crafted_far, . - crafted_far

	.section .note.GNU-stack, "", @progbits
