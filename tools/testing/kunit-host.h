/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The subset of the KUnit API the project's suites use, for running the
 * same suite sources on the host (under ASan and UBSan) before they run in
 * a kernel.  Output is KTAP, as kunit.py prints it, closed by a
 * "N passed, N failed" line.
 */
#ifndef _KUNIT_HOST_H
#define _KUNIT_HOST_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define GFP_KERNEL	0
#define KUNIT_PARAM_DESC_SIZE	128

struct kunit {
	const char *name;
	bool failed;
	jmp_buf abort;
	void *allocs;
	const void *param_value;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);
};

struct kunit_suite {
	const char *name;
	struct kunit_case *test_cases;
};

void kunit_host_register(struct kunit_suite *suite);
void *kunit_kzalloc(struct kunit *test, size_t size, int gfp);
void kunit_host_fail(struct kunit *test, bool fatal, const char *file,
		     int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define kunit_test_suite(s) \
	static void __attribute__((constructor)) kunit_host_reg_##s(void) \
	{ kunit_host_register(&(s)); }

#define KUNIT_CASE(f) { .run_case = f, .name = #f }
#define KUNIT_CASE_PARAM(f, gen) \
	{ .run_case = f, .name = #f, .generate_params = gen }

#define KUNIT_ARRAY_PARAM(name, array, get_desc) \
	static const void *name##_gen_params(const void *prev, char *desc) \
	{ \
		typeof((array)[0]) *__next = prev ? \
			((typeof(__next))prev) + 1 : (array); \
		if (__next - (array) < (long)ARRAY_SIZE(array)) { \
			void (*__get_desc)(typeof(__next), char *) = get_desc; \
			if (__get_desc) \
				__get_desc(__next, desc); \
			return __next; \
		} \
		return NULL; \
	}

#define kunit_info(test, fmt, ...) \
	do { (void)(test); printf("        # " fmt, ##__VA_ARGS__); } while (0)
#define kunit_err(test, fmt, ...) kunit_info(test, fmt, ##__VA_ARGS__)

#define KUNIT_HOST_BINOP(test, fatal, a, op, b) do { \
	long long __a = (long long)(a), __b = (long long)(b); \
	if (!(__a op __b)) \
		kunit_host_fail(test, fatal, __FILE__, __LINE__, \
				"%s %s %s: %lld vs %lld", #a, #op, #b, \
				__a, __b); \
} while (0)

#define KUNIT_EXPECT_EQ(t, a, b)	KUNIT_HOST_BINOP(t, false, a, ==, b)
#define KUNIT_EXPECT_NE(t, a, b)	KUNIT_HOST_BINOP(t, false, a, !=, b)
#define KUNIT_EXPECT_LT(t, a, b)	KUNIT_HOST_BINOP(t, false, a, <, b)
#define KUNIT_EXPECT_LE(t, a, b)	KUNIT_HOST_BINOP(t, false, a, <=, b)
#define KUNIT_EXPECT_GT(t, a, b)	KUNIT_HOST_BINOP(t, false, a, >, b)
#define KUNIT_EXPECT_GE(t, a, b)	KUNIT_HOST_BINOP(t, false, a, >=, b)
#define KUNIT_ASSERT_EQ(t, a, b)	KUNIT_HOST_BINOP(t, true, a, ==, b)
#define KUNIT_ASSERT_NE(t, a, b)	KUNIT_HOST_BINOP(t, true, a, !=, b)
#define KUNIT_ASSERT_GT(t, a, b)	KUNIT_HOST_BINOP(t, true, a, >, b)
#define KUNIT_EXPECT_TRUE(t, c)		KUNIT_HOST_BINOP(t, false, !!(c), ==, 1)
#define KUNIT_EXPECT_FALSE(t, c)	KUNIT_HOST_BINOP(t, false, !!(c), ==, 0)
#define KUNIT_ASSERT_TRUE(t, c)		KUNIT_HOST_BINOP(t, true, !!(c), ==, 1)
#define KUNIT_ASSERT_NOT_NULL(t, p)	KUNIT_HOST_BINOP(t, true, !!(p), ==, 1)

#define KUNIT_EXPECT_STREQ(t, a, b) do { \
	const char *__a = (a), *__b = (b); \
	if (strcmp(__a, __b)) \
		kunit_host_fail(t, false, __FILE__, __LINE__, \
				"%s == %s: \"%s\" vs \"%s\"", #a, #b, \
				__a, __b); \
} while (0)

#endif /* _KUNIT_HOST_H */
