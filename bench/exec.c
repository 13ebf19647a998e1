// SPDX-License-Identifier: GPL-2.0
/*
 * The cost the module adds to a process's life, for make bench:
 *   exec_bench exec N       N times fork, exec this program (which exits
 *                           at once), wait; prints the mean in ns
 *   exec_bench dlopen N LIB N times dlopen(LIB) and dlclose(); the mean
 *   exec_bench run N PATH   N times fork, exec PATH (without arguments),
 *                           wait; the mean (for another program, such as
 *                           Debian's /bin/true)
 * Built twice: with SFrame (registered at exec, dropped at exit) and
 * plain (nothing to register), so that the script can compare both with
 * the module loaded and not.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_CHILD	"child"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* N times fork, exec @path with @argv, wait; prints the mean in ns. */
static int run_path(long n, const char *path, char *const argv[])
{
	double t0;
	int status;
	long i;
	pid_t pid;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (!pid) {
			execv(path, argv);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 1;
	}
	printf("%.0f\n", (now_ns() - t0) / n);
	return 0;
}

static int run_exec(long n)
{
	char *const argv[] = { "/proc/self/exe", BENCH_CHILD, NULL };
	char self[256];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return 1;
	self[len] = '\0';
	return run_path(n, self, argv);
}

static int run_dlopen(long n, const char *lib)
{
	double t0 = now_ns();
	void *h;
	long i;

	for (i = 0; i < n; i++) {
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		dlclose(h);
	}
	printf("%.0f\n", (now_ns() - t0) / n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], BENCH_CHILD))
		return 0;
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return run_exec(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "dlopen"))
		return run_dlopen(atol(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "run")) {
		char *const args[] = { argv[3], NULL };

		return run_path(atol(argv[2]), argv[3], args);
	}
	fprintf(stderr, "usage: exec_bench exec N | dlopen N LIB | run N PATH\n");
	return 2;
}
