// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/sframe_unwind: registration ioctls (include/uapi/linux/sframe_unwind.h).
 *
 * Commands are matched by type and number only; the struct's own size
 * field says which version of it the caller passes, and
 * copy_struct_from_user() zero-extends older structs and refuses newer
 * ones that set fields this module does not know.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/user_namespace.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "chardev.h"
#include "compat.h"
#include "quota.h"
#include "registry.h"
#include "scan.h"
#include "sidecar.h"
#include "sidecar_wait.h"

/* Versions of the argument structs this module knows: the first. */
#define SFU_REGION_SIZE_VER0	sizeof(struct sframe_unwind_region)
#define SFU_FILE_SIZE_VER0	sizeof(struct sframe_unwind_file)
#define SFU_QUERY_SIZE_VER0	sizeof(struct sframe_unwind_query)
#define SFU_LISTEN_SIZE_VER0	sizeof(struct sframe_unwind_listen)
#define SFU_FILE_FLAGS		(SFRAME_UNWIND_REPLACE | \
				 SFRAME_UNWIND_BY_BUILD_ID | \
				 SFRAME_UNWIND_NO_SECTION)
/* Most sidecars one LIST_FILES copies (the kernel buffer is this big). */
#define SFU_LIST_FILES_MAX	65536
/* Room for the size field itself. */
#define SFU_SIZE_MIN		sizeof(__u32)
/* Largest argument accepted, whatever its version. */
#define SFU_ARG_MAX		PAGE_SIZE

/* Copy an argument struct that starts with its size. */
static int sfu_get_arg(void *dst, size_t ksize, size_t min,
		       const void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < min || usize > SFU_ARG_MAX)
		return -EINVAL;
	return copy_struct_from_user(dst, ksize, uarg, usize);
}

static bool sfu_user_range_ok(u64 start, u64 len)
{
	return len && start < TASK_SIZE && len <= TASK_SIZE - start;
}

/* Copy a region argument; it must name the caller's own process. */
static int sfu_get_region_arg(struct sframe_unwind_region *a,
			      const void __user *uarg)
{
	int ret = sfu_get_arg(a, sizeof(*a), SFU_REGION_SIZE_VER0, uarg);

	if (ret)
		return ret;
	if (a->pid && a->pid != task_tgid_vnr(current))
		return -EPERM;
	return current->mm ? 0 : -ESRCH;
}

/* The functions of @sec lie in @a's text (text_hi may wrap to 0). */
static bool sfu_jit_text_within(const struct sfu_section *sec,
				const struct sframe_unwind_region *a)
{
	return sec->text_lo >= a->text_start &&
	       sec->text_hi - 1 < a->text_end;
}

/*
 * A JIT region for @a (checked) from @bytes, the caller's section copied,
 * with everything it holds charged to @u.
 */
static struct sfu_region *sfu_jit_region(const struct sframe_unwind_region *a,
					 const void *bytes, struct sfu_user *u)
{
	struct sfu_region *r;
	int ret;

	r = sfu_region_alloc_jit(u);
	if (IS_ERR(r))
		return r;
	r->start = a->text_start;
	r->end = a->text_end;
	r->source = SFRAME_UNWIND_SRC_JIT;
	/* A JIT may rewrite its section: no table, rows read where they are. */
	ret = sfu_region_init_section(r, bytes, a->sframe_len, a->sframe_start,
				      SFU_SEC_USER);
	if (!ret && r->sec->nr_fdes && !sfu_jit_text_within(r->sec, a))
		ret = -EINVAL;
	if (ret) {
		sfu_region_put(r);
		return ERR_PTR(ret);
	}
	return r;
}

/* Check, copy and register the JIT section @a, at the cost of @u. */
static int sfu_jit_add(const struct sframe_unwind_region *a,
		       struct sfu_user *u)
{
	struct sfu_region *r;
	struct sfu_mm *smm;
	void *bytes;
	int ret;

