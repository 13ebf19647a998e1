// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's workers: files parsed in parallel, owners served in turn.
 *
 * Each file the daemon is told of becomes a job: the file, opened at once
 * (without blocking) so that it outlives the process that mapped it, its
 * key and owner.  Up to CTL_WORKERS jobs run at a time, each in a worker
 * process that registers the file as sframectl add does (its own parsing
 * child, its own deadline) and writes what came of it to a pipe the
 * daemon polls.  A file that spins or stalls holds one worker until its
 * deadline, not the daemon.  The next job is an event's before a sync's,
 * then the oldest of the owner with the fewest workers, so one user's
 * flood of files waits behind itself;
 * the queue takes at most CTL_QUEUE_PER_OWNER jobs of one owner and
 * CTL_QUEUE_MAX in all.  The workers' copies of their files hold at most
 * --copy-max bytes together: each job reserves its file's size (or, on a
 * file system sframectl does not trust, a worker's share of the bound)
 * and starts when that fits beside the others'.  A worker that does not
 * end, because FUSE holds it or its parsing child in a read whose answer
 * never comes (the kernel waits for it even when killed), gives its slot
 * to the next job while there is room to remember it; an owner with
 * CTL_DYING_PER_OWNER such workers gets no other until one ends, but for
 * a sync's files, which are on file systems sframectl trusts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sframectl.h"

/* What a worker tells the daemon when it is done. */
struct ctl_done {
	pid_t pid;
	int res;		/* enum ctl_result */
	bool lingers;		/* it waits for a child FUSE holds */
	bool hit;		/* its section came from the cache */
	bool stored;		/* it stored its section in the cache */
};

static int ctl_owner_running(const struct ctl_pool *p, unsigned int owner)
{
	int i, n = 0;

	for (i = 0; i < CTL_WORKERS; i++)
		n += p->run[i].pid > 0 && p->run[i].owner == owner;
	return n;
}

static unsigned int ctl_owner_dying(const struct ctl_pool *p,
				    unsigned int owner)
{
	unsigned int i, n = 0;

	for (i = 0; i < p->nr_dying; i++)
		n += p->dying[i].owner == owner;
	return n;
}

static size_t ctl_owner_queued(const struct ctl_pool *p, unsigned int owner)
{
	size_t i, n = 0;

	for (i = 0; i < p->nr; i++)
		n += p->queue[i].owner == owner;
	return n;
}

/**
 * ctl_pool_init() - an empty pool
 * @p: the pool
 * @ctl: what its workers register files with (the device each opens)
 *
 * Return: 0, or -1 if its pipe cannot be made.
 */
int ctl_pool_init(struct ctl_pool *p, const struct ctl_ctx *ctl)
{
	memset(p, 0, sizeof(*p));
	p->ctl = ctl;
	p->queue = calloc(CTL_QUEUE_MAX, sizeof(*p->queue));
	if (!p->queue || pipe2(p->done, O_CLOEXEC | O_NONBLOCK)) {
		free(p->queue);
		return -1;
	}
	return 0;
}

/*
 * The bytes the copy of a job's file may take (sframectl-child.c): its
 * size, read from the descriptor the daemon opened, up to the whole
 * bound (a larger file is refused by its child); a file on a file system
 * sframectl does not trust is not asked (fstat() would wait on its
 * server) and gets a worker's share of the bound.
 */
static u64 ctl_job_reserve(const struct ctl_pool *p, int fd)
{
	u64 bound = p->ctl->copy_max;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0)
		return bound / CTL_WORKERS;
	return (u64)st.st_size < bound ? (u64)st.st_size : bound;
}

/* What the running workers' copies may hold. */
static u64 ctl_pool_reserved(const struct ctl_pool *p)
{
	u64 n = 0;
	int w;

	for (w = 0; w < CTL_WORKERS; w++)
		if (p->run[w].pid > 0 && !p->run[w].reported)
			n += p->run[w].reserve;
	return n;
}

