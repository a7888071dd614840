/* norm.c: the span normaliser (norm.h): live processes and threads
 * in hash maps and lists, each thread's open-span stack, and the balanced
 * event stream handed to the sinks. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "norm.h"
#include "grow.h"
#include "spanmetric.h"
#include "u64map.h"

static inline uint64_t norm_tid_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

void norm_refuse(struct normaliser *n, bool oom)
{
	n->stats.over_limit++;
	if (oom)
		n->oom = true;
}

/* Async spans (norm.h). */

static void norm_async_emit(struct normaliser *n, const struct norm_proc *p,
			    const struct norm_async *a, enum span_kind k, uint32_t tid, uint64_t ns,
			    uint32_t flags)
{
	struct span_event ev = {.kind = k,
				.pid = p->pid,
				.tid = tid,
				.ts = ns,
				.name = a->name,
				.flags = flags,
				.aid = a->id};
	if (k == SPAN_ASYNC_END) {
		ev.begin_ts = a->begin;
		/* busy lies within begin..end even when the times went back (a
		 * damaged stream: an end before an exit), and below INT64_MAX */
		uint64_t busy = a->busy, life = ns >= a->begin ? ns - a->begin : 0;
		busy = busy < life ? busy : life;
		ev.value = busy > INT64_MAX ? INT64_MAX : (int64_t)busy;
		ev.enters = a->enters;
		ev.threads = a->threads;
	}
	norm_emit(n, &ev);
}

/* p->ehead lists the async spans some thread is inside (nin > 0): what a
 * begin (its path) and a thread's exit look through, few next to the open
 * ones. */
static void norm_async_link_entered(struct norm_proc *p, struct norm_async *a)
{
	a->eprev = NULL;
	a->enext = p->ehead;
	if (p->ehead)
		p->ehead->eprev = a;
	p->ehead = a;
}

static void norm_async_unlink_entered(struct norm_proc *p, struct norm_async *a)
{
	if (a->eprev)
		a->eprev->enext = a->enext;
	else
		p->ehead = a->enext;
	if (a->enext)
		a->enext->eprev = a->eprev;
	a->eprev = a->enext = NULL;
}

/* Thread tid stops running a (one of its enters), at ns. */
static void norm_async_out(struct normaliser *n, struct norm_proc *p, struct norm_async *a,
			   uint32_t i, uint64_t ns, uint32_t flags)
{
	if (ns < a->begin)
		ns = a->begin;
	norm_async_emit(n, p, a, SPAN_ASYNC_EXIT, a->in[i].tid, ns, flags);
	if (--a->in[i].n == 0) {
		a->in[i] = a->in[--a->nin];
		if (!a->nin) /* no thread inside any more */
			norm_async_unlink_entered(p, a);
	}
	if (--a->entered == 0 && ns > a->since)
		a->busy += ns - a->since;
}

/* Ends a at ns: the threads still inside it leave first (unfinished). */
static void norm_async_close(struct normaliser *n, struct norm_proc *p, struct norm_async *a,
			     uint32_t tid, uint64_t ns, uint32_t flags)
{
	if (ns < a->begin)
		ns = a->begin;
	while (a->nin)
		norm_async_out(n, p, a, a->nin - 1, ns, SPAN_F_UNFINISHED);
	norm_async_emit(n, p, a, SPAN_ASYNC_END, tid, ns, flags);
	u64map_del(&p->async, a->id);
	if (a->prev)
		a->prev->next = a->next;
	else
		p->ahead = a->next;
	if (a->next)
		a->next->prev = a->prev;
	p->nasync--;
	free(a->in);
	free(a->seen);
	free(a);
}

/* Thread tid is gone at ns: it leaves every async span it is inside
 * (unfinished), which it cannot run any more. */
static void norm_async_leave(struct normaliser *n, struct norm_proc *p, uint32_t tid, uint64_t ns)
{
	for (struct norm_async *a = p->ehead, *next; a; a = next) {
		next = a->enext; /* a leaves the list when tid was its last */
		for (uint32_t i = 0; i < a->nin; i++)
			if (a->in[i].tid == tid) {
				for (uint32_t k = a->in[i].n; k; k--)
					norm_async_out(n, p, a, i, ns, SPAN_F_UNFINISHED);
				break;
			}
	}
}

/* The async span thread tid entered last among those it is inside, or
 * NULL. */
