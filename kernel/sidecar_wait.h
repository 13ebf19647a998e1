/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait at a file's first mapping for the daemon's sidecar
 * (sidecar_wait.c).
 */
#ifndef _SFU_SIDECAR_WAIT_H
#define _SFU_SIDECAR_WAIT_H

#include <linux/atomic.h>
#include <linux/types.h>

struct file;
struct sfu_blob;

void sfu_first_map_init(void);
int sfu_first_map_listen(u32 lease_ms);
void sfu_first_map_failed(struct file *file);
void sfu_first_map_added(struct file *file);
struct sfu_blob *sfu_first_map_wait(struct file *file, atomic_long_t *spent);
void sfu_first_map_stop(void);

#endif /* _SFU_SIDECAR_WAIT_H */
