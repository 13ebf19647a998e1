// SPDX-License-Identifier: GPL-2.0
/*
 * Reference SFrame sections: the same functions for every version and ABI,
 * so that the suites can check each encoding against hand-written rules.
 */
#include <sframe/decode.h>
#include <sframe/table.h>

#include "sframe_test_sections.h"

#define NO_WORD		0x7fffffff
#define MAX_FDES	8
#define MAX_FRES	16

struct sfu_test_build {
	u8 version;
	u8 abi;
	struct sfu_enc_fde fdes[MAX_FDES];
	struct sfu_enc_fre fres[MAX_FRES];
	u32 nr_fdes;
	u32 nr_fres;
};

static s32 cfa_word(u8 abi, s32 off)
{
	if (abi == SFRAME_ABI_S390X_ENDIAN_BIG)
		return SFRAME_S390X_CFA_OFFSET_ENCODE(off);
	return off;
}

/* The CFA offset at function entry: the call pushed nothing on arm64. */
static s32 entry_cfa(u8 abi)
{
	switch (abi) {
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		return 8;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return -SFRAME_S390X_SP_VAL_OFFSET;
	default:
		return 0;
	}
}

static struct sfu_enc_fde *add_fde(struct sfu_test_build *b, u64 start,
				   u32 size, u8 pc_type)
{
	struct sfu_enc_fde *f = &b->fdes[b->nr_fdes++];

	f->start = start;
	f->size = size;
	f->pc_type = pc_type;
	f->rep_size = pc_type == SFRAME_FDE_TYPE_PCMASK ? 16 : 0;
	f->fres = &b->fres[b->nr_fres];
	return f;
}

/* A default row: CFA, then RA (where the ABI tracks it), then FP. */
static void add_row(struct sfu_test_build *b, struct sfu_enc_fde *f,
		    u32 start, u8 base, s32 cfa, s32 ra, s32 fp)
{
	struct sfu_enc_fre *r = &b->fres[b->nr_fres++];
	bool fixed_ra = b->abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE;

	r->start = start;
	r->base = base;
	r->words[r->nr_words++] = cfa_word(b->abi, cfa);
	if (!fixed_ra && (ra != NO_WORD || fp != NO_WORD))
		r->words[r->nr_words++] = ra == NO_WORD ? 0 : ra;
	if (fp != NO_WORD)
		r->words[r->nr_words++] = fp;
	f->nr_fres++;
}

static void add_words(struct sfu_test_build *b, struct sfu_enc_fde *f,
		      const s32 *w, u8 n, u8 ctrl_mask)
{
	struct sfu_enc_fre *r = &b->fres[b->nr_fres++];
	u8 i;

	for (i = 0; i < n; i++)
		r->words[i] = w[i];
	r->nr_words = n;
	r->ctrl_mask = ctrl_mask;
	f->nr_fres++;
}

/*
 * A row with the module's SP word: CFA = *(sp + @slot), RA and FP saved
 * at @ra and @fp from it, the caller's SP at CFA + @sp.
 */
static void add_sp_row(struct sfu_test_build *b, struct sfu_enc_fde *f,
		       s32 slot, s32 ra, s32 fp, s32 sp)
{
	const s32 w[] = {
		SFRAME_V3_FLEX_CTRL(sfu_abi_info(b->abi)->sp_reg, 1, 1) |
		SFU_FLEX_CTRL_SP, cfa_word(b->abi, slot),
		SFRAME_V3_FLEX_CTRL(0, 1, 0), ra,
		SFRAME_V3_FLEX_CTRL(0, 1, 0), fp,
		sp,
	};

	f->fde_type = SFRAME_FDE_TYPE_FLEX;
	add_words(b, f, w, ARRAY_SIZE(w), SFU_TEST_FLEX_CTRL_WORDS);
}

