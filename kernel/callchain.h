/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's and ftrace's user stack walks, redirected to the module
 * (callchain.c).
 */
#ifndef _SFU_CALLCHAIN_H
#define _SFU_CALLCHAIN_H

#include <linux/types.h>

void sfu_callchain_init(void);
void sfu_callchain_exit(void);
bool sfu_callchain_active(const char *symbol);

#endif /* _SFU_CALLCHAIN_H */
