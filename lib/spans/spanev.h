/* spanev.h: the normalised span events the decoder hands to its sinks (the
 * aggregator and streaming writers).  The decoder guarantees balance: every
 * SPAN_END matches the innermost open SPAN_BEGIN of its thread, and every
 * begin gets an end (at thread or process exit or at stream end, flagged
 * SPAN_F_UNFINISHED). */
#ifndef SPANSTAT_SPANEV_H
#define SPANSTAT_SPANEV_H

#include <stdint.h>
#include <stddef.h>

enum span_kind {
	SPAN_PROCESS, /* a process started recording: pid, ppid (value), name */
	SPAN_THREAD,  /* a thread seen first, or renamed: name is its name or 0 */
	SPAN_BEGIN,
	SPAN_END,
	SPAN_INSTANT,
	SPAN_COUNTER,	  /* value */
	SPAN_PROCESS_END, /* the process ended (or the stream did) */
	SPAN_DAMAGE,	  /* what the thread's data lost: depth says what
			   * (enum span_damage), value how much */
	SPAN_MESSAGE,	  /* a text line on the thread's timeline: text, len */
	/* async spans (spanstat_async_begin): aid, name on each; tid is the
	 * thread that did it */
	SPAN_ASYNC_BEGIN, /* parent: the async span entered on tid then, or 0 */
	SPAN_ASYNC_ENTER, /* thread tid runs it from ts */
	SPAN_ASYNC_EXIT,  /* until ts (SPAN_F_UNFINISHED: spanstat exited it) */
	SPAN_ASYNC_END,	  /* begin_ts, value: busy ns, enters, threads; flags */
	SPAN_ARG,	  /* a typed argument (spanstat_arg_*) of the thread's span
			   * open at depth - 1 (depth 0: of the thread): name its
			   * key, flags its type (enum span_arg_type), value its
			   * bits (a string's: the strtab id of its text) */
};

/* The type of a SPAN_ARG (wire.h's enum wire_arg_type, and the record's). */
enum span_arg_type {
	SPAN_ARG_I64 = 0,
	SPAN_ARG_U64 = 1,
	SPAN_ARG_F64 = 2,
	SPAN_ARG_BOOL = 3,
	SPAN_ARG_STR = 4,
	SPAN_ARG_TYPES
};

/* What a SPAN_DAMAGE event says of its thread: what its data lost, or a
 * note on its time (at the event's ts). */
enum span_damage {
	SPAN_DMG_DROPPED = 1, /* value: event words the target dropped */
	SPAN_DMG_GAP,	      /* value: drops across which outer spans stayed open */
	SPAN_DMG_OFFCPU,      /* value: switched-out ns the thread's spans should hold
			       * and do not: their on/off-CPU split is incomplete */
	SPAN_NOTE_WAITED,     /* value: ns the thread waited for room in spanstat's
			       * buffers; the spans open at ts hold them */
	SPAN_NOTE_WAITED_OFF, /* value: of that wait, the ns off the CPU */
	SPAN_DAMAGE_KINDS     /* how many, 0 included */
};

#define SPAN_MESSAGE_MAX 1024u /* bytes of a message at most (wire.h's) */

#define SPAN_F_UNFINISHED 1u /* closed by spanstat, not by the target */

/* A report of several record files (one per rank) keeps their processes
 * apart by moving file i's pids and tids up by (i + 1) << SPAN_PID_BITS:
 * Linux's pids fit below (pid_max is at most 2^22).  What a person reads
 * is the real one. */
#define SPAN_PID_BITS 22

static inline uint32_t span_real_pid(uint32_t pid)
{
	return pid & ((UINT32_C(1) << SPAN_PID_BITS) - 1);
}

struct span_event {
	enum span_kind kind;
	uint32_t pid, tid;
	uint64_t ts;   /* CLOCK_MONOTONIC ns */
	uint32_t name; /* string id in the decoder's strtab (0: none) */
	uint32_t flags;
	uint32_t depth;	      /* BEGIN/END: nesting depth, 0 outermost; ARG: the
			       * thread's open spans then */
	uint64_t begin_ts;    /* END: its begin's ts */
	int64_t value;	      /* COUNTER: value; PROCESS: ppid */
	const uint64_t *vals; /* END: the span's values (spanmetric.h), one per metric
			       * of the run; NULL when the run has none */
	const uint64_t *cum;  /* BEGIN/END: the thread's cumulative values then */
	const char *text;     /* MESSAGE: its bytes (no NUL among them, not
			       * NUL-terminated), valid during the call */
	uint32_t len;	      /* MESSAGE: how many */
	uint64_t aid;	      /* ASYNC_*: the async span's id in its process (not 0) */
	uint64_t parent;      /* ASYNC_BEGIN: see above */
	uint32_t enters;      /* ASYNC_END: how many times threads entered it */
	uint32_t threads;     /* ASYNC_END: how many threads did */
};

/* An event of kind k with every other field 0 or NULL, set field by field:
 * a designated initialiser zeroes the whole struct with a rep stos, whose
 * start-up cost was a sixth of the decoder's time per begin. */
static inline void span_event_init(struct span_event *ev, enum span_kind k, uint32_t pid,
				   uint32_t tid, uint64_t ts, uint32_t name)
{
	ev->kind = k;
	ev->pid = pid;
	ev->tid = tid;
	ev->ts = ts;
	ev->name = name;
	ev->flags = 0;
	ev->depth = 0;
	ev->begin_ts = 0;
	ev->value = 0;
	ev->vals = NULL;
	ev->cum = NULL;
	ev->text = NULL;
	ev->len = 0;
	ev->aid = 0;
	ev->parent = 0;
	ev->enters = 0;
	ev->threads = 0;
}

/* A copy of an event just made, its pids and tids moved by pid_base and
 * its times by ts_shift: field by field at each field's width, the way
 * it was stored.  A whole-struct copy (or one the compiler vectorises)
 * reads several fresh narrow stores with one wide load, which waits for
 * them to retire: a failed store-to-load forward, 60% of a record's
 * replay time.  Relaxed atomic loads are never merged into wider ones. */
#define SPAN_EV_LD(f) __atomic_load_n(&src->f, __ATOMIC_RELAXED)
static inline void span_event_moved(struct span_event *dst, const struct span_event *src,
				    uint32_t pid_base, uint64_t ts_shift)
{
	enum span_kind k = SPAN_EV_LD(kind);
	dst->kind = k;
	dst->pid = SPAN_EV_LD(pid) + pid_base;
	dst->tid = SPAN_EV_LD(tid) + pid_base;
	dst->ts = SPAN_EV_LD(ts) + ts_shift;
	dst->name = SPAN_EV_LD(name);
	dst->flags = SPAN_EV_LD(flags);
	dst->depth = SPAN_EV_LD(depth);
	dst->begin_ts = SPAN_EV_LD(begin_ts);
	if (k == SPAN_END || (k >= SPAN_ASYNC_BEGIN && k <= SPAN_ASYNC_END))
		dst->begin_ts += ts_shift;
	dst->value = SPAN_EV_LD(value);
	dst->vals = SPAN_EV_LD(vals);
	dst->cum = SPAN_EV_LD(cum);
	dst->text = SPAN_EV_LD(text);
	dst->len = SPAN_EV_LD(len);
	dst->aid = SPAN_EV_LD(aid);
	dst->parent = SPAN_EV_LD(parent);
	dst->enters = SPAN_EV_LD(enters);
	dst->threads = SPAN_EV_LD(threads);
}
#undef SPAN_EV_LD

struct span_sink {
	void (*event)(void *arg, const struct span_event *ev);
	void *arg;
};

#endif
