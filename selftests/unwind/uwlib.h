/* SPDX-License-Identifier: GPL-2.0 */
/* The unwinder selftests' library (selftests/unwind/lib.c). */
#ifndef _SELFTESTS_UNWIND_UWLIB_H
#define _SELFTESTS_UNWIND_UWLIB_H

long uwl_call(long (*fn)(long x), long x);

#endif /* _SELFTESTS_UNWIND_UWLIB_H */
