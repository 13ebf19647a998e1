// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame section set-up and PC lookup.
 *
 * At set-up every FDE's start is read once to check the section and to
 * build the lookup index, in kernel memory:
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
 * A lookup reads one block slot and binary-searches the entries of that
 * block, a cache line or two of kernel memory, so neither its work nor its
 * cache misses grow with the number of FDEs, and it touches the section
 * only where the answer is: the FDE found and its rows.  Since the entry
 * also says where the rows are, it reads them (one read) before the FDE,
 * so that the two reads of the section that miss the cache can overlap
 * instead of following one another.
 *
 * Unsorted sections (JIT use) and sections made of several concatenated
 * elements also keep a sorted key array, for the FDE ids.  Where the text
 * spans more than 4 GiB there are no entries: the search reads FDE starts
 * from the keys or from the section itself.
 *
 * Long functions also get a row index (rows.c), so that finding a
 * row decodes at most SFU_ROW_STRIDE of them.  Sections that will not
 * change also get a rule table (table.c), which the walker searches
 * instead; the lookups here always read the section.
 *
 * The indexes are hints: lookups re-read and re-check the descriptor and
 * the rows they land on, so a section changed after set-up gives wrong
 * answers or errors, never out-of-bounds reads.
 *
 * Callers in NMI can bound the work of a lookup further with a budget
 * (sfu_find_rule_budget()): one unit per read of the section or row
 * decoded.
 */
#include "internal.h"

/* FDEs read per sfu_read() call while building the index. */
#define SFU_SCAN_BYTES	480
/* Functions per block of the block table, about. */
#define SFU_BLOCK_FDES	4
/* Largest text span (and section) the 32-bit lookup entries describe. */
#define SFU_ENT_SPAN	0xffffffffULL
/* Bytes of a function's FRE data read ahead of its FDE: attributes, rows. */

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

