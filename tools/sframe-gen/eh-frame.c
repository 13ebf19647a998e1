// SPDX-License-Identifier: GPL-2.0
/*
 * .eh_frame reader for the SFrame generator.
 *
 * Records are read through a cursor that is bounded by the record it is
 * in, so a bad length, a truncated field or an over-long LEB128 number
 * stops the reader with the offset of the offending byte instead of
 * reading past the section.  FDEs may only name CIEs that were already
 * seen as records of the section, which rules out CIE pointers into the
 * middle of a record, at an FDE (cycles included) or out of the section.
 *
 * A record with the 64-bit length escape keeps a 4-byte CIE id and CIE
 * pointer, as the LSB specifies for .eh_frame.
 *
 * The CFI interpreter is eh-cfi.c.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "eh-frame-internal.h"

/* Record framing. */
#define EHF_LEN32_SIZE		4
#define EHF_LEN64_ESCAPE	0xffffffffULL
#define EHF_LEN_RESERVED	0xfffffff0ULL	/* DWARF reserves up to escape */
#define EHF_ID_SIZE		4
#define EHF_CIE_ID		0
#define EHF_CIES_GROW		16

/* CIE versions: 1 (.eh_frame), 3 (DWARF 3), 4 (address and segment size). */
#define EHF_CIE_V1		1
#define EHF_CIE_V3		3
#define EHF_CIE_V4		4

/* LEB128. */
#define LEB_PAYLOAD		0x7f
#define LEB_MORE		0x80
#define LEB_SIGN		0x40
#define LEB_BITS		7
#define U64_BITS		64
#define BYTE_BITS		8

/* .eh_frame_hdr: version, three encodings, then eh_frame_ptr. */
#define EHF_HDR_VERSION		1
#define EHF_HDR_PTR_OFF		4

/* The framing of one record. */
struct ehf_rec {
	u64 off;
	u64 end;
	u64 id_off;		/* the CIE id or CIE pointer field */
	u64 id;
	bool terminator;
};

int ehf_fail(struct ehf_section *s, u64 off, const char *what, int err)
{
	s->err.off = off;
	s->err.what = what;
	return err;
}

int ehf_bad(struct ehf_section *s, u64 off, const char *what)
{
	return ehf_fail(s, off, what, -EINVAL);
}

static int ehf_unsup(struct ehf_section *s, u64 off, const char *what)
{
	return ehf_fail(s, off, what, -EOPNOTSUPP);
}

/* ---- primitive reads ---- */

int ehf_get(struct ehf_cur *c, unsigned int n, u64 *v, const char *what)
{
	if (c->pos > c->end || c->end - c->pos < n)
		return ehf_bad(c->s, c->pos, what);
	*v = elf_rd(c->s->big, c->s->data + c->pos, n);
	c->pos += n;
	return 0;
}

int ehf_get_u8(struct ehf_cur *c, u8 *v, const char *what)
{
	u64 w = 0;
	int ret = ehf_get(c, sizeof(u8), &w, what);

	*v = (u8)w;
	return ret;
}

/**
 * ehf_uleb() - decode an unsigned LEB128 number
 * @p: the bytes
 * @len: how many bytes there are
 * @pos: offset of the first byte; advanced past the number
 * @val: the value
 *
 * Return: 0, -EINVAL if the number runs past @len, or -ERANGE if it does
 * not fit 64 bits.
 */
int ehf_uleb(const u8 *p, u64 len, u64 *pos, u64 *val)
{
	unsigned int shift = 0;
	u64 v = 0;
	u8 b, bits;

	do {
		if (*pos >= len)
			return -EINVAL;
		b = p[(*pos)++];
		bits = b & LEB_PAYLOAD;
		if (shift >= U64_BITS) {
			if (bits)
				return -ERANGE;
			continue;
		}
		if (shift == U64_BITS - 1 && bits > 1)
			return -ERANGE;
		v |= (u64)bits << shift;
		shift += LEB_BITS;
	} while (b & LEB_MORE);
	*val = v;
	return 0;
}

/**
 * ehf_sleb() - decode a signed LEB128 number
 * @p: the bytes
 * @len: how many bytes there are
 * @pos: offset of the first byte; advanced past the number
 * @val: the value
 *
 * Return: 0, -EINVAL if the number runs past @len, or -ERANGE if it does
 * not fit 64 bits.
 */