/**
 * ctl_pool_add() - queue a file
 * @p: the pool
 * @j: the job: its key (with the owner), mapped path, name and time stamp;
 *	the file is opened here
 *
 * Return: false if the queue has no room for it (or its owner's share).
 */
bool ctl_pool_add(struct ctl_pool *p, const struct ctl_job *j)
{
	struct ctl_job *q;

	if (p->nr == CTL_QUEUE_MAX ||
	    ctl_owner_queued(p, j->owner) >= CTL_QUEUE_PER_OWNER)
		return false;
	q = &p->queue[p->nr];
	*q = *j;
	q->pid = 0;
	q->reaped = false;
	q->reported = false;
	q->name = strdup(j->name);
	if (!q->name)
		return false;
	p->nr++;
	/* Failing here, the worker tries the path and says why. */
	q->fd = j->untrusted ? -1 : ctl_open_file(q->mapped);
	q->reserve = ctl_job_reserve(p, q->fd);
	return true;
}

/*
 * Whether queued job @j may start now: not if its owner has
 * CTL_DYING_PER_OWNER workers that have not ended (whose files a FUSE
 * server holds), unless it is a sync's, whose files are on file systems
 * sframectl trusts and cannot hold a worker so.
 */
static bool ctl_pool_may_start(const struct ctl_pool *p,
			       const struct ctl_job *j)
{
	return j->sync ||
	       ctl_owner_dying(p, j->owner) < CTL_DYING_PER_OWNER;
}

/*
 * The next job: an event's before a sync's, then the oldest of the
 * owner with the fewest workers, among the jobs that may start; p->nr if
 * none.
 */
static size_t ctl_pool_pick(const struct ctl_pool *p)
{
	size_t i, best = p->nr;
	int n, fewest = 2 * (CTL_WORKERS + 1);

	for (i = 0; i < p->nr; i++) {
		if (!ctl_pool_may_start(p, &p->queue[i]))
			continue;
		n = ctl_owner_running(p, p->queue[i].owner);
		if (p->queue[i].sync)
			n += CTL_WORKERS + 1;	/* after every event's */
		if (n < fewest) {
			fewest = n;
			best = i;
		}
	}
	return best;
}

/* The worker: register the file of @j and tell the daemon how it went. */
static void ctl_worker(struct ctl_pool *p, const struct ctl_job *j)
{
	struct ctl_done d = { .pid = getpid(), .res = CTL_FAILED };
	struct ctl_ctx ctl = *p->ctl;	/* with the worker's own device */
	char path[CTL_MAPPED_MAX];

	ctl.dev = ctl_open_dev();
	ctl.say_failed = true;
	ctl.expect_ino = j->key.ino;
	ctl.copy_max = j->reserve;
	if (j->fd >= 0)
		snprintf(path, sizeof(path), "/proc/self/fd/%d", j->fd);
	else
		snprintf(path, sizeof(path), "%s", j->mapped);
	if (ctl.dev >= 0)
		d.res = ctl_add_one(&ctl, path, j->name, 0, true);
	d.lingers = ctl.left_pid > 0;
	d.hit = ctl.cache.hits != p->ctl->cache.hits;
	d.stored = ctl.cache.stores != p->ctl->cache.stores;
	fflush(NULL);
	if (write(p->done[1], &d, sizeof(d)) != sizeof(d))
		_exit(1);
	/* Not before its child, which holds a copy of the file. */
	if (d.lingers)
		waitpid(ctl.left_pid, NULL, 0);
	_exit(0);
}

/*
 * Start the job at @i of the queue in worker slot @w.  Return: false if
 * no worker could be made (its job is told CTL_BUSY: tried again at its
 * next mapping or sync, not remembered as failed).
 */
