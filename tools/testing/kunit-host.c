// SPDX-License-Identifier: GPL-2.0
/*
 * Runner for KUnit suites compiled on the host: KTAP output, one subtest
 * per suite, parameterised cases as sub-subtests, allocations freed after
 * each case, and a closing "N passed, N failed" line.
 */
#include <stdarg.h>
#include <stdlib.h>

#include <sframe/env.h>
#include "kunit-host.h"

#define KUNIT_HOST_MAX_SUITES	16

static struct kunit_suite *suites[KUNIT_HOST_MAX_SUITES];
static unsigned int nr_suites;

struct kunit_host_alloc {
	struct kunit_host_alloc *next;
};

void kunit_host_register(struct kunit_suite *suite)
{
	if (nr_suites < KUNIT_HOST_MAX_SUITES)
		suites[nr_suites++] = suite;
}

void *kunit_kzalloc(struct kunit *test, size_t size, int gfp)
{
	struct kunit_host_alloc *a = calloc(1, sizeof(*a) + size);

	if (!a)
		return NULL;
	a->next = test->allocs;
	test->allocs = a;
	return a + 1;
}

static void kunit_host_free_all(struct kunit *test)
{
	struct kunit_host_alloc *a = test->allocs, *next;

	for (; a; a = next) {
		next = a->next;
		free(a);
	}
	test->allocs = NULL;
}

void kunit_host_fail(struct kunit *test, bool fatal, const char *file,
		     int line, const char *fmt, ...)
{
	va_list ap;

	test->failed = true;
	printf("        # %s: EXPECTATION FAILED at %s:%d\n        # ",
	       test->name, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (fatal)
		longjmp(test->abort, 1);
}

static bool kunit_host_run_one(struct kunit_case *c, const void *param)
{
	struct kunit test = { .name = c->name, .param_value = param };

	if (!setjmp(test.abort))
		c->run_case(&test);
	kunit_host_free_all(&test);
	return !test.failed;
}

static bool kunit_host_run_params(struct kunit_case *c, unsigned int *passed,
				  unsigned int *failed)
{
	char desc[KUNIT_PARAM_DESC_SIZE];
	const void *param = NULL;
	unsigned int n = 0;
	bool all_ok = true, ok;

	printf("        # Subtest: %s\n", c->name);
	for (;;) {
		desc[0] = '\0';
		param = c->generate_params(param, desc);
		if (!param)
			break;
		ok = kunit_host_run_one(c, param);
		printf("        %s %u %s\n", ok ? "ok" : "not ok", ++n, desc);
		if (ok)
			(*passed)++;
		else
			(*failed)++;
		all_ok &= ok;
	}
	printf("        1..%u\n", n);
	return all_ok;
}

static bool kunit_host_run_suite(struct kunit_suite *s, unsigned int *passed,
				 unsigned int *failed)
{
	struct kunit_case *c;
	unsigned int n = 0;
	bool all_ok = true, ok;

	printf("    # Subtest: %s\n", s->name);
	for (c = s->test_cases; c->run_case; c++)
		n++;
	printf("    1..%u\n", n);
	for (n = 0, c = s->test_cases; c->run_case; c++) {
		if (c->generate_params) {
			ok = kunit_host_run_params(c, passed, failed);
		} else {
			ok = kunit_host_run_one(c, NULL);
			if (ok)
				(*passed)++;
			else
				(*failed)++;
		}
		printf("    %s %u %s\n", ok ? "ok" : "not ok", ++n, c->name);
		all_ok &= ok;
	}
	return all_ok;
}

int main(void)
{
	unsigned int passed = 0, failed = 0, i;
	bool ok;

	printf("KTAP version 1\n1..%u\n", nr_suites);
	for (i = 0; i < nr_suites; i++) {
		ok = kunit_host_run_suite(suites[i], &passed, &failed);
		printf("%s %u %s\n", ok ? "ok" : "not ok", i + 1,
		       suites[i]->name);
	}
	printf("# host-kunit: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
