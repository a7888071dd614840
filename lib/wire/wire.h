/* wire.h: the span wire format, version 1, shared by the span library (the
 * writer, inside the target) and the decoder (the reader, inside spanstat).
 * The decoder never trusts these bytes: every length, id and type is checked.
 *
 * Transport: one pipe created by spanstat; every process of the target writes
 * whole records with one write() of at most PIPE_BUF (4096) bytes, so records
 * from many threads and processes interleave but never tear.
 *
 * A record is a 16-byte header followed by a payload; its total length is a
 * multiple of 8, from 16 to WIRE_MAX_RECORD bytes.  All fields are
 * little-endian (the host order on every machine spanstat runs on).
 *
 *   header: u32 magic  WIRE_MAGIC ("SPN" + version byte)
 *           u16 len    total record length in bytes
 *           u8  type   enum wire_type
 *           u8  check  wire_check() of the other 15 header bytes
 *           u32 pid    writing process
 *           u32 tid    writing thread (0 for process-wide records)
 *
 * WIRE_EVENTS payload: u64 base timestamp, u32 seq, u32 dropped, then event
 * words.  seq numbers the thread's events records from 0, counting records
 * the writer failed to send too, so a gap tells the reader records were lost
 * (and that the thread's open spans can no longer be trusted).  dropped is
 * the thread's cumulative count of event words it failed to send (saturating
 * at UINT32_MAX).  A record with no event words may be sent just to report
 * drops.  Each event word:
 *   bits  0..39  timestamp delta from the previous event of this record (the
 *                first event: from the base); a writer whose delta would not
 *                fit starts a new record
 *   bits 40..61  name id (22 bits; 0 is never a valid id)
 *   bits 62..63  op: WIRE_OP_BEGIN, WIRE_OP_END, WIRE_OP_INSTANT, or
 *                WIRE_OP_COUNTER, which is followed by one payload word holding
 *                the counter's value as a two's-complement int64; after
 *                WIRE_VALUES, BEGIN and END are followed by its value words
 * A WIRE_OP_COUNTER word with id 0 is a note, not an event: its low 40 bits
 * are ring.h's RING_CTL_WAITED with the wait's on-CPU microseconds in bits
 * 8..39 (no delta: the timestamp stays), its payload word the wait's length
 * in ns: the thread waited for room right after the event before it.
 * A control word with code RING_CTL_ARG is a typed argument (spanstat_arg_*)
 * of the thread's innermost open span (of the thread itself outside every
 * span): bits 8..29 name its key (a name id, as a span's), bits 30..33 its
 * type (enum wire_arg_type), and its payload word holds the value: the
 * two's-complement int64, the uint64, the double's bits, 0 or 1, or for a
 * string the name id of its text (interned like a name).
 * A begin/end pair therefore costs 16 bytes on the wire.
 *
 * Timestamps are in the process's clock (see WIRE_HELLO): TSC ticks or
 * CLOCK_MONOTONIC nanoseconds.
 *
 * Names are interned per process: before an id is used in any record, the
 * process writes a WIRE_NAME record defining it (with its own write(), so the
 * definition is in the pipe before any thread's events that use it).  A
 * process's ids are valid until its next WIRE_HELLO (exec or fork start a new
 * namespace).
 *
 * Names may be empty (len 0): spanstat_begin("") is a valid span name.
 *
 * Threads that got a ring in the shared file of ring.h send their events
 * words there instead of in WIRE_EVENTS records; spanstat turns them back
 * into WIRE_EVENTS and WIRE_THREAD_EXIT records, so a decoder sees one format.
 */
#ifndef SPANSTAT_WIRE_H
#define SPANSTAT_WIRE_H

#include <stdint.h>
#include <string.h>

#define WIRE_VERSION 1u
#define WIRE_MAGIC (0x004e5053u | (WIRE_VERSION << 24)) /* "SPN\1" */
#define WIRE_MAX_RECORD 4096u				/* == PIPE_BUF on Linux */
#define WIRE_HDR_SIZE 16u