	/* The copy is checked and indexed, then freed: counted meanwhile. */
	ret = sfu_user_charge(u, a->sframe_len);
	if (ret)
		return ret;
	bytes = kvmalloc(a->sframe_len, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!bytes) {
		ret = -ENOMEM;
		goto uncharge;
	}
	if (copy_from_user(bytes, u64_to_user_ptr(a->sframe_start),
			   a->sframe_len)) {
		ret = -EFAULT;
		goto free_bytes;
	}
	r = sfu_jit_region(a, bytes, u);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		goto free_bytes;
	}
	smm = sfu_mm_get(current->mm, current);
	if (IS_ERR(smm)) {
		ret = PTR_ERR(smm);
		goto put_region;
	}
	ret = sfu_mm_insert(smm, r, (a->flags & SFRAME_UNWIND_REPLACE) ?
			    SFU_OVERLAP_JIT_SAME_START : SFU_OVERLAP_REFUSE,
			    GFP_KERNEL_ACCOUNT);
	if (!ret)
		r = NULL;
put_region:
	sfu_region_put(r);
free_bytes:
	kvfree(bytes);
uncharge:
	sfu_user_uncharge(u, a->sframe_len);
	return ret;
}

static long sfu_ioc_add(const void __user *uarg)
{
	struct sframe_unwind_region a;
	struct sfu_user *u;
	int ret;

	ret = sfu_get_region_arg(&a, uarg);
	if (ret)
		return ret;
	if ((a.flags & ~SFRAME_UNWIND_REPLACE) || a.reserved ||
	    a.text_start >= a.text_end ||
	    !sfu_user_range_ok(a.text_start, a.text_end - a.text_start) ||
	    !sfu_user_range_ok(a.sframe_start, a.sframe_len))
		return -EINVAL;
	if (sfu_section_too_big(a.sframe_len))
		return -EFBIG;
	u = sfu_user_get();
	if (!u)
		return -ENOMEM;
	ret = sfu_jit_add(&a, u);
	sfu_user_put(u);
	return ret;
}

static long sfu_ioc_del(const void __user *uarg)
{
	struct sframe_unwind_region a;
	struct sfu_mm *smm;
	int ret;

	ret = sfu_get_region_arg(&a, uarg);
	if (ret)
		return ret;
	if (a.flags || a.reserved)
		return -EINVAL;
	rcu_read_lock();
	smm = sfu_mm_find(current->mm);
	rcu_read_unlock();
	/* Our own mm has users (us), so its registry stays. */
	return smm ? sfu_mm_remove_jit(smm, a.text_start) : -ENOENT;
}

/* Sidecars apply to every process: CAP_SYS_ADMIN or CAP_PERFMON. */
static bool sfu_may_manage_files(void)
{
	return capable(CAP_SYS_ADMIN) || perfmon_capable();
}

/*
 * ADD_FILE: the sidecar goes into the store, then the mappings of the file
 * that exist already, in every process, get it too.
 */
static int sfu_sidecar_add_scan(struct file *file,
				const struct sframe_unwind_file *a)
{
	int ret;

	ret = sfu_sidecar_add(file, a, u64_to_user_ptr(a->sframe_ptr));
	if (!ret) {
		sfu_first_map_added(file);
		sfu_scan_file(file_inode(file));
	}
	return ret;
}

/* ADD_FILE with SFRAME_UNWIND_NO_SECTION: the daemon gives up on it. */
static int sfu_no_section(struct file *file,
			  const struct sframe_unwind_file *a)
{
	if (a->flags != SFRAME_UNWIND_NO_SECTION || a->sframe_ptr ||
	    a->sframe_len || a->sframe_vaddr || a->build_id_len)
		return -EINVAL;
	sfu_first_map_failed(file);
	return 0;
}

