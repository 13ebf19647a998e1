// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame decoder: headers, function descriptors, frame row entries and the
 * rules they encode, for versions 1, 2 and 3 and the AMD64, AArch64 and
 * s390x ABIs.
 *
 * This file is kernel code that the host tools also compile unchanged (see
 * include/sframe/env.h).  All section bytes are read through sfu_read(),
 * which checks bounds before it copies, and every loop is bounded by a
 * count that was checked against the section size first.
 */
#include "internal.h"

static const struct sfu_abi_info sfu_abis[] = {
	[SFRAME_ABI_AARCH64_ENDIAN_BIG] = {
		.name = "aarch64-be", .big_endian = true,
		.sp_reg = SFRAME_AARCH64_DWARF_SP,
		.fp_reg = SFRAME_AARCH64_DWARF_FP,
		.ra_reg = SFRAME_AARCH64_DWARF_LR,
	},
	[SFRAME_ABI_AARCH64_ENDIAN_LITTLE] = {
		.name = "aarch64",
		.sp_reg = SFRAME_AARCH64_DWARF_SP,
		.fp_reg = SFRAME_AARCH64_DWARF_FP,
		.ra_reg = SFRAME_AARCH64_DWARF_LR,
	},
	[SFRAME_ABI_AMD64_ENDIAN_LITTLE] = {
		.name = "amd64",
		.sp_reg = SFRAME_AMD64_DWARF_SP,
		.fp_reg = SFRAME_AMD64_DWARF_FP,
		.ra_reg = SFRAME_AMD64_DWARF_RA,
	},
	[SFRAME_ABI_S390X_ENDIAN_BIG] = {
		.name = "s390x", .big_endian = true,
		.sp_reg = SFRAME_S390X_DWARF_SP,
		.fp_reg = SFRAME_S390X_DWARF_FP,
		.ra_reg = SFRAME_S390X_DWARF_RA,
		.sp_off = SFRAME_S390X_SP_VAL_OFFSET,
	},
};

/**
 * sfu_abi_info() - describe an SFrame ABI id
 * @abi: the sfh_abi_arch value
 *
 * Return: the ABI's register numbers and byte order, or NULL if unknown.
 */
const struct sfu_abi_info *sfu_abi_info(u8 abi)
{
	if (abi >= ARRAY_SIZE(sfu_abis) || !sfu_abis[abi].name)
		return NULL;
	return &sfu_abis[abi];
}

/**
 * sfu_native_abi() - the ABI id of the machine this code was built for
 *
 * Return: an SFRAME_ABI_* value, or SFU_ABI_ANY if SFrame has none.
 */
u8 sfu_native_abi(void)
{
#if defined(__x86_64__)
	return SFRAME_ABI_AMD64_ENDIAN_LITTLE;
#elif defined(__aarch64__) && defined(__AARCH64EB__)
	return SFRAME_ABI_AARCH64_ENDIAN_BIG;
#elif defined(__aarch64__)
	return SFRAME_ABI_AARCH64_ENDIAN_LITTLE;
#elif defined(__s390x__)
	return SFRAME_ABI_S390X_ENDIAN_BIG;
#else
	return SFU_ABI_ANY;
#endif
}

static int sfu_corrupt(struct sfu_section *sec, const char *what, u64 off)
{
	sec->diag.what = what;
	sec->diag.off = off;
	return -EBADMSG;
}

/**
 * sfu_read() - the one accessor for section bytes
 * @sec: the section
 * @off: offset of the first byte, from the start of the section
 * @dst: where to copy
 * @len: number of bytes
 *
 * Return: 0, -EBADMSG if [@off, @off + @len) is not inside the section, or
 * -EFAULT if the bytes could not be read.
 */
int sfu_read(const struct sfu_section *sec, u64 off, void *dst, size_t len)
{
	/* Stripped (sfu_section_strip()): the bytes are gone. */
	if (!sec->base)
		return -EFAULT;
	if (off > sec->size || len > sec->size - off)
		return -EBADMSG;
	return sfu_copy(dst, sec->base + (unsigned long)off, len, sec->mem);
}

/* Read and report a bounds failure with its offset. */
static int sfu_fetch(struct sfu_section *sec, u64 off, void *dst, size_t len,
		     const char *what)
{
	int ret = sfu_read(sec, off, dst, len);

	if (ret == -EBADMSG)
		return sfu_corrupt(sec, what, off);
	return ret;
}

