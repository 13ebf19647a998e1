// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-gen: derive an SFrame section from the .eh_frame of an ELF file
 * (the generator itself is tools/sframe-gen/gen.c).
 *
 *   sframe-gen [--version=3|2] [--vaddr ADDR] [--stats] [-v]
 *              [--no-compact | --share-rows] [--sp-word] [-o OUT]
 *              [--embed COPY] ELF
 *   sframe-gen --from-v1 [--vaddr ADDR] [--stats] [-o OUT] [--embed COPY] ELF
 *   sframe-gen --dump-rows ELF
 *     --version=N   SFrame version to write: 3 (default) or 2
 *     --vaddr ADDR  address the section is encoded for (default 0)
 *     --stats       print FDEs, FREs, bytes and the functions left out
 *     -v            name every function left out or cut, and why
 *     --no-compact  no compaction: one FDE per function
 *     --share-rows  functions with the same rows share one copy: smaller,
 *                   and what sframectl gives the module, but not a
 *                   standard section (binutils' libsframe cannot swap
 *                   its byte order), so not the default in a file
 *     --sp-word     a CFA of *(reg+off)+k (OpenSSL's realigning assembly)
 *                   in a flexible row with the module's seventh word, the
 *                   caller's SP (SFU_FLEX_CTRL_SP): what sframectl gives
 *                   the module, but only its decoder reads it, so not with
 *                   --embed
 *     -o OUT        the raw section
 *     --embed COPY  a copy of ELF with the section embedded, covered by
 *                   PT_GNU_SFRAME (tools/sframe-gen/elf-embed.c); the section is
 *                   encoded for where it lands, so no --vaddr
 *     --from-v1     upgrade ELF's own SFrame section (binutils 2.40 writes
 *                   V1) to V3 instead of reading .eh_frame
 *     --dump-rows   print the CFI interpreter's rows instead, one line per
 *                   row: "START END RULE" (decimal, [START, END)), RULE in
 *                   the words of sfu_rule_format(); for the tests, and for
 *                   any architecture the reader knows
 *
 * The generator prints nothing: this command loads the file, writes what
 * it makes, and says what went wrong and (--stats, -v) what it found.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sframe/format.h>
#include <sframe/version.h>
#include "elf-embed.h"
#include "gen.h"

#define GEN_EXIT_USAGE		2
#define GEN_PERCENT		100.0
/* Permissions: the raw section, and an embedded copy if stat() fails. */
#define GEN_MODE_DATA		0644
#define GEN_MODE_DEFAULT	0755
#define GEN_MODE_MASK		07777

/* The command line: what to generate, and what to do with it. */
struct gen_cmd {
	struct gen_opts o;
	bool stats;
	bool verbose;
	bool dump_rows;
	bool from_v1;
	const char *out;
	const char *embed;
};

static void gen_print_usage(FILE *f)
{
	fputs("Usage: sframe-gen [--version=3|2] [--vaddr ADDR] [--stats] [-v]\n"
	      "                  [--no-compact | --share-rows] [--sp-word] [-o OUT]\n"
	      "                  [--embed COPY] ELF\n",
	      f);
	fputs("       sframe-gen --from-v1 [--vaddr ADDR] [--stats] [-o OUT] [--embed COPY] ELF\n",
	      f);
	fputs("       sframe-gen --dump-rows ELF\n", f);
	fputs("       sframe-gen --help | --version\n", f);
}

static void gen_usage(void)
{
	gen_print_usage(stderr);
	exit(GEN_EXIT_USAGE);
}