int ehf_sleb(const u8 *p, u64 len, u64 *pos, s64 *val)
{
	unsigned int shift = 0;
	u64 v = 0;
	u8 b, bits;

	do {
		if (*pos >= len)
			return -EINVAL;
		b = p[(*pos)++];
		bits = b & LEB_PAYLOAD;
		if (shift >= U64_BITS) {
			/* Only copies of the sign bit may follow. */
			if (bits != ((s64)v < 0 ? LEB_PAYLOAD : 0))
				return -ERANGE;
			continue;
		}
		if (shift == U64_BITS - 1 && bits && bits != LEB_PAYLOAD)
			return -ERANGE;
		v |= (u64)bits << shift;
		shift += LEB_BITS;
	} while (b & LEB_MORE);
	if (shift < U64_BITS && (b & LEB_SIGN))
		v |= ~0ULL << shift;
	*val = (s64)v;
	return 0;
}

static int ehf_leb_err(struct ehf_cur *c, u64 at, int ret)
{
	if (ret == -ERANGE)
		return ehf_bad(c->s, at, "LEB128 number does not fit 64 bits");
	return ehf_bad(c->s, at, "truncated LEB128 number");
}

int ehf_get_uleb(struct ehf_cur *c, u64 *v)
{
	u64 at = c->pos;
	int ret = ehf_uleb(c->s->data, c->end, &c->pos, v);

	return ret ? ehf_leb_err(c, at, ret) : 0;
}

int ehf_get_sleb(struct ehf_cur *c, s64 *v)
{
	u64 at = c->pos;
	int ret = ehf_sleb(c->s->data, c->end, &c->pos, v);

	return ret ? ehf_leb_err(c, at, ret) : 0;
}

/* A DWARF register number, bounded so that it fits the rules. */
int ehf_get_reg(struct ehf_cur *c, u32 *reg)
{
	u64 at = c->pos, v;
	int ret = ehf_get_uleb(c, &v);

	if (ret)
		return ret;
	if (v >= EHF_REG_RA)
		return ehf_bad(c->s, at, "register number too large");
	*reg = (u32)v;
	return 0;
}

/* ---- pointer encodings ---- */

static bool ehf_enc_valid(u8 enc)
{
	if (enc == DW_EH_PE_omit)
		return true;
	switch (enc & DW_EH_PE_FORMAT_MASK) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_uleb128:
	case DW_EH_PE_udata2:
	case DW_EH_PE_udata4:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sleb128:
	case DW_EH_PE_sdata2:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_sdata8:
		break;
	default:
		return false;
	}
	return (enc & DW_EH_PE_APPL_MASK) <= DW_EH_PE_aligned;
}

static s64 ehf_sext(u64 v, unsigned int bytes)
{
	unsigned int shift = U64_BITS - BYTE_BITS * bytes;

	return (s64)(v << shift) >> shift;
}

/* The value of a pointer field without its application (base). */
static int ehf_get_raw(struct ehf_cur *c, u8 enc, u64 *v)
{
	static const char what[] = "truncated pointer";
	unsigned int size = c->s->addr_size;
	s64 sv;
	int ret;

	switch (enc & DW_EH_PE_FORMAT_MASK) {
	case DW_EH_PE_absptr:
		return ehf_get(c, size, v, what);
	case DW_EH_PE_uleb128:
		return ehf_get_uleb(c, v);
	case DW_EH_PE_sleb128:
		ret = ehf_get_sleb(c, &sv);
		*v = (u64)sv;
		return ret;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = sizeof(u16);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = sizeof(u32);
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = sizeof(u64);
		break;
	default:
		return ehf_bad(c->s, c->pos, "unknown pointer encoding");
	}
	ret = ehf_get(c, size, v, what);
	if (!ret && (enc & DW_EH_PE_signed))
		*v = (u64)ehf_sext(*v, size);
	return ret;
}

/* Skip to the address-size alignment DW_EH_PE_aligned asks for. */
static int ehf_align(struct ehf_cur *c)
{
	u64 size = c->s->addr_size;
	u64 mis = (c->s->vaddr + c->pos) % size;

	if (!mis)
		return 0;
	if (c->end - c->pos < size - mis)
		return ehf_bad(c->s, c->pos, "truncated aligned pointer");
	c->pos += size - mis;
	return 0;
}

/*
 * A pointer with its application applied.  @c->pos is at the field.  An
 * indirect pointer is reported, not followed: the reader has no memory.
 */