static void add_extra(struct sfu_test_build *b)
{
	static const s32 drap[] = {
		SFRAME_V3_FLEX_CTRL(SFRAME_AMD64_DWARF_FP, 1, 1), -8,
		SFRAME_V3_FLEX_CTRL(0, 1, 0), -8,
		SFRAME_V3_FLEX_CTRL(SFRAME_AMD64_DWARF_FP, 1, 1), 0,
	};
	static const s32 s390_flex[] = {
		SFRAME_V3_FLEX_CTRL(SFRAME_S390X_DWARF_SP, 0, 1), 0,
		SFRAME_V3_FLEX_CTRL(16, 0, 1), 0,
		SFRAME_V3_FLEX_CTRL(17, 0, 1), 0,
	};
	static const s32 arm_flex[] = {
		SFRAME_V3_FLEX_CTRL(SFRAME_AARCH64_DWARF_SP, 0, 1), 16,
		SFRAME_V3_FLEX_CTRL(0, 1, 0), -8,
	};
	static const s32 s390_v2[] = {
		0, SFRAME_V2_S390X_OFFSET_ENCODE_REGNUM(16),
		SFRAME_V2_S390X_OFFSET_ENCODE_REGNUM(17),
	};
	bool s390 = b->abi == SFRAME_ABI_S390X_ENDIAN_BIG;
	struct sfu_enc_fde *f;

	if (b->version == SFRAME_VERSION_2 && s390) {
		f = add_fde(b, SFU_TEST_F_EXTRA, 0x20, SFRAME_FDE_TYPE_PCINC);
		add_words(b, f, s390_v2, ARRAY_SIZE(s390_v2), 0);
	}
	if (b->version != SFRAME_VERSION_3)
		return;
	f = add_fde(b, SFU_TEST_F_EXTRA, 0x20, SFRAME_FDE_TYPE_PCINC);
	f->fde_type = SFRAME_FDE_TYPE_FLEX;
	if (b->abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		add_words(b, f, drap, ARRAY_SIZE(drap),
			  SFU_TEST_FLEX_CTRL_WORDS);
	else if (s390)
		add_words(b, f, s390_flex, ARRAY_SIZE(s390_flex),
			  SFU_TEST_FLEX_CTRL_WORDS);
	else
		add_words(b, f, arm_flex, ARRAY_SIZE(arm_flex), 0x5);
	/* The module's SP word: CFA = *(sp + 32) + 8, as OpenSSL saves it. */
	add_sp_row(b, f, 32, 0, -16, 8);
	b->fres[b->nr_fres - 1].start = SFU_TEST_SP_WORD;
	f = add_fde(b, SFU_TEST_F_SIGNAL, 0x10, SFRAME_FDE_TYPE_PCINC);
	f->signal = true;
	add_fde(b, SFU_TEST_F_EMPTY, 0x10, SFRAME_FDE_TYPE_PCINC);
}

static void build_std(struct sfu_test_build *b)
{
	s32 c0 = entry_cfa(b->abi);
	struct sfu_enc_fde *f;
	struct sfu_enc_fre *r;

	f = add_fde(b, SFU_TEST_F_ROWS, 0x40, SFRAME_FDE_TYPE_PCINC);
	f->pauth_key = b->abi != SFRAME_ABI_AMD64_ENDIAN_LITTLE &&
		       b->abi != SFRAME_ABI_S390X_ENDIAN_BIG;
	add_row(b, f, 0, SFRAME_BASE_REG_SP, c0, NO_WORD, NO_WORD);
	add_row(b, f, 4, SFRAME_BASE_REG_SP, c0 + 16, -48, -56);
	b->fres[b->nr_fres - 1].mangled = f->pauth_key;
	add_row(b, f, 0x10, SFRAME_BASE_REG_FP, c0 + 16, -48, -56);

	f = add_fde(b, SFU_TEST_F_MASK, 0x30, SFRAME_FDE_TYPE_PCMASK);
	add_row(b, f, 0, SFRAME_BASE_REG_SP, c0 + 8, NO_WORD, NO_WORD);
	add_row(b, f, 0xb, SFRAME_BASE_REG_SP, c0 + 16, NO_WORD, NO_WORD);

	f = add_fde(b, SFU_TEST_F_LAST, 0x10, SFRAME_FDE_TYPE_PCINC);
	if (b->version == SFRAME_VERSION_1) {
		add_row(b, f, 0, SFRAME_BASE_REG_SP, c0, NO_WORD, NO_WORD);
	} else {
		r = &b->fres[b->nr_fres++];
		r->start = 0;
		f->nr_fres++;
	}
	add_extra(b);

	f = add_fde(b, SFU_TEST_F_BIG, SFU_TEST_BIG_SIZE,
		    SFRAME_FDE_TYPE_PCINC);
	add_row(b, f, 0, SFRAME_BASE_REG_SP, c0, NO_WORD, NO_WORD);
	add_row(b, f, 0x100, SFRAME_BASE_REG_SP, SFU_TEST_BIG_OFF2,
		NO_WORD, NO_WORD);
	add_row(b, f, 0x10000, SFRAME_BASE_REG_SP, SFU_TEST_BIG_OFF4,
		NO_WORD, NO_WORD);
}

static void sfu_test_params(struct sfu_enc_params *p, u8 version, u8 abi,
			    u64 vaddr)
{
	memset(p, 0, sizeof(*p));
	p->version = version;
	p->abi = abi;
	p->vaddr = vaddr;
	p->fre_type = SFU_ENC_AUTO;
	p->word_size = SFU_ENC_AUTO;
	if (abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		p->fixed_ra = -8;
	if (version != SFRAME_VERSION_1)
		p->flags |= SFRAME_F_FDE_FUNC_START_PCREL;
}

/**
 * sfu_test_std_section() - encode the reference section
 * @version: SFrame version
 * @abi: ABI id
 * @sorted: set SFRAME_F_FDE_SORTED (the functions are in address order)
 * @buf: output
 * @cap: size of @buf
 * @vaddr: address the section is placed at
 *
 * Return: the section size.
 */
s64 sfu_test_std_section(u8 version, u8 abi, bool sorted, u8 *buf,
			 size_t cap, u64 vaddr)
{
	static struct sfu_test_build b;
	struct sfu_enc_params p;

	memset(&b, 0, sizeof(b));
	b.version = version;
	b.abi = abi;
	build_std(&b);
	sfu_test_params(&p, version, abi, vaddr);
	if (sorted)
		p.flags |= SFRAME_F_FDE_SORTED;
	return sfu_encode(&p, b.fdes, b.nr_fdes, buf, cap);
}

/* Distinct frame sizes of the last row of sfu_test_synthetic(). */
#define SFU_SYNTH_FRAMES	1024

/*
 * The three rows of function @i of sfu_test_synthetic(), made distinct
 * from those of the other functions: the second row starts in the first
 * half of the function, the third in the second half, and the third's
 * CFA offset is one of SFU_SYNTH_FRAMES.
 */
static void sfu_synth_distinct(struct sfu_enc_fre *rows, u32 i, u32 size)
{
	u32 half = size / 2;

	rows[1].start = 1 + i % (half - 1);
	i /= half - 1;
	rows[2].start = half + i % half;
	i /= half;
	rows[2].words[0] = 16 + 8 * (i % SFU_SYNTH_FRAMES);
}

/**
 * sfu_test_synthetic() - a large sorted section of like functions
 * @version: SFrame version
 * @abi: ABI id
 * @nr_fdes: number of functions
 * @func_size: size of each function; they are laid out back to back
 * @distinct: give every function rows of its own (@func_size at least
 *	64; unique up to 31 * 32 * SFU_SYNTH_FRAMES functions at 64 bytes)
 *	rather than the same three rows to all
 * @buf: output, or NULL to measure
 * @cap: size of @buf
 *
 * Return: the section size, or a negative error code.
 */
s64 sfu_test_synthetic(u8 version, u8 abi, u32 nr_fdes, u32 func_size,
		       bool distinct, u8 *buf, size_t cap)
{
	static const struct sfu_enc_fre rows[] = {
		{ .start = 0, .base = SFRAME_BASE_REG_SP, .nr_words = 1,
		  .words = { 8 } },
		{ .start = 1, .base = SFRAME_BASE_REG_SP, .nr_words = 2,
		  .words = { 16, -16 } },
		{ .start = 4, .base = SFRAME_BASE_REG_FP, .nr_words = 2,
		  .words = { 16, -16 } },
	};
	struct sfu_enc_fre *own = NULL;
	struct sfu_enc_params p;
	struct sfu_enc_fde *fdes;
	s64 len = -ENOMEM;
	u32 i, n = ARRAY_SIZE(rows);

	fdes = sfu_alloc_array(nr_fdes, sizeof(*fdes));
	if (distinct)
		own = sfu_alloc_array((size_t)nr_fdes * n, sizeof(*own));
	if (!fdes || (distinct && !own))
		goto free_arrays;
	for (i = 0; i < nr_fdes; i++) {
		memset(&fdes[i], 0, sizeof(fdes[i]));
		fdes[i].start = 0x100000 + (u64)i * func_size;
		fdes[i].size = func_size;
		fdes[i].nr_fres = n;
		fdes[i].fres = rows;
		if (!distinct)
			continue;
		memcpy(&own[i * n], rows, sizeof(rows));
		sfu_synth_distinct(&own[i * n], i, func_size);
		fdes[i].fres = &own[i * n];
	}
	sfu_test_params(&p, version, abi, 0);
	p.flags |= SFRAME_F_FDE_SORTED;
	len = sfu_encode(&p, fdes, nr_fdes, buf, cap);
free_arrays:
	sfu_free(own);
	sfu_free(fdes);
	return len;
}

/**
 * sfu_test_many_rules() - functions whose second rows all differ
 * @version: SFrame version
 * @abi: ABI id
 * @nr_fdes: number of functions, SFU_TEST_MANY_SIZE bytes each from
 *	SFU_TEST_LONG_TEXT, back to back, so that some start on a 64 KiB
 *	page boundary
 * @buf: output, or NULL to measure
 * @cap: size of @buf
 *
 * Every function's first row is the same; its second, at an offset of
 * its own, says cfa = sp + sfu_test_many_cfa(i): @nr_fdes + 1 distinct
 * rules, more than a rule table gives one-byte codes to.
 *
 * Return: the section size, or a negative error code.
 */
s64 sfu_test_many_rules(u8 version, u8 abi, u32 nr_fdes, u8 *buf, size_t cap)
{
	struct sfu_enc_params p;
	struct sfu_enc_fde *fdes;
	struct sfu_enc_fre *rows;
	s64 len = -ENOMEM;
	u32 i;

	fdes = sfu_alloc_array(nr_fdes, sizeof(*fdes));
	rows = sfu_alloc_array((size_t)nr_fdes * 2, sizeof(*rows));
	if (!fdes || !rows)
		goto free_arrays;
	memset(rows, 0, (size_t)nr_fdes * 2 * sizeof(*rows));
	for (i = 0; i < nr_fdes; i++) {
		rows[2 * i].base = SFRAME_BASE_REG_SP;
		rows[2 * i].nr_words = 1;
		rows[2 * i].words[0] = 8;
		rows[2 * i + 1] = rows[2 * i];
		rows[2 * i + 1].start = 1 + i % (SFU_TEST_MANY_SIZE - 1);
		rows[2 * i + 1].words[0] = sfu_test_many_cfa(i);
		memset(&fdes[i], 0, sizeof(fdes[i]));
		fdes[i].start = SFU_TEST_LONG_TEXT + (u64)i * SFU_TEST_MANY_SIZE;
		fdes[i].size = SFU_TEST_MANY_SIZE;
		fdes[i].nr_fres = 2;
		fdes[i].fres = &rows[2 * i];
	}
	sfu_test_params(&p, version, abi, 0);
	p.flags |= SFRAME_F_FDE_SORTED;
	len = sfu_encode(&p, fdes, nr_fdes, buf, cap);
free_arrays:
	sfu_free(rows);
	sfu_free(fdes);
	return len;
}

/**
 * sfu_test_crowded() - a function whose rows spill from a table's codes
 * @version: SFrame version
 * @abi: ABI id
 * @crowd: its rows, their distinct rules, and the gap to the next
 * @buf: output, or NULL to measure
 * @cap: size of @buf
 *
 * @crowd->rows one-byte rows at SFU_TEST_LONG_TEXT, row i with
 * cfa = sp + sfu_test_many_cfa(i % @crowd->rules), and a function of one
 * row @crowd->gap further: with a gap wide enough, a rule table's blocks
 * of that text span 256 bytes of 256 entries, and where the rules are
 * many nearly all of them spill, in a few groups (the table's worst
 * case: KUnit, bench-lookup's "crafted").
 *
 * Return: the section size, or a negative error code.
 */
s64 sfu_test_crowded(u8 version, u8 abi, const struct sfu_test_crowd *crowd,
		     u8 *buf, size_t cap)
{
	struct sfu_enc_fde fdes[2] = { };
	struct sfu_enc_params p;
	struct sfu_enc_fre *rows;
	s64 len;
	u32 i;

	if (!crowd->rows || !crowd->rules)
		return -EINVAL;
	rows = sfu_alloc_array(crowd->rows, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	memset(rows, 0, (size_t)crowd->rows * sizeof(*rows));
	for (i = 0; i < crowd->rows; i++) {
		rows[i].start = i;
		rows[i].base = SFRAME_BASE_REG_SP;
		rows[i].nr_words = 1;
		rows[i].words[0] = sfu_test_many_cfa(i % crowd->rules);
	}
	fdes[0].start = SFU_TEST_LONG_TEXT;
	fdes[0].size = crowd->rows;
	fdes[0].nr_fres = crowd->rows;
	fdes[0].fres = rows;
	fdes[1].start = SFU_TEST_LONG_TEXT + crowd->gap;
	fdes[1].size = SFU_TEST_MANY_SIZE;
	fdes[1].nr_fres = 1;
	fdes[1].fres = rows;
	sfu_test_params(&p, version, abi, 0);
	p.flags |= SFRAME_F_FDE_SORTED;
	len = sfu_encode(&p, fdes, ARRAY_SIZE(fdes), buf, cap);
	sfu_free(rows);
	return len;
}

/**
 * sfu_test_long_section() - functions whose rows are many
 * @version: SFrame version
 * @abi: ABI id
 * @nr_rows: rows of each function, at most SFU_MAX_FDE_FRES
 * @nr_funcs: functions, SFU_TEST_LONG_SIZE(@nr_rows) bytes each from
 *	@text, all sharing the first one's rows (V2, V3)
 * @text: address of the first function
 * @buf: output, or NULL to measure
 * @cap: size of @buf
 * @vaddr: address the section is placed at
 *
 * Row i starts at offset i and says cfa = sp + sfu_test_long_cfa(i): the
 * worst case for a decoder that scans rows to find a PC's.
 *
 * Return: the section size, or a negative error code.
 */
s64 sfu_test_long_section(u8 version, u8 abi, u32 nr_rows, u32 nr_funcs,
			  u64 text, u8 *buf, size_t cap, u64 vaddr)
{
	struct sfu_enc_params p;
	struct sfu_enc_fde *fdes;
	struct sfu_enc_fre *rows;
	s64 len = -ENOMEM;
	u32 i;

	rows = sfu_alloc_array(nr_rows, sizeof(*rows));
	fdes = sfu_alloc_array(nr_funcs, sizeof(*fdes));
	if (!rows || !fdes)
		goto free_arrays;
	for (i = 0; i < nr_rows; i++) {
		memset(&rows[i], 0, sizeof(rows[i]));
		rows[i].start = i;
		rows[i].base = SFRAME_BASE_REG_SP;
		rows[i].nr_words = 1;
		rows[i].words[0] = sfu_test_long_cfa(i);
	}
	for (i = 0; i < nr_funcs; i++) {
		memset(&fdes[i], 0, sizeof(fdes[i]));
		fdes[i].start = text + (u64)i * SFU_TEST_LONG_SIZE(nr_rows);
		fdes[i].size = SFU_TEST_LONG_SIZE(nr_rows);
		fdes[i].nr_fres = nr_rows;
		fdes[i].fres = rows;
		fdes[i].share = i && version != SFRAME_VERSION_1;
	}
	sfu_test_params(&p, version, abi, vaddr);
	p.flags |= SFRAME_F_FDE_SORTED;
	len = sfu_encode(&p, fdes, nr_funcs, buf, cap);
free_arrays:
	sfu_free(fdes);
	sfu_free(rows);
	return len;
}

/**
 * sfu_test_frames_section() - a V3 section for a synthetic call stack
 * @abi: ABI id
 * @text: address of the first function
 * @nr_funcs: number of functions, SFU_TEST_FUNC_SIZE bytes each, back to
 *	back; the last one is outermost (a row without data words)
 * @buf: output
 * @cap: size of @buf
 * @vaddr: address of the section in the target
 *
 * Every other function has one row: the caller's SP is SFU_TEST_FRAME
 * bytes above the SP, the RA and FP are saved at sfu_test_ra_slot() and
 * sfu_test_fp_slot() bytes from the SP.  Function SFU_TEST_REALIGNED says
 * so as stack-realigning assembly does: its CFA is the word saved at
 * SFU_TEST_SP_SLOT from the SP (the caller's SP less SFU_TEST_SP_ADD),
 * plus SFU_TEST_SP_ADD, in a row with the module's SP word.
 *
 * Return: the section size, or a negative error code.
 */
s64 sfu_test_frames_section(u8 abi, u64 text, u32 nr_funcs, u8 *buf,
			    size_t cap, u64 vaddr)
{
	static struct sfu_test_build b;
	/* Caller's SP = CFA + the ABI's SP offset = SP + SFU_TEST_FRAME. */
	s32 cfa = SFU_TEST_FRAME - sfu_abi_info(abi)->sp_off;
	/* The realigned frame's CFA: its saved word, the caller's SP less. */
	s32 realigned_cfa = SFU_TEST_FRAME - SFU_TEST_SP_ADD;
	struct sfu_enc_params p;
	struct sfu_enc_fde *f;
	u32 i;

	if (nr_funcs > MAX_FDES || nr_funcs > MAX_FRES)
		return -E2BIG;
	memset(&b, 0, sizeof(b));
	b.version = SFRAME_VERSION_3;
	b.abi = abi;
	for (i = 0; i < nr_funcs; i++) {
		f = add_fde(&b, text + (u64)i * SFU_TEST_FUNC_SIZE,
			    SFU_TEST_FUNC_SIZE, SFRAME_FDE_TYPE_PCINC);
		if (i + 1 == nr_funcs) {
			b.nr_fres++;
			f->nr_fres++;
			continue;
		}
		if (i == SFU_TEST_REALIGNED) {
			add_sp_row(&b, f, SFU_TEST_SP_SLOT,
				   sfu_test_ra_slot(abi) - realigned_cfa,
				   sfu_test_fp_slot(abi) - realigned_cfa,
				   SFU_TEST_SP_ADD);
			continue;
		}
		add_row(&b, f, 0, SFRAME_BASE_REG_SP, cfa,
			sfu_test_ra_slot(abi) - cfa,
			sfu_test_fp_slot(abi) - cfa);
	}
	sfu_test_params(&p, SFRAME_VERSION_3, abi, vaddr);
	p.flags |= SFRAME_F_FDE_SORTED;
	return sfu_encode(&p, b.fdes, b.nr_fdes, buf, cap);
}

/* Where sfu_test_frames_section() saves the RA, from the SP. */
s32 sfu_test_ra_slot(u8 abi)
{
	return abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ?
	       SFU_TEST_FRAME - 8 : SFU_TEST_FRAME / 2;
}

/* Where sfu_test_frames_section() saves the FP, from the SP. */
s32 sfu_test_fp_slot(u8 abi)
{
	return SFU_TEST_FRAME / 2 - 8;
}

/**
 * sfu_test_table_differs() - whether a rule table answers otherwise than
 *	its section's own lookup
 * @plain: the section, looked up through its rows
 * @tabled: the same section with a rule table
 * @abi: the sections' ABI, for the rules' text
 * @pc: the address
 *
 * The table is asked three times: by its search, and twice through its
 * memo of return addresses (the first may fill a slot, or write over one
 * of a full set; the second may find it there).
 *
 * Return: true if one finds a rule and the other does not, or if their
 * rules (the structure or its text) differ.
 */
bool sfu_test_table_differs(struct sfu_section *plain,
			    const struct sfu_section *tabled, u8 abi, u64 pc)
{
	char want[SFU_RULE_STR_MAX], got[SFU_RULE_STR_MAX];
	const struct sfu_rule *b;
	struct sfu_rule a;
	int ra;

	memset(&a, 0, sizeof(a));
	ra = sfu_find_rule(plain, pc, &a);
	b = sfu_table_find(tabled, pc);
	if (b != sfu_table_find_return(tabled, pc, SFU_TABLE_MEMO_RENEW - 1) ||
	    b != sfu_table_find_return(tabled, pc, 0))
		return true;
	if (!ra != !!b)
		return true;
	if (ra)
		return false;
	sfu_rule_format(&a, abi, want, sizeof(want));
	sfu_rule_format(b, abi, got, sizeof(got));
	return strcmp(want, got) || memcmp(&a, b, sizeof(a));
}
