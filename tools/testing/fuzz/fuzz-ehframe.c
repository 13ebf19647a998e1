// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the .eh_frame reader and CFI interpreter of
 * tools/sframe-gen/eh-frame.c on arbitrary bytes.
 *
 * Every input is read as a raw .eh_frame section: the first byte picks the
 * machine (byte order, frame pointer register), the section address and
 * the anchors of text- and data-relative pointers (FUZZ_SEL_*); the rest is
 * the section.  An input that starts with the ELF magic is also read as a
 * whole file through ehf_elf_open().
 *
 * Every FDE is run through ehf_fde_rows() with the registers sframe-gen
 * tracks (the return-address column and the frame pointer).  Beyond the
 * sanitizers, the target checks what the API promises: FDEs and their CIEs
 * lie inside the section, the rows cover the FDE's range in address order
 * without gaps, and every error comes with a reason and an offset inside
 * the section.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe/format.h>
#include "eh-frame.h"
#include "elf-sframe.h"

/* The selector byte in front of a raw section. */
#define FUZZ_SEL_SIZE		1
#define FUZZ_SEL_MACH		0x03	/* index into fuzz_machs, modulo */
#define FUZZ_SEL_VADDR_SHIFT	2	/* index into fuzz_vaddrs */
#define FUZZ_SEL_VADDR_MASK	0x03
#define FUZZ_SEL_ANCHORS	0x10	/* .text and .got addresses known */
#define FUZZ_SEL_UNSIZED	0x20	/* size unknown: stop at a terminator */

#define FUZZ_TEXT_VADDR		0x1000ULL
#define FUZZ_GOT_VADDR		0x3fe8ULL

/* Bounds on the work one input may cause. */
#define FUZZ_MAX_FDES		1024
#define FUZZ_MAX_ROWS		4096

/* Indexes of the tracked registers, as in sframe-gen. */
#define FUZZ_RA			0
#define FUZZ_FP			1
#define FUZZ_NR_TRACKED		2

struct fuzz_mach {
	u16 machine;
	u32 fp_reg;
	bool big;
};

static const struct fuzz_mach fuzz_machs[] = {
	{ EM_X86_64, SFRAME_AMD64_DWARF_FP, false },
	{ EM_AARCH64, SFRAME_AARCH64_DWARF_FP, false },
	{ EM_S390, SFRAME_S390X_DWARF_FP, true },
};

/* Where the section sits: typical, zero, high, and about to wrap. */
static const u64 fuzz_vaddrs[] = {
	0x2010ULL, 0, 0x7ffff7dd0000ULL, 0xfffffffffffff000ULL,
};

/* Row state of one FDE. */
struct fuzz_walk {
	u64 next;		/* where the next row must start */
	u64 end;		/* end of the FDE's range */
	u64 size;		/* of the section */
	u64 sum;		/* every row field, read */
	u32 rows;
};

/* Global, so that the compiler keeps the reads of the row fields. */
u64 fuzz_ehframe_sink;

static void fuzz_check(bool ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz-ehframe: %s\n", what);
	abort();
}

static void fuzz_loc(struct fuzz_walk *w, const struct ehf_loc *l)
{
	fuzz_check(l->kind <= EHF_RULE_COMPLEX, "bad rule kind");
	fuzz_check(l->expr <= w->size && l->expr_len <= w->size - l->expr,
		   "expression outside the section");
	w->sum += l->kind + l->op + l->deref + l->cfa_based + l->reg +
		  (u64)l->off + l->expr + l->expr_len;
}

static int fuzz_row(const struct ehf_row *row, void *arg)
{
	struct fuzz_walk *w = arg;
	unsigned int i;

	fuzz_check(row->pc == w->next, "row does not start where the last ended");
	fuzz_check(row->end > row->pc, "empty or reversed row");
	fuzz_check(row->end <= w->end, "row past the end of the FDE");
	w->next = row->end;
	w->sum += row->insn_off + row->ra_mangled + row->args_size;
	fuzz_loc(w, &row->cfa);
	for (i = 0; i < EHF_MAX_TRACKED; i++)
		fuzz_loc(w, &row->reg[i]);
	return ++w->rows >= FUZZ_MAX_ROWS;
}

static void fuzz_check_err(const struct ehf_section *s, int ret)
{
	if (ret >= 0)
		return;
	fuzz_check(s->err.what, "error without a reason");
	fuzz_check(s->err.off <= s->size, "error offset past the section");
}

