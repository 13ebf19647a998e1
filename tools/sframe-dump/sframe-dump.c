// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-dump: print the SFrame data of an ELF file or of a raw section.
 *
 *   sframe-dump [options] FILE
 *     --format=native    header, every FDE, every FRE and its rule (default)
 *     --format=readelf   the body of `readelf --sframe` (binutils 2.40 for V1,
 *                        2.46 for V2 and V3, flexible FDEs included)
 *     --pc ADDR          the rule in force at ADDR (repeatable)
 *     --all-pcs          the rule at every address of every function, by
 *                        lookup (block index, binary search, FRE scan)
 *     --expand           the same table computed by walking every FRE
 *     --validate         check every FDE and FRE, print nothing else
 *     --memory           the kernel memory the module keeps for the section
 *                        as a sidecar: its bytes, the decoder's index, the
 *                        rule table; each as asked for and as the module's
 *                        allocator takes it
 *     --check-table      build the module's rule table and compare its
 *                        rule with the lookup's at every address of the
 *                        text; print how many, fail on a difference
 *     --vaddr ADDR       address of a raw section (default 0)
 *
 * It decodes with the module's own decoder (lib/sframe/).  Exit
 * status: 0 on success, 1 if the section is corrupt or a lookup failed for a
 * reason other than "no entry", 2 on usage or file errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe/decode.h>
#include <sframe/table.h>
#include <sframe/version.h>
#include "elf-sframe.h"

#define DUMP_MAX_PCS	64
/* Column widths of readelf's FRE table. */
#define RE_COL_CFA	10
#define RE_COL_FP	10
#define RE_COL_RA	13

enum dump_format {
	DUMP_NATIVE, DUMP_READELF, DUMP_ALL_PCS, DUMP_EXPAND, DUMP_MEMORY,
	DUMP_CHECK_TABLE
};

/*
 * What the module's allocator (sfu_alloc_array()) takes for a request on
 * its three architectures (4 KiB pages, SLUB): the smallest kmalloc size
 * class that holds it, up to KMALLOC_MAX_CACHE_SIZE (the last class);
 * above, whole vmalloc() pages.
 */
#define MEM_PAGE		4096UL

static const u64 mem_kmalloc_classes[] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 2 * MEM_PAGE,
};

struct dump {
	struct sfu_section sec;
	enum dump_format format;
	u64 pcs[DUMP_MAX_PCS];
	unsigned int nr_pcs;
	bool validate;
	const char *path;
};

static void dump_report(struct dump *d, const char *what, int err)
{
	fprintf(stderr, "sframe-dump: %s: %s: %s", d->path, what,
		sfu_strerror(err));
	if (err == -EBADMSG || err == -ENOEXEC || err == -EPROTONOSUPPORT ||
	    err == -EOPNOTSUPP || err == -E2BIG)
		fprintf(stderr, " (%s at offset 0x%" PRIx64 ")",
			d->sec.diag.what ? d->sec.diag.what : "?",
			d->sec.diag.off);
	fputc('\n', stderr);
}

/* ---- readelf --sframe compatible output ---- */

static void re_flags(u8 version, u8 flags)
{
	static const struct {
		u8 bit;
		const char *name;
	} names[] = {
		{ SFRAME_F_FDE_SORTED, "SFRAME_F_FDE_SORTED" },
		{ SFRAME_F_FRAME_POINTER, "SFRAME_F_FRAME_POINTER" },
		{ SFRAME_F_FDE_FUNC_START_PCREL,
		  "SFRAME_F_FDE_FUNC_START_PCREL" },
	};
	const char *prefix = "Flags: ";
	unsigned int i;

	if (!flags) {
		printf("%11sNONE\n", prefix);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!(flags & names[i].bit))
			continue;
		if (names[i].bit == SFRAME_F_FRAME_POINTER &&
		    version == SFRAME_VERSION_3)
			continue;
		flags &= ~names[i].bit;
		printf("%11s%s%s\n", prefix, names[i].name, flags ? "," : "");
		prefix = " ";
	}
	if (flags)
		printf("%11s%d\n", prefix, flags);
}

