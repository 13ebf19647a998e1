/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame on-disk format, versions 1, 2 and 3.
 *
 * Every constant and layout of the format is named here, once, and used by
 * the kernel module, the KUnit suites and the host tools alike.  All
 * multi-byte fields are stored in the byte order of the target named by the
 * ABI id; the structures are packed and may sit at any alignment, so they
 * are only ever read field by field through the decoder's accessor.
 */
#ifndef _SFRAME_FORMAT_H
#define _SFRAME_FORMAT_H

#include "env.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_MAGIC_SWAPPED		0xe2de

#define SFRAME_VERSION_1		1
#define SFRAME_VERSION_2		2
#define SFRAME_VERSION_3		3

/* Section flags (preamble sfp_flags). */
#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2	/* V1 and V2 only */
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4	/* V2 erratum 1, V3 */

#define SFRAME_V1_F_ALL_FLAGS	(SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER)
#define SFRAME_V2_F_ALL_FLAGS	(SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER | \
				 SFRAME_F_FDE_FUNC_START_PCREL)
#define SFRAME_V3_F_ALL_FLAGS	(SFRAME_F_FDE_SORTED | \
				 SFRAME_F_FDE_FUNC_START_PCREL)

/* ABI / architecture identifiers (sfh_abi_arch). */
#define SFRAME_ABI_AARCH64_ENDIAN_BIG		1
#define SFRAME_ABI_AARCH64_ENDIAN_LITTLE	2
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE		3
#define SFRAME_ABI_S390X_ENDIAN_BIG		4

/* sfh_cfa_fixed_{fp,ra}_offset value meaning "not fixed". */
#define SFRAME_CFA_FIXED_FP_INVALID	0
#define SFRAME_CFA_FIXED_RA_INVALID	0

struct sframe_preamble {
	u16 sfp_magic;
	u8 sfp_version;
	u8 sfp_flags;
} __packed;

struct sframe_header {
	struct sframe_preamble sfh_preamble;
	u8 sfh_abi_arch;
	s8 sfh_cfa_fixed_fp_offset;
	s8 sfh_cfa_fixed_ra_offset;
	u8 sfh_auxhdr_len;
	u32 sfh_num_fdes;
	u32 sfh_num_fres;
	u32 sfh_fre_len;
	u32 sfh_fdeoff;
	u32 sfh_freoff;
} __packed;

/* V1 function descriptor: 17 bytes. */
struct sframe_fde_v1 {
	s32 sfde_func_start_address;
	u32 sfde_func_size;
	u32 sfde_func_start_fre_off;
	u32 sfde_func_num_fres;
	u8 sfde_func_info;
} __packed;

/* V2 function descriptor: 20 bytes. */
struct sframe_fde_v2 {
	s32 sfde_func_start_address;
	u32 sfde_func_size;
	u32 sfde_func_start_fre_off;
	u32 sfde_func_num_fres;
	u8 sfde_func_info;
	u8 sfde_func_rep_size;
	u16 sfde_func_padding2;
} __packed;

/* V3 function descriptor index entry (FDE sub-section): 16 bytes. */
struct sframe_fdi_v3 {
	s64 sfdi_func_start_offset;
	u32 sfdi_func_size;
	u32 sfdi_func_start_fre_off;
} __packed;

/* V3 function descriptor attribute (head of a function's FRE data): 5 bytes. */
struct sframe_fda_v3 {
	u16 sfda_func_num_fres;
	u8 sfda_func_info;
	u8 sfda_func_info2;
	u8 sfda_func_rep_size;
} __packed;

/* Function info byte (sfde_func_info, sfda_func_info). */
#define SFRAME_FUNC_FRE_TYPE(info)	((info) & 0xf)
#define SFRAME_FUNC_PC_TYPE(info)	(((info) >> 4) & 0x1)
#define SFRAME_FUNC_PAUTH_KEY(info)	(((info) >> 5) & 0x1)
#define SFRAME_V3_FUNC_SIGNAL_P(info)	(((info) >> 7) & 0x1)
#define SFRAME_V1_FUNC_INFO_UNUSED	0xc0	/* bits 6-7 */
#define SFRAME_V3_FUNC_INFO_UNUSED	0x40	/* bit 6 */
#define SFRAME_FUNC_INFO(pc_type, fre_type) \
	((((pc_type) & 0x1) << 4) | ((fre_type) & 0xf))
#define SFRAME_FUNC_PAUTH_KEY_BIT	BIT(5)
#define SFRAME_V3_FUNC_SIGNAL_BIT	BIT(7)

/* FRE start-address field sizes (function info bits 0-3). */
#define SFRAME_FRE_TYPE_ADDR1		0
#define SFRAME_FRE_TYPE_ADDR2		1
#define SFRAME_FRE_TYPE_ADDR4		2

/* PC types (function info bit 4). */
#define SFRAME_FDE_TYPE_PCINC		0
#define SFRAME_FDE_TYPE_PCMASK		1

/* AArch64 pointer-authentication keys (function info bit 5). */
#define SFRAME_AARCH64_PAUTH_KEY_A	0
#define SFRAME_AARCH64_PAUTH_KEY_B	1

/* V3 info2 byte: FDE type in bits 0-4. */
#define SFRAME_V3_FDE_TYPE_MASK		0x1f
#define SFRAME_V3_FDE_TYPE(info2)	((info2) & SFRAME_V3_FDE_TYPE_MASK)
#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/*
 * The only V1 PCMASK producer, ld's x86-64 pltN description, had no repeat
 * size field; its blocks are the 16-byte PLT stubs.
 */
