// SPDX-License-Identifier: GPL-2.0
/*
 * The generator: an SFrame section from the .eh_frame of an ELF file.
 * sframe-gen (tools/sframe-gen/sframe-gen.c) and sframectl (tools/sframectl/sframectl.c)
 * are its commands; gen.h is its interface.  It prints nothing: a failure
 * comes back as an error code and a message, and what it found as counts,
 * a list of the functions it left out and rows, for the command to report.
 *
 * Every FDE of .eh_frame is interpreted row by row (tools/sframe-gen/eh-frame.c) and
 * each row becomes an SFrame FRE.  A function whose first row SFrame cannot
 * express is left out; one that becomes inexpressible later is cut there
 * (its SFrame FDE ends at that address).  V3 uses flexible FDEs for rules
 * the default FDE cannot hold (CFA = *(reg + off) under DRAP, CFA based on
 * another register, RA or FP in a register or at a register-based address).
 * Consecutive rows that encode the same FRE are merged.
 *
 * Compaction: neighbouring functions with only padding between them
 * (decoded per architecture) merge into one FDE while one FRE start byte
 * reaches every row; functions with identical rows (and, in V3, the same
 * function attributes) point at one copy of them; FRE start offsets are
 * sized by a function's last row rather than its length.
 *
 * The output is a raw section, FDEs sorted, with
 * SFRAME_F_FDE_FUNC_START_PCREL: each function start is stored relative to
 * its own field, so the bytes depend on where the section will sit.  They
 * are computed for --vaddr (default 0); `sframe-dump --vaddr ADDR` must be
 * given the same address to decode the starts.
 *
 * x86-64, AArch64 and s390x are converted; what differs between them is
 * data in struct gen_arch: AMD64's fixed RA slot, the RA held in LR or r14
 * at entry, AArch64's signed return addresses (the FRE's mangled bit and
 * the CIE's B key), s390x's scaled CFA offsets, its zero RA word padding a
 * saved FP, and its V2 odd words naming the register that holds RA or FP.
 */
#include <elf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf-embed.h"
#include "elf-sframe.h"
#include "gen-internal.h"
#include "sframe-reenc.h"

static const char *const gen_whys[GEN_WHY_NR] = {
	[GEN_WHY_NONE] = "-",
	[GEN_WHY_CFA_NONE] = "CFA: no rule",
	[GEN_WHY_CFA_RULE] = "CFA: expression other than reg+off or *(reg+off)",
	[GEN_WHY_CFA_FLEX] = "CFA: not SP/FP + offset (needs V3 flex)",
	[GEN_WHY_CFA_RANGE] = "CFA: offset or register out of range",
	[GEN_WHY_RA_RULE] = "RA: rule SFrame cannot express",
	[GEN_WHY_RA_FLEX] = "RA: not at CFA-8 (needs V3 flex)",
	[GEN_WHY_RA_RANGE] = "RA: offset or register out of range",
	[GEN_WHY_RA_MANGLED] = "RA: signed return address",
	[GEN_WHY_FP_RULE] = "FP: rule SFrame cannot express",
	[GEN_WHY_FP_FLEX] = "FP: not saved at CFA+off (needs V3 flex)",
	[GEN_WHY_FP_RANGE] = "FP: offset or register out of range",
	[GEN_WHY_FP_UNDEF] = "FP: undefined",
	[GEN_WHY_FRES] = "more FREs than an FDE can hold",
	[GEN_WHY_SIZE] = "address range of 4 GiB or more",
	[GEN_WHY_EMPTY] = "empty address range",
	[GEN_WHY_OVERLAP] = "overlaps an earlier function",
	[GEN_WHY_CFI] = "CFI program error",
};

/**
 * gen_why_text() - a reason in words
 * @why: the reason
 *
 * Return: what --stats and -v call it.
 */
const char *gen_why_text(enum gen_why why)
{
	return why < GEN_WHY_NR ? gen_whys[why] : "?";
}

/* Say why in g->err, and return @ret. */
int __attribute__((format(printf, 3, 4)))
gen_fail(struct gen *g, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->err->msg, sizeof(g->err->msg), fmt, ap);
	va_end(ap);
	return ret;
}

int gen_oom(struct gen *g)
{
	return gen_fail(g, -ENOMEM, "out of memory");
}