static void gen_parse_args(struct gen_cmd *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "version", optional_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "vaddr", required_argument, NULL, 'a' },
		{ "stats", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "output", required_argument, NULL, 'o' },
		{ "dump-rows", no_argument, NULL, 'd' },
		{ "embed", required_argument, NULL, 'e' },
		{ "no-compact", no_argument, NULL, 'n' },
		{ "share-rows", no_argument, NULL, 'r' },
		{ "sp-word", no_argument, NULL, 'p' },
		{ "from-v1", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int opt;

	c->o.version = SFRAME_VERSION_3;
	while ((opt = getopt_long(argc, argv, "o:v", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			gen_print_usage(stdout);
			exit(0);
		case 'V':
			if (!optarg) {
				printf("sframe-gen (sframe-unwind) %s\n",
				       SFU_VERSION);
				exit(0);
			}
			c->o.version = (u8)strtoul(optarg, &end, 0);
			if (*end || (c->o.version != SFRAME_VERSION_2 &&
				     c->o.version != SFRAME_VERSION_3))
				gen_usage();
			break;
		case 'a':
			c->o.vaddr = strtoull(optarg, &end, 0);
			if (*end)
				gen_usage();
			break;
		case 's':
			c->stats = true;
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'o':
			c->out = optarg;
			break;
		case 'd':
			c->dump_rows = true;
			break;
		case 'e':
			c->embed = optarg;
			break;
		case 'n':
			c->o.no_compact = true;
			break;
		case 'r':
			c->o.share_rows = true;
			break;
		case 'p':
			c->o.sp_word = true;
			break;
		case 'f':
			c->from_v1 = true;
			break;
		default:
			gen_usage();
		}
	}
	if (optind != argc - 1 || (!c->out && !c->dump_rows && !c->embed) ||
	    (c->embed && (c->o.vaddr || c->o.sp_word)) ||
	    (c->o.no_compact && c->o.share_rows))
		gen_usage();
	c->o.in = argv[optind];
}

/* ---- what the generator says ---- */

static void gen_print_err(const struct gen_err *err)
{
	fprintf(stderr, "sframe-gen: %s\n", err->msg);
}

static void gen_print_warn(const char *msg, void *arg)
{
	fprintf(stderr, "sframe-gen: %s\n", msg);
}

static void gen_print_row(const struct gen_row *row, void *arg)
{
	printf("%" PRIu64 " %" PRIu64 " %s\n", row->start, row->end,
	       row->rule);
}

static void gen_print_whys(const char *title, const u32 *counts)
{
	unsigned int i;

	for (i = GEN_WHY_NONE + 1; i < GEN_WHY_NR; i++)
		if (counts[i])
			printf("  %-9s %8u  %s\n", title, counts[i],
			       gen_why_text(i));
}

/* --stats */
static void gen_print_stats(const struct gen_cmd *c,
			    const struct gen_result *r)
{
	const struct gen_stats *s = &r->stats;

	printf("sframe-gen: %s: SFrame V%u for %s at vaddr 0x%" PRIx64 "\n",
	       c->o.in, c->o.version, s->abi, r->vaddr);
	printf("  .eh_frame %8" PRIu64 " bytes, %u CIEs, %u FDEs\n",
	       s->eh_bytes, s->nr_cies, s->nr_eh_fdes);
	printf("  FDEs      %8u  (%u default, %u flex), %u cut short\n",
	       s->nr_default + s->nr_flex, s->nr_default, s->nr_flex,
	       s->nr_cut);
	printf("  FREs      %8u\n", s->nr_fres);
	if (s->nr_plt)
		printf("  PLT       %8u  PCMASK FDEs\n", s->nr_plt);
	printf("  bytes     %8" PRIu64 "  (%" PRIu64 " without compaction, %u FDEs share rows)\n",
	       r->len, s->plain_bytes, s->shared_fdes);
	printf("  of which  header %" PRIu64 ", FDE index %" PRIu64 ", attributes %" PRIu64 ", FRE starts %" PRIu64 ", FRE infos %" PRIu64 ", data words %" PRIu64 "\n",
	       s->sizes.header, s->sizes.index, s->sizes.attrs,
	       s->sizes.starts, s->sizes.infos, s->sizes.words);
	printf("  merged    %8u  functions into the one before (%" PRIu64 " padding bytes between)\n",
	       s->merged, s->pad_bytes);
	printf("  skipped   %8u  functions\n", s->nr_skipped);
	gen_print_whys("skipped", s->skipped);
	gen_print_whys("cut", s->cut);
	printf("  coverage  %" PRIu64 " of %" PRIu64 " bytes with CFI (%.2f%%)\n",
	       s->covered, s->with_cfi,
	       s->with_cfi ? GEN_PERCENT * s->covered / s->with_cfi :
			     GEN_PERCENT);
}

/* --from-v1 --stats */
static void gen_print_upgrade(const struct gen_cmd *c,
			      const struct gen_result *r)
{
	const struct gen_stats *s = &r->stats;

	printf("sframe-gen: %s: V%u section, %" PRIu64 " bytes, %u FDEs: V3 %" PRIu64 " bytes (%" PRIu64 " without compaction, %u FDEs share rows)\n",
	       c->o.in, s->old_version, s->old_bytes, s->old_fdes, r->len,
	       s->plain_bytes, s->shared_fdes);
}

/* -v */
static void gen_print_funcs(const struct gen_result *r)
{
	const struct gen_func *fn;
	u32 i;

	for (i = 0; i < r->nr_funcs; i++) {
		fn = &r->funcs[i];
		fprintf(stderr,
			"sframe-gen: %s 0x%" PRIx64 "..0x%" PRIx64
			" (FDE .eh_frame+0x%" PRIx64 ") at 0x%" PRIx64 ": %s\n",
			fn->cut ? "cut" : "skipped", fn->start, fn->end,
			fn->eh_off, fn->at, gen_why_text(fn->why));
	}
}

/* ---- output ---- */

static int gen_write_file(const char *path, const u8 *buf, size_t len,
			  mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t n = 0;
	size_t done;

	if (fd < 0) {
		perror(path);
		return -errno;
	}
	for (done = 0; done < len; done += n) {
		n = write(fd, buf + done, len - done);
		if (n <= 0)
			break;
	}
	if (close(fd) || done != len) {
		fprintf(stderr, "sframe-gen: %s: write failed\n", path);
		return -EIO;
	}
	return 0;
}

/*
 * The copy of the input with the section embedded, where the generator
 * placed it (GEN_VADDR_PAST_IMAGE: the same plan).
 */
static int gen_embed(const struct gen_cmd *c, const struct elf_file *in,
		     const struct gen_result *r)
{
	struct elf_embed plan;
	struct elf_file out;
	struct stat st;
	int ret;

	ret = elf_embed_plan(in, &plan);
	if (!ret)
		ret = elf_embed_write(&plan, r->buf, r->len, &out);
	if (ret) {
		fprintf(stderr, "sframe-gen: %s: %s\n", c->o.in, plan.err);
		return ret;
	}
	if (stat(c->o.in, &st))
		st.st_mode = GEN_MODE_DEFAULT;
	ret = gen_write_file(c->embed, out.data, out.size,
			     st.st_mode & GEN_MODE_MASK);
	elf_file_free(&out);
	return ret;
}

static int gen_output(const struct gen_cmd *c, const struct elf_file *in,
		      const struct gen_result *r)
{
	int ret = 0;

	if (c->out)
		ret = gen_write_file(c->out, r->buf, r->len, GEN_MODE_DATA);
	if (!ret && c->embed)
		ret = gen_embed(c, in, r);
	return ret;
}

/* ---- the command ---- */

/* Generate (or upgrade), write, and report. */
static int gen_cmd_make(struct gen_cmd *c, const struct elf_file *f)
{
	struct gen_result r;
	struct gen_err err;
	int ret;

	if (c->embed)
		c->o.vaddr = GEN_VADDR_PAST_IMAGE;
	if (c->from_v1)
		ret = gen_upgrade(&c->o, f, &r, &err);
	else
		ret = gen_generate(&c->o, f, &r, &err);
	if (ret) {
		gen_print_err(&err);
		return ret;
	}
	ret = gen_output(c, f, &r);
	if (ret)
		goto free_result;
	if (c->verbose)
		gen_print_funcs(&r);	/* none for --from-v1 */
	if (c->stats && c->from_v1)
		gen_print_upgrade(c, &r);
	else if (c->stats)
		gen_print_stats(c, &r);
free_result:
	gen_result_free(&r);
	return ret;
}

static int gen_cmd_run(struct gen_cmd *c, const struct elf_file *f)
{
	struct gen_err err;
	int ret;

	if (!c->dump_rows)
		return gen_cmd_make(c, f);
	ret = gen_dump_rows(&c->o, f, gen_print_row, NULL, &err);
	if (ret)
		gen_print_err(&err);
	return ret;
}

int main(int argc, char **argv)
{
	struct gen_cmd c = { .o.warn = gen_print_warn };
	struct elf_file f;
	int ret;

	gen_parse_args(&c, argc, argv);
	if (elf_file_load(c.o.in, &f)) {
		perror(c.o.in);
		return 1;
	}
	ret = gen_cmd_run(&c, &f);
	elf_file_free(&f);
	return ret ? 1 : 0;
}
