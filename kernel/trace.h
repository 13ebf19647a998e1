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

#include <linux/fs.h>
#include <linux/tracepoint.h>

#include "frame_id.h"

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
 * The same walk's frames as file + address (frame_id.c), for naming them
 * after the process is gone: per frame its address in its file and the
 * file's index, per file its build-id, device and inode.  Standard print
 * helpers only, so that trace-cmd prints it as the kernel does.
 */
TRACE_EVENT(sframe_unwind_frames,

	TP_PROTO(u64 cookie, const struct sfu_frames *f),

	TP_ARGS(cookie, f),

	/*
	 * Element types whose sizeof libtraceevent before 1.8.4 can read
	 * (trace-cmd report); byte arrays printed as hexadecimal.
	 */
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(unsigned int, nr)
		__field(unsigned int, nr_files)
		__dynamic_array(unsigned long, addrs, f->nr)
		__dynamic_array(u8, file_of, f->nr)
		__dynamic_array(u8, build_ids,
				f->nr_files * SFRAME_UNWIND_BUILD_ID_MAX)
		__dynamic_array(u8, build_id_lens, f->nr_files)
		__dynamic_array(unsigned int, majors, f->nr_files)
		__dynamic_array(unsigned int, minors, f->nr_files)
		__dynamic_array(unsigned long, inos, f->nr_files)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->nr = f->nr;
		__entry->nr_files = f->nr_files;
		memcpy(__get_dynamic_array(addrs), f->addrs,
		       f->nr * sizeof(*f->addrs));
		memcpy(__get_dynamic_array(file_of), f->file_of, f->nr);
		memcpy(__get_dynamic_array(build_ids), f->build_ids,
		       f->nr_files * SFRAME_UNWIND_BUILD_ID_MAX);
		memcpy(__get_dynamic_array(build_id_lens), f->build_id_lens,
		       f->nr_files);
		memcpy(__get_dynamic_array(majors), f->majors,
		       f->nr_files * sizeof(*f->majors));
		memcpy(__get_dynamic_array(minors), f->minors,
		       f->nr_files * sizeof(*f->minors));
		memcpy(__get_dynamic_array(inos), f->inos,
		       f->nr_files * sizeof(*f->inos));
	),

	TP_printk("cookie=%llu nr=%u addrs=%s file_of=%s build_ids=%s build_id_lens=%s majors=%s minors=%s inos=%s",
		  __entry->cookie, __entry->nr,
		  __print_array(__get_dynamic_array(addrs), __entry->nr,
				sizeof(unsigned long)),
		  __print_hex_str(__get_dynamic_array(file_of), __entry->nr),
		  __print_hex_str(__get_dynamic_array(build_ids),
				  __entry->nr_files *
				  SFRAME_UNWIND_BUILD_ID_MAX),
		  __print_hex_str(__get_dynamic_array(build_id_lens),
				  __entry->nr_files),
		  __print_array(__get_dynamic_array(majors),
				__entry->nr_files, sizeof(unsigned int)),
		  __print_array(__get_dynamic_array(minors),
				__entry->nr_files, sizeof(unsigned int)),
		  __print_array(__get_dynamic_array(inos),
				__entry->nr_files, sizeof(unsigned long)))
);

/*
 * An executable mapping of an ELF file without PT_GNU_SFRAME or sidecar,
 * as registration found it: enough to open the mapped file through
 * /proc/PID/map_files/START-END and to tell files apart.
 */
TRACE_EVENT(sframe_unwind_nosframe,

	TP_PROTO(pid_t pid, unsigned long start, unsigned long end,
		 const struct inode *inode),

	TP_ARGS(pid, start, end, inode),

	/*
	 * Major and minor apart: user-space parsers know no MAJOR().  The
	 * file system's magic tells a daemon whether a server of some user's
	 * answers reads of the file (FUSE), which only the kernel knows for
	 * sure: mountinfo names a device, and devices are reused.
	 */
	TP_STRUCT__entry(
		__field(pid_t, pid)
		__field(unsigned long, start)
		__field(unsigned long, end)
		__field(u32, major)
		__field(u32, minor)
		__field(u64, ino)
		__field(unsigned long, fs)
	),

	TP_fast_assign(
		__entry->pid = pid;
		__entry->start = start;
		__entry->end = end;
		__entry->major = MAJOR(inode->i_sb->s_dev);
		__entry->minor = MINOR(inode->i_sb->s_dev);
		__entry->ino = inode->i_ino;
		__entry->fs = inode->i_sb->s_magic;
	),

	TP_printk("pid=%d start=0x%lx end=0x%lx dev=%u:%u ino=%llu fs=0x%lx",
		  __entry->pid, __entry->start, __entry->end,
		  __entry->major, __entry->minor, __entry->ino, __entry->fs)
);

#endif /* _SFU_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
