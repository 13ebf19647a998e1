/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sidecars of real files that tools/testing/kunit/kunit.sh links into
 * the KUnit suite sframe_real (sframe_real_sections.S, generated).
 */
#ifndef _SFRAME_REAL_SECTIONS_H
#define _SFRAME_REAL_SECTIONS_H

#include <linux/types.h>

/* A linked-in sidecar: its name and bytes, as offsets from the list. */
struct sfu_real_section {
	s64 name;
	s64 start;
	s64 end;
};

extern const struct sfu_real_section sfu_real_sections[];
extern const u32 sfu_real_nr;

#endif /* _SFRAME_REAL_SECTIONS_H */
