// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_prog: the program the registry shell tests start.  Built with SFrame,
 * dynamically linked against libsfu_a.so (and, as sfu_prog2, against
 * libsfu_c.so); the corrupt-section tests run patched copies of it.
 *
 *   sfu_prog run          call into the library and exit 0
 *   sfu_prog wait         print "pid N" and "ready N", then wait: SIGUSR2
 *                         does some work (dlopen, dlclose, fork) and prints
 *                         "work K ok"; SIGTERM or SIGUSR1 exits 0
 *   sfu_prog lookup       first print "lookup self|lib|none LINE": the
 *                         module's lookup file answering for a function of
 *                         the program, one of libsfu_a.so and an anonymous
 *                         mapping; then as wait
 *   sfu_prog fork         fork; the child prints "child N" and on SIGUSR1
 *                         execs "sfu_prog2 wait"; the parent prints
 *                         "ready N", and on SIGTERM stops the child, reaps
 *                         it and exits 0
 *   sfu_prog dlopen PATH  dlopen PATH, call into it, print "called V",
 *                         then as wait (PATH stays loaded)
 *   sfu_prog churn        dlopen and dlclose libsfu_b.so and libsfu_c.so
 *                         in a loop until SIGTERM, then print "churned K"
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"

#define PROG_ARG	2
#define PROG_CHECK_IN	7
/* sfu_lib_call(x) = 3 * x + 2, sfu_prog_work(x) = x + 5 */
#define PROG_CHECK_OUT	38
#define PROG_WORK_ADD	5
#define NR_LOOKUPS	3

static __attribute__((noinline)) long sfu_prog_work(long x)
{
	__asm__ volatile("" : "+r" (x));
	return x + PROG_WORK_ADD;
}

static void signals_init(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	sigprocmask(SIG_BLOCK, set, NULL);
}

/* dlopen @path, call its sfu_lib_call(), dlclose it unless @keep. */
static int dl_call(const char *path, long *val, int keep)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	long (*call)(long x);

	if (!h) {
		printf("dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	call = (long (*)(long x))dlsym(h, SFU_LIB_CALL_SYM);
	if (call)
		*val = call(PROG_ARG);
	if (!keep)
		dlclose(h);
	return call ? 0 : -1;
}

static int check_value(void)
{
	return sfu_lib_call(sfu_prog_work(PROG_CHECK_IN)) == PROG_CHECK_OUT ?
	       0 : -1;
}

/* Map and unmap a library, fork a child that calls the library and exits. */
static int work(void)
{
	int status;
	pid_t pid;
	long v;

	if (dl_call(SFU_LIB("b"), &v, 0))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(check_value() ? 1 : 0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int wait_loop(const sigset_t *set)
{
	int sig, n = 0;

	printf("ready %d\n", (int)getpid());
	for (;;) {
		sig = sigwaitinfo(set, NULL);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig < 0)
			return 1;
		if (sig != SIGUSR2)
			return 0;
		n++;
		printf("work %d %s\n", n, work() ? "failed" : "ok");
	}
}

static int do_lookup(void)
{
	static const char *const what[NR_LOOKUPS] = { "self", "lib", "none" };
	char out[NR_LOOKUPS * SFU_LINE_MAX], *line, *save = NULL;
	long page = sysconf(_SC_PAGESIZE);
	unsigned long pcs[NR_LOOKUPS];
	void *anon;
	int i;

	anon = mmap(NULL, page, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		return -1;
	pcs[0] = (unsigned long)sfu_prog_work;
	pcs[1] = sfu_lib_pc();
	pcs[2] = (unsigned long)anon;
	if (reg_lookup(pcs, NR_LOOKUPS, out, sizeof(out))) {
		printf("lookup failed: %s\n", strerror(errno));
		return -1;
	}
	line = strtok_r(out, "\n", &save);
	for (i = 0; i < NR_LOOKUPS; i++) {
		printf("lookup %s %s\n", what[i], line ? line : "(no line)");
		line = line ? strtok_r(NULL, "\n", &save) : NULL;
	}
	return 0;
}

static int do_fork(const sigset_t *set)
{
	int sync[2], sig, status;
	pid_t child;
	char c = 0;

	if (pipe(sync))
		return 1;
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		printf("child %d\n", (int)getpid());
		fflush(stdout);
		if (write(sync[1], &c, 1) != 1)
			_exit(1);
		do {
			sig = sigwaitinfo(set, NULL);
		} while (sig == SIGUSR2 || (sig < 0 && errno == EINTR));
		if (sig != SIGUSR1)
			_exit(0);
		sigprocmask(SIG_UNBLOCK, set, NULL);
		execl(SFU_PROG2, SFU_PROG2, "wait", (char *)NULL);
		printf("exec %s: %s\n", SFU_PROG2, strerror(errno));
		_exit(1);
	}
	if (read(sync[0], &c, 1) != 1)
		return 1;
	printf("parent %d\n", (int)getpid());
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	do {
		sig = sigwaitinfo(set, NULL);
	} while (sig == SIGUSR2 || (sig < 0 && errno == EINTR));
	kill(child, SIGTERM);
	if (waitpid(child, &status, 0) != child)
		return 1;
	return 0;
}

static int do_churn(const sigset_t *set)
{
	static const char *const libs[] = { SFU_LIB("b"), SFU_LIB("c") };
	struct timespec zero = { 0 };
	unsigned long n;
	long v;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (n = 0;; n++) {
		if (dl_call(libs[n % 2], &v, 0))
			return 1;
		if (sigtimedwait(set, NULL, &zero) > 0)
			break;
	}
	printf("churned %lu\n", n);
	return 0;
}

/* Map a character device executable: the module must not read() it. */
static int map_device(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* The registration runs on the way back from mmap(). */
	printf("mapped %s\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	sigset_t set;
	long v;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "run"))
		return check_value() ? 1 : 0;
	signals_init(&set);
	printf("pid %d\n", (int)getpid());
	if (check_value()) {
		puts("wrong result from the library");
		return 1;
	}
	if (!strcmp(mode, "wait"))
		return wait_loop(&set);
	if (!strcmp(mode, "lookup"))
		return do_lookup() ? 1 : wait_loop(&set);
	if (!strcmp(mode, "fork"))
		return do_fork(&set);
	if (!strcmp(mode, "churn"))
		return do_churn(&set);
	if (!strcmp(mode, "device") && argc > 2)
		return map_device(argv[2]);
	if (!strcmp(mode, "dlopen") && argc > 2) {
		if (dl_call(argv[2], &v, 1))
			return 1;
		printf("called %ld\n", v);
		return wait_loop(&set);
	}
	fprintf(stderr, "usage: %s run|wait|lookup|fork|churn|dlopen PATH|device PATH\n",
		argv[0]);
	return 2;
}
