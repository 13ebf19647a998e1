// SPDX-License-Identifier: GPL-2.0
/*
 * A walk's frames as file + address: the trace event sframe_unwind_frames.
 *
 * A pc means something only while its process lives and keeps its
 * mappings.  For every frame this finds the file it is in and its address
 * in the file's own terms (the pc less the mapping's load bias: what
 * symbol tables, DWARF and addr2line use) and names the file by its GNU
 * build-id, device and inode, so that a stack can be named after the
 * process is gone (sframectl symbolize).
 *
 * A frame in a registered region takes the region's file and bias; the
 * build-id is read from the file once per region and kept there.  Other
 * frames (a file with neither SFrame nor sidecar) are found with
 * vma_lookup() and the file's program headers.  Runs in the walk's task
 * work, where it may sleep, and only while the event is on.
 */
#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "elf.h"
#include "frame_id.h"
#include "registry.h"
#include "trace.h"

/* sfu_region.build_id_state */
enum {
	SFU_BUILD_ID_UNREAD,
	SFU_BUILD_ID_READING,
	SFU_BUILD_ID_READ,
};

/* The index of the file (@dev, @ino) in @f: -1 if all are taken. */
static int sfu_frames_file(struct sfu_frames *f, dev_t dev,
			   unsigned long ino, bool *fresh)
{
	unsigned int i;

	*fresh = false;
	for (i = 0; i < f->nr_files; i++)
		if (f->inos[i] == ino && f->majors[i] == MAJOR(dev) &&
		    f->minors[i] == MINOR(dev))
			return i;
	if (f->nr_files == SFU_FRAMES_MAX_FILES)
		return -1;
	f->majors[i] = MAJOR(dev);
	f->minors[i] = MINOR(dev);
	f->inos[i] = ino;
	*fresh = true;
	return f->nr_files++;
}

/*
 * The build-id of @r's file into @id: read once per region, by the first
 * that needs it; one that comes while it is read reads its own.
 */
static u8 sfu_region_build_id(struct sfu_region *r, u8 *id)
{
	int state = atomic_read_acquire(&r->build_id_state);

	if (state == SFU_BUILD_ID_UNREAD &&
	    atomic_cmpxchg(&r->build_id_state, SFU_BUILD_ID_UNREAD,
			   SFU_BUILD_ID_READING) == SFU_BUILD_ID_UNREAD) {
		r->build_id_len = sfu_elf_file_build_id(r->file, r->build_id);
		atomic_set_release(&r->build_id_state, SFU_BUILD_ID_READ);
		state = SFU_BUILD_ID_READ;
	}
	if (state != SFU_BUILD_ID_READ)
		return sfu_elf_file_build_id(r->file, id);
	memcpy(id, r->build_id, r->build_id_len);
	return r->build_id_len;
}

/* A reference to the file region @pc is in, or NULL. */
static struct sfu_region *sfu_frames_region(unsigned long pc)
{
	struct sfu_region *r;

	rcu_read_lock();
	r = sfu_region_find(current->mm, pc);
	if (r && (!r->file || !kref_get_unless_zero(&r->ref)))
		r = NULL;
	rcu_read_unlock();
	return r;
}

/* Frames in registered regions of files. */
static void sfu_frames_from_regions(struct sfu_frames *f,
				    const unsigned long *pcs)
{
	struct sfu_region *r;
	unsigned int i;
	bool fresh;
	int idx;

	for (i = 0; i < f->nr; i++) {
		r = sfu_frames_region(pcs[i]);
		if (!r)
			continue;
		idx = sfu_frames_file(f, r->dev, r->ino, &fresh);
		if (idx >= 0) {
			if (fresh)
				f->build_id_lens[idx] =
					sfu_region_build_id(r, f->build_ids[idx]);
			f->addrs[i] = pcs[i] - r->bias;
			f->file_of[i] = idx;
		}
		sfu_region_put(r);
	}
}

/* A file mapping that frames outside any region are in. */
struct sfu_frames_vma {
	struct file *file;
	unsigned long start;
	unsigned long end;
	unsigned long pgoff;
};