enum wire_type {
	WIRE_EVENTS = 1,      /* u64 base ts, u32 seq, u32 dropped, event words */
	WIRE_HELLO = 2,	      /* struct wire_hello + process name bytes */
	WIRE_NAME = 3,	      /* struct wire_name + bytes */
	WIRE_THREAD_NAME = 4, /* u32 len, u32 0, name bytes (tid names the thread) */
	WIRE_THREAD_EXIT = 5, /* u64 ts: the thread ended (open spans close) */
	WIRE_EXIT = 6,	      /* struct wire_exit: the process ends */
	WIRE_DROPPED = 7,     /* u64 count of event words this thread dropped (not
			       * written by the library any more: WIRE_EVENTS and
			       * WIRE_EXIT carry drops; readers still count it) */
	WIRE_KICK = 8,	      /* no payload: a thread's ring (ring.h) is filling up,
			       * come and drain it; carries no data */
	WIRE_CALIB = 9,	      /* struct wire_calib: what one event costs the process */
	WIRE_VALUES = 10,     /* struct wire_values: begins and ends carry values */
	WIRE_RESYNC = 11,     /* struct wire_resync: the thread dropped events; which
			       * of its open spans are still open (see below) */
	WIRE_WAITED = 12,     /* u64 ns: how long the process's threads waited, in
			       * all, for room in a full pipe or ring (sent before
			       * WIRE_EXIT) */
	WIRE_UNCOUNTED = 13,  /* struct wire_uncounted: events the thread cannot count */
	WIRE_CATEGORY = 14,   /* struct wire_category + name bytes + category bytes */
	WIRE_MESSAGE = 15,    /* struct wire_message + text bytes */
	WIRE_ASYNC = 17,      /* struct wire_async (+ name bytes for a begin) */
	WIRE_UNFOLLOWED = 18, /* struct wire_unfollowed: objects whose library calls
			       * --lib-calls could not follow */
	WIRE_NOLATE = 19,     /* no payload: the process has no ring file, so what
			       * it records after its exit path (this record is
			       * sent on it, before WIRE_EXIT) is not counted */
};

enum wire_op {
	WIRE_OP_BEGIN = 0,
	WIRE_OP_END = 1,
	WIRE_OP_INSTANT = 2,
	WIRE_OP_COUNTER = 3,
};

#define WIRE_DELTA_BITS 40
#define WIRE_DELTA_MASK ((UINT64_C(1) << WIRE_DELTA_BITS) - 1)
#define WIRE_ID_BITS 22
#define WIRE_ID_SHIFT 40
#define WIRE_ID_MAX ((UINT32_C(1) << WIRE_ID_BITS) - 1)
#define WIRE_OP_SHIFT 62

/* The type of a RING_CTL_ARG argument (bits 30..33 of its control word). */
enum wire_arg_type {
	WIRE_ARG_I64 = 0,
	WIRE_ARG_U64 = 1,
	WIRE_ARG_F64 = 2,
	WIRE_ARG_BOOL = 3,
	WIRE_ARG_STR = 4,
};
#define WIRE_ARG_TYPES 5u
#define WIRE_ARG_TYPE_SHIFT 30
#define WIRE_ARG_STR_MAX 255u /* bytes of a string value at most */

enum wire_clock {
	WIRE_CLOCK_MONOTONIC = 0, /* timestamps are CLOCK_MONOTONIC ns */
	WIRE_CLOCK_TSC = 1,	  /* timestamps are raw invariant TSC ticks */
};

struct wire_hdr {
	uint32_t magic;
	uint16_t len;
	uint8_t type;
	uint8_t check;
	uint32_t pid;
	uint32_t tid;
};

/* WIRE_HELLO: a process starts recording (library load, fork child, exec). */
struct wire_hello {
	uint32_t version; /* WIRE_VERSION */
	uint32_t clock;	  /* enum wire_clock */
	uint64_t ts;	  /* a timestamp in the process's clock ... */
	uint64_t mono_ns; /* ... and CLOCK_MONOTONIC read right after it */
	uint32_t ppid;
	uint32_t name_len; /* followed by the process name (argv[0] or exe) */
};

enum wire_name_kind {
	WIRE_NAME_STRING = 0, /* bytes are the name */
	WIRE_NAME_CODE = 1,   /* addr/base set; bytes are the object's path */
};

/* WIRE_NAME: defines name id `id` for the writing process. */
struct wire_name {
	uint32_t id;
	uint16_t kind; /* enum wire_name_kind */
	uint16_t len;  /* bytes that follow, padded to 8 */
	uint64_t addr; /* WIRE_NAME_CODE: the function's address */
	uint64_t base; /* WIRE_NAME_CODE: load base of its object */
};

/* WIRE_CALIB: the library's own cost per event in this process, measured at
 * its start (the fastest of repeated tight loops of begin/end through the
 * path its events take), in thousandths of its clock's unit. */
struct wire_calib {
	uint64_t milli_per_event;
	uint64_t reserved;
};

/* WIRE_VALUES: from here on, every WIRE_OP_BEGIN and WIRE_OP_END word of the
 * process is followed by `count` words: the thread's cumulative values at
 * that instant (the events and allocation counts its SPANSTAT_VALUES names,
 * in its order); sent right after WIRE_HELLO, before any event.  `layout`
 * is spanstat_values_id() of that SPANSTAT_VALUES (spanenv.h): a reader
 * takes the words as the values it asked for only when it is the id of
 * what it asked for (a program may have changed the variable for what it
 * runs); 0 in records of libraries that did not tell it. */
struct wire_values {
	uint32_t count;
	uint32_t layout;
};

/* WIRE_UNCOUNTED: thread tid could not open the events of its values in
 * `mask` (bit i: the i-th value WIRE_VALUES announced; perf_event_open
 * refused it, e.g. to a user without the privilege a tracepoint or uprobe
 * needs).  Those values of the thread read 0 and mean nothing: a reader shows
 * them as unknown.  Sent before the thread's first event. */
