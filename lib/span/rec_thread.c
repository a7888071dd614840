/* rec_thread.c: a thread's recording state (struct rec_thread, rec.h): its
 * start at its first event (a buffer reused or new, a signal stack, a ring
 * slot), its name on the wire, and its end (the pthread key's destructor). */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rec.h"

const uint32_t rec_nomark; /* the switch mark of threads that need none */
_Atomic(struct rec_thread *) rec_threads;
__thread int rec_self_done __attribute__((tls_model("initial-exec")));

REC_NOI uint32_t rec_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

REC_NOI void rec_thread_reset(struct rec_thread *t, uint64_t now)
{
	t->pid = rec_pid;
	t->tid = rec_gettid();
	t->base = t->last = now;
	t->dropped = t->reported = 0;
	t->gap = t->low = 0;
	t->wpend_ns = t->wpend_cpu = t->wpend_end = 0; /* another process's or thread's */
	t->seq = 0;
	t->depth = t->fdone = t->njmp = 0;
	memset(t->jmp, 0, sizeof t->jmp);
	memset(t->cache, 0xff, sizeof t->cache); /* no key is all ones */
	memset(t->fcache, 0xff, sizeof t->fcache);
	/* counters count the thread that opens them: a fork child or a later
	 * thread reusing t opens its own */
	recv_close(&t->vt);
	recv_switch_close(&t->vt);
	if (rec_nvals) {
		recv_open(&rec_vspec, &t->vt, rec_alloc_fn);
		rec_send_uncounted(t);
	}
	t->swmark = &rec_nomark;
	t->swflip = 0;
	if (rec_ring_attach(t, now) != 0) {
		t->pos = t->rec + REC_FIRST;
		t->lim = t->rec + REC_WORDS;
	} else if (t->agg && rec_offcpu) {
		t->swmark = recv_switch_mark(&t->vt);
		t->swflip = !t->swmark;
		if (!t->swmark)
			t->swmark = &rec_nomark;
	}
}

/* Gives the calling thread a signal stack when it has none, so that the
 * fatal-signal handler runs even when the thread overflowed its own stack
 * (the kernel can deliver SIGSEGV there only on another stack).  The memory
 * stays with t, which later threads reuse; a thread that set up its own
 * signal stack keeps it. */
static REC_NOI void rec_thread_altstack(struct rec_thread *t)
{
	stack_t cur;
	if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
		return;
	if (!t->altstack) {
		void *m = mmap(NULL, REC_ALTSTACK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return;
		t->altstack = m;
	}
	stack_t ss = {.ss_sp = t->altstack, .ss_size = REC_ALTSTACK, .ss_flags = 0};
	sigaltstack(&ss, NULL);
}

/* The calling thread's first event: a buffer (reused or new) and its name.
 * The time this takes is the recorder's, not the first span's: the caller
 * reads the event's time afterwards. */
REC_NOI struct rec_thread *rec_thread_start(void)
{
	if (rec_self_done)
		return NULL;
	if (unlikely(rec_unannounced()) && rec_new_process(NULL) != 0)
		return NULL;
	struct rec_thread *t;
	for (t = atomic_load(&rec_threads); t; t = t->next) {
		int zero = 0;
		if (!atomic_load_explicit(&t->live, memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&t->live, &zero, 1))
			break;
	}
	if (!t) {
		void *m = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		t = m;
#ifdef MADV_WIPEONFORK
		madvise(t, REC_WIPED, MADV_WIPEONFORK); /* see struct rec_thread */
#endif
		atomic_store(&t->live, 1);
		struct rec_thread *head = atomic_load(&rec_threads);
		do
			t->next = head;
		while (!atomic_compare_exchange_weak(&rec_threads, &head, t));
	}
	/* a reused struct: what its last thread left of calls it never
	 * returned from (it ended in a signal handler) is not ours */
	t->guard = 0;
	t->nq = 0;
	t->qskip = 0;
	rec_thread_altstack(t);
	rec_thread_reset(t, rec_now());
	atomic_store(&t->busy, 1);
	rec_send_comm(t);
	atomic_store(&t->busy, 0);
	rec_self = t; /* last: a signal handler before this drops its events, counted */
	pthread_setspecific(rec_key, t);
	return t;
}

/* pthread key destructor: the thread ends. */
REC_NOI void rec_thread_end(void *arg)
{
	struct rec_thread *t = arg;
	if (t != rec_self)
		return;
	rec_self = NULL;
	rec_self_done = 1; /* later events of this thread (other destructors): ignored */
	/* A guard still set belongs to a call that never returns: the thread
	 * ends in a signal handler that interrupted it (pthread_exit, a
	 * cancellation).  Its queue is still applied below. */
	t->guard = 0;
	if (__atomic_load_n(&rec_on, __ATOMIC_RELAXED) && t->pid && !t->guard &&
	    !atomic_exchange(&t->busy, 1)) {
		if (t->nq) { /* what signal handlers left, before the end */
			char mark;
			t->guard = (uintptr_t)&mark;
			atomic_store(&t->busy, 0);
			rec_drain(t, __atomic_load_n(&rec_on, __ATOMIC_RELAXED));
			atomic_store(&t->busy, 1);
			t->guard = 0;
		}
		uint64_t ts = rec_now();
		rec_filter_settle(t, ts);
		if (ts > t->last)
			t->last = ts;
		if (t->agg) {
			if ((int64_t)(ts - t->agg->last_ts) > 0)
				t->agg->last_ts = ts;
			__atomic_store_n(&t->slot->state, RING_DONE, __ATOMIC_RELEASE);
			t->slot = NULL;
			t->agg = NULL;
		} else if (t->slot) {
			rec_ring_detach(t, t->last);
		} else {
			rec_flush(t);
			size_t len = enc_simple(t->scratch, sizeof t->scratch, WIRE_THREAD_EXIT,
						t->pid, t->tid, &t->last, sizeof t->last);
			if (len)
				rec_write(t->scratch, len);
		}
	}
	/* t (and its signal stack) may go to another thread from here on */
	stack_t cur;
	if (t->altstack && sigaltstack(NULL, &cur) == 0 && cur.ss_sp == t->altstack &&
	    !(cur.ss_flags & SS_ONSTACK)) {
		stack_t off = {.ss_flags = SS_DISABLE};
		sigaltstack(&off, NULL);
	}
	atomic_store(&t->busy, 0);
	atomic_store(&t->live, 0);
}

/* Tells spanstat which of the thread's events did not open: its values for
 * them are 0 and mean nothing. */
REC_NOI void rec_send_uncounted(struct rec_thread *t)
{
	struct wire_uncounted u = {recv_uncounted(&rec_vspec, &t->vt), 0};
	size_t len = u.mask ? enc_simple(t->scratch, sizeof t->scratch, WIRE_UNCOUNTED, t->pid,
					 t->tid, &u, sizeof u)
			    : 0;
	if (len)
		rec_write(t->scratch, len);
}

REC_NOI void rec_send_thread_name(struct rec_thread *t, const char *name)
{
	size_t len = enc_thread_name(t->scratch, sizeof t->scratch, t->pid, t->tid, name,
				     strnlen(name, 255));
	if (len)
		rec_write(t->scratch, len);
}

REC_NOI void rec_send_comm(struct rec_thread *t)
{
	char comm[32];
	if (pthread_getname_np(pthread_self(), comm, sizeof comm) == 0 && comm[0])
		rec_send_thread_name(t, comm);
}
