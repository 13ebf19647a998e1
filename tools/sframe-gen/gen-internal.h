/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generator's internals, shared by its files: gen.c (the walk over
 * .eh_frame, functions, PLTs, the entry points), gen-fre.c (a row as an
 * FRE), gen-encode.c (compaction and encoding) and gen-report.c (counts,
 * the functions left out, --dump-rows).  Not an interface: gen.h is.
 */
#ifndef _GEN_INTERNAL_H
#define _GEN_INTERNAL_H

#include <sframe/decode.h>
#include <sframe/encode.h>
#include "eh-frame.h"
#include "gen.h"

/* Indexes of the registers the rows carry. */
#define GEN_RA			0
#define GEN_FP			1
#define GEN_NR_TRACKED		2

#define GEN_FDE_V2_ANCHOR_MAX	INT32_MAX
/* AMD64: the call pushed the return address just below the CFA. */
#define GEN_AMD64_RA_OFF	(-8)
#define GEN_FRES_GROW		4096
#define GEN_ROWS_GROW		64
#define GEN_FDES_GROW		1024
#define GEN_TEXT_MAX		48
#define GEN_REG_TEXT_MAX	16
#define GEN_RULE_TEXT_MAX	(3 * GEN_TEXT_MAX + 16)
#define GEN_ERR_MAX		256

/* How a row is to be encoded. */
struct gen_mode {
	bool flex;		/* V3 flexible FDE */
	bool v2;		/* SFrame V2 (s390x register words) */
	bool sp_word;		/* flex: the module's SP word may be used */
};

/*
 * What generating for an architecture takes beyond its SFrame ABI, whose
 * name and SP and FP registers come from the decoder (sfu_abi_info()).
 */
struct gen_arch {
	u16 machine;
	u8 abi;
	s8 fixed_fp;
	s8 fixed_ra;
	bool ra_in_reg;		/* RA lives in a register at entry (LR, r14) */
	bool pauth;		/* AArch64: signed return addresses */
	bool ra_pad;		/* s390x: a zero RA word pads for a saved FP */
	bool cfa_scaled;	/* s390x: CFA offsets stored (off - 160) / 8 */
	bool v2_reg_words;	/* s390x V2: odd RA/FP words name registers */
	/* Length of the padding instruction at @p (@n bytes left), or 0. */
	u32 (*pad)(const u8 *p, u64 n, bool big);
};

/* The DWARF numbers of the SP and FP of @a's SFrame ABI. */
static inline u16 gen_sp(const struct gen_arch *a)
{
	return sfu_abi_info(a->abi)->sp_reg;
}

static inline u16 gen_fp(const struct gen_arch *a)
{
	return sfu_abi_info(a->abi)->fp_reg;
}

/* One function as it will be emitted, or why it is not. */
struct gen_fde {
	u64 start;
	u64 size;		/* after any cut */
	u64 full_size;		/* the FDE's whole range */
	u64 eh_off;		/* the FDE in .eh_frame */
	u32 fre_first;		/* index into gen.fres */
	u32 nr_fres;
	u8 fde_type;
	u8 pc_type;		/* SFRAME_FDE_TYPE_PCINC or _PCMASK */
	u8 rep_size;		/* PCMASK block */
	u8 pauth_key;
	bool signal;
	bool emitted;
	enum gen_why why;	/* skipped, or cut, because of this */
	u64 why_pc;		/* the first address not described */
};

struct gen {
	const struct gen_arch *arch;
	struct gen_opts o;	/* vaddr placed by gen_place() */
	struct gen_err *err;
	struct ehf_section eh;
	struct ehf_elf elf;
	struct gen_fde *fdes;
	u32 nr_fdes;
	u32 cap_fdes;
	struct sfu_enc_fre *fres;
	u32 nr_fres;
	u32 cap_fres;
	struct ehf_row *rows;	/* the current function's rows */
	u32 nr_rows;
	u32 cap_rows;
	u64 out_bytes;
	u64 plain_bytes;	/* the same section without FRE sharing */
	u32 shared_fdes;	/* FDEs whose FREs another FDE already has */
	struct sfu_enc_sizes sizes;	/* where the output's bytes go */
	u32 nr_eh_fdes;		/* FDEs in .eh_frame */
	u32 merged;		/* functions merged into the one before */
	u64 pad_bytes;		/* padding between them, now described */
	const struct elf_file *file;
	u32 nr_plt;		/* PLT FDEs made from ld's CFA expression */
	gen_row_fn row_fn;	/* gen_dump_rows()'s */
	void *row_arg;
};

/*
 * ld's x86-64 lazy PLT: after PLT0, 16-byte entries whose CFA is
 * rsp + 8 + (((rip & 15) >= T) << 3): 8 until the entry's push, 16 after.
 * T is 11 for the classic entry (jmp *GOT; push n; jmp PLT0), 10 with
 * the IBT layout.  SFrame says that with a PCMASK FDE.
 */
#define GEN_PLT_ENTRY		16
#define GEN_PLT_CFA_IN		8
#define GEN_PLT_CFA_PUSHED	16

int __attribute__((format(printf, 3, 4)))
gen_fail(struct gen *g, int ret, const char *fmt, ...);
int gen_oom(struct gen *g);
bool gen_same_fre(const struct sfu_enc_fre *a, const struct sfu_enc_fre *b);
int gen_collect_rows(struct gen *g, const struct ehf_fde *fde);
u32 gen_plt_threshold(const struct gen *g, const struct ehf_loc *l);
void gen_totals(const struct gen *g, struct gen_stats *s);

/* gen-fre.c */
enum gen_why gen_row_fre(const struct gen_arch *a, const struct ehf_row *row,
			 const struct gen_mode *m, struct sfu_enc_fre *f);

/* gen-encode.c */
int gen_encode_fdes(struct gen *g, struct sfu_enc_fde *fdes, u32 n,
		    struct sfu_enc_params *p, u8 **bufp);
int gen_encode(struct gen *g, u8 **bufp);

/* gen-report.c */
void gen_count(const struct gen *g, struct gen_stats *s);
int gen_list_funcs(struct gen *g, struct gen_result *r);
int gen_dump_fde(struct gen *g, const struct ehf_fde *fde);

#endif /* _GEN_INTERNAL_H */
