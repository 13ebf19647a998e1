/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debugfs files the selftests drive deferred requests through
 * (testhook.c).
 */
#ifndef _SFU_TESTHOOK_H
#define _SFU_TESTHOOK_H

struct dentry;

int sfu_testhook_init(struct dentry *dir);
void sfu_testhook_exit(void);

#endif /* _SFU_TESTHOOK_H */
