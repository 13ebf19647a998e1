// SPDX-License-Identifier: GPL-2.0
/*
 * Walks of a busy thread taken wherever it happens to be.
 *
 * A worker thread runs uw_worker -> uw_w1 -> uw_w2 -> uw_loop, which calls
 * uw_g -> uw_h -> uw_i over and over, doing arithmetic in each (no system
 * calls), so it spends nearly all its time in these functions, prologues
 * and epilogues included.  The main thread asks the test hook for a walk
 * of the worker ("task TID": the worker is interrupted wherever it runs and
 * walked on its way back to user space) UW_SAMPLES times and reads each
 * result back.  Every function here has exactly one caller, so for a walk
 * whose frame 0 is in one of them the whole chain up to uw_worker is known:
 * at least 99% of those walks must match it exactly.  Walks whose frame 0
 * is elsewhere (the C library, the vDSO) are counted and left out.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "uw.h"

#define UW_SAMPLES	300
#define UW_POLL_NS	500000L		/* 0.5 ms between polls */
#define UW_POLL_MAX	4000		/* 2 s for one walk */
#define UW_WORK		8
#define UW_SHOW_BAD	5
/* Per mille of the walks in our code that must be exact. */
#define UW_EXACT_PERMILLE	990

static atomic_int uw_stop;
static atomic_int uw_ready;
static pid_t uw_worker_tid;

__attribute__((noipa)) long uw_i(long x)
{
	int k;

	for (k = 0; k < UW_WORK; k++)
		x = x * 31 + k;
	x = uw_opaque(x);
	return x;
}

__attribute__((noipa)) long uw_h(long x)
{
	long a = x * 3, r;
	int k;

	r = uw_i(x + 1);
	for (k = 0; k < UW_WORK; k++)
		a = a * 17 + r;
	a = uw_opaque(a);
	return r ^ a;
}

__attribute__((noipa)) long uw_g(long x)
{
	long a = x * 5, r;
	int k;

	r = uw_h(x + 2);
	for (k = 0; k < UW_WORK; k++)
		a = a * 13 + r;
	a = uw_opaque(a);
	return r ^ a;
}

__attribute__((noipa)) long uw_loop(long x)
{
	while (!atomic_load_explicit(&uw_stop, memory_order_relaxed))
		x = uw_g(x) + 1;
	x = uw_opaque(x);
	return x;
}

__attribute__((noipa)) long uw_w2(long x)
{
	long r = uw_loop(x + 1);

	r = uw_opaque(r);
	return r + 1;
}

__attribute__((noipa)) long uw_w1(long x)
{
	long r = uw_w2(x + 1);

	r = uw_opaque(r);
	return r + 1;
}

__attribute__((noipa)) void *uw_worker(void *arg)
{
	long r;

	uw_worker_tid = gettid();
	atomic_store(&uw_ready, 1);
	r = uw_w1((long)arg);
	r = uw_opaque(r);
	return (void *)r;
}

/* Each function with its only caller, innermost first. */
static const char *const uw_graph[] = {
	"uw_i", "uw_h", "uw_g", "uw_loop", "uw_w2", "uw_w1", "uw_worker",
};

/* The position of @name in uw_graph, or -1. */
static int uw_ours(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(uw_graph); i++)
		if (!strcmp(name, uw_graph[i]))
			return i;
	return -1;
}

/* Ask for one walk of the worker and wait for it; 0 or -1. */
static int uw_sample(int fd, char *cmd, struct uw_walk *w)
{
	struct timespec ts = { 0, UW_POLL_NS };
	struct uw_walk walks[2];
	int i, n, err;

	err = uw_cmd(fd, cmd);
	if (err) {
		ksft_print_msg("\"%s\": %s\n", cmd, strerror(-err));
		return -1;
	}
	for (i = 0; i < UW_POLL_MAX; i++) {
		n = uw_fetch(fd, uw_worker_tid, walks, ARRAY_SIZE(walks));
		if (n < 0)
			return -1;
		if (n > 0) {
			*w = walks[n - 1];
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	ksft_print_msg("no walk of %d within 2 s\n", (int)uw_worker_tid);
	return -1;
}

int main(void)
{
	unsigned int got = 0, ours = 0, exact = 0, other = 0, shown = 0;
	unsigned int per_fn[ARRAY_SIZE(uw_graph)] = { 0 };
	struct uw_walk *w;
	pthread_t thread;
	char cmd[32];
	int fd, i, k;

	ksft_print_header();
	if (!uw_hook_present())
		ksft_exit_skip("no %s: the module is not loaded\n", UW_HOOK);
	fd = uw_open();
	if (fd < 0)
		ksft_exit_fail_perror(UW_HOOK);
	w = malloc(sizeof(*w));
	if (!w)
		ksft_exit_fail_msg("out of memory\n");
	ksft_set_plan(3);
	if (pthread_create(&thread, NULL, uw_worker, (void *)1L))
		ksft_exit_fail_msg("pthread_create failed\n");
	while (!atomic_load(&uw_ready))
		usleep(1000);
	snprintf(cmd, sizeof(cmd), "task %d", (int)uw_worker_tid);

	for (i = 0; i < UW_SAMPLES; i++) {
		if (uw_sample(fd, cmd, w))
			continue;
		got++;
		k = w->nr ? uw_ours(uw_frame_name(w, 0)) : -1;
		if (k < 0) {
			if (other++ < UW_SHOW_BAD)
				uw_print_chain("frame 0 not ours", w);
			continue;
		}
		ours++;
		per_fn[k]++;
		if (uw_chain_is(w, 0, uw_graph + k, ARRAY_SIZE(uw_graph) - k)) {
			exact++;
			continue;
		}
		if (shown++ < UW_SHOW_BAD) {
			uw_print_chain("wrong", w);
			uw_print_walk("wrong", w);
		}
	}
	atomic_store(&uw_stop, 1);
	pthread_join(thread, NULL);
	close(fd);

	ksft_print_msg("frame 0 in: uw_i %u, uw_h %u, uw_g %u, uw_loop %u, uw_w2 %u, uw_w1 %u, uw_worker %u\n",
		       per_fn[0], per_fn[1], per_fn[2], per_fn[3], per_fn[4],
		       per_fn[5], per_fn[6]);
	ksft_test_result(got >= UW_SAMPLES * 95 / 100,
			 "%u of %u requests gave a walk\n", got, UW_SAMPLES);
	ksft_test_result(ours >= got * 9 / 10 && ours,
			 "%u walks with frame 0 in our code, %u elsewhere (excluded)\n",
			 ours, other);
	ksft_test_result(ours && exact * 1000 >= ours * UW_EXACT_PERMILLE,
			 "%u of %u walks exact up to uw_worker (%u.%u%%, need 99%%)\n",
			 exact, ours, ours ? exact * 100 / ours : 0,
			 ours ? exact * 1000 / ours % 10 : 0);
	free(w);
	ksft_finished();
}