int ehf_get_ptr(struct ehf_cur *c, u8 enc, u64 *v)
{
	struct ehf_section *s = c->s;
	u64 at = c->pos, field;
	int ret;

	if (enc == DW_EH_PE_omit || !ehf_enc_valid(enc))
		return ehf_bad(s, at, "bad pointer encoding");
	if ((enc & DW_EH_PE_APPL_MASK) == DW_EH_PE_aligned) {
		ret = ehf_align(c);
		if (ret)
			return ret;
	}
	field = s->vaddr + c->pos;
	ret = ehf_get_raw(c, enc, v);
	if (ret)
		return ret;
	switch (enc & DW_EH_PE_APPL_MASK) {
	case DW_EH_PE_pcrel:
		*v += field;
		break;
	case DW_EH_PE_textrel:
		if (!s->text_base)
			return ehf_unsup(s, at, "text-relative pointer without .text");
		*v += s->text_base;
		break;
	case DW_EH_PE_datarel:
		if (!s->data_base)
			return ehf_unsup(s, at, "data-relative pointer without .got");
		*v += s->data_base;
		break;
	case DW_EH_PE_funcrel:
		return ehf_unsup(s, at, "function-relative FDE address");
	}
	if (enc & DW_EH_PE_indirect)
		return ehf_unsup(s, at, "indirect FDE address");
	return 0;
}

/* Step over a pointer whose value is not needed (personality, LSDA). */
static int ehf_skip_ptr(struct ehf_cur *c, u8 enc)
{
	u64 v;
	int ret;

	if (!ehf_enc_valid(enc))
		return ehf_bad(c->s, c->pos, "bad pointer encoding");
	if (enc == DW_EH_PE_omit)
		return 0;
	if ((enc & DW_EH_PE_APPL_MASK) == DW_EH_PE_aligned) {
		ret = ehf_align(c);
		if (ret)
			return ret;
	}
	return ehf_get_raw(c, enc, &v);
}

/* ---- records ---- */

static int ehf_record(struct ehf_section *s, u64 off, struct ehf_rec *r,
		      struct ehf_cur *c)
{
	u64 len;
	int ret;

	memset(r, 0, sizeof(*r));
	r->off = off;
	c->s = s;
	c->pos = off;
	c->end = s->size;
	ret = ehf_get(c, EHF_LEN32_SIZE, &len, "truncated record length");
	if (ret)
		return ret;
	if (!len) {
		r->terminator = true;
		r->end = c->pos;
		return 0;
	}
	if (len == EHF_LEN64_ESCAPE) {
		ret = ehf_get(c, sizeof(u64), &len,
			      "truncated 64-bit record length");
		if (ret)
			return ret;
	} else if (len >= EHF_LEN_RESERVED) {
		return ehf_bad(s, off, "reserved record length");
	}
	if (len > s->size - c->pos)
		return ehf_bad(s, off, "record runs past the end of .eh_frame");
	r->end = c->pos + len;
	c->end = r->end;
	r->id_off = c->pos;
	return ehf_get(c, EHF_ID_SIZE, &r->id, "record too short for its id");
}

static int ehf_cie_aug_string(struct ehf_cur *c, struct ehf_cie *cie)
{
	const u8 *p = c->s->data;
	unsigned int i;

	for (i = 0; i < EHF_AUG_MAX; i++) {
		if (c->pos >= c->end)
			return ehf_bad(c->s, c->pos,
				       "unterminated augmentation string");
		cie->aug[i] = (char)p[c->pos++];
		if (!cie->aug[i])
			return 0;
	}
	return ehf_unsup(c->s, c->pos, "augmentation string too long");
}

static int ehf_cie_enc(struct ehf_cur *c, u8 *enc)
{
	u64 at = c->pos;
	int ret = ehf_get_u8(c, enc, "truncated augmentation data");

	if (ret)
		return ret;
	if (!ehf_enc_valid(*enc))
		return ehf_bad(c->s, at, "bad pointer encoding");
	return 0;
}

/* One letter of a "z" augmentation; *@stop set for an unknown letter. */
static int ehf_cie_aug_letter(struct ehf_cur *c, struct ehf_cie *cie,
			      const char *letter, bool *stop)
{
	u8 enc;
	int ret;

	switch (*letter) {
	case 'L':
		return ehf_cie_enc(c, &cie->lsda_enc);
	case 'P':
		ret = ehf_cie_enc(c, &enc);
		return ret ? ret : ehf_skip_ptr(c, enc);
	case 'R':
		ret = ehf_cie_enc(c, &cie->fde_enc);
		if (!ret && cie->fde_enc == DW_EH_PE_omit)
			return ehf_bad(c->s, c->pos - 1,
				       "FDE pointer encoding is omit");
		return ret;
	case 'S':
		cie->signal = true;
		return 0;
	case 'B':
		cie->bkey = true;
		return 0;
	case 'G':	/* AArch64 MTE tagged frames: nothing to unwind */
		return 0;
	}
	/* The length lets us skip the data of letters we do not know... */
	*stop = true;
	/* ...unless the FDE address encoding is among them. */
	if (strchr(letter, 'R'))
		return ehf_unsup(c->s, cie->off,
				 "unknown augmentation before 'R'");
	return 0;
}

