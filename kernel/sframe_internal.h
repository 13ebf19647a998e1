/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoder internals shared by the decoder's own files; not an API.
 */
#ifndef _SFRAME_INTERNAL_H
#define _SFRAME_INTERNAL_H

#include "../include/sframe/decode.h"

int sfu_parse_elems(struct sfu_section *sec, enum sfu_mem mode);
void sfu_fde_head(const struct sfu_section *sec, struct sfu_fde *fde,
		  const u8 *b);
int sfu_read_fde_win(struct sfu_section *sec, const struct sfu_elem *elem,
		     u32 idx, struct sfu_fde *fde,
		     const struct sfu_fre_iter *it, enum sfu_mem mode);
const struct sfu_elem *sfu_elem_of(const struct sfu_section *sec, u32 id);
int sfu_rows_build(struct sfu_section *sec);
void sfu_rows_seek(const struct sfu_section *sec, const struct sfu_fde *fde,
		   u64 pc_off, struct sfu_fre_iter *it);

/*
 * Last position in [@lo, @hi] of a sorted array of @stride-byte elements,
 * each starting with its u32 start, whose start is at or before @off.
 * Inline: the walker's table lookups make no call (a call that saves its
 * return address signs and checks it on arm64 kernels built with pointer
 * authentication, which QEMU's default algorithm makes slow); @stride is
 * a constant there.
 */
static inline u32 sfu_search_starts(const void *base, size_t stride,
				    u32 off, u32 lo, u32 hi)
{
	u32 mid;

	while (lo < hi) {
		mid = hi - (hi - lo) / 2;
		if (*(const u32 *)((const u8 *)base + mid * stride) <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static_assert(offsetof(struct sfu_ent, start) == 0, "entries start with it");
static_assert(offsetof(struct sfu_table_fn, start) == 0,
	      "table functions start with it");

/* Last position in [@lo, @hi] whose lookup entry starts at or before @off. */
static inline u32 sfu_search_ents(const struct sfu_section *sec, u32 off,
				  u32 lo, u32 hi)
{
	return sfu_search_starts(sec->ents, sizeof(*sec->ents), off, lo, hi);
}

#endif /* _SFRAME_INTERNAL_H */
