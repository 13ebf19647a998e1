/* SPDX-License-Identifier: GPL-2.0 */
/*
 * New children's lookups in their parents' regions (forked.c), until
 * their own registries have them.
 */
#ifndef _SFU_FORKED_H
#define _SFU_FORKED_H

struct mm_struct;
struct sfu_forked;
struct sfu_map;

struct sfu_forked *sfu_forked_add(struct mm_struct *mm, struct sfu_map *snap);
const struct sfu_map *sfu_forked_snapshot(const struct sfu_forked *f);
const struct sfu_map *sfu_forked_find(struct mm_struct *mm);
void sfu_forked_del(struct sfu_forked *f);

#endif /* _SFU_FORKED_H */
