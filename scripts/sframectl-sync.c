// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl sync: a sidecar for every file that a running process maps
 * executable, found in /proc/PID/maps and opened through
 * /proc/PID/map_files (the mapped file itself, even if its path now names
 * another).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframectl.h"

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

/**
 * ctl_key_stamp() - add a file's size and modification time to its key
 * @k: the key
 * @path: the file (as /proc/PID/map_files names it)
 *
 * Return: false if the file cannot be reached.
 */
bool ctl_key_stamp(struct ctl_key *k, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return false;
	k->size = st.st_size;
	k->mtime_sec = st.st_mtim.tv_sec;
	k->mtime_nsec = st.st_mtim.tv_nsec;
	return true;
}

static bool ctl_key_equal(const struct ctl_key *a, const struct ctl_key *b)
{
	return a->major == b->major && a->minor == b->minor &&
	       a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/**
 * ctl_seen_add() - note a file as handled
 * @s: the set
 * @k: the file
 *
 * Return: true if it is new to @s (and now in it).
 */
bool ctl_seen_add(struct ctl_seen *s, const struct ctl_key *k)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (ctl_key_equal(&s->keys[i], k))
			return false;
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		void *p = realloc(s->keys, cap * sizeof(*s->keys));

		if (!p)
			return false;
		s->keys = p;
		s->cap = cap;
	}
	s->keys[s->nr++] = *k;
	return true;
}

void ctl_seen_free(struct ctl_seen *s)
{
	free(s->keys);
	memset(s, 0, sizeof(*s));
}

/**
 * ctl_count() - add the result of one file to a tally
 * @t: the tally
 * @res: what ctl_add_one() said
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
	default:
		t->failed++;
	}
}

static void ctl_sync_pid(int dev, const char *pid, struct ctl_seen *seen,
			 struct ctl_tally *t)
{
	char path[64], line[CTL_LINE_MAX], mapped[96];
	struct ctl_map m;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;		/* gone, or a kernel thread */
	while (fgets(line, sizeof(line), f)) {
		if (!ctl_parse_map(line, &m))
			continue;
		/* The mapped file itself, even if its path was replaced. */
		snprintf(mapped, sizeof(mapped), "/proc/%s/map_files/%lx-%lx",
			 pid, m.start, m.end);
		if (!ctl_key_stamp(&m.key, mapped) ||
		    !ctl_seen_add(seen, &m.key))
			continue;
		ctl_count(t, ctl_add_one(dev, mapped, m.path, 0, true));
	}
	fclose(f);
}

/**
 * ctl_sync() - a sidecar for every file running processes map executable
 * @dev: the device
 * @seen: files handled already (by an earlier sync or the daemon); the
 *	files of this sync are added to it
 *
 * Return: 0, or 1 if a file failed.
 */
int ctl_sync(int dev, struct ctl_seen *seen)
{
	struct ctl_tally t = { 0 };
	struct dirent *d;
	DIR *proc;

	if (geteuid())
		fprintf(stderr, "%s: sync reads every process's mappings: run it as root\n",
			ctl_prog);
	proc = opendir("/proc");
	if (!proc) {
		perror("sframectl: /proc");
		return 1;
	}
	while ((d = readdir(proc)))
		if (isdigit((unsigned char)d->d_name[0]))
			ctl_sync_pid(dev, d->d_name, seen, &t);
	closedir(proc);
	printf("sync: %u files registered, %u already, %u with SFrame of their own, %u failed\n",
	       t.added, t.already, t.own, t.failed);
	if (ctl_cache.dirfd >= 0)
		printf("cache %s: %u sections loaded, %u stored so far\n",
		       ctl_cache.dir, ctl_cache.hits, ctl_cache.stores);
	return t.failed ? 1 : 0;
}

