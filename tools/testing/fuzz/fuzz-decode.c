// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: section set-up, full validation and lookups on
 * arbitrary bytes.  The first 8 input bytes pick the section address and
 * the expected ABI; lookups probe the start, middle and end of the text the
 * index covers and addresses derived from the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sframe/table.h>

#define FUZZ_HDR	8
#define FUZZ_PROBES	16

static void fuzz_lookups(struct sfu_section *sec, const uint8_t *data,
			 size_t size)
{
	char buf[SFU_RULE_STR_MAX];
	struct sfu_rule rule;
	u64 span = sec->text_hi - sec->text_lo, pc;
	unsigned int i;

	for (i = 0; i < FUZZ_PROBES; i++) {
		pc = sec->text_lo + (span ? (span * i) / FUZZ_PROBES : 0);
		if (i < size)
			pc += data[i];
		if (!sfu_find_rule(sec, pc, &rule))
			sfu_rule_format(&rule, sec->elems[0].abi, buf,
					sizeof(buf));
	}
	sfu_find_rule(sec, sec->text_hi - 1, &rule);
	sfu_find_rule(sec, sec->text_lo - 1, &rule);
}

/* Say where and how the table and the section differ, then trap. */
static void fuzz_differ(const struct sfu_section *sec, u64 pc, int ra,
			const struct sfu_rule *a, const struct sfu_rule *b,
			u8 abi)
{
	char want[SFU_RULE_STR_MAX] = "-", got[SFU_RULE_STR_MAX] = "none";

	if (!ra)
		sfu_rule_format(a, abi, want, sizeof(want));
	if (b)
		sfu_rule_format(b, abi, got, sizeof(got));
	fprintf(stderr,
		"fuzz-decode: table and section differ at pc %#llx (text %#llx..%#llx): section %d %s, table %s\n",
		(unsigned long long)pc, (unsigned long long)sec->text_lo,
		(unsigned long long)sec->text_hi, ra, want, got);
	__builtin_trap();
}

/* A rule table, where one can be built, answers as the section does. */
static void fuzz_table(struct sfu_section *sec, const uint8_t *data,
		       size_t size, u64 vaddr, u8 abi)
{
	struct sfu_section t;
	const struct sfu_rule *b;
	struct sfu_rule a;
	u64 span = sec->text_hi - sec->text_lo, pc;
	unsigned int i;
	int ra;

	if (sfu_section_init(&t, (unsigned long)data, size, vaddr,
			     SFU_MEM_KERNEL, abi))
		__builtin_trap();	/* it was accepted a moment ago */
	if (sfu_table_build(&t)) {
		sfu_section_destroy(&t);
		return;
	}
	for (i = 0; i <= FUZZ_PROBES; i++) {
		pc = sec->text_lo + (span ? (span * i) / FUZZ_PROBES : 0);
		if (i < size)
			pc += data[i];
		memset(&a, 0, sizeof(a));
		ra = sfu_find_rule(sec, pc, &a);
		b = sfu_table_find(&t, pc);
		if (b != sfu_table_find_return(&t, pc,
					       SFU_TABLE_MEMO_RENEW - 1) ||
		    b != sfu_table_find_return(&t, pc, 0) ||
		    !ra != !!b || (b && memcmp(&a, b, sizeof(a))))
			fuzz_differ(sec, pc, ra, &a, b, sec->elems[0].abi);
	}
	sfu_section_destroy(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sfu_section sec;
	u64 vaddr;
	u8 abi;

	if (size < FUZZ_HDR)
		return 0;
	memcpy(&vaddr, data, sizeof(vaddr));
	/* Low bits select the ABI filter; keep the address page aligned. */
	abi = (u8)(vaddr & 0x7) > SFRAME_ABI_S390X_ENDIAN_BIG ?
	      SFU_ABI_ANY : (u8)(vaddr & 0x7);
	vaddr &= ~0xfffull;
	data += FUZZ_HDR;
	size -= FUZZ_HDR;
	if (sfu_section_init(&sec, (unsigned long)data, size, vaddr,
			     SFU_MEM_KERNEL, abi))
		return 0;
	sfu_section_validate(&sec);
	fuzz_lookups(&sec, data, size);
	fuzz_table(&sec, data, size, vaddr, abi);
	sfu_section_destroy(&sec);
	return 0;
}
