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
#include "decode.h"
#include "events.h"
#include "spanmetric.h"
#include "spantree.h"
#include "strtab.h"

struct rusage_info {
	uint64_t elapsed_ns; /* wall time from exec to the target's exit */
	uint64_t utime_ns, stime_ns;
	long maxrss_kb;
	long minflt, majflt, nvcsw, nivcsw;
};

struct run_result {
	struct count *counts; /* evl->n */
	struct rusage_info ru;
	int wstatus;   /* as from wait4 */
	int exit_code; /* what spanstat exits with for this run */
};

/* Mean and spread of one quantity over the runs. */
struct stat_summary {
	double mean, stddev; /* sample stddev of the mean's inputs */
	double rel;	     /* 100 * stddev_of_mean / mean, as perf's "+-" */
};

/* One instant on three clocks (spans and samples are stamped MONOTONIC):
 * what maps a session's times onto BOOTTIME (Perfetto) and wall time. */
struct run_clocks {
	uint64_t real_ns, mono_ns, boot_ns;
};

static inline uint64_t run_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Now: REALTIME and BOOTTIME read between two MONOTONIC reads, paired
 * with their middle. */
static inline void run_clocks_now(struct run_clocks *c)
{
	uint64_t m0 = run_clock_ns(CLOCK_MONOTONIC);
	c->real_ns = run_clock_ns(CLOCK_REALTIME);
	c->boot_ns = run_clock_ns(CLOCK_BOOTTIME);
	uint64_t m1 = run_clock_ns(CLOCK_MONOTONIC);
	c->mono_ns = m0 + (m1 - m0) / 2;
}

struct run_head {
	int argc;
	char *const *argv;
	const struct evlist *evl;
	struct timespec start;		   /* CLOCK_REALTIME when the first run started */
	uint64_t start_mono;		   /* CLOCK_MONOTONIC ns, same instant */
	unsigned runs;			   /* -r */
	unsigned interval_ms;		   /* -I, 0 when off */
	bool spans;			   /* span collection on */
	const struct strtab *strings;	   /* span names (decoder's), NULL without spans */
	const struct span_names *names;	   /* how they show (NULL: as they are) */
	const struct spanmetrics *metrics; /* what spans carry besides wall time
					    * (NULL or none: nothing) */
	const char *target;		   /* tasks attached to, as perf names them
					    * ("process id '1234'"), NULL: the command */
	bool rusage_unknown;		   /* attached tasks: only the time counted is known */
	struct run_clocks clocks;	   /* when the session started (0: unknown) */
	const char *uname[4];		   /* where it ran: nodename, sysname, release, machine
					    * (a recording's; NULL: this machine's) */
};

struct interval_sample {
	unsigned run;		    /* 0-based */
	uint64_t t_ns;		    /* since the run's start */
	uint64_t mono_ns;	    /* CLOCK_MONOTONIC of the sample */
	uint64_t length_ns;	    /* this interval's wall length */
	const struct count *counts; /* deltas over the interval, evl->n */
};

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

struct report {
	const struct run_head *head;
	unsigned nruns;			 /* runs actually completed (whose results are
					  * known); 0 only in a report of a damaged
					  * record: then the counts are COUNT_UNKNOWN
					  * and ru, elapsed and exit_code unknown */
	const struct run_result *run;	 /* nruns */
	const struct count *count;	 /* evl->n: the mean over runs, as a count */
	const struct stat_summary *stat; /* evl->n */
	struct rusage_info ru;		 /* mean over runs */
	struct stat_summary elapsed;	 /* over runs, seconds */
	int exit_code;			 /* spanstat's own exit status */
	/* spans: NULL/0 without collection */
	const struct spantree *spans;
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
	*err = spantree_merge(r->spans, scratch);
	return *err ? NULL : scratch;
}

#endif
