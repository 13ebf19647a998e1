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
 * An entry of a rule table (lib/sframe/table.c): from @start (an offset from
 * text_lo) up to the next entry's start, @rule is in force.  Packed: six
 * bytes, so that a block's entries take as few lines as they can (x86-64,
 * arm64 and s390x load unaligned words at full speed).
 */
struct sfu_table_row {
	u32 start;
	u16 rule;		/* in sfu_table.rules, or SFU_TABLE_NONE */
} __packed;

/* A table entry where nothing describes the PC (gaps, row-less starts). */
#define SFU_TABLE_NONE		0xffffU

/* A section's rows decoded once, for sections that do not change. */
struct sfu_table {
	struct sfu_table_row *rows;	/* by start, over the whole text */
	u32 nr_rows;
	u32 *index;		/* per block: the entry in force at its start */
	u32 nr_blocks;
	u8 shift;		/* a block is 2^shift bytes of text */
	struct sfu_rule *rules;	/* distinct */
	u32 nr_rules;
};

int sfu_table_build(struct sfu_section *sec);
void sfu_table_destroy(struct sfu_section *sec);
size_t sfu_table_bytes(const struct sfu_section *sec);

/*
 * Entries a lookup searches in a fixed number of steps, from the one in
 * force at its block's start (a power of two): the steps do not depend on
 * the data, so the processor need not wait for it to know how many there
 * are.  Blocks with more entries are searched by halving their range.
 */
#define SFU_TABLE_WINDOW	16
/* The entries end with SFU_TABLE_WINDOW - 1 past any offset. */
#define SFU_TABLE_PAD		(SFU_TABLE_WINDOW - 1)
/* Cache line the window is asked for by (s390's are larger: harmless). */
#define SFU_TABLE_LINE		64

/*
 * Last position in [@lo, @hi] of a sorted array of @stride-byte elements,
 * each starting with its u32 start (aligned or not), whose start is at or
 * before @off; @lo if none is.  @stride is a constant at every caller.
 */
static inline u32 sfu_search_starts(const void *base, size_t stride,
				    u32 off, u32 lo, u32 hi)
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
	const u8 *p = (const u8 *)&t->rows[lo];
	size_t off;

	for (off = 0; off < SFU_TABLE_WINDOW * sizeof(*t->rows);
	     off += SFU_TABLE_LINE)
		prefetch(p + off);
	prefetch(p + SFU_TABLE_WINDOW * sizeof(*t->rows) - 1);
}

/*
 * The last entry in [@lo, @hi] that starts at or before @off: entry @lo
 * does, and every entry after @hi starts after it.
 */
static __always_inline u32 sfu_table_search(const struct sfu_table *t,
					    u32 off, u32 lo, u32 hi)
{
	const struct sfu_table_row *p = &t->rows[lo];
	u32 half;

	if (unlikely(hi - lo >= SFU_TABLE_WINDOW))
		return sfu_search_starts(t->rows, sizeof(*t->rows), off, lo,
					 hi);
	for (half = SFU_TABLE_WINDOW / 2; half; half /= 2)
		p = p[half].start <= off ? p + half : p;
	return (u32)(p - t->rows);
}

/**
 * sfu_table_find() - the rule at a PC, searched in a section's rule table
 * @sec: a section with a rule table (@sec->table)
 * @pc: the address
 *
 * What sfu_find_rule() answers for @pc, from kernel memory alone, with
 * no call and no copy.  Any context: the table does not change once
 * built, and a lookup writes nothing.
 *
 * Return: the rule, valid as long as the table, or NULL where nothing
 * describes @pc.
 */
static __always_inline const struct sfu_rule *
sfu_table_find(const struct sfu_section *sec, u64 pc)
{
	const struct sfu_table *t = sec->table;
	u32 off, blk, lo, hi;
	u16 id;

	if (pc < sec->text_lo || pc >= sec->text_hi)
		return NULL;
	off = (u32)(pc - sec->text_lo);
	blk = (u32)((u64)off >> t->shift);
	lo = t->index[blk];
	hi = t->index[blk + 1];
	sfu_table_rows_ahead(t, lo);
	id = t->rows[sfu_table_search(t, off, lo, hi)].rule;
	if (id == SFU_TABLE_NONE)
		return NULL;
	return &t->rules[id];
}

#endif /* _SFRAME_TABLE_H */
