/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debugfs directory sframe_unwind/ (debugfs.c).
 */
#ifndef _SFU_DEBUGFS_H
#define _SFU_DEBUGFS_H

void sfu_debugfs_init(void);
void sfu_debugfs_exit(void);

#endif /* _SFU_DEBUGFS_H */
