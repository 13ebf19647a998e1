// SPDX-License-Identifier: GPL-2.0
/*
 * Re-encoding of an SFrame section.
 *
 * reenc_load() walks every FDE and FRE of a section with the project's
 * decoder and rebuilds the encoder's description of it.  Written again by
 * sfu_encode() as V3, the section gives the decoder the same rule at every
 * address:
 *
 *  - function starts become absolute addresses (computed with the source's
 *    vaddr), so the new section may be placed at any address;
 *  - FDEs are ordered by start address, ties kept in section order, which
 *    is the order the decoder's lookup searches an unsorted or
 *    multi-element source in;
 *  - V1 PCMASK FDEs get the repeat size the decoder reads them with (16);
 *  - PC type, repeat size, FDE type, pauth key, V3 signal bit, and every
 *    FRE's start, CFA base, mangled-RA bit and data words are kept.  Data
 *    words are kept as values (offsets signed, flex control words
 *    unsigned): the encoder may store them in another width, never with
 *    another value.  s390x CFA words stay scaled, as V3 stores them too;
 *  - a V1 or V2 FDE without FREs describes nothing (the decoder finds no
 *    rule in it), while a V3 default FDE without FREs is outermost, so it
 *    becomes a V3 flexible FDE without FREs, which describes nothing too.
 *
 * V2 s390x RA/FP words with bit 0 set name a register; V3 default FDEs
 * have no such words (V3 uses flexible FDEs for them, whose rules carry the
 * "flex" flag), so a section with them is refused, naming the FDE.
 * Sections of several elements must agree on ABI and fixed offsets, as
 * they become one V3 element.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe/decode.h>
#include "sframe-reenc.h"

struct reenc_ctx {
	struct sfu_section sec;
	struct reenc *out;
	u32 fres_cap;
	char *err;
	size_t errlen;
};

/* Sort key: the function start, then the position in the section. */
struct reenc_key {
	u64 start;
	u32 pos;
};

