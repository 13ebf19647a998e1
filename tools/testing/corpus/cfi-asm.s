# SPDX-License-Identifier: GPL-2.0
#
# x86-64 CFI that compilers rarely emit: remember/restore, DRAP by hand,
# RA and FP in registers, a signal frame, CFA on another register,
# val_offset, the _sf and GNU opcodes, long advances, a CFA loaded from the
# stack plus a constant, a personality and an LSDA.  Assembled by
# gen-oracle.sh (sframe-gen checked against readelf) and corpus.sh (the
# flex FDEs it yields, printed as binutils does).
	.text
	.globl f_state
	.type f_state, @function
f_state:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	test %rdi, %rdi
	je 1f
	.cfi_remember_state
	pop %rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
1:
	.cfi_restore_state
	.cfi_remember_state
	nop
	.cfi_remember_state
	.cfi_def_cfa_offset 24
	nop
	.cfi_restore_state
	nop
	.cfi_restore_state
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc

	.globl f_drap
	.type f_drap, @function
f_drap:
	.cfi_startproc
	lea 8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	and $-32, %rsp
	pushq -8(%r10)
	push %rbp
	mov %rsp, %rbp
	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00
	push %r10
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06
	nop
	pop %r10
	.cfi_def_cfa %r10, 0
	pop %rbp
	lea -8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc

	.globl f_ra_reg
	.type f_ra_reg, @function
f_ra_reg:
	.cfi_startproc
	pop %rdx
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %rdx
	mov %rbp, %r9
	.cfi_register %rbp, %r9
	nop
	mov %r9, %rbp
	.cfi_same_value %rbp
	jmp *%rdx
	.cfi_endproc

	.globl f_cfa_r12
	.type f_cfa_r12, @function
f_cfa_r12:
	.cfi_startproc
	push %r12
	.cfi_adjust_cfa_offset 8
	mov %rsp, %r12
	.cfi_def_cfa_register %r12
	sub $64, %rsp
	nop
	mov %r12, %rsp
	.cfi_def_cfa_register %rsp
	pop %r12
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc

	.globl f_val
	.type f_val, @function
f_val:
	.cfi_startproc
	push %rbp
	.cfi_adjust_cfa_offset 8
	nop
	.cfi_val_offset %rbp, -16
	nop
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_same_value %rbp
	ret
	.cfi_endproc

	.globl f_undef
	.type f_undef, @function
f_undef:
	.cfi_startproc
	.cfi_undefined %rip
	xor %ebp, %ebp
	nop
	hlt
	.cfi_endproc

	.globl f_sf
	.type f_sf, @function
f_sf:
	.cfi_startproc
	push %rbp
	.cfi_escape 0x13, 0x7e
	.cfi_escape 0x11, 0x06, 0x7e
	nop
	.cfi_escape 0x12, 0x07, 0x7d
	.cfi_escape 0x2f, 0x06, 0x03
	.cfi_escape 0x2e, 0x10
	nop
	.cfi_escape 0x2e, 0x00
	pop %rbp
	.cfi_def_cfa_offset 8
	.cfi_restore %rbp
	ret
	.cfi_endproc

	.globl f_long
	.type f_long, @function
f_long:
	.cfi_startproc
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	.skip 300, 0x90
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -24
	.skip 70000, 0x90
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	pop %rbx
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc

	.globl f_eh
	.type f_eh, @function
f_eh:
	.cfi_startproc
	.cfi_personality 0x9b, pers_ref
	.cfi_lsda 0x1b, lsda
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	nop
	pop %rbp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc

	# OpenSSL's stack realignment: the entry SP is saved in the frame
	# and the CFA is *(rsp + 32) + 8; before that, rsp + 8 + 8 as an
	# expression without a load.
	.globl f_realign
	.type f_realign, @function
f_realign:
	.cfi_startproc
	push %rbx
	.cfi_escape 0x0f, 0x04, 0x77, 0x08, 0x23, 0x08
	.cfi_offset %rbx, -16
	lea 8(%rsp), %rax
	.cfi_def_cfa %rax, 8
	push %rbp
	.cfi_offset %rbp, -24
	sub $64, %rsp
	and $-64, %rsp
	mov %rax, 32(%rsp)
	.cfi_escape 0x0f, 0x05, 0x77, 0x20, 0x06, 0x23, 0x08
	nop
	mov 32(%rsp), %rsi
	.cfi_def_cfa %rsi, 8
	mov -16(%rsi), %rbp
	.cfi_restore %rbp
	mov -8(%rsi), %rbx
	.cfi_restore %rbx
	lea 8(%rsi), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc

	nop
	.globl f_signal
	.type f_signal, @function
f_signal:
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06
	.cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01
	.cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00
	mov $15, %eax
	syscall
	.cfi_endproc

	.data
	.align 8
pers_ref:
	.quad 0
lsda:
	.byte 0xff, 0xff, 0x01, 0x00