static bool ctl_pool_start(struct ctl_pool *p, size_t i, int w)
{
	struct ctl_job j = p->queue[i];
	pid_t pid;

	memmove(&p->queue[i], &p->queue[i + 1],
		(p->nr - i - 1) * sizeof(*p->queue));
	p->nr--;
	fflush(NULL);
	pid = fork();
	if (!pid)
		ctl_worker(p, &j);
	if (j.fd >= 0)
		close(j.fd);
	free(j.name);
	j.name = NULL;
	if (pid < 0) {
		j.res = CTL_BUSY;
		p->finished(p->ctx, &j);
		return false;
	}
	p->run[w] = j;
	p->run[w].pid = pid;
	p->run[w].fd = -1;
	p->run[w].hit = false;
	p->run[w].stored = false;
	p->run[w].started = ctl_now();
	return true;
}

/**
 * ctl_pool_free() - workers free for a new job
 * @p: the pool
 *
 * Return: the workers without a job less the queued jobs that may start
 * (negative if more wait than there are free workers).
 */
int ctl_pool_free(const struct ctl_pool *p)
{
	size_t i;
	int w, n = 0;

	for (w = 0; w < CTL_WORKERS; w++)
		n += p->run[w].pid <= 0;
	for (i = 0; i < p->nr; i++)
		n -= ctl_pool_may_start(p, &p->queue[i]);
	return n;
}

/**
 * ctl_pool_run() - start queued jobs while workers are free
 * @p: the pool
 *
 * The copies of the files the workers read hold at most --copy-max bytes
 * together: a job starts only when its reservation fits beside theirs.
 */
void ctl_pool_run(struct ctl_pool *p)
{
	size_t i;
	int w;

	for (w = 0; w < CTL_WORKERS && p->nr; w++) {
		if (p->run[w].pid > 0)
			continue;
		i = ctl_pool_pick(p);
		/* The next job waits for its bytes; none passes it. */
		if (i == p->nr || ctl_pool_reserved(p) + p->queue[i].reserve >
		    p->ctl->copy_max)
			return;
		if (!ctl_pool_start(p, i, w))
			return;		/* no process now: later */
	}
}

/*
 * The job of worker slot @w ended with @res: tell p->finished, unless
 * it was told already, and free the slot.
 */
static void ctl_pool_end(struct ctl_pool *p, int w, int res)
{
	bool told = p->run[w].reported;

	if (!p->run[w].reaped)
		waitpid(p->run[w].pid, NULL, 0);
	p->run[w].pid = 0;
	p->run[w].reaped = false;
	p->run[w].reported = false;
	p->last_end = ctl_now();
	if (told)
		return;
	p->run[w].res = res;
	p->finished(p->ctx, &p->run[w]);
}

/*
 * Remember the worker of slot @w among those that have not ended (reaped
 * by ctl_pool_bury()), so that its slot can go to the next job; false if
 * there is no room.
 */
static bool ctl_pool_bury_later(struct ctl_pool *p, int w)
{
	if (p->nr_dying == CTL_DYING_MAX)
		return false;
	p->dying[p->nr_dying].pid = p->run[w].pid;
	p->dying[p->nr_dying++].owner = p->run[w].owner;
	p->run[w].reaped = true;
	return true;
}

/*
 * Worker @w reported @d.  One that waits for a child left behind (its
 * file's server holds it) gives up its slot while there is room to
 * remember it, and keeps it, its job told, otherwise.
 */
static void ctl_pool_report(struct ctl_pool *p, int w,
			    const struct ctl_done *d)
{
	p->run[w].hit = d->hit;
	p->run[w].stored = d->stored;
	if (!d->lingers || ctl_pool_bury_later(p, w)) {
		ctl_pool_end(p, w, d->res);
		return;
	}
	p->run[w].res = d->res;
	p->run[w].reported = true;
	p->finished(p->ctx, &p->run[w]);
}

/* Read the workers' reports. */
static void ctl_pool_read(struct ctl_pool *p)
{
	struct ctl_done d;
	int w;

	while (read(p->done[0], &d, sizeof(d)) == sizeof(d))
		for (w = 0; w < CTL_WORKERS; w++)
			if (p->run[w].pid > 0 && p->run[w].pid == d.pid &&
			    !p->run[w].reported)
				ctl_pool_report(p, w, &d);
}

