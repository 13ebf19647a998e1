// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack unwinding (deferred.h).
 *
 * A request takes a slot from a fixed table, found by hashing the task:
 * the first request of a kernel entry claims a free slot with cmpxchg,
 * later ones find it (same task, still accepting) and add their consumer
 * bit.  Nothing is allocated at request time, so requests work in NMI.
 * The slot's task work (twork.c) runs in the task on its way to user
 * space: it closes the slot to new requests, walks the stack once with
 * faulting reads and calls each consumer that asked.  Requests that come
 * after that take a new slot: they belong to the next entry.
 *
 * From NMI the task work cannot be queued directly (twork.c takes a
 * spinlock, and task_work_add() is not NMI-safe on every kernel here);
 * the slot goes on a per-CPU list and an irq_work queues it right after
 * the NMI, on the same CPU.
 *
 * All state changes of a task's accepting slots happen in that task or
 * in interrupts on its CPU, which cannot run concurrently with it, so a
 * consumer bit set while a slot accepts is always seen by its walk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/srcu.h>

#include "deferred.h"
#include "frame_id.h"
#include "stats.h"
#include "twork.h"

#include "trace.h"

#define SFU_DSLOTS_BITS		9
#define SFU_DSLOTS		BIT(SFU_DSLOTS_BITS)
/* Slots probed per request before giving up. */
#define SFU_DSLOT_PROBES	32
#define SFU_MAX_CONSUMERS	BITS_PER_LONG

enum sfu_dslot_state {
	SFU_DS_FREE,
	SFU_DS_PRIVATE,		/* claimed for another task; no joining yet */
	SFU_DS_CLAIMED,		/* claimed, not queued yet; requests may join */
	SFU_DS_ACCEPTING,	/* queued; requests may join */
	SFU_DS_RUNNING,		/* the walk has started or is done */
};

struct sfu_dslot {
	struct sfu_twork tw;
	struct task_struct *task;	/* claimed with cmpxchg */
	atomic_t state;
	unsigned long mask;		/* consumers that asked */
	u64 cookie;
	struct mm_struct *mm;		/* the mm the request was made in */
	struct llist_node nmi_node;
};

static struct sfu_dslot *sfu_dslots;
static atomic64_t sfu_cookie;
static bool sfu_deferred_stopping;

static DEFINE_MUTEX(sfu_consumers_lock);
static unsigned long sfu_consumer_bits;	/* under sfu_consumers_lock */
static struct sfu_deferred __rcu *sfu_consumers[SFU_MAX_CONSUMERS];
static struct srcu_struct sfu_deferred_srcu;

/*
 * Per CPU: the slots NMIs handed over, and the irq_work that queues their
 * task works.  Allocated, not static: a module's static per-CPU data is
 * reached PC-relative where the kernel does not make it weak, and s390
 * 7.x places modules too far from the per-CPU area for that.
 */
struct sfu_nmi_cpu {
	struct llist_head slots;
	struct irq_work work;
};

static struct sfu_nmi_cpu __percpu *sfu_nmi;

/*
 * Free a slot once its task work is over.  The task reference was dropped
 * by the work itself (or when queueing failed); s->task is only compared.
 */
static void sfu_dslot_free(struct sfu_twork *tw)
{
	struct sfu_dslot *s = container_of(tw, struct sfu_dslot, tw);

	s->mask = 0;
	atomic_set(&s->state, SFU_DS_FREE);
	/* The slot is clean before a claim can see it free. */
	smp_store_release(&s->task, NULL);
}

/* Caller holds sfu_deferred_srcu since before it took @mask. */
static void sfu_deferred_call(struct sfu_dslot *s, unsigned long mask,
			      const struct sfu_unwind_trace *trace)
{
	unsigned int bit;

	for_each_set_bit(bit, &mask, SFU_MAX_CONSUMERS) {
		struct sfu_deferred *d;

		d = srcu_dereference(sfu_consumers[bit], &sfu_deferred_srcu);
		if (d)
			d->func(d, trace, s->cookie);
	}
}

