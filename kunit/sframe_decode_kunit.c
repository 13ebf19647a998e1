// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the SFrame decoder.
 *
 * The same source runs as a KUnit suite in a kernel and on the host through
 * tools/testing/kunit-host.h (under ASan and UBSan).  Sections are built
 * with the project's encoder for every version, ABI and byte order, checked
 * against hand-written rules, then broken in every way we can think of.
 */
#ifdef __KERNEL__
#include <kunit/test.h>
#include <linux/random.h>
#else
#include "kunit-host.h"
#endif

#include <sframe/decode.h>
#include <sframe/encode.h>
#include <sframe/table.h>
#include <sframe/note.h>

#include "sframe_test_sections.h"

struct sfu_case {
	u8 version;
	u8 abi;
	const char *name;
};

static const struct sfu_case sfu_cases[] = {
	{ 1, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "v1-amd64" },
	{ 1, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, "v1-aarch64" },
	{ 1, SFRAME_ABI_AARCH64_ENDIAN_BIG, "v1-aarch64be" },
	{ 2, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "v2-amd64" },
	{ 2, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, "v2-aarch64" },
	{ 2, SFRAME_ABI_AARCH64_ENDIAN_BIG, "v2-aarch64be" },
	{ 2, SFRAME_ABI_S390X_ENDIAN_BIG, "v2-s390x" },
	{ 3, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "v3-amd64" },
	{ 3, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, "v3-aarch64" },
	{ 3, SFRAME_ABI_AARCH64_ENDIAN_BIG, "v3-aarch64be" },
	{ 3, SFRAME_ABI_S390X_ENDIAN_BIG, "v3-s390x" },
};

static void sfu_case_desc(const struct sfu_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sfu_case, sfu_cases, sfu_case_desc);

/* Expected rule text for one PC, per ABI family; NULL: -ENOENT. */
struct sfu_expect {
	u64 pc;
	u8 min_version;
	const char *amd64;
	const char *aarch64;
	const char *s390x;
};

#define RA8	"ra=*(cfa-8)"
#define SP_WORD_RULE	"cfa=*(sp+32) ra=*(cfa+0) fp=*(cfa-16) sp=cfa+8 flex"
static const struct sfu_expect sfu_expects[] = {
	{ SFU_TEST_F_ROWS - 1, 1, NULL, NULL, NULL },
	{ SFU_TEST_F_ROWS, 1, "cfa=sp+8 " RA8 " fp=same",
	  "cfa=sp ra=same fp=same keyB topmost",
	  "cfa=sp+160 ra=same fp=same topmost" },
	{ SFU_TEST_F_ROWS + 3, 1, "cfa=sp+8 " RA8 " fp=same",
	  "cfa=sp ra=same fp=same keyB topmost",
	  "cfa=sp+160 ra=same fp=same topmost" },
	{ SFU_TEST_F_ROWS + 4, 1, "cfa=sp+24 " RA8 " fp=*(cfa-56)",
	  "cfa=sp+16 ra=*(cfa-48) fp=*(cfa-56) mangled keyB",
	  "cfa=sp+176 ra=*(cfa-48) fp=*(cfa-56)" },
	{ SFU_TEST_F_ROWS + 0x10, 1, "cfa=fp+24 " RA8 " fp=*(cfa-56)",
	  "cfa=fp+16 ra=*(cfa-48) fp=*(cfa-56) keyB",
	  "cfa=fp+176 ra=*(cfa-48) fp=*(cfa-56)" },
	{ SFU_TEST_F_ROWS + 0x3f, 1, "cfa=fp+24 " RA8 " fp=*(cfa-56)",
	  "cfa=fp+16 ra=*(cfa-48) fp=*(cfa-56) keyB",
	  "cfa=fp+176 ra=*(cfa-48) fp=*(cfa-56)" },
	{ SFU_TEST_F_MASK, 1, "cfa=sp+16 " RA8 " fp=same",
	  "cfa=sp+8 ra=same fp=same topmost",
	  "cfa=sp+168 ra=same fp=same topmost" },
	{ SFU_TEST_F_MASK + 0xb, 1, "cfa=sp+24 " RA8 " fp=same",
	  "cfa=sp+16 ra=same fp=same topmost",
	  "cfa=sp+176 ra=same fp=same topmost" },
	{ SFU_TEST_F_MASK + 0x1a, 1, "cfa=sp+16 " RA8 " fp=same",
	  "cfa=sp+8 ra=same fp=same topmost",
	  "cfa=sp+168 ra=same fp=same topmost" },
	{ SFU_TEST_F_MASK + 0x2f, 1, "cfa=sp+24 " RA8 " fp=same",
	  "cfa=sp+16 ra=same fp=same topmost",
	  "cfa=sp+176 ra=same fp=same topmost" },
	{ SFU_TEST_F_MASK + 0x30, 1, NULL, NULL, NULL },
	{ SFU_TEST_F_LAST + 4, 2, "outermost", "outermost", "outermost" },
	{ SFU_TEST_F_LAST + 0x10, 1, NULL, NULL, NULL },
	{ SFU_TEST_F_EXTRA + 1, 3,
	  "cfa=*(fp-8) " RA8 " fp=*(fp+0) flex",
	  "cfa=sp+16 " RA8 " fp=same flex",
	  "cfa=sp+160 ra=r16 fp=r17 flex topmost" },
	{ SFU_TEST_F_EXTRA + SFU_TEST_SP_WORD, 3, SP_WORD_RULE, SP_WORD_RULE,
	  SP_WORD_RULE },
	{ SFU_TEST_F_SIGNAL, 3, "cfa=none signal", "cfa=none signal",
	  "cfa=none signal" },
	{ SFU_TEST_F_EMPTY + 0xf, 3, "outermost", "outermost", "outermost" },
	{ SFU_TEST_F_BIG + 0xff, 1, "cfa=sp+8 " RA8 " fp=same",
	  "cfa=sp ra=same fp=same topmost",
	  "cfa=sp+160 ra=same fp=same topmost" },
	{ SFU_TEST_F_BIG + 0x100, 1, "cfa=sp+4664 " RA8 " fp=same",
	  "cfa=sp+4664 ra=same fp=same topmost",
	  "cfa=sp+4664 ra=same fp=same topmost" },
	{ SFU_TEST_F_BIG + SFU_TEST_BIG_SIZE - 1, 1,
	  "cfa=sp+1193048 " RA8 " fp=same",
	  "cfa=sp+1193048 ra=same fp=same topmost",
	  "cfa=sp+1193048 ra=same fp=same topmost" },
	{ SFU_TEST_F_BIG + SFU_TEST_BIG_SIZE, 1, NULL, NULL, NULL },
};

static const char *sfu_expect_for(const struct sfu_expect *e, u8 abi)
{
	switch (abi) {
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		return e->amd64;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return e->s390x;
	default:
		return e->aarch64;
	}
}