static u16 sfu_get16(const struct sfu_elem *e, const u8 *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return e->swap ? swab16(v) : v;
}

static u32 sfu_get32(const struct sfu_elem *e, const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return e->swap ? swab32(v) : v;
}

static u64 sfu_get64(const struct sfu_elem *e, const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return e->swap ? swab64(v) : v;
}

/* Unsigned value of a 1, 2 or 4 byte field. */
static u32 sfu_getn(const struct sfu_elem *e, const u8 *p, unsigned int n)
{
	switch (n) {
	case 1:
		return *p;
	case 2:
		return sfu_get16(e, p);
	default:
		return sfu_get32(e, p);
	}
}

#define SFU_HDR_OFF(f)	offsetof(struct sframe_header, f)

static bool sfu_flags_valid(u8 version, u8 flags)
{
	switch (version) {
	case SFRAME_VERSION_1:
		return !(flags & ~SFRAME_V1_F_ALL_FLAGS);
	case SFRAME_VERSION_2:
		return !(flags & ~SFRAME_V2_F_ALL_FLAGS);
	default:
		return !(flags & ~SFRAME_V3_F_ALL_FLAGS);
	}
}

static u8 sfu_fde_size(u8 version)
{
	switch (version) {
	case SFRAME_VERSION_1:
		return sizeof(struct sframe_fde_v1);
	case SFRAME_VERSION_2:
		return sizeof(struct sframe_fde_v2);
	default:
		return sizeof(struct sframe_fdi_v3);
	}
}

/* Smallest encoding of one function's data in the FRE sub-section. */
static u32 sfu_min_fde_fre_bytes(u8 version)
{
	return version == SFRAME_VERSION_3 ? sizeof(struct sframe_fda_v3) : 0;
}

static int sfu_parse_preamble(struct sfu_section *sec, struct sfu_elem *e,
			      const u8 *h)
{
	u16 magic;

	memcpy(&magic, h, sizeof(magic));
	if (magic == SFRAME_MAGIC) {
		e->swap = false;
	} else if (magic == SFRAME_MAGIC_SWAPPED) {
		e->swap = true;
	} else {
		sfu_corrupt(sec, "bad magic", e->off);
		return e->off ? -EBADMSG : -ENOEXEC;
	}
	e->version = h[offsetof(struct sframe_preamble, sfp_version)];
	e->flags = h[offsetof(struct sframe_preamble, sfp_flags)];
	if (e->version < SFRAME_VERSION_1 || e->version > SFRAME_VERSION_3) {
		sfu_corrupt(sec, "unknown version", e->off);
		return e->off ? -EBADMSG : -EPROTONOSUPPORT;
	}
	if (!sfu_flags_valid(e->version, e->flags))
		return sfu_corrupt(sec, "flags not valid for version", e->off);
	return 0;
}

static int sfu_parse_abi(struct sfu_section *sec, struct sfu_elem *e,
			 const u8 *h)
{
	const struct sfu_abi_info *ai;
	bool big;

	e->abi = h[SFU_HDR_OFF(sfh_abi_arch)];
	ai = sfu_abi_info(e->abi);
	if (!ai)
		return sfu_corrupt(sec, "unknown ABI", e->off);
	if (sec->abi != SFU_ABI_ANY && e->abi != sec->abi) {
		sfu_corrupt(sec, "ABI is not the one expected", e->off);
		return -EOPNOTSUPP;
	}
	/* The magic's byte order must be the one the ABI implies. */
	big = (h[0] == (SFRAME_MAGIC >> 8));
	if (big != ai->big_endian)
		return sfu_corrupt(sec, "byte order does not match ABI", e->off);
	return 0;
}

