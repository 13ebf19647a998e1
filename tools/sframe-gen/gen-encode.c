// SPDX-License-Identifier: GPL-2.0
/*
 * The generator's output: its functions as the encoder's input, checked
 * for V2's 32-bit starts, compacted (neighbours with only padding between
 * them merged, identical rows shared) and encoded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen-internal.h"

/* V2 stores function starts in 32 bits, relative to their field. */
static int gen_check_v2(struct gen *g, const struct sfu_enc_fde *fdes, u32 n)
{
	u64 field = g->o.vaddr + sizeof(struct sframe_header);
	s64 rel;
	u32 i;

	if (g->o.version != SFRAME_VERSION_2)
		return 0;
	for (i = 0; i < n; i++, field += sizeof(struct sframe_fde_v2)) {
		rel = (s64)(fdes[i].start - field);
		if (rel < INT32_MIN || rel > GEN_FDE_V2_ANCHOR_MAX)
			return gen_fail(g, -ERANGE,
					"%s: function at 0x%" PRIx64
					" is too far from a V2 section at 0x%"
					PRIx64, g->o.in, fdes[i].start,
					g->o.vaddr);
	}
	return 0;
}

static void gen_enc_params(const struct gen *g, struct sfu_enc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->version = g->o.version;
	p->abi = g->arch->abi;
	p->flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	p->fixed_fp = g->arch->fixed_fp;
	p->fixed_ra = g->arch->fixed_ra;
	p->vaddr = g->o.vaddr;
	p->fre_type = SFU_ENC_AUTO;
	p->word_size = SFU_ENC_AUTO;
}

static u32 gen_enc_fdes(const struct gen *g, struct sfu_enc_fde *out)
{
	const struct gen_fde *d;
	u32 i, n = 0;

	for (i = 0; i < g->nr_fdes; i++) {
		d = &g->fdes[i];
		if (!d->emitted)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].start = d->start;
		out[n].size = (u32)d->size;
		out[n].pc_type = d->pc_type;
		out[n].rep_size = d->rep_size;
		out[n].pauth_key = d->pauth_key;
		out[n].fde_type = d->fde_type;
		out[n].signal = d->signal;
		out[n].nr_fres = d->nr_fres;
		out[n].fres = &g->fres[d->fre_first];
		n++;
	}
	return n;
}

/* ---- compaction ---- */

/* Neighbours merge while one FRE start byte still reaches every row. */
#define GEN_MERGE_SPAN		256
#define GEN_MERGE_GAP_MAX	32

/* Whether [@from, @to) holds nothing but padding instructions. */
static bool gen_is_padding(const struct gen *g, u64 from, u64 to)
{
	u64 at = 0, n = to - from, left;
	const u8 *p = elf_at_vaddr(g->file, from, &left);
	u32 len;

	if (!p || left < n)
		return false;
	while (at < n) {
		len = g->arch->pad(p + at, n - at, g->elf.big);
		if (!len)
			return false;
		at += len;
	}
	return true;
}

/* @b can join the FDE @a ends with: same kind, close, padding between. */
static bool gen_can_merge(const struct gen *g, const struct sfu_enc_fde *a,
			  const struct sfu_enc_fde *b)
{
	u64 end = a->start + a->size;

	if (a->pc_type != SFRAME_FDE_TYPE_PCINC || b->pc_type != a->pc_type ||
	    a->fde_type != b->fde_type || a->signal || b->signal ||
	    a->pauth_key != b->pauth_key || b->start < end ||
	    b->start - end > GEN_MERGE_GAP_MAX ||
	    b->start + b->size - a->start > GEN_MERGE_SPAN ||
	    a->nr_fres + b->nr_fres > SFU_MAX_FDE_FRES)
		return false;
	return b->start == end || gen_is_padding(g, end, b->start);
}

/* Append @b's rows to @a's (the last ones in @store). */
static void gen_merge_into(struct gen *g, struct sfu_enc_fde *a,
			   const struct sfu_enc_fde *b, struct sfu_enc_fre *store)
{
	u32 shift = (u32)(b->start - a->start), i = 0;
	struct sfu_enc_fre *to = &store[a->nr_fres];

	g->pad_bytes += b->start - (a->start + a->size);
	/* A first row that only repeats the rule in force adds nothing. */
	if (b->start == a->start + a->size && a->nr_fres && b->nr_fres &&
	    gen_same_fre(to - 1, &b->fres[0]))
		i = 1;
	for (; i < b->nr_fres; i++, to++) {
		*to = b->fres[i];
		to->start += shift;
	}
	a->nr_fres = (u32)(to - store);
	a->size = (u32)(b->start + b->size - a->start);
	g->merged++;
}

/*
 * Merge neighbouring functions into one FDE where only padding lies
 * between them: each FDE costs 16 bytes of index in V3, and the padding,
 * never executed, may as well carry the rule in force before it.  The
 * rows move to @storep, which the caller frees.
 */
static int gen_merge(struct gen *g, struct sfu_enc_fde *fdes, u32 *np,
		     struct sfu_enc_fre **storep)
{
	struct sfu_enc_fre *store, *group = NULL;
	u64 total = 0;
	u32 i, w = 0;

