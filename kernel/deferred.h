/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's own deferred unwinding (deferred.c), for kernels whose
 * deferred-unwind core is missing or not exported.
 */
#ifndef _SFU_DEFERRED_H
#define _SFU_DEFERRED_H

int sfu_deferred_setup(void);
void sfu_deferred_stop(void);
void sfu_deferred_teardown(void);

#endif /* _SFU_DEFERRED_H */
