/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's memory pool (mem.c): everything the module keeps is
 * counted here, against max_total_bytes.
 */
#ifndef _SFU_MEM_H
#define _SFU_MEM_H

#include <linux/moduleparam.h>
#include <linux/types.h>

extern const struct kernel_param_ops sfu_mem_percent_ops;

long sfu_mem_share(unsigned int percent);
long sfu_mem_share_rest(unsigned int percent);
int sfu_mem_charge(size_t bytes);
int sfu_mem_charge_jit(size_t bytes);
void sfu_mem_count(size_t bytes);
void sfu_mem_uncharge(size_t bytes);
int sfu_mem_charge_cache(size_t bytes);
void sfu_mem_uncharge_cache(size_t bytes);
void *sfu_mem_alloc(size_t bytes);
void sfu_mem_free(void *p, size_t bytes);
long sfu_mem_bytes(void);
long sfu_mem_cache_bytes(void);

#endif /* _SFU_MEM_H */
