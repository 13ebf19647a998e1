/* SPDX-License-Identifier: GPL-2.0 */
/*
 * .eh_frame reader for the SFrame generator.
 *
 * Parses the call frame information of a 64-bit ELF file of either byte
 * order (CIEs, FDEs, augmentations, pointer encodings) and runs the CFI
 * programs, producing one row per address range: the CFA rule and the rules
 * of a few registers the caller asks for (return address, frame pointer).
 * Every byte is read through a bounds check; every error is reported with
 * the offset in .eh_frame of the byte that is wrong.
 */
#ifndef _SCRIPTS_EH_FRAME_H
#define _SCRIPTS_EH_FRAME_H

#include <sframe/env.h>
#include "elf-sframe.h"

/* Pointer encodings (DW_EH_PE_*): value format, low nibble. */
#define DW_EH_PE_absptr		0x00
#define DW_EH_PE_uleb128	0x01
#define DW_EH_PE_udata2		0x02
#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_udata8		0x04
#define DW_EH_PE_signed		0x08
#define DW_EH_PE_sleb128	0x09
#define DW_EH_PE_sdata2		0x0a
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_sdata8		0x0c
#define DW_EH_PE_FORMAT_MASK	0x0f
/* Application, bits 4-6. */
#define DW_EH_PE_pcrel		0x10
#define DW_EH_PE_textrel	0x20
#define DW_EH_PE_datarel	0x30
#define DW_EH_PE_funcrel	0x40
#define DW_EH_PE_aligned	0x50
#define DW_EH_PE_APPL_MASK	0x70
#define DW_EH_PE_indirect	0x80
#define DW_EH_PE_omit		0xff

/* Call frame instructions: high two bits with an operand in the low six. */
#define DW_CFA_advance_loc		0x40
#define DW_CFA_offset			0x80
#define DW_CFA_restore			0xc0
#define DW_CFA_HIGH_MASK		0xc0
#define DW_CFA_LOW_MASK			0x3f
/* The others. */
#define DW_CFA_nop			0x00
#define DW_CFA_set_loc			0x01
#define DW_CFA_advance_loc1		0x02
#define DW_CFA_advance_loc2		0x03
#define DW_CFA_advance_loc4		0x04
#define DW_CFA_offset_extended		0x05
#define DW_CFA_restore_extended		0x06
#define DW_CFA_undefined		0x07
#define DW_CFA_same_value		0x08
#define DW_CFA_register			0x09
#define DW_CFA_remember_state		0x0a
#define DW_CFA_restore_state		0x0b
#define DW_CFA_def_cfa			0x0c
#define DW_CFA_def_cfa_register		0x0d
#define DW_CFA_def_cfa_offset		0x0e
#define DW_CFA_def_cfa_expression	0x0f
#define DW_CFA_expression		0x10
#define DW_CFA_offset_extended_sf	0x11
#define DW_CFA_def_cfa_sf		0x12
#define DW_CFA_def_cfa_offset_sf	0x13
#define DW_CFA_val_offset		0x14
#define DW_CFA_val_offset_sf		0x15
#define DW_CFA_val_expression		0x16
/* AArch64 toggles the RA signing state; SPARC saves a register window. */
#define DW_CFA_AARCH64_negate_ra_state	0x2d
#define DW_CFA_GNU_window_save		0x2d
#define DW_CFA_GNU_args_size		0x2e
#define DW_CFA_GNU_negative_offset_extended	0x2f

/* The DWARF expression operations the reader decomposes. */
#define DW_OP_deref			0x06
#define DW_OP_plus_uconst		0x23
#define DW_OP_breg0			0x70
#define DW_OP_breg31			0x8f
#define DW_OP_bregx			0x92

/* Bounds of what the reader accepts. */
#define EHF_AUG_MAX		16	/* augmentation string, with its NUL */
#define EHF_STATE_DEPTH		32	/* DW_CFA_remember_state nesting */
#define EHF_MAX_TRACKED		4	/* registers a row describes */
/* In a register list: the CIE's return-address column. */
#define EHF_REG_RA		0xffffffffu

struct ehf_error {
	u64 off;		/* .eh_frame offset of the offending byte */
	const char *what;	/* static text */
};

/* A parsed CIE; FDEs carry a copy. */
struct ehf_cie {
	u64 off;		/* record offset */
	u64 insns;		/* initial instructions, section offsets */
	u64 insns_end;
	u64 code_align;
	s64 data_align;
	u32 ra_reg;		/* return-address column */
	u8 version;
	u8 fde_enc;		/* 'R': FDE pointer encoding */
	u8 lsda_enc;		/* 'L': LSDA pointer encoding */
	u8 addr_size;
	bool has_aug_data;	/* 'z': FDEs carry augmentation data */
	bool signal;		/* 'S': signal trampoline */
	bool bkey;		/* 'B': AArch64 return address signed, key B */
	char aug[EHF_AUG_MAX];
};

