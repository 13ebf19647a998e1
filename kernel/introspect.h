/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the registry and the decoder say, shown in debugfs
 * (introspect.c), and the PC lists its files read.
 */
#ifndef _SFU_INTROSPECT_H
#define _SFU_INTROSPECT_H

#include <linux/types.h>

struct dentry;
struct sfu_rule;

#define SFU_DBG_MAX_PCS		1024
#define SFU_DBG_MAX_INPUT	(SFU_DBG_MAX_PCS * 20)
#define SFU_DBG_LINE		256

int sfu_pcs_parse(const char __user *ubuf, size_t count, u64 **pcs,
		  unsigned int *nr);
int sfu_rule_line(char *buf, size_t size, u64 pc, int err,
		  const struct sfu_rule *rule, u8 abi);
void sfu_introspect_init(struct dentry *dir);

#endif /* _SFU_INTROSPECT_H */
