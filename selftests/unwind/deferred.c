// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred unwinding API through the test hook.
 *
 *  - "deferred 2": both consumers get the walk, with the same cookie and
 *    the same frames, and the stats count two requests and one walk;
 *  - two separate requests get two cookies, the second larger; 1000 more
 *    requests get strictly increasing cookies, none reused;
 *  - a process exits with a request pending for one of its threads: a
 *    thread blocked in read() on a pipe (interrupted by the request), and
 *    one blocked in vfork() (a killable sleep: the request stays pending
 *    until the exit); every request ends as a walk or a drop;
 *  - a process execs with a request pending for one of its threads: for
 *    the thread that dies in the exec, and for the main thread when
 *    another thread execs (the new program gets the main thread's id);
 *    the new program must find no result under its own id;
 *  - the module is unloaded while two programs loop over "deferred" and
 *    "task" requests (opening the file for each, so rmmod can succeed),
 *    and loaded again: the programs go on (their requests fail while the
 *    module is away, then succeed again) and exit 0.
 *
 * Usage: unwind_deferred (the helper modes are for its own children)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "uw.h"

#define UW_COOKIE_RUNS	1000
#define UW_LOOPERS	2
#define UW_RMMOD_TRIES	250
#define UW_MS		1000000L
#define UW_SETTLE_MS	3000
#define UW_SELF		"/proc/self/exe"

/* ---- small helpers */

static void uw_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * UW_MS };

	nanosleep(&ts, NULL);
}

/* The state letter of thread @tid of this process ('R', 'S', 'D', ...). */
static char uw_task_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return '?';
	buf[got] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : '?';
}

/* Wait up to 5 s for thread @tid to be in state @state. */
static bool uw_wait_state(pid_t tid, char state)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (uw_task_state(tid) == state)
			return true;
		uw_sleep_ms(10);
	}
	return false;
}

/*
 * Reap the vfork children, reparented to us (a subreaper) when their
 * parent went; they exit once the pipe they read is closed.
 */
static void uw_reap(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		uw_sleep_ms(10);
	}
}

struct uw_dstats {
	unsigned long long requests, walks, dropped, busy;
};

static int uw_dstats(struct uw_dstats *s)
{
	return uw_stat("deferred_requests", &s->requests) ||
	       uw_stat("deferred_walks", &s->walks) ||
	       uw_stat("deferred_dropped", &s->dropped) ||
	       uw_stat("deferred_busy", &s->busy) ? -1 : 0;
}

/*
 * Wait until every request made since @s0 has ended as a walk or a drop;
 * @s1 gets the last reading.  Returns true if they balance.
 */
static bool uw_settle(const struct uw_dstats *s0, struct uw_dstats *s1)
{
	int i;

	for (i = 0; i < UW_SETTLE_MS / 10; i++) {
		if (uw_dstats(s1))
			return false;
		if (s1->requests - s0->requests ==
		    (s1->walks - s0->walks) + (s1->dropped - s0->dropped))
			return true;
		uw_sleep_ms(10);
	}
	return false;
}

static void uw_print_delta(const char *what, const struct uw_dstats *s0,
			   const struct uw_dstats *s1)
{
	ksft_print_msg("%s: deferred_requests +%llu, deferred_walks +%llu, deferred_dropped +%llu, deferred_busy +%llu\n",
		       what, s1->requests - s0->requests, s1->walks - s0->walks,
		       s1->dropped - s0->dropped, s1->busy - s0->busy);
}

/* Request @cmd with an inline system call; the walk is of this frame. */
__attribute__((noipa)) long uw_ask(int fd, const char *cmd)
{
	long ret = uw_raw_write(fd, cmd, strlen(cmd));

	ret = uw_opaque(ret);
	return ret;
}

/* ---- one walk for two consumers, cookies */

