/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The environment the shared SFrame code is compiled in.
 *
 * The decoder and encoder are kernel code that the host tools compile
 * unchanged.  This header is the only place that tells the two apart: it
 * maps the handful of kernel facilities the shared code uses (fixed-width
 * types, byte swapping, allocation, sorting and the one copy primitive the
 * accessor is built on) onto the C library when built outside the kernel.
 */
#ifndef _SFRAME_ENV_H
#define _SFRAME_ENV_H

/* Where the bytes of a section live, and how they may be read. */
enum sfu_mem {
	SFU_MEM_KERNEL,		/* kernel (or host) memory: plain copy */
	SFU_MEM_USER,		/* user memory: may fault and sleep */
	SFU_MEM_USER_NOFAULT,	/* user memory, page faults disabled */
};

#ifdef __KERNEL__

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/prefetch.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/swab.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/*
 * Arrays larger than kmalloc's largest size class come from vmalloc(),
 * which takes whole pages.  kvmalloc() would ask kmalloc() first, which
 * takes the next power of two of pages up to 4 MiB: a third more over
 * the files of a few large programs (make memory).  kvfree() frees both.
 */
static inline void *sfu_alloc_array(size_t n, size_t size)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
	size_t bytes;

	if (check_mul_overflow(n, size, &bytes))
		return NULL;
	if (bytes > KMALLOC_MAX_CACHE_SIZE)
		return __vmalloc(bytes, gfp);
	return kmalloc(bytes, gfp);
}

static inline void sfu_free(void *p)
{
	kvfree(p);
}

static inline void sfu_sort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	sort(base, n, size, cmp, NULL);
}

static inline void sfu_cond_resched(void)
{
	cond_resched();
}

/*
 * SFU_MEM_USER_NOFAULT reads happen inside a walk that disabled page
 * faults once for all of them and checked that this context may read user
 * memory at all (sfu_unwind_user()), as the kernel's own frame-pointer
 * walkers do: each read is then an access check and a bare user copy.
 * Outside such a walk every read fails rather than fault.
 */
static inline bool sfu_nofault_ok(const void __user *src, size_t len)
{
	return likely(pagefault_disabled()) && access_ok(src, len);
}

static inline int sfu_copy(void *dst, unsigned long src, size_t len,
			   enum sfu_mem mem)
{
	const void __user *usrc = (const void __user *)src;

	switch (mem) {
	case SFU_MEM_KERNEL:
		memcpy(dst, (const void *)src, len);
		return 0;
	case SFU_MEM_USER:
		/* Where page faults are off (a non-faulting walk), no fault. */
		if (pagefault_disabled())
			goto nofault;
		might_fault();
		return copy_from_user(dst, usrc, len) ? -EFAULT : 0;
	case SFU_MEM_USER_NOFAULT:
nofault:
		if (!sfu_nofault_ok(usrc, len))
			return -EFAULT;
		return __copy_from_user_inatomic(dst, usrc, len) ? -EFAULT : 0;
	}
	return -EFAULT;
}

#else /* !__KERNEL__ */

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

#endif /* __KERNEL__ */

#endif /* _SFRAME_ENV_H */
