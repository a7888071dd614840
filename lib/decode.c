/* decode.c: the span wire decoder (decode.h).  Owns record framing and
 * resynchronisation, validation of every field, per-process state (clock,
 * name namespace), per-thread open stacks, and the balanced span_event stream
 * handed to the sinks.
 *
 * Framing: a record is accepted when its header has the magic, a length of
 * 16..4096 that is a multiple of 8, and a matching check byte.  Anything else
 * is skipped byte by byte up to the next possible magic (bad_bytes).  A record
 * with a good header but an unknown type or bad contents is skipped whole
 * (bad_records).  Complete records are decoded straight from the caller's
 * buffer; only a record split across feeds is copied (pend).
 *
 * Balance rules (what the sinks see):
 * - BEGIN pushes (name, begin ts) on its thread's stack and is emitted with
 *   depth = the stack depth before the push.
 * - END naming the innermost open span closes it (flags 0).  END naming an
 *   outer open span closes the spans inside it first, at the END's ts, with
 *   SPAN_F_UNFINISHED (counted in unfinished), then closes the named span
 *   normally.  END naming no open span: unmatched++, ignored.
 * - BEGIN/END/INSTANT/COUNTER with an undefined id (or id 0): bad_ids++, not
 *   emitted; an undefined BEGIN is not pushed and an undefined END pops
 *   nothing, so they can never close or shift a defined span.
 * - A BEGIN beyond DECODE_MAX_DEPTH is not pushed (over_limit++); the thread
 *   counts it, and the next END (whatever its name) is taken as its end and
 *   dropped, since overflowed spans are always the innermost.
 * - An END's ts is never before its begin's: it is raised to the begin ts.
 * - THREAD_EXIT closes the thread's open spans at its ts, EXIT closes every
 *   open span of the process at its ts and emits SPAN_PROCESS_END (value = the
 *   fatal signal, 0 for a normal exit), all SPAN_F_UNFINISHED.  A HELLO for a
 *   known pid (exec, pid reuse) does the same at each thread's last ts, emits
 *   SPAN_PROCESS_END, forgets the process's names and threads, and starts it
 *   afresh with SPAN_PROCESS.  decoder_finish does it for every live process.
 *
 * Lost records: each thread's events records carry a sequence number
 * (expected from 0) and the thread's cumulative dropped event words.  A
 * record whose seq is not the next expected one, or whose dropped grew,
 * means the target lost events: the missing records count in lost_records,
 * the growth of dropped in dropped, and since a lost END would leave its
 * BEGIN open for ever, the thread's open spans are first closed at its last
 * ts, SPAN_F_UNFINISHED.  EXIT's dropped (the process's total) adds what no
 * record told.  A process still live at decoder_finish lost its EXIT (killed
 * by SIGKILL, or its final records were dropped): no_exit.
 *
 * Records from a pid without a HELLO, and events with tid 0, are bad_records.
 * Names are cut at their first NUL; an empty name is valid (a span named "").
 * A code name (WIRE_NAME_CODE) is symbolised, and the first time a symbol is
 * seen its shown text (demangled per decoder_set_demangle) and source
 * location are computed once into the name view (spannames.h); events only
 * ever carry the raw name's id.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "demangle.h"
#include "u64map.h"
#include "symbols.h"
#include "wire.h"

#define DECODE_MAX_PROCS 4096	    /* live processes */
#define DECODE_MAX_THREADS 65536    /* live threads */
#define DECODE_MAX_DEPTH 4096	    /* open spans per thread */
#define DECODE_MAX_NAMES (1u << 20) /* name ids defined over live processes */
#define DECODE_MAX_STRINGS (1u << 20)
#define DECODE_MAX_STRBYTES (64u << 20)
#define DECODE_DIRECT_IDS 65536 /* ids below this may live in a flat array */

struct dstack {
	uint32_t name;
	uint32_t pad;
	uint64_t begin; /* ns */
};

struct dproc;