static void test_two_consumers(int fd)
{
	struct uw_dstats s0, s1;
	struct uw_walk w[3];
	bool same = false;
	int n = -1;

	if (uw_dstats(&s0) || uw_ask(fd, "deferred 2") < 0 ||
	    uw_dstats(&s1)) {
		ksft_test_result_fail("deferred 2: request failed\n");
		ksft_test_result_fail("deferred 2: stats\n");
		return;
	}
	n = uw_read(fd, w, ARRAY_SIZE(w));
	if (n == 2)
		same = w[0].cookie && w[0].cookie == w[1].cookie &&
		       w[0].consumer != w[1].consumer &&
		       w[0].consumer + w[1].consumer == 1 &&
		       w[0].nr == w[1].nr && !strcmp(w[0].stop, w[1].stop) &&
		       !memcmp(w[0].pcs, w[1].pcs, w[0].nr * sizeof(w[0].pcs[0]));
	if (n >= 1)
		uw_print_walk("deferred 2, first", &w[0]);
	if (n == 2 && !same)
		uw_print_walk("deferred 2, second", &w[1]);
	ksft_test_result(same, "deferred 2: %d results, consumers 0 and 1, same cookie %llu, same %u frames\n",
			 n, n >= 1 ? w[0].cookie : 0, n >= 1 ? w[0].nr : 0);
	uw_print_delta("deferred 2", &s0, &s1);
	ksft_test_result(s1.requests - s0.requests == 2 &&
			 s1.walks - s0.walks == 1,
			 "deferred 2: two requests, one walk\n");
}

/* The cookie of one "deferred" request; 0 if it failed. */
static unsigned long long uw_one_cookie(int fd)
{
	struct uw_walk w[2];

	if (uw_ask(fd, "deferred") < 0 || uw_read(fd, w, ARRAY_SIZE(w)) != 1)
		return 0;
	return w[0].cookie;
}

static void test_cookies(int fd)
{
	unsigned long long a, b, prev, c;
	unsigned int i, bad = 0, lost = 0;
	struct uw_dstats s0, s1;

	a = uw_one_cookie(fd);
	b = uw_one_cookie(fd);
	ksft_test_result(a && b && b > a,
			 "two requests: cookies %llu then %llu\n", a, b);

	uw_dstats(&s0);
	prev = b;
	for (i = 0; i < UW_COOKIE_RUNS; i++) {
		c = uw_one_cookie(fd);
		if (!c) {
			lost++;
			continue;
		}
		if (c <= prev && bad++ < 5)
			ksft_print_msg("cookie %llu after %llu\n", c, prev);
		prev = c;
	}
	uw_dstats(&s1);
	uw_print_delta("1000 requests", &s0, &s1);
	ksft_test_result(!bad && !lost && prev > b &&
			 s1.walks - s0.walks == UW_COOKIE_RUNS,
			 "%u more requests: cookies strictly increasing (last %llu), %u lost, %u out of order\n",
			 UW_COOKIE_RUNS, prev, lost, bad);
}

/* ---- a request pending at exit */

struct uw_blocker {
	int pipe[2];
	bool vfork;
	atomic_int tid;		/* the blocked thread */
};

/* Block in read() on a pipe, or in vfork() behind a child that does. */
static void *uw_block(void *arg)
{
	struct uw_blocker *b = arg;
	char c;

	atomic_store(&b->tid, gettid());
	/* Until the process exits (nothing writes: only EOF ends it). */
	if (!b->vfork) {
		while (read(b->pipe[0], &c, 1) > 0)
			;
		return NULL;
	}
	/*
	 * The child shares our memory and waits until every write end of
	 * the pipe is closed: ours go when this process exits or execs.
	 */
	if (vfork() == 0) {
		close(b->pipe[1]);
		while (read(b->pipe[0], &c, 1) > 0)
			;
		_exit(0);
	}
	return NULL;
}

static int uw_start_blocker(struct uw_blocker *b, bool vfork)
{
	pthread_t thread;

	b->vfork = vfork;
	atomic_store(&b->tid, 0);
	if (pipe2(b->pipe, O_CLOEXEC) ||
	    pthread_create(&thread, NULL, uw_block, b))
		return -1;
	while (!atomic_load(&b->tid))
		uw_sleep_ms(1);
	/* read() sleeps interruptibly (S), vfork() killably (D). */
	return uw_wait_state(atomic_load(&b->tid), vfork ? 'D' : 'S') ? 0 : -1;
}

/*
 * Child: block a thread, request a walk of it, say whether the request is
 * still pending 100 ms later, and exit the whole process at once.
 */
