// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame rules: turn one frame row entry into the arch-neutral description
 * of how to find the CFA, the return address and the frame pointer.
 *
 * Default FDEs (all versions) store signed offsets whose meaning depends on
 * the ABI; V3 flexible FDEs store (control word, offset) pairs.  Both end
 * up in the same struct sfu_rule, which the unwinder's back ends evaluate.
 */
#include "internal.h"

static int sfu_rule_bad(struct sfu_section *sec, const struct sfu_fde *fde,
			const char *what)
{
	sec->diag.what = what;
	sec->diag.off = fde->fres_off;
	return -EBADMSG;
}

static void sfu_loc_set(struct sfu_loc *l, u8 kind, bool deref, u16 reg,
			s32 off)
{
	l->kind = kind;
	l->deref = deref;
	l->reg = reg;
	l->off = off;
}

static bool sfu_is_s390x(const struct sfu_fde *fde)
{
	return fde->elem->abi == SFRAME_ABI_S390X_ENDIAN_BIG;
}

/* The CFA offset a data word stands for (s390x stores it scaled). */
static int sfu_cfa_off(struct sfu_section *sec, const struct sfu_fde *fde,
		       s32 w, s32 *off)
{
	s64 v = w;

	if (sfu_is_s390x(fde))
		v = SFRAME_S390X_CFA_OFFSET_DECODE(v);
	if ((s64)(s32)v != v)
		return sfu_rule_bad(sec, fde, "CFA offset out of range");
	*off = (s32)v;
	return 0;
}

/* What RA and FP are when a row says nothing about them. */
static void sfu_ra_default(const struct sfu_fde *fde, struct sfu_loc *ra)
{
	if (fde->elem->fixed_ra != SFRAME_CFA_FIXED_RA_INVALID)
		sfu_loc_set(ra, SFU_LOC_CFA, true, 0, fde->elem->fixed_ra);
	else
		sfu_loc_set(ra, SFU_LOC_SAME, false, 0, 0);
}

static void sfu_fp_default(const struct sfu_fde *fde, struct sfu_loc *fp)
{
	if (fde->elem->fixed_fp != SFRAME_CFA_FIXED_FP_INVALID)
		sfu_loc_set(fp, SFU_LOC_CFA, true, 0, fde->elem->fixed_fp);
	else
		sfu_loc_set(fp, SFU_LOC_SAME, false, 0, 0);
}

/* A default-FDE RA or FP word: a stack slot, or (s390x V2) a register. */
static int sfu_default_word(struct sfu_section *sec, const struct sfu_fde *fde,
			    s32 w, struct sfu_loc *l)
{
	u32 reg;

	if (!sfu_is_s390x(fde) || fde->elem->version != SFRAME_VERSION_2 ||
	    !SFRAME_V2_S390X_OFFSET_IS_REGNUM(w)) {
		sfu_loc_set(l, SFU_LOC_CFA, true, 0, w);
		return 0;
	}
	reg = SFRAME_V2_S390X_OFFSET_DECODE_REGNUM((u32)w);
	if (w < 0 || reg > SFU_S390X_MAX_DWARF_REG)
		return sfu_rule_bad(sec, fde, "bad register number");
	sfu_loc_set(l, SFU_LOC_REG, false, reg, 0);
	return 0;
}

static int sfu_rule_default(struct sfu_section *sec, const struct sfu_fde *fde,
			    const struct sfu_fre *fre, struct sfu_rule *rule)
{
	const struct sfu_abi_info *ai = sfu_abi_info(fde->elem->abi);
	unsigned int i = SFRAME_FRE_CFA_OFFSET_IDX + 1;
	s32 w, off;
	u16 base;
	int ret;

	base = SFRAME_FRE_CFA_BASE_REG_ID(fre->info) == SFRAME_BASE_REG_SP ?
	       ai->sp_reg : ai->fp_reg;
	ret = sfu_cfa_off(sec, fde, sfu_fre_sword(fre, 0), &off);
	if (ret)
		return ret;
	sfu_loc_set(&rule->cfa, SFU_LOC_REG, false, base, off);

	sfu_ra_default(fde, &rule->ra);
	if (fde->elem->fixed_ra == SFRAME_CFA_FIXED_RA_INVALID &&
	    i < fre->nr_words) {
		w = sfu_fre_sword(fre, i++);
		/* s390x pads the RA slot with 0 when only FP was saved. */
		if (!(sfu_is_s390x(fde) && w == SFRAME_FRE_RA_OFFSET_INVALID))
			ret = sfu_default_word(sec, fde, w, &rule->ra);
		if (ret)
			return ret;
	}
	sfu_fp_default(fde, &rule->fp);
	if (fde->elem->fixed_fp == SFRAME_CFA_FIXED_FP_INVALID &&
	    i < fre->nr_words) {
		ret = sfu_default_word(sec, fde, sfu_fre_sword(fre, i++),
				       &rule->fp);
		if (ret)
			return ret;
	}
	if (i != fre->nr_words)
		return sfu_rule_bad(sec, fde, "too many data words for ABI");
	return 0;
}

