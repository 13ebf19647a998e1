// SPDX-License-Identifier: GPL-2.0
/*
 * PC lookup through the section: the FDE index (index.c) names the
 * function, the row index (rows.c) the row to start from, and the rows
 * are read and decoded from the section.  Since the index also says where
 * the function's rows are, they are read (one read) before the FDE, so
 * that the two reads of the section that miss the cache can overlap
 * instead of following one another.  Sections that will not change also
 * get a rule table (table.c), which the walker searches instead; the
 * lookups here always read the section.
 *
 * Callers in NMI can bound the work of a lookup further with a budget
 * (sfu_find_rule_budget()): one unit per read of the section or row
 * decoded.
 */
#include "internal.h"

/*
 * Read the FRE data the entry at @pos names into @it's window before the
 * FDE that names it, so that the two reads of the section that miss the
 * cache overlap instead of following one another; the rows are then
 * decoded from the window.  A hint only, bounded like any read; errors
 * are the descriptor's to report.  One unit of @budget, as any read.
 */
static int sfu_read_rows_ahead(struct sfu_section *sec, u32 pos,
			       struct sfu_fre_iter *it, u32 *budget)
{
	u32 off = sfu_index_rows_hint(sec, pos);

	if (off == SFU_NO_ROWS_HINT || off >= sec->size)
		return 0;
	if (!sfu_spend(budget, 1))
		return -ERANGE;
	sfu_fre_iter_prefill(sec, it, off);
	return 0;
}

static int sfu_lookup_fde(struct sfu_section *sec, u64 pc, struct sfu_fde *fde,
			  struct sfu_fre_iter *it, u32 *budget)
{
	const struct sfu_elem *e;
	u32 pos, id;
	int ret;

	ret = sfu_index_find(sec, pc, &pos, budget);
	if (!ret)
		ret = sfu_read_rows_ahead(sec, pos, it, budget);
	if (ret)
		return ret;
	if (!sfu_spend(budget, 1))
		return -ERANGE;
	/* sfu_read_fde() re-reads and re-checks the descriptor itself. */
	id = sfu_index_id(sec, pos);
	e = sfu_elem_of(sec, id);
	ret = sfu_read_fde_win(sec, e, id - e->first_id, fde, it);
	if (ret)
		return ret;
	if (pc < fde->start || pc - fde->start >= fde->size)
		return -ENOENT;
	return 0;
}

/**
 * sfu_find_rule_budget() - the unwind rule at a PC, with bounded work
 * @sec: an initialised section
 * @pc: the address
 * @rule: where the rule goes
 * @budget: units of work left, one per read of a descriptor, per row
 *	decoded and for the rows read ahead (a read of at most
 *	SFU_FRE_WINDOW bytes); decremented
 *
 * With the lookup entries and the row index, a lookup costs at most the
 * rows read ahead, the descriptor and SFU_ROW_STRIDE + 1 rows, whatever
 * the section holds (without entries, a binary search over the functions
 * of one block instead of the read ahead); the budget bounds a whole walk
 * on top of that.
 *
 * Return: 0, -ENOENT if nothing describes @pc, -ERANGE if @budget ran
 * out, -EBADMSG or -EFAULT.
 */
int sfu_find_rule_budget(struct sfu_section *sec, u64 pc,
			 struct sfu_rule *rule, u32 *budget)
{
	struct sfu_fre_iter it;
	struct sfu_fre fre, best;
	struct sfu_fde fde;
	bool found = false;
	u64 pc_off;
	int ret;

	sfu_fre_iter_clear(&it);
	ret = sfu_lookup_fde(sec, pc, &fde, &it, budget);
	if (ret)
		return ret;
	if (!fde.num_fres)
		return sfu_fde_empty_rule(&fde, rule);
	pc_off = pc - fde.start;
	if (fde.pc_type == SFRAME_FDE_TYPE_PCMASK)
		pc_off %= fde.rep_size;
	sfu_fre_iter_start(&fde, &it);
	sfu_rows_seek(sec, &fde, pc_off, &it);
	for (;;) {
		if (it.left && !sfu_spend(budget, 1))
			return -ERANGE;
		ret = sfu_fre_next(sec, &fde, &it, &fre);
		if (ret || fre.start > pc_off)
			break;
		best = fre;
		found = true;
	}
	if (ret && ret != -ENOENT)
		return ret;
	if (!found)
		return -ENOENT;
	return sfu_fre_rule(sec, &fde, &best, rule);
}

/**
 * sfu_find_rule() - the unwind rule in force at a PC
 * @sec: an initialised section
 * @pc: the address
 * @rule: where the rule goes
 *
 * Return: 0, -ENOENT if nothing describes @pc, -EBADMSG or -EFAULT.
 */
int sfu_find_rule(struct sfu_section *sec, u64 pc, struct sfu_rule *rule)
{
	u32 unlimited = U32_MAX;

	return sfu_find_rule_budget(sec, pc, rule, &unlimited);
}

/**
 * sfu_fde_rules() - every row of one function: read, order-checked, decoded
 * @sec: an initialised section
 * @fde: the function
 * @fn: given each row's start (in the function) and rule, in order, or
 *	NULL; a non-zero return ends the walk with it
 * @arg: for @fn
 *
 * The one loop over a function's rows that both the validator and the
 * rule table's builder (table.c) run, so that what the table holds is
 * what validation accepted.
 *
 * Return: 0, @fn's error, or the decoder's.
 */
int sfu_fde_rules(struct sfu_section *sec, const struct sfu_fde *fde,
		  sfu_row_fn fn, void *arg)
{
	struct sfu_fre_iter it;
	struct sfu_rule rule;
	struct sfu_fre fre;
	int ret;

	sfu_fre_iter_init(fde, &it);
	while (!(ret = sfu_fre_next(sec, fde, &it, &fre))) {
		ret = sfu_fre_rule(sec, fde, &fre, &rule);
		if (!ret && fn)
			ret = fn(arg, fre.start, &rule);
		if (ret)
			return ret;
	}
	return ret == -ENOENT ? 0 : ret;
}
