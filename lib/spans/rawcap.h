/* rawcap.h: the raw capture of a session's span inputs (issue 23's
 * "acquisition captures; analysis analyses"), and its replay.
 *
 * A capture is a sequence of items, each a tag byte, a LEB128 length and
 * that many bytes: every whole record the decoder took, in the order it
 * took them (decoder_set_tap), every switch, exit and exec the off-CPU
 * table took (offcpu_set_tap), every chunk of the line protocol with the
 * time it was read, what this machine's files and /proc answered the
 * decoder and the line source, and what the session told the decoder from
 * outside at the end (the framing's rejects, late events, switches lost,
 * off-CPU damage).  A replay feeds them, in order, to a fresh decoder,
 * off-CPU table and line source: its sinks then get the very span events
 * the live decoder's got, and its statistics are the live ones.  The
 * record file keeps captures in RAW blocks (spanstat-record(5)); a block
 * holds whole items, and an item's answers (RAW_SYMNAME ... RAW_PCOMM)
 * follow it in the same block.  The replay is lib/out's (rawrep.h): it
 * needs the off-CPU table of lib/perf. */
#ifndef SPANSTAT_RAWCAP_H
#define SPANSTAT_RAWCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spanev.h"
#include "spanstats.h"

enum rawcap_tag {
	/* clock valid, tsc0, mono0, mult, shift; demangle mode; realtime -
	 * monotonic (zigzag) for the line source; values per span, the
	 * target's first, the off-CPU value's index + 1 (0: none); then
	 * (since it was told; before, unchecked) spanstat_values_id() of the
	 * target's SPANSTAT_VALUES (decoder_values.layout); the
	 * first item of every block, the same in each (a replay may start at
	 * any block whose predecessors were lost) */
	RAW_SETUP = 1,
	RAW_REC = 2,	  /* a wire record, header included: decoder_record */
	RAW_OFF = 3,	  /* a perf record: offcpu_feed */
	RAW_LINES = 4,	  /* now (ns), then the bytes: linesrc_feed */
	RAW_LSTART = 5,	  /* linesrc_set_start */
	RAW_LFINISH = 6,  /* linesrc_finish */
	RAW_SYMNAME = 7,  /* the answer of symbols_name: its text */
	RAW_SYMWHERE = 8, /* of symbols_where: result (zigzag), line, file */
	RAW_PSTART = 9,	  /* of linesrc_proc_start: ns */
	RAW_PCOMM = 10,	  /* of linesrc_proc_comm: the name */
	/* the stream's end: framing's bad bytes, records cut short, late
	 * events (decoder_set_late); then decoder_finish */
	RAW_FINISH = 11,
	RAW_SWLOST = 12, /* decoder_count_switches_lost */
	RAW_DAMAGE = 13, /* norm_damage: pid, tid, ts, kind, value */
	/* the stream's end begins: its time (ns), where the threads of a
	 * process still running then end (session_end_at) */
	RAW_FINISHAT = 14,
	/* pid, then 1 when it was still running at the end, else 0: the
	 * answer decoder_finish got (decoder_set_running), before RAW_FINISH */
	RAW_RUNNING = 15,
	/* after RAW_SWLOST, in place of RAW_DAMAGE items: the live run made no
	 * tree (it only captured): the replay checks its own (offcpu_check) */
	RAW_CHECK = 16,
	/* a WIRE_EVENTS record packed (wirepack.h): as RAW_REC once unpacked */
	RAW_RECP = 17,
	/* the block's number (from 0), second in every block (since version
	 * 3): a replay tells blocks missing, repeated or out of order */
	RAW_BLOCK = 18,
	/* third in every block: decoder_state as the block starts, which a
	 * replay that lost records before takes (decoder_restate) to pick the
	 * live processes up here (and, since version 4, their threads' names) */
	RAW_STATE = 19,
	RAW_TAG_LAST = RAW_STATE
};

/* A capture being built. */
struct rawcap {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

/* Appends an item of tag whose bytes are a then b (either may be empty). */
void rawcap_put(struct rawcap *c, unsigned tag, const void *a, size_t alen, const void *b,
		size_t blen);
/* A wire record the decoder took: RAW_RECP when it packs smaller, else
 * RAW_REC. */
void rawcap_put_rec(struct rawcap *c, const void *rec, size_t len);
/* The decoder's answers about a code address (decoder_sym_name and
 * decoder_sym_where), kept in c as RAW_SYMNAME and RAW_SYMWHERE items for
 * the replay: what a capturing decoder_symfn calls. */
struct decoder;
size_t rawcap_sym_name(struct rawcap *c, struct decoder *d, const char *path, uint64_t addr,
		       uint64_t base, char *fn, size_t size);
int rawcap_sym_where(struct rawcap *c, struct decoder *d, const char *path, uint64_t addr,
		     uint64_t base, char *where, size_t size, unsigned *line);
/* An item of n varints. */
void rawcap_put_u64s(struct rawcap *c, unsigned tag, const uint64_t *v, size_t n);
void rawcap_release(struct rawcap *c);

static inline uint64_t rawcap_zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

#endif