/* ---- padding between functions ---- */

#define GEN_X86_NOP		0x90
#define GEN_X86_INT3		0xcc
#define GEN_X86_OPSIZE		0x66
#define GEN_X86_CS		0x2e
#define GEN_X86_0F		0x0f
#define GEN_X86_NOPL		0x1f
#define GEN_MODRM_MOD(m)	((m) >> 6)
#define GEN_MODRM_RM(m)		((m) & 7)
#define GEN_MODRM_SIB		4
#define GEN_MODRM_RIP		5
#define GEN_MOD_DISP8		1
#define GEN_MOD_DISP32		2
#define GEN_DISP32		4
#define GEN_A64_NOP		0xd503201fu
#define GEN_A64_INSN		4
#define GEN_S390_NOPR		0x0707u
#define GEN_S390_NOP		0x47000700u
#define GEN_S390_HALF		2

/* x86: nop, int3, and the multi-byte nops (66* [2e] 0f 1f /0, 66 90). */
static u32 gen_x86_pad(const u8 *p, u64 n, bool big)
{
	u64 i = 0, len;
	u8 modrm;

	if (p[0] == GEN_X86_NOP || p[0] == GEN_X86_INT3)
		return 1;
	while (i < n && p[i] == GEN_X86_OPSIZE)
		i++;
	if (i < n && p[i] == GEN_X86_CS)
		i++;
	if (i && i < n && p[i] == GEN_X86_NOP)
		return i + 1;
	if (n - i < 3 || p[i] != GEN_X86_0F || p[i + 1] != GEN_X86_NOPL)
		return 0;
	modrm = p[i + 2];
	len = i + 3;
	if (GEN_MODRM_MOD(modrm) != 3 && GEN_MODRM_RM(modrm) == GEN_MODRM_SIB)
		len++;
	if (GEN_MODRM_MOD(modrm) == GEN_MOD_DISP8)
		len++;
	else if (GEN_MODRM_MOD(modrm) == GEN_MOD_DISP32 ||
		 (!GEN_MODRM_MOD(modrm) && GEN_MODRM_RM(modrm) == GEN_MODRM_RIP))
		len += GEN_DISP32;
	return len <= n ? (u32)len : 0;
}

/* AArch64: nop, or a zero word. */
static u32 gen_a64_pad(const u8 *p, u64 n, bool big)
{
	u32 w;

	if (n < GEN_A64_INSN)
		return 0;
	w = (u32)elf_rd(big, p, GEN_A64_INSN);
	return w == GEN_A64_NOP || !w ? GEN_A64_INSN : 0;
}

/* s390x: nopr (bcr 0,%r7) and nop (bc 0,0). */
static u32 gen_s390_pad(const u8 *p, u64 n, bool big)
{
	if (n >= GEN_S390_HALF &&
	    elf_rd(big, p, GEN_S390_HALF) == GEN_S390_NOPR)
		return GEN_S390_HALF;
	if (n >= 2 * GEN_S390_HALF &&
	    elf_rd(big, p, 2 * GEN_S390_HALF) == GEN_S390_NOP)
		return 2 * GEN_S390_HALF;
	return 0;
}

static const struct gen_arch gen_arches[] = {
	{
		.machine = EM_X86_64,
		.abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
		.fixed_ra = GEN_AMD64_RA_OFF,
		.pad = gen_x86_pad,
	},
	{
		.machine = EM_AARCH64,
		.abi = SFRAME_ABI_AARCH64_ENDIAN_LITTLE,
		.ra_in_reg = true,
		.pauth = true,
		.pad = gen_a64_pad,
	},
	{
		.machine = EM_S390,
		.abi = SFRAME_ABI_S390X_ENDIAN_BIG,
		.ra_in_reg = true,
		.ra_pad = true,
		.cfa_scaled = true,
		.v2_reg_words = true,
		.pad = gen_s390_pad,
	},
};

/* ---- growing arrays ---- */

static void *gen_grow(void *p, u32 *cap, u32 need, size_t size, u32 step)
{
	u32 ncap;
	void *n;

	if (need <= *cap)
		return p;
	/* Grow geometrically, by at least @step. */
	if (__builtin_add_overflow(need, *cap > step ? *cap : step, &ncap))
		return NULL;
	n = realloc(p, (size_t)ncap * size);
	if (n)
		*cap = ncap;
	return n;
}

