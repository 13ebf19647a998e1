// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame sections for the registry selftests, and the user-space decoder's
 * answer for an address, in the lookup file's line format.
 */
#include <inttypes.h>
#include <stdio.h>

#include <sframe/decode.h>

#include "enc.h"

#define MAX_FUNCS	64
#define AMD64_FIXED_RA	(-8)
#define AMD64_ENTRY_CFA	8
#define ROW2_GROWTH	16

/* The CFA's offset from SP at function entry, as the section stores it. */
static s32 entry_cfa_word(u8 abi, s32 extra)
{
	switch (abi) {
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		return AMD64_ENTRY_CFA + extra;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return SFRAME_S390X_CFA_OFFSET_ENCODE(-SFRAME_S390X_SP_VAL_OFFSET +
						      extra);
	default:
		return extra;
	}
}

/**
 * enc_test_build() - encode a section for @funcs
 * @version: SFrame version (2 or 3)
 * @abi: ABI id
 * @sorted: set SFRAME_F_FDE_SORTED (@funcs must then be in address order)
 * @funcs: the functions, written in this order
 * @nr: how many
 * @vaddr: the address the section will be read at
 * @buf: output
 * @cap: size of @buf
 *
 * Each function gets a row at its start (the entry rule) and one at
 * SFU_TEST_ROW2 with the CFA 16 bytes further.
 *
 * Return: the section size, or a negative error.
 */
s64 enc_test_build(u8 version, u8 abi, bool sorted,
		   const struct sfu_test_func *funcs, u32 nr, u64 vaddr,
		   u8 *buf, size_t cap)
{
	struct sfu_enc_fde fdes[MAX_FUNCS] = { 0 };
	struct sfu_enc_fre rows[2] = { 0 };
	struct sfu_enc_params p = { 0 };
	u32 i;

	if (nr > MAX_FUNCS)
		return -E2BIG;
	rows[0].base = SFRAME_BASE_REG_SP;
	rows[0].nr_words = 1;
	rows[0].words[0] = entry_cfa_word(abi, 0);
	rows[1] = rows[0];
	rows[1].start = SFU_TEST_ROW2;
	rows[1].words[0] = entry_cfa_word(abi, ROW2_GROWTH);
	for (i = 0; i < nr; i++) {
		fdes[i].start = funcs[i].start;
		fdes[i].size = funcs[i].size;
		fdes[i].pc_type = SFRAME_FDE_TYPE_PCINC;
		fdes[i].nr_fres = ARRAY_SIZE(rows);
		fdes[i].fres = rows;
	}
	p.version = version;
	p.abi = abi;
	p.flags = SFRAME_F_FDE_FUNC_START_PCREL;
	if (sorted)
		p.flags |= SFRAME_F_FDE_SORTED;
	if (abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		p.fixed_ra = AMD64_FIXED_RA;
	p.vaddr = vaddr;
	p.fre_type = SFU_ENC_AUTO;
	p.word_size = SFU_ENC_AUTO;
	return sfu_encode(&p, fdes, nr, buf, cap);
}

/**
 * enc_test_line() - what the lookup file should answer for @pc
 * @buf: a section of the native ABI
 * @len: its size
 * @vaddr: its address in the process
 * @pc: the address looked up
 * @line: output: "0x<pc>: <rule>" or "0x<pc>: error: <text>"
 * @n: size of @line
 */
void enc_test_line(const u8 *buf, size_t len, u64 vaddr, u64 pc,
		   char *line, size_t n)
{
	char rule_str[SFU_RULE_STR_MAX];
	struct sfu_section sec;
	struct sfu_rule rule;
	int ret;

	ret = sfu_section_init(&sec, (unsigned long)buf, len, vaddr,
			       SFU_MEM_KERNEL, sfu_native_abi());
	if (!ret) {
		ret = sfu_find_rule(&sec, pc, &rule);
		sfu_section_destroy(&sec);
	}
	if (ret) {
		snprintf(line, n, "0x%" PRIx64 ": error: %s", pc,
			 sfu_strerror(ret));
		return;
	}
	sfu_rule_format(&rule, sfu_native_abi(), rule_str, sizeof(rule_str));
	snprintf(line, n, "0x%" PRIx64 ": %s", pc, rule_str);
}
