/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the unwinder selftests (selftests/unwind/): the test hook's
 * protocol (kernel/testhook.c), a write() issued with an inline system
 * call so that frame 0 of a walk is in the caller's own code, parsing of
 * the walks read back, and naming of frames.
 */
#ifndef _SELFTESTS_UNWIND_UW_H
#define _SELFTESTS_UNWIND_UW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "raw_syscall.h"

#define UW_DBG_DIR	"/sys/kernel/debug/sframe_unwind"
#define UW_HOOK		UW_DBG_DIR "/unwind"
#define UW_STATS	UW_DBG_DIR "/stats"
#define UW_KO		"/lib/test-modules/sframe_unwind.ko"
#define UW_MODNAME	"sframe_unwind"

/* Frames kept per walk (the module returns up to max_depth, 127 by default). */
#define UW_MAX_FRAMES	256
#define UW_STOP_MAX	24
/* Room for the walks of one read: a few full ones. */
#define UW_READ_MAX	(64 * 1024)

/*
 * @x, as a value the compiler cannot see through: keeps it from folding,
 * merging or tail-calling around it.
 */
static inline long uw_opaque(long x)
{
	__asm__ volatile("" : "+r" (x) : : "memory");
	return x;
}

/* Keep the compiler from dropping a local whose address it sees go. */
static inline void uw_escape(const void *p)
{
	__asm__ volatile("" : : "r" (p) : "memory");
}

/**
 * struct uw_walk - one walk read back from the hook
 * @cookie: the request's cookie (0 for sync walks)
 * @consumer: which consumer got it (-1 for sync walks)
 * @nr: frames the walk found (only the first UW_MAX_FRAMES are kept)
 * @stop: why the walk stopped
 * @sframe: frames stepped with SFrame
 * @fallback: frames stepped with frame pointers or the back chain
 * @signal: signal frames stepped through
 * @table: of @sframe, frames whose rule came from a rule table (files)
 * @pcs: the frames, innermost first
 */
struct uw_walk {
	unsigned long long cookie;
	int consumer;
	unsigned int nr;
	char stop[UW_STOP_MAX];
	unsigned int sframe;
	unsigned int fallback;
	unsigned int signal;
	unsigned int table;
	unsigned long pcs[UW_MAX_FRAMES];
};

/*
 * write(fd, buf, len) as one system call instruction in the caller, not
 * in the C library (which has no SFrame): frame 0 of a walk made in this
 * write() is the caller's own PC.  Returns the result or -errno.
 */
static inline __attribute__((always_inline)) long
uw_raw_write(int fd, const void *buf, unsigned long len)
{
	return raw_syscall3(SYS_write, fd, (long)buf, (long)len);
}

/* The request a test's hook function issues, and what write() returned. */
extern int uw_fd;
extern const char *uw_req;
extern unsigned long uw_req_len;
extern long uw_req_ret;

void uw_nop(void);
int uw_open(void);
int uw_cmd(int fd, const char *cmd);
int uw_read(int fd, struct uw_walk *walks, int max);
int uw_fetch(int fd, pid_t tid, struct uw_walk *walks, int max);
int uw_stat(const char *name, unsigned long long *val);
bool uw_hook_present(void);

const char *uw_name(unsigned long pc, bool ret_addr);
const char *uw_frame_name(const struct uw_walk *w, unsigned int i);
void uw_print_walk(const char *what, const struct uw_walk *w);
bool uw_chain_is(const struct uw_walk *w, unsigned int from,
		 const char *const *want, unsigned int nr);
void uw_print_chain(const char *what, const struct uw_walk *w);

#endif /* _SELFTESTS_UNWIND_UW_H */
