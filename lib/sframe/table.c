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
 * of ORC's tables, and lays the answers out flat over the text:
 *
 *  - entries sorted by address, each an offset from text_lo and the rule
 *    in force from there to the next entry (none where nothing describes
 *    the PC: between functions, before a function's first row); a
 *    function's rows become entries at their absolute offsets, those of
 *    a repeating (PCMASK) function once per repetition, and an entry with
 *    the rule of the one before it is left out;
 *  - a block index: the text cut into 2^shift byte blocks of about
 *    SFU_TABLE_BLOCK_ROWS entries each, none larger than 256 bytes, and
 *    for each block the entry in force at its start, in two bytes from
 *    its group's four (table.h);
 *  - the distinct rules, each stored once, the most used first.
 *
 * An entry takes two bytes (table.h): the low 8 bits of its start,
 * which is all a search within one block compares, and a one-byte code,
 * the rule's number for the SFU_TABLE_CODE_NONE rules most used.  The
 * few entries with a rule past those are listed aside with their rule
 * (the spill list), and found there by position, from where their group's
 * start in the list: real sections have a few hundred distinct rules, and
 * those past the first 254 are rare.  A crafted section may spill most
 * entries, and a lookup must not cost much more for it: where more than
 * SFU_TABLE_GROUP_SPILLS spill in one group, the table keeps every
 * entry's rule number in two more bytes instead (wide), and a spilled
 * code's rule is one load away.
 *
 * A lookup is then one index slot and a search of one block's entries
 * (asked for together before the search: a line or two), and it returns
 * the rule in place.  It writes nothing, so CPUs walking the same library
 * share its lines.  The functions themselves are not kept: their starts,
 * ends and repetitions are in the entries.  A walk looks up its callers'
 * return addresses through the memo (table.h), which remembers the rules
 * of the first return addresses looked up, one word each, written once.
 *
 * Its answers are the section's own: the table is built with the same
 * decoder from the same descriptors, a function's entries end where the
 * lookup of the section would stop reading it (its end, or the next
 * function's start), and a section it cannot describe exactly (a corrupt
 * row, too many distinct rules) gets no table, and its caller refuses it.  The
 * work of a build is bounded by the section's size: FRE data that several
 * functions point to is decoded once, and rows decoded and entries made
 * stop at a multiple of the section's rows and functions (-E2BIG).
 * Sections in user memory that may change (JIT) never get a table.
 */
#include "internal.h"

/* Distinct rules a table may hold: their numbers stay below the marker. */
#define SFU_TABLE_MAX_RULES	SFU_TABLE_NONE
/* Entries a table may hold, and functions it may describe. */
#define SFU_TABLE_MAX_ROWS	BIT(24)
/*
 * Work a build may do: rows decoded and entries made, up to this many
 * times the section's rows and functions, plus the repetitions of PLT
 * entries (a repeating function's rows are made once per repetition).
 */
#define SFU_TABLE_WORK_FACTOR	4
#define SFU_TABLE_REPEAT_ROWS	BIT(16)
/* Buckets of the build's hashes, at least: a power of two. */
#define SFU_TABLE_HASH_MIN	64
/* Entries of a block, about: 48 bytes, a line or two. */
#define SFU_TABLE_BLOCK_ROWS	8

/* Blocks span 16 bytes of text at least, 256 at most. */
#define SFU_TABLE_SHIFT_MIN	4
#define SFU_TABLE_SHIFT_MAX	SFU_TABLE_PAGE_SHIFT
/*
 * Blocks a table may have: 2^16 (16 MiB of text), or more where the
 * entries are that dense at least: one per 4 KiB of text, where real
 * files have one per 40 to 80 bytes.  Its index (two bytes and a bit per
 * block) then stays within a small multiple of the entries, whatever
 * span of text a section claims.
 */
#define SFU_TABLE_FREE_BLOCKS	BIT(16)
#define SFU_TABLE_BLOCKS_PER_ROW	16
/*
 * Spilled entries a group may hold in the spill list (a lookup halves
 * them in eight steps, as a block's entries); beyond, the table is wide.
 */
#define SFU_TABLE_GROUP_SPILLS	256

/* FNV-1a, 32 bits. */
#define SFU_FNV_BASIS		2166136261u
#define SFU_FNV_PRIME		16777619u

/*
 * An entry being built, or a row decoded: from @start (an offset from
 * text_lo, or from its function) @rule is in force.
 */
struct sfu_table_row {
	u32 start;
	u16 rule;		/* in sfu_table.rules, or SFU_TABLE_NONE */
};

/* A row where nothing describes the PC (gaps, row-less starts). */
#define SFU_TABLE_NONE		0xffffU

/* FRE data decoded once: where its rows went, and how it was read. */
struct sfu_table_src {
	u64 fres_off;
	struct sfu_rows_shape shape;
	u32 first;		/* in sfu_table_build.runs */
	u32 nr;
};

/*
 * A table being built: its entries with their whole starts, the rule
 * hash, the rows decoded (by where their FRE data is) and what is left of
 * the work a build may do.
 */
struct sfu_table_build {
	struct sfu_table *t;
	struct sfu_table_row *rows;	/* the entries */
	u32 nr_rows;
	u32 cap_rows;		/* room in rows */
	u32 *hash;		/* rule number + 1, 0: empty */
	u32 hash_size;
	u32 max_rules;		/* room in t->rules */
	u32 work;		/* rows decoded and entries made, left */
	struct sfu_table_row *runs;	/* starts from their function */
	u32 nr_runs;
	u32 max_runs;
	struct sfu_table_src *srcs;
	u32 nr_srcs;
	u32 *src_hash;		/* source number + 1, 0: empty */
	u32 src_hash_size;
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

/* One unit of the build's work; false when none is left. */
static bool sfu_table_spend(struct sfu_table_build *b)
{
	if (!b->work)
		return false;
	b->work--;
	return true;
}

/* Buckets for @nr keys: a power of two, at most half full. */
static u32 sfu_hash_size(u32 nr)
{
	u32 n = SFU_TABLE_HASH_MIN;

	while (n < 2ULL * nr)
		n *= 2;
	return n;
}

/*
 * Room for twice the rules, at most SFU_TABLE_MAX_RULES, and their hash
 * (a power of two: the probes wrap by its mask, and so reach every
 * bucket and always come to a free one).
 */
static int sfu_table_grow_rules(struct sfu_table_build *b)
{
	u32 n = b->max_rules * 2, size, i, *hash;
	struct sfu_rule *rules;

	if (n > SFU_TABLE_MAX_RULES)
		n = SFU_TABLE_MAX_RULES;
	size = sfu_hash_size(n);
	rules = sfu_alloc_array(n, sizeof(*rules));
	hash = sfu_alloc_array(size, sizeof(*hash));
	if (!rules || !hash) {
		sfu_free(rules);
		sfu_free(hash);
		return -ENOMEM;
	}
	if (b->t->nr_rules)
		memcpy(rules, b->t->rules, b->t->nr_rules * sizeof(*rules));
	memset(hash, 0, size * sizeof(*hash));
	sfu_free(b->t->rules);
	sfu_free(b->hash);
	b->t->rules = rules;
	b->hash = hash;
	b->hash_size = size;
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

	h = sfu_rule_hash(rule) & (b->hash_size - 1);
	while ((n = b->hash[h])) {
		if (!memcmp(&b->t->rules[n - 1], rule, sizeof(*rule))) {
			*id = n - 1;
			return 0;
		}
		h = (h + 1) & (b->hash_size - 1);
	}
	if (b->t->nr_rules == b->max_rules) {
		if (b->max_rules == SFU_TABLE_MAX_RULES)
			return -E2BIG;
		ret = sfu_table_grow_rules(b);
		if (ret)
			return ret;
		/* The hash was made again: find the free bucket anew. */
		h = sfu_rule_hash(rule) & (b->hash_size - 1);
		while (b->hash[h])
			h = (h + 1) & (b->hash_size - 1);
	}
	n = b->t->nr_rules++;
	b->t->rules[n] = *rule;
	b->hash[h] = n + 1;
	*id = n;
	return 0;
}

/* A row decoded, at @start in its function, with @rule. */
static int sfu_table_add_run(struct sfu_table_build *b, u32 start,
			     const struct sfu_rule *rule)
{
	u16 id;
	int ret;

	if (b->nr_runs == b->max_runs || !sfu_table_spend(b))
		return -E2BIG;
	ret = sfu_table_rule_id(b, rule, &id);
	if (ret)
		return ret;
	b->runs[b->nr_runs].start = start;
	b->runs[b->nr_runs].rule = id;
	b->nr_runs++;
	return 0;
}

/* sfu_fde_rules()'s callback: each row of a function, added to the runs. */
static int sfu_table_row(void *arg, u32 start, const struct sfu_rule *rule)
{
	return sfu_table_add_run(arg, start, rule);
}

/* The bucket of FRE data at @fres_off among the sources. */
static u32 sfu_src_bucket(const struct sfu_table_build *b, u64 fres_off)
{
	return sfu_fnv(SFU_FNV_BASIS, &fres_off, sizeof(fres_off)) &
	       (b->src_hash_size - 1);
}

/*
 * The rows of FRE data decoded before, if @fde reads it as the function
 * that had it decoded did and they start within @fde (the decoder's own
 * check).  Else NULL, with *@bucket free for @fde's own if it is the first
 * to point there.
 */
static const struct sfu_table_src *
sfu_table_same_src(const struct sfu_table_build *b, const struct sfu_fde *fde,
		   u32 *bucket)
{
	const struct sfu_table_src *src;
	struct sfu_rows_shape shape;
	u32 h, n, limit;

	sfu_fde_shape(fde, &shape);
	limit = fde->pc_type == SFRAME_FDE_TYPE_PCMASK ? fde->rep_size :
							 fde->size;
	for (h = sfu_src_bucket(b, fde->fres_off); (n = b->src_hash[h]);
	     h = (h + 1) & (b->src_hash_size - 1)) {
		src = &b->srcs[n - 1];
		if (src->fres_off != fde->fres_off)
			continue;
		*bucket = b->src_hash_size;
		if (sfu_same_shape(&src->shape, &shape) &&
		    b->runs[src->first + src->nr - 1].start <= limit)
			return src;
		return NULL;
	}
	*bucket = h;
	return NULL;
}

/*
 * The rows of @fde, in b->runs: *@nr of them at *@first, decoded once for
 * all the functions that point to the same FRE data and read it alike.
 */
static int sfu_table_fn_rows(struct sfu_section *sec, struct sfu_table_build *b,
			     const struct sfu_fde *fde, u32 *first, u32 *nr)
{
	const struct sfu_table_src *same;
	struct sfu_table_src *src;
	struct sfu_rule rule;
	u32 bucket;
	int ret;

	*first = b->nr_runs;
	*nr = 0;
	if (!fde->num_fres) {
		ret = sfu_fde_empty_rule(fde, &rule);
		if (ret == -ENOENT)
			return 0;
		ret = ret ?: sfu_table_add_run(b, 0, &rule);
		*nr = b->nr_runs - *first;
		return ret;
	}
	same = sfu_table_same_src(b, fde, &bucket);
	if (same) {
		*first = same->first;
		*nr = same->nr;
		return 0;
	}
	ret = sfu_fde_rules(sec, fde, sfu_table_row, b);
	*nr = b->nr_runs - *first;
	if (ret || bucket == b->src_hash_size)
		return ret;
	src = &b->srcs[b->nr_srcs++];
	src->fres_off = fde->fres_off;
	sfu_fde_shape(fde, &src->shape);
	src->first = *first;
	src->nr = *nr;
	b->src_hash[bucket] = b->nr_srcs;
	return 0;
}

static int sfu_table_grow_rows(struct sfu_table_build *b)
{
	struct sfu_table_row *rows;
	u32 n;

	if (b->cap_rows >= SFU_TABLE_MAX_ROWS)
		return -E2BIG;
	n = b->cap_rows > SFU_TABLE_MAX_ROWS / 2 ? SFU_TABLE_MAX_ROWS :
						     2 * b->cap_rows;
	rows = sfu_alloc_array(n, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	memcpy(rows, b->rows, b->nr_rows * sizeof(*rows));
	sfu_free(b->rows);
	b->rows = rows;
	b->cap_rows = n;
	return 0;
}

/* An entry at @start for rule number @rule, unless the last has it. */
static int sfu_table_put(struct sfu_table_build *b, u32 start, u16 rule)
{
	int ret;

	if (!sfu_table_spend(b))
		return -E2BIG;
	if (b->nr_rows && b->rows[b->nr_rows - 1].rule == rule)
		return 0;
	if (b->nr_rows == b->cap_rows) {
		ret = sfu_table_grow_rows(b);
		if (ret)
			return ret;
	}
	b->rows[b->nr_rows].start = start;
	b->rows[b->nr_rows].rule = rule;
	b->nr_rows++;
	return 0;
}

/*
 * The entries of @fde, which starts at @start from text_lo, up to @next
 * (where the lookup finds the next function): its @nr @rows from their
 * starts, once per repetition of a PCMASK function, nothing before its
 * first row in each, nothing after its end.
 */
static int sfu_table_put_fn(struct sfu_table_build *b,
			    const struct sfu_fde *fde, u32 start, u32 next,
			    const struct sfu_table_row *rows, u32 nr)
{
	u64 end = (u64)start + fde->size, base;
	u32 period = fde->size, i;
	int ret;

	if (end > next)
		end = next;
	if (fde->pc_type == SFRAME_FDE_TYPE_PCMASK && fde->rep_size)
		period = fde->rep_size;
	/* Each round makes an entry at least: the work bounds the rounds. */
	for (base = start; base < end; base += period) {
		ret = 0;
		if (!nr || rows[0].start)
			ret = sfu_table_put(b, (u32)base, SFU_TABLE_NONE);
		for (i = 0; !ret && i < nr && rows[i].start < period &&
		     base + rows[i].start < end; i++)
			ret = sfu_table_put(b, (u32)(base + rows[i].start),
					    rows[i].rule);
		if (ret)
			return ret;
	}
	if ((u64)start + fde->size < next)
		return sfu_table_put(b, start + fde->size, SFU_TABLE_NONE);
	return 0;
}

/* The descriptor of the function at sorted position @pos. */
static int sfu_table_fde(struct sfu_section *sec, u32 pos, struct sfu_fde *fde)
{
	u32 id = sec->keys ? sec->keys[pos].id : pos;
	const struct sfu_elem *e = sfu_elem_of(sec, id);

	return sfu_read_fde(sec, e, id - e->first_id, fde);
}

/*
 * The function at sorted position @pos and its entries, up to the next
 * function's start.  A function that starts where the next one does is
 * never found (the lookup takes the last): it has none.
 */
static int sfu_table_add_fn(struct sfu_section *sec, struct sfu_table_build *b,
			    u32 pos)
{
	u32 start = sec->ents[pos].start, next, first, nr;
	struct sfu_fde fde;
	int ret;

	next = pos + 1 < sec->nr_fdes ? sec->ents[pos + 1].start :
					(u32)(sec->text_hi - sec->text_lo);
	if (next == start)
		return 0;
	ret = sfu_table_fde(sec, pos, &fde);
	if (!ret)
		ret = sfu_table_fn_rows(sec, b, &fde, &first, &nr);
	if (!ret)
		ret = sfu_table_put_fn(b, &fde, start, next, &b->runs[first],
				       nr);
	return ret;
}

/* The section's rows, and one per function (a V3 one without rows). */
static u32 sfu_table_room(struct sfu_section *sec)
{
	u64 rows = sec->nr_fdes;
	u32 i;

	for (i = 0; i < sec->nr_elems; i++)
		rows += sec->elems[i].num_fres;
	return rows > SFU_TABLE_MAX_ROWS ? SFU_TABLE_MAX_ROWS : (u32)rows;
}

static int sfu_table_alloc(struct sfu_section *sec, struct sfu_table *t,
			   struct sfu_table_build *b)
{
	u32 room = sfu_table_room(sec);

	b->t = t;
	b->max_runs = room;
	b->cap_rows = room;
	/* At most 4 * 2^24 + 2^16: no overflow. */
	b->work = SFU_TABLE_WORK_FACTOR * room + SFU_TABLE_REPEAT_ROWS;
	b->src_hash_size = sfu_hash_size(sec->nr_fdes);
	b->rows = sfu_alloc_array(room, sizeof(*b->rows));
	b->runs = sfu_alloc_array(room, sizeof(*b->runs));
	b->srcs = sfu_alloc_array(sec->nr_fdes, sizeof(*b->srcs));
	b->src_hash = sfu_alloc_array(b->src_hash_size, sizeof(*b->src_hash));
	if (!b->rows || !b->runs || !b->srcs || !b->src_hash)
		return -ENOMEM;
	memset(b->src_hash, 0, b->src_hash_size * sizeof(*b->src_hash));
	b->max_rules = SFU_TABLE_HASH_MIN / 2;
	return sfu_table_grow_rules(b);
}

static void sfu_table_build_free(struct sfu_table_build *b)
{
	sfu_free(b->rows);
	sfu_free(b->hash);
	sfu_free(b->runs);
	sfu_free(b->srcs);
	sfu_free(b->src_hash);
}

/* The entry in force at block @blk's start, the last past the blocks. */
static u32 sfu_table_in_force(const struct sfu_table_build *b, u32 blk,
			      u32 *pos)
{
	u64 at = (u64)blk << b->t->shift;

	if (blk >= b->t->nr_blocks)
		return b->nr_rows - 1;
	while (*pos + 1 < b->nr_rows && b->rows[*pos + 1].start <= at)
		(*pos)++;
	return *pos;
}

/*
 * The slots of group @grp: the entries in force at its blocks' starts
 * and at the next group's, less the first.  Return: 0, or -E2BIG if one
 * is out of reach of two bytes (entries out of address order).
 */
static int sfu_table_group(struct sfu_table_build *b, u32 grp, u32 *pos)
{
	struct sfu_table *t = b->t;
	u32 blk = grp << SFU_TABLE_GROUP_SHIFT, i, at;
	u16 *slot = &t->index[grp * SFU_TABLE_GROUP_SLOTS];

	t->base[grp] = sfu_table_in_force(b, blk, pos);
	for (i = 0; i < SFU_TABLE_GROUP_SLOTS; i++) {
		at = sfu_table_in_force(b, blk + i, pos);
		if (at - t->base[grp] > U16_MAX)
			return -E2BIG;
		slot[i] = (u16)(at - t->base[grp]);
	}
	return 0;
}

/*
 * The block index, from the entries with their whole starts: blocks of
 * about SFU_TABLE_BLOCK_ROWS entries (one entry at least, so that every
 * lookup finds one), and for each the entry in force at its start, by
 * group; past the last block, the last entry.
 */
static int sfu_table_index(const struct sfu_section *sec,
			   struct sfu_table_build *b)
{
	u64 span = sec->text_hi - sec->text_lo;
	u8 shift = SFU_TABLE_SHIFT_MIN;
	struct sfu_table *t = b->t;
	u32 grp, pos = 0;
	int ret = 0;

	if (!b->nr_rows) {
		ret = sfu_table_put(b, 0, SFU_TABLE_NONE);
		if (ret)
			return ret;
	}
	while (shift < SFU_TABLE_SHIFT_MAX &&
	       (span >> shift) * SFU_TABLE_BLOCK_ROWS > b->nr_rows)
		shift++;
	if ((span >> shift) >= SFU_TABLE_FREE_BLOCKS &&
	    (span >> shift) / SFU_TABLE_BLOCKS_PER_ROW >= b->nr_rows)
		return -E2BIG;
	t->shift = shift;
	t->nr_blocks = (u32)(span >> shift) + 1;
	t->nr_groups = (t->nr_blocks + SFU_TABLE_GROUP_BLOCKS - 1) >>
		       SFU_TABLE_GROUP_SHIFT;
	t->base = sfu_alloc_array(t->nr_groups, sizeof(*t->base));
	t->index = sfu_alloc_array(t->nr_groups,
				   SFU_TABLE_GROUP_SLOTS * sizeof(*t->index));
	if (!t->base || !t->index)
		return -ENOMEM;
	for (grp = 0; !ret && grp < t->nr_groups; grp++)
		ret = sfu_table_group(b, grp, &pos);
	return ret;
}

/* A rule number and how many entries have it, while they are ranked. */
struct sfu_table_rank {
	u32 uses;
	u16 rule;
};

/* Most used first; the lower number first among equals. */
static int sfu_rank_cmp(const void *a, const void *b)
{
	const struct sfu_table_rank *x = a, *y = b;

	if (x->uses != y->uses)
		return x->uses > y->uses ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/*
 * Number the rules by how many entries have them, the most used first,
 * so that most entries' rules get a one-byte code.  Return: 0 or -ENOMEM.
 */
static int sfu_table_rank(struct sfu_table_build *b)
{
	struct sfu_table *t = b->t;
	struct sfu_table_rank *rank;
	struct sfu_rule *rules;
	u32 i;

	if (!t->nr_rules)
		return 0;
	rank = sfu_alloc_array(t->nr_rules, sizeof(*rank));
	rules = sfu_alloc_array(t->nr_rules, sizeof(*rules));
	if (!rank || !rules) {
		sfu_free(rank);
		sfu_free(rules);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_rules; i++) {
		rank[i].uses = 0;
		rank[i].rule = (u16)i;
	}
	for (i = 0; i < b->nr_rows; i++)
		if (b->rows[i].rule != SFU_TABLE_NONE)
			rank[b->rows[i].rule].uses++;
	sfu_sort(rank, t->nr_rules, sizeof(*rank), sfu_rank_cmp);
	for (i = 0; i < t->nr_rules; i++) {
		rules[i] = t->rules[rank[i].rule];
		/* The hash is done with: it maps old numbers to new ones. */
		b->hash[rank[i].rule] = i;
	}
	for (i = 0; i < b->nr_rows; i++)
		if (b->rows[i].rule != SFU_TABLE_NONE)
			b->rows[i].rule = (u16)b->hash[b->rows[i].rule];
	sfu_free(t->rules);
	sfu_free(rank);
	t->rules = rules;
	return 0;
}

/* The code of an entry with rule number @rule. */
static u8 sfu_table_code(u16 rule)
{
	if (rule == SFU_TABLE_NONE)
		return SFU_TABLE_CODE_NONE;
	return rule < SFU_TABLE_CODE_NONE ? (u8)rule : SFU_TABLE_CODE_SPILL;
}

/*
 * The entries in their two bytes, and the spill list, from the entries
 * with their whole starts and rule numbers; SFU_TABLE_PAD more at the end
 * for the window of the last block.  Return: 0 or -ENOMEM.
 */
static int sfu_table_pack(struct sfu_table_build *b)
{
	struct sfu_table *t = b->t;
	u32 i, n = b->nr_rows + SFU_TABLE_PAD;

	for (i = 0; i < b->nr_rows; i++)
		t->nr_spill += sfu_table_code(b->rows[i].rule) ==
			       SFU_TABLE_CODE_SPILL;
	t->starts = sfu_alloc_array(n, sizeof(*t->starts));
	t->codes = sfu_alloc_array(n, sizeof(*t->codes));
	if (t->nr_spill)
		t->spill = sfu_alloc_array(t->nr_spill, sizeof(*t->spill));
	if (!t->starts || !t->codes || (t->nr_spill && !t->spill))
		return -ENOMEM;
	t->nr_rows = b->nr_rows;
	t->nr_spill = 0;
	for (i = 0; i < n; i++) {
		u32 start = i < b->nr_rows ? b->rows[i].start : U32_MAX;
		u16 rule = i < b->nr_rows ? b->rows[i].rule : SFU_TABLE_NONE;

		t->starts[i] = (u8)(start - 1);
		t->codes[i] = sfu_table_code(rule);
		if (t->codes[i] != SFU_TABLE_CODE_SPILL)
			continue;
		t->spill[t->nr_spill].pos = i;
		t->spill[t->nr_spill].rule = rule;
		t->nr_spill++;
	}
	return 0;
}

/*
 * For every group (and a slot after the last), the first in the spill
 * list at or after the entry in force at its start; none without spills.
 * Return: 0 or -ENOMEM.
 */
static int sfu_table_spill_index(struct sfu_table *t)
{
	u32 slot, first, i = 0;

	if (!t->nr_spill)
		return 0;
	t->spill_index = sfu_alloc_array(sfu_table_spill_slots(t),
					 sizeof(*t->spill_index));
	if (!t->spill_index)
		return -ENOMEM;
	for (slot = 0; slot < sfu_table_spill_slots(t); slot++) {
		first = slot < t->nr_groups ? t->base[slot] : t->nr_rows;
		while (i < t->nr_spill && t->spill[i].pos < first)
			i++;
		t->spill_index[slot] = i;
	}
	return 0;
}

/*
 * Whether spills crowd a group: a section whose entries mostly have rules
 * of their own (a crafted one) would make every lookup there halve a long
 * spill list.
 */
static bool sfu_table_crowded(const struct sfu_table *t)
{
	u32 grp;

	for (grp = 0; grp < t->nr_groups; grp++)
		if (t->spill_index[grp + 1] - t->spill_index[grp] >
		    SFU_TABLE_GROUP_SPILLS)
			return true;
	return false;
}

/*
 * A crowded table keeps each entry's rule number instead of the spill
 * list (two bytes an entry, where a spilled one takes six and its
 * index): a spilled code's rule is then one load.  Return: 0 or -ENOMEM.
 */
static int sfu_table_widen(struct sfu_table *t)
{
	u32 i;

	if (!t->nr_spill || !sfu_table_crowded(t))
		return 0;
	t->wide = sfu_alloc_array(t->nr_rows, sizeof(*t->wide));
	if (!t->wide)
		return -ENOMEM;
	/* Only spilled entries are read: the others say no rule. */
	memset(t->wide, 0xff, (size_t)t->nr_rows * sizeof(*t->wide));
	for (i = 0; i < t->nr_spill; i++)
		t->wide[t->spill[i].pos] = t->spill[i].rule;
	sfu_free(t->spill);
	sfu_free(t->spill_index);
	t->spill = NULL;
	t->spill_index = NULL;
	t->nr_spill = 0;
	return 0;
}

/*
 * The memo, empty: one slot per 2^SFU_TABLE_MEMO_ROWS_SHIFT entries,
 * within its bounds.  Return: 0 or -ENOMEM.
 */
static int sfu_table_memo(struct sfu_table *t)
{
	u32 bits = SFU_TABLE_MEMO_MIN_SHIFT;

	while (bits < SFU_TABLE_MEMO_MAX_SHIFT &&
	       t->nr_rows >> (bits + SFU_TABLE_MEMO_ROWS_SHIFT))
		bits++;
	t->memo = sfu_alloc_array(BIT(bits), sizeof(*t->memo));
	if (!t->memo)
		return -ENOMEM;
	memset(t->memo, 0, BIT(bits) * sizeof(*t->memo));
	t->memo_shift = SFU_TABLE_MEMO_KEY_SHIFT - bits;
	return 0;
}

static void sfu_table_free(struct sfu_table *t)
{
	sfu_free(t->starts);
	sfu_free(t->codes);
	sfu_free(t->base);
	sfu_free(t->index);
	sfu_free(t->rules);
	sfu_free(t->spill);
	sfu_free(t->spill_index);
	sfu_free(t->wide);
	sfu_free(t->memo);
	memset(t, 0, sizeof(*t));
}

/**
 * sfu_table_build() - decode every row of a section into a rule table
 * @sec: a section set up with sfu_section_init() in kernel memory, with
 *	lookup entries, that will not change
 *
 * Rows are decoded once per distinct FRE data and laid out by address.
 * A section the table cannot describe as the decoder reads it (a corrupt
 * row or descriptor, more entries, distinct rules or work than a table
 * allows) is left without one.
 *
 * Return: 0 with @sec->table set, -ENOMEM, or the reason there is none
 * (-EBADMSG with @sec->diag set, -E2BIG, -EOPNOTSUPP for a section that
 * must be read where it lives).
 */
int sfu_table_build(struct sfu_section *sec)
{
	struct sfu_table_build b = { };
	struct sfu_table *t;
	u32 pos;
	int ret;

	if (sec->mem != SFU_MEM_KERNEL || !sec->ents || !sec->nr_fdes)
		return -EOPNOTSUPP;
	if (sec->nr_fdes > SFU_TABLE_MAX_ROWS)
		return -E2BIG;
	t = sfu_alloc_array(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	ret = sfu_table_alloc(sec, t, &b);
	for (pos = 0; !ret && pos < sec->nr_fdes; pos++) {
		ret = sfu_table_add_fn(sec, &b, pos);
		if (!(pos % SFU_TABLE_HASH_MIN))
			sfu_cond_resched();
	}
	if (!ret)
		ret = sfu_table_index(sec, &b);
	if (!ret)
		ret = sfu_table_rank(&b);
	if (!ret)
		ret = sfu_table_pack(&b);
	if (!ret)
		ret = sfu_table_spill_index(t);
	if (!ret)
		ret = sfu_table_widen(t);
	if (!ret)
		ret = sfu_table_memo(t);
	sfu_table_build_free(&b);
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
	return sizeof(*t) +
	       (size_t)(t->nr_rows + SFU_TABLE_PAD) *
	       (sizeof(*t->starts) + sizeof(*t->codes)) +
	       (size_t)t->nr_groups * (sizeof(*t->base) +
	       SFU_TABLE_GROUP_SLOTS * sizeof(*t->index)) +
	       (size_t)t->nr_rules * sizeof(*t->rules) +
	       (size_t)t->nr_spill * sizeof(*t->spill) +
	       (size_t)sfu_table_spill_slots(t) * sizeof(*t->spill_index) +
	       (t->wide ? (size_t)t->nr_rows * sizeof(*t->wide) : 0) +
	       sfu_table_memo_slots(t) * sizeof(*t->memo);
}

/**
 * sfu_table_same() - whether two sections' rule tables say the same
 * @a: a section with a rule table
 * @b: another
 *
 * The same text, version and ABI and the same table, array by array: a
 * walk through either finds the same rule at every PC.
 *
 * Return: true if they do.
 */
bool sfu_table_same(const struct sfu_section *a, const struct sfu_section *b)
{
	const struct sfu_table *x = a->table, *y = b->table;
	size_t rows;

	/* A section with a table has its elements. */
	if (!x || !y || a->text_lo != b->text_lo || a->text_hi != b->text_hi ||
	    a->abi != b->abi || a->elems[0].version != b->elems[0].version ||
	    x->nr_rows != y->nr_rows || x->nr_groups != y->nr_groups ||
	    x->shift != y->shift || x->nr_rules != y->nr_rules ||
	    x->nr_spill != y->nr_spill || !x->wide != !y->wide)
		return false;
	rows = (size_t)x->nr_rows + SFU_TABLE_PAD;
	return !memcmp(x->starts, y->starts, rows * sizeof(*x->starts)) &&
	       !memcmp(x->codes, y->codes, rows * sizeof(*x->codes)) &&
	       !memcmp(x->base, y->base, x->nr_groups * sizeof(*x->base)) &&
	       !memcmp(x->index, y->index, (size_t)x->nr_groups *
		       SFU_TABLE_GROUP_SLOTS * sizeof(*x->index)) &&
	       (!x->nr_rules ||
		!memcmp(x->rules, y->rules, x->nr_rules * sizeof(*x->rules))) &&
	       (!x->nr_spill ||
		!memcmp(x->spill, y->spill, x->nr_spill * sizeof(*x->spill))) &&
	       (!x->wide ||
		!memcmp(x->wide, y->wide, x->nr_rows * sizeof(*x->wide)));
}
