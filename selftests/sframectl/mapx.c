// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_mapx [-u UID] SECONDS FILE...: map the text segment of each ELF
 * FILE executable, one after the other, as a program's loader would;
 * print "mapped N" once all are, then hold them for SECONDS.  Each
 * mapping of a file without SFrame or sidecar may wait for the daemon on
 * its way back from mmap() (first_map_wait_ms).  With -u, started as
 * root, it becomes UID (user and group, no other groups) first.
 * firstmap_waits.sh runs it, as root and as uid 1000;
 * registry_user_share.sh as uid 1000 with -u.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "registry.h"

/* Map @path's text executable; 0 or -1, said. */
static int mapx_one(const char *path, unsigned long page)
{
	unsigned long off;
	Elf64_Phdr text;
	uint64_t span;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	if (reg_elf_text(fd, &text, &span)) {
		fprintf(stderr, "%s: no executable segment\n", path);
		goto close_fd;
	}
	off = text.p_offset & ~(page - 1);
	if (mmap(NULL, text.p_filesz + text.p_offset - off,
		 PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off) == MAP_FAILED)
		perror("mmap");
	else
		ret = 0;
close_fd:
	close(fd);
	return ret;
}

/* Become @uid, user and group, with no other group; 0 or -1, said. */
static int mapx_become(const char *uid)
{
	uid_t id = atoi(uid);

	if (setgroups(0, NULL) || setresgid(id, id, id) ||
	    setresuid(id, id, id)) {
		perror("sfu_mapx: -u");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long page = sysconf(_SC_PAGESIZE);
	int i, first = 2;

	if (argc > 2 && !strcmp(argv[1], "-u")) {
		if (mapx_become(argv[2]))
			return 1;
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: sfu_mapx [-u UID] SECONDS FILE...\n");
		return 2;
	}
	for (i = first; i < argc; i++)
		if (mapx_one(argv[i], page))
			return 1;
	printf("mapped %d\n", argc - first);
	fflush(stdout);
	sleep(atoi(argv[1]));
	return 0;
}
