// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded fuzzer for the ioctls of /dev/sframe_unwind.
 *
 * Four phases, each in a process of its own: root with one thread, root
 * with racing threads and forks, and the same two as nobody (65534).
 * Every op is an ioctl: each command of the interface, unknown numbers
 * and the real ones with their _IOC size and direction bits altered; the
 * argument NULL, a kernel address, unmapped, PROT_NONE, read-only, a
 * struct straddling the end of a mapping, or in pages another thread maps
 * and unmaps meanwhile; random struct contents and valid-looking ones (real
 * SFrame sections made with the project's encoder, fds of ELF and text
 * files, a directory, /dev/null, pipes, closed fds); and structured
 * sequences (ADD then DEL, double ADD, REPLACE, DEL of what was never
 * added, an ADD whose text is then unmapped, QUERY of itself, of other
 * and of missing processes, ADD_FILE, LIST_FILES, DEL_FILE by fd and by
 * build-id).  Racing threads share the device's fd; others map and unmap
 * the memory the arguments point into, and map ELF files for the module
 * to register; workers fork children that fuzz on and exit, exec or are
 * killed, with their registrations alive.  A 32-bit build of this
 * program (ioctl_fuzz32, run by it with -c where it exists) does the
 * four phases again through compat_ioctl.
 *
 * Every ioctl must return 0 or -1 with an errno of the set the module's
 * code can return for that command (ENOTTY for unknown ones), the
 * privileged commands must give EPERM as nobody, QUERY must write no
 * more entries than it has room for, every process must exit on its own
 * (no signal), and once every phase is over and the sidecars are dropped
 * the module's memory counters (stats: mms, sections, memory_bytes,
 * sidecars, sidecar_bytes, sidecars_sharing, task_work_pending) must be
 * back where they started.  At the end the module must refuse to unload
 * while the device is open, unload once it is closed and load again
 * (with test_hooks=1 if it had it).
 *
 * The run is bounded by op count and time: SFU_FUZZ_SEED (or -s), the
 * total ops (SFU_FUZZ_OPS, -n) and seconds (SFU_FUZZ_SECONDS, -t) are
 * split over the phases.  The seed is printed; with it every worker
 * draws the same ops in the same order again (the addresses in them move
 * with ASLR, and the racing phases race as they will).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/decode.h>

#include "kselftest.h"
#include "registry/enc.h"
#include "registry/registry.h"

#define NOBODY		65534
#define DEF_OPS		60000
#define DEF_SECONDS	40
#define NR_THREADS	4
/* Text slots for JIT registrations: one page each. */
#define NR_SLOTS	32
#define SEC_CAP		1024
/* Per worker: argument pages, then a PROT_NONE guard. */
#define ARG_PAGES	2
#define OUT_ROOM	64
#define CANARY		0xa5
#define CHURN_PAGES	16
#define ALTSTACK_PAGES	16
#define MAX_KIDS	6
#define KID_OPS_MAX	150
#define MAX_REPORTS	20
#define NR_FILES	18
#define SLOT_OF_KIDS	(NR_THREADS + 1)
#define STATS_WAIT_MS	20000
#define MODULE_NAME	"sframe_unwind"
#define MODULE_KO	"/lib/test-modules/sframe_unwind.ko"
#define TMP_ELF		"/tmp/ioctl_fuzz.so"
#define TMP_WO		"/tmp/ioctl_fuzz.wo"
#define PLAIN_LIB	SFU_LIB("plain")
#define SFRAME_LIB	SFU_LIB("a")
#define TEXT_FILE	"/selftests/list"
#define SIDECAR_VADDR	0x10000
#define SIDECAR_FUNC	0x1000
#define BIG_LEN		(64ull << 20)
#define KADDR_DIRECT	0xffff888000000000ull
#define KADDR_TEXT	0xffffffff81000000ull
#define NONCANONICAL	0x8000000000000000ull
#define NR_MAGIC_CMDS	7
/* Answers are counted per errno up to this one (and above it as it). */
#define MAX_ERRNO	127
#define COMPAT_PROG	"/selftests/ioctl_fuzz32"
/* The 32-bit run's share, in percent of the ops and seconds. */
#define COMPAT_PERCENT	25
/* The child's exit status when the kernel cannot exec the 32-bit build. */
#define EXIT_NOEXEC	126

/* The kernel's SFrame ABI, which a 32-bit build must use too. */
#if defined(__i386__)
#define FUZZ_ABI	SFRAME_ABI_AMD64_ENDIAN_LITTLE
#else
#define FUZZ_ABI	sfu_native_abi()
#endif

static const char *const counter_names[] = {
	"mms", "sections", "memory_bytes", "sidecars", "sidecar_bytes",
	"sidecars_sharing", "task_work_pending",
};

#define NR_COUNTERS	ARRAY_SIZE(counter_names)

struct phase {
	const char *name;
	bool unpriv;
	bool race;
	unsigned int weight;	/* percent of the ops and of the time */
};

static const struct phase phases[] = {
	{ "root, one thread", false, false, 25 },
	{ "root, threads and forks", false, true, 40 },
	{ "nobody, one thread", true, false, 10 },
	{ "nobody, threads and forks", true, true, 25 },
};

#define NR_PHASES	ARRAY_SIZE(phases)

/* Shared by every process of the run (MAP_SHARED). */
struct shared {
	atomic_ulong ops[NR_PHASES];
	atomic_ulong ok[NR_PHASES];
	atomic_ulong forks[NR_PHASES];
	atomic_ulong answers[NR_MAGIC_CMDS + 1][MAX_ERRNO + 1];
	atomic_ulong violations;
	atomic_ulong reports;
	atomic_int stop;
};

/* One fuzzing thread (or forked child). */
struct worker {
	u64 rng;
	unsigned int id;
	unsigned int phase;
	bool priv;
	bool strict;		/* alone in its process: exact answers */
	bool may_fork;
	unsigned long budget;	/* ops left for a forked child, else 0 */
	u8 *arg;		/* ARG_PAGES pages, then a guard page */
	u8 *out;		/* QUERY output, a canary, then a guard page */
	u8 *scratch;		/* sections this worker builds */
	u8 *stage;		/* the argument struct and its tail */
	u8 *altstack;		/* ALTSTACK_PAGES for on_fatal() */
	u8 *fresh;		/* a page seq_unmap() maps and unmaps */
	bool own;		/* it was placed at arg, whole */
	pid_t kids[MAX_KIDS];
	int kid_fate[MAX_KIDS];
	unsigned long kid_born[MAX_KIDS];
	unsigned long done;	/* ops this worker issued */
	char what[160];		/* the op being issued, for reports */
};

enum { FATE_EXIT, FATE_EXEC, FATE_KILL };

struct fz_file {
	const char *name;
	int fd;
	bool elf;		/* a regular ELF file ADD_FILE may accept */
};

static struct shared *sh;
static int dev = -1;
static long page;
static u8 abi;
static u64 seed;
static unsigned long phase_ops[NR_PHASES];
static struct timespec deadline;

static u8 *text;		/* NR_SLOTS pages, read and execute */
static u8 *pool;		/* valid sections: V2 and V3 per slot */
static s64 pool_len[NR_SLOTS][2];
static u8 *file_sec;		/* sidecar sections, V2 and V3 */
static s64 file_sec_len[2];
static u8 *ro;			/* valid structs, read-only */
static u8 *guard;		/* PROT_NONE */
static u8 *unmapped;
static u8 *churn;		/* CHURN_PAGES pages another thread remaps */
static u8 *shared_out;		/* entries of the read-only QUERY struct */
static struct fz_file files[NR_FILES];
static unsigned int nr_files;
static int closed_fd;
static pid_t main_pid;
static pid_t gone_pid;		/* a reaped child's pid */

/* ---- randomness: splitmix64, one stream per worker */

static u64 rnd(struct worker *w)
{
	u64 z = (w->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static u32 below(struct worker *w, u32 n)
{
	return n ? rnd(w) % n : 0;
}

static bool one_in(struct worker *w, u32 n)
{
	return !below(w, n);
}

/* ---- reporting, safe in forked children of threaded processes */

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0 && write(STDOUT_FILENO, buf, n) < 0)
		return;
}

