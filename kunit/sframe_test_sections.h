/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference SFrame sections for the tests, the fuzzer seeds and the
 * benchmark, built with the project's encoder.
 */
#ifndef _SFRAME_TEST_SECTIONS_H
#define _SFRAME_TEST_SECTIONS_H

#include <sframe/encode.h>

#define SFU_TEST_VADDR		0x10000
#define SFU_TEST_BUF_SIZE	4096

/* Function starts of the reference section. */
#define SFU_TEST_F_ROWS		0x1000	/* three rows, SP then FP based */
#define SFU_TEST_F_MASK		0x1040	/* PCMASK, 16-byte blocks */
#define SFU_TEST_F_LAST		0x1100	/* outermost (V2, V3) */
#define SFU_TEST_F_EXTRA	0x1200	/* V3 flex, or s390x V2 regs */
#define SFU_TEST_SP_WORD	0x10	/* V3: its row with the SP word */
/* A flexible row's control words: those of the CFA, RA and FP pairs. */
#define SFU_TEST_FLEX_CTRL_WORDS	0x15
#define SFU_TEST_F_SIGNAL	0x1300	/* V3: no rows, signal bit */
#define SFU_TEST_F_EMPTY	0x1310	/* V3: no rows */
#define SFU_TEST_F_BIG		0x1400	/* 4-byte FRE starts and words */
#define SFU_TEST_BIG_SIZE	0x20000
#define SFU_TEST_BIG_OFF2	0x1238	/* needs 2-byte words */
#define SFU_TEST_BIG_OFF4	0x123458	/* needs 4-byte words */

s64 sfu_test_std_section(u8 version, u8 abi, bool sorted, u8 *buf,
			 size_t cap, u64 vaddr);
/* sfu_test_frames_section(): each frame's size, each function's. */
#define SFU_TEST_FRAME		256
#define SFU_TEST_FUNC_SIZE	0x100
/* Its function 1 realigns: the CFA is a saved word plus SFU_TEST_SP_ADD. */
#define SFU_TEST_REALIGNED	1
#define SFU_TEST_SP_SLOT	16
#define SFU_TEST_SP_ADD		8

s64 sfu_test_frames_section(u8 abi, u64 text, u32 nr_funcs, u8 *buf,
			    size_t cap, u64 vaddr);
s32 sfu_test_ra_slot(u8 abi);
s32 sfu_test_fp_slot(u8 abi);
/* sfu_test_long_section(): functions of many one-byte rows. */
#define SFU_TEST_LONG_TEXT	0x100000
#define SFU_TEST_LONG_SIZE(rows)	((rows) + 16)

static inline s32 sfu_test_long_cfa(u32 row)
{
	return 16 + 8 * (row % 61);
}

/* sfu_test_many_rules(): functions of two rows, each second one its own. */
#define SFU_TEST_MANY_SIZE	256

static inline s32 sfu_test_many_cfa(u32 fn)
{
	return 16 + 8 * fn;
}

s64 sfu_test_many_rules(u8 version, u8 abi, u32 nr_fdes, u8 *buf,
			size_t cap);
/*
 * sfu_test_crowded(): a function of one-byte rows whose rules take turns,
 * and one more far enough away that the table's blocks span 256 bytes.
 */
struct sfu_test_crowd {
	u32 rows;	/* of the long function, one byte each */
	u32 rules;	/* distinct among them: row i has rule i % rules */
	u64 gap;	/* from its start to the one-row function's */
};

#define SFU_TEST_CROWDED_ROWS	4096
#define SFU_TEST_CROWDED_GAP	(64 * SFU_TEST_CROWDED_ROWS)
s64 sfu_test_crowded(u8 version, u8 abi, const struct sfu_test_crowd *crowd,
		     u8 *buf, size_t cap);
s64 sfu_test_long_section(u8 version, u8 abi, u32 nr_rows, u32 nr_funcs,
			  u64 text, u8 *buf, size_t cap, u64 vaddr);
s64 sfu_test_synthetic(u8 version, u8 abi, u32 nr_fdes, u32 func_size,
		       bool distinct, u8 *buf, size_t cap);
struct sfu_section;
bool sfu_test_table_differs(struct sfu_section *plain,
			    const struct sfu_section *tabled, u8 abi, u64 pc);

#endif /* _SFRAME_TEST_SECTIONS_H */