struct dthread {
	uint32_t pid, tid;
	struct dproc *proc;
	struct dstack *stk;
	uint32_t depth, cap;
	uint32_t over;	   /* begins beyond DECODE_MAX_DEPTH still open */
	uint32_t next_seq; /* seq of the next events record expected */
	uint32_t dropped;  /* the thread's dropped words as last reported */
	uint64_t last_ts;
	struct dthread *prev, *next; /* the process's threads */
};

struct dproc {
	uint32_t pid;
	uint32_t name;
	/* ns = mono0 + ((ts - tsc0) * mult) >> shift, for every clock kind */
	uint64_t tsc0, mono0;
	uint32_t mult, shift;
	uint32_t *map; /* wire id -> strtab id, ids < nmap */
	uint32_t nmap;
	struct u64map big; /* the other ids */
	uint32_t ndefined;
	uint64_t last_ts;
	uint64_t dropped; /* dropped words its threads' records reported */
	struct dthread *threads;
	struct dproc *prev, *next; /* in order of HELLO */
};

struct decoder {
	struct span_clock clock;
	struct span_sink sink[DECODE_MAX_SINKS];
	int nsink;
	struct decode_stats stats;
	struct strtab strings;
	struct span_names names; /* how code names show (spannames.h) */
	enum demangle_mode demangle;
	size_t strbytes;
	struct symbols *sym;
	struct u64map procs, threads;
	struct dproc *phead, *ptail;
	uint32_t nproc, nthread, ndefined;
	struct dthread *last; /* thread of the last events record */
	decoder_hook_fn hook; /* sees each record of the byte stream first */
	void *hook_ctx;
	bool oom;
	size_t npend;
	uint64_t pend[2 * WIRE_MAX_RECORD / 8];
};

/* ---- small helpers ---------------------------------------------------- */

static inline uint64_t decode_load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint32_t decode_load32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint64_t decode_tid_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static inline uint64_t decode_ns(const struct dproc *p, uint64_t ts)
{
	if (ts >= p->tsc0)
		return p->mono0 +
		       (uint64_t)(((unsigned __int128)(ts - p->tsc0) * p->mult) >> p->shift);
	uint64_t back = (uint64_t)(((unsigned __int128)(p->tsc0 - ts) * p->mult) >> p->shift);
	return back < p->mono0 ? p->mono0 - back : 0;
}

static inline void decode_emit(struct decoder *d, const struct span_event *ev)
{
	for (int i = 0; i < d->nsink; i++)
		d->sink[i].event(d->sink[i].arg, ev);
}

static void decode_refuse(struct decoder *d, bool oom)
{
	d->stats.over_limit++;
	if (oom)
		d->oom = true;
}

/* ---- names ------------------------------------------------------------ */

static inline uint32_t decode_name(const struct dproc *p, uint32_t id)
{
	return id < p->nmap ? p->map[id] : (uint32_t)u64map_get(&p->big, id);
}

/* A strtab id for s (cut at its first NUL), within the string limits; 0 for
 * an empty s unless empty_ok (span names may be empty, process and thread
 * names are then taken as absent). */
static uint32_t decode_intern(struct decoder *d, const char *s, size_t len, bool empty_ok)
{
	const char *nul = memchr(s, '\0', len);
	if (nul)
		len = (size_t)(nul - s);
	if (!len && !empty_ok)
		return 0;
	uint32_t id = strtab_lookup(&d->strings, s, len);
	if (id)
		return id;
	if (d->strings.n > DECODE_MAX_STRINGS || d->strbytes + len > DECODE_MAX_STRBYTES) {
		decode_refuse(d, false);
		return 0;
	}
	id = strtab_intern(&d->strings, s, len);
	if (!id)
		decode_refuse(d, true);
	else
		d->strbytes += len + 1;
	return id;
}

