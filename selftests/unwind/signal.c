// SPDX-License-Identifier: GPL-2.0
/*
 * Walks through a signal frame.
 *
 * main -> uw_test -> uw_s1 -> uw_s2 -> uw_s3 arms a timer and spins; the
 * SIGALRM handler calls uw_sig_hook, which issues the request to the test
 * hook with an inline system call.  The walk must give uw_sig_hook, the
 * handler, the signal trampoline the handler returns to (glibc's
 * __restore_rt on x86-64, the vDSO's __kernel_rt_sigreturn on arm64 and
 * s390x, or its __kernel_sigreturn on s390x for a handler without
 * SA_SIGINFO, which gets the old signal frame there; none with SFrame: the
 * walker recognises their instructions), then the interrupted uw_s3 and
 * its callers up to main, with signal=1.  For a plain handler
 * (uw_handler, sa_handler) and an SA_SIGINFO one (uw_handler_info), each
 * with "sync fault", "deferred" and "sync".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "kselftest.h"
#include "uw.h"

#define UW_TIMER_US	20000

atomic_int uw_sig_done;

/*
 * Not a leaf (uw_nop() makes it keep a frame), so that this test is about
 * the signal frame; frame 0 in a leaf is unwind_chain's "leaf chain".
 */
__attribute__((noipa)) void uw_sig_hook(void)
{
	long ret = uw_raw_write(uw_fd, uw_req, uw_req_len);

	uw_nop();
	uw_req_ret = ret;
}

__attribute__((noipa)) void uw_handler(int sig)
{
	uw_sig_hook();
	atomic_store(&uw_sig_done, 1);
}

__attribute__((noipa)) void uw_handler_info(int sig, siginfo_t *si, void *uc)
{
	uw_sig_hook();
	atomic_store(&uw_sig_done, 1);
}

__attribute__((noipa)) long uw_s3(long x)
{
	struct itimerval it = { .it_value = { 0, UW_TIMER_US } };

	if (setitimer(ITIMER_REAL, &it, NULL))
		return -1;
	while (!atomic_load_explicit(&uw_sig_done, memory_order_relaxed))
		x = x * 7 + 1;
	x = uw_opaque(x);
	return x;
}

__attribute__((noipa)) long uw_s2(long x)
{
	long r = uw_s3(x + 1);

	r = uw_opaque(r);
	return r + 1;
}

__attribute__((noipa)) long uw_s1(long x)
{
	long r = uw_s2(x + 1);

	r = uw_opaque(r);
	return r + 1;
}

static const char *const uw_outer[] = {
	"uw_s3", "uw_s2", "uw_s1", "uw_test", "main",
};
static const char *const uw_requests[] = { "sync fault", "deferred", "sync" };

__attribute__((noipa)) void uw_test(const char *handler, const char *req)
{
	const char *const inner[] = { "uw_sig_hook", handler };
	unsigned int tramp = ARRAY_SIZE(inner);
	struct uw_walk walks[2];
	bool ok;
	int n;

	atomic_store(&uw_sig_done, 0);
	uw_req = req;
	uw_req_len = strlen(req);
	if (uw_s1(0) == -1) {
		ksft_test_result_fail("%s: %s: setitimer failed\n", handler,
				      req);
		return;
	}
	n = uw_req_ret == (long)uw_req_len ?
	    uw_read(uw_fd, walks, ARRAY_SIZE(walks)) : -1;
	if (n != 1) {
		ksft_test_result_fail("%s: %s: write returned %ld, %d walks\n",
				      handler, req, uw_req_ret, n);
		return;
	}
	uw_print_chain(req, &walks[0]);
	ok = uw_chain_is(&walks[0], 0, inner, ARRAY_SIZE(inner)) &&
	     walks[0].nr > tramp &&
	     uw_chain_is(&walks[0], tramp + 1, uw_outer,
			 ARRAY_SIZE(uw_outer)) &&
	     walks[0].signal == 1;
	if (!ok)
		uw_print_walk(req, &walks[0]);
	ksft_test_result(ok, "%s: %s: handler, trampoline (%s), then the interrupted uw_s3 up to main, signal=%u\n",
			 handler, req, walks[0].nr > tramp ?
			 uw_name(walks[0].pcs[tramp], false) : "none",
			 walks[0].signal);
}

int main(void)
{
	struct sigaction sa;
	unsigned int i;

	ksft_print_header();
	if (!uw_hook_present())
		ksft_exit_skip("no %s: the module is not loaded\n", UW_HOOK);
	uw_fd = uw_open();
	if (uw_fd < 0)
		ksft_exit_fail_perror(UW_HOOK);
	ksft_set_plan(2 * ARRAY_SIZE(uw_requests));

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = uw_handler;
	if (sigaction(SIGALRM, &sa, NULL))
		ksft_exit_fail_perror("sigaction");
	for (i = 0; i < ARRAY_SIZE(uw_requests); i++)
		uw_test("uw_handler", uw_requests[i]);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = uw_handler_info;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGALRM, &sa, NULL))
		ksft_exit_fail_perror("sigaction");
	for (i = 0; i < ARRAY_SIZE(uw_requests); i++)
		uw_test("uw_handler_info", uw_requests[i]);
	close(uw_fd);
	ksft_finished();
}
