// SPDX-License-Identifier: GPL-2.0
/*
 * Test and debug interfaces, built only with CONFIG_SFRAME_UNWIND_DEBUG:
 * the decoder's debugfs files, here, and the test hook of testhook.c
 * (only with the module parameter test_hooks=1), in the directory that
 * debugfs.c makes.
 *
 * The decoder's files let user space
 * (the selftests) run the in-kernel decoder on a section of its choice and
 * compare the answers with the host build of the same decoder.  Files:
 *
 *   section  (write)  The raw bytes of an .sframe section.  A write at
 *                     offset 0 (or an open with O_TRUNC) starts a new blob,
 *                     later writes must append; at most 16 MiB.  So
 *                     "cat x.sframe > section" loads a section.
 *   vaddr    (rw)     Address of the section's first byte in the target's
 *                     address space (hex with 0x, or decimal).  Default 0.
 *   abi      (rw)     SFrame ABI id the section must have (1 aarch64-be,
 *                     2 aarch64, 3 amd64, 4 s390x), or 0 for any.
 *                     Default 0.
 *   decode   (rw)     Write one or more PCs in hex ("0x" optional),
 *                     separated by white space, at most 1024 per write.
 *                     The write checks the section with sfu_section_init()
 *                     using the current vaddr and abi, looks up every PC
 *                     and keeps one result line per PC, in order, which
 *                     reads of the file return until the next write.  The
 *                     write resets the file position, so write-then-read
 *                     works on one descriptor as on two.
 *   status   (read)   One line describing the loaded section:
 *                       size=N vaddr=0x.. abi=N init=E [elems=N fdes=N
 *                       text=0x..-0x.. validate=E] [what="..." off=0x..]
 *                     where E is 0 or a negative errno; elems/fdes/text
 *                     are printed when init succeeded, validate is the
 *                     result of sfu_section_validate(), what/off is the
 *                     decoder's diagnosis of the first failure.
 *
 * A result line is the one "sframe-dump --pc" prints for the same PC:
 *
 *   0x<pc>: <rule as sfu_rule_format() writes it>
 *   0x<pc>: error: <sfu_strerror() text>
 *
 * e.g. "0x1146: cfa=sp+16 ra=*(cfa-8) fp=*(cfa-16)", so the two decoders
 * can be compared line by line.  The status file gives the decoder's
 * diagnosis when the section itself is refused.
 *
 * All state is global (it is a debugging aid) and guarded by sfu_dbg.lock;
 * vaddr and abi are read once per request under that lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <sframe/decode.h>

#include "debug.h"
#include "debugfs.h"
#include "testhook.h"

#define SFU_DBG_MAX_SECTION	(16UL << 20)
#define SFU_DBG_MIN_ALLOC	(64UL << 10)

static struct {
	struct mutex lock;	/* guards everything below */
	u8 *blob;		/* the section bytes, kvmalloc()ed */
	size_t len;
	size_t cap;
	u64 vaddr;
	u8 abi;
	char *out;		/* result lines of the last decode write */
	size_t out_len;
} sfu_dbg = {
	.lock = __MUTEX_INITIALIZER(sfu_dbg.lock),
};

/* Callers hold sfu_dbg.lock. */
static void sfu_dbg_reset_blob(void)
{
	kvfree(sfu_dbg.blob);
	sfu_dbg.blob = NULL;
	sfu_dbg.len = 0;
	sfu_dbg.cap = 0;
}

/* Make room for @need bytes in the blob.  Callers hold sfu_dbg.lock. */
static int sfu_dbg_reserve(size_t need)
{
	size_t cap = max_t(size_t, sfu_dbg.cap, SFU_DBG_MIN_ALLOC);
	u8 *blob;

	if (need <= sfu_dbg.cap)
		return 0;
	while (cap < need)
		cap *= 2;
	cap = min_t(size_t, cap, SFU_DBG_MAX_SECTION);
	blob = kvmalloc(cap, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!blob)
		return -ENOMEM;
	if (sfu_dbg.len)
		memcpy(blob, sfu_dbg.blob, sfu_dbg.len);
	kvfree(sfu_dbg.blob);
	sfu_dbg.blob = blob;
	sfu_dbg.cap = cap;
	return 0;
}

static int sfu_dbg_section_open(struct inode *inode, struct file *file)
{
	if ((file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC)) {
		mutex_lock(&sfu_dbg.lock);
		sfu_dbg_reset_blob();
		mutex_unlock(&sfu_dbg.lock);
	}
	return nonseekable_open(inode, file);
}

static ssize_t sfu_dbg_section_write(struct file *file,
				     const char __user *ubuf, size_t count,
				     loff_t *ppos)
{
	loff_t pos = *ppos;
	ssize_t ret;

	if (pos < 0 || count > SFU_DBG_MAX_SECTION ||
	    pos > SFU_DBG_MAX_SECTION - count)
		return -EFBIG;
	mutex_lock(&sfu_dbg.lock);
	if (!pos)
		sfu_dbg_reset_blob();
	if (pos != sfu_dbg.len) {
		ret = -EINVAL;	/* only sequential appends */
		goto unlock;
	}
	ret = sfu_dbg_reserve(pos + count);
	if (ret)
		goto unlock;
	if (copy_from_user(sfu_dbg.blob + pos, ubuf, count)) {
		ret = -EFAULT;
		goto unlock;
	}
	sfu_dbg.len = pos + count;
	*ppos = pos + count;
	ret = count;
unlock:
	mutex_unlock(&sfu_dbg.lock);
	return ret;
}

static const struct file_operations sfu_dbg_section_fops = {
	.owner = THIS_MODULE,
	.open = sfu_dbg_section_open,
	.write = sfu_dbg_section_write,
};

