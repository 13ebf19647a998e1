// SPDX-License-Identifier: GPL-2.0
/*
 * The cost of a non-faulting walk (the kind perf's NMI handler makes) is
 * bounded whatever the sections hold.
 *
 * Three JIT registrations of this process, each with a fake stack that
 * makes a walk of max_depth frames through one function:
 *   short:  a function of one row, the cheapest walk there is;
 *   long:   a function of 65535 rows, every frame at its last row, where a
 *           decoder that scans rows reads all of them for every frame;
 *   budget: a section that claims 65535 rows for a function only after it
 *           was registered (so set-up indexed none of them).
 * The walks run in the test hook's "sync" command from a system call made
 * by JIT code on the fake stack.  Reported: the median and worst time of
 * each walk and their ratio to the short walk.  Required: the long walk
 * is exact and within SFU_LONG_FACTOR of the short one; the budget walk
 * stops with "budget", also within that factor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/decode.h>

#include "kselftest.h"
#include "uw.h"
#include "sframe_test_sections.h"

#ifdef __x86_64__

#define SFU_ROUNDS		15
#define SFU_DEPTH		127
/* Fake stack frames: more than any depth limit lets a walk use. */
#define SFU_STACK_FRAMES	(SFU_DEPTH + 8)
/* A long walk may cost this many short ones (a scan costs thousands). */
#define SFU_LONG_FACTOR		16
#define SFU_PAGE		4096UL
#define SFU_ALIGN(x)		(((x) + SFU_PAGE - 1) & ~(SFU_PAGE - 1))
/* syscall; jmp *%rbx */
static const unsigned char sfu_code[] = { 0x0f, 0x05, 0xff, 0xe3 };
#define SFU_SYSCALL_LEN		2

/*
 * Make system call @nr(@a, @b, @c) from the code at @code with the stack
 * pointer at @sp; the code jumps back through %rbx.
 */
static __attribute__((naked, noinline)) long
sfu_call_on(long nr, long a, long b, long c, unsigned long code,
	    unsigned long sp)
{
	__asm__ volatile("push %rbx\n"
			 "push %rbp\n"
			 "mov %rsp, %rbp\n"
			 "lea 1f(%rip), %rbx\n"
			 "mov %rdi, %rax\n"
			 "mov %rsi, %rdi\n"
			 "mov %rdx, %rsi\n"
			 "mov %rcx, %rdx\n"
			 "mov %r9, %rsp\n"
			 "jmp *%r8\n"
			 "1: mov %rbp, %rsp\n"
			 "pop %rbp\n"
			 "pop %rbx\n"
			 "ret\n");
}

struct sfu_case {
	const char *name;
	unsigned int rows;	/* rows the function has */
	unsigned int indexed;	/* rows it claims at registration */
	unsigned long text;	/* the function */
	unsigned long code_off;	/* where the system call is */
	unsigned long ret_off;	/* return address in every frame */
	unsigned long frame;	/* frame size at those offsets */
	unsigned char *sec;
	long len;
	double median_ns, max_ns;
	struct uw_walk walk;
};

static int sfu_dev = -1;

static double budget_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int budget_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Patch the V2 section's only FDE to claim @rows rows. */
static void budget_set_rows(struct sfu_case *c, unsigned int rows)
{
	unsigned char *fde = c->sec + sizeof(struct sframe_header);

	memcpy(fde + offsetof(struct sframe_fde_v2, sfde_func_num_fres),
	       &rows, sizeof(rows));
}

static int budget_prepare(struct sfu_case *c, unsigned char *area,
			  unsigned long text_bytes, unsigned long cap)
{
	struct sframe_unwind_region r = { .size = sizeof(r) };
	unsigned int last = c->rows - 1;
	u8 version = c->indexed == c->rows ? SFRAME_VERSION_3 :
			SFRAME_VERSION_2;

	c->text = (unsigned long)area;
	c->sec = area + text_bytes;
	c->len = sfu_test_long_section(version, SFRAME_ABI_AMD64_ENDIAN_LITTLE,
				       c->rows, 1, c->text, c->sec, cap,
				       (unsigned long)c->sec);
	if (c->len <= 0)
		return -1;
	if (c->indexed != c->rows)
		budget_set_rows(c, c->indexed);
	/* Frame 0 stops after the system call, in the last row. */
	c->code_off = last > SFU_SYSCALL_LEN ? last - SFU_SYSCALL_LEN : 0;
	memcpy(area + c->code_off, sfu_code, sizeof(sfu_code));
	/* Callers return just past the last row's start: the same row. */
	c->ret_off = last + 1;
	c->frame = sfu_test_long_cfa(last);
	if (mprotect(area, text_bytes, PROT_READ | PROT_EXEC))
		return -1;
	r.text_start = c->text;
	r.text_end = c->text + SFU_TEST_LONG_SIZE(c->rows);
	r.sframe_start = (unsigned long)c->sec;
	r.sframe_len = c->len;
	if (ioctl(sfu_dev, SFRAME_UNWIND_IOC_ADD, &r))
		return -1;
	if (c->indexed != c->rows)
		budget_set_rows(c, c->rows);
	return 0;
}

