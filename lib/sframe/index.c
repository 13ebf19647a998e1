// SPDX-License-Identifier: GPL-2.0
/*
 * The FDE index of a section: built once at set-up, where every FDE's
 * start is read once, and searched by every lookup, in kernel memory:
 *
 *  - an entry per FDE in address order (struct sfu_ent, 8 bytes): the
 *    function's start as a 32-bit offset from the lowest start, and the
 *    section offset of its FRE data (V3: its attributes; V1, V2: its first
 *    row), a hint;
 *  - a block table in the spirit of ORC's lookup table: the text the
 *    section covers is cut into 2^block_shift byte blocks, about one per
 *    SFU_BLOCK_FDES functions, and for each block the table names the last
 *    function (in address order) that starts at or before the block.
 *
 * A search reads one block slot and binary-searches the entries of that
 * block, a cache line or two of kernel memory, so neither its work nor its
 * cache misses grow with the number of FDEs.
 *
 * Unsorted sections (JIT use) and sections made of several concatenated
 * elements also keep a sorted key array, for the FDE ids.  Where the text
 * spans more than 4 GiB there are no entries: the search reads FDE starts
 * from the keys or from the section itself.
 *
 * The index is a hint: lookups re-read and re-check the descriptor they
 * land on, so a section changed after set-up gives wrong answers or
 * errors, never out-of-bounds reads.
 */
#include "internal.h"

/* FDEs read per sfu_read() call while building the index. */
#define SFU_SCAN_BYTES	480
/* Functions per block of the block table, about. */
#define SFU_BLOCK_FDES	4
/* Largest text span (and section) the 32-bit lookup entries describe. */
#define SFU_ENT_SPAN	0xffffffffULL

/* The element that holds the FDE with section-wide id @id. */
const struct sfu_elem *sfu_elem_of(const struct sfu_section *sec, u32 id)
{
	u32 lo = 0, hi = sec->nr_elems;

	/* Last element whose first id is <= @id; elements are in id order. */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (sec->elems[mid].first_id <= id)
			lo = mid;
		else
			hi = mid;
	}
	return &sec->elems[lo];
}

/* The function start and size stored at the head of an FDE. */
static void sfu_fde_span(const struct sfu_section *sec,
			 const struct sfu_elem *e, u32 idx, const u8 *b,
			 u64 *start, u32 *size)
{
	struct sfu_fde fde = { .elem = e, .idx = idx };

	sfu_fde_head(sec, &fde, b);
	*start = fde.start;
	*size = fde.size;
}

/* Section offset of the FRE data an FDE names, or SFU_NO_ROWS_HINT. */
static u32 sfu_fde_rows_hint(const struct sfu_elem *e, const u8 *b)
{
	size_t at = e->version == SFRAME_VERSION_3 ?
		    offsetof(struct sframe_fdi_v3, sfdi_func_start_fre_off) :
		    offsetof(struct sframe_fde_v1, sfde_func_start_fre_off);
	u64 off;
	u32 v;

	memcpy(&v, b + at, sizeof(v));
	off = e->fre_off + (e->swap ? swab32(v) : v);
	return off < SFU_NO_ROWS_HINT ? (u32)off : SFU_NO_ROWS_HINT;
}

