/* norm.h: the span normaliser.  Every span source (the binary wire
 * decoder of decoder.c with the rings of ringsrc.c behind it, and the line
 * protocol of linesrc.c; a record file replays normalised events itself)
 * tells it what happened through these calls, in each thread's order, with
 * timestamps already in CLOCK_MONOTONIC ns and names already strtab ids; it
 * owns the processes' and threads' open-span stacks, keeps what it hands to
 * the sinks balanced (spanev.h), and counts what it had to repair.  It knows
 * nothing of any source's format.
 *
 * Balance rules (what the sinks see):
 * - a begin pushes (name, ts) on its thread's stack and is emitted with
 *   depth = the stack depth before the push;
 * - an end naming the innermost open span closes it (flags 0); one naming an
 *   outer open span closes the spans inside it first, at the end's ts, with
 *   SPAN_F_UNFINISHED (unfinished++), then the named one normally; one naming
 *   no open span is counted (unmatched) and ignored;
 * - a begin beyond NORM_MAX_DEPTH is not pushed (over_limit); the thread counts
 *   it, and the next end (whatever its name) is taken as its end and dropped,
 *   since overflowed spans are always the innermost;
 * - an end's ts is never before its begin's: it is raised to the begin's;
 * - a thread's exit closes its open spans at its ts, a process's end every
 *   open span of the process at its ts (or, with none, at each thread's end
 *   as the oracle knows it, else its last ts) and emits SPAN_PROCESS_END,
 *   all SPAN_F_UNFINISHED; a process start for a pid that is live (exec, pid
 *   reuse) ends the old one first, without a ts;
 * - norm_lost() closes a thread's open spans at its last ts: events of it
 *   were lost, among them maybe the ends of its open spans;
 * - norm_resync() is the same when the source knows which of them stayed
 *   open: only those above `low` close, and the next `n` begins re-open the
 *   spans the thread began among the lost events, marked unfinished (their
 *   true begin is later than the one given, and not known); `unnamed` more
 *   spans of unknown names are open above those: the ends that close them
 *   (the first ends at that depth) make no span.
 * Values (spanmetric.h): with norm_set_values(n, k), begins and ends carry k
 * cumulative per-thread values (or NULL: unchanged since the thread's last
 * event); a span's END hands the sinks the differences end - begin (never
 * below 0), and spans the normaliser closes take the thread's latest values,
 * those the oracle knows (off-CPU time) taken at the time they close.
 * Memory grows with live processes, threads and nesting depth (each bounded:
 * NORM_MAX_*) and with the sinks added, never with the number of events. */
#ifndef SPANSTAT_NORM_H
#define SPANSTAT_NORM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "spanev.h"
#include "u64map.h"

#define NORM_MAX_PROCS 4096    /* live processes */
#define NORM_MAX_THREADS 65536 /* live threads */
#define NORM_MAX_DEPTH 4096    /* open spans per thread */

/* What the normaliser counts (a source adds its own counts beside). */
struct norm_stats {
	uint64_t spans;	     /* begin/end pairs emitted */
	uint64_t unmatched;  /* ends without a matching begin */
	uint64_t unfinished; /* begins closed by the normaliser */
	uint64_t over_limit; /* processes, threads or depth refused (NORM_MAX_*),
			      * and arguments of spans refused */
	uint64_t async;	     /* async spans begun */
	uint64_t async_bad;  /* async enters, exits and ends of no open span (or an
			      * exit by a thread that had not entered it) */
	uint64_t misnested;  /* begins nested under an open span that began after
			      * them (out of time order) */
};

#define NORM_MAX_ASYNC 65536 /* open async spans per process */

/* An open async span: who has it entered (tid, how many times), and its
 * busy time so far (some thread had it entered). */