static void decode_define(struct decoder *d, struct dproc *p, uint32_t id, uint32_t gid)
{
	bool fresh = decode_name(p, id) == 0;
	if (fresh && d->ndefined >= DECODE_MAX_NAMES) {
		decode_refuse(d, false);
		return;
	}
	if (id >= p->nmap && id < DECODE_DIRECT_IDS && id < 2 * p->ndefined + 1024) {
		uint32_t n = p->nmap ? p->nmap : 64;
		while (n <= id)
			n *= 2;
		uint32_t *map = realloc(p->map, n * sizeof *map);
		if (!map) {
			decode_refuse(d, true);
			return;
		}
		memset(map + p->nmap, 0, (n - p->nmap) * sizeof *map);
		for (uint32_t j = 0; j < p->big.cap; j++) /* ids now covered */
			if (p->big.key[j] && p->big.key[j] < n)
				map[p->big.key[j]] = (uint32_t)p->big.val[j];
		p->map = map;
		p->nmap = n;
	}
	if (id < p->nmap) {
		p->map[id] = gid;
	} else if (u64map_put(&p->big, id, gid) < 0) {
		decode_refuse(d, true);
		return;
	}
	if (fresh) {
		p->ndefined++;
		d->ndefined++;
	}
}

/* ---- processes and threads ------------------------------------------- */

static void decode_close(struct decoder *d, struct dthread *t, uint64_t ns, uint32_t keep)
{
	struct span_event ev = {
		.kind = SPAN_END, .pid = t->pid, .tid = t->tid, .flags = SPAN_F_UNFINISHED};
	while (t->depth > keep) {
		const struct dstack *e = &t->stk[--t->depth];
		ev.ts = ns > e->begin ? ns : e->begin;
		ev.name = e->name;
		ev.depth = t->depth;
		ev.begin_ts = e->begin;
		d->stats.unfinished++;
		d->stats.spans++;
		decode_emit(d, &ev);
	}
	if (!keep)
		t->over = 0;
}

static void decode_thread_free(struct decoder *d, struct dthread *t)
{
	struct dproc *p = t->proc;
	if (t->prev)
		t->prev->next = t->next;
	else
		p->threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	u64map_del(&d->threads, decode_tid_key(t->pid, t->tid));
	if (d->last == t)
		d->last = NULL;
	d->nthread--;
	free(t->stk);
	free(t);
}

static struct dthread *decode_thread_new(struct decoder *d, struct dproc *p, uint32_t tid,
					 uint64_t ns, uint32_t name)
{
	if (d->nthread >= DECODE_MAX_THREADS) {
		decode_refuse(d, false);
		return NULL;
	}
	struct dthread *t = calloc(1, sizeof *t);
	if (t) {
		t->cap = 16;
		t->stk = malloc(t->cap * sizeof *t->stk);
	}
	if (!t || !t->stk ||
	    u64map_put(&d->threads, decode_tid_key(p->pid, tid), (uintptr_t)t) < 0) {
		if (t)
			free(t->stk);
		free(t);
		decode_refuse(d, true);
		return NULL;
	}
	t->pid = p->pid;
	t->tid = tid;
	t->proc = p;
	t->last_ts = ns;
	t->next = p->threads;
	if (p->threads)
		p->threads->prev = t;
	p->threads = t;
	d->nthread++;
	struct span_event ev = {
		.kind = SPAN_THREAD, .pid = p->pid, .tid = tid, .ts = ns, .name = name};
	decode_emit(d, &ev);
	return t;
}

static inline struct dproc *decode_proc(const struct decoder *d, uint32_t pid)
{
	return (struct dproc *)(uintptr_t)u64map_get(&d->procs, pid);
}

/* Closes everything the process has open (at ts, or at each thread's last
 * ts when ts is 0), emits SPAN_PROCESS_END and drops its threads and names. */
