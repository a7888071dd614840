/* recfile.h: spanstat's record file (spanstat-record(5)): one session kept
 * whole, so `spanstat report` can produce every output later, elsewhere.
 *
 * Layout: a 16-byte file header ("SPANSREC", version, header size), then
 * records, each a 12-byte header (type, payload length, CRC-32 of the
 * payload; little-endian u32s) and its payload.  Payload fields are LEB128
 * varints (signed ones zigzag) and strings as a length and bytes.  The
 * record writer (record_writer_ops) appends as the data arrives: strings
 * before the events that name them, span events in blocks of at most
 * RECORD_BLOCK bytes that decode alone, each run's results as it ends.  A
 * reader takes every record whose CRC holds and counts the others, so a
 * damaged or truncated file loses only the records it damaged; after a
 * damaged header it finds the next record whose CRC holds. */
#ifndef SPANSTAT_RECFILE_H
#define SPANSTAT_RECFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "pbenc.h"
#include "spannames.h"
#include "strtab.h"

#define RECORD_MAGIC "SPANSREC"
/* 2: RAW blocks; 3: their numbers and states; 4: the states' thread names;
 * 1 to 3 read too */
#define RECORD_VERSION 4u
#define RECORD_FILE_HDR 16u
#define RECORD_HDR 12u
#define RECORD_BLOCK (64u << 10)       /* events per block: at most this many bytes */
#define RECORD_MAX_PAYLOAD (64u << 20) /* any record */

enum record_type {
	RECORD_HEAD = 1,     /* the session's head and where it ran (first) */
	RECORD_STRINGS = 2,  /* strings: first id, count, then each */
	RECORD_NAMES = 3,    /* how names show: (id, text, file, line)... */
	RECORD_EVENTS = 4,   /* a block of span events */
	RECORD_INTERVAL = 5, /* a -I sample */
	RECORD_RUN = 6,	     /* a run's counts, rusage and status */
	RECORD_RUNSTART = 7, /* run k starts (threads from now on are its) */
	RECORD_END = 8,	     /* the stream's counts and what spans carried */

	/* names' categories: (name id, category id)... */
	RECORD_CATEGORIES = 9,
	/* a message (spanstat_message): pid, tid, ts, depth, text */
	RECORD_MESSAGE = 10,
	/* the typed arguments (spanstat_arg_*) given among the events of the
	 * EVENTS block right before it, each: position among them, thread,
	 * ts, depth, key's string id, type (enum span_arg_type), value (a
	 * string's: its string id) */
	RECORD_ARG = 11,
	/* an async span's begin, enter, exit or end: op (0..3), pid, tid, ts,
	 * name, id, flags, parent, begin ts, busy ns, enters, threads */
	RECORD_ASYNC = 12,
	/* --keep-last: the events are the run's last,
	 * and what was overwritten before them */
	RECORD_WINDOW = 13,
	/* a block of the session's raw capture (rawcap.h): whole items, the
	 * span inputs its replay decodes into the events (version 2) */
	RECORD_RAW = 14,

	RECORD_TYPE_LAST = RECORD_RAW /* a reader resynchronises on 1..this */
};

/* A --keep-last file's window (RECORD_WINDOW): the events, messages and
 * -I samples it holds are the last SIZE bytes of them; what came before
 * was overwritten and is only counted here. */
struct record_window {
	bool present;	   /* the file is a window (else it holds everything) */
	bool snapshot;	   /* written on SIGUSR2 while the target ran: no RUN, no END */
	uint64_t size;	   /* --keep-last, bytes */
	uint64_t events;   /* span events overwritten (messages not among them) */
	uint64_t spans;	   /* of them, span begins: the spans overwritten */
	uint64_t messages; /* messages overwritten */
	uint64_t samples;  /* -I samples overwritten */
	uint64_t bytes;	   /* bytes of records overwritten */
	/* the reader's: ends replayed whose begin was overwritten (spans cut
	 * at the window's start), left out of the outputs */
	uint64_t cut;
	uint64_t cut_args; /* typed arguments of those spans, left out too */
	/* a report of several files (files > 1): the windows' sums (size too),
	 * over `windows` of the files that are windows */
	unsigned windows, files;
};

/* Where and when a recorded session ran (the head's second half). */
struct record_info {
	char *host, *job, *boot_id, *version;
	char *sysname, *release, *machine; /* uname's */
	long rank, local_rank;		   /* -1: not in a job */
	/* one instant on three clocks: spans are stamped CLOCK_MONOTONIC */
	uint64_t real_ns, mono_ns, boot_ns;
};