static u8 *sfu_build(struct kunit *test, const struct sfu_case *c,
		     bool sorted, s64 *len)
{
	u8 *buf = kunit_kzalloc(test, SFU_TEST_BUF_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	*len = sfu_test_std_section(c->version, c->abi, sorted, buf,
				    SFU_TEST_BUF_SIZE, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, *len, 0);
	KUNIT_ASSERT_TRUE(test, *len <= SFU_TEST_BUF_SIZE);
	return buf;
}

static int sfu_init(struct sfu_section *sec, const u8 *buf, u64 len)
{
	return sfu_section_init(sec, (unsigned long)buf, len, SFU_TEST_VADDR,
				SFU_MEM_KERNEL, SFU_ABI_ANY);
}

static void sfu_check_expects_at(struct kunit *test, struct sfu_section *sec,
				 const struct sfu_case *c, u64 delta)
{
	char buf[SFU_RULE_STR_MAX];
	const struct sfu_expect *e;
	struct sfu_rule rule;
	const char *want;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sfu_expects); i++) {
		e = &sfu_expects[i];
		if (c->version < e->min_version)
			continue;
		want = sfu_expect_for(e, c->abi);
		ret = sfu_find_rule(sec, e->pc + delta, &rule);
		if (!want) {
			KUNIT_EXPECT_EQ(test, ret, -ENOENT);
			continue;
		}
		KUNIT_EXPECT_EQ(test, ret, 0);
		if (ret)
			continue;
		sfu_rule_format(&rule, c->abi, buf, sizeof(buf));
		KUNIT_EXPECT_STREQ(test, buf, want);
	}
}

static void sfu_check_expects(struct kunit *test, struct sfu_section *sec,
			      const struct sfu_case *c)
{
	sfu_check_expects_at(test, sec, c, 0);
}

/* Every version and ABI decodes to the hand-written rules. */
static void sfu_test_rules(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, c, true, &len);

	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_EXPECT_EQ(test, sfu_section_validate(&sec), 0);
	KUNIT_EXPECT_EQ(test, sec.elems[0].swap,
			sfu_abi_info(c->abi)->big_endian !=
			(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__));
	sfu_check_expects(test, &sec, c);
	sfu_section_destroy(&sec);
}

/* Without the sorted flag the decoder builds its own order. */
static void sfu_test_unsorted(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, c, false, &len);

	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	sfu_check_expects(test, &sec, c);
	sfu_section_destroy(&sec);
}

/* Two elements back to back, the second 8-byte aligned after padding. */
static void sfu_test_concat(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, 2 * SFU_TEST_BUF_SIZE, GFP_KERNEL);
	struct sfu_section sec;
	s64 a, b;
	u64 off;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	a = sfu_test_std_section(c->version, c->abi, true, buf,
				 SFU_TEST_BUF_SIZE, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, a, 0);
	off = (a + 7) & ~7ull;
	/* The second element describes the same functions moved by 1 MiB. */
	b = sfu_test_std_section(c->version, c->abi, true, buf + off,
				 SFU_TEST_BUF_SIZE,
				 SFU_TEST_VADDR + off - 0x100000);
	KUNIT_ASSERT_GT(test, b, 0);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, off + b), 0);
	KUNIT_EXPECT_EQ(test, sec.nr_elems, 2);
	sfu_check_expects(test, &sec, c);
	sfu_check_expects_at(test, &sec, c, 0x100000);
	sfu_section_destroy(&sec);
}

/* Every prefix of a valid section is refused, at set-up or validation. */
static void sfu_test_truncate(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	s64 len, cut;
	u8 *buf = sfu_build(test, c, true, &len);
	int ret;

	for (cut = 0; cut < len; cut++) {
		ret = sfu_init(&sec, buf, cut);
		if (!ret) {
			ret = sfu_section_validate(&sec);
			sfu_section_destroy(&sec);
		}
		KUNIT_EXPECT_EQ(test, ret, -EBADMSG);
	}
}

/*
 * Any single corrupted byte: an error or a rule, never a bad read, also
 * when the rows are decoded into a rule table.
 */
static void sfu_test_mutate(struct kunit *test)
{
	static const u8 vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	struct sfu_rule rule;
	unsigned int v, i;
	s64 len, at;
	u8 *buf = sfu_build(test, c, true, &len), keep;

	for (at = 0; at < len; at++) {
		keep = buf[at];
		for (v = 0; v < ARRAY_SIZE(vals); v++) {
			buf[at] = vals[v] ^ (v ? 0 : keep ^ 0x5a);
			if (sfu_init(&sec, buf, len))
				continue;
			sfu_section_validate(&sec);
			/* Decoding every row must be as safe as a lookup. */
			sfu_table_build(&sec);
			for (i = 0; i < ARRAY_SIZE(sfu_expects); i++) {
				sfu_find_rule(&sec, sfu_expects[i].pc, &rule);
				if (sec.table)
					sfu_table_find(&sec,
						       sfu_expects[i].pc);
			}
			sfu_section_destroy(&sec);
		}
		buf[at] = keep;
	}
}

/*
 * Bytes changed after set-up: the indexes no longer match the section, but
 * lookups only read inside it, and find the right rules once it is back.
 */
static void sfu_test_mutate_live(struct kunit *test)
{
	static const u8 vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	struct sfu_rule rule;
	unsigned int v, i;
	s64 len, at;
	u8 *buf = sfu_build(test, c, true, &len), keep;

	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	for (at = 0; at < len; at++) {
		keep = buf[at];
		for (v = 0; v < ARRAY_SIZE(vals); v++) {
			buf[at] = vals[v] ^ (v ? 0 : keep ^ 0x5a);
			for (i = 0; i < ARRAY_SIZE(sfu_expects); i++)
				sfu_find_rule(&sec, sfu_expects[i].pc, &rule);
		}
		buf[at] = keep;
	}
	sfu_check_expects(test, &sec, c);
	sfu_section_destroy(&sec);
}

/* A patch to the reference section and the error it must give. */
struct sfu_patch {
	const char *name;
	u8 version;
	int where;		/* see sfu_patch_at() */
	u32 off;
	u32 value;
	u8 width;
	int init_err;		/* from sfu_section_init() */
	int valid_err;		/* from sfu_section_validate() */
};

enum { AT_HDR, AT_FDE0, AT_FRES0, AT_FRES1, AT_END };

