// SPDX-License-Identifier: GPL-2.0
/*
 * A known call chain, walked by the module from inside it.
 *
 * main -> uw_test -> uw_run -> uw_c1 -> uw_rec (recursing UW_REC_DEPTH
 * times) -> uw_big (a large stack frame) -> uwl_call (in libsfu_uw.so) ->
 * uw_alloca (a frame of run-time size) -> uw_realign (a 64-byte aligned
 * local: the stack is realigned, with a frame pointer) -> uw_c7 -> uw_c8
 * -> uw_hook, which issues the request to the test hook with an inline
 * system call; and a second chain, main -> uw_test -> uw_run -> uw_d1 ->
 * uw_drap -> uw_d2 -> uw_hook, whose uw_drap both realigns the stack and
 * allocates a run-time sized array.  On x86-64 that takes a DRAP register
 * (%r10), which gas 2.40 cannot describe in SFrame: it leaves the function
 * out, and the walker has to step it with its fallback.  A third chain,
 * main -> uw_test -> uw_run -> uw_l1 -> uw_leaf, has the request issued by
 * a leaf, which on arm64 and s390x keeps its return address in a register
 * and has no frame of its own (caller's SP == its SP).
 *
 * Every request (sync fault, deferred, sync) must give exactly these
 * functions from uw_hook up to main; what lies beyond main (the C
 * library, without SFrame) is printed, not checked.
 *
 * Usage: unwind_chain [sframe|fp|nofp]
 *   sframe  built with SFrame (default): the chains must be exact
 *           (unwind_chain_gen: with tools/sframe-gen/sframe-gen's, see below)
 *   fp      built with frame pointers (s390x: the back chain), without
 *           SFrame: exact, every step by the fallback (fallback > 0,
 *           sframe == 0)
 *   nofp    built with neither: the walk must end cleanly; only frame 0
 *           is checked
 *
 * The SFrame comes from gas's --gsframe (V1 with binutils 2.40), on s390x
 * from selftests/unwind/s390x-sframe-cfi.sh (V2), or, in unwind_chain_gen
 * and libsfu_uw_gen.so (built with -DUW_SFRAME_GEN), from `scripts/
 * sframe-gen --embed`, which derives V3 sections from .eh_frame and adds
 * them after the link.  Each sframe-mode result names the source and the
 * version the program's PT_GNU_SFRAME holds.  sframe-gen describes the
 * DRAP frame with V3 flexible FDEs, so there the chains through uw_drap
 * must be exact on every architecture.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sframe/format.h>

#include "kselftest.h"
#include "uw.h"
#include "uwlib.h"

#define UW_REC_DEPTH	4
#define UW_BIG_FRAME	(16 * 1024)
#define UW_ALIGN	64
#define UW_LOOKUP	UW_DBG_DIR "/lookup"

#define UW_SFRAME_VERSION_OFF	offsetof(struct sframe_preamble, sfp_version)
#define UW_GEN_VERSION		3

/* Where this build's SFrame comes from (see above). */
#if defined(UW_SFRAME_GEN)
#define UW_GEN		1
#define UW_SFRAME_SRC	"sframe-gen"
#elif defined(__s390x__)
#define UW_GEN		0
#define UW_SFRAME_SRC	"s390x CFI script"
#else
#define UW_GEN		0
#define UW_SFRAME_SRC	"gas"
#endif

enum uw_mode { UW_SFRAME, UW_FP, UW_NOFP };

static const char *const uw_mode_names[] = { "sframe", "fp", "nofp" };

/* Where a chain's result goes, so that the calls are not optimised away. */
long uw_sink;

/*
 * The innermost function: frame 0 is its system call instruction.  It is
 * not a leaf (the call to uw_nop() makes it keep a frame) because the
 * fallback builds need it: gcc gives a leaf that needs no stack no frame
 * record (x86-64 even with -mno-omit-leaf-frame-pointer) nor, on s390x, a
 * back chain slot, so a fallback walk could not find its caller.  Frame 0
 * in a leaf is covered by unwind_async and unwind_signal.
 */
__attribute__((noipa)) void uw_hook(void)
{
	long ret = uw_raw_write(uw_fd, uw_req, uw_req_len);

	uw_nop();
	uw_req_ret = ret;
}

__attribute__((noipa)) long uw_c8(long x)
{
	uw_hook();
	x = uw_opaque(x);
	return x + 1;
}

__attribute__((noipa)) long uw_c7(long x)
{
	long r = uw_c8(x + 1);

	r = uw_opaque(r);
	return r + 1;
}

