// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl sync: a sidecar for every file that a running process maps
 * executable, found in /proc/PID/maps and opened through
 * /proc/PID/map_files (the mapped file itself, even if its path now names
 * another).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframectl.h"

#define CTL_SEEN_NONE		UINT32_MAX
/* The size in the key of a file sync skipped: no file's. */
#define CTL_KEY_SKIPPED		(-1LL)

/**
 * ctl_parse_map() - an executable file mapping from a /proc/PID/maps line
 * @line: the line
 * @m: the mapping
 *
 * Return: true for an executable mapping of a file named by a path.
 */
bool ctl_parse_map(const char *line, struct ctl_map *m)
{
	char perms[8];
	int n = 0;

	if (sscanf(line, "%lx-%lx %7s %*x %x:%x %llu %n", &m->start, &m->end,
		   perms, &m->key.major, &m->key.minor, &m->key.ino,
		   &n) != 6 || !n)
		return false;
	if (perms[2] != 'x' || !m->key.ino || line[n] != '/')
		return false;
	snprintf(m->path, sizeof(m->path), "%s", line + n);
	m->path[strcspn(m->path, "\n")] = '\0';
	return true;
}

/* Is @path a file of an overlay (sframectl-fs.c)? */
static bool ctl_key_overlay(const char *path)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	bool differs = fd >= 0 && ctl_fs_inode_differs(fd);

	if (fd >= 0)
		close(fd);
	return differs;
}

/**
 * ctl_key_stamp() - add a file's size and modification time to its key
 * @k: the key
 * @path: the file (as /proc/PID/map_files names it)
 * @owner: its owner's uid, if not NULL
 *
 * Return: false if the file cannot be reached, or @path is another file
 * than @k's device and inode name.
 */
bool ctl_key_stamp(struct ctl_key *k, const char *path, unsigned int *owner)
{
	struct stat st;

	/*
	 * Another file where the mapping was (unmapped and mapped again
	 * since) is not the one named: it has its own event.  The device is
	 * not compared: stat() gives a btrfs subvolume's own, the kernel the
	 * file system's; nor the inode of an overlay's file.
	 */
	if (stat(path, &st) || (st.st_ino != k->ino && !ctl_key_overlay(path)))
		return false;
	k->size = st.st_size;
	k->mtime_sec = st.st_mtim.tv_sec;
	k->mtime_nsec = st.st_mtim.tv_nsec;
	if (owner)
		*owner = st.st_uid;
	return true;
}

