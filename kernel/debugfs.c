// SPDX-License-Identifier: GPL-2.0
/*
 * The module's debugfs directory, /sys/kernel/debug/sframe_unwind/: views
 * of the registries, here, request_at (trace_request.c) and, in a debug
 * build, the decoder's files and the test hook (debug.c):
 *
 *   sections (read)  every process with registered sections:
 *                      pid=<tgid> comm=<comm> sections=<n>
 *                        <start>-<end> <source> v<version> <abi>
 *                        fdes=<n> sframe=0x<addr>+0x<len> <path|[jit]>
 *                    (one line per section, sorted by address)
 *   stats    (read)  "name value" lines: mms, sections, memory_bytes, the
 *                    sidecars and the file cache, and the event counters
 *                    of registry.c
 *   lookup   (rw)    a process writes PCs (hex, white space separated, at
 *                    most SFU_DBG_MAX_PCS) and reads back one line per PC,
 *                    looked up in its own registry the way the unwinder
 *                    does (faulting reads of its own .sframe):
 *                      0x<pc>: <rule>   or   0x<pc>: error: <reason>
 *                    Results belong to the open file.
 *
 * The PC parser and the result line are shared with the decoder's debugfs
 * files in debug.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <sframe/table.h>

#include "callchain.h"
#include "debug.h"
#include "debugfs.h"
#include "filecache.h"
#include "mem.h"
#include "registry.h"
#include "sidecar.h"
#include "stats.h"
#include "trace_request.h"
#include "twork.h"

static const char *const sfu_source_names[] = {
	[SFRAME_UNWIND_SRC_ELF] = "elf",
	[SFRAME_UNWIND_SRC_SIDECAR] = "sidecar",
	[SFRAME_UNWIND_SRC_JIT] = "jit",
};

/**
 * sfu_pcs_parse() - parse white-space separated hex PCs written by a user
 * @ubuf: the user buffer
 * @count: its length, at most SFU_DBG_MAX_INPUT
 * @pcs: on success, a kmalloc()ed array the caller frees
 * @nr: on success, the number of PCs, at least one
 *
 * Return: 0 or a negative error code.
 */
int sfu_pcs_parse(const char __user *ubuf, size_t count, u64 **pcs,
		  unsigned int *nr)
{
	char *str, *cur, *tok;
	int ret = 0;

	if (!count || count > SFU_DBG_MAX_INPUT)
		return -EINVAL;
	str = memdup_user_nul(ubuf, count);
	if (IS_ERR(str))
		return PTR_ERR(str);
	*pcs = kmalloc_array(SFU_DBG_MAX_PCS, sizeof(**pcs), GFP_KERNEL);
	if (!*pcs) {
		ret = -ENOMEM;
		goto free_str;
	}
	*nr = 0;
	cur = str;
	while (!ret && (tok = strsep(&cur, " \t\n"))) {
		if (!*tok)
			continue;
		if (*nr == SFU_DBG_MAX_PCS)
			ret = -E2BIG;
		else
			ret = kstrtou64(tok, 16, &(*pcs)[(*nr)++]);
	}
	if (!ret && !*nr)
		ret = -EINVAL;
	if (ret) {
		kfree(*pcs);
		*pcs = NULL;
	}
free_str:
	kfree(str);
	return ret;
}

/**
 * sfu_rule_line() - the result line of one PC, as sframe-dump --pc has it
 * @buf: output
 * @size: its room
 * @pc: the PC
 * @err: 0 or the lookup's error
 * @rule: the rule, if @err is 0
 * @abi: the section's ABI
 *
 * Return: bytes written.
 */
int sfu_rule_line(char *buf, size_t size, u64 pc, int err,
		  const struct sfu_rule *rule, u8 abi)
{
	char rule_str[SFU_RULE_STR_MAX];

	if (err)
		return scnprintf(buf, size, "0x%llx: error: %s\n", pc,
				 sfu_strerror(err));
	sfu_rule_format(rule, abi, rule_str, sizeof(rule_str));
	return scnprintf(buf, size, "0x%llx: %s\n", pc, rule_str);
}

/* ---- sections */

static void sfu_show_region(struct seq_file *m, const struct sfu_region *r)
{
	const struct sfu_abi_info *abi = sfu_abi_info(r->sec->abi);

	seq_printf(m, "  0x%lx-0x%lx %s v%u %s fdes=%u sframe=0x%llx+0x%llx ",
		   r->start, r->end, sfu_source_names[r->source], r->version,
		   abi ? abi->name : "?", r->sec->nr_fdes,
		   (u64)sfu_region_sframe(r), r->sec->size);
	if (r->file)
		seq_file_path(m, r->file, "\n");
	else
		seq_puts(m, "[jit]");
	seq_putc(m, '\n');
}

static void sfu_show_mm(struct sfu_mm *smm, void *arg)
{
	/* A reference per region: its file is there only while one is held. */
	struct sfu_map *snap = sfu_mm_snapshot(smm);
	struct seq_file *m = arg;
	unsigned int i;

	if (IS_ERR_OR_NULL(snap))
		return;
	seq_printf(m, "pid=%d comm=%s sections=%u\n", smm->tgid, smm->comm,
		   snap->nr);
	for (i = 0; i < snap->nr; i++)
		sfu_show_region(m, snap->regions[i]);
	sfu_map_release(snap);
}

