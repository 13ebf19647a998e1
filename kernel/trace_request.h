/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred stacks requested by tracing (trace_request.c).
 */
#ifndef _SFU_TRACE_REQUEST_H
#define _SFU_TRACE_REQUEST_H

struct dentry;

void sfu_trace_request_init(struct dentry *dir);
void sfu_trace_request_exit(void);

#endif /* _SFU_TRACE_REQUEST_H */
