// SPDX-License-Identifier: GPL-2.0
/*
 * The generator: an SFrame section from the .eh_frame of an ELF file.
 * sframe-gen (tools/sframe-gen/sframe-gen.c) and sframectl (tools/sframectl/sframectl.c)
 * are its commands; gen.h is its interface.  It prints nothing: a failure
 * comes back as an error code and a message, and what it found as counts,
 * a list of the functions it left out and rows, for the command to report.
 *
 * Every FDE of .eh_frame is interpreted row by row (tools/sframe-gen/eh-frame.c) and
 * each row becomes an SFrame FRE.  A function whose first row SFrame cannot
 * express is left out; one that becomes inexpressible later is cut there
 * (its SFrame FDE ends at that address).  V3 uses flexible FDEs for rules
 * the default FDE cannot hold (CFA = *(reg + off) under DRAP, CFA based on
 * another register, RA or FP in a register or at a register-based address).
 * Consecutive rows that encode the same FRE are merged.
 *
 * Compaction: neighbouring functions with only padding between them
 * (decoded per architecture) merge into one FDE while one FRE start byte
 * reaches every row; functions with identical rows (and, in V3, the same
 * function attributes) point at one copy of them; FRE start offsets are
 * sized by a function's last row rather than its length.
 *
 * The output is a raw section, FDEs sorted, with
 * SFRAME_F_FDE_FUNC_START_PCREL: each function start is stored relative to
 * its own field, so the bytes depend on where the section will sit.  They
 * are computed for --vaddr (default 0); `sframe-dump --vaddr ADDR` must be
 * given the same address to decode the starts.
 *
 * x86-64, AArch64 and s390x are converted; what differs between them is
 * data in struct gen_arch: AMD64's fixed RA slot, the RA held in LR or r14
 * at entry, AArch64's signed return addresses (the FRE's mangled bit and
 * the CIE's B key), s390x's scaled CFA offsets, its zero RA word padding a
 * saved FP, and its V2 odd words naming the register that holds RA or FP.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe/decode.h>
#include <sframe/encode.h>
#include "eh-frame.h"
#include "elf-embed.h"
#include "elf-sframe.h"
#include "sframe-reenc.h"
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

static const char *const gen_whys[GEN_WHY_NR] = {
	[GEN_WHY_NONE] = "-",
	[GEN_WHY_CFA_NONE] = "CFA: no rule",
	[GEN_WHY_CFA_RULE] = "CFA: expression other than reg+off or *(reg+off)",
	[GEN_WHY_CFA_FLEX] = "CFA: not SP/FP + offset (needs V3 flex)",
	[GEN_WHY_CFA_RANGE] = "CFA: offset or register out of range",
	[GEN_WHY_RA_RULE] = "RA: rule SFrame cannot express",
	[GEN_WHY_RA_FLEX] = "RA: not at CFA-8 (needs V3 flex)",
	[GEN_WHY_RA_RANGE] = "RA: offset or register out of range",
	[GEN_WHY_RA_MANGLED] = "RA: signed return address",
	[GEN_WHY_FP_RULE] = "FP: rule SFrame cannot express",
	[GEN_WHY_FP_FLEX] = "FP: not saved at CFA+off (needs V3 flex)",
	[GEN_WHY_FP_RANGE] = "FP: offset or register out of range",
	[GEN_WHY_FP_UNDEF] = "FP: undefined",
	[GEN_WHY_FRES] = "more FREs than an FDE can hold",
	[GEN_WHY_SIZE] = "address range of 4 GiB or more",
	[GEN_WHY_EMPTY] = "empty address range",
	[GEN_WHY_OVERLAP] = "overlaps an earlier function",
	[GEN_WHY_CFI] = "CFI program error",
};

/**
 * gen_why_text() - a reason in words
 * @why: the reason
 *
 * Return: what --stats and -v call it.
 */
const char *gen_why_text(enum gen_why why)
{
	return why < GEN_WHY_NR ? gen_whys[why] : "?";
}

/* The reasons one entity (CFA, RA, FP) can fail with. */
struct gen_ent_why {
	enum gen_why rule;
	enum gen_why range;
};

enum gen_ent { GEN_ENT_CFA, GEN_ENT_RA, GEN_ENT_FP };

static const struct gen_ent_why gen_ent_whys[] = {
	[GEN_ENT_CFA] = { GEN_WHY_CFA_RULE, GEN_WHY_CFA_RANGE },
	[GEN_ENT_RA] = { GEN_WHY_RA_RULE, GEN_WHY_RA_RANGE },
	[GEN_ENT_FP] = { GEN_WHY_FP_RULE, GEN_WHY_FP_RANGE },
};

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
static u16 gen_sp(const struct gen_arch *a)
{
	return sfu_abi_info(a->abi)->sp_reg;
}

static u16 gen_fp(const struct gen_arch *a)
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

/* Say why in g->err, and return @ret. */
static int __attribute__((format(printf, 3, 4)))
gen_fail(struct gen *g, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->err->msg, sizeof(g->err->msg), fmt, ap);
	va_end(ap);
	return ret;
}

static int gen_oom(struct gen *g)
{
	return gen_fail(g, -ENOMEM, "out of memory");
}

/* ---- rows to FREs ---- */

