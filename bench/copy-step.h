/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's step over a copy of a user stack, as perf copies one: what
 * the host's replays of the walk (bench/native.c, bench/replay.c) step
 * with.  Completes the template <sframe/step.h> with a bounds-checked
 * load from the copy and frame 0's registers by DWARF number; x86-64
 * only.  Each program includes it once: the copy is its own.
 */
#ifndef _BENCH_COPY_STEP_H
#define _BENCH_COPY_STEP_H

#include <string.h>

#include <sframe/frame.h>

#define SFU_ARCH_SP_REG			SFRAME_AMD64_DWARF_SP
#define SFU_ARCH_FP_REG			SFRAME_AMD64_DWARF_FP
#define SFU_ARCH_RECORD_ANYWHERE	false
#define TASK_SIZE_MAX			((1UL << 47) - 4096)
/* A frame record: the caller's FP, then the return address. */
#define COPY_RECORD			(2 * sizeof(unsigned long))
/* Frame 0's registers a rule may name: DWARF's rax ... r15, then rip. */
#define COPY_DWARF_REGS			17

/* The copy a walk reads, and the address it was taken at. */
static struct {
	const unsigned char *bytes;
	unsigned long lo;
	unsigned long len;
} copy_stack;

/* Load the word at stack address *@p into *@p, if it is in the copy. */
static inline __attribute__((always_inline)) bool copy_load(unsigned long *p)
{
	unsigned long off = *p - copy_stack.lo;

	if (copy_stack.len < sizeof(long) ||
	    off > copy_stack.len - sizeof(long))
		return false;
	memcpy(p, copy_stack.bytes + off, sizeof(long));
	return true;
}

static inline __attribute__((always_inline)) bool
sfu_read_pair(struct sfu_ustate *st, unsigned long *a, bool ra,
	      unsigned long *b, bool rb, bool win)
{
	if ((ra && !copy_load(a)) || (rb && !copy_load(b)))
		return sfu_stop(st, SFU_STOP_FAULT);
	return true;
}

/*
 * Frame 0's register @reg: st->regs points at COPY_DWARF_REGS words in
 * DWARF's order where the replay took them (NULL: none).
 */
static inline bool sfu_arch_reg(const struct sfu_ustate *st, u16 reg,
				unsigned long *val)
{
	if (!st->regs || reg >= COPY_DWARF_REGS)
		return false;
	*val = ((const unsigned long *)st->regs)[reg];
	return true;
}

static inline __attribute__((always_inline)) unsigned long
sfu_arch_strip_ra(unsigned long ra, bool mangled)
{
	return ra;
}

#include <sframe/step.h>

#endif /* _BENCH_COPY_STEP_H */
