/* linesrc.h: the span line protocol (spanstat-lines(5)): spans from programs
 * that do not link libspanstat (Python, shell scripts, anything that can
 * write a line), read from a pipe spanstat names in SPANSTAT_LINES and fed to
 * the same normaliser as the binary stream, so every output applies.
 *
 * One event per line, fields separated by one space, at most
 * LINES_MAX_LINE bytes with its newline:
 *     OP PID TID TIME [VALUE] NAME
 *   OP    B (begin), E (end), I (instant), C (counter: VALUE, a decimal
 *         int64, comes before NAME), N (NAME is the thread's name), X (the
 *         process ends; NAME is ignored and may be absent)
 *   PID   the writing process, decimal
 *   TID   its thread, decimal, or '-' for the process's main thread (= PID)
 *   TIME  CLOCK_MONOTONIC nanoseconds (decimal); '@' and CLOCK_REALTIME
 *         seconds with a fraction ('.' or ',': bash's $EPOCHREALTIME); or
 *         '-', the time spanstat reads the line
 *   NAME  the rest of the line, any bytes but the newline (may be empty)
 * A line that does not parse is counted and skipped; so is one longer than
 * LINES_MAX_LINE (up to its newline), one whose NAME holds a NUL byte, and
 * one whose TIME contradicts what came before: before its process began
 * (linesrc_set_start), a begin before the begin of the span it opens in, an
 * end (or X) before the begin of a span it closes or before the end of a
 * span that closed inside one.  A process is started by its first line and
 * named from /proc/PID/comm when that can be read; it ends at an X line or
 * at the end of the stream. */
#ifndef SPANSTAT_LINESRC_H
#define SPANSTAT_LINESRC_H

#include <stddef.h>
#include <stdint.h>

#include "decoder.h"

#define LINES_MAX_LINE 4096

struct linesrc;

struct lines_stats {
	uint64_t lines;	 /* lines taken */
	uint64_t events; /* of them, begins, ends, instants and counters */
	uint64_t bad;	 /* lines skipped: malformed, too long or out of time */
};

/* A source feeding d's normaliser and strings; realtime_ns - mono_ns is the
 * offset that turns '@' times into CLOCK_MONOTONIC (0: none given). */
struct linesrc *linesrc_new(struct decoder *d, int64_t realtime_minus_mono);
void linesrc_free(struct linesrc *ls);
/* Every process that writes lines began at mono_ns or later (the session
 * started the command then): from now on a line with an earlier time is
 * bad, and so is one before its process's own start, read from /proc when
 * the process is first seen.  Without this call (0), neither is checked. */
void linesrc_set_start(struct linesrc *ls, uint64_t mono_ns);
/* Bytes as read from the channel, in any pieces; now_ns: CLOCK_MONOTONIC now
 * (the time of '-' lines).  0, or -ENOMEM. */
int linesrc_feed(struct linesrc *ls, const void *buf, size_t len, uint64_t now_ns);
/* The end of the stream: a partial last line is bad; live processes end. */
void linesrc_finish(struct linesrc *ls);
const struct lines_stats *linesrc_stats(const struct linesrc *ls);
/* What a source learns of a process from /proc (when it began, in
 * CLOCK_MONOTONIC ns, 0: unknown; its name into buf, its length), by
 * default this machine's (linesrc_proc_start, linesrc_proc_comm): a
 * capture keeps the answers, a replay gives them back.  NULL: the default. */
struct linesrc_procfn {
	uint64_t (*start)(void *ctx, uint32_t pid);
	size_t (*comm)(void *ctx, uint32_t pid, char *buf, size_t size);
	void *ctx;
};
void linesrc_set_procfn(struct linesrc *ls, const struct linesrc_procfn *f);
uint64_t linesrc_proc_start(uint32_t pid);
size_t linesrc_proc_comm(uint32_t pid, char *buf, size_t size);

#endif