static void uw_exit_child(bool vfork, int report)
{
	struct uw_blocker b;
	struct uw_walk w[2];
	char cmd[32];
	int fd, n, msg[2];

	fd = uw_open();
	if (fd < 0 || uw_start_blocker(&b, vfork))
		_exit(2);
	snprintf(cmd, sizeof(cmd), "task %d", (int)atomic_load(&b.tid));
	msg[0] = uw_cmd(fd, cmd);
	uw_sleep_ms(100);
	n = uw_fetch(fd, atomic_load(&b.tid), w, ARRAY_SIZE(w));
	msg[1] = n;
	if (write(report, msg, sizeof(msg)) != sizeof(msg))
		_exit(2);
	_exit(0);
}

static void test_exit_pending(bool vfork)
{
	const char *what = vfork ? "exit, thread in vfork()" :
			   "exit, thread in read()";
	struct uw_dstats s0, s1;
	int status, rep[2], msg[2] = { -1, -1 };
	bool settled;
	pid_t pid;

	if (uw_dstats(&s0) || pipe2(rep, O_CLOEXEC)) {
		ksft_test_result_fail("%s: set-up\n", what);
		return;
	}
	pid = fork();
	if (pid == 0)
		uw_exit_child(vfork, rep[1]);
	close(rep[1]);
	if (pid < 0 || read(rep[0], msg, sizeof(msg)) != sizeof(msg))
		ksft_print_msg("%s: the child did not report\n", what);
	close(rep[0]);
	waitpid(pid, &status, 0);
	uw_reap();
	settled = uw_settle(&s0, &s1);
	ksft_print_msg("%s: request %s, %d results 100 ms later (%s)\n", what,
		       msg[0] ? strerror(-msg[0]) : "queued", msg[1],
		       msg[1] == 0 ? "pending" : "walked");
	uw_print_delta(what, &s0, &s1);
	ksft_test_result(!msg[0] && WIFEXITED(status) && !WEXITSTATUS(status) &&
			 settled && s1.requests - s0.requests == 1 &&
			 (!vfork || msg[1] == 0),
			 "%s: exit status %d, the request ended as %s\n", what,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 s1.walks > s0.walks ? "a walk" :
			 s1.dropped > s0.dropped ? "a drop" : "nothing");
}

/* ---- a request pending at exec */

/* The program exec'd: report what the hook holds for it. */
static int uw_exec_child(pid_t old_tid)
{
	struct uw_walk *w = calloc(4, sizeof(*w));
	int fd, own, old, i;

	fd = uw_open();
	if (fd < 0 || !w)
		return 2;
	own = uw_fetch(fd, gettid(), w, 4);
	for (i = 0; i < own; i++)
		uw_print_walk("exec: stale result under the new program's id",
			      &w[i]);
	old = uw_fetch(fd, old_tid, w, 4);
	for (i = 0; i < old; i++)
		uw_print_chain("exec: result of the thread the exec ended", &w[i]);
	ksft_print_msg("exec: new program %d: %d results under its own id, %d under the old thread %d\n",
		       gettid(), own, old, (int)old_tid);
	close(fd);
	free(w);
	return own == 0 ? 0 : 1;
}

struct uw_execer {
	pid_t target;
	int fd;
};

/* Request a walk of @target (pending: it sleeps killably) and exec. */
static void uw_exec_now(int fd, pid_t target, pid_t other)
{
	char cmd[32], arg[16];
	struct uw_walk w[2];

	snprintf(cmd, sizeof(cmd), "task %d", (int)target);
	if (uw_cmd(fd, cmd))
		_exit(3);
	uw_sleep_ms(50);
	if (uw_fetch(fd, target, w, ARRAY_SIZE(w)) != 0)
		_exit(4);	/* not pending: the test means nothing */
	close(fd);
	snprintf(arg, sizeof(arg), "%d", (int)other);
	execl(UW_SELF, "unwind_deferred", "exec-child", arg, (char *)NULL);
	_exit(5);
}

static void *uw_exec_thread(void *arg)
{
	struct uw_execer *e = arg;

	if (!uw_wait_state(e->target, 'D'))
		_exit(2);
	uw_exec_now(e->fd, e->target, e->target);
	return NULL;
}

/*
 * Child: with @leader, the main thread sleeps in vfork() and another thread
 * requests a walk of it and execs (taking over the main thread's id);
 * else the main thread requests a walk of a thread sleeping in vfork()
 * and execs.
 */