static bool gen_fits_s32(s64 v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * @l as a V3 flexible (control word, offset) pair.  A register with no
 * rule of its own (FP unchanged, RA in its register) gives the zero pair.
 */
static enum gen_why gen_flex_pair(const struct gen_arch *a,
				  const struct ehf_loc *l, enum gen_ent ent,
				  u32 *ctrl, s32 *off)
{
	const struct gen_ent_why *w = &gen_ent_whys[ent];
	bool no_rule = l->kind == EHF_RULE_UNSPEC || l->kind == EHF_RULE_SAME;

	*ctrl = 0;
	*off = 0;
	if (ent == GEN_ENT_CFA && l->kind == EHF_RULE_UNSPEC)
		return GEN_WHY_CFA_NONE;
	if (no_rule && (ent == GEN_ENT_FP ||
			(ent == GEN_ENT_RA && a->ra_in_reg)))
		return GEN_WHY_NONE;
	if (ent == GEN_ENT_FP && l->kind == EHF_RULE_UNDEF)
		return GEN_WHY_FP_UNDEF;
	if (l->kind != EHF_RULE_LOC || l->deref > 1 ||
	    (l->cfa_based && !l->deref) || (ent != GEN_ENT_CFA && l->add))
		return w->rule;
	if (!gen_fits_s32(l->off) || l->reg > SFU_MAX_REG)
		return w->range;
	*off = (s32)l->off;
	if (l->cfa_based)
		*ctrl = SFRAME_V3_FLEX_CTRL(0, 1, 0);
	else
		*ctrl = SFRAME_V3_FLEX_CTRL(l->reg, l->deref, 1);
	return GEN_WHY_NONE;
}

/* The CFA offset word: s390x stores it biased and scaled. */
static enum gen_why gen_cfa_word(const struct gen_arch *a, s32 off, s32 *w)
{
	s64 v = off;

	if (a->cfa_scaled) {
		v = SFRAME_S390X_CFA_OFFSET_ENCODE(v);
		if (SFRAME_S390X_CFA_OFFSET_DECODE(v) != off)
			return GEN_WHY_CFA_RANGE;
	}
	*w = (s32)v;
	return GEN_WHY_NONE;
}

static void gen_word(struct sfu_enc_fre *f, s32 w, bool ctrl)
{
	if (ctrl)
		f->ctrl_mask |= 1u << f->nr_words;
	f->words[f->nr_words++] = w;
}

/* A default FDE's RA or FP word; @has is false when the rule is "same". */
static enum gen_why gen_slot_word(const struct gen_arch *a,
				  const struct ehf_loc *l, enum gen_ent ent,
				  const struct gen_mode *m, s32 *w, bool *has)
{
	u32 slot = SFRAME_V3_FLEX_CTRL(0, 1, 0), ctrl;
	enum gen_why why;
	s32 off;

	*has = false;
	why = gen_flex_pair(a, l, ent, &ctrl, &off);
	if (why || !ctrl)
		return why;
	*has = true;
	*w = off;
	if (ctrl == slot) {
		/* An odd s390x V2 word, or a zero RA word, means more. */
		if ((m->v2 && a->v2_reg_words && (off & 1)) ||
		    (ent == GEN_ENT_RA && a->ra_pad && !off))
			return gen_ent_whys[ent].range;
		return GEN_WHY_NONE;
	}
	if (m->v2 && a->v2_reg_words && SFRAME_V3_FLEX_CTRL_REG_P(ctrl) &&
	    !SFRAME_V3_FLEX_CTRL_DEREF_P(ctrl) && !off &&
	    l->reg <= SFU_S390X_MAX_DWARF_REG) {
		*w = SFRAME_V2_S390X_OFFSET_ENCODE_REGNUM(l->reg);
		return GEN_WHY_NONE;
	}
	return ent == GEN_ENT_RA ? GEN_WHY_RA_FLEX : GEN_WHY_FP_FLEX;
}

/*
 * Default FDE: CFA = SP/FP + off; RA at the ABI's fixed offset or in a
 * word of its own (absent: still in its register); FP in the last word.
 */
static enum gen_why gen_default(const struct gen_arch *a,
				const struct ehf_row *row,
				const struct gen_mode *m, struct sfu_enc_fre *f)
{
	const struct ehf_loc *cfa = &row->cfa, *ra = &row->reg[GEN_RA];
	bool ra_has = false, fp_has;
	s32 off, w, ra_w = 0, fp_w;
	enum gen_why why;
	u32 ctrl;

	why = gen_flex_pair(a, cfa, GEN_ENT_CFA, &ctrl, &off);
	if (why)
		return why;
	if (cfa->deref || (cfa->reg != gen_sp(a) && cfa->reg != gen_fp(a)))
		return GEN_WHY_CFA_FLEX;
	f->base = cfa->reg == gen_sp(a) ? SFRAME_BASE_REG_SP :
					  SFRAME_BASE_REG_FP;
	why = gen_cfa_word(a, off, &w);
	if (why)
		return why;
	gen_word(f, w, false);
	if (a->fixed_ra) {
		why = gen_flex_pair(a, ra, GEN_ENT_RA, &ctrl, &off);
		if (why)
			return why;
		if (!ra->cfa_based || ra->off != a->fixed_ra)
			return GEN_WHY_RA_FLEX;
	} else {
		why = gen_slot_word(a, ra, GEN_ENT_RA, m, &ra_w, &ra_has);
		if (why)
			return why;
	}
	why = gen_slot_word(a, &row->reg[GEN_FP], GEN_ENT_FP, m, &fp_w,
			    &fp_has);
	if (why)
		return why;
	if (!a->fixed_ra && (ra_has || fp_has)) {
		if (!ra_has && !a->ra_pad)
			return GEN_WHY_FP_FLEX;
		gen_word(f, ra_has ? ra_w : SFRAME_FRE_RA_OFFSET_INVALID,
			 false);
	}
	if (fp_has)
		gen_word(f, fp_w, false);
	return GEN_WHY_NONE;
}

struct gen_pair {
	u32 ctrl;
	s32 off;
};

static void gen_pair_words(struct sfu_enc_fre *f, const struct gen_pair *p)
{
	gen_word(f, (s32)p->ctrl, true);
	gen_word(f, p->off, false);
}

/*
 * A CFA of *(reg + off) + @k is kept as CFA' = *(reg + off): @l, relative
 * to the CFA, becomes @out, relative to CFA'.
 */
static void gen_cfa_fold(const struct ehf_loc *l, s64 k, struct ehf_loc *out)
{
	*out = *l;
	if (l->kind == EHF_RULE_LOC && l->cfa_based &&
	    __builtin_add_overflow(l->off, k, &out->off))
		out->off = INT64_MAX;	/* out of range: gen_flex_pair says so */
}

/*
 * The module's seven-word row (SFU_FLEX_CTRL_SP) for a CFA of
 * *(reg + off) + @k: every pair written, a zero one meaning "no rule",
 * then the caller's SP relative to *(reg + off).
 */
static enum gen_why gen_flex_sp(const struct gen_arch *a, s64 k,
				struct gen_pair *cfa, const struct gen_pair *ra,
				const struct gen_pair *fp,
				struct sfu_enc_fre *f)
{
	s64 sp = k + sfu_abi_info(a->abi)->sp_off;

	/* A default RA the header fixes would be taken from the wrong CFA. */
	if (!ra->ctrl && a->fixed_ra)
		return GEN_WHY_CFA_RULE;
	if (!gen_fits_s32(sp))
		return GEN_WHY_CFA_RANGE;
	cfa->ctrl |= SFU_FLEX_CTRL_SP;
	gen_pair_words(f, cfa);
	gen_pair_words(f, ra);
	gen_pair_words(f, fp);
	gen_word(f, (s32)sp, false);
	return GEN_WHY_NONE;
}

/* Flexible FDE: (control, offset) pairs for CFA, then RA, then FP. */
static enum gen_why gen_flex(const struct gen_arch *a,
			     const struct ehf_row *row,
			     const struct gen_mode *m, struct sfu_enc_fre *f)
{
	struct gen_pair cfa, ra, fp;
	struct ehf_loc ra_l, fp_l;
	s64 k = row->cfa.add;
	enum gen_why why;

	if (k && !m->sp_word)
		return GEN_WHY_CFA_RULE;
	gen_cfa_fold(&row->reg[GEN_RA], k, &ra_l);
	gen_cfa_fold(&row->reg[GEN_FP], k, &fp_l);
	why = gen_flex_pair(a, &row->cfa, GEN_ENT_CFA, &cfa.ctrl, &cfa.off);
	if (!why)
		why = gen_cfa_word(a, cfa.off, &cfa.off);
	if (!why)
		why = gen_flex_pair(a, &ra_l, GEN_ENT_RA, &ra.ctrl, &ra.off);
	if (!why)
		why = gen_flex_pair(a, &fp_l, GEN_ENT_FP, &fp.ctrl, &fp.off);
	if (why)
		return why;
	if (k)
		return gen_flex_sp(a, k, &cfa, &ra, &fp, f);
	/* RA where the header's fixed offset puts it needs no pair. */
	if (a->fixed_ra && ra_l.kind == EHF_RULE_LOC && ra_l.cfa_based &&
	    ra_l.off == a->fixed_ra)
		ra.ctrl = 0;
	gen_pair_words(f, &cfa);
	if (ra.ctrl)
		gen_pair_words(f, &ra);
	else if (fp.ctrl)
		gen_word(f, SFRAME_FRE_RA_OFFSET_INVALID, true);
	if (fp.ctrl)
		gen_pair_words(f, &fp);
	return GEN_WHY_NONE;
}

/* Row to FRE: GEN_WHY_NONE and @f filled in, or the reason it cannot be. */
static enum gen_why gen_row_fre(const struct gen_arch *a,
				const struct ehf_row *row,
				const struct gen_mode *m,
				struct sfu_enc_fre *f)
{
	memset(f, 0, sizeof(*f));
	if (row->ra_mangled && !a->pauth)
		return GEN_WHY_RA_MANGLED;
	f->mangled = row->ra_mangled;
	/* RA undefined: the outermost frame, a row without data words. */
	if (row->reg[GEN_RA].kind == EHF_RULE_UNDEF)
		return GEN_WHY_NONE;
	return m->flex ? gen_flex(a, row, m, f) : gen_default(a, row, m, f);
}

/* ---- padding between functions ---- */

#define GEN_X86_NOP		0x90
#define GEN_X86_INT3		0xcc
#define GEN_X86_OPSIZE		0x66
#define GEN_X86_CS		0x2e
#define GEN_X86_0F		0x0f
#define GEN_X86_NOPL		0x1f
#define GEN_MODRM_MOD(m)	((m) >> 6)
#define GEN_MODRM_RM(m)		((m) & 7)
#define GEN_MODRM_SIB		4
#define GEN_MODRM_RIP		5
#define GEN_MOD_DISP8		1
#define GEN_MOD_DISP32		2
#define GEN_DISP32		4
#define GEN_A64_NOP		0xd503201fu
#define GEN_A64_INSN		4
#define GEN_S390_NOPR		0x0707u
#define GEN_S390_NOP		0x47000700u
#define GEN_S390_HALF		2

/* x86: nop, int3, and the multi-byte nops (66* [2e] 0f 1f /0, 66 90). */
static u32 gen_x86_pad(const u8 *p, u64 n, bool big)
{
	u64 i = 0, len;
	u8 modrm;

	if (p[0] == GEN_X86_NOP || p[0] == GEN_X86_INT3)
		return 1;
	while (i < n && p[i] == GEN_X86_OPSIZE)
		i++;
	if (i < n && p[i] == GEN_X86_CS)
		i++;
	if (i && i < n && p[i] == GEN_X86_NOP)
		return i + 1;
	if (n - i < 3 || p[i] != GEN_X86_0F || p[i + 1] != GEN_X86_NOPL)
		return 0;
	modrm = p[i + 2];
	len = i + 3;
	if (GEN_MODRM_MOD(modrm) != 3 && GEN_MODRM_RM(modrm) == GEN_MODRM_SIB)
		len++;
	if (GEN_MODRM_MOD(modrm) == GEN_MOD_DISP8)
		len++;
	else if (GEN_MODRM_MOD(modrm) == GEN_MOD_DISP32 ||
		 (!GEN_MODRM_MOD(modrm) && GEN_MODRM_RM(modrm) == GEN_MODRM_RIP))
		len += GEN_DISP32;
	return len <= n ? (u32)len : 0;
}

/* AArch64: nop, or a zero word. */
static u32 gen_a64_pad(const u8 *p, u64 n, bool big)
{
	u32 w;

	if (n < GEN_A64_INSN)
		return 0;
	w = (u32)elf_rd(big, p, GEN_A64_INSN);
	return w == GEN_A64_NOP || !w ? GEN_A64_INSN : 0;
}

/* s390x: nopr (bcr 0,%r7) and nop (bc 0,0). */
static u32 gen_s390_pad(const u8 *p, u64 n, bool big)
{
	if (n >= GEN_S390_HALF &&
	    elf_rd(big, p, GEN_S390_HALF) == GEN_S390_NOPR)
		return GEN_S390_HALF;
	if (n >= 2 * GEN_S390_HALF &&
	    elf_rd(big, p, 2 * GEN_S390_HALF) == GEN_S390_NOP)
		return 2 * GEN_S390_HALF;
	return 0;
}

static const struct gen_arch gen_arches[] = {
	{
		.machine = EM_X86_64,
		.abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
		.fixed_ra = GEN_AMD64_RA_OFF,
		.pad = gen_x86_pad,
	},
	{
		.machine = EM_AARCH64,
		.abi = SFRAME_ABI_AARCH64_ENDIAN_LITTLE,
		.ra_in_reg = true,
		.pauth = true,
		.pad = gen_a64_pad,
	},
	{
		.machine = EM_S390,
		.abi = SFRAME_ABI_S390X_ENDIAN_BIG,
		.ra_in_reg = true,
		.ra_pad = true,
		.cfa_scaled = true,
		.v2_reg_words = true,
		.pad = gen_s390_pad,
	},
};

/* ---- growing arrays ---- */

static void *gen_grow(void *p, u32 *cap, u32 need, size_t size, u32 step)
{
	u32 ncap;
	void *n;

	if (need <= *cap)
		return p;
	/* Grow geometrically, by at least @step. */
	if (__builtin_add_overflow(need, *cap > step ? *cap : step, &ncap))
		return NULL;
	n = realloc(p, (size_t)ncap * size);
	if (n)
		*cap = ncap;
	return n;
}

static int gen_row_cb(const struct ehf_row *row, void *arg)
{
	struct gen *g = arg;
	struct ehf_row *rows;

	rows = gen_grow(g->rows, &g->cap_rows, g->nr_rows + 1, sizeof(*rows),
			GEN_ROWS_GROW);
	if (!rows)
		return -ENOMEM;
	g->rows = rows;
	g->rows[g->nr_rows++] = *row;
	return 0;
}

/* The rows of @fde in g->rows. */
static int gen_collect_rows(struct gen *g, const struct ehf_fde *fde)
{
	static const struct ehf_track track = {
		.reg = { [GEN_RA] = EHF_REG_RA }, .nr = GEN_NR_TRACKED,
	};
	struct ehf_track t = track;

	t.reg[GEN_FP] = gen_fp(g->arch);
	g->nr_rows = 0;
	return ehf_fde_rows(&g->eh, fde, &t, gen_row_cb, g);
}

/* ---- one function ---- */

static bool gen_same_fre(const struct sfu_enc_fre *a,
			 const struct sfu_enc_fre *b)
{
	return a->base == b->base && a->mangled == b->mangled &&
	       a->nr_words == b->nr_words && a->ctrl_mask == b->ctrl_mask &&
	       !memcmp(a->words, b->words, a->nr_words * sizeof(a->words[0]));
}

/* The first row in [0, nr) that @flex cannot describe, and why. */
static u32 gen_first_bad(struct gen *g, const struct gen_mode *m,
			 enum gen_why *why)
{
	struct sfu_enc_fre f;
	u32 i;

	*why = GEN_WHY_NONE;
	for (i = 0; i < g->nr_rows; i++) {
		*why = gen_row_fre(g->arch, &g->rows[i], m, &f);
		if (*why)
			return i;
	}
	return i;
}

/* Encode rows [0, @cut) of the current function into @d's FREs. */
static int gen_fres(struct gen *g, struct gen_fde *d, u32 cut,
		    const struct gen_mode *m)
{
	struct sfu_enc_fre f, *fres, *prev = NULL;
	u32 i;

	d->fre_first = g->nr_fres;
	for (i = 0; i < cut; i++) {
		gen_row_fre(g->arch, &g->rows[i], m, &f);
		if (prev && gen_same_fre(prev, &f))
			continue;
		if (d->nr_fres == SFU_MAX_FDE_FRES) {
			d->why = GEN_WHY_FRES;
			d->why_pc = g->rows[i].pc;
			d->size = g->rows[i].pc - d->start;
			break;
		}
		fres = gen_grow(g->fres, &g->cap_fres, g->nr_fres + 1,
				sizeof(*fres), GEN_FRES_GROW);
		if (!fres)
			return -ENOMEM;
		g->fres = fres;
		f.start = (u32)(g->rows[i].pc - d->start);
		g->fres[g->nr_fres] = f;
		prev = &g->fres[g->nr_fres++];
		d->nr_fres++;
	}
	return 0;
}

/* Choose the FDE type and where the description ends. */
static int gen_describe(struct gen *g, struct gen_fde *d)
{
	struct gen_mode m = { .v2 = g->o.version == SFRAME_VERSION_2 };
	struct gen_mode mf = { .flex = true, .sp_word = g->o.sp_word };
	enum gen_why why_def, why_flex;
	u32 cut, cut_flex;

	cut = gen_first_bad(g, &m, &why_def);
	d->why = why_def;
	if (cut < g->nr_rows && !m.v2) {
		cut_flex = gen_first_bad(g, &mf, &why_flex);
		if (cut_flex > cut) {
			m = mf;
			cut = cut_flex;
			d->why = why_flex;
		}
	}
	if (cut < g->nr_rows) {
		d->why_pc = g->rows[cut].pc;
		d->size = g->rows[cut].pc - d->start;
	}
	if (!cut)
		return 0;
	d->fde_type = m.flex ? SFRAME_FDE_TYPE_FLEX : SFRAME_FDE_TYPE_DEFAULT;
	d->emitted = true;
	return gen_fres(g, d, cut, &m);
}

/* A function left out for an error in its CFI program: tell the caller. */
static void gen_warn_cfi(struct gen *g, const struct ehf_fde *fde)
{
	char msg[GEN_MSG_MAX];

	if (!g->o.warn)
		return;
	snprintf(msg, sizeof(msg),
		 "%s: warning: .eh_frame+0x%" PRIx64
		 ": %s; function at 0x%" PRIx64 " left out",
		 g->o.in, g->eh.err.off, g->eh.err.what, fde->pc_begin);
	g->o.warn(msg, g->o.warn_arg);
}

/* ---- PLT ---- */

/*
 * ld's x86-64 lazy PLT: after PLT0, 16-byte entries whose CFA is
 * rsp + 8 + (((rip & 15) >= T) << 3): 8 until the entry's push, 16 after.
 * T is 11 for the classic entry (jmp *GOT; push n; jmp PLT0), 10 with
 * the IBT layout.  SFrame says that with a PCMASK FDE.
 */
#define GEN_PLT_ENTRY		16
#define GEN_PLT_CFA_IN		8
#define GEN_PLT_CFA_PUSHED	16
#define GEN_DW_OP_LIT0		0x30
#define GEN_PLT_LIT_AT		6

static const u8 gen_plt_expr[] = {
	0x77, 0x08,		/* DW_OP_breg7 (rsp): 8 */
	0x80, 0x00,		/* DW_OP_breg16 (rip): 0 */
	0x3f,			/* DW_OP_lit15 */
	0x1a,			/* DW_OP_and */
	0x00,			/* DW_OP_lit<T> */
	0x2a,			/* DW_OP_ge */
	0x33,			/* DW_OP_lit3 */
	0x24,			/* DW_OP_shl */
	0x22,			/* DW_OP_plus */
};

/* T if @l is the PLT's CFA expression, else 0. */
static u32 gen_plt_threshold(const struct gen *g, const struct ehf_loc *l)
{
	const u8 *e = g->eh.data + l->expr;
	u32 t, i;

	if (g->arch->machine != EM_X86_64 || l->kind != EHF_RULE_COMPLEX ||
	    l->expr_len != sizeof(gen_plt_expr) ||
	    l->expr > g->eh.size || g->eh.size - l->expr < l->expr_len)
		return 0;
	for (i = 0; i < sizeof(gen_plt_expr); i++)
		if (i != GEN_PLT_LIT_AT && e[i] != gen_plt_expr[i])
			return 0;
	t = e[GEN_PLT_LIT_AT] - GEN_DW_OP_LIT0;
	return t && t < GEN_PLT_ENTRY ? t : 0;
}

static struct gen_fde *gen_new_fde(struct gen *g)
{
	struct gen_fde *d;

	d = gen_grow(g->fdes, &g->cap_fdes, g->nr_fdes + 1, sizeof(*d),
		     GEN_FDES_GROW);
	if (!d)
		return NULL;
	g->fdes = d;
	d = &g->fdes[g->nr_fdes++];
	memset(d, 0, sizeof(*d));
	return d;
}

/*
 * A function cut at a last row with the PLT expression, on a 16-byte
 * boundary: the rest becomes a PCMASK FDE (a new one, counting no CFI
 * bytes of its own, if the rows before it were emitted).
 */
static int gen_plt(struct gen *g, u32 idx)
{
	struct gen_fde *d = &g->fdes[idx], *p;
	const struct ehf_row *row = &g->rows[g->nr_rows - 1];
	struct sfu_enc_fre *fres;
	u32 t;

	if (!d->why || d->why_pc != row->pc || row->pc % GEN_PLT_ENTRY)
		return 0;
	t = gen_plt_threshold(g, &row->cfa);
	if (!t)
		return 0;
	fres = gen_grow(g->fres, &g->cap_fres, g->nr_fres + 2, sizeof(*fres),
			GEN_FRES_GROW);
	if (!fres)
		return -ENOMEM;
	g->fres = fres;
	p = d;
	if (d->emitted) {
		p = gen_new_fde(g);
		if (!p)
			return -ENOMEM;
		d = &g->fdes[idx];
		*p = *d;
		d->why = GEN_WHY_NONE;
		p->full_size = 0;
	}
	p->start = row->pc;
	p->size = d->start + d->full_size - row->pc;
	p->pc_type = SFRAME_FDE_TYPE_PCMASK;
	p->rep_size = GEN_PLT_ENTRY;
	p->fde_type = SFRAME_FDE_TYPE_DEFAULT;
	p->why = GEN_WHY_NONE;
	p->emitted = true;
	p->fre_first = g->nr_fres;
	p->nr_fres = 2;
	fres = &g->fres[g->nr_fres];
	memset(fres, 0, 2 * sizeof(*fres));
	fres[0].base = SFRAME_BASE_REG_SP;
	fres[0].nr_words = 1;
	fres[0].words[0] = GEN_PLT_CFA_IN;
	fres[1].start = t;
	fres[1].base = SFRAME_BASE_REG_SP;
	fres[1].nr_words = 1;
	fres[1].words[0] = GEN_PLT_CFA_PUSHED;
	g->nr_fres += 2;
	g->nr_plt++;
	return 0;
}

static int gen_function(struct gen *g, const struct ehf_fde *fde)
{
	u32 idx = g->nr_fdes;
	struct gen_fde *d;
	int ret;

	g->nr_eh_fdes++;
	d = gen_new_fde(g);
	if (!d)
		return -ENOMEM;
	d->start = fde->pc_begin;
	d->size = fde->pc_range;
	d->full_size = fde->pc_range;
	d->eh_off = fde->off;
	d->why_pc = fde->pc_begin;
	d->signal = fde->cie.signal && g->o.version == SFRAME_VERSION_3;
	d->pc_type = SFRAME_FDE_TYPE_PCINC;
	if (g->arch->pauth && fde->cie.bkey)
		d->pauth_key = SFRAME_AARCH64_PAUTH_KEY_B;
	if (!fde->pc_range) {
		d->why = GEN_WHY_EMPTY;
		return 0;
	}
	if (fde->pc_range > UINT32_MAX) {
		d->why = GEN_WHY_SIZE;
		return 0;
	}
	ret = gen_collect_rows(g, fde);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		gen_warn_cfi(g, fde);
		d->why = GEN_WHY_CFI;
		return 0;
	}
	ret = gen_describe(g, d);
	if (!ret)
		ret = gen_plt(g, idx);
	return ret;
}