/* Read every FDE start of @e into @keys; note the highest end. */
static int sfu_scan_elem(struct sfu_section *sec, const struct sfu_elem *e,
			 struct sfu_key *keys, u64 *hi, bool *sorted)
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
			if (end > *hi)
				*hi = end;
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

	sec->text_hi = 0;
	*keep = sec->nr_elems > 1;
	for (i = 0; i < sec->nr_elems; i++) {
		e = &sec->elems[i];
		sorted = true;
		ret = sfu_scan_elem(sec, e, keys + e->first_id, &sec->text_hi,
				    &sorted);
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
	sec->text_lo = keys[0].start;
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

static int sfu_build_index(struct sfu_section *sec)
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
 * sfu_section_init() - check an SFrame section and index it for lookups
 * @sec: the section object to fill
 * @base: address of the section's first byte where it can be read
 * @size: section size in bytes
 * @vaddr: address of the section's first byte in the target's address space
 * @mem: SFU_MEM_KERNEL or SFU_MEM_USER
 * @abi: the ABI id required, or SFU_ABI_ANY
 *
 * Validates the header of every element (magic, version, flags, ABI, byte
 * order, sub-section bounds and counts), reads every FDE start once, checks
 * that sections flagged sorted are, and builds the block index and the
 * row index (which decodes the rows of functions with many).  May sleep
 * and fault for user sections.  On error @sec->diag names the check.
 *
 * Return: 0 or a negative error code (see include/sframe/decode.h).
 */
int sfu_section_init(struct sfu_section *sec, unsigned long base, u64 size,
		     u64 vaddr, enum sfu_mem mem, u8 abi)
{
	int ret;

	memset(sec, 0, sizeof(*sec));
	sec->base = base;
	sec->size = size;
	sec->vaddr = vaddr;
	sec->mem = mem;
	sec->abi = abi;
	ret = sfu_parse_elems(sec);
	if (!ret)
		ret = sfu_build_index(sec);
	if (!ret)
		ret = sfu_rows_build(sec);
	if (ret)
		sfu_section_destroy(sec);
	return ret;
}

/* Free the decoder's index: what a lookup through the section reads. */
static void sfu_index_free(struct sfu_section *sec)
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

/**
 * sfu_section_destroy() - free what sfu_section_init() allocated
 * @sec: the section
 */
void sfu_section_destroy(struct sfu_section *sec)
{
	sfu_table_destroy(sec);
	sfu_index_free(sec);
	sfu_free(sec->elems);
	sec->elems = NULL;
	sec->nr_fdes = 0;
	sec->nr_elems = 0;
}

/**
 * sfu_section_strip() - keep only what a walk through the rule table reads
 * @sec: a section with a rule table
 *
 * Frees the decoder's index (FDE keys and entries, blocks, row runs and
 * marks) and forgets where the bytes are: once a table answers for every
 * PC, the module needs neither, and the caller may free the bytes.  The
 * elements (a few dozen bytes each: version, ABI) and the text's bounds
 * stay.  Lookups through the decoder fail with -EFAULT from then on.
 */
void sfu_section_strip(struct sfu_section *sec)
{
	if (!sec->table)
		return;
	sfu_index_free(sec);
	sec->base = 0;
}

/**
 * sfu_section_movable() - whether a section's index may serve other addresses
 * @sec: an indexed section
 *
 * The index is relative to the text (lookup entries, blocks, rule table)
 * or to the section (everything else), except the keys of an unsorted
 * section, which hold link-time function starts; those are read only
 * where there are no lookup entries (a text span over 4 GiB).
 *
 * Return: true if sfu_section_move() gives a working copy.
 */
bool sfu_section_movable(const struct sfu_section *sec)
{
	return !sec->keys || sec->ents;
}

/**
 * sfu_section_move() - the same section, mapped @delta bytes further
 * @dst: the copy; it shares @src's arrays, which @src keeps owning
 * @src: a section for which sfu_section_movable() is true
 * @delta: how far the section and its text moved
 */
void sfu_section_move(struct sfu_section *dst, const struct sfu_section *src,
		      u64 delta)
{
	*dst = *src;
	dst->vaddr += delta;
	dst->text_lo += delta;
	dst->text_hi += delta;
}

/**
 * sfu_section_bytes() - memory the decoder's indexes of a section hold
 * @sec: the section
 *
 * Every array sfu_section_init() and sfu_table_build() allocated.
 *
 * Return: bytes.
 */
size_t sfu_section_bytes(const struct sfu_section *sec)
{
	size_t n = (size_t)sec->nr_elems * sizeof(*sec->elems) +
		   (size_t)sec->nr_blocks * sizeof(*sec->blocks) +
		   (size_t)sec->nr_runs * sizeof(*sec->runs) +
		   (size_t)sec->nr_marks * sizeof(*sec->marks);

	if (sec->ents)
		n += (size_t)sec->nr_fdes * sizeof(*sec->ents);
	if (sec->keys)
		n += (size_t)sec->nr_fdes * sizeof(*sec->keys);
	return n + sfu_table_bytes(sec);
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

/* FDE id at sorted position @pos: the position itself unless keys exist. */
static u32 sfu_pos_id(const struct sfu_section *sec, u32 pos)
{
	return sec->keys ? sec->keys[pos].id : pos;
}

/* Take @n units of work from @budget. */
static bool sfu_spend(u32 *budget, u32 n)
{
	if (*budget < n) {
		*budget = 0;
		return false;
	}
	*budget -= n;
	return true;
}

/* The same, reading the starts from the keys or the section. */
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
	u32 off = sec->ents[pos].rows;

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
	u32 b, pos, hi, id;
	int ret;

	/*
	 * One compare for both ends, as sfu_table_find(): text_hi wraps to 0
	 * where the one function starts at the top byte of the space.
	 */
	if (!sec->nr_fdes || pc - sec->text_lo >= sec->text_hi - sec->text_lo)
		return -ENOENT;
	/* Stripped (sfu_section_strip()): only its rule table answers. */
	if (!sec->blocks)
		return -EFAULT;
	b = (u32)((pc - sec->text_lo) >> sec->block_shift);
	pos = sec->blocks[b];
	hi = b + 1 < sec->nr_blocks ? sec->blocks[b + 1] : sec->nr_fdes - 1;
	if (sec->ents) {
		pos = sfu_search_ents(sec, (u32)(pc - sec->text_lo), pos, hi);
		ret = sfu_read_rows_ahead(sec, pos, it, budget);
	} else {
		ret = sfu_search_section(sec, pc, &pos, hi, budget);
	}
	if (ret)
		return ret;
	if (!sfu_spend(budget, 1))
		return -ERANGE;
	/* sfu_read_fde() re-reads and re-checks the descriptor itself. */
	id = sfu_pos_id(sec, pos);
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

/* An FDE's rows, for finding the FDEs that share them. */
struct sfu_vkey {
	u64 fres_off;
	struct sfu_rows_shape shape;
	u32 idx;
	u32 size;
};

static int sfu_vkey_cmp(const void *pa, const void *pb)
{
	const struct sfu_vkey *a = pa, *b = pb;

	if (a->fres_off != b->fres_off)
		return a->fres_off < b->fres_off ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/*
 * The keys of @e's FDEs that have rows; *@nr gets their number.  An FDE
 * without rows shares nothing, even where its offset is its neighbour's
 * (as gas and ld write them), so it takes no part in the grouping.
 */
static int sfu_vkeys_read(struct sfu_section *sec, const struct sfu_elem *e,
			  struct sfu_vkey *keys, u32 *nr)
{
	struct sfu_fde fde;
	u32 i, n = 0;
	int ret;

	for (i = 0; i < e->num_fdes; i++) {
		ret = sfu_read_fde(sec, e, i, &fde);
		if (ret)
			return ret;
		if (!fde.num_fres)
			continue;
		keys[n].fres_off = fde.fres_off;
		sfu_fde_shape(&fde, &keys[n].shape);
		keys[n].idx = i;
		keys[n].size = fde.size;
		n++;
	}
	*nr = n;
	return 0;
}

/*
 * The rows at one offset, once for all the FDEs that point there (a
 * compacted section shares identical row sequences).  They must agree on
 * how to read them; the smallest function bounds the row starts.
 */
static int sfu_validate_group(struct sfu_section *sec,
			      const struct sfu_elem *e,
			      const struct sfu_vkey *k, u32 n, u64 *rows)
{
	struct sfu_fde fde;
	u32 i, size = k[0].size;
	int ret;

	for (i = 1; i < n; i++) {
		if (!sfu_same_shape(&k[0].shape, &k[i].shape)) {
			sec->diag.what = "FDEs share FREs but not their layout";
			sec->diag.off = e->fde_off + (u64)k[i].idx * e->fde_size;
			return -EBADMSG;
		}
		if (k[i].size < size)
			size = k[i].size;
	}
	/* Bounds the work: distinct row groups fit in the header's count. */
	*rows += k[0].shape.num_fres;
	if (*rows > e->num_fres) {
		sec->diag.what = "FDEs claim more FREs than the header";
		sec->diag.off = e->fde_off + (u64)k[0].idx * e->fde_size;
		return -EBADMSG;
	}
	ret = sfu_read_fde(sec, e, k[0].idx, &fde);
	if (ret)
		return ret;
	fde.size = size;
	return sfu_fde_rules(sec, &fde, NULL, NULL);
}

static int sfu_validate_elem(struct sfu_section *sec,
			     const struct sfu_elem *e)
{
	struct sfu_vkey *keys;
	u64 rows = 0;
	u32 i, n, nr;
	int ret;

	if (!e->num_fdes)
		return 0;
	keys = sfu_alloc_array(e->num_fdes, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ret = sfu_vkeys_read(sec, e, keys, &nr);
	if (ret)
		goto free_keys;
	sfu_sort(keys, nr, sizeof(*keys), sfu_vkey_cmp);
	for (i = 0; i < nr; i += n) {
		for (n = 1; i + n < nr &&
		     keys[i + n].fres_off == keys[i].fres_off; n++)
			;
		ret = sfu_validate_group(sec, e, &keys[i], n, &rows);
		if (ret)
			break;
		sfu_cond_resched();
	}
free_keys:
	sfu_free(keys);
	return ret;
}

/**
 * sfu_section_validate() - check every FDE and FRE of a section
 * @sec: an initialised section
 *
 * Reads every descriptor and row and decodes every rule, so that a section
 * that passes cannot fail a lookup for being corrupt (unless it changes).
 * FDEs may share rows (identical sequences at one offset, as compacted
 * sections have); each distinct sequence is read once, and together they
 * may not hold more rows than the header counts, which bounds the work by
 * the section size.
 *
 * Return: 0 or the first error; @sec->diag says where.
 */
int sfu_section_validate(struct sfu_section *sec)
{
	u32 i;
	int ret;

	for (i = 0; i < sec->nr_elems; i++) {
		ret = sfu_validate_elem(sec, &sec->elems[i]);
		if (ret)
			return ret;
	}
	return 0;
}
