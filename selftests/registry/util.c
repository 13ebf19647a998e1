// SPDX-License-Identifier: GPL-2.0
/*
 * Readers for the module's debugfs files, shared by the registry
 * selftests and their helper programs.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry.h"

#define READ_CHUNK	4096
#define PC_TEXT_MAX	24

/* The whole of a (pseudo) file, NUL-terminated; NULL on error. */
char *reg_read_file(const char *path, size_t *len)
{
	size_t cap = READ_CHUNK, used = 0;
	char *buf = malloc(cap + 1), *bigger;
	ssize_t got = 0;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (used == cap) {
			cap *= 2;
			bigger = realloc(buf, cap + 1);
			if (!bigger) {
				got = -1;
				break;
			}
			buf = bigger;
		}
		got = read(fd, buf + used, cap - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += got;
	}
	close(fd);
	if (got < 0) {
		free(buf);
		return NULL;
	}
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
}

/* "EPERM" for EPERM, "success" for 0. */
const char *reg_err_name(int err)
{
	const char *name;

	if (!err)
		return "success";
	name = strerrorname_np(err);
	return name ? name : "unknown errno";
}

/* One "name value" line of the stats file. */
int reg_stat(const char *name, unsigned long long *val)
{
	char *buf = reg_read_file(SFU_DBG_STATS, NULL), *line, *save;
	size_t n = strlen(name);
	int ret = -1;

	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, name, n) || line[n] != ' ')
			continue;
		*val = strtoull(line + n + 1, NULL, 0);
		ret = 0;
		break;
	}
	free(buf);
	return ret;
}

/*
 * Look @pcs up in the caller's own registry through the lookup file; @out
 * receives the answer lines.
 */
int reg_lookup(const unsigned long *pcs, unsigned int nr, char *out,
	       size_t len)
{
	size_t req_len = (size_t)nr * PC_TEXT_MAX + 1, off = 0;
	char *req = malloc(req_len);
	ssize_t got = -1;
	unsigned int i;
	int fd;

	if (!req || !len)
		goto out;
	for (i = 0; i < nr; i++)
		off += snprintf(req + off, req_len - off, "0x%lx ", pcs[i]);
	fd = open(SFU_DBG_LOOKUP, O_RDWR);
	if (fd < 0)
		goto out;
	if (write(fd, req, off) == (ssize_t)off)
		got = pread(fd, out, len - 1, 0);
	close(fd);
out:
	free(req);
	if (got < 0)
		return -1;
	out[got] = '\0';
	return 0;
}

/* The answer line for one PC, without its newline. */
int reg_lookup_one(unsigned long pc, char *line, size_t len)
{
	if (reg_lookup(&pc, 1, line, len))
		return -1;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/*
 * The header line and the section lines the sections file lists for
 * @pid, copied to @out; returns the number of section lines (0 and an
 * empty @out if the process has no header), or -1.
 */
int reg_listing(pid_t pid, char *out, size_t len)
{
	char *buf = reg_read_file(SFU_DBG_SECTIONS, NULL), *line, *save;
	char head[32];
	size_t used = 0, hl;
	int in = 0, nr = 0;

	if (!buf || !len)
		return -1;
	out[0] = '\0';
	hl = snprintf(head, sizeof(head), "pid=%d ", (int)pid);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != ' ')
			in = !strncmp(line, head, hl);
		else if (in)
			nr++;
		if (in)
			used += snprintf(out + used, used < len ? len - used : 0,
					 "%s\n", line);
	}
	free(buf);
	return used < len ? nr : -1;
}

/* Section lines of @pid whose last field (path or [jit]) is @name. */
int reg_listed(pid_t pid, const char *name)
{
	char *buf = malloc(SFU_LISTING_MAX), *line, *save, *last;
	int nr, hits = 0;

	if (!buf)
		return -1;
	nr = reg_listing(pid, buf, SFU_LISTING_MAX);
	if (nr < 0) {
		free(buf);
		return -1;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		last = strrchr(line, ' ');
		if (line[0] == ' ' && last && !strcmp(last + 1, name))
			hits++;
	}
	free(buf);
	return hits;
}

/*
 * The first executable PT_LOAD of the 64-bit ELF file @fd, and the end of
 * the highest PT_LOAD (the span a mapping of the whole image needs).
 */
int reg_elf_text(int fd, Elf64_Phdr *text, uint64_t *span)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i, found = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	*span = 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			return -1;
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr + ph.p_memsz > *span)
			*span = ph.p_vaddr + ph.p_memsz;
		if ((ph.p_flags & PF_X) && !found) {
			*text = ph;
			found = 1;
		}
	}
	return found ? 0 : -1;
}
