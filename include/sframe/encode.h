/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame encoder: writes V1, V2 and V3 sections for any ABI from a plain
 * description of functions and rows.  The test suites, the fuzzer seeds,
 * the benchmark and the host tools build their sections with it.
 */
#ifndef _SFRAME_ENCODE_H
#define _SFRAME_ENCODE_H

#include "format.h"

#define SFU_ENC_AUTO	0xff

struct sfu_enc_fre {
	u32 start;		/* offset from the function (or block) start */
	u8 base;		/* SFRAME_BASE_REG_SP or SFRAME_BASE_REG_FP */
	bool mangled;		/* AArch64: RA signed */
	u8 nr_words;
	u8 ctrl_mask;		/* bit i: word i is an unsigned control word */
	s32 words[SFU_FRE_MAX_WORDS];
};

struct sfu_enc_fde {
	u64 start;		/* absolute function start address */
	u32 size;
	u8 pc_type;		/* SFRAME_FDE_TYPE_PCINC or _PCMASK */
	u8 rep_size;		/* PCMASK block size (V2, V3) */
	u8 fde_type;		/* V3: SFRAME_FDE_TYPE_DEFAULT or _FLEX */
	bool signal;		/* V3 signal-frame bit */
	u8 pauth_key;		/* AArch64 key id */
	u32 nr_fres;
	const struct sfu_enc_fre *fres;
	/*
	 * 1 + the index of an earlier FDE whose rows (and, in V3, function
	 * attributes) this one has too: they are stored once.  0: its own.
	 */
	u32 share;
};

struct sfu_enc_params {
	u8 version;
	u8 abi;
	u8 flags;
	s8 fixed_fp;
	s8 fixed_ra;
	u8 auxhdr_len;
	bool foreign;		/* write the byte order the ABI does not use */
	u64 vaddr;		/* where the section will be in the target */
	u8 fre_type;		/* SFU_ENC_AUTO or SFRAME_FRE_TYPE_ADDR* */
	u8 word_size;		/* SFU_ENC_AUTO or SFRAME_FRE_DATAWORD_* */
	bool tight_starts;	/* AUTO FRE type by the last row, not the size */
};

/* Where the bytes of a section go (sfu_encode_sizes()). */
struct sfu_enc_sizes {
	u64 header;		/* header and auxiliary header */
	u64 index;		/* FDEs (V3: the function index) */
	u64 attrs;		/* V3 function attributes */
	u64 starts;		/* FRE start offsets */
	u64 infos;		/* FRE info bytes */
	u64 words;		/* FRE data words */
};

s64 sfu_encode(const struct sfu_enc_params *p, const struct sfu_enc_fde *fdes,
	       u32 nr_fdes, u8 *buf, size_t cap);
void sfu_encode_sizes(const struct sfu_enc_params *p,
		      const struct sfu_enc_fde *fdes, u32 nr_fdes,
		      struct sfu_enc_sizes *sz);

#endif /* _SFRAME_ENCODE_H */