/*
 * Kill the workers past their deadline; their files count as failed.  One
 * that waits on FUSE does not end at SIGKILL: its slot goes to the next
 * job all the same, while there is room to remember it (p->dying).  A
 * worker that reported and waits for its child is not late.
 */
static void ctl_pool_expire(struct ctl_pool *p)
{
	double deadline = CTL_WORKER_DEADLINES * p->ctl->child_timeout_s;
	double now = ctl_now();
	int w;

	for (w = 0; w < CTL_WORKERS; w++) {
		if (p->run[w].pid <= 0 || p->run[w].reaped ||
		    p->run[w].reported ||
		    now - p->run[w].started < deadline ||
		    p->nr_dying == CTL_DYING_MAX)
			continue;
		kill(p->run[w].pid, SIGKILL);
		fprintf(stderr, "%s: %s: not registered within %.0f s; its worker was killed\n",
			ctl_prog, p->run[w].mapped, deadline);
		ctl_pool_bury_later(p, w);
		ctl_pool_end(p, w, CTL_FAILED);
	}
}

/* Reap the workers that have ended among those whose slots were given away. */
static void ctl_pool_bury(struct ctl_pool *p)
{
	unsigned int i = 0;

	while (i < p->nr_dying) {
		if (waitpid(p->dying[i].pid, NULL, WNOHANG) == p->dying[i].pid)
			p->dying[i] = p->dying[--p->nr_dying];
		else
			i++;
	}
}

/**
 * ctl_pool_reap() - handle what the workers reported, start more
 * @p: the pool
 *
 * A worker that ended without a report (killed) counts as failed, and so
 * does one past its deadline.
 */
void ctl_pool_reap(struct ctl_pool *p)
{
	int w;

	ctl_pool_bury(p);
	/* Reports first: a worker that answered in time is not late. */
	ctl_pool_read(p);
	ctl_pool_expire(p);
	ctl_pool_read(p);
	for (w = 0; w < CTL_WORKERS; w++)
		if (p->run[w].pid > 0 &&
		    waitpid(p->run[w].pid, NULL, WNOHANG) == p->run[w].pid)
			p->run[w].reaped = true;
	ctl_pool_read(p);	/* what those wrote before they ended */
	for (w = 0; w < CTL_WORKERS; w++)
		if (p->run[w].pid > 0 && p->run[w].reaped)
			ctl_pool_end(p, w, CTL_FAILED);
	ctl_pool_run(p);
}

/**
 * ctl_pool_stalled() - whether the workers have stopped answering
 * @p: the pool
 * @secs: for how long
 *
 * Return: true if every worker has had its job for @secs or more, and no
 * job has ended for as long.
 */
bool ctl_pool_stalled(const struct ctl_pool *p, double secs)
{
	double since = ctl_now() - secs;
	int w;

	if (p->last_end > since)
		return false;
	for (w = 0; w < CTL_WORKERS; w++)
		if (p->run[w].pid <= 0 || p->run[w].started > since)
			return false;
	return true;
}

/**
 * ctl_pool_stop() - end the workers (their children with them) and drop
 *	the queue
 * @p: the pool
 */
void ctl_pool_stop(struct ctl_pool *p)
{
	size_t i;
	int w;

	for (w = 0; w < CTL_WORKERS; w++) {
		if (p->run[w].pid <= 0)
			continue;
		kill(p->run[w].pid, SIGKILL);
		/* Not waited for: one may wait on FUSE; init reaps it. */
		waitpid(p->run[w].pid, NULL, WNOHANG);
	}
	for (i = 0; i < p->nr; i++) {
		if (p->queue[i].fd >= 0)
			close(p->queue[i].fd);
		free(p->queue[i].name);
	}
	free(p->queue);
	close(p->done[0]);
	close(p->done[1]);
}