/* The slot's task work: one walk for every consumer that asked. */
static void sfu_deferred_run(struct sfu_twork *tw)
{
	struct sfu_dslot *s = container_of(tw, struct sfu_dslot, tw);
	struct sfu_unwind_trace trace = {};
	unsigned long *pcs, mask;
	unsigned int max;
	int idx;

	/*
	 * Read the consumers inside SRCU: a consumer cancelled after this
	 * point is waited for, one cancelled before has cleared its bit.
	 */
	idx = srcu_read_lock(&sfu_deferred_srcu);
	atomic_set(&s->state, SFU_DS_RUNNING);
	mask = xchg(&s->mask, 0);
	/* Never the last reference: the task is running this. */
	put_task_struct(current);
	/*
	 * Exiting, killed (a fatal signal: also the other threads of an
	 * exec), or an exec replaced the stack the request was about.
	 */
	if ((current->flags & PF_EXITING) || fatal_signal_pending(current) ||
	    current->mm != s->mm)
		goto drop;
	max = READ_ONCE(sfu_max_depth);
	pcs = kmalloc_array(max, sizeof(*pcs), GFP_KERNEL | __GFP_NOWARN);
	if (!pcs || sfu_unwind_user(NULL, SFU_MEM_USER, pcs, max,
				    &trace.res)) {
		kfree(pcs);
		goto drop;
	}
	trace.nr = trace.res.nr;
	trace.entries = pcs;
	sfu_stat_inc(SFU_STAT_DEFERRED_WALKS);
	trace_sframe_unwind_stack(s->cookie, pcs, trace.nr, trace.res.stop);
	if (trace_sframe_unwind_frames_enabled())
		sfu_frames_trace(s->cookie, pcs, trace.nr);
	sfu_deferred_call(s, mask, &trace);
	kfree(pcs);
	srcu_read_unlock(&sfu_deferred_srcu, idx);
	return;

drop:
	sfu_stat_inc(SFU_STAT_DEFERRED_DROPPED);
	srcu_read_unlock(&sfu_deferred_srcu, idx);
}

/* Queue @s's task work on its task; release the slot if that fails. */
static int sfu_dslot_queue(struct sfu_dslot *s,
			   enum task_work_notify_mode mode)
{
	int ret;

	s->tw.fn = sfu_deferred_run;
	s->tw.free = sfu_dslot_free;
	ret = sfu_twork_queue(s->task, &s->tw, mode);
	if (!ret)
		return 0;
	sfu_stat_inc(SFU_STAT_DEFERRED_DROPPED);
	put_task_struct(s->task);
	sfu_dslot_free(&s->tw);
	return ret;
}

static void sfu_nmi_work_fn(struct irq_work *work)
{
	struct sfu_nmi_cpu *nc = container_of(work, struct sfu_nmi_cpu, work);
	struct llist_node *list = llist_del_all(&nc->slots);
	struct sfu_dslot *s, *next;

	llist_for_each_entry_safe(s, next, list, nmi_node)
		sfu_dslot_queue(s, TWA_RESUME);
}

static unsigned int sfu_dslot_hash(struct task_struct *task)
{
	return hash_ptr(task, SFU_DSLOTS_BITS);
}

/* The accepting slot of @task, or NULL.  @task is current or not running. */
static struct sfu_dslot *sfu_dslot_find(struct task_struct *task)
{
	unsigned int i, h = sfu_dslot_hash(task);

	for (i = 0; i < SFU_DSLOT_PROBES; i++) {
		struct sfu_dslot *s = &sfu_dslots[(h + i) % SFU_DSLOTS];

		if (READ_ONCE(s->task) != task)
			continue;
		switch (atomic_read(&s->state)) {
		case SFU_DS_CLAIMED:
		case SFU_DS_ACCEPTING:
			return s;
		}
	}
	return NULL;
}

/* Claim a free slot for @task, in @state, and give it a new cookie. */
static struct sfu_dslot *sfu_dslot_claim(struct task_struct *task, int state)
{
	unsigned int i, h = sfu_dslot_hash(task);