static int sfu_sections_show(struct seq_file *m, void *v)
{
	sfu_registry_for_each(sfu_show_mm, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sfu_sections);

/* ---- stats */

static int sfu_stats_show(struct seq_file *m, void *v)
{
	u64 sidecars, sidecar_bytes, sharing, files, file_bytes;
	enum sfu_stat i;

	seq_printf(m, "mms %ld\n", sfu_stat_mms());
	seq_printf(m, "sections %ld\n", sfu_stat_regions());
	seq_printf(m, "memory_bytes %ld\n", sfu_mem_bytes());
	seq_printf(m, "task_work_pending %lu\n", sfu_twork_pending());
	sfu_sidecar_stats(&sidecars, &sidecar_bytes, &sharing);
	seq_printf(m, "sidecars %llu\n", sidecars);
	seq_printf(m, "sidecar_bytes %llu\n", sidecar_bytes);
	seq_printf(m, "sidecars_sharing %llu\n", sharing);
	sfu_fcache_stats(&files, &file_bytes);
	seq_printf(m, "file_cache %llu\n", files);
	seq_printf(m, "file_cache_bytes %llu\n", file_bytes);
	for (i = 0; i < SFU_STAT_NR; i++)
		seq_printf(m, "%s %llu\n", sfu_stat_name(i), sfu_stat_read(i));
	seq_printf(m, "perf_redirected %d\n",
		   sfu_callchain_active("perf_callchain_user"));
	seq_printf(m, "userstack_redirected %d\n",
		   sfu_callchain_active("stack_trace_save_user"));
	seq_printf(m, "unwind_user_redirected %d\n",
		   sfu_callchain_active("unwind_user"));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sfu_stats);

/* ---- lookup */

struct sfu_lookup_out {
	struct mutex lock;	/* guards @buf and @len */
	char *buf;
	size_t len;
};

/*
 * The rule a walk finds at @pc in @r: from its rule table if it has one
 * (a file's, a sidecar's: walks read nothing else, and their sections
 * keep nothing else), else from the section.
 */
static int sfu_region_rule(struct sfu_region *r, u64 pc,
			   struct sfu_rule *rule)
{
	const struct sfu_rule *found;

	if (!r->sec->table)
		return sfu_find_rule(r->sec, pc, rule);
	found = sfu_region_table_find(r, pc);
	if (!found)
		return -ENOENT;
	*rule = *found;
	return 0;
}

/* Look @pc up in the caller's own registry, as the unwinder will. */
static int sfu_lookup_pc(char *buf, size_t size, u64 pc)
{
	struct mm_struct *mm = current->mm;
	struct sfu_region *r = NULL;
	struct sfu_rule rule;
	int err;

	rcu_read_lock();
	if (mm)
		r = sfu_region_find(mm, pc);
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	rcu_read_unlock();
	if (!r)
		return sfu_rule_line(buf, size, pc, -ENOENT, NULL, 0);
	err = sfu_region_rule(r, pc, &rule);
	err = sfu_rule_line(buf, size, pc, err, &rule, r->sec->abi);
	sfu_region_put(r);
	return err;
}

static int sfu_lookup_open(struct inode *inode, struct file *file)
{
	struct sfu_lookup_out *out = kzalloc(sizeof(*out), GFP_KERNEL);

	if (!out)
		return -ENOMEM;
	mutex_init(&out->lock);
	file->private_data = out;
	return 0;
}

static int sfu_lookup_release(struct inode *inode, struct file *file)
{
	struct sfu_lookup_out *out = file->private_data;

	kvfree(out->buf);
	kfree(out);
	return 0;
}

static ssize_t sfu_lookup_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct sfu_lookup_out *out = file->private_data;
	size_t size, len = 0;
	unsigned int i, nr;
	char *buf;
	u64 *pcs;
	int ret;

	ret = sfu_pcs_parse(ubuf, count, &pcs, &nr);
	if (ret)
		return ret;
	size = (size_t)nr * SFU_DBG_LINE;
	buf = kvmalloc(size, GFP_KERNEL | __GFP_NOWARN);
	if (!buf) {
		kfree(pcs);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++)
		len += sfu_lookup_pc(buf + len, size - len, pcs[i]);
	kfree(pcs);
	mutex_lock(&out->lock);
	swap(out->buf, buf);
	out->len = len;
	mutex_unlock(&out->lock);
	kvfree(buf);
	*ppos = 0;
	return count;
}

static ssize_t sfu_lookup_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct sfu_lookup_out *out = file->private_data;
	ssize_t ret;

	mutex_lock(&out->lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, out->buf, out->len);
	mutex_unlock(&out->lock);
	return ret;
}

static const struct file_operations sfu_lookup_fops = {
	.owner = THIS_MODULE,
	.open = sfu_lookup_open,
	.release = sfu_lookup_release,
	.read = sfu_lookup_read,
	.write = sfu_lookup_write,
	.llseek = default_llseek,
};

static struct dentry *sfu_debugfs_dir;

/**
 * sfu_debugfs_init() - create /sys/kernel/debug/sframe_unwind/ and its files
 *
 * debugfs is optional: failures leave the module without it, silently.
 */
void sfu_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir(KBUILD_MODNAME, NULL);

	sfu_debugfs_dir = dir;
	debugfs_create_file("sections", 0400, dir, NULL, &sfu_sections_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &sfu_stats_fops);
	debugfs_create_file("lookup", 0600, dir, NULL, &sfu_lookup_fops);
	sfu_trace_request_init(dir);
	sfu_debug_init(dir);
}

/**
 * sfu_debugfs_exit() - remove the directory and free what its files hold
 *
 * Waits for open files' current operations first.
 */
void sfu_debugfs_exit(void)
{
	debugfs_remove_recursive(sfu_debugfs_dir);
	sfu_debugfs_dir = NULL;
	sfu_trace_request_exit();
	sfu_debug_exit();
}