static void decode_proc_end(struct decoder *d, struct dproc *p, uint64_t ts, uint32_t signal)
{
	uint64_t end = ts ? ts : p->last_ts;
	while (p->threads) {
		struct dthread *t = p->threads;
		decode_close(d, t, ts ? ts : t->last_ts, 0);
		if (t->last_ts > end && !ts)
			end = t->last_ts;
		decode_thread_free(d, t);
	}
	struct span_event ev = {.kind = SPAN_PROCESS_END,
				.pid = p->pid,
				.ts = end,
				.name = p->name,
				.value = signal};
	decode_emit(d, &ev);
	free(p->map);
	p->map = NULL;
	p->nmap = 0;
	u64map_release(&p->big);
	d->ndefined -= p->ndefined;
	p->ndefined = 0;
}

static void decode_proc_free(struct decoder *d, struct dproc *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		d->phead = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		d->ptail = p->prev;
	u64map_del(&d->procs, p->pid);
	d->nproc--;
	free(p);
}

/* ---- records ---------------------------------------------------------- */

/* The hot loop: one WIRE_EVENTS record of thread t. */
static void decode_events(struct decoder *d, struct dthread *t, const uint8_t *w, size_t nw,
			  uint64_t ts)
{
	const struct dproc *p = t->proc;
	struct dstack *stk = t->stk;
	uint32_t depth = t->depth;
	struct span_event ev = {.pid = t->pid, .tid = t->tid};
	uint64_t ns = t->last_ts;

	for (size_t i = 0; i < nw; i++) {
		uint64_t x = decode_load64(w + 8 * i);
		ts += x & WIRE_DELTA_MASK;
		uint32_t id = (uint32_t)(x >> WIRE_ID_SHIFT) & WIRE_ID_MAX;
		unsigned op = (unsigned)(x >> WIRE_OP_SHIFT);
		uint32_t name = decode_name(p, id);
		if (op == WIRE_OP_COUNTER) {
			if (i + 1 >= nw) {
				d->stats.bad_records++; /* value word missing */
				break;
			}
			ev.value = (int64_t)decode_load64(w + 8 * ++i);
		}
		if (__builtin_expect(name == 0, 0)) {
			d->stats.bad_ids++;
			continue;
		}
		ns = decode_ns(p, ts);
		switch (op) {
		case WIRE_OP_BEGIN:
			if (__builtin_expect(depth == t->cap, 0)) {
				struct dstack *s = NULL;
				if (t->cap < DECODE_MAX_DEPTH && !t->over)
					s = realloc(stk, 2 * t->cap * sizeof *s);
				if (!s) {
					decode_refuse(d, t->cap < DECODE_MAX_DEPTH && !t->over);
					t->over++;
					continue;
				}
				t->stk = stk = s;
				t->cap *= 2;
			}
			stk[depth].name = name;
			stk[depth].begin = ns;
			ev.kind = SPAN_BEGIN;
			ev.ts = ns;
			ev.name = name;
			ev.flags = 0;
			ev.depth = depth++;
			decode_emit(d, &ev);
			break;
		case WIRE_OP_END:
			if (__builtin_expect(t->over != 0, 0)) {
				t->over--;
				continue;
			}
			if (__builtin_expect(depth == 0 || stk[depth - 1].name != name, 0)) {
				uint32_t k = depth;
				while (k > 0 && stk[k - 1].name != name)
					k--;
				if (k == 0) {
					d->stats.unmatched++;
					continue;
				}
				t->depth = depth;
				decode_close(d, t, ns, k);
				depth = t->depth;
			}
			depth--;
			ev.kind = SPAN_END;
			ev.ts = ns > stk[depth].begin ? ns : stk[depth].begin;
			ev.name = name;
			ev.flags = 0;
			ev.depth = depth;
			ev.begin_ts = stk[depth].begin;
			d->stats.spans++;
			decode_emit(d, &ev);
			break;
		default: /* INSTANT, or COUNTER (its value was read above) */
			ev.kind = op == WIRE_OP_INSTANT ? SPAN_INSTANT : SPAN_COUNTER;
			ev.ts = ns;
			ev.name = name;
			ev.flags = 0;
			ev.depth = depth;
			decode_emit(d, &ev);
			break;
		}
	}
	t->depth = depth;
	if (ns > t->last_ts)
		t->last_ts = ns;
	if (t->last_ts > t->proc->last_ts)
		t->proc->last_ts = t->last_ts;
	d->stats.events += nw;
}