static void violation(struct worker *w, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	atomic_fetch_add(&sh->violations, 1);
	if (atomic_fetch_add(&sh->reports, 1) >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say("# VIOLATION (phase %u, worker %u, pid %d, op %lu, seed 0x%llx): %s; op: %s\n",
	    w->phase, w->id, (int)getpid(), w->done,
	    (unsigned long long)seed, msg, w->what);
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

static bool past(const struct timespec *t)
{
	struct timespec n;

	now(&n);
	return n.tv_sec > t->tv_sec ||
	       (n.tv_sec == t->tv_sec && n.tv_nsec >= t->tv_nsec);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * ---- the errnos each command may give, from kernel/chardev.c and what
 * it calls
 */

/* sfu_get_arg(): the struct unreadable, size out of range, tail nonzero */
static const int err_common[] = { EFAULT, EINVAL, E2BIG, 0 };

/* sfu_section_init() and sfu_section_validate() (sfu_strerror()) */
static const int err_decoder[] = {
	EBADMSG, ENOEXEC, EPROTONOSUPPORT, EOPNOTSUPP, E2BIG, ENOMEM, ERANGE,
	ENOENT, EFAULT, 0
};

/* pid, max_section_bytes, max_total_bytes, sfu_mm_insert() */
static const int err_add[] = {
	EPERM, EFBIG, EDQUOT, ENOMEM, EEXIST, ENOENT, ENOSPC, 0
};

static const int err_del[] = { EPERM, ENOENT, 0 };

/* privileges, fget() and the file's type, sfu_sidecar_add() */
static const int err_add_file[] = {
	EPERM, EBADF, ENOEXEC, ESTALE, EEXIST, EFBIG, EDQUOT, ENOMEM, 0
};

static const int err_del_file[] = { EPERM, EBADF, ENOENT, 0 };

/* the pid, sfu_may_query(), sfu_mm_snapshot() */
static const int err_query[] = { ESRCH, EACCES, ENOMEM, 0 };

static const int err_list[] = { EPERM, ENOMEM, 0 };

/* privileges: a lease too long is EINVAL (err_common) */
static const int err_listen[] = { EPERM, 0 };

static bool in_set(const int *set, int err)
{
	for (; *set; set++)
		if (*set == err)
			return true;
	return false;
}

/* The module's command for @cmd (matched by type and number), or 0. */
static unsigned int cmd_nr(unsigned int cmd)
{
	if (_IOC_TYPE(cmd) != SFRAME_UNWIND_IOC_MAGIC ||
	    _IOC_NR(cmd) < 1 || _IOC_NR(cmd) > NR_MAGIC_CMDS)
		return 0;
	return _IOC_NR(cmd);
}

static bool errno_allowed(unsigned int nr, int err)
{
	switch (nr) {
	case 0:
		return err == ENOTTY;
	case _IOC_NR(SFRAME_UNWIND_IOC_ADD):
		return in_set(err_common, err) || in_set(err_add, err) ||
		       in_set(err_decoder, err);
	case _IOC_NR(SFRAME_UNWIND_IOC_DEL):
		return in_set(err_common, err) || in_set(err_del, err);
	case _IOC_NR(SFRAME_UNWIND_IOC_ADD_FILE):
		return in_set(err_common, err) || in_set(err_add_file, err) ||
		       in_set(err_decoder, err);
	case _IOC_NR(SFRAME_UNWIND_IOC_DEL_FILE):
		return in_set(err_common, err) || in_set(err_del_file, err);
	case _IOC_NR(SFRAME_UNWIND_IOC_QUERY):
		return in_set(err_common, err) || in_set(err_query, err);
	case _IOC_NR(SFRAME_UNWIND_IOC_LIST_FILES):
		return in_set(err_common, err) || in_set(err_list, err);
	case _IOC_NR(SFRAME_UNWIND_IOC_LISTEN):
		return in_set(err_common, err) || in_set(err_listen, err);
	}
	return false;
}

static bool privileged_nr(unsigned int nr)
{
	return nr == _IOC_NR(SFRAME_UNWIND_IOC_ADD_FILE) ||
	       nr == _IOC_NR(SFRAME_UNWIND_IOC_DEL_FILE) ||
	       nr == _IOC_NR(SFRAME_UNWIND_IOC_LIST_FILES) ||
	       nr == _IOC_NR(SFRAME_UNWIND_IOC_LISTEN);
}

/*
 * Issue one ioctl and check its answer; returns 0, the errno, or -1 for
 * a return value that is neither.
 */
static int fz_ioctl(struct worker *w, unsigned int cmd, void *arg)
{
	unsigned int nr = cmd_nr(cmd);
	long ret = syscall(SYS_ioctl, dev, (unsigned long)cmd, arg);
	int err = ret == -1 ? errno : 0;

	w->done++;
	atomic_fetch_add(&sh->ops[w->phase], 1);
	atomic_fetch_add(&sh->answers[nr][err < MAX_ERRNO ? err : MAX_ERRNO],
			 1);
	if (ret != 0 && ret != -1) {
		violation(w, "cmd 0x%x returned %ld", cmd, ret);
		return -1;
	}
	if (!err)
		atomic_fetch_add(&sh->ok[w->phase], 1);
	if (!w->priv && privileged_nr(nr) && err != EPERM)
		violation(w, "cmd 0x%x as nobody: %s, want EPERM", cmd,
			  reg_err_name(err));
	else if (err && !errno_allowed(nr, err))
		violation(w, "cmd 0x%x: errno %d (%s) not in its set", cmd,
			  err, reg_err_name(err));
	else if (!err && !nr)
		violation(w, "unknown cmd 0x%x succeeded", cmd);
	return err;
}

/* An exact answer expected from a structured sequence. */
static void expect(struct worker *w, int got, int want, const char *step)
{
	if (!w->strict || got == want)
		return;
	violation(w, "%s: %s, want %s", step, reg_err_name(got),
		  reg_err_name(want));
}

/* ---- arguments */

static const unsigned int real_cmds[] = {
	SFRAME_UNWIND_IOC_ADD, SFRAME_UNWIND_IOC_DEL,
	SFRAME_UNWIND_IOC_ADD_FILE, SFRAME_UNWIND_IOC_DEL_FILE,
	SFRAME_UNWIND_IOC_QUERY, SFRAME_UNWIND_IOC_LIST_FILES,
	SFRAME_UNWIND_IOC_LISTEN,
};

/*
 * @cmd, or now and then the same type and number with other size and
 * direction bits: the module matches on type and number only.
 */
static unsigned int alter_cmd(struct worker *w, unsigned int cmd)
{
	if (!one_in(w, 6))
		return cmd;
	return _IOC(below(w, 4), _IOC_TYPE(cmd), _IOC_NR(cmd),
		    one_in(w, 2) ? below(w, _IOC_SIZEMASK + 1) :
				   _IOC_SIZE(cmd) + below(w, 16) - 8);
}

/*
 * A command of a type do_vfs_ioctl() never handles itself (0x00, 0x15,
 * 'T', 'X', 'f', 0x94 are its types), so that only the module answers.
 */
static unsigned int random_cmd(struct worker *w)
{
	unsigned int type, nr;

	switch (below(w, 4)) {
	case 0:
		return alter_cmd(w, real_cmds[below(w, NR_MAGIC_CMDS)]);
	case 1:
		type = SFRAME_UNWIND_IOC_MAGIC;
		nr = one_in(w, 4) ? 0 : NR_MAGIC_CMDS + 1 + below(w, 249);
		break;
	default:
		do {
			type = below(w, 256);
		} while (type == 0x00 || type == 0x15 || type == 'T' ||
			 type == 'X' || type == 'f' || type == 0x94 ||
			 type == SFRAME_UNWIND_IOC_MAGIC);
		nr = below(w, 256);
		break;
	}
	return _IOC(below(w, 4), type, nr, below(w, _IOC_SIZEMASK + 1));
}

static u64 kernel_addr(struct worker *w)
{
	static const u64 addrs[] = {
		KADDR_DIRECT, KADDR_TEXT, NONCANONICAL, ~0ull, ~0ull - 7,
		0x7ffffffff000ull, 0x7ffffffffffcull,
	};

	return addrs[below(w, ARRAY_SIZE(addrs))] + (one_in(w, 2) ? 0 : 64);
}

/* A bad address of some kind, for arguments and pointers in structs. */
static void *bad_ptr(struct worker *w)
{
	switch (below(w, 6)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(unsigned long)kernel_addr(w);
	case 2:
		return unmapped + below(w, page);
	case 3:
		return guard + below(w, page);
	case 4:
		return churn + below(w, CHURN_PAGES * page);
	default:
		return (void *)(unsigned long)(below(w, 16) * page + below(w, 8));
	}
}

/*
 * Where the argument struct of @size bytes (@src) goes: the worker's
 * buffer (also misaligned, or as the last bytes before the guard page,
 * cut short), the read-only page (at @ro_off, a valid struct of the same
 * kind), the churn pages, or a bad address.
 */
static void *place(struct worker *w, const void *src, size_t size,
		   size_t ro_off)
{
	u8 *end = w->arg + ARG_PAGES * page, *at;
	size_t keep;

	w->own = false;
	switch (below(w, 16)) {
	case 0:
		return bad_ptr(w);
	case 1:
		snprintf(w->what + strlen(w->what),
			 sizeof(w->what) - strlen(w->what), " @ro");
		return ro + ro_off;
	case 2:
		/* Straddling the end of the mapping. */
		keep = 1 + below(w, size > 1 ? size - 1 : 1);
		at = end - keep;
		memcpy(at, src, keep);
		snprintf(w->what + strlen(w->what),
			 sizeof(w->what) - strlen(w->what), " @straddle%zu",
			 keep);
		return at;
	case 3:
		at = churn + below(w, CHURN_PAGES) * page +
		     below(w, page - 64) / 8 * 8;
		snprintf(w->what + strlen(w->what),
			 sizeof(w->what) - strlen(w->what), " @churn");
		return at;
	case 4:
		at = w->arg + 1 + below(w, 7);
		memcpy(at, src, size);
		w->own = true;
		return at;
	default:
		memcpy(w->arg, src, size);
		w->own = true;
		return w->arg;
	}
}

/* Where struct offsets in the read-only page are. */
#define RO_REGION	0
#define RO_FILE		256
#define RO_QUERY	512
#define RO_LIST		768

/*
 * The size field: mostly right, else below the first version, a larger
 * struct with a zero or nonzero tail, past a page, or random.  Writes
 * the tail at @buf + @ksize (room for a page and more there).
 */
static u32 pick_size(struct worker *w, u8 *buf, u32 ksize)
{
	u32 usize;

	switch (below(w, 12)) {
	case 0:
		return below(w, ksize);
	case 1:
		usize = ksize + 1 + below(w, 64);
		memset(buf + ksize, 0, usize - ksize);
		return usize;
	case 2:
		usize = ksize + 1 + below(w, 64);
		memset(buf + ksize, 0, usize - ksize);
		buf[ksize + below(w, usize - ksize)] = 1 + below(w, 255);
		return usize;
	case 3:
		usize = page - below(w, 2) + below(w, 2);
		memset(buf + ksize, 0, usize - ksize);
		return usize;
	case 4:
		return (u32)rnd(w);
	default:
		return ksize;
	}
}

/*
 * Copy the struct @src of @ksize bytes to the stage with a size field
 * from pick_size(); returns the bytes to place, the tail included.
 */
static size_t stage(struct worker *w, const void *src, u32 ksize,
		    u32 *usize)
{
	memcpy(w->stage, src, ksize);
	*usize = pick_size(w, w->stage, ksize);
	memcpy(w->stage, usize, sizeof(*usize));
	return *usize > ksize && *usize <= page + 1 ? *usize : ksize;
}

/* Flip a few random bits of @len bytes at @p. */
static void mutate(struct worker *w, void *p, size_t len)
{
	unsigned int i, n = 1 + below(w, 4);

	for (i = 0; i < n; i++)
		((u8 *)p)[below(w, len)] ^= 1u << below(w, 8);
}

static u64 slot_start(unsigned int slot)
{
	return (unsigned long)text + (u64)slot * page;
}

static const u8 *pool_sec(unsigned int slot, unsigned int v)
{
	return pool + (slot * 2 + v) * SEC_CAP;
}

/* The bytes an ADD points to and their length. */
static void pick_section(struct worker *w, unsigned int slot, __u64 *ptr,
			 __u64 *len)
{
	unsigned int v = below(w, 2), other = below(w, NR_SLOTS);
	u8 *end = w->arg + ARG_PAGES * page;
	s64 l = pool_len[slot][v];

	*ptr = (unsigned long)pool_sec(slot, v);
	*len = l;
	switch (below(w, 14)) {
	case 0:
		/* Another slot's: its functions are outside the range. */
		*ptr = (unsigned long)pool_sec(other, v);
		*len = pool_len[other][v];
		break;
	case 1:
		/* A corrupt copy. */
		memcpy(w->scratch, pool_sec(slot, v), l);
		mutate(w, w->scratch, l);
		*ptr = (unsigned long)w->scratch;
		break;
	case 2:
		*len = one_in(w, 2) ? l - 1 - below(w, l - 1) :
				      l + 1 + below(w, 64);
		break;
	case 3:
		/* Running into the guard page. */
		*ptr = (unsigned long)(end - l / 2);
		memcpy(end - l / 2, pool_sec(slot, v), l / 2);
		break;
	case 4:
		*ptr = (unsigned long)bad_ptr(w);
		break;
	case 5:
		*len = one_in(w, 32) ? BIG_LEN + below(w, 2) :
				       below(w, 1 << 20);
		break;
	case 6:
		*len = rnd(w);
		break;
	default:
		break;
	}
}

static void describe(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->what, sizeof(w->what), fmt, ap);
	va_end(ap);
}

/* ---- the ops */

static void region_for(struct sframe_unwind_region *r, unsigned int slot,
		       unsigned int v)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->text_start = slot_start(slot);
	r->text_end = slot_start(slot + 1);
	r->sframe_start = (unsigned long)pool_sec(slot, v);
	r->sframe_len = pool_len[slot][v];
}

static s32 pick_pid(struct worker *w)
{
	switch (below(w, 10)) {
	case 0:
		return getpid();
	case 1:
		return gettid();
	case 2:
		return 1;
	case 3:
		return -1;
	case 4:
		return (s32)rnd(w);
	default:
		return 0;
	}
}

static void op_add(struct worker *w, bool del)
{
	struct sframe_unwind_region r;
	unsigned int slot = below(w, NR_SLOTS);
	unsigned int cmd = del ? SFRAME_UNWIND_IOC_DEL : SFRAME_UNWIND_IOC_ADD;
	size_t len;
	void *arg;

	region_for(&r, slot, below(w, 2));
	pick_section(w, slot, &r.sframe_start, &r.sframe_len);
	if (one_in(w, 3))
		r.flags = one_in(w, 2) ? SFRAME_UNWIND_REPLACE : (u32)rnd(w);
	r.pid = pick_pid(w);
	if (one_in(w, 12))
		r.reserved = rnd(w);
	switch (below(w, 12)) {
	case 0:
		r.text_end = r.text_start;
		break;
	case 1:
		r.text_start = slot_start(slot + 1);
		r.text_end = slot_start(slot);
		break;
	case 2:
		r.text_start = kernel_addr(w);
		r.text_end = r.text_start + page;
		break;
	case 3:
		r.text_start = page;
		r.text_end = 0x7ffffffff000ull;
		break;
	case 4:
		r.text_start = slot_start(below(w, NR_SLOTS));
		r.text_end = r.text_start + below(w, 4) * page + below(w, 64);
		break;
	case 5:
		r.text_start = rnd(w);
		r.text_end = rnd(w);
		break;
	default:
		break;
	}
	if (one_in(w, 10))
		mutate(w, &r, sizeof(r));
	len = stage(w, &r, sizeof(r), &r.size);
	cmd = alter_cmd(w, cmd);
	describe(w, "%s slot %u flags 0x%x pid %d text 0x%llx-0x%llx sframe 0x%llx+0x%llx size %u",
		 del ? "DEL" : "ADD", slot, r.flags, r.pid,
		 (unsigned long long)r.text_start,
		 (unsigned long long)r.text_end,
		 (unsigned long long)r.sframe_start,
		 (unsigned long long)r.sframe_len, r.size);
	arg = place(w, w->stage, len, RO_REGION);
	fz_ioctl(w, cmd, arg);
}

static const struct fz_file *pick_file(struct worker *w)
{
	return &files[below(w, nr_files)];
}

static void op_file(struct worker *w, bool del)
{
	struct sframe_unwind_file f;
	unsigned int cmd = del ? SFRAME_UNWIND_IOC_DEL_FILE :
				 SFRAME_UNWIND_IOC_ADD_FILE;
	const struct fz_file *ff = pick_file(w);
	unsigned int v = below(w, 2);
	size_t len;
	void *arg;

	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	f.fd = ff->fd;
	f.sframe_vaddr = SIDECAR_VADDR;
	f.sframe_ptr = (unsigned long)(file_sec + v * SEC_CAP);
	f.sframe_len = file_sec_len[v];
	switch (below(w, 10)) {
	case 0:
		f.flags = SFRAME_UNWIND_REPLACE;
		break;
	case 1:
		f.flags = SFRAME_UNWIND_BY_BUILD_ID;
		f.build_id_len = below(w, SFRAME_UNWIND_BUILD_ID_MAX + 2);
		memset(f.build_id, (u8)rnd(w), sizeof(f.build_id));
		break;
	case 2:
		f.flags = rnd(w);
		break;
	case 3:
		f.build_id_len = below(w, SFRAME_UNWIND_BUILD_ID_MAX + 2);
		break;
	case 4:
		f.sframe_ptr = (unsigned long)bad_ptr(w);
		break;
	case 5:
		f.sframe_len = one_in(w, 32) ? BIG_LEN + below(w, 2) :
					       rnd(w);
		break;
	case 6:
		memcpy(w->scratch, file_sec, file_sec_len[0]);
		mutate(w, w->scratch, file_sec_len[0]);
		f.sframe_ptr = (unsigned long)w->scratch;
		break;
	case 7:
		f.fd = (s32)rnd(w);
		break;
	default:
		break;
	}
	if (one_in(w, 12))
		f.reserved = rnd(w);
	if (one_in(w, 10))
		mutate(w, &f, sizeof(f));
	len = stage(w, &f, sizeof(f), &f.size);
	cmd = alter_cmd(w, cmd);
	describe(w, "%s %s fd %d flags 0x%x idlen %u ptr 0x%llx+0x%llx size %u",
		 del ? "DEL_FILE" : "ADD_FILE", ff->name, f.fd, f.flags,
		 f.build_id_len, (unsigned long long)f.sframe_ptr,
		 (unsigned long long)f.sframe_len, f.size);
	arg = place(w, w->stage, len, RO_FILE);
	fz_ioctl(w, cmd, arg);
}

static s32 query_pid(struct worker *w)
{
	switch (below(w, 10)) {
	case 0:
		return getpid();
	case 1:
		return getppid();
	case 2:
		return 1;
	case 3:
		return 2;	/* kthreadd: no mm */
	case 4:
		return main_pid;
	case 5:
		return gone_pid ? gone_pid : INT_MAX;
	case 6:
		return one_in(w, 2) ? INT_MAX : INT_MIN;
	case 7:
		return -1 - below(w, 100);
	case 8:
		return 1 + below(w, 400);
	default:
		return 0;
	}
}

/* Entries QUERY and LIST_FILES wrote must fit the room they had. */
static void check_out(struct worker *w, unsigned int room, size_t esize,
		      u32 count, bool entries)
{
	const struct sframe_unwind_entry *e = (const void *)w->out;
	unsigned int i, used = count < room ? count : room;
	const u8 *c = w->out + (size_t)room * esize;

	for (i = 0; i < esize; i++) {
		if (c[i] != CANARY) {
			violation(w, "wrote past its room of %u entries (count %u)",
				  room, count);
			return;
		}
	}
	for (i = 0; entries && i < used; i++) {
		if (e[i].source < SFRAME_UNWIND_SRC_ELF ||
		    e[i].source > SFRAME_UNWIND_SRC_JIT ||
		    e[i].version < 1 || e[i].version > 3 || e[i].reserved ||
		    e[i].text_start >= e[i].text_end) {
			violation(w, "entry %u: source %u version %u reserved %u text %llx-%llx",
				  i, e[i].source, e[i].version, e[i].reserved,
				  (unsigned long long)e[i].text_start,
				  (unsigned long long)e[i].text_end);
			return;
		}
	}
}

static void op_query(struct worker *w, bool list)
{
	struct sframe_unwind_query q;
	size_t esize = list ? sizeof(struct sframe_unwind_sidecar) :
			      sizeof(struct sframe_unwind_entry);
	unsigned int cmd = list ? SFRAME_UNWIND_IOC_LIST_FILES :
				  SFRAME_UNWIND_IOC_QUERY;
	unsigned int room = below(w, OUT_ROOM + 1);
	bool mine = false;
	size_t len;
	void *arg;
	int err;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.pid = list ? 0 : query_pid(w);
	q.count = room;
	switch (below(w, 10)) {
	case 0:
		q.entries = (unsigned long)bad_ptr(w);
		break;
	case 1:
		q.entries = (unsigned long)ro;
		break;
	case 2:
		/* The room runs into the guard page. */
		q.entries = (unsigned long)(guard - esize * (room / 2));
		break;
	case 3:
		q.count = one_in(w, 2) ? rnd(w) : UINT_MAX;
		q.entries = (unsigned long)bad_ptr(w);
		break;
	default:
		mine = true;
		q.entries = (unsigned long)w->out;
		memset(w->out, CANARY, (room + 1) * esize);
		break;
	}
	if (one_in(w, 12))
		q.flags = rnd(w);
	if (list && one_in(w, 12))
		q.pid = pick_pid(w);
	if (one_in(w, 12)) {
		__u64 entries = q.entries;

		/*
		 * Not the pointer: the kernel writes where it points, and
		 * a flipped bit would aim it at this process's own stacks.
		 */
		mutate(w, &q, sizeof(q));
		q.entries = entries;
		mine = false;
	}
	len = stage(w, &q, sizeof(q), &q.size);
	cmd = alter_cmd(w, cmd);
	describe(w, "%s pid %d count %u entries 0x%llx flags 0x%x size %u",
		 list ? "LIST_FILES" : "QUERY", q.pid, q.count,
		 (unsigned long long)q.entries, q.flags, q.size);
	arg = place(w, w->stage, len, list ? RO_LIST : RO_QUERY);
	err = fz_ioctl(w, cmd, arg);
	if (!err && mine && w->own)
		check_out(w, room, esize,
			  ((struct sframe_unwind_query *)arg)->count, !list);
}

static void op_random(struct worker *w)
{
	unsigned int cmd = random_cmd(w);
	__u64 entries;
	u8 junk[64];
	unsigned int i;
	void *arg;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = rnd(w);
	if (one_in(w, 2))
		*(u32 *)junk = one_in(w, 2) ? 48 + 8 * below(w, 3) :
					      below(w, 128);
	/* Where QUERY and LIST_FILES write: never into this process. */
	entries = (unsigned long)bad_ptr(w);
	memcpy(junk + offsetof(struct sframe_unwind_query, entries), &entries,
	       sizeof(entries));
	describe(w, "random cmd 0x%x", cmd);
	arg = place(w, junk, sizeof(junk), RO_REGION + below(w, 4) * 256);
	fz_ioctl(w, cmd, arg);
}

/* ---- structured sequences */

static int add_region(struct worker *w, struct sframe_unwind_region *r,
		      const char *what)
{
	describe(w, "%s 0x%llx-0x%llx flags 0x%x", what,
		 (unsigned long long)r->text_start,
		 (unsigned long long)r->text_end, r->flags);
	return fz_ioctl(w, SFRAME_UNWIND_IOC_ADD, r);
}

static int del_at(struct worker *w, u64 start)
{
	struct sframe_unwind_region r = {
		.size = sizeof(r), .text_start = start,
	};

	describe(w, "seq DEL 0x%llx", (unsigned long long)start);
	return fz_ioctl(w, SFRAME_UNWIND_IOC_DEL, &r);
}

/* QUERY of the caller into w->out; the count, or -1. */
static int query_self(struct worker *w, unsigned int room)
{
	struct sframe_unwind_query q = {
		.size = sizeof(q), .count = room,
		.entries = (unsigned long)w->out,
	};
	int err;

	memset(w->out, CANARY, (room + 1) * sizeof(struct sframe_unwind_entry));
	describe(w, "seq QUERY self room %u", room);
	err = fz_ioctl(w, SFRAME_UNWIND_IOC_QUERY, &q);
	expect(w, err, 0, "QUERY of itself");
	if (err)
		return -1;
	check_out(w, room, sizeof(struct sframe_unwind_entry), q.count, true);
	return q.count;
}

/* Whether QUERY lists a JIT registration at @start (strict mode). */
static bool jit_at(struct worker *w, u64 start)
{
	const struct sframe_unwind_entry *e = (const void *)w->out;
	int n = query_self(w, OUT_ROOM), i;

	for (i = 0; i < n && i < OUT_ROOM; i++)
		if (e[i].source == SFRAME_UNWIND_SRC_JIT &&
		    e[i].text_start == start)
			return true;
	return false;
}

/* Drop every JIT registration of the process (strict mode). */
static void clear_jit(struct worker *w)
{
	const struct sframe_unwind_entry *e = (const void *)w->out;
	u64 starts[OUT_ROOM];
	int n, i, k, rounds;

	for (rounds = 0; rounds < 32; rounds++) {
		n = query_self(w, OUT_ROOM);
		for (i = k = 0; i < n && i < OUT_ROOM; i++)
			if (e[i].source == SFRAME_UNWIND_SRC_JIT)
				starts[k++] = e[i].text_start;
		if (!k)
			return;
		for (i = 0; i < k; i++)
			expect(w, del_at(w, starts[i]), 0,
			       "DEL of a JIT registration QUERY listed");
	}
}

static void seq_jit(struct worker *w)
{
	unsigned int slot = w->strict ? below(w, NR_SLOTS) :
			    w->id % NR_SLOTS;
	struct sframe_unwind_region r;
	unsigned int v = below(w, 2);
	int err;

	if (w->strict)
		clear_jit(w);
	region_for(&r, slot, v);
	err = add_region(w, &r, "seq ADD");
	expect(w, err, 0, "ADD of a valid section");
	if (w->strict && !err && !jit_at(w, r.text_start))
		violation(w, "QUERY does not list the JIT registration just made");
	expect(w, add_region(w, &r, "seq ADD again"), EEXIST, "ADD again");
	region_for(&r, slot, !v);
	r.flags = SFRAME_UNWIND_REPLACE;
	expect(w, add_region(w, &r, "seq REPLACE"), 0, "REPLACE");
	if (one_in(w, 3))
		return;		/* left registered */
	expect(w, del_at(w, r.text_start), 0, "DEL");
	expect(w, del_at(w, r.text_start), ENOENT, "DEL again");
	expect(w, del_at(w, r.text_start + 16), ENOENT,
	       "DEL of an address never added");
	r.flags = SFRAME_UNWIND_REPLACE;
	expect(w, add_region(w, &r, "seq REPLACE of nothing"), ENOENT,
	       "REPLACE with nothing registered");
	if (w->strict && jit_at(w, r.text_start))
		violation(w, "QUERY lists a JIT registration after DEL");
}

/*
 * ADD for a page of its own, then munmap it: the registration goes.  At
 * the worker's own address, never one mmap() picks: that could be a hole
 * in the churn pages, which the churn thread maps over and writes.
 */
static void seq_unmap(struct worker *w)
{
	struct sfu_test_func f;
	struct sframe_unwind_region r;
	u8 *p = mmap(w->fresh, page, PROT_READ | PROT_EXEC,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	s64 len;
	int err;

	if (p == MAP_FAILED)
		return;
	f.start = (unsigned long)p;
	f.size = 0x40;
	len = enc_test_build(SFRAME_VERSION_3, abi, true, &f, 1,
			     (unsigned long)w->scratch, w->scratch, SEC_CAP);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.text_start = (unsigned long)p;
	r.text_end = r.text_start + page;
	r.sframe_start = (unsigned long)w->scratch;
	r.sframe_len = len;
	if (w->strict)
		clear_jit(w);
	err = add_region(w, &r, "seq ADD of a fresh page");
	expect(w, err, 0, "ADD for a fresh page");
	munmap(p, page);
	if (w->strict && !err && jit_at(w, r.text_start))
		violation(w, "a JIT registration outlives the munmap of its text");
	if (!err)
		expect(w, del_at(w, r.text_start), ENOENT,
		       "DEL after the text was unmapped");
}

static void seq_query(struct worker *w)
{
	struct sframe_unwind_query q = { .size = sizeof(q) };
	int err;

	query_self(w, below(w, OUT_ROOM + 1));
	q.pid = INT_MAX;
	describe(w, "seq QUERY of pid INT_MAX");
	expect(w, fz_ioctl(w, SFRAME_UNWIND_IOC_QUERY, &q), ESRCH,
	       "QUERY of pid INT_MAX");
	q.pid = -1;
	describe(w, "seq QUERY of pid -1");
	expect(w, fz_ioctl(w, SFRAME_UNWIND_IOC_QUERY, &q), ESRCH,
	       "QUERY of pid -1");
	if (gone_pid) {
		q.pid = gone_pid;
		describe(w, "seq QUERY of reaped pid %d", gone_pid);
		err = fz_ioctl(w, SFRAME_UNWIND_IOC_QUERY, &q);
		expect(w, err, ESRCH, "QUERY of a reaped process");
	}
	q.pid = 1;
	describe(w, "seq QUERY of pid 1");
	err = fz_ioctl(w, SFRAME_UNWIND_IOC_QUERY, &q);
	if (!w->priv && err != EACCES)
		violation(w, "QUERY of init as nobody: %s, want EACCES",
			  reg_err_name(err));
	else if (w->priv)
		expect(w, err, 0, "QUERY of init as root");
	q.pid = 2;
	describe(w, "seq QUERY of pid 2 (kthreadd)");
	err = fz_ioctl(w, SFRAME_UNWIND_IOC_QUERY, &q);
	expect(w, err, 0, "QUERY of a kernel thread");
	if (!err && q.count)
		violation(w, "QUERY of a kernel thread: count %u", q.count);
}

/* The build-id LIST_FILES reports for the sidecar of @fd, if any. */
static u32 sidecar_build_id(struct worker *w, int fd, u8 *id)
{
	const struct sframe_unwind_sidecar *s = (const void *)w->out;
	struct sframe_unwind_query q = {
		.size = sizeof(q), .count = OUT_ROOM,
		.entries = (unsigned long)w->out,
	};
	struct stat st;
	unsigned int i;

	if (fstat(fd, &st))
		return 0;
	describe(w, "seq LIST_FILES");
	memset(w->out, CANARY, (OUT_ROOM + 1) * sizeof(*s));
	if (fz_ioctl(w, SFRAME_UNWIND_IOC_LIST_FILES, &q))
		return 0;
	check_out(w, OUT_ROOM, sizeof(*s), q.count, false);
	for (i = 0; i < q.count && i < OUT_ROOM; i++) {
		if (s[i].ino == st.st_ino && s[i].build_id_len) {
			memcpy(id, s[i].build_id, s[i].build_id_len);
			return s[i].build_id_len;
		}
	}
	return 0;
}

static void seq_files(struct worker *w)
{
	const struct fz_file *ff = &files[0];	/* the plain library */
	struct sframe_unwind_file f = {
		.size = sizeof(f), .fd = ff->fd, .sframe_vaddr = SIDECAR_VADDR,
		.sframe_ptr = (unsigned long)file_sec,
		.sframe_len = file_sec_len[0],
	};
	int err, want = w->priv ? 0 : EPERM;

	describe(w, "seq DEL_FILE %s (clean)", ff->name);
	err = fz_ioctl(w, SFRAME_UNWIND_IOC_DEL_FILE, &f);
	describe(w, "seq ADD_FILE %s", ff->name);
	err = fz_ioctl(w, SFRAME_UNWIND_IOC_ADD_FILE, &f);
	expect(w, err, want, "ADD_FILE of an ELF file");
	describe(w, "seq ADD_FILE %s again", ff->name);
	expect(w, fz_ioctl(w, SFRAME_UNWIND_IOC_ADD_FILE, &f),
	       w->priv ? EEXIST : EPERM, "ADD_FILE again");
	f.flags = SFRAME_UNWIND_REPLACE;
	f.sframe_ptr = (unsigned long)(file_sec + SEC_CAP);
	f.sframe_len = file_sec_len[1];
	describe(w, "seq ADD_FILE %s REPLACE", ff->name);
	expect(w, fz_ioctl(w, SFRAME_UNWIND_IOC_ADD_FILE, &f), want,
	       "ADD_FILE REPLACE");
	if (w->priv && one_in(w, 2)) {
		f.flags = SFRAME_UNWIND_BY_BUILD_ID;
		f.build_id_len = sidecar_build_id(w, ff->fd, f.build_id);
		if (f.build_id_len) {
			describe(w, "seq DEL_FILE by build-id");
			expect(w, fz_ioctl(w, SFRAME_UNWIND_IOC_DEL_FILE, &f),
			       0, "DEL_FILE by build-id");
		}
	}
	if (one_in(w, 4))
		return;		/* left registered */
	f.flags = 0;
	f.build_id_len = 0;
	describe(w, "seq DEL_FILE %s", ff->name);
	err = fz_ioctl(w, SFRAME_UNWIND_IOC_DEL_FILE, &f);
	if (w->strict && !w->priv)
		expect(w, err, EPERM, "DEL_FILE as nobody");
	describe(w, "seq DEL_FILE %s again", ff->name);
	expect(w, fz_ioctl(w, SFRAME_UNWIND_IOC_DEL_FILE, &f),
	       w->priv ? ENOENT : EPERM, "DEL_FILE again");
}

/* ---- forks */

static void run_ops(struct worker *w);

static void reap_kids(struct worker *w, bool all)
{
	unsigned int i;
	int status;
	pid_t got;

	for (i = 0; i < MAX_KIDS; i++) {
		if (!w->kids[i])
			continue;
		if (w->kid_fate[i] == FATE_KILL &&
		    (all || w->done > w->kid_born[i] + 8))
			kill(w->kids[i], SIGKILL);
		got = waitpid(w->kids[i], &status, all ? 0 : WNOHANG);
		if (got == 0)
			continue;
		if (got != w->kids[i]) {
			violation(w, "waitpid(%d): %s", w->kids[i],
				  strerror(errno));
		} else if (WIFSIGNALED(status) &&
			   !(w->kid_fate[i] == FATE_KILL &&
			     WTERMSIG(status) == SIGKILL)) {
			violation(w, "child %d died of signal %d", got,
				  WTERMSIG(status));
		} else if (WIFEXITED(status) && WEXITSTATUS(status)) {
			violation(w, "child %d exited %d", got,
				  WEXITSTATUS(status));
		}
		gone_pid = w->kids[i];
		w->kids[i] = 0;
	}
}

static void spawn_kid(struct worker *w)
{
	struct worker kid;
	unsigned int i;
	int fate = below(w, 3);
	pid_t pid;

	for (i = 0; i < MAX_KIDS && w->kids[i]; i++)
		;
	if (i == MAX_KIDS)
		return;
	kid = *w;
	kid.id = 100 + w->id * 1000 + (unsigned int)w->done % 1000;
	kid.rng = rnd(w);
	kid.strict = false;
	kid.may_fork = false;
	kid.budget = 1 + below(w, KID_OPS_MAX);
	memset(kid.kids, 0, sizeof(kid.kids));
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		*w = kid;
		run_ops(w);
		if (fate == FATE_EXEC)
			execve("/bin/true", (char *const []){ "true", NULL },
			       environ);
		_exit(0);
	}
	atomic_fetch_add(&sh->forks[w->phase], 1);
	w->kids[i] = pid;
	w->kid_fate[i] = fate;
	w->kid_born[i] = w->done;
}

/* ---- the loop */

static bool keep_going(struct worker *w)
{
	if (atomic_load(&sh->stop))
		return false;
	if (w->budget)
		return w->done < w->budget && !past(&deadline);
	if (atomic_load(&sh->ops[w->phase]) >= phase_ops[w->phase] ||
	    past(&deadline)) {
		atomic_store(&sh->stop, 1);
		return false;
	}
	return true;
}

static void run_ops(struct worker *w)
{
	while (keep_going(w)) {
		unsigned int pick = below(w, 100);

		if (pick < 16)
			op_add(w, false);
		else if (pick < 24)
			op_add(w, true);
		else if (pick < 32)
			op_file(w, false);
		else if (pick < 38)
			op_file(w, true);
		else if (pick < 50)
			op_query(w, false);
		else if (pick < 56)
			op_query(w, true);
		else if (pick < 74)
			op_random(w);
		else if (pick < 82)
			seq_jit(w);
		else if (pick < 85)
			seq_unmap(w);
		else if (pick < 90)
			seq_query(w);
		else if (pick < 94)
			seq_files(w);
		else if (w->may_fork && pick < 97)
			spawn_kid(w);
		if (w->may_fork)
			reap_kids(w, false);
	}
	if (w->may_fork)
		reap_kids(w, true);
}

static u8 *map_pages(size_t n, int prot)
{
	u8 *p = mmap(NULL, n * page, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	return p;
}

/*
 * Argument, output and scratch buffers (the first two followed by a
 * guard page), a signal stack, and the page seq_unmap() maps and
 * unmaps; in one mapping made before any thread runs, so that no mmap()
 * after set-up can take a hole the churn thread maps over.
 */
static void worker_init(struct worker *w, unsigned int phase, unsigned int id)
{
	u8 *p = map_pages(ARG_PAGES + 1 + 2 + 1 + 2 + ARG_PAGES +
			  ALTSTACK_PAGES + 1 + 1, PROT_READ | PROT_WRITE);

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->phase = phase;
	w->rng = seed ^ ((u64)(phase + 1) << 40) ^ ((u64)id << 20);
	w->priv = !phases[phase].unpriv;
	w->arg = p;
	w->out = p + (ARG_PAGES + 1) * page;
	w->scratch = w->out + 3 * page;
	w->stage = w->scratch + 2 * page;
	w->altstack = w->stage + ARG_PAGES * page;
	w->fresh = w->altstack + (ALTSTACK_PAGES + 1) * page;
	if (mprotect(w->arg + ARG_PAGES * page, page, PROT_NONE) ||
	    mprotect(w->out + 2 * page, page, PROT_NONE) ||
	    mprotect(w->fresh - page, 2 * page, PROT_NONE))
		ksft_exit_fail_perror("mprotect");
}

/* ---- racing helpers: churn the pages arguments point into */

static void fill_page(u8 *p, u64 r)
{
	unsigned int slot = r % NR_SLOTS, v = (r >> 8) & 1;

	memset(p, 0, page);
	/* A valid region at the start, a section after it. */
	region_for((struct sframe_unwind_region *)p, slot, v);
	memcpy(p + 256, pool_sec(slot, v), pool_len[slot][v]);
	memcpy(p + 512 * (1 + (r >> 9) % 4) + 256, ro + RO_QUERY,
	       sizeof(struct sframe_unwind_query));
}

static void read_listing(u8 *buf, size_t len)
{
	int fd = open(SFU_DBG_SECTIONS, O_RDONLY);

	if (fd < 0)
		return;
	while (read(fd, buf, len) > 0)
		;
	close(fd);
}

/* The worker of this thread, for the report of a fatal signal. */
static __thread struct worker *self;

/*
 * A fatal signal in a fuzzing process: say where and during which op,
 * with the process's mappings, and end it (the phase then fails).
 */
static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;
	unsigned long pc;
	char buf[1024];
	ssize_t n;
	int fd;

#if defined(__x86_64__)
	pc = uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	pc = uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
	pc = uc->uc_mcontext.pc;
#elif defined(__s390x__)
	pc = uc->uc_mcontext.psw.addr;
#else
	pc = 0;
	(void)uc;
#endif
	say("# FATAL signal %d (code %d) at %p, pc 0x%lx, pid %d tid %d, worker %d, op: %s\n",
	    sig, si->si_code, si->si_addr, pc, (int)getpid(), (int)gettid(),
	    self ? (int)self->id : -1, self ? self->what : "none");
	fd = open("/proc/self/maps", O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDOUT_FILENO, buf, n) != n)
			break;
	_exit(128 + sig);
}

