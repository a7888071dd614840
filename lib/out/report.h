/* report.h: what one spanstat session measured, as handed to the writers:
 * the head (known before the first run), interval samples while it runs, and
 * the final report.  Read-only for writers; session.c owns the memory. */
#ifndef SPANSTAT_REPORT_H
#define SPANSTAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "evlist.h"
#include "runinfo.h"
#include "spanmetric.h"
#include "spanstats.h"
#include "spantree.h"
#include "stats.h"
#include "strtab.h"

/* One rank of a job whose record files `spanstat report` merges: its own
 * means, rusage and span tree (names in the report's strings). */
struct rank_info {
	long rank;			/* from the file's head (-1: unknown) */
	const char *host;		/* where it ran */
	const char *file;		/* the record file */
	const struct count *count;	/* evl->n: the mean over its runs */
	struct rusage_info ru;		/* the mean over its runs */
	const struct span_tree *merged; /* its threads merged, or NULL */
	unsigned nruns;			/* its runs whose results are known; 0: none (a
					 * damaged file), its count and ru unknown */
	uint64_t dropped, lost_records; /* span event words its target dropped, and
					 * event records missing */
	uint64_t gaps;			/* drops its open spans were kept across */
	bool damage_unknown;		/* its record's end is lost: not known */
};

struct report_ranks {
	unsigned n;
	const struct rank_info *r;
};

struct record_window;

struct report {
	const struct run_head *head;
	/* a report of one --keep-last record file: the spans are its window's
	 * (recfile.h), or NULL */
	const struct record_window *window;
	unsigned nruns;			 /* runs actually completed (whose results are
					  * known); 0 only in a report of a damaged
					  * record: then the counts are COUNT_UNKNOWN
					  * and ru, elapsed and exit_code unknown */
	const struct run_result *run;	 /* nruns */
	const struct count *count;	 /* evl->n: the mean over runs, as a count */
	const struct stat_summary *stat; /* evl->n */
	/* head->aggr's units (run_head_aggregated): the mean over runs per
	 * unit, aggr->n rows of evl->n each; NULL without aggregation */
	const struct count *unit_count;
	const struct stat_summary *unit_stat;
	struct rusage_info ru;	     /* mean over runs */
	struct stat_summary elapsed; /* over runs, seconds */
	int exit_code;		     /* spanstat's own exit status */
	/* spans: NULL/0 without collection */
	const struct span_trees *spans;
	const struct span_tree *merged; /* every thread's tree merged by path, built
					 * once for all writers (report_merged) */
	const struct decode_stats *dstats;
	bool dstats_lost;		  /* dstats are not known (a record without its
					   * END): print them as unknown, not as 0 */
	uint64_t span_wall_ns;		  /* wall time the spans' shares refer to */
	double event_cost_ns;		  /* the instrumentation's cost per event (0: unknown) */
	bool compensated;		  /* --compensate: that cost is out of the span times */
	uint64_t removed_ns;		  /* what --compensate took out of the self times */
	const struct report_ranks *ranks; /* several ranks merged (report), or NULL */
};

/* The events the span library recorded in the target, as its cost counts
 * them: each span's begin and its end (not the ends spanstat closed at an
 * exit), unmatched ends, instants and counters, less what came through the
 * line protocol (not the library's).  0 without spans or with
 * dstats_lost (see there). */
static inline uint64_t report_library_events(const struct report *r)
{
	const struct decode_stats *d = r->dstats;
	if (!d || !r->spans || r->dstats_lost)
		return 0;
	uint64_t ev = 2 * d->spans - d->unfinished + d->unmatched + r->spans->instants +
		      r->spans->counters;
	return ev > d->lines ? ev - d->lines : 0;
}

/* Of the waits for room (decode_stats.waited_ns), the ns whose place among
 * the spans the threads' streams told (SPAN_NOTE_WAITED): what --compensate
 * can take out of the spans open meanwhile. */
static inline uint64_t report_waited_placed(const struct report *r)
{
	uint64_t w = 0;
	for (size_t i = 0; r->spans && i < r->spans->nthread; i++) {
		uint64_t v = r->spans->thread[i]->dmg[SPAN_NOTE_WAITED];
		w = w + v < w ? UINT64_MAX : w + v;
	}
	return w;
}

/* The merged tree: the report's, or (a report made without one) merged
 * into scratch now; release scratch afterwards either way.  NULL without
 * spans or with *err (-ENOMEM) set. */
static inline const struct span_tree *report_merged(const struct report *r,
						    struct span_tree *scratch, int *err)
{
	memset(scratch, 0, sizeof *scratch);
	*err = 0;
	if (r->merged)
		return r->merged;
	if (!r->spans)
		return NULL;
	*err = span_trees_merge(r->spans, scratch);
	return *err ? NULL : scratch;
}

#endif