static struct norm_async *norm_async_current(const struct norm_proc *p, uint32_t tid)
{
	struct norm_async *best = NULL;
	uint64_t when = 0;
	for (struct norm_async *a = p->ehead; a; a = a->enext)
		for (uint32_t i = 0; i < a->nin; i++)
			if (a->in[i].tid == tid && (!best || a->in[i].last >= when)) {
				best = a;
				when = a->in[i].last;
			}
	return best;
}

/* Notes that thread tid entered a (a->threads counts them). */
static int norm_async_seen(struct norm_async *a, uint32_t tid)
{
	for (uint32_t i = 0; i < a->threads; i++)
		if (a->seen[i] == tid)
			return 0;
	if (GROW(a->seen, a->threads + 1, a->capseen, 4) < 0)
		return -ENOMEM;
	a->seen[a->threads++] = tid;
	return 0;
}

static void norm_async_begin(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint64_t id,
			     uint32_t name)
{
	struct norm_proc *p = t->proc;
	struct norm_async *a = (struct norm_async *)(uintptr_t)u64map_get(&p->async, id);
	if (a) /* begun again before its end: the old one ends here */
		norm_async_close(n, p, a, t->tid, ns, SPAN_F_UNFINISHED);
	if (p->nasync >= NORM_MAX_ASYNC) {
		norm_refuse(n, false);
		/* its enters, exits and end are not unmatched: counted here */
		if (p->arefused.n < NORM_MAX_ASYNC)
			u64map_put(&p->arefused, id, 1);
		return;
	}
	u64map_del(&p->arefused, id);
	a = calloc(1, sizeof *a);
	if (!a || u64map_put(&p->async, id, (uintptr_t)a) < 0) {
		free(a);
		norm_refuse(n, true);
		return;
	}
	*a = (struct norm_async){.id = id, .name = name, .btid = t->tid, .begin = ns};
	a->next = p->ahead;
	if (p->ahead)
		p->ahead->prev = a;
	p->ahead = a;
	p->nasync++;
	n->stats.async++;
	struct norm_async *in = norm_async_current(p, t->tid);
	struct span_event ev = {.kind = SPAN_ASYNC_BEGIN,
				.pid = p->pid,
				.tid = t->tid,
				.ts = ns,
				.name = name,
				.aid = id,
				.parent = in ? in->id : 0};
	norm_emit(n, &ev);
}

void norm_async(struct normaliser *n, struct norm_thread *t, uint64_t ns, unsigned op, uint64_t id,
		uint32_t name)
{
	struct norm_proc *p = t->proc;
	norm_seen(t, ns);
	if (ns > p->last_ts)
		p->last_ts = ns;
	if (op == 0) {
		norm_async_begin(n, t, ns, id, name);
		return;
	}
	struct norm_async *a = (struct norm_async *)(uintptr_t)u64map_get(&p->async, id);
	if (!a && u64map_get(&p->arefused, id)) { /* refused at its begin */
		if (op == 3)
			u64map_del(&p->arefused, id);
		return;
	}
	if (!a) {
		n->stats.async_bad++;
		return;
	}
	uint32_t i = 0;
	while (i < a->nin && a->in[i].tid != t->tid)
		i++;
	switch (op) {
	case 1: /* enter */
		if (i == a->nin) {
			if (GROW(a->in, a->nin + 1, a->capin, 4) < 0 ||
			    norm_async_seen(a, t->tid) < 0) {
				norm_refuse(n, true);
				return;
			}
			if (!a->nin)
				norm_async_link_entered(p, a);
			a->in[a->nin++] = (struct norm_async_in){t->tid, 0, 0};
		}
		if (ns < a->begin)
			ns = a->begin;
		a->in[i].n++;
		a->in[i].last = ns;
		a->enters++;
		if (a->entered++ == 0)
			a->since = ns;
		norm_async_emit(n, p, a, SPAN_ASYNC_ENTER, t->tid, ns, 0);
		break;
	case 2: /* exit */
		if (i == a->nin) {
			n->stats.async_bad++;
			return;
		}
		norm_async_out(n, p, a, i, ns, 0);
		break;
	default: /* end */
		norm_async_close(n, p, a, t->tid, ns, 0);
		break;
	}
}

struct normaliser *norm_new(void)
{
	return calloc(1, sizeof(struct normaliser));
}

static void norm_thread_free(struct normaliser *n, struct norm_thread *t)
{
	struct norm_proc *p = t->proc;
	if (t->prev)
		t->prev->next = t->next;
	else
		p->threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	u64map_del(&n->threads, norm_tid_key(t->pid, t->tid));
	if (n->last == t)
		n->last = NULL;
	n->nthread--;
	free(t->stk);
	free(t->val);
	free(t->inner);
	free(t->unnamed);
	free(t);
}

