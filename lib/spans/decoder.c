/* decoder.c: the binary span wire decoder (decoder.h): records framed by
 * wireframe.c (or handed over whole by another transport, decoder_record)
 * become normaliser calls (norm.c), which own balancing and what the
 * sinks see.  This file owns what is particular to the binary wire:
 * validation of every field, each process's clock and name namespace, code
 * addresses symbolised once, and each thread's record sequence.
 *
 * A record with a good header but an unknown type or bad contents is skipped
 * whole (bad_records).  BEGIN/END/INSTANT/COUNTER with an undefined id (or id
 * 0) are counted (bad_ids) and not passed on, so they can never close or
 * shift a defined span.  A HELLO for a known pid (exec, pid reuse) ends the
 * old process at each thread's last ts and forgets its names; EXIT ends it at
 * its ts with its fatal signal; decoder_finish ends every live process.
 *
 * Lost records: each thread's events records carry a sequence number
 * (expected from 0) and the thread's cumulative dropped event words.  A
 * record whose seq is not the next expected one, or whose dropped grew,
 * means the target lost events: the missing records count in lost_records,
 * the growth of dropped in dropped, and since a lost END would leave its
 * BEGIN open for ever, the thread's open spans are first closed (norm_lost).
 * EXIT's dropped (the process's total) adds what no record told.  A thread
 * that knows which of its open spans stayed open across its drop says so in
 * a WIRE_RESYNC before its next events record (norm_resync): only the
 * others close (gaps counts them).  A process
 * still live at decoder_finish lost its EXIT (killed by SIGKILL, or its final
 * records were dropped): no_exit.
 *
 * Records from a pid without a HELLO, and events with tid 0, are bad_records.
 * Names are cut at their first NUL; an empty name is valid (a span named "").
 * A code name (WIRE_NAME_CODE) is symbolised, and the first time a symbol is
 * seen its shown text (demangled per decoder_set_demangle) and source
 * location are computed once into the name view (spannames.h); events only
 * ever carry the raw name's id.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "grow.h"
#include "pbenc.h"
#include "demangle.h"
#include "norm.h"
#include "ring.h"
#include "spanmetric.h"
#include "symbols.h"
#include "u64map.h"
#include "wire.h"
#include "wireframe.h"

#define DECODE_MAX_NAMES (1u << 20) /* name ids defined over live processes */
#define DECODE_MAX_STRINGS (1u << 20)
#define DECODE_MAX_STRBYTES (64u << 20)
#define DECODE_DIRECT_IDS 65536 /* ids below this may live in a flat array */

/* A live process's binary state; its normaliser side is np. */
struct dproc {
	uint32_t pid;
	/* ns = mono0 + ((ts - tsc0) * mult) >> shift, for every clock kind */
	uint64_t tsc0, mono0;
	uint32_t mult, shift;
	uint32_t *map; /* wire id -> strtab id, ids < nmap */
	uint32_t nmap;
	struct u64map big; /* the other ids */
	uint32_t ndefined;
	uint64_t dropped; /* dropped words its threads' records reported */
	uint32_t nvals;	  /* WIRE_VALUES: value words after each begin and end */
	bool foreign;	  /* WIRE_VALUES: they are of another layout than the target's */
	bool unvalued;	  /* counted in stats.unvalued */
	uint64_t calib;	  /* its WIRE_CALIB, in milli-ns (0: none yet) */
	struct norm_proc *np;
	uint8_t *hello; /* its WIRE_HELLO record, whole (decoder_state) */
	uint32_t hello_len;
	uint64_t mark;	      /* decoder_restate's: listed in the state being taken */
	struct u64map tnames; /* tid -> its name's string id, of live threads
			       * (decoder_state) */
};

/* A thread's record sequence, kept in its norm_thread's src. */
#define DECODE_SEQ(t) ((uint32_t)(t)->src)
#define DECODE_DROPPED(t) ((uint32_t)((t)->src >> 32))
#define DECODE_SRC(seq, dropped) ((uint64_t)(dropped) << 32 | (seq))

