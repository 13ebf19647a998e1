// SPDX-License-Identifier: GPL-2.0
/*
 * Whose uid it is.  The daemon serves the owners of files in turn
 * (sframectl-pool.c), and a user given subordinate uids (/etc/subuid,
 * for user namespaces) can own files and run processes as any of them:
 * counted apart, one person would take as many turns, and as many queue
 * places, as they have uids.  So a uid in a subordinate range counts as
 * the user the range was given to.  A range given to root (the
 * containers of LXD, Incus or Proxmox) is not root's share: it counts as
 * one person of its own, named by its first uid.  The file is read again
 * when it changes; a range given to a name no one has, or that does not
 * fit in 32 bits, counts as its own uids.
 */
#define _GNU_SOURCE
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sframectl.h"

/* The most ranges kept; a longer file loses its last. */
#define CTL_SUBIDS_MAX		4096

/* The uids there are: 2^32. */
#define CTL_UIDS		(1ULL << 32)

/* Ranges of subordinate uids, and whom each counts as. */
struct ctl_subid {
	unsigned long long start, count;
	unsigned int person;
};

/* The file, for the host test to point elsewhere. */
const char *ctl_subuid_file = "/etc/subuid";

static struct ctl_subid ctl_subids[CTL_SUBIDS_MAX];
static unsigned int ctl_nr_subids;
/* The file as last read: its inode, size and time. */
static struct stat ctl_subid_st;

/* @text, a whole decimal number below @limit, into @val; false if not. */
static bool ctl_subid_num(const char *text, unsigned long long limit,
			  unsigned long long *val)
{
	char *end;

	if (*text < '0' || *text > '9')
		return false;
	*val = strtoull(text, &end, 10);
	return !*end && *val < limit;
}

/* The uid of @who, a name or a number; false if there is none. */
static bool ctl_subid_who(const char *who, unsigned int *uid)
{
	unsigned long long n;
	struct passwd *pw;

	if (ctl_subid_num(who, CTL_UIDS, &n)) {
		*uid = n;
		return true;
	}
	pw = getpwnam(who);
	if (!pw)
		return false;
	*uid = pw->pw_uid;
	return true;
}

/* The range "@who:@start:@count" into @s; false if it is not one. */
static bool ctl_subid_parse(struct ctl_subid *s, const char *who,
			    const char *start, const char *count)
{
	if (!who || !start || !count ||
	    !ctl_subid_num(start, CTL_UIDS, &s->start) ||
	    !ctl_subid_num(count, CTL_UIDS + 1, &s->count) || !s->count ||
	    s->start + s->count > CTL_UIDS || !ctl_subid_who(who, &s->person))
		return false;
	if (!s->person)
		s->person = s->start;	/* a container's, not root's */
	return true;
}

/* Read the file's "user:start:count" lines. */
static void ctl_subid_load(void)
{
	char line[CTL_LINE_MAX], *who, *start, *count;
	struct ctl_subid *s;
	FILE *f;

	ctl_nr_subids = 0;
	f = fopen(ctl_subuid_file, "re");
	if (!f)
		return;
	while (ctl_nr_subids < CTL_SUBIDS_MAX && fgets(line, sizeof(line), f)) {
		who = strtok(line, ":\n");
		start = strtok(NULL, ":\n");
		count = strtok(NULL, ":\n");
		s = &ctl_subids[ctl_nr_subids];
		if (ctl_subid_parse(s, who, start, count))
			ctl_nr_subids++;
	}
	fclose(f);
}

/* Read the file again if it is not the one read last. */
static void ctl_subid_fresh(void)
{
	struct stat st;

	if (stat(ctl_subuid_file, &st)) {
		memset(&ctl_subid_st, 0, sizeof(ctl_subid_st));
		ctl_nr_subids = 0;
		return;
	}
	if (st.st_ino == ctl_subid_st.st_ino &&
	    st.st_size == ctl_subid_st.st_size &&
	    st.st_mtim.tv_sec == ctl_subid_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == ctl_subid_st.st_mtim.tv_nsec)
		return;
	ctl_subid_st = st;
	ctl_subid_load();
}

/**
 * ctl_person() - the user a uid belongs to
 * @uid: a file's owner, or a process's
 *
 * Return: the user to whom /etc/subuid gave @uid (for a range given to
 * root, the range's first uid), or @uid itself.
 */
unsigned int ctl_person(unsigned int uid)
{
	unsigned int i;

	ctl_subid_fresh();
	for (i = 0; i < ctl_nr_subids; i++)
		if (uid >= ctl_subids[i].start &&
		    uid - ctl_subids[i].start < ctl_subids[i].count)
			return ctl_subids[i].person;
	return uid;
}