static void re_header(const struct sfu_elem *e)
{
	printf("  Header :\n\n");
	printf("    Version: SFRAME_VERSION_%u\n", e->version);
	re_flags(e->version, e->flags);
	/* binutils 2.40 (V1) does not print the fixed offsets. */
	if (e->version != SFRAME_VERSION_1) {
		if (e->fixed_fp)
			printf("    CFA fixed FP offset: %d\n", e->fixed_fp);
		if (e->fixed_ra)
			printf("    CFA fixed RA offset: %d\n", e->fixed_ra);
	}
	printf("    Num FDEs: %u\n", e->num_fdes);
	printf("    Num FREs: %u\n", e->num_fres);
}

/* Index of the FP word and the RA word in a default FRE, or -1. */
static int re_ra_idx(const struct sfu_elem *e)
{
	return e->fixed_ra ? -1 : SFRAME_FRE_RA_OFFSET_IDX;
}

static int re_fp_idx(const struct sfu_elem *e)
{
	return e->fixed_ra ? SFRAME_FRE_RA_OFFSET_IDX :
			     SFRAME_FRE_FP_OFFSET_IDX;
}

static void re_word(const struct sfu_elem *e, const struct sfu_fre *fre,
		    int idx, char *buf, size_t len)
{
	s32 w = sfu_fre_sword(fre, idx);

	if (e->abi == SFRAME_ABI_S390X_ENDIAN_BIG &&
	    e->version == SFRAME_VERSION_2 &&
	    SFRAME_V2_S390X_OFFSET_IS_REGNUM(w))
		snprintf(buf, len, "r%d",
			 (int)SFRAME_V2_S390X_OFFSET_DECODE_REGNUM((u32)w));
	else
		snprintf(buf, len, "c%+d", w);
}

static void re_ra(const struct sfu_elem *e, const struct sfu_fre *fre,
		  char *buf, size_t len)
{
	int idx = re_ra_idx(e);

	if (e->version != SFRAME_VERSION_1 && e->fixed_ra)
		snprintf(buf, len, "f");
	else if (idx >= 0 && idx < fre->nr_words &&
		 e->version != SFRAME_VERSION_1 &&
		 sfu_fre_sword(fre, idx) == SFRAME_FRE_RA_OFFSET_INVALID)
		snprintf(buf, len, "U");
	else if (idx >= 0 && idx < fre->nr_words)
		re_word(e, fre, idx, buf, len);
	else
		snprintf(buf, len, "u");
	strncat(buf, SFRAME_FRE_MANGLED_RA_P(fre->info) ? "[s]" : "   ",
		len - strlen(buf) - 1);
}

/* A register as binutils names it in flex rows: sp, fp or rN. */
static void re_reg(u8 abi, u32 reg, char *buf, size_t len)
{
	const struct sfu_abi_info *ai = sfu_abi_info(abi);

	if (ai && reg == ai->sp_reg)
		snprintf(buf, len, "sp");
	else if (ai && reg == ai->fp_reg)
		snprintf(buf, len, "fp");
	else
		snprintf(buf, len, "r%u", reg);
}

/*
 * A flexible (control word, offset) pair: "reg+off", "(reg+off)" when the
 * value is loaded from there, or "c+off" when the base is the CFA (binutils
 * then leaves the dereference implicit, as in default rows).
 */
static void re_flex_pair(u8 abi, u32 ctrl, s32 off, char *buf, size_t len)
{
	char reg[16];

	if (!SFRAME_V3_FLEX_CTRL_REG_P(ctrl)) {
		snprintf(buf, len, "c%+d", off);
		return;
	}
	re_reg(abi, SFRAME_V3_FLEX_CTRL_REGNUM(ctrl), reg, sizeof(reg));
	if (SFRAME_V3_FLEX_CTRL_DEREF_P(ctrl))
		snprintf(buf, len, "(%s%+d)", reg, off);
	else
		snprintf(buf, len, "%s%+d", reg, off);
}

/*
 * The CFA, FP and RA columns of a V3 flexible row.  Words: CFA control and
 * offset, then the RA pair or a single zero word standing in for it, then
 * the FP pair.  A column whose words are missing reads "u" ("f" for an RA
 * the header fixes); a zero RA stand-in reads "U".
 */
