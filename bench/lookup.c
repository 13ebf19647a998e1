// SPDX-License-Identifier: GPL-2.0
/*
 * Lookup micro-benchmark: a synthetic sorted section of N identical
 * 64-byte functions, and PC lookups at pseudo-random addresses inside it.
 *
 *   bench-lookup NR_FDES NR_LOOKUPS [table | distinct | crafted]
 *
 * With "table", the section gets a rule table (lib/sframe/table.c), as the
 * module gives the sections of files and sidecars; without, lookups read
 * and decode the section, as for a JIT's.  All functions have the same
 * rows, which the table stores once; with "distinct" the section gets a
 * table too, but every function has rows of its own, as most functions
 * of real programs do.  "crafted" ignores NR_FDES: a hostile section made
 * for the table's worst case, one function of 65535 one-byte rows with
 * 30000 distinct rules (most past the one-byte codes: spilled) and one
 * more function 16 MiB away, so that the text gets the table's largest
 * blocks (256 bytes) and each block of the long function 256 entries;
 * the lookups fall in the long function.
 *
 * Prints "fdes=N lookups=M bytes=B index_bytes=I ns_per_lookup=X": the
 * section's size, what its lookup indexes take, and the CPU time of the
 * lookups (the thread's, so that time spent waiting for a core on a busy
 * machine does not count; cache misses caused by other work still do).
 * Under callgrind, collect only bench_lookups()
 * (--toggle-collect=bench_lookups) to count the instructions of the
 * lookups alone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sframe/table.h>

#include "sframe_test_sections.h"

#define BENCH_FUNC_SIZE	64
#define BENCH_TEXT	0x100000
#define BENCH_CRAFTED_ROWS	65535
#define BENCH_CRAFTED_RULES	30000
#define BENCH_CRAFTED_GAP	(16 << 20)

static u32 bench_sink;

static u64 xorshift(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((noinline)) void bench_lookups(struct sfu_section *sec,
					     const u64 *pcs, u32 n);

__attribute__((noinline)) void bench_lookups(struct sfu_section *sec,
					     const u64 *pcs, u32 n)
{
	const struct sfu_rule *found;
	struct sfu_rule rule;
	u32 i, acc = 0;

	for (i = 0; i < n; i++) {
		if (sec->table)
			found = sfu_table_find(sec, pcs[i]);
		else
			found = sfu_find_rule(sec, pcs[i], &rule) ? NULL : &rule;
		if (found)
			acc += found->cfa.off;
	}
	bench_sink = acc;
}

/* The crafted section: its long function's rows, rules, and the gap. */
static const struct sfu_test_crowd bench_crowd = {
	.rows = BENCH_CRAFTED_ROWS,
	.rules = BENCH_CRAFTED_RULES,
	.gap = BENCH_CRAFTED_GAP,
};

/* The synthetic section, or the crafted one; the text lookups fall in. */
static u8 *bench_section(u32 nr_fdes, bool distinct, bool crafted, s64 *len,
			 u64 *span)
{
	u8 *buf;

	*span = crafted ? bench_crowd.rows : (u64)nr_fdes * BENCH_FUNC_SIZE;
	*len = crafted ? sfu_test_crowded(SFRAME_VERSION_3,
					  SFRAME_ABI_AMD64_ENDIAN_LITTLE,
					  &bench_crowd, NULL, 0) :
		sfu_test_synthetic(SFRAME_VERSION_3,
				   SFRAME_ABI_AMD64_ENDIAN_LITTLE, nr_fdes,
				   BENCH_FUNC_SIZE, distinct, NULL, 0);
	buf = *len > 0 ? malloc(*len) : NULL;
	if (!buf)
		return NULL;
	if ((crafted ? sfu_test_crowded(SFRAME_VERSION_3,
					SFRAME_ABI_AMD64_ENDIAN_LITTLE,
					&bench_crowd, buf, *len) :
	     sfu_test_synthetic(SFRAME_VERSION_3,
				SFRAME_ABI_AMD64_ENDIAN_LITTLE, nr_fdes,
				BENCH_FUNC_SIZE, distinct, buf, *len)) == *len)
		return buf;
	free(buf);
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sfu_section sec;
	bool table, distinct, crafted;
	u32 nr_fdes, nr, i;
	u64 seed = 0x9e3779b97f4a7c15ull, *pcs, span;
	double t0, t1;
	s64 len;
	u8 *buf;

	distinct = argc == 4 && !strcmp(argv[3], "distinct");
	crafted = argc == 4 && !strcmp(argv[3], "crafted");
	table = distinct || crafted || (argc == 4 && !strcmp(argv[3], "table"));
	if (argc != 3 && !table)
		return 2;
	nr_fdes = strtoul(argv[1], NULL, 0);
	nr = strtoul(argv[2], NULL, 0);
	buf = bench_section(nr_fdes, distinct, crafted, &len, &span);
	pcs = malloc(sizeof(*pcs) * nr);
	if (!buf || !pcs) {
		fprintf(stderr, "bench-lookup: no synthetic section\n");
		return 1;
	}
	if (sfu_section_init(&sec, (unsigned long)buf, len, 0,
			     SFU_MEM_KERNEL, SFU_ABI_ANY)) {
		fprintf(stderr, "bench-lookup: bad synthetic section\n");
		return 1;
	}
	if (table && sfu_table_build(&sec)) {
		fprintf(stderr, "bench-lookup: no rule table\n");
		return 1;
	}
	for (i = 0; i < nr; i++)
		pcs[i] = BENCH_TEXT + xorshift(&seed) % span;
	t0 = now_ns();
	bench_lookups(&sec, pcs, nr);
	t1 = now_ns();
	printf("fdes=%u lookups=%u bytes=%" PRId64 " index_bytes=%zu ns_per_lookup=%.1f sink=%u\n",
	       nr_fdes, nr, len, sfu_section_bytes(&sec),
	       (t1 - t0) / nr, bench_sink);
	sfu_section_destroy(&sec);
	free(pcs);
	free(buf);
	return 0;
}