struct ehf_fde {
	u64 off;		/* record offset */
	u64 pc_begin;
	u64 pc_range;
	u64 insns;		/* instructions, section offsets */
	u64 insns_end;
	struct ehf_cie cie;
};

/* The .eh_frame section and where its relative pointers are anchored. */
struct ehf_section {
	const u8 *data;
	u64 size;
	u64 vaddr;		/* sh_addr of .eh_frame */
	u64 text_base;		/* DW_EH_PE_textrel anchor (.text) */
	u64 data_base;		/* DW_EH_PE_datarel anchor (.got) */
	bool big;		/* byte order of the file */
	u8 addr_size;		/* DW_EH_PE_absptr width */
	bool to_terminator;	/* size unknown: stop at the first terminator */
	struct ehf_error err;
	/* CIEs seen so far, sorted by offset: the only valid FDE targets. */
	struct ehf_cie *cies;
	u32 nr_cies;
	u32 cap_cies;
};

/* Cursor over the records of a section, from the start. */
struct ehf_iter {
	u64 pos;
};

/*
 * How a value is recovered: @deref loads applied to (base + @off), the
 * base being the CFA or DWARF register @reg.  DW_CFA_offset(N) is
 * {cfa, N, 1}, DW_CFA_register(R) is {R, 0, 0}, a CFA of *(R + off) is
 * {R, off, 1}.
 */
enum ehf_rule_kind {
	EHF_RULE_UNSPEC,	/* no rule given: by convention unchanged */
	EHF_RULE_UNDEF,		/* DW_CFA_undefined */
	EHF_RULE_SAME,		/* DW_CFA_same_value */
	EHF_RULE_LOC,		/* see above */
	EHF_RULE_COMPLEX,	/* an expression the reader does not decompose */
};

struct ehf_loc {
	u8 kind;		/* enum ehf_rule_kind */
	u8 op;			/* DW_CFA_* opcode that set it */
	u8 deref;
	bool cfa_based;
	u32 reg;
	s64 off;
	s64 add;		/* expression: added after the load */
	u64 expr;		/* an expression's bytes: section offset */
	u64 expr_len;
};

/* The rules in force over [pc, end). */
struct ehf_row {
	u64 pc;
	u64 end;
	u64 insn_off;		/* instruction that started the row */
	struct ehf_loc cfa;
	struct ehf_loc reg[EHF_MAX_TRACKED];
	bool ra_mangled;	/* AArch64: DW_CFA_AARCH64_negate_ra_state */
	u64 args_size;		/* DW_CFA_GNU_args_size */
};

/* Registers the caller wants rules for; EHF_REG_RA names the RA column. */
struct ehf_track {
	u32 reg[EHF_MAX_TRACKED];
	unsigned int nr;
};

/* Called for each row in address order; a non-zero return stops. */
typedef int (*ehf_row_fn)(const struct ehf_row *row, void *arg);

/* What the ELF file says about its call frame information. */
struct ehf_elf {
	u16 machine;		/* e_machine */
	u16 type;		/* e_type */
	bool big;
	const u8 *eh_frame;
	u64 eh_frame_size;
	u64 eh_frame_vaddr;
	u64 text_vaddr;		/* .text, 0 if none */
	u64 got_vaddr;		/* .got, 0 if none */
	bool size_unknown;	/* .eh_frame found without its size */
	const char *how;	/* "section headers" or "PT_GNU_EH_FRAME" */
};

int ehf_elf_open(const struct elf_file *f, struct ehf_elf *elf,
		 struct ehf_error *err);

void ehf_init(struct ehf_section *s, const struct ehf_elf *elf);
void ehf_destroy(struct ehf_section *s);
void ehf_iter_init(struct ehf_iter *it);
int ehf_next_fde(struct ehf_section *s, struct ehf_iter *it,
		 struct ehf_fde *fde);
int ehf_fde_rows(struct ehf_section *s, const struct ehf_fde *fde,
		 const struct ehf_track *track, ehf_row_fn fn, void *arg);

int ehf_uleb(const u8 *p, u64 len, u64 *pos, u64 *val);
int ehf_sleb(const u8 *p, u64 len, u64 *pos, s64 *val);

#endif /* _SCRIPTS_EH_FRAME_H */