static void re_flex_cols(const struct sfu_elem *e, const struct sfu_fre *fre)
{
	unsigned int n = fre->nr_words, ra = SFRAME_V3_FLEX_RA_CTRL_IDX, fp;
	char tmp[64];
	s32 off;

	if (n > SFRAME_V3_FLEX_CFA_OFF_IDX) {
		off = sfu_fre_sword(fre, SFRAME_V3_FLEX_CFA_OFF_IDX);
		if (e->abi == SFRAME_ABI_S390X_ENDIAN_BIG)
			off = SFRAME_S390X_CFA_OFFSET_DECODE(off);
		re_flex_pair(e->abi, fre->words[SFRAME_V3_FLEX_CFA_CTRL_IDX] &
			     ~SFU_FLEX_CTRL_SP, off, tmp, sizeof(tmp));
	} else {
		snprintf(tmp, sizeof(tmp), "u");
	}
	printf("  %-*s", RE_COL_CFA, tmp);

	fp = (n > ra && !fre->words[ra]) ? ra + 1 : ra + 2;
	if (fp + 1 < n)
		re_flex_pair(e->abi, fre->words[fp], sfu_fre_sword(fre, fp + 1),
			     tmp, sizeof(tmp));
	else
		snprintf(tmp, sizeof(tmp), "u");
	printf("%-*s", RE_COL_FP, tmp);

	if (n <= ra)
		snprintf(tmp, sizeof(tmp), "%s", e->fixed_ra ? "f" : "u");
	else if (!fre->words[ra])
		snprintf(tmp, sizeof(tmp), "U");
	else
		re_flex_pair(e->abi, fre->words[ra],
			     ra + 1 < n ? sfu_fre_sword(fre, ra + 1) :
					  e->fixed_ra, tmp, sizeof(tmp));
	strncat(tmp, SFRAME_FRE_MANGLED_RA_P(fre->info) ? "[s]" : "   ",
		sizeof(tmp) - strlen(tmp) - 1);
	printf("%-*s", RE_COL_RA, tmp);
}

static void re_fre(const struct sfu_fde *fde, const struct sfu_fre *fre)
{
	const struct sfu_elem *e = fde->elem;
	char tmp[64];
	s64 cfa;

	if (fde->pc_type == SFRAME_FDE_TYPE_PCMASK)
		printf("\n    %016" PRIx64, (u64)fre->start);
	else
		printf("\n    %016" PRIx64, fde->start + fre->start);
	if (!fre->nr_words) {
		printf("  RA undefined");
		return;
	}
	if (fde->fde_type == SFRAME_FDE_TYPE_FLEX) {
		re_flex_cols(e, fre);
		return;
	}
	cfa = sfu_fre_sword(fre, 0);
	if (e->abi == SFRAME_ABI_S390X_ENDIAN_BIG)
		cfa = SFRAME_S390X_CFA_OFFSET_DECODE(cfa);
	snprintf(tmp, sizeof(tmp), "%s%+lld",
		 SFRAME_FRE_CFA_BASE_REG_ID(fre->info) == SFRAME_BASE_REG_SP ?
		 "sp" : "fp", (long long)cfa);
	printf("  %-*s", RE_COL_CFA, tmp);
	if (re_fp_idx(e) < fre->nr_words)
		re_word(e, fre, re_fp_idx(e), tmp, sizeof(tmp));
	else
		snprintf(tmp, sizeof(tmp), "u");
	printf("%-*s", RE_COL_FP, tmp);
	re_ra(e, fre, tmp, sizeof(tmp));
	printf("%-*s", RE_COL_RA, tmp);
}

static int re_fde(struct dump *d, const struct sfu_fde *fde)
{
	struct sfu_fre_iter it;
	struct sfu_fre fre;
	bool signal, flex;
	int ret;

	printf("\n    func idx [%u]: pc = 0x%" PRIx64 ", size = %u bytes",
	       fde->idx, fde->start, fde->size);
	/* Attributes: S for a (V3) signal frame, F for a flexible FDE. */
	signal = fde->elem->version == SFRAME_VERSION_3 &&
		 SFRAME_V3_FUNC_SIGNAL_P(fde->info);
	flex = fde->fde_type == SFRAME_FDE_TYPE_FLEX;
	if (signal || flex)
		printf(", attr = \"%s%s\"", signal ? "S" : "", flex ? "F" : "");
	if ((fde->elem->abi == SFRAME_ABI_AARCH64_ENDIAN_LITTLE ||
	     fde->elem->abi == SFRAME_ABI_AARCH64_ENDIAN_BIG) &&
	    SFRAME_FUNC_PAUTH_KEY(fde->info) == SFRAME_AARCH64_PAUTH_KEY_B)
		printf(", pauth = B key");
	printf("\n    %-7s%-3s      %-10s%-10s%-13s", "STARTPC",
	       fde->pc_type == SFRAME_FDE_TYPE_PCMASK ? "[m]" : "",
	       "CFA", "FP", "RA");
	sfu_fre_iter_init(fde, &it);
	while (!(ret = sfu_fre_next(&d->sec, fde, &it, &fre)))
		re_fre(fde, &fre);
	return ret == -ENOENT ? 0 : ret;
}

