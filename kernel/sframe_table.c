// SPDX-License-Identifier: GPL-2.0
/*
 * The rule table: a section's rows decoded once, for lookups that read
 * nothing but kernel memory.
 *
 * A lookup through the section itself reads and checks the descriptor,
 * reads the function's rows and decodes them up to the PC, and turns the
 * row into a rule: some hundreds of instructions and two reads of user
 * memory per frame, where a frame-pointer step is two loads.  For sections
 * that do not change once registered (those of files and sidecars, read
 * from a kernel copy), the table does that work at set-up, in the spirit
 * of ORC's tables:
 *
 *  - a function per FDE, in the order of the lookup entries: its start
 *    and size, its first row and number of rows, its repeat size (PCMASK);
 *  - the rows of the functions: each row's start offset and the number of
 *    its rule, next to each other; functions whose rows are the same (the
 *    same starts and rules: a common prologue, a leaf that keeps its frame
 *    on the stack pointer) share one copy;
 *  - the distinct rules, each stored once.
 *
 * A lookup is then the block slot, a binary search of the functions of
 * one block (their starts are in the functions themselves, so the line
 * that ends the search holds the function found), a binary search of one
 * function's rows and a copy of the rule.  The rows of the block's
 * functions are prefetched before the search (where each block's rows
 * begin is kept too), so that the function's line and its rows' lines
 * are fetched together rather than one after the other.
 * Its answers are the section's own: the table is built with the same
 * decoder, and a section it cannot describe exactly (a corrupt row, too
 * many distinct rules) gets no table and is read as before.  Sections in
 * user memory that may change (JIT) never get one.
 */
#include "sframe_internal.h"

/* Distinct rules a table may hold: rule numbers are 16 bits. */
#define SFU_TABLE_MAX_RULES	0xffff
/* Rows a table may hold (shared rows count once), and functions. */
#define SFU_TABLE_MAX_ROWS	BIT(24)
/* Buckets of the rule hash while building: a power of two. */
#define SFU_TABLE_HASH_MIN	64
/*
 * Rows a lookup asks for ahead: those of its block, up to four lines of
 * x86-64's and arm64's 64 bytes (s390's lines are larger: asks that fall
 * on a line already asked for cost an instruction each).
 */
#define SFU_TABLE_LINE		64
#define SFU_TABLE_AHEAD		(4 * SFU_TABLE_LINE)
/* Hot entries (struct sfu_table): 2^6 to 2^10, about one per row. */
#define SFU_HOT_MIN_BITS	6
#define SFU_HOT_MAX_BITS	10

bool sfu_table_hot_enabled = true;

/* FNV-1a, 32 bits. */
#define SFU_FNV_BASIS		2166136261u
#define SFU_FNV_PRIME		16777619u

/*
 * A table being built: the rule hash and the row-sequence hash, both open
 * addressing, power-of-two sizes.
 */
struct sfu_table_build {
	struct sfu_table *t;
	u32 *hash;		/* rule number + 1, 0: empty */
	u32 hash_size;
	u32 max_rules;		/* room in t->rules */
	u32 max_rows;		/* room in t->rows */
	u32 decoded;		/* rows decoded so far, kept or not */
	u32 *seqs;		/* position of a function + 1, 0: empty */
	u32 seqs_size;
	u32 *srcs;		/* the same, by where the FRE data is */
};

static u32 sfu_fnv(u32 h, const void *buf, size_t len)
{
	const u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * SFU_FNV_PRIME;
	return h;
}

/* The hash of a rule's bytes (rules are zeroed before they are made). */
static u32 sfu_rule_hash(const struct sfu_rule *rule)
{
	return sfu_fnv(SFU_FNV_BASIS, rule, sizeof(*rule));
}

static int sfu_table_grow_rules(struct sfu_table_build *b)
{
	u32 n = b->max_rules * 2, i, *hash;
	struct sfu_rule *rules;

	if (n > SFU_TABLE_MAX_RULES + 1)
		n = SFU_TABLE_MAX_RULES + 1;
	rules = sfu_alloc_array(n, sizeof(*rules));
	hash = sfu_alloc_array(2 * n, sizeof(*hash));
	if (!rules || !hash) {
		sfu_free(rules);
		sfu_free(hash);
		return -ENOMEM;
	}
	if (b->t->nr_rules)
		memcpy(rules, b->t->rules, b->t->nr_rules * sizeof(*rules));
	memset(hash, 0, 2 * n * sizeof(*hash));
	sfu_free(b->t->rules);
	sfu_free(b->hash);
	b->t->rules = rules;
	b->hash = hash;
	b->hash_size = 2 * n;
	b->max_rules = n;
	for (i = 0; i < b->t->nr_rules; i++) {
		u32 h = sfu_rule_hash(&rules[i]) & (b->hash_size - 1);

		while (b->hash[h])
			h = (h + 1) & (b->hash_size - 1);
		b->hash[h] = i + 1;
	}
	return 0;
}