#define HDR(f)	offsetof(struct sframe_header, f)
static const struct sfu_patch sfu_patches[] = {
	{ "bad magic", 3, AT_HDR, 0, 0, 1, -ENOEXEC, 0 },
	{ "version 0", 3, AT_HDR, 2, 0, 1, -EPROTONOSUPPORT, 0 },
	{ "version 4", 3, AT_HDR, 2, 4, 1, -EPROTONOSUPPORT, 0 },
	{ "v3 frame-pointer flag", 3, AT_HDR, 3, 0x7, 1, -EBADMSG, 0 },
	{ "v1 pcrel flag", 1, AT_HDR, 3, 0x5, 1, -EBADMSG, 0 },
	{ "unknown flag", 2, AT_HDR, 3, 0x80, 1, -EBADMSG, 0 },
	{ "unknown abi", 3, AT_HDR, HDR(sfh_abi_arch), 9, 1, -EBADMSG, 0 },
	{ "abi byte order", 3, AT_HDR, HDR(sfh_abi_arch), 1, 1, -EBADMSG, 0 },
	{ "aux header past end", 3, AT_HDR, HDR(sfh_auxhdr_len), 0xff, 1,
	  -EBADMSG, 0 },
	{ "fde count overflow", 3, AT_HDR, HDR(sfh_num_fdes), 0xffffffff, 4,
	  -EBADMSG, 0 },
	{ "fde count past end", 1, AT_HDR, HDR(sfh_num_fdes), 0x1000, 4,
	  -EBADMSG, 0 },
	{ "fre count too big", 3, AT_HDR, HDR(sfh_num_fres), 0x10000, 4,
	  -EBADMSG, 0 },
	{ "fre length past end", 2, AT_HDR, HDR(sfh_fre_len), 0xfffffff0, 4,
	  -EBADMSG, 0 },
	{ "fde offset past end", 3, AT_HDR, HDR(sfh_fdeoff), 0x7fffffff, 4,
	  -EBADMSG, 0 },
	{ "fre offset past end", 3, AT_HDR, HDR(sfh_freoff), 0xfffffff0, 4,
	  -EBADMSG, 0 },
	{ "sub-sections overlap", 2, AT_HDR, HDR(sfh_freoff), 0, 4,
	  -EBADMSG, 0 },
	{ "v3 attribute offset outside", 3, AT_FDE0, 12, 0xffffff, 4,
	  0, -EBADMSG },
	{ "v1 fre offset outside", 1, AT_FDE0, 8, 0xffffff, 4, 0, -EBADMSG },
	{ "fre count past fre data", 2, AT_FDE0, 12, 0xfffff, 4, 0, -EBADMSG },
	{ "fre type 3", 3, AT_FRES0, -3, 0x03, 1, 0, -EBADMSG },
	{ "unknown fde type", 3, AT_FRES0, -2, 0x05, 1, 0, -EBADMSG },
	{ "reserved info bit", 3, AT_FRES0, -3, 0x40, 1, 0, -EBADMSG },
	{ "pcmask without size", 3, AT_FRES1, -1, 0, 1, 0, -EBADMSG },
	{ "word size 3", 3, AT_FRES0, 1, 0x63, 1, 0, -EBADMSG },
	{ "fre past function end", 2, AT_FRES0, 0, 0x41, 1, 0, -EBADMSG },
	{ "fre starts repeated", 1, AT_FRES0, 3, 0x00, 1, 0, -EBADMSG },
	{ "fre starts decreasing", 1, AT_FRES0, 7, 0x01, 1, 0, -EBADMSG },
	{ "fdes claim more rows", 2, AT_FDE0, 12, 8, 4, 0, -EBADMSG },
	{ "fdes claim rows of others", 3, AT_HDR, HDR(sfh_num_fres), 1, 4,
	  0, -EBADMSG },
	{ "truncated second element", 2, AT_END, 0, 0xdee2, 2, -EBADMSG, 0 },
	{ "too many words", 3, AT_FRES0, 1, 0x0f, 1, 0, -EBADMSG },
	{ "trailing garbage", 3, AT_END, 0, 0x01, 1, -EBADMSG, 0 },
	{ "trailing zero padding", 2, AT_END, 0, 0x00, 1, 0, 0 },
};

static void sfu_patch_desc(const struct sfu_patch *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "v%u %s", p->version, p->name);
}

KUNIT_ARRAY_PARAM(sfu_patch, sfu_patches, sfu_patch_desc);

/* Section offset a patch applies to, from the unpatched section. */
static u64 sfu_patch_at(struct kunit *test, const struct sfu_patch *p,
			const u8 *buf, s64 len)
{
	struct sfu_section sec;
	struct sfu_fde fde;
	u64 at = 0;

	if (p->where == AT_HDR)
		return p->off;
	if (p->where == AT_END)
		return len;
	KUNIT_EXPECT_EQ(test, sfu_init(&sec, buf, len), 0);
	if (p->where == AT_FDE0)
		at = sec.elems[0].fde_off + p->off;
	else if (!sfu_read_fde(&sec, &sec.elems[0],
			       p->where == AT_FRES1 ? 1 : 0, &fde))
		at = fde.fres_off + (s32)p->off;
	sfu_section_destroy(&sec);
	return at;
}

static void sfu_test_malformed(struct kunit *test)
{
	const struct sfu_patch *p = test->param_value;
	const struct sfu_case c = { p->version,
				    SFRAME_ABI_AMD64_ENDIAN_LITTLE, "" };
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, &c, true, &len);
	u64 at = sfu_patch_at(test, p, buf, len);
	unsigned int i;
	int ret;

	/* Section fields are little-endian for AMD64. */
	for (i = 0; i < p->width; i++)
		buf[at + i] = (u8)(p->value >> (8 * i));
	ret = sfu_init(&sec, buf, len + (p->where == AT_END));
	KUNIT_EXPECT_EQ(test, ret, p->init_err);
	if (ret)
		return;
	KUNIT_EXPECT_EQ(test, sfu_section_validate(&sec),
			p->valid_err);
	sfu_section_destroy(&sec);
}

/* A section for another ABI than the one asked for is refused. */
static void sfu_test_abi_mismatch(struct kunit *test)
{
	const struct sfu_case c = { 3, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "" };
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, &c, true, &len);

	KUNIT_EXPECT_EQ(test, sfu_section_init(&sec, (unsigned long)buf, len,
					       SFU_TEST_VADDR, SFU_MEM_KERNEL,
					       SFRAME_ABI_S390X_ENDIAN_BIG),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, sfu_section_init(&sec, (unsigned long)buf, len,
					       SFU_TEST_VADDR, SFU_MEM_KERNEL,
					       SFRAME_ABI_AMD64_ENDIAN_LITTLE),
			0);
	sfu_section_destroy(&sec);
}

/* The sorted flag on unsorted FDEs is corruption, not a hint to ignore. */
/*
 * A section may end in zeros of any length (ld 2.40 extends PT_GNU_SFRAME
 * to the end of its segment); anything else after the last element is
 * garbage, wherever it is.
 */
static void sfu_test_zero_tail(struct kunit *test)
{
	const struct sfu_case c = { 2, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "" };
	const u64 tail = 40, bad = 33;
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, &c, true, &len);
	u32 nr_fdes;

	KUNIT_ASSERT_TRUE(test, len + tail <= SFU_TEST_BUF_SIZE);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	nr_fdes = sec.nr_fdes;
	sfu_section_destroy(&sec);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len + tail), 0);
	KUNIT_EXPECT_EQ(test, sec.nr_elems, 1);
	KUNIT_EXPECT_EQ(test, sec.nr_fdes, nr_fdes);
	sfu_section_destroy(&sec);
	buf[len + bad] = 1;
	KUNIT_EXPECT_EQ(test, sfu_init(&sec, buf, len + tail), -EBADMSG);
	KUNIT_EXPECT_EQ(test, sec.diag.off, len + bad);
}

static void sfu_test_sorted_lie(struct kunit *test)
{
	const struct sfu_case c = { 2, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "" };
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, &c, true, &len);
	u8 tmp[sizeof(struct sframe_fde_v2)];
	u64 fdes = sizeof(struct sframe_header);

	/* Swap FDE 0 and FDE 1; fix up their PC-relative starts. */
	memcpy(tmp, buf + fdes, sizeof(tmp));
	memcpy(buf + fdes, buf + fdes + sizeof(tmp), sizeof(tmp));
	memcpy(buf + fdes + sizeof(tmp), tmp, sizeof(tmp));
	KUNIT_EXPECT_EQ(test, sfu_init(&sec, buf, len), -EBADMSG);
	buf[offsetof(struct sframe_preamble, sfp_flags)] &=
		~SFRAME_F_FDE_SORTED;
	KUNIT_EXPECT_EQ(test, sfu_init(&sec, buf, len), 0);
	sfu_section_destroy(&sec);
}