/* ---- the whole section ---- */

static int gen_cmp_fde(const void *pa, const void *pb)
{
	const struct gen_fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->eh_off < b->eh_off ? -1 : a->eh_off > b->eh_off;
}

/* Sort by start and drop what overlaps an earlier emitted function. */
static void gen_sort(struct gen *g)
{
	u64 end = 0;
	bool any = false;
	u32 i;

	qsort(g->fdes, g->nr_fdes, sizeof(*g->fdes), gen_cmp_fde);
	for (i = 0; i < g->nr_fdes; i++) {
		if (!g->fdes[i].emitted)
			continue;
		if (any && g->fdes[i].start < end) {
			g->fdes[i].emitted = false;
			g->fdes[i].why = GEN_WHY_OVERLAP;
			g->fdes[i].why_pc = g->fdes[i].start;
			continue;
		}
		end = g->fdes[i].start + g->fdes[i].size;
		any = true;
	}
}

typedef int (*gen_fde_fn)(struct gen *g, const struct ehf_fde *fde);

/* Call @fn for every FDE of .eh_frame. */
static int gen_read(struct gen *g, gen_fde_fn fn)
{
	struct ehf_iter it;
	struct ehf_fde fde;
	int ret;

	ehf_iter_init(&it);
	while ((ret = ehf_next_fde(&g->eh, &it, &fde)) == 1) {
		ret = fn(g, &fde);
		if (ret)
			break;
	}
	if (ret == -ENOMEM)
		return gen_oom(g);
	if (ret)
		gen_fail(g, ret, "%s: .eh_frame+0x%" PRIx64 ": %s", g->o.in,
			 g->eh.err.off, g->eh.err.what);
	return ret;
}