struct decoder {
	struct spanclock clock;
	struct decode_stats stats; /* the decoder's own counts */
	struct decode_stats view;  /* with the normaliser's and the framing's */
	struct strtab strings;
	struct spannames names; /* how code names show (spannames.h) */
	enum demangle_mode demangle;
	size_t strbytes;
	struct symbols *sym;
	struct u64map procs; /* pid -> struct dproc */
	uint32_t ndefined;
	struct normaliser *norm;
	uint64_t calib_mns; /* WIRE_CALIB: the processes' costs per event, in
			     * thousandths of a ns, summed */
	uint64_t calib_n;   /* how many processes told it */
	struct wireframe frame;
	decoder_hook_fn hook; /* sees each record of the byte stream first */
	void *hook_ctx;
	decoder_running_fn running; /* at decoder_finish: still running? */
	void *running_ctx;
	decoder_tap_fn tap; /* sees each record the decoder takes (a capture) */
	void *tap_ctx;
	bool capture_only;	    /* the tap's records of events are not decoded */
	struct decoder_symfn symfn; /* where code names are symbolised */
	struct decoder_values vals; /* what begins and ends carry (decoder_set_values) */
	bool vals_set;		    /* the off-CPU value and the target's fill every slot */
	bool oom;
	uint64_t restates;   /* decoder_restate calls */
	bool unnamed_states; /* decoder_restate_unnamed */
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

static inline uint64_t decode_ns(const struct dproc *p, uint64_t ts)
{
	if (ts >= p->tsc0)
		return p->mono0 +
		       (uint64_t)(((unsigned __int128)(ts - p->tsc0) * p->mult) >> p->shift);
	uint64_t back = (uint64_t)(((unsigned __int128)(p->tsc0 - ts) * p->mult) >> p->shift);
	return back < p->mono0 ? p->mono0 - back : 0;
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

/* ---- processes --------------------------------------------------------- */

static inline struct dproc *decode_proc(const struct decoder *d, uint32_t pid)
{
	return (struct dproc *)(uintptr_t)u64map_get(&d->procs, pid);
}

/* Forgets the process's names (a new image, or its end). */
static void decode_names_drop(struct decoder *d, struct dproc *p)
{
	free(p->map);
	p->map = NULL;
	p->nmap = 0;
	u64map_release(&p->big);
	d->ndefined -= p->ndefined;
	p->ndefined = 0;
}

/* The process ends (ts 0: without saying when, see norm_process_end) and
 * is forgotten; one shared with the line protocol is handed to it. */
static void decode_proc_end(struct decoder *d, struct dproc *p, uint64_t ts, uint32_t signal)
{
	if (p->np && p->np->shared) { /* its lines may still come: linesrc.c ends it */
		p->np->src = NULL;
		p->np->exited = ts; /* where its threads end, as they would here */
	} else if (p->np)
		norm_process_end(d->norm, p->np, ts, signal);
	decode_names_drop(d, p);
	u64map_release(&p->tnames);
	u64map_del(&d->procs, p->pid);
	free(p->hello);
	free(p);
}

/* ---- records ---------------------------------------------------------- */

static inline void decode_add(uint64_t *to, uint64_t n)
{
	*to = *to + n < n ? UINT64_MAX : *to + n;
}

/* The values of a begin or end at ns: the source's (off-CPU), then the
 * target's words when the process sends what the session expects (else 0). */
static const uint64_t *decode_values(struct decoder *d, struct dproc *p,
				     const struct norm_thread *t, uint64_t ns, const uint8_t *w,
				     uint64_t *v)
{
	const struct decoder_values *dv = &d->vals;
	bool target = p->nvals == dv->n - dv->first_target && !p->foreign;
	if (!d->vals_set || !target) /* a libc call per event where none is needed */
		memset(v, 0, dv->n * sizeof *v);
	if (dv->off_cpu >= 0 && dv->off_cpu_at)
		v[dv->off_cpu] = dv->off_cpu_at(dv->ctx, t->pid, t->tid, ns);
	if (target)
		for (uint32_t k = 0; k < p->nvals; k++)
			v[dv->first_target + k] = decode_load64(w + 8 * k);
	else if (dv->n > dv->first_target) { /* the target's values asked, not sent */
		if (!p->unvalued) {
			p->unvalued = true;
			decode_add(&d->stats.unvalued, 1);
		}
		if (dv->unvalued)
			dv->unvalued(dv->ctx, p->pid);
	}
	return v;
}

/* Thread t waited `ns` for room in spanstat's buffers (cpu_us of it on the
 * CPU) right after its event at `at`: the spans open then hold the wait. */
static void decode_waited(const struct decoder *d, const struct norm_thread *t, uint64_t at,
			  uint64_t ns, uint64_t cpu_us)
{
	uint64_t cpu = cpu_us * 1000;
	if (ns > UINT64_C(1) << 50) /* not a wait: a target's garbage */
		ns = 0;
	norm_damage(d->norm, t->pid, t->tid, at, SPAN_NOTE_WAITED, ns);
	norm_damage(d->norm, t->pid, t->tid, at, SPAN_NOTE_WAITED_OFF, ns > cpu ? ns - cpu : 0);
}

/* A typed argument (RING_CTL_ARG): its key and a string's text must be
 * names the process defined, a bool 0 or 1; else a bad id. */
static void decode_arg(struct decoder *d, const struct dproc *p, struct norm_thread *t, uint64_t at,
		       uint64_t x, uint64_t v)
{
	uint32_t key = decode_name(p, (uint32_t)(x >> 8) & WIRE_ID_MAX);
	unsigned type = (unsigned)(x >> WIRE_ARG_TYPE_SHIFT) & 0xf;
	if (type == WIRE_ARG_STR)
		v = v <= WIRE_ID_MAX ? decode_name(p, (uint32_t)v) : 0;
	if (!key || type >= WIRE_ARG_TYPES || (x >> 34 & 0x3f) ||
	    (type == WIRE_ARG_BOOL && v > 1) || (type == WIRE_ARG_STR && !v)) {
		d->stats.bad_ids++;
		return;
	}
	norm_arg(d->norm, t, at, key, type, v);
}

/* The hot loop: one WIRE_EVENTS record of thread t. */
static void decode_events(struct decoder *d, struct dproc *p, struct norm_thread *t,
			  const uint8_t *w, size_t nw, uint64_t ts)
{
	struct normaliser *n = d->norm;
	uint64_t vbuf[SPANMETRIC_MAX];
	for (size_t i = 0; i < nw; i++) {
		uint64_t x = decode_load64(w + 8 * i);
		if (__builtin_expect(RING_IS_CTL(x), 0)) { /* a note (wire.h): no delta */
			if (i + 1 >= nw) {
				d->stats.bad_records++; /* payload missing */
				break;
			}
			uint64_t v = decode_load64(w + 8 * ++i);
			if ((x & 0xff) == RING_CTL_WAITED) {
				decode_waited(d, t, decode_ns(p, ts), v,
					      (x & WIRE_DELTA_MASK) >> 8);
			} else if ((x & 0xff) == RING_CTL_ARG) {
				decode_arg(d, p, t, decode_ns(p, ts), x, v);
			} else if ((x & 0xff) == RING_CTL_POP && !(v >> WIRE_DELTA_BITS)) {
				ts += v;
				norm_pop(n, t, decode_ns(p, ts), (x & WIRE_DELTA_MASK) >> 8);
			} else if ((x & 0xff) == RING_CTL_POPTO && !(v >> WIRE_DELTA_BITS)) {
				ts += v;
				norm_popto(n, t, decode_ns(p, ts), (x & WIRE_DELTA_MASK) >> 8);
			} else {
				d->stats.bad_ids++;
			}
			continue;
		}
		ts += x & WIRE_DELTA_MASK;
		uint32_t id = (uint32_t)(x >> WIRE_ID_SHIFT) & WIRE_ID_MAX;
		unsigned op = (unsigned)(x >> WIRE_OP_SHIFT);
		uint32_t name = decode_name(p, id);
		int64_t value = 0;
		if (op == WIRE_OP_COUNTER) {
			if (i + 1 >= nw) {
				d->stats.bad_records++; /* value word missing */
				break;
			}
			value = (int64_t)decode_load64(w + 8 * ++i);
		}
		const uint8_t *vw = w + 8 * (i + 1);
		if (op <= WIRE_OP_END && p->nvals) {
			if (i + p->nvals >= nw) {
				d->stats.bad_records++; /* value words missing */
				break;
			}
			i += p->nvals;
		}
		if (__builtin_expect(name == 0, 0)) {
			d->stats.bad_ids++;
			continue;
		}
		uint64_t ns = decode_ns(p, ts);
		const uint64_t *v = NULL;
		if (d->vals.n && op <= WIRE_OP_END)
			v = decode_values(d, p, t, ns, vw, vbuf);
		switch (op) {
		case WIRE_OP_BEGIN:
			norm_begin(n, t, ns, name, v);
			break;
		case WIRE_OP_END:
			norm_end(n, t, ns, name, v);
			break;
		case WIRE_OP_INSTANT:
			norm_instant(n, t, ns, name);
			break;
		default:
			norm_counter(n, t, ns, name, value);
			break;
		}
	}
	d->stats.events += nw;
}

/* Thread t's events record `seq` reports `dropped` words dropped in all: count
 * what was lost since its last record and, if anything was, close its open
 * spans, whose ends may be among the lost events. */
static void decode_lost(struct decoder *d, struct dproc *p, struct norm_thread *t, uint32_t seq,
			uint32_t dropped)
{
	bool lost = false;
	uint32_t had = DECODE_DROPPED(t);
	if (seq != DECODE_SEQ(t)) {
		/* behind: the thread started over (its THREAD_EXIT and tid reuse
		 * went unseen): at least one record is missing */
		uint32_t gap = seq - DECODE_SEQ(t);
		decode_add(&d->stats.lost_records, gap < (UINT32_C(1) << 31) ? gap : 1);
		lost = true;
		if (seq < DECODE_SEQ(t))
			had = 0;
	}
	if (dropped > had) {
		decode_add(&d->stats.dropped, dropped - had);
		decode_add(&p->dropped, dropped - had);
		norm_damage(d->norm, t->pid, t->tid, t->last_ts, SPAN_DMG_DROPPED, dropped - had);
		lost = true;
	}
	t->src = DECODE_SRC(DECODE_SEQ(t), dropped);
	if (lost)
		norm_lost(d->norm, t);
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
	if (p) /* a new image, or the pid reused */
		decode_proc_end(d, p, 0, 0);
	p = calloc(1, sizeof *p);
	if (!p || u64map_put(&d->procs, h->pid, (uintptr_t)p) < 0) {
		free(p);
		decode_refuse(d, true);
		return true;
	}
	p->pid = h->pid;
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
	uint32_t name = decode_intern(d, (const char *)pl + sizeof hello, hello.name_len, false);
	/* a process another source (linesrc.c) started first is the same one:
	 * the library's spans join it rather than end it */
	struct norm_proc *other = norm_process(d->norm, p->pid);
	p->np = other && !other->src ? other
				     : norm_process_start(d->norm, p->pid, hello.ppid, name,
							  decode_ns(p, hello.ts));
	if (!p->np) { /* refused by a limit (counted): its records are bad */
		u64map_del(&d->procs, p->pid);
		free(p);
		return true;
	}
	p->np->exited = 0; /* it lives (again) */
	p->np->src = p;
	d->stats.processes++;
	/* kept whole for decoder_state (without it a replay that lost this
	 * record cannot pick the process up: counted, not fatal) */
	if ((p->hello = malloc(WIRE_HDR_SIZE + paylen))) {
		memcpy(p->hello, h, WIRE_HDR_SIZE);
		memcpy(p->hello + WIRE_HDR_SIZE, pl, paylen);
		p->hello_len = (uint32_t)(WIRE_HDR_SIZE + paylen);
	} else {
		decode_refuse(d, true);
	}
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
	if (d->symfn.where(d->symfn.ctx, path, wn->addr, wn->base, where, sizeof where, &line) == 0)
		file = decode_intern(d, where, strlen(where), false);
	if (spannames_set(&d->names, gid, text ? text : gid, file, file ? line : 0) < 0)
		decode_refuse(d, true);
}

/* Under --demangle=simple, functions that show as one text (overloads,
 * template instances: app::f(int) and app::f(double) as app::f) are one
 * span, so that no output holds two paths that read the same: a code
 * name's id is its shown text's, whose view the first such function gives
 * (its file and line).  full and no show every symbol apart. */
static uint32_t decode_shown_id(struct decoder *d, uint32_t gid)
{
	if (!gid || d->demangle != DEMANGLE_SIMPLE)
		return gid;
	uint32_t shown = spannames_shown(&d->names, gid);
	if (!shown || shown == gid)
		return gid;
	if (!spannames_known(&d->names, shown)) {
		uint32_t line = 0, file = 0;
		if (spannames_where(&d->names, gid, &line))
			file = d->names.file[gid];
		if (spannames_set(&d->names, shown, shown, file, line) < 0)
			return gid;
	}
	return shown;
}

/* A name by text may carry where it is defined: NAME 0x1f FILE:LINE
 * (spanstat(3), Names by text; --python's calls): it shows as NAME, and
 * JSON gives FILE and LINE.  A text that does not end in :LINE after the
 * separator shows as it is. */
#define DECODE_WHERE_SEP '\x1f'
static void decode_where(struct decoder *d, uint32_t gid, const char *bytes, size_t n)
{
	const char *sep = memchr(bytes, DECODE_WHERE_SEP, n);
	const char *end = bytes + n, *colon = NULL;
	for (const char *c = end; c > sep + 1; c--)
		if (c[-1] == ':') {
			colon = c - 1;
			break;
		}
	if (!colon || colon == sep + 1 || colon + 1 == end || end - colon > 11)
		return;
	unsigned long line = 0;
	for (const char *c = colon + 1; c < end; c++) {
		if (*c < '0' || *c > '9')
			return;
		line = line * 10 + (unsigned long)(*c - '0');
	}
	if (line > UINT32_MAX)
		return;
	uint32_t text = decode_intern(d, bytes, (size_t)(sep - bytes), true);
	uint32_t file = decode_intern(d, sep + 1, (size_t)(colon - sep - 1), false);
	if (text && file && spannames_set(&d->names, gid, text, file, (uint32_t)line) < 0)
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
		size_t len = d->symfn.name(d->symfn.ctx, path, wn.addr, wn.base, fn, sizeof fn);
		gid = decode_intern(d, fn, len, true);
		if (gid && !spannames_known(&d->names, gid))
			decode_view(d, gid, fn, path, &wn);
		gid = decode_shown_id(d, gid);
	} else {
		gid = decode_intern(d, bytes, n, true);
		if (gid && !spannames_known(&d->names, gid) && memchr(bytes, DECODE_WHERE_SEP, n))
			decode_where(d, gid, bytes, n);
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
	norm_thread_name(d->norm, p->np, h->tid, name);
	/* for decoder_state: a replay that lost this record names it there */
	if (name && u64map_put(&p->tnames, h->tid, name) < 0)
		decode_refuse(d, true);
	return true;
}

/* WIRE_CATEGORY: a name's category, by their texts. */
static bool decode_category(struct decoder *d, const uint8_t *pl, size_t paylen)
{
	struct wire_category wc;
	if (paylen < sizeof wc)
		return false;
	memcpy(&wc, pl, sizeof wc);
	if (wc.cat_len == 0 || wc.cat_len > WIRE_CATEGORY_MAX ||
	    !decode_len_ok(paylen, sizeof wc, (size_t)wc.name_len + wc.cat_len))
		return false;
	const char *name = (const char *)pl + sizeof wc, *cat = name + wc.name_len;
	if (memchr(cat, '\0', wc.cat_len))
		return false;
	uint32_t cid = decode_intern(d, cat, wc.cat_len, false);
	uint32_t nid = cid ? decode_intern(d, name, wc.name_len, true) : 0;
	if (nid)
		decoder_category(d, nid, cid);
	return true;
}

/* WIRE_MESSAGE: a text line on a thread's timeline. */
static bool decode_message(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl,
			   size_t paylen)
{
	struct wire_message wm;
	struct dproc *p;
	if (paylen < sizeof wm || h->tid == 0)
		return false;
	memcpy(&wm, pl, sizeof wm);
	if (wm.len > WIRE_MESSAGE_MAX || !decode_len_ok(paylen, sizeof wm, wm.len) ||
	    memchr(pl + sizeof wm, '\0', wm.len) || !(p = decode_proc(d, h->pid)))
		return false;
	struct norm_thread *t = norm_thread(d->norm, p->np, h->tid, decode_ns(p, wm.ts));
	if (t) /* else refused by a limit, counted */
		norm_message(d->norm, t, decode_ns(p, wm.ts), (const char *)pl + sizeof wm, wm.len);
	return true;
}

/* WIRE_ASYNC: an async span's begin (with its name), enter, exit or end. */
static bool decode_async(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl,
			 size_t paylen)
{
	struct wire_async wa;
	struct dproc *p;
	if (paylen < sizeof wa || h->tid == 0)
		return false;
	memcpy(&wa, pl, sizeof wa);
	if (wa.id == 0 || wa.op > WIRE_ASYNC_END || (wa.op != WIRE_ASYNC_BEGIN && wa.len) ||
	    wa.len > WIRE_ASYNC_NAME_MAX || !decode_len_ok(paylen, sizeof wa, wa.len) ||
	    memchr(pl + sizeof wa, '\0', wa.len) || !(p = decode_proc(d, h->pid)))
		return false;
	uint32_t name = 0;
	if (wa.op == WIRE_ASYNC_BEGIN)
		name = decode_intern(d, (const char *)pl + sizeof wa, wa.len, true);
	struct norm_thread *t = norm_thread(d->norm, p->np, h->tid, decode_ns(p, wa.ts));
	if (t) /* else refused by a limit, counted */
		norm_async(d->norm, t, decode_ns(p, wa.ts), wa.op, wa.id, name);
	return true;
}

void decoder_category(struct decoder *d, uint32_t name, uint32_t cat)
{
	if (strtab_set_cat(&d->strings, name, cat) < 0)
		decode_refuse(d, true);
}

static void decode_record(struct decoder *d, const struct wire_hdr *h, const uint8_t *pl)
{
	size_t paylen = h->len - WIRE_HDR_SIZE;
	bool ok = false;
	struct dproc *p;

	switch (h->type) {
	case WIRE_EVENTS: {
		if (paylen < 16 || h->tid == 0 || !(p = decode_proc(d, h->pid)))
			break;
		struct norm_thread *t =
			norm_thread(d->norm, p->np, h->tid, decode_ns(p, decode_load64(pl)));
		if (!t) {
			ok = true; /* refused by a limit, counted */
			break;
		}
		d->stats.records++;
		uint32_t seq = decode_load32(pl + 8), dropped = decode_load32(pl + 12);
		if (__builtin_expect(seq != DECODE_SEQ(t) || dropped != DECODE_DROPPED(t), 0))
			decode_lost(d, p, t, seq, dropped);
		t->src = DECODE_SRC(seq + 1, DECODE_DROPPED(t));
		if (!d->capture_only) /* else the replay's to decode */
			decode_events(d, p, t, pl + 16, (paylen - 16) / 8, decode_load64(pl));
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
		struct norm_thread *t = norm_thread_find(d->norm, h->pid, h->tid);
		if (t)
			norm_thread_exit(d->norm, t, decode_ns(p, decode_load64(pl)));
		u64map_del(&p->tnames, h->tid);
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
	case WIRE_CALIB: {
		struct wire_calib c;
		if (paylen != sizeof c || !(p = decode_proc(d, h->pid)))
			break;
		memcpy(&c, pl, sizeof c);
		if (c.milli_per_event && c.milli_per_event < UINT64_C(1) << 40) {
			/* a new image's word (after exec) replaces the process's first */
			uint64_t mns = decoder_dur_ns(d, p->pid, c.milli_per_event);
			if (p->calib)
				d->calib_mns -= p->calib;
			else
				d->calib_n++;
			d->calib_mns += mns;
			p->calib = mns;
		}
		ok = true;
		break;
	}
	case WIRE_VALUES: {
		struct wire_values wv;
		if (paylen != sizeof wv || !(p = decode_proc(d, h->pid)))
			break;
		memcpy(&wv, pl, sizeof wv);
		if (wv.count > SPANMETRIC_MAX)
			break;
		p->nvals = wv.count;
		/* as many values, but not the ones asked for: unknown, as
		 * another count is (decode_values) */
		p->foreign = d->vals.layout && wv.layout && wv.layout != d->vals.layout;
		ok = true;
		break;
	}
	case WIRE_RESYNC: {
		struct wire_resync rs;
		if (paylen != sizeof rs || h->tid == 0 || !(p = decode_proc(d, h->pid)))
			break;
		memcpy(&rs, pl, sizeof rs);
		if (rs.n > NORM_MAX_DEPTH)
			break;
		ok = true;
		struct norm_thread *t = norm_thread(d->norm, p->np, h->tid, p->np->last_ts);
		if (!t)
			break; /* refused by a limit, counted */
		uint32_t had = DECODE_DROPPED(t);
		if (rs.dropped > had) {
			decode_add(&d->stats.dropped, rs.dropped - had);
			decode_add(&p->dropped, rs.dropped - had);
			t->src = DECODE_SRC(DECODE_SEQ(t), rs.dropped);
			norm_damage(d->norm, t->pid, t->tid, t->last_ts, SPAN_DMG_DROPPED,
				    rs.dropped - had);
		}
		norm_resync(d->norm, t, rs.low, rs.n, rs.unnamed);
		decode_add(&d->stats.unnamed, rs.unnamed);
		if (rs.low != UINT32_MAX) { /* not the tale's next piece */
			d->stats.gaps++;
			norm_damage(d->norm, t->pid, t->tid, t->last_ts, SPAN_DMG_GAP, 1);
		}
		break;
	}
	case WIRE_WAITED:
		if (paylen != 8 || !decode_proc(d, h->pid))
			break;
		decode_add(&d->stats.waited_ns, decode_load64(pl));
		ok = true;
		break;
	case WIRE_UNFOLLOWED: {
		struct wire_unfollowed u;
		if (paylen != sizeof u || !decode_proc(d, h->pid))
			break;
		memcpy(&u, pl, sizeof u);
		decode_add(&d->stats.unfollowed, u.objects);
		decode_add(&d->stats.unfol_slots, u.slots);
		ok = true;
		break;
	}
	case WIRE_NOLATE:
		ok = paylen == 0 && decode_proc(d, h->pid);
		if (ok)
			decode_add(&d->stats.late_procs, 1);
		break;
	case WIRE_UNCOUNTED: /* for the session, which marks those values unknown */
		ok = paylen == sizeof(struct wire_uncounted) && h->tid != 0;
		break;
	case WIRE_CATEGORY:
		ok = decode_category(d, pl, paylen);
		break;
	case WIRE_MESSAGE:
		ok = decode_message(d, h, pl, paylen);
		break;
	case WIRE_ASYNC:
		ok = decode_async(d, h, pl, paylen);
		break;
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

/* A record the framing found in the byte stream. */
static void decode_framed(void *ctx, const struct wire_hdr *h, const void *rec, size_t len)
{
	struct decoder *d = ctx;
	(void)len;
	const uint8_t *pl = (const uint8_t *)rec + WIRE_HDR_SIZE;
	if (d->hook)
		d->hook(d->hook_ctx, h, pl);
	if (d->tap)
		d->tap(d->tap_ctx, rec, h->len);
	decode_record(d, h, pl);
}

/* ---- API -------------------------------------------------------------- */

/* The default symbolisation: symbols.c, on this machine's files. */
static size_t decode_sym_name(void *ctx, const char *path, uint64_t addr, uint64_t base, char *fn,
			      size_t size)
{
	return decoder_sym_name(ctx, path, addr, base, fn, size);
}

static int decode_sym_where(void *ctx, const char *path, uint64_t addr, uint64_t base, char *where,
			    size_t size, unsigned *line)
{
	return decoder_sym_where(ctx, path, addr, base, where, size, line);
}

size_t decoder_sym_name(struct decoder *d, const char *path, uint64_t addr, uint64_t base, char *fn,
			size_t size)
{
	if (!d->sym)
		d->sym = symbols_new();
	return symbols_name(d->sym, path, addr, base, fn, size);
}

int decoder_sym_where(struct decoder *d, const char *path, uint64_t addr, uint64_t base,
		      char *where, size_t size, unsigned *line)
{
	if (!d->sym)
		d->sym = symbols_new();
	return symbols_where(d->sym, path, addr, base, where, size, line);
}

void decoder_set_symfn(struct decoder *d, const struct decoder_symfn *f)
{
	d->symfn = f ? *f : (struct decoder_symfn){decode_sym_name, decode_sym_where, d};
}

void decoder_set_tap(struct decoder *d, decoder_tap_fn fn, void *ctx)
{
	d->tap = fn;
	d->tap_ctx = ctx;
}

void decoder_frame_counts(const struct decoder *d, uint64_t *bad_bytes, uint64_t *truncated)
{
	*bad_bytes = d->frame.bad_bytes;
	*truncated = d->frame.truncated;
}

void decoder_count_frame(struct decoder *d, uint64_t bad_bytes, uint64_t truncated)
{
	decode_add(&d->stats.bad_bytes, bad_bytes);
	decode_add(&d->stats.bad_records, truncated);
}

struct decoder *decoder_new(const struct spanclock *clock)
{
	struct decoder *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	if (strtab_init(&d->strings) < 0 || !(d->norm = norm_new())) {
		strtab_release(&d->strings);
		free(d);
		return NULL;
	}
	spannames_init(&d->names, &d->strings);
	d->symfn = (struct decoder_symfn){decode_sym_name, decode_sym_where, d};
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

void decoder_set_running(struct decoder *d, decoder_running_fn fn, void *ctx)
{
	d->running = fn;
	d->running_ctx = ctx;
}

void decoder_set_capture_only(struct decoder *d, bool on)
{
	d->capture_only = on && d->tap;
}

int decoder_record(struct decoder *d, const void *rec, size_t len)
{
	struct wire_hdr h;
	if (d->tap)
		d->tap(d->tap_ctx, rec, len);
	if (len < WIRE_HDR_SIZE) {
		d->stats.bad_bytes += len;
		return 0;
	}
	memcpy(&h, rec, sizeof h);
	if (!wireframe_hdr_ok(&h) || h.len != len) {
		d->stats.bad_bytes += len;
		return 0;
	}
	decode_record(d, &h, (const uint8_t *)rec + WIRE_HDR_SIZE);
	return norm_oom(d->norm) || d->oom ? -ENOMEM : 0; /* and clears the normaliser's */
}

void decoder_free(struct decoder *d)
{
	if (!d)
		return;
	for (struct norm_proc *np = norm_first_process(d->norm); np; np = np->next) {
		struct dproc *p = np->src; /* every live dproc has its norm_proc */
		if (!p)			   /* another source's (linesrc.c) */
			continue;
		free(p->map);
		u64map_release(&p->big);
		u64map_release(&p->tnames);
		free(p->hello);
		free(p);
	}
	u64map_release(&d->procs);
	norm_free(d->norm);
	symbols_free(d->sym);
	spannames_release(&d->names);
	strtab_release(&d->strings);
	free(d);
}

int decoder_add_sink(struct decoder *d, struct span_sink sink)
{
	return norm_add_sink(d->norm, sink);
}

int decoder_feed(struct decoder *d, const void *buf, size_t len)
{
	d->oom = false;
	wireframe_feed(&d->frame, buf, len, decode_framed, d);
	return norm_oom(d->norm) || d->oom ? -ENOMEM : 0; /* and clears the normaliser's */
}

void decoder_finish(struct decoder *d)
{
	wireframe_finish(&d->frame);
	struct norm_proc *np;
	while ((np = norm_first_process(d->norm))) {
		struct dproc *p = np->src;
		if (!p) { /* another source's (linesrc.c) */
			norm_process_end(d->norm, np, 0, 0);
			continue;
		}
		/* one still running did not end: what it records from now on
		 * goes unseen, whether or not it recorded anything yet (an
		 * orphan may begin later); of the others only those that
		 * recorded something, as a shell that loaded the library and
		 * left through _exit() lost nothing */
		if (d->running && d->running(d->running_ctx, np->pid))
			d->stats.running++;
		else if (p->ndefined || p->dropped)
			d->stats.no_exit++;
		decode_proc_end(d, p, 0, 0);
	}
}

uint32_t decoder_name_of(const struct decoder *d, uint32_t pid, uint32_t id)
{
	const struct dproc *p = decode_proc(d, pid);
	return p && id && id <= WIRE_ID_MAX ? decode_name(p, id) : 0;
}

uint64_t decoder_dur_ns(const struct decoder *d, uint32_t pid, uint64_t dur)
{
	const struct dproc *p = decode_proc(d, pid);
	return p ? (uint64_t)(((unsigned __int128)dur * p->mult) >> p->shift) : 0;
}

uint64_t decoder_ts_ns(const struct decoder *d, uint32_t pid, uint64_t ts)
{
	const struct dproc *p = decode_proc(d, pid);
	return p ? decode_ns(p, ts) : 0;
}

double decoder_event_cost_ns(const struct decoder *d)
{
	return d->calib_n ? (double)d->calib_mns / 1000.0 / (double)d->calib_n : 0;
}

void decoder_count(struct decoder *d, uint64_t spans, uint64_t unfinished, uint64_t unmatched,
		   uint64_t over_limit)
{
	decode_add(&d->stats.over_limit, over_limit);
	decode_add(&d->stats.spans, spans);
	decode_add(&d->stats.unfinished, unfinished);
	decode_add(&d->stats.unmatched, unmatched);
}

void decoder_count_switches_lost(struct decoder *d, uint64_t n)
{
	decode_add(&d->stats.switches_lost, n);
}

void decoder_count_dropped(struct decoder *d, uint32_t pid, uint64_t words)
{
	if (!words)
		return;
	decode_add(&d->stats.dropped, words);
	struct dproc *p = decode_proc(d, pid);
	if (p)
		decode_add(&p->dropped, words);
}

struct normaliser *decoder_norm(struct decoder *d)
{
	return d->norm;
}

uint32_t decoder_intern(struct decoder *d, const char *s, size_t len)
{
	return decode_intern(d, s, len, true);
}

const struct decoder_values *decoder_values_of(const struct decoder *d)
{
	return &d->vals;
}

void decoder_count_lines(struct decoder *d, uint64_t events, uint64_t bad)
{
	decode_add(&d->stats.lines, events);
	decode_add(&d->stats.bad_lines, bad);
}

void decoder_set_late(struct decoder *d, uint64_t n)
{
	/* what the others counted: a process without the ring file counted
	 * none of its own (late_procs says how many) */
	d->stats.late = n;
}

const struct decode_stats *decoder_stats(const struct decoder *d)
{
	/* the view is derived state: refreshed on every read */
	struct decoder *m = (struct decoder *)d;
	const struct norm_stats *ns = norm_stats(d->norm);
	m->view = d->stats;
	m->view.spans += ns->spans;
	m->view.unmatched += ns->unmatched + ns->async_bad;
	m->view.unfinished += ns->unfinished;
	m->view.over_limit += ns->over_limit;
	m->view.misnested += ns->misnested;
	m->view.bad_bytes += d->frame.bad_bytes;
	m->view.bad_records += d->frame.truncated;
	return &m->view;
}

const struct strtab *decoder_strings(const struct decoder *d)
{
	return &d->strings;
}

const struct spannames *decoder_names(const struct decoder *d)
{
	return &d->names;
}

void decoder_set_demangle(struct decoder *d, enum demangle_mode mode)
{
	d->demangle = mode;
}

/* The normaliser's oracle (norm.h), from the session's callbacks. */
static uint64_t decode_end_at(void *ctx, uint32_t pid, uint32_t tid, uint64_t after)
{
	const struct decoder_values *dv = &((struct decoder *)ctx)->vals;
	return dv->end_at ? dv->end_at(dv->ctx, pid, tid, after) : 0;
}

static void decode_values_at(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, uint64_t *v)
{
	const struct decoder_values *dv = &((struct decoder *)ctx)->vals;
	if (dv->off_cpu >= 0 && dv->off_cpu_at)
		v[dv->off_cpu] = dv->off_cpu_at(dv->ctx, pid, tid, ns);
}

int decoder_set_values(struct decoder *d, const struct decoder_values *v)
{
	if (v->n > SPANMETRIC_MAX || v->first_target > v->n || v->off_cpu >= (int)v->n)
		return -EINVAL;
	int rc = norm_set_values(d->norm, v->n);
	if (rc == 0) {
		d->vals = *v;
		d->vals_set = v->first_target == 0 ||
			      (v->first_target == 1 && v->off_cpu == 0 && v->off_cpu_at);
		norm_set_oracle(d->norm, &(struct norm_oracle){decode_end_at, decode_values_at, d});
	}
	return rc;
}

/* ---- a capture's restatements (decoder_state) ---------------------------- */

/* A name id and its string id, each as the zigzag difference from the
 * previous pair's (ids defined in order take a byte or two). */
static size_t decode_put_pair(uint8_t *p, int64_t prev[2], uint32_t id, uint32_t gid)
{
	int64_t di = (int64_t)id - prev[0], dg = (int64_t)gid - prev[1];
	prev[0] = id;
	prev[1] = gid;
	size_t n = pbenc_put_varint(p, ((uint64_t)di << 1) ^ (uint64_t)(di >> 63));
	return n + pbenc_put_varint(p + n, ((uint64_t)dg << 1) ^ (uint64_t)(dg >> 63));
}

int decoder_state(const struct decoder *d, uint8_t **buf, size_t *cap, size_t *len)
{
	size_t n = 0, np = 0;
	for (struct norm_proc *q = norm_first_process(d->norm); q; q = q->next)
		np += q->src && ((struct dproc *)q->src)->hello;
	if (GROW(*buf, n + 10, *cap, 256) < 0)
		return -ENOMEM;
	n += pbenc_put_varint(*buf + n, np);
	for (struct norm_proc *q = norm_first_process(d->norm); q; q = q->next) {
		const struct dproc *p = q->src;
		if (!p || !p->hello)
			continue;
		if (GROW(*buf, n + 60 + p->hello_len, *cap, 256) < 0)
			return -ENOMEM;
		n += pbenc_put_varint(*buf + n, p->hello_len);
		memcpy(*buf + n, p->hello, p->hello_len);
		n += p->hello_len;
		n += pbenc_put_varint(*buf + n, p->nvals);
		n += pbenc_put_varint(*buf + n, p->calib);
		n += pbenc_put_varint(*buf + n, p->ndefined);
		uint32_t left = p->ndefined;
		int64_t prev[2] = {0, 0};
		for (uint32_t id = 1; id < p->nmap && left; id++) {
			if (!p->map[id])
				continue;
			if (GROW(*buf, n + 20, *cap, 256) < 0)
				return -ENOMEM;
			n += decode_put_pair(*buf + n, prev, id, p->map[id]);
			left--;
		}
		for (uint32_t j = 0; j < p->big.cap && left; j++) {
			if (!p->big.used[j] || p->big.key[j] < p->nmap)
				continue;
			if (GROW(*buf, n + 20, *cap, 256) < 0)
				return -ENOMEM;
			n += decode_put_pair(*buf + n, prev, (uint32_t)p->big.key[j],
					     (uint32_t)p->big.val[j]);
			left--;
		}
		if (left) /* the counts disagree: no state rather than a false one */
			return -EINVAL;
	}
	/* then (since format 4) their live threads: pid, tid and the string id
	 * of the thread's name (0: none) each */
	size_t nt = 0;
	for (struct norm_proc *q = norm_first_process(d->norm); q; q = q->next)
		for (const struct norm_thread *t = q->threads; q->src && t; t = t->next)
			nt += ((struct dproc *)q->src)->hello != NULL;
	if (GROW(*buf, n + 10, *cap, 256) < 0)
		return -ENOMEM;
	n += pbenc_put_varint(*buf + n, nt);
	for (struct norm_proc *q = norm_first_process(d->norm); q; q = q->next) {
		const struct dproc *p = q->src;
		for (const struct norm_thread *t = q->threads; p && p->hello && t; t = t->next) {
			if (GROW(*buf, n + 30, *cap, 256) < 0)
				return -ENOMEM;
			n += pbenc_put_varint(*buf + n, p->pid);
			n += pbenc_put_varint(*buf + n, t->tid);
			n += pbenc_put_varint(*buf + n, u64map_get(&p->tnames, t->tid));
		}
	}
	/* the processes whose values are of another layout (none: nothing,
	 * as in files written before it was told) */
	size_t nf = 0;
	for (struct norm_proc *q = norm_first_process(d->norm); q; q = q->next)
		nf += q->src && ((struct dproc *)q->src)->hello &&
		      ((struct dproc *)q->src)->foreign;
	if (nf) {
		if (GROW(*buf, n + 10 + 5 * nf, *cap, 256) < 0)
			return -ENOMEM;
		n += pbenc_put_varint(*buf + n, nf);
		for (struct norm_proc *q = norm_first_process(d->norm); q; q = q->next) {
			const struct dproc *p = q->src;
			if (p && p->hello && p->foreign)
				n += pbenc_put_varint(*buf + n, p->pid);
		}
	}
	*len = n;
	return 0;
}

static bool decode_get_u64(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p == end)
			return false;
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

int decoder_restate(struct decoder *d, const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = p + len;
	uint64_t np, mark = ++d->restates;
	d->oom = false;
	if (!decode_get_u64(&p, end, &np))
		return -EINVAL;
	for (uint64_t i = 0; i < np; i++) {
		uint64_t hl, nvals, calib, nnames;
		struct wire_hdr h;
		if (!decode_get_u64(&p, end, &hl) || hl < WIRE_HDR_SIZE || hl > WIRE_MAX_RECORD ||
		    hl > (uint64_t)(end - p))
			return -EINVAL;
		const uint8_t *rec = p;
		p += hl;
		memcpy(&h, rec, sizeof h);
		if (!wireframe_hdr_ok(&h) || h.len != hl || h.type != WIRE_HELLO ||
		    !decode_get_u64(&p, end, &nvals) || nvals > SPANMETRIC_MAX ||
		    !decode_get_u64(&p, end, &calib) || calib >= UINT64_C(1) << 50 ||
		    !decode_get_u64(&p, end, &nnames))
			return -EINVAL;
		struct dproc *dp = decode_proc(d, h.pid);
		/* a process the replay lost the start of (or knows an older
		 * image of): started as its HELLO started it */
		if (!dp || dp->hello_len != hl || memcmp(dp->hello, rec, hl) != 0) {
			if (!decode_hello(d, &h, rec + WIRE_HDR_SIZE, hl - WIRE_HDR_SIZE))
				return -EINVAL;
			if (!(dp = decode_proc(d, h.pid)))
				return d->oom ? -ENOMEM : -EINVAL;
		}
		dp->mark = mark;
		dp->nvals = (uint32_t)nvals;
		dp->foreign = false; /* unless the list after the processes names it */
		if (calib && !dp->calib) {
			d->calib_n++;
			d->calib_mns += calib;
			dp->calib = calib;
		}
		int64_t prev[2] = {0, 0};
		for (uint64_t k = 0; k < nnames; k++) {
			uint64_t di, dg;
			if (!decode_get_u64(&p, end, &di) || !decode_get_u64(&p, end, &dg))
				return -EINVAL;
			/* as decode_put_pair wrote them: the differences, zigzag */
			int64_t id = prev[0] + ((int64_t)(di >> 1) ^ -(int64_t)(di & 1)),
				gid = prev[1] + ((int64_t)(dg >> 1) ^ -(int64_t)(dg & 1));
			prev[0] = id;
			prev[1] = gid;
			if (id <= 0 || id > WIRE_ID_MAX || gid <= 0 || gid >= d->strings.n)
				return -EINVAL;
			if (decode_name(dp, (uint32_t)id) != gid)
				decode_define(d, dp, (uint32_t)id, (uint32_t)gid);
		}
	}
	/* the live threads (since format 4; decoder_restate_unnamed): a thread
	 * the replay lost the name of is named here, as the live decoder had
	 * it, and one that is not listed ended unseen */
	uint64_t nt = 0;
	struct u64map listed = {0};
	if (!d->unnamed_states && !decode_get_u64(&p, end, &nt))
		return -EINVAL;
	int err = 0;
	for (uint64_t i = 0; i < nt && !err; i++) {
		uint64_t pid, tid, name;
		struct dproc *dp = NULL;
		if (!decode_get_u64(&p, end, &pid) || !decode_get_u64(&p, end, &tid) ||
		    !decode_get_u64(&p, end, &name) || pid > UINT32_MAX || tid == 0 ||
		    tid > UINT32_MAX || name >= d->strings.n ||
		    !(dp = decode_proc(d, (uint32_t)pid)) ||
		    dp->mark != mark) /* only of the processes listed */
			err = -EINVAL;
		else if (u64map_put(&listed, pid << 32 | tid, 1) < 0)
			err = -ENOMEM;
		else if (name && u64map_get(&dp->tnames, tid) != name) {
			norm_thread_name(d->norm, dp->np, (uint32_t)tid, (uint32_t)name);
			if (u64map_put(&dp->tnames, tid, name) < 0)
				err = -ENOMEM;
		}
	}
	/* a thread of a listed process the state does not list ended in the
	 * records lost: its open spans close where it was last seen, as at a
	 * loss, and it ends there */
	for (struct norm_proc *q = norm_first_process(d->norm); q && !err && !d->unnamed_states;
	     q = q->next) {
		struct dproc *dp = q->src;
		if (!dp || dp->mark != mark)
			continue;
		for (struct norm_thread *t = q->threads, *next; t; t = next) {
			next = t->next;
			if (u64map_get(&listed, (uint64_t)q->pid << 32 | t->tid))
				continue;
			u64map_del(&dp->tnames, t->tid);
			norm_lost(d->norm, t);
			norm_thread_exit(d->norm, t, t->last_ts);
		}
	}
	u64map_release(&listed);
	if (err)
		return err;
	if (p != end) { /* the processes whose values are of another layout */
		uint64_t nf, pid;
		if (!decode_get_u64(&p, end, &nf) || nf == 0 || nf > np)
			return -EINVAL;
		for (uint64_t i = 0; i < nf; i++) {
			struct dproc *dp;
			if (!decode_get_u64(&p, end, &pid) || pid > UINT32_MAX ||
			    !(dp = decode_proc(d, (uint32_t)pid)) || dp->mark != mark)
				return -EINVAL;
			dp->foreign = true;
		}
	}
	if (p != end)
		return -EINVAL;
	/* the processes that ended where the replay did not see it: ended,
	 * without saying when, as a new HELLO ends an old image */
	for (;;) {
		struct dproc *gone = NULL;
		for (struct norm_proc *q = norm_first_process(d->norm); q && !gone; q = q->next)
			if (q->src && ((struct dproc *)q->src)->mark != mark)
				gone = q->src;
		if (!gone)
			break;
		decode_proc_end(d, gone, 0, 0);
	}
	return norm_oom(d->norm) || d->oom ? -ENOMEM : 0;
}

void decoder_restate_unnamed(struct decoder *d)
{
	d->unnamed_states = true;
}

uint32_t decoder_seed_string(struct decoder *d, const char *s, size_t len)
{
	uint32_t id = strtab_intern(&d->strings, s, len);
	if (id)
		d->strbytes += len + 1;
	return id;
}
