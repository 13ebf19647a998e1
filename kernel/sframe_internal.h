/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoder internals shared by the decoder's own files; not an API.
 */
#ifndef _SFRAME_INTERNAL_H
#define _SFRAME_INTERNAL_H

#include "../include/sframe/decode.h"

int sfu_parse_elems(struct sfu_section *sec, enum sfu_mem mode);
void sfu_fde_head(const struct sfu_section *sec, struct sfu_fde *fde,
		  const u8 *b);

#endif /* _SFRAME_INTERNAL_H */