/* The number of @rule in the table, added if new; -E2BIG if full. */
static int sfu_table_rule_id(struct sfu_table_build *b,
			     const struct sfu_rule *rule, u16 *id)
{
	u32 h, n;
	int ret;

	if (b->t->nr_rules == b->max_rules) {
		if (b->max_rules > SFU_TABLE_MAX_RULES)
			return -E2BIG;
		ret = sfu_table_grow_rules(b);
		if (ret)
			return ret;
	}
	h = sfu_rule_hash(rule) & (b->hash_size - 1);
	while ((n = b->hash[h])) {
		if (!memcmp(&b->t->rules[n - 1], rule, sizeof(*rule))) {
			*id = n - 1;
			return 0;
		}
		h = (h + 1) & (b->hash_size - 1);
	}
	n = b->t->nr_rules++;
	b->t->rules[n] = *rule;
	b->hash[h] = n + 1;
	*id = n;
	return 0;
}

/* Append the row at @start with @rule to the table. */
static int sfu_table_add_row(struct sfu_table_build *b, u32 start,
			     const struct sfu_rule *rule)
{
	struct sfu_table *t = b->t;
	u16 id;
	int ret;

	/*
	 * Rows decoded, kept or shared, stay within the section's FREs and
	 * one per function: FRE data that functions share is decoded once
	 * (sfu_table_same_src()), so only a section whose descriptors
	 * overlap each other's rows in other ways gets here.
	 */
	if (b->decoded == b->max_rows)
		return -E2BIG;
	b->decoded++;
	ret = sfu_table_rule_id(b, rule, &id);
	if (ret)
		return ret;
	t->rows[t->nr_rows].start = start;
	t->rows[t->nr_rows].rule = id;
	t->nr_rows++;
	return 0;
}

static_assert(sizeof(struct sfu_table_row) == sizeof(u32) + sizeof(u16),
	      "rows have no padding: their bytes are their fields");

/* The hash of the @nr rows at @first. */
static u32 sfu_seq_hash(const struct sfu_table *t, u32 first, u32 nr)
{
	return sfu_fnv(SFU_FNV_BASIS, &t->rows[first], nr * sizeof(*t->rows));
}

static bool sfu_seq_equal(const struct sfu_table *t, u32 a, u32 b, u32 nr)
{
	return !memcmp(&t->rows[a], &t->rows[b], nr * sizeof(*t->rows));
}

/*
 * The rows just appended for the function at @pos: if an earlier function
 * has the same, point to those and take the new ones back.
 */
static void sfu_table_share_rows(struct sfu_table_build *b, u32 pos)
{
	struct sfu_table *t = b->t;
	struct sfu_table_fn *fn = &t->fns[pos];
	const struct sfu_table_fn *old;
	u32 h, n;

	if (!fn->nr)
		return;
	h = sfu_seq_hash(t, fn->first, fn->nr) & (b->seqs_size - 1);
	while ((n = b->seqs[h])) {
		old = &t->fns[n - 1];
		if (old->nr == fn->nr &&
		    sfu_seq_equal(t, old->first, fn->first, fn->nr)) {
			t->nr_rows = fn->first;
			fn->first = old->first;
			return;
		}
		h = (h + 1) & (b->seqs_size - 1);
	}
	b->seqs[h] = pos + 1;
}

/* The rows of @fde, decoded and appended. */
static int sfu_table_add_rows(struct sfu_section *sec,
			      struct sfu_table_build *b,
			      const struct sfu_fde *fde)
{
	struct sfu_fre_iter it;
	struct sfu_rule rule;
	struct sfu_fre fre;
	int ret;

	if (!fde->num_fres) {
		ret = sfu_fde_empty_rule(fde, &rule);
		if (ret == -ENOENT)
			return 0;
		return ret ?: sfu_table_add_row(b, 0, &rule);
	}
	sfu_fre_iter_init(fde, &it);
	while (!(ret = sfu_fre_next(sec, fde, &it, &fre, SFU_MEM_KERNEL))) {
		ret = sfu_fre_rule(sec, fde, &fre, &rule);
		if (!ret)
			ret = sfu_table_add_row(b, fre.start, &rule);
		if (ret)
			return ret;
	}
	return ret == -ENOENT ? 0 : ret;
}

