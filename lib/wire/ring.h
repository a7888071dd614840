/* ring.h: the shared-memory side of the span transport, shared by the span
 * library (the writer, inside the target) and spanstat's ring reader
 * (ringsrc.c).  The pipe of wire.h stays the channel through which spanstat
 * finds the target and the target finds spanstat; the bulk of the events of
 * a thread goes through a ring of its own in one shared file instead, so that
 * recording costs no system call and everything a process recorded survives
 * its death, SIGKILL included: the words are in spanstat's memory as soon as
 * they are stored.
 *
 * The file: spanstat creates it (a memfd) and names it in the environment
 * (SPANSTAT_SHM, a /proc/<pid>/fd/<n> path); every process of the target maps
 * all of it shared.  It is RING_HEAD_BYTES of slot table, then RING_SLOTS rings
 * of RING_WORDS 8-byte words each.  A thread claims a free slot at its first
 * event (or records through the pipe when none is free) and gives it back at
 * its end; the reader frees slots once it drained them.
 *
 * Slot life: FREE (0) -> CLAIMED (the writer's CAS, then it fills pid, tid,
 * incarnation and base) -> OWNED (release) -> DONE (the thread ended, after its
 * last word) -> FREE (the reader, after draining and zeroing the ring).  A
 * process that dies leaves its slots OWNED; the reader drains and frees them
 * when the process's EXIT or its successor's HELLO (exec) comes through the
 * pipe, or when the stream ends.  The kernel gives an ended thread's tid
 * again: a slot of a tid another slot of its process held first (by base) is
 * read only after that one, its end included, so that a thread's records
 * never interleave with its successor's (one still owned, its thread gone
 * through the exit system call without its end, is read then up to its
 * first word not written, as a process's once it is gone, and ended there).
 *
 * Ring words: word k of the thread's stream is at ring[k % RING_WORDS].  A
 * word of 0 is not written yet (every word a writer stores is non-zero); the
 * reader zeroes words once it consumed them and then advances `tail`.  Event
 * words are wire.h's events words (delta from the previous event, the first
 * from the slot's base).  A word with op WIRE_OP_COUNTER and id 0 is a control
 * word, its low 40 bits one of enum ring_ctl; those that take a payload word
 * are followed by it (RING_CTL_SWITCHED by two).  With values (ring_file.vals
 * = k), every begin and end word is followed by k value words.  An item never
 * wraps: a writer with one word
 * left before the ring's end stores RING_CTL_NOP there first.  Two-word items
 * (a counter and its value, a control word and its payload) are stored
 * payload first, then the first word with release order, so a reader that
 * sees the first word sees the payload.
 *
 * Names are still defined through the pipe (WIRE_NAME), before any word that
 * uses them is stored.  So that a reader never meets an id whose definition
 * it has not read yet, the writer publishes `head` (words stored so far) only
 * from its slow path, after the definitions; a live reader reads the heads,
 * then drains the pipe, then consumes each ring up to the head it read.  Once
 * the process is gone (its EXIT or successor's HELLO read from the pipe, or
 * the stream's end), the reader consumes every word up to the first 0.
 *
 * Events a process records after its exit path ran (rec_finish: at exit,
 * _exit or a fatal signal) can no longer be sent: the writer counts them in
 * ring_file.late, which outlives the process, and spanstat tells the count.
 *
 * The reader trusts nothing here: the target can write anything into the
 * file.  Positions are bounded by RING_WORDS, the words it consumes become
 * wire records that the decoder validates like the pipe's. */
#ifndef SPANSTAT_RING_H
#define SPANSTAT_RING_H

#include <stdint.h>

#include "wire.h"

#define RING_MAGIC UINT64_C(0x31474e4952505353) /* "SSPRING1" */
#define RING_SLOTS 256u
#define RING_WORDS (1u << 15) /* 256 KiB per thread */
#define RING_SLOT_BYTES 128u
#define RING_HEAD_BYTES (64u + RING_SLOTS * RING_SLOT_BYTES) /* 32832: table */
#define RING_DATA_OFF (64u << 10)			     /* rings start here */
#define RING_AGG_OFF ((uint64_t)RING_DATA_OFF + (uint64_t)RING_SLOTS * RING_WORDS * 8u)
#define RING_AGG_BYTES (4u << 20) /* per slot: struct ring_agg, nodes, frames */
#define RING_AGG_NODES 81920u	  /* nodes per thread's tree, the root included */
#define RING_AGG_DEPTH 4096u	  /* open spans followed per thread: the normaliser's */
#define RING_FILE_BYTES (RING_AGG_OFF + (uint64_t)RING_SLOTS * RING_AGG_BYTES)

enum ring_state {
	RING_FREE = 0,
	RING_CLAIMED = 1,
	RING_OWNED = 2,
	RING_DONE = 3,
};