struct wire_uncounted {
	uint32_t mask;
	uint32_t reserved;
};

/* WIRE_RESYNC: thread tid dropped events, `dropped` words in all (as
 * WIRE_EVENTS counts them; later records carry the same total).  Of the spans
 * it had open before the drop, the `low` outermost are still open: those
 * above ended among the dropped events.  The next `n` begins of the thread,
 * at their own times, are the spans it began among the dropped events and
 * still has open (their begin values are those at the tale).  A reader keeps
 * the open spans below `low` open across the drop instead of closing them
 * all.  A long tale comes in pieces: those after the first have low
 * UINT32_MAX (every open span stays).  A last piece with n 0 may say that
 * `unnamed` more spans begun among the dropped events are open above those:
 * their names are not known (the thread follows 1024 open spans), so the
 * reader takes their ends without making spans of them. */
struct wire_resync {
	uint32_t dropped;
	uint32_t low;
	uint32_t n;
	uint32_t unnamed; /* 0 in files written before it was told */
};

/* WIRE_CATEGORY: spanstat_category(): spans, instants and counters whose
 * name is the `name_len` bytes that follow have the category of the
 * `cat_len` bytes after them (1 to WIRE_CATEGORY_MAX; the name may be
 * empty).  A name is keyed by its text, not by an id, so the record needs no
 * WIRE_NAME and holds for every process of the session: the first category
 * a name gets is its category (a reader ignores later ones).  The record is
 * written before any event the declaration is meant to cover. */
#define WIRE_CATEGORY_MAX 255u
struct wire_category {
	uint16_t name_len;
	uint16_t cat_len;
	uint32_t reserved;
};

/* WIRE_MESSAGE: spanstat_message(): thread tid puts the `len` bytes that
 * follow (at most WIRE_MESSAGE_MAX, no NUL among them) on its timeline at
 * `ts` (the process's clock).  Sent on the pipe with its own write(), also
 * by a thread whose events go through a ring: its time places it. */
#define WIRE_MESSAGE_MAX 1024u
struct wire_message {
	uint64_t ts;
	uint32_t len;
	uint32_t reserved;
};

/* WIRE_ASYNC: spanstat_async_*(): an async span, identified in its process
 * by `id` (never 0), is begun (op WIRE_ASYNC_BEGIN, its name's `len` bytes
 * follow, at most WIRE_ASYNC_NAME_MAX, no NUL among them), entered or exited
 * by thread tid, or ended, at `ts` (the process's clock).  Sent on the pipe
 * with its own write(), like WIRE_MESSAGE; `len` is 0 but for a begin. */
#define WIRE_ASYNC_NAME_MAX 1024u
enum wire_async_op {
	WIRE_ASYNC_BEGIN = 0,
	WIRE_ASYNC_ENTER = 1,
	WIRE_ASYNC_EXIT = 2,
	WIRE_ASYNC_END = 3,
};
struct wire_async {
	uint64_t ts;
	uint64_t id;
	uint32_t op; /* enum wire_async_op */
	uint32_t len;
};

/* WIRE_UNFOLLOWED: --lib-calls (span/rec_plt.c) found `objects` more
 * loaded objects whose calls through the PLT it does not follow, for want
 * of room (its limits of objects and of slots followed at once, or memory):
 * their `slots` wanted PLT slots (matching the glob) were not patched, so
 * none of their calls are spans.  Counts since the process last told (each
 * load of an object once), sent after the scan that found them, before an
 * exec and before WIRE_EXIT. */
struct wire_unfollowed {
	uint32_t objects;
	uint32_t slots;
};

/* WIRE_EXIT: the process is ending; open spans are closed at `ts`.  A
 * process whose WIRE_EXIT never arrives was killed (SIGKILL) or lost its
 * final records. */
struct wire_exit {
	uint64_t ts;
	uint32_t signal;  /* non-zero: ended by this fatal signal */
	uint32_t dropped; /* event words all the process's threads dropped
			   * (saturating): covers drops no later record told */
};

static inline uint8_t wire_check(const struct wire_hdr *h)
{
	const uint8_t *p = (const uint8_t *)h;
	uint8_t c = 0xa5;
	for (unsigned i = 0; i < WIRE_HDR_SIZE; i++)
		if (i != 7)
			c = (uint8_t)((c ^ p[i]) * 31u + 7u);
	return c;
}

static inline uint64_t wire_event(enum wire_op op, uint32_t id, uint64_t delta)
{
	return ((uint64_t)op << WIRE_OP_SHIFT) | ((uint64_t)id << WIRE_ID_SHIFT) |
	       (delta & WIRE_DELTA_MASK);
}

static inline unsigned wire_pad8(unsigned n)
{
	return (n + 7u) & ~7u;
}

#endif