/*
 * The rule at SFU_TEST_F_ROWS of a section of one function, @fde, encoded
 * for @version and @abi.  Return: sfu_find_rule()'s.
 */
static int sfu_one_fde_rule(struct kunit *test, u8 version, u8 abi,
			    const struct sfu_enc_fde *fde, struct sfu_rule *rule)
{
	struct sfu_enc_params p = {
		.version = version,
		.abi = abi,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.vaddr = SFU_TEST_VADDR,
		.fre_type = SFU_ENC_AUTO,
		.word_size = SFU_ENC_AUTO,
		.fixed_ra = abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ? -8 : 0,
	};
	u8 *buf = kunit_kzalloc(test, SFU_TEST_BUF_SIZE, GFP_KERNEL);
	struct sfu_section sec;
	s64 len;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = sfu_encode(&p, fde, 1, buf, SFU_TEST_BUF_SIZE);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	ret = sfu_find_rule(&sec, SFU_TEST_F_ROWS, rule);
	sfu_section_destroy(&sec);
	return ret;
}

/* s390x V2 register words must name a real register. */
static void sfu_test_s390x_bad_reg(struct kunit *test)
{
	static const s32 bad[] = { 0x00020021, -1 };
	struct sfu_enc_fre row = { .base = SFRAME_BASE_REG_SP, .nr_words = 2 };
	struct sfu_enc_fde fde = { .start = SFU_TEST_F_ROWS, .size = 0x10,
				   .nr_fres = 1, .fres = &row };
	struct sfu_rule rule;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		row.words[1] = bad[i];
		KUNIT_EXPECT_EQ(test,
				sfu_one_fde_rule(test, SFRAME_VERSION_2,
						 SFRAME_ABI_S390X_ENDIAN_BIG,
						 &fde, &rule), -EBADMSG);
	}
}

#define SFU_TEST_SP_CTRL	SFRAME_V3_FLEX_CTRL(SFRAME_AMD64_DWARF_SP, 1, 1)
#define SP_BIT			(SFU_TEST_SP_CTRL | SFU_FLEX_CTRL_SP)
#define RA_CTRL			SFRAME_V3_FLEX_CTRL(0, 1, 0)

/*
 * The module's SP word (SFU_FLEX_CTRL_SP) comes as a seventh data word
 * with the bit in the CFA control word, in a flexible FDE only: that
 * decodes, any other combination is refused.
 */
static void sfu_test_sp_word(struct kunit *test)
{
	static const struct {
		u8 fde_type;
		u8 nr_words;
		u32 cfa_ctrl;
		u32 ra_ctrl;
	} bad[] = {
		{ SFRAME_FDE_TYPE_FLEX, 7, SFU_TEST_SP_CTRL, RA_CTRL },
		{ SFRAME_FDE_TYPE_FLEX, 6, SP_BIT, RA_CTRL },
		{ SFRAME_FDE_TYPE_FLEX, 2, SP_BIT, RA_CTRL },
		{ SFRAME_FDE_TYPE_FLEX, 7, SP_BIT, RA_CTRL | SFU_FLEX_CTRL_SP },
		{ SFRAME_FDE_TYPE_DEFAULT, 7, SP_BIT, RA_CTRL },
	};
	struct sfu_enc_fre row = { .base = SFRAME_BASE_REG_SP,
				   .nr_words = SFU_FRE_MAX_WORDS,
				   .ctrl_mask = SFU_TEST_FLEX_CTRL_WORDS,
				   .words = { SP_BIT, 32, RA_CTRL, 0, RA_CTRL,
					      -16, 8 } };
	struct sfu_enc_fde fde = { .start = SFU_TEST_F_ROWS, .size = 0x10,
				   .nr_fres = 1, .fres = &row,
				   .fde_type = SFRAME_FDE_TYPE_FLEX };
	const u8 amd64 = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	struct sfu_rule rule;
	unsigned int i;

	/* With bit and word it decodes. */
	KUNIT_EXPECT_EQ(test, sfu_one_fde_rule(test, SFRAME_VERSION_3, amd64,
					       &fde, &rule), 0);
	KUNIT_EXPECT_EQ(test, rule.sp_off, 8);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		fde.fde_type = bad[i].fde_type;
		row.nr_words = bad[i].nr_words;
		row.words[SFRAME_V3_FLEX_CFA_CTRL_IDX] = bad[i].cfa_ctrl;
		row.words[SFRAME_V3_FLEX_RA_CTRL_IDX] = bad[i].ra_ctrl;
		KUNIT_EXPECT_EQ(test,
				sfu_one_fde_rule(test, SFRAME_VERSION_3, amd64,
						 &fde, &rule), -EBADMSG);
	}
}

/* Whether row @row of function @f is found within its share of work. */
static bool sfu_long_row_ok(struct sfu_section *sec, u32 f, u32 row)
{
	u64 pc = SFU_TEST_LONG_TEXT + row +
		 (u64)f * SFU_TEST_LONG_SIZE(SFU_MAX_FDE_FRES);
	/* The descriptor, a block's binary search, SFU_ROW_STRIDE + 1 rows. */
	u32 budget = SFU_ROW_STRIDE + 4;
	struct sfu_rule rule;

	return !sfu_find_rule_budget(sec, pc, &rule,
				     &budget) &&
	       rule.cfa.off == sfu_test_long_cfa(row);
}

/*
 * Functions of 65535 rows: the row index finds any row decoding at most
 * SFU_ROW_STRIDE + 1 of them; rows shared by several FDEs are indexed once;
 * without the index the budget stops the scan.
 */
static void sfu_test_long_function(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	u32 nr_funcs = c->version == SFRAME_VERSION_1 ? 1 : 3;
	u32 rows = SFU_MAX_FDE_FRES, f, row, budget, nr_runs, bad = 0;
	struct sfu_section sec;
	struct sfu_rule rule;
	s64 len;
	u8 *buf;

	len = sfu_test_long_section(c->version, c->abi, rows, nr_funcs,
				    SFU_TEST_LONG_TEXT, NULL, 0, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, len, 0);
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, sfu_test_long_section(c->version, c->abi, rows,
						    nr_funcs,
						    SFU_TEST_LONG_TEXT, buf,
						    len, SFU_TEST_VADDR), len);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_EXPECT_EQ(test, sfu_section_validate(&sec), 0);
	KUNIT_EXPECT_EQ(test, sec.nr_runs, 1);
	KUNIT_EXPECT_EQ(test, sec.nr_marks, (rows - 1) / SFU_ROW_STRIDE);
	for (f = 0; f < nr_funcs; f++) {
		for (row = 0; row < rows; row += 97)
			bad += !sfu_long_row_ok(&sec, f, row);
		for (row = 0; row < 2 * SFU_ROW_STRIDE + 2; row++)
			bad += !sfu_long_row_ok(&sec, f, row);
		for (row = rows - 2 * SFU_ROW_STRIDE - 2; row < rows; row++)
			bad += !sfu_long_row_ok(&sec, f, row);
	}
	KUNIT_EXPECT_EQ(test, bad, 0);

	/* The same lookup without the index: the budget ends it. */
	nr_runs = sec.nr_runs;
	sec.nr_runs = 0;
	budget = SFU_ROW_STRIDE + 4;
	KUNIT_EXPECT_EQ(test, sfu_find_rule_budget(&sec, SFU_TEST_LONG_TEXT +
						   rows - 1, &rule, &budget),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, budget, 0);
	KUNIT_EXPECT_EQ(test, sfu_find_rule(&sec, SFU_TEST_LONG_TEXT + rows - 1,
					    &rule), 0);
	KUNIT_EXPECT_EQ(test, rule.cfa.off, sfu_test_long_cfa(rows - 1));
	sec.nr_runs = nr_runs;
	sfu_section_destroy(&sec);
}