static int gen_row_cb(const struct ehf_row *row, void *arg)
{
	struct gen *g = arg;
	struct ehf_row *rows;

	rows = gen_grow(g->rows, &g->cap_rows, g->nr_rows + 1, sizeof(*rows),
			GEN_ROWS_GROW);
	if (!rows)
		return -ENOMEM;
	g->rows = rows;
	g->rows[g->nr_rows++] = *row;
	return 0;
}

/* The rows of @fde in g->rows. */
int gen_collect_rows(struct gen *g, const struct ehf_fde *fde)
{
	static const struct ehf_track track = {
		.reg = { [GEN_RA] = EHF_REG_RA }, .nr = GEN_NR_TRACKED,
	};
	struct ehf_track t = track;

	t.reg[GEN_FP] = gen_fp(g->arch);
	g->nr_rows = 0;
	return ehf_fde_rows(&g->eh, fde, &t, gen_row_cb, g);
}

/* ---- one function ---- */

bool gen_same_fre(const struct sfu_enc_fre *a, const struct sfu_enc_fre *b)
{
	return a->base == b->base && a->mangled == b->mangled &&
	       a->nr_words == b->nr_words && a->ctrl_mask == b->ctrl_mask &&
	       !memcmp(a->words, b->words, a->nr_words * sizeof(a->words[0]));
}

/* The first row in [0, nr) that @flex cannot describe, and why. */
static u32 gen_first_bad(struct gen *g, const struct gen_mode *m,
			 enum gen_why *why)
{
	struct sfu_enc_fre f;
	u32 i;

	*why = GEN_WHY_NONE;
	for (i = 0; i < g->nr_rows; i++) {
		*why = gen_row_fre(g->arch, &g->rows[i], m, &f);
		if (*why)
			return i;
	}
	return i;
}

/* Encode rows [0, @cut) of the current function into @d's FREs. */
static int gen_fres(struct gen *g, struct gen_fde *d, u32 cut,
		    const struct gen_mode *m)
{
	struct sfu_enc_fre f, *fres, *prev = NULL;
	u32 i;

	d->fre_first = g->nr_fres;
	for (i = 0; i < cut; i++) {
		gen_row_fre(g->arch, &g->rows[i], m, &f);
		if (prev && gen_same_fre(prev, &f))
			continue;
		if (d->nr_fres == SFU_MAX_FDE_FRES) {
			d->why = GEN_WHY_FRES;
			d->why_pc = g->rows[i].pc;
			d->size = g->rows[i].pc - d->start;
			break;
		}
		fres = gen_grow(g->fres, &g->cap_fres, g->nr_fres + 1,
				sizeof(*fres), GEN_FRES_GROW);
		if (!fres)
			return -ENOMEM;
		g->fres = fres;
		f.start = (u32)(g->rows[i].pc - d->start);
		g->fres[g->nr_fres] = f;
		prev = &g->fres[g->nr_fres++];
		d->nr_fres++;
	}
	return 0;
}

/* Choose the FDE type and where the description ends. */
static int gen_describe(struct gen *g, struct gen_fde *d)
{
	struct gen_mode m = { .v2 = g->o.version == SFRAME_VERSION_2 };
	struct gen_mode mf = { .flex = true, .sp_word = g->o.sp_word };
	enum gen_why why_def, why_flex;
	u32 cut, cut_flex;

	cut = gen_first_bad(g, &m, &why_def);
	d->why = why_def;
	if (cut < g->nr_rows && !m.v2) {
		cut_flex = gen_first_bad(g, &mf, &why_flex);
		if (cut_flex > cut) {
			m = mf;
			cut = cut_flex;
			d->why = why_flex;
		}
	}
	if (cut < g->nr_rows) {
		d->why_pc = g->rows[cut].pc;
		d->size = g->rows[cut].pc - d->start;
	}
	if (!cut)
		return 0;
	d->fde_type = m.flex ? SFRAME_FDE_TYPE_FLEX : SFRAME_FDE_TYPE_DEFAULT;
	d->emitted = true;
	return gen_fres(g, d, cut, &m);
}