	for (i = 0; i < *np; i++)
		total += fdes[i].nr_fres;
	store = calloc(total + 1, sizeof(*store));
	if (!store)
		return gen_oom(g);
	for (i = 0; i < *np; i++) {
		/* The rows of the FDE being built are the last in @store. */
		if (w && gen_can_merge(g, &fdes[w - 1], &fdes[i])) {
			gen_merge_into(g, &fdes[w - 1], &fdes[i], group);
			continue;
		}
		group = w ? group + fdes[w - 1].nr_fres : store;
		fdes[w] = fdes[i];
		memcpy(group, fdes[i].fres, fdes[i].nr_fres * sizeof(*group));
		fdes[w].fres = group;
		w++;
	}
	*np = w;
	*storep = store;
	return 0;
}

#define GEN_FNV_OFFSET		0xcbf29ce484222325ull
#define GEN_FNV_PRIME		0x100000001b3ull

static u64 gen_hash(u64 h, const void *p, size_t n)
{
	const u8 *b = p;

	while (n--)
		h = (h ^ *b++) * GEN_FNV_PRIME;
	return h;
}

/* What must be equal for two FDEs to share one copy of their rows. */
static u64 gen_rows_hash(const struct sfu_enc_fde *d)
{
	u8 attr[] = { d->pc_type, d->rep_size, d->fde_type, d->signal,
		      d->pauth_key };
	const struct sfu_enc_fre *f;
	u64 h = GEN_FNV_OFFSET;
	u32 i;

	h = gen_hash(h, attr, sizeof(attr));
	h = gen_hash(h, &d->nr_fres, sizeof(d->nr_fres));
	for (i = 0; i < d->nr_fres; i++) {
		f = &d->fres[i];
		h = gen_hash(h, &f->start, sizeof(f->start));
		h = gen_hash(h, &f->base, sizeof(f->base));
		h = gen_hash(h, &f->mangled, sizeof(f->mangled));
		h = gen_hash(h, &f->ctrl_mask, sizeof(f->ctrl_mask));
		h = gen_hash(h, f->words, f->nr_words * sizeof(f->words[0]));
	}
	return h;
}

static bool gen_same_rows(const struct sfu_enc_fde *a,
			  const struct sfu_enc_fde *b)
{
	u32 i;

	if (a->pc_type != b->pc_type || a->rep_size != b->rep_size ||
	    a->fde_type != b->fde_type || a->signal != b->signal ||
	    a->pauth_key != b->pauth_key || a->nr_fres != b->nr_fres)
		return false;
	for (i = 0; i < a->nr_fres; i++)
		if (a->fres[i].start != b->fres[i].start ||
		    !gen_same_fre(&a->fres[i], &b->fres[i]))
			return false;
	return true;
}

/*
 * Store identical row sequences once: each FDE whose rows an earlier FDE
 * already has points at that FDE's copy.  Open addressing on a table of
 * FDE indexes twice the size of the FDE count.
 */
static int gen_share(struct gen *g, struct sfu_enc_fde *fdes, u32 n)
{
	u32 cap = 2 * n + 1, *slot, i, at;

	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return gen_oom(g);
	for (i = 0; i < n; i++) {
		at = gen_rows_hash(&fdes[i]) % cap;
		while (slot[at] && !gen_same_rows(&fdes[slot[at] - 1], &fdes[i]))
			at = (at + 1) % cap;
		if (slot[at]) {
			fdes[i].share = slot[at];
			g->shared_fdes++;
		} else {
			slot[at] = i + 1;
		}
	}
	free(slot);
	return 0;
}

/* Encode @fdes, compacted unless told not to, into a buffer to free. */
int gen_encode_fdes(struct gen *g, struct sfu_enc_fde *fdes, u32 n,
		    struct sfu_enc_params *p, u8 **bufp)
{
	s64 len;
	int ret;

	if (!g->o.no_compact)
		p->tight_starts = true;
	if (!g->o.no_compact && g->o.share_rows) {
		ret = gen_share(g, fdes, n);
		if (ret)
			return ret;
	}
	sfu_encode_sizes(p, fdes, n, &g->sizes);
	len = sfu_encode(p, fdes, n, NULL, 0);
	if (len < 0)
		return gen_fail(g, (int)len, "%s: cannot encode: %s", g->o.in,
				strerror((int)-len));
	*bufp = malloc(len);
	if (!*bufp)
		return gen_oom(g);
	sfu_encode(p, fdes, n, *bufp, len);
	g->out_bytes = len;
	return 0;
}

/* The section generated from .eh_frame. */
int gen_encode(struct gen *g, u8 **bufp)
{
	struct sfu_enc_fde *fdes = calloc(g->nr_fdes + 1, sizeof(*fdes));
	struct sfu_enc_params p;
	struct sfu_enc_fre *merged = NULL;
	u32 n;
	int ret;

	if (!fdes)
		return gen_oom(g);
	n = gen_enc_fdes(g, fdes);
	gen_enc_params(g, &p);
	ret = gen_check_v2(g, fdes, n);
	if (!ret)
		g->plain_bytes = sfu_encode(&p, fdes, n, NULL, 0);
	if (!ret && !g->o.no_compact)
		ret = gen_merge(g, fdes, &n, &merged);
	if (!ret)
		ret = gen_encode_fdes(g, fdes, n, &p, bufp);
	free(merged);
	free(fdes);
	return ret;
}