static long sfu_ioc_file(const void __user *uarg, bool add)
{
	struct sframe_unwind_file a;
	struct file *file;
	int ret;

	if (!sfu_may_manage_files())
		return -EPERM;
	ret = sfu_get_arg(&a, sizeof(a), SFU_FILE_SIZE_VER0, uarg);
	if (ret)
		return ret;
	if ((a.flags & ~SFU_FILE_FLAGS) || a.reserved ||
	    a.build_id_len > SFRAME_UNWIND_BUILD_ID_MAX)
		return -EINVAL;
	if (a.flags & SFRAME_UNWIND_NO_SECTION) {
		if (!add)
			return -EINVAL;
	} else if (add && !sfu_user_range_ok(a.sframe_ptr, a.sframe_len)) {
		return -EINVAL;
	}
	if (a.flags & SFRAME_UNWIND_BY_BUILD_ID) {
		if (add || !a.build_id_len)
			return -EINVAL;
		return sfu_sidecar_del_build_id(a.build_id, a.build_id_len);
	}
	file = fget(a.fd);
	if (!file)
		return -EBADF;
	if (!(file->f_mode & FMODE_READ) ||
	    !S_ISREG(file_inode(file)->i_mode))
		ret = -EBADF;
	else if (add && (a.flags & SFRAME_UNWIND_NO_SECTION))
		ret = sfu_no_section(file, &a);
	else if (add)
		ret = sfu_sidecar_add_scan(file, &a);
	else
		ret = sfu_sidecar_del(file);
	fput(file);
	return ret;
}

/* LISTEN: a daemon answers the nosframe event (sidecar_wait.c). */
static long sfu_ioc_listen(const void __user *uarg)
{
	struct sframe_unwind_listen a;
	int ret;

	if (!sfu_may_manage_files())
		return -EPERM;
	ret = sfu_get_arg(&a, sizeof(a), SFU_LISTEN_SIZE_VER0, uarg);
	if (ret)
		return ret;
	if (a.flags || a.reserved)
		return -EINVAL;
	return sfu_first_map_listen(a.lease_ms);
}

/* LIST_FILES: the sidecars, copied through a kernel buffer. */
static long sfu_ioc_list_files(void __user *uarg)
{
	struct sframe_unwind_sidecar *buf = NULL;
	struct sframe_unwind_query q;
	u32 room, n;
	int ret;

	if (!sfu_may_manage_files())
		return -EPERM;
	ret = sfu_get_arg(&q, sizeof(q), SFU_QUERY_SIZE_VER0, uarg);
	if (ret)
		return ret;
	if (q.flags || q.pid)
		return -EINVAL;
	room = min_t(u32, q.count, SFU_LIST_FILES_MAX);
	if (room) {
		buf = kvcalloc(room, sizeof(*buf), GFP_KERNEL | __GFP_NOWARN);
		if (!buf)
			return -ENOMEM;
	}
	n = sfu_sidecar_list(buf, room);
	if (copy_to_user(u64_to_user_ptr(q.entries), buf,
			 (size_t)min(n, room) * sizeof(*buf)))
		ret = -EFAULT;
	kvfree(buf);
	if (!ret && put_user(n, &((struct sframe_unwind_query __user *)uarg)->count))
		ret = -EFAULT;
	return ret;
}

/*
 * May the caller see the registrations (an address-space layout) of
 * @task, whose address space is @mm?  Its own; any with CAP_PERFMON or
 * CAP_SYS_ADMIN (perfmon_capable(), as perf_event_open() lets them watch
 * any task); else what ptrace's read check (ptrace_may_access() with
 * PTRACE_MODE_READ_FSCREDS) grants through capabilities: CAP_SYS_PTRACE
 * in the user namespace of @task's credentials and, if @task is not
 * dumpable, in the namespace its dumps belong to.  Not ptrace's
 * same-user rule: ptrace_may_access() is not exported, and without its
 * LSM hook that rule would bypass the LSMs.
 */