/* A function left out for an error in its CFI program: tell the caller. */
static void gen_warn_cfi(struct gen *g, const struct ehf_fde *fde)
{
	char msg[GEN_MSG_MAX];

	if (!g->o.warn)
		return;
	snprintf(msg, sizeof(msg),
		 "%s: warning: .eh_frame+0x%" PRIx64
		 ": %s; function at 0x%" PRIx64 " left out",
		 g->o.in, g->eh.err.off, g->eh.err.what, fde->pc_begin);
	g->o.warn(msg, g->o.warn_arg);
}

/* ---- PLT ---- */

/* The lazy PLT's layout (gen-internal.h) as ld writes it. */
#define GEN_DW_OP_LIT0		0x30
#define GEN_PLT_LIT_AT		6

static const u8 gen_plt_expr[] = {
	0x77, 0x08,		/* DW_OP_breg7 (rsp): 8 */
	0x80, 0x00,		/* DW_OP_breg16 (rip): 0 */
	0x3f,			/* DW_OP_lit15 */
	0x1a,			/* DW_OP_and */
	0x00,			/* DW_OP_lit<T> */
	0x2a,			/* DW_OP_ge */
	0x33,			/* DW_OP_lit3 */
	0x24,			/* DW_OP_shl */
	0x22,			/* DW_OP_plus */
};

/* T if @l is the PLT's CFA expression, else 0. */
u32 gen_plt_threshold(const struct gen *g, const struct ehf_loc *l)
{
	const u8 *e = g->eh.data + l->expr;
	u32 t, i;

	if (g->arch->machine != EM_X86_64 || l->kind != EHF_RULE_COMPLEX ||
	    l->expr_len != sizeof(gen_plt_expr) ||
	    l->expr > g->eh.size || g->eh.size - l->expr < l->expr_len)
		return 0;
	for (i = 0; i < sizeof(gen_plt_expr); i++)
		if (i != GEN_PLT_LIT_AT && e[i] != gen_plt_expr[i])
			return 0;
	t = e[GEN_PLT_LIT_AT] - GEN_DW_OP_LIT0;
	return t && t < GEN_PLT_ENTRY ? t : 0;
}

static struct gen_fde *gen_new_fde(struct gen *g)
{
	struct gen_fde *d;

	d = gen_grow(g->fdes, &g->cap_fdes, g->nr_fdes + 1, sizeof(*d),
		     GEN_FDES_GROW);
	if (!d)
		return NULL;
	g->fdes = d;
	d = &g->fdes[g->nr_fdes++];
	memset(d, 0, sizeof(*d));
	return d;
}

/*
 * A function cut at a last row with the PLT expression, on a 16-byte
 * boundary: the rest becomes a PCMASK FDE (a new one, counting no CFI
 * bytes of its own, if the rows before it were emitted).
 */
static int gen_plt(struct gen *g, u32 idx)
{
	struct gen_fde *d = &g->fdes[idx], *p;
	const struct ehf_row *row = &g->rows[g->nr_rows - 1];
	struct sfu_enc_fre *fres;
	u32 t;

	if (!d->why || d->why_pc != row->pc || row->pc % GEN_PLT_ENTRY)
		return 0;
	t = gen_plt_threshold(g, &row->cfa);
	if (!t)
		return 0;
	fres = gen_grow(g->fres, &g->cap_fres, g->nr_fres + 2, sizeof(*fres),
			GEN_FRES_GROW);
	if (!fres)
		return -ENOMEM;
	g->fres = fres;
	p = d;
	if (d->emitted) {
		p = gen_new_fde(g);
		if (!p)
			return -ENOMEM;
		d = &g->fdes[idx];
		*p = *d;
		d->why = GEN_WHY_NONE;
		p->full_size = 0;
	}
	p->start = row->pc;
	p->size = d->start + d->full_size - row->pc;
	p->pc_type = SFRAME_FDE_TYPE_PCMASK;
	p->rep_size = GEN_PLT_ENTRY;
	p->fde_type = SFRAME_FDE_TYPE_DEFAULT;
	p->why = GEN_WHY_NONE;
	p->emitted = true;
	p->fre_first = g->nr_fres;
	p->nr_fres = 2;
	fres = &g->fres[g->nr_fres];
	memset(fres, 0, 2 * sizeof(*fres));
	fres[0].base = SFRAME_BASE_REG_SP;
	fres[0].nr_words = 1;
	fres[0].words[0] = GEN_PLT_CFA_IN;
	fres[1].start = t;
	fres[1].base = SFRAME_BASE_REG_SP;
	fres[1].nr_words = 1;
	fres[1].words[0] = GEN_PLT_CFA_PUSHED;
	g->nr_fres += 2;
	g->nr_plt++;
	return 0;
}

