/* decoder.h: the span wire decoder.  Fed raw bytes as they come off the pipe
 * (any split), it validates records (wire.h), resynchronises after garbage,
 * converts timestamps to CLOCK_MONOTONIC ns, resolves names (symbolising code
 * addresses), keeps per-thread stacks so that what it emits is balanced, and
 * counts everything it had to reject.  Memory grows with processes, threads,
 * names and nesting depth, never with the number of events.
 *
 * What sinks receive (details in decoder.c): SPAN_PROCESS at each HELLO (a
 * second HELLO for a pid, exec or pid reuse, first ends the old incarnation
 * with SPAN_PROCESS_END); SPAN_THREAD when a thread is first seen (name 0)
 * and when it is named; balanced BEGIN/END; an END of an outer span first
 * closes the spans inside it, SPAN_F_UNFINISHED, at its ts; spans left open
 * at THREAD_EXIT, EXIT, a new HELLO or decoder_finish are closed
 * SPAN_F_UNFINISHED (at the record's ts; at a new HELLO or decoder_finish,
 * which have none, at each thread's end as end_at knows it, else its last
 * ts), and so are a thread's open spans when records of it were lost (at
 * its last ts).  SPAN_PROCESS_END carries the fatal signal in value
 * (0: normal exit, or the stream ended). */
#ifndef SPANSTAT_DECODER_H
#define SPANSTAT_DECODER_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "demangle.h"
#include "spanev.h"
#include "spannames.h"
#include "spanstats.h"
#include "strtab.h"

/* TSC to CLOCK_MONOTONIC: ns = mono0 + ((tsc - tsc0) * mult) >> shift. */
struct spanclock {
	uint64_t tsc0, mono0;
	uint32_t mult, shift;
	int valid; /* 0: TSC streams cannot be converted (their spans still count) */
};

struct decoder; /* opaque: decoder.c */

/* clock may be NULL (no TSC conversion possible). */
struct decoder *decoder_new(const struct spanclock *clock);
void decoder_free(struct decoder *d);
/* Adds a sink normalised events go to, after those added before; 0, or
 * -ENOMEM (-EINVAL for a sink without an event function). */
int decoder_add_sink(struct decoder *d, struct span_sink sink);
/* Consume bytes.  Returns 0, or -ENOMEM. */
int decoder_feed(struct decoder *d, const void *buf, size_t len);
/* One whole record (header included), from a transport other than the byte
 * stream (ringsrc.c), between any two records of the stream.  Returns 0, or
 * -ENOMEM. */
int decoder_record(struct decoder *d, const void *rec, size_t len);
/* fn sees every valid record of the byte stream just before the decoder
 * takes it (the session drains a process's rings before its EXIT). */
struct wire_hdr;
typedef void (*decoder_hook_fn)(void *ctx, const struct wire_hdr *h, const uint8_t *payload);
void decoder_set_hook(struct decoder *d, decoder_hook_fn fn, void *ctx);
/* Whether process pid, which never said EXIT, is still running when the
 * stream ends (decoder_finish): counted as running, not as no_exit.
 * Without one (a replay), none is. */
typedef bool (*decoder_running_fn)(void *ctx, uint32_t pid);
void decoder_set_running(struct decoder *d, decoder_running_fn fn, void *ctx);
/* A capture (the record file's RAW blocks): fn sees every whole record the
 * decoder takes, in the order it takes them, before it does: the byte
 * stream's after the hook, and each decoder_record's (even one it refuses).
 * Fed to decoder_record in that order, they make a decoder without the
 * hook do what this one did (given the same symfn answers and the same
 * calls from other sources at their places).  NULL: none. */
typedef void (*decoder_tap_fn)(void *ctx, const void *rec, size_t len);
void decoder_set_tap(struct decoder *d, decoder_tap_fn fn, void *ctx);
/* With a tap, capture only: the events of WIRE_EVENTS records (the bulk
 * of the stream) are tapped and not decoded, only their headers (the
 * records, drops and records lost are counted); every other record is
 * decoded, so that the strings interned, their ids and the names are those
 * of a full decode, in the same order (none is interned from an event).
 * The span events, the other statistics and the callbacks events make are
 * then those of a replay of the capture, not this decoder's. */
void decoder_set_capture_only(struct decoder *d, bool on);
/* Where code names are symbolised and located (symbols.h's symbols_name and
 * symbols_where), by default this machine's files (decoder_sym_name and
 * decoder_sym_where); a capture keeps the answers, a replay gives them
 * back.  NULL: the default again. */
struct decoder_symfn {
	size_t (*name)(void *ctx, const char *path, uint64_t addr, uint64_t base, char *fn,
		       size_t size);
	int (*where)(void *ctx, const char *path, uint64_t addr, uint64_t base, char *where,
		     size_t size, unsigned *line);
	void *ctx;
};
void decoder_set_symfn(struct decoder *d, const struct decoder_symfn *f);
size_t decoder_sym_name(struct decoder *d, const char *path, uint64_t addr, uint64_t base, char *fn,
			size_t size);
int decoder_sym_where(struct decoder *d, const char *path, uint64_t addr, uint64_t base,
		      char *where, size_t size, unsigned *line);
/* What the byte stream's framing rejected so far (bad_bytes, and records
 * cut short), and the same counted into a decoder that was not fed the
 * stream (a replay of a capture). */
void decoder_frame_counts(const struct decoder *d, uint64_t *bad_bytes, uint64_t *truncated);
void decoder_count_frame(struct decoder *d, uint64_t bad_bytes, uint64_t truncated);
/* For spans a source aggregated itself (ringsrc.c's trees): the strtab id of
 * process pid's name id (0: unknown), a duration and a timestamp of its clock
 * in ns, and their counts added to the stats. */