static int sfu_parse_counts(struct sfu_section *sec, struct sfu_elem *e,
			    const u8 *h)
{
	u64 body, hdr_end, fde_bytes, fre_end, fde_end;
	u32 fdeoff, freoff;

	e->fixed_fp = (s8)h[SFU_HDR_OFF(sfh_cfa_fixed_fp_offset)];
	e->fixed_ra = (s8)h[SFU_HDR_OFF(sfh_cfa_fixed_ra_offset)];
	e->auxhdr_len = h[SFU_HDR_OFF(sfh_auxhdr_len)];
	e->num_fdes = sfu_get32(e, h + SFU_HDR_OFF(sfh_num_fdes));
	e->num_fres = sfu_get32(e, h + SFU_HDR_OFF(sfh_num_fres));
	e->fre_len = sfu_get32(e, h + SFU_HDR_OFF(sfh_fre_len));
	fdeoff = sfu_get32(e, h + SFU_HDR_OFF(sfh_fdeoff));
	freoff = sfu_get32(e, h + SFU_HDR_OFF(sfh_freoff));
	e->fde_size = sfu_fde_size(e->version);

	hdr_end = e->off + sizeof(struct sframe_header) + e->auxhdr_len;
	if (hdr_end > sec->size)
		return sfu_corrupt(sec, "auxiliary header past section end",
				   e->off);
	body = sec->size - hdr_end;
	if (e->num_fdes > SFU_MAX_FDES)
		return sfu_corrupt(sec, "FDE count too large", e->off);
	fde_bytes = (u64)e->num_fdes * e->fde_size;
	if (fdeoff > body || fde_bytes > body - fdeoff)
		return sfu_corrupt(sec, "FDE sub-section out of bounds",
				   e->off);
	if (freoff > body || e->fre_len > body - freoff)
		return sfu_corrupt(sec, "FRE sub-section out of bounds",
				   e->off);
	/*
	 * Every FRE is at least 2 bytes; V3 also stores 5 per function, or
	 * once for functions that share their rows (at least one block).
	 */
	if ((u64)e->num_fres * 2 +
	    (e->num_fdes ? sfu_min_fde_fre_bytes(e->version) : 0) > e->fre_len)
		return sfu_corrupt(sec, "FRE count does not fit FRE length",
				   e->off);
	e->fde_off = hdr_end + fdeoff;
	e->fre_off = hdr_end + freoff;
	fde_end = e->fde_off + fde_bytes;
	fre_end = e->fre_off + e->fre_len;
	if (fde_bytes && e->fre_len &&
	    e->fde_off < fre_end && e->fre_off < fde_end)
		return sfu_corrupt(sec, "FDE and FRE sub-sections overlap",
				   e->off);
	e->end = fde_end > fre_end ? fde_end : fre_end;
	if (e->end < hdr_end)
		e->end = hdr_end;
	return 0;
}

static int sfu_parse_elem(struct sfu_section *sec, struct sfu_elem *e)
{
	u8 h[sizeof(struct sframe_header)];
	int ret;

	ret = sfu_fetch(sec, e->off, h, sizeof(h), "truncated header");
	if (ret)
		return ret;
	ret = sfu_parse_preamble(sec, e, h);
	if (ret)
		return ret;
	ret = sfu_parse_abi(sec, e, h);
	if (ret)
		return ret;
	return sfu_parse_counts(sec, e, h);
}

/* Alignment the linker gives .sframe; concatenated elements may be padded. */
#define SFU_ELEM_ALIGN	8
/* Bytes checked per read when looking at a section's zero tail. */
#define SFU_TAIL_CHUNK	64

/* Is @off the start of an element (its magic, either byte order)? */
static int sfu_at_magic(struct sfu_section *sec, u64 off, bool *yes)
{
	u16 magic;
	int ret;

	*yes = false;
	if (off + sizeof(magic) > sec->size)
		return 0;
	ret = sfu_fetch(sec, off, &magic, sizeof(magic),
			"trailing bytes");
	*yes = !ret && (magic == SFRAME_MAGIC || magic == SFRAME_MAGIC_SWAPPED);
	return ret;
}

/* Are the bytes from @off up to @to all zero?  -EBADMSG if not. */
static int sfu_zero_range(struct sfu_section *sec, u64 off, u64 to)
{
	u8 buf[SFU_TAIL_CHUNK];
	u64 i, n;
	int ret;

	while (off < to) {
		n = to - off < sizeof(buf) ? to - off : sizeof(buf);
		ret = sfu_fetch(sec, off, buf, n, "trailing bytes");
		if (ret)
			return ret;
		for (i = 0; i < n; i++)
			if (buf[i])
				return sfu_corrupt(sec,
						   "garbage after element",
						   off + i);
		off += n;
	}
	return 0;
}