struct norm_async {
	uint64_t id;
	uint32_t name, btid;
	uint64_t begin, since; /* since: when `entered` last went from 0 */
	uint64_t busy;
	uint32_t entered, enters, threads;
	struct norm_async_in {
		uint32_t tid, n;
		uint64_t last; /* its latest enter */
	} * in;
	uint32_t nin, capin;
	uint32_t *seen; /* the threads that entered it, `threads` of them */
	uint32_t capseen;
	struct norm_async *prev, *next;
	struct norm_async *eprev, *enext; /* in the proc's ehead list while nin */
};

struct norm_stack {
	uint32_t name;
	uint32_t flags; /* its end's SPAN_F_*: unfinished when its begin is not known */
	uint64_t begin; /* ns */
};

/* A source that checks times (linesrc.c) notes, per depth, when the latest
 * span inside the open span there ended; the note holds for the span that
 * began at `begin` only. */
struct norm_inner {
	uint64_t begin, end;
};

struct norm_proc;

/* A live thread.  `src` is its source's own state (a decoder keeps its
 * sequence numbers there); the normaliser only zeroes it. */
struct norm_thread {
	uint32_t pid, tid;
	struct norm_proc *proc;
	struct norm_stack *stk;
	uint32_t depth, cap;
	uint32_t over;	 /* begins beyond NORM_MAX_DEPTH still open */
	uint32_t resume; /* the next begins re-open spans begun in a drop (norm_resync) */
	/* open spans of unknown names begun in drops (norm_resync), in groups
	 * of n above the `at` spans below them, innermost group last: at most
	 * one per depth, so at most NORM_MAX_DEPTH + 1 */
	struct norm_unnamed {
		uint32_t at, n;
	} * unnamed;
	uint32_t nunnamed, capunnamed;
	uint64_t *val; /* with values: cap rows of the open spans' begin
			* values, then the latest values, then the deltas */
	uint64_t last_ts;
	uint64_t src;
	struct norm_inner *inner; /* that source's notes, ninner of them; the
				   * normaliser only frees them with t */
	uint32_t ninner;
	struct norm_thread *prev, *next; /* the process's threads */
};

/* A live process; `src` as for threads. */
struct norm_proc {
	uint32_t pid;
	uint32_t name;
	bool shared;	 /* another source (linesrc.c) records into it too: the
			  * decoder hands it over at its EXIT instead of ending it */
	uint64_t began;	 /* when it began, as a source that checks times found
			  * it (linesrc.c); 0: not looked for */
	uint64_t exited; /* a source said it ended then, another's events may
			  * still come (shared): its threads end there */
	uint64_t last_ts;
	void *src;
	struct norm_thread *threads;
	struct u64map async; /* id -> its open struct norm_async */
	struct norm_async *ahead;
	struct norm_async *ehead; /* those some thread is inside */
	struct u64map arefused;	  /* ids refused at their begin (NORM_MAX_ASYNC
				   * open), until their end; at most that many */
	uint32_t nasync;
	struct norm_proc *prev, *next; /* in order of start */
};

/* What the session knows of threads beside their events (norm_set_oracle):
 * when thread (pid, tid) ended at or after `after` ns (0: not known; the
 * kernel's exit records), and its values at ns, of which it sets in v those
 * it knows (off-CPU time).  Either may be NULL. */
struct norm_oracle {
	uint64_t (*end)(void *ctx, uint32_t pid, uint32_t tid, uint64_t after);
	void (*values)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, uint64_t *v);
	void *ctx;
};

/* The normaliser's state: only norm.c and the inline hot calls below
 * touch it. */
struct normaliser {
	struct span_sink *sink; /* where events go, in order: as many as are added */
	size_t nsink, capsink;
	struct norm_stats stats;
	struct u64map procs, threads;
	struct norm_proc *phead, *ptail;
	uint32_t nproc, nthread;
	struct norm_thread *last; /* the thread found last */
	unsigned nval;		  /* values per begin and end */
	struct norm_oracle oracle;
	bool oom;
};