/* The descriptor of the function at sorted position @pos. */
static int sfu_table_fde(struct sfu_section *sec, u32 pos, struct sfu_fde *fde)
{
	u32 id = sec->keys ? sec->keys[pos].id : pos;
	const struct sfu_elem *e = sfu_elem_of(sec, id);

	return sfu_read_fde(sec, e, id - e->first_id, fde, SFU_MEM_KERNEL);
}

/* Do @a and @b read their FRE data the same way, up to their sizes? */
static bool sfu_same_reading(const struct sfu_fde *a, const struct sfu_fde *b)
{
	return a->num_fres == b->num_fres && a->info == b->info &&
	       a->info2 == b->info2 && a->rep_size == b->rep_size &&
	       a->fde_type == b->fde_type;
}

/*
 * An earlier function whose FRE data @fde points to and reads the same
 * way: its rows are @fde's too, as long as they start within @fde (the
 * decoder's own check).  Else remember @fde, at @pos, for later ones.
 * Return: the earlier function or NULL.
 */
static const struct sfu_table_fn *
sfu_table_same_src(struct sfu_section *sec, struct sfu_table_build *b,
		   const struct sfu_fde *fde, u32 pos)
{
	const struct sfu_table *t = b->t;
	const struct sfu_table_fn *old;
	struct sfu_fde prev;
	u32 h, n, limit;

	if (!fde->num_fres)
		return NULL;
	h = sfu_fnv(SFU_FNV_BASIS, &fde->fres_off, sizeof(fde->fres_off)) &
	    (b->seqs_size - 1);
	limit = fde->pc_type == SFRAME_FDE_TYPE_PCMASK ? fde->rep_size :
							 fde->size;
	while ((n = b->srcs[h])) {
		old = &t->fns[n - 1];
		if (!sfu_table_fde(sec, n - 1, &prev) &&
		    prev.fres_off == fde->fres_off &&
		    sfu_same_reading(&prev, fde))
			return old->nr == fde->num_fres &&
			       t->rows[old->first + old->nr - 1].start <= limit ?
			       old : NULL;
		h = (h + 1) & (b->seqs_size - 1);
	}
	b->srcs[h] = pos + 1;
	return NULL;
}

/* The function at sorted position @pos and its rows. */
static int sfu_table_add_fn(struct sfu_section *sec, struct sfu_table_build *b,
			    u32 pos)
{
	struct sfu_table_fn *fn = &b->t->fns[pos];
	const struct sfu_table_fn *same;
	struct sfu_fde fde;
	int ret;

	ret = sfu_table_fde(sec, pos, &fde);
	if (ret)
		return ret;
	fn->start = (u32)(fde.start - sec->text_lo);
	fn->size = fde.size;
	fn->rep = fde.pc_type == SFRAME_FDE_TYPE_PCMASK ? fde.rep_size : 0;
	same = sfu_table_same_src(sec, b, &fde, pos);
	if (same) {
		fn->first = same->first;
		fn->nr = same->nr;
		return 0;
	}
	fn->first = b->t->nr_rows;
	ret = sfu_table_add_rows(sec, b, &fde);
	fn->nr = b->t->nr_rows - fn->first;
	if (!ret)
		sfu_table_share_rows(b, pos);
	return ret;
}

/*
 * Rows a table may decode: the section's FREs, and one per function (a
 * V3 function without rows may still have a rule).
 */
static u32 sfu_table_room(struct sfu_section *sec)
{
	u64 rows = 0;
	u32 i;

	for (i = 0; i < sec->nr_elems; i++)
		rows += sec->elems[i].num_fres;
	/* Functions without rows may still have a rule (V3): one each. */
	rows += sec->nr_fdes;
	return rows > SFU_TABLE_MAX_ROWS ? SFU_TABLE_MAX_ROWS : (u32)rows;
}

/* Hot entries for a table of @rows rows: log2 of their number. */
static u8 sfu_hot_bits(u32 rows)
{
	u8 bits = SFU_HOT_MIN_BITS;

	while (bits < SFU_HOT_MAX_BITS && BIT(bits) < rows)
		bits++;
	return bits;
}

/* Buckets for the row sequences of @nr_fns functions: at most half full. */
static u32 sfu_seqs_size(u32 nr_fns)
{
	u32 n = SFU_TABLE_HASH_MIN;

	while (n < 2ULL * nr_fns)
		n *= 2;
	return n;
}

