// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder selftests' side of the test hook: issue commands, read the
 * walks back and parse them, name frames with dladdr() (the programs are
 * linked with -rdynamic, so their functions are in the dynamic symbol
 * table) and compare a walk with the expected chain of functions.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest.h"
#include "uw.h"

#define UW_LINE_MAX	256

int uw_fd = -1;
const char *uw_req;
unsigned long uw_req_len;
long uw_req_ret;

/* Called after the hook's system call, so that the hook keeps a frame. */
__attribute__((noipa)) void uw_nop(void)
{
}

int uw_open(void)
{
	return open(UW_HOOK, O_RDWR | O_CLOEXEC);
}

/* Write one command with the C library's write(); 0 or -errno. */
int uw_cmd(int fd, const char *cmd)
{
	ssize_t len = strlen(cmd);

	return write(fd, cmd, len) == len ? 0 : -errno;
}

/* Parse the walks of @text into @walks; returns how many, or -1. */
static int uw_parse(char *text, struct uw_walk *walks, int max)
{
	struct uw_walk *w = NULL;
	char *line, *save = NULL;
	unsigned long pc;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "cookie=", 7)) {
			if (n == max)
				return -1;
			w = &walks[n++];
			memset(w, 0, sizeof(*w));
			if (sscanf(line, "cookie=%llu consumer=%d nr=%u stop=%23s sframe=%u fallback=%u signal=%u table=%u",
				   &w->cookie, &w->consumer, &w->nr, w->stop,
				   &w->sframe, &w->fallback,
				   &w->signal, &w->table) != 8) {
				ksft_print_msg("malformed header: %s\n", line);
				return -1;
			}
			w->nr = 0;
			continue;
		}
		if (!w || sscanf(line, "0x%lx", &pc) != 1) {
			ksft_print_msg("malformed line: %s\n", line);
			return -1;
		}
		if (w->nr < UW_MAX_FRAMES)
			w->pcs[w->nr] = pc;
		w->nr++;
	}
	for (int i = 0; i < n; i++)
		if (walks[i].nr > UW_MAX_FRAMES)
			walks[i].nr = UW_MAX_FRAMES;
	return n;
}

/*
 * Read (and so take away) the walks of the thread selected on @fd: the
 * caller's own after sync and deferred, another's after "get TID".
 * Returns how many, or -1.
 */
int uw_read(int fd, struct uw_walk *walks, int max)
{
	char *buf = malloc(UW_READ_MAX + 1);
	ssize_t got;
	int n = -1;

	if (!buf)
		return -1;
	/* At offset 0 the hook collects the results anew. */
	got = pread(fd, buf, UW_READ_MAX, 0);
	if (got >= 0) {
		buf[got] = '\0';
		n = uw_parse(buf, walks, max);
	}
	free(buf);
	return n;
}

/* The walks that completed for thread @tid; how many, or -1. */
int uw_fetch(int fd, pid_t tid, struct uw_walk *walks, int max)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "get %d", (int)tid);
	if (uw_cmd(fd, cmd))
		return -1;
	return uw_read(fd, walks, max);
}

/* One "name value" line of the stats file; 0 or -1. */
int uw_stat(const char *name, unsigned long long *val)
{
	char line[UW_LINE_MAX], key[UW_LINE_MAX];
	unsigned long long v;
	int ret = -1;
	FILE *f;

	f = fopen(UW_STATS, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %llu", key, &v) == 2 &&
		    !strcmp(key, name)) {
			*val = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

bool uw_hook_present(void)
{
	return !access(UW_HOOK, W_OK);
}

/*
 * The function @pc is in, "?" if none is known.  A return address is
 * looked up one byte back, in the call instruction: a call can be the
 * last instruction of a function.
 */
const char *uw_name(unsigned long pc, bool ret_addr)
{
	Dl_info info;

	if (ret_addr)
		pc--;
	if (!dladdr((void *)pc, &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

/* Frame 0 and frames restored from a signal context are exact PCs. */
const char *uw_frame_name(const struct uw_walk *w, unsigned int i)
{
	return uw_name(w->pcs[i], i > 0);
}

void uw_print_walk(const char *what, const struct uw_walk *w)
{
	const char *obj, *slash;
	unsigned long pc, at;
	unsigned int i;
	Dl_info info;

	ksft_print_msg("%s: cookie=%llu consumer=%d nr=%u stop=%s sframe=%u fallback=%u signal=%u table=%u\n",
		       what, w->cookie, w->consumer, w->nr, w->stop,
		       w->sframe, w->fallback, w->signal, w->table);
	for (i = 0; i < w->nr; i++) {
		pc = w->pcs[i];
		at = pc - (i > 0);
		if (!dladdr((void *)at, &info)) {
			ksft_print_msg("  #%-3u 0x%lx ?\n", i, pc);
			continue;
		}
		obj = info.dli_fname ? info.dli_fname : "?";
		slash = strrchr(obj, '/');
		obj = slash ? slash + 1 : obj;
		if (info.dli_sname)
			ksft_print_msg("  #%-3u 0x%lx %s+0x%lx (%s)\n", i, pc,
				       info.dli_sname,
				       pc - (unsigned long)info.dli_saddr, obj);
		else
			ksft_print_msg("  #%-3u 0x%lx ? (%s)\n", i, pc, obj);
	}
}

/* Frames @from .. @from + @nr - 1 of @w are the functions @want. */
bool uw_chain_is(const struct uw_walk *w, unsigned int from,
		 const char *const *want, unsigned int nr)
{
	unsigned int i;

	if (w->nr < from + nr)
		return false;
	for (i = 0; i < nr; i++)
		if (strcmp(uw_frame_name(w, from + i), want[i]))
			return false;
	return true;
}

/* The symbolized chain on one line: "a <- b <- c". */
void uw_print_chain(const char *what, const struct uw_walk *w)
{
	char line[UW_READ_MAX / 16];
	size_t len = 0;
	unsigned int i;

	line[0] = '\0';
	for (i = 0; i < w->nr && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len, "%s%s",
				i ? " <- " : "", uw_frame_name(w, i));
	ksft_print_msg("%s: %s [stop=%s]\n", what, line, w->stop);
}