/* Addresses compared between two chances to reschedule. */
#define SFU_TEST_RESCHED_PCS	4096

/*
 * Differences between @plain's lookups and @tabled's table at every
 * @step-th address from below the first function to past the last:
 * whether a rule is found, the rule and its flags.
 */
static u32 sfu_table_diffs(struct sfu_section *plain,
			   struct sfu_section *tabled, u8 abi, u64 step)
{
	u32 bad = 0, n = 0;
	u64 pc;

	for (pc = plain->text_lo - step; pc < plain->text_hi + step;
	     pc += step) {
		bad += sfu_test_table_differs(plain, tabled, abi, pc);
		/* Seconds under emulation: let RCU and the rest run. */
		if (!(++n % SFU_TEST_RESCHED_PCS))
			sfu_cond_resched();
	}
	return bad;
}

/* The rule table answers as the section does. */
static void sfu_check_table(struct kunit *test, const u8 *buf, u64 len,
			    u8 abi, u64 step)
{
	struct sfu_section plain, tabled;
	struct sfu_rule rule;

	KUNIT_ASSERT_EQ(test, sfu_init(&plain, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_init(&tabled, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&tabled), 0);
	KUNIT_EXPECT_GT(test, sfu_table_bytes(&tabled), 0);
	KUNIT_EXPECT_EQ(test, sfu_table_diffs(&plain, &tabled, abi, step), 0);
	/* The module keeps the table alone: it answers the same. */
	sfu_section_strip(&tabled);
	KUNIT_EXPECT_EQ(test, sfu_section_bytes(&tabled),
			tabled.nr_elems * sizeof(*tabled.elems) +
			sfu_table_bytes(&tabled));
	KUNIT_EXPECT_EQ(test, sfu_table_diffs(&plain, &tabled, abi, step), 0);
	KUNIT_EXPECT_EQ(test, sfu_find_rule(&tabled, tabled.text_lo, &rule),
			-EFAULT);
	sfu_section_destroy(&plain);
	sfu_section_destroy(&tabled);
}

static void sfu_test_table(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	s64 len;
	u8 *buf = sfu_build(test, c, true, &len);

	sfu_check_table(test, buf, len, c->abi, 1);
	buf = sfu_build(test, c, false, &len);
	sfu_check_table(test, buf, len, c->abi, 1);
}

/* Functions of the table long section: the same rows each. */
#define SFU_TABLE_LONG_FUNCS	3

/*
 * Entries of @t a block's search compares that are out of address order
 * or outside their block: a block's entries after the one in force at its
 * start begin after its first byte and at most at its end.
 */
static u32 sfu_table_unordered(const struct sfu_table *t)
{
	u32 blk, i, first, last, lo, hi, bad = 0;

	for (blk = 0; blk < t->nr_blocks; blk++) {
		first = (u32)(((u64)blk << t->shift) &
			      (BIT(SFU_TABLE_PAGE_SHIFT) - 1));
		last = first + (1U << t->shift) - 1;
		sfu_table_block(t, blk, &lo, &hi);
		for (i = lo + 1; i <= hi; i++)
			bad += t->starts[i] < first || t->starts[i] > last ||
			       (i > lo + 1 && t->starts[i] <= t->starts[i - 1]);
	}
	return bad;
}

/*
 * Long functions' rows, through the table, at every 7th address.  The
 * functions have the same rows (V2, V3: the same FRE data, which a build
 * may decode only once: three times would be more than the section's rows
 * and functions, and get no table; V1: copies).
 */
static void sfu_test_table_long(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	u32 rows = SFU_MAX_FDE_FRES, nr = SFU_TABLE_LONG_FUNCS;
	struct sfu_section sec;
	s64 len;
	u8 *buf;

	len = sfu_test_long_section(c->version, c->abi, rows, nr,
				    SFU_TEST_LONG_TEXT, NULL, 0, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, len, 0);
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, sfu_test_long_section(c->version, c->abi, rows,
						    nr, SFU_TEST_LONG_TEXT,
						    buf, len, SFU_TEST_VADDR),
			len);
	sfu_check_table(test, buf, len, c->abi, 7);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&sec), 0);
	/* Every row an entry: each differs from the one before. */
	KUNIT_EXPECT_GE(test, sec.table->nr_rows, rows * nr);
	KUNIT_EXPECT_EQ(test, sfu_table_unordered(sec.table), 0);
	sfu_section_destroy(&sec);
}

/* Slots of @t's memo that hold an address. */
static u32 sfu_memo_used(const struct sfu_table *t)
{
	u32 i, used = 0;

	for (i = 0; i < sfu_table_memo_slots(t); i++)
		used += !!t->memo[i];
	return used;
}

/* The memo set of @pc in @sec's table. */
static u32 sfu_memo_set(const struct sfu_section *sec, u64 pc)
{
	return sfu_table_memo_hash(sec->table, pc - sec->text_lo + 1) &
	       ~(SFU_TABLE_MEMO_WAYS - 1);
}

/* Whether slot @slot of @sec's memo holds @pc and its rule. */
static bool sfu_memo_holds(const struct sfu_section *sec, u32 slot, u64 pc)
{
	u64 e = sec->table->memo[slot];

	return e >> SFU_TABLE_MEMO_KEY_SHIFT == pc - sec->text_lo + 1 &&
	       &sec->table->rules[(u32)e] == sfu_table_find(sec, pc);
}

/*
 * The memo of return addresses: the first addresses of a set looked up
 * fill its slots, which then answer them; one more of the set is still
 * answered (by the search) and changes nothing, unless its salt picks it
 * to renew the set, when it takes the slot the salt names; outside the
 * text nothing is found or remembered.
 */