static int re_elem(struct dump *d, const struct sfu_elem *e)
{
	struct sfu_fde fde;
	u32 i;
	int ret;

	re_header(e);
	printf("\n  Function Index :\n");
	for (i = 0; i < e->num_fdes; i++) {
		ret = sfu_read_fde(&d->sec, e, i, &fde);
		if (!ret)
			ret = re_fde(d, &fde);
		if (ret)
			return ret;
		printf("\n");
	}
	return 0;
}

/* ---- native output ---- */

static void nat_rule(struct dump *d, const struct sfu_fde *fde,
		     const struct sfu_fre *fre)
{
	char buf[SFU_RULE_STR_MAX];
	struct sfu_rule rule;
	int ret;

	ret = sfu_fre_rule(&d->sec, fde, fre, &rule);
	if (ret) {
		printf("error: %s (%s)\n", sfu_strerror(ret),
		       d->sec.diag.what);
		return;
	}
	sfu_rule_format(&rule, fde->elem->abi, buf, sizeof(buf));
	printf("%s\n", buf);
}

static int nat_fde(struct dump *d, const struct sfu_fde *fde)
{
	struct sfu_fre_iter it;
	struct sfu_fre fre;
	u32 i;
	int ret;

	printf("  fde %u: pc 0x%" PRIx64 "..0x%" PRIx64
	       " fres %u %s %s rep %u info 0x%02x info2 0x%02x\n",
	       fde->idx, fde->start, fde->start + fde->size, fde->num_fres,
	       fde->pc_type == SFRAME_FDE_TYPE_PCMASK ? "pcmask" : "pcinc",
	       fde->fde_type == SFRAME_FDE_TYPE_FLEX ? "flex" : "default",
	       fde->rep_size, fde->info, fde->info2);
	sfu_fre_iter_init(fde, &it);
	while (!(ret = sfu_fre_next(&d->sec, fde, &it, &fre))) {
		printf("    +0x%-6x info 0x%02x words", fre.start, fre.info);
		for (i = 0; i < fre.nr_words; i++)
			printf(" %d", sfu_fre_sword(&fre, i));
		printf(" : ");
		nat_rule(d, fde, &fre);
	}
	return ret == -ENOENT ? 0 : ret;
}