__attribute__((noipa)) long uw_realign(long x)
{
	char buf[UW_ALIGN] __attribute__((aligned(UW_ALIGN)));
	long r;

	buf[0] = x;
	buf[1] = x;
	uw_escape(buf);
	r = uw_c7(x + buf[0]);
	r = uw_opaque(r);
	return r + buf[1];
}

__attribute__((noipa)) long uw_alloca(long x)
{
	char *p = __builtin_alloca(16 + (x & 0xff));
	long r;

	p[0] = x;
	uw_escape(p);
	r = uw_realign(x + 1);
	r = uw_opaque(r);
	return r + p[0];
}

__attribute__((noipa)) long uw_big(long x)
{
	char buf[UW_BIG_FRAME];
	long r;

	buf[0] = x;
	buf[UW_BIG_FRAME - 1] = x;
	uw_escape(buf);
	r = uwl_call(uw_alloca, x);
	r = uw_opaque(r);
	return r + buf[UW_BIG_FRAME - 1];
}

__attribute__((noipa)) long uw_rec(long n, long x)
{
	long r;

	if (n > 0)
		r = uw_rec(n - 1, x + 1);
	else
		r = uw_big(x);
	r = uw_opaque(r);
	return r + 1;
}

__attribute__((noipa)) long uw_c1(long x)
{
	long r = uw_rec(UW_REC_DEPTH, x);

	r = uw_opaque(r);
	return r + 1;
}

__attribute__((noipa)) long uw_d2(long x)
{
	uw_hook();
	x = uw_opaque(x);
	return x + 1;
}

__attribute__((noipa)) long uw_drap(long x)
{
	char buf[UW_ALIGN] __attribute__((aligned(UW_ALIGN)));
	char *p = __builtin_alloca(16 + (x & 0xff));
	long r;

	buf[0] = x;
	p[0] = x;
	uw_escape(buf);
	uw_escape(p);
	r = uw_d2(x + buf[0]);
	r = uw_opaque(r);
	return r + p[0];
}

__attribute__((noipa)) long uw_d1(long x)
{
	long r = uw_drap(x + 1);

	r = uw_opaque(r);
	return r + 1;
}

/* A leaf: its return address is still in the link register (arm64, s390x). */
__attribute__((noipa)) void uw_leaf(void)
{
	uw_req_ret = uw_raw_write(uw_fd, uw_req, uw_req_len);
}

__attribute__((noipa)) long uw_l1(long x)
{
	uw_leaf();
	x = uw_opaque(x);
	return x + 1;
}

static const char *const uw_main_chain[] = {
	"uw_hook", "uw_c8", "uw_c7", "uw_realign", "uw_alloca", "uwl_call",
	"uw_big", "uw_rec", "uw_rec", "uw_rec", "uw_rec", "uw_rec", "uw_c1",
	"uw_run", "uw_test", "main",
};

static const char *const uw_drap_chain[] = {
	"uw_hook", "uw_d2", "uw_drap", "uw_d1", "uw_run", "uw_test", "main",
};

static const char *const uw_leaf_chain[] = {
	"uw_leaf", "uw_l1", "uw_run", "uw_test", "main",
};

/* The frames of uw_drap_chain up to uw_drap itself. */
#define UW_DRAP_INNER	3

struct uw_chain {
	const char *name;
	long (*run)(long x);
	const char *const *want;
	unsigned int nr;
};

static const struct uw_chain uw_chains[] = {
	{ "main chain", uw_c1, uw_main_chain, ARRAY_SIZE(uw_main_chain) },
	{ "realign+alloca chain", uw_d1, uw_drap_chain,
	  ARRAY_SIZE(uw_drap_chain) },
	{ "leaf chain", uw_l1, uw_leaf_chain, ARRAY_SIZE(uw_leaf_chain) },
};

static const char *const uw_requests[] = { "sync fault", "deferred", "sync" };

/* Whether uw_drap has SFrame (the lookup file gives a rule for it). */
static bool uw_drap_sframe;

/* What the results call the mode: "sframe, gas V1", "fp", ... */
static char uw_label[64];

/*
 * The SFrame versions in the program's and in libsfu_uw*.so's
 * PT_GNU_SFRAME, -1 where there is none (or no valid header).
 */
struct uw_versions {
	unsigned int objs;
	int prog;
	int lib;
};