static void sfu_test_table_memo(struct kunit *test)
{
	const u32 renew = SFU_TABLE_MEMO_RENEW - 1;
	const struct sfu_case *c = test->param_value;
	u64 pcs[SFU_TABLE_MEMO_WAYS + 1], pc;
	const struct sfu_rule *found;
	const struct sfu_table *t;
	struct sfu_section sec;
	u32 set, i, n = 0;
	s64 len;
	u8 *buf;

	buf = sfu_build(test, c, true, &len);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&sec), 0);
	t = sec.table;
	KUNIT_EXPECT_EQ(test, sfu_memo_used(t), 0);
	KUNIT_EXPECT_TRUE(test,
			  !sfu_table_find_return(&sec, sec.text_lo - 1, renew));
	KUNIT_EXPECT_TRUE(test,
			  !sfu_table_find_return(&sec, sec.text_hi, renew));
	KUNIT_EXPECT_EQ(test, sfu_memo_used(t), 0);
	set = sfu_memo_set(&sec, sec.text_lo);
	for (pc = sec.text_lo; pc < sec.text_hi && n < ARRAY_SIZE(pcs); pc++)
		if (sfu_table_find(&sec, pc) && sfu_memo_set(&sec, pc) == set)
			pcs[n++] = pc;
	KUNIT_ASSERT_EQ(test, n, ARRAY_SIZE(pcs));
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_TRUE(test, sfu_table_find_return(&sec, pcs[i], 0) ==
					sfu_table_find(&sec, pcs[i]));
		KUNIT_EXPECT_EQ(test, sfu_memo_used(t),
				i < SFU_TABLE_MEMO_WAYS ? i + 1 :
				SFU_TABLE_MEMO_WAYS);
	}
	for (i = 0; i < SFU_TABLE_MEMO_WAYS; i++)
		KUNIT_EXPECT_TRUE(test, sfu_memo_holds(&sec, set + i, pcs[i]));
	/* A salt that renews, naming the second slot. */
	found = sfu_table_find_return(&sec, pcs[2],
				      renew + SFU_TABLE_MEMO_RENEW);
	KUNIT_EXPECT_TRUE(test, found == sfu_table_find(&sec, pcs[2]));
	KUNIT_EXPECT_TRUE(test, sfu_memo_holds(&sec, set, pcs[0]));
	KUNIT_EXPECT_TRUE(test, sfu_memo_holds(&sec, set + 1, pcs[2]));
	KUNIT_EXPECT_TRUE(test, sfu_table_find_return(&sec, pcs[1], 0) ==
				sfu_table_find(&sec, pcs[1]));
	sfu_section_destroy(&sec);
}

/* Functions of sfu_test_table_spill: three 64 KiB pages of text. */
#define SFU_TABLE_MANY_FUNCS	(3 * 256)

/*
 * More distinct rules than one-byte codes: the rules past them are found
 * in the spill list, and the table answers as the section at every
 * address, across its 64 KiB pages.
 */
static void sfu_test_table_spill(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	u32 nr = SFU_TABLE_MANY_FUNCS;
	struct sfu_section sec;
	s64 len;
	u8 *buf;

	len = sfu_test_many_rules(c->version, c->abi, nr, NULL, 0);
	KUNIT_ASSERT_GT(test, len, 0);
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, sfu_test_many_rules(c->version, c->abi, nr, buf,
						  len),
			len);
	sfu_check_table(test, buf, len, c->abi, 1);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&sec), 0);
	KUNIT_EXPECT_EQ(test, sec.table->nr_rules, nr + 1);
	/* One rule for every first row, the most used: it has a code. */
	KUNIT_EXPECT_EQ(test, sec.table->nr_spill,
			nr + 1 - SFU_TABLE_CODE_NONE);
	KUNIT_EXPECT_EQ(test, sec.table->rules[0].cfa.off, 8);
	KUNIT_EXPECT_TRUE(test, !sec.table->wide);
	KUNIT_EXPECT_EQ(test, sfu_table_unordered(sec.table), 0);
	/* An entry that is not in the list has no rule there. */
	KUNIT_EXPECT_TRUE(test, !sfu_table_spilled(sec.table, 0, 0));
	sfu_section_destroy(&sec);
}

/*
 * Spills that crowd a group: the table keeps every entry's rule number
 * instead of the spill list, and answers as the section at every address.
 * The many-rules section of sfu_test_table_spill() keeps its list.
 */
static void sfu_test_table_wide(struct kunit *test)
{
	static const struct sfu_test_crowd crowd = {
		.rows = SFU_TEST_CROWDED_ROWS,
		.rules = SFU_TEST_CROWDED_ROWS,
		.gap = SFU_TEST_CROWDED_GAP,
	};
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	s64 len;
	u8 *buf;

	len = sfu_test_crowded(c->version, c->abi, &crowd, NULL, 0);
	KUNIT_ASSERT_GT(test, len, 0);
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, sfu_test_crowded(c->version, c->abi, &crowd, buf,
					       len),
			len);
	sfu_check_table(test, buf, len, c->abi, 1);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&sec), 0);
	KUNIT_EXPECT_TRUE(test, sec.table->wide);
	KUNIT_EXPECT_EQ(test, sec.table->nr_spill, 0);
	KUNIT_EXPECT_EQ(test, sec.table->nr_rules, SFU_TEST_CROWDED_ROWS);
	KUNIT_EXPECT_EQ(test, sec.table->shift, SFU_TABLE_PAGE_SHIFT);
	sfu_section_destroy(&sec);
}

/*
 * Distinct rules a table holds at most: rule numbers are u16 and U16_MAX
 * marks no rule (table.c).
 */
#define SFU_TEST_MOST_RULES	U16_MAX

/* Functions whose second rows give @rules distinct rules; their section. */
static u8 *sfu_test_rules_section(struct kunit *test, u32 rules, s64 *len)
{
	u8 abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	s64 made;
	u8 *buf;

	*len = sfu_test_many_rules(SFRAME_VERSION_3, abi, rules - 1, NULL, 0);
	KUNIT_ASSERT_GT(test, *len, 0);
	buf = sfu_alloc_array(*len, 1);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	made = sfu_test_many_rules(SFRAME_VERSION_3, abi, rules - 1, buf, *len);
	if (made != *len)
		sfu_free(buf);
	KUNIT_ASSERT_EQ(test, made, *len);
	return buf;
}

/*
 * As many distinct rules as a table holds: the build's rule hash grows
 * to its last size (once not a power of two, and its probes then went
 * round a part of it for ever), and the table answers as the section.
 * One rule more gets no table.
 */
static void sfu_test_table_most_rules(struct kunit *test)
{
	struct sfu_section sec;
	s64 len;
	u8 *buf;

	buf = sfu_test_rules_section(test, SFU_TEST_MOST_RULES, &len);
	sfu_check_table(test, buf, len, SFRAME_ABI_AMD64_ENDIAN_LITTLE,
			SFU_TEST_MANY_SIZE * 16 + 1);
	KUNIT_EXPECT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_EXPECT_EQ(test, sfu_table_build(&sec), 0);
	KUNIT_EXPECT_EQ(test, sec.table ? sec.table->nr_rules : 0,
			SFU_TEST_MOST_RULES);
	sfu_section_destroy(&sec);
	sfu_free(buf);

	buf = sfu_test_rules_section(test, SFU_TEST_MOST_RULES + 1, &len);
	KUNIT_EXPECT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_EXPECT_EQ(test, sfu_table_build(&sec), -E2BIG);
	KUNIT_EXPECT_TRUE(test, !sec.table);
	sfu_section_destroy(&sec);
	sfu_free(buf);
}

/* Store @v little-endian at @p. */
static void sfu_put_le32(u8 *p, u32 v)
{
	unsigned int i;

	for (i = 0; i < sizeof(v); i++)
		p[i] = (u8)(v >> (8 * i));
}

/*
 * Functions that point to the same FRE data but read different numbers
 * of rows from it: each is decoded, and together they are more than the
 * section's rows, which bounds a build.  The table is refused (-E2BIG);
 * the section still answers.
 */
