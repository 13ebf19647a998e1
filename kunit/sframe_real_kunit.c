// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite: the rule table against the section's own lookup, on the
 * sidecars of real Debian files of the three architectures (libc,
 * python3, libcrypto and libstdc++ of each of x86-64, arm64 and s390x),
 * at every row of every function.
 *
 * tools/testing/kunit/kunit.sh makes the sidecars with sframe-gen as
 * sframectl would and links them in (sframe_real_sections.S, which it
 * generates), so the table's build and lookup run as this architecture's
 * kernel code on what the synthetic sections of sframe_decode_kunit.c
 * lack: a real mix of rules, spill lists, PLT repetitions, gaps between
 * functions.  The host compares the same files at every address (make
 * check-table).
 */
#include <kunit/test.h>
#include <linux/sched.h>
#include <linux/string.h>

#include <sframe/decode.h>
#include <sframe/table.h>

#include "sframe_real_sections.h"
#include "sframe_test_sections.h"

/* Functions between two chances to reschedule. */
#define SFU_REAL_RESCHED	256

static const u8 *sfu_real_at(s64 off)
{
	return (const u8 *)sfu_real_sections + off;
}

static const void *sfu_real_gen_params(const void *prev, char *desc)
{
	const struct sfu_real_section *r = prev;

	r = r ? r + 1 : sfu_real_sections;
	if (r >= sfu_real_sections + sfu_real_nr)
		return NULL;
	strscpy(desc, sfu_real_at(r->name), KUNIT_PARAM_DESC_SIZE);
	return r;
}

/*
 * Differences at @fde's rows and the byte before each, its last byte and
 * its end; *@nr counts the addresses asked.
 */
static u32 sfu_real_fn_diffs(struct sfu_section *plain,
			     const struct sfu_section *tabled,
			     const struct sfu_fde *fde, u64 *nr)
{
	u64 end = fde->start + fde->size, pc;
	u8 abi = plain->elems[0].abi;
	struct sfu_fre_iter it;
	struct sfu_fre fre;
	u32 bad;

	bad = sfu_test_table_differs(plain, tabled, abi, end - 1) +
	      sfu_test_table_differs(plain, tabled, abi, end);
	*nr += 2;
	sfu_fre_iter_init(fde, &it);
	while (!sfu_fre_next(plain, fde, &it, &fre)) {
		pc = fde->start + fre.start;
		bad += sfu_test_table_differs(plain, tabled, abi, pc - 1) +
		       sfu_test_table_differs(plain, tabled, abi, pc);
		*nr += 2;
	}
	return bad;
}

static void sfu_real_test_table(struct kunit *test)
{
	const struct sfu_real_section *r = test->param_value;
	unsigned long base = (unsigned long)sfu_real_at(r->start);
	u64 len = r->end - r->start, nr = 0;
	struct sfu_section plain, tabled;
	const struct sfu_elem *e;
	struct sfu_fde fde;
	u32 i, bad = 0;

	KUNIT_ASSERT_EQ(test, sfu_section_init(&plain, base, len,
					       SFU_TEST_VADDR, SFU_MEM_KERNEL,
					       SFU_ABI_ANY), 0);
	KUNIT_ASSERT_EQ(test, sfu_section_init(&tabled, base, len,
					       SFU_TEST_VADDR, SFU_MEM_KERNEL,
					       SFU_ABI_ANY), 0);
	KUNIT_ASSERT_EQ(test, sfu_table_build(&tabled), 0);
	/* As the module keeps it: the table alone. */
	sfu_section_strip(&tabled);
	for (e = plain.elems; e < plain.elems + plain.nr_elems; e++) {
		for (i = 0; i < e->num_fdes; i++) {
			if (sfu_read_fde(&plain, e, i, &fde))
				bad++;
			else
				bad += sfu_real_fn_diffs(&plain, &tabled, &fde,
							 &nr);
			if (!(i % SFU_REAL_RESCHED))
				cond_resched();
		}
	}
	kunit_info(test, "%s: %llu addresses, %u differ (%u functions, %u entries, %u rules, %u spilled, %zu bytes)\n",
		   sfu_real_at(r->name), nr, bad, plain.nr_fdes,
		   tabled.table->nr_rows, tabled.table->nr_rules,
		   tabled.table->nr_spill, sfu_table_bytes(&tabled));
	KUNIT_EXPECT_GT(test, nr, 0);
	KUNIT_EXPECT_EQ(test, bad, 0);
	sfu_section_destroy(&plain);
	sfu_section_destroy(&tabled);
}

static struct kunit_case sfu_real_cases[] = {
	KUNIT_CASE_PARAM(sfu_real_test_table, sfu_real_gen_params),
	{}
};

static struct kunit_suite sfu_real_suite = {
	.name = "sframe_real",
	.test_cases = sfu_real_cases,
};

kunit_test_suite(sfu_real_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the sframe-unwind rule table on real sections");