/* V2 stores function starts in 32 bits, relative to their field. */
static int gen_check_v2(struct gen *g, const struct sfu_enc_fde *fdes, u32 n)
{
	u64 field = g->o.vaddr + sizeof(struct sframe_header);
	s64 rel;
	u32 i;

	if (g->o.version != SFRAME_VERSION_2)
		return 0;
	for (i = 0; i < n; i++, field += sizeof(struct sframe_fde_v2)) {
		rel = (s64)(fdes[i].start - field);
		if (rel < INT32_MIN || rel > GEN_FDE_V2_ANCHOR_MAX)
			return gen_fail(g, -ERANGE,
					"%s: function at 0x%" PRIx64
					" is too far from a V2 section at 0x%"
					PRIx64, g->o.in, fdes[i].start,
					g->o.vaddr);
	}
	return 0;
}

static void gen_enc_params(const struct gen *g, struct sfu_enc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->version = g->o.version;
	p->abi = g->arch->abi;
	p->flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	p->fixed_fp = g->arch->fixed_fp;
	p->fixed_ra = g->arch->fixed_ra;
	p->vaddr = g->o.vaddr;
	p->fre_type = SFU_ENC_AUTO;
	p->word_size = SFU_ENC_AUTO;
}

static u32 gen_enc_fdes(const struct gen *g, struct sfu_enc_fde *out)
{
	const struct gen_fde *d;
	u32 i, n = 0;

	for (i = 0; i < g->nr_fdes; i++) {
		d = &g->fdes[i];
		if (!d->emitted)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].start = d->start;
		out[n].size = (u32)d->size;
		out[n].pc_type = d->pc_type;
		out[n].rep_size = d->rep_size;
		out[n].pauth_key = d->pauth_key;
		out[n].fde_type = d->fde_type;
		out[n].signal = d->signal;
		out[n].nr_fres = d->nr_fres;
		out[n].fres = &g->fres[d->fre_first];
		n++;
	}
	return n;
}