/*
 * One flexible (control word, offset) pair.  A zero control word with a
 * zero offset means "no rule"; @l is then left at its default.
 */
static int sfu_flex_loc(struct sfu_section *sec, const struct sfu_fde *fde,
			u32 ctrl, s32 off, bool is_cfa, struct sfu_loc *l)
{
	u32 reg = SFRAME_V3_FLEX_CTRL_REGNUM(ctrl);
	bool deref = SFRAME_V3_FLEX_CTRL_DEREF_P(ctrl);

	if (!ctrl && !off && !is_cfa)
		return 0;
	if (SFRAME_V3_FLEX_CTRL_UNUSED(ctrl))
		return sfu_rule_bad(sec, fde, "reserved control word bit set");
	if (reg > SFU_MAX_REG)
		return sfu_rule_bad(sec, fde, "register number too large");
	if (SFRAME_V3_FLEX_CTRL_REG_P(ctrl)) {
		sfu_loc_set(l, SFU_LOC_REG, deref, reg, off);
		return 0;
	}
	if (is_cfa)
		return sfu_rule_bad(sec, fde, "CFA not based on a register");
	if (!deref || reg)
		return sfu_rule_bad(sec, fde, "CFA-relative rule not a load");
	sfu_loc_set(l, SFU_LOC_CFA, true, 0, off);
	return 0;
}

/*
 * The module's seventh word (SFU_FLEX_CTRL_SP): the caller's SP relative
 * to the CFA.  Return: the data-word count of the standard part.
 */
static int sfu_flex_sp(struct sfu_section *sec, const struct sfu_fde *fde,
		       const struct sfu_fre *fre, struct sfu_rule *rule)
{
	bool sp = fre->words[SFRAME_V3_FLEX_CFA_CTRL_IDX] & SFU_FLEX_CTRL_SP;

	if (sp != (fre->nr_words == SFU_FRE_MAX_WORDS))
		return sfu_rule_bad(sec, fde, "bad flexible data-word count");
	if (!sp)
		return fre->nr_words;
	rule->sp_off = sfu_fre_sword(fre, SFU_FLEX_SP_IDX);
	return SFRAME_FRE_MAX_DATAWORDS;
}

static int sfu_rule_flex(struct sfu_section *sec, const struct sfu_fde *fde,
			 const struct sfu_fre *fre, struct sfu_rule *rule)
{
	u32 ctrl = fre->words[SFRAME_V3_FLEX_CFA_CTRL_IDX] & ~SFU_FLEX_CTRL_SP;
	unsigned int fp_at;
	s32 off;
	int n, ret;

	n = sfu_flex_sp(sec, fde, fre, rule);
	if (n < 0)
		return n;
	if (n != 2 && n != 4 && n != 5 && n != 6)
		return sfu_rule_bad(sec, fde, "bad flexible data-word count");
	ret = sfu_cfa_off(sec, fde, sfu_fre_sword(fre, 1), &off);
	if (ret)
		return ret;
	ret = sfu_flex_loc(sec, fde, ctrl, off, true, &rule->cfa);
	if (ret)
		return ret;
	rule->flags |= SFU_RULE_FLEX;
	sfu_ra_default(fde, &rule->ra);
	sfu_fp_default(fde, &rule->fp);
	if (n == 2)
		return 0;
	fp_at = SFRAME_V3_FLEX_RA_CTRL_IDX + 2;
	if (n == 5) {
		/* A single zero word stands in for the RA pair. */
		if (fre->words[SFRAME_V3_FLEX_RA_CTRL_IDX])
			return sfu_rule_bad(sec, fde, "RA padding not zero");
		fp_at = SFRAME_V3_FLEX_RA_CTRL_IDX + 1;
	} else {
		ret = sfu_flex_loc(sec, fde,
				   fre->words[SFRAME_V3_FLEX_RA_CTRL_IDX],
				   sfu_fre_sword(fre,
						 SFRAME_V3_FLEX_RA_CTRL_IDX + 1),
				   false, &rule->ra);
		if (ret || n == 4)
			return ret;
	}
	return sfu_flex_loc(sec, fde, fre->words[fp_at],
			    sfu_fre_sword(fre, fp_at + 1), false, &rule->fp);
}

