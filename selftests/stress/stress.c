// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_stress: the loops of selftests/stress.sh.  Built with SFrame
 * (sfu_stress) and without (sfu_stress_plain, an exec target).  Every
 * loop runs until SECONDS have passed or SIGTERM comes, then prints
 * "MODE iterations=N errors=N ..." and exits 0 unless something failed
 * that must not (a library that does not load, a child that exits
 * non-zero).  None of them needs the module: the test hook is used when
 * it is there and its absence (or disappearance) is counted, not failed.
 *
 *   sfu_stress exec SECONDS      fork and exec sfu_prog (SFrame) and
 *                                sfu_stress_plain (none), in turn
 *   sfu_stress mmap SECONDS      map libsfu_d.so's text executable the way
 *                                ld.so does, sometimes fork, unmap
 *   sfu_stress dlopen SECONDS    dlopen, call into and dlclose libsfu_b.so,
 *                                libsfu_c.so and libsfu_d.so
 *   sfu_stress threads SECONDS   four threads at a time start and exit: one
 *                                asks the test hook for a deferred walk of
 *                                itself, the main thread asks one for
 *                                another as it exits; then a 5 ms pause
 *                                (an open hook file holds the module)
 *   sfu_stress sample SECONDS HZ system-wide cpu-clock sampling with call
 *                                chains (perf_event_open() on every CPU),
 *                                ring buffers drained; counts samples,
 *                                those with user frames, user frames
 *   sfu_stress noop              exit 0
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"

#define STRESS_PLAIN		"/selftests/stress/sfu_stress_plain"
#define STRESS_HOOK		SFU_DBG_DIR "/unwind"
#define STRESS_MAX_RATE		"/proc/sys/kernel/perf_event_max_sample_rate"

#define CALL_ARG		1
#define CALL_RESULT		5	/* sfu_lib_call(1) */
#define MMAP_FORK_EVERY		8
#define THREADS_PER_ROUND	4
#define HOOK_SELF		0	/* the thread that asks for itself */
#define HOOK_TASK		1	/* the thread the main thread asks for */
#define ROUND_PAUSE_NS		5000000
#define HOOK_READ_MAX		8192
#define RING_PAGES		64	/* data pages per CPU, a power of 2 */
#define MAX_CPUS		64
#define POLL_MS			100
#define DEEP_FRAMES		3

static atomic_int stopping;
static struct timespec deadline;

static void on_term(int sig)
{
	atomic_store(&stopping, 1);
}

static int done(void)
{
	struct timespec now;

	if (atomic_load(&stopping))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec &&
		now.tv_nsec >= deadline.tv_nsec);
}

