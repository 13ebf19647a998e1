// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl daemon: keep every program's files covered by SFrame.
 *
 * The module emits the trace event sframe_unwind:sframe_unwind_nosframe
 * whenever it registers an executable mapping of an ELF file that has
 * neither PT_GNU_SFRAME nor a sidecar (kernel/trace.h).  The daemon
 * follows that event in a tracefs instance of its own ("sframectl", so it
 * disturbs no other tracer), which is privileged, bounded by the instance's
 * ring buffer, and tells of overflow in a line of its own: then it syncs,
 * at most once every CTL_SYNC_GAP_S seconds.  A sync's files (at start,
 * at a module's return, after losses) go to the workers as events' do,
 * never into the last free one, which the events keep.  For
 * each event it adds a sidecar for the mapped file, opened through
 * /proc/PID/map_files, in one of its workers (sframectl-pool.c); the
 * module applies it to the mapping that caused the event, every other
 * one, and every later one.  Sections come from
 * the cache (sframectl-cache.c) when it has them, so a restarted daemon,
 * or one that follows a module reload, does not parse a file again.
 *
 * While it runs it holds the module's lease on the wait at first mapping
 * (SFRAME_UNWIND_IOC_LISTEN, kernel/sidecar_wait.c), so a task that maps such
 * a file waits, bounded, until the sidecar is in; its workers tell the
 * module of the files they cannot make a section for.
 *
 * The daemon keeps neither the device nor an event file open between
 * events, so the module can be unloaded under it.  When the event goes
 * away (rmmod), it waits; when it comes back (insmod, sidecars lost), it
 * enables it again and syncs.  Files that failed are not retried until
 * they change (size or modification time) or the daemon restarts.
 * SIGINT and SIGTERM end it and remove the instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframectl.h"

#define CTL_TRACEFS		"/sys/kernel/tracing"
#define CTL_INSTANCE		CTL_TRACEFS "/instances/sframectl"
#define CTL_ENABLE		CTL_INSTANCE \
				"/events/sframe_unwind/sframe_unwind_nosframe/enable"
#define CTL_PIPE		CTL_INSTANCE "/trace_pipe"
#define CTL_POLL_MS		500
/* The event's text, as kernel/trace.h prints it. */
#define CTL_EVENT_FORMAT	"sframe_unwind_nosframe: pid=%d start=0x%lx " \
				"end=0x%lx dev=%u:%u ino=%llu fs=0x%lx"
/* Its fields; a module older than the fs field gives six. */
#define CTL_EVENT_FIELDS	7
#define CTL_EVENT_FIELDS_OLD	6
#define CTL_READ_MAX		65536
#define CTL_CLOCK		CTL_INSTANCE "/trace_clock"
#define CTL_EVENT_NAME		" sframe_unwind_nosframe: "
#define CTL_MS_PER_S		1e3
#define CTL_US_PER_S		1e6
#define CTL_NS_PER_S		1e9
#define CTL_P99			0.99
/* What the daemon polls. */
enum { CTL_PFD_TRACE, CTL_PFD_SIGNAL, CTL_PFD_WORKERS, CTL_PFDS };
#define CTL_BUFFER_PERCENT	CTL_INSTANCE "/buffer_percent"
/*
 * The lease the daemon takes on the module's wait at first mapping
 * (SFRAME_UNWIND_IOC_LISTEN), and how often it renews it: a daemon that
 * dies holds tasks for CTL_LEASE_MS at most.
 */
#define CTL_LEASE_MS		3000
#define CTL_LEASE_RENEW_S	1.0
/*
 * The lease is renewed only while answers flow: not once every worker has
 * spent this long on its file with none done since, so that a file that
 * stalls the workers (on FUSE, or a long parse) holds no new mapping.
 */
#define CTL_STALL_S		10.0
/* The fewest seconds between two syncs for lost events. */
#define CTL_SYNC_GAP_S		10
/*
 * How trace_pipe tells of events lost on a CPU: a line of its own, from
 * print_trace_line() (kernel/trace/trace.c); the count is unknown when an
 * iterator dropped them.  An event line starts with its task's name,
 * right-aligned in 16 columns: its 15 bytes at most cannot start a line
 * with these.
 */
#define CTL_LOST_FORMAT		"CPU:%u [LOST %lu EVENTS]%n"
#define CTL_LOST_UNKNOWN	"CPU:%u [LOST EVENTS]%n"

/* Event-to-registration latencies, for the report at the end. */
struct ctl_lat {
	double *ms;
	size_t nr, cap;
};