/* Issue @req from the innermost function of @c; one walk expected. */
__attribute__((noipa)) int uw_run(const struct uw_chain *c, const char *req,
				  struct uw_walk *w)
{
	struct uw_walk walks[2];
	int n;

	uw_req = req;
	uw_req_len = strlen(req);
	uw_sink = c->run(0);
	if (uw_req_ret != (long)uw_req_len) {
		ksft_print_msg("%s: write(\"%s\") returned %ld\n", c->name, req,
			       uw_req_ret);
		return -1;
	}
	n = uw_read(uw_fd, walks, ARRAY_SIZE(walks));
	if (n != 1) {
		ksft_print_msg("%s: \"%s\" gave %d walks, not 1\n", c->name,
			       req, n);
		return -1;
	}
	*w = walks[0];
	return 0;
}

/*
 * sync walks have cookie 0 and no consumer, deferred ones consumer 0.
 * Frames stepped by a rule table are among those stepped with SFrame,
 * and this program's own frames are: its section is a file's.
 */
static bool uw_header_ok(const char *req, const struct uw_walk *w)
{
	if (w->table > w->sframe || (w->sframe && !w->table))
		return false;
	if (!strcmp(req, "deferred"))
		return w->cookie && w->consumer == 0;
	return !w->cookie && w->consumer == -1;
}

/*
 * On x86-64 uw_drap realigns the stack through a DRAP register, which gas
 * 2.40 cannot put in SFrame (it leaves the function out).  The walker then
 * steps uw_drap with its frame-pointer fallback, which takes FP + 16 as
 * the caller's SP; for a realigned frame that is not where the caller's
 * frame is, so the frames after uw_drap are wrong.  Known, if uw_drap has
 * no SFrame and the frames up to it are right; never in the sframe-gen
 * build, whose V3 sections describe DRAP (CFA = *(rbp - 8)).
 */
static bool uw_drap_known(const struct uw_chain *c, const struct uw_walk *w)
{
	return !UW_GEN && c->want == uw_drap_chain && !uw_drap_sframe &&
	       uw_chain_is(w, 0, c->want, UW_DRAP_INNER);
}

__attribute__((noipa)) void uw_test(enum uw_mode mode,
				    const struct uw_chain *c, const char *req)
{
	const char *mname = uw_label;
	struct uw_walk w;
	bool ok;

	if (mode == UW_FP && c->want == uw_leaf_chain) {
		ksft_test_result_skip("%s: %s: %s: a frame-pointer walk cannot find a leaf's caller\n",
				      mname, c->name, req);
		return;
	}
	if (uw_run(c, req, &w)) {
		ksft_test_result_fail("%s: %s: %s: no walk\n", mname, c->name,
				      req);
		return;
	}
	uw_print_chain(req, &w);
	ok = uw_header_ok(req, &w);
	switch (mode) {
	case UW_SFRAME:
		ok = ok && uw_chain_is(&w, 0, c->want, c->nr) && w.sframe;
		/* sframe-gen leaves no function of the chain out. */
		if (UW_GEN && c->want == uw_drap_chain && !uw_drap_sframe) {
			ksft_print_msg("uw_drap has no SFrame rule\n");
			ok = false;
		}
		break;
	case UW_FP:
		ok = ok && uw_chain_is(&w, 0, c->want, c->nr) &&
		     w.fallback && !w.sframe;
		break;
	case UW_NOFP:
		ok = ok && w.nr >= 1 && uw_chain_is(&w, 0, c->want, 1);
		break;
	}
	if (!ok)
		uw_print_walk(req, &w);
	if (!ok && mode == UW_SFRAME && uw_header_ok(req, &w) &&
	    uw_drap_known(c, &w)) {
		ksft_test_result_xfail("%s: %s: %s: exact up to uw_drap, which has no SFrame; the fallback cannot step a realigned frame\n",
				       mname, c->name, req);
		return;
	}
	if (mode == UW_NOFP)
		ksft_test_result(ok, "%s: %s: %s: ends cleanly after %u frames (stop=%s), frame 0 in uw_hook\n",
				 mname, c->name, req, w.nr, w.stop);
	else
		ksft_test_result(ok, "%s: %s: %s: %u frames up to main exact (sframe=%u fallback=%u signal=%u, %u frames, stop=%s)\n",
				 mname, c->name, req, c->nr, w.sframe,
				 w.fallback, w.signal, w.nr, w.stop);
}

/*
 * What the module's lookup file says about the start of a function: true
 * if it has an SFrame rule there.
 */
