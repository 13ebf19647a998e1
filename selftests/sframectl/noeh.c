// SPDX-License-Identifier: GPL-2.0
/*
 * A program with neither .eh_frame nor SFrame: no C runtime files, no
 * unwind tables.  sframectl cannot make a section for it, so sframectl.sh
 * uses it to see that such a file is remembered as failed until it
 * changes.  It sleeps so that the daemon finds its mapping.
 */
#include <unistd.h>

#define NOEH_SLEEP_S	2

#ifdef __x86_64__
/* _start is entered with the stack aligned as it is before a call. */
#define NOEH_START	__attribute__((force_align_arg_pointer, noreturn))
#else
#define NOEH_START	__attribute__((noreturn))
#endif

NOEH_START void _start(void)
{
	sleep(NOEH_SLEEP_S);
	_exit(0);
}
