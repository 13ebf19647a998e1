/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Re-encoding of an SFrame section: decode any valid V1, V2 or V3 section
 * into the encoder's description (struct sfu_enc_fde, struct sfu_enc_fre),
 * so that sfu_encode() can write it again as V3 with the same rule at every
 * address.  Meant for upgrading the V1 sections of binutils 2.40.
 */
#ifndef _SCRIPTS_SFRAME_REENC_H
#define _SCRIPTS_SFRAME_REENC_H

#include <stddef.h>

#include <sframe/encode.h>

/* A decoded section, ready for sfu_encode(). */
struct reenc {
	/* Header facts of the source (its first element). */
	u8 version;
	u8 abi;
	u8 flags;
	s8 fixed_fp;
	s8 fixed_ra;
	u32 nr_elems;
	/* The functions, by start address (ties in section order). */
	u32 nr_fdes;
	struct sfu_enc_fde *fdes;
	/* The rows the functions' fres pointers point into. */
	u32 nr_fres;
	struct sfu_enc_fre *fres;
};

int reenc_load(const u8 *sec, size_t len, u64 vaddr, struct reenc *out,
	       char *err, size_t errlen);
void reenc_free(struct reenc *r);
void reenc_v3_params(const struct reenc *r, u64 vaddr,
		     struct sfu_enc_params *p);

#endif /* _SCRIPTS_SFRAME_REENC_H */