/* What a slot holds: events in its ring, or (SPANSTAT_AGG: no output needs
 * the events themselves) the thread's call tree in its aggregate area. */
enum ring_mode {
	RING_MODE_EVENTS = 0,
	RING_MODE_AGG = 1,
};

enum ring_ctl {
	RING_CTL_NOP = 1,      /* skip this word (the ring's end follows) */
	RING_CTL_TS = 2,       /* payload: an absolute timestamp; deltas restart there */
	RING_CTL_DROPPED = 3,  /* payload: event words this thread dropped, in all */
	RING_CTL_EXIT = 4,     /* payload: the timestamp at which the thread ended */
	RING_CTL_SWITCHED = 5, /* aggregate mode: a span the thread was switched out
				* in; bits 8..39 its node, payload: its begin and
				* end timestamps (two words) */
	RING_CTL_RESYNC = 6,   /* instead of RING_CTL_DROPPED: bits 8..39 n, payload:
				* the words dropped in all (low 32 bits) and `low`
				* (high 32 bits); n begin words (with their value
				* words) follow: WIRE_RESYNC's */
	RING_CTL_WAITED = 7,   /* the thread waited for room after its last event:
				* bits 8..39 the wait's on-CPU part in us, payload
				* its length in ns; passed on in the events record
				* (wire.h) */
	RING_CTL_POP = 9,      /* the thread ended its n innermost open spans, whose
				* names it did not follow (a longjmp over spans
				* deeper than REC_STACK): bits 8..39 n, payload the
				* time since its last event (a delta, which the
				* next event's counts from); passed on in the
				* events record */
	RING_CTL_POPTO = 10,   /* a longjmp ended every span open above depth d
				* (bits 8..39), counting the reader's open spans,
				* named or not: what the reader has open is what
				* was sent, even when the jump abandoned a call of
				* the recorder between its word and its shadow
				* stack; payload as RING_CTL_POP's */
	RING_CTL_UNNAMED = 8,  /* ends a drop's tale: payload the spans begun among
				* the dropped events, still open above those the
				* tale opened again, whose names it could not tell
				* (deeper than the thread follows): WIRE_RESYNC's
				* `unnamed` */
	RING_CTL_ARG = 11,     /* a typed argument of the innermost open span
				* (spanstat_arg_*): bits 8..29 its key's name id,
				* bits 30..33 its type (enum wire_arg_type),
				* payload its value (wire.h); passed on in the
				* events record */
};

#define RING_CTL(code) (((uint64_t)WIRE_OP_COUNTER << WIRE_OP_SHIFT) | (uint64_t)(code))
#define RING_IS_CTL(w) (((w) >> WIRE_ID_SHIFT) == ((uint64_t)WIRE_OP_COUNTER << 22))

/* The file's first 64 bytes. */
struct ring_file {
	uint64_t magic;	 /* RING_MAGIC, written by spanstat */
	uint32_t slots;	 /* RING_SLOTS */
	uint32_t words;	 /* RING_WORDS */
	uint32_t vals;	 /* values per begin and end (spanmetric.h's, those the
			  * target reads): in the events they follow each begin
			  * and end word; in aggregate mode they have an area */
	uint32_t layout; /* spanstat_values_id() of the session's
			  * SPANSTAT_VALUES (0: none): a process whose own
			  * differs, like one whose count does, uses the pipe */
	uint64_t late;	 /* events the target's processes recorded after their
			  * exit path had run (a destructor or exit handler
			  * that ran after the library's): not sent, counted
			  * here by the writers (atomically), read by spanstat
			  * once the processes are gone */
	uint64_t pad[4];
};

/* One slot, RING_SLOT_BYTES: the writer's half, then the reader's. */
struct ring_slot {
	uint32_t state;	      /* enum ring_state, accessed atomically */
	uint32_t pid, tid;    /* the owner */
	uint32_t kicked;      /* the writer asked the reader to come (WIRE_KICK) */
	uint64_t incarnation; /* the ts of the owner process's WIRE_HELLO */
	uint64_t base;	      /* timestamp the first word's delta is from */
	uint64_t head;	      /* words published by the writer (see above) */
	uint32_t mode;	      /* enum ring_mode */
	uint32_t wpad0;
	uint64_t wpad[2];
	uint64_t tail; /* words consumed by the reader */
	uint64_t rpad[7];
};

/* Aggregate mode (RING_MODE_AGG): the thread keeps its own call tree, as
 * spanstat's normaliser and aggregator would have built it from its events
 * (same balancing rules), in the slot's aggregate area: this header, then
 * RING_AGG_NODES nodes, then RING_AGG_DEPTH frames of the open spans.  Node 0
 * is the root; a node's parent is always an earlier node.  Times are in the
 * thread's clock (ticks or ns).  spanstat reads the area once the thread or
 * its process is gone, never while it runs, and trusts none of it. */
