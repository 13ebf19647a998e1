/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Watches on the inodes of sidecars (watch.c): the sidecar table hears
 * when a file's last name goes or its file system is unmounted.
 */
#ifndef _SFU_WATCH_H
#define _SFU_WATCH_H

struct inode;
struct sfu_blob;
struct sfu_watch;

int sfu_watch_init(void);
void sfu_watch_exit(void);
struct sfu_watch *sfu_watch_start(struct sfu_blob *blob, struct inode *inode);
void sfu_watch_stop(struct sfu_watch *w);

/* Called by watch.c, in process context, when @blob's file has gone. */
void sfu_sidecar_gone(struct sfu_blob *blob);

#endif /* _SFU_WATCH_H */