static int gen_function(struct gen *g, const struct ehf_fde *fde)
{
	u32 idx = g->nr_fdes;
	struct gen_fde *d;
	int ret;

	g->nr_eh_fdes++;
	d = gen_new_fde(g);
	if (!d)
		return -ENOMEM;
	d->start = fde->pc_begin;
	d->size = fde->pc_range;
	d->full_size = fde->pc_range;
	d->eh_off = fde->off;
	d->why_pc = fde->pc_begin;
	d->signal = fde->cie.signal && g->o.version == SFRAME_VERSION_3;
	d->pc_type = SFRAME_FDE_TYPE_PCINC;
	if (g->arch->pauth && fde->cie.bkey)
		d->pauth_key = SFRAME_AARCH64_PAUTH_KEY_B;
	if (!fde->pc_range) {
		d->why = GEN_WHY_EMPTY;
		return 0;
	}
	if (fde->pc_range > UINT32_MAX) {
		d->why = GEN_WHY_SIZE;
		return 0;
	}
	ret = gen_collect_rows(g, fde);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		gen_warn_cfi(g, fde);
		d->why = GEN_WHY_CFI;
		return 0;
	}
	ret = gen_describe(g, d);
	if (!ret)
		ret = gen_plt(g, idx);
	return ret;
}

/* ---- the whole section ---- */

static int gen_cmp_fde(const void *pa, const void *pb)
{
	const struct gen_fde *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->eh_off < b->eh_off ? -1 : a->eh_off > b->eh_off;
}

/* Sort by start and drop what overlaps an earlier emitted function. */
static void gen_sort(struct gen *g)
{
	u64 end = 0;
	bool any = false;
	u32 i;

	qsort(g->fdes, g->nr_fdes, sizeof(*g->fdes), gen_cmp_fde);
	for (i = 0; i < g->nr_fdes; i++) {
		if (!g->fdes[i].emitted)
			continue;
		if (any && g->fdes[i].start < end) {
			g->fdes[i].emitted = false;
			g->fdes[i].why = GEN_WHY_OVERLAP;
			g->fdes[i].why_pc = g->fdes[i].start;
			continue;
		}
		end = g->fdes[i].start + g->fdes[i].size;
		any = true;
	}
}

typedef int (*gen_fde_fn)(struct gen *g, const struct ehf_fde *fde);

/* Call @fn for every FDE of .eh_frame. */
static int gen_read(struct gen *g, gen_fde_fn fn)
{
	struct ehf_iter it;
	struct ehf_fde fde;
	int ret;

	ehf_iter_init(&it);
	while ((ret = ehf_next_fde(&g->eh, &it, &fde)) == 1) {
		ret = fn(g, &fde);
		if (ret)
			break;
	}
	if (ret == -ENOMEM)
		return gen_oom(g);
	if (ret)
		gen_fail(g, ret, "%s: .eh_frame+0x%" PRIx64 ": %s", g->o.in,
			 g->eh.err.off, g->eh.err.what);
	return ret;
}

/* ---- --from-v1 ---- */

/* The counts that do not come from the functions one by one. */
void gen_totals(const struct gen *g, struct gen_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->abi = sfu_abi_info(g->arch->abi)->name;
	s->eh_bytes = g->eh.size;
	s->nr_cies = g->eh.nr_cies;
	s->nr_eh_fdes = g->nr_eh_fdes;
	s->nr_fres = g->nr_fres;
	s->nr_plt = g->nr_plt;
	s->plain_bytes = g->plain_bytes;
	s->shared_fdes = g->shared_fdes;
	s->sizes = g->sizes;
	s->merged = g->merged;
	s->pad_bytes = g->pad_bytes;
}

/*
 * --from-v1: the file's own SFrame section (binutils 2.40 writes V1, but
 * any version is read), decoded and written again as V3, into @r.
 */
