/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's and ftrace's user stack walks, redirected to the module
 * (redirect.c).
 */
#ifndef _SFU_REDIRECT_H
#define _SFU_REDIRECT_H

#include <linux/types.h>

void sfu_redirect_init(void);
void sfu_redirect_exit(void);
bool sfu_redirect_active(const char *symbol);

#endif /* _SFU_REDIRECT_H */
