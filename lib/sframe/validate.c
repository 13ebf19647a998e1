// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of a whole section: every descriptor and row read and every
 * rule decoded once, so that a section that passes cannot fail a lookup
 * for being corrupt (unless it changes).
 */
#include "internal.h"

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