#define SFRAME_V1_PCMASK_REP_SIZE	16

/* FRE info byte. */
#define SFRAME_FRE_CFA_BASE_REG_ID(info)	((info) & 0x1)
#define SFRAME_FRE_DATAWORD_COUNT(info)		(((info) >> 1) & 0xf)
#define SFRAME_FRE_DATAWORD_SIZE(info)		(((info) >> 5) & 0x3)
#define SFRAME_FRE_MANGLED_RA_P(info)		(((info) >> 7) & 0x1)
#define SFRAME_FRE_INFO(base, count, size) \
	(((base) & 0x1) | (((count) & 0xf) << 1) | (((size) & 0x3) << 5))
#define SFRAME_FRE_MANGLED_RA_BIT		BIT(7)

#define SFRAME_BASE_REG_FP		0
#define SFRAME_BASE_REG_SP		1

/* FRE data-word sizes (FRE info bits 5-6); 3 is invalid. */
#define SFRAME_FRE_DATAWORD_1B		0
#define SFRAME_FRE_DATAWORD_2B		1
#define SFRAME_FRE_DATAWORD_4B		2

/* Default FDE data-word indexes. */
#define SFRAME_FRE_CFA_OFFSET_IDX	0
#define SFRAME_FRE_RA_OFFSET_IDX	1
#define SFRAME_FRE_FP_OFFSET_IDX	2

/* RA word used as padding when only FP is saved (s390x). */
#define SFRAME_FRE_RA_OFFSET_INVALID	0

/* The largest data-word count any FDE type uses (flex: 3 pairs). */
#define SFRAME_FRE_MAX_DATAWORDS	6

/* V3 flexible FDE control words. */
#define SFRAME_V3_FLEX_CTRL_REG_P(w)	((w) & 0x1)
#define SFRAME_V3_FLEX_CTRL_DEREF_P(w)	(((w) >> 1) & 0x1)
#define SFRAME_V3_FLEX_CTRL_UNUSED(w)	((w) & 0x4)
#define SFRAME_V3_FLEX_CTRL_REGNUM(w)	((w) >> 3)
#define SFRAME_V3_FLEX_CTRL(reg, deref_p, reg_p) \
	(((reg) << 3) | (((deref_p) & 0x1) << 1) | ((reg_p) & 0x1))
#define SFRAME_V3_FLEX_CFA_CTRL_IDX	0
#define SFRAME_V3_FLEX_CFA_OFF_IDX	1
#define SFRAME_V3_FLEX_RA_CTRL_IDX	2

/*
 * Module-private extension, written only into the sections sframe-gen
 * makes from .eh_frame: the format's reserved bit 2 of a flexible FDE's
 * CFA control word says that the row has a seventh data word, the caller's
 * stack pointer relative to the CFA (which the format fixes per ABI).  A
 * CFA of *(reg + off) + k, as OpenSSL's stack-realigning assembly has, is
 * then kept as CFA = *(reg + off) with k added to the RA, FP and SP
 * offsets.  Standard producers never set the bit.
 */
#define SFU_FLEX_CTRL_SP		0x4
#define SFU_FLEX_SP_IDX			6
/* The most data words a row may have: three flexible pairs and SP. */
#define SFU_FRE_MAX_WORDS		(SFRAME_FRE_MAX_DATAWORDS + 1)

/* s390x: CFA = SP at the call site + 160; CFA offsets stored scaled by 8. */
#define SFRAME_S390X_SP_VAL_OFFSET			(-160)
#define SFRAME_S390X_CFA_OFFSET_ADJUSTMENT		SFRAME_S390X_SP_VAL_OFFSET
#define SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR	8
#define SFRAME_S390X_CFA_OFFSET_ENCODE(off) \
	(((off) + SFRAME_S390X_CFA_OFFSET_ADJUSTMENT) / \
	 SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR)
#define SFRAME_S390X_CFA_OFFSET_DECODE(w) \
	((w) * SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR - \
	 SFRAME_S390X_CFA_OFFSET_ADJUSTMENT)

/* s390x V2 only: an RA/FP word with bit 0 set names a DWARF register. */
#define SFRAME_V2_S390X_OFFSET_IS_REGNUM(w)	((w) & 0x1)
#define SFRAME_V2_S390X_OFFSET_ENCODE_REGNUM(r)	(((r) << 1) | 0x1)
#define SFRAME_V2_S390X_OFFSET_DECODE_REGNUM(w)	((w) >> 1)

/* DWARF register numbers the default FDE rules name, per ABI. */
#define SFRAME_AMD64_DWARF_FP		6
#define SFRAME_AMD64_DWARF_SP		7
#define SFRAME_AMD64_DWARF_RA		16
#define SFRAME_AARCH64_DWARF_FP		29
#define SFRAME_AARCH64_DWARF_LR		30
#define SFRAME_AARCH64_DWARF_SP		31
#define SFRAME_S390X_DWARF_FP		11
#define SFRAME_S390X_DWARF_RA		14
#define SFRAME_S390X_DWARF_SP		15
/* r0-r15, then f0-f15 in the ABI's order. */
#define SFU_S390X_MAX_DWARF_REG		31

/* ELF glue: section type and program header type. */
#define SFRAME_SHT_GNU_SFRAME		0x6ffffff4
#define SFRAME_PT_GNU_SFRAME		0x6474e554

#endif /* _SFRAME_FORMAT_H */
