/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rule table: the rows of a section that will not change (a file's, a
 * sidecar's) decoded once and laid out flat over the text
 * (lib/sframe/table.c builds it).  The lookup is here, inline, because
 * the walker makes one per frame and a call per frame is what it avoids.
 *
 * For the module and for the tests and benchmarks that exercise it; the
 * host tools need only decode.h.
 */
#ifndef _SFRAME_TABLE_H
#define _SFRAME_TABLE_H

#include "decode.h"

/*
 * A rule table's entries (lib/sframe/table.c) are two bytes each, in two
 * arrays: where an entry starts, and a code for its rule.
 *
 * The text is cut into blocks of 2^shift bytes, none larger than 256, so
 * that a lookup compares only the low 8 bits of the starts in one block.
 * Each is stored less one: starts[i] = (start - 1) mod 2^8.  The entries a
 * block's search compares start after the block's first byte and at most
 * at its end, so these values do not wrap, and an entry that starts on
 * the next 256 bytes exactly stays above every offset of its block.
 */
#define SFU_TABLE_PAGE_SHIFT	8

/*
 * The block index: for each block the entry in force at its start, in
 * two bytes, from the base of its group of 2^SFU_TABLE_GROUP_SHIFT blocks
 * (four bytes per group).  A group has one slot more than blocks, the
 * entry in force at the next group's start, so that a block's two slots
 * are read against one base.  A group spans 16 KiB of text at most, and
 * starts strictly increase: fewer than 2^16 entries start in one.
 */
#define SFU_TABLE_GROUP_SHIFT	6
#define SFU_TABLE_GROUP_BLOCKS	BIT(SFU_TABLE_GROUP_SHIFT)
#define SFU_TABLE_GROUP_SLOTS	(SFU_TABLE_GROUP_BLOCKS + 1)

/* A code: a rule number below SFU_TABLE_CODE_NONE (the rules most used). */
#define SFU_TABLE_CODE_NONE	0xfe	/* nothing describes the PC */
#define SFU_TABLE_CODE_SPILL	0xff	/* the rule is in the spill list */

/*
 * The memo: rules found at return addresses, remembered by the lookups
 * themselves (sfu_table_find_return()).  Sample after sample a walk's
 * callers return to the same call sites, and a remembered rule is one
 * load away where the search is a chain of them, on the path from each
 * frame to the next.  A slot, chosen by a hash of the address, holds
 * the address's offset from text_lo plus one (the key; 0: empty) above
 * its rule's number, in one word read and written whole; two
 * neighbouring slots (a set, in one line) take the addresses of one
 * hash.  A lookup that misses a set with an empty slot fills it; a full
 * set is written over by one miss in SFU_TABLE_MEMO_RENEW, so that call
 * sites that come later, or a memo filled by one process's made-up
 * stacks, get slots in time, while CPUs walking the same code mostly
 * share its lines unwritten.  A power of two of slots between one per
 * 2^SFU_TABLE_MEMO_ROWS_SHIFT entries and twice that, within the bounds.
 */
#define SFU_TABLE_MEMO_MIN_SHIFT	6
#define SFU_TABLE_MEMO_MAX_SHIFT	10
#define SFU_TABLE_MEMO_ROWS_SHIFT	5
#define SFU_TABLE_MEMO_MUL		0x9e3779b1U	/* 2^32 / golden ratio */
#define SFU_TABLE_MEMO_KEY_SHIFT	32
#define SFU_TABLE_MEMO_WAYS		2
#define SFU_TABLE_MEMO_FOLD		6
#define SFU_TABLE_MEMO_RENEW		1024

/* An entry whose rule has no code of its own, by its position. */
struct sfu_table_spill {
	u32 pos;
	u16 rule;
} __packed;

/* A section's rows decoded once, for sections that do not change. */
struct sfu_table {
	u8 *starts;		/* (start - 1) mod 2^8, by start */
	u8 *codes;		/* the rule of each entry */
	u32 nr_rows;
	u32 *base;		/* per group: the entry in force at its start */
	u16 *index;		/* per group, SFU_TABLE_GROUP_SLOTS: less base */
	u32 nr_blocks;
	u32 nr_groups;
	u8 shift;		/* a block is 2^shift bytes of text */
	struct sfu_rule *rules;	/* distinct, the most used first */
	u32 nr_rules;
	struct sfu_table_spill *spill;	/* by position */
	u32 nr_spill;
	u32 *spill_index;	/* per group, and one more: the first */
	u16 *wide;		/* or every entry's rule number (table.c) */
	u64 *memo;		/* return addresses' rules, as found */
	u8 memo_shift;		/* 32 less the memo's bits */
};

/* Slots of a table's spill index: none if nothing spills. */
static inline u32 sfu_table_spill_slots(const struct sfu_table *t)
{
	return t->nr_spill ? t->nr_groups + 1 : 0;
}

/* Slots of a table's memo. */
static inline u32 sfu_table_memo_slots(const struct sfu_table *t)
{
	return t->memo ? BIT(SFU_TABLE_MEMO_KEY_SHIFT - t->memo_shift) : 0;
}

/*
 * The entries block @blk's search takes: *@lo, the one in force at its
 * start, to *@hi, the one in force at the next block's start.
 */
static __always_inline void sfu_table_block(const struct sfu_table *t,
					    u32 blk, u32 *lo, u32 *hi)
{
	u32 grp = blk >> SFU_TABLE_GROUP_SHIFT, base = t->base[grp];
	const u16 *slot = &t->index[grp * SFU_TABLE_GROUP_SLOTS +
				    (blk & (SFU_TABLE_GROUP_BLOCKS - 1))];

	*lo = base + slot[0];
	*hi = base + slot[1];
}

int sfu_table_build(struct sfu_section *sec);
void sfu_table_destroy(struct sfu_section *sec);
size_t sfu_table_bytes(const struct sfu_section *sec);
bool sfu_table_same(const struct sfu_section *a, const struct sfu_section *b);

/*
 * Entries a lookup searches in a fixed number of steps, from the one in
 * force at its block's start (a power of two): the steps do not depend on
 * the data, so the processor need not wait for it to know how many there
 * are.  Blocks with more entries are searched by halving their range.
 */
#define SFU_TABLE_WINDOW	16
/* The entries end with SFU_TABLE_WINDOW - 1 more, read and never taken. */
#define SFU_TABLE_PAD		(SFU_TABLE_WINDOW - 1)

/*
 * Last position in [@lo, @hi] of a sorted array of @stride-byte elements,
 * each starting with its u32 start (aligned or not), whose start is at or
 * before @off; @lo if none is.  @stride is a constant at every caller.
 * Always inline: the spill list is searched in the walker's user-access
 * window, which allows no call.
 */
static __always_inline u32 sfu_search_starts(const void *base,
					     size_t stride, u32 off, u32 lo,
					     u32 hi)
{
	const u8 *p = (const u8 *)base + (size_t)lo * stride;
	u32 n = hi > lo ? hi - lo + 1 : 1, half, start;

	/* Halve the range without a branch on the data: no mispredictions. */
	while (n > 1) {
		half = n / 2;
		memcpy(&start, p + (size_t)half * stride, sizeof(start));
		p = start <= off ? p + (size_t)half * stride : p;
		n -= half;
	}
	return (u32)((p - (const u8 *)base) / stride);
}

/*
 * Ask for the window of entries from @lo while it is searched: its lines
 * arrive together, not one after the other.  Always inline: GCC takes a
 * function that does nothing but prefetch for one without effects and
 * drops calls to it.
 */
static __always_inline void sfu_table_rows_ahead(const struct sfu_table *t,
						 u32 lo)
{
	const u8 *p = (const u8 *)&t->starts[lo];

	prefetch(p);
	prefetch(p + SFU_TABLE_WINDOW * sizeof(*t->starts) - 1);
	prefetch(&t->codes[lo]);
}

/*
 * One halving of a block's window: @pos + @half if that entry is in the
 * block (at most @hi) and starts at or before @off, else @pos.
 */
static __always_inline u32 sfu_table_halve(const struct sfu_table *t, u8 off,
					   u32 pos, u32 hi, u32 half)
{
	return ((pos + half <= hi) & (t->starts[pos + half] < off)) ?
	       pos + half : pos;
}

/*
 * The last entry in [@lo, @hi] of a block that starts at or before the
 * offset whose low 8 bits are @off: entry @lo does, and every entry after
 * @hi starts after it.  Entries past @hi may be on the next page: the
 * window never takes them.
 */
static __always_inline u32 sfu_table_search(const struct sfu_table *t,
					    u8 off, u32 lo, u32 hi)
{
	u32 pos = lo, half, n;

	if (unlikely(hi - lo >= SFU_TABLE_WINDOW)) {
		/* Halve the range without a branch on the data. */
		for (n = hi - lo + 1; n > 1; n -= half) {
			half = n / 2;
			pos = t->starts[pos + half] < off ? pos + half : pos;
		}
		return pos;
	}
	/* The window's four halvings written out: no loop to branch back. */
	static_assert(SFU_TABLE_WINDOW == 16, "four halvings");
	pos = sfu_table_halve(t, off, pos, hi, 8);
	pos = sfu_table_halve(t, off, pos, hi, 4);
	pos = sfu_table_halve(t, off, pos, hi, 2);
	return sfu_table_halve(t, off, pos, hi, 1);
}

/**
 * sfu_table_spilled() - the rule of an entry whose code is SFU_TABLE_CODE_SPILL
 * @t: the table
 * @blk: the block whose search found the entry
 * @pos: the entry
 *
 * Found by halving the part of the spill list (sorted by position) of
 * @blk's group: at most SFU_TABLE_GROUP_SPILLS entries, eight steps, none
 * of them a branch on the data; a table whose spills crowd a group keeps
 * every entry's rule number instead, one load.  Inline, as the rest of the
 * lookup: it makes no call (the walker's user-access window allows none).
 *
 * Return: the rule, valid as long as the table, or NULL if @pos is not
 * in the list (a table lib/sframe/table.c built has it there).
 */
static __always_inline const struct sfu_rule *
sfu_table_spilled(const struct sfu_table *t, u32 blk, u32 pos)
{
	u32 lo, hi;

	if (t->wide)
		return pos < t->nr_rows && t->wide[pos] < t->nr_rules ?
		       &t->rules[t->wide[pos]] : NULL;
	if (!t->nr_spill || blk >= t->nr_blocks)
		return NULL;
	/* The block's search may end on the entry that starts the next. */
	blk >>= SFU_TABLE_GROUP_SHIFT;
	lo = t->spill_index[blk];
	hi = t->spill_index[blk + 1];
	if (hi == t->nr_spill)
		hi--;
	if (lo > hi)
		return NULL;
	/* Halved without a branch on the data, as the entries are. */
	lo = sfu_search_starts(t->spill, sizeof(*t->spill), pos, lo, hi);
	if (t->spill[lo].pos != pos)
		return NULL;
	return &t->rules[t->spill[lo].rule];
}

/**
 * sfu_table_find() - the rule at a PC, searched in a section's rule table
 * @sec: a section with a rule table (@sec->table)
 * @pc: the address
 *
 * What sfu_find_rule() answers for @pc, from kernel memory alone, with
 * no call and no copy for the rules with a code.  Any context: the table
 * does not change once built, and a lookup writes nothing (the memo is
 * sfu_table_find_return()'s).
 *
 * Return: the rule, valid as long as the table, or NULL where nothing
 * describes @pc.
 */
static __always_inline const struct sfu_rule *
sfu_table_find(const struct sfu_section *sec, u64 pc)
{
	const struct sfu_table *t = sec->table;
	u32 off, blk, lo, hi, pos;
	u8 code;

	/* Below the text, the difference wraps: one compare for both ends. */
	if (pc - sec->text_lo >= sec->text_hi - sec->text_lo)
		return NULL;
	off = (u32)(pc - sec->text_lo);
	blk = (u32)((u64)off >> t->shift);
	sfu_table_block(t, blk, &lo, &hi);
	sfu_table_rows_ahead(t, lo);
	pos = sfu_table_search(t, (u8)off, lo, hi);
	code = t->codes[pos];
	if (likely(code < SFU_TABLE_CODE_NONE))
		return &t->rules[code];
	if (code == SFU_TABLE_CODE_NONE)
		return NULL;
	return sfu_table_spilled(t, blk, pos);
}

/*
 * A memo slot for @key: a multiplicative hash of the key with its bits
 * from SFU_TABLE_MEMO_FOLD up folded in first, so that return addresses
 * at a stride (functions of one size) do not share a few slots.
 */
static __always_inline u32 sfu_table_memo_hash(const struct sfu_table *t,
					       u64 key)
{
	return ((u32)(key ^ (key >> SFU_TABLE_MEMO_FOLD)) *
		SFU_TABLE_MEMO_MUL) >> t->memo_shift;
}

/*
 * The slot of @set a lookup that missed it writes, or -1: an empty one,
 * or if both are taken, one of them when @salt says so.
 */
static __always_inline int sfu_table_memo_way(u64 e0, u64 e1, u32 salt)
{
	if (!e0)
		return 0;
	if (!e1)
		return 1;
	if (salt % SFU_TABLE_MEMO_RENEW != SFU_TABLE_MEMO_RENEW - 1)
		return -1;
	return (salt / SFU_TABLE_MEMO_RENEW) & 1;
}

/**
 * sfu_table_find_return() - the rule at a return address, remembered
 * @sec: a section with a rule table (@sec->table)
 * @pc: the address: a caller's PC less one, in the call
 * @salt: a number that varies from lookup to lookup (the walker's: the
 *	jiffies and the frame's depth), which picks the lookups that renew
 *	a full set; 0 renews none
 *
 * sfu_table_find() through the table's memo: a lookup that misses it
 * searches, and writes its answer to an empty slot of its set, or, once
 * in SFU_TABLE_MEMO_RENEW of the misses @salt picks, over one of the two.
 * Any context: a slot is one word, read and written whole, and what it
 * says was found by the search.
 *
 * Return: as sfu_table_find().
 */
static __always_inline const struct sfu_rule *
sfu_table_find_return(const struct sfu_section *sec, u64 pc, u32 salt)
{
	const struct sfu_table *t = sec->table;
	u64 key = pc - sec->text_lo + 1, e0, e1;
	const struct sfu_rule *rule;
	u64 *set;
	int way;

	/*
	 * Keys are 1 to the text's size: 0, an empty slot's, is not one.  A
	 * slot must be read whole: where a word is shorter (a 32-bit build
	 * of the library; the module is 64-bit only), the search alone.
	 */
	if (sizeof(long) < sizeof(u64) ||
	    pc - sec->text_lo >= sec->text_hi - sec->text_lo)
		return sfu_table_find(sec, pc);
	set = &t->memo[sfu_table_memo_hash(t, key) & ~(SFU_TABLE_MEMO_WAYS - 1)];
	e0 = READ_ONCE(set[0]);
	e1 = READ_ONCE(set[1]);
	if (e0 >> SFU_TABLE_MEMO_KEY_SHIFT == key && (u32)e0 < t->nr_rules)
		return &t->rules[(u32)e0];
	if (e1 >> SFU_TABLE_MEMO_KEY_SHIFT == key && (u32)e1 < t->nr_rules)
		return &t->rules[(u32)e1];
	rule = sfu_table_find(sec, pc);
	if (!rule || key > U32_MAX)
		return rule;
	way = sfu_table_memo_way(e0, e1, salt);
	if (way >= 0)
		WRITE_ONCE(set[way], key << SFU_TABLE_MEMO_KEY_SHIFT |
				     (u32)(rule - t->rules));
	return rule;
}

#endif /* _SFRAME_TABLE_H */
