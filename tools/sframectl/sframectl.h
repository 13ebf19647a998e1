/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sframectl's files share (tools/sframectl/sframectl*.c).
 */
#ifndef _SCRIPTS_SFRAMECTL_H
#define _SCRIPTS_SFRAMECTL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sha2.h>

#include <sframe/env.h>
#include <uapi/linux/sframe_unwind.h>

struct elf_file;

#define CTL_PATH_MAX		4096
#define CTL_LINE_MAX		(CTL_PATH_MAX + 256)
/* The most a section may be: the module's default max_section_bytes. */
#define CTL_SECTION_MAX		(64ULL << 20)
/* The largest file sframectl reads, and --copy-max's default. */
#define CTL_FILE_MAX		(1ULL << 30)
#define CTL_CACHE_DIR		"/var/cache/sframe-unwind"
#define CTL_CACHE_MAX		(256ULL << 20)
/* How long a parsing child may take, wall clock (--child-timeout). */
#define CTL_CHILD_TIMEOUT_S	30

extern const char *ctl_prog;

/*
 * A file, as /proc/PID/maps and the trace event name it, and its size and
 * modification time: a file that changes is a new file to sframectl, so
 * one whose section could not be made is tried again once it changes.
 */
struct ctl_key {
	unsigned int major, minor;
	unsigned long long ino;
	long long size, mtime_sec, mtime_nsec;
};

/* One executable file mapping, as /proc/PID/maps shows it. */
struct ctl_map {
	unsigned long start, end;
	struct ctl_key key;
	char path[CTL_PATH_MAX];
};

/* The most files the daemon remembers, and the chains they hang in. */
#define CTL_SEEN_MAX		16384
#define CTL_SEEN_BUCKETS	4096

/* A file of struct ctl_seen, and the next in its hash chain. */
struct ctl_seen_slot {
	struct ctl_key key;
	u32 chain;
	bool used;
	bool failed;			/* no section can be made for it */
};

/*
 * Files handled already: registered, refused, or with SFrame.  A hash
 * table of at most CTL_SEEN_MAX files; its slots are a ring in the order
 * files came, and a new file takes the place of the oldest.  Zeroed, it
 * is empty.
 */
struct ctl_seen {
	struct ctl_seen_slot *slots;
	u32 *heads;
	u32 next;
	size_t nr;
	u64 seed;
};

/* Parsing workers of the daemon (sframectl-pool.c). */
#define CTL_WORKERS		4
#define CTL_QUEUE_MAX		256
#define CTL_QUEUE_PER_OWNER	64
/*
 * A worker may take this many child deadlines (--child-timeout): its
 * child's, and as long again for opening the file and registering it.
 */
#define CTL_WORKER_DEADLINES	2
/*
 * Workers that have not ended but whose slots were given to others:
 * killed at their deadline while they wait on FUSE (which SIGKILL does
 * not end), or waiting for a parsing child that FUSE holds so.  Beyond
 * that many a stuck worker keeps its slot; beyond CTL_DYING_PER_OWNER of
 * one owner that owner's next files wait.
 */
#define CTL_DYING_MAX		16
#define CTL_DYING_PER_OWNER	2
/* "/proc/PID/map_files/START-END" */
#define CTL_MAPPED_MAX		96
/* A process id as /proc names it: up to 4194304 (PID_MAX_LIMIT). */
#define CTL_PID_MAX		16

/* A file for a worker: queued, running, or done (@res). */
struct ctl_job {
	struct ctl_key key;
	unsigned int owner;		/* the file's owner */
	double stamp;			/* of the event, 0 if none */
	char mapped[CTL_MAPPED_MAX];
	char *name;
	int fd;				/* the file, or -1 */
	bool untrusted;			/* opened by the worker only */
	unsigned int sync;		/* the daemon's sync it is of, or 0 */
	pid_t pid;			/* of its worker, once running */
	double started;			/* when the worker was, monotonic */
	bool reaped;
	bool reported;			/* res told, the worker not ended */
	int res;			/* enum ctl_result, once done */
	bool hit;			/* its section came from the cache */
	bool stored;			/* it stored its section there */
	u64 reserve;			/* the most its copy holds */
};

