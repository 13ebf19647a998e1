// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_chain: the call chain main -> chain_a -> chain_b -> chain_c ->
 * chain_d -> chain_leaf for the profiler selftests (perf_callchain.sh,
 * ftrace_userstack.sh).  Built -O2 -fomit-frame-pointer with SFrame and
 * not position independent: the tests name frames with the symbol table
 * the build wrote next to it (sfu_chain.syms).
 *
 *   sfu_chain spin SECONDS   run the chain for about SECONDS seconds;
 *                            chain_a, chain_b, chain_d and chain_leaf do
 *                            CPU work of their own, without calls into the
 *                            C library, so that perf samples land in them
 *   sfu_chain syscall N      run it N times; the leaf calls getppid() with
 *                            a system call instruction of its own (the C
 *                            library has no SFrame), so that a user stack
 *                            taken at that system call starts in the leaf
 *
 * First prints "pid PID", last "done".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../raw_syscall.h"

#define NOIPA		__attribute__((noipa))
/* Rounds of the mixing loop per unit of work. */
#define WORK_UNIT	2000
#define SPIN_BATCH	16
#define MIX_MUL		0xbf58476d1ce4e5b9UL
#define MIX_SHIFT	29

static unsigned int scale;		/* units of work per level */
static int make_syscall;		/* the leaf calls getppid() */
unsigned long chain_sink;		/* keeps the results alive */

/* CPU work in the caller's own frame: no call, no memory. */
static inline __attribute__((always_inline)) unsigned long
work(unsigned long h, unsigned int units)
{
	unsigned long i, n = (unsigned long)units * WORK_UNIT;

	for (i = 0; i < n; i++)
		h = (h ^ (h >> MIX_SHIFT)) * MIX_MUL + i;
	return h;
}

/* Each level uses its callee's result, so no call becomes a jump. */
NOIPA unsigned long chain_leaf(unsigned long x)
{
	unsigned long h = work(x, 4 * scale);

	if (make_syscall)
		h += raw_syscall3(SYS_getppid, 0, 0, 0);
	return h ^ (h >> 7);
}

NOIPA unsigned long chain_d(unsigned long x)
{
	unsigned long h = work(x, 2 * scale);

	h += chain_leaf(h);
	return h ^ (h >> 11);
}

NOIPA unsigned long chain_c(unsigned long x)
{
	unsigned long h = chain_d(x + 3);

	return h ^ (h >> 13);
}

NOIPA unsigned long chain_b(unsigned long x)
{
	unsigned long h = work(x, 2 * scale);

	h += chain_c(h);
	return h ^ (h >> 17);
}

NOIPA unsigned long chain_a(unsigned long x)
{
	unsigned long h = work(x, scale);

	h += chain_b(h);
	return h ^ (h >> 19);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long i = 0, j, n;
	double end;

	if (argc != 3 || (strcmp(argv[1], "spin") &&
			  strcmp(argv[1], "syscall"))) {
		fprintf(stderr, "usage: %s spin SECONDS | syscall N\n",
			argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(argv[1], "syscall")) {
		make_syscall = 1;
		for (i = 0; i < n; i++)
			chain_sink += chain_a(i);
	} else {
		scale = 1;
		end = now() + n;
		do {
			for (j = 0; j < SPIN_BATCH; j++)
				chain_sink += chain_a(i++);
		} while (now() < end);
	}
	printf("done\n");
	return 0;
}