/* ---- compaction ---- */

/* Neighbours merge while one FRE start byte still reaches every row. */
#define GEN_MERGE_SPAN		256
#define GEN_MERGE_GAP_MAX	32

/* Whether [@from, @to) holds nothing but padding instructions. */
static bool gen_is_padding(const struct gen *g, u64 from, u64 to)
{
	u64 at = 0, n = to - from, left;
	const u8 *p = elf_at_vaddr(g->file, from, &left);
	u32 len;

	if (!p || left < n)
		return false;
	while (at < n) {
		len = g->arch->pad(p + at, n - at, g->elf.big);
		if (!len)
			return false;
		at += len;
	}
	return true;
}

/* @b can join the FDE @a ends with: same kind, close, padding between. */
static bool gen_can_merge(const struct gen *g, const struct sfu_enc_fde *a,
			  const struct sfu_enc_fde *b)
{
	u64 end = a->start + a->size;

	if (a->pc_type != SFRAME_FDE_TYPE_PCINC || b->pc_type != a->pc_type ||
	    a->fde_type != b->fde_type || a->signal || b->signal ||
	    a->pauth_key != b->pauth_key || b->start < end ||
	    b->start - end > GEN_MERGE_GAP_MAX ||
	    b->start + b->size - a->start > GEN_MERGE_SPAN ||
	    a->nr_fres + b->nr_fres > SFU_MAX_FDE_FRES)
		return false;
	return b->start == end || gen_is_padding(g, end, b->start);
}

/* Append @b's rows to @a's (the last ones in @store). */
static void gen_merge_into(struct gen *g, struct sfu_enc_fde *a,
			   const struct sfu_enc_fde *b, struct sfu_enc_fre *store)
{
	u32 shift = (u32)(b->start - a->start), i = 0;
	struct sfu_enc_fre *to = &store[a->nr_fres];

	g->pad_bytes += b->start - (a->start + a->size);
	/* A first row that only repeats the rule in force adds nothing. */
	if (b->start == a->start + a->size && a->nr_fres && b->nr_fres &&
	    gen_same_fre(to - 1, &b->fres[0]))
		i = 1;
	for (; i < b->nr_fres; i++, to++) {
		*to = b->fres[i];
		to->start += shift;
	}
	a->nr_fres = (u32)(to - store);
	a->size = (u32)(b->start + b->size - a->start);
	g->merged++;
}