static bool uw_show_rule(const char *name, unsigned long pc)
{
	bool rule = false;
	char out[256];
	ssize_t got;
	int fd;

	fd = open(UW_LOOKUP, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	snprintf(out, sizeof(out), "0x%lx", pc);
	if (write(fd, out, strlen(out)) > 0) {
		got = pread(fd, out, sizeof(out) - 1, 0);
		if (got > 0) {
			out[got] = '\0';
			out[strcspn(out, "\n")] = '\0';
			ksft_print_msg("SFrame rule at %s: %s\n", name, out);
			rule = strstr(out, ": cfa=");
		}
	}
	close(fd);
	return rule;
}

/* dl_iterate_phdr(): the first object is the program itself. */
static int uw_phdr_version(struct dl_phdr_info *info, size_t size, void *data)
{
	struct uw_versions *v = data;
	const unsigned char *sec;
	unsigned short magic;
	int *slot = NULL;
	unsigned int i;

	if (!v->objs++)
		slot = &v->prog;
	else if (info->dlpi_name && strstr(info->dlpi_name, "/libsfu_uw"))
		slot = &v->lib;
	if (!slot)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != SFRAME_PT_GNU_SFRAME ||
		    info->dlpi_phdr[i].p_memsz <= UW_SFRAME_VERSION_OFF)
			continue;
		sec = (const unsigned char *)(info->dlpi_addr +
					      info->dlpi_phdr[i].p_vaddr);
		memcpy(&magic, sec, sizeof(magic));
		if (magic == SFRAME_MAGIC)
			*slot = sec[UW_SFRAME_VERSION_OFF];
	}
	return 0;
}

/*
 * Name the sframe mode after its SFrame source and version; the sframe-gen
 * build must have V3 in the program and in the library.
 */
static void uw_set_label(enum uw_mode mode)
{
	struct uw_versions v = { .prog = -1, .lib = -1 };

	if (mode != UW_SFRAME) {
		snprintf(uw_label, sizeof(uw_label), "%s", uw_mode_names[mode]);
		return;
	}
	dl_iterate_phdr(uw_phdr_version, &v);
	ksft_print_msg("SFrame from %s: program V%d, libsfu_uw V%d (-1: none)\n",
		       UW_SFRAME_SRC, v.prog, v.lib);
	if (v.prog < 0 || v.lib < 0)
		ksft_exit_fail_msg("the program or libsfu_uw has no PT_GNU_SFRAME\n");
	if (UW_GEN && (v.prog != UW_GEN_VERSION || v.lib != UW_GEN_VERSION))
		ksft_exit_fail_msg("sframe-gen build without V%d sections\n",
				   UW_GEN_VERSION);
	snprintf(uw_label, sizeof(uw_label), "%s, %s V%d",
		 uw_mode_names[mode], UW_SFRAME_SRC, v.prog);
}

int main(int argc, char **argv)
{
	enum uw_mode mode = UW_SFRAME;
	struct uw_walk w;
	unsigned int i, j;

	if (argc > 1) {
		for (i = 0; i < ARRAY_SIZE(uw_mode_names); i++)
			if (!strcmp(argv[1], uw_mode_names[i]))
				mode = i;
		if (strcmp(argv[1], uw_mode_names[mode]))
			ksft_exit_fail_msg("usage: %s [sframe|fp|nofp]\n",
					   argv[0]);
	}
	ksft_print_header();
	if (!uw_hook_present())
		ksft_exit_skip("no %s: the module is not loaded\n", UW_HOOK);
	uw_fd = uw_open();
	if (uw_fd < 0)
		ksft_exit_fail_perror(UW_HOOK);
	ksft_set_plan(ARRAY_SIZE(uw_chains) * ARRAY_SIZE(uw_requests));
	uw_set_label(mode);
	ksft_print_msg("mode %s, pid %d\n", uw_label, getpid());
	uw_show_rule("uw_realign", (unsigned long)uw_realign);
	uw_drap_sframe = uw_show_rule("uw_drap", (unsigned long)uw_drap);

	/*
	 * A first non-faulting walk, before anything has touched the
	 * .sframe pages: it may stop with "fault", which is not an error.
	 */
	if (!uw_run(&uw_chains[0], "sync", &w))
		uw_print_chain("first sync, not checked", &w);

	for (i = 0; i < ARRAY_SIZE(uw_chains); i++)
		for (j = 0; j < ARRAY_SIZE(uw_requests); j++)
			uw_test(mode, &uw_chains[i], uw_requests[j]);
	close(uw_fd);
	ksft_finished();
}
