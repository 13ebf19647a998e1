// SPDX-License-Identifier: GPL-2.0
/*
 * Sidecars follow their files out.  Every sidecar in the table has an
 * fsnotify mark on its file's inode; when the inode's last name goes
 * (unlinked, or renamed over: FS_DELETE_SELF) or its file system is
 * unmounted (FS_UNMOUNT), the watch's owner hears of it through the
 * callback it gave, and the sidecar store takes the sidecar out of its
 * table.  Without this, a user who makes a file, maps it for the daemon
 * to register and deletes it, over and over, would fill the memory pool
 * with sidecars of files that no longer exist.
 *
 * The event comes in the task that unlinks, under fsnotify's SRCU: the
 * handler only queues work, which calls the owner's callback (sidecar.c
 * ends the watch there).  A mark holds its inode in memory until it is
 * destroyed, which the store does at once for a deleted file.  The watch
 * holds a reference to its owner, dropped when fsnotify frees the mark.
 * This file knows owners (registry.h), not sidecars.
 */
#include <linux/fsnotify_backend.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "registry.h"
#include "watch.h"

/* What a watch waits for. */
#define SFU_WATCH_EVENTS	(FS_DELETE_SELF | FS_UNMOUNT)

struct sfu_watch {
	struct fsnotify_mark mark;
	struct sfu_owner *owner;	/* a reference */
	sfu_watch_gone_t gone;
};

/* The news that a file has gone, on its way to process context. */
struct sfu_gone {
	struct work_struct work;
	struct sfu_owner *owner;	/* a reference */
	sfu_watch_gone_t gone;
};

static struct fsnotify_group *sfu_watch_group;
static struct workqueue_struct *sfu_watch_wq;

static void sfu_gone_work(struct work_struct *work)
{
	struct sfu_gone *g = container_of(work, struct sfu_gone, work);

	g->gone(g->owner);
	sfu_owner_put(g->owner);
	kfree(g);
}

static int sfu_watch_event(struct fsnotify_mark *mark, u32 mask,
			   struct inode *inode, struct inode *dir,
			   const struct qstr *name, u32 cookie)
{
	struct sfu_watch *w = container_of(mark, struct sfu_watch, mark);
	struct sfu_gone *g;

	if (!(mask & SFU_WATCH_EVENTS))
		return 0;
	g = kmalloc(sizeof(*g), GFP_NOFS);
	if (!g)
		return -ENOMEM;	/* the sidecar stays until found stale */
	INIT_WORK(&g->work, sfu_gone_work);
	g->owner = sfu_owner_get(w->owner);
	g->gone = w->gone;
	queue_work(sfu_watch_wq, &g->work);
	return 0;
}

static void sfu_watch_free(struct fsnotify_mark *mark)
{
	struct sfu_watch *w = container_of(mark, struct sfu_watch, mark);

	sfu_owner_put(w->owner);
	kfree(w);
}

static const struct fsnotify_ops sfu_watch_ops = {
	.handle_inode_event	= sfu_watch_event,
	.free_mark		= sfu_watch_free,
};

/**
 * sfu_watch_init() - the fsnotify group of the sidecars' watches
 *
 * Return: 0 or a negative errno.
 */
int sfu_watch_init(void)
{
	/* Unbound: 7.x warns about a queue that says neither this nor PERCPU. */
	sfu_watch_wq = alloc_workqueue("sframe_unwind_watch", WQ_UNBOUND, 0);
	if (!sfu_watch_wq)
		return -ENOMEM;
	/* A replaced sidecar's watch may overlap its successor's. */
	sfu_watch_group = fsnotify_alloc_group(&sfu_watch_ops,
					       FSNOTIFY_GROUP_DUPS);
	if (IS_ERR(sfu_watch_group)) {
		destroy_workqueue(sfu_watch_wq);
		return PTR_ERR(sfu_watch_group);
	}
	return 0;
}

/**
 * sfu_watch_exit() - after every watch was stopped (sfu_sidecar_exit())
 *
 * Waits for fsnotify to free the marks, so no handler runs any more, then
 * for the work they queued.
 */
void sfu_watch_exit(void)
{
	fsnotify_wait_marks_destroyed();
	destroy_workqueue(sfu_watch_wq);
	fsnotify_put_group(sfu_watch_group);
}

/**
 * sfu_watch_start() - watch @inode for @owner, what was made of its file
 * @inode: the file's inode
 * @owner: the watch takes a reference, dropped when the watch is freed
 * @gone: called in process context when the file has lost its last name
 *	or its file system was unmounted; again if both happen before the
 *	owner stops the watch, so it must take a second call as a no-op
 *
 * Return: the watch, or NULL if it cannot be made (the owner then hears
 * nothing).
 */
struct sfu_watch *sfu_watch_start(struct inode *inode, struct sfu_owner *owner,
				  sfu_watch_gone_t gone)
{
	struct sfu_watch *w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);

	if (!w)
		return NULL;
	fsnotify_init_mark(&w->mark, sfu_watch_group);
	w->mark.mask = SFU_WATCH_EVENTS;
	w->owner = sfu_owner_get(owner);
	w->gone = gone;
	if (fsnotify_add_inode_mark(&w->mark, inode, 0)) {
		fsnotify_put_mark(&w->mark);	/* frees it: sfu_watch_free() */
		return NULL;
	}
	return w;
}

/**
 * sfu_watch_bytes() - the memory a watch takes, for its owner to count
 *
 * Return: bytes.
 */
size_t sfu_watch_bytes(void)
{
	return sizeof(struct sfu_watch);
}

/**
 * sfu_watch_stop() - end a watch (NULL: none)
 * @w: the watch
 *
 * The mark lets its inode go at once; fsnotify frees it, and drops its
 * owner reference, after a grace period.
 */
void sfu_watch_stop(struct sfu_watch *w)
{
	if (!w)
		return;
	fsnotify_destroy_mark(&w->mark, sfu_watch_group);
	fsnotify_put_mark(&w->mark);
}