/*
 * Offset of the element after one ending at @end, or sec->size if none.
 * Elements may be padded to SFU_ELEM_ALIGN; a section may end in zero
 * bytes of any length (binutils 2.40 extends PT_GNU_SFRAME to the end of
 * its segment), which count as padding too.
 */
static int sfu_next_elem(struct sfu_section *sec, u64 end, u64 *next)
{
	u64 aligned = (end + SFU_ELEM_ALIGN - 1) & ~(u64)(SFU_ELEM_ALIGN - 1);
	bool magic;
	int ret;

	*next = sec->size;
	if (end >= sec->size)
		return 0;
	ret = sfu_at_magic(sec, end, &magic);
	if (ret || magic) {
		*next = end;
		return ret;
	}
	if (aligned < sec->size) {
		ret = sfu_at_magic(sec, aligned, &magic);
		if (ret)
			return ret;
		if (magic) {
			*next = aligned;
			return sfu_zero_range(sec, end, aligned);
		}
	}
	return sfu_zero_range(sec, end, sec->size);
}

/*
 * Walk the elements of a section.  With @out NULL only count them; else
 * fill @out, which has room for the count a first walk returned.
 */
static int sfu_walk_elems(struct sfu_section *sec, struct sfu_elem *out,
			  u32 cap, u32 *nr, u64 *nr_fdes)
{
	struct sfu_elem tmp, *e;
	u64 off = 0, ids = 0;
	u32 n = 0;
	int ret;

	while (off < sec->size) {
		if (n == SFU_MAX_ELEMS) {
			sfu_corrupt(sec, "too many elements", off);
			return -E2BIG;
		}
		/* User memory may change between the two walks. */
		if (out && n == cap)
			return sfu_corrupt(sec, "section changed during set-up",
					   off);
		e = out ? &out[n] : &tmp;
		memset(e, 0, sizeof(*e));
		e->off = off;
		e->first_id = ids;
		ret = sfu_parse_elem(sec, e);
		if (ret)
			return ret;
		ids += e->num_fdes;
		if (ids > SFU_MAX_FDES) {
			sfu_corrupt(sec, "FDE count too large", off);
			return -E2BIG;
		}
		ret = sfu_next_elem(sec, e->end, &off);
		if (ret)
			return ret;
		n++;
	}
	if (!n)
		return sfu_corrupt(sec, "empty section", 0);
	*nr = n;
	*nr_fdes = ids;
	return 0;
}

int sfu_parse_elems(struct sfu_section *sec)
{
	u64 nr_fdes;
	u32 n;
	int ret;

	ret = sfu_walk_elems(sec, NULL, 0, &n, &nr_fdes);
	if (ret)
		return ret;
	sec->elems = sfu_alloc_array(n, sizeof(*sec->elems));
	if (!sec->elems)
		return -ENOMEM;
	ret = sfu_walk_elems(sec, sec->elems, n, &n, &nr_fdes);
	if (ret)
		return ret;
	sec->nr_elems = n;
	sec->nr_fdes = nr_fdes;
	return 0;
}