static int gen_reencode(struct gen *g, struct gen_result *r)
{
	char msg[GEN_ERR_MAX];
	struct sfu_enc_params p;
	struct elf_sframe_loc loc;
	struct reenc re;
	int ret;

	if (elf_find_sframe(g->file, &loc) || !loc.machine)
		return gen_fail(g, -ENOENT, "%s: no SFrame section to upgrade",
				g->o.in);
	ret = reenc_load(loc.data, loc.size, loc.vaddr, &re, msg,
			 sizeof(msg));
	if (ret)
		return gen_fail(g, ret, "%s: %s: %s", g->o.in, loc.name, msg);
	reenc_v3_params(&re, g->o.vaddr, &p);
	g->plain_bytes = sfu_encode(&p, re.fdes, re.nr_fdes, NULL, 0);
	ret = gen_encode_fdes(g, re.fdes, re.nr_fdes, &p, &r->buf);
	if (!ret) {
		r->len = g->out_bytes;
		r->vaddr = g->o.vaddr;
		gen_totals(g, &r->stats);
		r->stats.old_version = re.version;
		r->stats.old_bytes = loc.size;
		r->stats.old_fdes = re.nr_fdes;
	}
	reenc_free(&re);
	return ret;
}

/* ---- the entry points ---- */

static int gen_pick_arch(struct gen *g)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(gen_arches); i++) {
		if (gen_arches[i].machine != g->elf.machine)
			continue;
		g->arch = &gen_arches[i];
		return 0;
	}
	return gen_fail(g, -EOPNOTSUPP, "%s: e_machine %u is not supported yet",
			g->o.in, g->elf.machine);
}

/* Check the ELF file loaded at @f and pick its architecture. */
static int gen_open_loaded(struct gen *g, const struct elf_file *f)
{
	struct ehf_error err;
	int ret;

	ret = ehf_elf_open(f, &g->elf, &err);
	if (ret)
		return gen_fail(g, ret, "%s: %s", g->o.in, err.what);
	if (g->elf.type != ET_EXEC && g->elf.type != ET_DYN)
		return gen_fail(g, -ENOEXEC,
				"%s: not an executable or shared object",
				g->o.in);
	return gen_pick_arch(g);
}

/* Start on the ELF file @f for @o; gen_end() after, even on failure. */
static int gen_begin(struct gen *g, const struct gen_opts *o,
		     const struct elf_file *f, struct gen_err *err)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->o = *o;
	g->file = f;
	g->err = err;
	err->msg[0] = '\0';
	ret = gen_open_loaded(g, f);
	if (!ret)
		ehf_init(&g->eh, &g->elf);
	return ret;
}

static void gen_end(struct gen *g)
{
	free(g->fdes);
	free(g->fres);
	free(g->rows);
	ehf_destroy(&g->eh);
}

/* GEN_VADDR_PAST_IMAGE: the address `sframe-gen --embed` gives it. */
static int gen_place(struct gen *g)
{
	struct elf_embed plan;
	int ret;

	if (g->o.vaddr != GEN_VADDR_PAST_IMAGE)
		return 0;
	ret = elf_embed_plan(g->file, &plan);
	if (ret)
		return gen_fail(g, ret, "%s: %s", g->o.in, plan.err);
	g->o.vaddr = plan.sframe_vaddr;
	return 0;
}

/* The section from .eh_frame, in a buffer to free. */
static int gen_make(struct gen *g, u8 **bufp)
{
	int ret;

	ret = gen_read(g, gen_function);
	if (ret)
		return ret;
	gen_sort(g);
	return gen_encode(g, bufp);
}

/* A new section from the CFI into @r, with its counts and left-outs. */
static int gen_new_section(struct gen *g, struct gen_result *r)
{
	int ret;

	ret = gen_make(g, &r->buf);
	if (!ret)
		ret = gen_list_funcs(g, r);
	if (ret)
		return ret;
	r->len = g->out_bytes;
	r->vaddr = g->o.vaddr;
	gen_count(g, &r->stats);
	return 0;
}

typedef int (*gen_step_fn)(struct gen *g, struct gen_result *r);

/* Read the file's CFI, place the section, then @step makes @r. */
static int gen_call(const struct gen_opts *o, const struct elf_file *f,
		    struct gen_result *r, struct gen_err *err,
		    gen_step_fn step)
{
	struct gen g;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = gen_begin(&g, o, f, err);
	if (!ret)
		ret = gen_place(&g);
	if (!ret)
		ret = step(&g, r);
	if (ret)
		gen_result_free(r);
	gen_end(&g);
	return ret;
}

