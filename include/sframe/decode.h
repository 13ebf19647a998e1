/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame decoder: section validation, PC lookup and FRE decoding.
 *
 * The decoder never touches section bytes except through sfu_read(), which
 * checks every read against the section bounds before it copies.  Error
 * codes (negative errno values):
 *
 *   -ENOENT           no function or row describes the PC
 *   -EBADMSG          the section is corrupt (sec->diag says where and why)
 *   -EFAULT           the bytes could not be read (unmapped or not resident)
 *   -ENOEXEC          not an SFrame section (bad magic)
 *   -EPROTONOSUPPORT  an SFrame version this decoder does not know
 *   -EOPNOTSUPP       an ABI other than the one asked for
 *   -E2BIG            more FDEs or elements than the decoder accepts
 *   -ENOMEM           the lookup index could not be allocated
 *   -ERANGE           the caller's work budget ran out (sfu_find_rule_budget)
 */
#ifndef _SFRAME_DECODE_H
#define _SFRAME_DECODE_H

#include "format.h"

/* Pass as @abi to accept any ABI the decoder knows (host tools). */
#define SFU_ABI_ANY			0

/* Limits that bound every loop of the decoder. */
#define SFU_MAX_ELEMS			64
#define SFU_MAX_FDES			BIT(21)
/* V3 stores a function's FRE count in 16 bits; V1 and V2 get the same cap. */
#define SFU_MAX_FDE_FRES		0xffff
#define SFU_BLOCK_SHIFT_MIN		8
#define SFU_BLOCK_SHIFT_MAX		63
#define SFU_MAX_REG			0xffff
/* Functions with more rows get a row index: a mark every this many rows. */
#define SFU_ROW_STRIDE			16
/* Largest encoded FRE: 4-byte start, info, seven 4-byte words. */
#define SFU_FRE_MAX_BYTES		(sizeof(u32) + 1 + \
					 SFU_FRE_MAX_WORDS * sizeof(u32))

struct sfu_diag {
	const char *what;	/* static string naming the failed check */
	u64 off;		/* section offset the check concerns */
};

/* One SFrame element (header + FDEs + FREs) of a section. */
struct sfu_elem {
	u64 off;		/* element start, section offset */
	u64 end;		/* element end, section offset */
	u64 fde_off;		/* FDE sub-section, section offset */
	u64 fre_off;		/* FRE sub-section, section offset */
	u32 fre_len;
	u32 num_fdes;
	u32 num_fres;
	u32 first_id;		/* id of this element's FDE 0 in the section */
	u8 version;
	u8 flags;
	u8 abi;
	u8 auxhdr_len;
	s8 fixed_fp;
	s8 fixed_ra;
	u8 fde_size;		/* 17, 20 or 16 bytes */
	bool swap;		/* foreign byte order */
};

/* The section's indexes, built and read by the library alone (internal.h). */
struct sfu_key;
struct sfu_ent;
struct sfu_row_run;
struct sfu_row_mark;
/* A section's rows decoded once (include/sframe/table.h). */
struct sfu_table;

struct sfu_section {
	unsigned long base;	/* address of byte 0 where it can be read */
	u64 size;
	u64 vaddr;		/* address of byte 0 in the target's space */
	enum sfu_mem mem;	/* SFU_MEM_KERNEL or SFU_MEM_USER */
	u8 abi;
	u32 nr_elems;
	u32 nr_fdes;
	struct sfu_elem *elems;
	struct sfu_key *keys;	/* NULL: element 0's FDEs are the order */
	struct sfu_ent *ents;	/* NULL: text span over 4 GiB */
	u32 *blocks;		/* block -> first candidate position */
	u32 nr_blocks;
	u8 block_shift;
	u64 text_lo;		/* lowest function start */
	u64 text_hi;		/* highest function end */
	struct sfu_row_run *runs;	/* sorted by fres_off */
	u32 nr_runs;
	u32 nr_marks;
	struct sfu_row_mark *marks;
	struct sfu_table *table;	/* NULL: rows are read and decoded */
	struct sfu_diag diag;
};

/* A decoded function descriptor, any version. */
struct sfu_fde {
	const struct sfu_elem *elem;
	u32 idx;		/* index within the element */
	u64 start;		/* function start address */
	u32 size;
	u32 num_fres;
	u64 fres_off;		/* first FRE, section offset */
	u8 info;
	u8 info2;
	u8 rep_size;
	u8 fre_type;
	u8 pc_type;
	u8 fde_type;		/* SFRAME_FDE_TYPE_DEFAULT or _FLEX */
};

/* A decoded frame row entry. */
struct sfu_fre {
	u32 start;		/* offset from function (or block) start */
	u8 info;
	u8 nr_words;
	u8 word_size;		/* bytes */
	u32 size;		/* encoded size in bytes */
	u32 words[SFU_FRE_MAX_WORDS];	/* raw, zero-extended */
};

