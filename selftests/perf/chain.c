// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_chain: the call chain main -> chain_a -> chain_b -> chain_c ->
 * chain_d -> chain_leaf for the profiler selftests (perf_callchain.sh,
 * ftrace_userstack.sh).  Built -O2 -fomit-frame-pointer with SFrame and
 * not position independent: the tests name frames with the symbol table
 * the build wrote next to it (sfu_chain.syms).
 *
 *   sfu_chain spin SECONDS   run the chain for about SECONDS seconds,
 *                            or until SIGUSR1 (then it ends as usual);
 *                            chain_a, chain_b, chain_d and chain_leaf do
 *                            CPU work of their own, without calls into the
 *                            C library, so that perf samples land in them
 *   sfu_chain syscall N      run it N times; the leaf calls getppid() with
 *                            a system call instruction of its own (the C
 *                            library has no SFrame), so that a user stack
 *                            taken at that system call starts in the leaf
 *   sfu_chain evict SECONDS  spin, with chain_pad between main and
 *                            chain_a, whose frame spans pages; after its
 *                            work the leaf has every stack page above
 *                            its own two paged out (MADV_PAGEOUT), so
 *                            that a walk that cannot fault stops at
 *                            chain_pad, one that can reaches main (with
 *                            swap: a guest without it pages nothing out)
 *
 * First prints "pid PID", last "done".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "raw_syscall.h"

#define NOIPA		__attribute__((noipa))
/* Rounds of the mixing loop per unit of work. */
#define WORK_UNIT	2000
#define SPIN_BATCH	16
#define MIX_MUL		0xbf58476d1ce4e5b9UL
#define MIX_SHIFT	29
/* chain_pad's frame: three pages, none of them touched. */
#define PAD_BYTES	(3 * 4096)
/* Pages kept resident below the stack's evicted part (the chain's). */
#define KEEP_PAGES	2

static unsigned int scale;		/* units of work per level */
static int make_syscall;		/* the leaf calls getppid() */
static unsigned long stack_end;		/* the leaf pages the stack out */
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
/*
 * Page out the stack above the caller's frame, from KEEP_PAGES pages above
 * @here (a local of the caller) to its end.
 */
static void evict_stack(const void *here)
{
	unsigned long page = sysconf(_SC_PAGESIZE);
	unsigned long lo = ((unsigned long)here & ~(page - 1)) +
			   KEEP_PAGES * page;

	if (lo < stack_end)
		raw_syscall3(SYS_madvise, lo, stack_end - lo, MADV_PAGEOUT);
}

NOIPA unsigned long chain_leaf(unsigned long x)
{
	unsigned long h = work(x, 4 * scale);

	if (make_syscall)
		h += raw_syscall3(SYS_getppid, 0, 0, 0);
	if (stack_end)
		evict_stack(&h);
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

/* Pages between chain_a's frame and main's, never touched. */
NOIPA unsigned long chain_pad(unsigned long x)
{
	char pad[PAD_BYTES];
	unsigned long h;

	__asm__ volatile("" : : "r" (pad) : "memory");
	h = chain_a(x);
	return h ^ (h >> 23);
}

/* The end of the [stack] mapping, from /proc/self/maps; 0 if not found. */
static unsigned long find_stack_end(void)
{
	unsigned long lo, hi, end = 0;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			end = hi;
	fclose(f);
	return end;
}

static int stop_spin;

static void on_usr1(int sig)
{
	__atomic_store_n(&stop_spin, 1, __ATOMIC_RELAXED);
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
	unsigned long (*top)(unsigned long) = chain_a;

	if (argc != 3 || (strcmp(argv[1], "spin") &&
			  strcmp(argv[1], "syscall") &&
			  strcmp(argv[1], "evict"))) {
		fprintf(stderr,
			"usage: %s spin SECONDS | syscall N | evict SECONDS\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "evict")) {
		stack_end = find_stack_end();
		if (!stack_end) {
			fprintf(stderr, "%s: no [stack] in /proc/self/maps\n",
				argv[0]);
			return 1;
		}
		top = chain_pad;
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
		signal(SIGUSR1, on_usr1);
		end = now() + n;
		do {
			for (j = 0; j < SPIN_BATCH; j++)
				chain_sink += top(i++);
		} while (now() < end && !__atomic_load_n(&stop_spin, __ATOMIC_RELAXED));
	}
	printf("done\n");
	return 0;
}