/**
 * gen_generate() - SFrame for an ELF file's .eh_frame, and what it covers
 * @o: what to generate; @o->in names the file in messages, @o->vaddr is
 *	where the section is encoded for (GEN_VADDR_PAST_IMAGE: where
 *	`sframe-gen --embed` puts it, past the file's last segment)
 * @f: the file's bytes
 * @r: the section, its counts, and the functions left out or cut short
 * @err: why it failed
 *
 * The section `sframe-gen` writes, even for a file that has an SFrame
 * section of its own.  Functions left out for errors in their CFI are
 * told to @o->warn as they are met.
 *
 * Return: 0 and @r to free with gen_result_free(), or a negative error
 * code with @err's message (and @r empty).
 */
int gen_generate(const struct gen_opts *o, const struct elf_file *f,
		 struct gen_result *r, struct gen_err *err)
{
	return gen_call(o, f, r, err, gen_new_section);
}

/**
 * gen_upgrade() - an ELF file's own SFrame section, as V3
 * @o: as for gen_generate(); @o->version is ignored
 * @f: the file's bytes
 * @r: the section; of its counts, the old section's (old_version,
 *	old_bytes, old_fdes), plain_bytes and shared_fdes
 * @err: why it failed
 *
 * For `sframe-gen --from-v1`: binutils 2.40 writes V1, but any version is
 * read.  The file must still be one gen_generate() accepts.
 *
 * Return: 0 and @r to free with gen_result_free(), or a negative error
 * code with @err's message (and @r empty).
 */
int gen_upgrade(const struct gen_opts *o, const struct elf_file *f,
		struct gen_result *r, struct gen_err *err)
{
	return gen_call(o, f, r, err, gen_reencode);
}

/**
 * gen_result_free() - free what gen_generate() or gen_upgrade() made
 * @r: the result, left empty
 */
void gen_result_free(struct gen_result *r)
{
	free(r->buf);
	free(r->funcs);
	memset(r, 0, sizeof(*r));
}

/**
 * gen_dump_rows() - the CFI interpreter's rows, for `sframe-gen --dump-rows`
 * @o: @o->in names the file in messages; nothing else is used
 * @f: the file's bytes
 * @fn: called with each row, in .eh_frame's order; a function whose CFI
 *	cannot be read gives one row over its range, rule "?cfi-error"
 * @arg: @fn's
 * @err: why it failed
 *
 * Return: 0, or a negative error code with @err's message.
 */
int gen_dump_rows(const struct gen_opts *o, const struct elf_file *f,
		  gen_row_fn fn, void *arg, struct gen_err *err)
{
	struct gen g;
	int ret;

	ret = gen_begin(&g, o, f, err);
	if (!ret) {
		g.row_fn = fn;
		g.row_arg = arg;
		ret = gen_read(&g, gen_dump_fde);
	}
	gen_end(&g);
	return ret;
}

/**
 * gen_section() - SFrame for an ELF file's .eh_frame, in memory
 * @o: options as for gen_generate()
 * @f: the file's bytes
 * @bufp: the section, to free()
 * @lenp: its length
 * @vaddrp: the address it is encoded for
 * @err: why it failed
 *
 * The same section `sframe-gen -o` writes, for tools that register it
 * rather than write it (sframectl), unless the file has SFrame already.
 *
 * Return: 0, -EEXIST if the file has an SFrame section of its own, or
 * another negative error code; on failure, @err's message says why.
 */
int gen_section(const struct gen_opts *o, const struct elf_file *f,
		u8 **bufp, u64 *lenp, u64 *vaddrp, struct gen_err *err)
{
	struct elf_sframe_loc loc;
	struct gen g;
	int ret;

	*bufp = NULL;
	ret = gen_begin(&g, o, f, err);
	if (!ret && !elf_find_sframe(f, &loc) && loc.machine)
		ret = gen_fail(&g, -EEXIST, "%s: has SFrame of its own",
			       o->in);
	if (!ret)
		ret = gen_place(&g);
	if (!ret)
		ret = gen_make(&g, bufp);
	if (!ret) {
		*lenp = g.out_bytes;
		*vaddrp = g.o.vaddr;
	}
	gen_end(&g);
	return ret;
}