/* FRE bytes a cursor reads at once: the rows of most functions. */
#define SFU_FRE_WINDOW			128

/*
 * Cursor over the FREs of one function.  It reads the section a window at
 * a time, so that walking a function's rows costs one section read rather
 * than one per row.
 */
struct sfu_fre_iter {
	u64 off;		/* next FRE, section offset */
	u64 end;		/* end of the element's FRE sub-section */
	u32 left;
	u32 prev_start;
	u64 win_off;		/* section offset of @win[0] */
	u32 win_len;		/* bytes held in @win; 0: none */
	u8 win[SFU_FRE_WINDOW];
};

/*
 * Where a value is found.  SFU_LOC_SAME: still in its own register (RA: the
 * ABI's return-address register).  SFU_LOC_CFA: CFA + off.  SFU_LOC_REG:
 * DWARF register @reg + off.  With @deref the value is loaded from that
 * address instead.
 */
enum sfu_loc_kind {
	SFU_LOC_NONE,
	SFU_LOC_SAME,
	SFU_LOC_CFA,
	SFU_LOC_REG,
};

struct sfu_loc {
	u8 kind;
	bool deref;
	u16 reg;
	s32 off;
};

#define SFU_RULE_OUTERMOST	0x01	/* RA undefined: stop here */
#define SFU_RULE_SIGNAL		0x02	/* signal trampoline: arch decodes */
#define SFU_RULE_RA_MANGLED	0x04	/* AArch64: RA signed, strip PAC */
#define SFU_RULE_PAUTH_KEY_B	0x08	/* AArch64: signed with key B */
#define SFU_RULE_FLEX		0x10	/* from a V3 flexible FDE */
#define SFU_RULE_TOPMOST_ONLY	0x20	/* uses registers only frame 0 has */

/* The arch-neutral unwind rule for one PC. */
struct sfu_rule {
	struct sfu_loc cfa;	/* always SFU_LOC_REG unless NONE */
	struct sfu_loc ra;
	struct sfu_loc fp;
	s32 sp_off;		/* caller SP = CFA + sp_off */
	u32 flags;
};

/* Per-ABI facts the rules are written in. */
struct sfu_abi_info {
	const char *name;
	bool big_endian;
	u16 sp_reg;
	u16 fp_reg;
	u16 ra_reg;
	s32 sp_off;
};

const struct sfu_abi_info *sfu_abi_info(u8 abi);
u8 sfu_native_abi(void);

int sfu_read(const struct sfu_section *sec, u64 off, void *dst, size_t len);

/* What sfu_section_open() does besides checking the headers and indexing. */
#define SFU_OPEN_VALIDATE		BIT(0)	/* check every row */
#define SFU_OPEN_TABLE			BIT(1)	/* rule table only, then */

int sfu_section_open(struct sfu_section *sec, const void *base, u64 size,
		     u64 vaddr, u8 abi, unsigned int flags);
int sfu_section_init(struct sfu_section *sec, unsigned long base, u64 size,
		     u64 vaddr, enum sfu_mem mem, u8 abi);
void sfu_section_read_mapped(struct sfu_section *sec);
void sfu_section_destroy(struct sfu_section *sec);
size_t sfu_section_bytes(const struct sfu_section *sec);
void sfu_section_strip(struct sfu_section *sec);
int sfu_section_validate(struct sfu_section *sec);

int sfu_read_fde(struct sfu_section *sec, const struct sfu_elem *elem,
		 u32 idx, struct sfu_fde *fde);
void sfu_fre_iter_init(const struct sfu_fde *fde, struct sfu_fre_iter *it);
void sfu_fre_iter_clear(struct sfu_fre_iter *it);
void sfu_fre_iter_prefill(struct sfu_section *sec, struct sfu_fre_iter *it,
			  u64 off);
void sfu_fre_iter_start(const struct sfu_fde *fde, struct sfu_fre_iter *it);
int sfu_fre_next(struct sfu_section *sec, const struct sfu_fde *fde,
		 struct sfu_fre_iter *it, struct sfu_fre *fre);
s32 sfu_fre_sword(const struct sfu_fre *fre, unsigned int i);
int sfu_fde_empty_rule(const struct sfu_fde *fde, struct sfu_rule *rule);
int sfu_fre_rule(struct sfu_section *sec, const struct sfu_fde *fde,
		 const struct sfu_fre *fre, struct sfu_rule *rule);

int sfu_find_rule(struct sfu_section *sec, u64 pc, struct sfu_rule *rule);
int sfu_find_rule_budget(struct sfu_section *sec, u64 pc,
			 struct sfu_rule *rule, u32 *budget);

const char *sfu_strerror(int err);
int sfu_rule_format(const struct sfu_rule *rule, u8 abi, char *buf,
		    size_t len);

/* Longest line sfu_rule_format() writes, with its NUL. */
#define SFU_RULE_STR_MAX	160

#endif /* _SFRAME_DECODE_H */