static void uw_exec_parent(bool leader)
{
	struct uw_blocker b;
	struct uw_execer e;
	pthread_t thread;
	int fd = uw_open();

	if (fd < 0)
		_exit(2);
	if (!leader) {
		if (uw_start_blocker(&b, true))
			_exit(2);
		uw_exec_now(fd, atomic_load(&b.tid), atomic_load(&b.tid));
	}
	e.fd = fd;
	e.target = getpid();
	if (pthread_create(&thread, NULL, uw_exec_thread, &e))
		_exit(2);
	/* As uw_block(), in this (the main) thread. */
	b.vfork = true;
	atomic_store(&b.tid, gettid());
	if (pipe2(b.pipe, O_CLOEXEC))
		_exit(2);
	uw_block(&b);
	_exit(6);
}

static void test_exec_pending(bool leader)
{
	const char *what = leader ?
		"exec by another thread, main thread in vfork()" :
		"exec by the main thread, other thread in vfork()";
	struct uw_dstats s0, s1;
	bool settled;
	int status;
	pid_t pid;

	if (uw_dstats(&s0)) {
		ksft_test_result_fail("%s: stats\n", what);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		uw_exec_parent(leader);
	waitpid(pid, &status, 0);
	uw_reap();
	settled = uw_settle(&s0, &s1);
	uw_print_delta(what, &s0, &s1);
	ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status) &&
			 settled && s1.requests - s0.requests == 1,
			 "%s: new program exit status %d (0: no result under its id), request ended as %s\n",
			 what, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 s1.walks > s0.walks ? "a walk" :
			 s1.dropped > s0.dropped ? "a drop" : "nothing");
}

/* ---- unload with requests in flight */

struct uw_counts {
	atomic_ulong ok, fail;
};

struct uw_shared {
	atomic_int stop;
	struct uw_counts c[UW_LOOPERS];
};

static struct uw_shared *uw_sh;

static atomic_int uw_spin_stop;
static atomic_int uw_spin_tid;

/* Busy in user space, where "task" requests interrupt it. */
__attribute__((noipa)) void *uw_spin(void *arg)
{
	unsigned long x = 1;

	atomic_store(&uw_spin_tid, gettid());
	while (!atomic_load_explicit(&uw_spin_stop, memory_order_relaxed))
		x = x * 33 + 1;
	x = uw_opaque(x);
	return NULL;
}

/* Open, request, close; true if the request was accepted. */
static bool uw_once(const char *cmd, bool read_back)
{
	struct uw_walk w[2];
	int fd = uw_open();
	bool ok;

	if (fd < 0)
		return false;
	ok = uw_ask(fd, cmd) >= 0;
	if (ok && read_back)
		uw_read(fd, w, ARRAY_SIZE(w));
	close(fd);
	return ok;
}

static void uw_looper(struct uw_counts *c)
{
	struct uw_walk w[4];
	pthread_t thread;
	char cmd[32];
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pthread_create(&thread, NULL, uw_spin, NULL))
		_exit(2);
	while (!atomic_load(&uw_spin_tid))
		uw_sleep_ms(1);
	snprintf(cmd, sizeof(cmd), "task %d", (int)atomic_load(&uw_spin_tid));
	while (!atomic_load(&uw_sh->stop)) {
		if (uw_once("deferred", true))
			atomic_fetch_add(&c->ok, 1);
		else
			atomic_fetch_add(&c->fail, 1);
		if (uw_once(cmd, false))
			atomic_fetch_add(&c->ok, 1);
		else
			atomic_fetch_add(&c->fail, 1);
		/* Take the spinner's walks away now and then. */
		fd = uw_open();
		if (fd >= 0) {
			uw_fetch(fd, atomic_load(&uw_spin_tid), w,
				 ARRAY_SIZE(w));
			close(fd);
		}
		/* With no file open, so that rmmod gets its chance. */
		uw_sleep_ms(1);
	}
	atomic_store(&uw_spin_stop, 1);
	pthread_join(thread, NULL);
	_exit(0);
}

