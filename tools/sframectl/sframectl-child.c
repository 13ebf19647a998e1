// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl's parsing child: what it keeps, what it may do, and how long
 * its parent waits for it.
 *
 * The child parses a file that any user may have written.  First it
 * closes every descriptor of the daemon but the file, an empty memfd, its
 * two pipes and stderr (the trace pipe, the device, the cache directory
 * and the signalfd stay with the parent), and copies the file into the
 * memfd, which the parent then seals: the only read of the file, moving
 * bytes and parsing none.  Then it gives up root, takes limits (CPU time,
 * address space, no new process, no new descriptor), maps the copy,
 * closes it and installs a seccomp filter that allows only what parsing
 * in memory needs: reading and writing its pipes, memory for malloc, and
 * exit.  Any other system call, or one of another architecture's table,
 * kills it.
 *
 * The parent waits for it with poll() until a wall-clock deadline
 * (--child-timeout), then kills it: a file that stalls the copy, or spins
 * the parser, costs its own time only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf-sframe.h"
#include "sframectl.h"

/* The child's limits: generous for libxul-sized files, small for a bomb. */
#define CTL_CHILD_CPU_S		60
#define CTL_CHILD_MEM		(2ULL << 30)
#define CTL_MS_PER_S		1000LL
#define CTL_NS_PER_MS		1000000LL
/* How often the parent looks for the child's end without a pidfd. */
#define CTL_REAP_STEP_MS	10
/* How long a child killed at its deadline may take to end. */
#define CTL_KILL_GRACE_MS	1000
/* The test hook (testing.rst): "spin:NAME" or "syscall:NAME". */
#define CTL_TEST_ENV		"SFRAMECTL_TEST_CHILD"
/* The file is copied in pieces of this size. */
#define CTL_COPY_CHUNK		(64 << 10)

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS	SECCOMP_RET_KILL
#endif

#if defined(__x86_64__)
#define CTL_AUDIT_ARCH		AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CTL_AUDIT_ARCH		AUDIT_ARCH_AARCH64
#elif defined(__s390x__)
#define CTL_AUDIT_ARCH		AUDIT_ARCH_S390X
#endif

/* In the child: its parent, which it does not outlive. */
static pid_t ctl_parent;

static long long ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * CTL_MS_PER_S + ts.tv_nsec / CTL_NS_PER_MS;
}

static int ctl_ms_left(const struct ctl_wait *w)
{
	long long left = w->deadline_ms - ctl_now_ms();

	return left > 0 ? (int)left : 0;
}

/**
 * ctl_child_started() - a child was forked for @name: its deadline starts
 * @w: what the parent waits for
 * @name: the file, for messages
 * @timeout_s: how long the child may take (--child-timeout)
 */
void ctl_child_started(struct ctl_wait *w, const char *name,
		       unsigned int timeout_s)
{
	w->name = name;
	w->timeout_s = timeout_s;
	w->deadline_ms = ctl_now_ms() + timeout_s * CTL_MS_PER_S;
}

/**
 * ctl_child_read() - read() from the child, waiting until its deadline
 * @w: the child, from ctl_child_started()
 * @fd: the pipe from the child
 * @buf: where
 * @len: at most this much
 *
 * Return: what read() returned, or -1 when the deadline has passed.
 */
ssize_t ctl_child_read(const struct ctl_wait *w, int fd, void *buf,
		       size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&pfd, 1, ctl_ms_left(w));
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	return read(fd, buf, len);
}

#ifdef __NR_pidfd_open
/* Until the child ends or the deadline passes; false if it cannot tell. */
static bool ctl_pidfd_wait(const struct ctl_wait *w, pid_t pid)
{
	struct pollfd pfd = { .events = POLLIN };

	pfd.fd = syscall(__NR_pidfd_open, pid, 0);
	if (pfd.fd < 0)
		return false;
	while (poll(&pfd, 1, ctl_ms_left(w)) < 0 && errno == EINTR)
		;
	close(pfd.fd);
	return true;
}
#else
static bool ctl_pidfd_wait(const struct ctl_wait *w, pid_t pid)
{
	return false;
}
#endif

/* What a killed child's signal means here. */
static void ctl_child_killed(const struct ctl_wait *w, int sig)
{
	if (sig == SIGSYS)
		fprintf(stderr, "%s: %s: the parsing child made a forbidden system call (SIGSYS); killed\n",
			ctl_prog, w->name);
	else
		fprintf(stderr, "%s: %s: the parsing child was killed by signal %d (%s)\n",
			ctl_prog, w->name, sig, strsignal(sig));
}