/* A worker that has not ended, and its job's owner. */
struct ctl_dying {
	pid_t pid;
	unsigned int owner;
};

struct ctl_pool {
	struct ctl_job *queue;		/* CTL_QUEUE_MAX, oldest first */
	size_t nr;
	struct ctl_job run[CTL_WORKERS];
	/* Workers not ended whose slots were given to others. */
	struct ctl_dying dying[CTL_DYING_MAX];
	unsigned int nr_dying;
	int done[2];			/* workers' reports */
	double last_end;		/* when a job last ended, monotonic */
	void (*finished)(void *ctx, const struct ctl_job *j);
	void *ctx;
	const struct ctl_ctx *ctl;	/* what the workers register with */
};

/* The most entries the sidecar cache keeps. */
#define CTL_CACHE_MAX_ENTRIES	65536

/* The sidecar cache (sframectl-cache.c); off while dirfd < 0. */
struct ctl_cache {
	int dirfd;
	const char *dir;
	u64 max_bytes;			/* on disk, in the file system's blocks */
	unsigned int max_entries;
	unsigned int hits, stores;
	/* What the last listing found, with what was stored since. */
	bool listed;
	u64 bytes;
	unsigned int entries;
};

/*
 * What registering a file takes (sframectl-core.c), from the command
 * line: the device, the cache, how long a parsing child may take.
 */
struct ctl_ctx {
	int dev;			/* the module's device, or -1 */
	struct ctl_cache cache;
	unsigned int child_timeout_s;	/* --child-timeout */
	/*
	 * The most bytes of a file the child copies: --copy-max, or a
	 * daemon's worker's reservation (sframectl-pool.c).
	 */
	u64 copy_max;
	/*
	 * The daemon's: tell the module of a file no section can be made
	 * for, so that no task waits for it (SFRAME_UNWIND_NO_SECTION).
	 */
	bool say_failed;
	/* A worker's: the inode its event named (0: any), else CTL_BUSY. */
	unsigned long long expect_ino;
	/*
	 * A child left behind, in a read of its file that the file's server
	 * does not answer (0: none).
	 */
	pid_t left_pid;
};

/* The parsing child the parent waits for, and until when. */
struct ctl_wait {
	const char *name;		/* its file, for messages */
	unsigned int timeout_s;
	long long deadline_ms;		/* CLOCK_MONOTONIC */
};

/*
 * The file being registered, as the cache knows it: set fd, and data_fd
 * and data_size to the copy of its contents that was parsed (sealed:
 * sframectl-core.c); zero the rest, which the cache takes from the
 * descriptors when it first needs it.
 */
struct ctl_cache_file {
	int fd;
	int data_fd;
	u64 data_size;
	bool checked;		/* cacheable and writer are set */
	bool cacheable;		/* one user alone can write it */
	bool digested;		/* digest is set (or cacheable cleared) */
	bool hit;		/* its section came from the cache */
	u32 writer;		/* that user: the file's owner */
	u8 digest[SHA256_DIGEST_LENGTH];	/* of data_fd's contents */
};

/*
 * CTL_BUSY: leased by its owner; to be tried again, not remembered.
 * CTL_UNCACHED (warm only): made, but not a file the cache keeps.
 */
enum ctl_result { CTL_ADDED, CTL_HAS_SFRAME, CTL_ALREADY, CTL_FAILED,
		  CTL_BUSY, CTL_UNCACHED };

struct ctl_tally {
	unsigned int added, own, already, uncached, busy, failed;
};

/*
 * A sync in progress, taken a file at a time (ctl_sync_next()), so that
 * a daemon serves the events that come meanwhile first.
 */
struct ctl_sync {
	DIR *proc;		/* /proc, read a process at a time */
	FILE *maps;		/* @pid's maps, or NULL between processes */
	char pid[CTL_PID_MAX];
	struct ctl_tally t;
};

