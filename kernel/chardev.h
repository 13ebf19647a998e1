/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device /dev/sframe_unwind and its ioctls (chardev.c).
 */
#ifndef _SFU_CHARDEV_H
#define _SFU_CHARDEV_H

int sfu_chardev_init(void);
void sfu_chardev_exit(void);

#endif /* _SFU_CHARDEV_H */
