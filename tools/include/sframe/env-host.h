/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C library's side of <sframe/env.h>: the kernel facilities the shared
 * SFrame code uses, for the host tools and tests.  Included by
 * <sframe/env.h> only, after enum sfu_mem.
 */
#ifndef _SFRAME_ENV_HOST_H
#define _SFRAME_ENV_HOST_H

#define prefetch(x)	__builtin_prefetch(x)

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef __packed
#define __packed __attribute__((__packed__))
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef BIT
#define BIT(nr) (1UL << (nr))
#endif
#ifndef U16_MAX
#define U16_MAX UINT16_MAX
#endif
#ifndef U32_MAX
#define U32_MAX UINT32_MAX
#endif
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#ifndef IS_ALIGNED
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
/* Whole loads and stores of a naturally aligned word, as in the kernel. */
#ifndef READ_ONCE
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val) __atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#endif

#define swab16(x) __builtin_bswap16(x)
#define swab32(x) __builtin_bswap32(x)
#define swab64(x) __builtin_bswap64(x)

static inline ssize_t strscpy(char *dst, const char *src, size_t size)
{
	size_t len = strnlen(src, size);

	if (!size)
		return -E2BIG;
	if (len == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dst, src, len + 1);
	return len;
}

static inline void *sfu_alloc_array(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return malloc(bytes ? bytes : 1);
}

static inline void sfu_free(void *p)
{
	free(p);
}

static inline void sfu_sort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	qsort(base, n, size, cmp);
}

static inline void sfu_cond_resched(void)
{
}

static inline int sfu_copy(void *dst, unsigned long src, size_t len,
			   enum sfu_mem mem)
{
	if (mem != SFU_MEM_KERNEL)
		return -EFAULT;
	memcpy(dst, (const void *)src, len);
	return 0;
}

#endif /* _SFRAME_ENV_HOST_H */