/* Every looper's @field grows within 3 s. */
static bool uw_all_grow(bool ok)
{
	unsigned long before[UW_LOOPERS];
	int i, t;
	bool all;

	for (i = 0; i < UW_LOOPERS; i++)
		before[i] = ok ? atomic_load(&uw_sh->c[i].ok) :
				 atomic_load(&uw_sh->c[i].fail);
	for (t = 0; t < 300; t++) {
		uw_sleep_ms(10);
		all = true;
		for (i = 0; i < UW_LOOPERS; i++)
			all = all && (ok ? atomic_load(&uw_sh->c[i].ok) :
				      atomic_load(&uw_sh->c[i].fail)) >
				     before[i];
		if (all)
			return true;
	}
	return false;
}

static bool uw_alive(const pid_t *pids)
{
	int i;

	for (i = 0; i < UW_LOOPERS; i++)
		if (waitpid(pids[i], NULL, WNOHANG) != 0)
			return false;
	return true;
}

/* rmmod, retried while the loopers hold the file open. */
static int uw_rmmod(int *tries)
{
	int i;

	for (i = 1; i <= UW_RMMOD_TRIES; i++) {
		*tries = i;
		if (!syscall(SYS_delete_module, UW_MODNAME, O_NONBLOCK))
			return 0;
		if (errno != EAGAIN && errno != EBUSY)
			return -errno;
		uw_sleep_ms(20);
	}
	return -EBUSY;
}

static int uw_insmod(void)
{
	int fd = open(UW_KO, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "test_hooks=1", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static void test_unload(void)
{
	pid_t pids[UW_LOOPERS];
	struct uw_dstats s0 = { 0 }, s1;
	int i, ret, tries = 0, status, clean = 0;
	bool settled;

	uw_sh = mmap(NULL, sizeof(*uw_sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (uw_sh == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	fflush(stdout);
	for (i = 0; i < UW_LOOPERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			uw_looper(&uw_sh->c[i]);
	}
	ksft_test_result(uw_all_grow(true),
			 "unload: %d programs loop over deferred and task requests\n",
			 UW_LOOPERS);

	ret = uw_rmmod(&tries);
	ksft_test_result(!ret, "unload: rmmod while they run: %s after %d tries\n",
			 strerror(-ret), tries);
	ksft_test_result(!uw_hook_present() && uw_alive(pids) &&
			 uw_all_grow(false),
			 "unload: the programs run on, their requests fail\n");

	ret = uw_insmod();
	ksft_test_result(!ret && uw_hook_present(),
			 "unload: insmod again: %s\n", strerror(-ret));
	ksft_test_result(uw_alive(pids) && uw_all_grow(true),
			 "unload: their requests succeed again\n");

	atomic_store(&uw_sh->stop, 1);
	for (i = 0; i < UW_LOOPERS; i++)
		if (waitpid(pids[i], &status, 0) == pids[i] &&
		    WIFEXITED(status) && !WEXITSTATUS(status))
			clean++;
	for (i = 0; i < UW_LOOPERS; i++)
		ksft_print_msg("looper %d: %lu requests accepted, %lu refused\n",
			       i, atomic_load(&uw_sh->c[i].ok),
			       atomic_load(&uw_sh->c[i].fail));
	settled = uw_settle(&s0, &s1);
	uw_print_delta("since the reload", &s0, &s1);
	ksft_test_result(clean == UW_LOOPERS && settled,
			 "unload: the programs exit 0; every request since the reload ended as a walk or a drop\n");
	munmap(uw_sh, sizeof(*uw_sh));
}

int main(int argc, char **argv)
{
	int fd;

	if (argc == 3 && !strcmp(argv[1], "exec-child"))
		return uw_exec_child(atoi(argv[2]));
	if (argc != 1)
		ksft_exit_fail_msg("usage: %s\n", argv[0]);

	ksft_print_header();
	if (!uw_hook_present())
		ksft_exit_skip("no %s: the module is not loaded\n", UW_HOOK);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		ksft_exit_fail_perror("PR_SET_CHILD_SUBREAPER");
	fd = uw_open();
	if (fd < 0)
		ksft_exit_fail_perror(UW_HOOK);
	ksft_set_plan(14);

	test_two_consumers(fd);
	test_cookies(fd);
	close(fd);
	test_exit_pending(false);
	test_exit_pending(true);
	test_exec_pending(false);
	test_exec_pending(true);
	test_unload();
	ksft_finished();
}