static inline void decode_add(uint64_t *to, uint64_t n)
{
	*to = *to + n < n ? UINT64_MAX : *to + n;
}

/* Thread t's events record `seq` reports `dropped` words dropped in all: count
 * what was lost since its last record and, if anything was, close its open
 * spans, whose ends may be among the lost events. */
static void decode_lost(struct decoder *d, struct dthread *t, uint32_t seq, uint32_t dropped)
{
	bool lost = false;
	if (seq != t->next_seq) {
		/* behind: the thread started over (its THREAD_EXIT and tid reuse
		 * went unseen): at least one record is missing */
		uint32_t gap = seq - t->next_seq;
		decode_add(&d->stats.lost_records, gap < (UINT32_C(1) << 31) ? gap : 1);
		lost = true;
		if (seq < t->next_seq)
			t->dropped = 0;
	}
	if (dropped > t->dropped) {
		decode_add(&d->stats.dropped, dropped - t->dropped);
		decode_add(&t->proc->dropped, dropped - t->dropped);
		lost = true;
	}
	t->dropped = dropped;
	if (lost)
		decode_close(d, t, t->last_ts, 0);
}

/* Exact length of a record = fixed part + n variable bytes, padded. */
static inline bool decode_len_ok(size_t paylen, size_t fixed, size_t n)
{
	return n <= paylen && fixed + n <= paylen && wire_pad8((unsigned)(fixed + n)) == paylen;
}

static bool decode_hello(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl,
			 size_t paylen)
{
	struct wire_hello hello;
	if (paylen < sizeof hello || h->pid == 0)
		return false;
	memcpy(&hello, pl, sizeof hello);
	if (hello.version != WIRE_VERSION || hello.clock > WIRE_CLOCK_TSC ||
	    !decode_len_ok(paylen, sizeof hello, hello.name_len))
		return false;
	struct dproc *p = decode_proc(d, h->pid);
	if (p) {
		decode_proc_end(d, p, 0, 0);
	} else {
		if (d->nproc >= DECODE_MAX_PROCS) {
			decode_refuse(d, false);
			return true;
		}
		p = calloc(1, sizeof *p);
		if (!p || u64map_put(&d->procs, h->pid, (uintptr_t)p) < 0) {
			free(p);
			decode_refuse(d, true);
			return true;
		}
		p->pid = h->pid;
		p->prev = d->ptail;
		if (d->ptail)
			d->ptail->next = p;
		else
			d->phead = p;
		d->ptail = p;
		d->nproc++;
	}
	if (hello.clock == WIRE_CLOCK_MONOTONIC) {
		p->tsc0 = p->mono0 = 0;
		p->mult = 1;
		p->shift = 0;
	} else if (d->clock.valid) {
		p->tsc0 = d->clock.tsc0;
		p->mono0 = d->clock.mono0;
		p->mult = d->clock.mult;
		p->shift = d->clock.shift;
	} else {
		p->tsc0 = hello.ts;
		p->mono0 = hello.mono_ns;
		p->mult = 1;
		p->shift = 0;
		d->stats.clock_unknown++;
	}
	p->name = decode_intern(d, (const char *)pl + sizeof hello, hello.name_len, false);
	p->last_ts = decode_ns(p, hello.ts);
	struct span_event ev = {.kind = SPAN_PROCESS,
				.pid = p->pid,
				.ts = p->last_ts,
				.name = p->name,
				.value = hello.ppid};
	decode_emit(d, &ev);
	return true;
}

/* Once per function name: what it shows as (--demangle) and where it is
 * defined, for the writers (spannames.h). */