/* What the daemon keeps between events. */
struct ctl_state {
	struct ctl_ctx *ctl;	/* the cache; no device kept open */
	struct ctl_sync sync;	/* the files of a sync, if @syncing */
	bool syncing;
	bool sync_listed;	/* every file of @sync was queued */
	unsigned int sync_pending;	/* of those, the jobs not ended */
	unsigned int sync_gen;	/* @sync's number (ctl_job.sync) */
	struct ctl_seen seen;
	struct ctl_pool pool;
	struct ctl_lat lat;
	double last_sync;	/* ctl_now() at the last sync */
	bool lost;		/* reported by the last read */
	bool sync_due;		/* a sync is owed for lost events */
	double lease_renew;	/* ctl_now() when the lease is renewed */
	bool stalled;		/* the workers were, at the last renewal */
};

/**
 * ctl_now() - CLOCK_MONOTONIC in seconds: the trace's clock, and the
 *	workers' deadlines (sframectl-pool.c)
 *
 * Return: the time.
 */
double ctl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / CTL_NS_PER_S;
}

/* The sync ends, at its end or before. */
static void ctl_sync_done(struct ctl_state *st)
{
	ctl_sync_end(st->ctl, &st->sync);
	st->syncing = false;
	st->last_sync = ctl_now();
	fflush(stdout);
}

/* Is the module's device there?  Not kept open: rmmod works under us. */
static bool ctl_dev_present(void)
{
	int dev = ctl_open_dev();

	if (dev < 0)
		return false;
	close(dev);
	return true;
}

/*
 * Start a sync of every running process's files.  Its files are jobs of
 * the workers (which open the device themselves), as events' files are,
 * queued while more than one worker is free (ctl_sync_more()) and started
 * after the events' (sframectl-pool.c): one worker is always left to the
 * events, so that a program started during a sync does not wait for it,
 * and the main loop renews the lease while the sync runs.
 */
static void ctl_full_sync(struct ctl_state *st)
{
	st->sync_due = false;
	if (ctl_sync_begin(&st->sync)) {
		st->last_sync = ctl_now();
		return;
	}
	st->syncing = true;
	st->sync_listed = false;
	st->sync_pending = 0;
	if (!++st->sync_gen)
		st->sync_gen = 1;	/* 0 is no sync's */
}

/* Queue the sync's next files while a worker stays free for the events. */
static void ctl_sync_more(struct ctl_state *st)
{
	struct ctl_job j = { .sync = st->sync_gen, .fd = -1 };
	struct ctl_map m;

	while (st->syncing && !st->sync_listed &&
	       ctl_pool_free(&st->pool) > 1) {
		if (!ctl_sync_next(&st->sync, &st->seen, &m, j.mapped,
				   &j.owner)) {
			st->sync_listed = true;
			break;
		}
		j.key = m.key;
		j.owner = ctl_person(j.owner);	/* sframectl-subid.c */
		j.name = m.path;
		if (!ctl_pool_add(&st->pool, &j)) {
			/* Out of memory: for the next sync or event. */
			ctl_seen_result(&st->seen, &j.key, CTL_BUSY);
			ctl_count(&st->sync.t, CTL_BUSY);
			break;
		}
		st->sync_pending++;
		ctl_pool_run(&st->pool);
	}
	if (st->syncing && st->sync_listed && !st->sync_pending)
		ctl_sync_done(st);
}

/* Write @val to the instance's file @path; false if it cannot. */
static bool ctl_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

/* Write @val to the event's enable file; false if there is none. */
static bool ctl_event_set(const char *val)
{
	return ctl_write_file(CTL_ENABLE, val);
}

/* Is the event there and on? */
static bool ctl_event_on(void)
{
	char c = '0';
	int fd = open(CTL_ENABLE, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = '0';
	close(fd);
	return c == '1';
}

/*
 * Take (or end, @ms 0) the lease on the module's wait at first mapping:
 * tasks that map a file without SFrame wait for its sidecar while it
 * runs.  A module without it (ENOTTY) or without the device: nothing.
 */
static void ctl_lease(unsigned int ms)
{
	struct sframe_unwind_listen a = { .size = sizeof(a), .lease_ms = ms };
	int dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);

	if (dev < 0)
		return;
	ioctl(dev, SFRAME_UNWIND_IOC_LISTEN, &a);
	close(dev);
}

/*
 * Renew the lease once every CTL_LEASE_RENEW_S while the daemon runs and
 * its workers answer; say when they stall and when they answer again.
 */
