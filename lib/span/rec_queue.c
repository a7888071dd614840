/* rec_queue.c: the events of signal handlers (rec.h).
 *
 * A signal handler can interrupt the recorder anywhere, and record spans of
 * its own.  Every call into the recorder sets its thread's guard (a stack
 * address of the call) on entry and clears it on return.  A call that finds
 * the guard set was made by a handler that interrupted another call: it
 * only queues its event (time and values read now) and returns, leaving the
 * interrupted call's state alone.  The next call that finds the guard clear
 * applies the queue first, in order, so handler spans land in the thread's
 * stream and tree at their true place: nested in whatever span was open
 * when the handler ran (a span whose begin was being recorded counts as
 * open).  Queueing takes no lock and calls nothing but the clock and the
 * value reads, so it is async-signal-safe; a full queue drops whole spans,
 * counted as drops. */
#include "config.h"

#include <signal.h>

#include "rec.h"

#define REC_Q_NONE UINT64_MAX /* a queued begin cancelled: its end found no room */

/* An end the full queue cannot take: its begin, queued, is cancelled, so
 * that the span is dropped whole instead of left open (the spans queued
 * inside it stay, one level up).  The begin is the last queued one below
 * entry n that no queued end closes. */
static REC_NOI void rec_queue_cancel(struct rec_thread *t, unsigned n)
{
	unsigned open = 0;
	while (n-- > 0) {
		struct rec_qev *e = &t->q[n];
		if (e->op == REC_OP(WIRE_OP_END)) {
			open++;
		} else if (e->op == REC_OP(WIRE_OP_BEGIN)) {
			if (!open) {
				e->op = REC_Q_NONE;
				rec_drop(t, 1u + e->nv);
				return;
			}
			open--;
		}
	}
}

REC_NOI void rec_queue(struct rec_thread *t, uint64_t key, uint64_t op, int has_val, int64_t val)
{
	int is_end = op == REC_OP(WIRE_OP_END);
	if (is_end && t->qskip) { /* its begin found the queue full */
		t->qskip--;
		rec_drop(t, 1);
		return;
	}
	unsigned cap = is_end ? REC_QLEN : REC_QLEN - REC_QENDS;
	unsigned i = __atomic_load_n(&t->nq, __ATOMIC_RELAXED);
	do {
		if (i >= cap) {
			if (op == REC_OP(WIRE_OP_BEGIN))
				t->qskip++;
			else if (is_end)
				rec_queue_cancel(t, i);
			rec_drop(t, 1u + (unsigned)has_val);
			return;
		}
	} while (!__atomic_compare_exchange_n(&t->nq, &i, i + 1, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	/* entry i is ours; a deeper handler takes i + 1 and on */
	struct rec_qev *e = &t->q[i];
	e->key = key;
	e->op = op;
	e->has_val = (uint32_t)has_val;
	e->val = val;
	e->nv = 0;
	if (rec_nvals && (op == REC_OP(WIRE_OP_BEGIN) || is_end)) {
		if (is_end)
			recv_read(&rec_vspec, &t->vt, t->qv[i]);
		e->ts = rec_now();
		if (!is_end)
			recv_read(&rec_vspec, &t->vt, t->qv[i]);
		e->nv = rec_nvals;
	} else {
		e->ts = rec_now();
	}
}

/* Applies the queued events in order; the caller holds the guard.  Signals
 * are blocked meanwhile (two system calls per drain, that is per handler
 * that recorded something): a handler that interrupted the drain and left
 * it by siglongjmp would abandon it half-way, and the next drain, starting
 * again at the first entry, would apply the entries before it twice.  A
 * signal that comes meanwhile is delivered when the drain ends; its
 * handler's events are queued (the caller still holds the guard) and
 * applied by the next call. */
REC_NOI __attribute__((noinline)) void rec_drain(struct rec_thread *t, int on)
{
	sigset_t all, old;
	sigfillset(&all);
	int masked = pthread_sigmask(SIG_BLOCK, &all, &old) == 0;
	unsigned i = 0;
	for (;;) {
		unsigned n = __atomic_load_n(&t->nq, __ATOMIC_ACQUIRE);
		if (i >= n) {
			if (__atomic_compare_exchange_n(&t->nq, &n, 0, 0, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED)) {
				if (masked)
					pthread_sigmask(SIG_SETMASK, &old, NULL);
				return;
			}
			continue;
		}
		const struct rec_qev *e = &t->q[i];
		if (e->op == REC_Q_NONE) { /* cancelled (rec_queue_cancel) */
			i++;
			continue;
		}
		uint64_t now = e->ts;
		if ((int64_t)(now - t->last) < 0)
			now = t->last;
		if (on == REC_ON_FILTERED)
			rec_event_filtered(t, e->key, e->op, (int)e->has_val, e->val, now);
		else
			rec_apply(t, e->key, e->op, now, 0, (int)e->has_val, e->val,
				  e->nv ? t->qv[i] : NULL);
		i++;
	}
}