struct ring_agg {
	uint64_t last_ts;   /* the thread's latest event */
	uint64_t instants;  /* instants it recorded */
	uint64_t counters;  /* counter values it recorded */
	uint64_t unmatched; /* ends that matched no open span */
	uint64_t untracked; /* spans not kept: the tree was full */
	uint32_t nodes;	    /* nodes in use, the root included */
	uint32_t depth;	    /* open spans (frames in use) */
	uint64_t deep;	    /* spans not kept: deeper than RING_AGG_DEPTH */
	uint64_t dropped;   /* event words the thread could not record (a name
			     * it could not define, a full signal queue) */
	uint64_t args;	    /* arguments (spanstat_arg_*) it could not keep: a
			     * tree has no room for them */
};

struct ring_agg_node {
	uint32_t id;	 /* the span's name id (WIRE_NAME), 0 for the root */
	uint32_t parent; /* index of the parent node */
	uint32_t first_child, next_sibling;
	uint32_t hot;	       /* the child found last (a lookup cache) */
	uint32_t swlost;       /* its spans switched out whose note found no room in
				* the ring: their off-CPU time is not known */
	uint64_t count, total; /* finished spans at this path, their time */
	uint64_t unfinished;   /* of count, closed by an end of an outer span */
};

struct ring_agg_frame {
	uint32_t node, id;
	uint64_t ts;   /* the span's begin */
	uint32_t lock; /* the thread's switch mark at its begin (off-CPU) */
	uint32_t pad;
};

_Static_assert(sizeof(struct ring_agg) == 72, "ring agg header size");
_Static_assert(sizeof(struct ring_agg) + RING_AGG_NODES * sizeof(struct ring_agg_node) +
			       RING_AGG_DEPTH * sizeof(struct ring_agg_frame) <=
		       RING_AGG_BYTES,
	       "ring agg area size");

/* Values (ring_file.vals = k > 0): after everything above, per slot, k
 * values per node (their sums) then k per frame (the values at its begin;
 * a closed frame's row keeps the values at its end, so the thread's latest
 * values are in the row of its innermost open frame or the one after). */
static inline uint64_t ring_vals_bytes(unsigned k)
{
	return (uint64_t)(RING_AGG_NODES + RING_AGG_DEPTH) * k * 8u;
}

static inline uint64_t ring_file_bytes(unsigned k)
{
	return RING_FILE_BYTES + (uint64_t)RING_SLOTS * ring_vals_bytes(k);
}

/* Where slot i's parts lie in the file (each page-aligned, so that a writer
 * maps only the parts of the slots its threads hold). */
static inline uint64_t ring_words_off(unsigned i)
{
	return RING_DATA_OFF + (uint64_t)i * RING_WORDS * 8u;
}

static inline uint64_t ring_agg_off(unsigned i)
{
	return RING_AGG_OFF + (uint64_t)i * RING_AGG_BYTES;
}

static inline uint64_t ring_vals_off(unsigned i, unsigned k)
{
	return RING_FILE_BYTES + (uint64_t)i * ring_vals_bytes(k);
}

static inline uint64_t *ring_vals_at(void *file, unsigned i, unsigned k)
{
	return (uint64_t *)((char *)file + ring_vals_off(i, k));
}

static inline struct ring_agg *ring_agg_at(void *file, unsigned i)
{
	return (struct ring_agg *)((char *)file + ring_agg_off(i));
}

static inline struct ring_agg_node *ring_agg_nodes(struct ring_agg *a)
{
	return (struct ring_agg_node *)(a + 1);
}

static inline struct ring_agg_frame *ring_agg_frames(struct ring_agg *a)
{
	return (struct ring_agg_frame *)(ring_agg_nodes(a) + RING_AGG_NODES);
}

_Static_assert(sizeof(struct ring_slot) == RING_SLOT_BYTES, "ring slot size");
_Static_assert(sizeof(struct ring_file) == 64, "ring file header size");

static inline struct ring_slot *ring_slot_at(void *file, unsigned i)
{
	return (struct ring_slot *)((char *)file + 64 + (uint64_t)i * RING_SLOT_BYTES);
}

static inline uint64_t *ring_words_at(void *file, unsigned i)
{
	return (uint64_t *)((char *)file + ring_words_off(i));
}

_Static_assert(RING_DATA_OFF % 4096 == 0 && (RING_WORDS * 8u) % 4096 == 0 &&
		       RING_AGG_BYTES % 4096 == 0 && RING_FILE_BYTES % 4096 == 0 &&
		       ((uint64_t)(RING_AGG_NODES + RING_AGG_DEPTH) * 8u) % 4096 == 0,
	       "every slot's part of the file starts on a page");

#endif
