/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The environment the shared SFrame code is compiled in.
 *
 * The decoder and encoder are kernel code that the host tools compile
 * unchanged.  This header is the only place that tells the two apart: it
 * maps the handful of kernel facilities the shared code uses (fixed-width
 * types, byte swapping, allocation, sorting and the one copy primitive the
 * accessor is built on) onto the kernel's, and, outside the kernel, takes
 * the same names from tools/include/sframe/env-host.h, which maps them
 * onto the C library (host builds add -Itools/include).
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

#include <sframe/env-host.h>

#endif /* __KERNEL__ */

#endif /* _SFRAME_ENV_H */