static int ehf_cie_aug_data(struct ehf_cur *c, struct ehf_cie *cie)
{
	struct ehf_cur data = *c;
	bool stop = false;
	const char *p;
	u64 len;
	int ret;

	ret = ehf_get_uleb(c, &len);
	if (ret)
		return ret;
	if (len > c->end - c->pos)
		return ehf_bad(c->s, c->pos, "augmentation data past record end");
	data.pos = c->pos;
	data.end = c->pos + len;
	c->pos = data.end;
	cie->has_aug_data = true;
	for (p = cie->aug + 1; *p && !stop; p++) {
		ret = ehf_cie_aug_letter(&data, cie, p, &stop);
		if (ret)
			return ret;
	}
	return 0;
}

/* The version-dependent fields between the augmentation and the factors. */
static int ehf_cie_version(struct ehf_cur *c, struct ehf_cie *cie)
{
	u64 at = c->pos;
	u8 seg;
	int ret;

	if (cie->version != EHF_CIE_V4)
		return 0;
	ret = ehf_get_u8(c, &cie->addr_size, "truncated CIE");
	if (!ret)
		ret = ehf_get_u8(c, &seg, "truncated CIE");
	if (ret)
		return ret;
	if (cie->addr_size != sizeof(u32) && cie->addr_size != sizeof(u64))
		return ehf_unsup(c->s, at, "unsupported CIE address size");
	if (seg)
		return ehf_unsup(c->s, at + 1, "segmented addresses");
	return 0;
}

static int ehf_parse_cie(struct ehf_section *s, const struct ehf_rec *r,
			 struct ehf_cur *c, struct ehf_cie *cie)
{
	u64 at = c->pos, v;
	int ret;

	memset(cie, 0, sizeof(*cie));
	cie->off = r->off;
	cie->fde_enc = DW_EH_PE_absptr;
	cie->lsda_enc = DW_EH_PE_omit;
	cie->addr_size = s->addr_size;
	ret = ehf_get_u8(c, &cie->version, "truncated CIE");
	if (ret)
		return ret;
	if (cie->version != EHF_CIE_V1 && cie->version != EHF_CIE_V3 &&
	    cie->version != EHF_CIE_V4)
		return ehf_unsup(s, at, "unsupported CIE version");
	ret = ehf_cie_aug_string(c, cie);
	if (!ret)
		ret = ehf_cie_version(c, cie);
	if (!ret)
		ret = ehf_get_uleb(c, &cie->code_align);
	if (!ret)
		ret = ehf_get_sleb(c, &cie->data_align);
	if (ret)
		return ret;
	if (cie->version == EHF_CIE_V1) {
		ret = ehf_get(c, sizeof(u8), &v, "truncated CIE");
		cie->ra_reg = (u32)v;
	} else {
		ret = ehf_get_reg(c, &cie->ra_reg);
	}
	if (ret)
		return ret;
	if (cie->aug[0] == 'z')
		ret = ehf_cie_aug_data(c, cie);
	else if (cie->aug[0])
		ret = ehf_unsup(s, r->off, "augmentation without 'z'");
	cie->insns = c->pos;
	cie->insns_end = r->end;
	return ret;
}

