/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each user's share of the memory pool: JIT sections, and the indexes and
 * sidecars of the files it owns (quota.c).
 */
#ifndef _SFU_QUOTA_H
#define _SFU_QUOTA_H

#include <linux/types.h>

struct inode;
struct sfu_user;

struct sfu_user *sfu_user_get(void);
struct sfu_user *sfu_user_hold(struct sfu_user *u);
void sfu_user_put(struct sfu_user *u);
int sfu_user_charge(struct sfu_user *u, size_t bytes);
void sfu_user_uncharge(struct sfu_user *u, size_t bytes);
struct sfu_user *sfu_file_user(const struct inode *inode);
int sfu_user_charge_file(struct sfu_user *u, size_t bytes);
void sfu_user_uncharge_file(struct sfu_user *u, size_t bytes);
int sfu_file_charge(struct sfu_user *u, size_t bytes);
void sfu_file_uncharge(struct sfu_user *u, size_t bytes);

#endif /* _SFU_QUOTA_H */