static void setup(const char *secs)
{
	struct sigaction sa = { .sa_handler = on_term };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += strtol(secs, NULL, 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/* fork and exec @argv; 0 if the child exited 0. */
static int spawn(char *const argv[])
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int loop_exec(void)
{
	char *const with[] = { SFU_PROG, "run", NULL };
	char *const plain[] = { STRESS_PLAIN, "noop", NULL };
	unsigned long iters = 0, errors = 0;

	while (!done()) {
		if (spawn(iters & 1 ? plain : with)) {
			errors++;
			printf("exec %s failed\n", iters & 1 ? plain[0] : with[0]);
		}
		iters++;
	}
	printf("exec iterations=%lu errors=%lu\n", iters, errors);
	return errors ? 1 : 0;
}

/* Map the file read-only, then its text executable over it, as ld.so. */
static int map_once(int fd, const Elf64_Phdr *text, uint64_t span,
		    unsigned long iter)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t off = text->p_offset & ~(page - 1);
	uint64_t len = text->p_offset + text->p_filesz - off;
	char *base, *at;
	pid_t pid;
	int status;

	span = (span + page - 1) & ~(page - 1);
	base = mmap(NULL, span, PROT_READ, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		return -1;
	at = mmap(base + (text->p_vaddr & ~(page - 1)), len,
		  PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, off);
	if (at == MAP_FAILED) {
		munmap(base, span);
		return -1;
	}
	if (iter % MMAP_FORK_EVERY == 0) {
		/* The child inherits the registered text, and exits. */
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid > 0)
			waitpid(pid, &status, 0);
	}
	/* Unmap the text first on every other round, then the rest. */
	if (iter & 1)
		munmap(at, len);
	return munmap(base, span);
}

static int loop_mmap(void)
{
	unsigned long iters = 0, errors = 0;
	Elf64_Phdr text;
	uint64_t span;
	int fd;

	fd = open(SFU_LIB("d"), O_RDONLY | O_CLOEXEC);
	if (fd < 0 || reg_elf_text(fd, &text, &span)) {
		printf("mmap: cannot read %s\n", SFU_LIB("d"));
		return 1;
	}
	while (!done()) {
		if (map_once(fd, &text, span, iters))
			errors++;
		iters++;
	}
	close(fd);
	printf("mmap iterations=%lu errors=%lu\n", iters, errors);
	return errors ? 1 : 0;
}

static int loop_dlopen(void)
{
	static const char *const libs[] = {
		SFU_LIB("b"), SFU_LIB("c"), SFU_LIB("d"),
	};
	unsigned long iters = 0, errors = 0;
	long (*call)(long x);
	void *h;

	while (!done()) {
		const char *path = libs[iters % 3];

		iters++;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("dlopen %s: %s\n", path, dlerror());
			errors++;
			continue;
		}
		call = (long (*)(long x))dlsym(h, SFU_LIB_CALL_SYM);
		if (!call || call(CALL_ARG) != CALL_RESULT)
			errors++;
		dlclose(h);
	}
	printf("dlopen iterations=%lu errors=%lu\n", iters, errors);
	return errors ? 1 : 0;
}

struct stress_thread {
	pthread_t thread;
	atomic_int tid;
	atomic_int go;
	int hook;	/* asks the hook for a walk of itself */
	int walked;	/* the hook answered its own request */
};

/* Ask the test hook for a deferred walk of the caller; 1 if it answered. */
static int hook_walk(void)
{
	static const char cmd[] = "deferred";
	char buf[HOOK_READ_MAX];
	int fd, ret = 0;

	fd = open(STRESS_HOOK, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* no module, no hooks, or going away */
	if (write(fd, cmd, sizeof(cmd) - 1) == sizeof(cmd) - 1 &&
	    read(fd, buf, sizeof(buf)) > 0)
		ret = 1;
	close(fd);
	return ret;
}

static void *thread_fn(void *arg)
{
	struct stress_thread *t = arg;
	unsigned long spin;

	if (t->hook)
		t->walked = hook_walk();
	atomic_store(&t->tid, (int)syscall(SYS_gettid));
	/* Run in user space until the main thread has asked (or not). */
	for (spin = 0; !atomic_load(&t->go); spin++)
		__asm__ volatile("" : "+r" (spin));
	return NULL;
}

/* Ask the test hook for a deferred walk of thread @tid, interrupting it. */
static int hook_task(int tid)
{
	char cmd[32];
	int fd, ret;

	fd = open(STRESS_HOOK, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "task %d", tid);
	/* The thread may be gone already: ESRCH is fine. */
	ret = write(fd, cmd, strlen(cmd)) > 0;
	close(fd);
	return ret;
}

static int loop_threads(void)
{
	const struct timespec pause = { .tv_nsec = ROUND_PAUSE_NS };
	unsigned long iters = 0, errors = 0, walked = 0, asked = 0;
	struct stress_thread t[THREADS_PER_ROUND];
	int i, n;

	while (!done()) {
		memset(t, 0, sizeof(t));
		for (i = 0; i < THREADS_PER_ROUND; i++) {
			t[i].hook = i == HOOK_SELF;
			if (pthread_create(&t[i].thread, NULL, thread_fn,
					   &t[i])) {
				errors++;
				break;
			}
		}
		n = i;
		for (i = 0; i < n; i++) {
			while (!atomic_load(&t[i].tid))
				sched_yield();
			if (i == HOOK_TASK)
				asked += hook_task(atomic_load(&t[i].tid));
			atomic_store(&t[i].go, 1);
		}
		for (i = 0; i < n; i++) {
			pthread_join(t[i].thread, NULL);
			walked += t[i].walked;
		}
		iters += n;
		/* An open hook file holds the module: leave rmmod a chance. */
		nanosleep(&pause, NULL);
	}
	printf("threads iterations=%lu errors=%lu walked=%lu asked=%lu\n",
	       iters, errors, walked, asked);
	return errors ? 1 : 0;
}

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	char *data;
	uint64_t size;
};