/* Until @pid ends or @w's deadline passes: what waitpid() said (0: not). */
static pid_t ctl_wait_until(const struct ctl_wait *w, pid_t pid, int *status)
{
	pid_t got = waitpid(pid, status, WNOHANG);

	if (!got && !ctl_pidfd_wait(w, pid)) {
		while (!(got = waitpid(pid, status, WNOHANG)) &&
		       ctl_ms_left(w))
			usleep(CTL_REAP_STEP_MS * 1000);
	}
	if (!got)
		got = waitpid(pid, status, WNOHANG);
	return got;
}

/**
 * ctl_child_wait() - reap the child, killing it if its deadline passes
 * @w: the child's deadline, from ctl_child_started()
 * @pid: the child
 * @status: its wait status
 *
 * A child killed at its deadline gets CTL_KILL_GRACE_MS to end: one that
 * a file's server holds past SIGKILL (FUSE waits for an answer to a
 * request its server has read, killed or not) is left behind.
 *
 * Return: 0, -EAGAIN if it was left behind, or -1 if it could not be
 * reaped.
 */
int ctl_child_wait(const struct ctl_wait *w, pid_t pid, int *status)
{
	struct ctl_wait grace = *w;
	pid_t got = ctl_wait_until(w, pid, status);

	if (!got) {
		fprintf(stderr, "%s: %s: reading and parsing took longer than %u s (--child-timeout); stopped\n",
			ctl_prog, w->name, w->timeout_s);
		kill(pid, SIGKILL);
		grace.deadline_ms = ctl_now_ms() + CTL_KILL_GRACE_MS;
		got = ctl_wait_until(&grace, pid, status);
		if (!got) {
			fprintf(stderr, "%s: %s: the child did not end when killed (its file's server holds it); left behind\n",
				ctl_prog, w->name);
			return -EAGAIN;
		}
		return got == pid ? 0 : -1;
	}
	if (got == pid && WIFSIGNALED(*status))
		ctl_child_killed(w, WTERMSIG(*status));
	return got == pid ? 0 : -1;
}

static int ctl_cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close descriptors @lo to @hi (inclusive; ~0U: all from @lo on). */
static void ctl_close_range(unsigned int lo, unsigned int hi)
{
	long open_max = sysconf(_SC_OPEN_MAX);

#ifdef __NR_close_range
	if (!syscall(__NR_close_range, lo, hi, 0))
		return;
#endif
	/* Without close_range() (before 5.9): one by one. */
	if (open_max > 0 && hi >= open_max)
		hi = open_max - 1;
	for (; lo <= hi; lo++)
		close(lo);
}

/* Close every descriptor but the @nr in @keep. */
static void ctl_keep_only(int *keep, int nr)
{
	unsigned int lo = 0;
	int i;

	qsort(keep, nr, sizeof(*keep), ctl_cmp_int);
	for (i = 0; i < nr; lo = keep[i++] + 1)
		if ((unsigned int)keep[i] > lo)
			ctl_close_range(lo, keep[i] - 1);
	ctl_close_range(lo, ~0U);
}

/**
 * ctl_child_keep() - close every descriptor but the file, pipes, stderr
 * @file: the file
 * @copy: the memfd its copy goes to
 * @out: the pipe to the parent
 * @in: the pipe from the parent
 */
void ctl_child_keep(int file, int copy, int out, int in)
{
	int keep[] = { STDERR_FILENO, file, copy, out, in };

	ctl_parent = getppid();
	ctl_keep_only(keep, ARRAY_SIZE(keep));
}

/* Is @buf all zero bytes? */
static bool ctl_zeros(const u8 *buf, size_t len)
{
	return !len || (!buf[0] && !memcmp(buf, buf + 1, len - 1));
}

