// SPDX-License-Identifier: GPL-2.0
/*
 * The module's user stack walk on the host's CPU, against a frame-pointer
 * walk of the same stack: make bench-native's table
 * (tools/testing/checks/bench-native.sh).
 *
 *   walk-native native [REPS [DEPTH...]]
 *
 * bench/walk.c, built with frame pointers and SFrame (-DWALK_NATIVE),
 * recurses DEPTH frames deep (8, 32 and 127 by default) through its cycle
 * of twelve functions with frames of twelve sizes; its leaf takes its PC,
 * SP and FP (native_leaf()) and calls native_replay(), which copies the
 * stack above SP, as perf copies a user stack, and walks the copy REPS
 * times (100000) in batches, each walk four ways:
 *
 *   sframe  as the module walks a mapped file: the step
 *           (sfu_apply_rule(), <sframe/step.h>) with each frame's rule
 *           from the program's rule table, built as the module builds a
 *           file's (sfu_section_open(): validated, table only), a
 *           caller's through the table's memo (sfu_table_find_return()),
 *           the region held from frame to frame as in the module's
 *           user-access window.  The memo is filled by the first walk
 *           and stays warm: the timed walks find their callers there.
 *   search  the same with every rule searched (sfu_table_find())
 *   known   the same step with each frame's rule known beforehand: the
 *           step without the lookup
 *   fp      the module's frame-record step (sfu_frame_record_step()), as
 *           the kernel walks for perf without the module
 *
 * All read the copy through the same bounds-checked load and stop at the
 * first return address outside the program's text (the C library below
 * main has neither SFrame nor frame pointers on Debian).  All must find
 * the frames the sframe walk finds, DEPTH + 1 of them (the cycle and
 * main), or the program fails.  Each depth prints
 *
 *   depth=D frames=F walks=W sframe_ns=S search_ns=T known_ns=K fp_ns=P
 *
 * W the walks each way made in all (the batches' and the check's), the
 * rest the median over the batches of the CPU time (the thread's) per
 * walk.  Built without frame pointers (-fomit-frame-pointer
 * -DNATIVE_NO_FP: walk-native-nofp), as the programs SFrame is for are,
 * there is no fp walk.  Under callgrind, collect native_walk_WAY alone
 * (--toggle-collect) to count each walk's instructions.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sframe/table.h>

#include "native.h"

#include "copy-step.h"

#define NATIVE_REPS		100000
#define NATIVE_BATCHES		11
#define NATIVE_MAX_FRAMES	4096
#define NSEC_PER_SEC		1000000000ULL

/* The program: its text, load bias and rule table. */
static struct {
	unsigned long text_lo;
	unsigned long text_hi;
	unsigned long bias;
	struct sfu_section sec;
} prog;

static unsigned long reps = NATIVE_REPS;

static inline bool native_in_text(unsigned long pc)
{
	return pc - prog.text_lo < prog.text_hi - prog.text_lo;
}

static void native_start(struct sfu_ustate *st, const struct native_regs *r)
{
	memset(st, 0, sizeof(*st));
	st->pc = r->pc;
	st->sp = r->sp;
	st->fp = r->fp;
	st->exact = true;
	st->mode = SFU_MEM_KERNEL;
}

/* How a walk finds each frame's caller. */
enum native_how {
	NATIVE_BY_RECORD,	/* the frame record at FP */
	NATIVE_BY_MEMO,		/* the module's: the table, callers by its memo */
	NATIVE_BY_SEARCH,	/* the table's search for every frame */
	NATIVE_BY_KNOWN,	/* the rules known beforehand: the step alone */
};

/* Each frame's rule, as the table has it: for NATIVE_BY_KNOWN. */
static const struct sfu_rule *known[NATIVE_MAX_FRAMES];

static inline __attribute__((always_inline)) const struct sfu_rule *
native_rule(const struct sfu_ustate *st, unsigned int nr, enum native_how how)
{
	u64 pc = sfu_frame_pc(st) - prog.bias;

	if (how == NATIVE_BY_KNOWN)
		return known[nr];
	if (how == NATIVE_BY_MEMO && !st->exact)
		return sfu_table_find_return(&prog.sec, pc, nr);
	return sfu_table_find(&prog.sec, pc);
}

/* Step frame @nr, @st, to its caller, as the module's window does. */
static inline __attribute__((always_inline)) bool
native_step(struct sfu_ustate *st, unsigned int nr, enum native_how how)
{
	const struct sfu_rule *rule;

	if (how == NATIVE_BY_RECORD)
		return sfu_frame_record_step(st, COPY_RECORD);
	rule = native_rule(st, nr, how);
	return rule && !(rule->flags & SFU_RULE_SIGNAL) &&
	       sfu_apply_rule(st, rule, true);
}

static inline __attribute__((always_inline)) unsigned int
native_walk(const struct native_regs *r, unsigned long *pcs,
	    enum native_how how)
{
	struct sfu_ustate st;
	unsigned int nr = 0;

	native_start(&st, r);
	while (nr < NATIVE_MAX_FRAMES && native_in_text(st.pc)) {
		pcs[nr] = st.pc;
		if (!native_step(&st, nr++, how))
			break;
	}
	return nr;
}

/* One function per walk, for callgrind's --toggle-collect. */
#define NATIVE_WALK(name, how)						\
__attribute__((noinline)) unsigned int					\
native_walk_##name(const struct native_regs *r, unsigned long *pcs);	\
__attribute__((noinline)) unsigned int					\
native_walk_##name(const struct native_regs *r, unsigned long *pcs)	\
{									\
	return native_walk(r, pcs, how);				\
}

