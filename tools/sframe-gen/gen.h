/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generator's interface (tools/sframe-gen/gen.c): what the sframe-gen and
 * sframectl commands call.  The generator prints nothing: a call that
 * fails returns a negative error code and says why in a struct gen_err,
 * and what a call found (the counts of --stats, the functions -v names,
 * the rows of --dump-rows) is handed to the command, which reports it.
 */
#ifndef _SCRIPTS_GEN_H
#define _SCRIPTS_GEN_H

#include <limits.h>
#include <stdbool.h>

#include <sframe/encode.h>
#include <sframe/env.h>
#include "elf-sframe.h"

/* Room for a message naming a file. */
#define GEN_MSG_MAX		(PATH_MAX + 256)

/*
 * Why a call failed, in one line without a newline, most often "FILE:
 * what went wrong" (FILE as gen_opts.in names it); the command puts its
 * own name in front.
 */
struct gen_err {
	char msg[GEN_MSG_MAX];
};

/* Called with a warning, worded like a struct gen_err's message. */
typedef void (*gen_warn_fn)(const char *msg, void *arg);

/* What to generate. */
struct gen_opts {
	u8 version;
	u64 vaddr;		/* or GEN_VADDR_PAST_IMAGE */
	bool no_compact;
	bool share_rows;	/* FDEs may share rows: only our decoder */
	bool sp_word;		/* the module's SP word: only our decoder */
	const char *in;		/* the file's name, in messages */
	gen_warn_fn warn;	/* told of each function left out for an */
	void *warn_arg;		/* error in its CFI; NULL: only counted */
};

/* gen_opts.vaddr: just past the file's image, where --embed puts it. */
#define GEN_VADDR_PAST_IMAGE	(~0ULL)

/* Why a function, or the rest of one, has no SFrame description. */
enum gen_why {
	GEN_WHY_NONE,
	GEN_WHY_CFA_NONE,
	GEN_WHY_CFA_RULE,
	GEN_WHY_CFA_FLEX,
	GEN_WHY_CFA_RANGE,
	GEN_WHY_RA_RULE,
	GEN_WHY_RA_FLEX,
	GEN_WHY_RA_RANGE,
	GEN_WHY_RA_MANGLED,
	GEN_WHY_FP_RULE,
	GEN_WHY_FP_FLEX,
	GEN_WHY_FP_RANGE,
	GEN_WHY_FP_UNDEF,
	GEN_WHY_FRES,
	GEN_WHY_SIZE,
	GEN_WHY_EMPTY,
	GEN_WHY_OVERLAP,
	GEN_WHY_CFI,
	GEN_WHY_NR
};

/* A function left out or cut short (an empty one is only counted). */
struct gen_func {
	u64 start;
	u64 end;		/* the end of its FDE's whole range */
	u64 eh_off;		/* the FDE in .eh_frame */
	u64 at;			/* the first address not described */
	bool cut;		/* cut short; else left out */
	enum gen_why why;
};

/* What a section is made of, and what it leaves out. */
struct gen_stats {
	const char *abi;	/* the SFrame ABI's name */
	u64 eh_bytes;		/* .eh_frame */
	u32 nr_cies;
	u32 nr_eh_fdes;
	u32 nr_default;		/* FDEs written, default and flexible */
	u32 nr_flex;
	u32 nr_cut;		/* of the functions, those cut short */
	u32 nr_fres;
	u32 nr_plt;		/* PCMASK FDEs made from ld's PLT CFI */
	u64 plain_bytes;	/* the section without compaction */
	u32 shared_fdes;	/* FDEs whose rows another FDE already has */
	struct sfu_enc_sizes sizes;	/* where the section's bytes go */
	u32 merged;		/* functions merged into the one before */
	u64 pad_bytes;		/* padding between them, now described */
	u32 nr_skipped;
	u32 skipped[GEN_WHY_NR];	/* functions left out, by reason */
	u32 cut[GEN_WHY_NR];		/* functions cut short, by reason */
	u64 covered;		/* bytes described */
	u64 with_cfi;		/* bytes .eh_frame describes */
	u8 old_version;		/* gen_upgrade(): the section read, */
	u64 old_bytes;		/* its size */
	u32 old_fdes;		/* and its FDEs */
};

/* A generated section, and how; gen_result_free() frees it. */
struct gen_result {
	u8 *buf;
	u64 len;
	u64 vaddr;		/* the address it is encoded for */
	struct gen_stats stats;
	struct gen_func *funcs;	/* in address order */
	u32 nr_funcs;
};

/* A row of the CFI interpreter: [start, end), rule as sfu_rule_format(). */
struct gen_row {
	u64 start;
	u64 end;
	const char *rule;
};

typedef void (*gen_row_fn)(const struct gen_row *row, void *arg);

int gen_generate(const struct gen_opts *o, const struct elf_file *f,
		 struct gen_result *r, struct gen_err *err);
int gen_upgrade(const struct gen_opts *o, const struct elf_file *f,
		struct gen_result *r, struct gen_err *err);
void gen_result_free(struct gen_result *r);
int gen_dump_rows(const struct gen_opts *o, const struct elf_file *f,
		  gen_row_fn fn, void *arg, struct gen_err *err);
int gen_section(const struct gen_opts *o, const struct elf_file *f,
		u8 **bufp, u64 *lenp, u64 *vaddrp, struct gen_err *err);
const char *gen_why_text(enum gen_why why);

#endif /* _SCRIPTS_GEN_H */