static void sfu_test_table_bound(struct kunit *test)
{
	u32 rows = SFU_MAX_FDE_FRES, nr = SFU_TABLE_LONG_FUNCS, i;
	u8 abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	struct sfu_section sec;
	struct sfu_rule rule;
	u8 *buf, *fde;
	s64 len;

	len = sfu_test_long_section(SFRAME_VERSION_2, abi, rows, nr,
				    SFU_TEST_LONG_TEXT, NULL, 0, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, len, 0);
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, sfu_test_long_section(SFRAME_VERSION_2, abi,
						    rows, nr,
						    SFU_TEST_LONG_TEXT, buf,
						    len, SFU_TEST_VADDR),
			len);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	for (i = 1; i < nr; i++) {
		fde = buf + sec.elems[0].fde_off +
		      i * sizeof(struct sframe_fde_v2);
		sfu_put_le32(fde + offsetof(struct sframe_fde_v2,
					    sfde_func_num_fres), rows - i);
	}
	sfu_section_destroy(&sec);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_EXPECT_EQ(test, sfu_table_build(&sec), -E2BIG);
	KUNIT_EXPECT_TRUE(test, !sec.table);
	KUNIT_EXPECT_EQ(test, sfu_find_rule(&sec, SFU_TEST_LONG_TEXT + 1,
					    &rule), 0);
	sfu_section_destroy(&sec);
}

/* A corrupt row, or a section in user memory, gets no table. */
static void sfu_test_table_refused(struct kunit *test)
{
	const struct sfu_case *c = test->param_value;
	struct sfu_section sec;
	s64 len;
	u8 *buf = sfu_build(test, c, true, &len);

	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	sec.mem = SFU_MEM_USER;
	KUNIT_EXPECT_EQ(test, sfu_table_build(&sec), -EOPNOTSUPP);
	KUNIT_EXPECT_TRUE(test, !sec.table);
	sec.mem = SFU_MEM_KERNEL;
	/* Every FRE data byte 0xff: reserved bits, bad sizes, bad order. */
	memset(buf + sec.elems[0].fre_off, 0xff, sec.elems[0].fre_len);
	KUNIT_EXPECT_NE(test, sfu_table_build(&sec), 0);
	KUNIT_EXPECT_TRUE(test, !sec.table);
	sfu_section_destroy(&sec);
}

/* A section in the top page of the address space. */
#define SFU_TEST_TOP_VADDR	(U64_MAX & ~(u64)0xfff)

/*
 * Encode one function of @size bytes at @start, from a section in the top
 * page, into @buf; return its length.
 */
static s64 sfu_test_top_section(u8 *buf, u64 start, u32 size)
{
	static const struct sfu_enc_fre row = {
		.start = 0, .base = SFRAME_BASE_REG_SP, .nr_words = 1,
		.words = { 8 },
	};
	const struct sfu_enc_fde fde = {
		.start = start, .size = size, .nr_fres = 1, .fres = &row,
	};
	struct sfu_enc_params p = {
		.version = SFRAME_VERSION_2,
		.abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.fixed_ra = -8,
		.vaddr = SFU_TEST_TOP_VADDR,
		.fre_type = SFU_ENC_AUTO,
		.word_size = SFU_ENC_AUTO,
	};

	return sfu_encode(&p, &fde, 1, buf, SFU_TEST_BUF_SIZE);
}

/* Rule table and section disagreements at and around @start. */
static u32 sfu_test_top_diffs(struct kunit *test, const u8 *buf, s64 len,
			      u64 start, bool *found)
{
	static const u64 around[] = { 0, 1, 2, 0x10, 0x20 };
	struct sfu_section plain, tabled;
	u8 abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	struct sfu_rule rule;
	u32 bad = 0, i;

	KUNIT_ASSERT_EQ(test, sfu_section_init(&plain, (unsigned long)buf, len,
					       SFU_TEST_TOP_VADDR,
					       SFU_MEM_KERNEL, SFU_ABI_ANY), 0);
	KUNIT_ASSERT_EQ(test, sfu_section_init(&tabled, (unsigned long)buf,
					       len, SFU_TEST_TOP_VADDR,
					       SFU_MEM_KERNEL, SFU_ABI_ANY), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&tabled), 0);
	for (i = 0; i < ARRAY_SIZE(around); i++)
		bad += sfu_test_table_differs(&plain, &tabled, abi,
					      start - around[i]) +
		       sfu_test_table_differs(&plain, &tabled, abi,
					      start + around[i]);
	*found = !sfu_find_rule(&plain, start, &rule);
	sfu_section_destroy(&plain);
	sfu_section_destroy(&tabled);
	return bad;
}

/*
 * Functions at the top of the address space: one that runs past it ends
 * there, one at its last byte makes the text's end wrap to 0.  Lookups
 * and the table agree at and around them (the fuzzer found the table
 * answering at U64_MAX where the lookup did not).
 */
static void sfu_test_table_top(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, SFU_TEST_BUF_SIZE, GFP_KERNEL);
	u64 past = U64_MAX - 0xf;
	bool found;
	s64 len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = sfu_test_top_section(buf, past, 0x20);
	KUNIT_ASSERT_GT(test, len, 0);
	KUNIT_EXPECT_EQ(test, sfu_test_top_diffs(test, buf, len, past, &found),
			0);
	KUNIT_EXPECT_TRUE(test, found);
	len = sfu_test_top_section(buf, U64_MAX, 0x10);
	KUNIT_ASSERT_GT(test, len, 0);
	KUNIT_EXPECT_EQ(test, sfu_test_top_diffs(test, buf, len, U64_MAX,
						 &found), 0);
	KUNIT_EXPECT_TRUE(test, found);
}

static const struct sfu_case sfu_long_cases[] = {
	{ 1, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "v1-amd64" },
	{ 2, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "v2-amd64" },
	{ 2, SFRAME_ABI_AARCH64_ENDIAN_BIG, "v2-aarch64be" },
	{ 3, SFRAME_ABI_AMD64_ENDIAN_LITTLE, "v3-amd64" },
	{ 3, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, "v3-aarch64" },
};

KUNIT_ARRAY_PARAM(sfu_long, sfu_long_cases, sfu_case_desc);

/*
 * An FDE without rows may point where its neighbour's rows start (gas and
 * ld write such sections); it shares nothing with it.
 */
static void sfu_test_empty_fde_offset(struct kunit *test)
{
	static const struct sfu_enc_fre rows[] = {
		{ .start = 0, .base = SFRAME_BASE_REG_SP, .nr_words = 1,
		  .words = { 8 } },
		{ .start = 0x200, .base = SFRAME_BASE_REG_SP, .nr_words = 1,
		  .words = { 16 } },
	};
	const struct sfu_enc_fde fdes[] = {
		{ .start = SFU_TEST_F_ROWS, .size = 0x10 },
		{ .start = SFU_TEST_F_ROWS + 0x10, .size = 0x1000,
		  .nr_fres = ARRAY_SIZE(rows), .fres = rows },
	};
	u8 *buf = kunit_kzalloc(test, SFU_TEST_BUF_SIZE, GFP_KERNEL);
	struct sfu_enc_params p = {
		.version = SFRAME_VERSION_2,
		.abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.fixed_ra = -8,
		.vaddr = SFU_TEST_VADDR,
		.fre_type = SFU_ENC_AUTO,
		.word_size = SFU_ENC_AUTO,
	};
	struct sfu_section sec;
	struct sfu_fde a, b;
	s64 len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = sfu_encode(&p, fdes, ARRAY_SIZE(fdes), buf, SFU_TEST_BUF_SIZE);
	KUNIT_ASSERT_GT(test, len, 0);
	KUNIT_ASSERT_EQ(test, sfu_init(&sec, buf, len), 0);
	KUNIT_ASSERT_EQ(test, sfu_read_fde(&sec, &sec.elems[0], 0, &a), 0);
	KUNIT_ASSERT_EQ(test, sfu_read_fde(&sec, &sec.elems[0], 1, &b), 0);
	/* The case at hand: same offset, different row layout. */
	KUNIT_EXPECT_EQ(test, a.fres_off, b.fres_off);
	KUNIT_EXPECT_NE(test, a.fre_type, b.fre_type);
	KUNIT_EXPECT_EQ(test, sfu_section_validate(&sec), 0);
	sfu_section_destroy(&sec);
}

