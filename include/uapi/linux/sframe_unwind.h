/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * sframe_unwind: the user-space interface of the SFrame unwinder module.
 *
 * The module registers the .sframe sections of mapped ELF files by itself.
 * This device is for what it cannot find on its own:
 *
 *   SFRAME_UNWIND_IOC_ADD       register a section in the caller's memory
 *                               for a text range of the caller (JITs)
 *   SFRAME_UNWIND_IOC_DEL       drop such a registration
 *   SFRAME_UNWIND_IOC_ADD_FILE  register a section for every mapping of a
 *                               file that has no .sframe of its own
 *                               (CAP_SYS_ADMIN or CAP_PERFMON)
 *   SFRAME_UNWIND_IOC_DEL_FILE  drop such a registration
 *   SFRAME_UNWIND_IOC_QUERY     list what is registered for a process
 *   SFRAME_UNWIND_IOC_LIST_FILES  list the sidecars (privileged)
 *
 * Commands are matched by type and number only: every argument struct
 * starts with its own size, which says which version of it the caller
 * passes.  A size below the first version's is refused with EINVAL; later
 * versions (larger structs) are accepted as long as the bytes the kernel
 * does not know are zero (E2BIG otherwise), and a kernel newer than the
 * caller treats the fields the caller's version lacks as zero.  Unknown
 * flags and nonzero reserved fields are refused with EINVAL.
 */
#ifndef _UAPI_LINUX_SFRAME_UNWIND_H
#define _UAPI_LINUX_SFRAME_UNWIND_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SFRAME_UNWIND_DEVICE		"/dev/sframe_unwind"

/* Where a registered section came from (sframe_unwind_entry.source). */
#define SFRAME_UNWIND_SRC_ELF		1	/* PT_GNU_SFRAME of the file */
#define SFRAME_UNWIND_SRC_SIDECAR	2	/* SFRAME_UNWIND_IOC_ADD_FILE */
#define SFRAME_UNWIND_SRC_JIT		3	/* SFRAME_UNWIND_IOC_ADD */

/* sframe_unwind_region.flags, sframe_unwind_file.flags */
#define SFRAME_UNWIND_REPLACE		(1U << 0)	/* grow or shrink */
/* sframe_unwind_file.flags, DEL_FILE only: by build-id, not by fd */
#define SFRAME_UNWIND_BY_BUILD_ID	(1U << 1)
/*
 * sframe_unwind_file.flags, ADD_FILE only: no section can be made for the
 * file; tasks waiting at its first mapping go on, and later mappings do
 * not wait for it (struct sframe_unwind_listen).  The section fields must
 * be zero.
 */
#define SFRAME_UNWIND_NO_SECTION	(1U << 2)

/**
 * struct sframe_unwind_region - a section for a text range of the caller
 * @size: sizeof(struct sframe_unwind_region)
 * @flags: SFRAME_UNWIND_REPLACE: replace the JIT registration that starts
 *	at @text_start (the section may have grown, shrunk or moved);
 *	without it, a range that overlaps any registration is refused
 * @pid: 0 or the caller's own process id; other processes are refused
 * @reserved: must be zero
 * @text_start: first address of the code the section describes
 * @text_end: one past the last address
 * @sframe_start: the section's address in the caller's memory; it must
 *	stay there, readable, while registered: unwinding reads it
 * @sframe_len: the section's length in bytes
 *
 * SFRAME_UNWIND_IOC_DEL takes the same struct: @text_start names the
 * registration, @flags and @reserved must be zero, the rest is ignored.
 * FDEs may be unsorted; function start addresses are those the section
 * encodes for @sframe_start (V1 and V2 encode them as 32-bit offsets, so
 * the section must then lie within 2 GiB of the code; V3 has no such
 * limit), and all of them must lie in [@text_start, @text_end).
 */
struct sframe_unwind_region {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 reserved;
	__u64 text_start;
	__u64 text_end;
	__u64 sframe_start;
	__u64 sframe_len;
};

#define SFRAME_UNWIND_BUILD_ID_MAX	20

/**
 * struct sframe_unwind_file - a generated section for an ELF file
 * @size: sizeof(struct sframe_unwind_file)
 * @flags: 0, or SFRAME_UNWIND_REPLACE to replace the file's registration
 * @fd: a regular ELF file open for reading; the registration is keyed by its
 *	device and inode and checked against its build-id
 * @build_id_len: 0, or the length of @build_id, which must then equal the
 *	file's NT_GNU_BUILD_ID note
 * @build_id: expected build-id
 * @reserved: must be zero
 * @sframe_vaddr: the link-time address the section was encoded for (the
 *	address it would have had in the file); it moves with the file's
 *	load bias in every process
 * @sframe_ptr: the section's bytes in the caller's memory; the module
 *	keeps a copy
 * @sframe_len: the section's length in bytes
 *
 * SFRAME_UNWIND_IOC_DEL_FILE takes the same struct: @fd names the file,
 * @flags, @reserved and @build_id_len must be valid as for ADD_FILE.
 * With SFRAME_UNWIND_BY_BUILD_ID, @fd is ignored and every sidecar whose
 * file had @build_id (@build_id_len > 0) is dropped: the way to drop the
 * sidecar of a file that was deleted or renamed over.
 * A registration applies to the file's mappings in every process, those
 * made after it and those that exist when it is made (ADD_FILE returns
 * once they are registered), while the file has no PT_GNU_SFRAME of its
 * own.  With SFRAME_UNWIND_REPLACE, mappings registered before keep the
 * section they had until they go.
 */
