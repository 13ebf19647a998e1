// SPDX-License-Identifier: GPL-2.0
/*
 * Text form of an unwind rule, shared by the module's debugfs query and the
 * host dumper so that the two decoders can be compared line by line.
 *
 *   cfa=sp+16 ra=*(cfa-8) fp=same
 *   cfa=*(r10-8) ra=*(cfa-8) fp=*(fp+0) flex topmost
 *   cfa=*(sp+152) ra=*(cfa+0) fp=*(cfa-8) sp=cfa+8 flex
 *   outermost
 */
#ifndef __KERNEL__
#include <stdio.h>
#endif
#include "internal.h"

static int sfu_reg_name(const struct sfu_abi_info *ai, u16 reg, char *buf,
			size_t len)
{
	if (reg == ai->sp_reg)
		return snprintf(buf, len, "sp");
	if (reg == ai->fp_reg)
		return snprintf(buf, len, "fp");
	return snprintf(buf, len, "r%u", reg);
}

static int sfu_loc_format(const struct sfu_abi_info *ai,
			  const struct sfu_loc *l, char *buf, size_t len)
{
	char base[16];

	switch (l->kind) {
	case SFU_LOC_SAME:
		return snprintf(buf, len, "same");
	case SFU_LOC_CFA:
		snprintf(base, sizeof(base), "cfa");
		break;
	case SFU_LOC_REG:
		sfu_reg_name(ai, l->reg, base, sizeof(base));
		break;
	default:
		return snprintf(buf, len, "none");
	}
	if (l->deref)
		return snprintf(buf, len, "*(%s%+d)", base, l->off);
	if (!l->off)
		return snprintf(buf, len, "%s", base);
	return snprintf(buf, len, "%s%+d", base, l->off);
}

static const struct {
	u32 flag;
	const char *name;
} sfu_rule_flag_names[] = {
	{ SFU_RULE_SIGNAL, "signal" },
	{ SFU_RULE_RA_MANGLED, "mangled" },
	{ SFU_RULE_PAUTH_KEY_B, "keyB" },
	{ SFU_RULE_FLEX, "flex" },
	{ SFU_RULE_TOPMOST_ONLY, "topmost" },
};

/**
 * sfu_rule_format() - print a rule in the project's text form
 * @rule: the rule
 * @abi: the ABI its register numbers belong to
 * @buf: output
 * @len: size of @buf; SFU_RULE_STR_MAX always suffices
 *
 * Return: the number of characters written, excluding the NUL.
 */
int sfu_rule_format(const struct sfu_rule *rule, u8 abi, char *buf,
		    size_t len)
{
	const struct sfu_abi_info *ai = sfu_abi_info(abi);
	char cfa[32], ra[32], fp[32];
	size_t n = 0;
	unsigned int i;

	if (!ai || !len)
		return 0;
	if (rule->flags & SFU_RULE_OUTERMOST) {
		n = snprintf(buf, len, "outermost");
	} else if (rule->cfa.kind == SFU_LOC_NONE) {
		n = snprintf(buf, len, "cfa=none");
	} else {
		sfu_loc_format(ai, &rule->cfa, cfa, sizeof(cfa));
		sfu_loc_format(ai, &rule->ra, ra, sizeof(ra));
		sfu_loc_format(ai, &rule->fp, fp, sizeof(fp));
		n = snprintf(buf, len, "cfa=%s ra=%s fp=%s", cfa, ra, fp);
		if (rule->sp_off != ai->sp_off && n < len)
			n += snprintf(buf + n, len - n, " sp=cfa%+d",
				      rule->sp_off);
	}
	for (i = 0; i < ARRAY_SIZE(sfu_rule_flag_names) && n < len; i++)
		if (rule->flags & sfu_rule_flag_names[i].flag)
			n += snprintf(buf + n, len - n, " %s",
				      sfu_rule_flag_names[i].name);
	return n < len ? (int)n : (int)len - 1;
}
