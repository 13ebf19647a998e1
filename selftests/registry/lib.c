// SPDX-License-Identifier: GPL-2.0
/*
 * A test library.  tools/testing/qemu/run.sh builds it several times under
 * different names (libsfu_a.so .. libsfu_d.so with SFrame, libsfu_plain.so
 * without) so the tests can map distinct files with the same interface.
 */
#include "registry.h"

#define SFU_LIB_MUL	3

static __attribute__((noinline)) long sfu_lib_work(long x)
{
	/* Keep the compiler from folding or inlining the work away. */
	__asm__ volatile("" : "+r" (x));
	return x * SFU_LIB_MUL + 1;
}

long sfu_lib_call(long x)
{
	return sfu_lib_work(x) + 1;
}

/* An address inside this library's text: the start of a function. */
unsigned long sfu_lib_pc(void)
{
	return (unsigned long)sfu_lib_work;
}
