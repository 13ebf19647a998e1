// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_fork: fork children from the call chain main -> fork_mid ->
 * fork_leaf, with a system call instruction of fork_leaf's own, for
 * perf_fork.sh.  Each child leaves at once with another such system
 * call, so that every user stack of a child starts in fork_leaf, whose
 * SFrame takes the walk up to main; the parent waits for each child
 * before the next.  Built -O2 -fomit-frame-pointer with SFrame, static:
 * no frame of the C library is in those stacks.
 *
 * Usage: sfu_fork N   N children; prints "pid PID", last "done"
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "raw_syscall.h"

#define NOIPA		__attribute__((noipa))

/* A child, right away: fork()'s system call, by the caller's own code. */
static inline __attribute__((always_inline)) long fork_now(void)
{
#ifdef SYS_fork
	return raw_syscall3(SYS_fork, 0, 0, 0);
#else
	/* clone(SIGCHLD, no new stack): fork() where there is no SYS_fork. */
	return raw_syscall3(SYS_clone, SIGCHLD, 0, 0);
#endif
}

/* Returns the child's pid in the parent; the child leaves from here. */
NOIPA long fork_leaf(void)
{
	long pid = fork_now();

	if (pid == 0)
		raw_syscall3(SYS_exit, 0, 0, 0);
	return pid;
}

NOIPA void fork_nop(void)
{
}

/* A call after the call: not a tail call, so fork_mid keeps its frame. */
NOIPA long fork_mid(void)
{
	long pid = fork_leaf();

	fork_nop();
	return pid;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1, pid;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid = fork_mid();
		if (pid < 0) {
			printf("fork: error %ld\n", -pid);
			return 1;
		}
		waitpid(pid, NULL, 0);
	}
	printf("done\n");
	return 0;
}
