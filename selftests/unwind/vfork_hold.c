// SPDX-License-Identifier: GPL-2.0
/*
 * vfork_hold SECONDS: vfork a child that sleeps SECONDS and exits.
 *
 * The parent waits for its vfork child in a killable, uninterruptible
 * sleep: no signal but a fatal one ends it, and neither does the
 * TWA_SIGNAL nudge the module's unload sends to tasks with a walk
 * pending.  unwind_unload_blocked.sh has a walk requested at
 * kernel_clone(), so this parent holds it until the child exits, and
 * unload must wait and name the parent meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec nap = { 0 };
	int status;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: vfork_hold SECONDS\n");
		return 2;
	}
	nap.tv_sec = atoi(argv[1]);
	pid = vfork();
	if (pid < 0) {
		perror("vfork");
		return 1;
	}
	if (!pid) {
		/* Only system calls here: the parent's memory is ours. */
		nanosleep(&nap, NULL);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	return 0;
}