/* Catch fatal signals in this thread, on @w's signal stack. */
static void catch_fatal(struct worker *w)
{
	struct sigaction sa = { .sa_sigaction = on_fatal };
	stack_t ss = {
		.ss_sp = w->altstack, .ss_size = ALTSTACK_PAGES * page,
	};

	self = w;
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
}

static void *churn_thread(void *arg)
{
	struct worker *w = arg;
	const struct fz_file *ff;
	struct stat st;
	unsigned int i;
	u8 *p;

	catch_fatal(w);
	describe(w, "churn");
	while (!atomic_load(&sh->stop) && !past(&deadline)) {
		i = below(w, CHURN_PAGES);
		p = churn + i * page;
		switch (below(w, 8)) {
		case 0:
			munmap(p, page);
			break;
		case 1:
			mprotect(p, page, PROT_READ);
			break;
		case 2:
			mprotect(p, page, PROT_NONE);
			break;
		case 3:
			/* An ELF file's pages, executable: registered. */
			ff = &files[below(w, 3)];
			if (fstat(ff->fd, &st) || st.st_size < page)
				break;
			mmap(p, page, PROT_READ | PROT_EXEC,
			     MAP_PRIVATE | MAP_FIXED, ff->fd,
			     below(w, st.st_size / page) * page);
			break;
		case 4:
			/* Rewrite the temporary ELF file in place. */
			if (pwrite(files[2].fd, files[0].name,
				   strlen(files[0].name),
				   below(w, 2) ? 0x3000 : 0x100) < 0)
				break;
			break;
		case 5:
			/* The listing, read while registrations change. */
			read_listing(w->scratch, 2 * page);
			break;
		default:
			p = mmap(p, page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (p != MAP_FAILED)
				fill_page(p, rnd(w));
			break;
		}
		if (one_in(w, 4))
			sched_yield();
	}
	return NULL;
}

static void *worker_thread(void *arg)
{
	catch_fatal(arg);
	run_ops(arg);
	return NULL;
}

/* One phase, in a process of its own; exits 0 unless set-up failed. */
static void run_phase(unsigned int phase)
{
	struct worker ws[NR_THREADS + 1];
	pthread_t th[NR_THREADS + 1];
	unsigned int i, n = phases[phase].race ? NR_THREADS : 1;

	if (phases[phase].unpriv &&
	    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))) {
		say("# setuid(%d): %s\n", NOBODY, strerror(errno));
		_exit(2);
	}
	for (i = 0; i < n; i++) {
		worker_init(&ws[i], phase, i);
		ws[i].strict = !phases[phase].race;
		ws[i].may_fork = phases[phase].race;
	}
	if (!phases[phase].race) {
		catch_fatal(&ws[0]);
		run_ops(&ws[0]);
		_exit(0);
	}
	worker_init(&ws[n], phase, n);
	for (i = 0; i <= n; i++)
		if (pthread_create(&th[i], NULL,
				   i < n ? worker_thread : churn_thread, &ws[i]))
			_exit(2);
	for (i = 0; i <= n; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

/* ---- set-up */

static void build_sections(void)
{
	struct sfu_test_func f[3];
	unsigned int s, v, i, nf;

	for (s = 0; s < NR_SLOTS; s++) {
		nf = 1 + s % 3;
		for (i = 0; i < nf; i++) {
			/* Unsorted for V3: the last one first. */
			f[i].start = slot_start(s) + (nf - 1 - i) * 0x100;
			f[i].size = 0x40 + i * 0x10;
		}
		for (v = 0; v < 2; v++) {
			u8 *buf = pool + (s * 2 + v) * SEC_CAP;

			pool_len[s][v] = enc_test_build(v ? SFRAME_VERSION_3 :
							SFRAME_VERSION_2,
							abi, v == 0 && nf == 1,
							f, nf,
							(unsigned long)buf,
							buf, SEC_CAP);
			if (pool_len[s][v] <= 0)
				ksft_exit_fail_msg("encoding slot %u v%u: %lld\n",
						   s, v,
						   (long long)pool_len[s][v]);
		}
	}
	f[0].start = SIDECAR_FUNC;
	f[0].size = 0x10;
	for (v = 0; v < 2; v++) {
		file_sec_len[v] = enc_test_build(v ? SFRAME_VERSION_3 :
						 SFRAME_VERSION_2, abi, true,
						 f, 1, SIDECAR_VADDR,
						 file_sec + v * SEC_CAP,
						 SEC_CAP);
		if (file_sec_len[v] <= 0)
			ksft_exit_fail_msg("encoding the sidecar section\n");
	}
}

static void add_file(const char *name, int fd, bool elf)
{
	if (nr_files == NR_FILES)
		ksft_exit_fail_msg("too many files\n");
	files[nr_files].name = name;
	files[nr_files].fd = fd;
	files[nr_files].elf = elf;
	nr_files++;
}

/* A copy of @src at @dst (or in a memfd if @dst is NULL); the fd. */
static int copy_file(const char *src, const char *dst)
{
	char buf[4096];
	int in = open(src, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		return -1;
	out = dst ? open(dst, O_RDWR | O_CREAT | O_TRUNC, 0644) :
		    memfd_create("ioctl_fuzz", 0);
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	close(in);
	return out;
}

static void open_files(bool sub)
{
	const char *tmp_elf = sub ? TMP_ELF "32" : TMP_ELF;
	const char *tmp_wo = sub ? TMP_WO "32" : TMP_WO;
	int p[2];

	/* The first three: ELF files the churn thread maps (see there). */
	add_file(PLAIN_LIB, open(PLAIN_LIB, O_RDONLY), true);
	add_file(SFRAME_LIB, open(SFRAME_LIB, O_RDONLY), true);
	add_file(tmp_elf, copy_file(PLAIN_LIB, tmp_elf), true);
	add_file("memfd", copy_file(PLAIN_LIB, NULL), true);
	add_file(SFU_PROG, open(SFU_PROG, O_RDONLY), true);
	add_file(TEXT_FILE, open(TEXT_FILE, O_RDONLY), false);
	add_file("/selftests", open("/selftests", O_RDONLY | O_DIRECTORY),
		 false);
	add_file("/dev/null", open("/dev/null", O_RDONLY), false);
	add_file(tmp_wo, open(tmp_wo, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		 false);
	add_file("O_PATH", open(PLAIN_LIB, O_PATH), false);
	add_file("device", dev, false);
	if (pipe(p))
		ksft_exit_fail_perror("pipe");
	add_file("pipe read end", p[0], false);
	add_file("pipe write end", p[1], false);
	closed_fd = open("/dev/null", O_RDONLY);
	close(closed_fd);
	add_file("closed fd", closed_fd, false);
	add_file("fd -1", -1, false);
	add_file("fd INT_MAX", INT_MAX, false);
	if (files[0].fd < 0 || files[1].fd < 0 || files[2].fd < 0 ||
	    files[3].fd < 0)
		ksft_exit_fail_msg("the test libraries: %s\n", strerror(errno));
}

static void fill_ro(void)
{
	struct sframe_unwind_region r;
	struct sframe_unwind_file f = {
		.size = sizeof(f), .fd = files[0].fd,
		.sframe_vaddr = SIDECAR_VADDR,
		.sframe_ptr = (unsigned long)file_sec,
		.sframe_len = file_sec_len[0],
	};
	struct sframe_unwind_query q = {
		.size = sizeof(q), .count = 4,
		.entries = (unsigned long)shared_out,
	};

	region_for(&r, NR_SLOTS - 1, 0);
	memcpy(ro + RO_REGION, &r, sizeof(r));
	memcpy(ro + RO_FILE, &f, sizeof(f));
	memcpy(ro + RO_QUERY, &q, sizeof(q));
	memcpy(ro + RO_LIST, &q, sizeof(q));
	if (mprotect(ro, page, PROT_READ))
		ksft_exit_fail_perror("mprotect");
}

/* @sub: the 32-bit run, whose temporary files get names of their own. */
static void setup(bool sub)
{
	u8 *p;

	/* Text, then the sections: V2 needs them within 2 GiB. */
	p = map_pages(NR_SLOTS + 1 + NR_SLOTS * 2 * SEC_CAP / page + 2 + 1,
		      PROT_READ | PROT_WRITE);
	text = p;
	if (mprotect(text, (NR_SLOTS + 1) * page, PROT_READ | PROT_EXEC))
		ksft_exit_fail_perror("mprotect");
	pool = text + (NR_SLOTS + 1) * page;
	file_sec = pool + NR_SLOTS * 2 * SEC_CAP;
	shared_out = file_sec + 2 * SEC_CAP;
	build_sections();
	ro = map_pages(1, PROT_READ | PROT_WRITE);
	guard = map_pages(1, PROT_NONE);
	unmapped = map_pages(1, PROT_NONE);
	munmap(unmapped, page);
	churn = map_pages(CHURN_PAGES, PROT_READ | PROT_WRITE);
	for (p = churn; p < churn + CHURN_PAGES * page; p += page)
		fill_page(p, p - churn);
	open_files(sub);
	fill_ro();
	gone_pid = fork();
	if (gone_pid == 0)
		_exit(0);
	if (gone_pid < 0 || waitpid(gone_pid, NULL, 0) != gone_pid)
		ksft_exit_fail_perror("fork");
}

/* ---- the module's counters, sidecars, reload */

static int read_counters(unsigned long long *v)
{
	unsigned int i;

	for (i = 0; i < NR_COUNTERS; i++)
		if (reg_stat(counter_names[i], &v[i]))
			return -1;
	return 0;
}

static bool counters_back(const unsigned long long *base,
			  unsigned long long *v)
{
	unsigned int i;

	if (read_counters(v))
		return false;
	for (i = 0; i < NR_COUNTERS; i++)
		if (v[i] != base[i])
			return false;
	return true;
}

/* Drop every sidecar the run may have left, by the fds it used. */
static void drop_sidecars(void)
{
	struct sframe_unwind_file f = { .size = sizeof(f) };
	unsigned int i, n;

	for (i = 0; i < nr_files; i++) {
		if (!files[i].elf)
			continue;
		f.fd = files[i].fd;
		for (n = 0; n < 4 && !ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, &f);
		     n++)
			;
	}
}

static bool param_set(const char *name)
{
	char path[128], val[8] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), SFU_PARAM_DIR "/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, val, sizeof(val) - 1);
	close(fd);
	return n > 0 && val[0] == 'Y';
}

static void test_reload(void)
{
	const char *params = param_set("test_hooks") ? "test_hooks=1" : "";
	struct sframe_unwind_query q = { .size = sizeof(q) };
	long ret;
	int ko, i, err = 0;

	if (access(MODULE_KO, R_OK)) {
		ksft_test_result_skip("reload: no %s\n", MODULE_KO);
		return;
	}
	ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK);
	ksft_test_result(ret == -1 && (errno == EWOULDBLOCK || errno == EBUSY),
			 "rmmod while the device is open: refused (%s)\n",
			 ret ? reg_err_name(errno) : "success");
	if (!ret)
		return;
	for (i = 0; i < nr_files; i++)
		if (files[i].fd >= 0 && files[i].fd != closed_fd &&
		    files[i].fd != INT_MAX)
			close(files[i].fd);
	dev = -1;
	for (i = 0; i < 50; i++) {
		ret = syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK);
		err = ret ? errno : 0;
		if (!ret || (err != EWOULDBLOCK && err != EBUSY))
			break;
		sleep_ms(100);
	}
	ksft_test_result(!ret, "rmmod once it is closed: %s\n",
			 reg_err_name(err));
	ko = open(MODULE_KO, O_RDONLY | O_CLOEXEC);
	ret = syscall(SYS_finit_module, ko, params, 0);
	err = ret ? errno : 0;
	close(ko);
	ksft_test_result(!ret, "insmod %s %s: %s\n", MODULE_KO, params,
			 reg_err_name(err));
	for (i = 0; i < 50 && dev < 0; i++) {
		dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);
		if (dev < 0)
			sleep_ms(100);
	}
	err = dev < 0 ? errno : ioctl(dev, SFRAME_UNWIND_IOC_QUERY, &q) ?
			errno : 0;
	ksft_test_result(!err, "after the reload the device answers QUERY: %s\n",
			 reg_err_name(err));
	ksft_test_result(!params[0] || param_set("test_hooks"),
			 "reloaded with the parameters it had (%s)\n",
			 params[0] ? params : "none");
	if (dev >= 0)
		close(dev);
}