static void fuzz_check_fde(const struct ehf_section *s,
			   const struct ehf_fde *fde)
{
	fuzz_check(fde->insns <= fde->insns_end && fde->insns_end <= s->size,
		   "FDE instructions outside the section");
	fuzz_check(fde->cie.insns <= fde->cie.insns_end &&
		   fde->cie.insns_end <= s->size,
		   "CIE instructions outside the section");
	fuzz_check(fde->cie.off < fde->off, "CIE not before its FDE");
}

/* Run the CFI program of @fde; the rows must tile its range. */
static int fuzz_fde(struct ehf_section *s, const struct ehf_fde *fde,
		    u32 fp_reg)
{
	struct ehf_track t = {
		.reg = { [FUZZ_RA] = EHF_REG_RA, [FUZZ_FP] = fp_reg },
		.nr = FUZZ_NR_TRACKED,
	};
	struct fuzz_walk w = {
		.next = fde->pc_begin,
		.end = fde->pc_begin + fde->pc_range,
		.size = s->size,
	};
	int ret;

	s->err.what = NULL;
	ret = ehf_fde_rows(s, fde, &t, fuzz_row, &w);
	fuzz_check_err(s, ret);
	if (!ret)
		fuzz_check(w.next == w.end, "rows do not cover the FDE");
	fuzz_ehframe_sink += w.sum;
	return ret;
}

static void fuzz_section(const struct ehf_elf *elf, u32 fp_reg)
{
	struct ehf_section s;
	struct ehf_iter it;
	struct ehf_fde fde;
	unsigned int n;
	u64 pos;
	int ret = 0;

	ehf_init(&s, elf);
	ehf_iter_init(&it);
	for (n = 0; n < FUZZ_MAX_FDES; n++) {
		pos = it.pos;
		s.err.what = NULL;
		ret = ehf_next_fde(&s, &it, &fde);
		if (ret != 1)
			break;
		fuzz_check(it.pos > pos, "iterator does not advance");
		fuzz_check_fde(&s, &fde);
		if (fuzz_fde(&s, &fde, fp_reg) == -ENOMEM)
			break;
	}
	fuzz_check_err(&s, ret);
	ehf_destroy(&s);
}

static u32 fuzz_fp_reg(u16 machine)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fuzz_machs); i++)
		if (fuzz_machs[i].machine == machine)
			return fuzz_machs[i].fp_reg;
	return SFRAME_AMD64_DWARF_FP;
}

static void fuzz_raw(const uint8_t *data, size_t size)
{
	const struct fuzz_mach *m;
	struct ehf_elf elf;
	u8 sel;

	if (size < FUZZ_SEL_SIZE)
		return;
	sel = data[0];
	m = &fuzz_machs[(sel & FUZZ_SEL_MACH) % ARRAY_SIZE(fuzz_machs)];
	memset(&elf, 0, sizeof(elf));
	elf.machine = m->machine;
	elf.type = ET_DYN;
	elf.big = m->big;
	elf.eh_frame = data + FUZZ_SEL_SIZE;
	elf.eh_frame_size = size - FUZZ_SEL_SIZE;
	elf.eh_frame_vaddr = fuzz_vaddrs[(sel >> FUZZ_SEL_VADDR_SHIFT) &
					 FUZZ_SEL_VADDR_MASK];
	if (sel & FUZZ_SEL_ANCHORS) {
		elf.text_vaddr = FUZZ_TEXT_VADDR;
		elf.got_vaddr = FUZZ_GOT_VADDR;
	}
	elf.size_unknown = sel & FUZZ_SEL_UNSIZED;
	elf.how = "raw";
	fuzz_section(&elf, m->fp_reg);
}

static void fuzz_elf(const uint8_t *data, size_t size)
{
	/* ehf_elf_open() only reads the file. */
	struct elf_file f = { .data = (uint8_t *)data, .size = size };
	struct ehf_error err;
	struct ehf_elf elf;

	if (size < SELFMAG || memcmp(data, ELFMAG, SELFMAG))
		return;
	if (ehf_elf_open(&f, &elf, &err)) {
		fuzz_check(err.what, "ELF error without a reason");
		return;
	}
	fuzz_check(elf.eh_frame >= data &&
		   (u64)(elf.eh_frame - data) <= size &&
		   elf.eh_frame_size <= size - (u64)(elf.eh_frame - data),
		   ".eh_frame outside the file");
	fuzz_section(&elf, fuzz_fp_reg(elf.machine));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_raw(data, size);
	fuzz_elf(data, size);
	return 0;
}
