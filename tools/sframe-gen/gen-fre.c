// SPDX-License-Identifier: GPL-2.0
/*
 * One row of .eh_frame as one SFrame FRE: the default encoding of the
 * CFA, RA and FP words per ABI, V3's flexible words where the default
 * cannot hold the rule, V2's s390x register words, or the reason the row
 * cannot be expressed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen-internal.h"

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
enum gen_why gen_row_fre(const struct gen_arch *a, const struct ehf_row *row,
			 const struct gen_mode *m, struct sfu_enc_fre *f)
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

