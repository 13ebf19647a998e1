/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoder internals shared by the decoder's own files; not an API.
 */
#ifndef _SFRAME_INTERNAL_H
#define _SFRAME_INTERNAL_H

#include "../../include/sframe/table.h"

int sfu_parse_elems(struct sfu_section *sec);
void sfu_fde_head(const struct sfu_section *sec, struct sfu_fde *fde,
		  const u8 *b);
int sfu_read_fde_win(struct sfu_section *sec, const struct sfu_elem *elem,
		     u32 idx, struct sfu_fde *fde,
		     const struct sfu_fre_iter *it);
const struct sfu_elem *sfu_elem_of(const struct sfu_section *sec, u32 id);
int sfu_rows_build(struct sfu_section *sec);
void sfu_rows_seek(const struct sfu_section *sec, const struct sfu_fde *fde,
		   u64 pc_off, struct sfu_fre_iter *it);

/* What sfu_fde_rules() calls for each row of a function. */
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

static_assert(offsetof(struct sfu_ent, start) == 0, "entries start with it");

/* Last position in [@lo, @hi] whose lookup entry starts at or before @off. */
static inline u32 sfu_search_ents(const struct sfu_section *sec, u32 off,
				  u32 lo, u32 hi)
{
	return sfu_search_starts(sec->ents, sizeof(*sec->ents), off, lo, hi);
}

#endif /* _SFRAME_INTERNAL_H */