static void decode_view(struct decoder *d, uint32_t gid, const char *fn, const char *path,
			const struct wire_name *wn)
{
	uint32_t text = gid, file = 0;
	char *shown = demangle_symbol(fn, d->demangle);
	if (shown) {
		text = decode_intern(d, shown, strlen(shown), true);
		free(shown);
	}
	char where[1024];
	unsigned line = 0;
	if (symbols_where(d->sym, path, wn->addr, wn->base, where, sizeof where, &line) == 0)
		file = decode_intern(d, where, strlen(where), false);
	if (span_names_set(&d->names, gid, text ? text : gid, file, file ? line : 0) < 0)
		decode_refuse(d, true);
}

static bool decode_namedef(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl,
			   size_t paylen)
{
	struct wire_name wn;
	if (paylen < sizeof wn)
		return false;
	memcpy(&wn, pl, sizeof wn);
	if (wn.id == 0 || wn.id > WIRE_ID_MAX || wn.kind > WIRE_NAME_CODE ||
	    !decode_len_ok(paylen, sizeof wn, wn.len))
		return false;
	struct dproc *p = decode_proc(d, h->pid);
	if (!p)
		return false;
	const char *bytes = (const char *)pl + sizeof wn;
	size_t n = wn.len;
	const char *nul = memchr(bytes, '\0', n);
	if (nul)
		n = (size_t)(nul - bytes);
	uint32_t gid;
	if (wn.kind == WIRE_NAME_CODE) {
		char path[WIRE_MAX_RECORD], fn[1024];
		memcpy(path, bytes, n);
		path[n] = '\0';
		if (!d->sym)
			d->sym = symbols_new();
		size_t len = symbols_name(d->sym, path, wn.addr, wn.base, fn, sizeof fn);
		gid = decode_intern(d, fn, len, true);
		if (gid && !span_names_known(&d->names, gid))
			decode_view(d, gid, fn, path, &wn);
	} else {
		gid = decode_intern(d, bytes, n, true);
	}
	if (gid)
		decode_define(d, p, wn.id, gid);
	return true;
}

static bool decode_thread_name(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl,
			       size_t paylen)
{
	if (paylen < 8 || h->tid == 0)
		return false;
	uint32_t n = decode_load32(pl);
	if (!decode_len_ok(paylen, 8, n))
		return false;
	struct dproc *p = decode_proc(d, h->pid);
	if (!p)
		return false;
	uint32_t name = decode_intern(d, (const char *)pl + 8, n, false);
	struct dthread *t = (struct dthread *)(uintptr_t)u64map_get(&d->threads,
								    decode_tid_key(h->pid, h->tid));
	if (!t) {
		decode_thread_new(d, p, h->tid, p->last_ts, name);
		return true;
	}
	struct span_event ev = {
		.kind = SPAN_THREAD, .pid = h->pid, .tid = h->tid, .ts = t->last_ts, .name = name};
	decode_emit(d, &ev);
	return true;
}