static bool sfu_may_query(struct task_struct *task, struct mm_struct *mm)
{
	struct user_namespace *ns;
	bool ok;

	if (same_thread_group(task, current) || perfmon_capable())
		return true;
	rcu_read_lock();
	ok = ns_capable(__task_cred(task)->user_ns, CAP_SYS_PTRACE);
	if (ok && !sfu_task_dumpable(task, mm, &ns))
		ok = ns_capable(ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	return ok;
}

static void sfu_fill_entry(struct sframe_unwind_entry *e,
			   const struct sfu_region *r)
{
	memset(e, 0, sizeof(*e));
	e->text_start = r->start;
	e->text_end = r->end;
	e->sframe_start = sfu_region_sframe(r);
	e->sframe_len = r->sec->size;
	e->dev = r->file ? new_encode_dev(r->dev) : 0;
	e->ino = r->file ? r->ino : 0;
	e->nr_fdes = r->sec->nr_fdes;
	e->version = r->version;
	e->abi = r->sec->abi;
	e->source = r->source;
}

static int sfu_query_copy(struct sfu_map *snap, struct sframe_unwind_query *q)
{
	struct sframe_unwind_entry __user *out = u64_to_user_ptr(q->entries);
	struct sframe_unwind_entry e;
	unsigned int i;

	for (i = 0; snap && i < snap->nr && i < q->count; i++) {
		sfu_fill_entry(&e, snap->regions[i]);
		if (copy_to_user(&out[i], &e, sizeof(e)))
			return -EFAULT;
	}
	q->count = snap ? snap->nr : 0;
	return 0;
}

static long sfu_ioc_query(void __user *uarg)
{
	struct sframe_unwind_query q;
	struct task_struct *task;
	struct sfu_map *snap = NULL;
	struct mm_struct *mm;
	struct sfu_mm *smm;
	int ret;

	ret = sfu_get_arg(&q, sizeof(q), SFU_QUERY_SIZE_VER0, uarg);
	if (ret)
		return ret;
	if (q.flags)
		return -EINVAL;
	if (q.pid < 0)
		return -ESRCH;
	if (q.pid) {
		struct pid *pid = find_get_pid(q.pid);

		task = get_pid_task(pid, PIDTYPE_TGID);
		put_pid(pid);
	} else {
		task = get_task_struct(current->group_leader);
	}
	if (!task)
		return -ESRCH;
	/* Without an address space (a zombie) nothing is registered. */
	mm = get_task_mm(task);
	if (mm && !sfu_may_query(task, mm)) {
		ret = -EACCES;
		goto put_mm;
	}
	rcu_read_lock();
	smm = mm ? sfu_mm_find(mm) : NULL;
	if (smm)
		snap = sfu_mm_snapshot(smm);
	rcu_read_unlock();
	if (IS_ERR(snap)) {
		ret = PTR_ERR(snap);
		goto put_mm;
	}
	ret = sfu_query_copy(snap, &q);
	sfu_map_release(snap);
	if (!ret && put_user(q.count,
			     &((struct sframe_unwind_query __user *)uarg)->count))
		ret = -EFAULT;
put_mm:
	if (mm)
		mmput(mm);
	put_task_struct(task);
	return ret;
}

static long sfu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != SFRAME_UNWIND_IOC_MAGIC)
		return -ENOTTY;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(SFRAME_UNWIND_IOC_ADD):
		return sfu_ioc_add(uarg);
	case _IOC_NR(SFRAME_UNWIND_IOC_DEL):
		return sfu_ioc_del(uarg);
	case _IOC_NR(SFRAME_UNWIND_IOC_ADD_FILE):
		return sfu_ioc_file(uarg, true);
	case _IOC_NR(SFRAME_UNWIND_IOC_DEL_FILE):
		return sfu_ioc_file(uarg, false);
	case _IOC_NR(SFRAME_UNWIND_IOC_QUERY):
		return sfu_ioc_query(uarg);
	case _IOC_NR(SFRAME_UNWIND_IOC_LIST_FILES):
		return sfu_ioc_list_files(uarg);
	case _IOC_NR(SFRAME_UNWIND_IOC_LISTEN):
		return sfu_ioc_listen(uarg);
	}
	return -ENOTTY;
}

static const struct file_operations sfu_chardev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = sfu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice sfu_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "sframe_unwind",
	.fops = &sfu_chardev_fops,
	.mode = 0666,
};

int sfu_chardev_init(void)
{
	return misc_register(&sfu_miscdev);
}

void sfu_chardev_exit(void)
{
	misc_deregister(&sfu_miscdev);
}