static void norm_proc_free(struct normaliser *n, struct norm_proc *p)
{
	while (p->threads)
		norm_thread_free(n, p->threads);
	if (p->prev)
		p->prev->next = p->next;
	else
		n->phead = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		n->ptail = p->prev;
	u64map_del(&n->procs, p->pid);
	n->nproc--;
	while (p->ahead) {
		struct norm_async *a = p->ahead;
		p->ahead = a->next;
		free(a->in);
		free(a->seen);
		free(a);
	}
	u64map_release(&p->async);
	u64map_release(&p->arefused);
	free(p);
}

void norm_free(struct normaliser *n)
{
	if (!n)
		return;
	while (n->phead)
		norm_proc_free(n, n->phead);
	u64map_release(&n->procs);
	u64map_release(&n->threads);
	free(n->sink);
	free(n);
}

int norm_set_values(struct normaliser *n, unsigned k)
{
	if (k > SPANMETRIC_MAX || n->nthread)
		return -EINVAL;
	n->nval = k;
	return 0;
}

void norm_set_oracle(struct normaliser *n, const struct norm_oracle *o)
{
	n->oracle = *o;
}

int norm_add_sink(struct normaliser *n, struct span_sink sink)
{
	if (!sink.event)
		return -EINVAL;
	if (GROW(n->sink, n->nsink + 1, n->capsink, 4) < 0)
		return -ENOMEM;
	n->sink[n->nsink++] = sink;
	return 0;
}

const struct norm_stats *norm_stats(const struct normaliser *n)
{
	return &n->stats;
}

bool norm_oom(struct normaliser *n)
{
	bool oom = n->oom;
	n->oom = false;
	return oom;
}

/* t's values at ns, where it ends: those the oracle knows, then. */
static void norm_values_at(struct normaliser *n, struct norm_thread *t, uint64_t ns)
{
	if (n->nval && n->oracle.values)
		n->oracle.values(n->oracle.ctx, t->pid, t->tid, ns, norm_vlast(n, t));
}

/* When t ended, with no time given: where a source said its process
 * exited, else as the oracle knows it, else its last event. */
static uint64_t norm_end_of(const struct normaliser *n, const struct norm_thread *t)
{
	uint64_t e = t->proc->exited;
	if (!e && n->oracle.end)
		e = n->oracle.end(n->oracle.ctx, t->pid, t->tid, t->last_ts);
	return e > t->last_ts ? e : t->last_ts;
}

/* Closes t's open spans above `keep` at ns, unfinished. */
static void norm_close(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint32_t keep)
{
	struct span_event ev = {
		.kind = SPAN_END, .pid = t->pid, .tid = t->tid, .flags = SPAN_F_UNFINISHED};
	while (t->depth > keep) {
		const struct norm_stack *e = &t->stk[--t->depth];
		ev.ts = ns > e->begin ? ns : e->begin;
		ev.name = e->name;
		ev.depth = t->depth;
		ev.begin_ts = e->begin;
		ev.vals = n->nval ? norm_delta(n, t, t->depth) : NULL;
		n->stats.unfinished++;
		n->stats.spans++;
		norm_emit(n, &ev);
	}
	if (!keep)
		t->over = 0;
	while (t->nunnamed && t->unnamed[t->nunnamed - 1].at > keep)
		t->nunnamed--; /* they were open inside those closed */
}

struct norm_proc *norm_process(const struct normaliser *n, uint32_t pid)
{
	return (struct norm_proc *)(uintptr_t)u64map_get(&n->procs, pid);
}

void norm_process_close(struct normaliser *n, struct norm_proc *p, uint64_t ts)
{
	for (struct norm_thread *t = p->threads; t; t = t->next) {
		if (t->depth)
			norm_values_at(n, t, ts);
		norm_close(n, t, ts, 0);
	}
}

struct norm_proc *norm_first_process(const struct normaliser *n)
{
	return n->phead;
}