/*
 * Merge neighbouring functions into one FDE where only padding lies
 * between them: each FDE costs 16 bytes of index in V3, and the padding,
 * never executed, may as well carry the rule in force before it.  The
 * rows move to @storep, which the caller frees.
 */
static int gen_merge(struct gen *g, struct sfu_enc_fde *fdes, u32 *np,
		     struct sfu_enc_fre **storep)
{
	struct sfu_enc_fre *store, *group = NULL;
	u64 total = 0;
	u32 i, w = 0;

	for (i = 0; i < *np; i++)
		total += fdes[i].nr_fres;
	store = calloc(total + 1, sizeof(*store));
	if (!store)
		return gen_oom(g);
	for (i = 0; i < *np; i++) {
		/* The rows of the FDE being built are the last in @store. */
		if (w && gen_can_merge(g, &fdes[w - 1], &fdes[i])) {
			gen_merge_into(g, &fdes[w - 1], &fdes[i], group);
			continue;
		}
		group = w ? group + fdes[w - 1].nr_fres : store;
		fdes[w] = fdes[i];
		memcpy(group, fdes[i].fres, fdes[i].nr_fres * sizeof(*group));
		fdes[w].fres = group;
		w++;
	}
	*np = w;
	*storep = store;
	return 0;
}

#define GEN_FNV_OFFSET		0xcbf29ce484222325ull
#define GEN_FNV_PRIME		0x100000001b3ull

static u64 gen_hash(u64 h, const void *p, size_t n)
{
	const u8 *b = p;

	while (n--)
		h = (h ^ *b++) * GEN_FNV_PRIME;
	return h;
}

/* What must be equal for two FDEs to share one copy of their rows. */
static u64 gen_rows_hash(const struct sfu_enc_fde *d)
{
	u8 attr[] = { d->pc_type, d->rep_size, d->fde_type, d->signal,
		      d->pauth_key };
	const struct sfu_enc_fre *f;
	u64 h = GEN_FNV_OFFSET;
	u32 i;

	h = gen_hash(h, attr, sizeof(attr));
	h = gen_hash(h, &d->nr_fres, sizeof(d->nr_fres));
	for (i = 0; i < d->nr_fres; i++) {
		f = &d->fres[i];
		h = gen_hash(h, &f->start, sizeof(f->start));
		h = gen_hash(h, &f->base, sizeof(f->base));
		h = gen_hash(h, &f->mangled, sizeof(f->mangled));
		h = gen_hash(h, &f->ctrl_mask, sizeof(f->ctrl_mask));
		h = gen_hash(h, f->words, f->nr_words * sizeof(f->words[0]));
	}
	return h;
}

static bool gen_same_rows(const struct sfu_enc_fde *a,
			  const struct sfu_enc_fde *b)
{
	u32 i;

	if (a->pc_type != b->pc_type || a->rep_size != b->rep_size ||
	    a->fde_type != b->fde_type || a->signal != b->signal ||
	    a->pauth_key != b->pauth_key || a->nr_fres != b->nr_fres)
		return false;
	for (i = 0; i < a->nr_fres; i++)
		if (a->fres[i].start != b->fres[i].start ||
		    !gen_same_fre(&a->fres[i], &b->fres[i]))
			return false;
	return true;
}

/*
 * Store identical row sequences once: each FDE whose rows an earlier FDE
 * already has points at that FDE's copy.  Open addressing on a table of
 * FDE indexes twice the size of the FDE count.
 */
static int gen_share(struct gen *g, struct sfu_enc_fde *fdes, u32 n)
{
	u32 cap = 2 * n + 1, *slot, i, at;

	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return gen_oom(g);
	for (i = 0; i < n; i++) {
		at = gen_rows_hash(&fdes[i]) % cap;
		while (slot[at] && !gen_same_rows(&fdes[slot[at] - 1], &fdes[i]))
			at = (at + 1) % cap;
		if (slot[at]) {
			fdes[i].share = slot[at];
			g->shared_fdes++;
		} else {
			slot[at] = i + 1;
		}
	}
	free(slot);
	return 0;
}

/* Encode @fdes, compacted unless told not to, into a buffer to free. */
static int gen_encode_fdes(struct gen *g, struct sfu_enc_fde *fdes, u32 n,
			   struct sfu_enc_params *p, u8 **bufp)
{
	s64 len;
	int ret;

	if (!g->o.no_compact)
		p->tight_starts = true;
	if (!g->o.no_compact && g->o.share_rows) {
		ret = gen_share(g, fdes, n);
		if (ret)
			return ret;
	}
	sfu_encode_sizes(p, fdes, n, &g->sizes);
	len = sfu_encode(p, fdes, n, NULL, 0);
	if (len < 0)
		return gen_fail(g, (int)len, "%s: cannot encode: %s", g->o.in,
				strerror((int)-len));
	*bufp = malloc(len);
	if (!*bufp)
		return gen_oom(g);
	sfu_encode(p, fdes, n, *bufp, len);
	g->out_bytes = len;
	return 0;
}

/* The section generated from .eh_frame. */
static int gen_encode(struct gen *g, u8 **bufp)
{
	struct sfu_enc_fde *fdes = calloc(g->nr_fdes + 1, sizeof(*fdes));
	struct sfu_enc_params p;
	struct sfu_enc_fre *merged = NULL;
	u32 n;
	int ret;

	if (!fdes)
		return gen_oom(g);
	n = gen_enc_fdes(g, fdes);
	gen_enc_params(g, &p);
	ret = gen_check_v2(g, fdes, n);
	if (!ret)
		g->plain_bytes = sfu_encode(&p, fdes, n, NULL, 0);
	if (!ret && !g->o.no_compact)
		ret = gen_merge(g, fdes, &n, &merged);
	if (!ret)
		ret = gen_encode_fdes(g, fdes, n, &p, bufp);
	free(merged);
	free(fdes);
	return ret;
}

/* ---- --from-v1 ---- */

/* The counts that do not come from the functions one by one. */
static void gen_totals(const struct gen *g, struct gen_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->abi = sfu_abi_info(g->arch->abi)->name;
	s->eh_bytes = g->eh.size;
	s->nr_cies = g->eh.nr_cies;
	s->nr_eh_fdes = g->nr_eh_fdes;
	s->nr_fres = g->nr_fres;
	s->nr_plt = g->nr_plt;
	s->plain_bytes = g->plain_bytes;
	s->shared_fdes = g->shared_fdes;
	s->sizes = g->sizes;
	s->merged = g->merged;
	s->pad_bytes = g->pad_bytes;
}

/*
 * --from-v1: the file's own SFrame section (binutils 2.40 writes V1, but
 * any version is read), decoded and written again as V3, into @r.
 */
static int gen_reencode(struct gen *g, struct gen_result *r)
{
	char msg[GEN_ERR_MAX];
	struct sfu_enc_params p;
	struct elf_sframe_loc loc;
	struct reenc re;
	int ret;

	if (elf_find_sframe(g->file, &loc) || !loc.machine)
		return gen_fail(g, -ENOENT, "%s: no SFrame section to upgrade",
				g->o.in);
	ret = reenc_load(loc.data, loc.size, loc.vaddr, &re, msg,
			 sizeof(msg));
	if (ret)
		return gen_fail(g, ret, "%s: %s: %s", g->o.in, loc.name, msg);
	reenc_v3_params(&re, g->o.vaddr, &p);
	g->plain_bytes = sfu_encode(&p, re.fdes, re.nr_fdes, NULL, 0);
	ret = gen_encode_fdes(g, re.fdes, re.nr_fdes, &p, &r->buf);
	if (!ret) {
		r->len = g->out_bytes;
		r->vaddr = g->o.vaddr;
		gen_totals(g, &r->stats);
		r->stats.old_version = re.version;
		r->stats.old_bytes = loc.size;
		r->stats.old_fdes = re.nr_fdes;
	}
	reenc_free(&re);
	return ret;
}