struct normaliser *norm_new(void);
/* Frees everything, emitting nothing. */
void norm_free(struct normaliser *n);
int norm_add_sink(struct normaliser *n, struct span_sink sink);
/* Values per begin and end (at most SPANMETRIC_MAX), before any thread. */
int norm_set_values(struct normaliser *n, unsigned k);
void norm_set_oracle(struct normaliser *n, const struct norm_oracle *o);
const struct norm_stats *norm_stats(const struct normaliser *n);
/* Whether an allocation failed since the last call (and clears it). */
bool norm_oom(struct normaliser *n);

/* A process starts (SPAN_PROCESS, value ppid); a live pid ends first.  NULL
 * when refused (counted). */
struct norm_proc *norm_process_start(struct normaliser *n, uint32_t pid, uint32_t ppid,
				     uint32_t name, uint64_t ts);
struct norm_proc *norm_process(const struct normaliser *n, uint32_t pid);
/* The process ends at ts (0: where a source said it exited, else at each
 * thread's end as the oracle knows it, else its last ts) by `signal` (0:
 * normally) and p is freed (its `src` is the source's to free). */
void norm_process_end(struct normaliser *n, struct norm_proc *p, uint64_t ts, uint32_t signal);
/* Every open span of p's threads closes at ts (unfinished); p lives on. */
void norm_process_close(struct normaliser *n, struct norm_proc *p, uint64_t ts);
/* The oldest live process, to end them all at the end of the stream. */
struct norm_proc *norm_first_process(const struct normaliser *n);

/* Thread tid of p: found, or started at ts (SPAN_THREAD, no name); NULL when
 * refused (counted). */
struct norm_thread *norm_thread(struct normaliser *n, struct norm_proc *p, uint32_t tid,
				uint64_t ts);
struct norm_thread *norm_thread_find(const struct normaliser *n, uint32_t pid, uint32_t tid);
/* Names thread tid of p (starting it at p's last ts if new). */
void norm_thread_name(struct normaliser *n, struct norm_proc *p, uint32_t tid, uint32_t name);

/* The thread ended at ts: its open spans close, and t is freed. */
void norm_thread_exit(struct normaliser *n, struct norm_thread *t, uint64_t ts);
/* Events of t were lost: its open spans close at its last ts. */
void norm_lost(struct normaliser *n, struct norm_thread *t);
/* Events of t were lost, but its `low` outermost open spans stayed open
 * (UINT32_MAX: all): those above close at its last ts, its next `count`
 * begins are marked (their ends unfinished), and `unnamed` spans whose
 * names are not known are open above those (their ends make no span). */
void norm_resync(struct normaliser *n, struct norm_thread *t, uint32_t low, uint32_t count,
		 uint32_t unnamed);
/* Tells the sinks what t's data lost (SPAN_DAMAGE at its last ts). */
void norm_damage(struct normaliser *n, uint32_t pid, uint32_t tid, uint64_t ts,
		 enum span_damage what, uint64_t amount);

/* The per-event calls, inline: they run for every event of every source. */
void norm_refuse(struct normaliser *n, bool oom);
/* Async spans (spanstat_async_*): op is enum wire_async_op's order (begin,
 * enter, exit, end); name only for a begin.  Balanced here: an enter, exit
 * or end of no open span is counted (async_bad) and dropped, a span still
 * open at norm_process_end ends there, SPAN_F_UNFINISHED; a thread that
 * exits (norm_thread_exit) leaves the async spans it is inside then. */
void norm_async(struct normaliser *n, struct norm_thread *t, uint64_t ns, unsigned op, uint64_t id,
		uint32_t name);
int norm_grow(struct normaliser *n, struct norm_thread *t);
int norm_mismatch(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint32_t name);

static inline void norm_emit(struct normaliser *n, const struct span_event *ev)
{
	for (size_t i = 0; i < n->nsink; i++)
		n->sink[i].event(n->sink[i].arg, ev);
}