static u64 env_or(const char *name, u64 def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static void bad_args(const char *prog)
{
	fprintf(stderr, "Usage: %s [-s SEED] [-n OPS] [-t SECONDS]\n", prog);
	exit(2);
}

/* What each command answered, over every phase. */
static void print_answers(void)
{
	static const char *const names[] = {
		"unknown", "ADD", "DEL", "ADD_FILE", "DEL_FILE", "QUERY",
		"LIST_FILES", "LISTEN",
	};
	unsigned int nr, e;
	char line[512];
	size_t at;

	_Static_assert(ARRAY_SIZE(names) == NR_MAGIC_CMDS + 1,
		       "a name for every command");
	for (nr = 0; nr <= NR_MAGIC_CMDS; nr++) {
		at = snprintf(line, sizeof(line), "%s:", names[nr]);
		for (e = 0; e <= MAX_ERRNO && at < sizeof(line); e++) {
			unsigned long n = atomic_load(&sh->answers[nr][e]);

			if (n)
				at += snprintf(line + at, sizeof(line) - at,
					       " %s %lu", reg_err_name(e), n);
		}
		ksft_print_msg("%s\n", line);
	}
}

/*
 * Run the phases, each in a process of its own.  As the main program
 * (@sub false) one TAP line each; as the 32-bit program run by it, comment
 * lines.  Returns whether all went well.
 */
static bool run_phases(u64 total_ops, u64 seconds, bool sub)
{
	struct timespec start, end;
	unsigned int i;
	bool all_ok = true;
	int status;
	pid_t pid;

	for (i = 0; i < NR_PHASES; i++) {
		unsigned long before = atomic_load(&sh->violations);
		u64 ms = seconds * 1000 * phases[i].weight / 100;
		double took;
		bool ok;

		phase_ops[i] = total_ops * phases[i].weight / 100;
		now(&start);
		deadline = start;
		deadline.tv_sec += ms / 1000;
		deadline.tv_nsec += (ms % 1000) * 1000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		atomic_store(&sh->stop, 0);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			run_phase(i);
		status = -1;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			ksft_exit_fail_perror("fork");
		now(&end);
		took = end.tv_sec - start.tv_sec +
		       (end.tv_nsec - start.tv_nsec) / 1e9;
		ok = WIFEXITED(status) && !WEXITSTATUS(status) &&
		     atomic_load(&sh->violations) == before;
		all_ok = all_ok && ok;
		if (sub)
			ksft_print_msg("%s %s (32-bit): %lu ops (%lu succeeded) in %.1f s, %lu forks, %lu violations, exit status 0x%x\n",
				       ok ? "ok" : "FAILED", phases[i].name,
				       atomic_load(&sh->ops[i]),
				       atomic_load(&sh->ok[i]), took,
				       atomic_load(&sh->forks[i]),
				       atomic_load(&sh->violations) - before,
				       status);
		else
			ksft_test_result(ok, "%s: %lu ops (%lu succeeded) in %.1f s, %lu forks, %lu violations, exit status 0x%x\n",
					 phases[i].name,
					 atomic_load(&sh->ops[i]),
					 atomic_load(&sh->ok[i]), took,
					 atomic_load(&sh->forks[i]),
					 atomic_load(&sh->violations) - before,
					 status);
	}
	drop_sidecars();
	return all_ok;
}

/*
 * The same phases from a 32-bit process, where there is a build of this
 * program for one: through compat_ioctl, with pointers in the structs
 * that a 32-bit process cannot have.
 */
static void run_compat(u64 total_ops, u64 seconds)
{
	char s[24], n[24], t[24];
	struct timespec start, end;
	int status = -1;
	pid_t pid;

	if (access(COMPAT_PROG, X_OK)) {
		ksft_test_result_skip("32-bit callers (compat_ioctl): no %s\n",
				      COMPAT_PROG);
		return;
	}
	snprintf(s, sizeof(s), "0x%llx", (unsigned long long)seed);
	snprintf(n, sizeof(n), "%llu", (unsigned long long)total_ops);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)seconds);
	now(&start);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl(COMPAT_PROG, COMPAT_PROG, "-c", "-s", s, "-n", n, "-t",
		      t, (char *)NULL);
		_exit(errno == ENOEXEC ? EXIT_NOEXEC : EXIT_NOEXEC + 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_perror("fork");
	now(&end);
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NOEXEC) {
		ksft_test_result_skip("32-bit callers (compat_ioctl): this kernel runs no 32-bit programs (no IA32_EMULATION)\n");
		return;
	}
	ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status),
			 "32-bit callers (compat_ioctl), the four phases: %llu ops at most, %.1f s, exit status 0x%x\n",
			 (unsigned long long)total_ops,
			 end.tv_sec - start.tv_sec +
			 (end.tv_nsec - start.tv_nsec) / 1e9, status);
}