static int ctl_pwrite_all(int fd, const u8 *buf, size_t len, off_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Copy @size bytes of @fd into @copy, leaving its zeros as holes. */
static int ctl_copy_bytes(int fd, int copy, u64 size)
{
	u8 *buf = malloc(CTL_COPY_CHUNK);
	u64 off = 0;
	ssize_t n;

	if (!buf || ftruncate(copy, size))
		goto free_buf;
	/*
	 * A read may return less than asked where the file system says so
	 * (9p gives at most its message size, about 128 KiB on 6.1): read
	 * on until the size fstat() gave, or the end of the file, which is
	 * an error then.
	 */
	while (off < size) {
		n = pread(fd, buf, size - off < CTL_COPY_CHUNK ?
			  size - off : CTL_COPY_CHUNK, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!ctl_zeros(buf, n) && ctl_pwrite_all(copy, buf, n, off))
			break;
		off += n;
	}
free_buf:
	free(buf);
	return off == size ? 0 : -1;
}

/**
 * ctl_child_copy() - copy the file into the memfd the parent seals
 * @fd: the file, closed here
 * @copy: the memfd, empty
 * @max: the most bytes the copy may hold (--copy-max, or a worker's share)
 * @name: the file, for messages
 *
 * The only read of the file: the parent digests the copy for the cache
 * and the child parses it.  Done in the child, under its deadline, so
 * that a file whose server never answers costs that deadline and no
 * more; still as root, as the file was opened (a FUSE server may answer
 * its mounter and root alone).  Only bytes are moved, none is parsed.
 *
 * Return: the file's size, or 0 if it cannot be copied.
 */
u64 ctl_child_copy(int fd, int copy, u64 max, const char *name)
{
	struct stat st;
	u64 size = 0;

	/* Killed with its parent, a daemon's worker killed at its deadline. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != ctl_parent ||
	    fstat(fd, &st) || st.st_size <= 0)
		goto close_fd;
	if ((u64)st.st_size > max)
		fprintf(stderr, "%s: %s: %lld bytes, more than sframectl copies (%llu, --copy-max)\n",
			ctl_prog, name, (long long)st.st_size,
			(unsigned long long)max);
	else if (ctl_copy_bytes(fd, copy, st.st_size))
		fprintf(stderr, "%s: %s: cannot read it\n", ctl_prog, name);
	else
		size = st.st_size;
close_fd:
	close(fd);
	return size;
}

/* What parsing in memory needs: pipes, malloc, exit. */
static const int ctl_allowed[] = {
	__NR_read, __NR_write, __NR_close, __NR_lseek,
	__NR_mmap, __NR_munmap, __NR_mremap, __NR_brk, __NR_madvise,
	__NR_exit, __NR_exit_group, __NR_rt_sigreturn,
#ifdef __NR_pread64
	__NR_pread64,
#endif
#ifdef __NR_writev
	__NR_writev,
#endif
#ifdef __NR_fstat
	__NR_fstat,
#endif
#ifdef __NR_newfstatat
	__NR_newfstatat,
#endif
#ifdef __NR_sigreturn
	__NR_sigreturn,
#endif
	/* glibc's qsort() asks for the memory size before 2.37. */
	__NR_sysinfo,
};

#ifdef CTL_AUDIT_ARCH
/* The filter's instructions besides a jump per allowed call. */
#define CTL_FILTER_FIXED	6

/* Allow ctl_allowed[] of this architecture; kill on anything else. */
static int ctl_seccomp(void)
{
	struct sock_filter f[ARRAY_SIZE(ctl_allowed) + CTL_FILTER_FIXED];
	struct sock_fprog prog = { .filter = f };
	unsigned int i, n = 0, nr = ARRAY_SIZE(ctl_allowed);

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		CTL_AUDIT_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
	/* Each match jumps to the ALLOW at the end. */
	for (i = 0; i < nr; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			ctl_allowed[i], nr - i, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ALLOW);
	prog.len = n;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}
#else
/* No filter where the architecture's table is not known (design.rst). */
static int ctl_seccomp(void)
{
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}
#endif

/*
 * For selftests/sframectl_daemon_trust.sh: with SFRAMECTL_TEST_CHILD set
 * (by root, in the daemon's environment) to "spin:NAME" the child for the
 * file NAME spins instead of parsing; to "syscall:NAME" it opens a file.
 */
static void ctl_test_hook(const char *name)
{
	const char *t = getenv(CTL_TEST_ENV), *colon;

	colon = t ? strchr(t, ':') : NULL;
	if (!colon || strcmp(colon + 1, name))
		return;
	if (!strncmp(t, "spin:", colon - t + 1))
		for (;;)	/* a constant condition: not optimised away */
			;
	if (!strncmp(t, "syscall:", colon - t + 1))
		open("/", O_RDONLY);
}

/**
 * ctl_child_confine() - the child's limits, its view of the file, its filter
 * @fd: the sealed copy of the file (sframectl-core.c): closed here
 * @f: its size in, where it is mapped out
 * @name: the file, for the test hook
 *
 * Called once root is given up.  The copy is mapped under the limits, so
 * a file of any size costs the address space they allow and no more.
 * The child dies with its parent too.
 *
 * Return: 0, or -1 (errno set).
 */
int ctl_child_confine(int fd, struct elf_file *f, const char *name)
{
	struct rlimit cpu = { CTL_CHILD_CPU_S, CTL_CHILD_CPU_S };
	struct rlimit mem = { CTL_CHILD_MEM, CTL_CHILD_MEM };
	struct rlimit none = { 0, 0 };
	void *data;

	if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_AS, &mem) ||
	    setrlimit(RLIMIT_NPROC, &none) || setrlimit(RLIMIT_NOFILE, &none))
		return -1;
	/* Killed with its parent (a daemon's worker, say); set past setuid(). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != ctl_parent)
		return -1;
	/* Private and writable: the parser's pages are its own. */
	data = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED)
		return -1;
	f->data = data;
	close(fd);
	if (ctl_seccomp())
		return -1;
	ctl_test_hook(name);
	return 0;
}