void norm_process_end(struct normaliser *n, struct norm_proc *p, uint64_t ts, uint32_t signal)
{
	uint64_t end = ts ? ts : p->last_ts;
	/* without a time (killed), the process ended with its last thread:
	 * its async spans still open end there, as its threads' spans do */
	for (struct norm_thread *t = p->threads; !ts && t; t = t->next) {
		uint64_t at = norm_end_of(n, t);
		if (at > end)
			end = at;
	}
	while (p->ahead) /* async spans still open end with it */
		norm_async_close(n, p, p->ahead, p->ahead->btid, end, SPAN_F_UNFINISHED);
	while (p->threads) {
		struct norm_thread *t = p->threads;
		uint64_t at = ts ? ts : norm_end_of(n, t);
		if (t->depth)
			norm_values_at(n, t, at);
		norm_close(n, t, at, 0);
		if (at > end)
			end = at;
		norm_thread_free(n, t);
	}
	struct span_event ev = {.kind = SPAN_PROCESS_END,
				.pid = p->pid,
				.ts = end,
				.name = p->name,
				.value = signal};
	norm_emit(n, &ev);
	norm_proc_free(n, p);
}

struct norm_proc *norm_process_start(struct normaliser *n, uint32_t pid, uint32_t ppid,
				     uint32_t name, uint64_t ts)
{
	struct norm_proc *p = norm_process(n, pid);
	if (p)
		norm_process_end(n, p, 0, 0);
	if (n->nproc >= NORM_MAX_PROCS) {
		norm_refuse(n, false);
		return NULL;
	}
	p = calloc(1, sizeof *p);
	if (!p || u64map_put(&n->procs, pid, (uintptr_t)p) < 0) {
		free(p);
		norm_refuse(n, true);
		return NULL;
	}
	p->pid = pid;
	p->name = name;
	p->last_ts = ts;
	p->prev = n->ptail;
	if (n->ptail)
		n->ptail->next = p;
	else
		n->phead = p;
	n->ptail = p;
	n->nproc++;
	struct span_event ev = {
		.kind = SPAN_PROCESS, .pid = pid, .ts = ts, .name = name, .value = ppid};
	norm_emit(n, &ev);
	return p;
}

struct norm_thread *norm_thread_find(const struct normaliser *n, uint32_t pid, uint32_t tid)
{
	struct norm_thread *t = n->last;
	if (t && t->pid == pid && t->tid == tid)
		return t;
	return (struct norm_thread *)(uintptr_t)u64map_get(&n->threads, norm_tid_key(pid, tid));
}

static struct norm_thread *norm_thread_new(struct normaliser *n, struct norm_proc *p, uint32_t tid,
					   uint64_t ts, uint32_t name)
{
	if (n->nthread >= NORM_MAX_THREADS) {
		norm_refuse(n, false);
		return NULL;
	}
	struct norm_thread *t = calloc(1, sizeof *t);
	if (t) {
		t->cap = 16;
		t->stk = malloc(t->cap * sizeof *t->stk);
		if (n->nval)
			t->val = calloc(((size_t)t->cap + 2) * n->nval, sizeof *t->val);
	}
	if (!t || !t->stk || (n->nval && !t->val) ||
	    u64map_put(&n->threads, norm_tid_key(p->pid, tid), (uintptr_t)t) < 0) {
		if (t) {
			free(t->stk);
			free(t->val);
		}
		free(t);
		norm_refuse(n, true);
		return NULL;
	}
	t->pid = p->pid;
	t->tid = tid;
	t->proc = p;
	t->last_ts = ts;
	t->next = p->threads;
	if (p->threads)
		p->threads->prev = t;
	p->threads = t;
	n->nthread++;
	struct span_event ev = {
		.kind = SPAN_THREAD, .pid = p->pid, .tid = tid, .ts = ts, .name = name};
	norm_emit(n, &ev);
	return t;
}

struct norm_thread *norm_thread(struct normaliser *n, struct norm_proc *p, uint32_t tid,
				uint64_t ts)
{
	struct norm_thread *t = norm_thread_find(n, p->pid, tid);
	if (!t)
		t = norm_thread_new(n, p, tid, ts, 0);
	if (t)
		n->last = t;
	return t;
}

void norm_thread_name(struct normaliser *n, struct norm_proc *p, uint32_t tid, uint32_t name)
{
	struct norm_thread *t = norm_thread_find(n, p->pid, tid);
	if (!t) {
		norm_thread_new(n, p, tid, p->last_ts, name);
		return;
	}
	struct span_event ev = {
		.kind = SPAN_THREAD, .pid = p->pid, .tid = tid, .ts = t->last_ts, .name = name};
	norm_emit(n, &ev);
}

/* A begin with a full stack: grow it, or count the begin as over the limit
 * (-1: not pushed). */