static void ctl_lease_renew(struct ctl_state *st)
{
	double now = ctl_now();
	bool stalled;

	if (now < st->lease_renew)
		return;
	st->lease_renew = now + CTL_LEASE_RENEW_S;
	stalled = ctl_pool_stalled(&st->pool, CTL_STALL_S);
	if (stalled && !st->stalled)
		printf("daemon: every worker busy for %.0f s, none done: first mappings do not wait until one is\n",
		       CTL_STALL_S);
	else if (!stalled && st->stalled)
		printf("daemon: workers answer again: first mappings wait\n");
	st->stalled = stalled;
	if (!stalled)
		ctl_lease(CTL_LEASE_MS);
}

/* The module is (back): turn the event on, then cover what runs. */
static void ctl_resume(struct ctl_state *st)
{
	if (!ctl_event_set("1"))
		return;
	/* A sync for the module before: its files are to be made again. */
	if (st->syncing)
		ctl_sync_done(st);
	ctl_seen_free(&st->seen);
	if (!ctl_dev_present()) {
		/*
		 * A module's events appear before its init function runs
		 * (and go after its exit): the device may not be there yet.
		 * Off again, so that the next round tries again.
		 */
		ctl_event_set("0");
		return;
	}
	printf("daemon: module present, event on; syncing\n");
	fflush(stdout);
	/* A new module: the lease first, so that no first mapping is missed. */
	st->lease_renew = 0;
	ctl_lease_renew(st);
	ctl_full_sync(st);
}

/* Is @line trace_pipe's report of lost events, and nothing else? */
static bool ctl_lost_line(const char *line)
{
	unsigned long n;
	unsigned int cpu;
	int end = 0;

	if (sscanf(line, CTL_LOST_FORMAT, &cpu, &n, &end) == 2 && end &&
	    !line[end])
		return true;
	end = 0;
	return sscanf(line, CTL_LOST_UNKNOWN, &cpu, &end) == 1 && end &&
	       !line[end];
}

/*
 * Events were lost: sync, but not sooner than CTL_SYNC_GAP_S after the
 * last sync; a flood of losses costs one sync in so many seconds.
 */
static void ctl_sync_if_due(struct ctl_state *st)
{
	double wait = st->last_sync + CTL_SYNC_GAP_S - ctl_now();

	if (st->lost && !st->sync_due && wait > 0)
		printf("daemon: events lost; next sync in %.0f s (one every %d s at most)\n",
		       wait, CTL_SYNC_GAP_S);
	st->sync_due |= st->lost;
	st->lost = false;
	/* Losses during a sync: another, once it has ended. */
	if (!st->sync_due || wait > 0 || st->syncing)
		return;
	printf("daemon: events lost; syncing\n");
	if (!ctl_dev_present()) {
		st->last_sync = ctl_now();	/* try again later */
		return;
	}
	ctl_full_sync(st);
}

/*
 * The time stamp of an event line, "... 1234.567890: sframe_unwind_...",
 * in seconds of the trace clock "mono" (CLOCK_MONOTONIC); 0 if none.
 */
static double ctl_stamp(const char *line, const char *ev)
{
	const char *p = ev;
	double t;

	while (p > line && p[-1] == ':')
		p--;
	while (p > line && p[-1] != ' ')
		p--;
	return sscanf(p, "%lf", &t) == 1 ? t : 0;
}

static void ctl_lat_add(struct ctl_lat *l, double ms)
{
	void *p;

	if (l->nr == l->cap) {
		p = realloc(l->ms, (l->cap ? 2 * l->cap : 64) * sizeof(*l->ms));
		if (!p)
			return;
		l->ms = p;
		l->cap = l->cap ? 2 * l->cap : 64;
	}
	l->ms[l->nr++] = ms;
}

static double ctl_secs(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / CTL_US_PER_S;
}

static int ctl_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* What the daemon did: latencies of its registrations, parsing CPU time. */
static void ctl_report(struct ctl_lat *l)
{
	struct rusage ru;

	if (l->nr) {
		qsort(l->ms, l->nr, sizeof(*l->ms), ctl_cmp_double);
		printf("daemon: %zu sidecars registered for events; event to registration: median %.1f ms, p99 %.1f ms, max %.1f ms\n",
		       l->nr, l->ms[l->nr / 2],
		       l->ms[(size_t)(CTL_P99 * (l->nr - 1))], l->ms[l->nr - 1]);
	}
	if (!getrusage(RUSAGE_CHILDREN, &ru))
		printf("daemon: parsing children used %.2f s of CPU (%.2f user, %.2f system)\n",
		       ctl_secs(&ru.ru_utime) + ctl_secs(&ru.ru_stime),
		       ctl_secs(&ru.ru_utime), ctl_secs(&ru.ru_stime));
	free(l->ms);
}