/* Set up @sec over the blob.  Callers hold sfu_dbg.lock. */
static int sfu_dbg_section(struct sfu_section *sec)
{
	return sfu_section_init(sec, (unsigned long)sfu_dbg.blob, sfu_dbg.len,
				sfu_dbg.vaddr, SFU_MEM_KERNEL, sfu_dbg.abi);
}

static int sfu_dbg_diag(char *buf, size_t size, int err,
			const struct sfu_section *sec)
{
	if (err != -EBADMSG || !sec->diag.what)
		return 0;
	return scnprintf(buf, size, " what=\"%s\" off=0x%llx",
			 sec->diag.what, sec->diag.off);
}

/* Append the result line of @pc to @buf; @init is sfu_section_init()'s. */
static int sfu_dbg_lookup(char *buf, size_t size, struct sfu_section *sec,
			  int init, u64 pc)
{
	struct sfu_rule rule;
	int err = init;

	if (!err)
		err = sfu_find_rule(sec, pc, &rule);
	return sfu_rule_line(buf, size, pc, err, &rule,
			     err ? 0 : sec->elems[0].abi);
}

/* Look up @nr PCs and replace the stored results.  Takes sfu_dbg.lock. */
static int sfu_dbg_run(const u64 *pcs, unsigned int nr)
{
	size_t size = (size_t)nr * SFU_DBG_LINE, len = 0;
	struct sfu_section sec;
	unsigned int i;
	char *out;
	int init;

	out = kvmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!out)
		return -ENOMEM;
	mutex_lock(&sfu_dbg.lock);
	init = sfu_dbg_section(&sec);
	for (i = 0; i < nr; i++)
		len += sfu_dbg_lookup(out + len, size - len, &sec, init,
				      pcs[i]);
	if (!init)
		sfu_section_destroy(&sec);
	kvfree(sfu_dbg.out);
	sfu_dbg.out = out;
	sfu_dbg.out_len = len;
	mutex_unlock(&sfu_dbg.lock);
	return 0;
}

static ssize_t sfu_decode_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned int nr;
	u64 *pcs;
	int ret;

	ret = sfu_pcs_parse(ubuf, count, &pcs, &nr);
	if (ret)
		return ret;
	ret = sfu_dbg_run(pcs, nr);
	kfree(pcs);
	if (ret)
		return ret;
	*ppos = 0;
	return count;
}

static ssize_t sfu_decode_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&sfu_dbg.lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, sfu_dbg.out,
				      sfu_dbg.out_len);
	mutex_unlock(&sfu_dbg.lock);
	return ret;
}

static const struct file_operations sfu_decode_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sfu_decode_read,
	.write = sfu_decode_write,
	.llseek = default_llseek,
};

/* Format the status line into @buf.  Callers hold sfu_dbg.lock. */
static int sfu_dbg_status(char *buf, size_t size)
{
	struct sfu_section sec;
	int init, n;

	init = sfu_dbg_section(&sec);
	n = scnprintf(buf, size, "size=%zu vaddr=0x%llx abi=%u init=%d",
		      sfu_dbg.len, sfu_dbg.vaddr, sfu_dbg.abi, init);
	if (!init) {
		init = sfu_section_validate(&sec);
		n += scnprintf(buf + n, size - n,
			       " elems=%u fdes=%u text=0x%llx-0x%llx validate=%d",
			       sec.nr_elems, sec.nr_fdes, sec.text_lo,
			       sec.text_hi, init);
		sfu_section_destroy(&sec);
	}
	n += sfu_dbg_diag(buf + n, size - n, init, &sec);
	n += scnprintf(buf + n, size - n, "\n");
	return n;
}

static ssize_t sfu_status_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char buf[SFU_DBG_LINE];
	int len;

	mutex_lock(&sfu_dbg.lock);
	len = sfu_dbg_status(buf, sizeof(buf));
	mutex_unlock(&sfu_dbg.lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations sfu_status_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sfu_status_read,
	.llseek = default_llseek,
};

/*
 * The test hook makes any thread of the caller's process walk (TWA_SIGNAL
 * work included): root only, and even in a debug build only when asked
 * for at load.
 */
static bool sfu_test_hooks;
module_param_named(test_hooks, sfu_test_hooks, bool, 0444);
MODULE_PARM_DESC(test_hooks,
		 "Create the debugfs file unwind, the selftests' hook (default off)");

/**
 * sfu_debug_init() - create the decoder's files and the test hook in @dir
 * @dir: the module's debugfs directory (an error pointer if it has none)
 *
 * debugfs is optional: failures leave the module without these files.
 */
void sfu_debug_init(struct dentry *dir)
{
	debugfs_create_file("section", 0200, dir, NULL, &sfu_dbg_section_fops);
	debugfs_create_x64("vaddr", 0600, dir, &sfu_dbg.vaddr);
	debugfs_create_u8("abi", 0600, dir, &sfu_dbg.abi);
	debugfs_create_file("decode", 0600, dir, NULL, &sfu_decode_fops);
	debugfs_create_file("status", 0400, dir, NULL, &sfu_status_fops);
	if (sfu_test_hooks && sfu_testhook_init(dir))
		pr_warn("no deferred unwinding test hook\n");
}

/**
 * sfu_debug_exit() - free what the decoder's files and the test hook hold
 *
 * Called once the directory is removed: no file operation runs any more.
 */
void sfu_debug_exit(void)
{
	sfu_testhook_exit();
	kvfree(sfu_dbg.out);
	sfu_dbg.out = NULL;
	sfu_dbg_reset_blob();
}
