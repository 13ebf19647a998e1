/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's debugfs directory, /sys/kernel/debug/sframe_unwind/
 * (debugfs.c), and the PC lists and result lines its files share with
 * the debug build's decoder files (debug.c).
 */
#ifndef _SFU_DEBUGFS_H
#define _SFU_DEBUGFS_H

#include <linux/types.h>

struct sfu_rule;

#define SFU_DBG_MAX_PCS		1024
#define SFU_DBG_MAX_INPUT	(SFU_DBG_MAX_PCS * 20)
#define SFU_DBG_LINE		256

int sfu_pcs_parse(const char __user *ubuf, size_t count, u64 **pcs,
		  unsigned int *nr);
int sfu_rule_line(char *buf, size_t size, u64 pc, int err,
		  const struct sfu_rule *rule, u8 abi);
void sfu_debugfs_init(void);
void sfu_debugfs_exit(void);

#endif /* _SFU_DEBUGFS_H */
