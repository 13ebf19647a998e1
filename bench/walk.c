// SPDX-License-Identifier: GPL-2.0
/*
 * A user stack of known depth for make bench (bench/bench_walk.sh):
 *
 *   walk spin DEPTH     main calls a cycle of WALK_NFUNCS distinct
 *                       functions, DEPTH frames deep (the DEPTH-th is the
 *                       leaf), prints "ready" and spins in the leaf until
 *                       killed; every perf sample then sees the same stack:
 *                       DEPTH frames of the cycle, main and the C
 *                       library's start-up frames
 *   walk hold [LIB...]  dlopen()s each LIB, prints "ready" and waits until
 *                       killed: the module's memory per registered process
 *                       and per library
 *   walk crafted DEPTH  (walk_crafted, x86-64) the same as spin, DEPTH
 *                       frames of crafted_walk (bench/crafted-x86_64.S),
 *                       whose rows are the rule table's worst case
 *   walk native [REPS [DEPTH...]]
 *                       (walk-native, the host's build with -DWALK_NATIVE,
 *                       which is for this mode alone) the leaf replays
 *                       the module's walk of its stack (bench/native.c)
 *
 * Built -O2 -fno-omit-frame-pointer with SFrame, so that the kernel's
 * frame-pointer walk (module unloaded) and the module's SFrame walk
 * (module loaded) unwind the very same stack.  Each function of the cycle
 * has a frame of its own size (an array kept on the stack), so that no
 * frame's rule is the one before it and every frame needs its own lookup;
 * each uses its callee's result, so that no call becomes a jump.  Both
 * modes end by themselves after WALK_MAX_SECONDS (SIGALRM) if nobody kills
 * them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef WALK_NATIVE
#include "native.h"
#endif

#define NOIPA			__attribute__((noipa))
#define WALK_NFUNCS		12
#define WALK_MAX_DEPTH		4096
#define WALK_MAX_SECONDS	900
#define MIX_MUL			0xbf58476d1ce4e5b9UL
#define MIX_SHIFT		29

/* Tell the script that the stack is in place. */
static NOIPA void announce(void)
{
	static const char msg[] = "ready\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
}

/* The leaf's work: no call, no system call, in the leaf's own frame. */
static inline __attribute__((always_inline, noreturn)) void
spin(unsigned long h)
{
	for (;;) {
		h = (h ^ (h >> MIX_SHIFT)) * MIX_MUL + 1;
		__asm__ volatile("" : "+r" (h));
	}
}

/*
 * What the leaf does: spin until killed, or (bench/native.c) take the
 * stack's registers where they are and replay the walks over it.
 */
static inline __attribute__((always_inline)) unsigned long
walk_leaf(unsigned long h)
{
#ifdef WALK_NATIVE
	return native_leaf(h);
#else
	announce();
	spin(h);
#endif
}

#define WALK_DECL(k) \
	NOIPA unsigned long walk_f##k(unsigned long depth, unsigned long x)
WALK_DECL(0); WALK_DECL(1); WALK_DECL(2); WALK_DECL(3); WALK_DECL(4);
WALK_DECL(5); WALK_DECL(6); WALK_DECL(7); WALK_DECL(8); WALK_DECL(9);
WALK_DECL(10); WALK_DECL(11);

/*
 * Function K of the cycle: SIZE bytes of locals, kept in its frame (the
 * empty asm takes their address); the leaf (depth 1) spins, any other
 * calls function NEXT one level down and mixes in the result with SHIFT.
 */
#define WALK_FUNC(k, next, size, shift)					\
NOIPA unsigned long walk_f##k(unsigned long depth, unsigned long x)	\
{									\
	unsigned char buf[size];					\
	unsigned long h;						\
									\
	buf[0] = x;							\
	buf[sizeof(buf) - 1] = x >> 8;					\
	__asm__ volatile("" : : "r" (buf) : "memory");			\
	if (depth <= 1)							\
		return walk_leaf(x + buf[0]);				\
	h = walk_f##next(depth - 1, x * 3 + buf[sizeof(buf) - 1]);	\
	return h ^ (h >> (shift)) ^ buf[0];				\
}

WALK_FUNC(0, 1, 24, 1) WALK_FUNC(1, 2, 48, 2) WALK_FUNC(2, 3, 72, 3)
WALK_FUNC(3, 4, 96, 4) WALK_FUNC(4, 5, 120, 5) WALK_FUNC(5, 6, 144, 6)
WALK_FUNC(6, 7, 168, 7) WALK_FUNC(7, 8, 192, 8) WALK_FUNC(8, 9, 216, 9)
WALK_FUNC(9, 10, 240, 10) WALK_FUNC(10, 11, 264, 11)
WALK_FUNC(11, 0, 288, 12)

#ifdef WALK_CRAFTED
unsigned long crafted_walk(unsigned long depth);

/* The leaf below crafted_walk's frames. */
NOIPA void crafted_leaf(void)
{
	announce();
	spin(0);
}
#endif

static int hold(int nlibs, char **libs)
{
	int i;

	for (i = 0; i < nlibs; i++) {
		if (!dlopen(libs[i], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
	}
	announce();
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	unsigned long depth;

	alarm(WALK_MAX_SECONDS);
	if (argc == 3 && (!strcmp(argv[1], "spin") ||
			  !strcmp(argv[1], "crafted"))) {
		depth = strtoul(argv[2], NULL, 0);
		if (depth < 1 || depth > WALK_MAX_DEPTH) {
			fprintf(stderr, "walk: DEPTH from 1 to %d\n",
				WALK_MAX_DEPTH);
			return 2;
		}
		if (!strcmp(argv[1], "spin"))
			walk_f0(depth, (unsigned long)argc);
#ifdef WALK_CRAFTED
		else
			crafted_walk(depth);
#endif
		return 1;
	}
#ifdef WALK_NATIVE
	if (argc >= 2 && !strcmp(argv[1], "native"))
		return native_main(argc - 2, argv + 2);
#endif
	if (argc >= 2 && !strcmp(argv[1], "hold"))
		return hold(argc - 2, argv + 2);
	fprintf(stderr, "usage: walk spin|crafted DEPTH | hold [LIB...]\n");
	return 2;
}
