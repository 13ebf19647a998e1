/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of sframe_unwind: a deferred request, and the user stack
 * its walk found, tied together by the cookie.  A trace consumer can so
 * attach a complete user stack to whatever kernel event the request was
 * made at.  And an executable ELF mapping that has no SFrame: the event
 * sframectl's daemon follows to make a sidecar for the file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sframe_unwind

#if !defined(_SFU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SFU_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(sframe_unwind_request,

	TP_PROTO(u64 cookie, int consumer),

	TP_ARGS(cookie, consumer),

	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(int, consumer)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->consumer = consumer;
	),

	TP_printk("cookie=%llu consumer=%d", __entry->cookie,
		  __entry->consumer)
);

TRACE_EVENT(sframe_unwind_stack,

	TP_PROTO(u64 cookie, const unsigned long *pcs, unsigned int nr,
		 u8 stop),

	TP_ARGS(cookie, pcs, nr, stop),

	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(unsigned int, nr)
		__field(u8, stop)
		__dynamic_array(unsigned long, pcs, nr)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->nr = nr;
		__entry->stop = stop;
		memcpy(__get_dynamic_array(pcs), pcs,
		       nr * sizeof(unsigned long));
	),

	TP_printk("cookie=%llu nr=%u stop=%u pcs=%s", __entry->cookie,
		  __entry->nr, __entry->stop,
		  __print_array(__get_dynamic_array(pcs), __entry->nr,
				sizeof(unsigned long)))
);

/*
 * An executable mapping of an ELF file without PT_GNU_SFRAME or sidecar,
 * as registration found it: enough to open the mapped file through
 * /proc/PID/map_files/START-END and to tell files apart.
 */
TRACE_EVENT(sframe_unwind_nosframe,

	TP_PROTO(pid_t pid, unsigned long start, unsigned long end,
		 dev_t dev, u64 ino),

	TP_ARGS(pid, start, end, dev, ino),

	/* Major and minor apart: user-space parsers know no MAJOR(). */
	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(unsigned long, start)
		__field(unsigned long, end)
		__field(u32, major)
		__field(u32, minor)
		__field(u64, ino)
	),

	TP_fast_assign(
		__entry->pid = pid;
		__entry->start = start;
		__entry->end = end;
		__entry->major = MAJOR(dev);
		__entry->minor = MINOR(dev);
		__entry->ino = ino;
	),

	TP_printk("pid=%d start=0x%lx end=0x%lx dev=%u:%u ino=%llu",
		  __entry->pid, __entry->start, __entry->end,
		  __entry->major, __entry->minor, __entry->ino)
);

#endif /* _SFU_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
