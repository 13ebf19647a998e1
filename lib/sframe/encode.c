// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame encoder.  Not part of the module: the KUnit suites, the host tests,
 * the fuzzer seeds, the benchmark and the host tools link it to produce
 * sections of every version, ABI and byte order.
 */
#include <sframe/encode.h>
#include <sframe/decode.h>

/* sfh_fre_len is a u32. */
#define U32_MAX_BYTES	0xffffffffull

struct sfu_out {
	u8 *buf;
	size_t cap;
	u64 pos;
	bool big;
};

static void sfu_put(struct sfu_out *o, u64 v, unsigned int n)
{
	unsigned int i, shift;

	for (i = 0; i < n; i++, o->pos++) {
		shift = o->big ? 8 * (n - 1 - i) : 8 * i;
		if (o->pos < o->cap)
			o->buf[o->pos] = (u8)(v >> shift);
	}
}

static bool sfu_word_fits(s32 w, bool ctrl, unsigned int bytes)
{
	s64 lim = (s64)1 << (8 * bytes - 1);

	if (bytes >= sizeof(u32))
		return true;
	if (ctrl)
		return w >= 0 && w < 2 * lim;
	return w >= -lim && w < lim;
}

static u8 sfu_enc_word_size(const struct sfu_enc_params *p,
			    const struct sfu_enc_fre *f)
{
	unsigned int code, i;
	bool ok;

	if (p->word_size != SFU_ENC_AUTO)
		return p->word_size;
	for (code = SFRAME_FRE_DATAWORD_1B; code < SFRAME_FRE_DATAWORD_4B;
	     code++) {
		ok = true;
		for (i = 0; i < f->nr_words; i++)
			ok &= sfu_word_fits(f->words[i], f->ctrl_mask >> i & 1,
					    1u << code);
		if (ok)
			return code;
	}
	return SFRAME_FRE_DATAWORD_4B;
}

static u8 sfu_enc_fre_type(const struct sfu_enc_params *p,
			   const struct sfu_enc_fde *d)
{
	u64 top = p->tight_starts ? 0 : d->size;
	u32 i;

	if (p->fre_type != SFU_ENC_AUTO)
		return p->fre_type;
	for (i = 0; i < d->nr_fres; i++)
		if (d->fres[i].start > top)
			top = d->fres[i].start;
	if (top < 0x100)
		return SFRAME_FRE_TYPE_ADDR1;
	if (top < 0x10000)
		return SFRAME_FRE_TYPE_ADDR2;
	return SFRAME_FRE_TYPE_ADDR4;
}

static void sfu_enc_fres(struct sfu_out *o, const struct sfu_enc_params *p,
			 const struct sfu_enc_fde *d)
{
	unsigned int asz = 1u << sfu_enc_fre_type(p, d), i, ws;
	const struct sfu_enc_fre *f;
	u8 code, info;
	u32 j;

	for (j = 0; j < d->nr_fres; j++) {
		f = &d->fres[j];
		code = sfu_enc_word_size(p, f);
		info = SFRAME_FRE_INFO(f->base, f->nr_words, code);
		if (f->mangled)
			info |= SFRAME_FRE_MANGLED_RA_BIT;
		sfu_put(o, f->start, asz);
		sfu_put(o, info, 1);
		ws = code == SFRAME_FRE_DATAWORD_4B ? 4 : 1u << code;
		for (i = 0; i < f->nr_words; i++)
			sfu_put(o, (u32)f->words[i], ws);
	}
}

static u8 sfu_enc_info(const struct sfu_enc_params *p,
		       const struct sfu_enc_fde *d)
{
	u8 info = SFRAME_FUNC_INFO(d->pc_type, sfu_enc_fre_type(p, d));

	if (d->pauth_key)
		info |= SFRAME_FUNC_PAUTH_KEY_BIT;
	if (d->signal && p->version == SFRAME_VERSION_3)
		info |= SFRAME_V3_FUNC_SIGNAL_BIT;
	return info;
}

static void sfu_enc_header(struct sfu_out *o, const struct sfu_enc_params *p,
			   u32 nr_fdes, u32 nr_fres, u32 fre_len, u32 fdes_len)
{
	unsigned int i;

	sfu_put(o, SFRAME_MAGIC, 2);
	sfu_put(o, p->version, 1);
	sfu_put(o, p->flags, 1);
	sfu_put(o, p->abi, 1);
	sfu_put(o, (u8)p->fixed_fp, 1);
	sfu_put(o, (u8)p->fixed_ra, 1);
	sfu_put(o, p->auxhdr_len, 1);
	sfu_put(o, nr_fdes, 4);
	sfu_put(o, nr_fres, 4);
	sfu_put(o, fre_len, 4);
	sfu_put(o, 0, 4);
	sfu_put(o, fdes_len, 4);
	for (i = 0; i < p->auxhdr_len; i++)
		sfu_put(o, 0, 1);
}

/* Bytes of FRE data for function @d, V3 attributes included. */
static u64 sfu_enc_fre_bytes(const struct sfu_enc_params *p,
			     const struct sfu_enc_fde *d)
{
	struct sfu_out count = { .cap = 0 };

	sfu_enc_fres(&count, p, d);
	if (p->version == SFRAME_VERSION_3)
		count.pos += sizeof(struct sframe_fda_v3);
	return count.pos;
}

