// SPDX-License-Identifier: GPL-2.0
/*
 * Row index: entering a long function's rows part-way.
 *
 * FREs have variable sizes, so the row in force at a PC can only be found
 * by decoding the rows before it: up to 65535 of them, each a read of user
 * memory, for every frame of a walk that may run in NMI.  At set-up, every
 * function with more than SFU_ROW_STRIDE rows gets a mark for each
 * SFU_ROW_STRIDE-th row (its start and where it is), in kernel memory.  A
 * lookup binary-searches the marks and decodes at most SFU_ROW_STRIDE rows.
 * FDEs that share rows (compacted sections) share marks.
 *
 * Like the block index, marks are hints: the rows they lead to are read
 * through sfu_read() and checked as any other, so a section that changes
 * after set-up gives wrong answers or errors, never out-of-bounds reads.
 * Building them never refuses a section: a function whose descriptor or
 * rows are corrupt gets no marks (or marks up to the bad row), and its
 * lookups report the corruption as they would without the index.  Only
 * the walk's budget bounds what such a function costs.
 */
#include "internal.h"

/* One function's rows to index, found by the first pass. */
struct sfu_row_cand {
	u64 fres_off;
	u32 id;		/* section-wide FDE id */
	u32 num_fres;
};

static int sfu_row_cand_cmp(const void *a, const void *b)
{
	const struct sfu_row_cand *x = a, *y = b;

	if (x->fres_off != y->fres_off)
		return x->fres_off < y->fres_off ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool sfu_fde_needs_marks(const struct sfu_fde *fde)
{
	return fde->num_fres > SFU_ROW_STRIDE;
}

/* Count (@cands NULL) or collect the functions that need marks. */
static int sfu_rows_collect(struct sfu_section *sec,
			    struct sfu_row_cand *cands, u32 *nr)
{
	const struct sfu_elem *e;
	struct sfu_fde fde;
	u32 i, j, n = 0;
	int ret;

	for (i = 0; i < sec->nr_elems; i++) {
		e = &sec->elems[i];
		for (j = 0; j < e->num_fdes; j++) {
			ret = sfu_read_fde(sec, e, j, &fde);
			if (ret == -EBADMSG)
				continue;	/* lookups will say so */
			if (ret)
				return ret;
			if (!sfu_fde_needs_marks(&fde))
				continue;
			if (cands) {
				cands[n].fres_off = fde.fres_off;
				cands[n].id = e->first_id + j;
				cands[n].num_fres = fde.num_fres;
			}
			n++;
		}
		sfu_cond_resched();
	}
	*nr = n;
	return 0;
}

/*
 * Keep one candidate per distinct row sequence, in @cands' first slots.
 * Distinct sequences past the rows the headers count are left out (the
 * validator refuses them): that bounds sfu_rows_mark()'s work by the
 * section size.
 */
static void sfu_rows_dedup(const struct sfu_section *sec,
			   struct sfu_row_cand *cands, u32 nr, u32 *nr_runs,
			   u64 *nr_marks)
{
	u64 rows = 0, cap = 0;
	u32 i, n = 0;

	for (i = 0; i < sec->nr_elems; i++)
		cap += sec->elems[i].num_fres;
	*nr_marks = 0;
	for (i = 0; i < nr; i++) {
		if (n && cands[n - 1].fres_off == cands[i].fres_off)
			continue;
		rows += cands[i].num_fres;
		if (rows > cap)
			break;
		*nr_marks += (cands[i].num_fres - 1) / SFU_ROW_STRIDE;
		cands[n++] = cands[i];
	}
	*nr_runs = n;
}

/*
 * Decode the rows of @run's function and note every SFU_ROW_STRIDE-th;
 * a bad row ends the marks, not the set-up.
 */
static int sfu_rows_mark(struct sfu_section *sec, struct sfu_row_run *run,
			 const struct sfu_row_cand *cand, u32 first)
{
	const struct sfu_elem *e = sfu_elem_of(sec, cand->id);
	u32 id = cand->id;
	struct sfu_row_mark *m = &sec->marks[first];
	struct sfu_fre_iter it;
	struct sfu_fde fde;
	struct sfu_fre fre;
	u64 at;
	u32 row;
	int ret;

	run->fres_off = cand->fres_off;
	run->first = first;
	run->nr = 0;
	ret = sfu_read_fde(sec, e, id - e->first_id, &fde);
	if (ret)
		return ret == -EBADMSG ? 0 : ret;
	/* Never more marks than counted for it, whatever a re-read says. */
	if (fde.num_fres > cand->num_fres)
		fde.num_fres = cand->num_fres;
	sfu_fre_iter_init(&fde, &it);
	for (row = 0; row < fde.num_fres; row++) {
		at = it.off;
		ret = sfu_fre_next(sec, &fde, &it, &fre);
		if (ret)
			return ret == -EBADMSG || ret == -ENOENT ? 0 : ret;
		if (!row || row % SFU_ROW_STRIDE)
			continue;
		m->start = fre.start;
		m->off = (u32)(at - fde.fres_off);
		m++;
		run->nr++;
	}
	return 0;
}

static int sfu_rows_fill(struct sfu_section *sec, struct sfu_row_cand *cands)
{
	u32 i, first = 0;
	int ret;

	for (i = 0; i < sec->nr_runs; i++) {
		ret = sfu_rows_mark(sec, &sec->runs[i], &cands[i], first);
		if (ret)
			return ret;
		first += sec->runs[i].nr;
		sfu_cond_resched();
	}
	return 0;
}

/**
 * sfu_rows_build() - mark the rows of functions with many rows
 * @sec: a section whose elements are parsed
 *
 * Reads every FDE, and every row of the functions with more than
 * SFU_ROW_STRIDE rows (once per distinct row sequence).  May sleep.
 *
 * Return: 0, -ENOMEM, or an error of the rows' decoding.
 */
int sfu_rows_build(struct sfu_section *sec)
{
	struct sfu_row_cand *cands;
	u32 nr, nr_runs;
	u64 nr_marks;
	int ret;

	ret = sfu_rows_collect(sec, NULL, &nr);
	if (ret || !nr)
		return ret;
	cands = sfu_alloc_array(nr, sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	ret = sfu_rows_collect(sec, cands, &nr);
	if (ret)
		goto free_cands;
	sfu_sort(cands, nr, sizeof(*cands), sfu_row_cand_cmp);
	sfu_rows_dedup(sec, cands, nr, &nr_runs, &nr_marks);
	ret = -ENOMEM;
	sec->runs = sfu_alloc_array(nr_runs, sizeof(*sec->runs));
	sec->marks = sfu_alloc_array(nr_marks, sizeof(*sec->marks));
	if (!sec->runs || !sec->marks)
		goto free_cands;
	sec->nr_runs = nr_runs;
	sec->nr_marks = nr_marks;
	ret = sfu_rows_fill(sec, cands);
free_cands:
	sfu_free(cands);
	return ret;
}

/* The run of rows that starts at @fres_off, or NULL. */
static const struct sfu_row_run *sfu_rows_run(const struct sfu_section *sec,
					      u64 fres_off)
{
	u32 lo = 0, hi = sec->nr_runs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (sec->runs[mid].fres_off == fres_off)
			return &sec->runs[mid];
		if (sec->runs[mid].fres_off < fres_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/**
 * sfu_rows_seek() - start a row cursor close to a function offset
 * @sec: the section
 * @fde: the function
 * @pc_off: the offset looked up (within the repeat block for PCMASK)
 * @it: a cursor sfu_fre_iter_init() prepared for @fde
 *
 * Moves @it to the last marked row that starts at or before @pc_off, if
 * any, so that at most SFU_ROW_STRIDE rows remain to decode.  The row the
 * cursor lands on is checked only against its own start: rows after it
 * must still increase.
 */
void sfu_rows_seek(const struct sfu_section *sec, const struct sfu_fde *fde,
		   u64 pc_off, struct sfu_fre_iter *it)
{
	const struct sfu_row_run *run;
	const struct sfu_row_mark *m;
	u32 lo, hi, mid, row;

	if (!sfu_fde_needs_marks(fde) || !sec->nr_runs)
		return;
	run = sfu_rows_run(sec, fde->fres_off);
	if (!run || !run->nr)
		return;
	m = &sec->marks[run->first];
	/* Number of marks whose start is <= pc_off. */
	lo = 0;
	hi = run->nr;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m[mid].start <= pc_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	row = lo * SFU_ROW_STRIDE;
	if (row >= fde->num_fres || !m[lo - 1].start)
		return;
	it->off = fde->fres_off + m[lo - 1].off;
	it->left = fde->num_fres - row;
	it->prev_start = m[lo - 1].start - 1;
}
