/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Registering what already runs: at load, and for a file that just got
 * a sidecar (scan.c).
 */
#ifndef _SFU_SCAN_H
#define _SFU_SCAN_H

struct inode;

void sfu_scan_all(void);
void sfu_scan_file(const struct inode *inode);

#endif /* _SFU_SCAN_H */