static void sfu_enc_fde(struct sfu_out *o, const struct sfu_enc_params *p,
			const struct sfu_enc_fde *d, u32 fre_off)
{
	u64 field = p->vaddr + o->pos;
	u64 anchor = p->vaddr;

	if (p->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		anchor = field;
	if (p->version == SFRAME_VERSION_3) {
		sfu_put(o, d->start - anchor, 8);
		sfu_put(o, d->size, 4);
		sfu_put(o, fre_off, 4);
		return;
	}
	sfu_put(o, (u32)(d->start - anchor), 4);
	sfu_put(o, d->size, 4);
	sfu_put(o, fre_off, 4);
	sfu_put(o, d->nr_fres, 4);
	sfu_put(o, sfu_enc_info(p, d), 1);
	if (p->version == SFRAME_VERSION_2) {
		sfu_put(o, d->rep_size, 1);
		sfu_put(o, 0, 2);
	}
}

/**
 * sfu_encode_sizes() - where the bytes of an encoded section go
 * @p: section-wide parameters, as for sfu_encode()
 * @fdes: the functions
 * @nr_fdes: number of functions
 * @sz: the breakdown; its parts add up to what sfu_encode() returns
 */
void sfu_encode_sizes(const struct sfu_enc_params *p,
		      const struct sfu_enc_fde *fdes, u32 nr_fdes,
		      struct sfu_enc_sizes *sz)
{
	unsigned int code;
	const struct sfu_enc_fre *f;
	u32 i, j;

	memset(sz, 0, sizeof(*sz));
	sz->header = sizeof(struct sframe_header) + p->auxhdr_len;
	sz->index = (u64)nr_fdes * (p->version == SFRAME_VERSION_1 ?
				    sizeof(struct sframe_fde_v1) :
				    p->version == SFRAME_VERSION_2 ?
				    sizeof(struct sframe_fde_v2) :
				    sizeof(struct sframe_fdi_v3));
	for (i = 0; i < nr_fdes; i++) {
		if (fdes[i].share)
			continue;
		if (p->version == SFRAME_VERSION_3)
			sz->attrs += sizeof(struct sframe_fda_v3);
		for (j = 0; j < fdes[i].nr_fres; j++) {
			f = &fdes[i].fres[j];
			code = sfu_enc_word_size(p, f);
			sz->starts += 1u << sfu_enc_fre_type(p, &fdes[i]);
			sz->infos++;
			sz->words += (u64)f->nr_words *
				     (code == SFRAME_FRE_DATAWORD_4B ? 4 :
				      1u << code);
		}
	}
}

/* A shared FDE points back at one with rows of its own. */
static bool sfu_enc_share_ok(const struct sfu_enc_fde *fdes, u32 i)
{
	u32 to = fdes[i].share;

	return !to || (to - 1 < i && !fdes[to - 1].share);
}

/**
 * sfu_encode() - write an SFrame section
 * @p: section-wide parameters
 * @fdes: the functions, written in this order
 * @nr_fdes: number of functions
 * @buf: output buffer, may be NULL to measure
 * @cap: size of @buf
 *
 * The FDE sub-section directly follows the header and the FRE sub-section
 * follows the FDEs.  Nothing is written past @cap.
 *
 * FDEs that share rows (see struct sfu_enc_fde) point at one copy.
 *
 * Return: the size of the whole section in bytes, -E2BIG if the functions
 * exceed what the format (or the decoder) can hold, or -ENOMEM.
 */
s64 sfu_encode(const struct sfu_enc_params *p, const struct sfu_enc_fde *fdes,
	       u32 nr_fdes, u8 *buf, size_t cap)
{
	struct sfu_out o = { .buf = buf, .cap = buf ? cap : 0 };
	u8 fde_size = p->version == SFRAME_VERSION_1 ?
		      sizeof(struct sframe_fde_v1) :
		      p->version == SFRAME_VERSION_2 ?
		      sizeof(struct sframe_fde_v2) :
		      sizeof(struct sframe_fdi_v3);
	const struct sfu_abi_info *ai = sfu_abi_info(p->abi);
	bool big = ai ? ai->big_endian : false;
	u64 fre_len = 0, fre_off = 0;
	u32 nr_fres = 0, i, *offs;

	if (p->foreign)
		big = !big;
	o.big = big;
	if (nr_fdes > SFU_MAX_FDES)
		return -E2BIG;
	for (i = 0; i < nr_fdes; i++) {
		/* The format's own limits: V3 counts a function's rows in u16. */
		if (fdes[i].nr_fres > SFU_MAX_FDE_FRES ||
		    !sfu_enc_share_ok(fdes, i))
			return -E2BIG;
		if (fdes[i].share)
			continue;
		fre_len += sfu_enc_fre_bytes(p, &fdes[i]);
		nr_fres += fdes[i].nr_fres;
	}
	if (fre_len > U32_MAX_BYTES)
		return -E2BIG;
	offs = sfu_alloc_array(nr_fdes ? nr_fdes : 1, sizeof(*offs));
	if (!offs)
		return -ENOMEM;
	sfu_enc_header(&o, p, nr_fdes, nr_fres, (u32)fre_len,
		       nr_fdes * fde_size);
	for (i = 0; i < nr_fdes; i++) {
		offs[i] = fdes[i].share ? offs[fdes[i].share - 1] : (u32)fre_off;
		sfu_enc_fde(&o, p, &fdes[i], offs[i]);
		if (!fdes[i].share)
			fre_off += sfu_enc_fre_bytes(p, &fdes[i]);
	}
	sfu_free(offs);
	for (i = 0; i < nr_fdes; i++) {
		if (fdes[i].share)
			continue;
		if (p->version == SFRAME_VERSION_3) {
			sfu_put(&o, fdes[i].nr_fres, 2);
			sfu_put(&o, sfu_enc_info(p, &fdes[i]), 1);
			sfu_put(&o, fdes[i].fde_type, 1);
			sfu_put(&o, fdes[i].rep_size, 1);
		}
		sfu_enc_fres(&o, p, &fdes[i]);
	}
	return o.pos;
}
