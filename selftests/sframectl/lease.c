// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_lease FILE SECONDS: take a write lease on FILE, which the caller
 * owns, and map its text segment executable, as a user who wants the
 * root daemon to wait for the lease break would; print "ready", then hold
 * both for SECONDS.  The lease break's notice (SIGIO) is ignored, so
 * whoever opens the file blocking waits until the kernel gives up on it
 * (/proc/sys/fs/lease-break-time).  sframectl_daemon_trust.sh runs it as
 * uid 1000.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "registry.h"

int main(int argc, char **argv)
{
	unsigned long page = sysconf(_SC_PAGESIZE), off;
	Elf64_Phdr text;
	uint64_t span;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: sfu_lease FILE SECONDS\n");
		return 2;
	}
	signal(SIGIO, SIG_IGN);
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fcntl(fd, F_SETLEASE, F_WRLCK)) {
		perror(argv[1]);
		return 1;
	}
	if (reg_elf_text(fd, &text, &span)) {
		fprintf(stderr, "%s: no executable segment\n", argv[1]);
		return 1;
	}
	off = text.p_offset & ~(page - 1);
	if (mmap(NULL, text.p_filesz + text.p_offset - off,
		 PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off) == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	sleep(atoi(argv[2]));
	return 0;
}
