/* perfetto.c: the --perfetto writer: a native Perfetto protobuf trace
 * (../shared/perfetto/README.md), streamed as span events arrive.
 *
 * Layout.  Packet sequence 1 is global: its first packet clears its state
 * and holds a ClockSnapshot pairing MONOTONIC and BOOTTIME (BOOTTIME the
 * trace clock); it carries the process tracks, the target's counter tracks
 * (per (pid, name), under the process) and their values, and with -I a
 * global "spanstat" track with a counter track per perf event, all stamped
 * with absolute CLOCK_MONOTONIC ns (timestamp_clock_id 3).  Every thread
 * gets a sequence of its own (ids 2, 3, ... in order of appearance) whose
 * first packet sets SEQ_INCREMENTAL_STATE_CLEARED, TracePacketDefaults
 * (timestamp_clock_id 64, TrackEventDefaults.track_uuid = the thread's track)
 * and a ClockSnapshot declaring clock 64 incremental and equal to MONOTONIC
 * at the thread's first timestamp; the thread's track descriptor follows
 * on the same sequence.  Later packets of the sequence give their
 * timestamp as the delta from the sequence's previous clock-64 timestamp (a
 * time that would go backwards is written absolute with clock id 3 instead,
 * leaving the clock where it was) and leave out the track.  Span and instant
 * names are interned per sequence (iid = the shown name's strtab id), each
 * defined in the packet that first uses it on that sequence.
 *
 * A span's begin and end are both on its thread's track.  The slice and
 * instant packets with an already interned name (the hot path, checked first
 * in perfetto_span) are written byte by byte as timestamp delta, sequence id
 * and a track event of type and name_iid: 10 bytes for an end and 12 for a
 * begin when the delta, sequence id and iid take a byte each, about 22 per
 * span on the README's demo (46 before sequences per thread).  They leave out
 * SEQ_NEEDS_INCREMENTAL_STATE (2 bytes each, a fifth of the packet): that
 * flag only tells a reader to skip packets whose state was lost, and a
 * spanstat file loses none, as each sequence's clearing packet comes first
 * in the file; the other packets of a thread sequence carry it.
 *
 * A name's category (spanstat_category) is the categories field of its
 * begins and instants, which then take the slow path: names without one
 * keep the fast path and their bytes.
 *
 * A span's values are debug annotations of its end.  The on/off-CPU split
 * (cpu_ns, off_cpu_ns) is written only for a span that was switched out; a
 * span that ran throughout carries none and keeps the fast path, so the
 * split costs bytes only where it says something (22 bytes per span on the
 * demo with it, 52 when every end carried both).
 *
 * State grows with processes, threads, counters and names interned per
 * thread, never with span count; the encoder buffer is flushed to w->fp
 * whenever it passes PF_FLUSH bytes. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "pbenc.h"
#include "u64map.h"
#include "utf8esc.h"
#include "spannames.h"
#include "writer.h"

/* Field numbers (perfetto_trace.proto). */
enum {
	TRACE_PACKET = 1,

	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TIMESTAMP = 8,
	PKT_SEQ_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQ_FLAGS = 13,
	PKT_CLOCK_ID = 58,
	PKT_DEFAULTS = 59,
	PKT_TRACK_DESCRIPTOR = 60,

	CS_CLOCKS = 1,
	CS_PRIMARY = 2,
	CLK_ID = 1,
	CLK_TS = 2,
	CLK_INCREMENTAL = 3,

	DEF_CLOCK_ID = 58,
	DEF_TRACK_EVENT = 11,
	TED_TRACK_UUID = 11,

	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT = 5,
	TD_COUNTER = 8,

	PD_PID = 1,
	PD_CMDLINE = 2,
	PD_NAME = 6,

	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,

	CD_UNIT = 3,
	CD_UNIT_NAME = 6,

	TE_DEBUG_ANNOTATION = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_CATEGORIES = 22,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47,

	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_NAME = 10,

	ID_EVENT_NAMES = 2,
	EN_IID = 1,
	EN_NAME = 2,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };
enum { CLOCK_ID_MONOTONIC = 3, CLOCK_ID_BOOTTIME = 6 };
/* The thread sequences' incremental clock: sequence-scoped ids are 64..127. */
enum { CLOCK_ID_THREAD = 64 };
enum { UNIT_COUNT = 2 };

#define PF_GLOBAL_SEQ 1u
#define PF_FLUSH (64u * 1024)
#define PF_RECENT 16 /* a power of two */

/* A thread: its track and its packet sequence. */
struct pf_thread {
	uint64_t key;	  /* pid << 32 | tid */
	uint64_t uuid;	  /* its track */
	uint64_t last_ts; /* the sequence's incremental clock, MONOTONIC ns */
	uint32_t seq;	  /* trusted_packet_sequence_id */
	uint32_t pid, tid;
	uint8_t *interned; /* bit per strtab id defined on this sequence */
	size_t interned_bits;
	uint64_t *vbase; /* span values: the thread's first cumulative values */
	uint64_t vtrack; /* the first of its counter tracks (one per event) */
	/* typed arguments of its open spans, written with their ends: the
	 * deeper ones last (SPAN_ARG's depth) */
	struct pf_arg *arg;
	uint32_t narg, caparg;
};

struct pf_arg {
	uint32_t depth, key;
	unsigned type;
	uint64_t bits;
};

struct perfetto {
	struct pbenc enc;
	const struct strtab *strings;
	const struct spannames *names; /* how span names show */
	/* track uuids are small sequential numbers so they encode in 1-3 bytes */
	uint64_t next_uuid;
	uint32_t next_seq;
	struct u64map procs, counters;
	struct u64map asyncs;	    /* (pid, async id) key -> the open async span's track */
	struct u64map thread_index; /* key -> index + 1 in th */
	struct pf_thread **th;
	size_t nth, cap_th;
	struct pf_thread *recent[PF_RECENT]; /* by pf_recent_slot: threads taking turns */
	bool tracks; /* a metric of the run has a counter track (pf_value_tracks) */
	/* what an end's values show (pf_has_values): always something (a
	 * supported value besides the split), or the split's off-CPU part */
	bool vals_always;
	int split; /* the supported split metric's index, or -1 */
	uint64_t global_track;
	const struct spanmetrics *metrics; /* what spans carry, or NULL */
	uint64_t *event_track;		   /* -I: uuid per perf event */
	uint8_t *event_described;
	size_t nevents;
	const struct evlist *evl;
	int started;
};