int norm_grow(struct normaliser *n, struct norm_thread *t)
{
	struct norm_stack *s = NULL;
	uint64_t *v = NULL;
	if (t->cap < NORM_MAX_DEPTH && !t->over && n->nval) {
		/* the rows grow; the latest values and deltas move up */
		v = realloc(t->val, ((size_t)2 * t->cap + 2) * n->nval * sizeof *v);
		if (v) {
			t->val = v;
			memmove(v + (size_t)2 * t->cap * n->nval, v + (size_t)t->cap * n->nval,
				2 * (size_t)n->nval * sizeof *v);
		}
	}
	if (t->cap < NORM_MAX_DEPTH && !t->over && (v || !n->nval))
		s = realloc(t->stk, 2 * t->cap * sizeof *s);
	if (!s && v) /* keep the values where the old capacity has them */
		memmove(v + (size_t)t->cap * n->nval, v + (size_t)2 * t->cap * n->nval,
			2 * (size_t)n->nval * sizeof *v);
	if (!s) {
		norm_refuse(n, t->cap < NORM_MAX_DEPTH && !t->over);
		t->over++;
		return -1;
	}
	t->stk = s;
	t->cap *= 2;
	return 0;
}

/* An end that does not name the innermost open span: close the spans inside
 * the one it names (unfinished), or count it unmatched (-1). */
int norm_mismatch(struct normaliser *n, struct norm_thread *t, uint64_t ns, uint32_t name)
{
	uint32_t k = t->depth;
	while (k > 0 && t->stk[k - 1].name != name)
		k--;
	if (k == 0) {
		n->stats.unmatched++;
		return -1;
	}
	norm_close(n, t, ns, k);
	return 0;
}

void norm_thread_exit(struct normaliser *n, struct norm_thread *t, uint64_t ns)
{
	if (t->depth)
		norm_values_at(n, t, ns);
	norm_close(n, t, ns, 0);
	norm_async_leave(n, t->proc, t->tid, ns);
	norm_thread_free(n, t);
}

void norm_lost(struct normaliser *n, struct norm_thread *t)
{
	norm_close(n, t, t->last_ts, 0);
}

void norm_damage(struct normaliser *n, uint32_t pid, uint32_t tid, uint64_t ts,
		 enum span_damage what, uint64_t amount)
{
	if (!amount)
		return;
	struct span_event ev = {.kind = SPAN_DAMAGE,
				.pid = pid,
				.tid = tid,
				.ts = ts,
				.depth = what,
				.value = amount > INT64_MAX ? INT64_MAX : (int64_t)amount};
	norm_emit(n, &ev);
}

void norm_resync(struct normaliser *n, struct norm_thread *t, uint32_t low, uint32_t count,
		 uint32_t unnamed)
{
	if (low != UINT32_MAX && t->nunnamed) {
		/* the source's `low` counts the unnamed spans among its open
		 * ones: what it keeps, in the groups and the named spans */
		uint32_t shift = 0, g;
		for (g = 0; g < t->nunnamed; g++) {
			struct norm_unnamed *u = &t->unnamed[g];
			if (low <= u->at + shift)
				break; /* this group and those above ended */
			if (low - (u->at + shift) < u->n) {
				u->n = low - (u->at + shift); /* the rest ended */
				shift = low - u->at;
				g++;
				break;
			}
			shift += u->n;
		}
		t->nunnamed = g;
		low -= shift;
	}
	if (low < t->depth) {
		norm_values_at(n, t, t->last_ts);
		norm_close(n, t, t->last_ts, low);
		t->over = 0;
	} else if (low - t->depth < t->over) { /* some beyond NORM_MAX_DEPTH ended */
		t->over = low - t->depth;
	}
	t->resume = count;
	if (unnamed) {
		/* above the `count` begins to come (a tale ends with them: count
		 * is 0 then), with the group there if there is one; out of
		 * memory, the innermost takes them (their ends then close
		 * named spans), counted */
		uint32_t at = t->depth + count, k = t->nunnamed;
		struct norm_unnamed *u = k ? &t->unnamed[k - 1] : NULL;
		if (!u || u->at != at) {
			if (GROW(t->unnamed, (size_t)k + 1, t->capunnamed, 4) == 0) {
				u = &t->unnamed[t->nunnamed++];
				*u = (struct norm_unnamed){at, 0};
			} else {
				norm_refuse(n, true);
			}
		}
		if (u)
			u->n = u->n + unnamed < u->n ? UINT32_MAX : u->n + unnamed;
	}
}
