/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generator's interface (scripts/gen.c): what the sframe-gen and
 * sframectl commands call.
 */
#ifndef _SCRIPTS_GEN_H
#define _SCRIPTS_GEN_H

#include <stdbool.h>

#include "../include/sframe/env.h"
#include "elf-sframe.h"

/* What to generate, and (for sframe-gen) what to do with it. */
struct gen_opts {
	u8 version;
	u64 vaddr;
	bool stats;
	bool verbose;
	bool dump_rows;
	bool no_compact;
	bool share_rows;	/* FDEs may share rows: only our decoder */
	const char *out;
	const char *embed;
	bool from_v1;
	const char *in;
};

/* gen_opts.vaddr for gen_section(): just past the file's image. */
#define GEN_VADDR_PAST_IMAGE	(~0ULL)

int gen_run(struct gen_opts *o);
int gen_section(const struct gen_opts *o, const struct sfu_file *f,
		u8 **bufp, u64 *lenp, u64 *vaddrp);

#endif /* _SCRIPTS_GEN_H */
