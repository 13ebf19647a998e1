/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test and debug interfaces (debug.c, testhook.c), built only with
 * CONFIG_SFRAME_UNWIND_DEBUG: without it these are empty and the module
 * has none of their files or parameters.
 */
#ifndef _SFU_DEBUG_H
#define _SFU_DEBUG_H

struct dentry;

#ifdef CONFIG_SFRAME_UNWIND_DEBUG
void sfu_debug_init(struct dentry *dir);
void sfu_debug_exit(void);
#else
static inline void sfu_debug_init(struct dentry *dir) { }
static inline void sfu_debug_exit(void) { }
#endif

#endif /* _SFU_DEBUG_H */