/* Bytes of the build-ids the note tests write; GNU ld's SHA-1 has 20. */
#define SFU_TEST_ID_LEN		20
/* A note's header: name size, descriptor size, type. */
#define SFU_TEST_NHDR		(3 * sizeof(u32))
/* Note names and descriptors are padded to this. */
#define SFU_TEST_NOTE_PAD	4

static size_t sfu_test_note_pad(size_t n)
{
	return (n + SFU_TEST_NOTE_PAD - 1) & ~(size_t)(SFU_TEST_NOTE_PAD - 1);
}

static u32 sfu_test_word(u32 v, bool swap)
{
	return swap ? swab32(v) : v;
}

/* Write a note at @at of @buf; return where the next one goes. */
static size_t sfu_test_note(u8 *buf, size_t at, u32 type, const char *name,
			    u32 desc_len, u8 fill, bool swap)
{
	u32 h[3] = { sfu_test_word(strlen(name) + 1, swap),
		     sfu_test_word(desc_len, swap), sfu_test_word(type, swap) };
	size_t name_len = sfu_test_note_pad(strlen(name) + 1);

	memcpy(buf + at, h, sizeof(h));
	memcpy(buf + at + sizeof(h), name, strlen(name) + 1);
	memset(buf + at + sizeof(h) + name_len, fill, desc_len);
	return at + sizeof(h) + name_len + sfu_test_note_pad(desc_len);
}

/*
 * The build-id note parser that kernel/elf.c and the host tools share:
 * found after other notes, in either byte order; not found when it is too
 * long for the room given, truncated, of another owner or past the bytes
 * it searches.
 */
static void sfu_test_build_id_note(struct kunit *test)
{
	const size_t size = SFU_NOTES_MAX + SFU_TEST_NHDR * 4;
	u8 *buf = kunit_kzalloc(test, size, GFP_KERNEL);
	u8 id[SFU_TEST_ID_LEN + 1], want[SFU_TEST_ID_LEN];
	size_t end, at;
	int swap;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(want, 0xab, sizeof(want));
	for (swap = 0; swap < 2; swap++) {
		memset(buf, 0, size);
		at = sfu_test_note(buf, 0, 1, "GNU", 16, 0x11, swap);
		end = sfu_test_note(buf, at, SFU_NT_GNU_BUILD_ID, "GNU",
				    SFU_TEST_ID_LEN, 0xab, swap);
		KUNIT_EXPECT_EQ(test, sfu_note_build_id(buf, end, swap, id,
							sizeof(id)),
				SFU_TEST_ID_LEN);
		KUNIT_EXPECT_EQ(test, memcmp(id, want, sizeof(want)), 0);
		KUNIT_EXPECT_EQ(test, sfu_note_build_id(buf, end, !swap, id,
							sizeof(id)), 0);
		KUNIT_EXPECT_EQ(test, sfu_note_build_id(buf, end, swap, id,
							SFU_TEST_ID_LEN - 1),
				0);
		KUNIT_EXPECT_EQ(test, sfu_note_build_id(buf, end - 1, swap, id,
							sizeof(id)), 0);
	}
	sfu_test_note(buf, 0, SFU_NT_GNU_BUILD_ID, "XNU", SFU_TEST_ID_LEN,
		      0xab, false);
	KUNIT_EXPECT_EQ(test, sfu_note_build_id(buf, size, false, id,
						sizeof(id)), 0);
	/* A filler note up to the searched bytes' end, then the build-id. */
	at = sfu_test_note(buf, 0, 1, "GNU",
			   SFU_NOTES_MAX - SFU_TEST_NHDR - SFU_TEST_NOTE_PAD,
			   0x22, false);
	KUNIT_ASSERT_EQ(test, at, (size_t)SFU_NOTES_MAX);
	sfu_test_note(buf, at, SFU_NT_GNU_BUILD_ID, "GNU", SFU_TEST_ID_LEN,
		      0xab, false);
	KUNIT_EXPECT_EQ(test, sfu_note_build_id(buf, size, false, id,
						sizeof(id)), 0);
}

#ifdef __KERNEL__
/*
 * The decoder's arrays above kmalloc's largest size class are whole
 * vmalloc() pages, not the power-of-two blocks of pages kmalloc() would
 * take (make memory); a count whose bytes overflow gets no memory.
 */
static void sfu_test_alloc(struct kunit *test)
{
	void *small = sfu_alloc_array(KMALLOC_MAX_CACHE_SIZE, 1);
	void *big = sfu_alloc_array(KMALLOC_MAX_CACHE_SIZE / 8 + 1, 8);

	KUNIT_EXPECT_NOT_NULL(test, small);
	KUNIT_EXPECT_NOT_NULL(test, big);
	KUNIT_EXPECT_FALSE(test, is_vmalloc_addr(small));
	KUNIT_EXPECT_TRUE(test, is_vmalloc_addr(big));
	KUNIT_EXPECT_NULL(test, sfu_alloc_array(SIZE_MAX / 2 + 1, 2));
	sfu_free(small);
	sfu_free(big);
}
#endif

static struct kunit_case sfu_decode_cases[] = {
	KUNIT_CASE_PARAM(sfu_test_rules, sfu_case_gen_params),
	KUNIT_CASE(sfu_test_zero_tail),
	KUNIT_CASE_PARAM(sfu_test_unsorted, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_concat, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_truncate, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_mutate, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_mutate_live, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_malformed, sfu_patch_gen_params),
	KUNIT_CASE(sfu_test_abi_mismatch),
	KUNIT_CASE(sfu_test_sorted_lie),
	KUNIT_CASE(sfu_test_s390x_bad_reg),
	KUNIT_CASE(sfu_test_sp_word),
	KUNIT_CASE_PARAM(sfu_test_long_function, sfu_long_gen_params),
	KUNIT_CASE(sfu_test_empty_fde_offset),
	KUNIT_CASE_PARAM(sfu_test_table, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_table_long, sfu_long_gen_params),
	KUNIT_CASE_PARAM(sfu_test_table_memo, sfu_case_gen_params),
	KUNIT_CASE_PARAM(sfu_test_table_spill, sfu_long_gen_params),
	KUNIT_CASE_PARAM(sfu_test_table_wide, sfu_long_gen_params),
	KUNIT_CASE_PARAM(sfu_test_table_refused, sfu_case_gen_params),
	KUNIT_CASE(sfu_test_table_bound),
	KUNIT_CASE(sfu_test_table_most_rules),
	KUNIT_CASE(sfu_test_table_top),
	KUNIT_CASE(sfu_test_build_id_note),
#ifdef __KERNEL__
	KUNIT_CASE(sfu_test_alloc),
#endif
	{}
};

static struct kunit_suite sfu_decode_suite = {
	.name = "sframe_decode",
	.test_cases = sfu_decode_cases,
};

kunit_test_suite(sfu_decode_suite);