static void decode_record(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl)
{
	size_t paylen = h->len - WIRE_HDR_SIZE;
	bool ok = false;
	struct dproc *p;

	switch (h->type) {
	case WIRE_EVENTS: {
		if (paylen < 16 || h->tid == 0)
			break;
		uint64_t key = decode_tid_key(h->pid, h->tid);
		struct dthread *t = d->last;
		if (!t || decode_tid_key(t->pid, t->tid) != key) {
			t = (struct dthread *)(uintptr_t)u64map_get(&d->threads, key);
			if (!t) {
				if (!(p = decode_proc(d, h->pid)))
					break;
				t = decode_thread_new(d, p, h->tid, decode_ns(p, decode_load64(pl)),
						      0);
				if (!t) {
					ok = true; /* refused by a limit, counted */
					break;
				}
			}
			d->last = t;
		}
		d->stats.records++;
		uint32_t seq = decode_load32(pl + 8), dropped = decode_load32(pl + 12);
		if (__builtin_expect(seq != t->next_seq || dropped != t->dropped, 0))
			decode_lost(d, t, seq, dropped);
		t->next_seq = seq + 1;
		decode_events(d, t, pl + 16, (paylen - 16) / 8, decode_load64(pl));
		return;
	}
	case WIRE_HELLO:
		ok = decode_hello(d, h, pl, paylen);
		break;
	case WIRE_NAME:
		ok = decode_namedef(d, h, pl, paylen);
		break;
	case WIRE_THREAD_NAME:
		ok = decode_thread_name(d, h, pl, paylen);
		break;
	case WIRE_THREAD_EXIT: {
		if (paylen != 8 || h->tid == 0 || !(p = decode_proc(d, h->pid)))
			break;
		struct dthread *t = (struct dthread *)(uintptr_t)u64map_get(
			&d->threads, decode_tid_key(h->pid, h->tid));
		if (t) {
			uint64_t ns = decode_ns(p, decode_load64(pl));
			decode_close(d, t, ns, 0);
			decode_thread_free(d, t);
		}
		ok = true;
		break;
	}
	case WIRE_EXIT: {
		struct wire_exit ex;
		if (paylen != sizeof ex || !(p = decode_proc(d, h->pid)))
			break;
		memcpy(&ex, pl, sizeof ex);
		if (ex.dropped > p->dropped) /* drops no record of a thread told */
			decode_add(&d->stats.dropped, ex.dropped - p->dropped);
		uint64_t ns = decode_ns(p, ex.ts);
		decode_proc_end(d, p, ns ? ns : 1, ex.signal);
		decode_proc_free(d, p);
		ok = true;
		break;
	}
	case WIRE_DROPPED: {
		if (paylen != 8)
			break;
		uint64_t n = decode_load64(pl);
		decode_add(&d->stats.dropped, n);
		if ((p = decode_proc(d, h->pid)))
			decode_add(&p->dropped, n);
		ok = true;
		break;
	}
	case WIRE_KICK: /* a wake-up for the ring reader, nothing to decode */
		ok = paylen == 0;
		break;
	default:
		break;
	}
	if (ok)
		d->stats.records++;
	else
		d->stats.bad_records++;
}

/* ---- framing ---------------------------------------------------------- */

static inline bool decode_hdr_ok(const struct wire_hdr *h)
{
	return h->magic == WIRE_MAGIC && h->len >= WIRE_HDR_SIZE && h->len <= WIRE_MAX_RECORD &&
	       h->len % 8 == 0 && h->check == wire_check(h);
}

/* Could the n (< 16) bytes at p begin a header? */
static bool decode_hdr_prefix(const uint8_t *p, size_t n)
{
	uint32_t magic = WIRE_MAGIC;
	return memcmp(p, &magic, n < 4 ? n : 4) == 0;
}

/* First position after i where a header could start (or n). */
static size_t decode_next_magic(const uint8_t *p, size_t i, size_t n)
{
	const uint8_t first = (uint8_t)(WIRE_MAGIC & 0xff);
	for (i++; i < n; i++) {
		const uint8_t *q = memchr(p + i, first, n - i);
		if (!q)
			return n;
		i = (size_t)(q - p);
		if (decode_hdr_prefix(q, n - i))
			return i;
	}
	return n;
}

/* Decodes every complete record in p[0..n); returns the bytes consumed.  What
 * is left is shorter than a record and may begin one. */
static size_t decode_scan(struct decoder *d, const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		size_t avail = n - i;
		if (avail >= WIRE_HDR_SIZE) {
			struct wire_hdr h;
			memcpy(&h, p + i, sizeof h);
			if (decode_hdr_ok(&h)) {
				if (h.len > avail)
					break;
				if (d->hook)
					d->hook(d->hook_ctx, &h, p + i + WIRE_HDR_SIZE);
				decode_record(d, &h, p + i + WIRE_HDR_SIZE);
				i += h.len;
				continue;
			}
		} else if (decode_hdr_prefix(p + i, avail)) {
			break;
		}
		size_t j = decode_next_magic(p, i, n);
		d->stats.bad_bytes += j - i;
		i = j;
	}
	return i;
}

