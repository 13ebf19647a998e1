// SPDX-License-Identifier: GPL-2.0
/*
 * A walk through the C library: main() -> uw_sort() -> qsort() in libc ->
 * uw_cmp(), which asks the test hook for a "sync" walk from its first
 * call.  The program has SFrame; the C library is the system's own, which
 * has none, so the walk gets through libc's frames only with a sidecar
 * (sframectl), or, where libc keeps frame records (Debian's arm64), with
 * the frame-pointer fallback.  selftests/qsort_libc.sh runs it in the
 * Debian root at /host before and after the daemon registers libc.
 *
 * Prints the walk, then one line:
 *   result: nr=N reached_main=0|1 libc=L sframe=S fallback=F stop=WHY
 * reached_main: a frame is main(); libc: frames in libc.so.6.  Exit 0
 * when the walk could be made.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest.h"
#include "uw.h"

#define UW_QSORT_N	64
#define UW_REQ		"sync"

static bool uw_asked;

__attribute__((noipa)) static int uw_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	if (!uw_asked) {
		uw_asked = true;
		uw_req_ret = uw_raw_write(uw_fd, UW_REQ, strlen(UW_REQ));
		uw_nop();
	}
	return (x > y) - (x < y);
}

__attribute__((noipa)) void uw_sort(long *v, size_t n)
{
	qsort(v, n, sizeof(*v), uw_cmp);
	uw_escape(v);
}

static bool uw_in_libc(unsigned long pc)
{
	Dl_info info;

	return dladdr((void *)(pc - 1), &info) && info.dli_fname &&
	       strstr(info.dli_fname, "libc.so");
}

int main(void)
{
	long v[UW_QSORT_N];
	struct uw_walk w;
	unsigned int i, libc = 0;
	bool main_seen = false;

	for (i = 0; i < UW_QSORT_N; i++)
		v[i] = (i * 7919) % UW_QSORT_N;
	uw_fd = uw_open();
	if (uw_fd < 0)
		return 1;
	uw_sort(v, UW_QSORT_N);
	if (uw_req_ret != (long)strlen(UW_REQ) || uw_read(uw_fd, &w, 1) != 1) {
		ksft_print_msg("the walk failed (write returned %ld)\n",
			       uw_req_ret);
		return 1;
	}
	uw_print_walk("qsort", &w);
	for (i = 1; i < w.nr && i < UW_MAX_FRAMES; i++) {
		main_seen |= !strcmp(uw_frame_name(&w, i), "main");
		libc += uw_in_libc(w.pcs[i]);
	}
	printf("result: nr=%u reached_main=%d libc=%u sframe=%u fallback=%u stop=%s\n",
	       w.nr, main_seen, libc, w.sframe, w.fallback, w.stop);
	return 0;
}
