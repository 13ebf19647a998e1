// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_hook: ask the module's test hook for a deferred walk from a known
 * chain (main -> hook_outer -> hook_inner, which writes the command with a
 * system call instruction of its own) and print what the hook returned:
 * per walk a "cookie=.. consumer=.. nr=.." line, then one "0x<pc>" line
 * per frame (kernel/testhook.c).  For trace_events.sh, which compares that
 * with the sframe_unwind trace events.
 *
 * Usage: sfu_hook [N]   N consumers request the walk (1, the default, or 2)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "raw_syscall.h"

#define HOOK		"/sys/kernel/debug/sframe_unwind/unwind"
#define CMD_MAX		32
#define RESULT_MAX	(64 * 1024)

static char cmd[CMD_MAX];
long hook_ret;			/* what write() returned */

__attribute__((noipa)) void hook_nop(void)
{
}

/* The innermost frame: the deferred walk starts at its system call. */
__attribute__((noipa)) void hook_inner(int fd)
{
	long ret = raw_syscall3(SYS_write, fd, (long)cmd, strlen(cmd));

	hook_nop();
	hook_ret = ret;
}

__attribute__((noipa)) void hook_outer(int fd)
{
	hook_inner(fd);
	hook_nop();
}

int main(int argc, char **argv)
{
	static char buf[RESULT_MAX + 1];
	ssize_t got;
	int fd;

	snprintf(cmd, sizeof(cmd), "deferred %s", argc > 1 ? argv[1] : "1");
	fd = open(HOOK, O_RDWR);
	if (fd < 0) {
		printf("open %s: %s\n", HOOK, strerror(errno));
		return 1;
	}
	hook_outer(fd);
	if (hook_ret < 0) {
		printf("write \"%s\": %s\n", cmd, strerror(-hook_ret));
		return 1;
	}
	got = pread(fd, buf, RESULT_MAX, 0);
	close(fd);
	if (got < 0) {
		printf("read %s: %s\n", HOOK, strerror(errno));
		return 1;
	}
	buf[got] = '\0';
	fputs(buf, stdout);
	return strncmp(buf, "cookie=", 7) ? 1 : 0;
}
