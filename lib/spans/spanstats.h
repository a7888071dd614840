/* spanstats.h: what collecting spans counted, kept and lost: the decoder's
 * tallies (decoder.c) as the report, a record file and every writer see
 * them, apart from the decoder itself. */
#ifndef SPANSTAT_SPANSTATS_H
#define SPANSTAT_SPANSTATS_H

#include <stdint.h>

struct decode_stats {
	uint64_t records;	/* valid records */
	uint64_t events;	/* event words decoded */
	uint64_t spans;		/* begin/end pairs emitted */
	uint64_t dropped;	/* event words the target reported dropped */
	uint64_t lost_records;	/* events records missing from a thread's sequence */
	uint64_t no_exit;	/* processes whose EXIT record never arrived */
	uint64_t bad_bytes;	/* bytes skipped while resynchronising */
	uint64_t bad_records;	/* records with a valid header but bad contents */
	uint64_t bad_ids;	/* events naming an undefined id */
	uint64_t unmatched;	/* ends without a matching begin */
	uint64_t unfinished;	/* begins closed by spanstat at exit */
	uint64_t over_limit;	/* events and definitions refused by the decoder's
				 * own limits (DECODE_MAX_*) or out of memory */
	uint64_t clock_unknown; /* TSC processes seen without a valid spanclock:
				 * their ticks are taken as ns from the HELLO */
	uint64_t lines;		/* events of the line protocol taken (linesrc.h): not
				 * the library's, not in its cost */
	uint64_t bad_lines;	/* lines of the line protocol skipped */
	uint64_t gaps;		/* drops across which a thread's outer open spans
				 * were kept open (WIRE_RESYNC) */
	uint64_t switches_lost; /* context switches no span's off-CPU time could
				 * get: switch records the kernel lost or that came
				 * too late (offcpu.h), notes of switched spans an
				 * aggregating thread found no room for (ring.h) */
	uint64_t waited_ns;	/* time the target's threads waited for room in a
				 * full pipe or ring (WIRE_WAITED): inside its spans */
	uint64_t unnamed;	/* spans begun in a drop and open after it whose
				 * names the target could not tell (WIRE_RESYNC) */
	uint64_t misnested;	/* spans nested under an open span that began after
				 * them: a thread's events from two sources (the
				 * library's, the line protocol's) came out of time
				 * order; DECODE_UNKNOWN in a record file older
				 * than the count */
	uint64_t unfollowed;	/* loaded objects whose library calls --lib-calls
				 * could not follow, for want of room
				 * (WIRE_UNFOLLOWED); DECODE_UNKNOWN in a record
				 * file older than the count */
	uint64_t unfol_slots;	/* their PLT slots the glob matched */
	uint64_t late;		/* events the target recorded after its process's
				 * exit path had run (a destructor or exit handler
				 * later than the library's): not sent, so in no
				 * span; counted in the ring file (ring.h).
				 * DECODE_UNKNOWN without a ring file, or in a
				 * record file older than the count; with
				 * late_procs, those the others counted */
	uint64_t late_procs;	/* processes that could not count theirs (no
				 * ring file: WIRE_NOLATE), so late is a least */
	uint64_t running;	/* processes still running when the run ended (an
				 * orphan the target left):
				 * what they record from then on is not seen.  Not
				 * in no_exit; DECODE_UNKNOWN in a record file
				 * older than the count */
	/* added with the counts of a damaged file's losses (a record file older
	 * than them: DECODE_UNKNOWN) */
	uint64_t processes;    /* processes the library announced (its HELLO):
				* each image of one that exec'd counts */
	uint64_t file_records; /* records the live run took that the replay of a
				* record file's raw capture did not (RAW blocks
				* damaged or missing): lost from the file, not by
				* the target; 0 in a live run */
	uint64_t file_procs;   /* of processes, those whose every record was in
				* the file's lost blocks: not in the report */
	uint64_t file_answers; /* answers the replay looked for in the capture
				* and did not find (symbol names, process starts
				* and names, whether a process still ran): taken
				* as unknown */
	uint64_t unvalued;     /* processes whose spans came without the values
				* the session asked for (their SPANSTAT_VALUES
				* gone or changed: another count or layout), so
				* the span events' sums are unknown; DECODE_UNKNOWN
				* in a record file older than the count */
};

/* Fields of struct decode_stats, in order: as a record file keeps them. */
#define DECODE_STATS_N 30
/* A count a record file does not have (written before it was kept). */
#define DECODE_UNKNOWN UINT64_MAX

#endif