/* A stack of frames that all return to @c's function. */
static unsigned long budget_fake_stack(const struct sfu_case *c,
				       unsigned long *stack)
{
	unsigned long sp = (unsigned long)stack;
	unsigned int i;

	for (i = 0; i < SFU_STACK_FRAMES; i++)
		*(unsigned long *)(sp + (i + 1) * c->frame - 8) =
			i + 1 < SFU_STACK_FRAMES ? c->text + c->ret_off : 0;
	return sp;
}

static int budget_measure(struct sfu_case *c, int hook, unsigned long *stack)
{
	double ns[SFU_ROUNDS];
	unsigned long sp = budget_fake_stack(c, stack);
	long ret;
	int i;

	for (i = 0; i < SFU_ROUNDS; i++) {
		double t0 = budget_now_ns();

		ret = sfu_call_on(SYS_write, hook, (long)"sync", 4,
				  c->text + c->code_off, sp);
		ns[i] = budget_now_ns() - t0;
		if (ret != 4 || uw_read(hook, &c->walk, 1) != 1) {
			ksft_print_msg("%s: sync walk failed: %ld\n", c->name,
				       ret);
			return -1;
		}
	}
	qsort(ns, SFU_ROUNDS, sizeof(ns[0]), budget_dbl_cmp);
	c->median_ns = ns[SFU_ROUNDS / 2];
	c->max_ns = ns[SFU_ROUNDS - 1];
	return 0;
}

/* Every frame of the walk is in @c's function. */
static bool budget_walk_exact(const struct sfu_case *c)
{
	unsigned int i;

	if (c->walk.nr != SFU_DEPTH || strcmp(c->walk.stop, "depth"))
		return false;
	if (c->walk.pcs[0] != c->text + c->code_off + SFU_SYSCALL_LEN)
		return false;
	for (i = 1; i < c->walk.nr; i++)
		if (c->walk.pcs[i] != c->text + c->ret_off)
			return false;
	return true;
}

static int budget_set_depth(unsigned int depth)
{
	FILE *f = fopen("/sys/module/sframe_unwind/parameters/max_depth", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%u\n", depth) > 0;
	return fclose(f) || !ok ? -1 : 0;
}

int main(void)
{
	struct sfu_case cs[] = {
		{ .name = "short", .rows = 1, .indexed = 1 },
		{ .name = "long", .rows = SFU_MAX_FDE_FRES,
		  .indexed = SFU_MAX_FDE_FRES },
		{ .name = "budget", .rows = SFU_MAX_FDE_FRES, .indexed = 1 },
	};
	unsigned long text_bytes = SFU_ALIGN(SFU_TEST_LONG_SIZE(SFU_MAX_FDE_FRES));
	unsigned long cap = SFU_ALIGN(SFU_MAX_FDE_FRES * 8 + 4096);
	size_t stack_bytes = SFU_STACK_FRAMES * 1024;
	unsigned long *stack;
	unsigned int i;
	int hook;

	ksft_print_header();
	ksft_set_plan(5);
	sfu_dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);
	hook = uw_open();
	stack = aligned_alloc(64, stack_bytes);
	if (sfu_dev < 0 || hook < 0 || !stack || budget_set_depth(SFU_DEPTH))
		ksft_exit_fail_msg("device, hook or max_depth: %s\n",
				   strerror(errno));
	memset(stack, 0, stack_bytes);
	for (i = 0; i < ARRAY_SIZE(cs); i++) {
		unsigned char *area = mmap(NULL, text_bytes + cap,
					   PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS |
					   MAP_POPULATE, -1, 0);

		if (area == MAP_FAILED || budget_prepare(&cs[i], area, text_bytes,
							 cap))
			ksft_exit_fail_msg("%s: set-up: %s\n", cs[i].name,
					   strerror(errno));
	}
	for (i = 0; i < ARRAY_SIZE(cs); i++)
		if (budget_measure(&cs[i], hook, stack))
			ksft_exit_fail_msg("%s: no walk\n", cs[i].name);
	for (i = 0; i < ARRAY_SIZE(cs); i++)
		ksft_print_msg("%-6s walk: %u frames, stop=%s, median %.0f us (%.2fx short), worst %.0f us (%.2fx)\n",
			       cs[i].name, cs[i].walk.nr, cs[i].walk.stop,
			       cs[i].median_ns / 1e3,
			       cs[i].median_ns / cs[0].median_ns,
			       cs[i].max_ns / 1e3,
			       cs[i].max_ns / cs[0].median_ns);
	ksft_test_result(budget_walk_exact(&cs[0]),
			 "short: %u frames through the one-row function\n",
			 SFU_DEPTH);
	ksft_test_result(budget_walk_exact(&cs[1]),
			 "long: %u frames, each at row 65534 of 65535\n",
			 SFU_DEPTH);
	ksft_test_result(cs[1].median_ns <= SFU_LONG_FACTOR * cs[0].median_ns,
			 "long: median within %dx the short walk's\n",
			 SFU_LONG_FACTOR);
	ksft_test_result(!strcmp(cs[2].walk.stop, "budget"),
			 "budget: rows added after registration: the walk stops with \"budget\" (%s)\n",
			 cs[2].walk.stop);
	ksft_test_result(cs[2].median_ns <= SFU_LONG_FACTOR * cs[0].median_ns,
			 "budget: median within %dx the short walk's\n",
			 SFU_LONG_FACTOR);
	ksft_finished();
}

#else

int main(void)
{
	ksft_print_header();
	ksft_exit_skip("the fake-stack trampoline is written for x86-64 only\n");
}

#endif /* __x86_64__ */