static int perfetto_start(struct writer *w, const struct run_head *h);

/* The uuid of key in m, assigning the next one if new (*fresh set). */
static uint64_t pf_uuid(struct writer *w, struct perfetto *p, struct u64map *m, uint64_t key,
			int *fresh)
{
	uint64_t u = u64map_get(m, key);
	*fresh = !u;
	if (u)
		return u;
	u = ++p->next_uuid;
	if (u64map_put(m, key, u) < 0 && !w->err)
		w->err = -ENOMEM;
	return u;
}

/* Whether a metric of ms has a counter track: without one, begins and ends
 * skip pf_value_tracks (its loop over the metrics cost every event). */
static bool pf_any_track(const struct spanmetrics *ms)
{
	for (unsigned k = 0; ms && k < ms->n; k++)
		if (spanmetric_info(&ms->m[k])->track)
			return true;
	return false;
}

/* The run's metrics (ms with none: NULL), and what of them every span's end
 * checks, worked out once. */
static void pf_set_metrics(struct perfetto *p, const struct spanmetrics *ms)
{
	p->metrics = ms && ms->n ? ms : NULL;
	p->tracks = pf_any_track(p->metrics);
	p->vals_always = false;
	p->split = -1;
	for (unsigned k = 0; p->metrics && k < ms->n; k++) {
		if (!ms->m[k].supported)
			continue;
		if (!spanmetric_info(&ms->m[k])->split)
			p->vals_always = true;
		else if (p->split < 0)
			p->split = (int)k;
		else /* two splits: not a run spanstat makes; checked as any value */
			p->vals_always = true;
	}
}

static struct perfetto *pf_state(struct writer *w)
{
	if (w->priv)
		return w->priv;
	struct perfetto *p = calloc(1, sizeof *p);
	if (!p || pbenc_init(&p->enc, PF_FLUSH + 4096) < 0) {
		free(p);
		if (!w->err)
			w->err = -ENOMEM;
		return NULL;
	}
	if (w->head) {
		p->strings = w->head->strings;
		p->names = w->head->names;
		pf_set_metrics(p, w->head->metrics);
	}
	p->next_seq = PF_GLOBAL_SEQ;
	w->priv = p;
	return p;
}