static int nat_elem(struct dump *d, const struct sfu_elem *e, u32 n)
{
	struct sfu_fde fde;
	u32 i;
	int ret;

	printf("element %u at 0x%" PRIx64 ": version %u flags 0x%x abi %s%s fixed_fp %d fixed_ra %d auxhdr %u fdes %u fres %u fre_len %u\n",
	       n, e->off, e->version, e->flags, sfu_abi_info(e->abi)->name,
	       e->swap ? " (byte-swapped)" : "", e->fixed_fp, e->fixed_ra,
	       e->auxhdr_len, e->num_fdes, e->num_fres, e->fre_len);
	for (i = 0; i < e->num_fdes; i++) {
		ret = sfu_read_fde(&d->sec, e, i, &fde);
		if (!ret)
			ret = nat_fde(d, &fde);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- per-address tables ---- */

static void pc_line(struct dump *d, u64 pc, int ret,
		    const struct sfu_rule *rule, u8 abi)
{
	char buf[SFU_RULE_STR_MAX];

	if (ret) {
		printf("0x%" PRIx64 ": error: %s\n", pc, sfu_strerror(ret));
		return;
	}
	sfu_rule_format(rule, abi, buf, sizeof(buf));
	printf("0x%" PRIx64 ": %s\n", pc, buf);
}

/* Every address of @fde by lookup (sfu_find_rule). */
static void all_pcs_fde(struct dump *d, const struct sfu_fde *fde)
{
	struct sfu_rule rule;
	u64 pc;
	int ret;

	for (pc = fde->start; pc < fde->start + fde->size; pc++) {
		ret = sfu_find_rule(&d->sec, pc, &rule);
		pc_line(d, pc, ret, &rule, fde->elem->abi);
	}
}

/* Every address of @fde from the row table walked in order. */
static int expand_fde(struct dump *d, const struct sfu_fde *fde)
{
	struct sfu_fre *fres = calloc(fde->num_fres + 1, sizeof(*fres));
	struct sfu_fre_iter it;
	struct sfu_rule rule;
	u32 n = 0, i, best;
	u64 pc, off;
	int ret = 0;

	if (!fres)
		return -ENOMEM;
	sfu_fre_iter_init(fde, &it);
	while (n < fde->num_fres &&
	       !(ret = sfu_fre_next(&d->sec, fde, &it, &fres[n])))
		n++;
	for (pc = fde->start; !ret && pc < fde->start + fde->size; pc++) {
		off = pc - fde->start;
		if (fde->pc_type == SFRAME_FDE_TYPE_PCMASK)
			off %= fde->rep_size;
		best = n;
		for (i = 0; i < n && fres[i].start <= off; i++)
			best = i;
		if (!n)
			ret = sfu_fde_empty_rule(fde, &rule);
		else if (best == n)
			ret = -ENOENT;
		else
			ret = sfu_fre_rule(&d->sec, fde, &fres[best], &rule);
		pc_line(d, pc, ret, &rule, fde->elem->abi);
		ret = 0;
	}
	free(fres);
	return ret;
}

static int table_elem(struct dump *d, const struct sfu_elem *e)
{
	struct sfu_fde fde;
	u32 i;
	int ret;

	for (i = 0; i < e->num_fdes; i++) {
		ret = sfu_read_fde(&d->sec, e, i, &fde);
		if (ret)
			return ret;
		if (d->format == DUMP_ALL_PCS) {
			all_pcs_fde(d, &fde);
			continue;
		}
		ret = expand_fde(d, &fde);
		if (ret)
			return ret;
	}
	return 0;
}

static u64 mem_taken(u64 bytes)
{
	size_t i;

	if (!bytes)
		return 0;
	for (i = 0; i < ARRAY_SIZE(mem_kmalloc_classes); i++)
		if (bytes <= mem_kmalloc_classes[i])
			return mem_kmalloc_classes[i];
	return (bytes + MEM_PAGE - 1) / MEM_PAGE * MEM_PAGE;
}

struct mem_sum {
	u64 asked;
	u64 taken;
};

static void mem_line(struct mem_sum *sum, const char *what, u64 count,
		     u64 size)
{
	u64 bytes = count * size, taken = mem_taken(bytes);

	printf("%-16s %10" PRIu64 " x %3" PRIu64 " %12" PRIu64 " %12" PRIu64
	       "\n", what, count, size, bytes, taken);
	sum->asked += bytes;
	sum->taken += taken;
}

/*
 * The arrays a sidecar's section holds in the module (kernel/sidecar.c:
 * sfu_section_check() with a rule table, which keeps the table and the
 * elements and frees the rest, and then the bytes), the same calls on the
 * same code; they must add up to what the module charges for them
 * (sfu_section_bytes()).  The structures around them (the sidecar's,
 * each region's) are a few hundred bytes per file, not counted here.
 */
static int dump_memory(struct dump *d, u64 len)
{
	struct sfu_section *sec = &d->sec;
	const struct sfu_table *t;
	struct mem_sum sum = { 0 };
	int ret;

	ret = sfu_table_build(sec);
	if (ret) {
		dump_report(d, "no rule table", ret);
		return 1;
	}
	sfu_section_strip(sec);
	t = sec->table;
	printf("%-16s %10s   %3s %12s %12s\n", "# array", "count", "size",
	       "asked", "taken");
	printf("# section %" PRIu64 " bytes: freed once its table is built\n",
	       len);
	/* The FDE and row indexes went with the strip. */
	mem_line(&sum, "elements", sec->nr_elems, sizeof(*sec->elems));
	mem_line(&sum, "table", 1, sizeof(*t));
	mem_line(&sum, "table-starts", t->nr_rows + SFU_TABLE_PAD,
		 sizeof(*t->starts));
	mem_line(&sum, "table-codes", t->nr_rows + SFU_TABLE_PAD,
		 sizeof(*t->codes));
	mem_line(&sum, "table-base", t->nr_groups, sizeof(*t->base));
	mem_line(&sum, "table-index", (u64)t->nr_groups * SFU_TABLE_GROUP_SLOTS,
		 sizeof(*t->index));
	mem_line(&sum, "table-rules", t->nr_rules, sizeof(*t->rules));
	mem_line(&sum, "table-spill", t->nr_spill, sizeof(*t->spill));
	mem_line(&sum, "table-spill-blk", sfu_table_spill_slots(t),
		 sizeof(*t->spill_index));
	mem_line(&sum, "table-wide", t->wide ? t->nr_rows : 0,
		 sizeof(*t->wide));
	mem_line(&sum, "table-memo", sfu_table_memo_slots(t),
		 sizeof(*t->memo));
	printf("%-16s %10s   %3s %12" PRIu64 " %12" PRIu64 "\n", "total", "",
	       "", sum.asked, sum.taken);
	/* What the module charges for the section: the same arrays. */
	if (sum.asked != sfu_section_bytes(sec)) {
		fprintf(stderr,
			"sframe-dump: %s: the module counts %zu bytes of arrays, not %" PRIu64 "\n",
			d->path, sfu_section_bytes(sec), sum.asked);
		return 1;
	}
	return 0;
}

/*
 * Whether the rule table answers as the lookup at @pc: both find a rule
 * or neither does, and the rules are the same; and its memo of return
 * addresses as its search, twice (filled or written over, then found
 * there).
 */
static bool check_table_pc(struct dump *d, u64 pc)
{
	const struct sfu_rule *got = sfu_table_find(&d->sec, pc);
	struct sfu_rule want;
	int ret;

	if (got != sfu_table_find_return(&d->sec, pc,
					 SFU_TABLE_MEMO_RENEW - 1) ||
	    got != sfu_table_find_return(&d->sec, pc, 0))
		return false;
	memset(&want, 0, sizeof(want));
	ret = sfu_find_rule(&d->sec, pc, &want);
	if (ret || !got)
		return !ret == !!got && (!ret || ret == -ENOENT);
	return !memcmp(&want, got, sizeof(want));
}

/*
 * The rule table against the section's own lookup at every address from
 * below the text to past it (the walker's two paths: files and sidecars
 * are walked through the table, JIT sections through the lookup).
 */
static int dump_check_table(struct dump *d)
{
	struct sfu_section *sec = &d->sec;
	u64 pc, nr = 0, bad = 0;
	int ret;

	ret = sfu_table_build(sec);
	if (ret) {
		dump_report(d, "no rule table", ret);
		return 1;
	}
	for (pc = sec->text_lo - 1; pc <= sec->text_hi; pc++, nr++) {
		if (check_table_pc(d, pc))
			continue;
		if (bad++ < DUMP_MAX_PCS)
			fprintf(stderr,
				"sframe-dump: %s: table and lookup differ at 0x%" PRIx64 "\n",
				d->path, pc);
	}
	printf("%" PRIu64 " addresses, %" PRIu64 " differ (%u entries, %u rules, %u spilled%s)\n",
	       nr, bad, sec->table->nr_rows, sec->table->nr_rules,
	       sec->table->nr_spill, sec->table->wide ? ", wide" : "");
	return bad ? 1 : 0;
}

static int dump_section(struct dump *d, const struct elf_sframe_loc *loc)
{
	struct sfu_rule rule;
	unsigned int i;
	int ret = 0;
	u32 n;

	if (d->format == DUMP_MEMORY)
		return dump_memory(d, loc->size);
	if (d->format == DUMP_CHECK_TABLE)
		return dump_check_table(d);
	if (d->validate) {
		ret = sfu_section_validate(&d->sec);
		if (ret)
			dump_report(d, "validation failed", ret);
		return ret ? 1 : 0;
	}
	if (d->nr_pcs) {
		for (i = 0; i < d->nr_pcs; i++) {
			ret = sfu_find_rule(&d->sec, d->pcs[i], &rule);
			pc_line(d, d->pcs[i], ret, &rule, d->sec.elems[0].abi);
			if (ret && ret != -ENOENT)
				return 1;
		}
		return 0;
	}
	if (d->format == DUMP_NATIVE)
		printf("section %s: vaddr 0x%" PRIx64 " size %" PRIu64
		       " elements %u fdes %u\n", loc->name, loc->vaddr,
		       loc->size, d->sec.nr_elems, d->sec.nr_fdes);
	else if (d->format == DUMP_READELF)
		printf("Contents of the SFrame section .sframe:");
	for (n = 0; !ret && n < d->sec.nr_elems; n++) {
		if (d->format == DUMP_READELF)
			printf("\n");
		if (d->format == DUMP_NATIVE)
			ret = nat_elem(d, &d->sec.elems[n], n);
		else if (d->format == DUMP_READELF)
			ret = re_elem(d, &d->sec.elems[n]);
		else
			ret = table_elem(d, &d->sec.elems[n]);
	}
	if (ret)
		dump_report(d, "decode failed", ret);
	return ret ? 1 : 0;
}

static void print_usage(FILE *f)
{
	fputs("Usage: sframe-dump [--format=native|readelf] [--pc ADDR]...\n", f);
	fputs("                   [--all-pcs|--expand|--validate|--memory|\n", f);
	fputs("                    --check-table]\n", f);
	fputs("                   [--vaddr ADDR] FILE\n", f);
	fputs("       sframe-dump --help | --version\n", f);
}

static void print_usage_and_exit(void)
{
	print_usage(stderr);
	exit(2);
}

static u64 parse_addr(const char *s)
{
	char *end;
	u64 v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "sframe-dump: not an address: '%s'\n", s);
		exit(2);
	}
	return v;
}

