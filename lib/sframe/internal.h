/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The library's internals, shared by its own files (and its KUnit
 * suite); not an API.  Which file owns what:
 *
 *   decode.c    sfu_read(), element headers, FDEs, FREs
 *   rule.c      a row's rule
 *   index.c     the FDE index: built at set-up, searched by lookups
 *   rows.c      the row index of long functions
 *   lookup.c    PC lookup through the section
 *   validate.c  every row of a section checked
 *   table.c     the rule table
 *   section.c   the section object: set-up, strip, move, free
 *   print.c     a rule as text
 *   note.c      the build-id note
 */
#ifndef _SFRAME_INTERNAL_H
#define _SFRAME_INTERNAL_H

#include <sframe/table.h>

/* Sorted lookup key, kept only for unsorted or multi-element sections. */
struct sfu_key {
	u64 start;
	u32 id;
	u32 rows;		/* as sfu_ent.rows */
};

/* No sfu_ent.rows hint: the offset does not fit in 32 bits. */
#define SFU_NO_ROWS_HINT		0xffffffffU

/*
 * Lookup entry in kernel memory, one per FDE in address order: the key
 * of the binary search and where the function's rows probably are.
 */
struct sfu_ent {
	u32 start;		/* function start - text_lo */
	u32 rows;		/* section offset of its FRE data, a hint */
};

/* Row index (lib/sframe/rows.c): every SFU_ROW_STRIDE-th row of a function. */
struct sfu_row_mark {
	u32 start;		/* the row's start offset */
	u32 off;		/* where it is, from the function's first row */
};

/* The marks of one row sequence, shared by the FDEs that point to it. */
struct sfu_row_run {
	u64 fres_off;		/* first FRE, section offset */
	u32 first;		/* its first mark in sfu_section.marks */
	u32 nr;
};

/* decode.c */
int sfu_parse_elems(struct sfu_section *sec);
void sfu_fde_head(const struct sfu_section *sec, struct sfu_fde *fde,
		  const u8 *b);
int sfu_read_fde_win(struct sfu_section *sec, const struct sfu_elem *elem,
		     u32 idx, struct sfu_fde *fde,
		     const struct sfu_fre_iter *it);

/* index.c */
const struct sfu_elem *sfu_elem_of(const struct sfu_section *sec, u32 id);
int sfu_index_build(struct sfu_section *sec);
void sfu_index_free(struct sfu_section *sec);
int sfu_index_find(struct sfu_section *sec, u64 pc, u32 *pos, u32 *budget);
u32 sfu_index_id(const struct sfu_section *sec, u32 pos);
u32 sfu_index_rows_hint(const struct sfu_section *sec, u32 pos);

/* rows.c */
int sfu_rows_build(struct sfu_section *sec);
void sfu_rows_seek(const struct sfu_section *sec, const struct sfu_fde *fde,
		   u64 pc_off, struct sfu_fre_iter *it);

/* lookup.c: what sfu_fde_rules() calls for each row of a function. */
typedef int (*sfu_row_fn)(void *arg, u32 start, const struct sfu_rule *rule);
int sfu_fde_rules(struct sfu_section *sec, const struct sfu_fde *fde,
		  sfu_row_fn fn, void *arg);

/*
 * How a function reads its FRE data.  Functions that point to the same
 * data read the same rows only if they agree on all of it.
 */
struct sfu_rows_shape {
	u32 num_fres;
	u8 info;		/* FRE and PC types */
	u8 rep_size;
	u8 fde_type;
};

static inline void sfu_fde_shape(const struct sfu_fde *fde,
				 struct sfu_rows_shape *shape)
{
	shape->num_fres = fde->num_fres;
	shape->info = fde->info;
	shape->rep_size = fde->rep_size;
	shape->fde_type = fde->fde_type;
}

static inline bool sfu_same_shape(const struct sfu_rows_shape *a,
				  const struct sfu_rows_shape *b)
{
	return a->num_fres == b->num_fres && a->info == b->info &&
	       a->rep_size == b->rep_size && a->fde_type == b->fde_type;
}

/* Take @n units of work from @budget (sfu_find_rule_budget()). */
static inline bool sfu_spend(u32 *budget, u32 n)
{
	if (*budget < n) {
		*budget = 0;
		return false;
	}
	*budget -= n;
	return true;
}

static_assert(offsetof(struct sfu_ent, start) == 0, "entries start with it");

/* Last position in [@lo, @hi] whose lookup entry starts at or before @off. */
static inline u32 sfu_search_ents(const struct sfu_section *sec, u32 off,
				  u32 lo, u32 hi)
{
	return sfu_search_starts(sec->ents, sizeof(*sec->ents), off, lo, hi);
}

#endif /* _SFRAME_INTERNAL_H */
