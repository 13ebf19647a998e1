// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-gen: derive an SFrame section from the .eh_frame of an ELF file
 * (the generator itself is scripts/gen.c).
 *
 *   sframe-gen [--version=3|2] [--vaddr ADDR] [--stats] [-v]
 *              [--no-compact | --share-rows] [-o OUT] [--embed COPY] ELF
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
 *     -o OUT        the raw section
 *     --embed COPY  a copy of ELF with the section embedded, covered by
 *                   PT_GNU_SFRAME (scripts/elf-embed.c); the section is
 *                   encoded for where it lands, so no --vaddr
 *     --from-v1     upgrade ELF's own SFrame section (binutils 2.40 writes
 *                   V1) to V3 instead of reading .eh_frame
 *     --dump-rows   print the CFI interpreter's rows instead, one line per
 *                   row: "START END RULE" (decimal, [START, END)), RULE in
 *                   the words of sfu_rule_format(); for the tests, and for
 *                   any architecture the reader knows
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../include/sframe/format.h"
#include "../include/sframe/version.h"
#include "gen.h"

#define GEN_EXIT_USAGE		2

static void gen_print_usage(FILE *f)
{
	fputs("Usage: sframe-gen [--version=3|2] [--vaddr ADDR] [--stats] [-v]\n"
	      "                  [--no-compact | --share-rows] [-o OUT] [--embed COPY] ELF\n",
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

static void gen_parse_args(struct gen_opts *o, int argc, char **argv)
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
		{ "from-v1", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	o->version = SFRAME_VERSION_3;
	while ((c = getopt_long(argc, argv, "o:v", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			gen_print_usage(stdout);
			exit(0);
		case 'V':
			if (!optarg) {
				printf("sframe-gen (sframe-unwind) %s\n",
				       SFU_VERSION);
				exit(0);
			}
			o->version = (u8)strtoul(optarg, &end, 0);
			if (*end || (o->version != SFRAME_VERSION_2 &&
				     o->version != SFRAME_VERSION_3))
				gen_usage();
			break;
		case 'a':
			o->vaddr = strtoull(optarg, &end, 0);
			if (*end)
				gen_usage();
			break;
		case 's':
			o->stats = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'd':
			o->dump_rows = true;
			break;
		case 'e':
			o->embed = optarg;
			break;
		case 'n':
			o->no_compact = true;
			break;
		case 'r':
			o->share_rows = true;
			break;
		case 'f':
			o->from_v1 = true;
			break;
		default:
			gen_usage();
		}
	}
	if (optind != argc - 1 || (!o->out && !o->dump_rows && !o->embed) ||
	    (o->embed && o->vaddr) || (o->no_compact && o->share_rows))
		gen_usage();
	o->in = argv[optind];
}

int main(int argc, char **argv)
{
	struct gen_opts o = { 0 };

	gen_parse_args(&o, argc, argv);
	return gen_run(&o) ? 1 : 0;
}