struct sframe_unwind_file {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 build_id_len;
	__u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	__u32 reserved;
	__u64 sframe_vaddr;
	__u64 sframe_ptr;
	__u64 sframe_len;
};

/**
 * struct sframe_unwind_entry - one registered section, as QUERY reports it
 * @text_start: text range the section describes
 * @text_end: one past its end
 * @sframe_start: the section's address in the process (for sidecar
 *	sections, where it would be; the bytes are kept by the module)
 * @sframe_len: the section's length
 * @dev: device of the mapped file (new_encode_dev()), 0 for JIT
 * @ino: inode number of the mapped file, 0 for JIT
 * @nr_fdes: function descriptors in the section
 * @version: SFrame version (1, 2 or 3)
 * @abi: SFrame ABI/arch id
 * @source: SFRAME_UNWIND_SRC_*
 * @reserved: zero
 */
struct sframe_unwind_entry {
	__u64 text_start;
	__u64 text_end;
	__u64 sframe_start;
	__u64 sframe_len;
	__u64 dev;
	__u64 ino;
	__u32 nr_fdes;
	__u8 version;
	__u8 abi;
	__u8 source;
	__u8 reserved;
};

/**
 * struct sframe_unwind_query - list a process's registered sections
 * @size: sizeof(struct sframe_unwind_query)
 * @flags: must be zero
 * @pid: the process (0: the caller); for another process the caller
 *	needs CAP_PERFMON, CAP_SYS_ADMIN or CAP_SYS_PTRACE in the user
 *	namespace of that process's credentials
 * @count: in: room in @entries; out: number of registered sections,
 *	which may exceed the room (then only the first ones are copied)
 * @entries: user pointer to an array of struct sframe_unwind_entry,
 *	sorted by text address
 */
struct sframe_unwind_query {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 count;
	__u64 entries;
};

/**
 * struct sframe_unwind_sidecar - one sidecar, as LIST_FILES reports it
 * @dev: device of the file (new_encode_dev())
 * @ino: its inode number
 * @sframe_len: bytes of the section the module keeps for it
 * @build_id_len: 0 (the file had none), or the length of @build_id
 * @build_id: the file's build-id at registration
 * @reserved: zero
 * SFRAME_UNWIND_IOC_LIST_FILES takes struct sframe_unwind_query: @pid and
 * @flags must be 0, @entries points to an array of these, @count as for
 * QUERY.  CAP_SYS_ADMIN or CAP_PERFMON.
 */
struct sframe_unwind_sidecar {
	__u64 dev;
	__u64 ino;
	__u64 sframe_len;
	__u32 build_id_len;
	__u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	__u32 reserved[2];
};

/**
 * struct sframe_unwind_listen - a daemon answers the nosframe event
 * @size: sizeof(struct sframe_unwind_listen)
 * @flags: must be zero
 * @lease_ms: for how long from now (at most 60000); 0 ends the lease
 * @reserved: must be zero
 *
 * While a lease runs and the trace event sframe_unwind_nosframe is on, a
 * task that maps an executable file with neither SFrame nor a sidecar
 * waits on its way back to user space until the file's sidecar comes
 * (ADD_FILE), the daemon gives up on it (ADD_FILE with
 * SFRAME_UNWIND_NO_SECTION), or the module parameter first_map_wait_ms
 * has passed.  A daemon renews its lease well before it ends, so that
 * one that dies holds no task for long.
 */
struct sframe_unwind_listen {
	__u32 size;
	__u32 flags;
	__u32 lease_ms;
	__u32 reserved;
};

/*
 * The trace event sframe_unwind_frames gives per frame its address in its
 * file (the pc less the mapping's load bias: what symbol tables, DWARF and
 * addr2line use) and, in file_of, the index of the file in the arrays
 * build_ids (SFRAME_UNWIND_BUILD_ID_MAX bytes each, build_id_lens of them
 * used; 0 where the file has none), majors, minors and inos; or this for
 * a frame in no file (anonymous memory, the vDSO), whose address is its pc.
 */
#define SFRAME_UNWIND_FRAME_NO_FILE	0xff

#define SFRAME_UNWIND_IOC_MAGIC		0xb6

#define SFRAME_UNWIND_IOC_ADD		_IOW(SFRAME_UNWIND_IOC_MAGIC, 1, \
					     struct sframe_unwind_region)
#define SFRAME_UNWIND_IOC_DEL		_IOW(SFRAME_UNWIND_IOC_MAGIC, 2, \
					     struct sframe_unwind_region)
#define SFRAME_UNWIND_IOC_ADD_FILE	_IOW(SFRAME_UNWIND_IOC_MAGIC, 3, \
					     struct sframe_unwind_file)
#define SFRAME_UNWIND_IOC_DEL_FILE	_IOW(SFRAME_UNWIND_IOC_MAGIC, 4, \
					     struct sframe_unwind_file)
#define SFRAME_UNWIND_IOC_QUERY		_IOWR(SFRAME_UNWIND_IOC_MAGIC, 5, \
					      struct sframe_unwind_query)
#define SFRAME_UNWIND_IOC_LIST_FILES	_IOWR(SFRAME_UNWIND_IOC_MAGIC, 6, \
					      struct sframe_unwind_query)
#define SFRAME_UNWIND_IOC_LISTEN	_IOW(SFRAME_UNWIND_IOC_MAGIC, 7, \
					     struct sframe_unwind_listen)

#endif /* _UAPI_LINUX_SFRAME_UNWIND_H */