/* ---- what the section describes, and what not ---- */

/* The counts of functions written, cut short and left out. */
static void gen_count(const struct gen *g, struct gen_stats *s)
{
	const struct gen_fde *d;
	u32 i;

	gen_totals(g, s);
	for (i = 0; i < g->nr_fdes; i++) {
		d = &g->fdes[i];
		if (d->why != GEN_WHY_EMPTY)
			s->with_cfi += d->full_size;
		if (!d->emitted) {
			s->skipped[d->why]++;
			s->nr_skipped++;
			continue;
		}
		if (d->fde_type == SFRAME_FDE_TYPE_FLEX)
			s->nr_flex++;
		else
			s->nr_default++;
		s->covered += d->size;
		if (d->why) {
			s->cut[d->why]++;
			s->nr_cut++;
		}
	}
}

/* The functions left out or cut short, for -v. */
static int gen_list_funcs(struct gen *g, struct gen_result *r)
{
	const struct gen_fde *d;
	struct gen_func *fn;
	u32 i;

	r->funcs = calloc(g->nr_fdes + 1, sizeof(*r->funcs));
	if (!r->funcs)
		return gen_oom(g);
	for (i = 0; i < g->nr_fdes; i++) {
		d = &g->fdes[i];
		if (d->why == GEN_WHY_NONE || d->why == GEN_WHY_EMPTY)
			continue;
		fn = &r->funcs[r->nr_funcs++];
		fn->start = d->start;
		fn->end = d->start + d->full_size;
		fn->eh_off = d->eh_off;
		fn->at = d->why_pc;
		fn->cut = d->emitted;
		fn->why = d->why;
	}
	return 0;
}

/* ---- --dump-rows ---- */

static void gen_reg_text(const struct gen_arch *a, u32 reg, char *buf,
			 size_t len)
{
	if (reg == gen_sp(a))
		snprintf(buf, len, "sp");
	else if (reg == gen_fp(a))
		snprintf(buf, len, "fp");
	else
		snprintf(buf, len, "r%u", reg);
}

/* @l in the words of sfu_rule_format(); "?exp" where it has none. */
static void gen_loc_text(const struct gen_arch *a, const struct ehf_loc *l,
			 char *buf, size_t len)
{
	char base[GEN_REG_TEXT_MAX];

	if (l->kind == EHF_RULE_UNSPEC || l->kind == EHF_RULE_SAME) {
		snprintf(buf, len, "same");
		return;
	}
	if (l->kind == EHF_RULE_UNDEF) {
		snprintf(buf, len, "undef");
		return;
	}
	if (l->kind != EHF_RULE_LOC || l->deref > 1) {
		snprintf(buf, len, "?exp");
		return;
	}
	if (l->cfa_based)
		snprintf(base, sizeof(base), "cfa");
	else
		gen_reg_text(a, l->reg, base, sizeof(base));
	if (l->deref && l->add)
		snprintf(buf, len, "*(%s%+" PRId64 ")%+" PRId64, base, l->off,
			 l->add);
	else if (l->deref)
		snprintf(buf, len, "*(%s%+" PRId64 ")", base, l->off);
	else if (l->off)
		snprintf(buf, len, "%s%+" PRId64, base, l->off);
	else
		snprintf(buf, len, "%s", base);
}

/* @r's rule in the words of sfu_rule_format(). */
static void gen_rule_text(const struct gen_arch *a, const struct ehf_row *r,
			  char *buf, size_t len)
{
	char cfa[GEN_TEXT_MAX], ra[GEN_TEXT_MAX], fp[GEN_TEXT_MAX];

	if (r->reg[GEN_RA].kind == EHF_RULE_UNDEF) {
		snprintf(buf, len, "outermost");
		return;
	}
	if (r->cfa.kind == EHF_RULE_UNSPEC)
		snprintf(cfa, sizeof(cfa), "?");
	else
		gen_loc_text(a, &r->cfa, cfa, sizeof(cfa));
	gen_loc_text(a, &r->reg[GEN_RA], ra, sizeof(ra));
	gen_loc_text(a, &r->reg[GEN_FP], fp, sizeof(fp));
	snprintf(buf, len, "cfa=%s ra=%s fp=%s", cfa, ra, fp);
}

static void gen_emit_row(const struct gen *g, u64 start, u64 end,
			 const char *rule)
{
	struct gen_row row = { .start = start, .end = end, .rule = rule };

	g->row_fn(&row, g->row_arg);
}

static void gen_dump_plain(const struct gen *g, const struct ehf_row *r)
{
	char rule[GEN_RULE_TEXT_MAX];

	gen_rule_text(g->arch, r, rule, sizeof(rule));
	gen_emit_row(g, r->pc, r->end, rule);
}

/* ld's PLT rule, threshold @t, entry by entry, as two plain rows each. */
static void gen_dump_plt(const struct gen *g, const struct ehf_row *r, u32 t)
{
	struct ehf_row part = *r;
	u64 blk;

	for (blk = r->pc - r->pc % GEN_PLT_ENTRY; blk < r->end;
	     blk += GEN_PLT_ENTRY) {
		part.cfa.kind = EHF_RULE_LOC;
		part.cfa.reg = gen_sp(g->arch);
		part.cfa.off = GEN_PLT_CFA_IN;
		part.pc = blk > r->pc ? blk : r->pc;
		part.end = blk + t < r->end ? blk + t : r->end;
		if (part.pc < part.end)
			gen_dump_plain(g, &part);
		part.cfa.off = GEN_PLT_CFA_PUSHED;
		part.pc = blk + t > r->pc ? blk + t : r->pc;
		part.end = blk + GEN_PLT_ENTRY < r->end ?
			   blk + GEN_PLT_ENTRY : r->end;
		if (part.pc < part.end)
			gen_dump_plain(g, &part);
	}
}

static void gen_dump_row(const struct gen *g, const struct ehf_row *r)
{
	u32 t = gen_plt_threshold(g, &r->cfa);

	if (t)
		gen_dump_plt(g, r, t);
	else
		gen_dump_plain(g, r);
}

static int gen_dump_fde(struct gen *g, const struct ehf_fde *fde)
{
	u32 i;
	int ret;

	if (!fde->pc_range)
		return 0;
	ret = gen_collect_rows(g, fde);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		gen_emit_row(g, fde->pc_begin, fde->pc_begin + fde->pc_range,
			     "?cfi-error");
		return 0;
	}
	for (i = 0; i < g->nr_rows; i++)
		gen_dump_row(g, &g->rows[i]);
	return 0;
}

/* ---- the entry points ---- */