	for (i = 0; i < SFU_DSLOT_PROBES; i++) {
		struct sfu_dslot *s = &sfu_dslots[(h + i) % SFU_DSLOTS];

		if (READ_ONCE(s->task) || cmpxchg(&s->task, NULL, task))
			continue;
		get_task_struct(task);
		s->mm = task->mm;
		s->mask = 0;
		s->cookie = atomic64_inc_return(&sfu_cookie);
		atomic_set(&s->state, state);
		return s;
	}
	return NULL;
}

/*
 * The slot a request for @task goes to: with @join, the one that accepts
 * requests of this kernel entry if there is one; else a newly claimed one,
 * left in SFU_DS_CLAIMED (@join) or SFU_DS_PRIVATE for the caller to
 * queue.
 */
static int sfu_dslot_get(struct task_struct *task, bool join,
			 struct sfu_dslot **slot)
{
	if (!task->mm || (task->flags & (PF_KTHREAD | PF_IO_WORKER)))
		return -EINVAL;
	if (task->flags & PF_EXITING)
		return -ESRCH;
	if (READ_ONCE(sfu_deferred_stopping))
		return -ESHUTDOWN;
	*slot = join ? sfu_dslot_find(task) : NULL;
	if (!*slot)
		*slot = sfu_dslot_claim(task, join ? SFU_DS_CLAIMED :
					SFU_DS_PRIVATE);
	if (*slot)
		return 0;
	sfu_stat_inc(SFU_STAT_DEFERRED_BUSY);
	return -EBUSY;
}

/**
 * sfu_deferred_request() - ask for the current task's user stack
 * @d: the consumer
 * @cookie: set to the cookie its callback will be called with
 *
 * Any context, NMI included.  The callback runs when the task next
 * returns to user space.
 *
 * Return: 0 if queued, 1 if this consumer had already asked during this
 * kernel entry (same cookie), -EINVAL for kernel threads, -ESRCH for an
 * exiting task, -EBUSY if no slot is free, -ESHUTDOWN during unload.
 */
int sfu_deferred_request(struct sfu_deferred *d, u64 *cookie)
{
	struct sfu_dslot *s;
	int ret;

	ret = sfu_dslot_get(current, true, &s);
	if (ret)
		return ret;
	*cookie = s->cookie;
	sfu_stat_inc(SFU_STAT_DEFERRED_REQUESTS);
	trace_sframe_unwind_request(s->cookie, d->bit);
	if (test_and_set_bit(d->bit, &s->mask))
		return 1;
	/* Whoever moves the slot on queues it (an NMI may have joined). */
	if (atomic_cmpxchg(&s->state, SFU_DS_CLAIMED, SFU_DS_ACCEPTING) !=
	    SFU_DS_CLAIMED)
		return 0;
	/*
	 * Only plain task context with interrupts on queues directly: any
	 * other context (NMI, IRQ, or a tracepoint or kprobe hit where
	 * interrupts are off, perhaps inside twork.c's own lock) goes
	 * through the irq_work, which runs once interrupts are back on.  On
	 * PREEMPT_RT, where twork.c's spinlock sleeps, also any context with
	 * preemption off (an ftrace event's userstacktrace): there the
	 * irq_work runs in a preemptible thread.
	 */
	if (in_task() && !irqs_disabled() &&
	    (!IS_ENABLED(CONFIG_PREEMPT_RT) || preemptible())) {
		sfu_dslot_queue(s, TWA_RESUME);
	} else {
		struct sfu_nmi_cpu *nc = this_cpu_ptr(sfu_nmi);

		llist_add(&s->nmi_node, &nc->slots);
		irq_work_queue(&nc->work);
	}
	return 0;
}

/**
 * sfu_deferred_request_task() - ask for another task's user stack
 * @d: the consumer
 * @task: a task of the caller's process, not the caller
 * @cookie: set to the cookie the callback will be called with
 *
 * Process context.  The task is interrupted (TWA_SIGNAL) and its stack
 * walked where it was running; for tests that need samples taken at
 * arbitrary instructions.  Always a new walk.
 *
 * Return: 0, or the errors of sfu_deferred_request().
 */