static int sfu_table_alloc(struct sfu_table *t, u32 nr_fns, u32 room,
			   struct sfu_table_build *b)
{
	t->fns = sfu_alloc_array(nr_fns, sizeof(*t->fns));
	t->rows = sfu_alloc_array(room, sizeof(*t->rows));
	b->max_rows = room;
	t->hot_bits = sfu_hot_bits(room);
	t->hot = sfu_alloc_array(BIT(t->hot_bits), sizeof(*t->hot));
	b->seqs_size = sfu_seqs_size(nr_fns);
	b->seqs = sfu_alloc_array(b->seqs_size, sizeof(*b->seqs));
	b->srcs = sfu_alloc_array(b->seqs_size, sizeof(*b->srcs));
	if (!t->fns || !t->rows || !t->hot || !b->seqs || !b->srcs)
		return -ENOMEM;
	memset(t->hot, 0, BIT(t->hot_bits) * sizeof(*t->hot));
	memset(b->seqs, 0, b->seqs_size * sizeof(*b->seqs));
	memset(b->srcs, 0, b->seqs_size * sizeof(*b->srcs));
	b->t = t;
	b->max_rules = SFU_TABLE_HASH_MIN / 2;
	return sfu_table_grow_rules(b);
}

/*
 * Give back the room of rows that turned out to be shared (one row at
 * least, so that the array stays).  Return: 0 or -ENOMEM.
 */