/* What a reader had to leave out. */
struct record_damage {
	uint64_t bad_records;	 /* records whose CRC or contents were wrong */
	uint64_t lost_bytes;	 /* after the last whole record (truncation) */
	uint64_t skipped_bytes;	 /* between records: a damaged header, and what the
				  * reader skipped to the next record whose CRC held */
	uint64_t lost_events;	 /* events blocks among the bad records */
	uint64_t unknown;	 /* intact records of types this reader does not know
				  * (a newer writer's, or a damaged type), skipped */
	bool no_end;		 /* the END record is missing: the recording stopped */
	uint64_t raw_records[2]; /* END's span records and a RAW capture's replay's,
				  * when they differ: blocks missing or repeated */
	/* RAW blocks whose numbers never came, came twice or came after later
	 * ones (those two left out): version 3's */
	uint64_t raw_blocks[3];
	/* a raw capture's replay: processes whose every record was in lost
	 * blocks (END's count less the replay's; DECODE_UNKNOWN: an END older
	 * than the count), and answers to the decoder it did not find */
	uint64_t lost_procs, lost_answers;
	uint64_t lost_strings; /* string ids no STRINGS record defined */
	unsigned lost_runs;    /* runs whose results are missing */
};

struct recfile;

/* Reads path whole (a regular file, or a FIFO or pipe to its end) and its
 * head, strings, names and results (events come with recfile_replay).
 * Strings are interned into strings and their views set in names (shared
 * by every file of one report).  stop: signals the caller blocked whose
 * arrival ends the reading, here and in recfile_replay, with -EINTR (no
 * cause), or NULL.  0, or -errno with *cause: a file that cannot be read
 * (a directory, a device, one cut short while it was read), not a record
 * file, an unknown version or a head that cannot be read. */
int recfile_open(struct recfile **rf, const char *path, struct strtab *strings,
		 struct spannames *names, const sigset_t *stop, char **cause);
void recfile_close(struct recfile *rf);
/* The head (strings and names: the shared ones), valid until close. */
const struct run_head *recfile_head(const struct recfile *rf);
const struct record_info *recfile_info(const struct recfile *rf);
/* Whole after recfile_replay (which finds the blocks that do not decode). */
const struct record_damage *recfile_damage(const struct recfile *rf);
/* When the first run started (the head has when the session did). */
void recfile_start(const struct recfile *rf, struct timespec *start, uint64_t *mono);
/* What the analysis needs at the end: the runs whose results the file
 * holds (maybe none), the stream's counts (lost without END) and cost. */
void recfile_end(const struct recfile *rf, struct run_end *e);

/* How a file's events join a report of several: pids moved up by pid_base,
 * timestamps by ts_shift (ns); process names prefixed with prefix. */
struct record_replay {
	uint32_t pid_base;
	int64_t ts_shift;
	const char *prefix; /* NULL: as recorded */
	unsigned run_base;  /* runs counted from here */
	/* extra sink for this file's events (a rank's own tree), or NULL */
	const struct span_sink *extra;
};

/* Before the replays of a file whose process names take prefix (a report
 * of several): interns the prefixed names the file's END lists, so that
 * its replays only look them up and may run at once.  1 when done, 0 when
 * the file has no such list (older, or its END lost: its replays then
 * intern as they go, one at a time), -ENOMEM.  Call for the files in
 * order, after every file was opened. */
int recfile_prefix(struct recfile *rf, const char *prefix);

/* Feeds the events, samples and run starts, in recorded order, to a;
 * 0, -ENOMEM, or -EINTR when a stop signal came. */
int recfile_replay(struct recfile *rf, struct analysis *a, const struct record_replay *how);
/* The same into several analyses that share nothing they change (each
 * its own writers; analysis_parts): every one gets every event, sample and
 * run start, parts[0] in the calling thread (how->extra too; what the file
 * lost is counted from its replay), each other in a thread of its own that
 * takes no signal (one after another in the calling thread with a prefix
 * recfile_prefix did not settle, whose names grow the string table the
 * writers read).  0, or the first
 * error, in the order of parts. */
int recfile_replay_parts(struct recfile *rf, struct analysis *const *parts, size_t nparts,
			 const struct record_replay *how);

/* The file's window (present false: it holds the whole session); cut is
 * whole after recfile_replay. */
const struct record_window *recfile_window(const struct recfile *rf);

struct writer;
/* The record writer's window so far (false: it keeps everything). */
bool recwrite_window(const struct writer *w, struct record_window *win);
/* --keep-last: writes the record file as it would be if the session ended
 * now (no RUN, no END), to a temporary file put in place by rename; 0, or
 * -errno with *cause. */
int recwrite_snapshot(struct writer *w, char **cause);

/* Whether the bytes start a record file (for inputs that may be JSON). */
bool recfile_is(const void *buf, size_t len);

/* Varints (written with pbenc_put_varint, LEB128 as protobuf's), for the
 * writer, the reader and the fuzz target. */
static inline uint64_t record_zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t record_unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A reader over one payload; ok turns false at the first overrun. */
struct record_in {
	const uint8_t *p, *end;
	bool ok;
};

static inline uint64_t record_get_u64(struct record_in *in)
{
	if (__builtin_expect(in->p < in->end && *in->p < 0x80, 1))
		return *in->p++;
	uint64_t v = 0;
	for (unsigned s = 0; s < 64; s += 7) {
		if (in->p >= in->end) {
			in->ok = false;
			return 0;
		}
		uint8_t b = *in->p++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	in->ok = false;
	return 0;
}

#endif