/* Keeps the thread's and its process's latest ts. */
static inline void norm_seen(struct norm_thread *t, uint64_t ns)
{
	if (ns > t->last_ts) {
		t->last_ts = ns;
		if (ns > t->proc->last_ts)
			t->proc->last_ts = ns;
	}
}

/* The thread's latest values, then the row of its span at depth d. */
static inline uint64_t *norm_vlast(const struct normaliser *n, const struct norm_thread *t)
{
	return t->val + (uint64_t)t->cap * n->nval;
}

static inline void norm_values(const struct normaliser *n, struct norm_thread *t, const uint64_t *v)
{
	uint64_t *d = norm_vlast(n, t);
	if (!v || !n->nval)
		return;
	if (n->nval <= 2) { /* the usual one or two, without a libc call */
		d[0] = v[0];
		if (n->nval == 2)
			d[1] = v[1];
	} else {
		memcpy(d, v, n->nval * sizeof *v);
	}
}

/* The span at the top of the stack ends with the thread's latest values:
 * its differences, for the sinks. */
static inline const uint64_t *norm_delta(const struct normaliser *n, const struct norm_thread *t,
					 uint32_t depth)
{
	const uint64_t *b = t->val + (uint64_t)depth * n->nval, *e = norm_vlast(n, t);
	uint64_t *d = norm_vlast(n, t) + n->nval;
	for (unsigned i = 0; i < n->nval; i++)
		d[i] = e[i] > b[i] ? e[i] - b[i] : 0;
	return d;
}

/* Up to k ends of the unnamed spans open at the top (t->nunnamed > 0):
 * how many it took, 0 when none is open there. */
static inline uint64_t norm_unnamed_take(struct norm_thread *t, uint64_t k)
{
	struct norm_unnamed *u = &t->unnamed[t->nunnamed - 1];
	if (t->depth != u->at)
		return 0;
	if (k > u->n)
		k = u->n;
	u->n -= (uint32_t)k;
	t->nunnamed -= u->n == 0;
	return k;
}

static inline void norm_begin(struct normaliser *n, struct norm_thread *t, uint64_t ns,
			      uint32_t name, const uint64_t *v)
{
	norm_seen(t, ns);
	uint32_t flags = 0;
	if (__builtin_expect(t->resume != 0, 0)) {
		t->resume--;
		flags = SPAN_F_UNFINISHED;
	}
	if (__builtin_expect(t->depth == t->cap, 0) && norm_grow(n, t) < 0)
		return;
	/* a parent that began after its child: two sources of one thread (the
	 * library's events and the line protocol's) arrived out of time order */
	if (__builtin_expect(t->depth != 0 && ns < t->stk[t->depth - 1].begin, 0))
		n->stats.misnested++;
	if (n->nval) {
		norm_values(n, t, v);
		memcpy(t->val + (uint64_t)t->depth * n->nval, norm_vlast(n, t),
		       n->nval * sizeof *v);
	}
	t->stk[t->depth].name = name;
	t->stk[t->depth].flags = flags;
	t->stk[t->depth].begin = ns;
	struct span_event ev;
	span_event_init(&ev, SPAN_BEGIN, t->pid, t->tid, ns, name);
	ev.depth = t->depth++;
	ev.cum = n->nval ? norm_vlast(n, t) : NULL;
	norm_emit(n, &ev);
}

