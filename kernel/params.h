/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module parameters that several files read (params.c).
 */
#ifndef _SFU_PARAMS_H
#define _SFU_PARAMS_H

#include <linux/types.h>

extern unsigned int sfu_max_sections;
extern unsigned long sfu_max_section_bytes;
extern unsigned long sfu_max_mm_bytes;
extern unsigned long sfu_max_total_bytes;
extern bool sfu_validate_fres;

#endif /* _SFU_PARAMS_H */
