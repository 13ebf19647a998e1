/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Watches on the inodes of files (watch.c): the owner of what was made
 * of a file (a sidecar) hears when the file's last name goes or its file
 * system is unmounted.
 */
#ifndef _SFU_WATCH_H
#define _SFU_WATCH_H

#include <linux/types.h>

struct inode;
struct sfu_owner;
struct sfu_watch;

/* What a watch calls, in process context, when its file has gone. */
typedef void (*sfu_watch_gone_t)(struct sfu_owner *owner);

int sfu_watch_init(void);
void sfu_watch_exit(void);
struct sfu_watch *sfu_watch_start(struct inode *inode, struct sfu_owner *owner,
				  sfu_watch_gone_t gone);
void sfu_watch_stop(struct sfu_watch *w);
size_t sfu_watch_bytes(void);

#endif /* _SFU_WATCH_H */