static int sfu_table_trim(struct sfu_table *t, u32 room)
{
	u32 n = t->nr_rows ?: 1;
	struct sfu_table_row *rows;

	if (n == room)
		return 0;
	rows = sfu_alloc_array(n, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	memcpy(rows, t->rows, t->nr_rows * sizeof(*rows));
	sfu_free(t->rows);
	t->rows = rows;
	return 0;
}

/*
 * Where each block's rows begin, so that a lookup can ask for them while
 * it searches the functions instead of after.
 */
static int sfu_table_block_rows(const struct sfu_section *sec,
				struct sfu_table *t)
{
	u32 b;

	t->block_rows = sfu_alloc_array(sec->nr_blocks,
					sizeof(*t->block_rows));
	if (!t->block_rows)
		return -ENOMEM;
	for (b = 0; b < sec->nr_blocks; b++)
		t->block_rows[b] = t->fns[sec->blocks[b]].first;
	return 0;
}

static void sfu_table_free(struct sfu_table *t)
{
	sfu_free(t->fns);
	sfu_free(t->rows);
	sfu_free(t->block_rows);
	sfu_free(t->rules);
	sfu_free(t->hot);
	memset(t, 0, sizeof(*t));
}

/**
 * sfu_table_build() - decode every row of a section into a rule table
 * @sec: a section set up with sfu_section_init() in kernel memory, with
 *	lookup entries, that will not change
 *
 * Rows are decoded once per function and stored once per distinct
 * sequence.  A section the table cannot describe as the decoder reads it (a corrupt
 * row or descriptor, more rows or distinct rules than a table holds) is
 * left without one.
 *
 * Return: 0 with @sec->table set, -ENOMEM, or the reason there is none
 * (-EBADMSG with @sec->diag set, -E2BIG, -EOPNOTSUPP for a section that
 * must be read where it lives).
 */
int sfu_table_build(struct sfu_section *sec)
{
	struct sfu_table_build b = { };
	struct sfu_table *t;
	u32 pos, room;
	int ret;

	if (sec->mem != SFU_MEM_KERNEL || !sec->ents || !sec->nr_fdes)
		return -EOPNOTSUPP;
	if (sec->nr_fdes > SFU_TABLE_MAX_ROWS)
		return -E2BIG;
	t = sfu_alloc_array(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	room = sfu_table_room(sec);
	ret = sfu_table_alloc(t, sec->nr_fdes, room, &b);
	for (pos = 0; !ret && pos < sec->nr_fdes; pos++) {
		ret = sfu_table_add_fn(sec, &b, pos);
		if (!(pos % SFU_TABLE_HASH_MIN))
			sfu_cond_resched();
	}
	sfu_free(b.hash);
	sfu_free(b.seqs);
	sfu_free(b.srcs);
	if (!ret)
		ret = sfu_table_trim(t, b.max_rows);
	if (!ret)
		ret = sfu_table_block_rows(sec, t);
	if (ret) {
		sfu_table_free(t);
		sfu_free(t);
		return ret;
	}
	sec->table = t;
	return 0;
}

/**
 * sfu_table_destroy() - free a section's rule table, if it has one
 * @sec: the section
 */
void sfu_table_destroy(struct sfu_section *sec)
{
	if (!sec->table)
		return;
	sfu_table_free(sec->table);
	sfu_free(sec->table);
	sec->table = NULL;
}

/**
 * sfu_table_bytes() - memory a section's rule table holds
 * @sec: the section
 *
 * Return: bytes (0 without a table).
 */
size_t sfu_table_bytes(const struct sfu_section *sec)
{
	const struct sfu_table *t = sec->table;

	if (!t)
		return 0;
	return sizeof(*t) + (size_t)sec->nr_fdes * sizeof(*t->fns) +
	       (size_t)(t->nr_rows ?: 1) * sizeof(*t->rows) +
	       (size_t)sec->nr_blocks * sizeof(*t->block_rows) +
	       (size_t)t->nr_rules * sizeof(*t->rules) +
	       BIT(t->hot_bits) * sizeof(*t->hot);
}

/* Last of the @nr rows at @first whose start is <= @off, or @nr. */
static u32 sfu_table_row(const struct sfu_table *t, u32 first, u32 nr,
			 u32 off)
{
	u32 lo = 0, hi = nr, mid;

	/* Number of rows whose start is <= off. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[first + mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : nr;
}

/*
 * The number of the rule at offset @off from text_lo, given the sorted
 * position @pos of the last function starting at or before it.
 * Return: 0 or -ENOENT, as sfu_find_rule() would.
 */
static int sfu_table_rule_at(const struct sfu_table *t, u32 pos, u32 off,
			     u16 *id)
{
	const struct sfu_table_fn *fn = &t->fns[pos];
	u32 in, row;

	if (off < fn->start || off - fn->start >= fn->size)
		return -ENOENT;
	in = off - fn->start;
	if (fn->rep)
		in %= fn->rep;
	row = sfu_table_row(t, fn->first, fn->nr, in);
	if (row == fn->nr)
		return -ENOENT;
	*id = t->rows[fn->first + row].rule;
	return 0;
}

/*
 * Ask for the rows of the functions of block @b while their search runs:
 * the rows' lines then arrive with the function's, not after it.  Always
 * inline: GCC takes a function that does nothing but prefetch for one
 * without effects and drops calls to it.
 */
static __always_inline void
sfu_table_rows_ahead(const struct sfu_section *sec, const struct sfu_table *t,
		     u32 b)
{
	u32 first = t->block_rows[b], end;
	const u8 *p = (const u8 *)&t->rows[first];
	size_t len, off;

	end = b + 1 < sec->nr_blocks ? t->block_rows[b + 1] : t->nr_rows;
	len = end > first ? (size_t)(end - first) * sizeof(*t->rows) : 1;
	if (len > SFU_TABLE_AHEAD)
		len = SFU_TABLE_AHEAD;
	for (off = 0; off < len; off += SFU_TABLE_LINE)
		prefetch(p + off);
	prefetch(p + len - 1);
}

/**
 * sfu_table_find() - the rule at a PC, searched in a section's rule table
 * @sec: a section with a rule table (@sec->table)
 * @pc: the address
 *
 * What sfu_find_rule() answers for @pc, from kernel memory alone and
 * without a copy; the answer is kept in @pc's hot entry, which
 * sfu_table_find_hot() reads first.  Any context; the entries are read
 * and written whole, so concurrent lookups at worst replace each other's.
 *
 * Return: the rule, valid as long as the table, or NULL where nothing
 * describes @pc.
 */
const struct sfu_rule *sfu_table_find(const struct sfu_section *sec, u64 pc)
{
	const struct sfu_table *t = sec->table;
	u32 off, b, hi, pos;
	u16 id;

	if (pc < sec->text_lo || pc >= sec->text_hi)
		return NULL;
	off = (u32)(pc - sec->text_lo);
	b = (u32)((u64)off >> sec->block_shift);
	hi = b + 1 < sec->nr_blocks ? sec->blocks[b + 1] : sec->nr_fdes - 1;
	sfu_table_rows_ahead(sec, t, b);
	/* The functions hold their starts: the entries are not read. */
	pos = sfu_search_starts(t->fns, sizeof(*t->fns), off, sec->blocks[b],
				hi);
	if (sfu_table_rule_at(t, pos, off, &id))
		return NULL;
	if (sfu_table_hot_enabled)
		WRITE_ONCE(*sfu_table_hot_slot(t, off),
			   (u64)off << 32 | (id + 1U));
	return &t->rules[id];
}