static bool ctl_key_equal(const struct ctl_key *a, const struct ctl_key *b)
{
	return a->major == b->major && a->minor == b->minor &&
	       a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/* splitmix64's finalizer: every bit of @x moves every bit of the result. */
static u64 ctl_mix(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * The bucket of @k.  The seed is random per table: the fields are the
 * choice of whoever made the file, the chains are not.
 */
static u32 ctl_seen_bucket(const struct ctl_seen *s, const struct ctl_key *k)
{
	u64 h = s->seed;

	h = ctl_mix(h ^ k->major);
	h = ctl_mix(h ^ k->minor);
	h = ctl_mix(h ^ k->ino);
	h = ctl_mix(h ^ k->size);
	h = ctl_mix(h ^ k->mtime_sec);
	h = ctl_mix(h ^ k->mtime_nsec);
	return h & (CTL_SEEN_BUCKETS - 1);
}

static int ctl_seen_init(struct ctl_seen *s)
{
	u32 i;

	s->slots = calloc(CTL_SEEN_MAX, sizeof(*s->slots));
	s->heads = malloc(CTL_SEEN_BUCKETS * sizeof(*s->heads));
	if (!s->slots || !s->heads) {
		ctl_seen_free(s);
		return -1;
	}
	for (i = 0; i < CTL_SEEN_BUCKETS; i++)
		s->heads[i] = CTL_SEEN_NONE;
	if (getrandom(&s->seed, sizeof(s->seed), GRND_NONBLOCK) !=
	    sizeof(s->seed))
		s->seed = ctl_mix(time(NULL) ^ getpid());
	return 0;
}

/* Where the link to @k's slot is, in its chain; NULL if it is not in @s. */
static u32 *ctl_seen_find(struct ctl_seen *s, const struct ctl_key *k)
{
	u32 *link;

	if (!s->slots)
		return NULL;
	for (link = &s->heads[ctl_seen_bucket(s, k)]; *link != CTL_SEEN_NONE;
	     link = &s->slots[*link].chain)
		if (ctl_key_equal(&s->slots[*link].key, k))
			return link;
	return NULL;
}

/* Take the slot that @link points to out of its chain and out of @s. */
static void ctl_seen_unlink(struct ctl_seen *s, u32 *link)
{
	struct ctl_seen_slot *slot = &s->slots[*link];

	*link = slot->chain;
	slot->used = false;
	s->nr--;
}

/**
 * ctl_seen_add() - note a file as handled
 * @s: the set
 * @k: the file
 *
 * When @s is full, the file noted longest ago is forgotten: should it be
 * mapped again, it is handled again (the module says it has its sidecar
 * already, or it fails again).
 *
 * Return: true if it is new to @s (and now in it).
 */
bool ctl_seen_add(struct ctl_seen *s, const struct ctl_key *k)
{
	struct ctl_seen_slot *slot;
	u32 *head, i;

	if (ctl_seen_find(s, k) || (!s->slots && ctl_seen_init(s)))
		return false;
	i = s->next;
	s->next = (i + 1) % CTL_SEEN_MAX;
	slot = &s->slots[i];
	if (slot->used)
		ctl_seen_unlink(s, ctl_seen_find(s, &slot->key));
	head = &s->heads[ctl_seen_bucket(s, k)];
	slot->key = *k;
	slot->chain = *head;
	slot->used = true;
	slot->failed = false;
	*head = i;
	s->nr++;
	return true;
}

/**
 * ctl_seen_del() - forget a file, to handle it again when it is next seen
 * @s: the set
 * @k: the file
 */
void ctl_seen_del(struct ctl_seen *s, const struct ctl_key *k)
{
	u32 *link = ctl_seen_find(s, k);

	if (link)
		ctl_seen_unlink(s, link);
}

/**
 * ctl_seen_fail() - note that no section can be made for a file of the set
 * @s: the set
 * @k: the file
 */
void ctl_seen_fail(struct ctl_seen *s, const struct ctl_key *k)
{
	u32 *link = ctl_seen_find(s, k);

	if (link)
		s->slots[*link].failed = true;
}

/**
 * ctl_seen_failed() - whether no section can be made for a file
 * @s: the set
 * @k: the file
 *
 * Return: true if @k is in @s, noted by ctl_seen_fail().
 */
bool ctl_seen_failed(struct ctl_seen *s, const struct ctl_key *k)
{
	u32 *link = ctl_seen_find(s, k);

	return link && s->slots[*link].failed;
}

void ctl_seen_free(struct ctl_seen *s)
{
	free(s->slots);
	free(s->heads);
	memset(s, 0, sizeof(*s));
}

/**
 * ctl_count() - add the result of one file to a tally
 * @t: the tally
 * @res: what ctl_add_one() or ctl_warm_one() said
 */
void ctl_count(struct ctl_tally *t, enum ctl_result res)
{
	switch (res) {
	case CTL_ADDED:
		t->added++;
		break;
	case CTL_HAS_SFRAME:
		t->own++;
		break;
	case CTL_ALREADY:
		t->already++;
		break;
	case CTL_UNCACHED:
		t->uncached++;
		break;
	case CTL_BUSY:
		t->busy++;
		break;
	default:
		t->failed++;
	}
}

/*
 * A file on a file system sframectl does not trust (FUSE, an overlay,
 * one it does not know): not opened here, where a server could hold sync
 * for ever (sframectl-fs.c).  Said once per file: the key it is
 * remembered by (no size or time, which only its server could tell) is
 * not the one the daemon's event gives the file, so the daemon still
 * takes it.
 */
static void ctl_sync_skip(struct ctl_map *m, struct ctl_seen *seen)
{
	m->key.size = CTL_KEY_SKIPPED;
	m->key.mtime_sec = 0;
	m->key.mtime_nsec = 0;
	if (ctl_seen_add(seen, &m->key))
		fprintf(stderr, "%s: %s: not on a file system sframectl trusts (FUSE, an overlay, ...), skipped by sync (the daemon takes it when the file is mapped again)\n",
			ctl_prog, m->path);
}

/* Open the maps of the next process.  Return: false after the last. */
static bool ctl_sync_next_pid(struct ctl_sync *s)
{
	char path[CTL_PID_MAX + sizeof("/proc//maps")];
	struct dirent *d;

	while ((d = readdir(s->proc))) {
		if (!isdigit((unsigned char)d->d_name[0]) ||
		    snprintf(s->pid, sizeof(s->pid), "%s", d->d_name) >=
		    (int)sizeof(s->pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", s->pid);
		s->maps = fopen(path, "re");
		if (s->maps)
			return true;
		/* gone, or a kernel thread */
	}
	return false;
}

/**
 * ctl_sync_begin() - start a sync (ctl_sync_next(), then ctl_sync_end())
 * @s: the sync to start
 *
 * Return: 0, or 1 if /proc cannot be read.
 */
int ctl_sync_begin(struct ctl_sync *s)
{
	memset(s, 0, sizeof(*s));
	if (geteuid())
		fprintf(stderr, "%s: sync reads every process's mappings: run it as root\n",
			ctl_prog);
	s->proc = opendir("/proc");
	if (!s->proc) {
		perror("sframectl: /proc");
		return 1;
	}
	ctl_fs_forget();
	return 0;
}

/*
 * The next file of the process whose maps @s reads that no sync or event
 * handled yet, into @m and @mapped, its owner into @owner if not NULL;
 * false at the end of the maps.
 */
static bool ctl_sync_next_file(struct ctl_sync *s, struct ctl_seen *seen,
			       struct ctl_map *m, char *mapped,
			       unsigned int *owner)
{
	char line[CTL_LINE_MAX];

	while (fgets(line, sizeof(line), s->maps)) {
		if (!ctl_parse_map(line, m))
			continue;
		if (!ctl_fs_dev_trusted(m->key.major, m->key.minor, s->pid)) {
			ctl_sync_skip(m, seen);
			continue;
		}
		/* The mapped file itself, even if its path was replaced. */
		snprintf(mapped, CTL_MAPPED_MAX, "/proc/%s/map_files/%lx-%lx",
			 s->pid, m->start, m->end);
		if (ctl_key_stamp(&m->key, mapped, owner) &&
		    ctl_seen_add(seen, &m->key))
			return true;
	}
	return false;
}

/**
 * ctl_sync_next() - the next file of a sync
 * @s: the sync
 * @seen: files handled already (by an earlier sync or the daemon); the
 *	file is added to it (ctl_seen_result() says how it went)
 * @m: its mapping
 * @mapped: its path under /proc/PID/map_files, CTL_MAPPED_MAX bytes
 * @owner: its owner's uid, or NULL
 *
 * Return: false once every process was read.
 */
bool ctl_sync_next(struct ctl_sync *s, struct ctl_seen *seen,
		   struct ctl_map *m, char *mapped, unsigned int *owner)
{
	for (;;) {
		if (!s->maps && !ctl_sync_next_pid(s))
			return false;
		if (ctl_sync_next_file(s, seen, m, mapped, owner))
			return true;
		fclose(s->maps);
		s->maps = NULL;
	}
}

/**
 * ctl_seen_result() - remember how a file of a sync or an event went
 * @seen: the files handled
 * @k: the file's key, added to @seen when it was taken
 * @res: what came of it
 *
 * A file leased by its owner (CTL_BUSY) is forgotten, for its next
 * mapping or the next sync; a failed one is not retried until it changes.
 */
void ctl_seen_result(struct ctl_seen *seen, const struct ctl_key *k,
		     enum ctl_result res)
{
	if (res == CTL_BUSY)
		ctl_seen_del(seen, k);
	else if (res == CTL_FAILED)
		ctl_seen_fail(seen, k);
}

/**
 * ctl_sync_end() - end a sync, at its end or before, and say what it did
 * @ctx: the cache
 * @s: the sync, its tally counted (ctl_count())
 *
 * Return: 0, or 1 if a file failed.
 */
int ctl_sync_end(struct ctl_ctx *ctx, struct ctl_sync *s)
{
	if (s->maps)
		fclose(s->maps);
	closedir(s->proc);
	/* A leased file is tried again later, but this sync missed it. */
	s->t.failed += s->t.busy;
	printf("sync: %u files registered, %u already, %u with SFrame of their own, %u failed\n",
	       s->t.added, s->t.already, s->t.own, s->t.failed);
	if (ctx->cache.dirfd >= 0)
		printf("cache %s: %u sections loaded, %u stored so far\n",
		       ctx->cache.dir, ctx->cache.hits, ctx->cache.stores);
	return s->t.failed ? 1 : 0;
}

/**
 * ctl_sync() - a sidecar for every file running processes map executable
 * @ctx: the device, the cache and the child's deadline
 * @seen: files handled already (by an earlier sync or the daemon); the
 *	files of this sync are added to it, but for those leased by their
 *	owners (CTL_BUSY), which the next sync or event tries again
 *
 * Return: 0, or 1 if a file failed or /proc cannot be read.
 */
int ctl_sync(struct ctl_ctx *ctx, struct ctl_seen *seen)
{
	char mapped[CTL_MAPPED_MAX];
	enum ctl_result res;
	struct ctl_sync s;
	struct ctl_map m;

	if (ctl_sync_begin(&s))
		return 1;
	while (ctl_sync_next(&s, seen, &m, mapped, NULL)) {
		res = ctl_add_one(ctx, mapped, m.path, 0, true);
		ctl_seen_result(seen, &m.key, res);
		ctl_count(&s.t, res);
	}
	return ctl_sync_end(ctx, &s);
}
