/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The .eh_frame reader's internals, shared by eh-frame.c (records, CIEs,
 * FDEs, pointer encodings, the ELF file) and eh-cfi.c (the CFI
 * interpreter).  Not an interface: eh-frame.h is.
 */
#ifndef _EH_FRAME_INTERNAL_H
#define _EH_FRAME_INTERNAL_H

#include "eh-frame.h"

/* A cursor over the bytes of one record: reads stop at @end. */
struct ehf_cur {
	struct ehf_section *s;
	u64 pos;
	u64 end;
};

int ehf_fail(struct ehf_section *s, u64 off, const char *what, int err);
int ehf_bad(struct ehf_section *s, u64 off, const char *what);
int ehf_get(struct ehf_cur *c, unsigned int n, u64 *v, const char *what);
int ehf_get_ptr(struct ehf_cur *c, u8 enc, u64 *v);
int ehf_get_reg(struct ehf_cur *c, u32 *reg);
int ehf_get_sleb(struct ehf_cur *c, s64 *v);
int ehf_get_u8(struct ehf_cur *c, u8 *v, const char *what);
int ehf_get_uleb(struct ehf_cur *c, u64 *v);

#endif /* _EH_FRAME_INTERNAL_H */
