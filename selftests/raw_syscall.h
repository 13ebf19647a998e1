/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A system call made by one instruction in the caller's own code, for the
 * unwinder and profiler selftests (selftests/unwind/, selftests/perf/): a
 * user stack taken in that system call starts in the caller, which has
 * SFrame, not in the C library, which has none.
 */
#ifndef _SELFTESTS_RAW_SYSCALL_H
#define _SELFTESTS_RAW_SYSCALL_H

#include <sys/syscall.h>

/* System call @nr with three arguments; the result or -errno. */
static inline __attribute__((always_inline)) long
raw_syscall3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a" (ret)
			 : "0" (nr), "D" (a), "S" (b), "d" (c)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;

	__asm__ volatile("svc #0"
			 : "+r" (x0)
			 : "r" (x8), "r" (x1), "r" (x2)
			 : "memory");
	return x0;
#elif defined(__s390x__)
	register long r1 __asm__("r1") = nr;
	register long r2 __asm__("r2") = a;
	register long r3 __asm__("r3") = b;
	register long r4 __asm__("r4") = c;

	__asm__ volatile("svc 0"
			 : "+d" (r2)
			 : "d" (r1), "d" (r3), "d" (r4)
			 : "memory");
	return r2;
#else
#error "no inline system call for this architecture"
#endif
}

#endif /* _SELFTESTS_RAW_SYSCALL_H */