/* Address the function start field of FDE @idx is relative to. */
static u64 sfu_start_anchor(const struct sfu_section *sec,
			    const struct sfu_elem *e, u32 idx)
{
	if (e->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		return sec->vaddr + e->fde_off + (u64)idx * e->fde_size;
	return sec->vaddr + e->off;
}

/* Decode the function start and size at the head of FDE @fde->idx. */
void sfu_fde_head(const struct sfu_section *sec, struct sfu_fde *fde,
		  const u8 *b)
{
	const struct sfu_elem *e = fde->elem;
	u64 anchor = sfu_start_anchor(sec, e, fde->idx);

	if (e->version == SFRAME_VERSION_3) {
		fde->start = anchor + sfu_get64(e, b);
		fde->size = sfu_get32(e, b + offsetof(struct sframe_fdi_v3,
						      sfdi_func_size));
	} else {
		fde->start = anchor + (s64)(s32)sfu_get32(e, b);
		fde->size = sfu_get32(e, b + offsetof(struct sframe_fde_v1,
						      sfde_func_size));
	}
}

/* Bytes [@off, @off + @len) of the section if @it's window holds them. */
static const u8 *sfu_win_at(const struct sfu_fre_iter *it, u64 off,
			    size_t len)
{
	if (!it || !it->win_len || off < it->win_off ||
	    off - it->win_off + len > it->win_len)
		return NULL;
	return it->win + (off - it->win_off);
}

static int sfu_read_fda_v3(struct sfu_section *sec, struct sfu_fde *fde,
			   u32 fre_off, const struct sfu_fre_iter *it)
{
	const struct sfu_elem *e = fde->elem;
	u8 buf[sizeof(struct sframe_fda_v3)];
	u64 at = e->fre_off + fre_off;
	const u8 *b;
	int ret;

	if ((u64)fre_off + sizeof(buf) > e->fre_len)
		return sfu_corrupt(sec, "FDE attributes outside FRE data", at);
	b = sfu_win_at(it, at, sizeof(buf));
	if (!b) {
		ret = sfu_fetch(sec, at, buf, sizeof(buf),
				"FDE attributes");
		if (ret)
			return ret;
		b = buf;
	}
	fde->num_fres = sfu_get16(e, b);
	fde->info = b[offsetof(struct sframe_fda_v3, sfda_func_info)];
	fde->info2 = b[offsetof(struct sframe_fda_v3, sfda_func_info2)];
	fde->rep_size = b[offsetof(struct sframe_fda_v3, sfda_func_rep_size)];
	fde->fres_off = at + sizeof(buf);
	if (fde->info & SFRAME_V3_FUNC_INFO_UNUSED ||
	    fde->info2 & ~SFRAME_V3_FDE_TYPE_MASK)
		return sfu_corrupt(sec, "reserved FDE info bits set", at);
	fde->fde_type = SFRAME_V3_FDE_TYPE(fde->info2);
	if (fde->fde_type != SFRAME_FDE_TYPE_DEFAULT &&
	    fde->fde_type != SFRAME_FDE_TYPE_FLEX)
		return sfu_corrupt(sec, "unknown FDE type", at);
	return 0;
}

static int sfu_decode_fde_v12(struct sfu_section *sec, struct sfu_fde *fde,
			      const u8 *b)
{
	const struct sfu_elem *e = fde->elem;
	size_t fre_off_at = offsetof(struct sframe_fde_v1,
				     sfde_func_start_fre_off);
	size_t num_at = offsetof(struct sframe_fde_v1, sfde_func_num_fres);
	u32 fre_off = sfu_get32(e, b + fre_off_at);

	fde->num_fres = sfu_get32(e, b + num_at);
	fde->info = b[offsetof(struct sframe_fde_v1, sfde_func_info)];
	fde->fde_type = SFRAME_FDE_TYPE_DEFAULT;
	if (e->version == SFRAME_VERSION_2)
		fde->rep_size = b[offsetof(struct sframe_fde_v2,
				       sfde_func_rep_size)];
	if (fde->info & SFRAME_V1_FUNC_INFO_UNUSED)
		return sfu_corrupt(sec, "reserved FDE info bits set",
				   e->fde_off + (u64)fde->idx * e->fde_size);
	if (fre_off > e->fre_len)
		return sfu_corrupt(sec, "FRE offset outside FRE data",
				   e->fde_off + (u64)fde->idx * e->fde_size);
	fde->fres_off = e->fre_off + fre_off;
	return 0;
}

/**
 * sfu_read_fde() - read and check one function descriptor
 * @sec: the section
 * @elem: the element the FDE belongs to
 * @idx: index of the FDE in @elem
 * @fde: where the decoded descriptor goes
 *
 * Return: 0, -EBADMSG if the descriptor is inconsistent, or -EFAULT.
 */
int sfu_read_fde(struct sfu_section *sec, const struct sfu_elem *elem,
		 u32 idx, struct sfu_fde *fde)
{
	return sfu_read_fde_win(sec, elem, idx, fde, NULL);
}

/*
 * sfu_read_fde(), taking the V3 attributes from @it's window where it
 * holds them (sfu_fre_iter_prefill()); @it may be NULL.
 */
int sfu_read_fde_win(struct sfu_section *sec, const struct sfu_elem *elem,
		     u32 idx, struct sfu_fde *fde,
		     const struct sfu_fre_iter *it)
{
	u8 b[sizeof(struct sframe_fde_v2)];
	u64 at = elem->fde_off + (u64)idx * elem->fde_size;
	u32 min_fre, fda_off;
	int ret;

	if (idx >= elem->num_fdes)
		return -ENOENT;
	memset(fde, 0, sizeof(*fde));
	fde->elem = elem;
	fde->idx = idx;
	ret = sfu_fetch(sec, at, b, elem->fde_size, "FDE");
	if (ret)
		return ret;
	sfu_fde_head(sec, fde, b);
	if (elem->version == SFRAME_VERSION_3) {
		fda_off = sfu_get32(elem, b + offsetof(struct sframe_fdi_v3,
						       sfdi_func_start_fre_off));
		ret = sfu_read_fda_v3(sec, fde, fda_off, it);
	} else {
		ret = sfu_decode_fde_v12(sec, fde, b);
	}
	if (ret)
		return ret;
	fde->fre_type = SFRAME_FUNC_FRE_TYPE(fde->info);
	fde->pc_type = SFRAME_FUNC_PC_TYPE(fde->info);
	if (fde->fre_type > SFRAME_FRE_TYPE_ADDR4)
		return sfu_corrupt(sec, "bad FRE type", at);
	if (fde->pc_type == SFRAME_FDE_TYPE_PCMASK &&
	    elem->version == SFRAME_VERSION_1)
		fde->rep_size = SFRAME_V1_PCMASK_REP_SIZE;
	if (fde->pc_type == SFRAME_FDE_TYPE_PCMASK && !fde->rep_size)
		return sfu_corrupt(sec, "PCMASK FDE without repeat size", at);
	if (fde->num_fres > SFU_MAX_FDE_FRES)
		return sfu_corrupt(sec, "too many FREs in one function", at);
	min_fre = 1u << fde->fre_type;
	if ((u64)fde->num_fres * (min_fre + 1) >
	    elem->fre_off + elem->fre_len - fde->fres_off)
		return sfu_corrupt(sec, "FREs run past FRE data", at);
	return 0;
}

/**
 * sfu_fre_iter_init() - prepare to walk the FREs of a function
 * @fde: the function
 * @it: the cursor
 */
void sfu_fre_iter_init(const struct sfu_fde *fde, struct sfu_fre_iter *it)
{
	sfu_fre_iter_clear(it);
	sfu_fre_iter_start(fde, it);
}

/**
 * sfu_fre_iter_clear() - empty a cursor's window
 * @it: the cursor
 */
void sfu_fre_iter_clear(struct sfu_fre_iter *it)
{
	it->win_len = 0;
}

/**
 * sfu_fre_iter_prefill() - read section bytes into a cursor's window early
 * @sec: the section
 * @it: a cleared cursor
 * @off: section offset of the bytes: where a function's rows (V3: its
 *	attributes, just before them) probably are
 *
 * A hint: a failed read leaves the window empty, and rows are decoded
 * from it only where they fall inside it.
 */
void sfu_fre_iter_prefill(struct sfu_section *sec, struct sfu_fre_iter *it,
			  u64 off)
{
	size_t len;

	if (off >= sec->size)
		return;
	len = sec->size - off < sizeof(it->win) ? sec->size - off :
						  sizeof(it->win);
	if (sfu_read(sec, off, it->win, len))
		return;
	it->win_off = off;
	it->win_len = len;
}

/**
 * sfu_fre_iter_start() - aim a cursor at the first FRE of a function
 * @fde: the function
 * @it: the cursor; its window is kept (sfu_fre_iter_prefill())
 */
void sfu_fre_iter_start(const struct sfu_fde *fde, struct sfu_fre_iter *it)
{
	it->off = fde->fres_off;
	it->end = fde->elem->fre_off + fde->elem->fre_len;
	it->left = fde->num_fres;
	it->prev_start = 0;
}

/*
 * The bytes of the next FRE, at most @want of them (fewer only at the end
 * of the FRE data): from the cursor's window, refilled from @it->off when
 * they are not all in it.
 */
static int sfu_fre_bytes(struct sfu_section *sec, struct sfu_fre_iter *it,
			 size_t want, const u8 **b)
{
	u64 avail = it->end - it->off;
	size_t len;
	int ret;

	*b = sfu_win_at(it, it->off, want);
	if (*b)
		return 0;
	len = avail < sizeof(it->win) ? avail : sizeof(it->win);
	it->win_len = 0;
	ret = sfu_fetch(sec, it->off, it->win, len, "FRE");
	/* Bytes past the row may sit on a page a non-faulting read lacks. */
	if (ret == -EFAULT && len > want) {
		len = want;
		ret = sfu_fetch(sec, it->off, it->win, len, "FRE");
	}
	if (ret)
		return ret;
	it->win_off = it->off;
	it->win_len = len;
	*b = it->win;
	return 0;
}

static int sfu_check_fre(struct sfu_section *sec, const struct sfu_fde *fde,
			 struct sfu_fre_iter *it, const struct sfu_fre *fre)
{
	u32 limit = fde->pc_type == SFRAME_FDE_TYPE_PCMASK ?
		    fde->rep_size : fde->size;
	bool first = it->left == fde->num_fres;

	if (fre->word_size == 3)
		return sfu_corrupt(sec, "bad FRE data-word size", it->off);
	if (fre->nr_words > SFU_FRE_MAX_WORDS)
		return sfu_corrupt(sec, "too many FRE data words", it->off);
	/* A row at the very end is tolerated (binutils PR 33131). */
	if (fre->start > limit)
		return sfu_corrupt(sec, "FRE starts past function end",
				   it->off);
	if (!first && fre->start <= it->prev_start)
		return sfu_corrupt(sec, "FRE start addresses not increasing",
				   it->off);
	return 0;
}

/**
 * sfu_fre_next() - decode the next FRE of a function
 * @sec: the section
 * @fde: the function
 * @it: cursor from sfu_fre_iter_init()
 * @fre: where the decoded row goes
 *
 * Return: 0, -ENOENT after the last row, -EBADMSG or -EFAULT.
 */
int sfu_fre_next(struct sfu_section *sec, const struct sfu_fde *fde,
		 struct sfu_fre_iter *it, struct sfu_fre *fre)
{
	const struct sfu_elem *e = fde->elem;
	unsigned int asz = 1u << fde->fre_type, i;
	u64 avail = it->end > it->off ? it->end - it->off : 0;
	const u8 *b;
	int ret;

	if (!it->left)
		return -ENOENT;
	if (avail < asz + 1)
		return sfu_corrupt(sec, "truncated FRE", it->off);
	/* The largest row is in the window; fewer bytes at the very end. */
	ret = sfu_fre_bytes(sec, it, avail < SFU_FRE_MAX_BYTES ?
			    avail : SFU_FRE_MAX_BYTES, &b);
	if (ret)
		return ret;
	fre->start = sfu_getn(e, b, asz);
	fre->info = b[asz];
	fre->nr_words = SFRAME_FRE_DATAWORD_COUNT(fre->info);
	fre->word_size = 1u << SFRAME_FRE_DATAWORD_SIZE(fre->info);
	if (SFRAME_FRE_DATAWORD_SIZE(fre->info) == 3)
		fre->word_size = 3;
	ret = sfu_check_fre(sec, fde, it, fre);
	if (ret)
		return ret;
	fre->size = asz + 1 + fre->nr_words * fre->word_size;
	if (fre->size > avail)
		return sfu_corrupt(sec, "FRE data words past FRE data",
				   it->off);
	for (i = 0; i < fre->nr_words; i++)
		fre->words[i] = sfu_getn(e, b + asz + 1 + i * fre->word_size,
					 fre->word_size);
	it->prev_start = fre->start;
	it->off += fre->size;
	it->left--;
	return 0;
}

/**
 * sfu_fre_sword() - a data word of an FRE as a signed value
 * @fre: the row
 * @i: index of the word (must be below @fre->nr_words)
 *
 * Return: the word sign-extended from its stored size.
 */
s32 sfu_fre_sword(const struct sfu_fre *fre, unsigned int i)
{
	u32 w = fre->words[i];

	switch (fre->word_size) {
	case 1:
		return (s8)w;
	case 2:
		return (s16)w;
	default:
		return (s32)w;
	}
}

const char *sfu_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ENOENT:
		return "no entry for this PC";
	case -EBADMSG:
		return "section corrupt";
	case -EFAULT:
		return "section unreadable";
	case -ENOEXEC:
		return "not an SFrame section";
	case -EPROTONOSUPPORT:
		return "unsupported SFrame version";
	case -EOPNOTSUPP:
		return "unexpected ABI";
	case -E2BIG:
		return "section too large";
	case -ENOMEM:
		return "out of memory";
	case -ERANGE:
		return "work budget spent";
	default:
		return "unknown error";
	}
}
