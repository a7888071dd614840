/* fmt.h: number and text formatting shared by the human and CSV writers:
 * thousands grouping, the C-locale printf every number goes through (so a
 * setlocale() elsewhere never turns "1.5" into "1,5"), durations in human
 * units, count values and metrics as perf stat prints them.  Nothing here
 * knows which format it serves. */
#ifndef SPANSTAT_FMT_H
#define SPANSTAT_FMT_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "aggr.h"
#include "counters.h"
#include "evlist.h"
#include "metrics.h"

/* snprintf/fprintf in the C locale whatever setlocale() said. */
__attribute__((format(printf, 3, 4))) int fmt_c(char *buf, size_t size, const char *fmt, ...);
__attribute__((format(printf, 2, 3))) int fmt_fprintf_c(FILE *fp, const char *fmt, ...);

/* v with decimals places and ',' between groups of three integer digits:
 * "-1,234,567.89".  Returns the length, or what it would be (as snprintf). */
int fmt_grouped(char *buf, size_t size, double v, int decimals);
int fmt_grouped_u64(char *buf, size_t size, uint64_t v);

/* "<not supported>" / "<not counted>" for a count that has no value, else NULL. */
const char *fmt_count_state(const struct count *c);
/* Decimals perf shows for an event: 2 when its scale is fractional (msec
 * clocks), else 0. */
int fmt_count_decimals(const struct event *ev);
/* The count's value, grouped (human) or plain C-locale (machine). */
int fmt_count_value(char *buf, size_t size, const struct event *ev, const struct count *c,
		    int grouped);
/* The event name as shown: name, plus ":u" when counters.c had to exclude
 * the kernel because of perf_event_paranoid. */
int fmt_event_name(char *buf, size_t size, const struct event *ev, const struct count *c);
/* Percentage of time the counter ran (100 when it never was enabled). */
double fmt_running_pct(const struct count *c);

/* The metric's number as perf prints it: padded ("   0.560", "   1.23 ",
 * "   2.15%") or bare for machine formats ("0.560", "1.23", "2.15"). */
int fmt_metric_value(char *buf, size_t size, const struct metric *m, int padded);

/* An interval timestamp as perf's -I: "%6lu.%09lu" seconds. */
int fmt_interval_time(char *buf, size_t size, uint64_t t_ns);

/* The rows of a per-unit table (aggr.h), in perf stat's order: unit by
 * unit for cores, dies, sockets, nodes and caches; event by event for CPUs
 * (-A) and threads, the threads of each event by value, largest first
 * (and, counting every thread of the system, only those that counted
 * something).  units: ag->n rows of evl->n.  *rows (malloc'd, the caller
 * frees) gets the count returned, and *m (malloc'd too) each unit's
 * metrics over elapsed_ns, laid out as units; -ENOMEM, with neither. */
struct fmt_row {
	size_t unit, event;
};
long fmt_aggr_rows(const struct aggr *ag, const struct evlist *evl, const struct count *units,
		   double elapsed_ns, struct fmt_row **rows, struct metric **m);

/* A duration in ns, us, ms or s with three significant-ish digits:
 * "950 ns", "12.35 us", "1.20 ms", "2.345 s". */
int fmt_duration(char *buf, size_t size, uint64_t ns);

#endif