/* A worker is done with @j (sframectl-pool.c). */
static void ctl_finished(void *ctx, const struct ctl_job *j)
{
	struct ctl_state *st = ctx;

	if (j->res == CTL_ADDED && j->stamp)
		ctl_lat_add(&st->lat, (ctl_now() - j->stamp) * CTL_MS_PER_S);
	ctl_seen_result(&st->seen, &j->key, j->res);
	/* The cache's counts, which the sync's report gives. */
	st->ctl->cache.hits += j->hit;
	st->ctl->cache.stores += j->stored;
	/* A file of the sync running (not of one a module reload ended). */
	if (st->syncing && j->sync == st->sync_gen) {
		ctl_count(&st->sync.t, j->res);
		st->sync_pending--;
	}
}

/*
 * An event for a file that failed before (in a worker, an event's or a
 * sync's): the module has forgotten that (what it remembers of failures
 * is bounded) and holds the mapping task.  Tell it again, so that the task
 * goes on at once and not at the end of the bound.  Not for a file on a
 * file system sframectl does not trust, which only a worker opens.
 */
static void ctl_answer_again(struct ctl_state *st, const struct ctl_job *j)
{
	int fd, dev;

	if (j->untrusted || !ctl_seen_failed(&st->seen, &j->key))
		return;
	fd = ctl_open_file(j->mapped);
	if (fd < 0)
		return;
	dev = ctl_open_dev();
	if (dev >= 0) {
		ctl_no_section(dev, fd);
		close(dev);
	}
	close(fd);
}

/*
 * The key and owner of @j's file, mapped by @pid, on the file system of
 * magic @fs (0: the event did not say); false if it is gone.  A file on a
 * file system sframectl does not trust (FUSE, say) is not asked: its
 * server could make the daemon wait for ever.  Its key is device and
 * inode, its owner the process's, and a worker opens it (sframectl-fs.c).
 * An owner is a person: subordinate uids count as their user's.
 */
static bool ctl_job_key(struct ctl_job *j, int pid, unsigned long fs)
{
	char proc[32];
	struct stat st;

	snprintf(proc, sizeof(proc), "%d", pid);
	if (fs)
		j->untrusted = !ctl_fs_magic_trusted(fs);
	else
		j->untrusted = !ctl_fs_dev_trusted(j->key.major, j->key.minor,
						   proc);
	if (!j->untrusted) {
		if (!ctl_key_stamp(&j->key, j->mapped, &j->owner))
			return false;
	} else {
		snprintf(proc, sizeof(proc), "/proc/%d", pid);
		if (stat(proc, &st))
			return false;
		j->owner = st.st_uid;
	}
	j->owner = ctl_person(j->owner);	/* sframectl-subid.c */
	return true;
}

/* One line of trace_pipe: an event, a loss, or something else. */
static void ctl_line(const char *line, struct ctl_state *st)
{
	const char *ev = strstr(line, CTL_EVENT_NAME);
	const char *p = ev ? ev + 1 : NULL;
	char name[CTL_PATH_MAX];
	unsigned long start, end;
	struct ctl_job j = { 0 };
	unsigned long fs = 0;
	ssize_t n;
	int pid, got;

	if (ctl_lost_line(line)) {
		st->lost = true;	/* synced after this read */
		return;
	}
	if (!p)
		return;
	got = sscanf(p, CTL_EVENT_FORMAT, &pid, &start, &end, &j.key.major,
		     &j.key.minor, &j.key.ino, &fs);
	if (got != CTL_EVENT_FIELDS && got != CTL_EVENT_FIELDS_OLD)
		return;
	snprintf(j.mapped, sizeof(j.mapped), "/proc/%d/map_files/%lx-%lx",
		 pid, start, end);
	if (!ctl_job_key(&j, pid, fs))
		return;		/* gone already */
	if (!ctl_seen_add(&st->seen, &j.key)) {
		ctl_answer_again(st, &j);	/* handled */
		return;
	}
	n = readlink(j.mapped, name, sizeof(name) - 1);
	if (n <= 0)
		return;
	name[n] = '\0';
	j.name = name;
	j.stamp = ctl_stamp(line, ev);
	if (ctl_pool_add(&st->pool, &j))
		return;
	/* No room: forgotten, for the sync that follows. */
	ctl_seen_del(&st->seen, &j.key);
	st->lost = true;
}