void ctl_ctx_init(struct ctl_ctx *ctx);
int ctl_open_dev(void);
int ctl_open_file(const char *path);
const char *ctl_why(int err);
int ctl_drop_file(int dev, int fd);
int ctl_no_section(int dev, int fd);
enum ctl_result ctl_add_one(struct ctl_ctx *ctx, const char *path,
			    const char *name, u32 flags, bool quiet);
enum ctl_result ctl_warm_one(struct ctl_ctx *ctx, int fd, const char *name);
int ctl_warm(struct ctl_ctx *ctx, char **paths, int nr);
int ctl_symbolize(int argc, char **argv);
bool ctl_parse_map(const char *line, struct ctl_map *m);
bool ctl_key_stamp(struct ctl_key *k, const char *path, unsigned int *owner);
bool ctl_fs_magic_trusted(unsigned long magic);
bool ctl_fs_dev_trusted(unsigned int major, unsigned int minor,
			const char *pid);
void ctl_fs_forget(void);
bool ctl_fs_inode_differs(int fd);
unsigned int ctl_person(unsigned int uid);
extern const char *ctl_subuid_file;
bool ctl_seen_add(struct ctl_seen *s, const struct ctl_key *k);
void ctl_seen_del(struct ctl_seen *s, const struct ctl_key *k);
void ctl_seen_fail(struct ctl_seen *s, const struct ctl_key *k);
bool ctl_seen_failed(struct ctl_seen *s, const struct ctl_key *k);
void ctl_seen_free(struct ctl_seen *s);
void ctl_count(struct ctl_tally *t, enum ctl_result res);
int ctl_sync_begin(struct ctl_sync *s);
bool ctl_sync_next(struct ctl_sync *s, struct ctl_seen *seen,
		   struct ctl_map *m, char *mapped, unsigned int *owner);
void ctl_seen_result(struct ctl_seen *seen, const struct ctl_key *k,
		     enum ctl_result res);
int ctl_sync_end(struct ctl_ctx *ctx, struct ctl_sync *s);
int ctl_sync(struct ctl_ctx *ctx, struct ctl_seen *seen);
int ctl_daemon(struct ctl_ctx *ctx);

void ctl_child_started(struct ctl_wait *w, const char *name,
		       unsigned int timeout_s);
ssize_t ctl_child_read(const struct ctl_wait *w, int fd, void *buf,
		       size_t len);
int ctl_child_wait(const struct ctl_wait *w, pid_t pid, int *status);
void ctl_child_keep(int file, int copy, int out, int in);
u64 ctl_child_copy(int fd, int copy, u64 max, const char *name);
int ctl_child_confine(int fd, struct elf_file *f, const char *name);

double ctl_now(void);
int ctl_pool_init(struct ctl_pool *p, const struct ctl_ctx *ctl);
bool ctl_pool_add(struct ctl_pool *p, const struct ctl_job *j);
void ctl_pool_run(struct ctl_pool *p);
int ctl_pool_free(const struct ctl_pool *p);
void ctl_pool_reap(struct ctl_pool *p);
bool ctl_pool_stalled(const struct ctl_pool *p, double secs);
void ctl_pool_stop(struct ctl_pool *p);

int ctl_cache_open(struct ctl_cache *c, const char *dir, u64 max_bytes);
void ctl_cache_close(struct ctl_cache *c);
int ctl_cache_load(struct ctl_cache *c, struct ctl_cache_file *f,
		   const u8 *id, size_t id_len, u8 **bufp, u64 *lenp,
		   u64 *vaddrp);
void ctl_cache_store(struct ctl_cache *c, struct ctl_cache_file *f,
		     const u8 *id, size_t id_len, const u8 *buf, u64 len,
		     u64 vaddr);
bool ctl_cache_section_ok(const u8 *buf, u64 len, u64 vaddr);

#endif /* _SCRIPTS_SFRAMECTL_H */