static bool sfu_loc_topmost_only(const struct sfu_abi_info *ai,
				 const struct sfu_loc *l)
{
	if (l->kind == SFU_LOC_SAME)
		return true;
	return l->kind == SFU_LOC_REG && l->reg != ai->sp_reg &&
	       l->reg != ai->fp_reg;
}

static void sfu_rule_flags(const struct sfu_fde *fde,
			   const struct sfu_fre *fre, struct sfu_rule *rule)
{
	const struct sfu_abi_info *ai = sfu_abi_info(fde->elem->abi);
	bool aarch64 = fde->elem->abi == SFRAME_ABI_AARCH64_ENDIAN_LITTLE ||
		       fde->elem->abi == SFRAME_ABI_AARCH64_ENDIAN_BIG;

	if (aarch64 && SFRAME_FRE_MANGLED_RA_P(fre->info))
		rule->flags |= SFU_RULE_RA_MANGLED;
	if (aarch64 && SFRAME_FUNC_PAUTH_KEY(fde->info))
		rule->flags |= SFU_RULE_PAUTH_KEY_B;
	if (sfu_loc_topmost_only(ai, &rule->cfa) ||
	    sfu_loc_topmost_only(ai, &rule->ra) ||
	    (rule->fp.kind == SFU_LOC_REG &&
	     sfu_loc_topmost_only(ai, &rule->fp)))
		rule->flags |= SFU_RULE_TOPMOST_ONLY;
}

/* Start a rule: the parts that do not depend on the row's data words. */
static void sfu_rule_init(const struct sfu_fde *fde, struct sfu_rule *rule)
{
	const struct sfu_abi_info *ai = sfu_abi_info(fde->elem->abi);

	memset(rule, 0, sizeof(*rule));
	rule->sp_off = ai->sp_off;
	if (fde->elem->version == SFRAME_VERSION_3 &&
	    SFRAME_V3_FUNC_SIGNAL_P(fde->info))
		rule->flags |= SFU_RULE_SIGNAL;
}

/**
 * sfu_fde_empty_rule() - the rule of a function that has no FREs
 * @fde: the function
 * @rule: where the rule goes
 *
 * A V3 function without rows is a signal frame when its signal bit is set
 * (the rule then has no CFA: cfa.kind is SFU_LOC_NONE and the architecture
 * must decode the signal frame), an outermost frame when it is a default
 * FDE, and describes nothing otherwise, as in V1 and V2.
 *
 * Return: 0 or -ENOENT.
 */
int sfu_fde_empty_rule(const struct sfu_fde *fde, struct sfu_rule *rule)
{
	if (fde->elem->version != SFRAME_VERSION_3)
		return -ENOENT;
	sfu_rule_init(fde, rule);
	if (rule->flags & SFU_RULE_SIGNAL)
		return 0;
	if (fde->fde_type != SFRAME_FDE_TYPE_DEFAULT)
		return -ENOENT;
	rule->flags |= SFU_RULE_OUTERMOST;
	return 0;
}

/**
 * sfu_fre_rule() - decode the unwind rule a frame row entry encodes
 * @sec: the section (for error reporting)
 * @fde: the function the row belongs to
 * @fre: the row
 * @rule: where the rule goes
 *
 * Return: 0, or -EBADMSG if the data words make no valid rule.
 */
int sfu_fre_rule(struct sfu_section *sec, const struct sfu_fde *fde,
		 const struct sfu_fre *fre, struct sfu_rule *rule)
{
	int ret;

	sfu_rule_init(fde, rule);
	if (!fre->nr_words) {
		rule->flags |= SFU_RULE_OUTERMOST;
		return 0;
	}
	if (fde->fde_type == SFRAME_FDE_TYPE_FLEX)
		ret = sfu_rule_flex(sec, fde, fre, rule);
	else
		ret = sfu_rule_default(sec, fde, fre, rule);
	if (ret)
		return ret;
	sfu_rule_flags(fde, fre, rule);
	return 0;
}