/*
 * The file mappings of the frames no region had, at most @max: their
 * files are held.  Return: how many.
 */
static unsigned int sfu_frames_vmas(struct sfu_frames *f,
				    const unsigned long *pcs,
				    struct sfu_frames_vma *v, unsigned int max)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned int i, j, n = 0;

	if (mmap_read_lock_killable(mm))
		return 0;
	for (i = 0; i < f->nr && n < max; i++) {
		if (f->file_of[i] != SFRAME_UNWIND_FRAME_NO_FILE)
			continue;
		vma = vma_lookup(mm, pcs[i]);
		if (!vma || !vma->vm_file || !(vma->vm_flags & VM_EXEC))
			continue;
		for (j = 0; j < n && v[j].start != vma->vm_start; j++)
			;
		if (j < n)
			continue;
		v[n].file = get_file(vma->vm_file);
		v[n].start = vma->vm_start;
		v[n].end = vma->vm_end;
		v[n++].pgoff = vma->vm_pgoff;
	}
	mmap_read_unlock(mm);
	return n;
}

/* The frames in mapping @v, from the program headers of its file. */
static void sfu_frames_in_vma(struct sfu_frames *f, const unsigned long *pcs,
			      const struct sfu_frames_vma *v)
{
	struct inode *inode = file_inode(v->file);
	struct sfu_elf_headers elf;
	const Elf64_Phdr *text;
	unsigned long bias;
	unsigned int i;
	bool fresh;
	int idx;

	if (sfu_elf_read(v->file, &elf))
		return;
	text = sfu_elf_text(&elf, v->pgoff);
	if (!text)
		goto free_phdrs;
	idx = sfu_frames_file(f, inode->i_sb->s_dev, inode->i_ino, &fresh);
	if (idx < 0)
		goto free_phdrs;
	if (fresh)
		f->build_id_lens[idx] = sfu_elf_build_id(v->file, &elf,
							 f->build_ids[idx]);
	bias = sfu_elf_bias(text, v->start, v->pgoff);
	for (i = 0; i < f->nr; i++) {
		if (f->file_of[i] != SFRAME_UNWIND_FRAME_NO_FILE ||
		    pcs[i] < v->start || pcs[i] >= v->end)
			continue;
		f->addrs[i] = pcs[i] - bias;
		f->file_of[i] = idx;
	}
free_phdrs:
	sfu_elf_free(&elf);
}

/* Frames outside every region. */
static void sfu_frames_from_vmas(struct sfu_frames *f,
				 const unsigned long *pcs)
{
	struct sfu_frames_vma v[SFU_FRAMES_MAX_FILES];
	unsigned int i, n;

	n = sfu_frames_vmas(f, pcs, v, ARRAY_SIZE(v));
	for (i = 0; i < n; i++) {
		sfu_frames_in_vma(f, pcs, &v[i]);
		fput(v[i].file);
	}
}

/**
 * sfu_frames_trace() - emit sframe_unwind_frames for a walk
 * @cookie: the walk's cookie
 * @pcs: its frames, innermost first, in the current task's address space
 * @nr: how many
 *
 * In the task the walk ran in, which may sleep.  A frame whose file cannot
 * be told (more than SFU_FRAMES_MAX_FILES files, a failed read) keeps its
 * pc and no file.
 */
void sfu_frames_trace(u64 cookie, const unsigned long *pcs, unsigned int nr)
{
	struct sfu_frames *f;
	unsigned int i;

	f = kzalloc(sizeof(*f) + nr * (sizeof(*f->addrs) + 1),
		    GFP_KERNEL | __GFP_NOWARN);
	if (!f)
		return;
	f->nr = nr;
	f->addrs = (unsigned long *)(f + 1);
	f->file_of = (u8 *)(f->addrs + nr);
	for (i = 0; i < nr; i++) {
		f->addrs[i] = pcs[i];
		f->file_of[i] = SFRAME_UNWIND_FRAME_NO_FILE;
	}
	sfu_frames_from_regions(f, pcs);
	sfu_frames_from_vmas(f, pcs);
	trace_sframe_unwind_frames(cookie, f);
	kfree(f);
}