static void parse_args(struct dump *d, int argc, char **argv,
		       u64 *vaddr, bool *have_vaddr)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "pc", required_argument, NULL, 'p' },
		{ "all-pcs", no_argument, NULL, 'a' },
		{ "expand", no_argument, NULL, 'e' },
		{ "validate", no_argument, NULL, 'v' },
		{ "memory", no_argument, NULL, 'm' },
		{ "check-table", no_argument, NULL, 'c' },
		{ "vaddr", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "readelf"))
				d->format = DUMP_READELF;
			else if (strcmp(optarg, "native"))
				print_usage_and_exit();
			break;
		case 'p':
			if (d->nr_pcs == DUMP_MAX_PCS)
				print_usage_and_exit();
			d->pcs[d->nr_pcs++] = parse_addr(optarg);
			break;
		case 'a':
			d->format = DUMP_ALL_PCS;
			break;
		case 'e':
			d->format = DUMP_EXPAND;
			break;
		case 'v':
			d->validate = true;
			break;
		case 'm':
			d->format = DUMP_MEMORY;
			break;
		case 'c':
			d->format = DUMP_CHECK_TABLE;
			break;
		case 'V':
			*vaddr = parse_addr(optarg);
			*have_vaddr = true;
			break;
		case 'h':
			print_usage(stdout);
			exit(0);
		case 'R':
			printf("sframe-dump (sframe-unwind) %s\n", SFU_VERSION);
			exit(0);
		default:
			print_usage_and_exit();
		}
	}
	if (optind != argc - 1)
		print_usage_and_exit();
	d->path = argv[optind];
}

int main(int argc, char **argv)
{
	static struct dump d;
	bool have_vaddr = false;
	struct elf_sframe_loc loc;
	struct elf_file f;
	u64 vaddr = 0;
	int ret;

	parse_args(&d, argc, argv, &vaddr, &have_vaddr);
	if (elf_file_load(d.path, &f)) {
		perror(d.path);
		return 2;
	}
	if (elf_find_sframe(&f, &loc)) {
		fprintf(stderr, "sframe-dump: %s: no SFrame section\n",
			d.path);
		elf_file_free(&f);
		return 2;
	}
	if (have_vaddr)
		loc.vaddr = vaddr;
	ret = sfu_section_init(&d.sec, (unsigned long)loc.data, loc.size,
			       loc.vaddr, SFU_MEM_KERNEL, SFU_ABI_ANY);
	if (ret) {
		dump_report(&d, "bad section", ret);
		elf_file_free(&f);
		return 1;
	}
	ret = dump_section(&d, &loc);
	sfu_section_destroy(&d.sec);
	elf_file_free(&f);
	return ret;
}