int main(int argc, char **argv)
{
	unsigned long long base[NR_COUNTERS], after[NR_COUNTERS];
	u64 total_ops, seconds;
	struct timespec start;
	unsigned int i, waited;
	bool back, sub = false;
	int opt;

	seed = env_or("SFU_FUZZ_SEED", 0);
	total_ops = env_or("SFU_FUZZ_OPS", DEF_OPS);
	seconds = env_or("SFU_FUZZ_SECONDS", DEF_SECONDS);
	while ((opt = getopt(argc, argv, "cs:n:t:")) != -1) {
		switch (opt) {
		case 'c':
			sub = true;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			total_ops = strtoull(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtoull(optarg, NULL, 0);
			break;
		default:
			bad_args(argv[0]);
		}
	}
	if (!seed) {
		now(&start);
		seed = ((u64)start.tv_nsec << 32) ^ start.tv_sec ^ getpid();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!sub)
		ksft_print_header();
	page = sysconf(_SC_PAGESIZE);
	abi = FUZZ_ABI;
	main_pid = getpid();
	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR);
	if (dev < 0) {
		if (access("/sys/module/" MODULE_NAME, F_OK))
			ksft_exit_skip("the sframe_unwind module is not loaded\n");
		ksft_exit_fail_msg("open %s: %s\n", SFRAME_UNWIND_DEVICE,
				   strerror(errno));
	}
	if (geteuid())
		ksft_exit_skip("needs root (it also runs as nobody itself)\n");
	if (!sub && read_counters(base))
		ksft_exit_fail_msg("%s: no memory counters\n", SFU_DBG_STATS);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	setup(sub);
	if (sub) {
		back = run_phases(total_ops, seconds, true);
		unlink(TMP_ELF "32");
		unlink(TMP_WO "32");
		exit(back ? 0 : 1);
	}
	ksft_print_msg("seed 0x%llx (SFU_FUZZ_SEED=0x%llx or -s to replay), %llu ops, %llu s\n",
		       (unsigned long long)seed, (unsigned long long)seed,
		       (unsigned long long)total_ops,
		       (unsigned long long)seconds);
	run_phases(total_ops, seconds, false);
	print_answers();
	run_compat(total_ops * COMPAT_PERCENT / 100,
		   seconds * COMPAT_PERCENT / 100);

	for (waited = 0; waited < STATS_WAIT_MS; waited += 100) {
		back = counters_back(base, after);
		if (back)
			break;
		sleep_ms(100);
	}
	for (i = 0; i < NR_COUNTERS; i++)
		ksft_print_msg("%s: %llu before, %llu after\n",
			       counter_names[i], base[i], after[i]);
	ksft_test_result(back,
			 "the memory counters are back to their baseline (after %.1f s)\n",
			 waited / 1000.0);
	unlink(TMP_ELF);
	unlink(TMP_WO);
	test_reload();
	ksft_set_plan(ksft_test_num());
	ksft_finished();
}