static int gen_pick_arch(struct gen *g)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gen_arches); i++) {
		if (gen_arches[i].machine != g->elf.machine)
			continue;
		g->arch = &gen_arches[i];
		return 0;
	}
	return gen_fail(g, -EOPNOTSUPP, "%s: e_machine %u is not supported yet",
			g->o.in, g->elf.machine);
}

/* Check the ELF file loaded at @f and pick its architecture. */
static int gen_open_loaded(struct gen *g, const struct elf_file *f)
{
	struct ehf_error err;
	int ret;

	ret = ehf_elf_open(f, &g->elf, &err);
	if (ret)
		return gen_fail(g, ret, "%s: %s", g->o.in, err.what);
	if (g->elf.type != ET_EXEC && g->elf.type != ET_DYN)
		return gen_fail(g, -ENOEXEC,
				"%s: not an executable or shared object",
				g->o.in);
	return gen_pick_arch(g);
}

/* Start on the ELF file @f for @o; gen_end() after, even on failure. */
static int gen_begin(struct gen *g, const struct gen_opts *o,
		     const struct elf_file *f, struct gen_err *err)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->o = *o;
	g->file = f;
	g->err = err;
	err->msg[0] = '\0';
	ret = gen_open_loaded(g, f);
	if (!ret)
		ehf_init(&g->eh, &g->elf);
	return ret;
}

static void gen_end(struct gen *g)
{
	free(g->fdes);
	free(g->fres);
	free(g->rows);
	ehf_destroy(&g->eh);
}

/* GEN_VADDR_PAST_IMAGE: the address `sframe-gen --embed` gives it. */
static int gen_place(struct gen *g)
{
	struct elf_embed plan;
	int ret;

	if (g->o.vaddr != GEN_VADDR_PAST_IMAGE)
		return 0;
	ret = elf_embed_plan(g->file, &plan);
	if (ret)
		return gen_fail(g, ret, "%s: %s", g->o.in, plan.err);
	g->o.vaddr = plan.sframe_vaddr;
	return 0;
}

/* The section from .eh_frame, in a buffer to free. */
static int gen_make(struct gen *g, u8 **bufp)
{
	int ret;

	ret = gen_read(g, gen_function);
	if (ret)
		return ret;
	gen_sort(g);
	return gen_encode(g, bufp);
}

/* A new section from the CFI into @r, with its counts and left-outs. */
static int gen_new_section(struct gen *g, struct gen_result *r)
{
	int ret;

	ret = gen_make(g, &r->buf);
	if (!ret)
		ret = gen_list_funcs(g, r);
	if (ret)
		return ret;
	r->len = g->out_bytes;
	r->vaddr = g->o.vaddr;
	gen_count(g, &r->stats);
	return 0;
}

typedef int (*gen_step_fn)(struct gen *g, struct gen_result *r);

/* Read the file's CFI, place the section, then @step makes @r. */
static int gen_call(const struct gen_opts *o, const struct elf_file *f,
		    struct gen_result *r, struct gen_err *err,
		    gen_step_fn step)
{
	struct gen g;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = gen_begin(&g, o, f, err);
	if (!ret)
		ret = gen_place(&g);
	if (!ret)
		ret = step(&g, r);
	if (ret)
		gen_result_free(r);
	gen_end(&g);
	return ret;
}

/**
 * gen_generate() - SFrame for an ELF file's .eh_frame, and what it covers
 * @o: what to generate; @o->in names the file in messages, @o->vaddr is
 *	where the section is encoded for (GEN_VADDR_PAST_IMAGE: where
 *	`sframe-gen --embed` puts it, past the file's last segment)
 * @f: the file's bytes
 * @r: the section, its counts, and the functions left out or cut short
 * @err: why it failed
 *
 * The section `sframe-gen` writes, even for a file that has an SFrame
 * section of its own.  Functions left out for errors in their CFI are
 * told to @o->warn as they are met.
 *
 * Return: 0 and @r to free with gen_result_free(), or a negative error
 * code with @err's message (and @r empty).
 */
int gen_generate(const struct gen_opts *o, const struct elf_file *f,
		 struct gen_result *r, struct gen_err *err)
{
	return gen_call(o, f, r, err, gen_new_section);
}

/**
 * gen_upgrade() - an ELF file's own SFrame section, as V3
 * @o: as for gen_generate(); @o->version is ignored
 * @f: the file's bytes
 * @r: the section; of its counts, the old section's (old_version,
 *	old_bytes, old_fdes), plain_bytes and shared_fdes
 * @err: why it failed
 *
 * For `sframe-gen --from-v1`: binutils 2.40 writes V1, but any version is
 * read.  The file must still be one gen_generate() accepts.
 *
 * Return: 0 and @r to free with gen_result_free(), or a negative error
 * code with @err's message (and @r empty).
 */
int gen_upgrade(const struct gen_opts *o, const struct elf_file *f,
		struct gen_result *r, struct gen_err *err)
{
	return gen_call(o, f, r, err, gen_reencode);
}

/**
 * gen_result_free() - free what gen_generate() or gen_upgrade() made
 * @r: the result, left empty
 */
void gen_result_free(struct gen_result *r)
{
	free(r->buf);
	free(r->funcs);
	memset(r, 0, sizeof(*r));
}

/**
 * gen_dump_rows() - the CFI interpreter's rows, for `sframe-gen --dump-rows`
 * @o: @o->in names the file in messages; nothing else is used
 * @f: the file's bytes
 * @fn: called with each row, in .eh_frame's order; a function whose CFI
 *	cannot be read gives one row over its range, rule "?cfi-error"
 * @arg: @fn's
 * @err: why it failed
 *
 * Return: 0, or a negative error code with @err's message.
 */
int gen_dump_rows(const struct gen_opts *o, const struct elf_file *f,
		  gen_row_fn fn, void *arg, struct gen_err *err)
{
	struct gen g;
	int ret;

	ret = gen_begin(&g, o, f, err);
	if (!ret) {
		g.row_fn = fn;
		g.row_arg = arg;
		ret = gen_read(&g, gen_dump_fde);
	}
	gen_end(&g);
	return ret;
}

/**
 * gen_section() - SFrame for an ELF file's .eh_frame, in memory
 * @o: options as for gen_generate()
 * @f: the file's bytes
 * @bufp: the section, to free()
 * @lenp: its length
 * @vaddrp: the address it is encoded for
 * @err: why it failed
 *
 * The same section `sframe-gen -o` writes, for tools that register it
 * rather than write it (sframectl), unless the file has SFrame already.
 *
 * Return: 0, -EEXIST if the file has an SFrame section of its own, or
 * another negative error code; on failure, @err's message says why.
 */
int gen_section(const struct gen_opts *o, const struct elf_file *f,
		u8 **bufp, u64 *lenp, u64 *vaddrp, struct gen_err *err)
{
	struct elf_sframe_loc loc;
	struct gen g;
	int ret;

	*bufp = NULL;
	ret = gen_begin(&g, o, f, err);
	if (!ret && !elf_find_sframe(f, &loc) && loc.machine)
		ret = gen_fail(&g, -EEXIST, "%s: has SFrame of its own",
			       o->in);
	if (!ret)
		ret = gen_place(&g);
	if (!ret)
		ret = gen_make(&g, bufp);
	if (!ret) {
		*lenp = g.out_bytes;
		*vaddrp = g.o.vaddr;
	}
	gen_end(&g);
	return ret;
}
