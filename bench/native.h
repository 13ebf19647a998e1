/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's walk on the host's CPU (bench/native.c): the leaf of
 * bench/walk.c's recursion hands its registers to the replay.
 */
#ifndef _BENCH_NATIVE_H
#define _BENCH_NATIVE_H

/* The leaf's registers where it stands: a walk's frame 0. */
struct native_regs {
	unsigned long pc;
	unsigned long sp;
	unsigned long fp;
};

/* bench/walk.c's recursion, DEPTH frames down to its leaf. */
unsigned long walk_f0(unsigned long depth, unsigned long x);

unsigned long native_replay(const struct native_regs *regs);
int native_main(int argc, char **argv);

/*
 * Take the leaf's PC, SP and FP in one go (its own rule describes them
 * there) and replay the walks over the stack above SP, which stays as it
 * is while native_replay() runs below it.
 */
static inline __attribute__((always_inline)) unsigned long
native_leaf(unsigned long h)
{
	struct native_regs regs;

	__asm__ volatile("lea 0(%%rip), %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2"
			 : "=r" (regs.pc), "=r" (regs.sp), "=r" (regs.fp));
	return native_replay(&regs) ^ h;
}

#endif /* _BENCH_NATIVE_H */