static int __attribute__((format(printf, 3, 4)))
reenc_fail(struct reenc_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* A decoder refusal, in the decoder's words. */
static int reenc_decoder_fail(struct reenc_ctx *c, int ret)
{
	if (!c->sec.diag.what)
		return reenc_fail(c, ret, "%s", sfu_strerror(ret));
	return reenc_fail(c, ret, "%s: %s at section offset 0x%" PRIx64,
			      sfu_strerror(ret), c->sec.diag.what,
			      c->sec.diag.off);
}

static u64 reenc_fde_off(const struct sfu_fde *fde)
{
	return fde->elem->fde_off + (u64)fde->idx * fde->elem->fde_size;
}

/* One element becomes part of one V3 element: its header must agree. */
static int reenc_check_elems(struct reenc_ctx *c)
{
	const struct sfu_elem *e0 = &c->sec.elems[0], *e;
	u32 i;

	for (i = 1; i < c->sec.nr_elems; i++) {
		e = &c->sec.elems[i];
		if (e->abi == e0->abi && e->fixed_fp == e0->fixed_fp &&
		    e->fixed_ra == e0->fixed_ra)
			continue;
		return reenc_fail(c, -EOPNOTSUPP,
				      "element %u at section offset 0x%" PRIx64
				      ": ABI or fixed FP/RA offsets differ from element 0; one V3 element cannot hold both",
				      i, e->off);
	}
	return 0;
}

/* The data words of a flexible FRE that are unsigned control words. */
static u8 reenc_ctrl_mask(const struct sfu_fde *fde,
			  const struct sfu_fre *fre)
{
	if (fde->fde_type != SFRAME_FDE_TYPE_FLEX)
		return 0;
	switch (fre->nr_words) {
	case 2:
		return BIT(SFRAME_V3_FLEX_CFA_CTRL_IDX);
	case 4:
		return BIT(SFRAME_V3_FLEX_CFA_CTRL_IDX) |
		       BIT(SFRAME_V3_FLEX_RA_CTRL_IDX);
	case 5:
		/* RA padding word, then the FP control word. */
		return BIT(SFRAME_V3_FLEX_CFA_CTRL_IDX) |
		       BIT(SFRAME_V3_FLEX_RA_CTRL_IDX) |
		       BIT(SFRAME_V3_FLEX_RA_CTRL_IDX + 1);
	case 6:
	case SFU_FRE_MAX_WORDS:
		/* The module's SP word (SFU_FLEX_CTRL_SP) is an offset. */
		return BIT(SFRAME_V3_FLEX_CFA_CTRL_IDX) |
		       BIT(SFRAME_V3_FLEX_RA_CTRL_IDX) |
		       BIT(SFRAME_V3_FLEX_RA_CTRL_IDX + 2);
	default:
		return 0;
	}
}

/*
 * V2 s390x only: an RA or FP word with bit 0 set names a register.  In V3
 * the same word in a default FDE is a CFA-relative slot.
 */
static int reenc_check_words(struct reenc_ctx *c,
			     const struct sfu_fde *fde,
				 const struct sfu_fre *fre, u64 fre_off)
{
	const struct sfu_elem *e = fde->elem;
	unsigned int i;
	s32 w;

	if (e->abi != SFRAME_ABI_S390X_ENDIAN_BIG ||
	    e->version != SFRAME_VERSION_2 ||
	    fde->fde_type != SFRAME_FDE_TYPE_DEFAULT)
		return 0;
	for (i = SFRAME_FRE_CFA_OFFSET_IDX + 1; i < fre->nr_words; i++) {
		w = sfu_fre_sword(fre, i);
		if (!SFRAME_V2_S390X_OFFSET_IS_REGNUM(w))
			continue;
		return reenc_fail(c, -EOPNOTSUPP,
				      "FDE %u (function 0x%" PRIx64
				      ", FDE at section offset 0x%" PRIx64
				      "): FRE at section offset 0x%" PRIx64
				      " keeps the %s in register %u (s390x V2 register word); a V3 default FDE cannot express that",
				      e->first_id + fde->idx, fde->start,
				      reenc_fde_off(fde), fre_off,
				      i == SFRAME_FRE_RA_OFFSET_IDX &&
				      e->fixed_ra == SFRAME_CFA_FIXED_RA_INVALID ?
				      "RA" : "FP",
				      SFRAME_V2_S390X_OFFSET_DECODE_REGNUM((u32)w));
	}
	return 0;
}

static void reenc_fre(const struct sfu_fde *fde, const struct sfu_fre *fre,
		      struct sfu_enc_fre *f)
{
	unsigned int i;

	memset(f, 0, sizeof(*f));
	f->start = fre->start;
	f->base = SFRAME_FRE_CFA_BASE_REG_ID(fre->info);
	f->mangled = SFRAME_FRE_MANGLED_RA_P(fre->info);
	f->nr_words = fre->nr_words;
	f->ctrl_mask = reenc_ctrl_mask(fde, fre);
	for (i = 0; i < fre->nr_words; i++)
		f->words[i] = f->ctrl_mask & BIT(i) ? (s32)fre->words[i] :
			      sfu_fre_sword(fre, i);
}

static void reenc_fde_head(const struct sfu_fde *fde,
			   struct sfu_enc_fde *d)
{
	bool v3 = fde->elem->version == SFRAME_VERSION_3;

	memset(d, 0, sizeof(*d));
	d->start = fde->start;
	d->size = fde->size;
	d->pc_type = fde->pc_type;
	d->rep_size = fde->rep_size;
	d->fde_type = fde->fde_type;
	d->signal = v3 && SFRAME_V3_FUNC_SIGNAL_P(fde->info);
	d->pauth_key = SFRAME_FUNC_PAUTH_KEY(fde->info);
	/* V1/V2 without rows: "nothing here", which V3 says with flex. */
	if (!v3 && !fde->num_fres)
		d->fde_type = SFRAME_FDE_TYPE_FLEX;
}

static int reenc_fde(struct reenc_ctx *c, const struct sfu_elem *e,
		     u32 idx, struct sfu_enc_fde *d)
{
	struct reenc *r = c->out;
	struct sfu_enc_fre *fres = r->fres + r->nr_fres;
	struct sfu_fre_iter it;
	struct sfu_fre fre;
	struct sfu_fde fde;
	u64 fre_off;
	int ret;

	ret = sfu_read_fde(&c->sec, e, idx, &fde);
	if (ret)
		return reenc_decoder_fail(c, ret);
	if (fde.num_fres > c->fres_cap - r->nr_fres)
		return reenc_fail(c, -EBADMSG,
				      "FDE at section offset 0x%" PRIx64
				      ": FDEs claim more FREs than the headers",
				      reenc_fde_off(&fde));
	reenc_fde_head(&fde, d);
	d->fres = fres;
	sfu_fre_iter_init(&fde, &it);
	for (;;) {
		fre_off = it.off;
		ret = sfu_fre_next(&c->sec, &fde, &it, &fre);
		if (ret == -ENOENT)
			break;
		if (ret)
			return reenc_decoder_fail(c, ret);
		ret = reenc_check_words(c, &fde, &fre, fre_off);
		if (ret)
			return ret;
		reenc_fre(&fde, &fre, &fres[d->nr_fres++]);
	}
	r->nr_fres += d->nr_fres;
	return 0;
}

static int reenc_key_cmp(const void *a, const void *b)
{
	const struct reenc_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Order the FDEs by start address; equal starts keep their order. */
static int reenc_sort(struct reenc_ctx *c)
{
	struct reenc *r = c->out;
	struct reenc_key *keys;
	struct sfu_enc_fde *sorted;
	u32 i;

	for (i = 1; i < r->nr_fdes; i++)
		if (r->fdes[i].start < r->fdes[i - 1].start)
			break;
	if (i >= r->nr_fdes)
		return 0;
	keys = calloc(r->nr_fdes, sizeof(*keys));
	sorted = calloc(r->nr_fdes, sizeof(*sorted));
	if (!keys || !sorted) {
		free(keys);
		free(sorted);
		return reenc_fail(c, -ENOMEM, "out of memory");
	}
	for (i = 0; i < r->nr_fdes; i++) {
		keys[i].start = r->fdes[i].start;
		keys[i].pos = i;
	}
	qsort(keys, r->nr_fdes, sizeof(*keys), reenc_key_cmp);
	for (i = 0; i < r->nr_fdes; i++)
		sorted[i] = r->fdes[keys[i].pos];
	free(keys);
	free(r->fdes);
	r->fdes = sorted;
	return 0;
}

static int reenc_alloc(struct reenc_ctx *c)
{
	struct reenc *r = c->out;
	u64 fres = 0;
	u32 i;

	for (i = 0; i < c->sec.nr_elems; i++)
		fres += c->sec.elems[i].num_fres;
	if (fres > UINT32_MAX)
		return reenc_fail(c, -E2BIG, "more than 2^32 FREs");
	c->fres_cap = (u32)fres;
	r->fdes = calloc(c->sec.nr_fdes ? c->sec.nr_fdes : 1,
			 sizeof(*r->fdes));
	r->fres = calloc(fres ? fres : 1, sizeof(*r->fres));
	if (!r->fdes || !r->fres)
		return reenc_fail(c, -ENOMEM, "out of memory");
	return 0;
}

static int reenc_walk(struct reenc_ctx *c)
{
	struct reenc *r = c->out;
	const struct sfu_elem *e;
	u32 i, j;
	int ret;

	ret = sfu_section_validate(&c->sec);
	if (ret)
		return reenc_decoder_fail(c, ret);
	ret = reenc_check_elems(c);
	if (!ret)
		ret = reenc_alloc(c);
	if (ret)
		return ret;
	e = &c->sec.elems[0];
	r->version = e->version;
	r->abi = e->abi;
	r->flags = e->flags;
	r->fixed_fp = e->fixed_fp;
	r->fixed_ra = e->fixed_ra;
	r->nr_elems = c->sec.nr_elems;
	for (i = 0; i < c->sec.nr_elems; i++) {
		e = &c->sec.elems[i];
		for (j = 0; j < e->num_fdes; j++) {
			ret = reenc_fde(c, e, j, &r->fdes[r->nr_fdes]);
			if (ret)
				return ret;
			r->nr_fdes++;
		}
	}
	return reenc_sort(c);
}

/**
 * reenc_load() - decode a section into the encoder's description
 * @sec: the section bytes (any valid V1, V2 or V3 section)
 * @len: size of @sec in bytes
 * @vaddr: address of @sec's first byte in the target, which function
 *	starts are computed from
 * @out: where the description goes; free it with reenc_free()
 * @err: buffer for a message on failure, or NULL
 * @errlen: size of @err
 *
 * Validates the whole section with the decoder, then collects every
 * function and row.  @out->fdes and @out->fres, fed to sfu_encode() with
 * the parameters reenc_v3_params() gives, write a V3 section with the
 * same rule at every address as @sec (see the top of this file for the
 * few conversions that takes).  @out->fdes[i].start are absolute
 * addresses.
 *
 * Return: 0, or a negative error code with @out empty and @err saying
 * why: the decoder's codes (see include/sframe/decode.h) with its message
 * and the section offset it concerns, -EOPNOTSUPP for a section V3 cannot
 * express (naming the element or FDE), or -ENOMEM.
 */
int reenc_load(const u8 *sec, size_t len, u64 vaddr, struct reenc *out,
	       char *err, size_t errlen)
{
	struct reenc_ctx c = { .out = out, .err = err, .errlen = errlen };
	int ret;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	ret = sfu_section_init(&c.sec, (unsigned long)sec, len, vaddr,
			       SFU_MEM_KERNEL, SFU_ABI_ANY);
	if (ret)
		return reenc_decoder_fail(&c, ret);
	ret = reenc_walk(&c);
	sfu_section_destroy(&c.sec);
	if (ret)
		reenc_free(out);
	return ret;
}

/**
 * reenc_free() - free what reenc_load() allocated
 * @r: the description; left empty, and may be freed again
 */
void reenc_free(struct reenc *r)
{
	free(r->fdes);
	free(r->fres);
	memset(r, 0, sizeof(*r));
}

/**
 * reenc_v3_params() - encoder parameters for writing @r as V3
 * @r: a description from reenc_load()
 * @vaddr: address the new section will be placed at
 * @p: the parameters to fill
 *
 * Version 3, the source's ABI and fixed FP/RA offsets, sorted FDEs with
 * PC-relative function starts, and the smallest FRE start and data-word
 * sizes that fit.
 */
void reenc_v3_params(const struct reenc *r, u64 vaddr,
		     struct sfu_enc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->version = SFRAME_VERSION_3;
	p->abi = r->abi;
	p->flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	p->fixed_fp = r->fixed_fp;
	p->fixed_ra = r->fixed_ra;
	p->vaddr = vaddr;
	p->fre_type = SFU_ENC_AUTO;
	p->word_size = SFU_ENC_AUTO;
}