int sfu_deferred_request_task(struct sfu_deferred *d, struct task_struct *task,
			      u64 *cookie)
{
	struct sfu_dslot *s;
	int ret;

	ret = sfu_dslot_get(task, false, &s);
	if (ret)
		return ret;
	*cookie = s->cookie;
	sfu_stat_inc(SFU_STAT_DEFERRED_REQUESTS);
	trace_sframe_unwind_request(s->cookie, d->bit);
	/*
	 * @task may run elsewhere and request for itself: it cannot join
	 * the slot while it is private, so queue first and let it accept
	 * after (unless its work has already run).
	 */
	set_bit(d->bit, &s->mask);
	if (sfu_dslot_queue(s, TWA_SIGNAL))
		return -ESRCH;
	atomic_cmpxchg(&s->state, SFU_DS_PRIVATE, SFU_DS_ACCEPTING);
	return 0;
}

/**
 * sfu_deferred_init() - register a consumer of deferred stack traces
 * @d: the consumer
 * @func: its callback
 *
 * Return: 0, or -EBUSY if all consumer slots are taken.
 */
int sfu_deferred_init(struct sfu_deferred *d, sfu_deferred_fn func)
{
	int bit;

	mutex_lock(&sfu_consumers_lock);
	bit = find_first_zero_bit(&sfu_consumer_bits, SFU_MAX_CONSUMERS);
	if (bit < SFU_MAX_CONSUMERS) {
		__set_bit(bit, &sfu_consumer_bits);
		d->func = func;
		d->bit = bit;
		rcu_assign_pointer(sfu_consumers[bit], d);
	}
	mutex_unlock(&sfu_consumers_lock);
	return bit < SFU_MAX_CONSUMERS ? 0 : -EBUSY;
}

/**
 * sfu_deferred_cancel() - unregister a consumer
 * @d: the consumer
 *
 * Requests it made and that are still pending are not delivered to it.
 * When this returns, its callback is not running and will not run.
 */
void sfu_deferred_cancel(struct sfu_deferred *d)
{
	unsigned int i;

	mutex_lock(&sfu_consumers_lock);
	RCU_INIT_POINTER(sfu_consumers[d->bit], NULL);
	synchronize_srcu(&sfu_deferred_srcu);
	/* Pending requests must not reach the bit's next owner. */
	for (i = 0; i < SFU_DSLOTS; i++)
		clear_bit(d->bit, &sfu_dslots[i].mask);
	__clear_bit(d->bit, &sfu_consumer_bits);
	mutex_unlock(&sfu_consumers_lock);
}

int sfu_deferred_module_init(void)
{
	int cpu, ret;

	sfu_dslots = kvcalloc(SFU_DSLOTS, sizeof(*sfu_dslots), GFP_KERNEL);
	if (!sfu_dslots)
		return -ENOMEM;
	sfu_nmi = alloc_percpu(struct sfu_nmi_cpu);
	if (!sfu_nmi) {
		ret = -ENOMEM;
		goto free_slots;
	}
	ret = init_srcu_struct(&sfu_deferred_srcu);
	if (ret)
		goto free_nmi;
	for_each_possible_cpu(cpu) {
		struct sfu_nmi_cpu *nc = per_cpu_ptr(sfu_nmi, cpu);

		init_llist_head(&nc->slots);
		init_irq_work(&nc->work, sfu_nmi_work_fn);
	}
	WRITE_ONCE(sfu_deferred_stopping, false);
	return 0;

free_nmi:
	free_percpu(sfu_nmi);
	sfu_nmi = NULL;
free_slots:
	kvfree(sfu_dslots);
	sfu_dslots = NULL;
	return ret;
}

/* Stop new requests and queue what NMIs left; before sfu_twork_stop(). */
void sfu_deferred_stop(void)
{
	int cpu;

	WRITE_ONCE(sfu_deferred_stopping, true);
	synchronize_rcu();	/* requests in flight (NMI) are done */
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(sfu_nmi, cpu)->work);
}

/* After sfu_twork_stop(): every slot is free again. */
void sfu_deferred_module_exit(void)
{
	cleanup_srcu_struct(&sfu_deferred_srcu);
	free_percpu(sfu_nmi);
	sfu_nmi = NULL;
	kvfree(sfu_dslots);
	sfu_dslots = NULL;
}