NATIVE_WALK(fp, NATIVE_BY_RECORD)
NATIVE_WALK(sframe, NATIVE_BY_MEMO)
NATIVE_WALK(search, NATIVE_BY_SEARCH)
NATIVE_WALK(known, NATIVE_BY_KNOWN)

typedef unsigned int (*native_walk_fn)(const struct native_regs *r,
				       unsigned long *pcs);

/* The walks, the module's first; a build without frame pointers has no fp. */
#ifdef NATIVE_NO_FP
#define NATIVE_WALKS	3
#else
#define NATIVE_WALKS	4
#endif

static const struct {
	const char *name;
	native_walk_fn walk;
} walks[] = {
	{ "sframe", native_walk_sframe },
	{ "search", native_walk_search },
	{ "known", native_walk_known },
	{ "fp", native_walk_fp },
};

static unsigned long long native_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Nanoseconds per walk of one batch of @reps walks. */
static double native_batch(native_walk_fn walk, const struct native_regs *r,
			   unsigned long *pcs)
{
	unsigned long long t0 = native_cpu_ns();
	unsigned long i;

	for (i = 0; i < reps; i++)
		walk(r, pcs);
	return (double)(native_cpu_ns() - t0) / reps;
}

static int native_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double native_median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), native_cmp);
	return v[n / 2];
}

static unsigned long depth_now;

/* Copy the stack above @r's SP up to @top, as perf copies it. */
static int native_copy_stack(const struct native_regs *r, unsigned long top)
{
	unsigned char *copy;

	copy_stack.lo = r->sp;
	copy_stack.len = top - r->sp;
	copy = malloc(copy_stack.len);
	if (!copy)
		return -1;
	memcpy(copy, (const void *)r->sp, copy_stack.len);
	copy_stack.bytes = copy;
	return 0;
}

/* Where the C library's start-up found the stack: above main's frame. */
extern void *__libc_stack_end;

/*
 * Every walk must find the cycle and main, the frames the module's walk
 * finds; that walk's rules are then known for NATIVE_BY_KNOWN.
 */
static int native_check(const struct native_regs *r, unsigned int *frames)
{
	static unsigned long want[NATIVE_MAX_FRAMES], got[NATIVE_MAX_FRAMES];
	unsigned int n = native_walk_sframe(r, want), i, w;

	for (i = 0; i < n; i++)
		known[i] = sfu_table_find(&prog.sec, want[i] - !!i - prog.bias);
	/* The sframe walk, the first, made the frames the others must find. */
	for (w = 1; w < NATIVE_WALKS; w++) {
		i = walks[w].walk(r, got);
		if (n == depth_now + 1 && i == n &&
		    !memcmp(got, want, n * sizeof(*got)))
			continue;
		fprintf(stderr,
			"walk_native: depth %lu: %s found %u frames, sframe %u (want %lu, the same)\n",
			depth_now, walks[w].name, i, n, depth_now + 1);
		return -1;
	}
	*frames = n;
	return 0;
}

unsigned long native_replay(const struct native_regs *r)
{
	static unsigned long pcs[NATIVE_MAX_FRAMES];
	double ns[NATIVE_WALKS][NATIVE_BATCHES];
	unsigned int frames, i, w;

	if (native_copy_stack(r, (unsigned long)__libc_stack_end) ||
	    native_check(r, &frames))
		exit(1);
	for (i = 0; i < NATIVE_BATCHES; i++)
		for (w = 0; w < NATIVE_WALKS; w++)
			ns[w][i] = native_batch(walks[w].walk, r, pcs);
	/* Each walk made the batches' walks and the check's. */
	printf("depth=%lu frames=%u walks=%lu", depth_now, frames,
	       NATIVE_BATCHES * reps + 1);
	for (w = 0; w < NATIVE_WALKS; w++)
		printf(" %s_ns=%.1f", walks[w].name,
		       native_median(ns[w], NATIVE_BATCHES));
	printf("\n");
	free((void *)copy_stack.bytes);
	return frames;
}

/* The main program's text, load bias and .sframe, from its headers. */
static int native_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Phdr) **sframe = arg;
	unsigned int i;

	prog.bias = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == SFRAME_PT_GNU_SFRAME)
			*sframe = ph;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			prog.text_lo = info->dlpi_addr + ph->p_vaddr;
			prog.text_hi = prog.text_lo + ph->p_memsz;
		}
	}
	return 1;	/* the first object is the program */
}

/* The program's rule table, as the module makes a mapped file's. */
static int native_open(void)
{
	const ElfW(Phdr) *ph = NULL;
	int ret;

	dl_iterate_phdr(native_phdr, &ph);
	if (!ph) {
		fprintf(stderr, "walk_native: no PT_GNU_SFRAME (needs as --gsframe)\n");
		return -1;
	}
	ret = sfu_section_open(&prog.sec, (const void *)(prog.bias + ph->p_vaddr),
			       ph->p_memsz, ph->p_vaddr, sfu_native_abi(),
			       SFU_OPEN_VALIDATE | SFU_OPEN_TABLE);
	if (ret) {
		fprintf(stderr, "walk_native: .sframe: %s\n", sfu_strerror(ret));
		return -1;
	}
	return 0;
}

int native_main(int argc, char **argv)
{
	static const unsigned long depths[] = { 8, 32, 127 };
	unsigned long d;
	int i;

	if (argc >= 1)
		reps = strtoul(argv[0], NULL, 0);
	if (!reps || native_open())
		return 1;
	for (i = 1; i < argc || (argc <= 1 && i <= (int)ARRAY_SIZE(depths)); i++) {
		d = argc > 1 ? strtoul(argv[i], NULL, 0) : depths[i - 1];
		if (d < 1 || d >= NATIVE_MAX_FRAMES)
			return 2;
		depth_now = d;
		walk_f0(d, 1);
	}
	return 0;
}