uint32_t decoder_name_of(const struct decoder *d, uint32_t pid, uint32_t id);
uint64_t decoder_dur_ns(const struct decoder *d, uint32_t pid, uint64_t dur);
uint64_t decoder_ts_ns(const struct decoder *d, uint32_t pid, uint64_t ts);
void decoder_count(struct decoder *d, uint64_t spans, uint64_t unfinished, uint64_t unmatched,
		   uint64_t over_limit);
/* Event words an aggregating thread of pid could not record (its tree says
 * so; ring.h): counted as dropped, and as told for that process's EXIT. */
void decoder_count_dropped(struct decoder *d, uint32_t pid, uint64_t words);
/* What one event costs the target, in ns, as the library measured it at its
 * start (WIRE_CALIB; the mean over the processes that told it); 0: unknown. */
double decoder_event_cost_ns(const struct decoder *d);
/* What begins and ends carry (spanmetric.h): n values per span, the
 * target's from first_target on (the words after each begin and end of a
 * process that announced that many, WIRE_VALUES); value off_cpu (-1: none)
 * is the thread's cumulative off-CPU ns at the event, from off_cpu_at.
 * end_at (may be NULL): when thread (pid, tid) ended at or after `after` ns,
 * 0 if not known, for processes that end without saying when.  Set before
 * the first feed. */
struct decoder_values {
	unsigned n, first_target;
	int off_cpu;
	uint64_t (*off_cpu_at)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns);
	void *ctx;
	uint64_t (*end_at)(void *ctx, uint32_t pid, uint32_t tid, uint64_t after);
	/* a process's begin or end came without the target's values (its
	 * SPANSTAT_VALUES gone or changed, as a program may do to the
	 * environment of what it runs: other values, or as many in another
	 * order): their sums lack its part (or NULL) */
	void (*unvalued)(void *ctx, uint32_t pid);
	/* spanstat_values_id() of the target's SPANSTAT_VALUES (spanenv.h):
	 * a process whose WIRE_VALUES names another layout sends words that
	 * are not the target's values, whatever their count (0: not checked,
	 * as for a library that does not tell its own) */
	uint32_t layout;
};
int decoder_set_values(struct decoder *d, const struct decoder_values *v);
/* For other sources feeding the same spans (linesrc.c): the normaliser (its
 * processes with a NULL src are theirs), a string id for s (empty allowed),
 * the value layout, and their rejects counted with the decoder's. */
struct normaliser;
struct normaliser *decoder_norm(struct decoder *d);
uint32_t decoder_intern(struct decoder *d, const char *s, size_t len);
/* Name id's category is string id cat (the first one given holds). */
void decoder_category(struct decoder *d, uint32_t name, uint32_t cat);
const struct decoder_values *decoder_values_of(const struct decoder *d);
void decoder_count_lines(struct decoder *d, uint64_t events, uint64_t bad);
/* End of stream: partial record counted as bad, open spans closed. */
void decoder_finish(struct decoder *d);
const struct decode_stats *decoder_stats(const struct decoder *d);
/* The target's events that came after its exit path (decode_stats.late),
 * as the ring file counted them once the target was gone; DECODE_UNKNOWN
 * when nothing counted them. */
void decoder_set_late(struct decoder *d, uint64_t n);
/* The switch records that off-CPU times lack (decode_stats.switches_lost). */
void decoder_count_switches_lost(struct decoder *d, uint64_t n);
const struct strtab *decoder_strings(const struct decoder *d);
/* How names show (demangled function names, their source locations). */
const struct spannames *decoder_names(const struct decoder *d);
/* A raw capture's restatement (rawcap.h's RAW_STATE): what a replay needs
 * to pick up, at this point, the processes of this decoder had it lost
 * records before: each live process's HELLO record whole, its values per
 * span (WIRE_VALUES), its cost per event (WIRE_CALIB, milli-ns) and its
 * name ids with their string ids; then its live threads (pid, tid, the
 * string id of the name, 0: none); then, only when some process's values
 * are of another layout than the target's, how many and their pids.  Into
 * *buf (capacity *cap, grown with realloc), its bytes in *len.  0, -ENOMEM,
 * or -EINVAL (no state). */
int decoder_state(const struct decoder *d, uint8_t **buf, size_t *cap, size_t *len);
/* A replay's decoder takes a restatement: a process it does not know (or
 * knows another image of) starts as its HELLO says, names it lacks are
 * defined (the string ids must be those the capture's decoder had: see
 * decoder_seed_string), a thread whose name it lacks is named, one of a
 * listed process that the state does not list ends where it was last
 * seen (its open spans unfinished), and a process it knows that the
 * state does not list ends, without saying when.  Nothing changes for a
 * decoder that took every record the capture's did.  0, -ENOMEM, or
 * -EINVAL when the bytes are not a state (what came before in them was
 * taken). */
int decoder_restate(struct decoder *d, const void *buf, size_t len);
/* The states to restate are format 3's, without the threads (a thread
 * whose name the replay lost stays unnamed); before the first. */
void decoder_restate_unnamed(struct decoder *d);
/* String s (any bytes) interned as it is, before the first feed, so that
 * a replay's string ids are the capture's whatever records it loses: its
 * id (the next one, unless s was there), 0 without memory. */
uint32_t decoder_seed_string(struct decoder *d, const char *s, size_t len);
/* How function names are demangled (default DEMANGLE_SIMPLE); set it before
 * the first feed. */
void decoder_set_demangle(struct decoder *d, enum demangle_mode mode);

#endif