static void pf_fail(struct writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

static int pf_flush(struct writer *w, struct perfetto *p)
{
	if (p->enc.err) {
		pf_fail(w, p->enc.err);
		return p->enc.err;
	}
	if (p->enc.len && fwrite(p->enc.buf, 1, p->enc.len, w->fp) != p->enc.len)
		pf_fail(w, errno ? -errno : -EIO);
	pbenc_reset(&p->enc);
	return w->err;
}

/* Opens a TracePacket of the global sequence, stamped with MONOTONIC ts;
 * returns the mark. */
static size_t pf_packet(struct perfetto *p, uint64_t ts)
{
	struct pbenc *e = &p->enc;
	size_t m = pbenc_open(e, TRACE_PACKET);
	pbenc_varint(e, PKT_TIMESTAMP, ts);
	pbenc_varint(e, PKT_CLOCK_ID, CLOCK_ID_MONOTONIC);
	pbenc_varint(e, PKT_SEQ_ID, PF_GLOBAL_SEQ);
	return m;
}

/* The timestamp of a thread sequence's packet: a delta on the sequence's
 * incremental clock, or absolute MONOTONIC when ts went backwards. */
static void pf_thread_ts(struct pbenc *e, struct pf_thread *t, uint64_t ts)
{
	if (ts >= t->last_ts) {
		pbenc_varint(e, PKT_TIMESTAMP, ts - t->last_ts);
		t->last_ts = ts;
	} else {
		pbenc_varint(e, PKT_TIMESTAMP, ts);
		pbenc_varint(e, PKT_CLOCK_ID, CLOCK_ID_MONOTONIC);
	}
}

/* Opens a TracePacket of t's sequence that needs its incremental state;
 * returns the mark. */
static size_t pf_thread_packet(struct perfetto *p, struct pf_thread *t, uint64_t ts)
{
	struct pbenc *e = &p->enc;
	size_t m = pbenc_open(e, TRACE_PACKET);
	pf_thread_ts(e, t, ts);
	pbenc_varint(e, PKT_SEQ_ID, t->seq);
	pbenc_varint(e, PKT_SEQ_FLAGS, SEQ_NEEDS_STATE);
	return m;
}

static void pf_packet_done(struct writer *w, struct perfetto *p, size_t m)
{
	pbenc_close_min(&p->enc, m);
	if (p->enc.len >= PF_FLUSH || p->enc.err)
		pf_flush(w, p);
}

/* A text from outside (a name, message, category, argument, command line):
 * as it is when valid UTF-8, as the trace format requires; else escaped as
 * JSON escapes it (utf8esc.h), so the two outputs name it alike. */
static void pf_text(struct pbenc *e, uint32_t field, const char *s)
{
	if (utf8esc_valid(s)) {
		pbenc_string(e, field, s);
		return;
	}
	char *x = utf8esc_dup(s);
	if (!x) {
		e->err = -ENOMEM;
		return;
	}
	pbenc_string(e, field, x);
	free(x);
}

static const char *pf_str(const struct perfetto *p, uint32_t id)
{
	return p->strings ? strtab_get(p->strings, id) : "";
}

static uint64_t pf_thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/* Describes the process (again, on rename); returns its track uuid. */
static uint64_t pf_process_desc(struct writer *w, struct perfetto *p, uint64_t ts, uint32_t pid,
				uint32_t name)
{
	struct pbenc *e = &p->enc;
	int fresh;
	uint64_t uuid = pf_uuid(w, p, &p->procs, pid, &fresh);
	size_t m = pf_packet(p, ts);
	size_t td = pbenc_open(e, PKT_TRACK_DESCRIPTOR);
	pbenc_varint(e, TD_UUID, uuid);
	size_t pd = pbenc_open(e, TD_PROCESS);
	pbenc_varint(e, PD_PID, pid);
	if (name) {
		pf_text(e, PD_CMDLINE, pf_str(p, name));
		pf_text(e, PD_NAME, pf_str(p, name));
	}
	pbenc_close(e, pd);
	pbenc_close(e, td);
	pf_packet_done(w, p, m);
	return uuid;
}

/* The process's track uuid, describing it first if it is new. */
static uint64_t pf_process_track(struct writer *w, struct perfetto *p, uint64_t ts, uint32_t pid)
{
	uint64_t uuid = u64map_get(&p->procs, pid);
	return uuid ? uuid : pf_process_desc(w, p, ts, pid, 0);
}

/* Describes t's track on its sequence (again, on rename). */
static void pf_thread_desc(struct writer *w, struct perfetto *p, struct pf_thread *t, uint64_t ts,
			   uint32_t name)
{
	struct pbenc *e = &p->enc;
	uint64_t parent = pf_process_track(w, p, ts, t->pid);
	size_t m = pf_thread_packet(p, t, ts);
	size_t td = pbenc_open(e, PKT_TRACK_DESCRIPTOR);
	pbenc_varint(e, TD_UUID, t->uuid);
	pbenc_varint(e, TD_PARENT, parent);
	size_t thd = pbenc_open(e, TD_THREAD);
	pbenc_varint(e, THD_PID, t->pid);
	pbenc_varint(e, THD_TID, t->tid);
	if (name)
		pf_text(e, THD_NAME, pf_str(p, name));
	pbenc_close(e, thd);
	pbenc_close(e, td);
	pf_packet_done(w, p, m);
}

/* Starts t's sequence: clears its state, sets its defaults (the clock and
 * the thread's track) and starts its incremental clock at ts. */
static void pf_sequence_start(struct writer *w, struct perfetto *p, struct pf_thread *t,
			      uint64_t ts)
{
	struct pbenc *e = &p->enc;
	size_t m = pbenc_open(e, TRACE_PACKET);
	pbenc_varint(e, PKT_SEQ_ID, t->seq);
	pbenc_varint(e, PKT_SEQ_FLAGS, SEQ_CLEARED);
	size_t d = pbenc_open(e, PKT_DEFAULTS);
	pbenc_varint(e, DEF_CLOCK_ID, CLOCK_ID_THREAD);
	size_t ted = pbenc_open(e, DEF_TRACK_EVENT);
	pbenc_varint(e, TED_TRACK_UUID, t->uuid);
	pbenc_close_min(e, ted);
	pbenc_close_min(e, d);
	size_t cs = pbenc_open(e, PKT_CLOCK_SNAPSHOT);
	size_t c = pbenc_open(e, CS_CLOCKS);
	pbenc_varint(e, CLK_ID, CLOCK_ID_THREAD);
	pbenc_varint(e, CLK_TS, ts);
	pbenc_bool(e, CLK_INCREMENTAL, 1);
	pbenc_close_min(e, c);
	c = pbenc_open(e, CS_CLOCKS);
	pbenc_varint(e, CLK_ID, CLOCK_ID_MONOTONIC);
	pbenc_varint(e, CLK_TS, ts);
	pbenc_close_min(e, c);
	pbenc_close_min(e, cs);
	t->last_ts = ts;
	pf_packet_done(w, p, m);
}

/* The thread's state, starting its sequence and describing its track first
 * if it is new (with name, or 0); NULL when out of memory. */
static struct pf_thread *pf_thread_get(struct writer *w, struct perfetto *p, uint32_t pid,
				       uint32_t tid, uint64_t ts, uint32_t name, int *fresh)
{
	uint64_t key = pf_thread_key(pid, tid);
	uint64_t i = u64map_get(&p->thread_index, key);
	*fresh = !i;
	if (i)
		return p->th[i - 1];
	if (GROW(p->th, p->nth + 1, p->cap_th, 16) < 0) {
		pf_fail(w, -ENOMEM);
		return NULL;
	}
	struct pf_thread *t = calloc(1, sizeof *t);
	if (!t || u64map_put(&p->thread_index, key, p->nth + 1) < 0) {
		free(t);
		pf_fail(w, -ENOMEM);
		return NULL;
	}
	p->th[p->nth++] = t;
	t->key = key;
	t->pid = pid;
	t->tid = tid;
	t->seq = ++p->next_seq;
	t->uuid = ++p->next_uuid;
	pf_sequence_start(w, p, t, ts);
	pf_thread_desc(w, p, t, ts, name);
	return t;
}

/* Where the thread is cached in p->recent. */
static inline size_t pf_recent_slot(uint32_t pid, uint32_t tid)
{
	return (tid ^ pid) & (PF_RECENT - 1);
}

/* The event's thread, from the cache of recent threads when it is there. */
static struct pf_thread *pf_thread_of(struct writer *w, struct perfetto *p,
				      const struct span_event *ev)
{
	struct pf_thread **slot = &p->recent[pf_recent_slot(ev->pid, ev->tid)];
	struct pf_thread *t = *slot;
	if (t && t->key == pf_thread_key(ev->pid, ev->tid))
		return t;
	int fresh;
	t = pf_thread_get(w, p, ev->pid, ev->tid, ev->ts, 0, &fresh);
	if (t)
		*slot = t;
	return t;
}

/* Whether the name still needs its InternedData entry on t's sequence (and
 * marks it). */
static int pf_intern(struct writer *w, struct pf_thread *t, uint32_t id)
{
	if (id < t->interned_bits && (t->interned[id / 8] & (1u << (id & 7))))
		return 0;
	if (id >= t->interned_bits) {
		size_t bits = t->interned_bits ? t->interned_bits : 1024;
		while (bits <= id)
			bits *= 2;
		uint8_t *b = realloc(t->interned, bits / 8);
		if (!b) {
			pf_fail(w, -ENOMEM);
			return 0;
		}
		memset(b + t->interned_bits / 8, 0, (bits - t->interned_bits) / 8);
		t->interned = b;
		t->interned_bits = bits;
	}
	t->interned[id / 8] |= (uint8_t)(1u << (id & 7));
	return 1;
}

/* Whether name id is defined on t's sequence. */
static inline int pf_interned(const struct pf_thread *t, uint32_t id)
{
	return id < t->interned_bits && (t->interned[id / 8] & (1u << (id & 7)));
}

/* Appends v as a varint at b + n; returns the new n.  Most values here
 * (deltas, sequence ids, iids) take one byte. */
static inline size_t pf_put(uint8_t *b, size_t n, uint64_t v)
{
	if (v < 0x80) {
		b[n] = (uint8_t)v;
		return n + 1;
	}
	return n + pbenc_put_varint(b + n, v);
}

/* Room the hot path's packet needs: every field is bounded (10 + 5 + 5
 * bytes of varints and 9 of tags and lengths), so both lengths fit a byte. */
#define PF_FAST_MAX 32

/* The hot path: a packet holding only a slice or instant event on t's track
 * with an already interned name (or none, for an end), its timestamp a delta
 * (ts >= t->last_ts), written byte by byte into PF_FAST_MAX bytes of room
 * the caller made; the caller flushes. */
__attribute__((always_inline)) static inline void
pf_fast_event(struct perfetto *p, struct pf_thread *t, uint64_t ts, int type, uint32_t iid)
{
	uint8_t *b = p->enc.buf + p->enc.len;
	uint64_t d = ts - t->last_ts;
	t->last_ts = ts;
	size_t n;
	if (d < 0x80 && t->seq < 0x80 && iid < 0x4000) {
		/* the common case, fixed offsets: 1-byte delta and sequence id,
		 * a name iid of 0 (end), 1 or 2 bytes */
		b[0] = (uint8_t)pbenc_tag(TRACE_PACKET, PB_LEN);
		b[2] = (uint8_t)pbenc_tag(PKT_TIMESTAMP, PB_VARINT);
		b[3] = (uint8_t)d;
		b[4] = (uint8_t)pbenc_tag(PKT_SEQ_ID, PB_VARINT);
		b[5] = (uint8_t)t->seq;
		b[6] = (uint8_t)pbenc_tag(PKT_TRACK_EVENT, PB_LEN);
		b[8] = (uint8_t)pbenc_tag(TE_TYPE, PB_VARINT);
		b[9] = (uint8_t)type;
		b[10] = (uint8_t)pbenc_tag(TE_NAME_IID, PB_VARINT);
		b[11] = (uint8_t)(iid >= 0x80 ? iid | 0x80 : iid);
		b[12] = (uint8_t)(iid >> 7);
		n = iid >= 0x80 ? 13 : iid ? 12 : 10;
		b[7] = (uint8_t)(n - 8);
		b[1] = (uint8_t)(n - 2);
	} else {
		n = 3;
		b[0] = (uint8_t)pbenc_tag(TRACE_PACKET, PB_LEN);
		/* b[1]: packet length */
		b[2] = (uint8_t)pbenc_tag(PKT_TIMESTAMP, PB_VARINT);
		n = pf_put(b, n, d);
		b[n++] = (uint8_t)pbenc_tag(PKT_SEQ_ID, PB_VARINT);
		n = pf_put(b, n, t->seq);
		b[n] = (uint8_t)pbenc_tag(PKT_TRACK_EVENT, PB_LEN);
		size_t te = n + 1;
		b[n + 2] = (uint8_t)pbenc_tag(TE_TYPE, PB_VARINT);
		b[n + 3] = (uint8_t)type;
		n += 4;
		if (iid) {
			b[n++] = (uint8_t)pbenc_tag(TE_NAME_IID, PB_VARINT);
			n = pf_put(b, n, iid);
		}
		b[te] = (uint8_t)(n - te - 1);
		b[1] = (uint8_t)(n - 2);
	}
	p->enc.len += n;
}

static void pf_uint_arg(struct pbenc *e, const char *name, uint64_t v)
{
	size_t da = pbenc_open(e, TE_DEBUG_ANNOTATION);
	pf_text(e, DA_NAME, name);
	pbenc_varint(e, DA_UINT, v);
	pbenc_close_min(e, da);
}

static void pf_counter_desc(struct writer *w, struct perfetto *p, uint64_t ts, uint64_t uuid,
			    uint64_t parent, const char *name, const char *unit);

/* A typed argument as a debug annotation: the slice's arguments in the UI. */
static void pf_arg_annotation(struct perfetto *p, const struct pf_arg *a)
{
	struct pbenc *e = &p->enc;
	size_t da = pbenc_open(e, TE_DEBUG_ANNOTATION);
	pf_text(e, DA_NAME, pf_str(p, a->key));
	double d;
	switch (a->type) {
	case SPAN_ARG_I64:
		pbenc_varint(e, DA_INT, a->bits); /* int64: two's complement */
		break;
	case SPAN_ARG_U64:
		pbenc_varint(e, DA_UINT, a->bits);
		break;
	case SPAN_ARG_F64:
		memcpy(&d, &a->bits, sizeof d);
		pbenc_double(e, DA_DOUBLE, d);
		break;
	case SPAN_ARG_BOOL:
		pbenc_bool(e, DA_BOOL, a->bits != 0);
		break;
	default:
		pf_text(e, DA_STRING, pf_str(p, (uint32_t)a->bits));
		break;
	}
	pbenc_close_min(e, da);
}

/* Whether thread t holds arguments of the span ending at depth d. */
static inline int pf_args_at(const struct pf_thread *t, uint32_t d)
{
	return t->narg && t->arg[t->narg - 1].depth > d;
}

/* The off-CPU part of a span's time, by its split value k. */
static uint64_t pf_off_cpu(const struct span_event *ev, unsigned k)
{
	uint64_t dur = ev->ts > ev->begin_ts ? ev->ts - ev->begin_ts : 0;
	return ev->vals[k] < dur ? ev->vals[k] : dur;
}

/* Whether ev's slice end carries arguments: a value other than the on/off-
 * CPU split, or a span that was switched out.  A span that ran on CPU
 * throughout carries none (its cpu time is its duration), so the split
 * costs bytes only where it says something. */
static inline int pf_has_values(const struct perfetto *p, const struct span_event *ev)
{
	return p->vals_always || (p->split >= 0 && pf_off_cpu(ev, (unsigned)p->split));
}

/* A span's values as arguments of its slice (its end's track event). */
static void pf_values(struct perfetto *p, const struct span_event *ev)
{
	struct pbenc *e = &p->enc;
	const struct spanmetrics *ms = p->metrics;
	uint64_t dur = ev->ts > ev->begin_ts ? ev->ts - ev->begin_ts : 0;
	for (unsigned k = 0; k < ms->n; k++) {
		const struct spanmetric *m = &ms->m[k];
		if (!m->supported)
			continue;
		if (spanmetric_info(m)->split) {
			uint64_t off = pf_off_cpu(ev, k);
			if (!off)
				continue;
			pf_uint_arg(e, "cpu_ns", dur - off);
			pf_uint_arg(e, "off_cpu_ns", off);
		} else {
			pf_uint_arg(e, m->name, ev->vals[k]);
		}
	}
}

/* The thread's counter tracks of --span-events: its count since its first
 * span, at every begin and end. */
static void pf_value_tracks(struct writer *w, struct perfetto *p, const struct span_event *ev)
{
	const struct spanmetrics *ms = p->metrics;
	struct pf_thread *t = pf_thread_of(w, p, ev);
	if (!t || !ev->cum)
		return;
	if (!t->vbase) {
		t->vbase = malloc(ms->n * sizeof *t->vbase);
		if (!t->vbase) {
			pf_fail(w, -ENOMEM);
			return;
		}
		memcpy(t->vbase, ev->cum, ms->n * sizeof *t->vbase);
		t->vtrack = p->next_uuid;
		for (unsigned k = 0; k < ms->n; k++) {
			if (!spanmetric_info(&ms->m[k])->track || !ms->m[k].supported)
				continue;
			pf_counter_desc(w, p, ev->ts, t->vtrack + k, t->uuid, ms->m[k].name,
					spanmetric_unit(&ms->m[k]) == SPANMETRIC_NS ? "ns" : NULL);
		}
		p->next_uuid += ms->n;
	}
	struct pbenc *e = &p->enc;
	for (unsigned k = 0; k < ms->n; k++) {
		if (!spanmetric_info(&ms->m[k])->track || !ms->m[k].supported)
			continue;
		size_t m = pf_packet(p, ev->ts);
		size_t te = pbenc_open(e, PKT_TRACK_EVENT);
		pbenc_varint(e, TE_TYPE, TYPE_COUNTER);
		pbenc_varint(e, TE_TRACK_UUID, t->vtrack + k);
		uint64_t v = ev->cum[k] > t->vbase[k] ? ev->cum[k] - t->vbase[k] : 0;
		pbenc_int64(e, TE_COUNTER_VALUE, (int64_t)v);
		pbenc_close(e, te);
		pf_packet_done(w, p, m);
	}
}

static void pf_slice(struct writer *w, struct perfetto *p, const struct span_event *ev, int type)
{
	struct pbenc *e = &p->enc;
	struct pf_thread *t = pf_thread_of(w, p, ev);
	if (!t)
		return;
	int named = type != TYPE_SLICE_END;
	/* interned by the text shown: the view's id for a function name */
	uint32_t name = spannames_shown(p->names, ev->name);
	int use_iid = named && name && p->strings;
	int define = use_iid && pf_intern(w, t, name);
	const char *cat = named ? spannames_cat(NULL, p->strings, ev->name) : NULL;

	int args = type == TYPE_SLICE_END && pf_args_at(t, ev->depth);
	if (!define && !cat && !args && !(ev->flags & SPAN_F_UNFINISHED) && (use_iid || !named) &&
	    ev->ts >= t->last_ts && !(ev->vals && p->metrics && pf_has_values(p, ev))) {
		if (!pbenc_reserve(e, PF_FAST_MAX)) {
			pf_fail(w, e->err);
			return;
		}
		pf_fast_event(p, t, ev->ts, type, use_iid ? name : 0);
		if (e->len >= PF_FLUSH)
			pf_flush(w, p);
		return;
	}
	/* the slow path: a name to define or written out, a flag, or a time
	 * before the last one */

	size_t m = pf_thread_packet(p, t, ev->ts);
	if (define) {
		size_t id = pbenc_open(e, PKT_INTERNED_DATA);
		size_t en = pbenc_open(e, ID_EVENT_NAMES);
		pbenc_varint(e, EN_IID, name);
		pf_text(e, EN_NAME, pf_str(p, name));
		pbenc_close_min(e, en);
		pbenc_close_min(e, id);
	}
	size_t te = pbenc_open(e, PKT_TRACK_EVENT);
	pbenc_varint(e, TE_TYPE, (uint64_t)type);
	if (use_iid) {
		pbenc_varint(e, TE_NAME_IID, name);
	} else if (named) {
		char buf[32];
		snprintf(buf, sizeof buf, "span %" PRIu32, ev->name);
		pbenc_string(e, TE_NAME, buf);
	}
	if (cat) /* spanstat_category(): the UI filters slices by it */
		pf_text(e, TE_CATEGORIES, cat);
	if (type == TYPE_SLICE_END && ev->vals && p->metrics && pf_has_values(p, ev))
		pf_values(p, ev);
	if (type == TYPE_SLICE_END && (ev->flags & SPAN_F_UNFINISHED)) {
		size_t da = pbenc_open(e, TE_DEBUG_ANNOTATION);
		pbenc_string(e, DA_NAME, "unfinished");
		pbenc_bool(e, DA_BOOL, 1);
		pbenc_close_min(e, da);
	}
	if (args) { /* spanstat_arg_*: those of this span, in their order */
		uint32_t k = t->narg;
		while (k && t->arg[k - 1].depth > ev->depth)
			k--;
		for (uint32_t i = k; i < t->narg; i++)
			pf_arg_annotation(p, &t->arg[i]);
		t->narg = k;
	}
	pbenc_close_min(e, te);
	pf_packet_done(w, p, m);
}

/* A typed argument: kept for its span's end; outside every span, an
 * instant on the thread's track named by its key. */
static void pf_arg(struct writer *w, struct perfetto *p, const struct span_event *ev)
{
	struct pf_thread *t = pf_thread_of(w, p, ev);
	if (!t)
		return;
	struct pf_arg a = {ev->depth, ev->name, ev->flags, (uint64_t)ev->value};
	if (ev->depth) {
		if (GROW(t->arg, t->narg + 1, t->caparg, 16) < 0) {
			pf_fail(w, -ENOMEM);
			return;
		}
		t->arg[t->narg++] = a;
		return;
	}
	struct pbenc *e = &p->enc;
	size_t m = pf_thread_packet(p, t, ev->ts);
	size_t te = pbenc_open(e, PKT_TRACK_EVENT);
	pbenc_varint(e, TE_TYPE, TYPE_INSTANT);
	pf_text(e, TE_NAME, pf_str(p, ev->name));
	pf_arg_annotation(p, &a);
	pbenc_close_min(e, te);
	pf_packet_done(w, p, m);
}

/* A message (spanstat_message): an instant on the thread's track named by
 * its text, which the UI shows on the timeline and in the slice's details;
 * the "message" argument tells it from a span library instant. */
static void pf_message(struct writer *w, struct perfetto *p, const struct span_event *ev)
{
	struct pbenc *e = &p->enc;
	struct pf_thread *t = pf_thread_of(w, p, ev);
	if (!t)
		return;
	char text[SPAN_MESSAGE_MAX + 1];
	size_t n = ev->len < SPAN_MESSAGE_MAX ? ev->len : SPAN_MESSAGE_MAX;
	memcpy(text, ev->text, n);
	text[n] = 0;
	size_t m = pf_thread_packet(p, t, ev->ts);
	size_t te = pbenc_open(e, PKT_TRACK_EVENT);
	pbenc_varint(e, TE_TYPE, TYPE_INSTANT);
	pf_text(e, TE_NAME, text);
	size_t da = pbenc_open(e, TE_DEBUG_ANNOTATION);
	pbenc_string(e, DA_NAME, "message");
	pbenc_bool(e, DA_BOOL, 1);
	pbenc_close_min(e, da);
	pbenc_close_min(e, te);
	pf_packet_done(w, p, m);
}

/* An async span's key in p->asyncs: ids of two processes could meet on one
 * key only if id * K + pid agree, which the mix makes vanishingly rare. */
static uint64_t pf_async_key(const struct span_event *ev)
{
	return ev->aid * UINT64_C(0x9e3779b97f4a7c15) + ev->pid;
}

static void pf_async_name(struct pbenc *e, const struct perfetto *p, const struct span_event *ev)
{
	uint32_t name = spannames_shown(p->names, ev->name);
	pf_text(e, TE_NAME, name && p->strings ? pf_str(p, name) : "async");
}

/* An async span (spanstat_async_begin): a track of its own under its
 * process, named by it, holding one slice from begin to end whose end says
 * its busy and idle ns; each enter is a slice of the same name on the
 * entering thread's track until its exit, with the async_id argument.  The
 * track's uuid is the flow id linking the async slice to the enter slices
 * in turn. */
static void pf_async(struct writer *w, struct perfetto *p, const struct span_event *ev)
{
	struct pbenc *e = &p->enc;
	uint64_t key = pf_async_key(ev);
	uint64_t uuid = u64map_get(&p->asyncs, key);
	if (ev->kind == SPAN_ASYNC_BEGIN) {
		uint64_t parent = pf_process_track(w, p, ev->ts, ev->pid);
		uuid = ++p->next_uuid;
		if (u64map_put(&p->asyncs, key, uuid) < 0) {
			pf_fail(w, -ENOMEM);
			return;
		}
		size_t m = pf_packet(p, ev->ts);
		size_t td = pbenc_open(e, PKT_TRACK_DESCRIPTOR);
		pbenc_varint(e, TD_UUID, uuid);
		pbenc_varint(e, TD_PARENT, parent);
		uint32_t name = spannames_shown(p->names, ev->name);
		pf_text(e, TD_NAME, name && p->strings ? pf_str(p, name) : "async");
		pbenc_close(e, td);
		pf_packet_done(w, p, m);
		m = pf_packet(p, ev->ts);
		size_t te = pbenc_open(e, PKT_TRACK_EVENT);
		pbenc_varint(e, TE_TYPE, TYPE_SLICE_BEGIN);
		pbenc_varint(e, TE_TRACK_UUID, uuid);
		pf_async_name(e, p, ev);
		pbenc_fixed64(e, TE_FLOW_IDS, uuid);
		pf_uint_arg(e, "async_id", ev->aid);
		pbenc_close_min(e, te);
		pf_packet_done(w, p, m);
		return;
	}
	if (!uuid)
		return; /* its begin could not be kept: said as out of memory */
	if (ev->kind == SPAN_ASYNC_END) {
		u64map_del(&p->asyncs, key);
		size_t m = pf_packet(p, ev->ts);
		size_t te = pbenc_open(e, PKT_TRACK_EVENT);
		pbenc_varint(e, TE_TYPE, TYPE_SLICE_END);
		pbenc_varint(e, TE_TRACK_UUID, uuid);
		uint64_t total = ev->ts > ev->begin_ts ? ev->ts - ev->begin_ts : 0;
		uint64_t busy = ev->value > 0 ? (uint64_t)ev->value : 0;
		if (busy > total)
			busy = total;
		pf_uint_arg(e, "busy_ns", busy);
		pf_uint_arg(e, "idle_ns", total - busy);
		pf_uint_arg(e, "enters", ev->enters);
		pf_uint_arg(e, "threads", ev->threads);
		if (ev->flags & SPAN_F_UNFINISHED) {
			size_t da = pbenc_open(e, TE_DEBUG_ANNOTATION);
			pbenc_string(e, DA_NAME, "unfinished");
			pbenc_bool(e, DA_BOOL, 1);
			pbenc_close_min(e, da);
		}
		pbenc_close_min(e, te);
		pf_packet_done(w, p, m);
		return;
	}
	struct pf_thread *t = pf_thread_of(w, p, ev);
	if (!t)
		return;
	size_t m = pf_thread_packet(p, t, ev->ts);
	size_t te = pbenc_open(e, PKT_TRACK_EVENT);
	if (ev->kind == SPAN_ASYNC_ENTER) {
		pbenc_varint(e, TE_TYPE, TYPE_SLICE_BEGIN);
		pf_async_name(e, p, ev);
		pbenc_fixed64(e, TE_FLOW_IDS, uuid);
		pf_uint_arg(e, "async_id", ev->aid);
	} else {
		pbenc_varint(e, TE_TYPE, TYPE_SLICE_END);
		if (ev->flags & SPAN_F_UNFINISHED) {
			size_t da = pbenc_open(e, TE_DEBUG_ANNOTATION);
			pbenc_string(e, DA_NAME, "unfinished");
			pbenc_bool(e, DA_BOOL, 1);
			pbenc_close_min(e, da);
		}
	}
	pbenc_close_min(e, te);
	pf_packet_done(w, p, m);
}

/* A thread seen first, or renamed: describes its track (again). */
static void pf_thread_event(struct writer *w, struct perfetto *p, const struct span_event *ev)
{
	int fresh;
	struct pf_thread *t = pf_thread_get(w, p, ev->pid, ev->tid, ev->ts, ev->name, &fresh);
	if (t && !fresh)
		pf_thread_desc(w, p, t, ev->ts, ev->name);
}

static void pf_counter_desc(struct writer *w, struct perfetto *p, uint64_t ts, uint64_t uuid,
			    uint64_t parent, const char *name, const char *unit)
{
	struct pbenc *e = &p->enc;
	size_t m = pf_packet(p, ts);
	size_t td = pbenc_open(e, PKT_TRACK_DESCRIPTOR);
	pbenc_varint(e, TD_UUID, uuid);
	if (parent)
		pbenc_varint(e, TD_PARENT, parent);
	pf_text(e, TD_NAME, name);
	size_t cd = pbenc_open(e, TD_COUNTER);
	if (unit && *unit)
		pf_text(e, CD_UNIT_NAME, unit);
	else
		pbenc_varint(e, CD_UNIT, UNIT_COUNT);
	pbenc_close(e, cd);
	pbenc_close(e, td);
	pf_packet_done(w, p, m);
}

static void pf_counter(struct writer *w, struct perfetto *p, const struct span_event *ev)
{
	struct pbenc *e = &p->enc;
	uint64_t key = (uint64_t)ev->pid << 32 | ev->name;
	int fresh;
	uint64_t uuid = pf_uuid(w, p, &p->counters, key, &fresh);
	if (fresh) {
		uint64_t parent = pf_process_track(w, p, ev->ts, ev->pid);
		char buf[32];
		const char *name = pf_str(p, ev->name);
		if (!*name) {
			snprintf(buf, sizeof buf, "counter %" PRIu32, ev->name);
			name = buf;
		}
		pf_counter_desc(w, p, ev->ts, uuid, parent, name, NULL);
	}
	size_t m = pf_packet(p, ev->ts);
	size_t te = pbenc_open(e, PKT_TRACK_EVENT);
	pbenc_varint(e, TE_TYPE, TYPE_COUNTER);
	pbenc_varint(e, TE_TRACK_UUID, uuid);
	pbenc_int64(e, TE_COUNTER_VALUE, ev->value);
	pbenc_close(e, te);
	pf_packet_done(w, p, m);
}

/* Any event but the hot path's. */
__attribute__((noinline)) static void pf_event(struct writer *w, const struct span_event *ev)
{
	struct perfetto *p = pf_state(w);
	if (!p || w->err)
		return;
	if (!p->started && perfetto_start(w, w->head) < 0)
		return;
	switch (ev->kind) {
	case SPAN_BEGIN:
		pf_slice(w, p, ev, TYPE_SLICE_BEGIN);
		if (p->tracks)
			pf_value_tracks(w, p, ev);
		break;
	case SPAN_END:
		pf_slice(w, p, ev, TYPE_SLICE_END);
		if (p->tracks)
			pf_value_tracks(w, p, ev);
		break;
	case SPAN_INSTANT:
		pf_slice(w, p, ev, TYPE_INSTANT);
		break;
	case SPAN_COUNTER:
		pf_counter(w, p, ev);
		break;
	case SPAN_PROCESS:
		pf_process_desc(w, p, ev->ts, ev->pid, ev->name);
		break;
	case SPAN_THREAD:
		pf_thread_event(w, p, ev);
		break;
	case SPAN_MESSAGE:
		pf_message(w, p, ev);
		break;
	case SPAN_ASYNC_BEGIN:
	case SPAN_ASYNC_ENTER:
	case SPAN_ASYNC_EXIT:
	case SPAN_ASYNC_END:
		pf_async(w, p, ev);
		break;
	case SPAN_ARG:
		pf_arg(w, p, ev);
		break;
	case SPAN_PROCESS_END:
	case SPAN_DAMAGE: /* said in the summary and the JSON */
		break;
	}
}

/* Checks for the hot path first: a begin, end or instant on a recent
 * thread, in time order, with its name already interned on its sequence
 * (or an end, which has none and no values to show), and not closed by
 * spanstat; never with counter tracks, which every begin and end feeds. */
static void perfetto_span(void *arg, const struct span_event *ev)
{
	struct writer *w = arg;
	struct perfetto *p = w->priv;
	struct pf_thread *t = p ? p->recent[pf_recent_slot(ev->pid, ev->tid)] : NULL;
	if (t && !w->err && !p->tracks && t->key == pf_thread_key(ev->pid, ev->tid) &&
	    ev->ts >= t->last_ts && p->enc.cap - p->enc.len >= PF_FAST_MAX) {
		int type = 0;
		uint32_t name = 0;
		if (ev->kind == SPAN_END && !(ev->flags & SPAN_F_UNFINISHED) &&
		    !pf_args_at(t, ev->depth) &&
		    !(ev->vals && p->metrics && pf_has_values(p, ev))) {
			type = TYPE_SLICE_END;
		} else if (ev->kind == SPAN_BEGIN || ev->kind == SPAN_INSTANT) {
			name = spannames_shown(p->names, ev->name);
			if (name && p->strings && pf_interned(t, name) &&
			    !strtab_cat(p->strings, ev->name))
				type = ev->kind == SPAN_BEGIN ? TYPE_SLICE_BEGIN : TYPE_INSTANT;
		}
		if (type) {
			pf_fast_event(p, t, ev->ts, type, name);
			if (__builtin_expect(p->enc.len >= PF_FLUSH, 0))
				pf_flush(w, p);
			return;
		}
	}
	pf_event(w, ev);
}

/* First packet: clears incremental state and maps MONOTONIC to BOOTTIME. */
static void pf_clock_snapshot(struct perfetto *p, const struct run_head *h)
{
	struct pbenc *e = &p->enc;
	/* the session's own (a recorded one's is from when it ran); a record
	 * without one (older, or its head damaged): BOOTTIME taken as
	 * MONOTONIC at its start, never the time of the report, so that its
	 * reports are the same bytes whenever and however they are made */
	struct run_clocks now = {0};
	if (h && h->clocks.mono_ns)
		now = h->clocks;
	else if (h)
		now.mono_ns = now.boot_ns = h->start_mono;
	uint64_t boot = now.boot_ns, mono = now.mono_ns;

	size_t m = pbenc_open(e, TRACE_PACKET);
	pbenc_varint(e, PKT_TIMESTAMP, boot);
	pbenc_varint(e, PKT_SEQ_ID, PF_GLOBAL_SEQ);
	pbenc_varint(e, PKT_SEQ_FLAGS, SEQ_CLEARED);
	size_t cs = pbenc_open(e, PKT_CLOCK_SNAPSHOT);
	size_t c = pbenc_open(e, CS_CLOCKS);
	pbenc_varint(e, CLK_ID, CLOCK_ID_BOOTTIME);
	pbenc_varint(e, CLK_TS, boot);
	pbenc_close(e, c);
	c = pbenc_open(e, CS_CLOCKS);
	pbenc_varint(e, CLK_ID, CLOCK_ID_MONOTONIC);
	pbenc_varint(e, CLK_TS, mono);
	pbenc_close(e, c);
	pbenc_varint(e, CS_PRIMARY, CLOCK_ID_BOOTTIME);
	pbenc_close(e, cs);
	pbenc_close(e, m);
}

/* -I: a "spanstat" track; each perf event gets a counter track under it
 * with its first counted sample, so unsupported events get none. */
static void pf_event_tracks(struct writer *w, struct perfetto *p, const struct run_head *h)
{
	struct pbenc *e = &p->enc;
	if (!h->evl || !h->evl->n)
		return;
	p->event_track = calloc(h->evl->n, sizeof *p->event_track);
	p->event_described = calloc(h->evl->n, 1);
	if (!p->event_track || !p->event_described) {
		pf_fail(w, -ENOMEM);
		return;
	}
	p->nevents = h->evl->n;
	p->evl = h->evl;
	uint64_t global = p->global_track = ++p->next_uuid;
	size_t m = pf_packet(p, h->start_mono);
	size_t td = pbenc_open(e, PKT_TRACK_DESCRIPTOR);
	pbenc_varint(e, TD_UUID, global);
	pbenc_string(e, TD_NAME, "spanstat");
	pbenc_close(e, td);
	pf_packet_done(w, p, m);
	for (size_t i = 0; i < h->evl->n; i++)
		p->event_track[i] = ++p->next_uuid;
}

static int perfetto_start(struct writer *w, const struct run_head *h)
{
	struct perfetto *p = pf_state(w);
	if (!p)
		return w->err;
	if (h) {
		p->strings = h->strings;
		p->names = h->names;
		pf_set_metrics(p, h->metrics);
	}
	if (p->started)
		return 0;
	p->started = 1;
	pf_clock_snapshot(p, h);
	if (h && h->interval_ms)
		pf_event_tracks(w, p, h);
	pf_flush(w, p);
	return w->err;
}

static int perfetto_interval(struct writer *w, const struct interval_sample *s)
{
	struct perfetto *p = pf_state(w);
	if (!p || w->err)
		return w->err;
	struct pbenc *e = &p->enc;
	for (size_t i = 0; i < p->nevents; i++) {
		/* A software event that did not run this interval counted
		 * nothing: sample 0, or the track would hold its last value
		 * through the idle time.  A hardware event that was never
		 * scheduled is unknown, not 0: no sample. */
		const struct count *c = &s->counts[i];
		bool idle_sw = c->state == COUNT_NOT_COUNTED &&
			       p->evl->ev[i].attr.type == PERF_TYPE_SOFTWARE;
		if (c->state != COUNT_OK && !idle_sw)
			continue;
		if (!p->event_described[i]) {
			const struct event *ev = &p->evl->ev[i];
			p->event_described[i] = 1;
			pf_counter_desc(w, p, s->mono_ns, p->event_track[i], p->global_track,
					ev->name, ev->unit);
		}
		size_t m = pf_packet(p, s->mono_ns);
		size_t te = pbenc_open(e, PKT_TRACK_EVENT);
		pbenc_varint(e, TE_TYPE, TYPE_COUNTER);
		pbenc_varint(e, TE_TRACK_UUID, p->event_track[i]);
		pbenc_double(e, TE_DOUBLE_COUNTER_VALUE, idle_sw ? 0.0 : c->value);
		pbenc_close(e, te);
		pf_packet_done(w, p, m);
	}
	return w->err;
}

static int perfetto_finish(struct writer *w, const struct report *r)
{
	(void)r;
	struct perfetto *p = pf_state(w);
	if (!p)
		return w->err;
	if (!p->started)
		perfetto_start(w, w->head);
	pf_flush(w, p);
	if (!w->err && fflush(w->fp) != 0)
		pf_fail(w, errno ? -errno : -EIO);
	return w->err;
}

static void perfetto_release(struct writer *w)
{
	struct perfetto *p = w->priv;
	if (!p)
		return;
	pbenc_release(&p->enc);
	u64map_release(&p->procs);
	u64map_release(&p->thread_index);
	for (size_t i = 0; i < p->nth; i++) {
		free(p->th[i]->interned);
		free(p->th[i]->vbase);
		free(p->th[i]->arg);
		free(p->th[i]);
	}
	free(p->th);
	u64map_release(&p->counters);
	u64map_release(&p->asyncs);
	free(p->event_track);
	free(p->event_described);
	free(p);
	w->priv = NULL;
}

const struct writer_ops perfetto_writer_ops = {
	.name = "perfetto",
	.start = perfetto_start,
	.interval = perfetto_interval,
	.span = perfetto_span,
	.finish = perfetto_finish,
	.release = perfetto_release,
};