/* ---- API -------------------------------------------------------------- */

struct decoder *decoder_new(const struct span_clock *clock)
{
	struct decoder *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (strtab_init(&d->strings) < 0) {
		free(d);
		return NULL;
	}
	span_names_init(&d->names, &d->strings);
	if (clock && clock->valid && clock->mult) {
		d->clock = *clock;
		if (d->clock.shift > 63)
			d->clock.shift = 63;
	}
	return d;
}

void decoder_set_hook(struct decoder *d, decoder_hook_fn fn, void *ctx)
{
	d->hook = fn;
	d->hook_ctx = ctx;
}

int decoder_record(struct decoder *d, const void *rec, size_t len)
{
	struct wire_hdr h;
	if (len < WIRE_HDR_SIZE) {
		d->stats.bad_bytes += len;
		return 0;
	}
	memcpy(&h, rec, sizeof h);
	if (!decode_hdr_ok(&h) || h.len != len) {
		d->stats.bad_bytes += len;
		return 0;
	}
	decode_record(d, &h, (const uint8_t *)rec + WIRE_HDR_SIZE);
	return d->oom ? -ENOMEM : 0;
}

void decoder_free(struct decoder *d)
{
	if (!d)
		return;
	while (d->phead) {
		struct dproc *p = d->phead;
		while (p->threads)
			decode_thread_free(d, p->threads);
		free(p->map);
		u64map_release(&p->big);
		decode_proc_free(d, p);
	}
	u64map_release(&d->procs);
	u64map_release(&d->threads);
	symbols_free(d->sym);
	span_names_release(&d->names);
	strtab_release(&d->strings);
	free(d);
}

int decoder_add_sink(struct decoder *d, struct span_sink sink)
{
	if (!sink.event)
		return -EINVAL;
	if (d->nsink == DECODE_MAX_SINKS)
		return -ENOSPC;
	d->sink[d->nsink++] = sink;
	return 0;
}

int decoder_feed(struct decoder *d, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint8_t *pend = (uint8_t *)d->pend;
	d->oom = false;
	/* complete the record split across feeds, through the pend buffer */
	while (d->npend && len) {
		size_t take = len < WIRE_MAX_RECORD ? len : WIRE_MAX_RECORD;
		memcpy(pend + d->npend, p, take);
		size_t total = d->npend + take;
		size_t rest = total - decode_scan(d, pend, total);
		if (rest <= take) { /* the rest is all new input: read it in place */
			p += take - rest;
			len -= take - rest;
			d->npend = 0;
		} else {
			memmove(pend, pend + total - rest, rest);
			d->npend = rest;
			p += take;
			len -= take;
		}
	}
	if (len) {
		size_t used = decode_scan(d, p, len);
		memcpy(pend, p + used, len - used);
		d->npend = len - used;
	}
	return d->oom ? -ENOMEM : 0;
}

void decoder_finish(struct decoder *d)
{
	if (d->npend) {
		struct wire_hdr h;
		if (d->npend >= WIRE_HDR_SIZE && (memcpy(&h, d->pend, sizeof h), decode_hdr_ok(&h)))
			d->stats.bad_records++; /* a truncated record */
		else
			d->stats.bad_bytes += d->npend;
		d->npend = 0;
	}
	while (d->phead) {
		/* only processes that recorded something: a shell that loaded
		 * the library and left through _exit() lost nothing */
		if (d->phead->ndefined || d->phead->dropped)
			d->stats.no_exit++;
		decode_proc_end(d, d->phead, 0, 0);
		decode_proc_free(d, d->phead);
	}
}

const struct decode_stats *decoder_stats(const struct decoder *d)
{
	return &d->stats;
}

const struct strtab *decoder_strings(const struct decoder *d)
{
	return &d->strings;
}

const struct span_names *decoder_names(const struct decoder *d)
{
	return &d->names;
}

void decoder_set_demangle(struct decoder *d, enum demangle_mode mode)
{
	d->demangle = mode;
}