static inline void norm_end(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint32_t name,
			    const uint64_t *v)
{
	norm_seen(t, ns);
	if (n->nval)
		norm_values(n, t, v);
	if (__builtin_expect(t->over != 0, 0)) {
		t->over--;
		return;
	}
	if (__builtin_expect(t->nunnamed != 0, 0) && norm_unnamed_take(t, 1))
		return;
	if (__builtin_expect(t->depth == 0 || t->stk[t->depth - 1].name != name, 0) &&
	    norm_mismatch(n, t, ns, name) < 0)
		return;
	uint32_t depth = t->depth;
	const struct norm_stack *e = &t->stk[--depth];
	t->depth = depth;
	struct span_event ev;
	span_event_init(&ev, SPAN_END, t->pid, t->tid, ns > e->begin ? ns : e->begin, name);
	ev.depth = depth;
	ev.flags = e->flags;
	ev.begin_ts = e->begin;
	ev.vals = n->nval ? norm_delta(n, t, depth) : NULL;
	ev.cum = n->nval ? norm_vlast(n, t) : NULL;
	n->stats.spans++;
	n->stats.unfinished += e->flags & SPAN_F_UNFINISHED;
	norm_emit(n, &ev);
}

/* The thread ended its `count` innermost open spans at ns, not saying their
 * names (those over the limit and unnamed ones count among them). */
static inline void norm_pop(struct normaliser *n, struct norm_thread *t, uint64_t ns,
			    uint64_t count)
{
	while (count) { /* whole runs at once: a count may be 2^32 */
		uint64_t k;
		if (t->over) {
			k = count < t->over ? count : t->over;
			t->over -= (uint32_t)k;
		} else if (!t->nunnamed || !(k = norm_unnamed_take(t, count))) {
			if (!t->depth)
				break;
			norm_end(n, t, ns, t->stk[t->depth - 1].name, NULL);
			k = 1;
		}
		count -= k;
	}
}

/* The thread ended every span open above depth `to` at ns (a longjmp):
 * counted over what this thread has open, named, over the limit or
 * unnamed. */
static inline void norm_popto(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint64_t to)
{
	uint64_t open = (uint64_t)t->depth + t->over;
	for (uint32_t i = 0; i < t->nunnamed; i++)
		open += t->unnamed[i].n;
	if (open > to)
		norm_pop(n, t, ns, open - to);
}

static inline void norm_instant(struct normaliser *n, struct norm_thread *t, uint64_t ns,
				uint32_t name)
{
	norm_seen(t, ns);
	struct span_event ev = {.kind = SPAN_INSTANT,
				.pid = t->pid,
				.tid = t->tid,
				.ts = ns,
				.name = name,
				.depth = t->depth};
	norm_emit(n, &ev);
}

static inline void norm_message(struct normaliser *n, struct norm_thread *t, uint64_t ns,
				const char *text, uint32_t len)
{
	norm_seen(t, ns);
	struct span_event ev = {.kind = SPAN_MESSAGE,
				.pid = t->pid,
				.tid = t->tid,
				.ts = ns,
				.depth = t->depth,
				.text = text,
				.len = len};
	norm_emit(n, &ev);
}

/* A typed argument of the innermost span open on t (of t outside every
 * span): key a strtab id, bits its value (a string's: its text's id); one
 * of a span beyond NORM_MAX_DEPTH is refused with it (over_limit). */
static inline void norm_arg(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint32_t key,
			    unsigned type, uint64_t bits)
{
	norm_seen(t, ns);
	if (t->over) { /* its span was refused (beyond NORM_MAX_DEPTH): so is it */
		n->stats.over_limit++;
		return;
	}
	struct span_event ev = {.kind = SPAN_ARG,
				.pid = t->pid,
				.tid = t->tid,
				.ts = ns,
				.name = key,
				.flags = type,
				.depth = t->depth,
				.value = (int64_t)bits};
	norm_emit(n, &ev);
}

static inline void norm_counter(struct normaliser *n, struct norm_thread *t, uint64_t ns,
				uint32_t name, int64_t value)
{
	norm_seen(t, ns);
	struct span_event ev = {.kind = SPAN_COUNTER,
				.pid = t->pid,
				.tid = t->tid,
				.ts = ns,
				.name = name,
				.depth = t->depth,
				.value = value};
	norm_emit(n, &ev);
}

#endif
