// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_park PARKED RELEASE: park a stack walk in a page fault.
 *
 * The main thread spins in park_spin(), a function whose SFrame rule puts
 * the frame's CFA at the frame pointer, and whose frame pointer points
 * into a page registered with userfaultfd and never touched.  A walk of
 * its stack that may fault (the kernel's deferred user stacks, perf's
 * --call-graph fp,defer, redirected to the module) reads the return
 * address there and sleeps in the fault until this program answers it.
 *
 * The handler thread answers the first fault only once RELEASE exists,
 * and creates PARKED when that fault has come in.  Then it fills the page
 * with zeros (the walk reads a zero return address and stops), stops the
 * spinner and the program exits 0.  It gives up after a bound and exits 1
 * if no fault came; with no frame for this architecture it exits 4 (skip).
 * Must run as root: a fault taken in the kernel comes to userfaultfd only
 * for a privileged caller.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PARK_SKIP		4
/* How long to wait for the fault, and for RELEASE, in milliseconds. */
#define PARK_FAULT_MS		(120 * 1000)
#define PARK_RELEASE_MS		(300 * 1000)
#define PARK_POLL_MS		20
/* Where in the page the frame pointer points: a frame record's room. */
#define PARK_FP_OFFSET		64

#if defined(__x86_64__) || defined(__aarch64__)
void park_spin(void *fp, const int *stop);

/*
 * park_spin(fp, stop): a frame whose CFA is fp + 16 while it waits for
 * *stop, with the return address at fp + 8 and the caller's frame
 * pointer at fp, as the CFI says: what a walk by SFrame reads there.
 */
#ifdef __x86_64__
asm(".text\n"
	".globl park_spin\n"
	".type park_spin, @function\n"
	"park_spin:\n"
	".cfi_startproc\n"
	"	pushq	%rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	movq	%rdi, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"1:	pause\n"
	"	cmpl	$0, (%rsi)\n"
	"	je	1b\n"
	".cfi_def_cfa %rsp, 16\n"
	"	popq	%rbp\n"
	".cfi_def_cfa_offset 8\n"
	".cfi_restore %rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size park_spin, .-park_spin\n");
#else
asm(".text\n"
	".globl park_spin\n"
	".type park_spin, %function\n"
	"park_spin:\n"
	".cfi_startproc\n"
	"	stp	x29, x30, [sp, -16]!\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset x29, -16\n"
	".cfi_offset x30, -8\n"
	"	mov	x29, x0\n"
	".cfi_def_cfa x29, 16\n"
	"1:	ldr	w2, [x1]\n"
	"	cbz	w2, 1b\n"
	".cfi_def_cfa sp, 16\n"
	"	ldp	x29, x30, [sp], 16\n"
	".cfi_def_cfa_offset 0\n"
	".cfi_restore x29\n"
	".cfi_restore x30\n"
	"	ret\n"
	".cfi_endproc\n"
	".size park_spin, .-park_spin\n");
#endif

struct park {
	int uffd;
	char *page;
	size_t page_size;
	const char *parked;
	const char *release;
	int stop;		/* read by park_spin() */
	int rc;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first fault on the page, within PARK_FAULT_MS; 0 if it came. */
static int park_await_fault(struct park *p)
{
	struct pollfd pfd = { .fd = p->uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, PARK_FAULT_MS) != 1) {
		fprintf(stderr, "unwind_park: no fault on the page\n");
		return -1;
	}
	if (read(p->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		fprintf(stderr, "unwind_park: not a page fault event\n");
		return -1;
	}
	printf("parked: a read at %#llx waits\n",
	       (unsigned long long)msg.arg.pagefault.address);
	fflush(stdout);
	return 0;
}

static void park_await_release(const struct park *p)
{
	long end = now_ms() + PARK_RELEASE_MS;

	while (access(p->release, F_OK) && now_ms() < end)
		usleep(PARK_POLL_MS * 1000);
}

static int park_touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	return close(fd);
}

static void *park_handler(void *arg)
{
	struct park *p = arg;
	struct uffdio_zeropage zero = {
		.range = { .start = (uintptr_t)p->page, .len = p->page_size },
	};

	p->rc = park_await_fault(p);
	if (!p->rc) {
		if (park_touch(p->parked))
			p->rc = -1;
		park_await_release(p);
	}
	if (ioctl(p->uffd, UFFDIO_ZEROPAGE, &zero) && errno != EEXIST) {
		perror("UFFDIO_ZEROPAGE");
		p->rc = -1;
	}
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int park_setup(struct park *p)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	p->page_size = sysconf(_SC_PAGESIZE);
	p->uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (p->uffd < 0) {
		perror("userfaultfd");
		return -1;
	}
	if (ioctl(p->uffd, UFFDIO_API, &api)) {
		perror("UFFDIO_API");
		return -1;
	}
	p->page = mmap(NULL, p->page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->page == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	reg.range.start = (uintptr_t)p->page;
	reg.range.len = p->page_size;
	if (ioctl(p->uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct park p = { 0 };
	pthread_t handler;

	if (argc != 3) {
		fprintf(stderr, "usage: unwind_park PARKED RELEASE\n");
		return 2;
	}
	p.parked = argv[1];
	p.release = argv[2];
	if (park_setup(&p))
		return 1;
	if (pthread_create(&handler, NULL, park_handler, &p)) {
		fprintf(stderr, "unwind_park: no handler thread\n");
		return 1;
	}
	printf("spinning with the frame pointer at %p\n",
	       (void *)(p.page + PARK_FP_OFFSET));
	fflush(stdout);
	park_spin(p.page + PARK_FP_OFFSET, &p.stop);
	pthread_join(handler, NULL);
	return p.rc ? 1 : 0;
}
#else
int main(void)
{
	printf("unwind_park: no parking frame for this architecture\n");
	return PARK_SKIP;
}
#endif
