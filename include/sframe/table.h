/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rule table: the rows of a section that will not change (a file's, a
 * sidecar's) decoded once, laid out flat over the text, with hot entries
 * for the PCs looked up last (lib/sframe/table.c).
 *
 * For the module (the registry builds tables, the walker reads their hot
 * entries inline, a module parameter turns those off) and for the tests
 * and benchmarks that exercise it; the host tools need only decode.h.
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
	u8 hot_bits;
	struct sfu_rule *rules;	/* distinct */
	u32 nr_rules;
	/*
	 * Rules of the PCs looked up last, direct-mapped by a hash of the
	 * PC's offset from text_lo: (offset << 32) | (rule number + 1), 0
	 * for none; read and written whole, from any context.
	 */
	u64 *hot;
};

int sfu_table_build(struct sfu_section *sec);
void sfu_table_destroy(struct sfu_section *sec);
size_t sfu_table_bytes(const struct sfu_section *sec);
const struct sfu_rule *sfu_table_find(const struct sfu_section *sec, u64 pc);

/* Whether table lookups keep their answers in sfu_table.hot. */
extern bool sfu_table_hot_enabled;

/* Fibonacci hashing of a PC offset: 2^32 divided by the golden ratio. */
#define SFU_HOT_MUL		0x9e3779b1u

/* The hot entry for the PC at @off from text_lo: its top bits, hashed. */
static inline u32 sfu_hot_index(u32 off, u8 shift)
{
	return (u32)(off * SFU_HOT_MUL) >> shift;
}

/* The hot entry of @t for the PC at @off from text_lo. */
static inline u64 *sfu_table_hot_slot(const struct sfu_table *t, u32 off)
{
	return &t->hot[sfu_hot_index(off, 32 - t->hot_bits)];
}

/*
 * What reading a table's hot entries takes, copied out of the section so
 * that a walk can keep it in registers while it stores frames (the
 * kernel is built without strict aliasing: each store could change the
 * section's fields, which would then be loaded again for every frame).
 */
struct sfu_hot_view {
	const struct sfu_section *sec;
	u64 lo;			/* text_lo */
	u64 hi;			/* text_hi */
	const u64 *hot;		/* NULL: hot entries off */
	const struct sfu_rule *rules;
	u8 shift;		/* 32 - hot_bits */
};

/* A view of the hot entries of @sec, which has a rule table. */
static inline void sfu_hot_view_init(struct sfu_hot_view *v,
				     const struct sfu_section *sec)
{
	const struct sfu_table *t = sec->table;

	v->sec = sec;
	v->lo = sec->text_lo;
	v->hi = sec->text_hi;
	v->hot = sfu_table_hot_enabled ? t->hot : NULL;
	v->rules = t->rules;
	v->shift = 32 - t->hot_bits;
}

/**
 * sfu_hot_view_find() - sfu_table_find(), its hot entries read inline
 * @v: a view of the section's table
 * @pc: the address
 *
 * For callers that look up one PC after another (a stack walk): a PC
 * answered from its hot entry costs no call.
 *
 * Return: as sfu_table_find().
 */
static inline const struct sfu_rule *
sfu_hot_view_find(const struct sfu_hot_view *v, u64 pc)
{
	u32 off = (u32)(pc - v->lo);
	u64 hot;

	if (likely(pc >= v->lo && pc < v->hi && v->hot)) {
		hot = READ_ONCE(v->hot[sfu_hot_index(off, v->shift)]);
		if ((u32)hot && hot >> 32 == off)
			return &v->rules[(u32)hot - 1];
	}
	return sfu_table_find(v->sec, pc);
}

/**
 * sfu_table_find_hot() - sfu_table_find(), its hot entries read inline
 * @sec: a section with a rule table
 * @pc: the address
 *
 * Return: as sfu_table_find().
 */
static inline const struct sfu_rule *
sfu_table_find_hot(const struct sfu_section *sec, u64 pc)
{
	struct sfu_hot_view v;

	sfu_hot_view_init(&v, sec);
	return sfu_hot_view_find(&v, pc);
}

#endif /* _SFRAME_TABLE_H */
