// SPDX-License-Identifier: GPL-2.0
/*
 * What the generator reports: the counts of functions written, cut short
 * and left out, the list of those left out, and --dump-rows, every row
 * of .eh_frame as the generator read it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen-internal.h"

/* The counts of functions written, cut short and left out. */
void gen_count(const struct gen *g, struct gen_stats *s)
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
int gen_list_funcs(struct gen *g, struct gen_result *r)
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

int gen_dump_fde(struct gen *g, const struct ehf_fde *fde)
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