/* Index of the first cached CIE at or after @off. */
static u32 ehf_cie_slot(const struct ehf_section *s, u64 off)
{
	u32 lo = 0, hi = s->nr_cies, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int ehf_cie_add(struct ehf_section *s, const struct ehf_cie *cie)
{
	u32 slot = ehf_cie_slot(s, cie->off);
	struct ehf_cie *n;
	u32 cap;

	if (slot < s->nr_cies && s->cies[slot].off == cie->off)
		return 0;
	if (s->nr_cies == s->cap_cies) {
		cap = s->cap_cies ? 2 * s->cap_cies : EHF_CIES_GROW;
		n = realloc(s->cies, cap * sizeof(*n));
		if (!n)
			return ehf_fail(s, cie->off, "out of memory", -ENOMEM);
		s->cies = n;
		s->cap_cies = cap;
	}
	memmove(&s->cies[slot + 1], &s->cies[slot],
		(s->nr_cies - slot) * sizeof(*s->cies));
	s->cies[slot] = *cie;
	s->nr_cies++;
	return 0;
}

static int ehf_parse_fde(struct ehf_section *s, const struct ehf_rec *r,
			 struct ehf_cur *c, struct ehf_fde *fde)
{
	u64 cie_off, len;
	u32 slot;
	int ret;

	memset(fde, 0, sizeof(*fde));
	fde->off = r->off;
	if (r->id > r->id_off)
		return ehf_bad(s, r->id_off, "CIE pointer points before .eh_frame");
	cie_off = r->id_off - r->id;
	slot = ehf_cie_slot(s, cie_off);
	if (slot >= s->nr_cies || s->cies[slot].off != cie_off)
		return ehf_bad(s, r->id_off, "CIE pointer does not lead to a CIE");
	fde->cie = s->cies[slot];
	ret = ehf_get_ptr(c, fde->cie.fde_enc, &fde->pc_begin);
	if (!ret)
		ret = ehf_get_raw(c, fde->cie.fde_enc, &fde->pc_range);
	if (ret)
		return ret;
	if (fde->cie.has_aug_data) {
		ret = ehf_get_uleb(c, &len);
		if (ret)
			return ret;
		if (len > c->end - c->pos)
			return ehf_bad(s, c->pos,
				       "augmentation data past record end");
		c->pos += len;
	}
	fde->insns = c->pos;
	fde->insns_end = r->end;
	return 0;
}

/* Offset of the first non-zero byte at or after @off, or the size. */
static u64 ehf_nonzero_from(const struct ehf_section *s, u64 off)
{
	while (off < s->size && !s->data[off])
		off++;
	return off;
}

/*
 * Where to go on from a terminator whose record ends at @pos: the end of
 * the section if nothing but zeros follows, else past the zero lengths
 * before the next non-zero byte, which are terminators too.  Skipping them
 * in one step keeps a long run of zeros from being rescanned for each.
 */
static u64 ehf_after_terminator(const struct ehf_section *s, u64 pos)
{
	u64 nz;

	if (s->to_terminator)
		return s->size;
	nz = ehf_nonzero_from(s, pos);
	if (nz == s->size)
		return nz;
	return pos + (nz - pos) / EHF_LEN32_SIZE * EHF_LEN32_SIZE;
}

/**
 * ehf_next_fde() - parse the next FDE of the section
 * @s: the section
 * @it: cursor, from ehf_iter_init()
 * @fde: the FDE, with a copy of its CIE
 *
 * CIEs met on the way are parsed, checked and remembered.  A zero length
 * record (terminator) ends the section if nothing but zeros follows.
 *
 * Return: 1 for an FDE, 0 at the end, or a negative errno with @s->err
 * naming the offset: -EINVAL for malformed data, -EOPNOTSUPP for features
 * the reader does not implement, -ENOMEM.
 */
int ehf_next_fde(struct ehf_section *s, struct ehf_iter *it,
		 struct ehf_fde *fde)
{
	struct ehf_cie cie;
	struct ehf_cur c;
	struct ehf_rec r;
	int ret;

	while (it->pos < s->size) {
		ret = ehf_record(s, it->pos, &r, &c);
		if (ret)
			return ret;
		it->pos = r.end;
		if (r.terminator) {
			it->pos = ehf_after_terminator(s, it->pos);
			continue;
		}
		if (r.id != EHF_CIE_ID) {
			ret = ehf_parse_fde(s, &r, &c, fde);
			return ret ? ret : 1;
		}
		ret = ehf_parse_cie(s, &r, &c, &cie);
		if (!ret)
			ret = ehf_cie_add(s, &cie);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * ehf_iter_init() - start iterating over a section's records
 * @it: the cursor
 */
void ehf_iter_init(struct ehf_iter *it)
{
	it->pos = 0;
}

/**
 * ehf_init() - set up a section for reading
 * @s: the section
 * @elf: the file's facts, from ehf_elf_open()
 */
void ehf_init(struct ehf_section *s, const struct ehf_elf *elf)
{
	memset(s, 0, sizeof(*s));
	s->data = elf->eh_frame;
	s->size = elf->eh_frame_size;
	s->vaddr = elf->eh_frame_vaddr;
	s->text_base = elf->text_vaddr;
	s->data_base = elf->got_vaddr;
	s->big = elf->big;
	s->addr_size = sizeof(u64);
	s->to_terminator = elf->size_unknown;
}

/**
 * ehf_destroy() - free what reading a section allocated
 * @s: the section
 */
void ehf_destroy(struct ehf_section *s)
{
	free(s->cies);
	s->cies = NULL;
	s->nr_cies = 0;
	s->cap_cies = 0;
}

/* ---- ELF ---- */

/* What a section of the file tells: .text, .got or .eh_frame. */
static void ehf_elf_section(const struct elf_view *e, struct ehf_elf *elf,
			    const u8 *sh)
{
	const char *name = elf_sh_name(e, sh);
	u64 off = ELF_RD(e, sh, Elf64_Shdr, sh_offset);
	u64 size = ELF_RD(e, sh, Elf64_Shdr, sh_size);
	u64 addr = ELF_RD(e, sh, Elf64_Shdr, sh_addr);

	if (!strcmp(name, ".text")) {
		elf->text_vaddr = addr;
	} else if (!strcmp(name, ".got")) {
		elf->got_vaddr = addr;
	} else if (!strcmp(name, ".eh_frame") &&
		   ELF_RD(e, sh, Elf64_Shdr, sh_type) != SHT_NOBITS &&
		   elf_in_file(e->f, off, size)) {
		elf->eh_frame = e->f->data + off;
		elf->eh_frame_size = size;
		elf->eh_frame_vaddr = addr;
		elf->how = "section headers";
	}
}

/*
 * Without section headers: .eh_frame_hdr's eh_frame_ptr.  The section's
 * size is unknown, so it runs to the end of its segment and the reader
 * stops at the terminator.
 */
static void ehf_elf_by_phdr(const struct elf_view *e, struct ehf_elf *elf)
{
	struct ehf_section hdr = { .big = e->big, .addr_size = sizeof(u64) };
	struct ehf_cur c = { .s = &hdr, .pos = EHF_HDR_PTR_OFF };
	const u8 *ph, *eh_frame;
	u64 off, left, ptr;
	u32 i = 0;

	ph = elf_next_phdr(e, PT_GNU_EH_FRAME, &i);
	if (!ph)
		return;
	off = ELF_RD(e, ph, Elf64_Phdr, p_offset);
	hdr.size = ELF_RD(e, ph, Elf64_Phdr, p_filesz);
	hdr.vaddr = ELF_RD(e, ph, Elf64_Phdr, p_vaddr);
	if (!elf_in_file(e->f, off, hdr.size) || hdr.size <= EHF_HDR_PTR_OFF)
		return;
	hdr.data = e->f->data + off;
	c.end = hdr.size;
	if (hdr.data[0] != EHF_HDR_VERSION ||
	    ehf_get_ptr(&c, hdr.data[1], &ptr))
		return;
	eh_frame = elf_at_vaddr(e->f, ptr, &left);
	if (!eh_frame)
		return;
	elf->eh_frame = eh_frame;
	elf->eh_frame_size = left;
	elf->eh_frame_vaddr = ptr;
	elf->size_unknown = true;
	elf->how = "PT_GNU_EH_FRAME";
}

/**
 * ehf_elf_open() - find the call frame information of a loaded ELF file
 * @f: the file
 * @elf: what was found
 * @err: the reason on failure (offset into the file)
 *
 * Looks for .eh_frame by section name, else through PT_GNU_EH_FRAME.
 *
 * Return: 0, -ENOEXEC if @f is not a 64-bit ELF file, or -ENOENT if it
 * has no .eh_frame.
 */
int ehf_elf_open(const struct elf_file *f, struct ehf_elf *elf,
		 struct ehf_error *err)
{
	struct elf_view e;
	const u8 *sh;
	u32 i;

	memset(elf, 0, sizeof(*elf));
	err->off = 0;
	if (elf_view_init(&e, f)) {
		err->what = "not a 64-bit ELF file";
		return -ENOEXEC;
	}
	elf->big = e.big;
	elf->machine = ELF_RD(&e, f->data, Elf64_Ehdr, e_machine);
	elf->type = ELF_RD(&e, f->data, Elf64_Ehdr, e_type);
	for (i = 0; (sh = elf_shdr(&e, i)); i++)
		ehf_elf_section(&e, elf, sh);
	if (!elf->eh_frame)
		ehf_elf_by_phdr(&e, elf);
	if (!elf->eh_frame) {
		err->what = "no .eh_frame section";
		return -ENOENT;
	}
	return 0;
}