struct sample_counts {
	unsigned long samples, user, frames, deep, lost, other;
};

static void count_sample(const char *rec, struct sample_counts *c)
{
	/* PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN */
	const uint64_t *p = (const uint64_t *)(rec +
					       sizeof(struct perf_event_header));
	uint64_t nr = p[2], i, user = 0;
	int in_user = 0;

	c->samples++;
	for (i = 0; i < nr; i++) {
		uint64_t ip = p[3 + i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			in_user = ip == (uint64_t)PERF_CONTEXT_USER;
		else if (in_user)
			user++;
	}
	if (user)
		c->user++;
	if (user >= DEEP_FRAMES)
		c->deep++;
	c->frames += user;
}

/* Take every record out of @r. */
static void drain(struct ring *r, struct sample_counts *c)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	static char rec[1 << 16];	/* any record: its size is a u16 */
	struct perf_event_header h;
	uint64_t at, i;

	while (tail < head) {
		at = tail & (r->size - 1);
		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = r->data[(at + i) & (r->size - 1)];
		if (h.size < sizeof(h))
			break;
		for (i = 0; i < h.size; i++)
			rec[i] = r->data[(at + i) & (r->size - 1)];
		if (h.type == PERF_RECORD_SAMPLE)
			count_sample(rec, c);
		else if (h.type == PERF_RECORD_LOST)
			c->lost += ((uint64_t *)(rec + sizeof(h)))[1];
		else
			c->other++;
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

static long read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int loop_sample(long hz)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_CALLCHAIN,
		.watermark = 1,
	};
	long page = sysconf(_SC_PAGESIZE), max;
	int ncpus = sysconf(_SC_NPROCESSORS_CONF), cpu, n = 0, i;
	struct pollfd pfd[MAX_CPUS];
	struct ring rings[MAX_CPUS];
	struct sample_counts c = { 0 };
	void *m;

	max = read_long(STRESS_MAX_RATE);
	if (max > 0 && hz > max)
		hz = max;
	attr.sample_freq = hz;
	attr.wakeup_watermark = RING_PAGES * page / 4;
	for (cpu = 0; cpu < ncpus && n < MAX_CPUS; cpu++) {
		struct ring *r = &rings[n];

		r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
				PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0)
			continue;	/* offline */
		r->size = RING_PAGES * page;
		m = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE,
			 MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED) {
			close(r->fd);
			continue;
		}
		r->meta = m;
		r->data = (char *)m + page;
		pfd[n].fd = r->fd;
		pfd[n].events = POLLIN;
		n++;
	}
	if (!n) {
		printf("sample: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	printf("sample cpus=%d hz=%ld\n", n, hz);
	while (!done()) {
		poll(pfd, n, POLL_MS);
		for (i = 0; i < n; i++)
			drain(&rings[i], &c);
	}
	for (i = 0; i < n; i++) {
		ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		drain(&rings[i], &c);
		munmap(rings[i].meta, (RING_PAGES + 1) * page);
		close(rings[i].fd);
	}
	printf("sample iterations=%lu errors=0 user=%lu frames=%lu deep=%lu lost=%lu other=%lu\n",
	       c.samples, c.user, c.frames, c.deep, c.lost, c.other);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "noop"))
		return 0;
	if (argc < 3)
		goto usage;
	setup(argv[2]);
	if (!strcmp(mode, "exec"))
		return loop_exec();
	if (!strcmp(mode, "mmap"))
		return loop_mmap();
	if (!strcmp(mode, "dlopen"))
		return loop_dlopen();
	if (!strcmp(mode, "threads"))
		return loop_threads();
	if (!strcmp(mode, "sample") && argc > 3)
		return loop_sample(strtol(argv[3], NULL, 10));
usage:
	fprintf(stderr,
		"usage: %s exec|mmap|dlopen|threads SECONDS | sample SECONDS HZ | noop\n",
		argv[0]);
	return 2;
}