/* Read what trace_pipe has and handle each complete line. */
static void ctl_drain(int pipe_fd, char *buf, size_t *len,
		      struct ctl_state *st)
{
	char *line, *nl;
	ssize_t n;

	n = read(pipe_fd, buf + *len, CTL_READ_MAX - 1 - *len);
	if (n <= 0)
		return;
	*len += n;
	buf[*len] = '\0';
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		ctl_line(line, st);
	}
	ctl_pool_run(&st->pool);
	*len -= line - buf;
	memmove(buf, line, *len);
	if (*len == CTL_READ_MAX - 1)
		*len = 0;	/* a line longer than the buffer: drop it */
	fflush(stdout);
}

static int ctl_instance(void)
{
	static const char mono[] = "mono";
	int fd;

	if (mkdir(CTL_INSTANCE, 0700) && errno != EEXIST) {
		fprintf(stderr, "%s: %s: %s (is tracefs mounted at %s, and are you root?)\n",
			ctl_prog, CTL_INSTANCE, strerror(errno), CTL_TRACEFS);
		return -1;
	}
	/* Time stamps on CLOCK_MONOTONIC, to measure the latency. */
	fd = open(CTL_CLOCK, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, mono, strlen(mono)) != (ssize_t)strlen(mono))
			fprintf(stderr, "%s: %s: cannot set it; latencies are not measured\n",
				ctl_prog, CTL_CLOCK);
		close(fd);
	}
	/*
	 * poll() on trace_pipe waits for the buffer to fill up to
	 * buffer_percent (half, by default) on kernels that honour it:
	 * every event at once instead, since a task may wait for it.
	 */
	if (!ctl_write_file(CTL_BUFFER_PERCENT, "0"))
		fprintf(stderr, "%s: %s: cannot set it; events may come late\n",
			ctl_prog, CTL_BUFFER_PERCENT);
	return open(CTL_PIPE, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

/**
 * ctl_daemon() - the daemon command
 * @ctx: the cache and the child's deadline; the device is opened when
 *	needed
 *
 * Return: 0 when stopped by a signal, 1 if it could not start.
 */
int ctl_daemon(struct ctl_ctx *ctx)
{
	struct ctl_state st = { .ctl = ctx };
	struct pollfd pfd[CTL_PFDS];
	size_t len = 0;
	sigset_t stop;
	char *buf;

	/* SIGINT and SIGTERM arrive as a readable descriptor. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &stop, NULL))
		return 1;
	if (ctl_pool_init(&st.pool, ctx))
		return 1;
	st.pool.finished = ctl_finished;
	st.pool.ctx = &st;
	pfd[CTL_PFD_SIGNAL].fd = signalfd(-1, &stop, SFD_CLOEXEC);
	pfd[CTL_PFD_TRACE].fd = ctl_instance();
	pfd[CTL_PFD_WORKERS].fd = st.pool.done[0];
	buf = malloc(CTL_READ_MAX);
	if (pfd[CTL_PFD_TRACE].fd < 0 || pfd[CTL_PFD_SIGNAL].fd < 0 || !buf) {
		free(buf);
		ctl_pool_stop(&st.pool);
		return 1;
	}
	pfd[CTL_PFD_TRACE].events = POLLIN;
	pfd[CTL_PFD_SIGNAL].events = POLLIN;
	pfd[CTL_PFD_WORKERS].events = POLLIN;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("daemon: following %s\n", CTL_PIPE);
	for (;;) {
		if (!ctl_event_on())
			ctl_resume(&st);
		ctl_sync_if_due(&st);
		ctl_lease_renew(&st);
		ctl_pool_reap(&st.pool);
		ctl_sync_more(&st);
		if (poll(pfd, CTL_PFDS, CTL_POLL_MS) <= 0)
			continue;
		if (pfd[CTL_PFD_SIGNAL].revents)
			break;
		if (pfd[CTL_PFD_TRACE].revents)
			ctl_drain(pfd[CTL_PFD_TRACE].fd, buf, &len, &st);
	}
	if (st.syncing)
		ctl_sync_done(&st);
	ctl_lease(0);
	ctl_pool_stop(&st.pool);
	ctl_event_set("0");
	close(pfd[CTL_PFD_TRACE].fd);
	close(pfd[CTL_PFD_SIGNAL].fd);
	rmdir(CTL_INSTANCE);
	ctl_seen_free(&st.seen);
	free(buf);
	ctl_report(&st.lat);
	printf("daemon: stopped\n");
	return 0;
}