static int sfu_key_cmp(const void *a, const void *b)
{
	const struct sfu_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Read every FDE start of @e into @keys; note the text's bounds. */
static int sfu_scan_elem(struct sfu_section *sec, const struct sfu_elem *e,
			 struct sfu_key *keys, bool *sorted)
{
	u8 buf[SFU_SCAN_BYTES];
	u32 per = sizeof(buf) / e->fde_size, i, j, n;
	const u8 *b;
	u64 start, end;
	u32 size;
	int ret;

	for (i = 0; i < e->num_fdes; i += n) {
		n = e->num_fdes - i < per ? e->num_fdes - i : per;
		ret = sfu_read(sec, e->fde_off + (u64)i * e->fde_size, buf,
			       (size_t)n * e->fde_size);
		if (ret)
			return ret;
		for (j = 0; j < n; j++) {
			b = buf + j * e->fde_size;
			sfu_fde_span(sec, e, i + j, b, &start, &size);
			if (i + j && start < keys[i + j - 1].start)
				*sorted = false;
			keys[i + j].start = start;
			keys[i + j].id = e->first_id + i + j;
			keys[i + j].rows = sfu_fde_rows_hint(e, b);
			/*
			 * A function that runs past the top of the address
			 * space ends there: the highest end must stay above
			 * every start, or the index's 32-bit offsets from
			 * the lowest start would wrap.
			 */
			end = start + size < start ? U64_MAX : start + size;
			if (start < sec->text_lo)
				sec->text_lo = start;
			if (end > sec->text_hi)
				sec->text_hi = end;
		}
	}
	return 0;
}

static int sfu_scan(struct sfu_section *sec, struct sfu_key *keys, bool *keep)
{
	const struct sfu_elem *e;
	bool sorted;
	u32 i;
	int ret;

	sec->text_lo = U64_MAX;
	sec->text_hi = 0;
	*keep = sec->nr_elems > 1;
	for (i = 0; i < sec->nr_elems; i++) {
		e = &sec->elems[i];
		sorted = true;
		ret = sfu_scan_elem(sec, e, keys + e->first_id, &sorted);
		if (ret)
			return ret;
		if (!sorted && (e->flags & SFRAME_F_FDE_SORTED)) {
			sec->diag.what = "FDEs not sorted despite flag";
			sec->diag.off = e->fde_off;
			return -EBADMSG;
		}
		if (!sorted)
			*keep = true;
	}
	if (*keep)
		sfu_sort(keys, sec->nr_fdes, sizeof(*keys), sfu_key_cmp);
	return 0;
}

static u8 sfu_pick_shift(u64 span, u32 nr_fdes)
{
	u8 shift = SFU_BLOCK_SHIFT_MIN;

	/* About SFU_BLOCK_FDES functions a block: memory stays O(FDEs). */
	while (shift < SFU_BLOCK_SHIFT_MAX &&
	       (span >> shift) * SFU_BLOCK_FDES > nr_fdes)
		shift++;
	return shift;
}

static int sfu_build_blocks(struct sfu_section *sec,
			    const struct sfu_key *keys)
{
	u64 span = sec->text_hi - sec->text_lo, addr;
	u32 b, pos = 0;

	sec->block_shift = sfu_pick_shift(span, sec->nr_fdes);
	sec->nr_blocks = (u32)(span >> sec->block_shift) + 1;
	sec->blocks = sfu_alloc_array(sec->nr_blocks, sizeof(*sec->blocks));
	if (!sec->blocks)
		return -ENOMEM;
	for (b = 0; b < sec->nr_blocks; b++) {
		addr = sec->text_lo + ((u64)b << sec->block_shift);
		while (pos + 1 < sec->nr_fdes && keys[pos + 1].start <= addr)
			pos++;
		sec->blocks[b] = pos;
	}
	return 0;
}

/* The lookup entries, where the text span allows 32-bit starts. */
static int sfu_build_ents(struct sfu_section *sec, const struct sfu_key *keys)
{
	u32 i;

	if (sec->text_hi - sec->text_lo > SFU_ENT_SPAN)
		return 0;
	sec->ents = sfu_alloc_array(sec->nr_fdes, sizeof(*sec->ents));
	if (!sec->ents)
		return -ENOMEM;
	for (i = 0; i < sec->nr_fdes; i++) {
		sec->ents[i].start = (u32)(keys[i].start - sec->text_lo);
		sec->ents[i].rows = keys[i].rows;
	}
	return 0;
}

/**
 * sfu_index_build() - read every FDE start once and build the index
 * @sec: a section whose elements are parsed
 *
 * Return: 0, -EBADMSG (FDEs out of order in an element flagged sorted),
 * -ENOMEM or the section's read error.
 */
int sfu_index_build(struct sfu_section *sec)
{
	struct sfu_key *keys;
	bool keep;
	int ret;

	if (!sec->nr_fdes)
		return 0;
	keys = sfu_alloc_array(sec->nr_fdes, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ret = sfu_scan(sec, keys, &keep);
	/*
	 * At least a byte.  A function at the top byte of the space makes
	 * text_hi 0 and the span 1: compare through text_hi - text_lo.
	 */
	if (!ret && sec->text_hi <= sec->text_lo)
		sec->text_hi = sec->text_lo + 1;
	if (!ret)
		ret = sfu_build_blocks(sec, keys);
	if (!ret)
		ret = sfu_build_ents(sec, keys);
	if (!ret && keep) {
		sec->keys = keys;
		return 0;
	}
	sfu_free(keys);
	return ret;
}

/**
 * sfu_index_free() - free the index: what a lookup through the section reads
 * @sec: the section
 *
 * The row index (rows.c) too: both serve the decoder's lookups only.
 */
void sfu_index_free(struct sfu_section *sec)
{
	sfu_free(sec->blocks);
	sfu_free(sec->ents);
	sfu_free(sec->keys);
	sfu_free(sec->runs);
	sfu_free(sec->marks);
	sec->blocks = NULL;
	sec->ents = NULL;
	sec->keys = NULL;
	sec->runs = NULL;
	sec->marks = NULL;
	sec->nr_runs = 0;
	sec->nr_marks = 0;
	sec->nr_blocks = 0;
}

/* Start address of the function at sorted position @pos. */
static int sfu_pos_start(struct sfu_section *sec, u32 pos, u64 *start)
{
	const struct sfu_elem *e = &sec->elems[0];
	u8 b[sizeof(struct sframe_fde_v2)];
	u32 size;
	int ret;

	if (sec->keys) {
		*start = sec->keys[pos].start;
		return 0;
	}
	ret = sfu_read(sec, e->fde_off + (u64)pos * e->fde_size, b,
		       e->fde_size);
	if (ret)
		return ret;
	sfu_fde_span(sec, e, pos, b, start, &size);
	return 0;
}

/**
 * sfu_index_id() - the FDE id at a sorted position
 * @sec: an indexed section
 * @pos: the position, from sfu_index_find()
 *
 * Return: the id; the position itself unless the section keeps keys.
 */
u32 sfu_index_id(const struct sfu_section *sec, u32 pos)
{
	return sec->keys ? sec->keys[pos].id : pos;
}

/*
 * The binary search of [*@pos, @hi] where there are no lookup entries:
 * the starts are read from the keys or from the section.
 */
static int sfu_search_section(struct sfu_section *sec, u64 pc, u32 *pos,
			      u32 hi, u32 *budget)
{
	u32 lo = *pos, mid;
	u64 start;
	int ret;

	while (lo < hi) {
		mid = hi - (hi - lo) / 2;
		if (!sec->keys && !sfu_spend(budget, 1))
			return -ERANGE;
		ret = sfu_pos_start(sec, mid, &start);
		if (ret)
			return ret;
		if (start <= pc)
			lo = mid;
		else
			hi = mid - 1;
	}
	*pos = lo;
	return 0;
}

/**
 * sfu_index_find() - the function that may hold a PC, by the index
 * @sec: an indexed section
 * @pc: the address
 * @pos: set to the sorted position of the last function that starts at
 *	or before @pc (it may end before @pc: the caller checks)
 * @budget: units of work left, one per read of the section; decremented
 *
 * Return: 0, -ENOENT if @pc is outside the text, -EFAULT if the index
 * was freed (sfu_section_strip()), -ERANGE if @budget ran out, or the
 * section's read error.
 */
int sfu_index_find(struct sfu_section *sec, u64 pc, u32 *pos, u32 *budget)
{
	u32 b, hi;

	/*
	 * One compare for both ends, as sfu_table_find(): text_hi wraps to 0
	 * where the one function starts at the top byte of the space.
	 */
	if (!sec->nr_fdes || pc - sec->text_lo >= sec->text_hi - sec->text_lo)
		return -ENOENT;
	if (!sec->blocks)
		return -EFAULT;
	b = (u32)((pc - sec->text_lo) >> sec->block_shift);
	*pos = sec->blocks[b];
	hi = b + 1 < sec->nr_blocks ? sec->blocks[b + 1] : sec->nr_fdes - 1;
	if (!sec->ents)
		return sfu_search_section(sec, pc, pos, hi, budget);
	*pos = sfu_search_ents(sec, (u32)(pc - sec->text_lo), *pos, hi);
	return 0;
}

/**
 * sfu_index_rows_hint() - where the rows of the function at a position are
 * @sec: an indexed section
 * @pos: the position, from sfu_index_find()
 *
 * Return: their section offset as the FDE said at set-up, or
 * SFU_NO_ROWS_HINT (no lookup entries, or an offset beyond 32 bits).
 */
u32 sfu_index_rows_hint(const struct sfu_section *sec, u32 pos)
{
	return sec->ents ? sec->ents[pos].rows : SFU_NO_ROWS_HINT;
}
